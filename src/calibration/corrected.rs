//! After the trials: the labels of recorded judge answers (`*.labels.toml` beside the suites and the
//! cassettes, see `calibration::labels`) read, and each judged suite's pass rate corrected by those drawn at random
//! (`stats::ppi`), for the summary and the JSON report (`label_corrected`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::calibration::labels::{self, Label};
use crate::calibration::result::{self, JudgeSettings};
use crate::case::SampleRecord;
use crate::cassette::CassetteStore;
use crate::cassette::folder::Folder;
use crate::checks::SampleStatus;
use crate::config::{Config, JudgeConfig};
use crate::record::TrialRecord;
use crate::stats::agreement::Confusion;
use crate::stats::ppi::{self, PredictionPowered};
use crate::suite::Walked;

/// The labels of a run's crate, by trial.
#[derive(Debug, Default)]
pub struct Labels {
    by_trial: BTreeMap<String, Vec<Label>>,
}

/// Reads every labels file (beside the suites, and in the cassette directory); a file that does not
/// read is an error message naming its file, line and key, and its labels are not used.
/// `cassettes`: the run's store, whose listing of the cassette directory is shared; `walked`: the
/// suite roots as the run walked them.
pub(crate) fn read(
    config: &crate::config::Config,
    cassettes: &CassetteStore,
    walked: &Walked,
) -> (Labels, Vec<String>) {
    let (all, errors) =
        labels::Places::of(config, walked).read(&config.root, &folder_of(cassettes));
    let mut by_trial: BTreeMap<String, Vec<Label>> = BTreeMap::new();
    for label in all {
        by_trial.entry(label.trial.clone()).or_default().push(label);
    }
    (Labels { by_trial }, errors)
}

/// The cassette directory as the store listed it; a folder that cannot be listed holds no labels.
fn folder_of(cassettes: &CassetteStore) -> std::sync::Arc<Folder> {
    cassettes.folder().unwrap_or_default()
}

/// How the labels not drawn at random stand to the run's judge (`labels` in the JSON report's
/// calibration section): those of another judge's answers, left out, and those counted with the judge's
/// settings unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LabelsFit {
    /// Labels of another judge's answers, by what differs: not counted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judge_changed: Vec<LabelsChanged>,
    /// Labels counted for the same provider and model whose judge's instructions, temperature and
    /// `max_tokens` are unknown (written before they were kept).
    #[serde(skip_serializing_if = "is_zero")]
    pub unknown_settings: usize,
}

/// Labels of answers of a judge that differs from the run's in the same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelsChanged {
    /// How many.
    pub labels: usize,
    /// What differs, `was → now` (`judge instructions changed`, `model a → b`).
    pub differences: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl LabelsFit {
    /// Nothing to say.
    pub fn is_empty(&self) -> bool {
        self.judge_changed.is_empty() && self.unknown_settings == 0
    }

    /// The run's warnings about the labels (each said once), for the run's `judge`.
    pub fn warnings(&self, judge: &JudgeConfig) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .judge_changed
            .iter()
            .map(|c| {
                format!(
                    "{} label(s) not drawn at random judge another judge's answers ({}): they are not counted in \
                     this judge's measurement; label its own answers with `cargo prompt-tester review` or `cargo \
                     prompt-tester label`",
                    c.labels,
                    c.differences.join(", ")
                )
            })
            .collect();
        if self.unknown_settings > 0 {
            warnings.push(format!(
                "{} label(s) not drawn at random were written before the judge's settings were kept: counted for \
                 judge {}/{}, its instructions, temperature and max_tokens taken to be this run's; label again to \
                 record them",
                self.unknown_settings, judge.provider, judge.model
            ));
        }
        warnings
    }
}

/// The labels not drawn at random of the answers of `judge` (with `settings`), counted by question type
/// as a calibration set's items are, and how the others stand to it ([`LabelsFit`]). A label counts
/// when its judge has the same provider, model, instructions, temperature and `max_tokens` (a label
/// written before the settings were kept: the same provider and model); one without a question type
/// does not. Files that cannot be read are left out here; [`read`] reports them.
pub(crate) fn of_judge(
    config: &Config,
    judge: &JudgeConfig,
    settings: &JudgeSettings,
    cassettes: &CassetteStore,
    walked: &Walked,
) -> (BTreeMap<String, Confusion>, LabelsFit) {
    let (all, _) = labels::Places::of(config, walked).read(&config.root, &folder_of(cassettes));
    let mut by_type: BTreeMap<String, Confusion> = BTreeMap::new();
    let mut changed: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut fit = LabelsFit::default();
    for label in &all {
        let (false, Some(kind), Some(by)) = (label.random, &label.question_type, &label.judge)
        else {
            continue;
        };
        let (provider, model) = by.split_once('/').unwrap_or((by.as_str(), ""));
        let differences = result::differences(
            (provider, model, label.judge_settings.as_ref()),
            &judge.provider,
            &judge.model,
            settings,
        );
        if !differences.is_empty() {
            let said = differences.iter().map(ToString::to_string).collect();
            *changed.entry(said).or_default() += 1;
            continue;
        }
        fit.unknown_settings += usize::from(label.judge_settings.is_none());
        by_type
            .entry(kind.clone())
            .or_default()
            .add(label.truth(), label.judged);
    }
    fit.judge_changed = changed
        .into_iter()
        .map(|(differences, labels)| LabelsChanged {
            labels,
            differences,
        })
        .collect();
    (by_type, fit)
}

/// A suite's pass rate corrected by the labels drawn at random (`label_corrected` in its JSON entry).
#[derive(Debug, Clone, Serialize)]
pub struct LabelCorrected {
    /// The prediction-powered estimate over the suite's samples the judge took part in.
    #[serde(flatten)]
    pub estimate: PredictionPowered,
    /// Random labels left out: their judge call is not this run's (its key differs: a new answer, or
    /// another judge), or only some of a sample's answers are labelled.
    pub stale: u32,
}

/// Each judged suite's label-corrected pass rate, by suite name, when it has labels drawn at random on
/// at least two of its samples.
pub fn corrected(records: &[TrialRecord], labels: &Labels) -> BTreeMap<String, LabelCorrected> {
    let mut by_suite: BTreeMap<&str, Vec<(&str, &SampleRecord)>> = BTreeMap::new();
    for r in records {
        let Some(case) = &r.case else { continue };
        for s in &r.samples {
            by_suite
                .entry(case.suite.name.as_str())
                .or_default()
                .push((r.name.as_str(), s));
        }
    }
    by_suite
        .into_iter()
        .filter_map(|(suite, samples)| Some((suite.to_string(), suite_estimate(&samples, labels)?)))
        .collect()
}

/// The estimate of one suite from its samples (trial name, sample): every sample the judge answered on
/// that passed or failed counts in N; those whose every judge answer has a label drawn at random, each
/// of this run's judge call (the same key), count in n.
fn suite_estimate(samples: &[(&str, &SampleRecord)], labels: &Labels) -> Option<LabelCorrected> {
    let mut judged = Vec::new();
    let mut labelled = Vec::new();
    let mut stale = 0;
    for (trial, s) in samples {
        if s.judge.is_empty() || !matches!(s.status(), SampleStatus::Passed | SampleStatus::Failed)
        {
            continue;
        }
        let f = s.status() == SampleStatus::Passed;
        judged.push(f);
        let mine: Vec<&Label> = labels
            .by_trial
            .get(*trial)
            .into_iter()
            .flatten()
            .filter(|l| l.random && l.sample == s.run)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let truths: Option<Vec<bool>> = s
            .judge
            .iter()
            .map(|j| {
                mine.iter()
                    .find(|l| l.question == j.question && l.judge_key == j.judge_key)
                    .map(|l| l.truth())
            })
            .collect();
        match truths {
            Some(truths) => {
                // The other checks keep their outcome; the judge's are the labels'.
                let others = s
                    .assertions
                    .iter()
                    .filter(|a| a.kind != "judge" && a.kind != "judge_trajectory")
                    .all(|a| a.passed);
                labelled.push((f, others && truths.iter().all(|&t| t)));
            }
            None => stale += mine.len() as u32,
        }
    }
    let estimate = ppi::estimate(&judged, &labelled)?;
    Some(LabelCorrected { estimate, stale })
}

/// The summary's lines for the suites `corrected` holds.
pub fn render(corrected: &BTreeMap<String, LabelCorrected>) -> String {
    if corrected.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "label-corrected pass rates (prediction-powered, from labels drawn at random):\n",
    );
    for (suite, c) in corrected {
        let e = &c.estimate;
        out.push_str(&format!(
            "  {suite}: the judge passed {:.0}% of {} samples; {} labelled at random; corrected {}{}\n",
            e.judged * 100.0,
            e.samples,
            e.labelled,
            e.estimate.percent(),
            if c.stale > 0 {
                format!(" ({} label(s) left out: their answers were recorded again; label again)", c.stale)
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{AssertionRecord, JudgeAnswer};

    fn sample(run: u32, passed: bool) -> SampleRecord {
        let mut s: SampleRecord = serde_json::from_value(serde_json::json!({
            "run": run,
            "status": if passed { "passed" } else { "failed" },
            "replayed": true,
        }))
        .unwrap();
        s.judge.push(JudgeAnswer {
            question: "Is it kind?".into(),
            answer: if passed { "yes" } else { "no" }.into(),
            passed,
            reasoning: None,
            snippet: None,
            question_type: None,
            measurement: None,
            advisory: None,
            votes: None,
            judge_key: format!("key {run}"),
        });
        s.assertions.push(AssertionRecord {
            kind: "judge".into(),
            at: "s.evals.toml:3".into(),
            passed,
            message: None,
        });
        s
    }

    fn label(sample: u32, judged: bool, right: bool) -> Label {
        Label {
            trial: "s::c".into(),
            sample,
            question: "Is it kind?".into(),
            judged,
            right,
            random: true,
            question_type: None,
            judge: None,
            judge_settings: None,
            judge_key: format!("key {sample}"),
        }
    }

    #[test]
    fn random_labels_correct_the_judge_s_rate_and_stale_ones_are_left_out() {
        // 4 samples: 1, 2, 3 passed, 4 failed. Labels: 1 right, 2 wrong (a false pass), 4 right, each
        // of this run's judge call; 3's label judged the same verdict, "passed", but of an earlier
        // answer (another judge call key): it is a truth about another answer, stale.
        let samples: Vec<SampleRecord> = [true, true, true, false]
            .iter()
            .enumerate()
            .map(|(i, &p)| sample(i as u32 + 1, p))
            .collect();
        let pairs: Vec<(&str, &SampleRecord)> = samples.iter().map(|s| ("s::c", s)).collect();
        let labels = Labels {
            by_trial: BTreeMap::from([(
                "s::c".to_string(),
                vec![
                    label(1, true, true),
                    label(2, true, false),
                    Label {
                        judge_key: "the key of an answer recorded before".into(),
                        ..label(3, true, true)
                    },
                    label(4, false, true),
                ],
            )]),
        };
        let c = suite_estimate(&pairs, &labels).unwrap();
        // mean_N(f) = 3/4; the labelled (f, y): (1, 1), (1, 0), (0, 0): mean(y - f) = -1/3.
        assert_eq!(
            (c.estimate.samples, c.estimate.labelled, c.stale),
            (4, 3, 1)
        );
        assert!((c.estimate.judged - 0.75).abs() < 1e-12);
        assert!((c.estimate.rectifier + 1.0 / 3.0).abs() < 1e-12);
        assert!((c.estimate.estimate.value - (0.75 - 1.0 / 3.0)).abs() < 1e-12);
        // Labels not drawn at random do not count here.
        let review = Labels {
            by_trial: BTreeMap::from([(
                "s::c".to_string(),
                vec![
                    Label {
                        random: false,
                        ..label(1, true, true)
                    },
                    Label {
                        random: false,
                        ..label(2, true, false)
                    },
                ],
            )]),
        };
        assert!(suite_estimate(&pairs, &review).is_none());
    }
}
