//! When to retry and how long to wait.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::config::RetryConfig;

/// Statuses worth another attempt: request timeout, rate limit, and every server error (Anthropic's
/// 529 "overloaded" included). Other 4xx mean the request itself is wrong.
pub(super) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429) || (500..600).contains(&status)
}

/// The wait before the retry that follows attempt `attempt` (1-based): `initial_backoff` doubled per
/// attempt, capped at `max_backoff`, then drawn uniformly from its upper half. The jitter spreads the
/// retries of many parallel trials; keeping the lower half out keeps the wait meaningful.
pub(super) fn backoff(retry: &RetryConfig, attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(30);
    let full = retry
        .initial_backoff
        .saturating_mul(1u32 << doublings)
        .min(retry.max_backoff);
    full.mul_f64(rand::random_range(0.5..=1.0))
}

/// A header's value as text, trimmed (`None` when absent or not text).
pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The wait a response asks for: `retry-after-ms` (Anthropic, OpenAI), else `retry-after` in seconds
/// or as an HTTP date (a date in the past means now).
pub(super) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name| header(headers, name);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(saturating_secs(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| saturating_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A protobuf JSON duration such as Gemini's `retryDelay`: `"1.5s"`, `"30s"`.
pub(super) fn parse_proto_duration(text: &str) -> Option<Duration> {
    let secs: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| saturating_secs(secs))
}

/// `secs` (finite, not negative) as a duration; a value beyond what a `Duration` holds is the longest
/// one (the caller caps it at `max_backoff`), never a panic.
fn saturating_secs(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    /// A header map of `pairs` (shared with the limiter's tests).
    pub(crate) fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 409, 422] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let retry = RetryConfig {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            request_timeout: Duration::from_secs(1),
            ..RetryConfig::default()
        };
        for _ in 0..50 {
            let first = backoff(&retry, 1);
            assert!(
                first >= Duration::from_millis(50) && first <= Duration::from_millis(100),
                "{first:?}"
            );
            let second = backoff(&retry, 2);
            assert!(
                second >= Duration::from_millis(100) && second <= Duration::from_millis(200),
                "{second:?}"
            );
            let capped = backoff(&retry, 9);
            assert!(
                capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350),
                "{capped:?}"
            );
            assert!(backoff(&retry, u32::MAX) <= Duration::from_millis(350));
        }
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // Wed, 21 Oct 2015 07:28:00 GMT
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "0.25")]), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "2"), ("retry-after-ms", "150")]),
                now
            ),
            Some(Duration::from_millis(150))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:07 GMT")]),
                now
            ),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:27:00 GMT")]),
                now
            ),
            Some(Duration::ZERO)
        );
        // Absurd values do not panic; the retry loop caps them at max_backoff.
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "1e30")]), now),
            Some(Duration::MAX)
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1e300")]), now),
            Some(Duration::MAX)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn proto_durations() {
        assert_eq!(
            parse_proto_duration("1.5s"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_proto_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_proto_duration("30"), None);
        assert_eq!(parse_proto_duration("-1s"), None);
        assert_eq!(parse_proto_duration("1e300s"), Some(Duration::MAX));
    }
}
