//! The HTML report (`--html PATH` or `PROMPT_TESTER_HTML`): one self-contained page, a view of the
//! same records as the JSON report and JUnit.
//!
//! The records go into the page once, as one JSON data block; the page's script draws the rows from it.
//! Under nextest (one process per trial) each process merges its records into the file the earlier
//! processes of the same run wrote (`NEXTEST_RUN_ID`), under a lock, so the page holds the whole run.

mod page;

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::harness::record::TrialRecord;
pub use crate::harness::table::Table;
use crate::redact::redact;

/// What the page says about the run as a whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunInfo {
    /// When the run ended (RFC 3339, UTC).
    pub date: String,
    /// The git commit, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The judge (`provider/model`), if configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The cassette mode.
    pub cassette_mode: String,
    /// Wall time of the run in seconds.
    pub wall_secs: f64,
    /// Unix time the run started, in seconds (to merge the wall times of nextest's processes).
    pub started_unix: f64,
    /// nextest's run id: records of the same run are merged into one page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nextest_run: Option<String>,
    /// The run's budget and what was spent against it, under `--budget`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::BudgetReport>,
}

/// Optional sections of the page.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Extras {
    /// Pass rates per model or prompt variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Table>,
    /// Deltas against a baseline, with significance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Table>,
    /// Recordings waiting for review: each sample's accepted and new answers and checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Table>,
}

/// The page's data: the run, every record (with its 95% interval when it has none yet), the extras.
pub fn data(records: &[TrialRecord], run: &RunInfo, extras: &Extras) -> Value {
    let records = records
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            if let (Value::Object(o), Some(ci)) =
                (&mut v, crate::stats::wilson(r.runs_passed, r.runs_total))
            {
                o.entry("ci_low").or_insert(ci.low.into());
                o.entry("ci_high").or_insert(ci.high.into());
            }
            v
        })
        .collect();
    let mut data = Map::new();
    data.insert("run".into(), serde_json::to_value(run).unwrap_or_default());
    data.insert("records".into(), Value::Array(records));
    if let Value::Object(extras) = serde_json::to_value(extras).unwrap_or_default() {
        data.extend(extras);
    }
    Value::Object(data)
}

/// The page showing `data`, redacted.
pub fn page(data: &Value) -> String {
    let json = redact(&data.to_string()).into_owned();
    page::PAGE.replacen(page::DATA_MARK, &embed(&json), 1)
}

/// JSON made safe inside `<script>`: `<`, `>` and `&` occur in JSON only inside strings, where their
/// `\u` escapes read the same, so no `</script>` or `<!--` can end or change the block.
fn embed(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The data block of a page this module wrote, if `html` is one.
pub fn read_data(html: &str) -> Option<Value> {
    let from = html.find(page::DATA_OPEN)? + page::DATA_OPEN.len();
    let to = from + html[from..].find("</script>")?;
    serde_json::from_str(&html[from..to]).ok()
}

/// `new` merged into `old` when both come from the same nextest run: `old`'s records that `new` does
/// not replace (by name) are kept, sorted by name, and the wall time spans both. Otherwise `new`.
pub fn merge(old: Option<Value>, mut new: Value) -> Value {
    let run_of = |v: &Value| v["run"]["nextest_run"].as_str().map(str::to_string);
    let Some(old) = old.filter(|o| run_of(o).is_some() && run_of(o) == run_of(&new)) else {
        return new;
    };
    let name = |r: &Value| r["name"].as_str().unwrap_or_default().to_string();
    let mut records: std::collections::BTreeMap<String, Value> = old["records"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (name(r), r.clone()))
        .collect();
    for r in new["records"].as_array().into_iter().flatten() {
        records.insert(name(r), r.clone());
    }
    new["records"] = Value::Array(records.into_values().collect());
    let span = |v: &Value| {
        let start = v["run"]["started_unix"].as_f64().unwrap_or(0.0);
        (start, start + v["run"]["wall_secs"].as_f64().unwrap_or(0.0))
    };
    let ((s0, e0), (s1, e1)) = (span(&old), span(&new));
    let start = s0.min(s1);
    new["run"]["started_unix"] = start.into();
    new["run"]["wall_secs"] = (e0.max(e1) - start).into();
    for key in ["matrix", "baseline", "pending"] {
        if new.get(key).is_none()
            && let Some(v) = old.get(key)
        {
            new[key] = v.clone();
        }
    }
    new
}

/// Writes the page of `records` to `path`, merged (under a lock) with the page an earlier process of
/// the same nextest run wrote there.
pub fn write_html(
    path: &Path,
    records: &[TrialRecord],
    run: &RunInfo,
    extras: &Extras,
) -> std::io::Result<()> {
    let new = data(records, run, extras);
    crate::harness::files::update_locked(path, |old| Ok(page(&merge(old.and_then(read_data), new))))
}

#[cfg(test)]
mod tests;
