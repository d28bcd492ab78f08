//! The in-flight limit of one endpoint, adapted to what the endpoint tolerates.
//!
//! A provider that limits concurrency answers 429 (Anthropic also 529) beyond its limit. Retrying at
//! the configured concurrency would keep hitting it, so the limit adapts (AIMD, as TCP does): a
//! rate-limit answer halves it (floor 1), once per window of calls (the calls already in flight when it
//! shrank were sent under the old limit and say nothing new); every `limit` successes of calls that
//! filled the limit grow it by one, never above the configured limit (calls that left slots free say
//! nothing of whether the endpoint takes more). Growing back to the limit that last met a rate limit
//! takes [`PROBE_PATIENCE`] times as many successes: that level is known to be too much, so it is
//! probed rarely, not every few round trips. Rate-limit headers (`anthropic-ratelimit-requests-*`,
//! `x-ratelimit-*-requests`) pace new calls before a 429 happens: when the window has no request left,
//! new calls wait for its reset.
//!
//! [`AdaptiveLimit`] is the pure decision; [`Limiter`] is the async gate around it (a tokio `Semaphore` cannot
//! shrink while its permits are out).

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;
use tokio::sync::Notify;

/// How many times more successes it takes to grow to the limit that last met a rate limit, or past it.
pub(crate) const PROBE_PATIENCE: usize = 4;

/// How a call through the gate ended, for the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A 2xx answer: the endpoint coped with this many calls.
    Success,
    /// 429 or 529: the endpoint is past its limit.
    RateLimited,
    /// Anything else (a transport error, another status): says nothing about the limit.
    Neutral,
}

/// A slot taken in the gate: the window (`epoch`) it was taken in, and whether it filled the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    epoch: u64,
    full: bool,
}

/// Why a call cannot start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Every slot is taken: wait until one is released.
    ForSlot,
    /// The provider's request window is used up: wait until it resets.
    Until(Instant),
}

/// What the provider's headers say of its request window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Requests left in the window.
    pub remaining: u64,
    /// How long until the window resets.
    pub resets_in: Duration,
}

/// The adaptive limit's state and decisions, without I/O or clocks of its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AdaptiveLimit {
    configured: usize,
    limit: usize,
    in_flight: usize,
    /// Bumped by every decrease; a rate-limit answer to a call taken in an older window is ignored.
    epoch: u64,
    /// Successes since the limit last changed.
    successes: usize,
    /// The limit the last rate-limit answer came at, until the limit grows past it.
    ceiling: Option<usize>,
    rate_limited: u64,
    /// Starts left before `until`, from the provider's headers.
    pace: Option<(u64, Instant)>,
    /// The longest a window reset is waited for (a daily window must not stall a run for hours).
    max_pace: Duration,
}

impl AdaptiveLimit {
    /// A gate allowing `configured` calls in flight (at least 1); a window reset is waited for at most
    /// `max_pace`.
    pub(crate) fn new(configured: usize, max_pace: Duration) -> Self {
        let configured = configured.max(1);
        Self {
            configured,
            limit: configured,
            in_flight: 0,
            epoch: 0,
            successes: 0,
            ceiling: None,
            rate_limited: 0,
            pace: None,
            max_pace,
        }
    }

    /// Takes a slot, or says what to wait for.
    pub(crate) fn try_acquire(&mut self, now: Instant) -> Result<Ticket, Wait> {
        if let Some((left, until)) = self.pace {
            if now >= until {
                self.pace = None;
            } else if left == 0 {
                return Err(Wait::Until(until));
            }
        }
        if self.in_flight >= self.limit {
            return Err(Wait::ForSlot);
        }
        self.in_flight += 1;
        if let Some((left, _)) = &mut self.pace {
            *left -= 1;
        }
        Ok(Ticket {
            epoch: self.epoch,
            full: self.in_flight >= self.limit,
        })
    }

    /// Gives back the slot of `ticket`, adapting the limit to `outcome`. Returns how many more calls
    /// may start now than before (the waiters to wake).
    pub(crate) fn release(&mut self, ticket: Ticket, outcome: Outcome) -> usize {
        let free_before = self.limit.saturating_sub(self.in_flight);
        self.in_flight = self.in_flight.saturating_sub(1);
        match outcome {
            Outcome::Success if ticket.full => {
                self.successes += 1;
                let probing = self.ceiling.is_some_and(|c| self.limit + 1 >= c);
                let needed = self.limit * if probing { PROBE_PATIENCE } else { 1 };
                if self.successes >= needed && self.limit < self.configured {
                    self.limit += 1;
                    self.successes = 0;
                    if self.ceiling.is_some_and(|c| self.limit > c) {
                        self.ceiling = None;
                    }
                }
            }
            Outcome::RateLimited => {
                self.rate_limited += 1;
                if ticket.epoch == self.epoch {
                    self.ceiling = Some(self.limit);
                    self.limit = (self.limit / 2).max(1);
                    self.epoch += 1;
                    self.successes = 0;
                }
            }
            Outcome::Success | Outcome::Neutral => {}
        }
        self.limit
            .saturating_sub(self.in_flight)
            .saturating_sub(free_before)
    }

    /// Paces new calls by the provider's request window, as seen at `now`.
    pub(crate) fn pace(&mut self, window: Window, now: Instant) {
        // `max_backoff_ms` may be anything: a reset beyond what the clock holds is a day away.
        let until = now
            .checked_add(window.resets_in.min(self.max_pace))
            .unwrap_or_else(|| now + Duration::from_secs(86_400));
        self.pace = Some((window.remaining, until));
    }

    /// What the gate has seen so far.
    pub(crate) fn stats(&self) -> RateLimitStats {
        RateLimitStats {
            rate_limited: self.rate_limited,
            limit: self.limit,
            configured: self.configured,
        }
    }
}

/// What an endpoint's rate limits did to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitStats {
    /// Rate-limit answers (429, and Anthropic's 529) received.
    pub rate_limited: u64,
    /// The in-flight limit now.
    pub limit: usize,
    /// The in-flight limit configured.
    pub configured: usize,
}

/// The async gate of one endpoint: calls wait here for a slot under the adaptive limit.
#[derive(Debug)]
pub(crate) struct Limiter {
    gate: Mutex<AdaptiveLimit>,
    freed: Notify,
}

/// A slot in flight; dropping it without [`Permit::finish`] releases it as [`Outcome::Neutral`].
#[derive(Debug)]
pub(crate) struct Permit<'a> {
    limiter: &'a Limiter,
    ticket: Option<Ticket>,
}

impl Limiter {
    pub(crate) fn new(configured: usize, max_pace: Duration) -> Self {
        Self {
            gate: Mutex::new(AdaptiveLimit::new(configured, max_pace)),
            freed: Notify::new(),
        }
    }

    fn gate(&self) -> MutexGuard<'_, AdaptiveLimit> {
        // The gate's state stays consistent even if a holder panicked: every update is one step.
        self.gate.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a slot.
    pub(crate) async fn acquire(&self) -> Permit<'_> {
        loop {
            // Registered before the check, so a slot freed in between still wakes this waiter.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let decision = self.gate().try_acquire(Instant::now());
            match decision {
                Ok(ticket) => {
                    return Permit {
                        limiter: self,
                        ticket: Some(ticket),
                    };
                }
                Err(Wait::ForSlot) => freed.await,
                Err(Wait::Until(at)) => {
                    tokio::select! {
                        _ = freed => {}
                        _ = tokio::time::sleep_until(at.into()) => {}
                    }
                }
            }
        }
    }

    /// Paces new calls by the provider's request window.
    pub(crate) fn pace(&self, window: Window) {
        self.gate().pace(window, Instant::now());
    }

    /// What the gate has seen so far.
    pub(crate) fn stats(&self) -> RateLimitStats {
        self.gate().stats()
    }

    fn release(&self, ticket: Ticket, outcome: Outcome) {
        let wake = self.gate().release(ticket, outcome);
        for _ in 0..wake {
            self.freed.notify_one();
        }
    }
}

impl Permit<'_> {
    /// Releases the slot, telling the gate how the call went.
    pub(crate) fn finish(mut self, outcome: Outcome) {
        if let Some(ticket) = self.ticket.take() {
            self.limiter.release(ticket, outcome);
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.limiter.release(ticket, Outcome::Neutral);
        }
    }
}

/// The request window a response reports: Anthropic's `anthropic-ratelimit-requests-remaining` with
/// `-reset` (an RFC 3339 time), or OpenAI's `x-ratelimit-remaining-requests` with
/// `x-ratelimit-reset-requests` (a duration such as `1s`, `6m0s`, `20ms`).
pub(crate) fn window(headers: &HeaderMap, now: SystemTime) -> Option<Window> {
    let header = |name| super::retry::header(headers, name);
    let anthropic = || {
        let remaining = header("anthropic-ratelimit-requests-remaining")?
            .parse()
            .ok()?;
        let reset = header("anthropic-ratelimit-requests-reset")?;
        let at = crate::utc::parse_rfc3339(reset)?;
        let resets_in = at.duration_since(now).unwrap_or(Duration::ZERO);
        Some(Window {
            remaining,
            resets_in,
        })
    };
    let openai = || {
        Some(Window {
            remaining: header("x-ratelimit-remaining-requests")?.parse().ok()?,
            resets_in: parse_go_duration(header("x-ratelimit-reset-requests")?)?,
        })
    };
    anthropic().or_else(openai)
}

/// A Go duration as OpenAI writes its resets: `1s`, `6m0s`, `20ms`, `1h2m3.5s`, `0.5s`. Saturates
/// instead of overflowing.
pub(crate) fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    let mut secs = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        secs += value * scale;
    }
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::retry::tests::headers;

    fn gate(configured: usize) -> AdaptiveLimit {
        AdaptiveLimit::new(configured, Duration::from_secs(30))
    }

    fn take(gate: &mut AdaptiveLimit, n: usize) -> Vec<Ticket> {
        (0..n)
            .map(|_| gate.try_acquire(Instant::now()).expect("a free slot"))
            .collect()
    }

    #[test]
    fn holds_at_most_the_limit() {
        let mut g = gate(3);
        let tickets = take(&mut g, 3);
        assert_eq!(g.try_acquire(Instant::now()), Err(Wait::ForSlot));
        assert_eq!(g.release(tickets[0], Outcome::Neutral), 1);
        assert!(g.try_acquire(Instant::now()).is_ok());
        assert_eq!(AdaptiveLimit::new(0, Duration::ZERO).stats().limit, 1);
    }

    #[test]
    fn a_rate_limit_halves_once_per_window_down_to_one() {
        let mut g = gate(16);
        let burst = take(&mut g, 16);
        // The whole burst was sent under the old limit: one halving for all of its 429s.
        for t in &burst[..12] {
            g.release(*t, Outcome::RateLimited);
        }
        assert_eq!(g.stats().limit, 8);
        assert_eq!(g.stats().rate_limited, 12);
        for t in &burst[12..] {
            g.release(*t, Outcome::Success);
        }
        // A call of the new window that is rate limited halves again, and so on down to 1.
        for want in [4, 2, 1, 1] {
            let t = take(&mut g, 1)[0];
            g.release(t, Outcome::RateLimited);
            assert_eq!(g.stats().limit, want);
        }
        assert_eq!(g.stats().configured, 16);
    }

    /// One success of a call that filled the limit (the others in flight end neutral).
    fn succeed_full(g: &mut AdaptiveLimit) {
        let others = g.stats().limit - 1;
        let out = take(g, others);
        let t = take(g, 1)[0];
        g.release(t, Outcome::Success);
        for t in out {
            g.release(t, Outcome::Neutral);
        }
    }

    /// How many such successes it takes for the limit to grow by one.
    fn full_successes_to_grow(g: &mut AdaptiveLimit) -> usize {
        let limit = g.stats().limit;
        (1..1000)
            .find(|_| {
                succeed_full(g);
                g.stats().limit > limit
            })
            .expect("the limit grows")
    }

    #[test]
    fn the_level_that_met_a_rate_limit_is_probed_patiently_then_passed() {
        let mut g = gate(16);
        // Say the limit came down to 4 (configured 16): a 429 there halves it to 2.
        g.limit = 4;
        let t = take(&mut g, 1)[0];
        g.release(t, Outcome::RateLimited);
        assert_eq!(g.stats().limit, 2);
        assert_eq!(full_successes_to_grow(&mut g), 2);
        assert_eq!(full_successes_to_grow(&mut g), 3 * PROBE_PATIENCE); // back to 4
        assert_eq!(full_successes_to_grow(&mut g), 4 * PROBE_PATIENCE); // past it
        assert_eq!(full_successes_to_grow(&mut g), 5); // beyond: the usual pace
    }

    #[test]
    fn successes_grow_the_limit_by_one_per_limit_up_to_the_configured() {
        let mut g = gate(6);
        let t = take(&mut g, 1)[0];
        g.release(t, Outcome::RateLimited);
        assert_eq!(g.stats().limit, 3);
        // Calls that leave slots free say nothing of what the endpoint takes: no growth.
        for _ in 0..10 {
            let t = take(&mut g, 1)[0];
            g.release(t, Outcome::Success);
        }
        assert_eq!(g.stats().limit, 3);
        // Calls that fill the limit: 3 successes to reach 4, 4 more to reach 5, 5 x PROBE_PATIENCE
        // more to reach 6 (where the 429 came), then never above 6.
        assert_eq!(full_successes_to_grow(&mut g), 3);
        assert_eq!(full_successes_to_grow(&mut g), 4);
        assert_eq!(full_successes_to_grow(&mut g), 5 * PROBE_PATIENCE);
        assert_eq!(g.stats().limit, 6);
        for _ in 0..50 {
            succeed_full(&mut g);
        }
        assert_eq!(g.stats().limit, 6, "never above the configured limit");
        // Neutral outcomes (500s, resets) change nothing.
        let t = take(&mut g, 1)[0];
        g.release(t, Outcome::Neutral);
        assert_eq!(g.stats().limit, 6);
    }

    #[test]
    fn shrinking_with_calls_out_frees_no_slot_until_they_drain() {
        let mut g = gate(4);
        let out = take(&mut g, 4);
        assert_eq!(g.release(out[0], Outcome::RateLimited), 0); // limit 2, 3 in flight
        assert_eq!(g.try_acquire(Instant::now()), Err(Wait::ForSlot));
        assert_eq!(g.release(out[1], Outcome::Neutral), 0); // 2 in flight
        assert_eq!(g.try_acquire(Instant::now()), Err(Wait::ForSlot));
        assert_eq!(g.release(out[2], Outcome::Neutral), 1); // 1 in flight
        assert!(g.try_acquire(Instant::now()).is_ok());
        // A success that grows the limit frees one more slot than it releases.
        assert_eq!(g.release(out[3], Outcome::Success), 1); // 1 in flight, limit 2 (1 success)
        let t = take(&mut g, 1)[0]; // fills the limit
        assert_eq!(g.release(t, Outcome::Success), 2); // 1 in flight, limit 3
    }

    #[test]
    fn an_empty_window_holds_new_calls_until_its_reset() {
        let mut g = gate(8);
        let now = Instant::now();
        g.pace(
            Window {
                remaining: 2,
                resets_in: Duration::from_millis(500),
            },
            now,
        );
        assert!(g.try_acquire(now).is_ok());
        assert!(g.try_acquire(now).is_ok());
        let reset = now + Duration::from_millis(500);
        assert_eq!(g.try_acquire(now), Err(Wait::Until(reset)));
        assert!(g.try_acquire(reset).is_ok(), "a new window after the reset");
        // A reset far away is waited for at most max_pace.
        let mut g = AdaptiveLimit::new(8, Duration::from_secs(2));
        g.pace(
            Window {
                remaining: 0,
                resets_in: Duration::from_secs(86_400),
            },
            now,
        );
        assert_eq!(
            g.try_acquire(now),
            Err(Wait::Until(now + Duration::from_secs(2)))
        );
        // Nor does a reset beyond the clock's range panic.
        let mut g = AdaptiveLimit::new(8, Duration::MAX);
        g.pace(
            Window {
                remaining: 0,
                resets_in: Duration::MAX,
            },
            now,
        );
        assert!(matches!(g.try_acquire(now), Err(Wait::Until(at)) if at > now));
    }

    #[test]
    fn windows_from_anthropic_and_openai_headers() {
        // 2025-01-15T10:30:00Z
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_736_937_000);
        type Headers = &'static [(&'static str, &'static str)];
        // (the response's headers, the window read: requests remaining, time to reset)
        let cases: [(Headers, Option<(u64, Duration)>); 6] = [
            (
                &[
                    ("anthropic-ratelimit-requests-limit", "50"),
                    ("anthropic-ratelimit-requests-remaining", "0"),
                    ("anthropic-ratelimit-requests-reset", "2025-01-15T10:30:12Z"),
                    ("anthropic-ratelimit-tokens-remaining", "39000"),
                ],
                Some((0, Duration::from_secs(12))),
            ),
            (
                &[
                    ("anthropic-ratelimit-requests-remaining", "3"),
                    (
                        "anthropic-ratelimit-requests-reset",
                        "2025-01-15T11:30:00.5+01:00",
                    ),
                ],
                Some((3, Duration::from_millis(500))),
            ),
            // A reset already past waits for nothing.
            (
                &[
                    ("anthropic-ratelimit-requests-remaining", "0"),
                    ("anthropic-ratelimit-requests-reset", "2025-01-15T10:29:00Z"),
                ],
                Some((0, Duration::ZERO)),
            ),
            (
                &[
                    ("x-ratelimit-limit-requests", "60"),
                    ("x-ratelimit-remaining-requests", "59"),
                    ("x-ratelimit-reset-requests", "1s"),
                    ("x-ratelimit-reset-tokens", "6m0s"),
                ],
                Some((59, Duration::from_secs(1))),
            ),
            (&[], None),
            (
                &[
                    ("x-ratelimit-remaining-requests", "many"),
                    ("x-ratelimit-reset-requests", "1s"),
                ],
                None,
            ),
        ];
        for (pairs, expected) in cases {
            let expected = expected.map(|(remaining, resets_in)| Window {
                remaining,
                resets_in,
            });
            assert_eq!(window(&headers(pairs), now), expected, "{pairs:?}");
        }
    }

    #[test]
    fn go_durations() {
        let d = |s| parse_go_duration(s);
        assert_eq!(d("1s"), Some(Duration::from_secs(1)));
        assert_eq!(d("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(d("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(d("8.64s"), Some(Duration::from_millis(8640)));
        assert_eq!(d("1h2m3.5s"), Some(Duration::from_millis(3_723_500)));
        assert_eq!(d("0"), Some(Duration::ZERO));
        assert_eq!(d("1e400h"), None);
        assert_eq!(d("99999999999999999999h"), Some(Duration::MAX));
        for bad in ["", "s", "1", "1x", "-1s", "1.2.3s"] {
            assert_eq!(d(bad), None, "{bad:?}");
        }
    }

    /// Whether `acquire` completes within a short while.
    async fn gets_in(limiter: &Limiter) -> Option<Permit<'_>> {
        tokio::time::timeout(Duration::from_millis(50), limiter.acquire())
            .await
            .ok()
    }

    #[tokio::test]
    async fn the_async_gate_shrinks_while_permits_are_out() {
        let limiter = Limiter::new(4, Duration::from_secs(1));
        let mut out = vec![];
        for _ in 0..4 {
            out.push(gets_in(&limiter).await.expect("a free slot"));
        }
        assert!(gets_in(&limiter).await.is_none());
        out.pop().unwrap().finish(Outcome::RateLimited); // limit 2, 3 in flight
        assert!(gets_in(&limiter).await.is_none());
        drop(out.pop()); // a dropped permit is released too: 2 in flight
        assert!(gets_in(&limiter).await.is_none());
        out.pop().unwrap().finish(Outcome::Success); // 1 in flight
        let again = gets_in(&limiter).await.expect("a slot under the new limit");
        assert!(gets_in(&limiter).await.is_none());
        assert_eq!(limiter.stats().limit, 2);
        drop((again, out));
    }

    #[tokio::test]
    async fn a_waiter_wakes_when_a_slot_frees_and_a_cancelled_one_loses_nothing() {
        let limiter = std::sync::Arc::new(Limiter::new(1, Duration::from_secs(1)));
        let held = limiter.acquire().await;
        // A waiter that gives up must not swallow the wake-up meant for the next one.
        assert!(gets_in(&limiter).await.is_none());
        let waiter = {
            let limiter = limiter.clone();
            tokio::spawn(async move {
                limiter.acquire().await.finish(Outcome::Success);
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        held.finish(Outcome::Success);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("the waiter got the freed slot")
            .unwrap();
    }

    #[tokio::test]
    async fn the_async_gate_holds_new_calls_until_the_window_resets() {
        let limiter = Limiter::new(4, Duration::from_secs(5));
        limiter.pace(Window {
            remaining: 1,
            resets_in: Duration::from_millis(300),
        });
        let started = Instant::now();
        let first = limiter.acquire().await;
        assert!(started.elapsed() < Duration::from_millis(100));
        let second = limiter.acquire().await;
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "{:?}",
            started.elapsed()
        );
        drop((first, second));
    }
}
