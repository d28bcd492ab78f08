//! The custom test harness: collects `#[prompt_test]` functions, TOML suites and calibration sets into
//! libtest-mimic trials, runs them as one [`Run`](reporter::Run), then hands the records to the report
//! pipeline (`report::render`).
//!
//! One job a module: `settings` reads the flags and environment once, `catalog` lists the trials,
//! `select` decides which run (pure), `trial` runs one, `reporter` hears what happens, `finish` hands
//! the results to the reports, prunes and decides the exit code; `report_command` is
//! `cargo prompt-tester report`'s way to the same pipeline, from a results folder.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod catalog;
pub(crate) mod dotenv;
pub(crate) mod error;
mod estimate;
mod finish;
mod gate;
#[cfg(feature = "log")]
mod log;
mod progress;
pub mod registry;
pub(crate) mod report_command;
mod reporter;
pub(crate) mod rust_test;
mod select;
pub(crate) mod settings;
pub(crate) use settings::PENDING_DIR;
pub mod trial;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::case;
use crate::config::Config;
use crate::record::Status;
use catalog::{Catalog, TrialDef, TrialKind};
use error::HarnessError;
use finish::{Before, Exit};
use registry::RustTest;
use reporter::{Event, Run};
use select::Fate;
use settings::Settings;

/// Runs every registered prompt test: `fn main() -> ExitCode { prompt_tester::main() }`.
pub fn main() -> ExitCode {
    Harness::new().run()
}

type ConfigEdit = Box<dyn FnOnce(&mut Config)>;

/// Whether a trial that runs belongs to an `app_env` test: the binary is then started again with the
/// base-URL variables set (`endpoint/app_env.rs`).
#[cfg(feature = "endpoint")]
fn app_env_runs(defs: &[TrialDef], choices: &[select::Choice]) -> bool {
    let tests: Vec<String> = inventory::iter::<RustTest>
        .into_iter()
        .filter(|t| matches!(t.body, registry::Body::AppEnv(_)))
        .map(RustTest::trial_name)
        .collect();
    !tests.is_empty()
        && defs.iter().zip(choices).any(|(def, choice)| {
            choice.fate == Fate::Runs
                && tests
                    .iter()
                    .any(|t| *t == def.name || def.parent.as_deref() == Some(t.as_str()))
        })
}

/// The harness, with optional overrides of the configuration (they win over file and environment).
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     prompt_tester::Harness::new().concurrency(8).judge("anthropic", "claude-haiku-4-5").run()
/// }
/// ```
#[derive(Default)]
pub struct Harness {
    edits: Vec<ConfigEdit>,
}

impl Harness {
    /// A harness with the configuration from `prompt-tester.toml` and the environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Edits the configuration after it is loaded.
    pub fn configure(mut self, edit: impl FnOnce(&mut Config) + 'static) -> Self {
        self.edits.push(Box::new(edit));
        self
    }

    /// Sets the judge.
    pub fn judge(self, provider: impl Into<String>, model: impl Into<String>) -> Self {
        let (provider, model) = (provider.into(), model.into());
        self.configure(move |c| c.set_judge(provider, model))
    }

    /// Sets how many model calls may be in flight per provider.
    pub fn concurrency(self, n: usize) -> Self {
        self.configure(move |c| c.set_concurrency(n))
    }

    /// Parses the command line, runs the selected trials and returns the exit code.
    pub fn run(self) -> ExitCode {
        self.run_with_args(std::env::args())
    }

    /// Like [`Harness::run`], with explicit arguments (the first is the program name).
    pub fn run_with_args(self, args: impl IntoIterator<Item = String>) -> ExitCode {
        match self.try_run(args.into_iter().collect()) {
            Ok(code) => code,
            Err(error) => {
                eprintln!("error: {}", crate::redact::for_terminal(&error.to_string()));
                Exit::Usage.into()
            }
        }
    }

    fn try_run(self, argv: Vec<String>) -> Result<ExitCode, HarnessError> {
        let root = crate_root();
        trial::install_panic_hook();
        dotenv::load(&root)?;
        #[cfg(feature = "endpoint")]
        let whole_argv = argv.clone();
        let (settings, libtest_args) = Settings::read(argv)?;
        #[cfg(feature = "log")]
        if let Some(directives) = &settings.log {
            log::install(directives);
        }
        // libtest takes any number of name filters, libtest-mimic one: several are decided by `select`.
        let (libtest_args, filters) = settings::take_filters(libtest_args);
        let mut args = Arguments::from_iter(libtest_args);
        if let [one] = filters.as_slice() {
            args.filter = Some(one.clone());
        }
        let config = self.config(&root, &settings)?;
        let exact = if args.exact { &filters[..] } else { &[] };
        // Suites, calibration sets and labels are all looked for in one walk of the suite roots.
        let walked = crate::suite::Walked::of(&config);
        let catalog = Catalog::new(&config, &settings, exact, &walked);
        let defs = catalog.trials();
        let opened = catalog.into_cassettes();
        let listed: Vec<select::Listed<'_>> = defs
            .iter()
            .map(|d| select::Listed {
                name: &d.name,
                parent: d.parent.as_deref(),
                ignored: d.ignored,
            })
            .collect();
        let choices = select::select(&listed, &args, &filters);
        // Covered runs report ignored without a record: the progress line does not wait for them.
        let to_run = choices.iter().filter(|c| c.fate == Fate::Runs).count();
        if args.list {
            let trials = trials(defs, &choices, None, false);
            return Ok(libtest_mimic::run(&args, trials).exit_code());
        }
        #[cfg(feature = "endpoint")]
        if app_env_runs(&defs, &choices)
            && let Some(code) = crate::endpoint::app_env::restart_or_bind(&whole_argv)
                .map_err(HarnessError::AppEnv)?
        {
            return Ok(code);
        }
        if settings.estimate {
            let (plans, gates_of_row) = estimate::plans(defs, &choices);
            let figures =
                estimate::of_plans(&config, opened, &plans).with_gates_under_nextest(&gates_of_row);
            return Ok(estimate::finish(&figures, settings.reports.json.as_deref()).into());
        }
        // Cases skipped on purpose keep their recordings through a prune: (cassette, trial) pairs.
        let skipped = skipped_on_purpose(&defs);
        // Loaded before any call: a missing or broken baseline costs nothing.
        let baseline = match settings.baseline.clone() {
            Some(b) => {
                let figures = crate::report::baseline::load(&b.path, &settings.commands)?;
                Some((b, figures))
            }
            None => None,
        };
        if settings.prune
            && let Some(reason) =
                crate::cassette::prune::refusal_before_run(settings.mode, &args, &filters)
                    .or_else(|| {
                        // The other models' recordings are not used, yet still wanted.
                        let s = config.subject.as_ref()?;
                        Some(format!(
                            "the run is retargeted at {s} (--subject or PROMPT_TESTER_SUBJECT)"
                        ))
                    })
                    .or_else(|| {
                        crate::cassette::awaiting::refusal(&crate::cassette::awaiting::on_disk(
                            &opened,
                        ))
                    })
        {
            return Err(HarnessError::PruneRefused(reason));
        }
        // Trials wait on the network, not the CPU: run as many as calls may be in flight.
        args.test_threads = args
            .test_threads
            .or(settings.test_threads)
            .or(Some(config.concurrency()));
        let before = Before {
            started: std::time::Instant::now(),
            started_unix: finish::unix_now(),
            baseline,
            skipped,
            root,
            walked,
        };
        let console = progress::Console {
            logging: settings.log.is_some(),
            ..progress::Console::of(&args, settings.runner.is_nextest(), settings.ci)
        };
        let budget = settings.budget.map(|limit| {
            let shared = settings
                .runner
                .run_id()
                .map(|run| (before.root.as_path(), run));
            crate::budget::Budget::for_run(limit, shared)
        });
        // Each verdict carries its judge's measurement: the calibration results, read before the trials.
        let (measured, label_warnings) =
            crate::calibration::after_run::measured_by_type(&config, &opened, &before.walked);
        let run = Run::with_budget(
            config,
            settings.cassette_policy(),
            console,
            budget,
            Some(opened),
        );
        let _ = run.engine.judge_measured.set(measured);
        for warning in label_warnings {
            run.reporter.report(Event::Warning(warning));
        }
        if let Some(judge) = run.engine.config.judge.as_ref().filter(|j| j.samples > 1)
            && judge.temperature == Some(0.0)
        {
            run.reporter.report(Event::Warning(format!(
                "[judge] judge_samples = {} asks each question {} times at temperature {}: a judge that samples \
                 greedily gives the same answer each time, so they will agree; set [judge] temperature above 0 \
                 (e.g. 0.7) for the answers to say how sure the judge is",
                judge.samples,
                judge.samples,
                judge.temperature.map_or("unset".to_string(), |t| t.to_string())
            )));
        }
        let trials = trials(defs, &choices, Some(&run), settings.runner.is_nextest());
        run.reporter.report(Event::RunStarted {
            trials: to_run as u64,
        });
        let conclusion = libtest_mimic::run(&args, trials);
        run.reporter.report(Event::RunFinished);
        let exit = finish::finish(&run, &settings, before, conclusion.has_failed());
        // Freeing a run (every record, every cassette entry, the runtime) takes milliseconds that
        // nobody waits for: the process usually exits next. Nothing is written on drop.
        std::thread::spawn(move || drop(run));
        Ok(exit.into())
    }

    /// The configuration: `prompt-tester.toml` and the environment, this harness's edits, `--subject`.
    fn config(self, root: &std::path::Path, settings: &Settings) -> Result<Config, HarnessError> {
        let mut config = Config::load(root)?;
        for edit in self.edits {
            edit(&mut config);
        }
        if let Some(subject) = &settings.subject {
            config.subject = Some(subject.clone());
        }
        if let Some(subject) = &config.subject {
            config
                .endpoint(&subject.provider)
                .map_err(|problem| HarnessError::UnknownSubject {
                    subject: subject.to_string(),
                    problem,
                })?;
        }
        Ok(config)
    }
}

/// The (cassette, trial) pairs of cases skipped on purpose.
fn skipped_on_purpose(defs: &[TrialDef]) -> Vec<(String, String)> {
    let mut skipped: Vec<(String, String)> = defs
        .iter()
        .filter(|def| matches!(def.kind, TrialKind::Skip(_)))
        .map(|def| {
            let cassette = def.case.as_ref().map(|c| c.suite.name.clone());
            let cassette = cassette.or_else(|| def.parent.clone());
            (
                cassette.unwrap_or_else(|| def.name.clone()),
                def.name.clone(),
            )
        })
        .collect();
    // A gate's skipped rows, once each however many gates skip them.
    for def in defs {
        if let TrialKind::Gate(gate) = &def.kind {
            let suite = &gate.gate.info.suite.name;
            for row in gate.skipped_rows() {
                let pair = (suite.clone(), row);
                if !skipped.contains(&pair) {
                    skipped.push(pair);
                }
            }
        }
    }
    skipped
}

/// The libtest-mimic trials of `defs` as `choices` decided; `run` is what they run in (none for
/// `--list`, which runs nothing). Under `nextest` a trial that comes back ignored fails instead.
fn trials(
    defs: Vec<TrialDef>,
    choices: &[select::Choice],
    run: Option<&Arc<Run>>,
    nextest: bool,
) -> Vec<Trial> {
    defs.into_iter()
        .zip(choices)
        .filter(|(_, choice)| choice.fate != Fate::Dropped)
        .map(|(def, choice)| {
            let (name, case) = (def.name.clone(), def.case);
            let run = run.cloned();
            let trial = match def.kind {
                _ if choice.fate == Fate::Covered => Trial::ignorable_test(def.name, || {
                    Ok(Completion::ignored_with("covered by the aggregate trial"))
                }),
                kind @ TrialKind::Broken(_) => Trial::test(def.name, move || {
                    run_kind(kind, name, case, run.as_deref()).map(drop)
                }),
                kind => Trial::ignorable_test(def.name, move || {
                    let done = run_kind(kind, name, case, run.as_deref());
                    if nextest {
                        failed_if_not_run(done)
                    } else {
                        done
                    }
                }),
            };
            trial.with_ignored_flag(choice.ignored_flag)
        })
        .collect()
}

/// A trial that did not run, as nextest must see it: failed. nextest reads an ignored trial's exit
/// status 0 as a pass and has no status for a trial skipped while it runs; a trial known before the
/// run not to run is listed ignored instead (`Catalog`), and nextest shows it skipped.
fn failed_if_not_run(done: Result<Completion, Failed>) -> Result<Completion, Failed> {
    match done {
        Ok(Completion::Ignored { reason }) => {
            let reason = reason.unwrap_or_else(|| "ignored".to_string());
            Err(Failed::from(format!(
                "not run: {}\n(under nextest a trial that does not run fails: nextest would count it as \
                 passed)",
                crate::redact::for_terminal(&reason)
            )))
        }
        other => other,
    }
}

/// Runs a trial of `kind` named `name` in `run`.
fn run_kind(
    kind: TrialKind,
    name: String,
    case: Option<case::CaseInfo>,
    run: Option<&Run>,
) -> Result<Completion, Failed> {
    let Some(run) = run else {
        return Err(Failed::from("a listed trial does not run"));
    };
    match kind {
        TrialKind::Plan(build) => trial::execute(build(), run),
        TrialKind::Skip(reason) => {
            run.reporter.unrun(name, Status::Ignored, &reason, case);
            Ok(Completion::ignored_with(crate::redact::for_terminal(
                &reason,
            )))
        }
        TrialKind::Broken(message) => {
            run.reporter.unrun(name, Status::Failed, &message, case);
            // A file's error quotes its lines, which may hold a secret it declared (a server's header).
            let shown = crate::redact::redact(&message);
            Err(Failed::from(crate::redact::for_terminal(&shown)))
        }
        TrialKind::Lazy(decide) => run_kind(decide(), name, case, Some(run)),
        TrialKind::Gate(gate) => gate::execute(*gate, run),
    }
}

/// What listing the trials of the crate at `root` finds wrong, as a run lists them (its `.env` read but
/// not loaded, its configuration, every suite, dataset and calibration set parsed, each dataset row's
/// case built): the message of every trial that fails without a call; `Err` when a run cannot start.
/// For the property tests, through `testing::readers`.
pub(crate) fn listed_problems(root: &std::path::Path) -> Result<Vec<String>, String> {
    let fail = |e: HarnessError| e.to_string();
    dotenv::read(&root.join(".env")).map_err(fail)?;
    let (settings, _) = Settings::read(vec!["listing".into()]).map_err(fail)?;
    let config = Harness::new().config(root, &settings).map_err(fail)?;
    let walked = crate::suite::Walked::of(&config);
    let catalog = Catalog::new(&config, &settings, &[], &walked);
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for def in catalog.trials() {
        let mut kind = def.kind;
        loop {
            match kind {
                TrialKind::Lazy(decide) => kind = decide(),
                TrialKind::Broken(message) => break problems.push(message),
                TrialKind::Plan(build) => break drop(build()),
                TrialKind::Skip(_) => break,
                TrialKind::Gate(gate) => {
                    // A row two gates count is one problem.
                    let rows = gate.shared.rows();
                    for i in gate.counted().0 {
                        if let Err(error) = rows.case(i) {
                            let message = error.to_string();
                            if seen.insert(message.clone()) {
                                problems.push(message);
                            }
                        }
                    }
                    break;
                }
            }
        }
    }
    Ok(problems)
}

/// The crate root: cargo and nextest set `CARGO_MANIFEST_DIR` when they run a test binary.
fn crate_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            inventory::iter::<RustTest>
                .into_iter()
                .next()
                .map(|t| PathBuf::from(t.manifest_dir))
        })
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_default())
}
