//! One review screen as lines of toned text: the test and sample, what changed in the request, the
//! accepted answer against the new one, the judge's answers, and tokens, cost and latency on each
//! side. Pure, so its content is tested without a terminal; `super` draws it.

use prompt_tester::_cargo_prompt_tester_support::{
    CallRole, ChangeTag, PendingSample, RecordedChecks, first_change, judge_answers,
    judge_questions, judged_questions, line_diff, shows_steps, text_of, trajectory_of, word_diff,
};

use super::compare::{self, Call, Pair, Pricing, Totals};

/// How a piece of text is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Ordinary text.
    Plain,
    /// The screen's title.
    Title,
    /// A section's heading.
    Heading,
    /// What matters less: paths, hints, unchanged lines.
    Dim,
    /// Only on the new side.
    Added,
    /// Only on the accepted side.
    Removed,
}

/// One line of the screen: pieces of text and their tones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line(pub Vec<(Tone, String)>);

impl Line {
    fn new(tone: Tone, text: impl Into<String>) -> Self {
        Self(vec![(tone, text.into())])
    }

    fn plain(text: impl Into<String>) -> Self {
        Self::new(Tone::Plain, text)
    }

    fn and(mut self, tone: Tone, text: impl Into<String>) -> Self {
        self.0.push((tone, text.into()));
        self
    }

    /// The line's text without its tones.
    #[cfg(test)]
    pub fn text(&self) -> String {
        self.0.iter().map(|(_, t)| t.as_str()).collect()
    }
}

/// Each check's outcome on the accepted answer and on the new one, as the recordings kept them: the
/// checks of either side, in the new side's order, then those only the accepted side ran.
fn checks(out: &mut Vec<Line>, sample: &PendingSample) {
    let (old, new) = (&sample.old_verdict, &sample.new_verdict);
    if old.is_none() && new.is_none() {
        return;
    }
    // An advisory judge answer (its judge not measured well enough on such questions) says so.
    let shown = |v: &Option<RecordedChecks>, check: &str| match v {
        None => "not kept".to_string(),
        Some(v) => v.checks.iter().find(|c| c.check == check).map_or_else(
            || "not run".to_string(),
            |c| {
                let said = if c.passed { "passed" } else { "FAILED" };
                if c.advisory {
                    format!("{said} (advisory)")
                } else {
                    said.to_string()
                }
            },
        ),
    };
    out.push(Line::default());
    out.push(Line::new(Tone::Heading, "Checks (accepted → new)"));
    let status = |v: &Option<RecordedChecks>| {
        v.as_ref()
            .map_or("not kept", |v| v.status.as_str())
            .to_string()
    };
    let (before, after) = (status(old), status(new));
    let tone = if before == after {
        Tone::Plain
    } else {
        Tone::Added
    };
    out.push(Line::plain("  sample: ").and(tone, format!("{before} → {after}")));
    let mut names: Vec<&str> = Vec::new();
    for v in [new, old].into_iter().flatten() {
        for c in &v.checks {
            if !names.contains(&c.check.as_str()) {
                names.push(&c.check);
            }
        }
    }
    for name in names {
        let (before, after) = (shown(old, name), shown(new, name));
        let tone = if before == after {
            Tone::Plain
        } else if after.starts_with("passed") {
            Tone::Added
        } else {
            Tone::Removed
        };
        out.push(Line::plain(format!("  {name}: ")).and(tone, format!("{before} → {after}")));
    }
}

/// The new judge answers of `sample` a person can label, in question order, each with whether it passed:
/// from the recorded verdict, else (recordings made before verdicts were kept) from the judge's replies,
/// "yes" passing.
pub fn judged(sample: &PendingSample) -> Vec<(String, bool)> {
    if let Some(verdict) = &sample.new_verdict {
        return judged_questions(verdict);
    }
    compare::calls(&sample.new, CallRole::Judge, &compare::as_recorded)
        .iter()
        .flat_map(|c| {
            judge_questions(&c.request)
                .into_iter()
                .zip(judge_answers(&c.response))
                .map(|(q, a)| (q, a == "yes"))
        })
        .collect()
}

/// The labels section: each new judge answer, labelled right or wrong (`labelled`) or not yet; `y` and
/// `n` label the next one.
pub fn labels(out: &mut Vec<Line>, sample: &PendingSample, labelled: &[(String, bool)]) {
    let answers = judged(sample);
    if answers.is_empty() {
        return;
    }
    out.push(Line::default());
    out.push(Line::new(
        Tone::Heading,
        "Your labels of the new judge answers (y right, n wrong: the next one)",
    ));
    for (question, passed) in answers {
        let said = if passed { "passed" } else { "FAILED" };
        let label = match labelled.iter().find(|(q, _)| *q == question) {
            Some((_, true)) => Line::new(Tone::Added, "labelled right"),
            Some((_, false)) => Line::new(Tone::Removed, "labelled wrong"),
            None => Line::new(Tone::Dim, "not labelled"),
        };
        let mut line = Line::plain(format!("  {question} → {said}: "));
        line.0.extend(label.0);
        out.push(line);
    }
}

/// Where a sample is in the review and how much of it to show.
#[derive(Debug, Clone, Copy)]
pub struct Position {
    /// 1-based.
    pub index: usize,
    /// How many samples the review holds.
    pub total: usize,
    /// Whether the full diff of the requests is shown.
    pub request_diff: bool,
}

/// The screen of `sample`, whose recordings are in `cassette` and `pending` (as shown to the user),
/// its calls priced by `price`.
pub fn lines(
    sample: &PendingSample,
    (cassette, pending): (&str, &str),
    at: Position,
    price: Pricing<'_>,
) -> Vec<Line> {
    let mut out = vec![
        Line::new(
            Tone::Title,
            format!("pending {} of {}: {}", at.index, at.total, sample.id),
        ),
        Line::new(Tone::Dim, format!("cassette {cassette}")),
        Line::new(Tone::Dim, format!("pending  {pending}")),
    ];
    if sample.old.is_empty() {
        out.push(Line::plain(
            "The cassette holds nothing for this sample: accepting adds these calls.",
        ));
    }
    let subject = compare::paired(
        compare::calls(&sample.old, CallRole::Subject, price),
        compare::calls(&sample.new, CallRole::Subject, price),
    );
    let judge = compare::paired(
        compare::calls(&sample.old, CallRole::Judge, price),
        compare::calls(&sample.new, CallRole::Judge, price),
    );
    out.push(Line::default());
    out.push(Line::new(Tone::Heading, "What changed in the request"));
    for (i, pair) in subject.iter().enumerate() {
        for change in compare::request_changes(pair) {
            out.push(Line::plain(format!("  call {}: {change}", i + 1)));
        }
        if at.request_diff {
            request_diff(&mut out, i + 1, pair, (cassette, pending));
        }
    }
    if !at.request_diff {
        out.push(Line::new(
            Tone::Dim,
            "  (d shows the full diff of the prompt, the system prompt and every message)",
        ));
    }
    out.push(Line::default());
    out.push(Line::new(Tone::Heading, "Answer (accepted → new)"));
    for (i, pair) in subject.iter().enumerate() {
        answer_diff(&mut out, &format!("call {}", i + 1), pair);
    }
    steps(&mut out, sample);
    checks(&mut out, sample);
    if !judge.is_empty() {
        out.push(Line::default());
        out.push(Line::new(Tone::Heading, "Judge (accepted → new)"));
        for (i, pair) in judge.iter().enumerate() {
            judge_lines(&mut out, i + 1, pair);
        }
    }
    out.push(Line::default());
    usage(&mut out, &subject, &judge);
    out
}

/// The accepted trajectory against the new one, each read from its recordings, and the first step
/// that changed; shown when either side made more than one call or any tool was involved.
fn steps(out: &mut Vec<Line>, sample: &PendingSample) {
    let (old, new) = (trajectory_of(&sample.old), trajectory_of(&sample.new));
    if !shows_steps(&old) && !shows_steps(&new) {
        return;
    }
    out.push(Line::default());
    out.push(Line::new(Tone::Heading, "Steps (accepted → new)"));
    let change = first_change(&old, &new);
    let changed_from = match &change {
        Some(change) => {
            out.push(Line::plain(format!("  {change}")));
            change.step
        }
        None => {
            out.push(Line::plain("  the same steps"));
            usize::MAX
        }
    };
    for (label, trajectory, tone) in [
        ("accepted", &old, Tone::Removed),
        ("new", &new, Tone::Added),
    ] {
        out.push(Line::plain(format!("  {label}:")));
        let steps = trajectory.steps();
        if steps.is_empty() {
            out.push(Line::new(Tone::Dim, "    (no model call)"));
        }
        for (i, step) in steps.into_iter().enumerate() {
            let tone = if i + 1 < changed_from {
                Tone::Dim
            } else {
                tone
            };
            out.push(Line::new(tone, format!("    {step}")));
        }
    }
}

/// The full diff of one pair's request: the system prompt, then each message that differs. A
/// relayed media part is shown as its file beside the `files` (the cassette, the pending file).
fn request_diff(out: &mut Vec<Line>, call: usize, pair: &Pair<'_>, files: (&str, &str)) {
    let (Some(old), Some(new)) = pair else {
        return;
    };
    // A call through the recording endpoint: each changed JSON path, both values in full.
    if let (Some(a), Some(b)) = (old.raw, new.raw) {
        for change in prompt_tester::_cargo_prompt_tester_support::request_diff(a, b).changes {
            out.push(Line::plain(format!("  call {call}, {}:", change.place())));
            let folder = |file| {
                std::path::Path::new(file)
                    .parent()
                    .unwrap_or(std::path::Path::new(""))
            };
            let (before, after) = change.sides((folder(files.0), folder(files.1)));
            diff_lines(out, &before, &after);
        }
        return;
    }
    let system = |c: &Call<'_>| c.request.system.clone().unwrap_or_default();
    if system(old) != system(new) {
        out.push(Line::plain(format!("  call {call}, system prompt:")));
        diff_lines(out, &system(old), &system(new));
    }
    let (a, b) = (&old.request.messages, &new.request.messages);
    for k in 0..a.len().max(b.len()) {
        let text =
            |m: Option<&prompt_tester::completion::Message>| m.map(text_of).unwrap_or_default();
        let (old_text, new_text) = (text(a.get(k)), text(b.get(k)));
        if old_text == new_text {
            continue;
        }
        let what = if k + 1 == b.len() {
            "prompt"
        } else {
            "message"
        };
        out.push(Line::plain(format!("  call {call}, {what} {}:", k + 1)));
        diff_lines(out, &old_text, &new_text);
    }
}

/// A line diff, each line marked `-`, `+` or ` ` and indented under its label.
fn diff_lines(out: &mut Vec<Line>, old: &str, new: &str) {
    for (tag, line) in line_diff(old, new) {
        let (tone, sign) = match tag {
            ChangeTag::Delete => (Tone::Removed, '-'),
            ChangeTag::Insert => (Tone::Added, '+'),
            ChangeTag::Equal => (Tone::Dim, ' '),
        };
        out.push(Line::new(tone, format!("    {sign} {line}")));
    }
}

/// The accepted answer against the new one: a word diff on one line when both are one line, else a
/// line diff.
fn answer_diff(out: &mut Vec<Line>, label: &str, pair: &Pair<'_>) {
    let text = |c: &Option<Call<'_>>| c.as_ref().map(|c| compare::answer_text(&c.response));
    match (text(&pair.0), text(&pair.1)) {
        (Some(old), Some(new)) if old == new => {
            out.push(Line::plain(format!("  {label}: the same answer")));
            for line in new.lines() {
                out.push(Line::new(Tone::Dim, format!("      {line}")));
            }
        }
        (Some(old), Some(new)) if !old.contains('\n') && !new.contains('\n') => {
            out.push(Line::plain(format!("  {label}:")));
            let mut line = Line::plain("    ");
            for (tag, word) in word_diff(&old, &new) {
                line = match tag {
                    ChangeTag::Equal => line.and(Tone::Plain, word),
                    ChangeTag::Delete => line.and(Tone::Removed, format!("[-{word}-]")),
                    ChangeTag::Insert => line.and(Tone::Added, format!("{{+{word}+}}")),
                };
            }
            out.push(line);
        }
        (old, new) => {
            let what = match (&old, &new) {
                (None, _) => " (new call)",
                (_, None) => " (no longer made)",
                _ => "",
            };
            out.push(Line::plain(format!("  {label}{what}:")));
            diff_lines(out, &old.unwrap_or_default(), &new.unwrap_or_default());
        }
    }
}

/// A judge call's questions and the answer to each, accepted and new; the raw replies when they are
/// not in the judge's usual shape.
fn judge_lines(out: &mut Vec<Line>, call: usize, pair: &Pair<'_>) {
    let questions = pair
        .1
        .as_ref()
        .or(pair.0.as_ref())
        .map(|c| judge_questions(&c.request))
        .unwrap_or_default();
    let answers = |c: &Option<Call<'_>>| {
        c.as_ref()
            .map(|c| judge_answers(&c.response))
            .unwrap_or_default()
    };
    let (old, new) = (answers(&pair.0), answers(&pair.1));
    if questions.is_empty() || (old.is_empty() && new.is_empty()) {
        answer_diff(out, &format!("judge call {call}"), pair);
        return;
    }
    for (i, question) in questions.iter().enumerate() {
        let shown = |a: &[String]| a.get(i).cloned().unwrap_or_else(|| "-".into());
        let (before, after) = (shown(&old), shown(&new));
        let line = Line::plain(format!("  {question}  ")).and(Tone::Dim, before.clone());
        let line = line.and(Tone::Plain, " → ");
        let line = if before == after {
            line.and(Tone::Dim, after)
        } else {
            line.and(Tone::Added, after).and(Tone::Plain, "  (changed)")
        };
        out.push(line);
    }
}

/// Tokens, cost and latency of each role's calls, accepted and new.
fn usage(out: &mut Vec<Line>, subject: &[Pair<'_>], judge: &[Pair<'_>]) {
    let row = |label: &str, old: String, new: String| {
        Line::plain(format!("  {label:<15} {old:<28} {new}"))
    };
    out.push(Line::new(
        Tone::Heading,
        format!("{:<17} {:<28} {}", "Usage", "accepted", "new"),
    ));
    for (role, pairs) in [("subject", subject), ("judge", judge)] {
        if pairs.is_empty() {
            continue;
        }
        let side = |new: bool| {
            let calls: Vec<Call<'_>> = pairs
                .iter()
                .filter_map(|p| if new { p.1.clone() } else { p.0.clone() })
                .collect();
            Totals::of(&calls)
        };
        let (old, new) = (side(false), side(true));
        let each = |f: &dyn Fn(&Totals) -> String| (f(&old), f(&new));
        let (a, b) = each(&|t| t.calls.to_string());
        out.push(row(&format!("{role} calls"), a, b));
        let (a, b) = each(&|t| format!("{} in, {} out", t.input_tokens, t.output_tokens));
        out.push(row("  tokens", a, b));
        let (a, b) = each(&Totals::cost);
        out.push(row("  cost", a, b));
        let (a, b) = each(&|t| format!("{} ms", t.latency_ms));
        out.push(row("  latency", a, b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prompt_tester::_cargo_prompt_tester_support::{
        CheckVerdict, Entry, Exchange, SampleId, SampleStatus,
    };
    use prompt_tester::{CompletionRequest, CompletionResult};

    fn entry(role: CallRole, prompt: &str, answer: &str, cost: Option<f64>) -> Entry {
        let mut response = CompletionResult::new(answer, 10, 4);
        response.cost_usd = cost;
        Entry {
            key: format!("{prompt}{answer}"),
            target: Some("prompts".into()),
            test: "t".into(),
            run: 1,
            role,
            provider: "p".into(),
            model: "m".into(),
            call: Exchange::Completion {
                request: CompletionRequest::new("m", prompt, 10),
                response,
            },
            latency_ms: 500,
            recorded_at: String::new(),
        }
    }

    fn screen(sample: &PendingSample, request_diff: bool) -> String {
        let at = Position {
            index: 2,
            total: 3,
            request_diff,
        };
        lines(
            sample,
            ("c.cassette.json", "c.pending.json"),
            at,
            &compare::as_recorded,
        )
        .iter()
        .map(Line::text)
        .collect::<Vec<_>>()
        .join("\n")
    }

    /// Panics, showing `text`, unless it contains each of `parts`.
    #[track_caller]
    fn assert_shows(text: &str, parts: &[&str]) {
        for part in parts {
            assert!(text.contains(part), "no {part:?} in:\n{text}");
        }
    }

    fn sample() -> PendingSample {
        let judged = |answer: &str| format!("RESPONSE:\n{answer}\n\nQUESTION:\nIs Alice named?\n");
        PendingSample {
            id: SampleId {
                target: Some("prompts".into()),
                test: "greet".into(),
                run: 1,
            },
            old: vec![
                entry(
                    CallRole::Subject,
                    "Say hi to Alice.",
                    "Hi Alice!",
                    Some(0.001),
                ),
                entry(
                    CallRole::Judge,
                    &judged("Hi Alice!"),
                    r#"{"answer": "yes"}"#,
                    None,
                ),
            ],
            new: vec![
                entry(
                    CallRole::Subject,
                    "Say hello to Alice.",
                    "Hello there!",
                    Some(0.002),
                ),
                entry(
                    CallRole::Judge,
                    &judged("Hello there!"),
                    r#"{"answer": "no"}"#,
                    None,
                ),
            ],
            old_verdict: Some(verdict(
                SampleStatus::Passed,
                &[
                    ("contains (a.evals.toml:3)", true),
                    ("judge: Is Alice named?", true),
                ],
            )),
            new_verdict: Some(verdict(
                SampleStatus::Failed,
                &[
                    ("contains (a.evals.toml:3)", true),
                    ("judge: Is Alice named?", false),
                ],
            )),
        }
    }

    fn verdict(status: SampleStatus, checks: &[(&str, bool)]) -> RecordedChecks {
        RecordedChecks {
            target: Some("prompts".into()),
            test: "greet".into(),
            run: 1,
            status,
            checks: checks
                .iter()
                .map(|(check, passed)| CheckVerdict {
                    check: (*check).into(),
                    passed: *passed,
                    advisory: false,
                    question_type: None,
                    judge_key: None,
                })
                .collect(),
            judge_settings: None,
        }
    }

    #[test]
    fn each_check_s_outcome_before_and_after() {
        let text = screen(&sample(), false);
        assert_shows(
            &text,
            &[
                "Checks (accepted → new)",
                "  sample: passed → failed",
                "  contains (a.evals.toml:3): passed → passed",
                "  judge: Is Alice named?: passed → FAILED",
            ],
        );
        let mut unkept = sample();
        unkept.old_verdict = None;
        let text = screen(&unkept, false);
        assert!(text.contains("  sample: not kept → failed"), "{text}");
        // A judge answer from a judge not measured on such questions is marked advisory.
        let mut advisory = sample();
        if let Some(v) = advisory.new_verdict.as_mut() {
            v.checks[1].advisory = true;
        }
        let text = screen(&advisory, false);
        assert!(
            text.contains("  judge: Is Alice named?: passed → FAILED (advisory)"),
            "{text}"
        );
    }

    #[test]
    fn shows_the_change_the_answers_the_judge_and_the_usage() {
        let text = screen(&sample(), false);
        assert_shows(
            &text,
            &[
                "pending 2 of 3: greet (run 1)",
                "cassette c.cassette.json",
                r#"call 1: prompt: -"Say hi to Alice." +"Say hello to Alice.""#,
                "(d shows the full diff",
                "[-Hi-]",
                "{+Hello+}",
                "Is Alice named?  yes → no  (changed)",
                "subject calls   1",
                "$0.001000",
                "$0.002000",
                "unpriced",
                "500 ms",
            ],
        );
        assert!(!text.contains("    - Say hi to Alice."), "{text}");
    }

    #[test]
    fn d_shows_the_prompt_as_a_line_diff() {
        let text = screen(&sample(), true);
        assert!(text.contains("call 1, prompt 1:"), "{text}");
        assert!(
            text.contains("    - Say hi to Alice.\n    + Say hello to Alice."),
            "{text}"
        );
        assert!(!text.contains("(d shows"), "{text}");
    }

    #[test]
    fn the_labels_section_shows_each_new_judge_answer_and_its_label() {
        let mut lines = Vec::new();
        labels(&mut lines, &sample(), &[("Is Alice named?".into(), false)]);
        let text: Vec<String> = lines.iter().map(Line::text).collect();
        assert_eq!(
            text[2], "  Is Alice named? → FAILED: labelled wrong",
            "{text:?}"
        );
        // Without a kept verdict, the judge's reply decides: "no" failed.
        let mut unkept = sample();
        unkept.new_verdict = None;
        assert_eq!(judged(&unkept), [("Is Alice named?".to_string(), false)]);
        let mut lines = Vec::new();
        labels(&mut lines, &unkept, &[]);
        assert_eq!(lines[2].text(), "  Is Alice named? → FAILED: not labelled");
    }

    /// A support agent's sample: it looks order `order` up, is sent back `status`, then answers.
    fn tool_loop(order: &str, status: &str) -> Vec<Entry> {
        let ask = "Where is order 42?";
        let mut first = entry(CallRole::Subject, ask, "", None);
        if let Exchange::Completion { response, .. } = &mut first.call {
            response.tool_calls = vec![prompt_tester::ToolCall {
                id: format!("call_{order}"),
                name: "lookup_order".into(),
                arguments: serde_json::json!({ "order_id": order }),
                thought_signature: None,
            }];
        }
        let mut second = entry(CallRole::Subject, ask, "It ships Monday.", None);
        if let Exchange::Completion { request, .. } = &mut second.call {
            request.push_tool_round(
                (&format!("call_{order}"), "lookup_order"),
                serde_json::json!({ "order_id": order }),
                (status, false),
            );
        }
        vec![first, second]
    }

    #[test]
    fn a_changed_tool_loop_names_the_first_step_that_changed() {
        let mut changed = sample();
        (changed.old, changed.new) = (tool_loop("42", "shipped"), tool_loop("43", "shipped"));
        let text = screen(&changed, false);
        assert_shows(
            &text,
            &[
                "Steps (accepted → new)",
                r#"  first change at step 1: lookup_order({"order_id":"42"}) → lookup_order({"order_id":"43"})"#,
                "  accepted:\n    1. p/m requested lookup_order({\"order_id\":\"42\"})\n    2. p/m (sent back: lookup_order = \"shipped\") answered \"It ships Monday.\"",
                "  new:\n    1. p/m requested lookup_order({\"order_id\":\"43\"})",
            ],
        );
        // Recorded again with the same steps: said so, with no change named.
        (changed.old, changed.new) = (tool_loop("42", "shipped"), tool_loop("42", "shipped"));
        let text = screen(&changed, false);
        assert_shows(
            &text,
            &["Steps (accepted → new)\n  the same steps\n  accepted:"],
        );
        assert!(!text.contains("first change"), "{text}");
    }

    #[test]
    fn a_single_plain_call_shows_no_steps() {
        let text = screen(&sample(), false);
        assert!(!text.contains("Steps (accepted → new)"), "{text}");
    }

    #[test]
    fn a_first_recording_and_a_multi_line_answer() {
        let mut first = sample();
        first.old.clear();
        first.new[0] = entry(CallRole::Subject, "p", "one\ntwo", None);
        let text = screen(&first, false);
        assert!(text.contains("accepting adds these calls"), "{text}");
        assert!(
            text.contains("call 1 (new call):\n    + one\n    + two"),
            "{text}"
        );
    }

    /// A relayed image that changed is shown in the full diff as the files of both sides, each in
    /// the media store beside its file (the cassette's, the pending file's), to open.
    #[test]
    fn a_relayed_image_s_full_diff_names_both_files_in_their_stores() {
        use prompt_tester::_cargo_prompt_tester_support::{RawBody, RawRequest, RawResponse};
        let (a, b) = ("3f2a".repeat(16), "9c1b".repeat(16));
        let relayed = |sha: &str| {
            let mut e = entry(CallRole::Subject, "", "7.50", None);
            e.call = Exchange::Raw {
                request: RawRequest {
                    method: "POST".into(),
                    path: "/v1/chat/completions".into(),
                    query: Vec::new(),
                    body: serde_json::json!({"messages": [{"role": "user", "content": [
                        {"type": "image_url", "image_url": {"url": {
                            "media": format!("{sha}.png"), "media_type": "image/png", "size": 75
                        }}}
                    ]}], "model": "m"}),
                    media: Vec::new(),
                },
                response: RawResponse {
                    status: 200,
                    content_type: "application/json".into(),
                    body: RawBody::Json(serde_json::json!({"choices": []})),
                },
            };
            e
        };
        let mut sample = sample();
        sample.old = vec![relayed(&a)];
        sample.new = vec![relayed(&b)];
        let at = Position {
            index: 1,
            total: 1,
            request_diff: true,
        };
        let text = lines(
            &sample,
            (
                "prompt-tests/cassettes/r.cassette.json",
                "target/pending/r.pending.json",
            ),
            at,
            &compare::as_recorded,
        )
        .iter()
        .map(Line::text)
        .collect::<Vec<_>>()
        .join("\n");
        assert_shows(
            &text,
            &[
                &format!("- prompt-tests/cassettes/media/{a}.png (75 B)"),
                &format!("+ target/pending/media/{b}.png (75 B)"),
            ],
        );
    }
}
