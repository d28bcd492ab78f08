//! The one request diff, by JSON path: what differs between a recorded request and a new one, for a
//! stale call's message (which the recording endpoint's refusal carries) and `cargo prompt-tester
//! review`. Pure, and linear in the requests' size, however large their bodies: a changed text is shown
//! as a window around its first difference on each side, and tool-call ids made anew for each run
//! (linked the same way between a call and its result) are not a change.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::media_ref::parse_reference;
use super::raw::RawRequest;
use crate::completion::MediaKind;

/// The fields that hold a tool call's id, or the id of the call a result answers: OpenAI's `id` and
/// `tool_call_id` (the Responses API's `call_id`), Anthropic's `id` and `tool_use_id`, Gemini's `id`.
const ID_FIELDS: [&str; 4] = ["id", "tool_call_id", "tool_use_id", "call_id"];

/// Characters of unchanged text shown before and after a change.
const CONTEXT: usize = 30;

/// Characters of a changed part shown before it is cut.
const CHANGED: usize = 40;

/// Changes kept; past it they are only counted.
const KEPT: usize = 256;

/// One step of a JSON path: an object's key or an array's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `.key`.
    Key(String),
    /// `[index]`.
    Index(usize),
}

/// Where a change is: `messages[0].content`; the empty path is the whole body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("body");
        }
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(key) if i == 0 => f.write_str(key)?,
                Step::Key(key) => write!(f, ".{key}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// One difference between two requests.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestChange<'a> {
    /// The method and path, or the query, as `old` and `new` show them.
    Target {
        /// What it was.
        old: String,
        /// What it is.
        new: String,
    },
    /// The value at `path` set (`old` is `None`), unset (`new` is `None`) or changed.
    Value {
        /// Where.
        path: Path,
        /// What it was.
        old: Option<&'a Value>,
        /// What it is.
        new: Option<&'a Value>,
    },
    /// The media part at `path` (a relayed body's reference into the media store) holds other bytes:
    /// one change, said by its hashes and sizes, never its base64.
    Media {
        /// Where.
        path: Path,
        /// What kind of part the new one is.
        kind: MediaKind,
        /// Its reference (the file in the media store, `<sha256>.<ext>`) and size before.
        old: (&'a str, u64),
        /// Its reference and size now.
        new: (&'a str, u64),
    },
    /// The array at `path` holds another number of items; its first differing item is a change of its
    /// own.
    Items {
        /// Where.
        path: Path,
        /// How many it held.
        old: usize,
        /// How many it holds.
        new: usize,
    },
}

impl<'a> RequestChange<'a> {
    /// Where the change is, as a line names it: the JSON path, or `request` for the method, path and
    /// query.
    pub fn place(&self) -> String {
        match self {
            RequestChange::Target { .. } => "request".into(),
            RequestChange::Value { path, .. }
            | RequestChange::Items { path, .. }
            | RequestChange::Media { path, .. } => path.to_string(),
        }
    }

    /// The change on one line: `messages[0].content: "…a plain tone." → "…a warm tone."`, a long
    /// text shown around its first difference on each side (never two identical excerpts).
    pub fn line(&self) -> String {
        match self {
            RequestChange::Target { old, new } => format!("{old} → {new}"),
            RequestChange::Items { path, old, new } => format!("{path}: {old} items → {new}"),
            RequestChange::Media {
                path,
                kind,
                old,
                new,
            } => {
                let sha = |file: &'a str| file.split_once('.').map_or(file, |(sha, _)| sha);
                media_changed(
                    *kind,
                    &path.to_string(),
                    (sha(old.0), old.1),
                    (sha(new.0), new.1),
                )
            }
            RequestChange::Value { path, old, new } => {
                let (old, new) = match (old, new) {
                    (Some(Value::String(a)), Some(Value::String(b))) => {
                        let (a, b) = excerpts(a, b);
                        (quoted(&a), quoted(&b))
                    }
                    (Some(a), Some(b)) => excerpts(&a.to_string(), &b.to_string()),
                    (None, Some(b)) => ("unset".into(), head(b)),
                    (Some(a), None) => (head(a), "unset".into()),
                    (None, None) => ("unset".into(), "unset".into()),
                };
                format!("{path}: {old} → {new}")
            }
        }
    }

    /// Each side in full, for a line diff: a text as it is, another value as pretty JSON, nothing
    /// where it is unset.
    /// Each side in full: a media part as its file in the media store of `media` (the folders
    /// holding the old side's file and the new side's: a cassette's, a pending file's), to open.
    pub fn sides(&self, media: (&std::path::Path, &std::path::Path)) -> (String, String) {
        let full = |value: &Option<&Value>| match value {
            None => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        match self {
            RequestChange::Target { old, new } => (old.clone(), new.clone()),
            RequestChange::Items { old, new, .. } => {
                (format!("{old} items"), format!("{new} items"))
            }
            RequestChange::Value { old, new, .. } => (full(old), full(new)),
            RequestChange::Media { old, new, .. } => {
                let stored = |folder: &std::path::Path, (file, size): (&str, u64)| {
                    let path = super::media_ref::stored_path(folder, file);
                    format!("{} ({})", path.display(), shown_size(size))
                };
                (stored(media.0, *old), stored(media.1, *new))
            }
        }
    }
}

/// What differs between two requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestDiff<'a> {
    /// The changes, in path order (at most 256, `KEPT`).
    pub changes: Vec<RequestChange<'a>>,
    /// How many changes there are, those not kept included.
    pub count: usize,
    /// The bytes of text that differ (the changed parts of changed texts): between two recordings as
    /// many changes away, the nearer one.
    pub changed_bytes: usize,
    /// The tool-call ids that differ only as ids made anew do, each renaming once: (old, new).
    pub fresh_ids: Vec<(&'a str, &'a str)>,
}

impl RequestDiff<'_> {
    /// Whether the two requests are the same, fresh tool-call ids aside.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// A line per change (see [`RequestChange::line`]), at most `limit`, then how many more there are.
    pub fn lines(&self, limit: usize) -> Vec<String> {
        let mut lines: Vec<String> = self
            .changes
            .iter()
            .take(limit)
            .map(RequestChange::line)
            .collect();
        if self.count > lines.len() {
            lines.push(format!("and {} more", self.count - lines.len()));
        }
        lines
    }
}

/// What differs between the recorded request `old` and `new`: the method and path, the query, and each
/// JSON path of the body.
pub fn requests<'a>(old: &'a RawRequest, new: &'a RawRequest) -> RequestDiff<'a> {
    let mut target = Vec::new();
    if old.method != new.method || old.path != new.path {
        target.push(RequestChange::Target {
            old: format!("{} {}", old.method, old.path),
            new: format!("{} {}", new.method, new.path),
        });
    }
    if old.query != new.query {
        target.push(RequestChange::Target {
            old: format!("query {:?}", old.query),
            new: format!("query {:?}", new.query),
        });
    }
    let mut diff = values(&old.body, &new.body);
    diff.count += target.len();
    target.append(&mut diff.changes);
    diff.changes = target;
    diff.changes.truncate(KEPT);
    diff
}

/// The recorded request nearest to `new` among `recorded` (the fewest changed paths, then the fewest
/// changed bytes; the first of equals) and what differs; `None` when there is none.
// Only the recording endpoint's calls pick a nearest recording.
#[cfg_attr(not(feature = "endpoint"), allow(dead_code))]
pub fn closest<'a>(
    new: &'a RawRequest,
    recorded: impl IntoIterator<Item = &'a RawRequest>,
) -> Option<RequestDiff<'a>> {
    recorded
        .into_iter()
        .map(|old| requests(old, new))
        .min_by_key(|d| (d.count, d.changed_bytes))
}

/// What differs between two JSON values, by path.
pub fn values<'a>(old: &'a Value, new: &'a Value) -> RequestDiff<'a> {
    let mut walk = Walk::default();
    walk.value(&mut Vec::new(), old, new);
    walk.finish()
}

/// The hash, kind and size of a relayed body's reference into the media store
/// ([`super::media::relayed_reference`]), when `object` is one.
fn stored_media(object: &serde_json::Map<String, Value>) -> Option<(&str, MediaKind, u64)> {
    let file = object.get("media")?.as_str()?;
    let (_, media_type) = parse_reference(file)?;
    Some((file, media_type.kind(), object.get("size")?.as_u64()?))
}

/// One step of the path being walked, borrowed from the values.
#[derive(Clone, Copy)]
enum At<'a> {
    Key(&'a str),
    Index(usize),
}

fn path(at: &[At<'_>]) -> Path {
    Path(
        at.iter()
            .map(|step| match step {
                At::Key(key) => Step::Key((*key).to_string()),
                At::Index(n) => Step::Index(*n),
            })
            .collect(),
    )
}

/// The state of one comparison.
#[derive(Default)]
struct Walk<'a> {
    diff: RequestDiff<'a>,
    /// Each id found on both sides (old, new; the same or not) and, when it differs and is kept, the
    /// index of its change.
    ids: Vec<(&'a str, &'a str, Option<usize>)>,
}

impl<'a> Walk<'a> {
    fn change(&mut self, change: impl FnOnce() -> RequestChange<'a>) -> Option<usize> {
        self.diff.count += 1;
        (self.diff.changes.len() < KEPT).then(|| {
            self.diff.changes.push(change());
            self.diff.changes.len() - 1
        })
    }

    fn value(&mut self, at: &mut Vec<At<'a>>, old: &'a Value, new: &'a Value) {
        match (old, new) {
            (Value::Object(a), Value::Object(b)) => {
                if let (Some(was), Some(is)) = (stored_media(a), stored_media(b))
                    && was.0 != is.0
                {
                    self.change(|| RequestChange::Media {
                        path: path(at),
                        kind: is.1,
                        old: (was.0, was.2),
                        new: (is.0, is.2),
                    });
                    return;
                }
                let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
                keys.sort();
                keys.dedup();
                for key in keys {
                    at.push(At::Key(key));
                    match (a.get(key), b.get(key)) {
                        (Some(x), Some(y)) => self.field(at, key, x, y),
                        (x, y) => {
                            self.change(|| RequestChange::Value {
                                path: path(at),
                                old: x,
                                new: y,
                            });
                        }
                    }
                    at.pop();
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    self.change(|| RequestChange::Items {
                        path: path(at),
                        old: a.len(),
                        new: b.len(),
                    });
                }
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    at.push(At::Index(i));
                    self.value(at, x, y);
                    at.pop();
                }
            }
            (Value::String(a), Value::String(b)) if a != b => {
                let (start, old_end, new_end) = differing(a, b);
                self.diff.changed_bytes += (old_end - start) + (new_end - start);
                self.change(|| RequestChange::Value {
                    path: path(at),
                    old: Some(old),
                    new: Some(new),
                });
            }
            (a, b) if a != b => {
                self.change(|| RequestChange::Value {
                    path: path(at),
                    old: Some(a),
                    new: Some(b),
                });
            }
            _ => {}
        }
    }

    /// The field `key` of two objects: the texts of an id field are noted as ids, the same or not.
    fn field(&mut self, at: &mut Vec<At<'a>>, key: &str, old: &'a Value, new: &'a Value) {
        match (old, new) {
            (Value::String(a), Value::String(b)) if ID_FIELDS.contains(&key) => {
                let kept = if a == b {
                    None
                } else {
                    self.change(|| RequestChange::Value {
                        path: path(at),
                        old: Some(old),
                        new: Some(new),
                    })
                };
                self.ids.push((a, b, kept));
            }
            _ => self.value(at, old, new),
        }
    }

    /// The diff, its fresh ids taken out of the changes: an id is fresh when it is renamed the same
    /// way wherever it is found (one new id for one old one, and back) and it is found at least twice
    /// (a call and the result that answers it), so that the link between them holds.
    fn finish(mut self) -> RequestDiff<'a> {
        let mut forward: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
        let mut backward: BTreeMap<&str, &str> = BTreeMap::new();
        let mut broken: BTreeSet<&str> = BTreeSet::new();
        for &(old, new, _) in &self.ids {
            let there = forward.entry(old).or_insert((new, 0));
            there.1 += 1;
            let back = *backward.entry(new).or_insert(old);
            if there.0 != new || back != old {
                broken.extend([old, back]);
            }
        }
        let fresh =
            |old: &str| !broken.contains(&old) && forward.get(old).is_some_and(|f| f.1 >= 2);
        let mut dropped = BTreeSet::new();
        for &(old, new, kept) in &self.ids {
            if old != new && fresh(old) {
                self.diff.count -= 1;
                dropped.extend(kept);
                if !self.diff.fresh_ids.contains(&(old, new)) {
                    self.diff.fresh_ids.push((old, new));
                }
            }
        }
        let mut i = 0;
        self.diff.changes.retain(|_| {
            i += 1;
            !dropped.contains(&(i - 1))
        });
        self.diff
    }
}

/// `text` in JSON's quotes and escapes.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A value shown alone: its JSON text, cut after its first 80 characters.
fn head(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(77) {
        Some((cut, _)) if text.chars().count() > 80 => format!("{}...", &text[..cut]),
        _ => text,
    }
}

/// Where `old` and `new` differ, in bytes: the end of their common start, and the start of their
/// common end in each (which never overlaps the common start).
fn differing(old: &str, new: &str) -> (usize, usize, usize) {
    let mut start = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(start) {
        start -= 1;
    }
    let room = old.len().min(new.len()) - start;
    let mut end = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - end) || !new.is_char_boundary(new.len() - end) {
        end -= 1;
    }
    (start, old.len() - end, new.len() - end)
}

/// A window of each text around their first difference: up to [`CONTEXT`] characters of what they
/// share before it, the differing part (cut after [`CHANGED`] characters), then up to [`CONTEXT`] of
/// what they share after it; `…` where text is left out. The two always differ: either differing part
/// is shown, and they differ in their first character or in their length.
pub fn excerpts(old: &str, new: &str) -> (String, String) {
    let (start, old_end, new_end) = differing(old, new);
    let before = &old[..start];
    let skipped = before.chars().count().saturating_sub(CONTEXT);
    let mut before: String = before.chars().skip(skipped).collect();
    // A cut context starts at a word, where it has one.
    if let Some(space) = before.find(' ').filter(|_| skipped > 0) {
        before.drain(..=space);
    }
    let lead = if skipped > 0 { "…" } else { "" };
    let shown = |text: &str, limit: usize| -> String {
        let mut cut: String = text.chars().take(limit).collect();
        if cut.len() < text.len() {
            cut.push('…');
        }
        cut
    };
    let after = shown(&old[old_end..], CONTEXT);
    (
        format!(
            "{lead}{before}{}{after}",
            shown(&old[start..old_end], CHANGED)
        ),
        format!(
            "{lead}{before}{}{after}",
            shown(&new[start..new_end], CHANGED)
        ),
    )
}

/// A media part whose bytes changed, said by its kind, name, hashes and sizes (each side's `(sha256,
/// size)`): `image receipt.png changed (sha 3f2a… -> 9c1b…, 412 KB -> 398 KB)`; never its bytes.
pub fn media_changed(kind: MediaKind, name: &str, old: (&str, u64), new: (&str, u64)) -> String {
    let (sha_a, sha_b) = short_hashes(old.0, new.0);
    format!(
        "{kind} {name} changed (sha {sha_a}… -> {sha_b}…, {} -> {})",
        shown_size(old.1),
        shown_size(new.1)
    )
}

/// The shortest prefixes, of 4 digits or more, that tell two different hashes apart.
pub(super) fn short_hashes<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    let same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let n = (same + 1).max(4).min(a.len().min(b.len()));
    (&a[..n], &b[..n])
}

/// A size as people read it: `412 B`, `412 KB`, `1.2 MB` (powers of 1000).
pub fn shown_size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{} KB", (bytes + 500) / 1_000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::raw::chat_request as request;
    use serde_json::json;

    #[test]
    fn a_relayed_image_with_other_bytes_is_one_change_said_by_hashes_and_sizes() {
        let (a, b) = ("3f2a".repeat(16), "9c1b".repeat(16));
        let part = |sha: &str, size: u64| {
            json!({"content": [{"image_url": {"url": {
                "media": format!("{sha}.png"), "media_type": "image/png", "size": size
            }}}]})
        };
        let (old, new) = (part(&a, 412_345), part(&b, 398_000));
        let diff = values(&old, &new);
        assert_eq!(diff.count, 1, "{:?}", diff.changes);
        assert_eq!(
            diff.lines(8),
            ["image content[0].image_url.url changed (sha 3f2a… -> 9c1b…, 412 KB -> 398 KB)"]
        );
        assert_eq!(
            diff.changes[0].sides((std::path::Path::new("c"), std::path::Path::new("p"))),
            (
                format!("c/media/{a}.png (412 KB)"),
                format!("p/media/{b}.png (398 KB)")
            )
        );
        // The same bytes declared as another type: a plain change of that field.
        let mut retyped = old.clone();
        retyped["content"][0]["image_url"]["url"]["media_type"] = json!("image/jpeg");
        let diff = values(&old, &retyped);
        assert_eq!(
            diff.lines(8),
            ["content[0].image_url.url.media_type: \"image/png\" → \"image/jpeg\""]
        );
    }

    #[test]
    fn a_body_diff_names_each_changed_path() {
        let old = request(
            json!({"model": "m", "messages": [{"role": "user", "content": "hello"}], "temperature": 0.2}),
        );
        let new = request(
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 3}),
        );
        assert_eq!(
            requests(&old, &new).lines(10),
            [
                "messages[0].content: \"hello\" → \"hi\"",
                "seed: unset → 3",
                "temperature: 0.2 → unset",
            ]
        );
        let longer = request(json!({"messages": [1, 2, 3]}));
        let shorter = request(json!({"messages": [1, 5]}));
        assert_eq!(
            requests(&longer, &shorter).lines(10),
            ["messages: 3 items → 2", "messages[1]: 2 → 5"]
        );
        assert_eq!(requests(&old, &new).lines(1).last().unwrap(), "and 2 more");
        assert!(requests(&old, &old).is_empty());
        let mut moved = new.clone();
        moved.path = "/v1/responses".into();
        assert_eq!(
            requests(&new, &moved).lines(10),
            ["POST /v1/chat/completions → POST /v1/responses"]
        );
    }

    #[test]
    fn a_long_text_changed_near_its_end_shows_the_change_on_each_side() {
        let system = |tone: &str| {
            format!(
                "Answer in one or two sentences. Cite the policy section you rely on, never promise a \
                 refund, and keep a {tone} tone."
            )
        };
        let (old, new) = (system("plain"), system("warm"));
        let (a, b) = excerpts(&old, &new);
        assert_ne!(a, b);
        assert!(a.contains("plain") && b.contains("warm"), "{a} / {b}");
        assert_eq!(
            (a.as_str(), b.as_str()),
            (
                "…promise a refund, and keep a plain tone.",
                "…promise a refund, and keep a warm tone."
            )
        );
        let (old, new) = (json!({"system": old}), json!({"system": new}));
        assert_eq!(
            values(&old, &new).lines(8),
            [
                "system: \"…promise a refund, and keep a plain tone.\" → \"…promise a refund, and keep a warm tone.\""
            ]
        );
        // A text only added to, and one whose changed part is long, still differ.
        let (a, b) = excerpts("abc", "abcabc");
        assert_eq!((a.as_str(), b.as_str()), ("abc", "abcabc"));
        let long = "x".repeat(500);
        let (a, b) = excerpts(&format!("{long}A{long}"), &format!("{long}{long}{long}B"));
        assert_ne!(a, b);
        assert!(
            a.chars().count() < 120 && b.chars().count() < 120,
            "{a} / {b}"
        );
        // Characters of several bytes are never cut.
        let (a, b) = excerpts("prix: 10 €", "prix: 10 £");
        assert_eq!((a.as_str(), b.as_str()), ("prix: 10 €", "prix: 10 £"));
    }

    /// An OpenAI conversation after one tool round trip, its call's id `call` (and `answered`, the id
    /// its result names).
    fn round_trip(call: &str, answered: &str, city: &str) -> Value {
        json!({"model": "m", "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [{"id": call, "type": "function",
                "function": {"name": "weather", "arguments": format!("{{\"city\":\"{city}\"}}")}}]},
            {"role": "tool", "tool_call_id": answered, "content": "sunny"},
        ]})
    }

    #[test]
    fn fresh_tool_call_ids_are_not_a_change_and_a_broken_link_is() {
        let old = round_trip("call_abc123", "call_abc123", "Paris");
        let fresh = round_trip("call_xyz789", "call_xyz789", "Paris");
        let diff = values(&old, &fresh);
        assert!(diff.is_empty(), "{:?}", diff.lines(10));
        assert_eq!(diff.fresh_ids, [("call_abc123", "call_xyz789")]);
        // Fresh ids beside a real change: only the change.
        let moved = round_trip("call_xyz789", "call_xyz789", "Lyon");
        assert_eq!(
            values(&old, &moved).lines(10),
            [
                "messages[1].tool_calls[0].function.arguments: \"{\\\"city\\\":\\\"Paris\\\"}\" → \"{\\\"city\\\":\\\"Lyon\\\"}\""
            ]
        );
        // The result answers another call now: the link is broken, both ids are changes.
        let broken = round_trip("call_xyz789", "call_abc123", "Paris");
        assert_eq!(
            values(&old, &broken).lines(10),
            ["messages[1].tool_calls[0].id: \"call_abc123\" → \"call_xyz789\""]
        );
        // An id that links nothing (found once) is the application's own data.
        let (a, b) = (
            json!({"metadata": {"id": "user-1"}}),
            json!({"metadata": {"id": "user-2"}}),
        );
        assert_eq!(
            values(&a, &b).lines(10),
            ["metadata.id: \"user-1\" → \"user-2\""]
        );
        // Anthropic's tool_use and tool_result.
        let anthropic = |id: &str| {
            json!({"messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "w", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]},
            ]})
        };
        assert!(values(&anthropic("toolu_01"), &anthropic("toolu_02")).is_empty());
    }

    #[test]
    fn the_closest_recording_is_the_fewest_paths_then_bytes_away() {
        let new = request(json!({"a": "same", "b": "one two three", "c": 1}));
        let far = request(json!({"a": "other", "b": "xxx", "c": 2}));
        let near = request(json!({"a": "same", "b": "one two four", "c": 1}));
        let nearer = request(json!({"a": "same", "b": "one two thre", "c": 1}));
        let closest = closest(&new, [&far, &near, &nearer]).unwrap();
        assert_eq!(
            closest.lines(8),
            ["b: \"one two thre\" → \"one two three\""]
        );
        assert!(super::closest(&new, []).is_none());
    }

    #[test]
    fn a_large_body_changed_throughout_is_compared_at_once() {
        // A base64 blob of 1 MiB, changed throughout: the diff is linear, so a debug build takes
        // milliseconds (a character diff took hours).
        let blob = |seed: u64| {
            let mut state = seed;
            (0..1 << 20)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(state >> 58) as usize] as char
                })
                .collect::<String>()
        };
        let old = request(json!({"messages": [{"role": "user", "content": blob(1)}]}));
        let new = request(json!({"messages": [{"role": "user", "content": blob(2)}]}));
        let started = std::time::Instant::now();
        let lines = closest(&new, [&old, &old, &old]).unwrap().lines(8);
        assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].chars().count() < 200, "{}", lines[0]);
    }
}
