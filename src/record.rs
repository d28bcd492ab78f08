//! What each executed trial leaves behind for the summary and the reports.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::case::{CaseInfo, Cell, SampleRecord};
pub use crate::outcome::Status;
use crate::usage::Usage;

/// One executed trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The trial name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// The failure message, or the reason it was ignored.
    pub message: Option<String>,
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples that errored.
    pub runs_errored: u32,
    /// Samples taken.
    pub runs_total: u32,
    /// Samples that had to pass.
    pub runs_required: u32,
    /// Samples not taken because the verdict was already decided (early stop, adaptive sampling): the
    /// most the trial could take minus those it took.
    pub runs_skipped: u32,
    /// The pass threshold.
    pub pass_threshold: f64,
    /// Tokens, calls and cost.
    pub usage: Usage,
    /// Wall time of the trial.
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub duration: Duration,
    /// The first failed sample's output, shortened (or the first output when none failed).
    pub output_preview: Option<String>,
    /// The suite case this trial runs, if it is one.
    pub case: Option<CaseInfo>,
    /// Where the trial sits in a model or prompt matrix, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<Cell>,
    /// The subject's latency over the samples that got an answer (for the matrix's mean).
    #[serde(skip)]
    pub latency: Latency,
    /// The rendered prompt every sample sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The media parts the prompt placed, by placeholder: named, never their bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaRecord>,
    /// Each sample: output, assertions, judge answers, tool calls (none for a trial that made no call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<SampleRecord>,
    /// A gate's rows (`[gate]` in a suite): the record's runs are then its counted rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateRecord>,
    /// How many times nextest ran the trial (its retries), when more than once: the record is the
    /// last attempt's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
}

/// What a gate leaves besides its counts: the share it needs, and each row it judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The category it gates; none for the whole suite's gate.
    pub category: Option<String>,
    /// Rows skipped (`skip`): not counted.
    pub rows_skipped: u32,
    /// Each counted row, in file order.
    pub rows: Vec<GateRow>,
}

/// One row of a gate, as its own trial would have ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateRow {
    /// The row's case name (its trial without the suite, with the column in a matrix).
    pub case_id: String,
    /// Its category.
    pub category: Option<String>,
    /// How it ended.
    pub status: Status,
    /// Why it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Samples that passed.
    pub runs_passed: u32,
    /// Samples taken.
    pub runs_total: u32,
    /// The first failed sample's output, shortened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_preview: Option<String>,
    /// Each sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<SampleRecord>,
}

/// Latencies summed over samples, for their mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// The sum.
    pub total: Duration,
    /// How many samples it sums.
    pub samples: u32,
}

impl Latency {
    /// The sum of `latencies`.
    pub fn of(latencies: impl IntoIterator<Item = Duration>) -> Self {
        latencies.into_iter().fold(Self::default(), |sum, l| Self {
            total: sum.total + l,
            samples: sum.samples + 1,
        })
    }

    /// The mean in seconds, `None` without samples.
    pub fn mean_secs(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.total.as_secs_f64() / f64::from(self.samples))
    }
}

impl std::ops::AddAssign for Latency {
    fn add_assign(&mut self, other: Self) {
        self.total += other.total;
        self.samples += other.samples;
    }
}

/// A media part a trial's prompt placed, as the reports name it: its name, type, size and hash, never
/// its bytes (the HTML report alone shows a small image, from `preview`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaRecord {
    /// The placeholder that placed it (`receipt` for `{receipt}`).
    pub var: String,
    /// Image, document or audio.
    pub kind: crate::completion::MediaKind,
    /// Its file name.
    pub name: String,
    /// Its MIME type.
    pub media_type: String,
    /// Its size, bytes.
    pub bytes: u64,
    /// The SHA-256 of its bytes, hex.
    pub sha256: String,
    /// Its pixels, pages or seconds, as its header tells them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extent: Option<crate::completion::Extent>,
    /// An image of at most [`PREVIEW_MAX_BYTES`] as a data URL, for the HTML report only: not in the
    /// JSON report nor a results fragment (a report merged from fragments reads it from the media
    /// store).
    #[serde(skip)]
    pub preview: Option<String>,
}

/// The largest image the HTML report embeds as a preview: the report stays one bounded file.
pub const PREVIEW_MAX_BYTES: usize = 64 * 1024;

impl MediaRecord {
    /// The record of `part`, placed by `{var}`.
    pub fn of(var: &str, part: &crate::completion::MediaPart) -> Self {
        let preview = preview_of(part);
        Self {
            var: var.to_string(),
            kind: part.kind(),
            name: part.name().to_string(),
            media_type: part.media_type().mime().to_string(),
            bytes: part.bytes().len() as u64,
            sha256: part.sha256().to_string(),
            extent: part.extent(),
            preview,
        }
    }

    /// How the reports name it: `image receipt.png (image/png, 640x480, 412 KB)`.
    pub fn described(&self) -> String {
        let size = match self.bytes {
            b if b < 1024 => format!("{b} B"),
            b if b < 1024 * 1024 => format!("{:.0} KB", b as f64 / 1024.0),
            b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
        };
        let extent = self.extent.map(|e| format!("{e}, ")).unwrap_or_default();
        format!(
            "{} {} ({}, {extent}{size})",
            self.kind, self.name, self.media_type
        )
    }
}

/// `part` as a data URL for the HTML report, when it is an image of at most [`PREVIEW_MAX_BYTES`].
pub(crate) fn preview_of(part: &crate::completion::MediaPart) -> Option<String> {
    (part.kind() == crate::completion::MediaKind::Image && part.bytes().len() <= PREVIEW_MAX_BYTES)
        .then(|| format!("data:{};base64,{}", part.media_type(), part.base64()))
}

impl TrialRecord {
    /// Samples passed of samples taken, for its rate and interval.
    pub fn counts(&self) -> crate::stats::Counts {
        crate::stats::Counts::new(self.runs_passed, self.runs_total)
    }

    /// Some samples passed and some failed: the output varies, so the verdict may too. Or nextest
    /// retried it and a retry passed.
    pub fn is_flaky(&self) -> bool {
        // nextest's FLAKY: an attempt failed, a retry passed.
        if self.attempts.is_some_and(|n| n > 1) && self.status == Status::Passed {
            return true;
        }
        // A gate's rows are different questions: some failing is what its share allows.
        if self.gate.is_some() {
            return false;
        }
        let failed = self
            .runs_total
            .saturating_sub(self.runs_passed)
            .saturating_sub(self.runs_errored);
        self.runs_passed > 0 && failed > 0
    }

    /// The judge's advisory "no"s in its samples that passed (`[judge] advisory = "warn"` reports them
    /// without failing the sample).
    pub fn advisory_noes(&self) -> impl Iterator<Item = &crate::checks::JudgeAnswer> {
        self.samples
            .iter()
            .filter(|s| s.status() == crate::checks::SampleStatus::Passed)
            .flat_map(|s| &s.judge)
            .filter(|j| !j.passed && j.advisory.is_some())
    }

    /// The record of a trial that made no call: a skipped case or a broken suite file.
    pub fn unrun(name: String, status: Status, message: &str, case: Option<CaseInfo>) -> Self {
        Self {
            name,
            status,
            message: Some(crate::redact::redact(message).into_owned()),
            runs_passed: 0,
            runs_errored: 0,
            runs_total: 0,
            runs_required: 0,
            runs_skipped: 0,
            pass_threshold: 1.0,
            usage: Usage::default(),
            duration: Duration::ZERO,
            output_preview: None,
            case,
            cell: None,
            latency: Latency::default(),
            prompt: None,
            media: Vec::new(),
            samples: Vec::new(),
            gate: None,
            attempts: None,
        }
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn from_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
}
