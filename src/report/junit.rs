//! The JUnit XML report (`--junit PATH` or `PROMPT_TESTER_JUNIT`): one `<testsuite>` per suite file
//! (per module for `#[prompt_test]` functions), one `<testcase>` per trial.

use std::collections::BTreeMap;
use std::path::Path;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Rate, UNCATEGORIZED};
use crate::record::{Status, TrialRecord};
use crate::redact::redact;

/// The JUnit test suite of a `#[prompt_test]` at the crate root (no module path).
const ROOT_SUITE: &str = "prompt_tests";

/// Writes a JUnit XML report: one `<testsuite>` per suite file (per module for `#[prompt_test]`
/// functions), one `<testcase>` per trial, its runs, pass rate, tokens and costs as properties.
pub fn write_junit(path: &Path, records: &[TrialRecord]) -> std::io::Result<()> {
    let xml = junit_xml(records).map_err(std::io::Error::other)?;
    crate::shared::replace(path, redact(&xml).as_bytes())
}

/// The JUnit XML of `records`.
pub fn junit_xml(records: &[TrialRecord]) -> Result<String, quick_junit::SerializeError> {
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    for r in records {
        let group = match &r.case {
            Some(case) => case.suite.name.clone(),
            None => r
                .name
                .rsplit_once("::")
                .map_or(ROOT_SUITE.to_string(), |(module, _)| module.to_string()),
        };
        let suite = suites
            .entry(group.clone())
            .or_insert_with(|| TestSuite::new(group.clone()));
        let message = r.message.as_deref().map(|m| redact(m).into_owned());
        let status = match r.status {
            Status::Passed => TestCaseStatus::success(),
            Status::Ignored | Status::LiveOnly => {
                let mut s = TestCaseStatus::skipped();
                if let Some(m) = &message {
                    s.set_message(m.as_str());
                }
                s
            }
            Status::Failed | Status::Errored => {
                let kind = if r.status == Status::Errored {
                    NonSuccessKind::Error
                } else {
                    NonSuccessKind::Failure
                };
                let mut s = TestCaseStatus::non_success(kind);
                let text = message.clone().unwrap_or_else(|| "failed".to_string());
                s.set_message(text.lines().next().unwrap_or_default());
                s.set_type("prompt-tester");
                s.set_description(text);
                s
            }
        };
        let mut case = TestCase::new(r.name.as_str(), status);
        case.set_classname(group.as_str());
        case.set_time(r.duration);
        case.add_properties(properties(r));
        if let Some(gate) = &r.gate {
            // A gate's output is its failing rows, each with its reason (a passing gate has some too).
            let rows: Vec<String> = gate
                .rows
                .iter()
                .filter(|row| matches!(row.status, Status::Failed | Status::Errored))
                .map(|row| {
                    let label = if row.status == Status::Errored {
                        "ERROR"
                    } else {
                        "FAILED"
                    };
                    let reason = row.message.as_deref().unwrap_or_default();
                    format!("[row {}] {label}: {reason}", row.case_id)
                })
                .collect();
            if !rows.is_empty() {
                case.set_system_out(redact(&rows.join("\n")).into_owned());
            }
        } else if let Some(preview) = &r.output_preview {
            case.set_system_out(redact(preview).into_owned());
        }
        // `[judge] advisory = "warn"`: a "no" that did not fail its sample is still said.
        let noes: Vec<String> = r
            .advisory_noes()
            .map(|j| {
                let why = j.advisory.as_ref().map(ToString::to_string).unwrap_or_default();
                format!(
                    "warning: the judge answered \"no\" to {:?}, not counted ([judge] advisory = \"warn\"; {why})",
                    j.question
                )
            })
            .collect();
        if !noes.is_empty() {
            case.set_system_err(redact(&noes.join("\n")).into_owned());
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("prompt-tester");
    report.add_test_suites(suites.into_values());
    report.to_string()
}

fn properties(r: &TrialRecord) -> Vec<Property> {
    let u = &r.usage;
    let mut props = vec![
        Property::new("runs", r.runs_total.to_string()),
        Property::new("runs_passed", r.runs_passed.to_string()),
        Property::new("runs_errored", r.runs_errored.to_string()),
        Property::new("runs_required", r.runs_required.to_string()),
        Property::new("pass_threshold", r.pass_threshold.to_string()),
    ];
    // Each media part the prompt placed, named by its placeholder (never its bytes).
    props.extend(
        r.media
            .iter()
            .map(|m| Property::new(format!("media.{}", m.var), m.described())),
    );
    let noes = r.advisory_noes().count();
    if noes > 0 {
        props.push(Property::new("advisory_noes_not_counted", noes.to_string()));
    }
    if let Some(gate) = &r.gate {
        let failing = gate
            .rows
            .iter()
            .filter(|row| matches!(row.status, Status::Failed | Status::Errored))
            .count();
        props.extend([
            Property::new("gate_rows", r.runs_total.to_string()),
            Property::new("gate_rows_passed", r.runs_passed.to_string()),
            Property::new("gate_rows_failing", failing.to_string()),
            Property::new("gate_rows_skipped", gate.rows_skipped.to_string()),
        ]);
        if let Some(category) = &gate.category {
            props.push(Property::new("gate_category", category.as_str()));
        }
    }
    let rate = Rate::of(r.counts());
    for (name, value) in [
        ("pass_rate", rate.pass_rate),
        ("ci_low", rate.ci_low),
        ("ci_high", rate.ci_high),
    ] {
        if let Some(value) = value {
            props.push(Property::new(name, format!("{value:.4}")));
        }
    }
    props.extend([
        Property::new("subject_calls", u.subject.calls.to_string()),
        Property::new("subject_replayed", u.subject.replayed.to_string()),
        Property::new("subject_input_tokens", u.subject.tokens.input.to_string()),
        Property::new("subject_output_tokens", u.subject.tokens.output.to_string()),
    ]);
    props.extend(cost_property("subject_cost_usd", &u.subject));
    props.extend([
        Property::new("judge_calls", u.judge.calls.to_string()),
        Property::new("judge_input_tokens", u.judge.tokens.input.to_string()),
        Property::new("judge_output_tokens", u.judge.tokens.output.to_string()),
    ]);
    props.extend(cost_property("judge_cost_usd", &u.judge));
    if u.embedding.calls > 0 {
        props.extend([
            Property::new("embedding_calls", u.embedding.calls.to_string()),
            Property::new(
                "embedding_input_tokens",
                u.embedding.tokens.input.to_string(),
            ),
        ]);
        props.extend(cost_property("embedding_cost_usd", &u.embedding));
    }
    if !u.unpriced.is_empty() {
        props.push(Property::new(
            "unpriced_models",
            u.unpriced.iter().cloned().collect::<Vec<_>>().join(","),
        ));
    }
    if let Some(case) = &r.case {
        props.push(Property::new("suite_file", case.suite.file.as_str()));
        props.push(Property::new(
            "category",
            case.category.as_deref().unwrap_or(UNCATEGORIZED),
        ));
    }
    props
}

/// The cost property, absent when a call had no price: that cost is unknown (`unpriced_models` says
/// which), and a sum of the priced calls alone would understate it.
fn cost_property(name: &str, tally: &crate::usage::Tally) -> Option<Property> {
    let usd = tally.cost.known()?;
    Some(Property::new(name, format!("{usd:.6}")))
}

#[cfg(test)]
mod tests {
    use super::super::tests::record;
    use super::*;

    #[test]
    fn junit_properties_hold_the_interval_beside_the_rate() {
        let xml = junit_xml(&[record("t", Status::Passed, 4, 5)]).unwrap();
        for property in [
            r#"<property name="pass_rate" value="0.8000"/>"#,
            r#"<property name="ci_low" value="0.3755"/>"#,
            r#"<property name="ci_high" value="0.9638"/>"#,
        ] {
            assert!(xml.contains(property), "no {property} in {xml}");
        }
        let none = junit_xml(&[record("t", Status::Ignored, 0, 0)]).unwrap();
        assert!(!none.contains("ci_low"), "{none}");
    }
}
