//! The grammar of trial names, written once.
//!
//! A *row* is what a front end names: a test `module::test`, a suite case or dataset row
//! `suite::case`, a calibration set `calibration::set`. A row in a model or prompt matrix has one trial
//! per column, `row[label]`; a trial that takes several samples has numbered single-sample trials
//! `trial::run_N`; a calibration set has one trial per item, `calibration::set::item`.
//!
//! A gated dataset (`[gate]`) has gates instead of row trials: `suite::gate` judges every row,
//! `suite::gate::category` a category's rows; each is a row in this sense (`suite::gate[label]` in a
//! matrix, no numbered runs). A row name has no `::`, so `suite::gate::category` is no row's trial, and a
//! gated suite may not name a row `gate` (a located error). A filter `suite::gate` selects every gate.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::fmt;

/// One trial's name, by its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialName<'a> {
    /// The row (the test, case or set).
    pub row: &'a str,
    /// The matrix column's label, when the row is in a matrix.
    pub column: Option<&'a str>,
    /// The numbered run, for a single-sample trial.
    pub run: Option<u32>,
}

impl<'a> TrialName<'a> {
    /// The trial of `row` (no column, no numbered run).
    pub fn row(row: &'a str) -> Self {
        Self {
            row,
            column: None,
            run: None,
        }
    }

    /// This trial in `column` (none outside a matrix).
    pub fn in_column(self, column: Option<&'a str>) -> Self {
        Self { column, ..self }
    }

    /// The numbered run `run` of this trial.
    pub fn numbered(self, run: u32) -> Self {
        Self {
            run: Some(run),
            ..self
        }
    }
}

impl fmt::Display for TrialName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.row)?;
        if let Some(column) = self.column {
            write!(f, "[{column}]")?;
        }
        if let Some(run) = self.run {
            write!(f, "{RUN_SEPARATOR}{run}")?;
        }
        Ok(())
    }
}

/// What stands between a trial and the number of its single-sample trial.
const RUN_SEPARATOR: &str = "::run_";

/// The trial whose sample `run` the trial `test` takes: `t::run_3`'s run 3 is `t`'s run 3 (the
/// numbered trial runs that one sample of `t`, alone), any other name is its own.
pub fn sample_owner(test: &str, run: u32) -> &str {
    test.strip_suffix(&format!("{RUN_SEPARATOR}{run}"))
        .unwrap_or(test)
}

/// The trial of calibration set `set`'s item `item`: `set::item`.
pub fn item(set: &str, item: &str) -> String {
    format!("{set}::{item}")
}

/// The segment that names a suite's gates.
pub const GATE: &str = "gate";

/// The gate of `suite`'s rows: `suite::gate` for every row, `suite::gate::category` for a category's.
pub fn gate(suite: &str, category: Option<&str>) -> String {
    match category {
        Some(category) => format!("{suite}::{GATE}::{category}"),
        None => format!("{suite}::{GATE}"),
    }
}

/// Whether `exact` (an `--exact` name) names `row`, one of its columns (`row[...]`) or one of their
/// numbered runs.
pub fn exact_is_in_row(exact: &str, row: &str) -> bool {
    exact.strip_prefix(row).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with('[') || rest.starts_with(RUN_SEPARATOR)
    })
}

/// Whether `exact` names the trial `trial` or one of its numbered runs.
pub fn exact_is_in_trial(exact: &str, trial: &str) -> bool {
    exact
        .strip_prefix(trial)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(RUN_SEPARATOR))
}

/// Whether the name filter `filter` occurs in `name` somewhere other than cut inside a number:
/// `x::run_1` selects `x::run_1` but not `x::run_10` (libtest matches substrings), while `x::run_` and
/// `run_1` select as libtest would.
pub fn selects_whole_number(name: &str, filter: &str) -> bool {
    let ends_in_digit = filter.ends_with(|c: char| c.is_ascii_digit());
    name.match_indices(filter).any(|(at, _)| {
        !(ends_in_digit && name[at + filter.len()..].starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_built_from_their_parts() {
        assert_eq!(TrialName::row("m::t").to_string(), "m::t");
        assert_eq!(
            TrialName::row("s::c")
                .in_column(Some("fake/a|v1"))
                .to_string(),
            "s::c[fake/a|v1]"
        );
        assert_eq!(
            TrialName::row("s::c")
                .in_column(Some("fake/a"))
                .numbered(3)
                .to_string(),
            "s::c[fake/a]::run_3"
        );
        assert_eq!(item("calibration::s", "alice"), "calibration::s::alice");
        assert_eq!(gate("golden", None), "golden::gate");
        assert_eq!(
            gate("a::golden", Some("capital")),
            "a::golden::gate::capital"
        );
        let in_column = TrialName::row("golden::gate::capital").in_column(Some("fake/a"));
        assert_eq!(in_column.to_string(), "golden::gate::capital[fake/a]");
    }

    #[test]
    fn a_numbered_trial_takes_its_aggregate_trials_sample() {
        assert_eq!(sample_owner("s::c::run_3", 3), "s::c");
        assert_eq!(sample_owner("s::c[x]::run_3", 3), "s::c[x]");
        // Another run's number, or no number, is the name's own.
        assert_eq!(sample_owner("s::c::run_3", 2), "s::c::run_3");
        assert_eq!(sample_owner("s::c", 1), "s::c");
    }

    #[test]
    fn an_exact_name_is_matched_against_rows_and_trials() {
        assert!(exact_is_in_row("s::c", "s::c"));
        assert!(exact_is_in_row("s::c[fake/a]", "s::c"));
        assert!(exact_is_in_row("s::c::run_2", "s::c"));
        assert!(!exact_is_in_row("s::cd", "s::c"));
        assert!(exact_is_in_trial("s::c[x]::run_1", "s::c[x]"));
        assert!(!exact_is_in_trial("s::c[x]", "s::c"));
        // The whole suite's gate is not one of a category's, nor the other way round.
        assert!(!exact_is_in_row("g::gate::capital", "g::gate"));
        assert!(!exact_is_in_row("g::gate", "g::gate::capital"));
        assert!(exact_is_in_row(
            "g::gate::capital[fake/a]",
            "g::gate::capital"
        ));
    }

    #[test]
    fn a_filter_naming_a_run_does_not_select_longer_numbers() {
        assert!(selects_whole_number("t::run_1", "t::run_1"));
        assert!(!selects_whole_number("t::run_10", "t::run_1"));
        assert!(!selects_whole_number("t::run_12", "run_1"));
        assert!(selects_whole_number("t::run_12", "t::run_"));
        assert!(selects_whole_number("t::run_12", "run_12"));
        assert!(selects_whole_number("t1::run_12", "t1"));
        // A later occurrence may be whole.
        assert!(selects_whole_number("a12::a1", "a1"));
    }
}
