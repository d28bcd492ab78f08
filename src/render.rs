//! Prompt rendering: `{name}` placeholders filled in one pass.
//!
//! A substituted value is never expanded again, and braces that are not a placeholder (JSON examples,
//! `{ }`, `{1}`) stay as they are. A placeholder with no value is left in place and reported.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

/// The rendered text and the placeholders that had no value, in order of first appearance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedTemplate {
    /// The prompt with every known placeholder filled.
    pub text: String,
    /// Names of `{placeholders}` that had no value (each once).
    pub missing: Vec<String>,
}

/// A piece of a rendered template: text, or a media placeholder's name (placed as a part of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text, placeholders filled.
    Text(String),
    /// The name of a media placeholder.
    Media(String),
}

/// Fills `{name}` placeholders in `template` from `vars`.
pub fn render<K: AsRef<str>, V: AsRef<str>>(template: &str, vars: &[(K, V)]) -> RenderedTemplate {
    let (pieces, missing) = render_pieces(template, vars, &[]);
    let text = pieces
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) | Piece::Media(text) => text,
        })
        .collect();
    RenderedTemplate { text, missing }
}

/// [`render`], the placeholders named in `media` left as pieces of their own (an empty text piece
/// is left out), with the placeholders that had no value.
pub fn render_pieces<K: AsRef<str>, V: AsRef<str>>(
    template: &str,
    vars: &[(K, V)],
    media: &[&str],
) -> (Vec<Piece>, Vec<String>) {
    let mut pieces = Vec::new();
    let mut text = String::with_capacity(template.len());
    let mut missing: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match placeholder_name(after) {
            Some(name) => {
                match vars.iter().find(|(key, _)| key.as_ref() == name) {
                    Some((_, value)) => text.push_str(value.as_ref()),
                    None if media.contains(&name) => {
                        if !text.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut text)));
                        }
                        pieces.push(Piece::Media(name.to_string()));
                    }
                    None => {
                        if !missing.iter().any(|m| m == name) {
                            missing.push(name.to_string());
                        }
                        text.push('{');
                        text.push_str(name);
                        text.push('}');
                    }
                }
                rest = &after[name.len() + 1..];
            }
            None => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    (pieces, missing)
}

/// `pieces` with each media piece placed from `media` (every name of `pieces` is in it): the text,
/// each part shown as `[kind name]` (what reports and assertion templates show), and the content
/// parts in order (none when no piece is media: the text is sent as it is).
pub fn place(
    pieces: &[Piece],
    media: &std::collections::BTreeMap<String, MediaPart>,
) -> (String, Vec<ContentBlock>) {
    let mut text = String::new();
    let mut parts = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => {
                text.push_str(t);
                parts.push(ContentBlock::Text { text: t.clone() });
            }
            Piece::Media(name) => {
                let part = &media[name];
                text.push_str(&format!("[{} {}]", part.kind(), part.name()));
                parts.push(ContentBlock::Media(part.clone()));
            }
        }
    }
    if !pieces.iter().any(|p| matches!(p, Piece::Media(_))) {
        parts.clear();
    }
    (text, parts)
}

use crate::completion::{ContentBlock, MediaPart};

/// Names of every placeholder in `template`, each once, in order.
pub fn placeholders(template: &str) -> Vec<String> {
    render::<&str, &str>(template, &[]).missing
}

// The grammar `#[prompt_test]` checks at compile time too.
use prompt_tester_keys::template::placeholder_name;

/// Shortens `text` to at most `max` characters, marking the cut.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// Each item as `shown` words it, joined with " and ": `a and b`.
pub(crate) fn and_list(items: &[&str], shown: impl Fn(&str) -> String) -> String {
    items
        .iter()
        .map(|item| shown(item))
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_placeholders_are_pieces_of_their_own() {
        let (pieces, missing) = render_pieces(
            "Read {receipt} for {who}{x}: {receipt}",
            &[("who", "{receipt}")],
            &["receipt"],
        );
        assert_eq!(
            pieces,
            [
                Piece::Text("Read ".into()),
                Piece::Media("receipt".into()),
                // A text value is never read as a placeholder, media or not.
                Piece::Text(" for {receipt}{x}: ".into()),
                Piece::Media("receipt".into()),
            ]
        );
        assert_eq!(missing, ["x"]);
    }

    #[test]
    fn fills_placeholders_once_and_keeps_other_braces() {
        let out = render(
            "Summarise {text} as JSON like {\"a\": 1} {}",
            &[("text", "{text} and {other}")],
        );
        assert_eq!(
            out.text,
            "Summarise {text} and {other} as JSON like {\"a\": 1} {}"
        );
        assert!(out.missing.is_empty());
    }

    #[test]
    fn reports_missing_placeholders_once() {
        let out = render("{a} {b} {a} {c1}", &[("c1", "x")]);
        assert_eq!(out.text, "{a} {b} {a} x");
        assert_eq!(out.missing, vec!["a", "b"]);
    }

    #[test]
    fn handles_unclosed_and_unicode() {
        let out = render("é {x", &[("x", "y")]);
        assert_eq!(out.text, "é {x");
        assert_eq!(placeholders("{ a } {b} {9}"), vec!["b"]);
    }
}
