//! What the scenarios share: the generated crate roots and suites (a suite's `Size`), running a
//! scenario in a child process, and the checks of its outcome.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prompt_tester_testkit::FakeProvider;
use serde_json::Value;

use crate::Bench;
use crate::app_calls::TRIALS;
use crate::judge::JUDGE_TRIAL;

/// The provider name, model and prompt of the generated suites.
pub(crate) const PROVIDER: &str = "bench";
pub(crate) const MODEL: &str = "bench-model";
pub(crate) const JUDGE_MODEL: &str = "bench-judge";
pub(crate) const SUITE: &str = "bench";
pub(crate) const PROMPT: &str = "Case {n}: repeat the customer's message. {text}";
pub(crate) const MAX_TOKENS: u32 = 64;

/// A generated suite's size: its cases, and the runs of each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Size {
    pub(crate) cases: usize,
    pub(crate) runs: u32,
}

impl Size {
    pub(crate) const fn new(cases: usize, runs: u32) -> Self {
        Self { cases, runs }
    }

    /// Every run of every case: the calls of a live run, the entries of a cassette.
    pub(crate) fn calls(self) -> usize {
        self.cases * self.runs as usize
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cases x {} runs", self.cases, self.runs)
    }
}

/// What one child run produced.
pub(crate) struct ChildRun {
    /// The child's wall time from spawn to exit, as the parent saw it.
    pub(crate) wall: Duration,
    /// The child's own measurements.
    pub(crate) measured: Value,
    /// libtest's `test result:` counts.
    pub(crate) passed: usize,
    pub(crate) failed: usize,
}

impl Bench {
    /// A crate root for a scenario: `prompt-tester.toml` naming the provider at `url`, and a suite of
    /// `size`.
    pub(crate) fn crate_root(&self, name: &str, url: &str, size: Size) -> Result<PathBuf, String> {
        let root = self.base.join(name);
        let suites = root.join("prompt-tests");
        std::fs::create_dir_all(&suites).map_err(|e| format!("{}: {e}", suites.display()))?;
        let mut config = String::from("# Written by examples/bench.\n");
        if let Some(n) = self.options.concurrency {
            writeln!(config, "concurrency = {n}").ok();
        }
        write!(
            config,
            "\n[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"{MODEL}\"\n\n\
             [judge]\nprovider = \"{PROVIDER}\"\nmodel = \"{JUDGE_MODEL}\"\nmax_tokens = 256\n\n\
             [providers.{PROVIDER}]\nkind = \"openai\"\nbase_url = \"{url}\"\n\n\
             [prices.\"{MODEL}\"]\ninput_mtok = 0.10\noutput_mtok = 0.40\n\n\
             [prices.\"{JUDGE_MODEL}\"]\ninput_mtok = 1.00\noutput_mtok = 5.00\n"
        )
        .ok();
        write_file(&root.join("prompt-tester.toml"), &config)?;
        write_file(
            &suites.join(format!("{SUITE}.evals.toml")),
            &suite_toml(size),
        )?;
        Ok(root)
    }

    /// Runs scenario `name` against its provider, cassettes off and the judge trial skipped: each of
    /// the `cases` trials must pass.
    pub(crate) fn run_live(
        &self,
        name: &str,
        root: &Path,
        cases: usize,
    ) -> Result<ChildRun, String> {
        self.run_live_on(
            name,
            root,
            &["--skip", JUDGE_TRIAL, "--skip", TRIALS],
            cases,
        )
    }

    /// Runs scenario `name` against its provider, cassettes off, on the trials the harness arguments
    /// `trials` select (`--skip`, `--exact`, a filter): each of the `cases` trials must pass.
    pub(crate) fn run_live_on(
        &self,
        name: &str,
        root: &Path,
        trials: &[&str],
        cases: usize,
    ) -> Result<ChildRun, String> {
        let args: Vec<&str> = std::iter::once("--no-cassette")
            .chain(trials.iter().copied())
            .collect();
        let run = self.run_child(name, root, &[], &args)?;
        expect_passed(name, &run, cases)?;
        Ok(run)
    }

    /// Runs scenario `name` in a child process rooted at `root` with `env` and the harness `args`.
    pub(crate) fn run_child(
        &self,
        name: &str,
        root: &Path,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Result<ChildRun, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let out = root.join("measured.json");
        let stdout = root.join("stdout.txt");
        let stderr = root.join("stderr.txt");
        let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut command = Command::new(exe);
        command
            .args(["--scenario", name, "--out"])
            .arg(&out)
            .arg("--")
            .args(args)
            .env("CARGO_MANIFEST_DIR", root)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(file(&stdout)?)
            .stderr(file(&stderr)?);
        // The user's own settings must not change what is measured.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("PROMPT_TESTER_")
                || key == "RUST_TEST_THREADS"
                || key.ends_with("_BASE_URL")
            {
                command.env_remove(key.as_ref());
            }
        }
        command.envs(env.iter().copied());
        let started = Instant::now();
        let status = command
            .status()
            .map_err(|e| format!("{name}: cannot start the child: {e}"))?;
        let wall = started.elapsed();
        let output = std::fs::read_to_string(&stdout).unwrap_or_default();
        let errors = std::fs::read_to_string(&stderr).unwrap_or_default();
        // `--list` and `--estimate` print no `test result:` line: nothing ran.
        let counts = if args.contains(&"--list") || args.contains(&"--estimate") {
            Some((0, 0))
        } else {
            output.lines().rev().find_map(test_result)
        };
        let Some((passed, failed)) = counts.filter(|_| status.success()) else {
            return Err(format!(
                "{name}: the harness exited with {status}\n--- stdout (end) ---\n{}\n--- stderr (end) ---\n{}",
                tail(&output, 30),
                tail(&errors, 30)
            ));
        };
        let measured: Value = std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| {
                format!(
                    "{name}: the child wrote no measurements to {}",
                    out.display()
                )
            })?;
        Ok(ChildRun {
            wall,
            measured,
            passed,
            failed,
        })
    }
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The generated suite: `size.cases` cases with their own inputs, each checked against its own
/// answer.
pub(crate) fn suite_toml(Size { cases, runs }: Size) -> String {
    let mut toml = format!(
        "# Written by examples/bench.\nprompt = {prompt:?}\nmax_tokens = {MAX_TOKENS}\nruns = {runs}\n",
        prompt = PROMPT
    );
    for i in 1..=cases {
        let (n, text) = case_inputs(i);
        write!(
            toml,
            "\n[[cases]]\nname = \"{}\"\ninputs = {{ n = \"{n}\", text = {text:?} }}\nassert = [{{ contains = \"Case {n}:\" }}]\n",
            case_name(i)
        )
        .ok();
    }
    toml
}

pub(crate) fn case_name(i: usize) -> String {
    format!("case_{i:05}")
}

pub(crate) fn case_inputs(i: usize) -> (String, String) {
    (
        i.to_string(),
        format!(
            "Order A-{i:05} arrived damaged; the customer asks for a replacement before Friday."
        ),
    )
}

/// `passed` and `failed` from libtest's `test result: ok. 3 passed; 0 failed; ...` line.
pub(crate) fn test_result(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("test result: ")?;
    let count = |what: &str| -> Option<usize> {
        rest.split(';').find_map(|part| {
            part.trim()
                .trim_start_matches("ok.")
                .trim_start_matches("FAILED.")
                .trim()
                .strip_suffix(what)?
                .trim()
                .parse()
                .ok()
        })
    };
    Some((count("passed")?, count("failed")?))
}

/// The provider of a scenario that counts calls: the echo after `latency`, no request kept.
pub(crate) fn counting_server(latency: Duration) -> FakeProvider {
    FakeProvider::builder()
        .latency(latency)
        .capture(false)
        .start()
}

pub(crate) fn expect_passed(name: &str, run: &ChildRun, want: usize) -> Result<(), String> {
    if run.passed == want && run.failed == 0 {
        Ok(())
    } else {
        Err(format!(
            "{name}: {} trials passed and {} failed; expected {want} passed",
            run.passed, run.failed
        ))
    }
}

pub(crate) fn expect_requests(
    name: &str,
    server: &FakeProvider,
    want: usize,
) -> Result<(), String> {
    match server.request_count() {
        n if n == want => Ok(()),
        n => Err(format!(
            "{name}: the provider received {n} requests; expected {want}"
        )),
    }
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

pub(crate) fn mb(kb: Option<u64>) -> Option<f64> {
    kb.map(|kb| (kb as f64 / 1024.0 * 10.0).round() / 10.0)
}

/// `d` in milliseconds.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
