//! The custom test harness: collects `#[prompt_test]` functions and TOML suites into libtest-mimic
//! trials, runs them on one shared runtime, then prints the cost summary and writes reports.

mod calibration;
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
        let trials: Vec<Trial> = defs
            .into_iter()
            .zip(flags.into_iter().zip(covered))
            .map(|(def, (ignored, covered))| {
                let (name, case) = (def.name.clone(), def.case);
                let trial = match def.kind {
                    _ if covered => Trial::ignorable_test(def.name, || {
                        Ok(Completion::ignored_with("covered by the aggregate trial"))
                    }),
                    TrialKind::Plan(build) => {
                        Trial::ignorable_test(def.name, move || trial::execute(build()))
                    }
                    TrialKind::Skip(reason) => Trial::ignorable_test(def.name, move || {
                        record::push_unrun(name, record::Status::Ignored, &reason, case);
                        Ok(Completion::ignored_with(reason))
                    }),
                    TrialKind::Broken(message) => Trial::test(def.name, move || {
                        record::push_unrun(name, record::Status::Failed, &message, case);
                        Err(Failed::from(message))
                    }),
                };
                trial.with_ignored_flag(ignored)
            })
            .collect();

        if args.list {
            return Ok(libtest_mimic::run(&args, trials).exit_code());
        }
        if ours.prune
            && let Some(reason) = prune::refusal_before_run(mode, &args)
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
        let junit = ours
            .junit
            .clone()
            .or_else(|| crate::config::env_var("PROMPT_TESTER_JUNIT").map(PathBuf::from));
        let report = ours
            .report
            .clone()
            .or_else(|| crate::config::env_var("PROMPT_TESTER_REPORT").map(PathBuf::from));
        let engine = engine::install(config, mode);
        let conclusion = libtest_mimic::run(&args, trials);
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
        for error in unwritten {
            eprintln!("error: recordings were not written: {error}");
            failed = true;
        }
        for error in unwritten_results {
            eprintln!("error: {error}");
            failed = true;
        }
        type Writer = fn(&std::path::Path, &[record::TrialRecord]) -> std::io::Result<()>;
        let reports: [(Option<PathBuf>, &str, Writer); 2] = [
            (junit, "JUnit", report::write_junit),
            (report, "JSON", report::write_json),
        ];
        for (path, kind, write) in reports {
            if let Some(path) = path
                && let Err(e) = write(&path, &records)
            {
                eprintln!(
                    "error: cannot write the {kind} report {}: {e}",
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
    prune: bool,
}

impl HarnessFlags {
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
        if exact.is_some_and(|f| f != name && !f.starts_with(&format!("{name}::run_"))) {
            continue;
        }
        let spec = (test.spec)();
        // `runs` and `pass_threshold` may be any expression: their values are checked here.
        if let Some(problem) = sampling_problem(spec.runs, spec.pass_threshold) {
            let message = format!(
                "test `{name}` ({}:{}): {problem}; fix the value in its #[prompt_test]",
                test.file, test.line
            );
            defs.extend(trials_with_runs(
                &name,
                spec.runs,
                exact,
                false,
                None,
                |_, _| TrialKind::Broken(message.clone()),
            ));
            continue;
        }
        let provider = spec
            .request
            .call
            .provider
            .or_else(|| config.defaults.provider.clone());
        let unrecordable =
            statically_unavailable(&config, mode, provider.as_deref(), &name, spec.live_only);
        defs.extend(trials_with_runs(
            &name,
            spec.runs,
            exact,
            unrecordable,
            None,
            |trial_name, only_run| {
                let config = config.clone();
                TrialKind::Plan(Box::new(move || Plan {
                    case: std::sync::Arc::new(rust_test::case(test, &trial_name, &config)),
                    trial: trial_name,
                    only_run,
                }))
            },
        ));
    }
    defs
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
        case.sampling.runs,
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

/// What is wrong with a test's `runs` and `pass_threshold` values, if anything.
fn sampling_problem(runs: u32, pass_threshold: f64) -> Option<String> {
    if runs == 0 {
        return Some("`runs` is 0; it must be at least 1 (the number of samples)".to_string());
    }
    // Written so that NaN is out of range too.
    if !(pass_threshold > 0.0 && pass_threshold <= 1.0) {
        return Some(format!(
            "`pass_threshold` is {pass_threshold}; it must be in (0, 1]: the share of runs that must pass, e.g. 0.8 \
             for 4 of 5"
        ));
    }
    None
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
        assert_eq!(sampling_problem(1, 1.0), None);
        assert_eq!(sampling_problem(5, 0.8), None);
        assert!(sampling_problem(0, 1.0).unwrap().starts_with("`runs` is 0"));
        for bad in [f64::NAN, 0.0, -0.5, 1.5, f64::INFINITY] {
            let problem = sampling_problem(3, bad).expect("rejected");
            assert!(problem.starts_with("`pass_threshold` is"), "{problem}");
        }
    }
}
