//! Where two trajectories of one sample part, as a review names it: the first step whose model, results
//! sent back, tools requested (names and arguments) or answer differ. Call ids, tokens and latency are
//! not compared: they differ between any two recordings of the same steps.

use std::fmt;

use super::{ModelCall, Trajectory, cut, did, sent_back, step};

/// The first step at which two trajectories of a sample differ, and what it was on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepChange {
    /// The step, 1-based.
    pub step: usize,
    /// The part of the step that changed, on the accepted side; `None`: that side has no such step.
    pub before: Option<String>,
    /// The same on the new side.
    pub after: Option<String>,
}

impl fmt::Display for StepChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "(no such step)".into());
        write!(
            f,
            "first change at step {}: {} → {}",
            self.step,
            side(&self.before),
            side(&self.after)
        )
    }
}

/// Whether a trajectory says more than a sample's prompt and output do: more than one model call, or
/// a tool requested or sent back. The reports and the review show the steps of those only.
pub fn shows_steps(trajectory: &Trajectory) -> bool {
    let calls = trajectory.calls();
    calls.len() > 1
        || calls
            .iter()
            .any(|c| !c.requested.is_empty() || !c.sent_back.is_empty())
}

/// The first step at which `new` differs from `old`; `None` when every step is the same.
pub fn first_change(old: &Trajectory, new: &Trajectory) -> Option<StepChange> {
    let (old, new) = (old.calls(), new.calls());
    (0..old.len().max(new.len())).find_map(|i| {
        let (before, after) = match (old.get(i), new.get(i)) {
            (Some(a), Some(b)) => {
                let (x, y) = differing(a, b)?;
                (Some(x), Some(y))
            }
            (a, b) => (a.map(step), b.map(step)),
        };
        Some(StepChange {
            step: i + 1,
            before,
            after,
        })
    })
}

/// The first part of two calls that differs, as each side shows it.
fn differing(a: &ModelCall, b: &ModelCall) -> Option<(String, String)> {
    let model = |c: &ModelCall| format!("{}/{}", c.provider, c.model);
    if model(a) != model(b) {
        return Some((model(a), model(b)));
    }
    let back = |c: &ModelCall| {
        c.sent_back
            .iter()
            .map(|s| (s.name.clone(), s.content.clone()))
            .collect::<Vec<_>>()
    };
    if back(a) != back(b) {
        let shown = |c: &ModelCall| {
            if c.sent_back.is_empty() {
                "nothing sent back".to_string()
            } else {
                sent_back(c)
            }
        };
        return Some((shown(a), shown(b)));
    }
    let asked = |c: &ModelCall| {
        c.requested
            .iter()
            .map(|r| (r.name.clone(), r.arguments.clone()))
            .collect::<Vec<_>>()
    };
    if asked(a) != asked(b) {
        return Some((did(a), did(b)));
    }
    if a.answer != b.answer {
        return Some(apart(&a.answer, &b.answer));
    }
    None
}

/// Two different answers as shown, cut where they differ when their first characters are the same.
fn apart(a: &str, b: &str) -> (String, String) {
    let (x, y) = (cut(a), cut(b));
    if x != y {
        return (x, y);
    }
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let (a, b) = (one_line(a), one_line(b));
    let same = a.chars().zip(b.chars()).take_while(|(p, q)| p == q).count();
    // A little of what they share, so the reader sees where they part.
    let from = same.saturating_sub(20);
    let tail = |t: &str| format!("…{}", t.chars().skip(from).collect::<String>());
    (cut(&tail(&a)), cut(&tail(&b)))
}

#[cfg(test)]
mod tests {
    use super::super::SentBack;
    use super::*;
    use crate::completion::ToolCall;
    use serde_json::json;

    fn call(requested: &[(&str, &str)], back: &[&str], answer: &str) -> ModelCall {
        ModelCall {
            provider: "openai".into(),
            model: "m".into(),
            requested: requested
                .iter()
                .enumerate()
                .map(|(i, (name, order))| ToolCall {
                    id: format!("call_{i}"),
                    name: (*name).into(),
                    arguments: json!({ "order_id": order }),
                    thought_signature: None,
                })
                .collect(),
            sent_back: back
                .iter()
                .map(|content| SentBack {
                    id: Some("call_0".into()),
                    name: Some("lookup_order".into()),
                    content: (*content).into(),
                })
                .collect(),
            answer: answer.into(),
            input_tokens: 10,
            output_tokens: 5,
            latency_ms: 100,
            replayed: false,
        }
    }

    fn trajectory(calls: Vec<ModelCall>) -> Trajectory {
        Trajectory { calls }
    }

    fn support_agent(order: &str, status: &str) -> Trajectory {
        trajectory(vec![
            call(&[("lookup_order", order)], &[], ""),
            call(&[], &[status], "It ships Monday."),
        ])
    }

    #[test]
    fn the_same_steps_recorded_again_have_no_change() {
        let a = support_agent("42", "shipped");
        let mut b = a.clone();
        // Ids, tokens and latency differ between any two recordings.
        b.calls[0].requested[0].id = "call_other".into();
        b.calls[1].input_tokens = 99;
        b.calls[1].latency_ms = 7;
        b.calls[1].sent_back[0].id = Some("call_other".into());
        assert_eq!(first_change(&a, &b), None);
    }

    #[test]
    fn names_the_first_step_whose_tool_arguments_changed() {
        let change = first_change(
            &trajectory(vec![
                call(&[], &[], "Let me look."),
                call(&[("lookup_order", "42")], &[], ""),
            ]),
            &trajectory(vec![
                call(&[], &[], "Let me look."),
                call(&[("lookup_order", "43")], &[], ""),
            ]),
        )
        .expect("a change");
        assert_eq!(
            change.to_string(),
            r#"first change at step 2: lookup_order({"order_id":"42"}) → lookup_order({"order_id":"43"})"#
        );
    }

    #[test]
    fn a_result_sent_back_a_model_and_an_answer_are_each_a_change() {
        let a = support_agent("42", "shipped");
        let change = first_change(&a, &support_agent("42", "lost")).expect("a change");
        assert_eq!(
            change.to_string(),
            r#"first change at step 2: sent back: lookup_order = "shipped" → sent back: lookup_order = "lost""#
        );
        let mut b = a.clone();
        b.calls[0].model = "n".into();
        assert_eq!(
            first_change(&a, &b).map(|c| c.to_string()),
            Some("first change at step 1: openai/m → openai/n".into())
        );
        let mut b = a.clone();
        b.calls[1].answer = "It ships Tuesday.".into();
        assert_eq!(
            first_change(&a, &b).map(|c| c.to_string()),
            Some(r#"first change at step 2: "It ships Monday." → "It ships Tuesday.""#.into())
        );
    }

    #[test]
    fn answers_that_differ_past_what_a_step_shows_are_shown_where_they_part() {
        let long = "word ".repeat(30);
        let a = trajectory(vec![call(&[], &[], &format!("{long}Monday"))]);
        let b = trajectory(vec![call(&[], &[], &format!("{long}Tuesday"))]);
        let change = first_change(&a, &b).expect("a change");
        let (before, after) = (change.before.unwrap(), change.after.unwrap());
        assert_ne!(before, after);
        assert!(
            before.ends_with("Monday\"") && after.ends_with("Tuesday\""),
            "{before} / {after}"
        );
    }

    #[test]
    fn a_step_only_one_side_made_is_shown_whole() {
        let a = support_agent("42", "shipped");
        let b = trajectory(vec![a.calls[0].clone()]);
        assert_eq!(
            first_change(&a, &b).map(|c| c.to_string()),
            Some(
                r#"first change at step 2: openai/m (sent back: lookup_order = "shipped") answered "It ships Monday." → (no such step)"#
                    .into()
            )
        );
        let change = first_change(&b, &a).expect("a change");
        assert_eq!((change.step, change.before), (2, None));
    }

    #[test]
    fn steps_are_shown_for_a_tool_or_a_second_call_only() {
        assert!(!shows_steps(&trajectory(vec![])));
        assert!(!shows_steps(&trajectory(vec![call(&[], &[], "hi")])));
        assert!(shows_steps(&trajectory(vec![call(
            &[("lookup_order", "1")],
            &[],
            ""
        )])));
        assert!(shows_steps(&trajectory(vec![call(&[], &["x"], "hi")])));
        assert!(shows_steps(&trajectory(vec![
            call(&[], &[], "hi"),
            call(&[], &[], "again")
        ])));
    }
}
