//! The custom test harness: collects `#[prompt_test]` functions and TOML suites into libtest-mimic
//! trials, runs them on one shared runtime, then prints the cost summary and writes reports.

mod baseline;
mod calibration;
pub(crate) mod html;
pub mod matrix;
mod progress;
mod prune;
pub mod record;
pub mod registry;
mod report;
pub(crate) mod rust_test;
mod summary;
pub mod trial;

use std::path::PathBuf;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::case::{self, Case, Plan};
use crate::cassette::CassetteMode;
use crate::config::Config;
use crate::engine;
use crate::suite;
use registry::RustTest;

/// Runs every registered prompt test: `fn main() -> ExitCode { prompt_tester::main() }`.
pub fn main() -> ExitCode {
    Harness::new().run()
}

type ConfigEdit = Box<dyn FnOnce(&mut Config)>;

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

/// A trial before it is handed to libtest-mimic. Plans are built only when the trial runs.
pub struct TrialDef {
    /// The trial name.
    pub name: String,
    /// Ignored unless asked for (`--ignored`, or a filter naming a single run).
    pub ignored: bool,
    /// The parent trial of a `::run_N` trial.
    pub parent: Option<String>,
    /// The suite case it runs, for the reports of skipped and broken trials (plans carry their own).
    pub case: Option<case::CaseInfo>,
    /// What running it does.
    pub kind: TrialKind,
}

/// What running a trial does.
pub enum TrialKind {
    /// Build the plan, then execute it.
    Plan(Box<dyn FnOnce() -> Plan + Send>),
    /// Report the trial as ignored with this reason (a skipped case).
    Skip(String),
    /// Fail with this message (a broken suite file).
    Broken(String),
    /// Decide when the trial runs (a dataset row, built only then).
    Lazy(Box<dyn FnOnce() -> TrialKind + Send>),
}

/// Runs a trial of `kind` named `name`.
fn run_kind(
    kind: TrialKind,
    name: String,
    case: Option<case::CaseInfo>,
) -> Result<Completion, Failed> {
    match kind {
        TrialKind::Plan(build) => trial::execute(build()),
        TrialKind::Skip(reason) => {
            record::push_unrun(name, record::Status::Ignored, &reason, case);
            Ok(Completion::ignored_with(reason))
        }
        TrialKind::Broken(message) => {
            record::push_unrun(name, record::Status::Failed, &message, case);
            Err(Failed::from(message))
        }
        TrialKind::Lazy(decide) => run_kind(decide(), name, case),
    }
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
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
        }
    }

    fn try_run(self, argv: Vec<String>) -> Result<ExitCode, String> {
        let root = crate_root();
        trial::install_panic_hook();
        load_dotenv(&root)?;
        let (ours, libtest_args) = HarnessFlags::split(argv)?;
        let mut args = Arguments::from_iter(libtest_args);
        let mode = match ours.mode {
            Some(mode) => mode,
            None => CassetteMode::from_env()?,
        };
        let mut config = Config::load(&root).map_err(|e| e.to_string())?;
        for edit in self.edits {
            edit(&mut config);
        }
        if let Some(value) = &ours.subject {
            let subject = value.parse().map_err(|e| format!("--subject: {e}"))?;
            config.subject = Some(subject);
        }
        if let Some(subject) = &config.subject {
            config
                .endpoint(&subject.provider)
                .map_err(|e| format!("the subject {subject} of this run: {e}"))?;
        }

        let mut defs = rust_trials(&config, &args, mode);
        defs.extend(suite_trials(&config, &args, mode));
        defs.extend(calibration::trials(&config, &args, mode));
        // libtest matches substrings, so `name::run_1` would also select `run_10`..`run_19`: a numbered
        // run the filter matches only up to the middle of its number is dropped.
        if let Some(filter) = args.filter.as_deref().filter(|_| !args.exact) {
            defs.retain(|def| def.parent.is_none() || selects_whole_number(&def.name, filter));
        }
        let filter_matches = |name: &str| match &args.filter {
            Some(f) if args.exact => name == f,
            Some(f) => name.contains(f.as_str()),
            None => false,
        };
        let run_ignored = args.ignored || args.include_ignored;
        // Cases skipped on purpose keep their recordings through a prune: (cassette, trial) pairs.
        let skipped: Vec<(String, String)> = defs
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
        let flags: Vec<bool> = defs
            .iter()
            .map(|def| {
                // A filter that names a single run (and not its whole test) runs it: numbered runs are
                // ignored only so that a plain run makes N calls, not 2N.
                let named = def
                    .parent
                    .as_deref()
                    .is_some_and(|p| filter_matches(&def.name) && !filter_matches(p));
                def.ignored && (run_ignored || !named)
            })
            .collect();
        // Whether libtest-mimic runs a trial of this name and flag (its own filter, on a stand-in).
        let runs_here = |name: &str, ignored: bool| {
            let probe = Trial::test(name, || Ok(())).with_ignored_flag(ignored);
            !args.is_filtered_out(&probe) && (!ignored || run_ignored)
        };
        // With `--include-ignored`, a test's aggregate trial and its numbered runs may both run: the
        // aggregate takes the N samples, so the numbered runs would double the calls.
        let aggregates_here: std::collections::HashSet<&str> = defs
            .iter()
            .zip(&flags)
            .filter(|(def, ignored)| def.parent.is_none() && runs_here(&def.name, **ignored))
            .map(|(def, _)| def.name.as_str())
            .collect();
        let covered: Vec<bool> = defs
            .iter()
            .zip(&flags)
            .map(|(def, ignored)| {
                def.parent
                    .as_deref()
                    .is_some_and(|p| aggregates_here.contains(p))
                    && runs_here(&def.name, *ignored)
            })
            .collect();
        // Covered runs report ignored without a record: the progress line does not wait for them.
        let covered_n = covered.iter().filter(|c| **c).count();
        let trials: Vec<Trial> = defs
            .into_iter()
            .zip(flags.into_iter().zip(covered))
            .map(|(def, (ignored, covered))| {
                let (name, case) = (def.name.clone(), def.case);
                let trial = match def.kind {
                    _ if covered => Trial::ignorable_test(def.name, || {
                        Ok(Completion::ignored_with("covered by the aggregate trial"))
                    }),
                    kind @ TrialKind::Broken(_) => {
                        Trial::test(def.name, move || run_kind(kind, name, case).map(drop))
                    }
                    kind => Trial::ignorable_test(def.name, move || run_kind(kind, name, case)),
                };
                trial.with_ignored_flag(ignored)
            })
            .collect();

        // Read before the list, so that a bad value is an error whatever the command.
        let baseline = ours.baseline_settings()?;
        if args.list {
            return Ok(libtest_mimic::run(&args, trials).exit_code());
        }
        // Loaded before any call: a missing or broken baseline costs nothing.
        let baseline = match baseline {
            Some(settings) => {
                let figures = baseline::load(&settings.path).map_err(|e| e.to_string())?;
                Some((settings, figures))
            }
            None => None,
        };
        if ours.prune
            && let Some(reason) = prune::refusal_before_run(mode, &args).or_else(|| {
                // The other models' recordings are not used, yet still wanted.
                let s = config.subject.as_ref()?;
                Some(format!(
                    "the run is retargeted at {s} (--subject or PROMPT_TESTER_SUBJECT)"
                ))
            })
        {
            return Err(format!(
                "--prune-cassettes refused: {reason}; nothing was run or pruned"
            ));
        }
        if args.test_threads.is_none() {
            // Trials wait on the network, not the CPU: run as many as calls may be in flight.
            args.test_threads = Some(match crate::config::env_var("RUST_TEST_THREADS") {
                Some(n) => n
                    .parse()
                    .map_err(|_| format!("RUST_TEST_THREADS={n:?} is not a whole number"))?,
                None => config.concurrency,
            });
        }
        let started = std::time::Instant::now();
        // A report's path: its flag, else its variable.
        let path_of = |flag: &Option<PathBuf>, var: &str| {
            flag.clone()
                .or_else(|| crate::config::env_var(var).map(PathBuf::from))
        };
        let junit = path_of(&ours.junit, "PROMPT_TESTER_JUNIT");
        let report = path_of(&ours.report, "PROMPT_TESTER_REPORT");
        let html = path_of(&ours.html, "PROMPT_TESTER_HTML");
        let judge = config
            .judge
            .as_ref()
            .map(|j| format!("{}/{}", j.provider, j.model));
        let started_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let engine = engine::install(config, mode);
        let console = {
            use std::io::IsTerminal;
            progress::Console {
                stderr_terminal: std::io::stderr().is_terminal(),
                stdout_terminal: std::io::stdout().is_terminal(),
                format: args.format,
                quiet: args.quiet,
                list: args.list,
                nextest: under_nextest(),
                ci: crate::config::is_ci(),
            }
        };
        let to_run = trials
            .iter()
            .filter(|t| !args.is_filtered_out(t) && !args.is_ignored(t))
            .count()
            .saturating_sub(covered_n);
        progress::start(&console, to_run as u64);
        let conclusion = libtest_mimic::run(&args, trials);
        progress::finish();
        // Recordings are buffered (see `Cassette::record`): write what is left.
        let unwritten = engine.cassettes.flush_all();
        let incomplete = if !unwritten.is_empty() {
            Some("recordings were not written")
        } else if conclusion.has_failed() {
            Some("a trial failed")
        } else {
            None
        };
        let records = record::all();
        let (calibrated, unwritten_results) = calibration::after_run(&engine.config);
        for warning in record::warnings() {
            eprintln!("warning: {warning}");
        }
        summary::print(&records, started.elapsed());
        if let Some(report) = &calibrated {
            eprint!(
                "{}",
                calibration::render(report, &calibration::judged_suites(&records))
            );
        }
        eprint!("{}", summary::rate_limits(&engine.rate_limits()));
        let mut failed = conclusion.has_failed();
        let mut extras = html::Extras {
            matrix: matrix::compute(&records).map(|m| matrix::table(&m)),
            baseline: None,
        };
        if let Some((settings, then)) = &baseline {
            let now = baseline::figures_of_records(&records);
            let comparison = baseline::compare(then, &now, settings.alpha);
            eprint!("{}", comparison.render(&settings.path));
            extras.baseline = Some(comparison.table(&settings.path));
            if settings.fail_on_regression
                && let Some(why) = comparison.failure()
            {
                eprintln!("error: {why}");
                failed = true;
            }
        }
        for error in unwritten {
            eprintln!("error: recordings were not written: {error}");
            failed = true;
        }
        for error in unwritten_results {
            eprintln!("error: {error}");
            failed = true;
        }
        type Writer =
            fn(&std::path::Path, &[record::TrialRecord], Option<&str>) -> std::io::Result<()>;
        let nextest_run = crate::config::env_var("NEXTEST_RUN_ID");
        let reports: [(Option<PathBuf>, &str, Writer); 2] = [
            (junit, "JUnit", report::write_junit),
            (report, "JSON", report::write_json),
        ];
        for (path, kind, write) in reports {
            if let Some(path) = path
                && let Err(e) = write(&path, &records, nextest_run.as_deref())
            {
                eprintln!(
                    "error: cannot write the {kind} report {}: {e}",
                    path.display()
                );
                failed = true;
            }
        }
        if let Some(path) = html {
            let run = html::RunInfo {
                date: crate::cassette::now_rfc3339(),
                commit: git_commit(&root),
                judge,
                cassette_mode: format!("{mode:?}").to_lowercase(),
                wall_secs: started.elapsed().as_secs_f64(),
                started_unix,
                nextest_run: nextest_run.clone(),
            };
            if let Err(e) = html::write_html(&path, &records, &run, &extras) {
                eprintln!(
                    "error: cannot write the HTML report {}: {e}",
                    path.display()
                );
                failed = true;
            }
        }
        if ours.prune {
            let on_purpose = skipped.iter().map(|(_, trial)| trial.clone()).collect();
            match prune::refusal_after_run(&records, &on_purpose, incomplete) {
                Some(reason) => {
                    eprintln!("error: --prune-cassettes refused: {reason}; nothing was pruned");
                    failed = true;
                }
                None => failed |= !prune::prune(&engine.cassettes, &skipped, &root),
            }
        }
        Ok(if failed {
            ExitCode::from(101)
        } else {
            ExitCode::SUCCESS
        })
    }
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

/// The commit the run tested: CI's variable, else `git rev-parse` in the crate root; `None` outside git.
fn git_commit(root: &std::path::Path) -> Option<String> {
    if let Some(sha) = crate::config::env_var("GITHUB_SHA") {
        return Some(sha.chars().take(12).collect());
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

fn load_dotenv(root: &std::path::Path) -> Result<(), String> {
    match dotenvy::from_path(root.join(".env")) {
        Ok(()) => Ok(()),
        Err(dotenvy::Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        // dotenvy's message quotes the line, which may hold a key: name only the position.
        Err(dotenvy::Error::LineParse(_, index)) => Err(format!(
            "{}: cannot parse the line at byte {index}",
            root.join(".env").display()
        )),
        Err(e) => Err(format!("{}: {e}", root.join(".env").display())),
    }
}

/// The harness's own flags, taken out before libtest's are parsed.
#[derive(Debug, Default)]
struct HarnessFlags {
    mode: Option<CassetteMode>,
    junit: Option<PathBuf>,
    report: Option<PathBuf>,
    html: Option<PathBuf>,
    prune: bool,
    baseline: Option<String>,
    baseline_alpha: Option<String>,
    fail_on_regression: bool,
    subject: Option<String>,
}

impl HarnessFlags {
    /// `--baseline`, `--baseline-alpha` and `--fail-on-regression`, each flag over its variable.
    fn baseline_settings(&self) -> Result<Option<baseline::Settings>, String> {
        let pick = |flag: &'static str, value: Option<String>, var: &'static str| {
            value
                .map(|v| (flag, v))
                .or_else(|| crate::config::env_var(var).map(|v| (var, v)))
        };
        let fail = self.fail_on_regression.then(|| "1".to_string());
        baseline::settings(
            pick(
                "--baseline",
                self.baseline.clone(),
                "PROMPT_TESTER_BASELINE",
            ),
            pick(
                "--baseline-alpha",
                self.baseline_alpha.clone(),
                "PROMPT_TESTER_BASELINE_ALPHA",
            ),
            pick(
                "--fail-on-regression",
                fail,
                "PROMPT_TESTER_FAIL_ON_REGRESSION",
            ),
        )
    }

    fn split(argv: Vec<String>) -> Result<(Self, Vec<String>), String> {
        let mut flags = Self::default();
        let mut rest = Vec::with_capacity(argv.len());
        let mut iter = argv.into_iter();
        let value_of =
            |flag: &str, inline: Option<String>, iter: &mut std::vec::IntoIter<String>| {
                inline
                    .or_else(|| iter.next())
                    .ok_or_else(|| format!("{flag} needs a path: {flag} PATH"))
            };
        while let Some(arg) = iter.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (arg.clone(), None),
            };
            match name.as_str() {
                "--record" => flags.mode = Some(CassetteMode::Record),
                "--no-cassette" => flags.mode = Some(CassetteMode::Off),
                "--prune-cassettes" => flags.prune = true,
                "--junit" => flags.junit = Some(value_of("--junit", inline, &mut iter)?.into()),
                "--report" => flags.report = Some(value_of("--report", inline, &mut iter)?.into()),
                "--baseline" => flags.baseline = Some(value_of("--baseline", inline, &mut iter)?),
                "--baseline-alpha" => {
                    flags.baseline_alpha = Some(inline.or_else(|| iter.next()).ok_or(
                        "--baseline-alpha needs a value: --baseline-alpha 0.05".to_string(),
                    )?)
                }
                "--fail-on-regression" => flags.fail_on_regression = true,
                "--subject" => {
                    // A flag after it means the model was left out.
                    let value = inline
                        .or_else(|| iter.next())
                        .filter(|v| !v.starts_with("--"));
                    flags.subject =
                        Some(value.ok_or("--subject needs a model: --subject provider/model")?);
                }
                "--html" => flags.html = Some(value_of("--html", inline, &mut iter)?.into()),
                _ => rest.push(arg),
            }
        }
        Ok((flags, rest))
    }
}

/// Whether a trial is known, before it runs, to be ignored: it has no cassette file, and the decision
/// for an unrecorded call is to ignore it (no key outside CI, or `live_only`).
///
/// Such trials are ignored at run time with a reason (libtest shows it); under nextest, which reads an
/// ignored trial's exit status as a pass, they are marked ignored up front so nextest shows them skipped.
pub(crate) fn statically_unavailable(
    config: &Config,
    mode: CassetteMode,
    provider: Option<&str>,
    cassette: &str,
    live_only: bool,
) -> bool {
    if !under_nextest()
        || crate::cassette::CassetteStore::new(&config.cassette_dir)
            .path_for(cassette)
            .exists()
    {
        return false;
    }
    let missing_key = provider
        .and_then(|p| config.endpoint(p).ok())
        .and_then(crate::provider::missing_key_for);
    crate::cassette::decision::ignored_without_recording(
        mode,
        missing_key.as_deref(),
        crate::config::is_ci(),
        live_only,
    )
}

/// Whether nextest runs this process (one process per trial; an ignored outcome reads as a pass).
pub(crate) fn under_nextest() -> bool {
    std::env::var_os("NEXTEST_RUN_ID").is_some() || std::env::var_os("NEXTEST").is_some()
}

/// Trials of the registered `#[prompt_test]` functions; with `--exact`, only the requested one is built.
fn rust_trials(config: &Config, args: &Arguments, mode: CassetteMode) -> Vec<TrialDef> {
    let exact = exact_filter(args);
    let config = std::sync::Arc::new(config.clone());
    let mut defs = Vec::new();
    for test in inventory::iter::<RustTest> {
        let name = test.trial_name();
        if exact.is_some_and(|f| !in_trials_of(f, &name)) {
            continue;
        }
        let spec = (test.spec)();
        // The sampling keys and `subject_models` may be any expression: their values are checked here.
        let subjects = match subjects_of(spec.subject_models.as_deref(), config.subject.is_some()) {
            Ok(subjects) => subjects,
            Err(problem) => {
                let message = format!(
                    "test `{name}` ({}:{}): {problem}; fix `subject_models` in its #[prompt_test]",
                    test.file, test.line
                );
                defs.extend(trials_with_runs(&name, 1, exact, false, None, |_, _| {
                    TrialKind::Broken(message.clone())
                }));
                continue;
            }
        };
        let plan = match sampling_plan(&spec.sampling, &config.sampling) {
            Ok(plan) => plan,
            Err(problem) => {
                let message = format!(
                    "test `{name}` ({}:{}): {problem}; fix the value in its #[prompt_test]",
                    test.file, test.line
                );
                defs.extend(trials_with_runs(
                    &name,
                    spec.sampling.runs.unwrap_or(1),
                    exact,
                    false,
                    None,
                    |_, _| TrialKind::Broken(message.clone()),
                ));
                continue;
            }
        };
        for column in case::Column::all(&subjects, &[]) {
            let provider = config
                .subject
                .as_ref()
                .or(column.subject.as_ref())
                .map(|s| s.provider.clone())
                .or_else(|| spec.request.call.provider.clone())
                .or_else(|| config.defaults.provider.clone());
            let unrecordable =
                statically_unavailable(&config, mode, provider.as_deref(), &name, spec.live_only);
            let column = std::sync::Arc::new(column);
            defs.extend(trials_with_runs(
                &column.trial(&name),
                plan.max_runs(),
                exact,
                unrecordable,
                None,
                |trial_name, only_run| {
                    let (config, column) = (config.clone(), column.clone());
                    TrialKind::Plan(Box::new(move || Plan {
                        case: std::sync::Arc::new(rust_test::case(
                            test,
                            &trial_name,
                            &config,
                            &column,
                            plan,
                        )),
                        trial: trial_name,
                        only_run,
                    }))
                },
            ));
        }
    }
    defs
}

/// Whether `exact` names the trial `name`, one of its columns (`name[...]`) or one of their numbered runs.
pub(crate) fn in_trials_of(exact: &str, name: &str) -> bool {
    exact
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('[') || rest.starts_with("::run_"))
}

/// The subjects of a test's `subject_models`, checked; none when `--subject` retargets the run (the
/// model axis collapses onto that one model).
fn subjects_of(
    written: Option<&[String]>,
    retargeted: bool,
) -> Result<Vec<crate::model::Subject>, String> {
    let Some(written) = written else {
        return Ok(Vec::new());
    };
    if written.is_empty() {
        return Err("`subject_models` is empty; list at least one `provider/model`".into());
    }
    let mut subjects: Vec<crate::model::Subject> = Vec::new();
    for (i, entry) in written.iter().enumerate() {
        let subject = entry
            .parse()
            .map_err(|e| format!("`subject_models[{i}]`: {e}"))?;
        if subjects.contains(&subject) {
            return Err(format!(
                "`subject_models[{i}]`: {entry} is listed twice; keep one"
            ));
        }
        subjects.push(subject);
    }
    Ok(if retargeted { Vec::new() } else { subjects })
}

/// Trials of the suites' items; with `--exact`, only the requested one is built.
fn suite_trials(config: &Config, args: &Arguments, mode: CassetteMode) -> Vec<TrialDef> {
    let exact = exact_filter(args);
    let mut defs = Vec::new();
    for item in suite::items(config, exact) {
        match item {
            suite::Item::Case(case) => defs.extend(case_trials(config, mode, *case, exact)),
            // Not flagged ignored: the trial runs to report itself ignored with its reason (and a
            // record). Under nextest an ignored outcome reads as a pass, so there it is flagged.
            suite::Item::Skipped { name, reason, info } if exact.is_none_or(|f| f == name) => {
                defs.push(TrialDef {
                    name,
                    ignored: under_nextest(),
                    parent: None,
                    case: Some(info),
                    kind: TrialKind::Skip(reason),
                });
            }
            suite::Item::Skipped { .. } => {}
            suite::Item::Row(row) => defs.extend(row_trials(config, mode, *row, exact)),
            suite::Item::Broken {
                name,
                message,
                info,
            } => defs.push(TrialDef {
                name,
                ignored: false,
                parent: None,
                case: info,
                kind: TrialKind::Broken(message),
            }),
        }
    }
    defs
}

/// The trial of a resolved case and its numbered runs.
fn case_trials(
    config: &Config,
    mode: CassetteMode,
    case: Case,
    exact: Option<&str>,
) -> Vec<TrialDef> {
    let unrecordable = statically_unavailable(
        config,
        mode,
        case.request.provider(),
        &case.cassette,
        case.sampling.live_only,
    );
    let case = std::sync::Arc::new(case);
    trials_with_runs(
        &case.name.clone(),
        case.sampling.plan.max_runs(),
        exact,
        unrecordable,
        case.info.clone(),
        |trial_name, only_run| {
            let case = case.clone();
            TrialKind::Plan(Box::new(move || Plan {
                trial: trial_name,
                only_run,
                case,
            }))
        },
    )
}

/// The trials of a dataset row: its case is built when one of them runs.
fn row_trials(
    config: &Config,
    mode: CassetteMode,
    row: suite::LazyRow,
    exact: Option<&str>,
) -> Vec<TrialDef> {
    let unrecordable = statically_unavailable(
        config,
        mode,
        row.provider.as_deref(),
        &row.cassette,
        row.live_only,
    );
    let build = row.build;
    trials_with_runs(
        &row.name,
        row.runs,
        exact,
        unrecordable,
        Some(row.info),
        |trial_name, only_run| {
            let build = build.clone();
            TrialKind::Lazy(Box::new(move || match build() {
                Ok(case) => TrialKind::Plan(Box::new(move || Plan {
                    trial: trial_name,
                    only_run,
                    case,
                })),
                Err(message) => TrialKind::Broken(message),
            }))
        },
    )
}

/// The sampling plan of a test's own keys over `[defaults]`, or what is wrong with them.
fn sampling_plan(
    own: &crate::config::SamplingKeys,
    defaults: &crate::config::SamplingKeys,
) -> Result<case::SamplePlan, crate::config::SamplingError> {
    if let Some(conflict) = own.conflict() {
        return Err(conflict);
    }
    case::SamplePlan::from_keys(&own.over(defaults))
}

/// Whether `filter` occurs in `name` somewhere other than cut inside a number: `x::run_1` selects
/// `x::run_1` but not `x::run_10`, while `x::run_` and `run_1` select as libtest would.
fn selects_whole_number(name: &str, filter: &str) -> bool {
    let ends_in_digit = filter.ends_with(|c: char| c.is_ascii_digit());
    name.match_indices(filter).any(|(at, _)| {
        !(ends_in_digit && name[at + filter.len()..].starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// The name `--exact` asks for, if any.
pub(crate) fn exact_filter(args: &Arguments) -> Option<&str> {
    args.filter.as_deref().filter(|_| args.exact)
}

/// The trial `name` (flagged `ignored` when asked) and, when it takes several runs, its `name::run_i`
/// single-run trials (ignored unless named, with `name` as parent). With `--exact`, only the requested
/// one. `build(trial name, only_run)` says what running each does. Shared by `#[prompt_test]` functions
/// and suite cases.
pub(crate) fn trials_with_runs(
    name: &str,
    runs: u32,
    exact: Option<&str>,
    ignored: bool,
    case: Option<case::CaseInfo>,
    mut build: impl FnMut(String, Option<u32>) -> TrialKind,
) -> Vec<TrialDef> {
    let wanted = |n: &str| exact.is_none_or(|f| f == n);
    let mut defs = Vec::new();
    if wanted(name) {
        let kind = build(name.to_string(), None);
        defs.push(TrialDef {
            name: name.to_string(),
            ignored,
            parent: None,
            case: case.clone(),
            kind,
        });
    }
    if runs > 1 {
        for i in 1..=runs {
            let run_name = format!("{name}::run_{i}");
            if !wanted(&run_name) {
                continue;
            }
            let kind = build(run_name.clone(), Some(i));
            defs.push(TrialDef {
                name: run_name,
                ignored: true,
                parent: Some(name.to_string()),
                case: case.clone(),
                kind,
            });
        }
    }
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_naming_a_run_does_not_select_longer_numbers() {
        assert!(selects_whole_number("t::run_1", "t::run_1"));
        assert!(!selects_whole_number("t::run_10", "t::run_1"));
        assert!(!selects_whole_number("t::run_12", "run_1"));
        assert!(selects_whole_number("t::run_12", "t::run_"));
        assert!(selects_whole_number("t::run_12", "run_12"));
        assert!(selects_whole_number("t1::run_12", "t1"));
        // A later occurrence may be whole.
        assert!(selects_whole_number("a12::a1", "a1"));
    }

    #[test]
    fn runs_and_thresholds_out_of_range_are_named() {
        use crate::config::SamplingKeys;
        let problem = |runs, pass_threshold| {
            let own = SamplingKeys {
                runs: Some(runs),
                pass_threshold: Some(pass_threshold),
                ..SamplingKeys::default()
            };
            sampling_plan(&own, &SamplingKeys::default())
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(problem(1, 1.0), None);
        assert_eq!(problem(5, 0.8), None);
        assert!(problem(0, 1.0).unwrap().starts_with("`runs` is 0"));
        for bad in [f64::NAN, 0.0, -0.5, 1.5, f64::INFINITY] {
            let problem = problem(3, bad).expect("rejected");
            assert!(problem.starts_with("`pass_threshold` is"), "{problem}");
        }
    }

    #[test]
    fn a_test_s_sampling_keys_fill_in_from_defaults() {
        use crate::config::SamplingKeys;
        use case::SamplePlan;
        let defaults = SamplingKeys {
            early_stop: Some(true),
            max_runs: Some(50),
            ..SamplingKeys::default()
        };
        let runs = SamplingKeys {
            runs: Some(5),
            pass_threshold: Some(0.8),
            ..SamplingKeys::default()
        };
        assert!(matches!(
            sampling_plan(&runs, &defaults),
            Ok(SamplePlan::EarlyStop(t)) if t.runs == 5
        ));
        let adaptive = SamplingKeys {
            pass_rate: Some(0.8),
            ..SamplingKeys::default()
        };
        // `early_stop` from [defaults] does not contradict the test's own `pass_rate`.
        assert!(matches!(
            sampling_plan(&adaptive, &defaults),
            Ok(SamplePlan::Adaptive(s)) if s.max_runs == 50
        ));
        let both = SamplingKeys {
            runs: Some(5),
            ..adaptive
        };
        let err = sampling_plan(&both, &defaults).unwrap_err().to_string();
        assert!(
            err.starts_with("`pass_rate` cannot be combined with `runs`"),
            "{err}"
        );
        let short = SamplingKeys {
            max_runs: Some(10),
            ..adaptive
        };
        let err = sampling_plan(&short, &defaults).unwrap_err().to_string();
        assert!(
            err.starts_with("`max_runs` is 10, but even when every run passes"),
            "{err}"
        );
    }
}
