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
//! - `html_report`: the HTML report (`--html`) of a synthetic 1,000-trial, 5-sample run (the same in
//!   quick mode), written in process: its size and the time to write it. The browser test
//!   (`tests/suites/html.rs`) loads that report in Chromium and prints its load time.
//! - `sampling`: mean calls per decided test, simulated with the harness's wave rule on prompts that pass
//!   at 0.5, 0.8, 0.95 and 1.0 (20,000 tests per rate [2,000]): adaptive sampling against the
//!   fixed-sample test with the same α, β and δ (target: at least 30% fewer on average), and
//!   `early_stop` against plain `runs = 5, pass_threshold = 0.8`.
//! - (table only) `record_entries_per_s`: the in-flight scenario's calls recorded with `--record` into
//!   one new suite cassette at zero latency.
//!
//! Results and the machine they were taken on: `docs/benchmarks.md`.
//!
//! Targets are reported, not asserted: the program exits 0 when a figure misses its target, and
//! non-zero when a scenario itself breaks (a trial fails, a call is missing, the child crashes).

#[path = "../tests/common/big_report.rs"]
mod big_report;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use prompt_tester::prelude::*;
use prompt_tester::testing::cassette::{CassetteStore, Entry, entry_key, now_rfc3339};
use prompt_tester::{CompletionRequest, Config, Harness};
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Wire};
use serde_json::{Value, json};

/// The provider name, model and prompt of the generated suites.
const PROVIDER: &str = "bench";
const MODEL: &str = "bench-model";
const JUDGE_MODEL: &str = "bench-judge";
const SUITE: &str = "bench";
const PROMPT: &str = "Case {n}: repeat the customer's message. {text}";
const MAX_TOKENS: u32 = 64;
/// The trial of the judge scenario (a `#[prompt_test]` in this file); other scenarios skip it.
const JUDGE_TRIAL: &str = "judge_timing";
const QUESTIONS: [&str; 5] = [
    "Does the response repeat the customer's message?",
    "Does the response avoid mentioning prices?",
    "Is the response a single paragraph?",
    "Is the tone of the response neutral?",
    "Does the response mention the case number?",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--scenario") {
        return child(args);
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
[--judge-latency-ms N] [--concurrency N] [--keep]

  --quick              smaller counts (200 calls at 100 ms, 2,000 trials, 2,000 replayed entries)
  --latency-ms N       the provider's latency in the in-flight scenario (default 200, quick 100)
  --judge-latency-ms N the judge's latency (default 200, quick 100)
  --concurrency N      calls in flight (default: the harness's default)
  --keep               keep the scenario directories (crate roots, suites, outputs) for inspection";

/// What the parent measures, from the command line.
#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    inflight_cases: usize,
    inflight_runs: u32,
    latency: Duration,
    overhead_trials: usize,
    replay_cases: usize,
    replay_runs: u32,
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
                inflight_cases: 40,
                inflight_runs: 5,
                latency: Duration::from_millis(100),
                overhead_trials: 2_000,
                replay_cases: 400,
                replay_runs: 5,
                judge_latency: Duration::from_millis(100),
                concurrency: None,
                keep: false,
            }
        } else {
            Self {
                quick,
                inflight_cases: 200,
                inflight_runs: 5,
                latency: Duration::from_millis(200),
                overhead_trials: 10_000,
                replay_cases: 2_000,
                replay_runs: 5,
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
            .unwrap_or_else(|| Config::defaults(".").concurrency)
    }
}

// ---------------------------------------------------------------------------------------------------
// The child: one scenario through the real harness.
// ---------------------------------------------------------------------------------------------------

/// The judge timings the `judge_timing` test leaves for the child to report.
static JUDGE_TIMES: Mutex<Option<Value>> = Mutex::new(None);

/// `--scenario NAME --out FILE -- HARNESS ARGS...`: runs the harness, then writes what it measured.
fn child(args: Vec<String>) -> ExitCode {
    let (Some(name), Some(out)) = (
        args.get(1),
        args.iter()
            .position(|a| a == "--out")
            .and_then(|i| args.get(i + 1)),
    ) else {
        eprintln!("error: --scenario NAME --out FILE -- ARGS...");
        return ExitCode::from(2);
    };
    let harness_args: Vec<String> = match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].to_vec(),
        None => Vec::new(),
    };
    let cpu_before = cpu_ms();
    let started = Instant::now();
    let code =
        Harness::new().run_with_args(std::iter::once(format!("bench-{name}")).chain(harness_args));
    let wall = started.elapsed();
    let measured = json!({
        "scenario": name,
        "harness_wall_ms": wall.as_secs_f64() * 1e3,
        "cpu_ms": cpu_ms().zip(cpu_before).map(|(after, before)| after - before),
        "vm_hwm_kb": vm_hwm_kb(),
        "judge": JUDGE_TIMES.lock().unwrap_or_else(|e| e.into_inner()).take(),
    });
    if let Err(e) = std::fs::write(out, measured.to_string()) {
        eprintln!("error: cannot write {out}: {e}");
        return ExitCode::from(2);
    }
    code
}

/// Peak resident memory of this process, in KiB (Linux).
fn vm_hwm_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User plus system CPU time of this process (every thread), in milliseconds (Linux).
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; the fields after it are space-separated.
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // /proc reports clock ticks of USER_HZ, which Linux fixes at 100 for user space.
    Some(ticks * 10.0)
}

/// The judge scenario's test: 5 questions three ways, each timed. Every verdict must come back "yes"
/// (the fake judge says so), which checks that the calls really were judged.
#[prompt_test(
    target_prompt = "Repeat the customer's message: the parcel for case 17 has not arrived."
)]
async fn judge_timing(run: PromptRun) -> anyhow::Result<()> {
    let started = Instant::now();
    for question in QUESTIONS {
        let verdict = run.ask(question).await?;
        anyhow::ensure!(
            verdict.passed,
            "ask({question:?}) did not pass: {verdict:?}"
        );
    }
    let sequential = started.elapsed();

    let started = Instant::now();
    let verdicts = run.ask_all(&QUESTIONS).await?;
    let all = started.elapsed();
    anyhow::ensure!(
        verdicts.len() == QUESTIONS.len() && verdicts.iter().all(|v| v.passed),
        "ask_all: {verdicts:?}"
    );

    let started = Instant::now();
    let verdicts = run.ask_parallel(&QUESTIONS).await?;
    let parallel = started.elapsed();
    anyhow::ensure!(
        verdicts.len() == QUESTIONS.len() && verdicts.iter().all(|v| v.passed),
        "ask_parallel: {verdicts:?}"
    );

    let ms = |d: Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
    *JUDGE_TIMES.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(json!({ "ask": ms(sequential), "ask_all": ms(all), "ask_parallel": ms(parallel) }));
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// The parent: scenarios, checks, the table.
// ---------------------------------------------------------------------------------------------------

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

/// What one child run produced.
struct ChildRun {
    /// The child's wall time from spawn to exit, as the parent saw it.
    wall: Duration,
    /// The child's own measurements.
    measured: Value,
    /// libtest's `test result:` counts.
    passed: usize,
    failed: usize,
}

/// Every scenario's figures.
struct Results {
    inflight: Inflight,
    ratelimit: RateLimit,
    overhead: Overhead,
    replay: Replay,
    record: Record,
    judge: Judge,
    dataset: DatasetFigures,
    html: HtmlReport,
    sampling: Sampling,
}

/// The true pass rates of the simulated prompts.
const SAMPLING_RATES: [f64; 4] = [0.5, 0.8, 0.95, 1.0];
/// The runs and threshold of the early-stop comparison (the README's example), and the wave limit
/// (the `local` endpoint's `max_in_flight`).
const EARLY_RUNS: u32 = 5;
const EARLY_THRESHOLD: f64 = 0.8;
const SAMPLING_CONCURRENCY: u32 = 4;

/// Calls per decided test, simulated with the harness's own wave rule (`next_wave`) on prompts whose
/// samples pass at a known rate (a fixed RNG seed): adaptive sampling (`pass_rate = 0.8`, defaults
/// δ = 0.05, 95%, not truncated: `max_runs` 10,000) against the fixed-sample test with the same α, β
/// and δ (its N from `stats::sprt`), and `early_stop` against plain `runs = 5, pass_threshold = 0.8`.
struct Sampling {
    tests: u32,
    fixed_n: u32,
    /// Per rate: mean calls, share passed.
    adaptive: Vec<(f64, f64)>,
    early: Vec<(f64, f64)>,
}

impl Sampling {
    fn simulate(tests: u32) -> Self {
        use prompt_tester::testing::sampling::{
            SampleOutcome, SamplePlan, Sprt, Threshold, next_wave,
        };
        use rand::{Rng, SeedableRng, rngs::StdRng};
        eprintln!("[sampling] {tests} simulated tests per pass rate");
        let sprt = Sprt::new(0.8, 0.05, 0.95, 10_000).expect("valid");
        let adaptive = SamplePlan::Adaptive(sprt);
        let early = SamplePlan::EarlyStop(Threshold {
            runs: EARLY_RUNS,
            pass_threshold: EARLY_THRESHOLD,
        });
        let mut rng = StdRng::seed_from_u64(13);
        // Runs one test wave by wave: (calls, passed).
        let mut run = |plan: &SamplePlan, p: f64| {
            let mut taken: Vec<SampleOutcome> = Vec::new();
            loop {
                let refs: Vec<&SampleOutcome> = taken.iter().collect();
                let wave = next_wave(plan, &refs, SAMPLING_CONCURRENCY);
                if wave == 0 {
                    break;
                }
                for _ in 0..wave {
                    taken.push(if rng.random_bool(p) {
                        SampleOutcome::Passed
                    } else {
                        SampleOutcome::Failed("no".into())
                    });
                }
            }
            let passed = taken
                .iter()
                .filter(|o| **o == SampleOutcome::Passed)
                .count() as u32;
            let decided_pass = match plan {
                SamplePlan::Adaptive(s) => {
                    s.verdict(passed, taken.len() as u32 - passed)
                        == prompt_tester::testing::stats::sprt::SprtVerdict::Pass
                }
                _ => {
                    passed
                        >= Threshold {
                            runs: EARLY_RUNS,
                            pass_threshold: EARLY_THRESHOLD,
                        }
                        .required()
                }
            };
            (taken.len() as u32, decided_pass)
        };
        let mut measure = |plan: &SamplePlan| -> Vec<(f64, f64)> {
            SAMPLING_RATES
                .iter()
                .map(|&p| {
                    let (mut calls, mut passes) = (0u64, 0u32);
                    for _ in 0..tests {
                        let (c, passed) = run(plan, p);
                        calls += u64::from(c);
                        passes += u32::from(passed);
                    }
                    (
                        calls as f64 / f64::from(tests),
                        f64::from(passes) / f64::from(tests),
                    )
                })
                .collect()
        };
        let adaptive = measure(&adaptive);
        let early = measure(&early);
        Sampling {
            tests,
            fixed_n: sprt.fixed_sample_size(),
            adaptive,
            early,
        }
    }

    fn mean(rows: &[(f64, f64)]) -> f64 {
        rows.iter().map(|(calls, _)| calls).sum::<f64>() / rows.len() as f64
    }

    /// The share of calls adaptive sampling saves over the fixed N, averaged over the rates.
    fn adaptive_saving(&self) -> f64 {
        1.0 - Self::mean(&self.adaptive) / f64::from(self.fixed_n)
    }

    fn early_saving(&self) -> f64 {
        1.0 - Self::mean(&self.early) / f64::from(EARLY_RUNS)
    }
}

/// Rows in the dataset scenario (both modes: listing them is the figure, and it is quick).
const DATASET_ROWS: usize = 5_000;

struct DatasetFigures {
    rows: usize,
    list: Duration,
    list_harness_ms: f64,
    exact: Duration,
    exact_harness_ms: f64,
}

/// The HTML report of a synthetic run.
struct HtmlReport {
    trials: usize,
    samples: u32,
    bytes: u64,
    write: Duration,
}

/// Trials and samples of the synthetic run whose HTML report is measured.
const HTML_TRIALS: usize = 1000;
const HTML_SAMPLES: u32 = 5;

struct Record {
    entries: usize,
    wall: Duration,
}

/// The provider's concurrency limit in the rate-limit scenario, its latency and its `retry-after`.
const RATELIMIT_ALLOWED: usize = 4;
const RATELIMIT_LATENCY: Duration = Duration::from_millis(100);
const RATELIMIT_RETRY_AFTER: Duration = Duration::from_millis(500);
const RATELIMIT_CASES: usize = 20;
const RATELIMIT_RUNS: u32 = 5;

struct RateLimit {
    calls: usize,
    wall: Duration,
    rejected: usize,
    /// The summary's `rate limits: ...` line.
    summary: String,
}

impl RateLimit {
    fn ideal(&self) -> Duration {
        RATELIMIT_LATENCY.mul_f64(self.calls as f64 / RATELIMIT_ALLOWED as f64)
    }

    fn slowdown(&self) -> f64 {
        self.wall.as_secs_f64() / self.ideal().as_secs_f64()
    }
}

struct Inflight {
    calls: usize,
    latency: Duration,
    concurrency: usize,
    wall: Duration,
    max_in_flight: usize,
}

impl Inflight {
    fn ideal(&self) -> Duration {
        self.latency
            .mul_f64(self.calls as f64 / self.concurrency as f64)
    }

    /// The least wall time possible when every call takes exactly `latency`: whole rounds of C calls
    /// (the last round is not full).
    fn whole_rounds(&self) -> Duration {
        self.latency
            .mul_f64(self.calls.div_ceil(self.concurrency) as f64)
    }

    fn efficiency(&self) -> f64 {
        self.ideal().as_secs_f64() / self.wall.as_secs_f64()
    }
}

struct Overhead {
    trials: usize,
    wall: Duration,
    harness_wall_ms: f64,
    cpu_ms: Option<f64>,
    rss_kb: Option<u64>,
}

impl Overhead {
    fn us_per_trial(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.trials as f64
    }
}

struct Replay {
    entries: usize,
    cassette_bytes: u64,
    wall: Duration,
    rss_kb: Option<u64>,
}

impl Replay {
    fn per_s(&self) -> f64 {
        self.entries as f64 / self.wall.as_secs_f64()
    }
}

struct Judge {
    latency: Duration,
    ask: f64,
    ask_all: f64,
    ask_parallel: f64,
}

impl Bench {
    fn run_all(&self) -> Result<Results, String> {
        std::fs::create_dir_all(&self.base).map_err(|e| format!("{}: {e}", self.base.display()))?;
        let inflight = self.inflight()?;
        let ratelimit = self.ratelimit()?;
        let overhead = self.overhead()?;
        let replay = self.replay()?;
        let record = self.record()?;
        let judge = self.judge()?;
        let dataset = self.dataset()?;
        let html = self.html()?;
        let sampling = Sampling::simulate(if self.options.quick { 2_000 } else { 20_000 });
        Ok(Results {
            inflight,
            ratelimit,
            overhead,
            replay,
            record,
            judge,
            dataset,
            html,
            sampling,
        })
    }

    /// A 5,000-row golden dataset listed whole, then with `--exact` naming one row.
    fn dataset(&self) -> Result<DatasetFigures, String> {
        let rows = DATASET_ROWS;
        eprintln!("[dataset] a {rows}-row JSON Lines dataset listed, then one row with --exact");
        let root = self.crate_root("dataset", "http://127.0.0.1:9/v1", 1, 1)?;
        let suites = root.join("prompt-tests");
        write_file(
            &suites.join("golden.evals.toml"),
            "# Written by examples/bench.rs.\nprompt = \"Case {n}: {text}\"\ncases_file = \"golden.jsonl\"\n\
             assert = [{ icontains = \"{expected}\" }, { regex = '^Case {n}:' }, { max_words = 40 }]\n",
        )?;
        let mut jsonl = String::from("{\"dataset_version\": \"bench\"}\n");
        for i in 1..=rows {
            let (n, text) = case_inputs(i);
            let mut row = json!({ "id": case_name(i), "category": format!("c{}", i % 7), "expected": format!("A-{i:05}"), "n": n, "text": text });
            if i % 2 == 0 {
                row["assert"] = json!([{ "contains": "{n}" }, { "not_contains": "refund" }]);
            }
            writeln!(jsonl, "{row}").ok();
        }
        write_file(&suites.join("golden.jsonl"), &jsonl)?;
        let listed = |run: &ChildRun, stdout: &str, want: usize| -> Result<(), String> {
            let n = stdout
                .lines()
                .filter(|l| l.starts_with("golden::") && l.ends_with(": test"))
                .count();
            if n == want {
                Ok(())
            } else {
                Err(format!(
                    "dataset: listed {n} rows, expected {want} (wall {:?})",
                    run.wall
                ))
            }
        };
        let stdout =
            |root: &Path| std::fs::read_to_string(root.join("stdout.txt")).unwrap_or_default();
        let list = self.run_child("dataset", &root, &[], &["--list"])?;
        listed(&list, &stdout(&root), rows)?;
        let last = format!("golden::{}", case_name(rows));
        let exact = self.run_child("dataset", &root, &[], &["--list", "--exact", &last])?;
        listed(&exact, &stdout(&root), 1)?;
        let harness_ms =
            |run: &ChildRun| run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN);
        Ok(DatasetFigures {
            rows,
            list: list.wall,
            list_harness_ms: harness_ms(&list),
            exact: exact.wall,
            exact_harness_ms: harness_ms(&exact),
        })
    }

    /// Writes the HTML report of a synthetic run: how big, how long.
    fn html(&self) -> Result<HtmlReport, String> {
        let records = big_report::records(HTML_TRIALS, HTML_SAMPLES);
        let path = self.base.join("report.html");
        let started = Instant::now();
        prompt_tester::testing::write_html(
            &path,
            &records,
            &prompt_tester::testing::RunInfo::default(),
            &prompt_tester::testing::Extras::default(),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let write = started.elapsed();
        let bytes = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        Ok(HtmlReport {
            trials: HTML_TRIALS,
            samples: HTML_SAMPLES,
            bytes,
            write,
        })
    }

    /// Many calls at a fixed latency: does the harness keep C calls in flight all the time?
    fn inflight(&self) -> Result<Inflight, String> {
        let o = &self.options;
        let calls = o.inflight_cases * o.inflight_runs as usize;
        eprintln!(
            "[inflight] {calls} calls ({} cases x {} runs) at {:?}",
            o.inflight_cases, o.inflight_runs, o.latency
        );
        let server = counting_server(o.latency);
        let root = self.crate_root(
            "inflight",
            &server.base_url(Wire::OpenAi),
            o.inflight_cases,
            o.inflight_runs,
        )?;
        let run = self.run_live("inflight", &root, o.inflight_cases)?;
        expect_requests("inflight", &server, calls)?;
        Ok(Inflight {
            calls,
            latency: o.latency,
            concurrency: o.concurrency(),
            wall: run.wall,
            max_in_flight: server.max_concurrent(),
        })
    }

    /// A provider that limits concurrency: the run must slow down to what it allows, not fail.
    fn ratelimit(&self) -> Result<RateLimit, String> {
        let calls = RATELIMIT_CASES * RATELIMIT_RUNS as usize;
        eprintln!(
            "[ratelimit] {calls} calls ({RATELIMIT_CASES} cases x {RATELIMIT_RUNS} runs) at {RATELIMIT_LATENCY:?}; \
             429 (retry-after {RATELIMIT_RETRY_AFTER:?}) beyond {RATELIMIT_ALLOWED} in flight"
        );
        let server = FakeProvider::builder()
            .latency(RATELIMIT_LATENCY)
            .reject_beyond(RATELIMIT_ALLOWED, RATELIMIT_RETRY_AFTER)
            .capture(false)
            .start();
        let root = self.crate_root(
            "ratelimit",
            &server.base_url(Wire::OpenAi),
            RATELIMIT_CASES,
            RATELIMIT_RUNS,
        )?;
        let run = self.run_live("ratelimit", &root, RATELIMIT_CASES)?;
        expect_requests("ratelimit", &server, calls + server.rejected())?;
        let stderr = std::fs::read_to_string(root.join("stderr.txt")).unwrap_or_default();
        let summary = stderr
            .lines()
            .find(|l| l.starts_with("rate limits: "))
            .unwrap_or("(no rate-limit line in the summary)")
            .to_string();
        Ok(RateLimit {
            calls,
            wall: run.wall,
            rejected: server.rejected(),
            summary,
        })
    }

    /// Many one-call trials at zero latency: what the harness itself costs per trial, and its memory.
    fn overhead(&self) -> Result<Overhead, String> {
        let trials = self.options.overhead_trials;
        eprintln!("[overhead] {trials} trials of one call at zero latency, cassettes off");
        let server = counting_server(Duration::ZERO);
        let root = self.crate_root("overhead", &server.base_url(Wire::OpenAi), trials, 1)?;
        let run = self.run_live("overhead", &root, trials)?;
        expect_requests("overhead", &server, trials)?;
        Ok(Overhead {
            trials,
            wall: run.wall,
            harness_wall_ms: run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN),
            cpu_ms: run.measured["cpu_ms"].as_f64(),
            rss_kb: run.measured["vm_hwm_kb"].as_u64(),
        })
    }

    /// A cassette with many entries, replayed offline: the server is stopped before the run, so a call
    /// that was not replayed fails its trial (replay mode fails a missing recording anyway).
    fn replay(&self) -> Result<Replay, String> {
        let (cases, runs) = (self.options.replay_cases, self.options.replay_runs);
        let entries = cases * runs as usize;
        eprintln!(
            "[replay] {entries} cassette entries ({cases} cases x {runs} runs), server stopped"
        );
        let stopped = FakeProvider::builder().capture(false).start();
        let url = stopped.base_url(Wire::OpenAi);
        stopped.shutdown();
        let root = self.crate_root("replay", &url, cases, runs)?;
        let cassette_bytes = write_cassette(&root, cases, runs)?;
        let run = self.run_child(
            "replay",
            &root,
            &[("PROMPT_TESTER_CASSETTE", "replay")],
            &["--skip", JUDGE_TRIAL],
        )?;
        expect_passed("replay", &run, cases)?;
        Ok(Replay {
            entries,
            cassette_bytes,
            wall: run.wall,
            rss_kb: run.measured["vm_hwm_kb"].as_u64(),
        })
    }

    /// The in-flight scenario's calls recorded into a new cassette at zero latency (`--record`): what
    /// writing recordings costs.
    fn record(&self) -> Result<Record, String> {
        let (cases, runs) = (self.options.inflight_cases, self.options.inflight_runs);
        let entries = cases * runs as usize;
        eprintln!(
            "[record] {entries} calls ({cases} cases x {runs} runs) recorded at zero latency"
        );
        let server = counting_server(Duration::ZERO);
        let root = self.crate_root("record", &server.base_url(Wire::OpenAi), cases, runs)?;
        let run = self.run_child("record", &root, &[], &["--record", "--skip", JUDGE_TRIAL])?;
        expect_passed("record", &run, cases)?;
        expect_requests("record", &server, entries)?;
        let path = CassetteStore::new(root.join("prompt-tests").join("cassettes")).path_for(SUITE);
        let recorded = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["entries"].as_array().map(Vec::len));
        if recorded != Some(entries) {
            return Err(format!(
                "record: {} holds {recorded:?} entries; expected {entries}",
                path.display()
            ));
        }
        Ok(Record {
            entries,
            wall: run.wall,
        })
    }

    /// Five judge questions three ways, against a judge with a fixed latency.
    fn judge(&self) -> Result<Judge, String> {
        let latency = self.options.judge_latency;
        eprintln!(
            "[judge] {} questions: ask x {}, ask_all, ask_parallel at {latency:?}",
            QUESTIONS.len(),
            QUESTIONS.len()
        );
        let server = FakeProvider::builder()
            .respond_with(move |r| judge_reply(r).delayed(latency))
            .capture(false)
            .start();
        let root = self.crate_root("judge", &server.base_url(Wire::OpenAi), 1, 1)?;
        let run = self.run_child(
            "judge",
            &root,
            &[],
            &["--no-cassette", "--exact", JUDGE_TRIAL],
        )?;
        expect_passed("judge", &run, 1)?;
        // One subject call, 5 asks, 1 ask_all, 5 parallel asks.
        expect_requests("judge", &server, 1 + 2 * QUESTIONS.len() + 1)?;
        let times = &run.measured["judge"];
        let get = |key: &str| {
            times[key]
                .as_f64()
                .ok_or_else(|| format!("judge: the child reported no {key} time"))
        };
        Ok(Judge {
            latency,
            ask: get("ask")?,
            ask_all: get("ask_all")?,
            ask_parallel: get("ask_parallel")?,
        })
    }

    /// A crate root for a scenario: `prompt-tester.toml` naming the provider at `url`, and a suite of
    /// `cases` cases of `runs` runs each.
    fn crate_root(
        &self,
        name: &str,
        url: &str,
        cases: usize,
        runs: u32,
    ) -> Result<PathBuf, String> {
        let root = self.base.join(name);
        let suites = root.join("prompt-tests");
        std::fs::create_dir_all(&suites).map_err(|e| format!("{}: {e}", suites.display()))?;
        let mut config = String::from("# Written by examples/bench.rs.\n");
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
            &suite_toml(cases, runs),
        )?;
        Ok(root)
    }

    /// Runs scenario `name` against its provider, cassettes off and the judge trial skipped: each of
    /// the `cases` trials must pass.
    fn run_live(&self, name: &str, root: &Path, cases: usize) -> Result<ChildRun, String> {
        let run = self.run_child(name, root, &[], &["--no-cassette", "--skip", JUDGE_TRIAL])?;
        expect_passed(name, &run, cases)?;
        Ok(run)
    }

    /// Runs scenario `name` in a child process rooted at `root` with `env` and the harness `args`.
    fn run_child(
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
        // `--list` prints no `test result:` line: nothing ran.
        let counts = if args.contains(&"--list") {
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

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The generated suite: `cases` cases with their own inputs, each checked against its own answer.
fn suite_toml(cases: usize, runs: u32) -> String {
    let mut toml = format!(
        "# Written by examples/bench.rs.\nprompt = {prompt:?}\nmax_tokens = {MAX_TOKENS}\nruns = {runs}\n",
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

fn case_name(i: usize) -> String {
    format!("case_{i:05}")
}

fn case_inputs(i: usize) -> (String, String) {
    (
        i.to_string(),
        format!(
            "Order A-{i:05} arrived damaged; the customer asks for a replacement before Friday."
        ),
    )
}

/// Writes the suite's cassette as the engine would have recorded it (same keys, same file format), and
/// returns its size.
fn write_cassette(root: &Path, cases: usize, runs: u32) -> Result<u64, String> {
    let store = CassetteStore::new(root.join("prompt-tests").join("cassettes"));
    let path = store.path_for(SUITE);
    let recorded_at = now_rfc3339();
    let mut entries = Vec::with_capacity(cases * runs as usize);
    for i in 1..=cases {
        let (n, text) = case_inputs(i);
        let prompt =
            prompt_tester::testing::render::render(PROMPT, &[("n", n), ("text", text)]).text;
        let request = CompletionRequest::new(MODEL, prompt.clone(), MAX_TOKENS);
        for run in 1..=runs {
            let answer = format!("echo: {prompt}");
            let mut response = CompletionResult::new(answer, (prompt.len() / 4) as u64, 20);
            response.stop_reason = Some("stop".into());
            response.model_used = Some(MODEL.into());
            response.request_id = Some(format!("chatcmpl-bench-{i}-{run}"));
            entries.push(Entry {
                key: entry_key(PROVIDER, &request, run),
                test: format!("{SUITE}::{}", case_name(i)),
                run,
                role: prompt_tester::testing::cassette::CallRole::Subject,
                provider: PROVIDER.into(),
                model: MODEL.into(),
                call: prompt_tester::testing::cassette::Exchange::Completion {
                    request: request.clone(),
                    response,
                },
                latency_ms: 180,
                recorded_at: recorded_at.clone(),
            });
        }
    }
    let body = json!({ "version": 1, "entries": entries });
    let text = serde_json::to_string_pretty(&body).map_err(|e| e.to_string())? + "\n";
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    write_file(&path, &text)?;
    Ok(text.len() as u64)
}

/// The fake judge: a verdict of "yes" for each question asked, in the schema the request names; the
/// subject's call gets a plain answer.
fn judge_reply(request: &CapturedRequest) -> Reply {
    if !request.wants_structured() {
        return Reply::answer(
            request,
            &format!("echo: {}", request.last_user_text().unwrap_or_default()),
        );
    }
    let verdict = |index: Option<usize>| {
        let mut v = json!({
            "question_type": "factual_presence",
            "reasoning": "The response repeats the customer's message.",
            "snippet": null,
            "answer": "yes",
        });
        if let Some(i) = index {
            v["index"] = json!(i);
        }
        v
    };
    let schema = request
        .json
        .as_ref()
        .and_then(|j| j["response_format"]["json_schema"]["name"].as_str());
    let value = match schema {
        Some("judge_verdicts") => {
            json!({ "verdicts": (1..=QUESTIONS.len()).map(|i| verdict(Some(i))).collect::<Vec<_>>() })
        }
        _ => verdict(None),
    };
    Reply::structured(request, &value)
}

/// `passed` and `failed` from libtest's `test result: ok. 3 passed; 0 failed; ...` line.
fn test_result(line: &str) -> Option<(usize, usize)> {
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
fn counting_server(latency: Duration) -> FakeProvider {
    FakeProvider::builder()
        .latency(latency)
        .capture(false)
        .start()
}

fn expect_passed(name: &str, run: &ChildRun, want: usize) -> Result<(), String> {
    if run.passed == want && run.failed == 0 {
        Ok(())
    } else {
        Err(format!(
            "{name}: {} trials passed and {} failed; expected {want} passed",
            run.passed, run.failed
        ))
    }
}

fn expect_requests(name: &str, server: &FakeProvider, want: usize) -> Result<(), String> {
    match server.request_count() {
        n if n == want => Ok(()),
        n => Err(format!(
            "{name}: the provider received {n} requests; expected {want}"
        )),
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn mb(kb: Option<u64>) -> Option<f64> {
    kb.map(|kb| (kb as f64 / 1024.0 * 10.0).round() / 10.0)
}

impl Results {
    fn table(&self, o: &Options) -> String {
        let rl = &self.ratelimit;
        let (i, ov, r, rec, j) = (
            &self.inflight,
            &self.overhead,
            &self.replay,
            &self.record,
            &self.judge,
        );
        let yes = |ok: bool| if ok { "yes" } else { "NO" };
        let rss = mb(ov.rss_kb);
        let d = &self.dataset;
        let rows: Vec<[String; 4]> = vec![
            [
                "inflight_efficiency".into(),
                format!("{:.3}", i.efficiency()),
                ">= 0.9".into(),
                yes(i.efficiency() >= 0.9).into(),
            ],
            [
                "ratelimit_slowdown".into(),
                format!("{:.2}", rl.slowdown()),
                "<= 1.5".into(),
                yes(rl.slowdown() <= 1.5).into(),
            ],
            [
                "overhead_us_per_trial".into(),
                format!("{:.0}", ov.us_per_trial()),
                "< 1000".into(),
                yes(ov.us_per_trial() < 1000.0).into(),
            ],
            [
                "replay_entries_per_s".into(),
                format!("{:.0}", r.per_s()),
                ">= 5000".into(),
                yes(r.per_s() >= 5000.0).into(),
            ],
            [
                "peak_rss_mb".into(),
                rss.map_or("n/a".into(), |m| format!("{m:.1}")),
                "< 200".into(),
                rss.map_or("n/a", |m| yes(m < 200.0)).into(),
            ],
            [
                "dataset_list_ms".into(),
                format!("{:.0}", d.list.as_secs_f64() * 1e3),
                "< 500".into(),
                yes(d.list < Duration::from_millis(500)).into(),
            ],
            [
                "dataset_exact_ms".into(),
                format!("{:.0}", d.exact.as_secs_f64() * 1e3),
                "< 100".into(),
                yes(d.exact < Duration::from_millis(100)).into(),
            ],
            [
                "record_entries_per_s (info)".into(),
                format!("{:.0}", rec.entries as f64 / rec.wall.as_secs_f64()),
                "-".into(),
                "-".into(),
            ],
            [
                "sampling.adaptive_saving".into(),
                format!("{:.0}%", self.sampling.adaptive_saving() * 100.0),
                ">= 30%".into(),
                yes(self.sampling.adaptive_saving() >= 0.3).into(),
            ],
            [
                "sampling.early_stop_saving (info)".into(),
                format!("{:.0}%", self.sampling.early_saving() * 100.0),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask (5 sequential)".into(),
                format!("{:.0}", j.ask),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask_all".into(),
                format!("{:.0}", j.ask_all),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask_parallel".into(),
                format!("{:.0}", j.ask_parallel),
                "-".into(),
                "-".into(),
            ],
            [
                format!(
                    "html_report_mb ({}x{})",
                    self.html.trials, self.html.samples
                ),
                format!("{:.2}", self.html.bytes as f64 / 1e6),
                "-".into(),
                "-".into(),
            ],
            [
                "html_report_write_ms".into(),
                format!("{:.0}", self.html.write.as_secs_f64() * 1000.0),
                "< 1000".into(),
                yes(self.html.write < Duration::from_secs(1)).into(),
            ],
        ];
        let mut out = String::from("\n");
        writeln!(
            out,
            "{:<30} {:>10}  {:>8}  {:>3}",
            "figure", "value", "target", "ok"
        )
        .ok();
        writeln!(out, "{}", "-".repeat(57)).ok();
        for [figure, value, target, ok] in rows {
            writeln!(out, "{figure:<30} {value:>10}  {target:>8}  {ok:>3}").ok();
        }
        let secs = |d: Duration| d.as_secs_f64();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(out).ok();
        writeln!(
            out,
            "inflight: {} calls at {:.0} ms, C = {}: ideal {:.2} s ({:.2} s in whole rounds of C calls), \
             measured {:.2} s; most calls in flight at the server: {}",
            i.calls,
            ms(i.latency),
            i.concurrency,
            secs(i.ideal()),
            secs(i.whole_rounds()),
            secs(i.wall),
            i.max_in_flight
        )
        .ok();
        writeln!(
            out,
            "ratelimit: {} calls at {:.0} ms, {} allowed in flight: ideal {:.2} s, measured {:.2} s \
             ({:.2}x), 0 failed; the provider answered {} requests 429; {}",
            rl.calls,
            ms(RATELIMIT_LATENCY),
            RATELIMIT_ALLOWED,
            secs(rl.ideal()),
            secs(rl.wall),
            rl.slowdown(),
            rl.rejected,
            rl.summary
        )
        .ok();
        writeln!(
            out,
            "overhead: {} trials at zero latency in {:.2} s ({:.2} s inside the harness); CPU {} per trial",
            ov.trials,
            secs(ov.wall),
            ov.harness_wall_ms / 1e3,
            ov.cpu_ms.map_or("n/a".into(), |c| format!("{:.0} us", c * 1e3 / ov.trials as f64)),
        )
        .ok();
        writeln!(
            out,
            "replay:   {} entries ({:.1} MB cassette) in {:.2} s; peak RSS {}",
            r.entries,
            r.cassette_bytes as f64 / 1e6,
            secs(r.wall),
            mb(r.rss_kb).map_or("n/a".into(), |m| format!("{m:.1} MB")),
        )
        .ok();
        writeln!(
            out,
            "record:   {} calls recorded into one new cassette at zero latency in {:.2} s",
            rec.entries,
            secs(rec.wall)
        )
        .ok();
        writeln!(
            out,
            "peak_rss_mb: the {}-trial run of the overhead scenario",
            ov.trials
        )
        .ok();
        writeln!(
            out,
            "judge:    {} questions at {:.0} ms: ask one by one {:.0} ms, ask_all {:.0} ms, ask_parallel {:.0} ms",
            QUESTIONS.len(),
            ms(j.latency),
            j.ask,
            j.ask_all,
            j.ask_parallel
        )
        .ok();
        writeln!(
            out,
            "dataset:  {} JSON Lines rows listed in {:.0} ms ({:.0} ms inside the harness); --exact one row \
             {:.0} ms ({:.1} ms inside)",
            d.rows,
            ms(d.list),
            d.list_harness_ms,
            ms(d.exact),
            d.exact_harness_ms
        )
        .ok();
        let sm = &self.sampling;
        let per_rate = |rows: &[(f64, f64)]| {
            SAMPLING_RATES
                .iter()
                .zip(rows)
                .map(|(p, (calls, passed))| {
                    format!("p={p}: {calls:.1} calls ({:.1}% passed)", passed * 100.0)
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            out,
            "sampling: mean calls per decided test over {} simulated tests per rate, waves of at most {}:\n  \
             adaptive (pass_rate 0.8, indifference 0.05, confidence 0.95): {}; mean {:.1} vs the fixed-sample N = {} \
             at the same alpha, beta, delta ({:.0}% fewer)\n  \
             early_stop (runs {EARLY_RUNS}, threshold {EARLY_THRESHOLD}): {}; mean {:.2} vs {EARLY_RUNS} ({:.0}% fewer)",
            sm.tests,
            SAMPLING_CONCURRENCY,
            per_rate(&sm.adaptive),
            Sampling::mean(&sm.adaptive),
            sm.fixed_n,
            sm.adaptive_saving() * 100.0,
            per_rate(&sm.early),
            Sampling::mean(&sm.early),
            sm.early_saving() * 100.0,
        )
        .ok();
        if o.quick {
            writeln!(
                out,
                "(quick mode: smaller counts; the figures are indicative, see docs/benchmarks.md)"
            )
            .ok();
        }
        out
    }

    fn json(&self, mode: &str) -> Value {
        let round = |x: f64, places: i32| {
            let f = 10f64.powi(places);
            (x * f).round() / f
        };
        let mut judge = BTreeMap::new();
        judge.insert("ask", self.judge.ask);
        judge.insert("ask_all", self.judge.ask_all);
        judge.insert("ask_parallel", self.judge.ask_parallel);
        json!({
            "inflight_efficiency": round(self.inflight.efficiency(), 3),
            "ratelimit_slowdown": round(self.ratelimit.slowdown(), 3),
            "overhead_us_per_trial": round(self.overhead.us_per_trial(), 1),
            "replay_entries_per_s": round(self.replay.per_s(), 0),
            "peak_rss_mb": mb(self.overhead.rss_kb),
            "judge_ms": judge,
            "dataset_list_ms": round(self.dataset.list.as_secs_f64() * 1e3, 1),
            "dataset_exact_ms": round(self.dataset.exact.as_secs_f64() * 1e3, 1),
            "html_report": {
                "trials": self.html.trials,
                "samples": self.html.samples,
                "bytes": self.html.bytes,
                "write_ms": round(self.html.write.as_secs_f64() * 1000.0, 1),
            },
            "sampling": {
                "fixed_n": self.sampling.fixed_n,
                "adaptive_mean_calls": self.sampling.adaptive.iter().map(|(c, _)| round(*c, 2)).collect::<Vec<_>>(),
                "early_stop_mean_calls": self.sampling.early.iter().map(|(c, _)| round(*c, 3)).collect::<Vec<_>>(),
                "rates": SAMPLING_RATES,
                "adaptive_saving": round(self.sampling.adaptive_saving(), 3),
                "early_stop_saving": round(self.sampling.early_saving(), 3),
            },
            "mode": mode,
        })
    }
}
