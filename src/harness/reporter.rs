//! The run's one reporter: fed typed events as trials finish, it keeps what the summary and the report
//! writers read afterwards and draws the progress line. Stores never call the UI; the reporter is the
//! one place that sees both.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::progress::{CallCounts, Console, Line};
use crate::cassette::Policy;
use crate::checks::Observation;
use crate::config::Config;
use crate::engine::{CallEvent, CallObserver, Engine};
use crate::record::{CaseInfo, Status, TrialRecord};

/// What happens during a run, as the reporter hears it.
#[derive(Debug)]
pub enum Event {
    /// The trials start: `trials` will report (covered numbered runs do not).
    RunStarted {
        /// How many trials will finish.
        trials: u64,
    },
    /// A trial finished (or was reported without running: skipped, broken).
    TrialFinished(Box<TrialRecord>),
    /// A warning, printed once after the trials: printed as a trial runs, it would land inside libtest's
    /// `test name ... ok` line, and every numbered run of a test would repeat it.
    Warning(String),
    /// Calibration items' verdicts a trial noted, for the result files.
    Observed(Vec<Observation>),
    /// A model call (or embedding) started or ended, made or replayed.
    Call(CallEvent),
    /// Every trial has finished.
    RunFinished,
}

/// What the run collected, and the console it draws on.
pub struct Reporter {
    console: Console,
    calls: Arc<CallCounts>,
    progress: Mutex<Option<Line>>,
    records: Mutex<Vec<TrialRecord>>,
    warnings: Mutex<BTreeSet<String>>,
    observations: Mutex<Vec<Observation>>,
}

impl Reporter {
    /// A reporter for a run on `console`.
    pub fn new(console: Console) -> Self {
        Self {
            console,
            calls: Arc::default(),
            progress: Mutex::new(None),
            records: Mutex::new(Vec::new()),
            warnings: Mutex::new(BTreeSet::new()),
            observations: Mutex::new(Vec::new()),
        }
    }

    /// Hears one event.
    pub fn report(&self, event: Event) {
        match event {
            Event::RunStarted { trials } => {
                *locked(&self.progress) = Line::start(&self.console, trials, self.calls.clone());
            }
            Event::TrialFinished(record) => {
                if let Some(line) = locked(&self.progress).as_ref() {
                    line.trial_done(&record);
                }
                locked(&self.records).push(*record);
            }
            Event::Warning(warning) => {
                locked(&self.warnings).insert(warning);
            }
            Event::Observed(observations) => {
                locked(&self.observations).extend(observations);
            }
            Event::Call(event) => self.calls.count(event),
            Event::RunFinished => {
                if let Some(line) = locked(&self.progress).take() {
                    line.finish();
                }
            }
        }
    }

    /// Reports a trial that did not run (skipped, or broken before it could), with why.
    pub fn unrun(&self, name: String, status: Status, why: &str, case: Option<CaseInfo>) {
        self.report(Event::TrialFinished(Box::new(TrialRecord::unrun(
            name, status, why, case,
        ))));
    }

    /// Every record so far, sorted by name, taken out (the finish reads them once).
    pub fn take_records(&self) -> Vec<TrialRecord> {
        let mut records = std::mem::take(&mut *locked(&self.records));
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }

    /// Every calibration verdict noted so far.
    pub fn observations(&self) -> Vec<Observation> {
        locked(&self.observations).clone()
    }

    /// The calls so far.
    #[cfg(test)]
    fn calls(&self) -> &CallCounts {
        &self.calls
    }

    /// Every distinct warning so far, sorted.
    pub fn warnings(&self) -> Vec<String> {
        locked(&self.warnings).iter().cloned().collect()
    }
}

impl CallObserver for Reporter {
    fn call_event(&self, event: CallEvent) {
        self.report(Event::Call(event));
    }
}

/// `mutex`, locked even if a thread panicked holding it: a trial that panics must not cost the
/// others their records.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One run: its engine (configuration, runtime, clients, cassettes) and its reporter. Every trial gets a
/// handle to it; no static holds its data, so two harnesses in one process do not share records.
pub struct Run {
    /// The engine every call of the run goes through.
    pub engine: Arc<Engine>,
    /// Where the run's events go (the engine's calls too).
    pub reporter: Arc<Reporter>,
}

impl Run {
    /// A run of `config`, its cassettes used as `policy` says, reporting to `console`.
    #[cfg(test)]
    pub fn new(config: Config, policy: Policy, console: Console) -> Arc<Self> {
        Self::with_budget(config, policy, console, None, None)
    }

    /// [`Run::new`], under `budget` when it has one, with the cassettes `opened` already (a store of the
    /// run's cassette directory, configured as the policy says).
    pub fn with_budget(
        config: Config,
        policy: Policy,
        console: Console,
        budget: Option<crate::budget::Budget>,
        opened: Option<crate::cassette::CassetteStore>,
    ) -> Arc<Self> {
        let reporter = Arc::new(Reporter::new(console));
        Arc::new(Self {
            engine: Engine::with_budget(
                config,
                policy,
                reporter.clone(),
                budget,
                opened.map(Arc::new),
            ),
            reporter,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CallEnd;
    use crate::role::CallRole;

    fn run() -> Arc<Run> {
        Run::new(
            Config::defaults(std::path::Path::new(".")),
            Policy::off(),
            Console::default(),
        )
    }

    #[test]
    fn the_reporter_counts_calls_as_the_engine_tells_them() {
        let run = run();
        let observer: &dyn CallObserver = &*run.reporter;
        for end in [CallEnd::Made, CallEnd::Replayed, CallEnd::Replayed] {
            observer.call_event(CallEvent::Started(CallRole::Subject));
            observer.call_event(CallEvent::Finished(CallRole::Subject, end));
        }
        observer.call_event(CallEvent::Started(CallRole::Judge));
        assert_eq!(run.reporter.calls().in_flight(), 1);
        observer.call_event(CallEvent::Finished(CallRole::Judge, CallEnd::Failed));
        assert_eq!(run.reporter.calls().in_flight(), 0);
        assert_eq!(run.reporter.calls().ended(), (1, 2, 1));
    }

    #[test]
    fn two_runs_in_one_process_keep_their_own_records_and_warnings() {
        let (a, b) = (run(), run());
        a.reporter
            .unrun("a::t".into(), Status::Ignored, "skipped", None);
        a.reporter.report(Event::Warning("w".into()));
        a.reporter.report(Event::Warning("w".into()));
        b.reporter
            .unrun("b::t".into(), Status::Failed, "broken", None);
        let names = |r: &Run| {
            r.reporter
                .take_records()
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&a), ["a::t"]);
        assert_eq!(names(&b), ["b::t"]);
        assert_eq!(a.reporter.warnings(), ["w"]);
        assert!(b.reporter.warnings().is_empty());
    }
}
