//! The calls a sample's application makes through the recording endpoint, as the engine keeps them:
//! the samples given a URL by token, where the endpoint listens, and what each sample's calls left.
//! The endpoint itself (`crate::endpoint`) serves them; the engine never names it.

// Without the `endpoint` feature no call comes through it: a sample's relay stays empty.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, Weak};

use super::{CallError, RunScope};

/// The samples whose URLs were given out, by token: a sample's entry goes when its scope does.
pub(crate) type Registry = Mutex<HashMap<String, Weak<RunScope>>>;

/// The recording endpoint once it listens: where, the run's secret (the first segment of every
/// path), and the samples given a URL. Its accept loop holds the samples weakly: it stops when the
/// engine, which keeps this, goes.
pub(crate) struct Listening {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    /// The run's secret.
    pub secret: String,
    /// The samples given a URL, by token.
    pub samples: std::sync::Arc<Registry>,
}

/// What one sample's calls through the endpoint left: its URL's token, how many identical requests it
/// sent so far (each numbered in send order), whether a `run_fn` took the sample whole (its third
/// form), how many requests of it came and how many calls it made, and the first call the engine
/// refused (no recording under CI, the budget, no key): the sample ends by it whatever its code
/// returns.
#[derive(Default)]
pub(crate) struct SampleRelay {
    token: OnceLock<(String, Weak<Registry>)>,
    ordinals: Mutex<HashMap<String, Ordinals>>,
    taken_whole: AtomicBool,
    received: AtomicU32,
    calls: AtomicU32,
    under_way: AtomicU32,
    ended: tokio::sync::Notify,
    refused: Mutex<Option<CallError>>,
}

impl SampleRelay {
    /// The token of the sample's URL, `register` making it (and entering the sample in the
    /// endpoint's registry) on the first ask.
    pub(crate) fn token(&self, register: impl FnOnce() -> (String, Weak<Registry>)) -> &str {
        &self.token.get_or_init(register).0
    }

    /// The place (1-based) of a request among the sample's identical ones, `same` naming them: the
    /// first place given back, else the next. The place is given back when it is dropped unkept.
    pub(crate) fn place(&self, same: String) -> Place<'_> {
        let mut ordinals = self.ordinals.lock().unwrap_or_else(|e| e.into_inner());
        let places = ordinals.entry(same.clone()).or_default();
        let ordinal = match places.given_back.pop_first() {
            Some(n) => n,
            None => {
                places.taken += 1;
                places.taken
            }
        };
        Place {
            relay: self,
            same,
            ordinal,
            kept: false,
        }
    }

    /// Notes that a `run_fn` of the third form took the sample: its client is meant to call through
    /// the endpoint.
    pub(crate) fn take_whole(&self) {
        self.taken_whole.store(true, Ordering::Relaxed);
    }

    /// Whether a `run_fn` took the sample whole and the endpoint received no request of it: its
    /// client went around the endpoint, most likely (to the provider's own URL).
    pub(crate) fn went_around(&self) -> bool {
        self.taken_whole.load(Ordering::Relaxed) && self.received.load(Ordering::Relaxed) == 0
    }

    /// Counts a request the endpoint received for this sample, whatever became of it.
    pub(crate) fn count_request(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request under way until the returned guard is dropped: its exchange ended, or was
    /// dropped (cancelled).
    pub(crate) fn under_way(&self) -> UnderWay<'_> {
        self.under_way.fetch_add(1, Ordering::AcqRel);
        UnderWay(self)
    }

    /// Once no request of the sample is under way: a client may stop reading a stream at the last
    /// event it needs and return before the stream is recorded and counted.
    pub(crate) async fn settled(&self) {
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.under_way.load(Ordering::Acquire) == 0 {
                return;
            }
            ended.await;
        }
    }

    /// Counts a call answered through the endpoint (made or replayed).
    pub(crate) fn count_call(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }

    /// How many calls the endpoint answered for this sample.
    pub(crate) fn calls(&self) -> u32 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Keeps the first refusal.
    pub(crate) fn refuse(&self, error: CallError) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        refused.get_or_insert(error);
    }

    /// The first call refused, if any.
    pub(crate) fn refusal(&self) -> Option<CallError> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A request of a sample under way (see [`SampleRelay::under_way`]).
pub(crate) struct UnderWay<'a>(&'a SampleRelay);

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.under_way.fetch_sub(1, Ordering::AcqRel);
        self.0.ended.notify_waiters();
    }
}

/// A request's place among its sample's identical requests. Unless kept, it is given back when it
/// is dropped, whatever ended its request: the provider's error passed back to the client, a refusal,
/// or the client going away (a timeout drops the handler): the client's retry is the same request
/// in the same place, as a replay, where nothing times out, asks for it.
pub(crate) struct Place<'a> {
    relay: &'a SampleRelay,
    same: String,
    ordinal: u32,
    kept: bool,
}

impl Place<'_> {
    /// The place, 1-based.
    pub(crate) fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// Keeps the place: its request's answer was recorded or replayed under it.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let mut ordinals = self
            .relay
            .ordinals
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(places) = ordinals.get_mut(&self.same) {
            places.given_back.insert(self.ordinal);
        }
    }
}

/// The places taken among a sample's identical requests.
#[derive(Default)]
struct Ordinals {
    taken: u32,
    given_back: std::collections::BTreeSet<u32>,
}

impl Drop for SampleRelay {
    fn drop(&mut self) {
        if let Some((token, registry)) = self.token.get()
            && let Some(registry) = registry.upgrade()
        {
            registry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(token);
        }
    }
}
