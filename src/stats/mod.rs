//! The statistics of prompt-test results, in one place: every rate is an estimate from a few samples,
//! so it comes with an interval, and every decision rule is a pure function tested against published
//! values.
//!
//! - [`interval`]: Wilson score intervals for a pass rate.
//! - [`fisher`]: Fisher's exact test, two-sided, for "did the pass rate change since the baseline?".
//! - [`sprt`]: Wald's sequential probability ratio test and the fixed-sample size it is compared with.
//! - [`agreement`]: a judge measured against labels (accuracy, TPR, TNR, Cohen's kappa, Rogan–Gladen).
//! - [`ppi`]: the prediction-powered pass rate: the judge's verdicts corrected by labels drawn at random.
//! - [`trust`]: a verdict's judge measured on its question type, and when that leaves it advisory.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

pub mod agreement;
pub mod fisher;
pub mod interval;
pub mod ppi;
pub mod sprt;
pub mod trust;

pub use interval::{Interval, wilson};

/// Samples that passed of samples taken: what every rate in the reports is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Samples that passed.
    pub passed: u32,
    /// Samples taken.
    pub total: u32,
}

impl Counts {
    /// `passed` of `total` (a `passed` above `total` is read as `total`).
    pub fn new(passed: u32, total: u32) -> Self {
        Self {
            passed: passed.min(total),
            total,
        }
    }

    /// The share that passed; `None` without samples.
    pub fn share(&self) -> Option<f64> {
        (self.total > 0).then(|| f64::from(self.passed) / f64::from(self.total))
    }

    /// The share that passed in percent, 0 without samples (a cell then reads `0/0 0%`).
    pub fn percent(&self) -> f64 {
        self.share().unwrap_or(0.0) * 100.0
    }

    /// The 95% Wilson interval of the share; `None` without samples.
    pub fn interval(&self) -> Option<Interval> {
        wilson(self.passed, self.total)
    }

    /// `80%, 95% CI 38–96%` (whole percentages); `None` without samples.
    pub fn rate_with_interval(&self) -> Option<String> {
        let (share, interval) = (self.share()?, self.interval()?);
        Some(format!(
            "{:.0}%, 95% CI {}",
            share * 100.0,
            interval.percent_range()
        ))
    }
}

/// A share as a percentage: `80%`, `33.3%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{}%", p.round())
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a computed `a` is the reference value `b` to within `tolerance`.
    pub(super) fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() < tolerance
    }

    #[test]
    fn counts_give_a_share_and_its_interval() {
        assert_eq!(Counts::new(3, 4).share(), Some(0.75));
        assert_eq!(Counts::new(0, 0).share(), None);
        assert_eq!(
            (Counts::new(3, 4).percent(), Counts::new(0, 0).percent()),
            (75.0, 0.0)
        );
        assert_eq!(Counts::new(0, 0).rate_with_interval(), None);
        assert_eq!(Counts::new(7, 5), Counts::new(5, 5));
        assert_eq!(
            Counts::new(4, 5).rate_with_interval().as_deref(),
            Some("80%, 95% CI 38–96%")
        );
    }
}
