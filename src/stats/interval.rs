//! Wilson score intervals: the interval for a proportion that stays inside [0, 1] and behaves at 0/n and
//! n/n, where the normal ("Wald") interval collapses to a point.

use serde::Serialize;

/// A two-sided confidence interval for a share, both ends in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The standard normal quantile for a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The 95% Wilson score interval for `successes` of `trials`; `None` when there are no trials.
pub fn wilson(successes: u32, trials: u32) -> Option<Interval> {
    wilson_z(successes, trials, Z_95)
}

/// The Wilson score interval at the normal quantile `z`.
pub fn wilson_z(successes: u32, trials: u32, z: f64) -> Option<Interval> {
    if trials == 0 {
        return None;
    }
    let n = f64::from(trials);
    let p = f64::from(successes.min(trials)) / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denominator = 1.0 + z2 / n;
    Some(Interval {
        low: ((centre - spread) / denominator).clamp(0.0, 1.0),
        high: ((centre + spread) / denominator).clamp(0.0, 1.0),
    })
}

impl Interval {
    /// `38–96%`: both ends rounded to whole percentages, as the summary prints them.
    pub fn percent_range(&self) -> String {
        format!("{:.0}–{:.0}%", self.low * 100.0, self.high * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::close;

    /// How near a reference value (Newcombe's table gives 4 places) a computed one must be.
    const TOLERANCE: f64 = 5e-4;

    // Reference values: Newcombe (1998), "Two-sided confidence intervals for the single proportion",
    // Table I, method 3 (Wilson score without continuity correction).
    #[test]
    fn matches_newcombe_table() {
        let cases = [
            (81, 263, 0.2553, 0.3662),
            (15, 148, 0.0624, 0.1605),
            (0, 20, 0.0, 0.1611),
            (1, 29, 0.0061, 0.1718),
        ];
        for (x, n, low, high) in cases {
            let i = wilson(x, n).unwrap();
            assert!(
                close(i.low, low, TOLERANCE) && close(i.high, high, TOLERANCE),
                "{x}/{n}: {i:?}"
            );
        }
    }

    #[test]
    fn four_of_five_prints_as_the_issue_says() {
        let i = wilson(4, 5).unwrap();
        assert_eq!(i.percent_range(), "38–96%");
        assert!(
            close(i.low, 0.3755, TOLERANCE) && close(i.high, 0.9638, TOLERANCE),
            "{i:?}"
        );
    }

    #[test]
    fn no_trials_no_interval_and_ends_stay_in_range() {
        assert_eq!(wilson(0, 0), None);
        let all = wilson(5, 5).unwrap();
        assert!(all.high <= 1.0 && all.low > 0.5);
        let none = wilson(0, 5).unwrap();
        assert_eq!(none.low, 0.0);
    }
}
