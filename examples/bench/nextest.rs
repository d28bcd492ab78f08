//! The nextest scenario: a generated suite of one-call cases, recorded once (outside the timing), then
//! replayed by a real `cargo nextest run` (one process per trial) as a user's CI replays it
//! (`PROMPT_TESTER_CASSETTE=replay`, `CI=1`), with the JSON, JUnit and HTML reports asked for as a user
//! asks (`PROMPT_TESTER_REPORT`, `_JUNIT`, `_HTML`) and rendered by `cargo prompt-tester report`: the
//! milliseconds per trial of a small and a large suite, three runs each, and the ratio of their
//! medians. (`nextest_ms_per_trial`)
//!
//! Each run starts with no cassette index (the cassette folder's work folder removed, as in a fresh
//! checkout), so the processes that build it are timed too.
//!
//! nextest runs a crate's test targets: each suite's crate root gets a `Cargo.toml` and a `prompts`
//! target of a few lines that runs this binary with `--harness` and nextest's arguments, built once in
//! a target folder the sizes share (outside the timing).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use prompt_tester_testkit::Wire;
use prompt_tester_testkit::child::built_binary;

use crate::Bench;
use crate::common::{Size, counting_server, expect_requests, tail, write_file};
use crate::results::{Figure, Report, Target};

/// Runs per size: the median is the figure.
const RUNS: usize = 3;

impl Bench {
    /// Both sizes under nextest, reports on; the ratio of their medians.
    pub(crate) fn nextest(&self) -> Result<Report, String> {
        let (small, large) = self.options.nextest_trials;
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let report_command = built_binary("cargo-prompt-tester", &workspace);
        let target = self.base.join("nextest-target");
        let mut medians = Vec::new();
        let mut lines = Vec::new();
        for trials in [small, large] {
            eprintln!(
                "[nextest] {trials} trials of one call, recorded, then replayed under cargo nextest run, reports \
                 on, {RUNS} runs"
            );
            let server = counting_server(Duration::ZERO);
            let name = format!("nextest-{trials}");
            let root =
                self.crate_root(&name, &server.base_url(Wire::OpenAi), Size::new(trials, 1))?;
            wrapper_crate(&root)?;
            let built = Command::new(cargo())
                .args(["build", "--tests", "--quiet", "--manifest-path"])
                .arg(root.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", &target)
                .status()
                .map_err(|e| format!("cargo build: {e}"))?;
            if !built.success() {
                return Err(format!("{name}: the wrapper crate does not build"));
            }
            record(&name, &root)?;
            expect_requests(&name, &server, trials)?;
            let work = root.join("prompt-tests/cassettes").join(".prompt-tester");
            let mut per_trial = Vec::new();
            for _ in 1..=RUNS {
                let _ = std::fs::remove_dir_all(root.join(".prompt-tester"));
                let _ = std::fs::remove_dir_all(&work);
                let out = root.join("out");
                let started = Instant::now();
                let nextest = Command::new(cargo())
                    .args(["nextest", "run", "--no-fail-fast", "--color", "never"])
                    .args(["--status-level", "fail", "--final-status-level", "none"])
                    .args(["-E", "test(/^bench::/)", "--manifest-path"])
                    .arg(root.join("Cargo.toml"))
                    .current_dir(&root)
                    .env("CARGO_TARGET_DIR", &target)
                    .env(
                        "PT_HARNESS",
                        std::env::current_exe().map_err(|e| e.to_string())?,
                    )
                    .env("PROMPT_TESTER_CASSETTE", "replay")
                    .env("CI", "1")
                    .env("PROMPT_TESTER_REPORT", out.join("report.json"))
                    .env("PROMPT_TESTER_JUNIT", out.join("junit.xml"))
                    .env("PROMPT_TESTER_HTML", out.join("report.html"))
                    .env("NO_COLOR", "1")
                    .output()
                    .map_err(|e| format!("cargo nextest: {e}"))?;
                if !nextest.status.success() {
                    return Err(format!(
                        "{name}: cargo nextest run failed:\n{}",
                        tail(&String::from_utf8_lossy(&nextest.stderr), 20)
                    ));
                }
                let report = Command::new(&report_command)
                    .args(["prompt-tester", "report"])
                    .current_dir(&root)
                    .output()
                    .map_err(|e| format!("cargo prompt-tester report: {e}"))?;
                let wall = started.elapsed();
                if !report.status.success() {
                    return Err(format!(
                        "{name}: cargo prompt-tester report failed:\n{}",
                        tail(&String::from_utf8_lossy(&report.stderr), 20)
                    ));
                }
                expect_reported(&name, &out.join("report.json"), trials)?;
                // A replay calls nothing: the provider saw only the recording's calls.
                expect_requests(&name, &server, trials)?;
                per_trial.push(wall.as_secs_f64() * 1e3 / trials as f64);
            }
            per_trial.sort_by(f64::total_cmp);
            let median = per_trial[RUNS / 2];
            lines.push(format!(
                "{trials} trials: {median:.1} ms per trial (min {:.1}, max {:.1})",
                per_trial[0],
                per_trial[RUNS - 1]
            ));
            medians.push((trials, median));
        }
        let [(small, at_small), (large, at_large)] = medians[..] else {
            unreachable!("two sizes");
        };
        let figures = vec![
            Figure::new(format!("nextest_ms_per_trial.t{small}"), at_small, 1).json(1),
            Figure::new(format!("nextest_ms_per_trial.t{large}"), at_large, 1).json(1),
            Figure::new("nextest_ms_per_trial.ratio", at_large / at_small, 2)
                .target(Target::AtMost(1.3))
                .json(2),
        ];
        Ok(Report::new("nextest", figures).line(format!(
            "nextest_ms_per_trial: cargo nextest run (a process per trial) replaying, then cargo \
             prompt-tester report, JSON + JUnit + HTML, medians of {RUNS} runs: {}; ratio {:.2}",
            lines.join("; "),
            at_large / at_small
        )))
    }
}

/// Records every trial of the suite at `root` into its cassette, in one harness process (this
/// binary, as the nextest target runs it, so the entries name the target nextest replays as).
fn record(name: &str, root: &Path) -> Result<(), String> {
    let recorded = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(["--harness", "--record", "--quiet", "bench::"])
        .current_dir(root)
        .env("CARGO_MANIFEST_DIR", root)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("PROMPT_TESTER_CASSETTE")
        .output()
        .map_err(|e| format!("{name}: recording: {e}"))?;
    if recorded.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{name}: recording the suite failed:\n{}",
            tail(&String::from_utf8_lossy(&recorded.stdout), 20)
        ))
    }
}

/// `cargo`, as cargo names it to the programs it runs.
fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The crate nextest runs: its `prompts` target runs the harness binary named by `PT_HARNESS`.
fn wrapper_crate(root: &Path) -> Result<(), String> {
    write_file(
        &root.join("Cargo.toml"),
        "[package]\nname = \"pt-bench-nextest\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n\n\
         [[test]]\nname = \"prompts\"\npath = \"prompts.rs\"\nharness = false\n",
    )?;
    write_file(
        &root.join("prompts.rs"),
        "fn main() {\n    let harness = std::env::var_os(\"PT_HARNESS\").expect(\"PT_HARNESS\");\n    \
         let status = std::process::Command::new(harness)\n        .arg(\"--harness\")\n        \
         .args(std::env::args_os().skip(1))\n        .status()\n        .expect(\"the harness runs\");\n    \
         std::process::exit(status.code().unwrap_or(101));\n}\n",
    )
}

/// The merged JSON report holds every trial, passed.
fn expect_reported(name: &str, report: &Path, trials: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(report).map_err(|e| format!("{}: {e}", report.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
    let totals = &json["totals"];
    if totals["total"] == trials && totals["passed"] == trials {
        Ok(())
    } else {
        Err(format!(
            "{name}: the merged report's totals are {totals}; expected {trials} trials passed"
        ))
    }
}
