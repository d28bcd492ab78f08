//! The trials a run can run: one per `#[prompt_test]` function, suite case, dataset row and calibration
//! set, per matrix column, and their numbered single-sample trials. Nothing is resolved or called here:
//! a trial builds its `Plan` when it runs, and with `--exact` only the requested trials are built
//! (nextest runs one per process).

use std::sync::Arc;

use super::registry::RustTest;
use super::rust_test;
use super::settings::Settings;
use crate::calibration::{self as cal, SetEntry};
use crate::case::{self, Case, Plan};
use crate::cassette::decision::{Recording, Situation};
use crate::cassette::{CassetteStore, Loading};
use crate::config::Config;
use crate::role::CallRole;
use crate::suite;
use crate::trial_name::{self, TrialName};

/// A trial before it is handed to libtest-mimic. Plans are built only when the trial runs.
pub struct TrialDef {
    /// The trial name.
    pub name: String,
    /// Ignored unless asked for (`--ignored`, or a filter naming a single run).
    pub ignored: bool,
    /// The parent trial of a `::run_N` trial (or of a calibration item).
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
    /// Run the rows of a gate and judge them together.
    Gate(Box<super::gate::GateTrial>),
}

/// What the catalog is built from: the configuration, the run's settings and the `--exact` names.
pub struct Catalog<'a> {
    /// The configuration.
    config: &'a Config,
    /// The run's settings (cassette mode, CI, nextest).
    settings: &'a Settings,
    /// The trials asked for with `--exact` (none: every trial).
    exact: &'a [String],
    /// The suite roots, walked once for the run.
    walked: &'a suite::Walked,
    /// The cassettes, read for the nextest pre-check only (each file once).
    cassettes: CassetteStore,
}

/// `store`, given its folder's files when the walk of the suite roots listed them: the folder is
/// listed once.
fn with_walked_folder(
    store: CassetteStore,
    files: Option<Vec<std::path::PathBuf>>,
) -> CassetteStore {
    match files {
        Some(files) => store.with_folder(crate::cassette::folder::Folder::of_listed(files)),
        None => store,
    }
}

/// What the nextest pre-check looks at for one trial.
#[derive(Clone, Copy)]
struct Calls<'a> {
    /// The trial (its numbered runs' recordings count as its own).
    trial: &'a str,
    /// The cassette it records into.
    cassette: &'a str,
    /// The subject's provider, when known.
    subject: Option<&'a str>,
    /// The other calls it is known to make.
    others: &'a [CallRole],
    /// `live_only = true`.
    live_only: bool,
}

impl<'a> Catalog<'a> {
    /// The catalog of `config` for a run with `settings`; `exact` are the trials asked for, if any;
    /// `walked`: the suite roots as the run walked them.
    pub fn new(
        config: &'a Config,
        settings: &'a Settings,
        exact: &'a [String],
        walked: &'a suite::Walked,
    ) -> Self {
        Catalog {
            config,
            settings,
            exact,
            walked,
            // Configured as the engine's: the run goes on with the files opened here.
            // A process that runs one trial parses of a large cassette only what it looks up.
            cassettes: with_walked_folder(
                CassetteStore::new(&config.cassette_dir),
                walked.files_in(&config.cassette_dir),
            )
            .with_pending_dir(settings.pending_dir.clone())
            .with_commands(settings.commands.clone())
            .with_loading(if !exact.is_empty() {
                Loading::FEW_TRIALS
            } else {
                Loading::Whole
            }),
        }
    }

    /// The cassettes opened to list the trials (under nextest), for the run to use: each file is read
    /// once per process.
    pub fn into_cassettes(self) -> CassetteStore {
        self.cassettes
    }

    /// Every trial: the registered functions', the suites', the calibration sets'.
    pub fn trials(&self) -> Vec<TrialDef> {
        if self.exact.is_empty() {
            return self.trials_of(None);
        }
        // Each name builds its own trial; a name given twice, once.
        let mut seen = std::collections::HashSet::new();
        let mut defs = Vec::new();
        for name in self.exact {
            for def in self.trials_of(Some(name)) {
                if seen.insert(def.name.clone()) {
                    defs.push(def);
                }
            }
        }
        defs
    }

    /// Every trial, or with `exact` the one it names.
    fn trials_of(&self, exact: Option<&str>) -> Vec<TrialDef> {
        let mut defs = self.rust_trials(exact);
        defs.extend(self.suite_trials(exact));
        defs.extend(self.calibration_trials(exact));
        defs
    }

    /// Whether a trial is known, before it runs, not to run. libtest runs such a trial to report it
    /// ignored with its reason; under nextest, which reads an ignored trial's exit status as a pass, it
    /// is flagged ignored up front so that nextest shows it skipped.
    ///
    /// What is known then is whether its cassette holds anything this trial recorded. Without, each of
    /// its calls would be a first recording: one whose key is missing is ignored (outside CI), the
    /// subject's or one of the other calls the case is known to make (the judge's, an embeddings
    /// call), and so is a `live_only` trial. A trial with recordings of its own is expected to replay:
    /// what it finds only while running fails it under nextest instead (`mod.rs`).
    fn statically_unavailable(&self, calls: Calls<'_>) -> bool {
        if !self.settings.runner.is_nextest() {
            return false;
        }
        let recording = match self.cassettes.open(calls.cassette) {
            // The trial reports the broken file when it runs.
            Err(_) => return false,
            Ok(c) if c.has_recordings_of(calls.trial) => return false,
            Ok(_) => Recording::Absent,
        };
        let ignored = |provider: Option<&str>| {
            let missing_key = provider
                .and_then(|p| self.config.endpoint(p).ok())
                .and_then(crate::provider::missing_key_for);
            crate::cassette::decision::ignored(&Situation {
                mode: self.settings.mode,
                recording,
                missing_key: missing_key.as_deref(),
                ci: self.settings.ci,
                live_only: calls.live_only,
                replacements: self.settings.cassette_policy().replacements,
            })
        };
        let config = self.config;
        ignored(calls.subject)
            || calls.others.iter().any(|role| {
                ignored(match role {
                    CallRole::Subject => calls.subject,
                    CallRole::Judge => config.judge.as_ref().map(|j| j.provider.as_str()),
                    CallRole::Embedding => config.embeddings.as_ref().map(|e| e.provider.as_str()),
                })
            })
    }

    /// Trials of the registered `#[prompt_test]` functions.
    fn rust_trials(&self, exact: Option<&str>) -> Vec<TrialDef> {
        let config = Arc::new(self.config.clone());
        let mut defs = Vec::new();
        for test in inventory::iter::<RustTest> {
            let name = test.trial_name();
            if exact.is_some_and(|f| !trial_name::exact_is_in_row(f, &name)) {
                continue;
            }
            let spec = match rust_test::spec(test) {
                Ok(spec) => spec,
                Err(message) => {
                    defs.extend(trials_with_runs(&name, 1, exact, false, None, |_, _| {
                        TrialKind::Broken(message.clone())
                    }));
                    continue;
                }
            };
            // The sampling keys and `subject_models` may be any expression: their values are checked here.
            let subjects = match subjects_of(
                spec.subject_models.as_deref(),
                config.subject.is_some(),
            ) {
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
            // A `messages` expression is known only now: its turns are checked here.
            if let Some(turns) = &spec.request.messages
                && let Err(problem) =
                    crate::conversation::check(turns, spec.request.system.is_some())
            {
                let message = format!(
                    "test `{name}` ({}:{}): `messages[{}]`: {problem}; fix `messages` in its #[prompt_test]",
                    test.file, test.line, problem.index
                );
                defs.extend(trials_with_runs(&name, 1, exact, false, None, |_, _| {
                    TrialKind::Broken(message.clone())
                }));
                continue;
            }
            // So is a `judge_samples` expression.
            if let Some(problem) = rust_test::judge_samples_problem(&spec) {
                let message = format!(
                    "test `{name}` ({}:{}): {problem}; fix the value in its #[prompt_test]",
                    test.file, test.line
                );
                defs.extend(trials_with_runs(&name, 1, exact, false, None, |_, _| {
                    TrialKind::Broken(message.clone())
                }));
                continue;
            }
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
            let app = test.body.is_app();
            for column in case::Column::all(&subjects, &[]) {
                // An application test names no provider: its calls are its own.
                let provider = config
                    .subject
                    .as_ref()
                    .or(column.subject.as_ref())
                    .map(|s| s.provider.clone())
                    .or_else(|| spec.request.call.provider.clone())
                    .or_else(|| config.defaults.provider.clone())
                    .filter(|_| !app);
                let trial = column.trial(&name);
                let unrecordable = self.statically_unavailable(Calls {
                    trial: &trial,
                    cassette: &name,
                    subject: provider.as_deref(),
                    others: &[],
                    live_only: spec.live_only,
                });
                let column = Arc::new(column);
                defs.extend(trials_with_runs(
                    &trial,
                    plan.max_runs(),
                    exact,
                    unrecordable,
                    None,
                    |trial_name, only_run| {
                        let (config, column) = (config.clone(), column.clone());
                        // Evaluated again when the trial runs: a panic then fails this trial alone.
                        TrialKind::Lazy(Box::new(move || match rust_test::spec(test) {
                            Err(message) => TrialKind::Broken(message),
                            Ok(spec) => TrialKind::Plan(Box::new(move || Plan {
                                case: Arc::new(rust_test::case(
                                    test,
                                    spec,
                                    &trial_name,
                                    &config,
                                    &column,
                                    plan,
                                )),
                                trial: trial_name,
                                only_run,
                            })),
                        }))
                    },
                ));
            }
        }
        defs
    }

    /// Trials of the suites' items.
    fn suite_trials(&self, exact: Option<&str>) -> Vec<TrialDef> {
        let mut defs = Vec::new();
        for item in suite::items(self.config, self.walked, exact) {
            match item {
                suite::Item::Case(case) => defs.extend(self.case_trials(*case, exact)),
                // Not flagged ignored: the trial runs to report itself ignored with its reason (and a
                // record). Under nextest an ignored outcome reads as a pass, so there it is flagged.
                suite::Item::Skipped { name, reason, info } if exact.is_none_or(|f| f == name) => {
                    defs.push(TrialDef {
                        name,
                        ignored: self.settings.runner.is_nextest(),
                        parent: None,
                        case: Some(info),
                        kind: TrialKind::Skip(reason),
                    });
                }
                suite::Item::Skipped { .. } => {}
                suite::Item::Row(row) => defs.extend(self.row_trials(*row, exact)),
                suite::Item::Gates(gates) => defs.extend(self.gate_trials(*gates)),
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
    fn case_trials(&self, case: Case, exact: Option<&str>) -> Vec<TrialDef> {
        let unrecordable = self.statically_unavailable(Calls {
            trial: &case.name,
            cassette: &case.cassette,
            subject: case.request.provider(),
            others: &case.other_calls,
            live_only: case.sampling.live_only,
        });
        let case = Arc::new(case);
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
    fn row_trials(&self, row: suite::LazyRow, exact: Option<&str>) -> Vec<TrialDef> {
        let unrecordable = self.statically_unavailable(Calls {
            trial: &row.name,
            cassette: &row.cassette,
            subject: row.provider.as_deref(),
            others: &row.other_calls,
            live_only: row.live_only,
        });
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
                    Err(error) => TrialKind::Broken(error.to_string()),
                }))
            },
        )
    }

    /// The trials of the gates of one column: no numbered runs (a row's are `--exact suite::row::run_N`).
    /// Under nextest a gate is flagged ignored when a row it counts is known not to run.
    fn gate_trials(&self, gates: suite::gates::Gates) -> Vec<TrialDef> {
        let shared = super::gate::Shared::new(gates.rows, gates.provider.clone());
        gates
            .gates
            .into_iter()
            .map(|gate| {
                let trial = super::gate::GateTrial {
                    gate,
                    shared: shared.clone(),
                };
                let ignored = self.settings.runner.is_nextest() && {
                    let rows = &shared.rows().rows;
                    trial.counted().0.iter().any(|&i| {
                        self.statically_unavailable(Calls {
                            trial: &rows[i].trial,
                            cassette: &gates.cassette,
                            subject: gates.provider.as_deref(),
                            others: &gates.other_calls,
                            live_only: gates.live_only,
                        })
                    })
                };
                TrialDef {
                    name: trial.gate.name.clone(),
                    ignored,
                    parent: None,
                    case: Some(trial.gate.info.clone()),
                    kind: TrialKind::Gate(Box::new(trial)),
                }
            })
            .collect()
    }

    /// The set trial `calibration::<set>` (every item) and one ignored trial per item,
    /// `calibration::<set>::<item>`, that judges that item alone (like a `::run_N` trial).
    fn calibration_trials(&self, exact: Option<&str>) -> Vec<TrialDef> {
        let wanted = |n: &str| exact.is_none_or(|f| f == n);
        let mut defs = Vec::new();
        for entry in cal::entries(self.config, self.walked, exact) {
            match entry {
                SetEntry::Broken { name, message } => defs.push(TrialDef {
                    name: name.clone(),
                    ignored: false,
                    parent: None,
                    case: None,
                    kind: TrialKind::Broken(message),
                }),
                SetEntry::Set { case, items } => {
                    let ignored = self.statically_unavailable(Calls {
                        trial: &case.name,
                        cassette: &case.cassette,
                        subject: case.request.provider(),
                        others: &case.other_calls,
                        live_only: false,
                    });
                    let case = Arc::new(*case);
                    let set = case.name.clone();
                    let plan = |trial: String, only_run: Option<u32>| {
                        let case = case.clone();
                        TrialKind::Plan(Box::new(move || Plan {
                            trial,
                            only_run,
                            case,
                        }))
                    };
                    if wanted(&set) {
                        defs.push(TrialDef {
                            name: set.clone(),
                            ignored,
                            parent: None,
                            case: None,
                            kind: plan(set.clone(), None),
                        });
                    }
                    for (i, item) in items.iter().enumerate() {
                        let name = trial_name::item(&set, item);
                        if wanted(&name) {
                            defs.push(TrialDef {
                                kind: plan(name.clone(), Some(i as u32 + 1)),
                                name,
                                ignored: true,
                                parent: Some(set.clone()),
                                case: None,
                            });
                        }
                    }
                }
            }
        }
        defs
    }
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

/// The sampling plan of a test's own keys over `[defaults]`, or what is wrong with them.
fn sampling_plan(
    own: &crate::config::SamplingKeys,
    defaults: &crate::config::SamplingKeys,
) -> Result<crate::plan::SamplePlan, crate::config::SamplingProblem> {
    if let Some(conflict) = own.conflict() {
        return Err(conflict);
    }
    crate::plan::SamplePlan::from_keys(&own.over(defaults))
}

/// The trial `name` (flagged `ignored` when asked) and, when it takes several runs, its `name::run_i`
/// single-run trials (ignored unless named, with `name` as parent). With `--exact`, only the requested
/// one. `build(trial name, only_run)` says what running each does. Shared by `#[prompt_test]` functions
/// and suite cases.
fn trials_with_runs(
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
            let run_name = TrialName::row(name).numbered(i).to_string();
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
        use crate::plan::SamplePlan;
        let defaults = SamplingKeys {
            early_stop: Some(true),
            max_runs: Some(50),
            ..SamplingKeys::default()
        };
        let plan = |own: SamplingKeys| sampling_plan(&own, &defaults);
        let runs = SamplingKeys {
            runs: Some(5),
            pass_threshold: Some(0.8),
            ..SamplingKeys::default()
        };
        assert!(matches!(plan(runs), Ok(SamplePlan::EarlyStop(t)) if t.runs == 5));
        let adaptive = SamplingKeys {
            pass_rate: Some(0.8),
            ..SamplingKeys::default()
        };
        // `early_stop` from [defaults] does not contradict the test's own `pass_rate`.
        assert!(matches!(plan(adaptive), Ok(SamplePlan::Adaptive(s)) if s.max_runs == 50));
        let with_runs = SamplingKeys {
            runs: Some(5),
            ..adaptive
        };
        let too_few = SamplingKeys {
            max_runs: Some(10),
            ..adaptive
        };
        for (own, start) in [
            (with_runs, "`pass_rate` cannot be combined with `runs`"),
            (too_few, "`max_runs` is 10, but even when every run passes"),
        ] {
            let err = plan(own).unwrap_err().to_string();
            assert!(err.starts_with(start), "{err}");
        }
    }

    #[test]
    fn a_multi_run_trial_has_numbered_runs_that_only_exact_builds_alone() {
        let names = |exact| {
            trials_with_runs("t", 3, exact, false, None, |_, _| {
                TrialKind::Skip(String::new())
            })
            .into_iter()
            .map(|d| (d.name, d.ignored, d.parent))
            .collect::<Vec<_>>()
        };
        assert_eq!(
            names(None),
            [
                ("t".to_string(), false, None),
                ("t::run_1".to_string(), true, Some("t".to_string())),
                ("t::run_2".to_string(), true, Some("t".to_string())),
                ("t::run_3".to_string(), true, Some("t".to_string())),
            ]
        );
        assert_eq!(
            names(Some("t::run_2")),
            [("t::run_2".to_string(), true, Some("t".to_string()))]
        );
    }
}
