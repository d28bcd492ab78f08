//! How many samples a test takes and what they must show: a fixed count with a pass threshold, the same
//! with an early stop, or Wald's SPRT (adaptive sampling). Pure data with the rule that builds it from
//! the sampling keys; `outcome` decides what the samples taken say.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use crate::config::{SamplingKeys, SamplingProblem};
use crate::defaults;
use crate::stats::sprt::Sprt;

/// `runs` samples of which a share must pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    /// Samples the test takes.
    pub runs: u32,
    /// The share of samples that must pass, in (0, 1].
    pub pass_threshold: f64,
}

impl Threshold {
    /// How many of the runs must pass.
    pub fn required(&self) -> u32 {
        // The epsilon keeps 5 x 0.8 at 4 despite binary floating point.
        ((f64::from(self.runs) * self.pass_threshold) - 1e-9)
            .ceil()
            .clamp(1.0, f64::from(self.runs)) as u32
    }
}

/// How many samples a case takes and what decides it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplePlan {
    /// `runs` samples, all taken; `pass_threshold` of them must pass.
    All(Threshold),
    /// The same verdict as [`SamplePlan::All`], but samples are launched only while it can still change
    /// (`early_stop = true`).
    EarlyStop(Threshold),
    /// Samples until Wald's SPRT decides whether the pass rate is above `pass_rate`, at most `max_runs`
    /// (`pass_rate = ...`).
    Adaptive(Sprt),
}

impl SamplePlan {
    /// One sample that must pass.
    pub const ONE: SamplePlan = SamplePlan::All(Threshold {
        runs: 1,
        pass_threshold: 1.0,
    });

    /// The most samples it may take (the numbered trials `::run_1` up to it).
    pub fn max_runs(&self) -> u32 {
        match self {
            SamplePlan::All(t) | SamplePlan::EarlyStop(t) => t.runs,
            SamplePlan::Adaptive(sprt) => sprt.max_runs,
        }
    }

    /// The passes that decide a pass: the threshold's count, or for an adaptive test the passes that,
    /// with `failed` failures, reach the SPRT's upper boundary.
    pub fn required(&self, failed: u32) -> u32 {
        match self {
            SamplePlan::All(t) | SamplePlan::EarlyStop(t) => t.required(),
            SamplePlan::Adaptive(sprt) => sprt.passes_to_pass(failed),
        }
    }

    /// The plan `keys` describe (defaults for what is unset), or what is wrong with them.
    pub fn from_keys(keys: &SamplingKeys) -> Result<SamplePlan, SamplingProblem> {
        // Merged from several levels, `early_stop` or `confidence` may come from one that is not this
        // plan's: only keys written together contradict each other (`SamplingKeys::conflict`).
        if let (Some(_), Some(_)) = (keys.pass_rate, keys.runs) {
            return Err(SamplingProblem::Both(prompt_tester_keys::Key::Runs));
        }
        if let (Some(_), Some(_)) = (keys.pass_rate, keys.pass_threshold) {
            return Err(SamplingProblem::Both(
                prompt_tester_keys::Key::PassThreshold,
            ));
        }
        if let Some(pass_rate) = keys.pass_rate {
            let sprt = Sprt::new(
                pass_rate,
                keys.indifference.unwrap_or(defaults::INDIFFERENCE),
                keys.confidence.unwrap_or(defaults::CONFIDENCE),
                keys.max_runs.unwrap_or(defaults::MAX_RUNS),
            )?;
            return Ok(SamplePlan::Adaptive(sprt));
        }
        let runs = keys.runs.unwrap_or(1);
        let pass_threshold = keys.pass_threshold.unwrap_or(1.0);
        if runs == 0 {
            return Err(SamplingProblem::NoRuns);
        }
        // Written so that NaN is out of range too.
        if !(pass_threshold > 0.0 && pass_threshold <= 1.0) {
            return Err(SamplingProblem::Threshold(pass_threshold));
        }
        let threshold = Threshold {
            runs,
            pass_threshold,
        };
        Ok(if keys.early_stop == Some(true) {
            SamplePlan::EarlyStop(threshold)
        } else {
            SamplePlan::All(threshold)
        })
    }

    /// The share of samples that must pass (the pass rate asked about, for an adaptive test).
    pub fn pass_threshold(&self) -> f64 {
        match self {
            SamplePlan::All(t) | SamplePlan::EarlyStop(t) => t.pass_threshold,
            SamplePlan::Adaptive(sprt) => sprt.pass_rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_runs_round_up() {
        let required = |runs, pass_threshold| {
            Threshold {
                runs,
                pass_threshold,
            }
            .required()
        };
        assert_eq!(required(5, 0.8), 4);
        assert_eq!(required(5, 1.0), 5);
        assert_eq!(required(3, 0.5), 2);
        assert_eq!(required(10, 0.01), 1);
        assert_eq!(required(1, 0.3), 1);
    }
}
