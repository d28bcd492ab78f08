//! One trial: N samples run concurrently, then a pass-rate verdict.

use std::any::Any;
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::{FutureExt, StreamExt};
use libtest_mimic::{Completion, Failed};

use super::reporter::{Event, Run};
use crate::case::{Case, Executor, Plan, SampleRecord};
use crate::checks::SampleStatus;
use crate::engine::{Engine, RunScope, SampleIdentity};
use crate::outcome::{self, SampleOutcome};
use crate::plan::SamplePlan;
use crate::record::{self, Status, TrialRecord};
use crate::redact::redact;
use crate::usage::Usage;

/// Runs the plan and reports the outcome to libtest-mimic (and to the run's reporter).
///
/// The samples run in waves: `outcome::next_wave` says how many to launch after each (all at once for a
/// fixed `runs`, fewer under early stop or adaptive sampling), `outcome::decide` what they decide.
/// Sample `k` is always run `k`, so a cassette replays exactly the samples it recorded.
pub fn execute(plan: Plan, run: &Run) -> Result<Completion, Failed> {
    let started = Instant::now();
    let Plan {
        trial,
        only_run,
        case,
    } = plan;
    // A case that cannot make a sample (an unknown provider, a placeholder without a value) fails once,
    // before any call, rather than once per sample.
    if case.needs_subject()
        && let Err(no_subject) = &case.request.subject
    {
        let why = no_subject.to_string();
        run.reporter
            .unrun(trial, Status::Failed, &why, case.info.clone());
        return Err(Failed::from(crate::redact::for_terminal(&why).into_owned()));
    }
    // Samples run on this thread (block_on polls them here), so the panic hook can tell them apart.
    let taken = in_trial(|| run.engine.block_on(take(&trial, only_run, &case, run)));
    let record = conclude(trial, &case, taken, run, started);
    finished(record, run)
}

/// Marks this thread as running trials' samples while `f` runs (see [`install_panic_hook`]).
pub(super) fn in_trial<T>(f: impl FnOnce() -> T) -> T {
    IN_TRIAL.with(|flag| flag.set(true));
    let out = f();
    IN_TRIAL.with(|flag| flag.set(false));
    out
}

/// The samples a trial took, with their scopes, and the rule that decides them.
pub(super) struct Taken {
    samples: Vec<SampleRecord>,
    scopes: Vec<Arc<RunScope>>,
    rule: SamplePlan,
}

/// Takes the samples of trial `trial` of `case` in waves (only `only_run` for a numbered run), and
/// reports the case's warnings.
pub(super) async fn take(trial: &str, only_run: Option<u32>, case: &Arc<Case>, run: &Run) -> Taken {
    let sampling = case.sampling;
    for warning in &case.warnings {
        run.reporter.report(Event::Warning(warning.clone()));
    }
    // A numbered run is one sample that must pass.
    let rule = match only_run {
        Some(_) => SamplePlan::ONE,
        None => sampling.plan,
    };
    let max_runs = sampling.plan.max_runs();
    let concurrency = wave_limit(&run.engine, case.request.provider());
    // The test's own budget: every sample of the trial spends against it.
    let budget = case
        .request
        .budget
        .map(|usd| Arc::new(crate::budget::Budget::for_test(usd, trial)));
    let scope = |i: u32| {
        let identity = SampleIdentity {
            cache_judge: sampling.cache_judge,
            live_only: sampling.live_only,
            budget: budget.clone(),
            judge_samples: sampling.judge_samples,
            judge: case.judge,
            ..SampleIdentity::new(trial, &case.cassette, &case.filter, i, max_runs)
        };
        Arc::new(RunScope::new(run.engine.clone(), identity))
    };
    let run_one = |scope: Arc<RunScope>| {
        let case = case.clone();
        let run = scope.identity().run_index;
        let future = async move { case.sample(scope).await };
        async move {
            // A panic in the body is caught nearer (a failure); one that gets here is the harness's.
            match AssertUnwindSafe(future).catch_unwind().await {
                Ok(sample) => sample,
                Err(payload) => SampleRecord::errored(run, panic_message(payload)),
            }
        }
    };
    // A `run_fn`'s own client opens a connection for each call it has under way, before any limit of
    // the engine's applies (a replay takes no slot): its samples run `concurrency` at a time. The
    // harness's own calls wait for a slot, so their samples all start.
    let at_once = match case.executor {
        Executor::Custom(_) | Executor::App { .. } => concurrency as usize,
        _ => usize::MAX,
    };
    let mut scopes: Vec<Arc<RunScope>> = Vec::new();
    let mut samples: Vec<SampleRecord> = Vec::new();
    loop {
        let taken: Vec<&SampleOutcome> = samples.iter().map(|s| &s.outcome).collect();
        let mut wave = outcome::next_wave(&rule, &taken, concurrency);
        if wave == 0 {
            break;
        }
        // Priming a provider cache: the first sample alone, then the others.
        if sampling.prime_first && samples.is_empty() {
            wave = 1;
        }
        let first = scopes.len() as u32 + 1;
        let indices: Vec<u32> = match only_run {
            Some(i) => vec![i],
            None => (first..first + wave).collect(),
        };
        let launched: Vec<Arc<RunScope>> = indices.iter().map(|&i| scope(i)).collect();
        scopes.extend(launched.iter().cloned());
        samples.extend(
            futures::stream::iter(launched.into_iter().map(run_one))
                .buffered(at_once)
                .collect::<Vec<_>>()
                .await,
        );
    }
    // Said once, where calls are recorded or live: the test's calls went uncounted and unrecorded.
    if matches!(case.executor, Executor::Custom(_))
        && run.engine.may_call()
        && scopes.iter().any(|s| s.state().went_around())
    {
        let provider = case.request.provider().unwrap_or("openai");
        run.reporter
            .report(Event::Warning(crate::case::went_around(trial, provider)));
    }
    Taken {
        samples,
        scopes,
        rule,
    }
}

/// What the samples of trial `trial` decide, as its record (its message redacted); the calibration
/// verdicts they noted go to the reporter.
pub(super) fn conclude(
    trial: String,
    case: &Case,
    taken: Taken,
    run: &Run,
    started: Instant,
) -> TrialRecord {
    let Taken {
        mut samples,
        scopes,
        rule,
    } = taken;
    let sampling = case.sampling;
    let observations: Vec<_> = samples
        .iter_mut()
        .flat_map(|s| std::mem::take(&mut s.observations))
        .collect();
    if !observations.is_empty() {
        run.reporter.report(Event::Observed(observations));
    }

    let mut usage = Usage::default();
    for scope in &scopes {
        usage += &scope.state().usage();
    }
    let total = samples.len() as u32;
    let outcomes: Vec<(u32, &SampleOutcome)> =
        samples.iter().map(|s| (s.run, &s.outcome)).collect();
    let decision = outcome::decide(&outcomes, &rule);
    let failed = total - decision.passed - decision.errored;
    let preview = samples
        .iter()
        .find(|s| s.status() != SampleStatus::Passed && s.output.is_some())
        .or_else(|| samples.iter().find(|s| s.output.is_some()))
        .and_then(|s| s.output.as_deref())
        .map(|o| crate::render::shorten(o, 200));
    let ignored = matches!(decision.status, Status::Ignored | Status::LiveOnly);
    TrialRecord {
        name: trial,
        status: decision.status.clone(),
        // A reason to be ignored is shown as it is; a failure is redacted.
        message: decision
            .message
            .map(|m| if ignored { m } else { redact(&m).into_owned() }),
        runs_passed: decision.passed,
        runs_errored: decision.errored,
        runs_total: total,
        runs_required: rule.required(failed),
        runs_skipped: rule.max_runs().saturating_sub(total),
        pass_threshold: sampling.plan.pass_threshold(),
        usage,
        duration: started.elapsed(),
        output_preview: preview,
        case: case.info.clone(),
        cell: case.cell.clone(),
        latency: record::Latency::of(samples.iter().filter_map(|s| s.latency)),
        prompt: case.needs_subject().then(|| case.request.prompt.clone()),
        media: (case.request.media.iter())
            .map(|(var, part)| record::MediaRecord::of(var, part))
            .collect(),
        samples,
        gate: None,
        attempts: None,
    }
}

/// Sends `record` to the run's reporter and says to libtest-mimic how the trial ended.
pub(super) fn finished(record: TrialRecord, run: &Run) -> Result<Completion, Failed> {
    let status = record.status.clone();
    let shown = record
        .message
        .as_deref()
        .map(|m| crate::redact::for_terminal(m).into_owned());
    run.reporter.report(Event::TrialFinished(Box::new(record)));
    match (status, shown) {
        (Status::Ignored | Status::LiveOnly, reason) => {
            Ok(Completion::ignored_with(reason.unwrap_or_default()))
        }
        (_, None) => Ok(Completion::Completed),
        (_, Some(shown)) => Err(Failed::from(shown)),
    }
}

/// The most samples a wave launches: the in-flight limit of the provider the samples call (the
/// harness's `concurrency` when it is unknown).
pub(super) fn wave_limit(engine: &Engine, provider: Option<&str>) -> u32 {
    let config = &engine.config;
    let limit = provider
        .and_then(|p| config.endpoint(p).ok())
        .map_or(config.concurrency(), |e| e.max_in_flight);
    u32::try_from(limit).unwrap_or(u32::MAX).max(1)
}

thread_local! {
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
    static IN_TRIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keeps the default panic output for panics outside trials; inside a trial the message becomes the
/// failure text instead (with its location), as libtest shows it. Installed once per process, however
/// many runs it makes: each would otherwise wrap the hook before it again.
pub fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(wrap_panic_hook);
}

fn wrap_panic_hook() {
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
