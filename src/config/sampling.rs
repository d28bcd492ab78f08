//! The sampling keys of a test (`runs`, `pass_threshold`, `early_stop`, `pass_rate`, `confidence`,
//! `max_runs`, `indifference`) as the attribute, a suite, a case or `[defaults]` writes them, how one
//! level fills in from another, and what is contradictory. `plan::SamplePlan::from_keys` makes the
//! plan.

use std::fmt;

use prompt_tester_keys::Key;
use prompt_tester_keys::sampling::{Conflict, TooFewRuns};

use crate::defaults;
use crate::stats::sprt::{Sprt, SprtProblem};

/// The largest `seed`: Gemini's seed is a signed 32-bit integer.
pub use prompt_tester_keys::MAX_SEED;

/// The seed run `run` (1-based) sends: `seed + run − 1`, wrapping past [`MAX_SEED`] to 0.
pub fn run_seed(seed: u32, run: u32) -> u32 {
    ((u64::from(seed) + u64::from(run.saturating_sub(1))) % (u64::from(MAX_SEED) + 1)) as u32
}

/// The sampling keys as a front end wrote them (an attribute, a suite, a case, `[defaults]`), before
/// they become a `SamplePlan` (the plan of samples a trial takes).
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

/// What is wrong with a set of sampling keys. `key()` names the key to fix; the message reads
/// "`key` {problem}".
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingProblem {
    /// `runs` is 0.
    NoRuns,
    /// `pass_threshold` outside (0, 1].
    Threshold(f64),
    /// A fixed-sample key (the one held) and an adaptive one in the same place.
    Both(Key),
    /// A key of adaptive sampling (the one held) beside `runs` / `pass_threshold`.
    AdaptiveOnly(Key),
    /// `early_stop` beside `pass_rate`.
    EarlyStopAdaptive,
    /// An adaptive value out of range.
    Sprt(SprtProblem),
}

impl SamplingProblem {
    /// The key the problem is about.
    pub fn key(&self) -> Key {
        match self {
            SamplingProblem::NoRuns => Key::Runs,
            SamplingProblem::Threshold(_) => Key::PassThreshold,
            SamplingProblem::Sprt(e) => e.key(),
            SamplingProblem::Both(_)
            | SamplingProblem::AdaptiveOnly(_)
            | SamplingProblem::EarlyStopAdaptive => self.conflict().key(),
        }
    }

    /// What is wrong, after the key: "is 0; it must be at least 1 (the number of samples)".
    pub fn problem(&self) -> String {
        match self {
            SamplingProblem::NoRuns => "is 0; it must be at least 1 (the number of samples)".into(),
            SamplingProblem::Threshold(threshold) => Key::PassThreshold.is_out_of_range(*threshold),
            SamplingProblem::Sprt(e) => e.problem(),
            SamplingProblem::Both(_)
            | SamplingProblem::AdaptiveOnly(_)
            | SamplingProblem::EarlyStopAdaptive => self.conflict().problem().to_string(),
        }
    }

    /// A contradiction as the attribute reports it too (same key, same message); only asked of the
    /// three conflict variants.
    fn conflict(&self) -> Conflict {
        match self {
            SamplingProblem::Both(key) => Conflict::Both(*key),
            SamplingProblem::AdaptiveOnly(key) => Conflict::AdaptiveOnly(*key),
            _ => Conflict::EarlyStopAdaptive,
        }
    }
}

impl fmt::Display for SamplingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key(), self.problem())
    }
}

impl From<SprtProblem> for SamplingProblem {
    fn from(e: SprtProblem) -> Self {
        SamplingProblem::Sprt(e)
    }
}

impl From<Conflict> for SamplingProblem {
    fn from(conflict: Conflict) -> Self {
        match conflict {
            Conflict::Both(key) => SamplingProblem::Both(key),
            Conflict::AdaptiveOnly(key) => SamplingProblem::AdaptiveOnly(key),
            Conflict::EarlyStopAdaptive => SamplingProblem::EarlyStopAdaptive,
        }
    }
}

impl super::Layered for SamplingKeys {
    fn over(&self, base: &Self) -> Self {
        SamplingKeys::over(self, base)
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
        super::layered_fieldwise!(@fields SamplingKeys {
            runs,
            pass_threshold,
            early_stop,
            pass_rate,
            confidence,
            max_runs,
            indifference,
        } self, &base)
    }

    /// What is contradictory among keys written in one place (one attribute, one table), if anything.
    pub fn conflict(&self) -> Option<SamplingProblem> {
        // `early_stop = false` beside `pass_rate` says nothing, so it is no contradiction.
        Conflict::among(|key| match key {
            Key::Runs => self.runs.is_some(),
            Key::PassThreshold => self.pass_threshold.is_some(),
            Key::EarlyStop => self.early_stop == Some(true),
            Key::PassRate => self.pass_rate.is_some(),
            Key::Confidence => self.confidence.is_some(),
            Key::MaxRuns => self.max_runs.is_some(),
            Key::Indifference => self.indifference.is_some(),
            _ => false,
        })
        .map(SamplingProblem::from)
    }

    /// What is out of range in keys that fill in for others (`[defaults]`): an adaptive value is
    /// checked as far as it can be without the test's own keys (an indifference against the pass rate
    /// only when both are here; otherwise against 0.5, the widest it can be).
    /// `early_stop` and `pass_rate` may both be defaults: each applies to its own kind of test.
    pub fn check_defaults(&self) -> Result<(), SamplingProblem> {
        let max_runs = self.max_runs.unwrap_or(defaults::MAX_RUNS);
        let pass_rate = self.pass_rate.unwrap_or(0.5);
        let indifference = self.indifference.unwrap_or(defaults::INDIFFERENCE);
        let confidence = self.confidence.unwrap_or(defaults::CONFIDENCE);
        if max_runs == 0 {
            return Err(SamplingProblem::Sprt(SprtProblem::MaxRuns(TooFewRuns {
                max_runs: 0,
                needed: 1,
                pass_rate,
                indifference,
                confidence,
            })));
        }
        match Sprt::new(pass_rate, indifference, confidence, max_runs) {
            // The runs needed depend on the test's pass rate unless it is here.
            Err(SprtProblem::MaxRuns(_)) if self.pass_rate.is_none() => Ok(()),
            Err(e) => Err(e.into()),
            Ok(_) => Ok(()),
        }
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
            Some(SamplingProblem::Both(Key::Runs))
        );
        assert_eq!(both.conflict().unwrap().key(), Key::PassRate);
        let stray = SamplingKeys {
            pass_threshold: Some(0.8),
            confidence: Some(0.9),
            ..SamplingKeys::default()
        };
        assert_eq!(
            stray.conflict(),
            Some(SamplingProblem::AdaptiveOnly(Key::Confidence))
        );
        let early = SamplingKeys {
            pass_rate: Some(0.8),
            early_stop: Some(true),
            ..SamplingKeys::default()
        };
        assert_eq!(early.conflict(), Some(SamplingProblem::EarlyStopAdaptive));
    }

    /// `[defaults]` values are checked as far as they can be, in bounded time even for an extreme
    /// indifference; `max_runs` only against a pass rate written beside it.
    #[test]
    fn defaults_are_checked_without_the_tests_own_keys() {
        let tiny = SamplingKeys {
            indifference: Some(1e-10),
            ..SamplingKeys::default()
        };
        assert_eq!(tiny.check_defaults(), Ok(()));
        let with_rate = SamplingKeys {
            pass_rate: Some(0.5),
            ..tiny
        };
        let err = with_rate.check_defaults().unwrap_err();
        // No `max_runs` could decide it: the key to fix is the indifference.
        assert_eq!(err.key(), Key::Indifference);
        assert!(
            err.to_string()
                .starts_with("`indifference` is 0.0000000001: too small for any test to decide"),
            "{err}"
        );
        let few = SamplingKeys {
            max_runs: Some(10),
            ..SamplingKeys::default()
        };
        assert_eq!(few.check_defaults(), Ok(()));
        let none = SamplingKeys {
            max_runs: Some(0),
            ..SamplingKeys::default()
        };
        assert_eq!(none.check_defaults().unwrap_err().key(), Key::MaxRuns);
        assert_eq!(
            SamplingProblem::NoRuns.to_string(),
            "`runs` is 0; it must be at least 1 (the number of samples)"
        );
        assert_eq!(
            SamplingProblem::Threshold(1.5).to_string(),
            "`pass_threshold` is 1.5; it must be in (0, 1]: the share of samples that must pass, e.g. 0.8 for 4 of 5"
        );
        assert_eq!(
            SamplingProblem::NoRuns.problem(),
            "is 0; it must be at least 1 (the number of samples)"
        );
    }
}
