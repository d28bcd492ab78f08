//! What `cargo prompt-tester` (the `cargo-prompt-tester` crate) reaches in the library: where a crate's
//! cassettes and pending recordings are, what is pending, and accepting or rejecting it under the same
//! locks and atomic writes the harness records with. Not a public API: it changes with the subcommand,
//! which pins this crate's exact version.

use std::path::{Path, PathBuf};

pub use crate::calibration::labels::{Label, Places as LabelPlaces, add as add_labels};
pub use crate::cassette::changes::{describe, line_diff, short_diff, text_of};
/// The one request diff, by JSON path, that a stale call's message shows too.
pub use crate::cassette::diff::{RequestChange, RequestDiff, requests as request_diff};
pub use crate::cassette::media::MEDIA_DIR;
pub use crate::cassette::pending::{PENDING_SUFFIX, PendingFile, PendingSample, SampleId, Settled};
pub use crate::cassette::raw::{RawBody, RawRequest, RawResponse, StreamEvent};
pub use crate::cassette::{CassetteError, CheckVerdict, Entry, Exchange, RecordedChecks};
pub use crate::checks::SampleStatus;
pub use crate::role::CallRole;
/// Why a labels file cannot be read or written.
pub use crate::spanned::FileError;
pub use similar::ChangeTag;

/// A call the application made through the recording endpoint, as a review shows a model call: its
/// model, its JSON body (pretty, as the request's one message: a diff of it is the request's diff),
/// the answer's text (a stream's text joined) with its tokens. `None` for any other exchange.
pub fn raw_call(
    exchange: &Exchange,
) -> Option<(
    crate::completion::CompletionRequest,
    crate::completion::CompletionResult,
)> {
    let Exchange::Raw { request, response } = exchange else {
        return None;
    };
    let body = serde_json::to_string_pretty(&request.body).unwrap_or_default();
    let asked = crate::completion::CompletionRequest::new(
        crate::provider::relayed::model_of(request),
        format!("{} {}\n{body}", request.method, request.path),
        0,
    );
    let mut answered = crate::provider::relayed::tokens_of(request, response);
    answered.text = crate::provider::relayed::answer_text(request, response);
    Some((asked, answered))
}

/// Where a sample's accepted steps and its new ones part, and which trajectories say more than
/// their prompt and output.
pub use crate::trajectory::{StepChange, Trajectory, first_change, shows_steps};

/// The trajectory of one recorded sample's subject calls (`entries`, accepted or pending), read as
/// the run that recorded them read them: a harness call from its request and result, a call through
/// the recording endpoint from its relayed request and response.
pub fn trajectory_of(entries: &[Entry]) -> Trajectory {
    let noted: Vec<crate::trajectory::NotedCall> = entries
        .iter()
        .filter(|e| e.role == CallRole::Subject)
        .filter_map(|e| {
            let latency = std::time::Duration::from_millis(e.latency_ms);
            match &e.call {
                Exchange::Completion { request, response } => {
                    Some(crate::trajectory::NotedCall::of_request(
                        &e.provider,
                        request,
                        response,
                        latency,
                        false,
                    ))
                }
                Exchange::Raw { request, response } => {
                    let tokens = crate::provider::relayed::tokens_of(request, response);
                    crate::provider::steps::read(request, response)
                        .map(|read| read.noted(&e.provider, &e.model, &tokens, latency, false))
                }
                Exchange::Embedding { .. } => None,
            }
        })
        .collect();
    Trajectory::of(&noted)
}

use similar::TextDiff;

use crate::cassette::pending;

/// `cargo prompt-tester report`: a run's merged reports rendered from its results folders.
pub use crate::harness::error::HarnessError;
pub use crate::harness::report_command::{Done as ReportDone, Request as ReportRequest, report};
/// The variable naming the results folder, read by the harness and the subcommand alike.
pub use crate::report::results::RESULTS_VAR;
/// The Markdown summary of a run, for a pull request: [`markdown::render`] makes it (pure) from the
/// records, a baseline's figures, the pending recordings and the budget; [`markdown::Markdown`] says
/// where it goes (`--markdown`, `PROMPT_TESTER_MARKDOWN`, `GITHUB_STEP_SUMMARY`) and
/// [`markdown::write`] writes it there.
pub mod markdown {
    pub use crate::budget::BudgetReport;
    pub use crate::record::{Status, TrialRecord};
    pub use crate::report::ReportError;
    pub use crate::report::baseline::{Figures, load as load_baseline};
    pub use crate::report::markdown::{
        Baseline, Context, MARKDOWN, MAX_BYTES, MAX_LISTED, Markdown, MarkdownSetting, render,
        write,
    };
}

/// The variable naming a folder of pending recordings brought from another machine (or written by
/// a CI job), read by the harness and the subcommand alike.
pub const PENDING_DIR: &str = crate::harness::PENDING_DIR;

/// Where a crate's recordings are: its cassette directory (from its `prompt-tester.toml`, as the
/// harness finds it) and the folder of its pending recordings.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The cassette directory.
    pub cassette_dir: PathBuf,
    /// Where pending recordings are: the pending folder when one is given, else the cassette
    /// directory.
    pub pending_dir: PathBuf,
    /// Where labels files are: beside each suite file, and in the cassette directory.
    pub labels: LabelPlaces,
    /// Today's prices, as the crate's runs price a call.
    pub prices: Prices,
}

/// Today's prices of a crate: the built-in table under its `[prices]` and free endpoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Prices(crate::config::Config);

impl Prices {
    /// What `result` costs as the call of `entry`, priced as a run prices a replayed call; `None` when
    /// its model's price is unknown.
    pub fn cost(&self, entry: &Entry, result: &crate::completion::CompletionResult) -> Option<f64> {
        self.0.cost_of(&entry.provider, &entry.model, result)
    }
}

impl Layout {
    /// The layout of the crate at `root`; `pending_dir` overrides where pending recordings are looked
    /// for (else `PROMPT_TESTER_PENDING_DIR`, else beside the cassettes).
    pub fn of(
        root: &Path,
        pending_dir: Option<PathBuf>,
    ) -> Result<Self, crate::config::ConfigError> {
        let config = crate::config::Config::load(root)?;
        let pending_dir = pending_dir
            .or_else(|| crate::config::env_var(PENDING_DIR).map(PathBuf::from))
            .map(|dir| {
                if dir.is_absolute() {
                    dir
                } else {
                    root.join(dir)
                }
            })
            .unwrap_or_else(|| config.cassette_dir.clone());
        Ok(Self {
            labels: LabelPlaces::of(&config, &crate::suite::Walked::of(&config)),
            cassette_dir: config.cassette_dir.clone(),
            pending_dir,
            prices: Prices(config),
        })
    }

    /// The labels file of `trial`, recorded in `cassette`: beside its suite file, or (a
    /// `#[prompt_test]`) beside its cassette.
    pub fn labels_path(&self, trial: &str, cassette: &Path) -> PathBuf {
        self.labels.for_trial(trial, cassette)
    }

    /// Every label of the crate (paths shown relative to `root`); a file that does not read is an error.
    pub fn read_labels(&self, root: &Path) -> Result<Vec<Label>, FileError> {
        // A folder that cannot be listed holds no labels, as in a run.
        let folder = crate::cassette::folder::Folder::list(&self.cassette_dir).unwrap_or_default();
        let (labels, errors) = self.labels.read(root, &folder);
        if errors.is_empty() {
            Ok(labels)
        } else {
            Err(FileError::NotRewritten(errors.join("\n")))
        }
    }

    /// Every pending sample, by pending file, with what the cassette holds for it now.
    pub fn pending(&self) -> Result<Vec<PendingFile>, CassetteError> {
        pending::pending_in(&self.pending_dir, &self.cassette_dir)
    }

    /// Every recorded (accepted) sample of the cassettes, by cassette file name, then sample.
    pub fn recorded(&self) -> Result<Vec<RecordedSample>, CassetteError> {
        let folder = crate::cassette::folder::Folder::list(&self.cassette_dir).unwrap_or_default();
        let cassettes: Vec<PathBuf> = folder
            .ending_in(pending::CASSETTE_SUFFIX)
            .cloned()
            .collect();
        let mut samples = Vec::new();
        for cassette in cassettes {
            let body = crate::cassette::read_body(&cassette)?;
            for (id, calls) in pending::samples_of(body) {
                samples.push(RecordedSample {
                    cassette: cassette.clone(),
                    id,
                    entries: calls.entries,
                    verdict: calls.verdict,
                });
            }
        }
        Ok(samples)
    }
}

/// One recorded sample: its cassette, its calls, and what its checks decided when it was recorded.
#[derive(Debug, Clone)]
pub struct RecordedSample {
    /// The cassette file that holds it.
    pub cassette: PathBuf,
    /// The sample.
    pub id: SampleId,
    /// Its calls, in recording order.
    pub entries: Vec<Entry>,
    /// Its checks' verdict (none in cassettes written before verdicts were kept).
    pub verdict: Option<RecordedChecks>,
}

/// The type the judge gave `question` in `verdict`, when the recording kept it.
pub fn question_type_of(verdict: Option<&RecordedChecks>, question: &str) -> Option<String> {
    let check = format!("judge: {question}");
    verdict?
        .checks
        .iter()
        .find(|c| c.check == check)?
        .question_type
        .clone()
}

/// The cassette key of the judge call that answered `question` in a recorded sample (what a label
/// records): its verdict's, else (recorded before verdicts kept it) that of the first judge call among
/// its `entries` that asked it (a first ask: a `judge_samples` repeat has another key).
pub fn judge_key_of(
    verdict: Option<&RecordedChecks>,
    entries: &[Entry],
    question: &str,
) -> Option<String> {
    let check = format!("judge: {question}");
    let kept = verdict.and_then(|v| {
        v.checks
            .iter()
            .find(|c| c.check == check)?
            .judge_key
            .clone()
    });
    let one_line = |q: &str| q.split_whitespace().collect::<Vec<_>>().join(" ");
    let asked = one_line(question);
    kept.or_else(|| {
        entries
            .iter()
            .filter(|e| e.role == CallRole::Judge)
            .find_map(|e| {
                let Exchange::Completion { request, .. } = &e.call else {
                    return None;
                };
                let first = e.key == crate::cassette::entry_key(&e.provider, request, e.run);
                let asks = judge_questions(request)
                    .iter()
                    .any(|q| one_line(q) == asked);
                (first && asks).then(|| e.key.clone())
            })
    })
}

/// The judge that answered in `entries` (a sample's calls), `provider/model`.
pub fn judge_of(entries: &[Entry]) -> Option<String> {
    entries
        .iter()
        .find(|e| e.role == CallRole::Judge)
        .map(|e| format!("{}/{}", e.provider, e.model))
}

/// The judge questions of a recorded verdict and what the judge decided on each (`true`: passed).
pub fn judged_questions(verdict: &RecordedChecks) -> Vec<(String, bool)> {
    verdict
        .checks
        .iter()
        .filter_map(|c| Some((c.check.strip_prefix("judge: ")?.to_string(), c.passed)))
        .collect()
}

/// Whether a test name matches `filter` as libtest's does: a substring, or the whole name with
/// `exact`.
pub fn matches_filter(name: &str, filter: Option<&str>, exact: bool) -> bool {
    match filter {
        None => true,
        Some(f) if exact => name == f,
        Some(f) => name.contains(f),
    }
}

/// A word diff of `old` and `new` (words and the spaces between them as tokens), for answers short
/// enough that a line diff would only say "everything changed".
pub fn word_diff(old: &str, new: &str) -> Vec<(ChangeTag, String)> {
    TextDiff::from_words(old, new)
        .iter_all_changes()
        .map(|c| (c.tag(), c.value().to_string()))
        .collect()
}

/// The questions a judge request asks, in order: the line after `QUESTION:`, or each numbered line
/// after `QUESTIONS`, as the judge's prompt (`judge/prompt.rs`) writes them. Empty when the request is
/// not shaped so (a judge prompt of another version).
pub fn judge_questions(request: &crate::completion::CompletionRequest) -> Vec<String> {
    let Some(text) = request.messages.last().map(text_of) else {
        return Vec::new();
    };
    // The questions follow the fenced response, so the last heading is the one that counts.
    let one = text.rfind("\nQUESTION:\n");
    let several = text.rfind("\nQUESTIONS");
    match (one, several) {
        (Some(one), several) if several.is_none_or(|s| s < one) => text
            [one + "\nQUESTION:\n".len()..]
            .lines()
            .next()
            .map(str::to_string)
            .into_iter()
            .collect(),
        (_, Some(at)) => text[at + 1..]
            .lines()
            .skip(1)
            .map_while(|line| {
                let (number, question) = line.split_once(". ")?;
                number.parse::<u32>().ok()?;
                Some(question.to_string())
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The answers ("yes", "no") a judge reply gives, in the order it gives them: every `answer` (or
/// `verdict`) in the JSON of its tool calls and its text. What the judge said, read leniently for a
/// person to compare; the run's own verdicts are the judge module's to decide (it reads more shapes).
pub fn judge_answers(result: &crate::completion::CompletionResult) -> Vec<String> {
    let mut values: Vec<serde_json::Value> = result
        .tool_calls
        .iter()
        .map(|call| match &call.arguments {
            serde_json::Value::String(s) => serde_json::from_str(s).unwrap_or_default(),
            other => other.clone(),
        })
        .collect();
    let text = result.text.trim();
    if let (Some(start), Some(end)) = (text.find(['{', '[']), text.rfind(['}', ']']))
        && start < end
    {
        values.extend(serde_json::from_str(&text[start..=end]).ok());
    }
    let mut answers = Vec::new();
    for value in &values {
        collect_answers(value, &mut answers);
    }
    answers
}

fn collect_answers(value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match value {
        Value::Array(items) => items.iter().for_each(|v| collect_answers(v, out)),
        Value::Object(object) => {
            let answer = object.iter().find(|(k, _)| {
                k.eq_ignore_ascii_case("answer") || k.eq_ignore_ascii_case("verdict")
            });
            match answer {
                Some((_, Value::Bool(b))) => out.push(if *b { "yes" } else { "no" }.into()),
                Some((_, Value::String(s))) => out.push(s.trim().to_lowercase()),
                _ => object.values().for_each(|v| collect_answers(v, out)),
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{CompletionRequest, CompletionResult};

    #[test]
    fn reads_the_questions_of_one_and_of_several() {
        let one = CompletionRequest::new(
            "m",
            "PROMPT:\n<<<P x\nQUESTION:\nnot this\nP x>>>\n\nQUESTION:\nIs Bob mentioned?\n",
            10,
        );
        assert_eq!(judge_questions(&one), ["Is Bob mentioned?"]);
        let several = CompletionRequest::new(
            "m",
            "RESPONSE:\nhi\n\nQUESTIONS (judge each independently):\n1. Is it short?\n2. Is it kind?\n",
            10,
        );
        assert_eq!(judge_questions(&several), ["Is it short?", "Is it kind?"]);
        assert!(judge_questions(&CompletionRequest::new("m", "hello", 10)).is_empty());
    }

    #[test]
    fn reads_the_answers_of_text_lists_and_tool_calls() {
        let text = CompletionResult::new(
            "```json\n{\"reasoning\": \"r\", \"answer\": \"No\"}\n```",
            1,
            1,
        );
        assert_eq!(judge_answers(&text), ["no"]);
        let list = CompletionResult::new(
            r#"{"verdicts": [{"index": 1, "answer": "yes"}, {"index": 2, "answer": false}]}"#,
            1,
            1,
        );
        assert_eq!(judge_answers(&list), ["yes", "no"]);
        let mut tool = CompletionResult::new("", 1, 1);
        tool.tool_calls.push(crate::completion::ToolCall {
            id: "t".into(),
            name: "verdict".into(),
            arguments: serde_json::json!({"answer": "yes"}),
            thought_signature: None,
        });
        assert_eq!(judge_answers(&tool), ["yes"]);
        assert!(judge_answers(&CompletionResult::new("I think so", 1, 1)).is_empty());
    }

    #[test]
    fn a_word_diff_keeps_the_unchanged_words() {
        let diff = word_diff("Alice leads Phoenix.", "Alice runs Phoenix.");
        let changed: Vec<_> = diff
            .iter()
            .filter(|(tag, _)| *tag != ChangeTag::Equal)
            .map(|(tag, word)| (*tag, word.as_str()))
            .collect();
        assert_eq!(
            changed,
            [(ChangeTag::Delete, "leads"), (ChangeTag::Insert, "runs")]
        );
    }
}
