//! The estimate as text, in the summary's shape: a row per trial, the total, what is unknown and
//! unpriced, and last the line the summary ends its totals with (`total cost $0.00006`).

use super::{Basis, Estimate, Figure};
use crate::redact::for_terminal;

/// A cost cell: `-` without calls, `unknown`, `unpriced` when no call had a price, `≤` before an
/// approximated (upper-bound) figure, `+?` when some calls lacked a price.
fn usd(figure: &Figure) -> String {
    let bound = match figure.basis {
        Basis::None => return "-".to_string(),
        Basis::Unknown if figure.calls == 0.0 => return "unknown".to_string(),
        Basis::Approximated | Basis::Unknown => "≤",
        Basis::Recorded => "",
    };
    if figure.unpriced_calls > 0.0 && figure.unpriced_calls >= figure.calls {
        return "unpriced".to_string();
    }
    let unpriced = if figure.unpriced_calls > 0.0 {
        "+?"
    } else {
        ""
    };
    format!("{bound}${:.5}{unpriced}", figure.cost_usd)
}

/// A count of calls or samples: whole when it is, else to one decimal (an adaptive plan's mean).
fn count(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    }
}

/// What a row's figures come from.
fn basis(figures: [&Figure; 3]) -> &'static str {
    let has = |b: Basis| figures.iter().any(|f| f.basis == b);
    match (
        has(Basis::Recorded),
        has(Basis::Approximated),
        has(Basis::Unknown),
    ) {
        (_, _, true) if !has(Basis::Recorded) && !has(Basis::Approximated) => "unknown",
        (true, _, true) => "recorded + unknown",
        (false, true, true) => "approximated + unknown",
        (true, true, false) => "recorded + approximated",
        (true, false, false) => "recorded",
        (false, true, false) => "approximated",
        _ => "-",
    }
}

/// The estimate as the harness prints it.
pub fn render(estimate: &Estimate) -> String {
    let width = estimate
        .trials
        .iter()
        .map(|t| t.trial.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let mut out = format!(
        "\nprompt-tester estimate: what a live or re-recording run of {} trial{} would cost (no call was made)\n",
        estimate.trials.len(),
        if estimate.trials.len() == 1 { "" } else { "s" }
    );
    out.push_str(&format!(
        "{:<width$}  {:>14}  {:>7}  {:>11}  {:>11}  {:>11}  basis\n",
        "test", "samples", "calls", "subject $", "judge $", "embed $"
    ));
    let row = |name: &str, samples: String, all: &Figure, figures: [&Figure; 3]| {
        format!(
            "{:<width$}  {samples:>14}  {:>7}  {:>11}  {:>11}  {:>11}  {}\n",
            crate::render::shorten(name, width),
            count(all.calls),
            usd(figures[0]),
            usd(figures[1]),
            usd(figures[2]),
            basis(figures)
        )
    };
    for t in &estimate.trials {
        let samples = if t.samples == f64::from(t.max_samples) {
            count(t.samples)
        } else {
            format!("{} (max {})", count(t.samples), t.max_samples)
        };
        out.push_str(&row(&t.trial, samples, &t.calls.total(), t.calls.each()));
    }
    let all = estimate.total();
    out.push_str(&row("total", String::new(), &all, estimate.calls.each()));
    // One line per reason, naming the trials it holds for (a dataset's rows share theirs).
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &estimate.trials {
        for u in &t.unknown {
            match by_reason.iter_mut().find(|(reason, _)| reason == u) {
                Some((_, trials)) => trials.push(&t.trial),
                None => by_reason.push((u, vec![&t.trial])),
            }
        }
    }
    let unknown: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, trials)| match trials.as_slice() {
            [one] => format!("{one}: {reason}"),
            [first, second] => format!("{first}, {second}: {reason}"),
            [first, rest @ ..] => format!("{first} and {} more: {reason}", rest.len()),
            [] => reason.to_string(),
        })
        .collect();
    if !unknown.is_empty() {
        out.push_str("not counted, unknown before the run:\n");
        for line in unknown {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&crate::usage::unpriced_models_line(&estimate.unpriced));
    let unpriced = if all.unpriced_calls > 0.0 {
        " + unpriced calls"
    } else {
        ""
    };
    if all.max_calls != all.calls || all.max_cost_usd != all.cost_usd {
        out.push_str(&format!(
            "at most (every sample the plans may take): {} model calls; total cost ${:.5}{unpriced}\n",
            count(all.max_calls),
            all.max_cost_usd
        ));
    }
    let approximate = if matches!(all.basis, Basis::Approximated | Basis::Unknown) {
        " (approximated figures are upper bounds; unknown calls are not counted)"
    } else {
        ""
    };
    if let Some(nextest) = &estimate.under_nextest {
        out.push_str(&format!(
            "under nextest (a process per gate, each running the rows it counts): {} model calls; \
             total cost ${:.5}{unpriced}\n",
            count(nextest.calls),
            nextest.cost_usd
        ));
    }
    let mut text = for_terminal(&out).into_owned();
    text.push_str(&format!(
        "estimate{approximate}: {} model calls; total cost ${:.5}{unpriced}\n",
        count(all.calls),
        all.cost_usd
    ));
    text
}
