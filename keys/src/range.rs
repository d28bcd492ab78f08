//! The values a key takes.

/// The values a numeric key takes. Checks are written so that NaN is never inside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Whole numbers from `min` to `max`, both included.
    Whole {
        /// The smallest value.
        min: u64,
        /// The largest value.
        max: u64,
    },
    /// Numbers from `low` to `high`, each end included or not.
    Real {
        /// The lower end.
        low: f64,
        /// Whether `low` itself is allowed.
        low_included: bool,
        /// The upper end.
        high: f64,
        /// Whether `high` itself is allowed.
        high_included: bool,
    },
}

impl Range {
    /// Whole numbers from `min` to `max`, both included.
    pub const fn whole(min: u64, max: u64) -> Range {
        Range::Whole { min, max }
    }

    /// Numbers strictly between `low` and `high`.
    pub const fn open(low: f64, high: f64) -> Range {
        Range::Real {
            low,
            low_included: false,
            high,
            high_included: false,
        }
    }

    /// Numbers above `low`, up to `high` included.
    pub const fn above_up_to(low: f64, high: f64) -> Range {
        Range::Real {
            low,
            low_included: false,
            high,
            high_included: true,
        }
    }

    /// Numbers from `low` included to below `high`.
    pub const fn from_below(low: f64, high: f64) -> Range {
        Range::Real {
            low,
            low_included: true,
            high,
            high_included: false,
        }
    }

    /// Numbers from `low` to `high`, both included.
    pub const fn closed(low: f64, high: f64) -> Range {
        Range::Real {
            low,
            low_included: true,
            high,
            high_included: true,
        }
    }

    /// Numbers from `low` up, infinity included (a literal too large for f64 reads as infinity).
    pub const fn at_least(low: f64) -> Range {
        Range::closed(low, f64::INFINITY)
    }

    /// Whether `value` is inside (never for NaN; a whole range takes whole values only).
    pub fn contains(&self, value: f64) -> bool {
        match *self {
            Range::Whole { min, max } => {
                value.fract() == 0.0 && value >= min as f64 && value <= max as f64
            }
            Range::Real {
                low,
                low_included,
                high,
                high_included,
            } => {
                let above = if low_included {
                    value >= low
                } else {
                    value > low
                };
                let below = if high_included {
                    value <= high
                } else {
                    value < high
                };
                above && below
            }
        }
    }

    /// Whether the whole number `value` is inside.
    pub fn contains_whole(&self, value: i128) -> bool {
        match *self {
            Range::Whole { min, max } => value >= i128::from(min) && value <= i128::from(max),
            Range::Real { .. } => self.contains(value as f64),
        }
    }

    /// The smallest and the largest value of a whole range; `None` for a range of numbers.
    pub const fn whole_bounds(&self) -> Option<(u64, u64)> {
        match *self {
            Range::Whole { min, max } => Some((min, max)),
            Range::Real { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_included_as_said_and_nan_never() {
        let share = Range::above_up_to(0.0, 1.0);
        assert!(!share.contains(0.0) && share.contains(1.0) && share.contains(0.5));
        assert!(!share.contains(f64::NAN) && !share.contains(1.0 + 1e-12));
        let confidence = Range::from_below(0.5, 1.0);
        assert!(confidence.contains(0.5) && !confidence.contains(1.0));
        let open = Range::open(0.0, 0.5);
        assert!(!open.contains(0.0) && !open.contains(0.5) && open.contains(0.25));
        let closed = Range::closed(0.0, 2.0);
        assert!(closed.contains(0.0) && closed.contains(2.0) && !closed.contains(-0.1));
        let non_negative = Range::at_least(0.0);
        assert!(non_negative.contains(f64::INFINITY) && !non_negative.contains(-1e-300));
        assert!(!non_negative.contains(f64::NAN));
    }

    #[test]
    fn whole_ranges_take_whole_values_of_any_size() {
        let runs = Range::whole(1, u64::from(u32::MAX));
        assert!(!runs.contains_whole(0) && runs.contains_whole(1));
        assert!(runs.contains_whole(i128::from(u32::MAX)));
        assert!(!runs.contains_whole(i128::from(u32::MAX) + 1) && !runs.contains_whole(-1));
        assert!(!runs.contains_whole(i128::MAX) && !runs.contains_whole(i128::MIN));
        assert!(runs.contains(3.0) && !runs.contains(2.5) && !runs.contains(f64::NAN));
        assert_eq!(runs.whole_bounds(), Some((1, u64::from(u32::MAX))));
        assert_eq!(Range::open(0.0, 1.0).whole_bounds(), None);
        assert!(!Range::open(0.0, 1.0).contains_whole(0));
    }
}
