//! Calibration sets in the harness: their trials, the result files written after a run, the
//! calibration section of the summary and of the JSON report, and the judge-corrected pass rates.

use std::collections::BTreeMap;

use serde::Serialize;

use super::corrected::LabelsFit;
use crate::calibration::result::JudgeSettings;
use crate::calibration::{self as cal, JudgeResult, ResultFile, result};
use crate::cassette::CassetteStore;
use crate::checks::Observation;
use crate::config::{AdvisoryPolicy, Config};
use crate::record::{Status, TrialRecord};
use crate::shared::{Shared, SharedLock};
use crate::stats::agreement::{self, Agreement, Confusion, Correction, FigureInterval};
use crate::suite::Walked;

/// The judge a figure is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeName {
    /// Provider.
    pub provider: String,
    /// Model.
    pub model: String,
}

/// The figures of one set for one judge.
#[derive(Debug, Clone, Serialize)]
pub struct SetFigures {
    /// The set (`calibration::<set>` is its trial).
    pub set: String,
    /// The set's file.
    pub file: String,
    /// The judge measured.
    pub judge: JudgeName,
    /// Measured by this run (else read from the result file).
    pub measured_this_run: bool,
    /// The set changed since this was measured: not used for corrections.
    pub stale: bool,
    /// The rest of what defines the judge measured (instructions hash, temperature, `max_tokens`);
    /// `None` for a result written before they were recorded.
    pub judge_settings: Option<JudgeSettings>,
    /// This is the run's judge (provider, model and settings) on the set as it is now: its figures
    /// apply to this run's verdicts and pass rates.
    pub applies: bool,
    /// The set's minimum accuracy, if it has one.
    pub min_accuracy: Option<f64>,
    /// Over every item.
    pub overall: Agreement,
    /// Per question type.
    pub by_type: BTreeMap<String, Agreement>,
    /// Items the judge got wrong.
    pub disagreements: Vec<String>,
}

/// The calibration section of the JSON report (`calibration`).
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationReport {
    /// The judge configured for this run.
    pub judge: Option<JudgeName>,
    /// Every set's figures, per judge measured.
    pub sets: Vec<SetFigures>,
    /// The judge in use over every set measured with it (stale results left out): what pass rates are
    /// corrected with.
    pub judge_in_use: Option<Agreement>,
    /// Sets measured only with another judge than this run's (another provider, model, instructions,
    /// temperature or `max_tokens`): their results are not applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judge_changed: Vec<JudgeChanged>,
    /// Sets whose result for this run's judge was written before judge settings were recorded: applied,
    /// with its instructions, temperature and `max_tokens` unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_settings: Vec<String>,
    /// The labels not drawn at random that do not measure this run's judge (another judge's answers)
    /// or measure it with unknown settings.
    #[serde(skip_serializing_if = "LabelsFit::is_empty")]
    pub labels: LabelsFit,
}

/// A set whose results were all measured with another judge than this run's.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeChanged {
    /// The set.
    pub set: String,
    /// The judge its result was measured with (the same provider and model when there is one).
    pub measured_with: JudgeName,
    /// What differs, `was → now` (`model gpt-4o-mini → gpt-4.1-mini`, `judge instructions changed`).
    pub differences: Vec<String>,
    /// The command that measures this run's judge on it.
    pub remeasure: String,
}

/// A suite's pass rate corrected for the judge (`judge_corrected` in its JSON entry).
#[derive(Debug, Clone, Serialize)]
pub struct JudgeCorrected {
    /// The judge the correction is for.
    pub judge: JudgeName,
    /// The pass rate as measured.
    pub observed: f64,
    /// The corrected rate, or why there is none.
    #[serde(flatten)]
    pub correction: Correction,
}

/// What [`after_run`] found.
pub(crate) struct AfterRun {
    /// The calibration report, for the summary and the JSON writer.
    pub report: Option<CalibrationReport>,
    /// Result files that could not be read or written.
    pub errors: Vec<String>,
}

/// After the trials: writes the result of every set whose trial judged all its items (`observed`), then
/// builds the calibration report from the result files.
pub(crate) fn after_run(
    config: &Config,
    observed: &[Observation],
    commands: &crate::commands::Commands,
    cassettes: &CassetteStore,
    walked: &Walked,
) -> AfterRun {
    let mut errors = Vec::new();
    let mut sets = Vec::new();
    let mut judge_changed = Vec::new();
    let mut unknown_settings = Vec::new();
    let settings = config.judge.as_ref().map(JudgeSettings::of);
    for file in cal::discover(config, walked) {
        let Ok(set) = cal::load(&file) else { continue };
        let path = cal::result_path(&file.path);
        let shown = crate::engine::display_path(&path, &config.root);
        // A result that cannot be read is never written over: it may hold the measurements of other
        // judges (a merge conflict is the usual cause), as a cassette that does not parse is kept.
        let unreadable = |why: String| {
            format!(
                "{shown}: cannot read the calibration result ({why}); it was not rewritten, so the judges it \
                 holds are kept: resolve it (a merge conflict?), or move it away and measure again: {}",
                commands.rerun(&cal::trial_name(&set.name))
            )
        };
        let measured = result::measure(
            &set,
            &cal::trial_name(&set.name),
            observed,
            settings.clone(),
        );
        // A set measured here is merged into its result file in one turn: another process may be
        // writing another judge's measurement.
        let work = measured
            .as_ref()
            .map(|_| crate::shared::work_dir(dir_of(&path)))
            .transpose();
        let shared = work.map(|w| w.map(|w| Shared::new(&path, &w)));
        let turn = match &shared {
            Ok(shared) => shared.as_ref().map(Shared::lock).transpose(),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        };
        let turn = match turn {
            Ok(turn) => turn,
            Err(e) => {
                errors.push(format!("cannot write the calibration result {shown}: {e}"));
                continue;
            }
        };
        let existing = match read_result(&path) {
            Ok(existing) => existing,
            Err(why) => {
                errors.push(unreadable(why));
                continue;
            }
        };
        let fresh = measured
            .as_ref()
            .map(|r| (r.provider.clone(), r.model.clone()));
        let now = match (measured, &turn) {
            (Some(r), Some(turn)) => {
                let merged = result::merge(existing, &set, r);
                if let Err(e) = write_if_changed(turn, &merged) {
                    errors.push(format!("cannot write the calibration result {shown}: {e}"));
                }
                Some(merged)
            }
            _ => existing,
        };
        drop(turn);
        let hash = result::items_hash(&set);
        let judges = now.map(|f| f.judges).unwrap_or_default();
        if let (Some(judge), Some(settings)) = (&config.judge, &settings) {
            match changed(&set, &judges, judge, settings, commands) {
                Fit::Fits { known: true } | Fit::Nothing => {}
                Fit::Fits { known: false } => unknown_settings.push(set.name.clone()),
                Fit::Changed(c) => judge_changed.push(c),
            }
        }
        for judge in judges {
            let this_run = fresh.as_ref().is_some_and(|(p, m)| judge.fits(p, m));
            let applies = match (&config.judge, &settings) {
                (Some(j), Some(s)) => judge.applies(&hash, j, s),
                _ => false,
            };
            sets.push(figures(&set, judge, this_run, applies, &hash));
        }
    }
    let judge = config.judge.as_ref().map(|j| JudgeName {
        provider: j.provider.clone(),
        model: j.model.clone(),
    });
    let labels = match (&config.judge, &settings) {
        (Some(j), Some(s)) => super::corrected::of_judge(config, j, s, cassettes, walked).1,
        _ => LabelsFit::default(),
    };
    if sets.is_empty() && labels.is_empty() {
        return AfterRun {
            report: None,
            errors,
        };
    }
    let pooled = pooled(&sets);
    let report = CalibrationReport {
        judge,
        judge_in_use: pooled.map(|c| agreement::agreement(&c)),
        sets,
        judge_changed,
        unknown_settings,
        labels,
    };
    AfterRun {
        report: Some(report),
        errors,
    }
}

/// How a set's results stand to the run's judge.
enum Fit {
    /// The set has no result.
    Nothing,
    /// One was measured with this judge (`known`: with its settings recorded).
    Fits {
        /// The entry records the judge's settings.
        known: bool,
    },
    /// Every result was measured with another judge.
    Changed(JudgeChanged),
}

/// Whether one of `judges` (the results of `set`) was measured with the run's `judge`, else what
/// differs from the closest one: the same provider and model if there is one, else the first.
fn changed(
    set: &cal::Set,
    judges: &[JudgeResult],
    judge: &crate::config::JudgeConfig,
    settings: &JudgeSettings,
    commands: &crate::commands::Commands,
) -> Fit {
    if let Some(same) = judges.iter().find(|j| {
        j.differences(&judge.provider, &judge.model, settings)
            .is_empty()
    }) {
        return Fit::Fits {
            known: same.judge_settings.is_some(),
        };
    }
    let Some(closest) = judges
        .iter()
        .find(|j| j.fits(&judge.provider, &judge.model))
        .or(judges.first())
    else {
        return Fit::Nothing;
    };
    Fit::Changed(JudgeChanged {
        set: set.name.clone(),
        measured_with: JudgeName {
            provider: closest.provider.clone(),
            model: closest.model.clone(),
        },
        differences: closest
            .differences(&judge.provider, &judge.model, settings)
            .iter()
            .map(ToString::to_string)
            .collect(),
        remeasure: commands.record(&format!("--exact {}", cal::trial_name(&set.name)), &[]),
    })
}

fn figures(
    set: &cal::Set,
    judge: JudgeResult,
    this_run: bool,
    applies: bool,
    hash: &str,
) -> SetFigures {
    SetFigures {
        set: set.name.clone(),
        file: set.file.clone(),
        stale: judge.items_sha256 != hash,
        judge_settings: judge.judge_settings,
        applies,
        judge: JudgeName {
            provider: judge.provider,
            model: judge.model,
        },
        measured_this_run: this_run,
        min_accuracy: set.min_accuracy,
        overall: agreement::agreement(&judge.counts),
        by_type: judge
            .by_type
            .iter()
            .map(|(k, c)| (k.clone(), agreement::agreement(c)))
            .collect(),
        disagreements: judge.disagreements,
    }
}

/// The counts of the run's judge over every set whose result applies to it (see
/// [`SetFigures::applies`]).
fn pooled(sets: &[SetFigures]) -> Option<Confusion> {
    sets.iter()
        .filter(|s| s.applies)
        .map(|s| s.overall.counts)
        .reduce(|a, b| a.merged(&b))
}

/// Before the trials: the run's judge's counts per question type over every calibration result that
/// applies to it (its provider, model and settings, on the set as it is now) and every label not drawn
/// at random of its own answers, for each verdict to carry; and the warnings about labels left out (another
/// judge's) or counted with unknown settings, each said once. Files that cannot be read are left out
/// here; [`after_run`] and the labels' reading report them.
pub(crate) fn measured_by_type(
    config: &Config,
    cassettes: &CassetteStore,
    walked: &Walked,
) -> (BTreeMap<String, Agreement>, Vec<String>) {
    let mut by_type: BTreeMap<String, Confusion> = BTreeMap::new();
    let Some(judge) = &config.judge else {
        return (BTreeMap::new(), Vec::new());
    };
    let settings = JudgeSettings::of(judge);
    for file in cal::discover(config, walked) {
        let Ok(set) = cal::load(&file) else { continue };
        let Ok(Some(results)) = read_result(&cal::result_path(&file.path)) else {
            continue;
        };
        let hash = result::items_hash(&set);
        for r in results
            .judges
            .iter()
            .filter(|r| r.applies(&hash, judge, &settings))
        {
            for (kind, counts) in &r.by_type {
                let pooled = by_type.entry(kind.clone()).or_default();
                *pooled = pooled.merged(counts);
            }
        }
    }
    // Labels of the suite's own outputs not drawn at random count as a set's items do, for the judge
    // that gave the answers they judge.
    let (labelled, fit) = super::corrected::of_judge(config, judge, &settings, cassettes, walked);
    for (kind, counts) in labelled {
        let pooled = by_type.entry(kind).or_default();
        *pooled = pooled.merged(&counts);
    }
    let warnings = fit.warnings(judge);
    let measured = by_type
        .into_iter()
        .map(|(kind, counts)| (kind, agreement::agreement(&counts)))
        .collect();
    (measured, warnings)
}

/// The result file at `path`: `None` when there is none; `Err`, why it cannot be read.
fn read_result(path: &std::path::Path) -> Result<Option<ResultFile>, String> {
    match crate::text::read(path) {
        Ok(text) => serde_json::from_str::<ResultFile>(&text)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn write_if_changed(turn: &SharedLock<'_>, file: &ResultFile) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    if turn
        .read()
        .ok()
        .flatten()
        .is_some_and(|old| old.trim_end() == json)
    {
        return Ok(());
    }
    turn.replace(json.as_bytes())
}

/// The folder of `path` (`.` for a bare file name).
fn dir_of(path: &std::path::Path) -> &std::path::Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    }
}

/// The correction of `passed` of `total` for the judge in use, when the report has its calibration.
pub fn correct(report: &CalibrationReport, passed: u32, total: u32) -> Option<JudgeCorrected> {
    let judge = report.judge.clone()?;
    let counts = report.judge_in_use?.counts;
    let correction = agreement::rogan_gladen(passed, total, &counts)?;
    Some(JudgeCorrected {
        judge,
        observed: f64::from(passed) / f64::from(total),
        correction,
    })
}

/// Suites that asked the judge in this run: name, trials passed, trials that ran.
pub fn judged_suites(records: &[TrialRecord]) -> Vec<(String, u32, u32)> {
    let mut suites: BTreeMap<String, (u32, u32, bool)> = BTreeMap::new();
    for r in records {
        let Some(case) = &r.case else { continue };
        if matches!(r.status, Status::Ignored | Status::LiveOnly) {
            continue;
        }
        let entry = suites.entry(case.suite.name.clone()).or_default();
        entry.0 += u32::from(r.status == Status::Passed);
        entry.1 += 1;
        entry.2 |= r.usage.judge.calls > 0;
    }
    suites
        .into_iter()
        .filter(|(_, (_, total, judged))| *judged && *total > 0)
        .map(|(name, (passed, total, _))| (name, passed, total))
        .collect()
}

/// The summary's warning about advisory "no"s (a judge not measured well enough on the question):
/// under `[judge] advisory = "fail"`, the samples they failed; under `"warn"`, the samples that passed
/// with them, not counted. How many, which trials, what to do. (Under `"error"` each sample says it.)
pub fn advisory_warning(policy: AdvisoryPolicy, records: &[TrialRecord]) -> Option<String> {
    let mut trials = Vec::new();
    let mut samples = 0;
    for r in records {
        let n = r
            .samples
            .iter()
            .filter(|s| match policy {
                AdvisoryPolicy::Fail => s.status() == crate::checks::SampleStatus::Failed,
                AdvisoryPolicy::Warn => s.status() == crate::checks::SampleStatus::Passed,
                AdvisoryPolicy::Error => false,
            })
            .filter(|s| s.judge.iter().any(|j| !j.passed && j.advisory.is_some()))
            .count();
        if n > 0 {
            samples += n;
            trials.push(r.name.as_str());
        }
    }
    let (said, instead) = match policy {
        AdvisoryPolicy::Fail => (
            "failed sample(s) had an advisory judge verdict",
            "or set [judge] advisory = \"warn\" to report such a \"no\" without failing the sample",
        ),
        AdvisoryPolicy::Warn => (
            "sample(s) passed with an advisory judge \"no\"",
            "the \"no\" is not counted ([judge] advisory = \"warn\"); set \"fail\" to let it decide",
        ),
        AdvisoryPolicy::Error => return None,
    };
    (samples > 0).then(|| {
        format!(
            "{samples} {said} (its judge is not measured well enough on that type of \
             question): {}; measure the judge on such questions with a calibration set, {instead}",
            trials.join(", ")
        )
    })
}

fn or_na(e: Option<FigureInterval>, show: fn(&FigureInterval) -> String) -> String {
    e.as_ref().map_or_else(|| "n/a".to_string(), show)
}

fn line(a: &Agreement) -> String {
    format!(
        "accuracy {}, TPR {}, TNR {}, kappa {}",
        or_na(a.accuracy, FigureInterval::percent),
        or_na(a.tpr, FigureInterval::percent),
        or_na(a.tnr, FigureInterval::percent),
        or_na(a.kappa, FigureInterval::plain),
    )
}

/// The calibration section of the summary: the sets measured by this run, then the corrected pass
/// rate of every suite that asked the judge (`suites` from [`judged_suites`]).
pub fn render(report: &CalibrationReport, suites: &[(String, u32, u32)]) -> String {
    let mut out = String::new();
    let measured: Vec<&SetFigures> = report.sets.iter().filter(|s| s.measured_this_run).collect();
    if !measured.is_empty() {
        out.push_str("\njudge calibration (95% CIs):\n");
    }
    for s in measured {
        out.push_str(&format!(
            "  {} with {}/{}, {} items: {}{}\n",
            cal::trial_name(&s.set),
            s.judge.provider,
            s.judge.model,
            s.overall.counts.total(),
            line(&s.overall),
            s.min_accuracy
                .map(|m| format!(" (min_accuracy {})", crate::outcome::percent(m)))
                .unwrap_or_default()
        ));
        for (kind, a) in &s.by_type {
            out.push_str(&format!(
                "    {kind} ({} items): {}\n",
                a.counts.total(),
                line(a)
            ));
        }
        if !s.disagreements.is_empty() {
            out.push_str(&format!(
                "    the judge disagreed with the label on {}: {}\n",
                s.disagreements.len(),
                s.disagreements.join(", ")
            ));
        }
    }
    for c in &report.judge_changed {
        out.push_str(&format!(
            "{} was measured with another judge ({}): its result is not applied; measure this judge with: {}\n",
            cal::trial_name(&c.set),
            c.differences.join(", "),
            c.remeasure
        ));
    }
    if !report.unknown_settings.is_empty() {
        out.push_str(&format!(
            "note: the calibration result of {} was written before judge settings were recorded: its judge's \
             instructions, temperature and max_tokens are unknown and taken to be this run's; measure again to \
             record them\n",
            report
                .unknown_settings
                .iter()
                .map(|s| cal::trial_name(s))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let (Some(judge), Some(pooled)) = (&report.judge, &report.judge_in_use) else {
        return out;
    };
    if suites.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "judge-corrected pass rates (judge {}/{} over {} calibration items: TPR {}, TNR {}):\n",
        judge.provider,
        judge.model,
        pooled.counts.total(),
        or_na(pooled.tpr, FigureInterval::percent),
        or_na(pooled.tnr, FigureInterval::percent),
    ));
    for (suite, passed, total) in suites {
        let observed = format!(
            "{passed}/{total} passed ({:.0}%)",
            100.0 * f64::from(*passed) / f64::from(*total)
        );
        let said = match correct(report, *passed, *total).map(|c| c.correction) {
            Some(Correction::Corrected { estimate, .. }) => {
                format!("corrected {}", estimate.percent())
            }
            Some(Correction::TooWeak { informedness }) => format!(
                "the judge is too weak to correct for (TPR + TNR - 1 = {informedness:.2}, below {})",
                agreement::MIN_INFORMEDNESS
            ),
            None => "no correction (the calibration lacks a yes or a no item)".to_string(),
        };
        out.push_str(&format!("  {suite}: {observed}; {said}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    fn report(counts: Confusion) -> CalibrationReport {
        let judge = JudgeName {
            provider: "local".into(),
            model: "small".into(),
        };
        CalibrationReport {
            judge: Some(judge.clone()),
            sets: vec![SetFigures {
                set: "basics".into(),
                file: "basics.calibration.toml".into(),
                judge,
                measured_this_run: true,
                stale: false,
                judge_settings: None,
                applies: true,
                min_accuracy: Some(0.5),
                overall: agreement::agreement(&counts),
                by_type: BTreeMap::from([("avoidance".to_string(), agreement::agreement(&counts))]),
                disagreements: vec!["b".into()],
            }],
            judge_in_use: Some(agreement::agreement(&counts)),
            judge_changed: Vec::new(),
            unknown_settings: Vec::new(),
            labels: LabelsFit::default(),
        }
    }

    #[test]
    fn the_summary_shows_figures_and_corrections() {
        let summary = |counts| render(&report(counts), &[("support".into(), 9, 10)]);
        let good = summary(Confusion::of(18, 2, 3, 17));
        assert_contains(
            &good,
            &[
                "  calibration::basics with local/small, 40 items: accuracy 88% (95% CI 74–95%), TPR 90% (95% CI \
                 70–97%), TNR 85% (95% CI 64–95%), kappa 0.75 (95% CI 0.55–0.95) (min_accuracy 50%)\n",
                "    avoidance (40 items): accuracy 88%",
                "disagreed with the label on 1: b",
                "  support: 9/10 passed (90%); corrected 100% (95% CI ",
            ],
        );
        let weak = Confusion::of(12, 8, 9, 11);
        let text = summary(weak);
        assert!(
            text.contains(
                "  support: 9/10 passed (90%); the judge is too weak to correct for (TPR + TNR - 1 = 0.15, below 0.2)"
            ),
            "{text}"
        );
        assert!(!render(&report(weak), &[]).contains("judge-corrected"));
    }

    #[test]
    fn only_suites_that_asked_the_judge_are_corrected() {
        use crate::case::{CaseInfo, SuiteInfo};
        let record = |suite: &str, status: Status, judge_calls: u64| {
            let mut r = TrialRecord::unrun(
                format!("{suite}::c"),
                status,
                "",
                Some(CaseInfo {
                    suite: SuiteInfo {
                        name: suite.into(),
                        file: String::new(),
                        prompt_id: String::new(),
                        prompt_version: None,
                        dataset_version: None,
                    },
                    case: "c".into(),
                    category: None,
                }),
            );
            r.usage.judge.calls = judge_calls;
            r
        };
        let records = [
            record("judged", Status::Passed, 1),
            record("judged", Status::Failed, 0),
            record("judged", Status::Ignored, 0),
            record("plain", Status::Passed, 0),
        ];
        assert_eq!(judged_suites(&records), [("judged".to_string(), 1, 2)]);
    }
}
