//! Why a case's samples cannot be made: the trial fails with it once, before anything is sent.

use crate::config::UnknownProvider;

/// Why no sample of a case can be made, said with where to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoSubject {
    /// The provider or the model is set nowhere: in the front end's words (the attribute's keys or
    /// the suite's), with where to set them.
    #[error("{0}")]
    Unset(String),
    /// The provider is no endpoint's; `at` is the test and where it is.
    #[error("{at}: {problem}")]
    UnknownProvider {
        /// The test and where it is.
        at: String,
        /// The name, the closest known one, and the known ones.
        problem: UnknownProvider,
    },
    /// A placeholder of the prompt or of `messages` has no value (the attribute's words, with the
    /// fix).
    #[error("{0}")]
    MissingPlaceholder(String),
}
