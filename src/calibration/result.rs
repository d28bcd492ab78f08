//! What a calibration run measured, kept beside its set (`<set>.calibration.result.json`) so that a
//! normal run can correct pass rates for the judge in use. Pure: building, merging and reading results;
//! the files are read and written by `harness::calibration`.
//!
//! The file holds counts only (the figures are computed when shown, so a change of method needs no
//! re-measuring), one entry per judge provider and model, and a hash of the items it was measured on:
//! a set edited since is stale, and its result is not used. Each entry also records the rest of what
//! defines its judge ([`JudgeSettings`]: a hash of its instructions and schemas, its temperature and
//! `max_tokens`): a run whose judge differs in any of them does not use it ([`JudgeResult::differences`]).
//! Entries written before that are read with unknown settings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::Set;
use crate::stats::agreement::Confusion;

/// The question type of items that name none.
pub const UNTYPED: &str = "untyped";

pub use crate::checks::Observation;

/// The result file of one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// The set's name.
    pub set: String,
    /// The set's file.
    pub file: String,
    /// One entry per judge measured, sorted by provider and model.
    pub judges: Vec<JudgeResult>,
}

pub use crate::checks::JudgeSettings;

/// One way a result's judge differs from the run's, worded `was → now`.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// Another provider.
    Provider(String, String),
    /// Another model.
    Model(String, String),
    /// Other instructions, schemas or framing.
    Instructions,
    /// Another temperature.
    Temperature(Option<f32>, Option<f32>),
    /// Another `max_tokens`.
    MaxTokens(u32, u32),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let temperature =
            |t: &Option<f32>| t.map_or_else(|| "unset".to_string(), |t| t.to_string());
        match self {
            Difference::Provider(was, now) => write!(f, "provider {was} → {now}"),
            Difference::Model(was, now) => write!(f, "model {was} → {now}"),
            Difference::Instructions => write!(f, "judge instructions changed"),
            Difference::Temperature(was, now) => {
                write!(f, "temperature {} → {}", temperature(was), temperature(now))
            }
            Difference::MaxTokens(was, now) => write!(f, "max_tokens {was} → {now}"),
        }
    }
}

/// One judge measured on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeResult {
    /// The judge provider.
    pub provider: String,
    /// The judge model.
    pub model: String,
    /// The rest of what defines the judge; `None` in entries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_settings: Option<JudgeSettings>,
    /// The hash of the items measured (see [`items_hash`]).
    pub items_sha256: String,
    /// Verdicts against labels, over every item.
    pub counts: Confusion,
    /// The same per question type (`untyped` for items that name none).
    pub by_type: BTreeMap<String, Confusion>,
    /// Items the judge got wrong, in file order.
    pub disagreements: Vec<String>,
}

impl JudgeResult {
    /// Whether this entry is the one for `provider`/`model` (a file holds one per judge model).
    pub fn fits(&self, provider: &str, model: &str) -> bool {
        self.provider == provider && self.model == model
    }

    /// Whether this entry measured the run's `judge` (with `settings`) on the set as it is now (its items'
    /// hash `hash`): its figures apply to the run's verdicts.
    pub fn applies(
        &self,
        hash: &str,
        judge: &crate::config::JudgeConfig,
        settings: &JudgeSettings,
    ) -> bool {
        self.items_sha256 == hash
            && self
                .differences(&judge.provider, &judge.model, settings)
                .is_empty()
    }

    /// How this result's judge differs from `provider`/`model` with `settings`: empty when it is the
    /// same judge (or, for an entry with unknown settings, the same provider and model).
    pub fn differences(
        &self,
        provider: &str,
        model: &str,
        settings: &JudgeSettings,
    ) -> Vec<Difference> {
        differences(
            (&self.provider, &self.model, self.judge_settings.as_ref()),
            provider,
            model,
            settings,
        )
    }
}

/// How the judge `was` (provider, model, and its settings when they are known) differs from
/// `provider`/`model` with `settings`: empty when it is the same judge (or, with unknown settings, the
/// same provider and model).
pub fn differences(
    (was_provider, was_model, was): (&str, &str, Option<&JudgeSettings>),
    provider: &str,
    model: &str,
    settings: &JudgeSettings,
) -> Vec<Difference> {
    let mut out = Vec::new();
    if was_provider != provider {
        out.push(Difference::Provider(
            was_provider.to_string(),
            provider.to_string(),
        ));
    }
    if was_model != model {
        out.push(Difference::Model(was_model.to_string(), model.to_string()));
    }
    let Some(was) = was else {
        return out;
    };
    if was.instructions_sha256 != settings.instructions_sha256 {
        out.push(Difference::Instructions);
    }
    if was.temperature != settings.temperature {
        out.push(Difference::Temperature(
            was.temperature,
            settings.temperature,
        ));
    }
    if was.max_tokens != settings.max_tokens {
        out.push(Difference::MaxTokens(was.max_tokens, settings.max_tokens));
    }
    out
}

/// A hash of everything about the items that bears on a verdict (names, types, prompts, responses,
/// questions, labels), so an edited set is told apart from the one measured.
pub fn items_hash(set: &Set) -> String {
    crate::text::digest_of_parts(set.items.iter().flat_map(|item| {
        [
            item.name.as_str(),
            item.kind.as_deref().unwrap_or(""),
            item.prompt.as_str(),
            item.response.as_str(),
            item.question.as_str(),
            if item.expected { "yes" } else { "no" },
        ]
    }))
}

/// The result of `set` from the observations of its own trial (`calibration::<set>`), judged with
/// `settings`, or `None` when that trial did not judge every item (it errored, was ignored, or only
/// single items ran).
pub fn measure(
    set: &Set,
    trial: &str,
    observations: &[Observation],
    settings: Option<JudgeSettings>,
) -> Option<JudgeResult> {
    let mine: Vec<&Observation> = observations
        .iter()
        .filter(|o| o.trial == trial && o.set == set.name)
        .collect();
    let first = mine.first()?;
    let mut counts = Confusion::default();
    let mut by_type: BTreeMap<String, Confusion> = BTreeMap::new();
    let mut disagreements = Vec::new();
    for item in &set.items {
        let o = mine.iter().find(|o| o.item == item.name)?;
        counts.add(o.expected, o.judged);
        by_type
            .entry(item.kind.clone().unwrap_or_else(|| UNTYPED.to_string()))
            .or_default()
            .add(o.expected, o.judged);
        if o.expected != o.judged {
            disagreements.push(item.name.clone());
        }
    }
    Some(JudgeResult {
        provider: first.judge_provider.clone(),
        model: first.judge_model.clone(),
        judge_settings: settings,
        items_sha256: items_hash(set),
        counts,
        by_type,
        disagreements,
    })
}

/// `file` with `result` in place of the entry for the same judge (a new file when there was none).
pub fn merge(file: Option<ResultFile>, set: &Set, result: JudgeResult) -> ResultFile {
    let mut judges: Vec<JudgeResult> = file
        .map(|f| f.judges)
        .unwrap_or_default()
        .into_iter()
        .filter(|j| !j.fits(&result.provider, &result.model))
        .collect();
    judges.push(result);
    judges.sort_by(|a, b| (&a.provider, &a.model).cmp(&(&b.provider, &b.model)));
    ResultFile {
        set: set.name.clone(),
        file: set.file.clone(),
        judges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::parse::CalibrationItem;
    use crate::config::JudgeConfig;

    fn set() -> Set {
        let item = |name: &str, kind: Option<&str>, expected| CalibrationItem {
            name: name.into(),
            kind: kind.map(str::to_string),
            prompt: String::new(),
            response: "r".into(),
            question: "q?".into(),
            expected,
        };
        Set {
            name: "s".into(),
            file: "s.calibration.toml".into(),
            min_accuracy: None,
            items: vec![
                item("a", Some("avoidance"), true),
                item("b", Some("avoidance"), false),
                item("c", None, true),
            ],
        }
    }

    fn seen(trial: &str, item: &str, expected: bool, judged: bool) -> Observation {
        Observation {
            trial: trial.into(),
            set: "s".into(),
            item: item.into(),
            kind: None,
            expected,
            judged,
            judge_provider: "local".into(),
            judge_model: "small".into(),
        }
    }

    /// The verdicts `trial` noted: (item, label, judge's answer) each.
    fn seen_in(trial: &str, verdicts: &[(&str, bool, bool)]) -> Vec<Observation> {
        verdicts
            .iter()
            .map(|&(item, expected, judged)| seen(trial, item, expected, judged))
            .collect()
    }

    #[test]
    fn a_result_counts_every_item_of_the_set_trial() {
        let set = set();
        let mut all = seen_in(
            "calibration::s",
            &[("a", true, true), ("b", false, true), ("c", true, false)],
        );
        // A single item's trial does not count.
        all.push(seen("calibration::s::a", "a", true, false));
        let r = measure(&set, "calibration::s", &all, None).unwrap();
        assert_eq!(r.counts, Confusion::of(1, 1, 1, 0));
        assert_eq!(r.by_type["avoidance"].total(), 2);
        assert_eq!(r.by_type[UNTYPED].false_no, 1);
        assert_eq!(r.disagreements, ["b", "c"]);
        assert!(r.fits("local", "small") && !r.fits("local", "big"));
        // An item without a verdict: no result.
        assert_eq!(measure(&set, "calibration::s", &all[..2], None), None);
    }

    #[test]
    fn merging_replaces_only_the_same_judge() {
        let set = set();
        let all = seen_in(
            "t",
            &[("a", true, true), ("b", false, false), ("c", true, true)],
        );
        let small = measure(&set, "t", &all, None).unwrap();
        let mut big = small.clone();
        big.model = "big".into();
        let file = merge(None, &set, small.clone());
        let file = merge(Some(file), &set, big.clone());
        let mut again = small.clone();
        again.disagreements = vec!["x".into()];
        let file = merge(Some(file), &set, again.clone());
        assert_eq!(file.judges, [big, again]);
    }

    #[test]
    fn a_result_applies_only_to_the_judge_it_measured_naming_what_differs() {
        let set = set();
        let all = seen_in(
            "t",
            &[("a", true, true), ("b", false, false), ("c", true, true)],
        );
        let now = JudgeSettings::of(&JudgeConfig {
            max_tokens: 400,
            ..JudgeConfig::new("local", "small")
        });
        let measured = measure(&set, "t", &all, Some(now.clone())).unwrap();
        assert_eq!(measured.differences("local", "small", &now), []);
        let other = JudgeSettings {
            instructions_sha256: "0".repeat(64),
            temperature: Some(0.5),
            max_tokens: 1024,
        };
        let said: Vec<String> = measured
            .differences("openai", "gpt-4.1-mini", &other)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            said,
            [
                "provider local → openai",
                "model small → gpt-4.1-mini",
                "judge instructions changed",
                "temperature 0 → 0.5",
                "max_tokens 400 → 1024"
            ]
        );
        // An entry written before the settings were recorded: only provider and model can differ.
        let mut old = measured.clone();
        old.judge_settings = None;
        assert_eq!(old.differences("local", "small", &other), []);
        let json = serde_json::to_string(&old).unwrap();
        assert!(!json.contains("judge_settings"), "{json}");
        let read: JudgeResult = serde_json::from_str(&json).unwrap();
        assert_eq!(read.judge_settings, None);
        let read: JudgeResult =
            serde_json::from_str(&serde_json::to_string(&measured).unwrap()).unwrap();
        assert_eq!(read, measured);
    }

    #[test]
    fn the_hash_changes_with_any_item_field() {
        let base = items_hash(&set());
        let mut edited = set();
        edited.items[2].expected = false;
        assert_ne!(items_hash(&edited), base);
        let mut moved = set();
        moved.items[0].response = "rq?".into();
        moved.items[0].question = "".into();
        assert_ne!(items_hash(&moved), base);
        assert_eq!(items_hash(&set()), base);
    }
}
