//! Where a trial sits in a model or prompt-variant matrix: its column, and its cell (row and column).

use serde::{Deserialize, Serialize};

use crate::model::Subject;

/// One column of a model or prompt-variant matrix: the subject a trial targets and the prompt variant
/// (its file stem) it sends; an axis the test does not vary is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Column {
    /// The subject, when the test names several (`subject_models`, `models`).
    #[serde(rename = "model")]
    pub subject: Option<Subject>,
    /// The prompt variant, when the suite has several (`prompts`).
    pub prompt: Option<String>,
}

impl Column {
    /// Every column of `subjects` x `prompts`, subject-major; one empty column when neither varies.
    pub fn all(subjects: &[Subject], prompts: &[String]) -> Vec<Column> {
        let subjects: Vec<Option<&Subject>> = match subjects {
            [] => vec![None],
            s => s.iter().map(Some).collect(),
        };
        let prompts: Vec<Option<&String>> = match prompts {
            [] => vec![None],
            p => p.iter().map(Some).collect(),
        };
        subjects
            .iter()
            .flat_map(|s| {
                prompts.iter().map(move |p| Column {
                    subject: s.cloned(),
                    prompt: p.cloned(),
                })
            })
            .collect()
    }

    /// Whether no axis varies (the trial is not in a matrix).
    pub fn is_empty(&self) -> bool {
        self.subject.is_none() && self.prompt.is_none()
    }

    /// The column's name: `provider/model`, the variant, or both as `provider/model|variant`.
    pub fn label(&self) -> String {
        let subject = self.subject.as_ref().map(Subject::to_string);
        [subject, self.prompt.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("|")
    }

    /// The trial of `base` in this column: `base[label]`, or `base` outside a matrix.
    pub fn trial(&self, base: &str) -> String {
        let label = (!self.is_empty()).then(|| self.label());
        crate::trial_name::TrialName::row(base)
            .in_column(label.as_deref())
            .to_string()
    }

    /// Where the trial of `row` in this column sits, when it is in a matrix.
    pub fn cell(&self, row: &str) -> Option<Cell> {
        (!self.is_empty()).then(|| Cell {
            row: row.to_string(),
            column: self.clone(),
        })
    }
}

/// Where a trial sits in a matrix: its row (the test or case) and its column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// The test or case the row stands for (its trial name without the column).
    pub row: String,
    /// The column.
    #[serde(flatten)]
    pub column: Column,
}
