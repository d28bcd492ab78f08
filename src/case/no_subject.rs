//! Why a case's samples cannot be made: the trial fails with it once, before anything is sent.

use std::fmt;

use crate::config::UnknownProvider;

/// Why no sample of a case can be made, said with where to fix it: the reason each of its samples
/// errors with (a reason the case holds, not an error anything returns).
#[derive(Debug, Clone, PartialEq)]
pub enum NoSubject {
    /// The provider or the model is set nowhere: in the front end's words (the attribute's keys or
    /// the suite's), with where to set them.
    Unset(String),
    /// The provider is no endpoint's; `at` is the test and where it is.
    UnknownProvider {
        /// The test and where it is.
        at: String,
        /// The name, the closest known one, and the known ones.
        problem: UnknownProvider,
    },
    /// A placeholder of the prompt or of `messages` has no value (the attribute's words, with the
    /// fix).
    MissingPlaceholder(String),
    /// A media value cannot be read or placed (a missing file, a wrong type), said with the file and
    /// the fix.
    Media(String),
}

impl fmt::Display for NoSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoSubject::Unset(said)
            | NoSubject::MissingPlaceholder(said)
            | NoSubject::Media(said) => f.write_str(said),
            NoSubject::UnknownProvider { at, problem } => write!(f, "{at}: {problem}"),
        }
    }
}
