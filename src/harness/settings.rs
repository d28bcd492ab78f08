//! What a run is asked to do: every harness flag and environment variable, read once into one value.
//!
//! The harness's own flags are taken out of the command line before libtest's are parsed; each flag
//! wins over its variable. A value that would mean nothing (a mode, a switch or a count out of its
//! range) is an error naming the flag or the variable, before anything runs.

use std::path::PathBuf;

use super::error::HarnessError;
use crate::cassette::decision::Replacements;
use crate::cassette::{CassetteMode, Policy};
use crate::commands::Commands;
use crate::config::env_var;
use crate::model::Subject;
use crate::report::baseline;
use crate::report::markdown::{MARKDOWN, Markdown, MarkdownSetting};
use crate::report::results::{Asked, RESULTS_VAR};

/// Who runs this process: cargo's libtest conventions, or nextest (one process per trial).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Runner {
    /// `cargo test` (or the binary run by hand).
    #[default]
    Cargo,
    /// nextest: `NEXTEST` or `NEXTEST_RUN_ID` is set. Its run id names the folder of the run's results.
    Nextest {
        /// `NEXTEST_RUN_ID`.
        run_id: Option<String>,
        /// `NEXTEST_ATTEMPT`: 1, or the retry's number.
        attempt: Option<u32>,
    },
}

impl Runner {
    /// Whether nextest runs this process (an ignored outcome reads as a pass there).
    pub fn is_nextest(&self) -> bool {
        matches!(self, Runner::Nextest { .. })
    }

    /// Which attempt at its trial nextest runs (1, or a retry's number), when it said.
    pub fn attempt(&self) -> Option<u32> {
        match self {
            Runner::Nextest { attempt, .. } => *attempt,
            Runner::Cargo => None,
        }
    }

    /// The nextest run this process belongs to, if any.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Runner::Nextest { run_id, .. } => run_id.as_deref(),
            Runner::Cargo => None,
        }
    }
}

/// Everything a run reads from its flags and environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The cassette mode: `--record`, `--no-cassette`, else `PROMPT_TESTER_CASSETTE` (auto when unset).
    pub mode: CassetteMode,
    /// The reports to write.
    pub reports: Asked,
    /// Where the Markdown summary goes.
    pub markdown: Markdown,
    /// `--prune-cassettes`.
    pub prune: bool,
    /// `--baseline` and its companions, checked (an error when one is given without a baseline).
    pub baseline: Option<baseline::Settings>,
    /// `--subject provider/model`: the run's model, replacing every test's.
    pub subject: Option<Subject>,
    /// `RUST_TEST_THREADS`, when set (libtest's `--test-threads` wins over it).
    pub test_threads: Option<usize>,
    /// `CI` is set (and not `false` or `0`).
    pub ci: bool,
    /// Who runs this process.
    pub runner: Runner,
    /// `GITHUB_SHA`: the commit the run tests, for the HTML report (else git is asked).
    pub commit: Option<String>,
    /// `--accept` / `PROMPT_TESTER_ACCEPT`: answers that replace recordings go straight into the
    /// cassettes instead of pending.
    pub accept: bool,
    /// `PROMPT_TESTER_PENDING_DIR`: where pending recordings go (else beside their cassettes).
    pub pending_dir: Option<PathBuf>,
    /// `PROMPT_TESTER_RESULTS`: the results folder (else `<crate>/.prompt-tester/results`).
    pub results: Option<PathBuf>,
    /// `--budget USD` / `PROMPT_TESTER_BUDGET`: the most the run may spend on provider calls.
    pub budget: Option<f64>,
    /// `--estimate` / `PROMPT_TESTER_ESTIMATE`: print what a live run would cost, call nothing.
    pub estimate: bool,
    /// The commands messages name, for the test target this binary is (its file name says which).
    pub commands: Commands,
    /// The log's filter (`PROMPT_TESTER_LOG`, else `RUST_LOG`): none, no log.
    pub log: Option<String>,
}

impl Settings {
    /// Takes the harness's flags out of `argv` and reads the environment; returns the settings and the
    /// arguments left for libtest.
    pub fn read(argv: Vec<String>) -> Result<(Self, Vec<String>), HarnessError> {
        let (flags, rest) = Flags::split(argv)?;
        let mode = match flags.mode {
            Some(mode) => mode,
            None => CassetteMode::from_env()?,
        };
        let path_of =
            |flag: Option<PathBuf>, var: &str| flag.or_else(|| env_var(var).map(PathBuf::from));
        let reports = Asked {
            junit: path_of(flags.junit.clone(), "PROMPT_TESTER_JUNIT"),
            json: path_of(flags.report.clone(), "PROMPT_TESTER_REPORT"),
            html: path_of(flags.html.clone(), "PROMPT_TESTER_HTML"),
        }
        .writable()?;
        let subject = flags
            .subject
            .as_deref()
            .map(|value| value.parse().map_err(HarnessError::Subject))
            .transpose()?;
        let commands = Commands::new(crate::cassette::this_target().as_deref());
        let runner = runner();
        let settings = Self {
            mode,
            reports,
            markdown: markdown(flags.markdown.as_deref(), runner.is_nextest())?,
            prune: flags.prune,
            baseline: flags.baseline_settings(&commands)?,
            subject,
            test_threads: test_threads()?,
            ci: crate::config::is_ci(),
            runner,
            commit: env_var("GITHUB_SHA").map(|sha| sha.chars().take(12).collect()),
            accept: flags.accept || switch("PROMPT_TESTER_ACCEPT")?,
            pending_dir: env_var(PENDING_DIR).map(PathBuf::from),
            results: env_var(RESULTS_VAR).map(PathBuf::from),
            budget: match flags.budget {
                Some(value) => Some(usd(&value).map_err(|problem| {
                    HarnessError::Flag(format!("--budget {value:?} {problem}"))
                })?),
                None => env_var(BUDGET)
                    .map(|value| {
                        usd(&value).map_err(|problem| HarnessError::Variable {
                            name: BUDGET,
                            value,
                            problem,
                        })
                    })
                    .transpose()?,
            },
            estimate: flags.estimate || switch("PROMPT_TESTER_ESTIMATE")?,
            commands,
            log: log_filter(env_var(LOG), env_var("RUST_LOG"))?,
        };
        Ok((settings, rest))
    }

    /// How the run uses its cassettes.
    pub fn cassette_policy(&self) -> Policy {
        let replacements = if self.accept {
            Replacements::Accept
        } else if self.pending_dir.is_some() {
            Replacements::PendingDir
        } else {
            Replacements::Pending
        };
        Policy {
            mode: self.mode,
            ci: self.ci,
            replacements,
            pending_dir: self.pending_dir.clone(),
            commands: self.commands.clone(),
        }
    }
}

/// Where the summary goes, from `flag` (the value of `--markdown`, which wins), then
/// `PROMPT_TESTER_MARKDOWN`, and `GITHUB_STEP_SUMMARY`.
pub fn markdown(flag: Option<&str>, one_of_nextest: bool) -> Result<Markdown, HarnessError> {
    let setting = match flag {
        Some(value) => Some(
            MarkdownSetting::parse(value)
                .map_err(|problem| HarnessError::Flag(format!("--markdown {value:?} {problem}")))?,
        ),
        None => env_var(MARKDOWN)
            .map(|value| {
                MarkdownSetting::parse(&value).map_err(|problem| HarnessError::Variable {
                    name: MARKDOWN,
                    value,
                    problem,
                })
            })
            .transpose()?,
    };
    let step_summary = env_var("GITHUB_STEP_SUMMARY").map(PathBuf::from);
    Ok(Markdown::resolve(setting, step_summary, one_of_nextest))
}

/// The variable that sends pending recordings to a folder of their own (a CI artifact).
pub const PENDING_DIR: &str = "PROMPT_TESTER_PENDING_DIR";

/// The variable of the run's budget.
pub const BUDGET: &str = "PROMPT_TESTER_BUDGET";

/// The variable of the log's level.
pub const LOG: &str = "PROMPT_TESTER_LOG";

/// The levels [`LOG`] takes, quietest first.
const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The log's filter directives: [`LOG`]'s level for prompt-tester's own events (`off` for none,
/// whatever `RUST_LOG` says), else `RUST_LOG`'s directives as written (any crate's, the convention of
/// `tracing`), else no log.
fn log_filter(
    log: Option<String>,
    rust_log: Option<String>,
) -> Result<Option<String>, HarnessError> {
    if let Some(value) = log {
        let level = value.trim().to_ascii_lowercase();
        return match level.as_str() {
            "off" => Ok(None),
            _ if LOG_LEVELS.contains(&level.as_str()) && !cfg!(feature = "log") => {
                Err(HarnessError::Variable {
                    name: LOG,
                    value,
                    problem: "needs prompt-tester's `log` feature (on by default): add \"log\" to its \
                              features in Cargo.toml, or unset the variable",
                })
            }
            _ if LOG_LEVELS.contains(&level.as_str()) => Ok(Some(format!("prompt_tester={level}"))),
            _ => Err(HarnessError::Variable {
                name: LOG,
                value,
                problem: "is not a log level; use one of off, error, warn, info, debug, trace",
            }),
        };
    }
    rust_log_filter(rust_log)
}

/// `RUST_LOG`'s directives as written, when they are a filter `tracing` reads.
#[cfg(feature = "log")]
fn rust_log_filter(rust_log: Option<String>) -> Result<Option<String>, HarnessError> {
    let Some(value) = rust_log.filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    if super::log::parses(&value) {
        return Ok(Some(value));
    }
    Err(HarnessError::Variable {
        name: "RUST_LOG",
        value,
        problem: "is not a log filter; give a level (debug) or directives (prompt_tester=debug), or \
                  set PROMPT_TESTER_LOG=debug for prompt-tester's log alone",
    })
}

/// Without the `log` feature `RUST_LOG` is the application's alone: its own subscriber reads it.
#[cfg(not(feature = "log"))]
fn rust_log_filter(_rust_log: Option<String>) -> Result<Option<String>, HarnessError> {
    Ok(None)
}

/// A budget in USD: a number of at least 0 (`0.50`, `$0.50`).
fn usd(value: &str) -> Result<f64, &'static str> {
    let number = value.trim();
    let number = number.strip_prefix('$').unwrap_or(number);
    match number.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err("is not an amount of USD; give a number of at least 0, e.g. 0.50"),
    }
}

/// An on/off variable: unset, `0` or `false` is off; `1` or `true` is on; anything else is an error.
fn switch(name: &'static str) -> Result<bool, HarnessError> {
    let Some(value) = env_var(name) else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(HarnessError::Variable {
            name,
            value,
            problem: "is not a switch; use 1 or true, 0 or false",
        }),
    }
}

/// `RUST_TEST_THREADS`: a whole number of at least 1 (0 would start no worker and hang the run).
fn test_threads() -> Result<Option<usize>, HarnessError> {
    let Some(value) = env_var("RUST_TEST_THREADS") else {
        return Ok(None);
    };
    match value.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(HarnessError::Variable {
            name: "RUST_TEST_THREADS",
            value,
            problem: "is not a whole number of at least 1; unset it or give the number of trials to run \
                      at once",
        }),
    }
}

fn runner() -> Runner {
    if std::env::var_os("NEXTEST_RUN_ID").is_some() || std::env::var_os("NEXTEST").is_some() {
        Runner::Nextest {
            run_id: env_var("NEXTEST_RUN_ID"),
            attempt: env_var("NEXTEST_ATTEMPT").and_then(|n| n.parse().ok()),
        }
    } else {
        Runner::Cargo
    }
}

/// libtest's options that take a value (`--skip NAME`, `-Z FLAG`): the next argument is theirs.
const LIBTEST_VALUED: [&str; 6] = [
    "--skip",
    "--test-threads",
    "--logfile",
    "--color",
    "--format",
    "-Z",
];

/// Takes libtest's name filters (its positional arguments, of which it takes any number) out of
/// `args`: libtest-mimic's parser takes one. Returns the arguments left and the filters.
pub(crate) fn take_filters(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut rest = Vec::with_capacity(args.len());
    let mut filters = Vec::new();
    let mut iter = args.into_iter();
    rest.extend(iter.next());
    while let Some(arg) = iter.next() {
        if arg == "--" {
            filters.extend(iter.by_ref());
        } else if LIBTEST_VALUED.contains(&arg.as_str()) {
            rest.push(arg);
            rest.extend(iter.next());
        } else if arg.starts_with('-') && arg != "-" {
            rest.push(arg);
        } else {
            filters.push(arg);
        }
    }
    (rest, filters)
}

/// The harness's own flags as written, before their variables fill in.
#[derive(Debug, Default)]
struct Flags {
    mode: Option<CassetteMode>,
    junit: Option<PathBuf>,
    report: Option<PathBuf>,
    html: Option<PathBuf>,
    markdown: Option<String>,
    prune: bool,
    accept: bool,
    baseline: Option<String>,
    baseline_alpha: Option<String>,
    fail_on_regression: bool,
    subject: Option<String>,
    budget: Option<String>,
    estimate: bool,
}

impl Flags {
    /// `--baseline`, `--baseline-alpha` and `--fail-on-regression`, each flag over its variable.
    fn baseline_settings(
        &self,
        commands: &Commands,
    ) -> Result<Option<baseline::Settings>, crate::report::ReportError> {
        let pick = |flag: &'static str, value: Option<String>, var: &'static str| {
            value
                .map(|v| (flag, v))
                .or_else(|| env_var(var).map(|v| (var, v)))
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
            commands,
        )
    }

    fn split(argv: Vec<String>) -> Result<(Self, Vec<String>), HarnessError> {
        let mut flags = Self::default();
        let mut rest = Vec::with_capacity(argv.len());
        let mut iter = argv.into_iter();
        // A flag's value, inline (`--flag=value`) or the next argument, else `needs` as the error. A
        // model or an amount never starts with `--` (`not_a_flag`): one there is the next flag.
        let value_of = |inline: Option<String>,
                        iter: &mut std::vec::IntoIter<String>,
                        not_a_flag: bool,
                        needs: &str| {
            inline
                .or_else(|| iter.next())
                .filter(|v| !(not_a_flag && v.starts_with("--")))
                .ok_or_else(|| HarnessError::Flag(needs.to_string()))
        };
        let path_of = |flag: &str, inline, iter: &mut std::vec::IntoIter<String>| {
            value_of(
                inline,
                iter,
                false,
                &format!("{flag} needs a path: {flag} PATH"),
            )
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
                "--accept" => flags.accept = true,
                "--junit" => flags.junit = Some(path_of("--junit", inline, &mut iter)?.into()),
                "--report" => flags.report = Some(path_of("--report", inline, &mut iter)?.into()),
                "--baseline" => flags.baseline = Some(path_of("--baseline", inline, &mut iter)?),
                "--baseline-alpha" => {
                    let needs = "--baseline-alpha needs a value: --baseline-alpha 0.05";
                    flags.baseline_alpha = Some(value_of(inline, &mut iter, false, needs)?);
                }
                "--fail-on-regression" => flags.fail_on_regression = true,
                "--subject" => {
                    // A flag after it means the model was left out.
                    let needs = "--subject needs a model: --subject provider/model";
                    flags.subject = Some(value_of(inline, &mut iter, true, needs)?);
                }
                "--html" => flags.html = Some(path_of("--html", inline, &mut iter)?.into()),
                "--markdown" => flags.markdown = Some(path_of("--markdown", inline, &mut iter)?),
                "--estimate" => flags.estimate = true,
                "--budget" => {
                    let needs = "--budget needs an amount of USD: --budget 0.50";
                    flags.budget = Some(value_of(inline, &mut iter, true, needs)?);
                }
                _ => rest.push(arg),
            }
        }
        Ok((flags, rest))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_log_is_asked_for_by_variable_and_refused_without_its_feature() {
        let level = |log: &str, rust_log: Option<&str>| {
            super::log_filter(Some(log.to_string()), rust_log.map(str::to_string))
        };
        assert_eq!(level("off", Some("debug")).unwrap(), None);
        assert!(
            level("loud", None)
                .unwrap_err()
                .to_string()
                .contains("is not a log level")
        );
        let rust_log = super::log_filter(None, Some("debug".into()));
        if cfg!(feature = "log") {
            assert_eq!(
                level("debug", None).unwrap().as_deref(),
                Some("prompt_tester=debug")
            );
            assert_eq!(rust_log.unwrap().as_deref(), Some("debug"));
        } else {
            let refused = level("debug", None).unwrap_err().to_string();
            assert!(refused.contains("`log` feature"), "{refused}");
            // `RUST_LOG` is the application's then: not an error, no log of ours.
            assert_eq!(rust_log.unwrap(), None);
        }
    }

    use super::*;

    fn split(args: &[&str]) -> Result<(Flags, Vec<String>), HarnessError> {
        Flags::split(args.iter().map(|a| a.to_string()).collect())
    }

    #[test]
    fn the_harness_flags_are_taken_out_and_libtest_s_are_left() {
        let (flags, rest) = split(&[
            "prog",
            "--record",
            "--junit=j.xml",
            "--report",
            "r.json",
            "--exact",
            "a::b",
            "--subject",
            "fake/m",
            "--prune-cassettes",
            "--budget=0.5",
            "--estimate",
        ])
        .unwrap();
        assert!(flags.prune);
        assert_eq!(flags.budget.as_deref(), Some("0.5"));
        assert!(flags.estimate);
        assert_eq!(flags.mode, Some(CassetteMode::Record));
        assert_eq!(flags.junit, Some(PathBuf::from("j.xml")));
        assert_eq!(flags.report, Some(PathBuf::from("r.json")));
        assert_eq!(flags.subject.as_deref(), Some("fake/m"));
        assert_eq!(rest, ["prog", "--exact", "a::b"]);
    }

    #[test]
    fn every_name_filter_is_taken_out_and_option_values_are_left() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (rest, filters) = take_filters(args(&[
            "prog",
            "a",
            "--skip",
            "s",
            "--exact",
            "b",
            "--format=terse",
            "--test-threads",
            "2",
            "-Z",
            "unstable-options",
            "--",
            "--c",
        ]));
        assert_eq!(filters, ["a", "b", "--c"]);
        assert_eq!(
            rest,
            args(&[
                "prog",
                "--skip",
                "s",
                "--exact",
                "--format=terse",
                "--test-threads",
                "2",
                "-Z",
                "unstable-options"
            ])
        );
    }

    #[test]
    fn a_flag_without_its_value_is_an_error_that_shows_the_form() {
        assert_eq!(
            split(&["prog", "--junit"]).unwrap_err().to_string(),
            "--junit needs a path: --junit PATH"
        );
        assert_eq!(
            split(&["prog", "--subject", "--record"])
                .unwrap_err()
                .to_string(),
            "--subject needs a model: --subject provider/model"
        );
        assert_eq!(
            split(&["prog", "--budget", "--record"])
                .unwrap_err()
                .to_string(),
            "--budget needs an amount of USD: --budget 0.50"
        );
    }

    #[test]
    fn the_markdown_summary_goes_to_its_file_and_once_to_the_step_summary() {
        let file = |p: &str| Some(MarkdownSetting::File(p.into()));
        let step = || Some(PathBuf::from("/gh/step_summary"));
        let to = |file: Option<&str>, step: Option<&str>| Markdown {
            file: file.map(PathBuf::from),
            step_summary: step.map(PathBuf::from),
        };
        for (setting, step_summary, nextest, want) in [
            // `cargo test` on GitHub: the file, and the step summary.
            (
                file("s.md"),
                step(),
                false,
                to(Some("s.md"), Some("/gh/step_summary")),
            ),
            (None, step(), false, to(None, Some("/gh/step_summary"))),
            // The file is the step summary: appended to once, never replaced.
            (
                file("/gh/step_summary"),
                step(),
                false,
                to(None, Some("/gh/step_summary")),
            ),
            (file("/gh/step_summary"), step(), true, to(None, None)),
            // One of nextest's processes: never the step summary (`cargo prompt-tester report` writes it).
            (None, step(), true, to(None, None)),
            (file("s.md"), step(), true, to(Some("s.md"), None)),
            // Off: nowhere.
            (Some(MarkdownSetting::Off), step(), false, to(None, None)),
            (file("s.md"), None, false, to(Some("s.md"), None)),
            (None, None, false, to(None, None)),
        ] {
            let why = format!("{setting:?} {step_summary:?} nextest={nextest}");
            assert_eq!(
                Markdown::resolve(setting, step_summary, nextest),
                want,
                "{why}"
            );
        }
    }

    #[test]
    fn a_markdown_setting_is_off_or_a_path_never_a_switch() {
        assert_eq!(MarkdownSetting::parse("off"), Ok(MarkdownSetting::Off));
        assert_eq!(MarkdownSetting::parse(" OFF "), Ok(MarkdownSetting::Off));
        assert_eq!(
            MarkdownSetting::parse("target/summary.md"),
            Ok(MarkdownSetting::File("target/summary.md".into()))
        );
        assert_eq!(
            MarkdownSetting::parse("./true"),
            Ok(MarkdownSetting::File("./true".into()))
        );
        for switch in ["on", "true", "1", "0", "false", "no", "none", "Yes"] {
            let problem = MarkdownSetting::parse(switch).unwrap_err();
            assert!(
                problem.contains("or off for no summary"),
                "{switch}: {problem}"
            );
        }
        let (flags, _) = split(&["prog", "--markdown", "s.md", "--markdown=t.md"]).unwrap();
        assert_eq!(flags.markdown.as_deref(), Some("t.md"));
        assert_eq!(
            split(&["prog", "--markdown"]).unwrap_err().to_string(),
            "--markdown needs a path: --markdown PATH"
        );
    }

    #[test]
    fn a_budget_is_an_amount_of_usd() {
        assert_eq!(usd("0.5"), Ok(0.5));
        assert_eq!(usd(" $2 "), Ok(2.0));
        assert_eq!(usd("0"), Ok(0.0));
        for bad in ["", "-1", "NaN", "inf", "ten", "$"] {
            assert!(usd(bad).is_err(), "{bad}");
        }
    }
}
