//! The Markdown summary's tests: a run with failures, a flaky test, a regression and pending
//! recordings, line by line; model output that stays text; the bounds.

use std::path::Path;

use super::*;
use crate::cassette::pending::{PendingSample, SampleId};
use crate::report::baseline::Figures;
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
        "panicked at src/refund.rs:9:5:\n\nprovider anthropic: 529 overloaded\nnote: run with RUST_BACKTRACE=1",
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
    let comparison = baseline::compare(&then, &baseline::figures_of_records(&records), 0.05);
    let context = Context {
        target: Some("prompts"),
        baseline: Some(Baseline {
            path: Path::new("baseline.json"),
            comparison: &comparison,
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
        "| support::refund | errored | 0/1 0% (0–79%) | panicked at src/refund.rs:9:5: provider anthropic: 529 overloaded |",
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
        "| role | calls | replayed | tokens in | tokens out | cost |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
        "| subject | 6 | 5 | 510 | 100 | \\$0.01250 |",
        "| judge | 5 | 0 | 900 | 50 | \\$0.00200 |",
        "| **total** | 11 | 5 | 1410 | 150 | \\$0.01450 |",
    ];
    let lines: Vec<&str> = text.lines().collect();
    for (i, (got, want)) in lines.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "line {}:\n{text}", i + 1);
    }
    assert_eq!(lines.len(), expected.len(), "{text}");
}

/// A sample `run` that `passed` with one judge answer, advisory (unmeasured on `kind`) when `kind` is given.
fn judged(run: u32, passed: bool, kind: Option<&str>) -> crate::case::SampleRecord {
    let mut s: crate::case::SampleRecord = serde_json::from_value(serde_json::json!({
        "run": run,
        "status": if passed { "passed" } else { "failed" },
        "replayed": true,
    }))
    .unwrap();
    s.judge.push(crate::checks::JudgeAnswer {
        judge_key: String::new(),
        question: "Does it avoid prices?".into(),
        answer: if passed { "yes" } else { "no" }.into(),
        passed,
        reasoning: None,
        snippet: None,
        question_type: kind.map(str::to_string),
        measurement: None,
        advisory: kind.map(|k| crate::stats::trust::Advisory::Unmeasured {
            question_type: Some(k.to_string()),
        }),
        votes: None,
    });
    s
}

#[test]
fn advisory_verdicts_are_marked_in_the_failures_and_listed() {
    let mut prices = record(
        "tea::avoids_prices",
        Status::Failed,
        (1, 0, 2),
        "1/2 samples passed",
    );
    prices.samples = vec![
        judged(1, true, Some("avoidance")),
        judged(2, false, Some("avoidance")),
    ];
    // Failed on a measured verdict: not marked, not listed.
    let mut measured = record(
        "tea::measured",
        Status::Failed,
        (0, 0, 1),
        "0/1 samples passed",
    );
    measured.samples = vec![judged(1, false, None)];
    let mut alice = record("tea::names_alice", Status::Passed, (1, 0, 1), "");
    alice.samples = vec![judged(1, true, Some("factual_presence"))];
    let text = render(&[prices, measured, alice], &Context::default());
    crate::test_support::assert_contains(
        &text,
        &[
            "| tea::avoids\\_prices | failed (advisory verdict) | 1/2 50% (9–91%) | 1/2 samples passed |\n\
             | tea::measured | failed | ",
            "### Advisory judge verdicts (2 test(s))\n\nThese judge answers come from a judge not measured well \
             enough on their type of question",
            "| test | status | advisory answers | why (the first) |\n| :--- | :--- | ---: | :--- |\n\
             | tea::avoids\\_prices | failed | 2/2 | this judge is not measured on avoidance questions |\n\
             | tea::names\\_alice | passed | 1/1 | this judge is not measured on factual\\_presence questions |\n",
        ],
    );
    let section = text.split("### Advisory").nth(1).unwrap();
    assert!(!section.contains("tea::measured"), "{text}");
    // A run without advisory verdicts has no such section.
    let plain = render(
        &[record("steady", Status::Passed, (5, 0, 5), "")],
        &Context::default(),
    );
    assert!(!plain.contains("Advisory"), "{plain}");
}

/// What a reader of the summary is shown, as a CommonMark parser with GitHub's extensions (tables,
/// strikethrough, task lists, footnotes, math) reads it.
#[derive(Debug, Default)]
struct Read {
    /// Each table's rows, each row's cells as plain text (the header row first).
    tables: Vec<Vec<Vec<String>>>,
    /// Each code block's text.
    code_blocks: Vec<String>,
    /// The HTML the text holds, tag by tag or line by line.
    html: Vec<String>,
    /// Markup other than tables, headings, paragraphs, code blocks and bold: links, emphasis, code
    /// spans, math, strikethrough.
    markup: Vec<String>,
}

fn read(text: &str) -> Read {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM;
    let mut read = Read::default();
    let (mut cell, mut in_code, mut in_cell) = (String::new(), false, false);
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(Tag::Table(_)) => read.tables.push(Vec::new()),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                read.tables.last_mut().unwrap().push(Vec::new())
            }
            Event::Start(Tag::TableCell) => (cell, in_cell) = (String::new(), true),
            Event::End(TagEnd::TableCell) => {
                in_cell = false;
                let rows = read.tables.last_mut().unwrap();
                rows.last_mut().unwrap().push(std::mem::take(&mut cell));
            }
            Event::Start(Tag::CodeBlock(_)) => {
                in_code = true;
                read.code_blocks.push(String::new());
            }
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if in_code => read.code_blocks.last_mut().unwrap().push_str(&t),
            Event::Text(t) if in_cell => cell.push_str(&t),
            Event::Html(h) | Event::InlineHtml(h) => read.html.push(h.trim_end().to_string()),
            Event::Start(
                tag @ (Tag::Link { .. }
                | Tag::Image { .. }
                | Tag::Emphasis
                | Tag::Strikethrough
                | Tag::BlockQuote(_)
                | Tag::List(_)),
            ) => read.markup.push(format!("{tag:?}")),
            e @ (Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_)
            | Event::TaskListMarker(_)) => read.markup.push(format!("{e:?}")),
            _ => {}
        }
    }
    read
}

/// The summary's own HTML: the folded outputs, opened and closed once each time.
fn own_html(opened: usize) -> Vec<String> {
    let mut html = Vec::new();
    for _ in 0..opened {
        html.push(
            "<details><summary>Outputs of the failed trials (the first failed sample's, shortened)</summary>"
                .to_string(),
        );
        html.push("</details>".to_string());
    }
    html
}

#[test]
fn model_output_with_html_table_pipes_and_backticks_stays_text() {
    let hostile = "</details> | <script>alert(1)</script> `x` $a$ and $b$ ~~gone~~ *em* _em_ [l](http://e.x) &amp; ![i](x.png) <!-- c -->";
    let name = "s::case | </details><script>x</script>\nnext | line";
    let mut failed = record(
        name,
        Status::Failed,
        (0, 0, 3),
        &format!("{hostile}\nsecond line"),
    );
    let output = "</details>\n<script>alert(1)</script>\n```\n| a | b |\n````\nend";
    failed.output_preview = Some(output.into());
    let flaky = record(hostile, Status::Passed, (2, 0, 3), "");
    let pending = [pending_file(&[(hostile, 1)])];
    let context = Context {
        target: Some("prompts"),
        pending: &pending,
        ..Context::default()
    };
    let text = render(&[failed, flaky], &context);
    let read = read(&text);
    assert_eq!(read.html, own_html(1), "{text}");
    // The one code span is the summary's own, the review command.
    assert_eq!(
        read.markup,
        [format!("Code(Borrowed({:?}))", crate::commands::REVIEW)],
        "{text}"
    );
    // The failures, the flaky tests, the pending tests, the counts: every row keeps its cells, each
    // cell the text as given (a line break a space).
    let shown_name = name.replace('\n', " ");
    let failures = &read.tables[1];
    assert_eq!(
        failures[1],
        [shown_name.as_str(), "failed", "0/3 0% (0–56%)", hostile],
        "{text}"
    );
    assert_eq!(
        read.tables[2][1],
        [hostile, "passed", "2/3 67% (21–94%)"],
        "{text}"
    );
    assert_eq!(read.tables[3][1], [hostile, "1"], "{text}");
    for table in &read.tables {
        assert!(
            table.iter().all(|row| row.len() == table[0].len()),
            "{table:?}"
        );
    }
    // The output verbatim, in a block its backticks cannot close.
    assert_eq!(read.code_blocks, [format!("{output}\n")], "{text}");
}

#[test]
fn control_characters_and_credentials_do_not_reach_the_summary() {
    let url = "https://user:hunter2secret@example.com/v1";
    let mut failed = record(
        "t\u{1b}[2J",
        Status::Failed,
        (0, 0, 1),
        &format!("calling {url} \u{7}"),
    );
    failed.output_preview = Some(format!("{url}\u{1b}]0;x\u{7}"));
    let text = render(&[failed], &Context::default());
    assert!(!text.contains("hunter2secret"), "{text}");
    assert!(!text.contains(['\u{1b}', '\u{7}']), "{text:?}");
    // Shown as the terminal summary shows it.
    assert_eq!(read(&text).tables[1][1][0], "t\\u{1b}[2J", "{text}");
}

/// `n` failed trials named `name-<i>`, each with a message and an output.
fn failures_named(n: usize, name: &str, message: &str, output: &str) -> Vec<TrialRecord> {
    (0..n)
        .map(|i| {
            let mut r = record(&format!("{name}-{i}"), Status::Failed, (1, 0, 3), message);
            r.output_preview = Some(output.into());
            r
        })
        .collect()
}

#[test]
fn lists_stop_at_fifty_then_say_how_many_more() {
    let records = failures_named(63, "case", "wrong", "out");
    let pending: Vec<PendingFile> = (0..55)
        .map(|i| pending_file(&[(&format!("p{i}"), 1)]))
        .collect();
    let context = Context {
        pending: &pending,
        ..Context::default()
    };
    let text = render(&records, &context);
    let read = read(&text);
    // The counts, the failures, the flaky trials (each failure passed 1 of 3), the pending tests.
    let rows: Vec<usize> = read.tables.iter().map(|t| t.len() - 1).collect();
    assert_eq!(rows, [1, 50, 50, 50, 1], "{text}");
    assert_eq!(read.code_blocks.len(), 50, "{text}");
    assert_eq!(read.tables[1][50][0], "case-49");
    for more in [
        "and 13 more failed or errored: the JUnit, JSON and HTML reports list every one.",
        "and 13 more flaky: the JSON and HTML reports show every one.",
        "and 5 more tests with pending recordings: `cargo prompt-tester pending` lists every one.",
    ] {
        assert_eq!(
            text.lines().filter(|l| *l == more).count(),
            1,
            "{more}\n{text}"
        );
    }
    // Fifty or fewer: no such line.
    let fifty = render(&records[..50], &Context::default());
    assert!(!fifty.contains(" more "), "{fifty}");
}

#[test]
fn the_summary_stays_under_its_cap_and_its_parts_stay_whole() {
    // Each name, line and output at its longest, each character escaped to five bytes.
    let records = failures_named(60, &"&".repeat(400), &"<".repeat(400), &"`".repeat(400));
    let text = render(&records, &Context::default());
    assert!(text.len() <= MAX_BYTES, "{}", text.len());
    assert!(text.ends_with(CUT), "{}", &text[text.len() - 300..]);
    // Cut anywhere: never over the cap, every part whole (the folded outputs closed, each code block
    // fenced on both sides, each table row whole).
    let records = failures_named(8, "case | </details>", "wrong\nsecond", "a\n```\nb");
    let whole = render(&records, &Context::default());
    for cap in (CUT.len()..whole.len() + 50).step_by(41) {
        let text = render_within(&records, &Context::default(), cap);
        assert!(text.len() <= cap.max(CUT.len()), "{cap}: {}", text.len());
        assert_eq!(
            text.ends_with(CUT),
            cap < whole.len() + CUT.len(),
            "{cap}:\n{text}"
        );
        let read = read(&text);
        let opened = usize::from(text.contains("<details>"));
        assert_eq!(read.html, own_html(opened), "{cap}:\n{text}");
        assert!(
            read.code_blocks.iter().all(|b| b == "a\n```\nb\n"),
            "{cap}:\n{text}"
        );
        for table in &read.tables {
            assert!(
                table.iter().all(|row| row.len() == table[0].len()),
                "{cap}:\n{text}"
            );
        }
    }
}

#[test]
fn the_file_is_replaced_and_the_step_summary_appended_to_when_a_trial_ran() {
    let scratch = crate::test_support::Scratch::new("markdown-write");
    let to = Markdown {
        file: Some(scratch.path().join("summary.md")),
        step_summary: Some(scratch.file("step.md", "earlier step")),
    };
    let records = [record("steady", Status::Passed, (5, 0, 5), "")];
    let summary = render(&records, &Context::default());
    for _ in 0..2 {
        assert!(write(&to, &records, &Context::default()).is_empty());
    }
    let read = |name: &str| std::fs::read_to_string(scratch.path().join(name)).unwrap();
    assert_eq!(read("summary.md"), summary);
    assert_eq!(
        read("step.md"),
        format!("earlier step\n{summary}\n{summary}")
    );
    // No trial ran: the file says so, the step summary is left alone.
    assert!(write(&to, &[], &Context::default()).is_empty());
    assert_eq!(read("summary.md"), "## prompt-tester: no trial ran\n");
    assert_eq!(
        read("step.md"),
        format!("earlier step\n{summary}\n{summary}")
    );
    // A step summary that cannot be written is said, the file still written.
    let blocked = Markdown {
        file: Some(scratch.path().join("again.md")),
        step_summary: Some(scratch.path().join("no-such-folder").join("step.md")),
    };
    let errors = write(&blocked, &records, &Context::default());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].0,
        scratch.path().join("no-such-folder").join("step.md")
    );
    assert_eq!(read("again.md"), summary);
}

/// Test targets beyond eight appending to one step: the step's file stays under GitHub's limit, the
/// target that reaches it cut and saying so, and nothing appended once not even that fits.
#[test]
fn the_step_summary_stays_under_its_limit_whatever_the_number_of_targets() {
    let scratch = crate::test_support::Scratch::new("markdown-step-limit");
    let step = scratch.path().join("step.md");
    let to = Markdown {
        file: None,
        step_summary: Some(step.clone()),
    };
    let records = failures_named(50, "case", "wrong", &"x".repeat(2000));
    let one = render(&records, &Context::default());
    assert!(
        one.len() > STEP_SUMMARY_LIMIT / 12 && !one.contains(CUT.trim()),
        "a whole summary of {} bytes",
        one.len()
    );
    let mut sizes = Vec::new();
    for _ in 0..16 {
        assert!(write(&to, &records, &Context::default()).is_empty());
        sizes.push(std::fs::metadata(&step).unwrap().len() as usize);
    }
    assert!(sizes.iter().all(|s| *s < STEP_SUMMARY_LIMIT), "{sizes:?}");
    let text = std::fs::read_to_string(&step).unwrap();
    let whole = text.matches(one.trim_end()).count();
    assert_eq!(whole, STEP_SUMMARY_LIMIT / (one.len() + 1), "{sizes:?}");
    let grew = 1 + sizes.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(grew > whole, "{sizes:?}");
    assert_eq!(
        text.matches(CUT.trim()).count(),
        grew - whole,
        "each target cut says so"
    );
    assert!(text.trim_end().ends_with(CUT.trim()));
    assert_eq!(sizes[14], sizes[15], "a full step takes nothing more");
}
