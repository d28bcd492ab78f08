//! Who makes a call: a leaf, so the accounting, the cassettes and their policy can all name it.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::{Deserialize, Serialize};

/// Who makes a call: the accounting keeps them apart, and a cassette entry records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallRole {
    /// The model under test.
    Subject,
    /// The judge.
    Judge,
    /// An embeddings call of the `similar` assertion or `run.similarity`.
    Embedding,
}

/// Whether the tests a record command re-runs may call the judge: the command names the judge's
/// missing key only then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JudgeUse {
    /// None of them does (suite cases without a judge assertion).
    No,
    /// One does (a judge assertion, a calibration set).
    Yes,
    /// A test body asks the judge or not as it runs: not known before.
    #[default]
    IfTheBodyAsks,
}

impl CallRole {
    /// The role as written in cassettes and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            CallRole::Subject => "subject",
            CallRole::Judge => "judge",
            CallRole::Embedding => "embedding",
        }
    }
}
