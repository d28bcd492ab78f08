//! What changed between a recorded request and a new one, said briefly: the fields of the cassette
//! key that differ ("model gpt-4o-mini → gpt-4.1-mini", "max_tokens 200 → 400") and, for text, a short
//! line diff. A stale call's failure says this instead of "the prompt changed"; the review shows the
//! same diff in full.

use similar::{ChangeTag, TextDiff};

use super::diff::{media_changed, shown_size};
use crate::completion::{CompletionRequest, ContentBlock, MediaPart, Message};

/// Lines of a text diff shown in a one-line message before it is cut.
const SHORT_DIFF_LINES: usize = 6;

/// Each field that differs between `old` and `new`, in key order; empty when the two are the same.
pub fn describe(old: &CompletionRequest, new: &CompletionRequest) -> Vec<String> {
    let mut changes = Vec::new();
    let mut setting = |name: &str, old: String, new: String| {
        if old != new {
            changes.push(format!("{name} {old} → {new}"));
        }
    };
    setting("model", old.model.clone(), new.model.clone());
    setting(
        "max_tokens",
        old.max_tokens.to_string(),
        new.max_tokens.to_string(),
    );
    setting(
        "temperature",
        shown(old.temperature),
        shown(new.temperature),
    );
    setting("seed", shown(old.seed), shown(new.seed));
    let names = |r: &CompletionRequest| {
        let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
        format!("[{}]", names.join(", "))
    };
    setting("tools", names(old), names(new));
    if old.tools != new.tools && names(old) == names(new) {
        changes.push("tools: a tool's description or schema changed".into());
    }
    if old.response_schema != new.response_schema {
        changes.push("response_schema changed".into());
    }
    let system = |r: &CompletionRequest| r.system.clone().unwrap_or_default();
    if let Some(diff) = short_diff(&system(old), &system(new)) {
        changes.push(format!("system: {diff}"));
    }
    if old.messages.len() != new.messages.len() {
        changes.push(format!(
            "messages: {} → {}",
            old.messages.len(),
            new.messages.len()
        ));
    }
    let changed = changed_messages(&old.messages, &new.messages);
    for (i, (a, b)) in old.messages.iter().zip(&new.messages).enumerate() {
        if !changed.contains(&i) {
            continue;
        }
        let what = if i + 1 == new.messages.len() && b.role == crate::completion::Role::User {
            "prompt".to_string()
        } else {
            let role = match b.role {
                crate::completion::Role::User => "user",
                crate::completion::Role::Assistant => "assistant",
            };
            format!("message {} ({role})", i + 1)
        };
        let media = media_changes(a, b);
        match short_diff(&labelled(a, false), &labelled(b, false)) {
            Some(diff) => changes.push(format!("{what}: {diff}")),
            None if media.is_empty() => {
                changes.push(format!("{what}: its role or tool calls changed"))
            }
            None => {}
        }
        changes.extend(media);
    }
    changes
}

/// Each media part of `new` whose bytes are not `old`'s at the same place, said by its name, hash
/// and size (`image receipt.png changed (sha 3f2a… -> 9c1b…, 412 KB -> 398 KB)`), and each part one
/// side has that the other has not; never the bytes.
fn media_changes(old: &Message, new: &Message) -> Vec<String> {
    let parts = |m: &'_ Message| -> Vec<MediaPart> {
        m.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Media(part) => Some(part.clone()),
                _ => None,
            })
            .collect()
    };
    let (old, new) = (parts(old), parts(new));
    let mut changes = Vec::new();
    for k in 0..old.len().max(new.len()) {
        match (old.get(k), new.get(k)) {
            (Some(a), Some(b)) if a.sha256() != b.sha256() => changes.push(media_changed(
                b.kind(),
                b.name(),
                (a.sha256(), a.size()),
                (b.sha256(), b.size()),
            )),
            (Some(a), Some(b)) if a.detail() != b.detail() => changes.push(format!(
                "{} {} detail {} → {}",
                b.kind(),
                b.name(),
                a.detail().as_str(),
                b.detail().as_str()
            )),
            (Some(a), None) => changes.push(format!("{} {} removed", a.kind(), a.name())),
            (None, Some(b)) => changes.push(format!("{} {} added", b.kind(), b.name())),
            _ => {}
        }
    }
    changes
}

/// The indices of the messages (of those both lists hold) that differ, tool-call ids made anew aside
/// (the one request diff decides, [`super::diff::values`]).
fn changed_messages(old: &[Message], new: &[Message]) -> Vec<usize> {
    let n = old.len().min(new.len());
    let json = |m: &[Message]| serde_json::to_value(m).unwrap_or_default();
    let (a, b) = (json(&old[..n]), json(&new[..n]));
    let mut changed: Vec<usize> = super::diff::values(&a, &b)
        .changes
        .iter()
        .filter_map(|change| match change {
            super::diff::RequestChange::Value { path, .. }
            | super::diff::RequestChange::Items { path, .. }
            | super::diff::RequestChange::Media { path, .. } => match path.0.first() {
                Some(super::diff::Step::Index(i)) => Some(*i),
                _ => None,
            },
            super::diff::RequestChange::Target { .. } => None,
        })
        .collect();
    changed.dedup();
    changed
}

fn shown<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "unset".into(), |v| v.to_string())
}

/// A message's text as one string (tool calls and results as short labels, a media part as its
/// name and the file its bytes are in, for the review to open).
pub fn text_of(message: &Message) -> String {
    labelled(message, true)
}

/// A message's text, each media part named with its file when `files` (else left out: what changed
/// in one is said by [`media_changes`]), never its bytes.
fn labelled(message: &Message, files: bool) -> String {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.clone()),
            ContentBlock::ToolUse { name, input, .. } => {
                Some(format!("[tool call {name} {input}]"))
            }
            ContentBlock::ToolResult { name, content, .. } => {
                Some(format!("[tool result {name}: {content}]"))
            }
            ContentBlock::Media(_) if !files => None,
            ContentBlock::Media(part) => Some(match part.stored_file() {
                Some(file) => format!(
                    "[{} {}, {}: {}]",
                    part.kind(),
                    part.name(),
                    shown_size(part.size()),
                    file.display()
                ),
                None => format!(
                    "[{} {}, {}]",
                    part.kind(),
                    part.name(),
                    shown_size(part.size())
                ),
            }),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A few lines of `-old` / `+new`, cut after `SHORT_DIFF_LINES`; `None` when the texts are equal.
pub fn short_diff(old: &str, new: &str) -> Option<String> {
    if old == new {
        return None;
    }
    let diff = TextDiff::from_lines(old, new);
    let lines: Vec<String> = diff
        .iter_all_changes()
        .filter(|c| c.tag() != ChangeTag::Equal)
        .map(|c| {
            let sign = if c.tag() == ChangeTag::Delete {
                '-'
            } else {
                '+'
            };
            format!("{sign}{:?}", c.value().trim_end_matches('\n'))
        })
        .collect();
    let shown = lines.len().min(SHORT_DIFF_LINES);
    let mut out = lines[..shown].join(" ");
    if lines.len() > shown {
        out.push_str(&format!(
            " (and {} more changed lines)",
            lines.len() - shown
        ));
    }
    Some(out)
}

/// A full line diff of `old` and `new` in unified style (`-`, `+`, ` ` prefixes), for the review.
pub fn line_diff(old: &str, new: &str) -> Vec<(ChangeTag, String)> {
    TextDiff::from_lines(old, new)
        .iter_all_changes()
        .map(|c| (c.tag(), c.value().trim_end_matches('\n').to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::diff::short_hashes;
    use super::*;

    #[test]
    fn names_each_changed_setting_and_diffs_the_prompt() {
        let old = CompletionRequest::new("gpt-4o-mini", "Summarise:\nAlice met Bob.", 200);
        let mut new =
            CompletionRequest::new("gpt-4.1-mini", "Summarise briefly:\nAlice met Bob.", 400);
        new.temperature = Some(0.5);
        let changes = describe(&old, &new);
        assert_eq!(
            changes,
            [
                "model gpt-4o-mini → gpt-4.1-mini",
                "max_tokens 200 → 400",
                "temperature unset → 0.5",
                "prompt: -\"Summarise:\" +\"Summarise briefly:\"",
            ]
        );
        assert!(describe(&old, &old).is_empty());
    }

    #[test]
    fn fresh_tool_call_ids_are_not_a_change() {
        use crate::completion::{ContentBlock, Role};
        let round_trip = |id: &str| {
            let mut request = CompletionRequest::new("m", "Weather?", 10);
            request.messages.push(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: id.into(),
                    name: "weather".into(),
                    input: serde_json::json!({"city": "Paris"}),
                    thought_signature: None,
                }],
            });
            request.messages.push(Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id.into(),
                    name: "weather".into(),
                    content: "sunny".into(),
                    is_error: false,
                }],
            });
            request
        };
        assert!(describe(&round_trip("call_abc123"), &round_trip("call_xyz789")).is_empty());
    }

    #[test]
    fn a_changed_image_is_named_with_its_hashes_and_sizes_never_its_bytes() {
        use crate::completion::Media;
        let png = |extra: &[u8]| {
            let bytes = [&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..], extra].concat();
            Media::bytes("receipt.png", bytes).load().unwrap()
        };
        let with = |part: &MediaPart| {
            let mut request = CompletionRequest::new("m", "Total?", 10);
            request.messages[0]
                .content
                .push(ContentBlock::Media(part.clone()));
            request
        };
        let (old, new) = (png(&[1; 412_000]), png(&[2; 398_000]));
        let changes = describe(&with(&old), &with(&new));
        let (a, b) = short_hashes(old.sha256(), new.sha256());
        assert_eq!(
            changes,
            [format!(
                "image receipt.png changed (sha {a}… -> {b}…, 412 KB -> 398 KB)"
            )]
        );
        assert!(a.len() >= 4 && a != b);
        assert!(!changes[0].contains(&old.base64()[..16]));
        assert!(describe(&with(&old), &with(&old)).is_empty());
        let low = old
            .clone()
            .with_detail(crate::completion::ImageDetail::Low)
            .unwrap();
        assert_eq!(
            describe(&with(&old), &with(&low)),
            ["image receipt.png detail auto → low"]
        );
        let mut text = with(&old);
        text.messages[0].content[0] = ContentBlock::Text {
            text: "Sum?".into(),
        };
        assert_eq!(
            describe(&with(&old), &text),
            ["prompt: -\"Total?\" +\"Sum?\""]
        );
        assert_eq!(
            describe(&with(&old), &CompletionRequest::new("m", "Total?", 10)),
            ["image receipt.png removed"]
        );
        assert_eq!(short_hashes("3f2a11", "3f2a22"), ("3f2a1", "3f2a2"));
        assert_eq!(
            [shown_size(412), shown_size(412_345), shown_size(1_234_567)],
            ["412 B", "412 KB", "1.2 MB"]
        );
    }

    #[test]
    fn a_long_diff_is_cut_and_says_how_much_is_left() {
        let old: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..20).map(|i| format!("LINE {i}\n")).collect();
        let diff = short_diff(&old, &new).unwrap();
        assert!(diff.ends_with("(and 34 more changed lines)"), "{diff}");
    }
}
