//! What a sample's checks found, kept for the reports: how the sample ended ([`SampleStatus`]), each
//! assertion's outcome and each judge answer.
//!
//! The judge and the suite evaluator note them in the sample's `RunScope` as they decide; `Case::sample`
//! moves them into the sample's record. A leaf module, so the engine can hold them without importing the
//! judge.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::{Deserialize, Serialize};

use crate::stats::trust::{Advisory, Measurement, Votes};

/// How one sample ended: the one status its outcome, its record, its cassette verdict and the reports
/// share (`passed`, `failed`, `errored`, `unavailable` when written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleStatus {
    /// Every check held.
    Passed,
    /// An assertion failed or the judge said no: the output is wrong.
    Failed,
    /// Nothing was learnt about the output: the provider failed after its retries, the judge gave no
    /// verdict, a cassette problem, a configuration problem, a panic outside the test body.
    Errored,
    /// The call was neither made nor replayed (no recording, and no key or `live_only`): the trial is
    /// ignored.
    Unavailable,
}

impl SampleStatus {
    /// The status as written: `passed`, `failed`, `errored` or `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleStatus::Passed => "passed",
            SampleStatus::Failed => "failed",
            SampleStatus::Errored => "errored",
            SampleStatus::Unavailable => "unavailable",
        }
    }
}

/// One assertion of a suite case and how it went on one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssertionRecord {
    /// Its kind (`contains`, `judge`, ...).
    pub kind: String,
    /// Where it is written (`file:line`).
    pub at: String,
    /// Whether it held.
    pub passed: bool,
    /// Why it failed, or a note on a pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One judge answer, as the reports show it (the accounting is in the trial's usage).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeAnswer {
    /// The question asked.
    pub question: String,
    /// `"yes"` or `"no"`.
    pub answer: String,
    /// Whether the requirement holds.
    pub passed: bool,
    /// The judge's reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The verbatim excerpt of the output it quoted (it occurs in the output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// The question's type as the judge classified it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_type: Option<String>,
    /// The judge's measurement on that type, when calibration results give one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// Why the answer is advisory, when it is: nothing measures the judge well enough on such questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<Advisory>,
    /// With `judge_samples = k`: how the k answers split (`4/5` agree with the verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<Votes>,
    /// The cassette key of the judge call that answered (its first ask): a label of this answer
    /// records it, and counts only while the run's answer has the same key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub judge_key: String,
}

/// What the checks of one sample found so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    /// Suite assertions, in the order written.
    pub assertions: Vec<AssertionRecord>,
    /// Judge answers, in the order given.
    pub judge: Vec<JudgeAnswer>,
    /// Calibration items' verdicts, for the result files (not in the reports' sample records).
    pub observations: Vec<Observation>,
}

/// One item's verdict, noted as the set's trial judges it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The trial that judged it (the set's, or a single item's).
    pub trial: String,
    /// The set.
    pub set: String,
    /// The item.
    pub item: String,
    /// Its question type.
    pub kind: Option<String>,
    /// The label: `true` for "yes".
    pub expected: bool,
    /// The judge's answer: `true` for "yes".
    pub judged: bool,
    /// The judge provider.
    pub judge_provider: String,
    /// The judge model.
    pub judge_model: String,
}

/// What defines a judge besides its provider and model: what it is sent besides the question, and how
/// it samples. A calibration result records it for its judge, and a recorded sample for the judge that
/// answered its questions, so that a measurement or a label applies only to the same judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeSettings {
    /// The hash of the judge's instructions, schemas and message framing (`JudgeSettings::of`).
    pub instructions_sha256: String,
    /// Its temperature (`None`: not sent).
    pub temperature: Option<f32>,
    /// Its `max_tokens`.
    pub max_tokens: u32,
}

#[cfg(test)]
mod tests {
    use super::SampleStatus;

    /// The status reads as it is written: a cassette, the reports and `as_str` spell it alike.
    #[test]
    fn a_status_is_spelt_as_it_is_written() {
        use SampleStatus::{Errored, Failed, Passed, Unavailable};
        for status in [Passed, Failed, Errored, Unavailable] {
            let written = serde_json::to_value(status).unwrap();
            assert_eq!(written, status.as_str());
            assert_eq!(
                serde_json::from_value::<SampleStatus>(written).unwrap(),
                status
            );
        }
    }
}
