//! Reading verdicts out of a judge reply.
//!
//! Structured output is enforced by the provider, so a well-behaved reply is one JSON object, in the
//! first tool call (Anthropic's forced tool) or in the text (Gemini, OpenAI). Servers that ignore the
//! schema are read tolerantly: the first JSON object anywhere in the text (code fences and prose
//! around it are skipped), keys in any case, `"Yes"`, `"YES"`, `"yes."` or `true` as the answer.
//! Prose without such an object is not a verdict: guessing "no" from it would hide a broken judge.

use serde_json::{Map, Value};

use crate::completion::CompletionResult;
use crate::redact::redact;

/// One verdict as the judge wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The question's number (1-based) in a reply to several questions.
    pub index: Option<i64>,
    /// The type the judge classified the question as.
    pub question_type: Option<String>,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
    /// The excerpt the judge quoted, unverified.
    pub snippet: Option<String>,
    /// The answer: `true` for "yes".
    pub yes: bool,
}

/// The verdict of a reply to one question.
pub fn single(result: &CompletionResult) -> Result<Parsed, String> {
    for candidate in candidates(result) {
        if let Some(verdict) = verdict_of(&candidate) {
            return Ok(verdict);
        }
        // A server that answered in the several-questions shape: its first verdict is the answer.
        if let Some(verdict) =
            verdict_list(&candidate).and_then(|list| list.iter().find_map(verdict_of))
        {
            return Ok(verdict);
        }
    }
    Err(describe(result))
}

/// The verdicts of a reply to `n` questions, in question order; `None` where the reply has no verdict
/// for that question. An error when the reply holds no verdict at all.
pub fn several(result: &CompletionResult, n: usize) -> Result<Vec<Option<Parsed>>, String> {
    let candidates = candidates(result);
    for candidate in &candidates {
        if let Some(list) = verdict_list(candidate) {
            let verdicts: Vec<Parsed> = list.iter().filter_map(verdict_of).collect();
            if !verdicts.is_empty() {
                return Ok(assign(verdicts, n));
            }
        }
    }
    // No list: a server that wrote one bare verdict object per question (or one, for one question).
    let loose: Vec<Parsed> = candidates.iter().filter_map(verdict_of).collect();
    if loose.is_empty() {
        return Err(describe(result));
    }
    Ok(assign(loose, n))
}

/// Puts verdicts in question order by their `index`, tolerating any order. Indices are 1-based, as the
/// questions are numbered; a reply numbered exactly 0..n-1 is read as 0-based. A verdict without a
/// usable index takes the slot of its position if free, else the first free slot. Out-of-range indices
/// are dropped. A question two verdicts are numbered for gets neither: which one is its own cannot be
/// told (and another question then usually has none); the caller asks again.
pub fn assign(verdicts: Vec<Parsed>, n: usize) -> Vec<Option<Parsed>> {
    let mut slots: Vec<Option<Parsed>> = (0..n).map(|_| None).collect();
    let mut ambiguous = vec![false; n];
    let zero_based = verdicts.iter().any(|v| v.index == Some(0))
        && !verdicts.iter().any(|v| v.index == Some(n as i64));
    let offset = if zero_based { 0 } else { 1 };
    let mut unindexed = Vec::new();
    for (position, verdict) in verdicts.into_iter().enumerate() {
        match verdict.index {
            Some(index) => {
                let Some(slot) = index
                    .checked_sub(offset)
                    .filter(|s| (0..n as i64).contains(s))
                else {
                    continue;
                };
                let slot = slot as usize;
                if slots[slot].is_some() || ambiguous[slot] {
                    ambiguous[slot] = true;
                    slots[slot] = None;
                } else {
                    slots[slot] = Some(verdict);
                }
            }
            None => unindexed.push((position, verdict)),
        }
    }
    let free = |slots: &[Option<Parsed>], i: usize| slots[i].is_none() && !ambiguous[i];
    for (position, verdict) in unindexed {
        let slot = if position < n && free(&slots, position) {
            Some(position)
        } else {
            (0..n).find(|&i| free(&slots, i))
        };
        if let Some(slot) = slot {
            slots[slot] = Some(verdict);
        }
    }
    slots
}

/// The JSON values the reply may hold a verdict in: the tool calls' arguments first, then JSON found
/// in the text.
fn candidates(result: &CompletionResult) -> Vec<Value> {
    let mut out = Vec::new();
    for call in &result.tool_calls {
        match &call.arguments {
            // Some servers send the arguments as a JSON string.
            Value::String(s) => out.extend(json_values_in(s)),
            other => out.push(other.clone()),
        }
    }
    out.extend(json_values_in(&result.text));
    out
}

/// How many places that open a JSON value but do not parse a reply is scanned past. Each costs a parse
/// (up to serde's 128 levels of nesting): a reply of thousands of nested brackets took seconds per
/// kilobyte. Prose around a verdict holds a few such places; a reply with more is broken.
const MAX_FAILED_STARTS: usize = 256;

/// Every top-level JSON object or array in `text`, in order, skipping anything around them (prose,
/// code fences). Nested values are not listed separately: the outermost one that parses wins. The
/// scan stops after [`MAX_FAILED_STARTS`] places that do not parse.
pub fn json_values_in(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let (mut pos, mut failed) = (0, 0);
    while let Some(found) = text[pos..].find(['{', '['])
        && failed < MAX_FAILED_STARTS
    {
        let start = pos + found;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                pos = start + stream.byte_offset();
                out.push(value);
            }
            _ => {
                pos = start + 1;
                failed += 1;
            }
        }
    }
    out
}

/// The value of `key` in `object`, whatever the case of the key.
fn get<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key).or_else(|| {
        object
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

/// `"yes"`, `"Yes."`, `"YES"`, `true` (and a first word of yes/no, as in `"Yes, it does"`).
fn answer_of(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => {
            let word: String = s
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .collect();
            match word.to_lowercase().as_str() {
                "yes" | "true" => Some(true),
                "no" | "false" => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

fn index_of(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().trim_start_matches(['#', 'Q', 'q']).parse().ok(),
        _ => None,
    }
}

/// A verdict object: one with an answer (`answer`, or `verdict`) that reads as yes or no.
fn verdict_of(value: &Value) -> Option<Parsed> {
    let object = value.as_object()?;
    let yes = get(object, "answer")
        .and_then(answer_of)
        .or_else(|| get(object, "verdict").and_then(answer_of))?;
    Some(Parsed {
        index: index_of(get(object, "index")),
        question_type: text_of(get(object, "question_type")),
        reasoning: text_of(get(object, "reasoning")),
        snippet: text_of(get(object, "snippet")),
        yes,
    })
}

/// The verdicts of a several-questions reply: `{"verdicts": [...]}`, or a bare array.
fn verdict_list(value: &Value) -> Option<&Vec<Value>> {
    match value {
        Value::Array(list) => Some(list),
        Value::Object(object) => get(object, "verdicts")?.as_array(),
        _ => None,
    }
}

/// What came back, for an error message: shortened to one line, secrets redacted.
pub fn describe(result: &CompletionResult) -> String {
    let mut what = if let Some(call) = result.tool_calls.first() {
        format!(
            "a `{}` tool call with arguments {}",
            call.name,
            shorten(&call.arguments.to_string())
        )
    } else if result.text.trim().is_empty() {
        "an empty reply".to_string()
    } else {
        format!("{:?}", shorten(&result.text))
    };
    if result.safety_filtered {
        what.push_str(" (the provider's safety filter blocked the reply)");
    }
    if let Some(reason) = &result.stop_reason
        && matches!(
            reason.to_ascii_lowercase().as_str(),
            "max_tokens" | "length"
        )
    {
        what.push_str(&format!(
            " (the reply was cut off, stop reason `{reason}`: raise `max_tokens` under [judge], or the \
             judge server's context size)"
        ));
    }
    redact(&what).into_owned()
}

const SHORT: usize = 240;

/// `text` on one line, at most [`SHORT`] characters.
pub fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SHORT {
        line
    } else {
        let cut: String = line.chars().take(SHORT).collect();
        format!("{cut}…")
    }
}

/// The output with whitespace runs collapsed to one space, case folded and typographic quotes made
/// straight, with the byte range in `output` each character came from.
struct Normalized {
    text: String,
    /// `(byte offset in text, start and end byte offsets in the original)` per character of `text`.
    map: Vec<(usize, usize, usize)>,
}

fn normalize(original: &str) -> Normalized {
    let mut text = String::new();
    let mut map = Vec::new();
    let mut in_space = false;
    for (start, c) in original.char_indices() {
        let end = start + c.len_utf8();
        if c.is_whitespace() {
            if !in_space {
                map.push((text.len(), start, end));
                text.push(' ');
                in_space = true;
            }
            continue;
        }
        in_space = false;
        let straight = match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
            other => other,
        };
        for folded in straight.to_lowercase() {
            map.push((text.len(), start, end));
            text.push(folded);
        }
    }
    Normalized { text, map }
}

/// The excerpt of `output` that `snippet` quotes, taken from `output` itself, or `None` when the
/// response does not contain it. Whitespace, letter case and typographic quotes may differ (judges
/// re-flow lines and straighten quotes); quotation marks or ellipses the judge wrapped the excerpt in
/// are ignored. Anything else must match character for character.
pub fn verify_snippet(output: &str, snippet: &str) -> Option<String> {
    let mut needle = snippet.trim();
    loop {
        let before = needle;
        for (open, close) in [
            ("\"", "\""),
            ("'", "'"),
            ("\u{201C}", "\u{201D}"),
            ("`", "`"),
            ("«", "»"),
        ] {
            if needle.len() >= open.len() + close.len()
                && needle.starts_with(open)
                && needle.ends_with(close)
            {
                needle = &needle[open.len()..needle.len() - close.len()];
            }
        }
        needle = needle.trim_start_matches("...").trim_end_matches("...");
        needle = needle.trim_start_matches('…').trim_end_matches('…').trim();
        if needle == before {
            break;
        }
    }
    if needle.is_empty() {
        return None;
    }
    let haystack = normalize(output);
    let needle = normalize(needle).text;
    let at = haystack.text.find(&needle)?;
    let end = at + needle.len();
    let first = haystack.map.iter().find(|(n, _, _)| *n == at)?;
    let last = haystack.map.iter().rev().find(|(n, _, _)| *n < end)?;
    Some(output[first.1..last.2].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::ToolCall;
    use serde_json::json;

    fn text(t: &str) -> CompletionResult {
        CompletionResult::new(t, 10, 5)
    }

    fn tool(arguments: Value) -> CompletionResult {
        CompletionResult {
            tool_calls: vec![ToolCall {
                id: "t1".into(),
                name: "judge_verdict".into(),
                arguments,
                thought_signature: None,
            }],
            ..CompletionResult::default()
        }
    }

    #[test]
    fn an_index_at_the_smallest_number_is_dropped_not_overflowed() {
        let reply = CompletionResult::new(
            format!(
                r#"{{"verdicts": [{{"index": {}, "reasoning": "r", "answer": "yes"}}, {{"index": 1, "reasoning": "r", "answer": "no"}}]}}"#,
                i64::MIN
            ),
            1,
            1,
        );
        let verdicts = several(&reply, 1).unwrap();
        assert!(verdicts[0].as_ref().is_some_and(|v| !v.yes), "{verdicts:?}");
    }

    #[test]
    fn reads_the_tool_call_first() {
        let mut result = tool(
            json!({"question_type": "factual_presence", "reasoning": "Alice is named.", "snippet": "Alice leads", "answer": "yes"}),
        );
        result.text = r#"{"answer": "no", "reasoning": "text says no"}"#.into();
        let v = single(&result).unwrap();
        assert!(v.yes);
        assert_eq!(v.reasoning.as_deref(), Some("Alice is named."));
        assert_eq!(v.snippet.as_deref(), Some("Alice leads"));
        assert_eq!(v.question_type.as_deref(), Some("factual_presence"));
    }

    #[test]
    fn tool_arguments_sent_as_a_string_are_parsed() {
        let v = single(&tool(json!(
            r#"{"reasoning": "r", "snippet": null, "answer": "no"}"#
        )))
        .unwrap();
        assert!(!v.yes);
        assert_eq!(v.snippet, None);
    }

    #[test]
    fn falls_back_to_the_text() {
        let v = single(&text(r#"{"question_type":"avoidance","reasoning":"no prices","snippet":null,"answer":"yes"}"#)).unwrap();
        assert!(v.yes);
        assert_eq!(v.question_type.as_deref(), Some("avoidance"));
    }

    #[test]
    fn strips_fences_and_prose_around_the_object() {
        let reply = "Sure! Here is my verdict:\n```json\n{\n  \"reasoning\": \"The list has {3} items [a, b, c].\",\n  \"answer\": \"no\"\n}\n```\nHope this helps.";
        let v = single(&text(reply)).unwrap();
        assert!(!v.yes);
        assert_eq!(
            v.reasoning.as_deref(),
            Some("The list has {3} items [a, b, c].")
        );
    }

    #[test]
    fn skips_json_that_is_not_a_verdict() {
        let reply =
            r#"The response was {"name": "x"}. My verdict: {"Answer": "YES", "Reasoning": "ok"}"#;
        let v = single(&text(reply)).unwrap();
        assert!(v.yes);
        assert_eq!(v.reasoning.as_deref(), Some("ok"));
    }

    #[test]
    fn accepts_answer_spellings() {
        for (answer, yes) in [
            (json!("yes"), true),
            (json!("Yes"), true),
            (json!("YES"), true),
            (json!("yes."), true),
            (json!(" Yes, it does"), true),
            (json!(true), true),
            (json!("true"), true),
            (json!("No"), false),
            (json!("NO."), false),
            (json!(false), false),
        ] {
            let v = single(&tool(json!({"answer": answer.clone()})))
                .unwrap_or_else(|e| panic!("{answer}: {e}"));
            assert_eq!(v.yes, yes, "{answer}");
        }
        for bad in [
            json!("maybe"),
            json!("not sure"),
            json!(""),
            json!(1),
            json!(null),
            json!("yesno"),
        ] {
            assert!(
                single(&tool(json!({"answer": bad.clone()}))).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn prose_without_json_is_no_verdict() {
        let err = single(&text("Yes, Alice is clearly mentioned in the response.")).unwrap_err();
        assert!(err.contains("Yes, Alice is clearly mentioned"), "{err}");
        let err = single(&text("")).unwrap_err();
        assert_eq!(err, "an empty reply");
    }

    #[test]
    fn no_verdict_quotes_shortened_text_and_explains_truncation() {
        let mut result = text(&format!("{{\"reasoning\": \"{}", "word ".repeat(200)));
        result.stop_reason = Some("max_tokens".into());
        let err = single(&result).unwrap_err();
        assert!(err.contains('…'), "{err}");
        assert!(err.chars().count() < 400, "{err}");
        assert!(
            err.contains("cut off, stop reason `max_tokens`: raise `max_tokens` under [judge]"),
            "{err}"
        );
        let mut blocked = text("");
        blocked.safety_filtered = true;
        assert!(single(&blocked).unwrap_err().contains("safety filter"));
    }

    #[test]
    fn no_verdict_describes_a_tool_call_without_answer() {
        let err = single(&tool(json!({"reasoning": "hm"}))).unwrap_err();
        assert!(err.contains("`judge_verdict` tool call"), "{err}");
        assert!(err.contains("hm"), "{err}");
    }

    fn verdict(index: impl Into<Option<i64>>, yes: bool, reasoning: &str) -> Value {
        let mut v = json!({"reasoning": reasoning, "snippet": null, "answer": if yes { "yes" } else { "no" }});
        if let Some(i) = index.into() {
            v["index"] = json!(i);
        }
        v
    }

    fn reasons(slots: &[Option<Parsed>]) -> Vec<Option<&str>> {
        slots
            .iter()
            .map(|s| s.as_ref().and_then(|p| p.reasoning.as_deref()))
            .collect()
    }

    #[test]
    fn several_are_matched_by_index_in_any_order() {
        let reply = tool(
            json!({"verdicts": [verdict(3, true, "c"), verdict(1, false, "a"), verdict(2, true, "b")]}),
        );
        let slots = several(&reply, 3).unwrap();
        assert_eq!(reasons(&slots), [Some("a"), Some("b"), Some("c")]);
        assert!(!slots[0].as_ref().unwrap().yes);
        assert!(slots[2].as_ref().unwrap().yes);
    }

    #[test]
    fn several_with_missing_answers_leave_gaps() {
        let reply =
            text(&json!({"verdicts": [verdict(1, true, "a"), verdict(3, true, "c")]}).to_string());
        assert_eq!(
            reasons(&several(&reply, 3).unwrap()),
            [Some("a"), None, Some("c")]
        );
    }

    #[test]
    fn several_drop_out_of_range_indices_and_questions_numbered_twice() {
        let reply = tool(
            json!({"verdicts": [verdict(1, true, "a"), verdict(7, true, "x"), verdict(-1, true, "y")]}),
        );
        assert_eq!(reasons(&several(&reply, 2).unwrap()), [Some("a"), None]);
        // Two verdicts numbered 1: neither is trusted, and an unindexed one does not take the slot.
        let twice = tool(
            json!({"verdicts": [verdict(1, true, "a"), verdict(1, false, "dup"), verdict(1, true, "again"), verdict(3, true, "c"), verdict(None, true, "loose")]}),
        );
        assert_eq!(
            reasons(&several(&twice, 3).unwrap()),
            [None, Some("loose"), Some("c")]
        );
    }

    #[test]
    fn several_zero_based_and_unindexed_are_tolerated() {
        let zero = tool(json!({"verdicts": [verdict(1, true, "b"), verdict(0, true, "a")]}));
        assert_eq!(reasons(&several(&zero, 2).unwrap()), [Some("a"), Some("b")]);
        // A reply that names both 0 and n is read as 1-based: index 0 matches no question.
        let both = tool(json!({"verdicts": [verdict(0, true, "zero"), verdict(2, true, "b")]}));
        assert_eq!(reasons(&several(&both, 2).unwrap()), [None, Some("b")]);
        let unindexed =
            text(&json!([verdict(None, true, "a"), verdict(None, false, "b")]).to_string());
        assert_eq!(
            reasons(&several(&unindexed, 2).unwrap()),
            [Some("a"), Some("b")]
        );
        let mixed = tool(json!({"verdicts": [verdict(None, true, "x"), verdict(1, true, "a")]}));
        // The indexed verdict keeps slot 1; the unindexed one takes the first free slot.
        assert_eq!(
            reasons(&several(&mixed, 2).unwrap()),
            [Some("a"), Some("x")]
        );
        let strings = tool(
            json!({"verdicts": [{"index": "2", "answer": "yes", "reasoning": "b"}, {"index": 1.0, "answer": "no", "reasoning": "a"}]}),
        );
        assert_eq!(
            reasons(&several(&strings, 2).unwrap()),
            [Some("a"), Some("b")]
        );
    }

    #[test]
    fn several_accept_loose_objects_and_a_single_verdict() {
        let loose = text(
            "Q1: {\"index\": 1, \"answer\": \"yes\", \"reasoning\": \"a\"}\nQ2: {\"index\": 2, \"answer\": \"no\", \"reasoning\": \"b\"}",
        );
        assert_eq!(
            reasons(&several(&loose, 2).unwrap()),
            [Some("a"), Some("b")]
        );
        let one = tool(json!({"answer": "yes", "reasoning": "only"}));
        assert_eq!(reasons(&several(&one, 1).unwrap()), [Some("only")]);
    }

    #[test]
    fn several_without_any_verdict_is_an_error() {
        assert!(several(&text("I think both hold."), 2).is_err());
        assert!(several(&tool(json!({"verdicts": []})), 2).is_err());
        assert!(several(&tool(json!({"verdicts": [{"reasoning": "no answer"}]})), 2).is_err());
    }

    #[test]
    fn single_reads_the_first_of_a_list() {
        let v = single(&tool(json!({"verdicts": [verdict(1, true, "a")]}))).unwrap();
        assert_eq!(v.reasoning.as_deref(), Some("a"));
    }

    #[test]
    fn snippet_must_occur_in_the_output() {
        let output = "Alice leads  Project\nPhoenix.\nThe budget is $2M and it\u{2019}s due in Q3.";
        // (what the judge quoted, what of the output it matches)
        for (quoted, found) in [
            (
                "Alice leads Project Phoenix",
                Some("Alice leads  Project\nPhoenix"),
            ),
            ("\"The budget is $2M\"", Some("The budget is $2M")),
            ("...it's due in Q3...", Some("it\u{2019}s due in Q3")),
            ("alice LEADS", Some("Alice leads")),
            ("Bob leads", None),
            ("The budget is 2 million", None),
            ("\"\"", None),
            ("   ", None),
        ] {
            assert_eq!(verify_snippet(output, quoted).as_deref(), found, "{quoted}");
        }
        assert_eq!(verify_snippet("", "x"), None);
    }

    #[test]
    fn snippet_matching_handles_multibyte_text() {
        let output = "Größe: 5 km — İstanbul “quoted” ok";
        for (quoted, found) in [
            ("größe: 5 km", "Größe: 5 km"),
            ("\"quoted\" ok", "“quoted” ok"),
            ("İstanbul", "İstanbul"),
            ("— İstanbul", "— İstanbul"),
        ] {
            assert_eq!(
                verify_snippet(output, quoted).as_deref(),
                Some(found),
                "{quoted}"
            );
        }
    }

    #[test]
    fn json_values_skip_broken_starts() {
        let values = json_values_in("a { b [1, 2] {\"x\": {\"y\": 1}} [tail");
        assert_eq!(values, vec![json!([1, 2]), json!({"x": {"y": 1}})]);
    }
}
