//! What the rows of a gated dataset decide (`[gate]` in a suite): pure, like `outcome::decide` for the
//! samples of a trial. A gate counts every row that is not skipped; it passes when at least
//! ceil(rows × share) of them pass and none errored; it is ignored when a row could not run (no
//! recording and no key) or when no row is left to count.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use crate::outcome::{Status, percent};
use crate::plan::Threshold;
use crate::stats::Counts;

/// How one row of a gate ended: its trial's status and message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowVerdict<'a> {
    /// The row's name (its case name, without the suite).
    pub name: &'a str,
    /// How its trial ended.
    pub status: &'a Status,
    /// Why it did not pass.
    pub message: Option<&'a str>,
}

/// What the rows of a gate decide.
#[derive(Debug, Clone, PartialEq)]
pub struct GateDecision {
    /// Passed, failed, errored, or ignored.
    pub status: Status,
    /// Rows that passed.
    pub passed: u32,
    /// Rows that errored.
    pub errored: u32,
    /// Rows counted (every row not skipped).
    pub counted: u32,
    /// Rows that had to pass.
    pub required: u32,
    /// Why it did not pass: every failed and errored row with its reason, then the rate.
    pub message: Option<String>,
}

/// The rows that must pass of `counted` at `share` (as a test's runs: 5 × 0.8 is 4).
pub fn required(counted: u32, share: f64) -> u32 {
    if counted == 0 {
        return 0;
    }
    Threshold {
        runs: counted,
        pass_threshold: share,
    }
    .required()
}

/// `n rows skipped`, or nothing when none was.
pub fn skipped_words(skipped: u32) -> String {
    match skipped {
        0 => String::new(),
        1 => ", 1 row skipped (not counted)".to_string(),
        n => format!(", {n} rows skipped (not counted)"),
    }
}

/// Decides a gate from its counted rows (in file order) at `share`; `skipped` rows were not counted.
pub fn decide(rows: &[RowVerdict<'_>], skipped: u32, share: f64) -> GateDecision {
    let counted = rows.len() as u32;
    let count = |status: Status| rows.iter().filter(|r| *r.status == status).count() as u32;
    let (passed, errored) = (count(Status::Passed), count(Status::Errored));
    let need = required(counted, share);
    let skipped_text = skipped_words(skipped);
    let not_run = rows
        .iter()
        .filter(|r| matches!(r.status, Status::Ignored | Status::LiveOnly))
        .collect::<Vec<_>>();
    let decision = |status, message| GateDecision {
        status,
        passed,
        errored,
        counted,
        required: need,
        message,
    };
    if counted == 0 {
        return decision(
            Status::Ignored,
            Some(format!("no row to count{skipped_text}")),
        );
    }
    if let Some(first) = not_run.first() {
        // A row that could not run would count as failed, or hide a failure: the gate is not judged.
        let n = not_run.len();
        let reason = first.message.unwrap_or("not run");
        return decision(
            first.status.clone(),
            Some(format!(
                "{n} of {counted} row{} did not run, so the gate is not judged; row `{}`: {reason}",
                if counted == 1 { "" } else { "s" },
                first.name
            )),
        );
    }
    let status = if errored > 0 {
        Status::Errored
    } else if passed >= need {
        Status::Passed
    } else {
        Status::Failed
    };
    if status == Status::Passed {
        return decision(status, None);
    }
    let mut lines: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let label = match r.status {
                Status::Failed => "FAILED",
                Status::Errored => "ERROR",
                _ => return None,
            };
            let text = r.message.unwrap_or_default().replace('\n', "\n    ");
            Some(format!("[row {}] {label}: {text}", r.name))
        })
        .collect();
    lines.push(rate_line(passed, errored, counted, need, share, skipped));
    decision(status, Some(lines.join("\n")))
}

/// `70/140 rows passed (50%, 95% CI 42–58%; need 63, pass threshold 45%)`, with the errored and skipped
/// rows: the line that ends a gate's message, and the summary's line for it.
pub fn rate_line(
    passed: u32,
    errored: u32,
    counted: u32,
    need: u32,
    share: f64,
    skipped: u32,
) -> String {
    let errors = if errored > 0 {
        format!(", {errored} errored")
    } else {
        String::new()
    };
    let why = if errored > 0 && passed >= need {
        ": an errored row fails the gate"
    } else {
        ""
    };
    let rate = Counts::new(passed, counted)
        .rate_with_interval()
        .map_or_else(String::new, |r| format!("{r}; "));
    format!(
        "{passed}/{counted} rows passed{errors} ({rate}need {need}, pass threshold {}){why}{}",
        percent(share),
        skipped_words(skipped)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rows named, ended and explained as `rows` decide.
    fn decide_rows(
        rows: &[(&str, Status, Option<&str>)],
        skipped: u32,
        share: f64,
    ) -> GateDecision {
        let verdicts: Vec<RowVerdict<'_>> = rows
            .iter()
            .map(|(name, status, message)| RowVerdict {
                name,
                status,
                message: *message,
            })
            .collect();
        decide(&verdicts, skipped, share)
    }

    #[test]
    fn a_gate_needs_the_share_of_its_rows_rounded_up() {
        assert_eq!(required(140, 0.45), 63);
        assert_eq!(required(60, 0.9), 54);
        assert_eq!(required(5, 0.8), 4);
        assert_eq!(required(3, 0.01), 1);
        assert_eq!(required(0, 0.5), 0);
    }

    /// A decision: its status, its (passed, errored, counted, required) rows, and its message.
    fn decision(status: Status, rows: (u32, u32, u32, u32), message: Option<&str>) -> GateDecision {
        let (passed, errored, counted, required) = rows;
        GateDecision {
            status,
            passed,
            errored,
            counted,
            required,
            message: message.map(str::to_string),
        }
    }

    #[test]
    fn a_gate_passes_at_its_share_and_fails_errs_or_is_not_judged_as_its_rows_decide() {
        let met = [
            ("a", Status::Passed, None),
            ("b", Status::Failed, Some("no Paris\nin the answer")),
            ("c", Status::Passed, None),
            ("d", Status::Passed, None),
        ];
        let errored = [
            ("a", Status::Passed, None),
            ("b", Status::Errored, Some("HTTP 503")),
            ("c", Status::Passed, None),
        ];
        let not_run = [
            ("a", Status::Passed, None),
            ("b", Status::Ignored, Some("no recording")),
        ];
        // (what the case shows, its rows, the rows skipped, the share, what they decide)
        let cases: [(&str, &[_], u32, f64, GateDecision); 5] = [
            (
                "a met share passes",
                &met,
                2,
                0.75,
                decision(Status::Passed, (3, 0, 4, 3), None),
            ),
            (
                "a missed one lists every failing row",
                &met,
                2,
                1.0,
                decision(
                    Status::Failed,
                    (3, 0, 4, 4),
                    Some(
                        "[row b] FAILED: no Paris\n    in the answer\n3/4 rows passed (75%, 95% CI 30–95%; need 4, \
                         pass threshold 100%), 2 rows skipped (not counted)",
                    ),
                ),
            ),
            (
                "an errored row fails the gate whatever the share",
                &errored,
                0,
                0.5,
                decision(
                    Status::Errored,
                    (2, 1, 3, 2),
                    Some(
                        "[row b] ERROR: HTTP 503\n2/3 rows passed, 1 errored (67%, 95% CI 21–94%; need 2, pass threshold 50%): \
                         an errored row fails the gate",
                    ),
                ),
            ),
            (
                "a row that did not run leaves the gate unjudged",
                &not_run,
                0,
                0.5,
                decision(
                    Status::Ignored,
                    (1, 0, 2, 1),
                    Some(
                        "1 of 2 rows did not run, so the gate is not judged; row `b`: no recording",
                    ),
                ),
            ),
            (
                "no row at all leaves the gate unjudged",
                &[],
                3,
                0.5,
                decision(
                    Status::Ignored,
                    (0, 0, 0, 0),
                    Some("no row to count, 3 rows skipped (not counted)"),
                ),
            ),
        ];
        for (what, rows, skipped, share, decided) in cases {
            assert_eq!(decide_rows(rows, skipped, share), decided, "{what}");
        }
    }
}
