//! Why a run (or `cargo prompt-tester report`) could not start: each a variant, worded for the user,
//! printed as `error: ...` before the harness exits with [`Exit::Usage`](super::finish::Exit::Usage).
//! Nothing has run or been called.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::report::ReportError;

/// Why a run (or `cargo prompt-tester report`) could not start.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A harness flag is written wrong (`--junit` without its path, ...).
    #[error("{0}")]
    Flag(String),
    /// A harness variable holds a value that means nothing.
    #[error("{name}={value:?} {problem}")]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong, and what it takes.
        problem: &'static str,
    },
    /// `--subject` is not `provider/model`.
    #[error("--subject: {0}")]
    Subject(crate::model::SubjectError),
    /// The run's subject names no endpoint.
    #[error("the subject {subject} of this run: {problem}")]
    UnknownSubject {
        /// `provider/model`.
        subject: String,
        /// Why the provider is unknown.
        problem: crate::config::UnknownProvider,
    },
    /// The results, the baseline or its flags cannot be used, or `cargo prompt-tester report` has
    /// nothing to write.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// `prompt-tester.toml` or a configuration variable (`PROMPT_TESTER_CASSETTE` among them).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The crate's `.env` file.
    #[error("{}: {problem}", path.display())]
    Dotenv {
        /// The file.
        path: PathBuf,
        /// What is wrong (never its text, which may hold a key).
        problem: String,
    },
    /// The selected `app_env` tests' environment could not be set up.
    #[error("app_env: {0}")]
    AppEnv(String),
    /// `--prune-cassettes` cannot prune this run.
    #[error("--prune-cassettes refused: {0}; nothing was run or pruned")]
    PruneRefused(String),
}
