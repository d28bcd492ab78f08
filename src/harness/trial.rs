//! One trial: N samples run concurrently, then a pass-rate verdict.

use std::any::Any;
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use libtest_mimic::{Completion, Failed};

use super::record::{self, Status, TrialRecord};
use crate::case::{Plan, Sample};
use crate::engine::{RunScope, engine};
use crate::outcome::{self, SampleOutcome};
use crate::redact::redact;
use crate::usage::Usage;

/// How many of `runs` must pass at `pass_threshold`.
pub fn required(runs: u32, pass_threshold: f64) -> u32 {
    // The epsilon keeps 5 x 0.8 at 4 despite binary floating point.
    ((runs as f64 * pass_threshold) - 1e-9)
        .ceil()
        .clamp(1.0, runs as f64) as u32
}

/// Runs the plan and reports the outcome to libtest-mimic (and to the run's records).
pub fn execute(plan: Plan) -> Result<Completion, Failed> {
    let started = Instant::now();
    let Plan {
        trial,
        only_run,
        case,
    } = plan;
    let sampling = case.sampling;
    for warning in &case.warnings {
        record::warn(warning.clone());
    }
    let indices: Vec<u32> = match only_run {
        Some(i) => vec![i],
        None => (1..=sampling.runs).collect(),
    };
    let scopes: Vec<Arc<RunScope>> = indices
        .iter()
        .map(|&i| {
            Arc::new(RunScope {
                live_only: sampling.live_only,
                ..RunScope::new(
                    &trial,
                    &case.cassette,
                    &case.filter,
                    i,
                    sampling.runs,
                    sampling.cache_judge,
                )
            })
        })
        .collect();
    let run_one = |scope: Arc<RunScope>| {
        let case = case.clone();
        let future = async move { case.sample(scope).await };
        async move {
            // A panic in the body is caught nearer (a failure); one that gets here is the harness's.
            match AssertUnwindSafe(future).catch_unwind().await {
                Ok(sample) => sample,
                Err(payload) => Sample::errored(panic_message(payload)),
            }
        }
    };
    // Samples run on this thread (block_on polls them here), so the panic hook can tell them apart.
    IN_TRIAL.with(|flag| flag.set(true));
    let samples: Vec<Sample> = engine().block_on(async {
        if sampling.prime_first && scopes.len() > 1 {
            let first = run_one(scopes[0].clone()).await;
            let mut rest =
                futures::future::join_all(scopes[1..].iter().cloned().map(run_one)).await;
            rest.insert(0, first);
            rest
        } else {
            futures::future::join_all(scopes.iter().cloned().map(run_one)).await
        }
    });
    IN_TRIAL.with(|flag| flag.set(false));

    let mut usage = Usage::default();
    for scope in &scopes {
        usage += &scope.usage();
    }
    let total = samples.len() as u32;
    let need = if only_run.is_some() {
        1
    } else {
        required(sampling.runs, sampling.pass_threshold)
    };
    let outcomes: Vec<(u32, &SampleOutcome)> = indices
        .iter()
        .copied()
        .zip(samples.iter().map(|s| &s.outcome))
        .collect();
    let decision = outcome::decide(&outcomes, sampling.runs, need, sampling.pass_threshold);
    let preview = samples
        .iter()
        .find(|s| s.outcome != SampleOutcome::Passed && s.output.is_some())
        .or_else(|| samples.iter().find(|s| s.output.is_some()))
        .and_then(|s| s.output.as_deref())
        .map(|o| crate::render::shorten(o, 200));
    let mut record = TrialRecord {
        name: trial.clone(),
        status: decision.status.clone(),
        message: None,
        runs_passed: decision.passed,
        runs_errored: decision.errored,
        runs_total: total,
        runs_required: need,
        pass_threshold: sampling.pass_threshold,
        usage,
        duration: started.elapsed(),
        output_preview: preview,
        case: case.info.clone(),
        cell: case.cell.clone(),
        latency: record::Latency::of(samples.iter().filter_map(|s| s.detail.latency)),
        prompt: Some(case.request.prompt.clone()),
        samples: indices
            .iter()
            .zip(&samples)
            .map(|(&i, s)| s.record(i))
            .collect(),
    };

    if matches!(record.status, Status::Ignored | Status::LiveOnly) {
        let reason = decision.message.unwrap_or_default();
        record.message = Some(reason.clone());
        record::push(record);
        return Ok(Completion::ignored_with(reason));
    }
    let Some(message) = decision.message else {
        record::push(record);
        return Ok(Completion::Completed);
    };
    let message = redact(&message).into_owned();
    record.message = Some(message.clone());
    record::push(record);
    Err(Failed::from(message))
}

thread_local! {
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
    static IN_TRIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keeps the default panic output for panics outside trials; inside a trial the message becomes the
/// failure text instead (with its location), as libtest shows it.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if IN_TRIAL.with(|flag| flag.get()) {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            PANIC_LOCATION.with(|cell| *cell.borrow_mut() = location);
        } else {
            default(info);
        }
    }));
}

/// The text of a caught panic, with its location when the hook saw it.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panicked with a non-string payload".to_string()
    };
    match PANIC_LOCATION.with(|cell| cell.borrow_mut().take()) {
        Some(location) => format!("panicked at {location}:\n{message}"),
        None => format!("panicked: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_runs_round_up() {
        assert_eq!(required(5, 0.8), 4);
        assert_eq!(required(5, 1.0), 5);
        assert_eq!(required(3, 0.5), 2);
        assert_eq!(required(10, 0.01), 1);
        assert_eq!(required(1, 0.3), 1);
    }
}
