//! The gates of a gated dataset (`[gate]`): per matrix column, one trial for the whole suite (when
//! `[gate]` has its own `pass_threshold`) and one per category of `[gate.categories]`. Listing a gate
//! builds nothing of its rows; the harness builds them when the first gate of the column runs
//! (`harness::gate`), and the gates of a column share them, so a row runs once per process.

use std::sync::Arc;

use super::{CaseProblem, Column, Config, Suite, Wanted, row_case};
use crate::case::{Case, CaseInfo, Cell};
use crate::role::CallRole;
use crate::trial_name;

/// The gates of one column of a gated suite, and the rows they judge.
pub struct Gates {
    /// The gates wanted, in order: the whole suite's, then the categories' by name.
    pub gates: Vec<Gate>,
    /// Builds the rows of the column (called once, by the first gate that runs).
    pub rows: Arc<dyn Fn() -> GateRows + Send + Sync>,
    /// The provider the suite names (else `[defaults]`), for the nextest pre-check.
    pub provider: Option<String>,
    /// The suite's cassette.
    pub cassette: String,
    /// The suite's `live_only`.
    pub live_only: bool,
    /// The calls besides the subject's that the suite's assertions make.
    pub other_calls: Vec<CallRole>,
}

/// One gate: a trial whose samples are rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The trial name: `suite::gate` or `suite::gate::category`, `[column]` in a matrix.
    pub name: String,
    /// The suite, and the gate as its case (`gate`, `gate::category`) for the reports.
    pub info: CaseInfo,
    /// Where it sits in a matrix.
    pub cell: Option<Cell>,
    /// The share of its rows that must pass.
    pub share: f64,
    /// The category it judges; none for every row.
    pub category: Option<String>,
}

impl Gate {
    /// Whether `row` counts in this gate (skipped or not: the gate skips those).
    pub fn covers(&self, row: &GateRow) -> bool {
        self.category.is_none() || self.category == row.category
    }
}

/// Every row of one column of a gated suite, and how to build each one's case.
pub struct GateRows {
    /// The rows in file order.
    pub rows: Vec<GateRow>,
    /// The case of row `i`, or why it cannot run.
    build: Box<dyn Fn(usize) -> Result<Arc<Case>, CaseProblem> + Send + Sync>,
}

impl GateRows {
    /// The case of row `i` (built anew: the harness builds each row once).
    pub fn case(&self, i: usize) -> Result<Arc<Case>, CaseProblem> {
        (self.build)(i)
    }
}

/// One row as a gate sees it before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GateRow {
    /// Its trial name in the column (what its recordings are filed under).
    pub trial: String,
    /// Its case id in the reports: the trial without the suite.
    pub case_id: String,
    /// Its category.
    pub category: Option<String>,
    /// Why it is skipped (not counted), if it is.
    pub skip: Option<String>,
}

/// The gates of `suite` (its rows gated) that `wanted` asks for, one [`Gates`] per column of `models`.
pub(super) fn gates(
    config: &Arc<Config>,
    suite: &Arc<Suite>,
    wanted: &Wanted<'_>,
    models: &[crate::model::Subject],
) -> Vec<Gates> {
    let Some(rows) = &suite.rows else {
        return Vec::new();
    };
    let Some(spec) = &rows.gate else {
        return Vec::new();
    };
    let name = &suite.info.name;
    let bases: Vec<(Option<&String>, f64)> = spec
        .whole
        .map(|share| (None, share))
        .into_iter()
        .chain(spec.categories.iter().map(|(c, share)| (Some(c), *share)))
        .collect();
    let call = rows.settings.request.call.over(&config.defaults);
    let other_calls = super::other_calls(rows.asserts.iter().filter_map(|a| a.call()));
    let mut out = Vec::new();
    for column in Column::all(models, wanted.variants) {
        let gates: Vec<Gate> = bases
            .iter()
            .map(|(category, share)| {
                let row = trial_name::gate(name, category.map(String::as_str));
                let trial = column.trial(&row);
                Gate {
                    info: CaseInfo {
                        suite: suite.info.clone(),
                        case: row[name.len() + 2..].to_string(),
                        category: category.cloned(),
                    },
                    cell: column.cell(&row),
                    name: trial,
                    share: *share,
                    category: category.cloned(),
                }
            })
            .filter(|g| wanted.exact.is_none_or(|f| f == g.name))
            .collect();
        if gates.is_empty() {
            continue;
        }
        let (config, suite) = (config.clone(), suite.clone());
        let rows_of = move || column_rows(&config, &suite, &column);
        out.push(Gates {
            gates,
            rows: Arc::new(rows_of),
            provider: call.provider.clone(),
            cassette: name.clone(),
            live_only: rows.settings.live_only.unwrap_or(false),
            other_calls: other_calls.clone(),
        });
    }
    out
}

/// The rows of `suite` in `column`.
fn column_rows(config: &Arc<Config>, suite: &Arc<Suite>, column: &Column) -> GateRows {
    let rows = suite.rows.as_ref().expect("a gated suite has rows");
    let name = &suite.info.name;
    let listed: Vec<GateRow> = rows
        .dataset
        .rows
        .iter()
        .map(|row| {
            let trial = column.trial(&format!("{name}::{}", row.name));
            GateRow {
                case_id: trial[name.len() + 2..].to_string(),
                trial,
                category: row.category.clone(),
                // A skipped row makes no call: it may lack inputs, but not be unreadable.
                skip: row.skip.clone().filter(|_| row.problems.is_empty()),
            }
        })
        .collect();
    let (config, suite, column) = (config.clone(), suite.clone(), column.clone());
    let build = move |i: usize| {
        let rows = suite.rows.as_ref().expect("a gated suite has rows");
        let row = &rows.dataset.rows[i];
        let info = CaseInfo {
            suite: suite.info.clone(),
            case: row.name.clone(),
            category: row.category.clone(),
        };
        let base = format!("{}::{}", suite.info.name, row.name);
        row_case(&config, &suite, i, &base, info, &column)
    };
    GateRows {
        rows: listed,
        build: Box::new(build),
    }
}
