//! The run's one reporter: fed typed events as trials finish, it keeps what the summary and the report
//! writers read afterwards and draws the progress line. Stores never call the UI; the reporter is the
//! one place that sees both.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::progress::{Console, Line};
use super::record::{CaseInfo, Status, TrialRecord};
use crate::checks::Observation;
use crate::engine::Engine;

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
    /// Every trial has finished.
    RunFinished,
}

/// What the run collected, and the console it draws on.
pub struct Reporter {
    console: Console,
    engine: Arc<Engine>,
    progress: Mutex<Option<Line>>,
    records: Mutex<Vec<TrialRecord>>,
    warnings: Mutex<BTreeSet<String>>,
    observations: Mutex<Vec<Observation>>,
}

impl Reporter {
    /// A reporter for a run on `console`, whose calls in flight are `engine`'s.
    pub fn new(console: Console, engine: Arc<Engine>) -> Self {
        Self {
            console,
            engine,
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
                *locked(&self.progress) = Line::start(&self.console, trials, self.engine.clone());
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

    /// Every record so far, sorted by name.
    pub fn records(&self) -> Vec<TrialRecord> {
        let mut records = locked(&self.records).clone();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }

    /// Every calibration verdict noted so far.
    pub fn observations(&self) -> Vec<Observation> {
        locked(&self.observations).clone()
    }

    /// Every distinct warning so far, sorted.
    pub fn warnings(&self) -> Vec<String> {
        locked(&self.warnings).iter().cloned().collect()
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
    /// Where the run's events go.
    pub reporter: Reporter,
}

impl Run {
    /// A run on `engine`, reporting to `console`.
    pub fn new(engine: Arc<Engine>, console: Console) -> Arc<Self> {
        Arc::new(Self {
            reporter: Reporter::new(console, engine.clone()),
            engine,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::CassetteMode;
    use crate::config::Config;

    fn run() -> Arc<Run> {
        let engine = Engine::new(
            Config::defaults(std::path::Path::new(".")),
            CassetteMode::Off,
            false,
        );
        Run::new(engine, Console::default())
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
                .records()
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
