//! The Markdown summary's tests: a run with failures, a flaky test, a regression and pending
//! recordings, line by line; model output that stays text; the bounds.

use std::path::Path;

use super::*;
use crate::cassette::pending::{PendingSample, SampleId};
use crate::stats::Counts;
use crate::usage::{Cost, Tokens};

/// A record of `passed` and `errored` of `total` samples, with `message`.
fn record(
    name: &str,
    status: Status,
    (passed, errored, total): (u32, u32, u32),
    message: &str,
) -> TrialRecord {
    TrialRecord {
        runs_passed: passed,
        runs_errored: errored,
        runs_total: total,
        ..TrialRecord::unrun(name.into(), status, message, None)
    }
}

/// `calls` subject calls of `replayed` replayed, `input`/`output` tokens, `usd` in all.
fn tally(calls: u64, replayed: u64, (input, output): (u64, u64), usd: f64) -> Tally {
    Tally {
        calls,
        replayed,
        tokens: Tokens {
            input,
            output,
            ..Tokens::default()
        },
        // Priced: the sum of the calls' costs.
        cost: Cost::of_call(Some(usd)),
    }
}

/// A pending file of `samples` (test, run).
fn pending_file(samples: &[(&str, u32)]) -> PendingFile {
    PendingFile {
        cassette: "c.cassette.json".into(),
        pending: "c.pending.json".into(),
        samples: samples
            .iter()
            .map(|(test, run)| PendingSample {
                id: SampleId {
                    target: Some("prompts".into()),
                    test: test.to_string(),
                    run: *run,
                },
                new: Vec::new(),
                old: Vec::new(),
                new_verdict: None,
                old_verdict: None,
            })
            .collect(),
    }
}

#[test]
fn a_run_with_failures_a_flaky_test_a_regression_and_pending_recordings() {
    let mut broken = record(
        "summary::tone",
        Status::Failed,
        (1, 0, 5),
        "[run 2/5] FAILED: output does not contain \"Phoenix\"\n[run 3/5] FAILED: too long\n1/5 samples passed",
    );
    broken.output_preview = Some("Alice leads the project.".into());
    broken.usage.subject = tally(5, 5, (500, 100), 0.0125);
    broken.usage.judge = tally(5, 0, (900, 50), 0.002);
    let mut outage = record(
        "support::refund",
        Status::Errored,
        (0, 1, 1),
        "provider anthropic: 529 overloaded",
    );
    outage.usage.subject = tally(1, 0, (10, 0), 0.0);
    let records = [
        record("steady", Status::Passed, (5, 0, 5), ""),
        record("wobbly", Status::Passed, (4, 0, 5), ""),
        broken,
        outage,
        record("later", Status::Ignored, (0, 0, 0), "not recorded"),
    ];
    let then: Figures = [
        (baseline::Subject::Test("steady".into()), Counts::new(5, 5)),
        (
            baseline::Subject::Test("summary::tone".into()),
            Counts::new(10, 10),
        ),
    ]
    .into_iter()
    .collect();
    let pending = [pending_file(&[
        ("summary::tone", 1),
        ("summary::tone", 2),
        ("wobbly", 1),
    ])];
    let context = Context {
        target: Some("prompts"),
        baseline: Some(Baseline {
            path: Path::new("baseline.json"),
            figures: &then,
            alpha: 0.05,
        }),
        pending: &pending,
        budget: None,
    };
    let text = render(&records, &context);
    let expected = [
        "## prompt-tester · prompts: ❌ 1 failed, 1 errored",
        "",
        "| passed | failed | errored | ignored | live only | samples passed |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        "| 2 | 1 | 1 | 1 | 0 | 10/16 62% |",
        "",
        "### Failed and errored (2)",
        "",
        "| test | status | samples passed (95% CI) | first failure line |",
        "| :--- | :--- | ---: | :--- |",
        "| summary::tone | failed | 1/5 20% (4–62%) | \\[run 2/5\\] FAILED: output does not contain \"Phoenix\" |",
        "| support::refund | errored | 0/1 0% (0–79%) | provider anthropic: 529 overloaded |",
        "",
        "<details><summary>Outputs of the failed trials (the first failed sample's, shortened)</summary>",
        "",
        "**summary::tone**",
        "",
        "```text",
        "Alice leads the project.",
        "```",
        "",
        "</details>",
        "",
        "### Flaky (2): some samples passed, some failed",
        "",
        "| test | verdict | samples passed (95% CI) |",
        "| :--- | :--- | ---: |",
        "| wobbly | passed | 4/5 80% (38–96%) |",
        "| summary::tone | failed | 1/5 20% (4–62%) |",
        "",
        "### Against the baseline baseline.json",
        "",
        "1 significant regression, 0 significant improvements (Fisher's exact test, two-sided, \
         significant at p ≤ 0.05; no multiple-comparison correction); 2 compared, 1 unchanged, 0 in \
         the baseline only, 2 new.",
        "",
        "| regression | then | now | p |",
        "| :--- | ---: | ---: | ---: |",
        "| test summary::tone | 10/10 100% | 1/5 20% | 0.0037 |",
        "",
        "### Pending recordings: 2 test(s), 3 sample(s)",
        "",
        "New answers wait for review: `cargo prompt-tester review`.",
        "",
        "| test | samples |",
        "| :--- | ---: |",
        "| summary::tone | 2 |",
        "| wobbly | 1 |",
        "",
        "### Calls, tokens and cost",
        "",
        "| calls | made or replayed | replayed | tokens in | tokens out | cost |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
        "| subject | 6 | 5 | 510 | 100 | \\$0.01250 |",
        "| judge | 5 | 0 | 900 | 50 | \\$0.00200 |",
        "| **total** | 11 | 5 | 1410 | 150 | \\$0.01450 |",
        "",
    ];
    let lines: Vec<&str> = text.lines().collect();
    for (i, (got, want)) in lines.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "line {}:\n{text}", i + 1);
    }
    assert_eq!(lines.len(), expected.len(), "{text}");
}
