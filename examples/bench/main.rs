//! What a prompt-test run costs beyond its model calls, measured end to end.
//!
//! ```console
//! $ cargo run --release --example bench              # the figures of issue 9 (about 20 s)
//! $ cargo run --release --example bench -- --quick   # smaller counts, a few seconds (CI)
//! ```
//!
//! Each scenario starts a loopback provider (`prompt_tester_testkit::FakeProvider`, OpenAI wire format)
//! with a fixed latency, writes a throwaway crate root with a `prompt-tester.toml` pointing at it and a
//! generated `*.evals.toml` suite, and runs the real harness on it (libtest-mimic trials, the engine,
//! the provider client with its in-flight limit, cassettes) in a child process: the engine is global
//! to a process, so every scenario re-executes this binary with a hidden `--scenario NAME` argument.
//! The child reports what only it can see (its peak memory, CPU time, the judge timings) as JSON; the
//! parent times the child, checks that every trial passed and every call reached the server (or, for
//! replay, that none did), and prints a table, then one JSON object as the last line.
//!
//! Figures (full mode; `--quick` counts in brackets):
//! - `inflight_efficiency`: 1,000 calls (200 cases x 5 runs) [200 calls: 40 x 5] at 200 ms [100 ms]
//!   with the default concurrency C: ideal wall time (calls x latency / C) over the measured one.
//! - `overhead_us_per_trial`: 10,000 trials [2,000] of one call each at zero latency, cassettes off:
//!   the run's wall time per trial, process start included.
//! - `replay_entries_per_s`: a 10,000-entry cassette [2,000] (2,000 cases x 5 runs [400 x 5]) loaded
//!   and replayed with `PROMPT_TESTER_CASSETTE=replay` while the server is stopped.
//! - `peak_rss_mb`: the child's peak resident memory (`VmHWM`) in the 10,000-trial run [2,000].
//! - `judge_ms`: one `#[prompt_test]` asks 5 questions with `ask` one after another, with one
//!   `ask_all`, and with `ask_parallel`, against a judge at 200 ms [100 ms] latency.
//! - `ratelimit_slowdown`: a provider that answers 429 with `retry-after: 0.5` to any request arriving
//!   while 4 are in flight; 100 calls (20 cases x 5 runs) at 100 ms with the default concurrency: the
//!   measured wall time over the ideal one (calls x latency / 4). Every call must succeed.
//! - `dataset_list_ms`: a suite whose cases come from a 5,000-row JSON Lines file (`cases_file`, every
//!   row with `{expected}` in its assertions, half with assertions of their own) listed with `--list`:
//!   the child's wall time, process start included. `dataset_exact_ms`: the same file with
//!   `--list --exact` naming its last row, which builds that row alone (same count in both modes).
//!   `dataset_run_ms`: the 5,000 rows run as trials against the echo at zero latency, cassettes off.
//!   `gate_list_ms`, `gate_run_ms`: the same rows under `[gate]` (a gate for every row and one per
//!   category, 8 trials) listed, and run the same way; the server must see each row once.
//! - `estimate_ms`: `--estimate` over a suite cassette of 5,000 recorded entries (1,000 cases x 5 runs,
//!   the same in quick mode), no server: the child's wall time, process start included.
//! - `html_report`: the HTML report (`--html`) of a synthetic 1,000-trial, 5-sample run (the same in
//!   quick mode), written in process: its size and the time to write it. The browser test
//!   (`tests/suites/html.rs`) loads that report in Chromium and prints its load time.
//! - `sampling`: mean calls per decided test, simulated with the harness's wave rule on prompts that pass
//!   at 0.5, 0.8, 0.95 and 1.0 (20,000 tests per rate [2,000]): adaptive sampling against the
//!   fixed-sample test with the same α, β and δ (target: at least 30% fewer on average), and
//!   `early_stop` against plain `runs = 5, pass_threshold = 0.8`.
//! - `nextest_ms_per_trial`: a suite of 100 [50] and one of 2,000 [400] one-call cases at zero latency,
//!   recorded once, then replayed (`PROMPT_TESTER_CASSETTE=replay`, `CI=1`, no cassette index at the
//!   start) by `cargo nextest run` (a process per trial) with the JSON, JUnit and HTML reports asked
//!   for, then rendered by `cargo prompt-tester report`: milliseconds per trial, process starts
//!   included, the median of 3 runs each, and the ratio of the medians (target: at most 1.3).
//! - `endpoint_added_ms_per_call`: 1,000 calls [200] of one `#[prompt_test]` at zero latency, cassettes
//!   off, made by the harness and then by a `run_fn`'s own reqwest client through the recording
//!   endpoint: the difference of the two runs' harness wall times per call.
//!   `endpoint_replay_calls_per_s`: those calls recorded through the endpoint, then replayed with
//!   `PROMPT_TESTER_CASSETTE=replay` while the server is stopped (the child's wall time).
//!   `endpoint_inflight_efficiency`: the same calls through the endpoint at 200 ms [100 ms]: ideal wall
//!   time (calls x latency / C) over the measured one.
//! - (table only) `record_entries_per_s`: the in-flight scenario's calls recorded with `--record` into
//!   one new suite cassette at zero latency.
//!
//! Results and the machine they were taken on: `docs/benchmarks.md`.
//!
//! Targets are reported, not asserted: the program exits 0 when a figure misses its target, and
//! non-zero when a scenario itself breaks (a trial fails, a call is missing, the child crashes).
//!
//! One module per scenario (`inflight.rs`, `ratelimit.rs`, `overhead.rs`, `replay.rs`, `record.rs`,
//! `app_calls.rs`, `judge.rs`, `dataset.rs`, `estimate.rs`, `html.rs`, `nextest.rs`, `sampling.rs`): how it runs, and what it reports (its figures
//! and its explanatory line, as data). `common.rs` writes the crate roots and runs the children,
//! `child.rs` is the child's side, `results.rs` the form of a report and the table and JSON line
//! rendered from the reports.

mod app_calls;
#[path = "../../tests/common/big_report.rs"]
mod big_report;
mod child;
mod common;
mod dataset;
mod estimate;
mod html;
mod inflight;
mod judge;
mod nextest;
mod overhead;
mod ratelimit;
mod record;
mod replay;
mod results;
mod sampling;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use prompt_tester::Config;

use child::child;
use common::Size;
use results::Results;
use sampling::Sampling;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--scenario") {
        return child(args);
    }
    // The nextest scenario's test target runs this binary as its harness.
    if args.first().map(String::as_str) == Some("--harness") {
        return prompt_tester::Harness::new()
            .run_with_args(std::iter::once("prompts".to_string()).chain(args.into_iter().skip(1)));
    }
    match Options::parse(&args) {
        Ok(Some(options)) => parent(options),
        Ok(None) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

const USAGE: &str = "usage: cargo run --release --example bench -- [--quick] [--latency-ms N] \
[--judge-latency-ms N] [--concurrency N] [--keep] [--only nextest|app_calls]

  --quick              smaller counts (200 calls at 100 ms, 2,000 trials, 2,000 replayed entries)
  --latency-ms N       the provider's latency in the in-flight scenario (default 200, quick 100)
  --judge-latency-ms N the judge's latency (default 200, quick 100)
  --concurrency N      calls in flight (default: the harness's default)
  --keep               keep the scenario directories (crate roots, suites, outputs) for inspection
  --only nextest       run the nextest scenario alone (100 and 2,000 trials, quick 50 and 400)
  --only app_calls     run the endpoint scenario alone (1,000 calls, quick 200)";

/// What the parent measures, from the command line.
#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    inflight: Size,
    latency: Duration,
    overhead_trials: usize,
    /// The nextest scenario's small and large suites.
    nextest_trials: (usize, usize),
    /// `--only nextest`.
    only_nextest: bool,
    /// `--only app_calls`.
    only_app_calls: bool,
    replay: Size,
    judge_latency: Duration,
    /// `None`: the harness's default, as a user gets it.
    concurrency: Option<usize>,
    keep: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Option<Self>, String> {
        let quick = args.iter().any(|a| a == "--quick");
        let mut options = if quick {
            Self {
                quick,
                inflight: Size::new(40, 5),
                latency: Duration::from_millis(100),
                overhead_trials: 2_000,
                nextest_trials: (50, 400),
                only_nextest: false,
                only_app_calls: false,
                replay: Size::new(400, 5),
                judge_latency: Duration::from_millis(100),
                concurrency: None,
                keep: false,
            }
        } else {
            Self {
                quick,
                inflight: Size::new(200, 5),
                latency: Duration::from_millis(200),
                overhead_trials: 10_000,
                nextest_trials: (100, 2_000),
                only_nextest: false,
                only_app_calls: false,
                replay: Size::new(2_000, 5),
                judge_latency: Duration::from_millis(200),
                concurrency: None,
                keep: false,
            }
        };
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let mut number = |flag: &str| -> Result<u64, String> {
                let value = iter
                    .next()
                    .ok_or_else(|| format!("{flag} needs a number"))?;
                value
                    .parse()
                    .map_err(|_| format!("{flag} {value:?} is not a whole number"))
            };
            match arg.as_str() {
                "--quick" => {}
                "--keep" => options.keep = true,
                "--only" => match iter.next().map(String::as_str) {
                    Some("nextest") => options.only_nextest = true,
                    Some("app_calls") => options.only_app_calls = true,
                    other => {
                        return Err(format!(
                            "--only {other:?}: the scenarios run alone are `nextest` and `app_calls`"
                        ));
                    }
                },
                "--latency-ms" => options.latency = Duration::from_millis(number(arg)?),
                "--judge-latency-ms" => options.judge_latency = Duration::from_millis(number(arg)?),
                "--concurrency" => match number(arg)? {
                    0 => return Err("--concurrency must be at least 1".into()),
                    n => options.concurrency = Some(n as usize),
                },
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(Some(options))
    }

    /// The calls in flight the harness allows: the override, else its default.
    fn concurrency(&self) -> usize {
        self.concurrency
            .unwrap_or_else(|| Config::defaults(".").concurrency())
    }
}

fn parent(options: Options) -> ExitCode {
    let base = std::env::temp_dir().join(format!("prompt-tester-bench-{}", std::process::id()));
    let bench = Bench {
        options: options.clone(),
        base: base.clone(),
    };
    let started = Instant::now();
    let mode = if options.quick { "quick" } else { "full" };
    println!(
        "prompt-tester benchmark ({mode}); concurrency C = {}; scenario directories under {}",
        options.concurrency(),
        base.display()
    );
    let outcome = bench.run_all();
    if options.keep {
        println!("kept {}", base.display());
    } else {
        let _ = std::fs::remove_dir_all(&base);
    }
    match outcome {
        Ok(results) => {
            print!("{}", results.table(&options));
            println!(
                "(all scenarios in {:.1} s)",
                started.elapsed().as_secs_f64()
            );
            println!("{}", results.json(mode));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: a benchmark scenario failed: {message}");
            ExitCode::FAILURE
        }
    }
}

struct Bench {
    options: Options,
    base: PathBuf,
}

impl Bench {
    fn run_all(&self) -> Result<Results, String> {
        std::fs::create_dir_all(&self.base).map_err(|e| format!("{}: {e}", self.base.display()))?;
        if self.options.only_nextest {
            return Ok(Results(vec![self.nextest()?]));
        }
        if self.options.only_app_calls {
            return Ok(Results(vec![self.app_calls()?]));
        }
        let inflight = self.inflight()?;
        let ratelimit = self.ratelimit()?;
        let (overhead, peak_rss) = self.overhead()?;
        let replay = self.replay()?;
        let record = self.record()?;
        let app_calls = self.app_calls()?;
        // In the order of the lines below the table and of the JSON line.
        Ok(Results(vec![
            inflight,
            ratelimit,
            overhead,
            replay,
            record,
            app_calls,
            peak_rss,
            self.judge()?,
            self.dataset()?,
            self.estimate()?,
            self.html()?,
            self.nextest()?,
            Sampling::simulate(if self.options.quick { 2_000 } else { 20_000 }).report(),
        ]))
    }
}
