//! The bound of adaptive sampling that both the attribute and the library check: the passes in a row
//! a test needs before Wald's SPRT passes it, so the smallest `max_runs` that lets it ever pass.
//!
//! The test asks whether the pass rate is above `pass_rate`: H0 p = p0 = pass_rate − δ against H1
//! p = p1 = pass_rate + δ (δ = `indifference`), with both error rates α = 1 − `confidence`. A pass adds
//! ln(p1/p0) to the log likelihood ratio, which passes the test once it reaches ln((1 − α)/α).

/// How far inside a boundary the ratio must be, so that `k` passes reaching it exactly in real
/// arithmetic reach it in floating point too.
pub const BOUNDARY_TOLERANCE: f64 = 1e-9;

/// The log likelihood ratio at which the test passes: ln((1 − α)/α), α = 1 − `confidence`.
pub fn pass_boundary(confidence: f64) -> f64 {
    let alpha = 1.0 - confidence;
    ((1.0 - alpha) / alpha).ln()
}

/// What one pass adds to the log likelihood ratio: ln(p1/p0).
pub fn pass_step(pass_rate: f64, indifference: f64) -> f64 {
    let (p0, p1) = (pass_rate - indifference, pass_rate + indifference);
    (p1 / p0).ln()
}

/// The smallest `n` for which `reached(n)` holds, given that it keeps holding for every larger `n`;
/// `u64::MAX` when it holds for none. A binary search: at most 65 calls, whatever the values.
pub fn fewest(reached: impl Fn(u64) -> bool) -> u64 {
    if !reached(u64::MAX) {
        return u64::MAX;
    }
    let (mut low, mut high) = (0, u64::MAX);
    while low < high {
        let mid = low + (high - low) / 2;
        if reached(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

/// The passes in a row that pass an adaptive test with these values (valid ones: the ranges of the
/// keys, the indifference below [`indifference_limit`](crate::sampling::indifference_limit)), so the
/// smallest `max_runs` that lets it pass. `u64::MAX` when floating point cannot tell the hypotheses
/// apart (an indifference so small that p1/p0 rounds to 1).
pub fn passes_needed(pass_rate: f64, indifference: f64, confidence: f64) -> u64 {
    let step = pass_step(pass_rate, indifference);
    let target = pass_boundary(confidence) - BOUNDARY_TOLERANCE;
    // The ratio of n passes, computed as the library computes it at run time (n × step).
    fewest(|n| n as f64 * step >= target)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attribute's former computation: the real-valued count, rounded up.
    fn closed_form(pass_rate: f64, indifference: f64, confidence: f64) -> u64 {
        let upper = pass_boundary(confidence);
        let needed = ((upper - 1e-9) / pass_step(pass_rate, indifference))
            .ceil()
            .max(1.0);
        needed as u64
    }

    /// The library's former computation: an estimate, then the exact count around it (unbounded, so
    /// only for values that need few passes).
    fn walked(pass_rate: f64, indifference: f64, confidence: f64) -> u64 {
        let up = pass_step(pass_rate, indifference);
        let upper = pass_boundary(confidence);
        let passes = |n: u32| f64::from(n) * up >= upper - 1e-9;
        let mut n = ((upper / up).floor().max(0.0)) as u32;
        while n > 0 && passes(n - 1) {
            n -= 1;
        }
        while !passes(n) {
            n += 1;
        }
        u64::from(n)
    }

    /// Today's values, worked by hand: 0.8 ± 0.05 at 95% needs 24 passes (ln 19 / ln(0.85/0.75)
    /// = 23.5).
    #[test]
    fn the_default_test_needs_24_passes() {
        assert_eq!(passes_needed(0.8, 0.05, 0.95), 24);
        assert_eq!(passes_needed(0.5, 0.05, 0.95), 15);
        // At confidence 0.5 the boundary is 0: no pass is needed.
        assert_eq!(passes_needed(0.8, 0.05, 0.5), 0);
    }

    /// The same counts as both former computations, over a grid of valid values (the attribute's
    /// never went below 1, which no `max_runs` is).
    #[test]
    fn a_grid_of_values_keeps_its_counts() {
        let mut checked = 0;
        for pass_rate in (1..20).map(|i| f64::from(i) * 0.05) {
            for indifference in [
                0.001, 0.005, 0.01, 0.02, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
            ] {
                if indifference >= crate::sampling::indifference_limit(pass_rate) {
                    continue;
                }
                for confidence in [
                    0.5, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 0.999_999,
                ] {
                    let new = passes_needed(pass_rate, indifference, confidence);
                    let case = (pass_rate, indifference, confidence);
                    assert_eq!(new, walked(pass_rate, indifference, confidence), "{case:?}");
                    let attribute = closed_form(pass_rate, indifference, confidence);
                    assert_eq!(new.max(1), attribute, "{case:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000, "{checked}");
    }

    /// Extreme values end quickly with a count that does not wrap: past `u32::MAX` (so above any
    /// `max_runs`) for an indifference of 1e-10, `u64::MAX` when p1/p0 rounds to 1.
    #[test]
    fn extreme_values_are_bounded() {
        let tiny = passes_needed(0.5, 1e-10, 0.95);
        assert!(tiny > u64::from(u32::MAX), "{tiny}");
        // About ln 19 / 4e-10 = 7.4e9.
        assert!((7.3e9..7.5e9).contains(&(tiny as f64)), "{tiny}");
        assert_eq!(passes_needed(0.5, 1e-300, 0.95), u64::MAX);
        assert_eq!(passes_needed(0.5, 1e-17, 0.95), u64::MAX);
        let sure = passes_needed(0.5, 1e-10, 1.0 - 1e-15);
        assert!(sure > tiny && sure < u64::MAX, "{sure}");
        // The widest indifference and highest confidence stay small.
        assert_eq!(passes_needed(0.5, 0.499_999, 0.95), 1);
    }

    #[test]
    fn fewest_finds_the_first_that_holds() {
        assert_eq!(fewest(|n| n >= 17), 17);
        assert_eq!(fewest(|_| true), 0);
        assert_eq!(fewest(|_| false), u64::MAX);
        assert_eq!(fewest(|n| n == u64::MAX), u64::MAX);
        assert_eq!(fewest(|n| n >= u64::MAX - 1), u64::MAX - 1);
    }
}
