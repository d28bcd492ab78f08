//! The summary printed on stderr after every run: pass rate, calls, tokens and cost per trial.

use std::time::Duration;

use owo_colors::{OwoColorize, Stream};

use crate::commands::Commands;
use crate::record::{Status, TrialRecord};
use crate::redact::for_terminal;
use crate::stats::Counts;
use crate::usage::{Tally, Usage};

/// A cost cell: `-` without calls, `unpriced` when no call had a price, a `+?` mark when some lacked one,
/// `≤` when some calls count at their worst case (dropped after they were sent).
pub(crate) fn usd(tally: &Tally) -> String {
    let bound = if tally.cost.bounded_calls() > 0 {
        "≤"
    } else {
        ""
    };
    match (tally.calls, tally.cost.unpriced_calls()) {
        (0, _) => "-".to_string(),
        (calls, unpriced) if unpriced == calls => "unpriced".to_string(),
        (_, 0) => format!("{bound}${:.5}", tally.cost.priced_usd()),
        _ => format!("{bound}${:.5}+?", tally.cost.priced_usd()),
    }
}

/// A pass-rate cell: `4/5 80% (38–96%)`, the 95% Wilson interval in brackets.
pub(crate) fn rate(counts: Counts) -> String {
    let interval = counts
        .interval()
        .map_or_else(String::new, |i| format!(" ({})", i.percent_range()));
    format!("{}{interval}", pooled(counts))
}

/// The total row's cell: the samples of every trial that ran, without an interval (samples of
/// different tests are not draws of one rate, so one interval over them would say nothing).
pub(crate) fn pooled(counts: Counts) -> String {
    format!(
        "{}/{} {:.0}%",
        counts.passed,
        counts.total,
        counts.percent()
    )
}

/// One row of the table: name, samples passed, calls, tokens in/out, subject and judge cost.
fn row(name: &str, rate: &str, usage: &Usage, width: usize) -> String {
    let all = usage.total();
    format!(
        "{name:<width$}  {rate:>23}  {:>6}  {:>17}  {:>10}  {:>10}",
        all.calls,
        format!("{}/{}", all.tokens.input, all.tokens.output),
        usd(&usage.subject),
        usd(&usage.judge),
    )
}

/// Prints the summary of `records` (nothing when no trial ran), naming the commands of `commands`.
pub fn print(records: &[TrialRecord], wall: Duration, commands: &Commands) {
    if records.is_empty() {
        return;
    }
    eprint!("{}", render(records, wall, commands));
}

/// The summary as text.
pub fn render(records: &[TrialRecord], wall: Duration, commands: &Commands) -> String {
    let width = records
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let mut out = String::new();
    let header = format!(
        "{:<width$}  {:>23}  {:>6}  {:>17}  {:>10}  {:>10}",
        "test", "samples passed (95% CI)", "calls", "tokens in/out", "subject $", "judge $"
    );
    out.push_str(&format!(
        "\nprompt-tester summary\n{}\n",
        header.if_supports_color(Stream::Stderr, |t| t.bold())
    ));
    let mut total = Usage::default();
    let (mut passed, mut failed, mut errored, mut ignored) = (0, 0, 0, 0);
    let mut samples = Counts::new(0, 0);
    let mut live_only = Vec::new();
    for r in records {
        total += &r.usage;
        match r.status {
            Status::Passed => passed += 1,
            Status::Failed => failed += 1,
            Status::Errored => errored += 1,
            Status::Ignored => ignored += 1,
            Status::LiveOnly => live_only.push(r.name.as_str()),
        }
        let rate = match r.status {
            Status::Ignored => "ignored".to_string(),
            Status::LiveOnly => "live only".to_string(),
            _ => {
                let counts = r.counts();
                samples = Counts::new(samples.passed + counts.passed, samples.total + counts.total);
                rate(counts)
            }
        };
        // Escaped before it is coloured: the colours are the harness's own escapes.
        let line = for_terminal(&row(
            &crate::render::shorten(&r.name, width),
            &rate,
            &r.usage,
            width,
        ))
        .into_owned();
        let line = match r.status {
            Status::Failed | Status::Errored => line
                .if_supports_color(Stream::Stderr, |t| t.red())
                .to_string(),
            Status::Ignored | Status::LiveOnly => line
                .if_supports_color(Stream::Stderr, |t| t.yellow())
                .to_string(),
            Status::Passed => line,
        };
        out.push_str(&line);
        out.push('\n');
    }
    let rows = out;
    let mut out = String::new();
    // The table counts samples, the line below it trials (what libtest counts too).
    out.push_str(&row("total", &pooled(samples), &total, width));
    out.push('\n');
    let all = total.total();
    let (calls, replayed) = (all.calls, all.replayed);
    let skipped: u32 = records.iter().map(|r| r.runs_skipped).sum();
    out.push_str(&format!(
        "trials: {passed} passed, {failed} failed, {errored} errored, {ignored} ignored{}; {calls} model calls ({replayed} replayed from cassettes{}); \
         total cost {}${:.5}{}; wall time {:.2}s\n",
        match live_only.len() {
            0 => String::new(),
            n => format!(", {n} live only"),
        },
        // Early stop and adaptive sampling: samples the verdict did not need.
        match skipped {
            0 => String::new(),
            n => format!(", {n} runs not needed"),
        },
        if all.cost.bounded_calls() > 0 { "≤" } else { "" },
        all.cost.priced_usd(),
        if all.cost.unpriced_calls() > 0 { " + unpriced calls" } else { "" },
        wall.as_secs_f64()
    ));
    if !live_only.is_empty() {
        // Apart from the ignored ones: these never run from cassettes, not for want of a key.
        out.push_str(&format!(
            "{}: {} (run them with PROMPT_TESTER_CASSETTE=off or record)\n",
            crate::cassette::decision::LIVE_ONLY,
            live_only.join(", ")
        ));
    }
    let flaky: Vec<String> = records
        .iter()
        .filter(|r| r.is_flaky())
        .map(|r| format!("{} {}/{}", r.name, r.runs_passed, r.runs_total))
        .collect();
    if !flaky.is_empty() {
        out.push_str(&format!(
            "flaky (some samples passed, some failed): {}\n",
            flaky.join(", ")
        ));
    }
    for r in records {
        let Some(gate) = &r.gate else { continue };
        if matches!(r.status, Status::Ignored | Status::LiveOnly) {
            continue;
        }
        let failing = gate
            .rows
            .iter()
            .filter(|row| matches!(row.status, Status::Failed | Status::Errored))
            .count();
        out.push_str(&format!(
            "gate {}: {}: {}{}\n",
            r.name,
            crate::gate::rate_line(
                r.runs_passed,
                r.runs_errored,
                r.runs_total,
                r.runs_required,
                r.pass_threshold,
                gate.rows_skipped
            ),
            format!("{:?}", r.status).to_lowercase(),
            match failing {
                0 => String::new(),
                n => format!(", {n} row{} failing", if n == 1 { "" } else { "s" }),
            }
        ));
    }
    let failed_names: Vec<&str> = records
        .iter()
        .filter(|r| matches!(r.status, Status::Failed | Status::Errored))
        .map(|r| r.name.as_str())
        .collect();
    if let [first, ..] = failed_names.as_slice() {
        out.push_str(&format!(
            "rerun a failed test: {}{}\n",
            commands.rerun(first),
            if failed_names.len() > 1 {
                format!("   ({} failed in all)", failed_names.len())
            } else {
                String::new()
            }
        ));
    }
    out.push_str(&crate::usage::unpriced_models_line(&total.unpriced));
    out.push_str(&super::matrix::render(records));
    let mut text = rows;
    text.push_str(&for_terminal(&out));
    text
}

/// One line per endpoint that answered 429/529 during the run: how often, and the in-flight limit
/// the run settled at (nothing when no endpoint did).
pub fn rate_limits(endpoints: &[(String, crate::provider::RateLimitStats)]) -> String {
    endpoints
        .iter()
        .filter(|(_, s)| s.rate_limited > 0)
        .map(|(name, s)| {
            format!(
                "rate limits: {} answers 429/529 from {name}; in-flight limit settled at {} (configured {})\n",
                s.rate_limited, s.limit, s.configured
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::commands::Commands;
    use crate::provider::RateLimitStats;
    use crate::record::{Status, TrialRecord};
    use crate::test_support::assert_contains;

    /// A record of `passed` and `errored` of `total` samples.
    pub(crate) fn record(
        name: &str,
        status: Status,
        passed: u32,
        errored: u32,
        total: u32,
    ) -> TrialRecord {
        TrialRecord {
            runs_passed: passed,
            runs_errored: errored,
            runs_total: total,
            ..TrialRecord::unrun(name.into(), status, "", None)
        }
    }

    #[test]
    fn names_are_printed_with_their_control_characters_escaped() {
        // A name read from a file: its row, the flaky and live-only lists and the rerun command.
        let name = "s::\u{1b}]0;pwned\u{7}";
        let records = [
            record(name, Status::Failed, 2, 0, 3),
            record(&format!("{name}x"), Status::LiveOnly, 0, 0, 0),
        ];
        let text = super::render(&records, Duration::ZERO, &Commands::default());
        let text = regex::Regex::new("\x1b\\[[0-9;]*m")
            .unwrap()
            .replace_all(&text, "")
            .into_owned();
        assert!(!text.contains(['\u{1b}', '\u{7}']), "{text:?}");
        assert_contains(
            &text,
            &[
                "s::\\u{1b}]0;pwned\\u{7}  ",
                "flaky (some samples passed, some failed): s::\\u{1b}]0;pwned\\u{7} 2/3",
                "live only, not run: s::\\u{1b}]0;pwned\\u{7}x",
            ],
        );
    }

    #[test]
    fn rates_carry_their_interval_and_flaky_tests_are_listed_apart() {
        let records = [
            record("steady", Status::Passed, 5, 0, 5),
            record("wobbly", Status::Passed, 4, 0, 5),
            record("broken", Status::Failed, 0, 0, 3),
            // Passed and errored, none failed: an outage, not a varying output.
            record("outage", Status::Errored, 4, 1, 5),
            record("skipped", Status::Ignored, 0, 0, 0),
        ];
        let text = super::render(&records, Duration::ZERO, &Commands::default());
        // Colours when stderr is a terminal: compare the text.
        let text = regex::Regex::new("\x1b\\[[0-9;]*m")
            .unwrap()
            .replace_all(&text, "")
            .into_owned();
        let row = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
                .to_string()
        };
        assert!(row("steady").contains(" 5/5 100% (57–100%) "), "{text}");
        assert!(row("wobbly").contains(" 4/5 80% (38–96%) "), "{text}");
        assert!(row("broken").contains(" 0/3 0% (0–56%) "), "{text}");
        assert!(row("skipped").contains(" ignored "), "{text}");
        // The table counts samples: 13 of the 18 samples of the four trials that ran passed, and
        // the line below it trials: two of the four.
        assert!(row("total").contains(" 13/18 72% "), "{text}");
        assert!(!row("total").contains('('), "{text}");
        assert!(text.contains("samples passed (95% CI)"), "{text}");
        assert!(
            text.contains("trials: 2 passed, 1 failed, 1 errored, 1 ignored;"),
            "{text}"
        );
        let flaky: Vec<&str> = text.lines().filter(|l| l.starts_with("flaky")).collect();
        assert_eq!(
            flaky,
            ["flaky (some samples passed, some failed): wobbly 4/5"],
            "{text}"
        );
        let steady = [record("steady", Status::Passed, 5, 0, 5)];
        assert!(!super::render(&steady, Duration::ZERO, &Commands::default()).contains("flaky"));
    }

    #[test]
    fn rate_limit_lines_only_for_endpoints_that_met_limits() {
        let stats = |rate_limited, limit| RateLimitStats {
            rate_limited,
            limit,
            configured: 16,
        };
        assert_eq!(
            super::rate_limits(&[
                ("anthropic".into(), stats(0, 16)),
                ("local".into(), stats(37, 4)),
            ]),
            "rate limits: 37 answers 429/529 from local; in-flight limit settled at 4 (configured 16)\n"
        );
        assert_eq!(super::rate_limits(&[("a".into(), stats(0, 16))]), "");
    }
}
