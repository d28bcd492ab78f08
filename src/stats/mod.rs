//! The statistics of prompt-test results, in one place: every rate is an estimate from a few samples,
//! so it comes with an interval, and every decision rule is a pure function tested against published
//! values.
//!
//! - [`interval`]: Wilson score intervals for a pass rate.
//! - [`fisher`]: Fisher's exact test, two-sided, for "did the pass rate change since the baseline?".
//! - [`sprt`]: Wald's sequential probability ratio test and the fixed-sample size it is compared with.
//! - [`agreement`]: a judge measured against labels (accuracy, TPR, TNR, Cohen's kappa, Rogan–Gladen).

pub mod agreement;
pub mod fisher;
pub mod interval;
pub mod sprt;

pub use interval::{Interval, wilson};
