//! Calibration sets: labelled judge cases (`*.calibration.toml` under the suite roots) that measure the
//! configured judge before its verdicts are trusted.
//!
//! A set is one [`Case`] whose samples are its items: the response is given (no subject call,
//! [`Executor::Given`]), the judge is asked the item's question through the usual judge path
//! ([`PromptRun::ask`]: recorded in and replayed from the set's cassette), and the sample passes when
//! the verdict agrees with the label. So `calibration::<set>` runs like a multi-run test (one sample per
//! item, a pass threshold of `min_accuracy`), and each item is a single-run trial
//! `calibration::<set>::<item>`, ignored unless named, like `::run_N`.
//!
//! Without `min_accuracy` a set is a measurement, not a requirement: a verdict that disagrees with its
//! label is noted in the figures (and the summary names the item) but fails nothing, because one wrong
//! verdict says nothing until it is set against a minimum. With `min_accuracy` a disagreeing item is a
//! failed sample, and the set fails when fewer than that share agree.
//!
//! The figures (accuracy, TPR, TNR, kappa, per question type) are `stats::agreement`'s; what a run
//! measured is kept in `<set>.calibration.result.json` ([`result`]) for the correction of pass rates.
//! The format is documented in `src/guide/calibration.md`.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

pub(crate) mod after_run;
pub(crate) mod corrected;
pub mod labels;
pub mod parse;
pub mod result;

use std::sync::Arc;

use crate::case::{Case, Evaluator, Executor, Given, RequestTemplate, Sampling};
use crate::config::Config;
use crate::model::Subject;
use crate::outcome::{self, SampleOutcome};
use crate::plan::{SamplePlan, Threshold};
use crate::render::shorten;
use crate::run::RunError;
use crate::spanned::{FileError, FileKind};
use crate::suite::{SuiteFile, Walked};
pub use parse::{CalibrationItem, Set};
pub use result::{JudgeResult, Observation, ResultFile};

/// The suffix of calibration set files.
pub const SUFFIX: &str = ".calibration.toml";

/// The prefix of every calibration trial.
pub const PREFIX: &str = "calibration";

/// The trial (and cassette) of a set: `calibration::<set>`.
pub fn trial_name(set: &str) -> String {
    format!("{PREFIX}::{set}")
}

/// The result file of a set file: `x.calibration.toml` beside `x.calibration.result.json`.
pub fn result_path(set_file: &std::path::Path) -> std::path::PathBuf {
    let name = set_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".toml").unwrap_or(&name);
    set_file.with_file_name(format!("{stem}.result.json"))
}

/// What the calibration files hold, set by set.
pub enum SetEntry {
    /// A set to run: its case (one sample per item) and its items' names, in order.
    Set {
        /// The case.
        case: Box<Case>,
        /// The items' names.
        items: Vec<String>,
    },
    /// A set that cannot run: its trial fails with this message.
    Broken {
        /// The trial name.
        name: String,
        /// What is wrong, located, with the fix.
        message: String,
    },
}

/// The calibration set files under the suite roots as `walked` (missing roots are the suites' to
/// report).
pub fn discover(config: &Config, walked: &Walked) -> Vec<SuiteFile> {
    walked.ending_in(config, &[SUFFIX])
}

/// Reads and parses one set file; `Err` (shown) is the failing trial's message.
pub fn load(file: &SuiteFile) -> Result<Set, FileError> {
    let kind = FileKind::CalibrationSet;
    let text = FileError::read(&file.path, &file.display, kind)?;
    parse::parse(&file.name, &file.display, &text)
        .map_err(|problems| FileError::invalid(&file.display, kind, &text, &problems))
}

/// The sets under the suite roots. With `exact`, only the set the requested trial belongs to.
pub fn entries(config: &Config, walked: &Walked, exact: Option<&str>) -> Vec<SetEntry> {
    let mut entries = Vec::new();
    for file in discover(config, walked) {
        let name = trial_name(&file.name);
        if exact.is_some_and(|f| f != name && !f.starts_with(&format!("{name}::"))) {
            continue;
        }
        let entry = match (load(&file), &config.judge) {
            (Err(error), _) => SetEntry::Broken {
                name,
                message: error.to_string(),
            },
            (Ok(_), None) => SetEntry::Broken {
                name,
                message: format!(
                    "{}: a calibration set measures the judge, and {}",
                    file.display,
                    crate::config::judge_not_configured()
                ),
            },
            (Ok(set), Some(judge)) => {
                let items = set.items.iter().map(|i| i.name.clone()).collect();
                let case = case(
                    set,
                    Subject {
                        provider: judge.provider.clone(),
                        model: judge.model.clone(),
                    },
                );
                SetEntry::Set {
                    case: Box::new(case),
                    items,
                }
            }
        };
        entries.push(entry);
    }
    entries
}

/// A set as a [`Case`]: one sample per item, judged by `judge` (provider, model).
pub fn case(set: Set, judge: Subject) -> Case {
    let name = trial_name(&set.name);
    let given: Arc<[Given]> = set
        .items
        .iter()
        .map(|i| Given {
            prompt: i.prompt.clone(),
            response: i.response.clone(),
        })
        .collect();
    let runs = set.items.len() as u32;
    let pass_threshold = set.min_accuracy.unwrap_or(1.0);
    let set = Arc::new(set);
    let subject = judge.clone();
    let judge = Arc::new(judge);
    let evaluator: Evaluator = Arc::new(move |run| {
        let (set, judge) = (set.clone(), judge.clone());
        Box::pin(async move {
            let index = run.run_index.saturating_sub(1) as usize;
            let Some(item) = set.items.get(index) else {
                return SampleOutcome::errored(format!("no item {} in the set", run.run_index));
            };
            // (what the judge said, who said it, why).
            let (said, by, why) = match run.ask_item(&item.question).await {
                Ok(verdict) => (
                    verdict.passed,
                    Subject {
                        provider: verdict.judge_provider,
                        model: verdict.judge_model,
                    },
                    verdict.reasoning,
                ),
                // A judge that gives no verdict (cut off, unreadable) did not get the item right: it
                // counts against its accuracy as the wrong answer, instead of erroring the whole set.
                Err(RunError::NoVerdict(why)) => (
                    !item.expected,
                    (*judge).clone(),
                    Some(format!(
                        "no verdict, counted as wrong: {}",
                        shorten(&why, 160)
                    )),
                ),
                Err(e) => return outcome::of_body(Err(e.into())),
            };
            let observation = Observation {
                trial: run.test_name().to_string(),
                set: set.name.clone(),
                item: item.name.clone(),
                kind: item.kind.clone(),
                expected: item.expected,
                judged: said,
                judge_provider: by.provider,
                judge_model: by.model,
            };
            run.scope
                .state()
                .note(|checks| checks.observations.push(observation));
            judged(&set, item, said, why.as_deref())
        })
    });
    Case {
        cassette: name.clone(),
        filter: name.clone(),
        name,
        request: RequestTemplate {
            subject: Ok(subject),
            system: None,
            history: Vec::new(),
            prompt: String::new(),
            turns: Vec::new(),
            vars: Default::default(),
            media: Default::default(),
            prompt_content: Vec::new(),
            max_tokens: 0,
            temperature: None,
            seed: None,
            tools: Vec::new(),
            budget: None,
        },
        sampling: Sampling {
            plan: SamplePlan::All(Threshold {
                runs,
                pass_threshold,
            }),
            prime_first: false,
            cache_judge: false,
            live_only: false,
            judge_samples: None,
        },
        executor: Executor::Given(given),
        evaluator,
        // Its only calls are the judge's, which is its subject.
        other_calls: Vec::new(),
        judge: crate::role::JudgeUse::Yes,
        warnings: Vec::new(),
        info: None,
        cell: None,
    }
}

/// How an item's verdict ends its sample: agreeing passes; disagreeing fails only when the set
/// requires a minimum accuracy (see the module documentation).
pub fn judged(
    set: &Set,
    item: &CalibrationItem,
    said_yes: bool,
    reasoning: Option<&str>,
) -> SampleOutcome {
    if said_yes == item.expected || set.min_accuracy.is_none() {
        return SampleOutcome::PASSED;
    }
    let word = |yes: bool| if yes { "yes" } else { "no" };
    SampleOutcome::failed(format!(
        "item `{}`{}: the judge said {}, the label is {}; question {:?}{}",
        item.name,
        item.kind
            .as_deref()
            .map(|k| format!(" ({k})"))
            .unwrap_or_default(),
        word(said_yes),
        word(item.expected),
        item.question,
        reasoning
            .map(|r| format!("; judge's reasoning: {r}"))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(min_accuracy: Option<f64>) -> Set {
        Set {
            name: "s".into(),
            file: "s.calibration.toml".into(),
            min_accuracy,
            items: vec![CalibrationItem {
                name: "alice".into(),
                kind: Some("factual_presence".into()),
                prompt: String::new(),
                response: "Alice leads.".into(),
                question: "Is Alice named?".into(),
                expected: true,
            }],
        }
    }

    #[test]
    fn a_disagreement_fails_only_against_a_minimum() {
        let item = &set(None).items[0];
        assert_eq!(judged(&set(None), item, false, None), SampleOutcome::PASSED);
        assert_eq!(
            judged(&set(Some(0.9)), item, true, None),
            SampleOutcome::PASSED
        );
        let failed = judged(&set(Some(0.9)), item, false, Some("absent"));
        let (crate::checks::SampleStatus::Failed, Some(message)) =
            (failed.status(), failed.message())
        else {
            panic!("a failure expected")
        };
        assert_eq!(
            message,
            "item `alice` (factual_presence): the judge said no, the label is yes; question \"Is Alice named?\"; \
             judge's reasoning: absent"
        );
    }

    #[test]
    fn a_set_is_one_sample_per_item_at_its_minimum() {
        let mut s = set(Some(0.75));
        s.items.push(s.items[0].clone());
        let case = case(s, "local/small".parse().unwrap());
        assert_eq!(case.name, "calibration::s");
        assert_eq!(case.cassette, "calibration::s");
        assert_eq!(
            case.sampling.plan,
            SamplePlan::All(Threshold {
                runs: 2,
                pass_threshold: 0.75
            })
        );
        assert_eq!(case.request.provider(), Some("local"));
        assert!(matches!(case.executor, Executor::Given(ref g) if g.len() == 2));
    }

    #[test]
    fn results_live_beside_their_set() {
        assert_eq!(
            result_path(std::path::Path::new("prompt-tests/basics.calibration.toml")),
            std::path::Path::new("prompt-tests/basics.calibration.result.json")
        );
    }
}
