//! The sampling keys (`runs`, `pass_threshold`, `early_stop` and adaptive sampling's `pass_rate`,
//! `confidence`, `max_runs`, `indifference`): their defaults, what contradicts what among them, and the
//! messages the attribute (at compile time) and the library (at run time) both give.

use std::fmt;

use crate::table::Key;

/// `confidence` when unset: α = β = 5%.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// `max_runs` when unset.
pub const DEFAULT_MAX_RUNS: u32 = 40;

/// `indifference` when unset.
pub const DEFAULT_INDIFFERENCE: f64 = 0.05;

/// The sampling keys, in the order the library's `SamplingKeys` holds them.
pub const SAMPLING_KEYS: [Key; 7] = [
    Key::Runs,
    Key::PassThreshold,
    Key::EarlyStop,
    Key::PassRate,
    Key::Confidence,
    Key::MaxRuns,
    Key::Indifference,
];

/// Sampling keys written in one place (an attribute, a table) that contradict each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// `pass_rate` beside `runs` or `pass_threshold` (the key held).
    Both(Key),
    /// A key of adaptive sampling (the key held) beside `runs` / `pass_threshold`.
    AdaptiveOnly(Key),
    /// `early_stop` beside `pass_rate`.
    EarlyStopAdaptive,
}

impl Conflict {
    /// The contradiction among the keys `written` says are set in one place, if any: `pass_rate`
    /// beside a fixed-sample key first, then `early_stop` beside `pass_rate`, then an adaptive-only key
    /// beside a fixed-sample one.
    pub fn among(written: impl Fn(Key) -> bool) -> Option<Conflict> {
        let fixed = [Key::Runs, Key::PassThreshold]
            .into_iter()
            .find(|&key| written(key));
        if written(Key::PassRate) {
            return match fixed {
                Some(key) => Some(Conflict::Both(key)),
                None => written(Key::EarlyStop).then_some(Conflict::EarlyStopAdaptive),
            };
        }
        fixed?;
        [Key::Confidence, Key::MaxRuns, Key::Indifference]
            .into_iter()
            .find(|&key| written(key))
            .map(Conflict::AdaptiveOnly)
    }

    /// The key to fix, where the problem is reported.
    pub fn key(&self) -> Key {
        match self {
            Conflict::Both(_) => Key::PassRate,
            Conflict::AdaptiveOnly(key) => *key,
            Conflict::EarlyStopAdaptive => Key::EarlyStop,
        }
    }

    /// The message after "`key` ", for places that show the key their own way.
    pub fn problem(&self) -> impl fmt::Display + '_ {
        Shown(move |f| {
            match self {
            Conflict::Both(fixed) => write!(
                f,
                "cannot be combined with `{fixed}`: `pass_rate` samples until the pass rate is known (adaptive \
                 sampling, at most `max_runs`), `runs` and `pass_threshold` take a fixed number; keep one of \
                 the two"
            ),
            Conflict::AdaptiveOnly(_) => f.write_str(
                "applies only to adaptive sampling (`pass_rate = ...`), not beside `runs` / `pass_threshold`; \
                 remove it, or replace `runs` and `pass_threshold` with `pass_rate`",
            ),
            Conflict::EarlyStopAdaptive => f.write_str(
                "applies to `runs = N`; adaptive sampling (`pass_rate`) stops as soon as it can by itself: \
                 remove `early_stop`",
            ),
        }
        })
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key(), self.problem())
    }
}

/// `max_runs` below the passes an adaptive test needs even when every run passes
/// ([`passes_needed`](crate::sprt::passes_needed)): the test could never pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TooFewRuns {
    /// The `max_runs` given.
    pub max_runs: u64,
    /// The passes needed in a row.
    pub needed: u64,
    /// The pass rate.
    pub pass_rate: f64,
    /// The indifference.
    pub indifference: f64,
    /// The confidence.
    pub confidence: f64,
}

impl TooFewRuns {
    /// The key to fix: `max_runs`, or `indifference` when no `max_runs` could be enough (the runs
    /// needed are more than a whole number of runs can count).
    pub fn key(&self) -> Key {
        if self.needed > u64::from(u32::MAX) {
            Key::Indifference
        } else {
            Key::MaxRuns
        }
    }

    /// The message after "`max_runs` ".
    pub fn problem(&self) -> impl fmt::Display + '_ {
        let TooFewRuns {
            max_runs,
            needed,
            pass_rate,
            indifference,
            confidence,
        } = *self;
        let unreachable = self.key() == Key::Indifference;
        Shown(move |f| {
            if unreachable {
                return write!(
                    f,
                    "is {indifference}: too small for any test to decide (even when every run passes it would \
                     need {needed} runs, more than `max_runs` can be; pass_rate {pass_rate}, confidence \
                     {confidence}); widen `indifference` (e.g. 0.05) or lower `confidence`"
                );
            }
            write!(
                f,
                "is {max_runs}, but even when every run passes the test needs {needed} runs to pass (pass_rate \
                 {pass_rate}, indifference {indifference}, confidence {confidence}); raise `max_runs` to at least \
                 {needed}, or widen `indifference` or lower `confidence`"
            )
        })
    }
}

impl fmt::Display for TooFewRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key(), self.problem())
    }
}

/// `judge_samples = k` with k even: the k answers could split evenly. Suites, the attribute and its
/// values given as expressions refuse it with these words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvenJudgeSamples(pub u64);

impl EvenJudgeSamples {
    /// `Some` when `k` is even.
    pub fn of(k: u64) -> Option<Self> {
        k.is_multiple_of(2).then_some(Self(k))
    }

    /// What is wrong, after the key: "is 2, an even number: the answers could split evenly".
    pub fn problem(&self) -> String {
        format!(
            "is {}, an even number: the answers could split evenly",
            self.0
        )
    }

    /// How to fix it: "write an odd number, e.g. `judge_samples = 3`".
    pub fn fix(&self) -> String {
        format!("write an odd number, e.g. `judge_samples = {}`", self.0 + 1)
    }
}

impl fmt::Display for EvenJudgeSamples {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`judge_samples` {}; {}", self.problem(), self.fix())
    }
}

/// The bound `indifference` must stay below around `pass_rate`, so that both hypotheses,
/// pass_rate ± indifference, lie strictly between 0 and 1.
pub fn indifference_limit(pass_rate: f64) -> f64 {
    pass_rate.min(1.0 - pass_rate)
}

/// A computed bound as a message shows it: 0.1, not 0.09999999999999998.
pub fn shown(bound: f64) -> f64 {
    (bound * 1e6).round() / 1e6
}

/// Displays what a closure writes.
struct Shown<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result>(F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for Shown<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict_of(keys: &[Key]) -> Option<Conflict> {
        Conflict::among(|key| keys.contains(&key))
    }

    #[test]
    fn the_nearest_contradiction_is_named() {
        use Key::*;
        assert_eq!(
            conflict_of(&[PassRate, Runs, PassThreshold]),
            Some(Conflict::Both(Runs))
        );
        assert_eq!(
            conflict_of(&[PassRate, PassThreshold, EarlyStop]),
            Some(Conflict::Both(PassThreshold))
        );
        assert_eq!(
            conflict_of(&[PassRate, EarlyStop, MaxRuns]),
            Some(Conflict::EarlyStopAdaptive)
        );
        assert_eq!(
            conflict_of(&[Runs, Indifference, MaxRuns]),
            Some(Conflict::AdaptiveOnly(MaxRuns))
        );
        assert_eq!(
            conflict_of(&[PassRate, Confidence, MaxRuns, Indifference]),
            None
        );
        assert_eq!(conflict_of(&[Runs, PassThreshold, EarlyStop]), None);
        assert_eq!(conflict_of(&[Confidence]), None);
        assert_eq!(Conflict::Both(Runs).key(), PassRate);
        assert_eq!(Conflict::EarlyStopAdaptive.key(), EarlyStop);
    }

    /// The texts the attribute's UI tests and the library's tests pin.
    #[test]
    fn messages_read_key_first() {
        assert_eq!(
            Conflict::Both(Key::Runs).to_string(),
            "`pass_rate` cannot be combined with `runs`: `pass_rate` samples until the pass rate is known \
             (adaptive sampling, at most `max_runs`), `runs` and `pass_threshold` take a fixed number; keep one \
             of the two"
        );
        assert_eq!(
            Conflict::AdaptiveOnly(Key::MaxRuns).to_string(),
            "`max_runs` applies only to adaptive sampling (`pass_rate = ...`), not beside `runs` / \
             `pass_threshold`; remove it, or replace `runs` and `pass_threshold` with `pass_rate`"
        );
        assert_eq!(
            Conflict::EarlyStopAdaptive.to_string(),
            "`early_stop` applies to `runs = N`; adaptive sampling (`pass_rate`) stops as soon as it can by \
             itself: remove `early_stop`"
        );
        let short = TooFewRuns {
            max_runs: 10,
            needed: 24,
            pass_rate: 0.8,
            indifference: 0.05,
            confidence: 0.95,
        };
        assert_eq!(
            short.to_string(),
            "`max_runs` is 10, but even when every run passes the test needs 24 runs to pass (pass_rate 0.8, \
             indifference 0.05, confidence 0.95); raise `max_runs` to at least 24, or widen `indifference` or \
             lower `confidence`"
        );
        assert!(short.problem().to_string().starts_with("is 10, but"));
    }

    #[test]
    fn the_indifference_limit_is_shown_as_written() {
        assert_eq!(indifference_limit(0.9), 1.0 - 0.9);
        assert_eq!(shown(indifference_limit(0.9)), 0.1);
        assert_eq!(shown(indifference_limit(0.3)), 0.3);
    }
}
