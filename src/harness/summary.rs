//! The summary printed on stderr after every run: pass rate, calls, tokens and cost per trial.

use std::time::Duration;

use owo_colors::{OwoColorize, Stream};

use super::record::{Status, TrialRecord};
use crate::usage::{Tally, Usage};

/// A cost cell: `-` without calls, `unpriced` when no call had a price, a `+?` mark when some lacked one.
fn usd(tally: &Tally) -> String {
    match (tally.calls, tally.cost.unpriced_calls()) {
        (0, _) => "-".to_string(),
        (calls, unpriced) if unpriced == calls => "unpriced".to_string(),
        (_, 0) => format!("${:.5}", tally.cost.priced_usd()),
        _ => format!("${:.5}+?", tally.cost.priced_usd()),
    }
}

/// One row of the table: name, pass rate, calls, tokens in/out, subject and judge cost.
fn row(name: &str, rate: &str, usage: &Usage, width: usize) -> String {
    let all = usage.total();
    format!(
        "{name:<width$}  {rate:>11}  {:>6}  {:>17}  {:>10}  {:>10}",
        all.calls,
        format!("{}/{}", all.tokens.input, all.tokens.output),
        usd(&usage.subject),
        usd(&usage.judge),
    )
}

/// Prints the summary of `records` (nothing when no trial ran).
pub fn print(records: &[TrialRecord], wall: Duration) {
    if records.is_empty() {
        return;
    }
    eprint!("{}", render(records, wall));
}

/// The summary as text.
pub fn render(records: &[TrialRecord], wall: Duration) -> String {
    let width = records
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let mut out = String::new();
    let header = format!(
        "{:<width$}  {:>11}  {:>6}  {:>17}  {:>10}  {:>10}",
        "test", "pass rate", "calls", "tokens in/out", "subject $", "judge $"
    );
    out.push_str(&format!(
        "\nprompt-tester summary\n{}\n",
        header.if_supports_color(Stream::Stderr, |t| t.bold())
    ));
    let mut total = Usage::default();
    let (mut passed, mut failed, mut errored, mut ignored) = (0, 0, 0, 0);
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
            _ => format!(
                "{}/{} {:>3.0}%",
                r.runs_passed,
                r.runs_total,
                100.0 * r.runs_passed as f64 / r.runs_total.max(1) as f64
            ),
        };
        let line = row(
            &crate::render::shorten(&r.name, width),
            &rate,
            &r.usage,
            width,
        );
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
    out.push_str(&row(
        "total",
        &format!("{passed}/{}", passed + failed + errored),
        &total,
        width,
    ));
    out.push('\n');
    let all = total.total();
    let (calls, replayed) = (all.calls, all.replayed);
    let skipped: u32 = records.iter().map(|r| r.runs_skipped).sum();
    out.push_str(&format!(
        "{passed} passed, {failed} failed, {errored} errored, {ignored} ignored{}; {calls} model calls ({replayed} replayed from cassettes{}); \
         total cost ${:.5}{}; wall time {:.2}s\n",
        match live_only.len() {
            0 => String::new(),
            n => format!(", {n} live only"),
        },
        // Early stop and adaptive sampling: samples the verdict did not need.
        match skipped {
            0 => String::new(),
            n => format!(", {n} runs not needed"),
        },
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
    let failed_names: Vec<&str> = records
        .iter()
        .filter(|r| matches!(r.status, Status::Failed | Status::Errored))
        .map(|r| r.name.as_str())
        .collect();
    if let [first, ..] = failed_names.as_slice() {
        out.push_str(&format!(
            "rerun a failed test: {}{}\n",
            crate::commands::rerun(first),
            if failed_names.len() > 1 {
                format!("   ({} failed in all)", failed_names.len())
            } else {
                String::new()
            }
        ));
    }
    if !total.unpriced.is_empty() {
        let models: Vec<&str> = total.unpriced.iter().map(String::as_str).collect();
        out.push_str(&format!(
            "unpriced models (cost unknown, not counted; add [prices.\"MODEL\"] to prompt-tester.toml, or \
             `free = true` to a self-hosted [providers.NAME]): {}\n",
            models.join(", ")
        ));
    }
    out
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
    use crate::provider::RateLimitStats;

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
