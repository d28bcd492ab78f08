//! What the engine tells the run of each call: it started, and how it ended (the run's reporter
//! counts them; the engine never imports the harness).

use crate::role::CallRole;

/// One call, as the engine tells the run about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEvent {
    /// A call (or its replay) starts.
    Started(CallRole),
    /// It ended: replayed from a cassette, made, or neither (it failed before an answer).
    Finished(CallRole, CallEnd),
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    /// Answered from a recording.
    Replayed,
    /// Answered by the provider.
    Made,
    /// No answer (a provider error, a missing recording, a refusal).
    Failed,
}

/// What hears of every call: the run's reporter, or nothing.
pub trait CallObserver: Send + Sync {
    /// Hears one call event.
    fn call_event(&self, event: CallEvent);
}

/// Nobody listens (unit tests, an engine outside a harness).
impl CallObserver for () {
    fn call_event(&self, _event: CallEvent) {}
}
