//! The sampling keys of a test (`runs`, `pass_threshold`, `early_stop`, `pass_rate`, `confidence`,
//! `max_runs`, `indifference`) as the attribute, a suite, a case or `[defaults]` writes them, how one
//! level fills in from another, and what is contradictory. `plan::SamplePlan::from_keys` makes the
//! plan.

use crate::defaults;
use crate::stats::sprt::{Sprt, SprtError};

/// The largest `seed`: Gemini's seed is a signed 32-bit integer.
pub const MAX_SEED: u32 = i32::MAX as u32;

/// The seed run `run` (1-based) sends: `seed + run − 1`, wrapping past [`MAX_SEED`] to 0.
pub fn run_seed(seed: u32, run: u32) -> u32 {
    ((u64::from(seed) + u64::from(run.saturating_sub(1))) % (u64::from(MAX_SEED) + 1)) as u32
}

/// The sampling keys as a front end wrote them (an attribute, a suite, a case, `[defaults]`), before
/// they become a [`SamplePlan`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SamplingKeys {
    /// `runs`.
    pub runs: Option<u32>,
    /// `pass_threshold`.
    pub pass_threshold: Option<f64>,
    /// `early_stop`.
    pub early_stop: Option<bool>,
    /// `pass_rate`: adaptive sampling.
    pub pass_rate: Option<f64>,
    /// `confidence`.
    pub confidence: Option<f64>,
    /// `max_runs`.
    pub max_runs: Option<u32>,
    /// `indifference`.
    pub indifference: Option<f64>,
}

/// What is wrong with a set of sampling keys. `key()` names the key to fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SamplingError {
    /// `runs` is 0.
    #[error("`runs` is 0; it must be at least 1 (the number of samples)")]
    NoRuns,
    /// `pass_threshold` outside (0, 1].
    #[error(
        "`pass_threshold` is {0}; it must be in (0, 1]: the share of runs that must pass, e.g. 0.8 for 4 of 5"
    )]
    Threshold(f64),
    /// A fixed-sample key and an adaptive one in the same place.
    #[error(
        "`pass_rate` cannot be combined with `{0}`: `pass_rate` samples until the pass rate is known (adaptive \
         sampling, at most `max_runs`), `runs` and `pass_threshold` take a fixed number; keep one of the two"
    )]
    Both(&'static str),
    /// A key of adaptive sampling beside `runs` / `pass_threshold`.
    #[error(
        "`{0}` applies only to adaptive sampling (`pass_rate = ...`), not beside `runs` / `pass_threshold`; \
         remove it, or replace `runs` and `pass_threshold` with `pass_rate`"
    )]
    AdaptiveOnly(&'static str),
    /// `early_stop` beside `pass_rate`.
    #[error(
        "`early_stop` applies to `runs = N`; adaptive sampling (`pass_rate`) stops as soon as it can by \
         itself: remove `early_stop`"
    )]
    EarlyStopAdaptive,
    /// An adaptive value out of range.
    #[error(transparent)]
    Sprt(#[from] SprtError),
}

impl SamplingError {
    /// The key the problem is about.
    pub fn key(&self) -> &'static str {
        match self {
            SamplingError::NoRuns => "runs",
            SamplingError::Threshold(_) => "pass_threshold",
            SamplingError::Both(_) => "pass_rate",
            SamplingError::AdaptiveOnly(key) => key,
            SamplingError::EarlyStopAdaptive => "early_stop",
            SamplingError::Sprt(e) => e.key(),
        }
    }
}

impl SamplingKeys {
    /// These keys, each unset one taken from `base`. A level that chooses fixed sampling (`runs` or
    /// `pass_threshold`) does not inherit `base`'s `pass_rate`, and one that chooses adaptive sampling
    /// does not inherit its `runs` and `pass_threshold`: the nearer choice wins.
    pub fn over(&self, base: &SamplingKeys) -> SamplingKeys {
        let fixed = self.runs.is_some() || self.pass_threshold.is_some();
        let adaptive = self.pass_rate.is_some();
        let mut base = *base;
        if fixed && !adaptive {
            base.pass_rate = None;
        }
        if adaptive && !fixed {
            (base.runs, base.pass_threshold) = (None, None);
        }
        SamplingKeys {
            runs: self.runs.or(base.runs),
            pass_threshold: self.pass_threshold.or(base.pass_threshold),
            early_stop: self.early_stop.or(base.early_stop),
            pass_rate: self.pass_rate.or(base.pass_rate),
            confidence: self.confidence.or(base.confidence),
            max_runs: self.max_runs.or(base.max_runs),
            indifference: self.indifference.or(base.indifference),
        }
    }

    /// What is contradictory among keys written in one place (one attribute, one table), if anything.
    pub fn conflict(&self) -> Option<SamplingError> {
        let fixed = [
            ("runs", self.runs.is_some()),
            ("pass_threshold", self.pass_threshold.is_some()),
        ];
        let fixed = fixed.iter().find(|(_, set)| *set).map(|(k, _)| *k);
        let adaptive_only = [
            ("confidence", self.confidence.is_some()),
            ("max_runs", self.max_runs.is_some()),
            ("indifference", self.indifference.is_some()),
        ];
        let adaptive_only = adaptive_only.iter().find(|(_, set)| *set).map(|(k, _)| *k);
        match (self.pass_rate, fixed, adaptive_only) {
            (Some(_), Some(key), _) => Some(SamplingError::Both(key)),
            (Some(_), None, _) if self.early_stop == Some(true) => {
                Some(SamplingError::EarlyStopAdaptive)
            }
            (None, Some(_), Some(key)) => Some(SamplingError::AdaptiveOnly(key)),
            _ => None,
        }
    }

    /// What is out of range in keys that fill in for others (`[defaults]`): an adaptive value is
    /// checked as far as it can be without the test's own keys (an indifference against the pass rate
    /// only when both are here; otherwise against 0.5, the widest it can be).
    /// `early_stop` and `pass_rate` may both be defaults: each applies to its own kind of test.
    pub fn check_defaults(&self) -> Result<(), SamplingError> {
        let max_runs = self.max_runs.unwrap_or(defaults::MAX_RUNS);
        if max_runs == 0 {
            return Err(SamplingError::Sprt(SprtError::MaxRuns {
                max_runs,
                needed: 1,
                pass_rate: self.pass_rate.unwrap_or(0.5),
                indifference: self.indifference.unwrap_or(defaults::INDIFFERENCE),
                confidence: self.confidence.unwrap_or(defaults::CONFIDENCE),
            }));
        }
        Sprt::new(
            self.pass_rate.unwrap_or(0.5),
            self.indifference.unwrap_or(defaults::INDIFFERENCE),
            self.confidence.unwrap_or(defaults::CONFIDENCE),
            // The runs needed depend on the test's pass rate unless it is here.
            self.pass_rate.map_or(u32::MAX, |_| max_runs),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_k_sends_seed_plus_k_minus_one() {
        assert_eq!(run_seed(42, 1), 42);
        assert_eq!(run_seed(42, 5), 46);
        assert_eq!(run_seed(MAX_SEED, 2), 0);
        assert_eq!(run_seed(0, 0), 0);
    }

    #[test]
    fn the_nearer_level_chooses_fixed_or_adaptive_sampling() {
        let adaptive = SamplingKeys {
            pass_rate: Some(0.8),
            max_runs: Some(60),
            early_stop: Some(true),
            ..SamplingKeys::default()
        };
        let fixed = SamplingKeys {
            runs: Some(5),
            ..SamplingKeys::default()
        };
        let merged = fixed.over(&adaptive);
        assert_eq!((merged.runs, merged.pass_rate), (Some(5), None));
        assert_eq!(merged.early_stop, Some(true));
        let merged = adaptive.over(&fixed);
        assert_eq!((merged.runs, merged.pass_rate), (None, Some(0.8)));
        // Both in one place is a contradiction, reported at `pass_rate`.
        let both = SamplingKeys {
            runs: Some(5),
            pass_rate: Some(0.8),
            ..SamplingKeys::default()
        };
        assert_eq!(
            both.over(&adaptive).conflict(),
            Some(SamplingError::Both("runs"))
        );
        assert_eq!(both.conflict().unwrap().key(), "pass_rate");
        let stray = SamplingKeys {
            pass_threshold: Some(0.8),
            confidence: Some(0.9),
            ..SamplingKeys::default()
        };
        assert_eq!(
            stray.conflict(),
            Some(SamplingError::AdaptiveOnly("confidence"))
        );
        let early = SamplingKeys {
            pass_rate: Some(0.8),
            early_stop: Some(true),
            ..SamplingKeys::default()
        };
        assert_eq!(early.conflict(), Some(SamplingError::EarlyStopAdaptive));
    }
}
