//! UTC dates and RFC 3339 times, the few this crate writes (`recorded_at`, run ids, the price period)
//! and reads (Anthropic's rate-limit reset): the days-from-civil arithmetic of the proleptic Gregorian
//! calendar (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"), not a date library the
//! minimal build would compile for four call sites.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A UTC time to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Utc {
    /// The time `secs` seconds after the Unix epoch (before it when negative).
    pub fn from_unix(secs: i64) -> Self {
        let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32);
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day / 60 % 60,
            second: of_day % 60,
        }
    }

    /// Now, to the second.
    pub fn now() -> Self {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => after.as_secs() as i64,
            Err(before) => -(before.duration().as_secs() as i64),
        };
        Self::from_unix(secs)
    }

    /// `YYYY-MM-DD`.
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// RFC 3339 in UTC: `YYYY-MM-DDTHH:MM:SSZ`.
    pub fn rfc3339(&self) -> String {
        format!(
            "{}T{:02}:{:02}:{:02}Z",
            self.date(),
            self.hour,
            self.minute,
            self.second
        )
    }
}

/// The time an RFC 3339 timestamp names (`2026-12-07T04:30:00Z`, `…T04:30:00.25+01:00`); `None` when
/// it is not one.
pub(crate) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    let number = |range| digits(text, range);
    let punctuated = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !punctuated {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(i64::from(year), month)).contains(&day)
        && hour < 24
        && minute < 60
        && second <= 60;
    if !valid {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        // Nanoseconds: the first nine digits, scaled; finer ones are dropped.
        let kept = &fraction[..digits.min(9)];
        nanos = kept.parse::<u32>().ok()? * 10u32.pow(9 - kept.len() as u32);
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (hours, minutes) = (digits(rest, 1..3)?, digits(rest, 4..6)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * i64::from(hours * 3600 + minutes * 60)
        }
    };
    let secs = days_from_civil(i64::from(year), month, day) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second.min(59))
        - offset;
    let whole = Duration::from_secs(secs.unsigned_abs());
    let at = match secs >= 0 {
        true => UNIX_EPOCH.checked_add(whole),
        false => UNIX_EPOCH.checked_sub(whole),
    };
    at?.checked_add(Duration::from_nanos(u64::from(nanos)))
}

/// The number written at `range` of `text` in ASCII digits alone (no sign, no space).
fn digits(text: &str, range: std::ops::Range<usize>) -> Option<u32> {
    let digits = text.get(range)?;
    digits
        .bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| digits.parse().ok())?
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_through_days_across_eras_and_leap_days() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (11_016, (2000, 2, 29)),
            (20_794, (2026, 12, 7)),
            (-719_468, (0, 3, 1)),
            (2_932_896, (9999, 12, 31)),
        ] {
            assert_eq!(civil_from_days(days), date, "{days}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
        }
        // Every day of four centuries, both ways.
        let mut expected = (1900, 1, 1);
        for days in days_from_civil(1900, 1, 1)..days_from_civil(2300, 1, 1) {
            assert_eq!(civil_from_days(days), expected);
            let (y, m, d) = expected;
            expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn times_are_written_and_read_as_rfc_3339() {
        let t = Utc::from_unix(1_796_617_845);
        assert_eq!(t.rfc3339(), "2026-12-07T04:30:45Z");
        assert_eq!(t.date(), "2026-12-07");
        assert_eq!(Utc::from_unix(-1).rfc3339(), "1969-12-31T23:59:59Z");
        let at = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
        assert_eq!(
            parse_rfc3339("2026-12-07T04:30:45Z"),
            Some(at(1_796_617_845))
        );
        assert_eq!(
            parse_rfc3339("2026-12-07T05:30:45+01:00"),
            Some(at(1_796_617_845))
        );
        assert_eq!(
            parse_rfc3339("2026-12-06T23:00:45-05:30"),
            Some(at(1_796_617_845))
        );
        assert_eq!(
            parse_rfc3339("2026-12-07t04:30:45.25z"),
            Some(at(1_796_617_845) + Duration::from_millis(250))
        );
        for bad in [
            "",
            "2026-12-07",
            "2026-12-07T04:30:45",
            "2026-13-07T04:30:45Z",
            "2026-02-29T04:30:45Z",
            "2026-12-07T24:30:45Z",
            "2026-12-07T04:30:45.Z",
            "2026-12-07T04:30:45+0100",
            "2026-12-07T04:30:45+01:00 ",
            "２026-12-07T04:30:45Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }
}
