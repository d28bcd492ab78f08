//! One sample's state while it runs: what its calls cost, how each ended, what its checks found, the
//! conversation its follow-ups reached, and the calls its application made through the recording
//! endpoint. Everything a sample's parts note goes here, under one lock; its outcome is read from it
//! once (`SampleState::ended`).

// Without the `endpoint` feature no call comes through the endpoint: its part stays empty.
#![cfg_attr(not(feature = "endpoint"), allow(dead_code))]

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, Weak};

use super::app_calls::Registry;
use super::{CallEnding, CallError, CallRole, Usage};
use crate::checks::Checks;
use crate::completion::Message;
use crate::trajectory::{NotedCall, Trajectory};

/// One sample's state: everything under one lock, and a signal for a wait on its endpoint requests.
#[derive(Default)]
pub(crate) struct SampleState {
    inner: Mutex<Noted>,
    /// Told each time one of its requests through the endpoint ends.
    request_ended: tokio::sync::Notify,
}

/// What a sample's parts noted so far.
#[derive(Default)]
struct Noted {
    usage: Usage,
    /// How each model call ended, in the order they ended: what the outcome is read from.
    calls: Vec<(CallRole, CallEnding)>,
    checks: Checks,
    /// The longest conversation a follow-up reached (empty without any).
    conversation: Vec<Message>,
    /// The failure of each failing verdict that errors the sample when required (an advisory one
    /// under `[judge] advisory = "error"`), as it reads.
    erroring_verdicts: Vec<String>,
    /// Its model calls (the harness's and its application's), in the order they ended.
    model_calls: Vec<NotedCall>,
    app: AppCalls,
}

/// What the sample's calls through the endpoint left: its URL's token, how many identical requests it
/// sent so far (each numbered in send order), whether a `run_fn` took the sample whole (its third
/// form), how many requests of it came, how many are under way and how many calls it made, and the
/// first call the engine refused (no recording under CI, the budget, no key): the sample ends by it
/// whatever its code returns.
#[derive(Default)]
struct AppCalls {
    token: Option<(String, Weak<Registry>)>,
    ordinals: HashMap<String, Ordinals>,
    taken_whole: bool,
    received: u32,
    under_way: u32,
    calls: u32,
    refused: Option<CallError>,
    /// The first user message the endpoint saw for this sample: the task an `AppRun`'s judge is told.
    task: Option<String>,
    /// The text of the last answer the endpoint relayed.
    last_answer: Option<String>,
    /// The last text an `AppRun` asked the judge about.
    judged: Option<String>,
    /// The first provider the sample asked a base URL for.
    provider: Option<String>,
}

/// The places taken among a sample's identical requests.
#[derive(Default)]
struct Ordinals {
    taken: u32,
    given_back: BTreeSet<u32>,
}

/// What a sample's outcome is read from, once its body returned.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ended {
    /// How each model call ended, in order.
    pub calls: Vec<(CallRole, CallEnding)>,
    /// The failure of each failing verdict that errors the sample when the body fails with it.
    pub erroring_verdicts: Vec<String>,
}

impl SampleState {
    fn lock(&self) -> MutexGuard<'_, Noted> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes how one model call ended (the engine notes each of its calls; the judge notes a reply
    /// that held no verdict).
    pub(crate) fn note_call(&self, role: CallRole, ending: CallEnding) {
        self.lock().calls.push((role, ending));
    }

    /// A copy of the usage so far.
    pub(crate) fn usage(&self) -> Usage {
        self.lock().usage.clone()
    }

    /// Counts a call in the usage.
    pub(crate) fn account(&self, count: impl FnOnce(&mut Usage)) {
        count(&mut self.lock().usage);
    }

    /// Notes what a check found, for the reports.
    pub(crate) fn note(&self, edit: impl FnOnce(&mut Checks)) {
        edit(&mut self.lock().checks);
    }

    /// Notes a failing verdict that errors the sample when the body fails with it, by its failure's
    /// text (`JudgeFailed`, as `require` would return it).
    pub(crate) fn note_erroring_verdict(&self, failure: String) {
        self.lock().erroring_verdicts.push(failure);
    }

    /// Notes the conversation a follow-up reached; the longest is kept (a body may branch from one run).
    pub(crate) fn note_conversation(&self, transcript: &[Message]) {
        let mut state = self.lock();
        if transcript.len() >= state.conversation.len() {
            state.conversation = transcript.to_vec();
        }
    }

    /// What the checks found and the conversation the follow-ups reached, taken out.
    pub(crate) fn take_findings(&self) -> (Checks, Vec<Message>) {
        let mut state = self.lock();
        (
            std::mem::take(&mut state.checks),
            std::mem::take(&mut state.conversation),
        )
    }

    /// What the outcome is read from: how the calls ended and the verdicts that error the sample.
    pub(crate) fn ended(&self) -> Ended {
        let state = self.lock();
        Ended {
            calls: state.calls.clone(),
            erroring_verdicts: state.erroring_verdicts.clone(),
        }
    }

    /// Notes a model call of the sample, for its trajectory.
    pub(crate) fn note_model_call(&self, call: NotedCall) {
        self.lock().model_calls.push(call);
    }

    /// The sample's model calls so far, in causal order.
    pub(crate) fn trajectory(&self) -> Trajectory {
        Trajectory::of(&self.lock().model_calls)
    }

    /// The token of the sample's URL, `register` making it (and entering the sample in the
    /// endpoint's registry) on the first ask.
    pub(crate) fn token(&self, register: impl FnOnce() -> (String, Weak<Registry>)) -> String {
        self.lock().app.token.get_or_insert_with(register).0.clone()
    }

    /// The place (1-based) of a request among the sample's identical ones, `same` naming them: the
    /// first place given back, else the next. The place is given back when it is dropped unkept.
    pub(crate) fn place(&self, same: String) -> Place<'_> {
        let mut state = self.lock();
        let places = state.app.ordinals.entry(same.clone()).or_default();
        let ordinal = match places.given_back.pop_first() {
            Some(n) => n,
            None => {
                places.taken += 1;
                places.taken
            }
        };
        Place {
            state: self,
            same,
            ordinal,
            kept: false,
        }
    }

    /// Notes that a `run_fn` of the third form took the sample: its client is meant to call through
    /// the endpoint.
    pub(crate) fn take_whole(&self) {
        self.lock().app.taken_whole = true;
    }

    /// Whether a `run_fn` took the sample whole and the endpoint received no request of it: its
    /// client went around the endpoint, most likely (to the provider's own URL).
    pub(crate) fn went_around(&self) -> bool {
        let app = &self.lock().app;
        app.taken_whole && app.received == 0
    }

    /// Counts a request the endpoint received for this sample, whatever became of it.
    pub(crate) fn count_request(&self) {
        self.lock().app.received += 1;
    }

    /// Counts a request under way until the returned guard is dropped: its exchange ended, or was
    /// dropped (cancelled).
    pub(crate) fn under_way(&self) -> UnderWay<'_> {
        self.lock().app.under_way += 1;
        UnderWay(self)
    }

    /// Once no request of the sample is under way: a client may stop reading a stream at the last
    /// event it needs and return before the stream is recorded and counted.
    pub(crate) async fn settled(&self) {
        loop {
            let ended = self.request_ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.lock().app.under_way == 0 {
                return;
            }
            ended.await;
        }
    }

    /// Counts a call answered through the endpoint (made or replayed).
    pub(crate) fn count_app_call(&self) {
        self.lock().app.calls += 1;
    }

    /// How many calls the endpoint answered for this sample.
    pub(crate) fn app_calls(&self) -> u32 {
        self.lock().app.calls
    }

    /// Keeps the first call through the endpoint that the engine refused.
    pub(crate) fn refuse(&self, error: CallError) {
        self.lock().app.refused.get_or_insert(error);
    }

    /// Notes the first user message of a request relayed for this sample; the first one is kept.
    pub(crate) fn note_task(&self, task: String) {
        self.lock().app.task.get_or_insert(task);
    }

    /// The first user message the endpoint saw for this sample, if any.
    pub(crate) fn task(&self) -> Option<String> {
        self.lock().app.task.clone()
    }

    /// Notes the text of an answer the endpoint relayed; the last one is kept.
    pub(crate) fn note_answer(&self, text: String) {
        self.lock().app.last_answer = Some(text);
    }

    /// Notes a text the judge was asked about; the last one is kept.
    pub(crate) fn note_judged(&self, text: &str) {
        self.lock().app.judged = Some(text.to_string());
    }

    /// What an `AppRun` sample's reports show as its output: the last text judged, else the last
    /// answer the endpoint relayed.
    pub(crate) fn app_output(&self) -> Option<String> {
        let app = &self.lock().app;
        app.judged.clone().or_else(|| app.last_answer.clone())
    }

    /// Notes a provider the sample asked a base URL for; the first one is kept.
    pub(crate) fn note_provider(&self, provider: &str) {
        self.lock()
            .app
            .provider
            .get_or_insert_with(|| provider.to_string());
    }

    /// The first provider the sample asked a base URL for, if any.
    pub(crate) fn provider(&self) -> Option<String> {
        self.lock().app.provider.clone()
    }

    /// The first call through the endpoint refused, if any.
    pub(crate) fn refusal(&self) -> Option<CallError> {
        self.lock().app.refused.clone()
    }
}

/// A request of a sample under way (see [`SampleState::under_way`]).
pub(crate) struct UnderWay<'a>(&'a SampleState);

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.lock().app.under_way -= 1;
        self.0.request_ended.notify_waiters();
    }
}

/// A request's place among its sample's identical requests. Unless kept, it is given back when it
/// is dropped, whatever ended its request: the provider's error passed back to the client, a refusal,
/// or the client going away (a timeout drops the handler): the client's retry is the same request
/// in the same place, as a replay, where nothing times out, asks for it.
pub(crate) struct Place<'a> {
    state: &'a SampleState,
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
        if let Some(places) = self.state.lock().app.ordinals.get_mut(&self.same) {
            places.given_back.insert(self.ordinal);
        }
    }
}

/// The sample's URL is given out no more once it ends.
impl Drop for SampleState {
    fn drop(&mut self) {
        let state = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some((token, registry)) = &state.app.token
            && let Some(registry) = registry.upgrade()
        {
            registry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(token);
        }
    }
}
