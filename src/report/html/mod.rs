//! The HTML report (`--html PATH` or `PROMPT_TESTER_HTML`): one self-contained page, a view of the
//! same records as the JSON report and JUnit.
//!
//! The records go into the page once, as one JSON data block; the page's script draws the rows from it.
//! Under nextest (one process per trial) the page of the whole run is rendered once, from the run's
//! results folder, by `cargo prompt-tester report` (`harness::results`).

mod page;

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::record::TrialRecord;
use crate::redact::redact;
pub use crate::report::table::Table;

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
    /// nextest's run id, when the records are a nextest run's.
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
    let records_in = records;
    let records = records
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            // How each media part is named, beside its fields, for the page to show as it is.
            if let Some(Value::Array(media)) = v.get_mut("media") {
                for (m, record) in media.iter_mut().zip(&r.media) {
                    m["shown"] = record.described().into();
                }
            }
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
    let previews = previews(records_in);
    // Written only when there are any: a run without media gives the page it always did.
    if !previews.is_empty() {
        data.insert("previews".into(), Value::Object(previews));
    }
    if let Value::Object(extras) = serde_json::to_value(extras).unwrap_or_default() {
        data.extend(extras);
    }
    Value::Object(data)
}

/// The most bytes of image previews one report embeds: past it, images are named, not shown.
pub const PREVIEWS_MAX_BYTES: usize = 1024 * 1024;

/// Each image small enough to preview (`MediaRecord::preview`), by its SHA-256: once however many
/// trials show it, and no more than [`PREVIEWS_MAX_BYTES`] in all, so the report stays bounded.
fn previews(records: &[TrialRecord]) -> Map<String, Value> {
    let mut previews = Map::new();
    let mut total = 0;
    for media in records.iter().flat_map(|r| &r.media) {
        let Some(preview) = &media.preview else {
            continue;
        };
        if previews.contains_key(&media.sha256) || total + preview.len() > PREVIEWS_MAX_BYTES {
            continue;
        }
        total += preview.len();
        previews.insert(media.sha256.clone(), preview.clone().into());
    }
    previews
}

/// The page showing `data`, redacted.
pub fn page(data: &Value) -> String {
    let json = redact(&data.to_string()).into_owned();
    let has_media = data["records"]
        .as_array()
        .is_some_and(|records| records.iter().any(|r| r.get("media").is_some()));
    let media_view = if has_media { page::MEDIA_VIEW } else { "" };
    page::PAGE
        .replacen(page::MEDIA_MARK, media_view, 1)
        .replacen(page::DATA_MARK, &embed(&json), 1)
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

/// Writes the page of `records` to `path`.
pub fn write_html(
    path: &Path,
    records: &[TrialRecord],
    run: &RunInfo,
    extras: &Extras,
) -> std::io::Result<()> {
    crate::shared::replace(path, page(&data(records, run, extras)).as_bytes())
}

#[cfg(test)]
mod tests;
