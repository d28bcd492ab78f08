//! The commands without a terminal: `pending` lists what is pending, `accept` and `reject` settle it
//! by test name.

use prompt_tester::_cargo_prompt_tester_support::{
    CallRole, PendingFile, PendingSample, SampleId, matches_filter,
};
use serde_json::{Value, json};

use crate::locate::Place;
use crate::review::compare;

/// What to do with the pending samples a filter picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Into the cassette, replacing the sample's recordings.
    Accept,
    /// Deleted; the cassette keeps its recordings.
    Reject,
}

/// `cargo prompt-tester pending [--json]`.
pub fn list(place: &Place, json: bool) -> anyhow::Result<()> {
    let files = place.layout.pending()?;
    if json {
        let rows: Vec<Value> = files
            .iter()
            .flat_map(|file| file.samples.iter().map(move |s| row(file, s)))
            .collect();
        println!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
        return Ok(());
    }
    let samples: usize = files.iter().map(|f| f.samples.len()).sum();
    if samples == 0 {
        println!(
            "no pending recordings (in {})",
            place.shown(&place.layout.pending_dir)
        );
        return Ok(());
    }
    for file in &files {
        for sample in &file.samples {
            println!(
                "{}: {} · cassette {} · pending {}",
                sample.id,
                calls(sample),
                place.shown(&file.cassette),
                place.shown(&file.pending)
            );
        }
    }
    println!(
        "{samples} pending sample(s): review them with `cargo prompt-tester review`, or settle them with \
         `cargo prompt-tester accept [FILTER]` / `reject [FILTER]`"
    );
    Ok(())
}

/// How many calls a pending sample made, and how many it would replace.
fn calls(sample: &PendingSample) -> String {
    match sample.old.len() {
        0 => format!("{} call(s), nothing accepted yet", sample.new.len()),
        old => format!("{} call(s), replacing {old}", sample.new.len()),
    }
}

/// One pending sample as `pending --json` prints it.
fn row(file: &PendingFile, sample: &PendingSample) -> Value {
    json!({
        "test": sample.id.test,
        "sample": sample.id.run,
        "cassette": file.cassette,
        "pending": file.pending,
        "calls": sample.new.len(),
        "accepted_calls": sample.old.len(),
        "changes": changes(sample),
    })
}

/// What changed in the subject's requests, call by call ("subject call 1: model a → b").
fn changes(sample: &PendingSample) -> Vec<String> {
    compare::paired(
        compare::calls(&sample.old, CallRole::Subject, &compare::as_recorded),
        compare::calls(&sample.new, CallRole::Subject, &compare::as_recorded),
    )
    .iter()
    .enumerate()
    .flat_map(|(i, pair)| {
        compare::request_changes(pair)
            .into_iter()
            .map(move |c| format!("subject call {}: {c}", i + 1))
    })
    .collect()
}

/// `cargo prompt-tester accept|reject [FILTER] [--exact]`.
pub fn settle(
    place: &Place,
    verdict: Verdict,
    filter: Option<String>,
    exact: bool,
) -> anyhow::Result<()> {
    let files = place.layout.pending()?;
    let chosen = |id: &SampleId| matches_filter(&id.test, filter.as_deref(), exact);
    let (done, into) = match verdict {
        Verdict::Accept => ("accepted", "into"),
        Verdict::Reject => ("rejected", "for"),
    };
    let mut settled = 0;
    for file in &files {
        let result = match verdict {
            Verdict::Accept => file.accept(chosen)?,
            Verdict::Reject => file.reject(chosen)?,
        };
        for sample in &result.samples {
            println!("{done} {sample} {into} {}", place.shown(&file.cassette));
        }
        settled += result.samples.len();
    }
    match (settled, &filter) {
        (0, Some(filter)) => println!("no pending recordings match {filter:?}"),
        (0, None) => println!(
            "no pending recordings (in {})",
            place.shown(&place.layout.pending_dir)
        ),
        (n, _) => println!("{done} {n} sample(s)"),
    }
    Ok(())
}
