//! The sampling scenario: calls per decided test, simulated with the harness's wave rule on prompts of
//! known pass rates, adaptive sampling and `early_stop` against fixed samples. (`sampling`)

use serde_json::json;

use crate::results::{Figure, Report, Target, round};

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
pub(crate) struct Sampling {
    tests: u32,
    fixed_n: u32,
    /// Per rate: mean calls, share passed.
    adaptive: Vec<(f64, f64)>,
    early: Vec<(f64, f64)>,
}

impl Sampling {
    pub(crate) fn simulate(tests: u32) -> Self {
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
                        SampleOutcome::PASSED
                    } else {
                        SampleOutcome::failed("no")
                    });
                }
            }
            let passed = taken
                .iter()
                .filter(|o| **o == SampleOutcome::PASSED)
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

    /// The savings, the mean calls per rate in the JSON line, and the calls and share passed per rate
    /// below the table.
    pub(crate) fn report(&self) -> Report {
        let figures = vec![
            Figure::new("sampling.adaptive_saving", self.adaptive_saving(), 0)
                .percent()
                .target(Target::AtLeast(30.0))
                .json(3),
            Figure::new("sampling.early_stop_saving", self.early_saving(), 0)
                .percent()
                .note("(info)")
                .json(3),
        ];
        let calls = |rows: &[(f64, f64)], places| -> Vec<f64> {
            rows.iter().map(|(c, _)| round(*c, places)).collect()
        };
        let data = json!({
            "fixed_n": self.fixed_n,
            "adaptive_mean_calls": calls(&self.adaptive, 2),
            "early_stop_mean_calls": calls(&self.early, 3),
            "rates": SAMPLING_RATES,
        });
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
        let line = format!(
            "sampling: mean calls per decided test over {} simulated tests per rate, waves of at most \
             {SAMPLING_CONCURRENCY}:\n  \
             adaptive (pass_rate 0.8, indifference 0.05, confidence 0.95): {}; mean {:.1} vs the \
             fixed-sample N = {} at the same alpha, beta, delta ({:.0}% fewer)\n  \
             early_stop (runs {EARLY_RUNS}, threshold {EARLY_THRESHOLD}): {}; mean {:.2} vs \
             {EARLY_RUNS} ({:.0}% fewer)",
            self.tests,
            per_rate(&self.adaptive),
            Self::mean(&self.adaptive),
            self.fixed_n,
            self.adaptive_saving() * 100.0,
            per_rate(&self.early),
            Self::mean(&self.early),
            self.early_saving() * 100.0,
        );
        Report::new("sampling", figures)
            .data("sampling", data)
            .line(line)
    }
}
