//! How a model call ended without an answer ([`CallError`], with a [`CallErrorKind`] a user can
//! match), and how each call of a sample ended ([`CallEnding`], noted on its `RunScope`).

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use crate::cassette::decision::{Ignore, Refusal, Unavailable};
use crate::provider::ProviderError;

/// Why a model call gave no answer: its [`kind`](CallError::kind), the text shown for it, and the
/// error that caused it ([`source`](Error::source)), when there is one.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallError {
    kind: CallErrorKind,
    message: String,
    source: Option<Arc<dyn Error + Send + Sync + 'static>>,
}

/// What kind of failure a [`CallError`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallErrorKind {
    /// No recording, and the key that would record it is not set (outside CI): the call is neither
    /// made nor replayed, and the trial is ignored.
    NoKey {
        /// The variable to set.
        var: String,
    },
    /// A `live_only` test without a recording: the call is not made, and the trial is ignored.
    LiveOnly,
    /// The call must be made (cassettes `off` or `record`) but its key is not set.
    MissingKey {
        /// The variable to set.
        var: String,
    },
    /// The provider answered with an error, or not at all, after its retries.
    Provider {
        /// The HTTP status, when a response came (none for a timeout or a connection failure).
        status: Option<u16>,
        /// The attempts made (more than one when the call was retried).
        attempts: u32,
    },
    /// No recording of this call, and the run may not make it (replay-only, or auto mode under CI).
    NotRecorded {
        /// Refused because the run is under CI (auto mode), rather than replay-only.
        ci: bool,
    },
    /// The sample has recordings, but none for this call: its prompt or settings changed.
    Stale {
        /// How many recordings the cassette holds for the sample.
        recorded: usize,
        /// What differs from the closest recorded request ("model a → b", a diff of the prompt).
        changes: Vec<String>,
    },
    /// The run's or the test's budget refused the call.
    Budget,
    /// A cassette could not be read or written, or holds an entry of another kind for this call.
    Cassette,
    /// The call cannot be made as configured: an unknown provider, no judge or embedding model, a
    /// follow-up of a run that has no conversation or with an empty message.
    Config,
    /// A test's `run_fn` returned an error.
    RunFn,
    /// The judge answered, but with no verdict (after its retry).
    NoVerdict,
    /// A tool source of an agent loop (an MCP server) failed.
    Tools,
}

impl CallError {
    /// An error of `kind` shown as `message`.
    pub(crate) fn new(kind: CallErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The same error, caused by `source`.
    pub(crate) fn caused_by(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// A call the provider failed, shown as `message` (redacted); its source is `error`, redacted too.
    pub(crate) fn provider(error: &ProviderError) -> Self {
        let redacted = ProviderError {
            message: crate::redact::redact(&error.message).into_owned(),
            ..error.clone()
        };
        Self::new(
            CallErrorKind::Provider {
                status: error.status,
                attempts: error.attempts,
            },
            crate::redact::redact(&error.to_string()).into_owned(),
        )
        .caused_by(redacted)
    }

    /// A call not made, the trial ignored for `reason`.
    pub(crate) fn unavailable(reason: Unavailable) -> Self {
        let kind = match reason.why {
            Ignore::NoKey { var } => CallErrorKind::NoKey { var },
            Ignore::LiveOnly => CallErrorKind::LiveOnly,
        };
        Self::new(kind, reason.message)
    }

    /// A call refused without being made, said as `message`.
    pub(crate) fn refused(refusal: &Refusal, changes: Vec<String>, message: String) -> Self {
        let kind = match refusal {
            Refusal::Stale { recorded } => CallErrorKind::Stale {
                recorded: *recorded,
                changes,
            },
            Refusal::NotRecorded => CallErrorKind::NotRecorded { ci: false },
            Refusal::NotRecordedUnderCi => CallErrorKind::NotRecorded { ci: true },
            Refusal::MissingKey { var } => CallErrorKind::MissingKey { var: var.clone() },
        };
        Self::new(kind, message)
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> &CallErrorKind {
        &self.kind
    }

    /// Whether the call was neither made nor replayed and the trial is ignored (no recording and no
    /// key, or a `live_only` test without a recording), rather than failed.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self.kind,
            CallErrorKind::NoKey { .. } | CallErrorKind::LiveOnly
        )
    }

    /// Why the trial is ignored, when the call is unavailable.
    pub(crate) fn as_unavailable(&self) -> Option<Unavailable> {
        let why = match &self.kind {
            CallErrorKind::NoKey { var } => Ignore::NoKey { var: var.clone() },
            CallErrorKind::LiveOnly => Ignore::LiveOnly,
            _ => return None,
        };
        Some(Unavailable {
            why,
            message: self.message.clone(),
        })
    }

    /// How this error ends its call, for the sample's record.
    pub(crate) fn ending(&self) -> CallEnding {
        match self.as_unavailable() {
            Some(reason) => CallEnding::Unavailable(reason),
            None => CallEnding::Failed(self.clone()),
        }
    }
}

impl CallErrorKind {
    /// Whether the provider was asked more than once (its retries) before the call failed.
    pub fn retried(&self) -> bool {
        matches!(self, CallErrorKind::Provider { attempts, .. } if *attempts > 1)
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Error for CallError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}

/// A call to a provider no endpoint has fails with its message, naming the closest and the known ones.
impl From<crate::config::UnknownProvider> for CallError {
    fn from(unknown: crate::config::UnknownProvider) -> Self {
        Self::new(CallErrorKind::Config, unknown.to_string())
    }
}

/// How one model call of a sample ended, as the sample's scope records it: what its outcome is read
/// from ([`crate::outcome::classify`]).
#[derive(Debug, Clone)]
pub enum CallEnding {
    /// Answered by the provider.
    Made,
    /// Answered from a recording.
    Replayed,
    /// Neither made nor replayed: the trial is ignored for this reason.
    Unavailable(Unavailable),
    /// No answer, or none that could be used: the sample errors.
    Failed(CallError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_failure_keeps_its_status_its_attempts_and_its_cause_redacted() {
        crate::redact::protect_userinfo("http://user:call-error-s3cret@example.test");
        let failed = CallError::provider(&ProviderError {
            provider: "openai".into(),
            status: Some(429),
            error_type: Some("rate_limit_error".into()),
            message: "slow down, call-error-s3cret".into(),
            request_id: None,
            attempts: 3,
        });
        assert_eq!(
            failed.kind(),
            &CallErrorKind::Provider {
                status: Some(429),
                attempts: 3
            }
        );
        assert!(failed.kind().retried() && !failed.is_unavailable());
        let source = failed.source().expect("the provider's error");
        let cause = source
            .downcast_ref::<ProviderError>()
            .expect("a ProviderError");
        assert_eq!(cause.status, Some(429));
        for shown in [
            failed.to_string(),
            source.to_string(),
            format!("{failed:?}"),
        ] {
            assert!(!shown.contains("call-error-s3cret"), "{shown}");
            assert!(shown.contains("slow down"), "{shown}");
        }
        assert!(matches!(failed.ending(), CallEnding::Failed(_)));
    }

    #[test]
    fn refusals_and_ignored_calls_have_their_kind_and_keep_their_text() {
        let stale = CallError::refused(
            &Refusal::Stale { recorded: 2 },
            vec!["model a → b".into()],
            "stale, as worded".into(),
        );
        assert_eq!(
            stale.kind(),
            &CallErrorKind::Stale {
                recorded: 2,
                changes: vec!["model a → b".into()]
            }
        );
        assert_eq!(stale.to_string(), "stale, as worded");
        let under_ci = CallError::refused(&Refusal::NotRecordedUnderCi, Vec::new(), String::new());
        assert_eq!(under_ci.kind(), &CallErrorKind::NotRecorded { ci: true });
        let key = Refusal::MissingKey { var: "K".into() };
        assert_eq!(
            CallError::refused(&key, Vec::new(), String::new()).kind(),
            &CallErrorKind::MissingKey { var: "K".into() }
        );
        let reason = Unavailable {
            why: Ignore::NoKey { var: "K".into() },
            message: "no recording and K is not set".into(),
        };
        let ignored = CallError::unavailable(reason.clone());
        assert_eq!(ignored.kind(), &CallErrorKind::NoKey { var: "K".into() });
        assert!(ignored.is_unavailable());
        assert_eq!(ignored.to_string(), reason.message);
        assert!(matches!(ignored.ending(), CallEnding::Unavailable(u) if u == reason));
    }
}
