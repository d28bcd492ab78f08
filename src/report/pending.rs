//! The HTML report's table of the recordings waiting for review: each pending sample's accepted and
//! new answers side by side, with what the checks decided on each.

use crate::cassette::pending::{PendingFile, PendingSample};
use crate::cassette::{Entry, Exchange, RecordedChecks};
use crate::report::table::Table;
use crate::role::CallRole;

/// The columns of the report's table of pending samples, a cell each per sample.
pub const COLUMNS: [&str; 6] = [
    "test",
    "run",
    "accepted answer",
    "new answer",
    "checks (accepted)",
    "checks (new)",
];

/// The report's table of pending samples: the accepted answer and the new one side by side, with
/// each side's checks as the recordings kept them.
pub fn table(files: &[PendingFile]) -> Option<Table> {
    let rows: Vec<Vec<String>> = files
        .iter()
        .flat_map(|f| &f.samples)
        .map(|s: &PendingSample| {
            vec![
                s.id.test.clone(),
                s.id.run.to_string(),
                answer(&s.old),
                answer(&s.new),
                checks(s.old_verdict.as_ref(), !s.old.is_empty()),
                checks(s.new_verdict.as_ref(), true),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: format!(
            "Pending changes (review them with `{}`)",
            crate::commands::REVIEW
        ),
        columns: COLUMNS.map(String::from).to_vec(),
        rows,
    })
}

/// The subject's answers among `calls`, in order.
fn answer(calls: &[Entry]) -> String {
    if calls.is_empty() {
        return "(nothing recorded: a first recording)".into();
    }
    calls
        .iter()
        .filter(|e| e.role == CallRole::Subject)
        .filter_map(|e| match &e.call {
            Exchange::Completion { response, .. } => Some(response.text.clone()),
            Exchange::Raw { request, response } => {
                Some(crate::provider::relayed::answer_text(request, response))
            }
            Exchange::Embedding { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// A side's checks: its status, then each check and how it went.
fn checks(verdict: Option<&RecordedChecks>, recorded: bool) -> String {
    let Some(v) = verdict else {
        return if recorded { "not kept" } else { "-" }.into();
    };
    let mut lines = vec![v.status.as_str().to_string()];
    lines.extend(
        v.checks
            .iter()
            .map(|c| format!("{} {}", if c.passed { "✓" } else { "✗" }, c.check)),
    );
    lines.join("\n")
}
