//! The sampling scenario: calls per decided test, simulated with the harness's wave rule on prompts of
//! known pass rates, adaptive sampling and `early_stop` against fixed samples. (`sampling`)

/// The true pass rates of the simulated prompts.
pub(crate) const SAMPLING_RATES: [f64; 4] = [0.5, 0.8, 0.95, 1.0];
/// The runs and threshold of the early-stop comparison (the README's example), and the wave limit
/// (the `local` endpoint's `max_in_flight`).
pub(crate) const EARLY_RUNS: u32 = 5;
pub(crate) const EARLY_THRESHOLD: f64 = 0.8;
pub(crate) const SAMPLING_CONCURRENCY: u32 = 4;

/// Calls per decided test, simulated with the harness's own wave rule (`next_wave`) on prompts whose
/// samples pass at a known rate (a fixed RNG seed): adaptive sampling (`pass_rate = 0.8`, defaults
/// δ = 0.05, 95%, not truncated: `max_runs` 10,000) against the fixed-sample test with the same α, β
/// and δ (its N from `stats::sprt`), and `early_stop` against plain `runs = 5, pass_threshold = 0.8`.
pub(crate) struct Sampling {
    pub(crate) tests: u32,
    pub(crate) fixed_n: u32,
    /// Per rate: mean calls, share passed.
    pub(crate) adaptive: Vec<(f64, f64)>,
    pub(crate) early: Vec<(f64, f64)>,
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

    pub(crate) fn mean(rows: &[(f64, f64)]) -> f64 {
        rows.iter().map(|(calls, _)| calls).sum::<f64>() / rows.len() as f64
    }

    /// The share of calls adaptive sampling saves over the fixed N, averaged over the rates.
    pub(crate) fn adaptive_saving(&self) -> f64 {
        1.0 - Self::mean(&self.adaptive) / f64::from(self.fixed_n)
    }

    pub(crate) fn early_saving(&self) -> f64 {
        1.0 - Self::mean(&self.early) / f64::from(EARLY_RUNS)
    }
}
