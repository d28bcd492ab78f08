//! A suite's `[gate]`: the rows of its `cases_file` judged as a whole, by the share of them that pass
//! (the whole suite's, and each category's in `[gate.categories]`). Read and checked here, against the
//! rows once they are read; run by `harness::gate`.

use std::ops::Range;

use prompt_tester_keys::{Key, Place, names_in};
use toml::de::{DeTable, DeValue};

use super::super::dataset::{self, Dataset};
use crate::spanned::{Reader, did_you_mean, real};

/// What `[gate]` asks of the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct GateSpec {
    /// The share of every counted row that must pass (`[gate] pass_threshold`): one gate for the suite.
    pub whole: Option<f64>,
    /// Per category, the share of its counted rows that must pass (`[gate.categories]`), by name.
    pub categories: Vec<(String, f64)>,
    /// Where each category was written, for the problems found once the rows are read.
    spans: Vec<Range<usize>>,
    /// Where `gate` was written.
    span: Range<usize>,
}

/// Reads `gate` at the top of a suite, if it is there (its rows are checked by [`check`]).
pub(in crate::suite) fn gate(r: &mut Reader<'_>, table: &DeTable<'_>) -> Option<GateSpec> {
    let (key, node) = table.get_key_value(Key::Gate.name())?;
    let example = "write `[gate]` then `pass_threshold = 0.8` (the share of rows that must pass), and per \
                   category `[gate.categories]` then `capital = 0.6`";
    let gate = r.table(node, "gate", "a table", example)?;
    r.unknown_keys(gate, "gate", &names_in(Place::Gate), "in [gate]");
    let share = |r: &mut Reader<'_>, node, path: &str| {
        let range = Key::PassThreshold
            .row()
            .range_in(Place::Gate)
            .expect("pass_threshold has a range");
        let help = "a share of rows above 0 and at most 1 (0.6 = 3 rows in 5 must pass)";
        real(r, node, path, |x| range.contains(x), help)
    };
    let whole = gate
        .get(Key::PassThreshold.name())
        .and_then(|node| share(r, node, "gate.pass_threshold"));
    let mut categories = Vec::new();
    let mut spans = Vec::new();
    if let Some(node) = gate.get(Key::Categories.name()) {
        match node.get_ref() {
            DeValue::Table(each) => {
                for (name, value) in each.iter() {
                    let path = format!("gate.categories.{}", name.get_ref());
                    if let Some(share) = share(r, value, &path) {
                        categories.push((name.get_ref().to_string(), share));
                        spans.push(name.span());
                    }
                }
            }
            _ => r.mismatch(
                node,
                "gate.categories",
                "a table",
                "write `[gate.categories]` then one `category = 0.6` a line",
            ),
        }
    }
    let written_share = gate.contains_key(Key::PassThreshold.name())
        || gate
            .get(Key::Categories.name())
            .is_some_and(|n| matches!(n.get_ref(), DeValue::Table(t) if !t.is_empty()));
    if !written_share {
        r.problem(
            key.span(),
            "gate",
            "`[gate]` sets no share of rows that must pass",
            "add `pass_threshold = 0.8` under `[gate]` (the whole suite), or `[gate.categories]` with `category \
             = 0.6` (one gate per category)",
        );
    }
    Some(GateSpec {
        whole,
        categories,
        spans,
        span: key.span(),
    })
}

/// The trial-name segment of the whole suite's gate: a case or row of a gated suite may not take it.
pub const GATE_NAME: &str = crate::trial_name::GATE;

/// What `gate` asks of rows it cannot have: no `cases_file` (`rows` is `None`), a category no row has,
/// a category that cannot name a trial, a case or row named like the gate.
pub(in crate::suite) fn check(
    r: &mut Reader<'_>,
    gate: &GateSpec,
    rows: Option<&Dataset>,
    case_names: &[&str],
) {
    let Some(rows) = rows else {
        r.problem(
            gate.span.clone(),
            "gate",
            "`[gate]` judges the rows of `cases_file`, and this suite has none",
            "add `cases_file = \"golden/cases.jsonl\"` (a JSON Lines or CSV dataset), or remove `[gate]`: an \
             inline `[[cases]]` case is a trial of its own",
        );
        return;
    };
    let mut known: Vec<&str> = Vec::new();
    for row in &rows.rows {
        if let Some(c) = row.category.as_deref()
            && !known.contains(&c)
        {
            known.push(c);
        }
    }
    known.sort_unstable();
    for ((name, _), span) in gate.categories.iter().zip(&gate.spans) {
        let path = format!("gate.categories.{name}");
        if let Some(why) = dataset::name_problem(name).or_else(|| {
            name.contains(['[', ']', '|'])
                .then_some("it has `[`, `]` or `|`, which trial names use")
        }) {
            r.problem(
                span.clone(),
                &path,
                format!("the category {name:?} cannot name the gate's trial: {why}"),
                "rename the category in the dataset and here",
            );
            continue;
        }
        if known.contains(&name.as_str()) {
            continue;
        }
        let listed = if known.is_empty() {
            "no row has a category".to_string()
        } else {
            format!("the categories there: {}", known.join(", "))
        };
        let fix = match did_you_mean(name, known.iter().copied()) {
            Some(close) => format!("did you mean `{close}`? ({listed})"),
            None => format!(
                "name a category the rows have ({listed}), or add `\"category\": \"{name}\"` to its rows"
            ),
        };
        r.problem(
            span.clone(),
            &path,
            format!("no row of {} has the category `{name}`", rows.file),
            fix,
        );
    }
    let row_named = rows.rows.iter().find(|row| row.name == GATE_NAME);
    if case_names.contains(&GATE_NAME) || row_named.is_some() {
        let whose = row_named.map_or_else(
            || "a case of this suite".to_string(),
            |row| format!("the row on line {} of {}", row.line, rows.file),
        );
        r.problem(
            gate.span.clone(),
            "gate",
            format!("{whose} is named `{GATE_NAME}`, the name of the gate's trial"),
            "rename that case or row",
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::parse::{parse, report};
    use crate::test_support::{Scratch, assert_contains};

    const ROWS: &str = "{\"id\": \"a\", \"category\": \"capital\", \"q\": \"x\"}\n\
                        {\"id\": \"b\", \"category\": \"sentiment\", \"q\": \"y\"}\n";

    /// The report of the problems of a suite whose dataset is `rows` and whose end is `tail`.
    fn problems(tail: &str, rows: &str) -> String {
        let dir = Scratch::new("gate");
        dir.file("d.jsonl", rows);
        let text = format!("prompt = \"{{q}}\"\ncases_file = \"d.jsonl\"\n{tail}");
        match parse("s", "s.evals.toml", dir.path(), &text) {
            Ok(_) => panic!("no problem in\n{text}"),
            Err(p) => report("s.evals.toml", &text, &p),
        }
    }

    #[test]
    fn a_gate_reads_its_shares() {
        let dir = Scratch::new("gate");
        dir.file("d.jsonl", ROWS);
        let text = "prompt = \"{q}\"\ncases_file = \"d.jsonl\"\n[gate]\npass_threshold = 0.6\n\
                    [gate.categories]\ncapital = 0.45\nsentiment = 1\n";
        let suite = parse("s", "s.evals.toml", dir.path(), text).unwrap();
        let gate = suite.rows.unwrap().gate.unwrap();
        assert_eq!(gate.whole, Some(0.6));
        assert_eq!(
            gate.categories,
            [
                ("capital".to_string(), 0.45),
                ("sentiment".to_string(), 1.0)
            ]
        );
    }

    #[test]
    fn gate_problems_are_located_with_the_fix() {
        for (tail, parts) in [
            (
                "[gate.categories]\ncapitol = 0.5\n",
                &[
                    "s.evals.toml:4:1: `gate.categories.capitol`: no row of d.jsonl has the category `capitol`",
                    "fix: did you mean `capital`? (the categories there: capital, sentiment)",
                ][..],
            ),
            (
                "[gate]\npass_threshold = 1.5\n",
                &[
                    "s.evals.toml:4:18: `gate.pass_threshold`: 1.5 is out of range",
                    "fix: use a share of rows above 0 and at most 1",
                ],
            ),
            (
                "[gate.categories]\ncapital = 0\n",
                &["`gate.categories.capital`: 0 is out of range"],
            ),
            (
                "[gate]\npass_treshold = 0.5\n",
                &[
                    "s.evals.toml:4:1: `gate.pass_treshold`: unknown key `pass_treshold`",
                    "fix: did you mean `pass_threshold`? Valid keys in [gate]: pass_threshold, categories",
                    "`gate`: `[gate]` sets no share of rows that must pass",
                ],
            ),
            (
                "gate = 0.5\n",
                &["s.evals.toml:3:8: `gate`: expected a table, found a float"],
            ),
        ] {
            assert_contains(&problems(tail, ROWS), parts);
        }
        let named = "{\"id\": \"gate\", \"q\": \"x\"}\n";
        assert_contains(
            &problems("[gate]\npass_threshold = 0.5\n", named),
            &["`gate`: the row on line 1 of d.jsonl is named `gate`, the name of the gate's trial"],
        );
    }

    #[test]
    fn a_gate_needs_rows() {
        let dir = Scratch::new("gate");
        let text = "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\n[gate]\npass_threshold = 0.5\n";
        let p = parse("s", "s.evals.toml", dir.path(), text).unwrap_err();
        assert_contains(
            &report("s.evals.toml", text, &p),
            &[
                "s.evals.toml:4:2: `gate`: `[gate]` judges the rows of `cases_file`, and this suite has none",
                "fix: add `cases_file = \"golden/cases.jsonl\"`",
            ],
        );
    }
}
