//! Labels of the suite's own outputs (`*.labels.toml`): a person's word that a recorded judge answer was
//! right or wrong, written by `cargo prompt-tester label` and `review`. Not a calibration set: nothing is
//! asked of the judge again. Labels drawn at random (`label --random N`) correct a suite's pass rate with
//! the prediction-powered estimate (`stats::ppi`); the format is in the guide's calibration chapter.
//!
//! Where they live ([`Places`]): a suite's beside its suite file (`prompt-tests/tea.evals.toml`,
//! `prompt-tests/tea.labels.toml`), committed with it; a `#[prompt_test]`'s, which has no suite file,
//! beside its cassette (`prompt-tests/cassettes/quick_start.labels.toml`).

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use crate::checks::JudgeSettings;
use crate::spanned::{
    FileError, FileKind, Problem, Reader, real, string, toml_root, unknown_key, whole,
};

/// How every labels file name ends.
pub const SUFFIX: &str = ".labels.toml";

/// One person's label of one recorded judge answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The trial whose sample it is (`support::refund`).
    pub trial: String,
    /// The sample, 1-based.
    pub sample: u32,
    /// The judge's question.
    pub question: String,
    /// The verdict the label judges, as recorded: `true` when the judge's answer passed the check.
    pub judged: bool,
    /// Whether that verdict is right.
    pub right: bool,
    /// Drawn at random (`label --random`), so fit for the prediction-powered estimate.
    pub random: bool,
    /// The question's type as the judge gave it, when the recording kept it.
    pub question_type: Option<String>,
    /// The judge that answered, `provider/model`, when the recording names it.
    pub judge: Option<String>,
    /// The rest of what defines that judge (its instructions' hash, temperature, `max_tokens`), when the
    /// recording kept it: the label measures only the same judge.
    pub judge_settings: Option<JudgeSettings>,
    /// The cassette key of the judge call it judged (`JudgeAnswer::judge_key`): the answer, the question
    /// and the judge it was asked of. A run's answer with another key is not the one labelled: a label
    /// drawn at random is then stale (not counted, and its sample drawn again).
    pub judge_key: String,
}

impl Label {
    /// What the check should have decided: the recorded verdict, or its opposite when it is wrong.
    pub fn truth(&self) -> bool {
        self.judged == self.right
    }

    /// Whether this labels the same question of the same sample as `other`, of this answer or an
    /// earlier one (a later label replaces an earlier one).
    pub fn same_question(&self, other: &Label) -> bool {
        (self.trial.as_str(), self.sample, self.question.as_str())
            == (other.trial.as_str(), other.sample, other.question.as_str())
    }
}

const KEYS: [&str; 12] = [
    "trial",
    "sample",
    "question",
    "type",
    "judge",
    "judge_instructions",
    "judge_temperature",
    "judge_max_tokens",
    "judge_key",
    "verdict",
    "label",
    "random",
];

/// The labels file of the cassette at `cassette` (`x.cassette.json` beside `x.labels.toml`).
pub fn path_of(cassette: &Path) -> PathBuf {
    let name = cassette
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".cassette.json").unwrap_or(&name);
    cassette.with_file_name(format!("{stem}{SUFFIX}"))
}

/// The labels file beside the suite file `suite` (`x.evals.toml`, `x.evals.yaml` or `x.evals.yml` beside
/// `x.labels.toml`).
pub fn beside_suite(suite: &Path) -> PathBuf {
    let name = suite
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = crate::suite::SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    suite.with_file_name(format!("{stem}{SUFFIX}"))
}

/// Where a crate's labels files are: one beside each suite file, and the cassette directory's (the
/// labels of `#[prompt_test]` functions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// Each suite's name and its labels file, the longest names first (a nested suite's trials also
    /// start with its parent folder's suite name).
    suites: Vec<(String, PathBuf)>,
}

impl Places {
    /// The places of the crate `config` describes, its suite roots as `walked`.
    pub fn of(config: &crate::config::Config, walked: &crate::suite::Walked) -> Self {
        let mut suites: Vec<(String, PathBuf)> = walked
            .suites(config)
            .0
            .into_iter()
            .map(|f| (f.name, beside_suite(&f.path)))
            .collect();
        suites.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Self { suites }
    }

    /// The labels file of `trial`, recorded in `cassette`: beside its suite file, or for a trial of no
    /// suite (a `#[prompt_test]`), beside its cassette.
    pub fn for_trial(&self, trial: &str, cassette: &Path) -> PathBuf {
        self.suite_file(trial)
            .map_or_else(|| path_of(cassette), Path::to_path_buf)
    }

    /// The labels file of the suite `trial` is a case of, if any.
    fn suite_file(&self, trial: &str) -> Option<&Path> {
        self.suites
            .iter()
            .find(|(name, _)| {
                trial
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with("::"))
            })
            .map(|(_, path)| path.as_path())
    }

    /// Every label: the suites' files, then the cassette directory's, whose labels of a suite's trial
    /// are not read (a suite's labels live beside it). Each file that does not read is an error message
    /// naming its file, line and key, and its labels are left out.
    /// `folder`: the cassette directory as listed (see [`crate::cassette::folder`]).
    pub(crate) fn read(
        &self,
        root: &Path,
        folder: &crate::cassette::folder::Folder,
    ) -> (Vec<Label>, Vec<String>) {
        let mut paths: Vec<PathBuf> = self
            .suites
            .iter()
            .map(|(_, p)| p.clone())
            .filter(|p| p.exists())
            .collect();
        paths.sort();
        paths.dedup();
        let suites = paths.len();
        let of_tests = folder.ending_in(SUFFIX).filter(|p| !paths.contains(p));
        paths.extend(of_tests.cloned().collect::<Vec<_>>());
        let mut labels: Vec<Label> = Vec::new();
        let mut errors = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            let shown = crate::engine::display_path(path, root);
            match read(path, &shown) {
                Ok(read) => labels.extend(
                    read.into_iter()
                        .filter(|l| i < suites || self.suite_file(&l.trial).is_none()),
                ),
                Err(e) => errors.push(e.to_string()),
            }
        }
        (labels, errors)
    }
}

/// Parses the text of a labels file shown as `file`; every problem is located by line, column and key.
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<Label>, Vec<Problem>> {
    let root = toml_root(
        text,
        "correct the TOML at this position (strings need quotes, `[[labels]]` starts a label)",
    )
    .map_err(|p| vec![p])?;
    let mut r = Reader::new(file, Path::new("."), text);
    let table = root.get_ref();
    for (key, _) in table.iter() {
        if key.get_ref().as_ref() != "labels" {
            let path = key.get_ref().to_string();
            unknown_key(
                &mut r,
                key,
                &path,
                &["labels"],
                "at the top of a labels file",
            );
        }
    }
    let mut labels = Vec::new();
    if let Some(node) = table.get("labels") {
        match node.get_ref() {
            DeValue::Array(list) => {
                for (i, element) in list.iter().enumerate() {
                    let path = format!("labels[{i}]");
                    match element.get_ref() {
                        DeValue::Table(t) => labels.extend(label(&mut r, t, element.span(), &path)),
                        _ => r.mismatch(
                            element,
                            &path,
                            "a table",
                            "write each label as a `[[labels]]` table",
                        ),
                    }
                }
            }
            _ => r.mismatch(
                node,
                "labels",
                "an array of tables",
                "write each label as a `[[labels]]` table",
            ),
        }
    }
    if r.problems.is_empty() {
        Ok(labels)
    } else {
        let mut problems = r.problems;
        problems.sort_by_key(|p| p.span.start);
        Err(problems)
    }
}

fn label(
    r: &mut Reader<'_>,
    t: &DeTable<'_>,
    span: std::ops::Range<usize>,
    path: &str,
) -> Option<Label> {
    for (key, _) in t.iter() {
        let k = key.get_ref().as_ref();
        if !KEYS.contains(&k) {
            unknown_key(r, key, &format!("{path}.{k}"), &KEYS, "in a label");
        }
    }
    let mut missing = |r: &mut Reader<'_>, key: &str, example: &str| {
        r.problem(
            span.clone(),
            &format!("{path}.{key}"),
            format!("the label has no `{key}`"),
            format!("add `{key} = {example}` to the label"),
        );
    };
    let text = |r: &mut Reader<'_>,
                missing: &mut dyn FnMut(&mut Reader<'_>, &str, &str),
                key: &str| match t.get(key) {
        Some(node) => string(r, node, &format!("{path}.{key}"), "\"...\""),
        None => {
            missing(r, key, "\"...\"");
            None
        }
    };
    let trial = text(r, &mut missing, "trial");
    let question = text(r, &mut missing, "question");
    let judge_key = match t.get("judge_key") {
        Some(node) => string(r, node, &format!("{path}.judge_key"), "\"<key>\""),
        None => {
            r.problem(
                span.clone(),
                &format!("{path}.judge_key"),
                "the label has no `judge_key`: nothing says which answer it judged".to_string(),
                "label the answer again with `cargo prompt-tester label` or `review`, which record the key of \
                 the judge call, and delete this label",
            );
            None
        }
    };
    let sample = match t.get("sample") {
        Some(node) => whole(
            r,
            node,
            &format!("{path}.sample"),
            1,
            u64::from(u32::MAX),
            "the sample, 1-based",
        ),
        None => {
            missing(r, "sample", "1");
            None
        }
    };
    let choice = |r: &mut Reader<'_>, key: &str, words: [&str; 2], meaning: &str| -> Option<bool> {
        let fix = format!(
            "write `{key} = \"{}\"` or `{key} = \"{}\"` ({meaning})",
            words[0], words[1]
        );
        match t.get(key) {
            None => {
                missing(r, key, &format!("\"{}\"", words[0]));
                None
            }
            Some(node) => match node.get_ref() {
                DeValue::String(s) if s.as_ref() == words[0] => Some(true),
                DeValue::String(s) if s.as_ref() == words[1] => Some(false),
                DeValue::String(s) => {
                    r.problem(
                        node.span(),
                        &format!("{path}.{key}"),
                        format!("unknown {key} `{s}`"),
                        fix,
                    );
                    None
                }
                _ => {
                    r.mismatch(node, &format!("{path}.{key}"), "a string", fix);
                    None
                }
            },
        }
    };
    let optional = |r: &mut Reader<'_>, key: &str| {
        t.get(key)
            .and_then(|node| string(r, node, &format!("{path}.{key}"), "\"...\""))
    };
    let question_type = optional(r, "type");
    let judge = optional(r, "judge");
    let judge_settings = settings(r, t, path);
    let judged = choice(
        r,
        "verdict",
        ["passed", "failed"],
        "the judge's recorded verdict",
    );
    let right = choice(
        r,
        "label",
        ["right", "wrong"],
        "whether that verdict is right",
    );
    let random = match t.get("random") {
        None => false,
        Some(node) => match node.get_ref() {
            DeValue::Boolean(b) => *b,
            _ => {
                r.mismatch(
                    node,
                    &format!("{path}.random"),
                    "true or false",
                    "write `random = true` for a sample drawn at random (`label --random`), else leave it out",
                );
                false
            }
        },
    };
    Some(Label {
        trial: trial?,
        sample: u32::try_from(sample?).ok()?,
        question: question?,
        judged: judged?,
        right: right?,
        random,
        question_type,
        judge,
        judge_settings,
        judge_key: judge_key?,
    })
}

/// The judge's settings of a label: `judge_instructions` and `judge_max_tokens` together (and
/// `judge_temperature` when it sent one), or none of them (a label written before they were kept).
fn settings(r: &mut Reader<'_>, t: &DeTable<'_>, path: &str) -> Option<JudgeSettings> {
    let instructions = t.get("judge_instructions").and_then(|node| {
        string(
            r,
            node,
            &format!("{path}.judge_instructions"),
            "\"<sha256>\"",
        )
    });
    let max_tokens = t.get("judge_max_tokens").and_then(|node| {
        whole(
            r,
            node,
            &format!("{path}.judge_max_tokens"),
            1,
            u64::from(u32::MAX),
            "the judge's max_tokens",
        )
    });
    let temperature = t.get("judge_temperature").and_then(|node| {
        real(
            r,
            node,
            &format!("{path}.judge_temperature"),
            |x| x >= 0.0,
            "the judge's temperature, 0 or more",
        )
    });
    let given = [
        "judge_instructions",
        "judge_max_tokens",
        "judge_temperature",
    ]
    .into_iter()
    .find(|k| t.contains_key(*k))?;
    for key in ["judge_instructions", "judge_max_tokens"] {
        if !t.contains_key(key) {
            r.problem(
                t.get(given).map(|n| n.span()).unwrap_or(0..0),
                &format!("{path}.{key}"),
                format!("the label has `{given}` but no `{key}`"),
                "write the judge's settings whole (`judge_instructions`, `judge_max_tokens`, and \
                 `judge_temperature` when it sent one) or leave all of them out, as `cargo prompt-tester \
                 label` writes them",
            );
        }
    }
    Some(JudgeSettings {
        instructions_sha256: instructions?,
        temperature: temperature.map(|x| x as f32),
        max_tokens: u32::try_from(max_tokens?).ok()?,
    })
}

/// Reads the labels file at `path`, shown as `file`; a missing file holds no label.
pub(crate) fn read(path: &Path, file: &str) -> Result<Vec<Label>, FileError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = FileError::read(path, file, FileKind::Labels)?;
    parse(file, &text)
        .map_err(|problems| FileError::invalid(file, FileKind::Labels, &text, &problems))
}

/// The file's text: a comment saying what it is, then one `[[labels]]` table per label.
pub fn render(labels: &[Label]) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let optional = |key: &str, value: &Option<String>| {
        value
            .as_deref()
            .map_or_else(String::new, |v| format!("{key} = {}\n", quoted(v)))
    };
    let mut out = String::from(
        "# A person's labels of recorded judge answers (cargo prompt-tester label / review): each says whether\n\
         # the judge's recorded verdict on a sample's question is right. See the guide's calibration chapter.\n",
    );
    for l in labels {
        let settings = l.judge_settings.as_ref().map_or_else(String::new, |s| {
            format!(
                "judge_instructions = {}\n{}judge_max_tokens = {}\n",
                quoted(&s.instructions_sha256),
                s.temperature
                    .map_or_else(String::new, |t| format!("judge_temperature = {t}\n")),
                s.max_tokens
            )
        });
        out.push_str(&format!(
            "\n[[labels]]\ntrial = {}\nsample = {}\nquestion = {}\n{}judge_key = {}\nverdict = \"{}\"\nlabel = \"{}\"\n",
            quoted(&l.trial),
            l.sample,
            quoted(&l.question),
            optional("type", &l.question_type) + &optional("judge", &l.judge) + &settings,
            quoted(&l.judge_key),
            if l.judged { "passed" } else { "failed" },
            if l.right { "right" } else { "wrong" },
        ));
        if l.random {
            out.push_str("random = true\n");
        }
    }
    out
}

/// Adds `new` to the labels file at `path` (shown as `file`), each replacing an earlier label of the same
/// question of the same sample (one drawn at random stays marked so), and writes it atomically. A file
/// that does not read is never written over.
pub fn add(path: &Path, file: &str, new: &[Label]) -> Result<(), FileError> {
    let mut labels = read(path, file).map_err(|e| FileError::NotRewritten(e.to_string()))?;
    for label in new {
        // A sample once drawn at random stays so: labelling it again (its new answer, after a stale
        // label) completes the draw, it does not undo it.
        let drawn = labels.iter().any(|l| l.same_question(label) && l.random);
        labels.retain(|l| !l.same_question(label));
        labels.push(Label {
            random: label.random || drawn,
            ..label.clone()
        });
    }
    let tmp = path.with_extension(format!("toml.{}.tmp", std::process::id()));
    let write = std::fs::write(&tmp, render(&labels)).and_then(|()| std::fs::rename(&tmp, path));
    write.map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        FileError::Unwritable {
            file: file.to_string(),
            kind: FileKind::Labels,
            source,
        }
    })
}

#[cfg(test)]
mod tests;
