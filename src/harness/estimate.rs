//! `--estimate`: the trials the command line selects, as it selects those that run, given to
//! [`crate::estimate`] with each sample's recorded calls; the estimate printed, and written as the
//! JSON report when one is asked for. Nothing is called: a sample whose checks decide its calls (a
//! suite case's, a dataset row's, a calibration item's) is replayed from its cassette, which counts
//! its calls as a replay, and a re-recording run, makes them.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;

use super::catalog::{TrialDef, TrialKind};
use super::select::{Choice, Fate};
use crate::case::{Case, Executor, Plan};
use crate::cassette::{CassetteMode, CassetteStore, Entry, Policy};
use crate::config::Config;
use crate::engine::{CallEnd, CallEvent, CallObserver, Engine, RunScope, SampleIdentity};
use crate::estimate::{self, Estimate, Recorded, Subject, Trial};
use crate::plan::SamplePlan;
use crate::usage::Usage;

/// Counts the calls a replay could not answer from a recording.
#[derive(Default)]
struct Misses(AtomicU64);

impl CallObserver for Misses {
    fn call_event(&self, event: CallEvent) {
        if let CallEvent::Finished(_, CallEnd::Failed | CallEnd::Made) = event {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// An engine that only replays, for the samples the estimate learns the calls of by replaying them.
struct Replayer {
    engine: Arc<Engine>,
    misses: Arc<Misses>,
}

impl Replayer {
    /// A replaying engine on `cassettes`, the run's one store.
    fn new(config: &Config, cassettes: Arc<CassetteStore>) -> Self {
        let misses = Arc::new(Misses::default());
        let policy = Policy {
            mode: CassetteMode::Replay,
            ..Policy::default()
        };
        Self {
            engine: Engine::with_budget(
                config.clone(),
                policy,
                misses.clone(),
                None,
                Some(cassettes),
            ),
            misses,
        }
    }

    /// Whether `case`'s samples are replayed: those whose checks call a model (a suite's `judge` and
    /// `similar`, a calibration set's judge), as their calls may be keyed alike in two samples (the
    /// same text embedded, the same answer judged) and recorded under one of them only, or under an
    /// item's trial name. A sample whose only calls are its subject's has them all under its name. A
    /// test body, an agent's tools and a `run_fn` are the user's code: an estimate does not run them.
    fn replays(case: &Case) -> bool {
        match case.executor {
            Executor::Given(_) => true,
            Executor::Call => !case.has_body() && !case.other_calls.is_empty(),
            Executor::Agent(_) | Executor::Custom(_) | Executor::App { .. } => false,
        }
    }

    /// Sample `run` of `trial` replayed: its calls as the replay counts and prices them, when every
    /// one was recorded.
    fn sample(&self, trial: &str, case: &Case, run: u32) -> Option<Usage> {
        let before = self.misses.0.load(Ordering::Relaxed);
        let identity = SampleIdentity {
            cache_judge: case.sampling.cache_judge,
            judge_samples: case.sampling.judge_samples,
            ..SampleIdentity::new(
                trial,
                &case.cassette,
                &case.filter,
                run,
                case.sampling.plan.max_runs(),
            )
        };
        let scope = Arc::new(RunScope::new(self.engine.clone(), identity));
        let sampled = AssertUnwindSafe(case.sample(scope.clone())).catch_unwind();
        let answered = self.engine.block_on(sampled).is_ok();
        let missed = self.misses.0.load(Ordering::Relaxed) != before;
        // A sample that made no call (its subject cannot be resolved) says nothing of its calls.
        let usage = scope.state().usage();
        (answered && !missed && usage.total().calls > 0).then_some(usage)
    }
}

/// The recordings of one cassette, found by sample and by key.
#[derive(Default)]
struct Recordings {
    entries: Vec<Entry>,
    /// (trial, run) to the indices of its entries.
    by_sample: HashMap<(String, u32), Vec<usize>>,
    /// A key to its entry's index.
    by_key: HashMap<String, usize>,
}

impl Recordings {
    fn new(entries: Vec<Entry>) -> Self {
        let mut by_sample: HashMap<(String, u32), Vec<usize>> = HashMap::new();
        let mut by_key = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_sample
                .entry((e.test.clone(), e.run))
                .or_default()
                .push(i);
            by_key.entry(e.key.clone()).or_insert(i);
        }
        Self {
            entries,
            by_sample,
            by_key,
        }
    }

    /// Sample `run` of `trial`'s recorded calls: those it recorded (as the trial, or as its numbered
    /// run), else its subject's first call found by its key (`subject_key`).
    fn sample(&self, trial: &str, run: u32, subject_key: Option<&str>) -> Vec<&Entry> {
        let numbered = crate::trial_name::TrialName::row(trial)
            .numbered(run)
            .to_string();
        let mut found: Vec<usize> = [trial.to_string(), numbered]
            .into_iter()
            .filter_map(|test| self.by_sample.get(&(test, run)))
            .flatten()
            .copied()
            .collect();
        // Recorded under another name (a renamed trial, a hand-made cassette): its subject's call alone,
        // as the other calls of that sample cannot be told from its neighbours'.
        if found.is_empty()
            && let Some(&i) = subject_key.and_then(|k| self.by_key.get(k))
        {
            found.push(i);
        }
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|i| &self.entries[i]).collect()
    }
}

/// The plans of the trials that would run, built as the run builds them; a broken or skipped trial is
/// left out (it makes no call). A gate is the rows it counts, each once however many gates count it
/// (the gates of a run share their rows); beside the plans, each row's trial name to how many
/// selected gates count it (under nextest each gate runs them in its own process).
pub fn plans(defs: Vec<TrialDef>, choices: &[Choice]) -> (Vec<Plan>, BTreeMap<String, u32>) {
    let mut plans = Vec::new();
    let mut gates_of_row: BTreeMap<String, u32> = BTreeMap::new();
    for (def, choice) in defs.into_iter().zip(choices) {
        if choice.fate != Fate::Runs {
            continue;
        }
        let mut kind = def.kind;
        loop {
            match kind {
                TrialKind::Lazy(decide) => kind = decide(),
                TrialKind::Plan(build) => break plans.push(build()),
                TrialKind::Skip(_) | TrialKind::Broken(_) => break,
                TrialKind::Gate(gate) => {
                    let rows = gate.shared.rows();
                    for i in gate.counted().0 {
                        let trial = &rows.rows[i].trial;
                        let gates = gates_of_row.entry(trial.clone()).or_default();
                        *gates += 1;
                        // A row that cannot be built errors when it runs: it makes no call.
                        if *gates == 1
                            && let Ok(case) = rows.case(i)
                        {
                            plans.push(Plan {
                                trial: trial.clone(),
                                only_run: None,
                                case,
                            });
                        }
                    }
                    break;
                }
            }
        }
    }
    (plans, gates_of_row)
}

/// The estimate of `plans` from the cassettes of `store` (the run's, each file read once).
pub fn of_plans(config: &Config, store: CassetteStore, plans: &[Plan]) -> Estimate {
    let store = Arc::new(store);
    let mut cassettes: BTreeMap<&str, Recordings> = BTreeMap::new();
    for plan in plans {
        let name = plan.case.cassette.as_str();
        cassettes.entry(name).or_insert_with(|| {
            // A cassette that cannot be read is estimated as unrecorded: the run reports the file.
            Recordings::new(store.open(name).map(|c| c.entries()).unwrap_or_default())
        });
    }
    let replayer = plans
        .iter()
        .any(|p| Replayer::replays(&p.case))
        .then(|| Replayer::new(config, store.clone()));
    let trials: Vec<Trial<'_>> = plans
        .iter()
        .map(|plan| {
            let case = &plan.case;
            let rule = match plan.only_run {
                Some(_) => SamplePlan::ONE,
                None => case.sampling.plan,
            };
            let first_run = plan.only_run.unwrap_or(1);
            let subject = case
                .request
                .subject
                .as_ref()
                .ok()
                .filter(|_| case.needs_subject());
            let recordings = &cassettes[case.cassette.as_str()];
            let replayer = replayer.as_ref().filter(|_| Replayer::replays(case));
            let recorded = (first_run..first_run + rule.max_runs())
                .filter_map(|run| {
                    if let Some(usage) = replayer.and_then(|r| r.sample(&plan.trial, case, run)) {
                        return Some((run, Recorded::Replayed(Box::new(usage))));
                    }
                    let key = subject.map(|s| {
                        crate::cassette::entry_key(
                            &s.provider,
                            &case.subject_request(&s.model, run),
                            run,
                        )
                    });
                    let found = recordings.sample(&plan.trial, run, key.as_deref());
                    (!found.is_empty()).then_some((run, Recorded::Found(found)))
                })
                .collect();
            Trial {
                name: plan.trial.clone(),
                plan: rule,
                first_run,
                request: match &case.request.subject {
                    Ok(s) => Ok((
                        s.provider.clone(),
                        case.subject_request(&s.model, first_run),
                    )),
                    Err(why) => Err(why.to_string()),
                },
                subject: match case.executor {
                    Executor::Call => Subject::Call,
                    Executor::Agent(_) => Subject::Agent,
                    Executor::Custom(_) => Subject::Custom,
                    Executor::Given(_) => Subject::Given,
                    Executor::App { .. } => Subject::App,
                },
                body: case.has_body(),
                other_calls: case.other_calls.clone(),
                recorded,
            }
        })
        .collect();
    estimate::estimate(config, &trials)
}

/// Prints `estimate`, and writes it as the JSON report at `report` when one is asked for.
pub fn finish(estimate: &Estimate, report: Option<&Path>) -> super::finish::Exit {
    eprint!("{}", estimate::render(estimate));
    if let Some(path) = report {
        // The printed last line's figures are the `total`'s.
        let mut figures = serde_json::to_value(estimate).unwrap_or_default();
        figures["total"] = serde_json::to_value(estimate.total()).unwrap_or_default();
        let json = serde_json::json!({ "estimate": figures });
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        if let Err(e) = crate::shared::replace(path, text.as_bytes()) {
            eprintln!(
                "error: cannot write the JSON report {}: {e}",
                path.display()
            );
            return super::finish::Exit::Failed;
        }
    }
    super::finish::Exit::Passed
}
