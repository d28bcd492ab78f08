//! Wald's sequential probability ratio test (SPRT) for a pass rate, and the fixed-sample test it is
//! compared with.
//!
//! The question "is the true pass rate above `pass_rate`?" is asked as H0: p = p0 = pass_rate − δ
//! (the prompt is bad) against H1: p = p1 = pass_rate + δ (the prompt is good), δ the indifference
//! half-width: between p0 and p1 either answer is acceptable. After `s` passes and `f` failures the
//! log likelihood ratio is `s·ln(p1/p0) + f·ln((1−p1)/(1−p0))`; the test passes once it reaches
//! `ln((1−β)/α)`, fails once it reaches `ln(β/(1−α))` (Wald 1945), and is truncated at `max_runs`
//! samples (inconclusive). A pass when p ≤ p0 happens at most about α of the time, a failure when
//! p ≥ p1 at most about β (simulated in the tests below).

use std::fmt;

use prompt_tester_keys::sampling::{TooFewRuns, indifference_limit, shown};
use prompt_tester_keys::sprt::{
    BOUNDARY_TOLERANCE, fewest, pass_boundary, pass_step, passes_needed,
};
use prompt_tester_keys::{Key, Range};

/// The table's range of a key.
fn range_of(key: Key) -> Range {
    key.row().range.expect("the sampling keys have ranges")
}

/// The SPRT of one adaptive test: its hypotheses, error rates and truncation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    /// The pass rate the test asks about.
    pub pass_rate: f64,
    /// The indifference half-width δ.
    pub indifference: f64,
    /// The confidence: α = β = 1 − confidence.
    pub confidence: f64,
    /// The most samples it takes.
    pub max_runs: u32,
}

/// Why an SPRT cannot be built from the values given: `key()` names the key to fix, `problem()` says
/// what is wrong; `config::SamplingProblem::Sprt` carries it to the user.
#[derive(Debug, Clone, PartialEq)]
pub enum SprtProblem {
    /// `pass_rate` outside (0, 1).
    PassRate(f64),
    /// `confidence` outside [0.5, 1).
    Confidence(f64),
    /// `indifference` not leaving both hypotheses inside (0, 1).
    Indifference {
        /// The value given.
        indifference: f64,
        /// The pass rate it is around.
        pass_rate: f64,
        /// The exclusive upper limit.
        limit: f64,
    },
    /// `max_runs` too small for the test ever to pass.
    MaxRuns(TooFewRuns),
}

impl SprtProblem {
    /// The key the problem is about (`pass_rate`, `confidence`, `indifference`, `max_runs`).
    pub fn key(&self) -> Key {
        match self {
            SprtProblem::PassRate(_) => Key::PassRate,
            SprtProblem::Confidence(_) => Key::Confidence,
            SprtProblem::Indifference { .. } => Key::Indifference,
            SprtProblem::MaxRuns(too_few) => too_few.key(),
        }
    }

    /// What is wrong, after the key: "is 1.5; it must be at least 0.5 and below 1, ...".
    pub fn problem(&self) -> String {
        match self {
            SprtProblem::PassRate(pass_rate) => format!(
                "is {pass_rate}; it must be above 0 and below 1, e.g. 0.8 (the pass rate to tell apart)"
            ),
            SprtProblem::Confidence(confidence) => Key::Confidence.is_out_of_range(*confidence),
            SprtProblem::Indifference {
                indifference,
                pass_rate,
                limit,
            } => format!(
                "is {indifference}; with `pass_rate = {pass_rate}` it must be above 0 and below {limit} \
                 (pass_rate − indifference and pass_rate + indifference must lie strictly between 0 and 1), e.g. 0.05"
            ),
            SprtProblem::MaxRuns(too_few) => too_few.problem().to_string(),
        }
    }
}

impl fmt::Display for SprtProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key(), self.problem())
    }
}

/// What the samples so far say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SprtVerdict {
    /// The pass rate is above `pass_rate` (H1 accepted).
    Pass,
    /// The pass rate is below `pass_rate` (H0 accepted).
    Fail,
    /// Neither boundary can be reached within `max_runs`: the test stops without a decision.
    Inconclusive,
    /// Take at least this many more samples: the fewest that could reach a boundary (never 0).
    Continue(u32),
}

/// How far inside a boundary the ratio must be (the attribute's check uses the same).
const EPS: f64 = BOUNDARY_TOLERANCE;

impl Sprt {
    /// The SPRT of these values, or what is wrong with them.
    pub fn new(
        pass_rate: f64,
        indifference: f64,
        confidence: f64,
        max_runs: u32,
    ) -> Result<Self, SprtProblem> {
        // The table's ranges never hold NaN.
        if !range_of(Key::PassRate).contains(pass_rate) {
            return Err(SprtProblem::PassRate(pass_rate));
        }
        if !range_of(Key::Confidence).contains(confidence) {
            return Err(SprtProblem::Confidence(confidence));
        }
        let limit = indifference_limit(pass_rate);
        if !(indifference > 0.0 && indifference < limit) {
            return Err(SprtProblem::Indifference {
                indifference,
                pass_rate,
                limit: shown(limit),
            });
        }
        let sprt = Self {
            pass_rate,
            indifference,
            confidence,
            max_runs,
        };
        // The bound the attribute checks at compile time, computed by the same function.
        let needed = passes_needed(pass_rate, indifference, confidence);
        if u64::from(max_runs) < needed {
            return Err(SprtProblem::MaxRuns(TooFewRuns {
                max_runs: u64::from(max_runs),
                needed,
                pass_rate,
                indifference,
                confidence,
            }));
        }
        Ok(sprt)
    }

    /// p0 and p1.
    pub fn hypotheses(&self) -> (f64, f64) {
        (
            self.pass_rate - self.indifference,
            self.pass_rate + self.indifference,
        )
    }

    /// α (= β): the error rate allowed each way.
    pub fn alpha(&self) -> f64 {
        1.0 - self.confidence
    }

    /// The log likelihood ratio's step for a pass (> 0) and for a failure (< 0).
    fn steps(&self) -> (f64, f64) {
        let (p0, p1) = self.hypotheses();
        (
            pass_step(self.pass_rate, self.indifference),
            ((1.0 - p1) / (1.0 - p0)).ln(),
        )
    }

    /// The lower (fail) and upper (pass) boundaries of the log likelihood ratio.
    fn bounds(&self) -> (f64, f64) {
        let (a, b) = (self.alpha(), self.alpha());
        ((b / (1.0 - a)).ln(), pass_boundary(self.confidence))
    }

    /// The ratio after `passed` passes and `failed` failures (as floats, so that a search can ask
    /// about counts past `u32`).
    fn ratio(&self, passed: f64, failed: f64) -> f64 {
        let (up, down) = self.steps();
        // No sample adds nothing, even an infinite step: p1 rounds to 1 for `pass_rate = 0.95,
        // indifference = 0.05`, so a failure's step is −∞ (one failure decides), and 0 × −∞ would be NaN.
        let sum = |count: f64, step: f64| if count == 0.0 { 0.0 } else { count * step };
        sum(passed, up) + sum(failed, down)
    }

    fn passes(&self, passed: u32, failed: u32) -> bool {
        self.passes_at(f64::from(passed), failed)
    }

    fn passes_at(&self, passed: f64, failed: u32) -> bool {
        self.ratio(passed, f64::from(failed)) >= self.bounds().1 - EPS
    }

    fn fails(&self, passed: u32, failed: u32) -> bool {
        self.fails_at(passed, f64::from(failed))
    }

    fn fails_at(&self, passed: u32, failed: f64) -> bool {
        self.ratio(f64::from(passed), failed) <= self.bounds().0 + EPS
    }

    /// The passes that, with `failed` failures, pass the test (the fewest; `u32::MAX` when more).
    pub fn passes_to_pass(&self, failed: u32) -> u32 {
        let fewest = fewest(|n| self.passes_at(n as f64, failed));
        u32::try_from(fewest).unwrap_or(u32::MAX)
    }

    /// The failures that, with `passed` passes, fail the test (the fewest; `u32::MAX` when more).
    pub fn failures_to_fail(&self, passed: u32) -> u32 {
        let fewest = fewest(|n| self.fails_at(passed, n as f64));
        u32::try_from(fewest).unwrap_or(u32::MAX)
    }

    /// What `passed` passes and `failed` failures say: pass, fail, inconclusive, or how many more
    /// samples could reach a boundary at the least.
    pub fn verdict(&self, passed: u32, failed: u32) -> SprtVerdict {
        if self.passes(passed, failed) {
            return SprtVerdict::Pass;
        }
        if self.fails(passed, failed) {
            return SprtVerdict::Fail;
        }
        let left = self.max_runs.saturating_sub(passed + failed);
        let to_pass = self.passes_to_pass(failed) - passed;
        let to_fail = self.failures_to_fail(passed) - failed;
        match to_pass.min(to_fail) {
            fewest if fewest <= left => SprtVerdict::Continue(fewest),
            // No boundary can be reached in the samples left: more calls cannot decide it.
            _ => SprtVerdict::Inconclusive,
        }
    }

    /// The sample size of the fixed-sample test with the same α, β and hypotheses: the smallest `n`
    /// with a pass count `c` such that P(X ≥ c | p0) ≤ α and P(X < c | p1) ≤ β (exact binomial).
    pub fn fixed_sample_size(&self) -> u32 {
        let (p0, p1) = self.hypotheses();
        let (alpha, beta) = (self.alpha(), self.alpha());
        (1u32..)
            .find(|&n| {
                // The smallest c whose upper tail under p0 is at most α...
                let upper = tails(n, p0);
                let Some(c) = (0..=n + 1).find(|&c| upper[c as usize] <= alpha) else {
                    return false;
                };
                // ...and the lower tail under p1 below it, P(X ≤ c − 1) = 1 − P(X ≥ c).
                1.0 - tails(n, p1)[c as usize] <= beta
            })
            .expect("some n separates two distinct rates")
    }
}

/// `t[c] = P(X ≥ c)` for X ~ Binomial(n, p), c = 0..=n+1 (`t[n+1]` = 0), summed in log space so that
/// large `n` do not underflow.
fn tails(n: u32, p: f64) -> Vec<f64> {
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_choose = 0.0;
    let mut pmf = Vec::with_capacity(n as usize + 1);
    for k in 0..=n {
        if k > 0 {
            log_choose += (f64::from(n - k + 1) / f64::from(k)).ln();
        }
        pmf.push((log_choose + f64::from(k) * lp + f64::from(n - k) * lq).exp());
    }
    let mut t = vec![0.0; n as usize + 2];
    for k in (0..=n as usize).rev() {
        t[k] = t[k + 1] + pmf[k];
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    fn default_test() -> Sprt {
        Sprt::new(0.8, 0.05, 0.95, 40).unwrap()
    }

    /// The boundaries worked by hand: p0 = 0.75, p1 = 0.85, α = β = 0.05. A pass adds
    /// ln(0.85/0.75) = 0.12516, a failure ln(0.15/0.25) = −0.51083; the boundaries are ±ln 19 = ±2.94444.
    /// So 24 passes in a row pass (23 × 0.12516 = 2.879 < 2.944 ≤ 24 × 0.12516 = 3.004), 6 failures in a
    /// row fail (5 × 0.51083 = 2.554 < 2.944 ≤ 3.065).
    #[test]
    fn boundaries_match_the_hand_computation() {
        let t = default_test();
        assert_eq!(t.passes_to_pass(0), 24);
        assert_eq!(t.failures_to_fail(0), 6);
        assert_eq!(t.verdict(24, 0), SprtVerdict::Pass);
        assert_eq!(t.verdict(23, 0), SprtVerdict::Continue(1));
        assert_eq!(t.verdict(0, 6), SprtVerdict::Fail);
        assert_eq!(t.verdict(0, 0), SprtVerdict::Continue(6));
        // With one failure: (2.944 + 0.511) / 0.125 = 27.6, so 28 passes.
        assert_eq!(t.passes_to_pass(1), 28);
        assert_eq!(t.verdict(27, 1), SprtVerdict::Continue(1));
        assert_eq!(t.verdict(28, 1), SprtVerdict::Pass);
        // 35 passes and 5 failures: the ratio is 35 × 0.12516 − 5 × 0.51083 = 1.826, inside the
        // boundaries, with no run left out of 40.
        assert_eq!(t.verdict(35, 5), SprtVerdict::Inconclusive);
        // Three failures early: passing needs 36 passes ((2.944 + 3 × 0.511) / 0.125 = 35.8), failing 3
        // more failures.
        assert_eq!(t.passes_to_pass(3), 36);
        assert_eq!(t.verdict(0, 3), SprtVerdict::Continue(3));
        // 30 passes and 8 failures, 2 runs left: passing needs 57 passes, failing 14 failures. No
        // boundary is in reach: decided, inconclusive, without the last two calls.
        assert_eq!(t.verdict(30, 8), SprtVerdict::Inconclusive);
    }

    #[test]
    fn values_out_of_range_are_rejected_naming_the_key() {
        let err = |r: Result<Sprt, SprtProblem>| r.unwrap_err().key();
        assert_eq!(err(Sprt::new(1.0, 0.05, 0.95, 40)), Key::PassRate);
        assert_eq!(err(Sprt::new(f64::NAN, 0.05, 0.95, 40)), Key::PassRate);
        assert_eq!(err(Sprt::new(0.8, 0.05, 1.5, 40)), Key::Confidence);
        assert_eq!(err(Sprt::new(0.8, 0.05, 1.0, 40)), Key::Confidence);
        assert_eq!(err(Sprt::new(0.8, 0.2, 0.95, 40)), Key::Indifference);
        assert_eq!(err(Sprt::new(0.8, 0.0, 0.95, 40)), Key::Indifference);
        let short = Sprt::new(0.8, 0.05, 0.95, 23).unwrap_err();
        assert_eq!(short.key(), Key::MaxRuns);
        assert!(short.to_string().contains("at least 24"), "{short}");
        assert!(Sprt::new(0.8, 0.05, 0.95, 24).is_ok());
        // The messages read "`key` problem".
        for (result, message) in [
            (
                Sprt::new(1.0, 0.05, 0.95, 40),
                "`pass_rate` is 1; it must be above 0 and below 1, e.g. 0.8 (the pass rate to tell apart)",
            ),
            (
                Sprt::new(0.8, 0.05, 1.5, 40),
                "`confidence` is 1.5; it must be at least 0.5 and below 1, e.g. 0.95 (the test is wrong at most \
                 5% of the time)",
            ),
            (
                Sprt::new(0.9, 0.1, 0.95, 40),
                "`indifference` is 0.1; with `pass_rate = 0.9` it must be above 0 and below 0.1 (pass_rate − \
                 indifference and pass_rate + indifference must lie strictly between 0 and 1), e.g. 0.05",
            ),
            (
                Sprt::new(0.8, 0.05, 0.95, 23),
                "`max_runs` is 23, but even when every run passes the test needs 24 runs to pass (pass_rate 0.8, \
                 indifference 0.05, confidence 0.95); raise `max_runs` to at least 24, or widen `indifference` or \
                 lower `confidence`",
            ),
        ] {
            let err = result.unwrap_err();
            assert_eq!(err.to_string(), message);
            assert_eq!(format!("`{}` {}", err.key(), err.problem()), message);
        }
    }

    /// The passes that pass the test with no failure are the bound the attribute checks
    /// (`prompt_tester_keys::sprt::passes_needed`), and every boundary count is the fewest that
    /// reaches it (the count before it does not).
    #[test]
    fn the_counts_are_the_fewest_and_the_attributes_bound() {
        for pass_rate in [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95] {
            for indifference in [0.01, 0.02, 0.05, 0.08] {
                for confidence in [0.5, 0.8, 0.9, 0.95, 0.99] {
                    let Ok(t) = Sprt::new(pass_rate, indifference, confidence, u32::MAX) else {
                        continue;
                    };
                    let needed = passes_needed(pass_rate, indifference, confidence);
                    assert_eq!(u64::from(t.passes_to_pass(0)), needed, "{t:?}");
                    // `u32::MAX` is "never" (after a failure when p1 rounds to 1).
                    for k in [0, 1, 3, 10] {
                        let n = t.passes_to_pass(k);
                        let fewest = t.passes(n, k) && (n == 0 || !t.passes(n - 1, k));
                        assert!(fewest || (n == u32::MAX && !t.passes(n, k)), "{t:?} {k}");
                        let m = t.failures_to_fail(k);
                        assert!(t.fails(k, m) && (m == 0 || !t.fails(k, m - 1)), "{t:?} {k}");
                    }
                }
            }
        }
    }

    /// p1 = 0.95 + 0.05 rounds to 1 (the limit, 1 − 0.95, rounds above 0.05): a failure's step is
    /// −∞, and no count is NaN.
    #[test]
    fn a_hypothesis_at_one_decides_on_one_failure() {
        let t = Sprt::new(0.95, 0.05, 0.95, 40).unwrap();
        assert_eq!(t.hypotheses().1, 1.0);
        assert_eq!(t.passes_to_pass(0), 28);
        assert_eq!(t.failures_to_fail(0), 1);
        assert_eq!(t.verdict(0, 0), SprtVerdict::Continue(1));
        assert_eq!(t.verdict(5, 1), SprtVerdict::Fail);
        assert_eq!(t.verdict(28, 0), SprtVerdict::Pass);
    }

    /// An indifference of 1e-10 needs more passes than any `max_runs`: an error, not a loop. Just
    /// within `u32`, a test builds and its counts saturate rather than wrap.
    #[test]
    fn extreme_indifferences_end() {
        let err = Sprt::new(0.5, 1e-10, 0.95, u32::MAX).unwrap_err();
        let SprtProblem::MaxRuns(too_few) = err else {
            panic!("{err}");
        };
        assert!(too_few.needed > u64::from(u32::MAX), "{too_few}");
        assert!(Sprt::new(0.5, 1e-300, 0.95, u32::MAX).is_err());
        let t = Sprt::new(0.5, 1e-9, 0.95, u32::MAX).unwrap();
        let SprtVerdict::Continue(k) = t.verdict(0, 0) else {
            panic!("{:?}", t.verdict(0, 0));
        };
        assert!(k > 1_000_000, "{k}");
        assert_eq!(t.passes_to_pass(u32::MAX), u32::MAX);
        assert_eq!(t.verdict(0, u32::MAX - 1), SprtVerdict::Fail);
    }

    /// The fixed-sample size checked against its definition at n and n − 1, and against the normal
    /// approximation n ≈ ((z_α√(p0q0) + z_β√(p1q1)) / (p1 − p0))² = 169.0 for 0.75 vs 0.85 at 5%/5%.
    #[test]
    fn fixed_sample_size_is_the_smallest_that_separates_the_hypotheses() {
        let t = default_test();
        let n = t.fixed_sample_size();
        assert!((150..=185).contains(&n), "{n}");
        let separates = |n: u32| {
            let (u, l) = (tails(n, 0.75), tails(n, 0.85));
            (0..=n + 1).any(|c| u[c as usize] <= 0.05 && 1.0 - l[c as usize] <= 0.05)
        };
        assert!(separates(n));
        assert!(!(1..n).any(separates));
        // Small enough to check by hand: p0 = 0.5 vs p1 = 0.9 (pass_rate 0.7, δ 0.2) at 10%: n = 9 with
        // c = 7, P(X ≥ 7 | 0.5) = 46/512 = 0.090 and P(X ≤ 6 | 0.9) = 0.053 (and no n below 9 works).
        let wide = Sprt::new(0.7, 0.2, 0.9, 100).unwrap();
        let n = wide.fixed_sample_size();
        let separates = |n: u32| {
            let (u, l) = (tails(n, 0.5), tails(n, 0.9));
            (0..=n + 1).any(|c| u[c as usize] <= 0.1 && 1.0 - l[c as usize] <= 0.1)
        };
        assert_eq!(n, 9);
        assert!(separates(n) && !(1..n).any(separates), "{n}");
    }

    #[test]
    fn binomial_tails_sum_correctly() {
        // Binomial(4, 0.5): P(X ≥ 0..=5) = 16/16, 15/16, 11/16, 5/16, 1/16, 0.
        let t = tails(4, 0.5);
        let want = [1.0, 15.0 / 16.0, 11.0 / 16.0, 5.0 / 16.0, 1.0 / 16.0, 0.0];
        for (got, want) in t.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{t:?}");
        }
        // Large n stays finite and sums to 1.
        assert!((tails(5000, 0.8)[0] - 1.0).abs() < 1e-9);
    }

    /// Runs one test sample by sample at true pass rate `p`: its verdict and the samples it took.
    fn simulate(t: &Sprt, p: f64, rng: &mut StdRng) -> (SprtVerdict, u32) {
        let (mut passed, mut failed) = (0, 0);
        loop {
            match t.verdict(passed, failed) {
                SprtVerdict::Continue(_) => {
                    if rng.random_bool(p) {
                        passed += 1
                    } else {
                        failed += 1
                    }
                }
                done => return (done, passed + failed),
            }
        }
    }

    /// The promised error rates, by simulation: 4,000 tests at p = p0 pass at most α of the time and
    /// 4,000 at p = p1 fail at most β of the time. Wald's bounds allow α/(1 − β) = 5.26% for α = β = 5%;
    /// the tolerance over that is 1.5 points (about 4.5 standard errors of a rate near 5% over 4,000
    /// tests), so a correct test fails this by chance far less than once in a million seeds. Truncation
    /// (`max_runs`) only turns decisions into "inconclusive", so it is checked both untruncated and at
    /// the default 40.
    #[test]
    fn simulated_error_rates_stay_within_alpha_and_beta() {
        let mut rng = StdRng::seed_from_u64(13);
        const TESTS: u32 = 4_000;
        const TOLERANCE: f64 = 0.015;
        for (pass_rate, max_runs) in [(0.8, 10_000), (0.8, 40), (0.5, 10_000), (0.9, 10_000)] {
            let t = Sprt::new(pass_rate, 0.05, 0.95, max_runs).unwrap();
            let bound = t.alpha() / (1.0 - t.alpha()) + TOLERANCE;
            let (p0, p1) = t.hypotheses();
            let share = |p: f64, wrong: SprtVerdict, rng: &mut StdRng| {
                let hits = (0..TESTS)
                    .filter(|_| simulate(&t, p, rng).0 == wrong)
                    .count();
                hits as f64 / f64::from(TESTS)
            };
            let false_pass = share(p0, SprtVerdict::Pass, &mut rng);
            let false_fail = share(p1, SprtVerdict::Fail, &mut rng);
            assert!(
                false_pass <= bound,
                "{pass_rate}/{max_runs}: false passes {false_pass}"
            );
            assert!(
                false_fail <= bound,
                "{pass_rate}/{max_runs}: false failures {false_fail}"
            );
            // Far from the indifference zone the test is nearly always right.
            let right = share(1.0, SprtVerdict::Pass, &mut rng);
            assert_eq!(right, 1.0, "{pass_rate}: a perfect prompt always passes");
            let low = (pass_rate - 0.3).max(0.05);
            let failed = share(low, SprtVerdict::Fail, &mut rng);
            assert!(
                failed >= 0.99,
                "{pass_rate}: at p = {low} it failed {failed}"
            );
        }
    }

    /// Stopping as soon as a boundary is reached saves calls over the fixed-sample test with the same
    /// error rates: far from the threshold by a wide margin, and on average over the rates of the
    /// benchmark (0.5, 0.8, 0.95, 1.0).
    #[test]
    fn the_sequential_test_needs_fewer_samples_than_the_fixed_one() {
        let mut rng = StdRng::seed_from_u64(7);
        let t = Sprt::new(0.8, 0.05, 0.95, 10_000).unwrap();
        let fixed = f64::from(t.fixed_sample_size());
        let mean = |p: f64, rng: &mut StdRng| {
            let total: u32 = (0..2_000).map(|_| simulate(&t, p, rng).1).sum();
            f64::from(total) / 2_000.0
        };
        let means: Vec<f64> = [0.5, 0.8, 0.95, 1.0]
            .iter()
            .map(|&p| mean(p, &mut rng))
            .collect();
        assert_eq!(means[3], 24.0);
        assert!(means[0] < 20.0, "{means:?}");
        let average = means.iter().sum::<f64>() / 4.0;
        assert!(average < 0.7 * fixed, "{means:?} vs {fixed}");
    }

    /// `Continue(k)`: no boundary is reached with fewer than `k` more samples, whatever they are, and
    /// one is with exactly `k` (all passes or all failures). So a wave of `k` samples stops exactly
    /// where one-at-a-time sampling would.
    #[test]
    fn a_wave_of_the_fewest_samples_never_overshoots() {
        let t = default_test();
        for passed in 0..40 {
            for failed in 0..(40 - passed) {
                let SprtVerdict::Continue(k) = t.verdict(passed, failed) else {
                    continue;
                };
                assert!(k >= 1);
                for extra_passes in 0..k {
                    for extra_fails in 0..(k - extra_passes) {
                        assert!(
                            matches!(
                                t.verdict(passed + extra_passes, failed + extra_fails),
                                SprtVerdict::Continue(_) | SprtVerdict::Inconclusive
                            ),
                            "{passed}/{failed} +{extra_passes}/{extra_fails} decided before {k}"
                        );
                    }
                }
                let reached = [(k, 0), (0, k)].iter().any(|&(p, f)| {
                    matches!(
                        t.verdict(passed + p, failed + f),
                        SprtVerdict::Pass | SprtVerdict::Fail
                    )
                });
                assert!(reached, "{passed}/{failed}: {k} samples reach no boundary");
            }
        }
    }
}
