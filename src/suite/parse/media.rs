//! Media in a suite: an input `receipt = { image = "receipt.png" }` (or `document`, `audio`), and a
//! dataset's `media = { receipt = "image" }` columns. Either names a file relative to the file that
//! names it; the kind written is checked against the bytes.

use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::completion::{ImageDetail, Media, MediaError, MediaKind, MediaPart};
use crate::spanned::{Node, Reader, found};

/// The kinds a suite names, as written.
pub(crate) const KINDS: [&str; 3] = ["image", "document", "audio"];

/// The kind `word` names (`image`, `document`, `audio`).
pub(crate) fn kind_named(word: &str) -> Option<MediaKind> {
    match word {
        "image" => Some(MediaKind::Image),
        "document" => Some(MediaKind::Document),
        "audio" => Some(MediaKind::Audio),
        _ => None,
    }
}

/// The part of the file `relative` names (from `dir`), which must be a `kind`; `Err` is what is
/// wrong and how to fix it.
pub(crate) fn load(
    dir: &Path,
    relative: &str,
    kind: MediaKind,
) -> Result<MediaPart, (String, String)> {
    let path = dir.join(relative);
    let part = Media::file(&path).load().map_err(|e| match e {
        MediaError::Read { reason, .. } => (
            format!(
                "{kind} file `{relative}` cannot be read: {reason} (looked for {})",
                path.display()
            ),
            "correct the path (relative to the file that names it), or add the file".to_string(),
        ),
        other => (other.to_string(), format!("give a {kind} file")),
    })?;
    if part.kind() != kind {
        let other = part.kind();
        return Err((
            format!(
                "`{relative}` is named as {} {kind} but its bytes are {} ({other})",
                article(kind),
                part.media_type()
            ),
            format!(
                "name it as {} {other} (`{other} = \"{relative}\"`), or give {} {kind} file",
                article(other),
                article(kind)
            ),
        ));
    }
    Ok(part)
}

/// "a" or "an" before the kind's name.
fn article(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image | MediaKind::Audio => "an",
        _ => "a",
    }
}

const INPUT_FIX: &str = "write `name = { image = \"receipt.png\" }` (or `document`, `audio`; the path \
                         relative to the suite file; an image may add `detail = \"low\"` or \
                         `\"high\"`), or `name = \"text\"`";

/// The media input `table` (at `node`, its path `key`) names, its problems noted.
pub(super) fn input(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    table: &DeTable<'_>,
    key: &str,
) -> Option<MediaPart> {
    let detail_node = table.iter().find(|(k, _)| k.get_ref().as_ref() == "detail");
    let mut entries = table
        .iter()
        .filter(|(k, _)| k.get_ref().as_ref() != "detail");
    let (Some((kind_key, value)), None) = (entries.next(), entries.next()) else {
        r.problem(
            node.span(),
            key,
            "a media input names one kind and one file",
            INPUT_FIX,
        );
        return None;
    };
    let word = kind_key.get_ref().as_ref();
    let Some(kind) = kind_named(word) else {
        r.problem(
            kind_key.span(),
            &format!("{key}.{word}"),
            format!(
                "unknown media kind `{word}`; a media input is one of {}",
                KINDS.join(", ")
            ),
            INPUT_FIX,
        );
        return None;
    };
    let DeValue::String(relative) = value.get_ref() else {
        r.problem(
            value.span(),
            &format!("{key}.{word}"),
            format!(
                "expected the file's path as a string, found {}",
                found(value.get_ref())
            ),
            INPUT_FIX,
        );
        return None;
    };
    let detail = match detail_node {
        None => ImageDetail::Auto,
        Some((_, node)) => {
            let named = match node.get_ref() {
                DeValue::String(word) => ImageDetail::named(word),
                _ => None,
            };
            let read = match (kind, named) {
                (MediaKind::Image, Some(detail)) => Ok(detail),
                (MediaKind::Image, None) => Err(format!(
                    "expected `auto`, `low` or `high`, found {}",
                    match node.get_ref() {
                        DeValue::String(word) => format!("`{word}`"),
                        other => found(other).to_string(),
                    }
                )),
                _ => Err(format!(
                    "`detail` is an image's setting; this input is {} {kind}",
                    article(kind)
                )),
            };
            match read {
                Ok(detail) => detail,
                Err(message) => {
                    r.problem(
                        node.span(),
                        &format!("{key}.detail"),
                        message,
                        "write `detail = \"low\"` or `\"high\"` on an image input (OpenAI's \
                         reading of it), or remove it",
                    );
                    return None;
                }
            }
        }
    };
    let dir = r.resolve("");
    match load(&dir, relative, kind).and_then(|part| {
        part.with_detail(detail)
            .map_err(|e| (e.to_string(), "remove the `detail`".to_string()))
    }) {
        Ok(part) => Some(part),
        Err((message, fix)) => {
            r.problem(value.span(), &format!("{key}.{word}"), message, fix);
            None
        }
    }
}

/// How to fix a media input placed where media cannot go.
pub(crate) const WHERE: &str = "place it in `prompt` (or a case's first turn) or in a user message of `messages`: a system \
     prompt, an assistant message and a later turn are text";

/// Whether every media input in `media` is placed where media may go (`prompt`, a case's first
/// turn, a user message of `messages`); `Err` names the first one that is not and where it is.
pub(crate) fn placed(
    settings: &super::Settings,
    turns: &[String],
    inputs: &[(String, String)],
    media: &std::collections::BTreeMap<String, MediaPart>,
) -> Result<(), (String, String)> {
    let names: Vec<&str> = media.keys().map(String::as_str).collect();
    let media_in = |text: &str| {
        let (pieces, _) = crate::render::render_pieces(text, inputs, &names);
        pieces.into_iter().find_map(|p| match p {
            crate::render::Piece::Media(name) => Some(name),
            crate::render::Piece::Text(_) => None,
        })
    };
    let misplaced = |name: String, place: String| {
        let kind = media[&name].kind();
        Err((
            name.clone(),
            format!("the {kind} input `{name}` is placed by {place}"),
        ))
    };
    if let Some(name) = settings.request.system.as_deref().and_then(media_in) {
        return misplaced(name, "`system`".to_string());
    }
    let messages = settings.request.messages.as_deref().unwrap_or_default();
    if let Err((i, role, name)) = crate::conversation::media_parts(messages, inputs, media) {
        let role = crate::conversation::role_name(role);
        let article = if role.starts_with('a') { "an" } else { "a" };
        return misplaced(name, format!("`messages[{i}]`, {article} {role} message"));
    }
    for (i, turn) in turns.iter().enumerate().skip(1) {
        if let Some(name) = media_in(turn) {
            return misplaced(name, format!("`turns[{i}]`"));
        }
    }
    Ok(())
}

/// A dataset's `media = { column = "image", ... }` (at `node`): the columns whose values are files,
/// each a column some row of `dataset` has.
pub(super) fn columns(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    dataset: Option<&super::Dataset>,
) -> Vec<(String, MediaKind)> {
    const FIX: &str = "write `media = { receipt = \"image\" }`: the column's values are then files \
                       (relative to the dataset file) of that kind (`image`, `document` or `audio`)";
    let Some(table) = r.table(node, "media", "a table", FIX) else {
        return Vec::new();
    };
    let mut columns = Vec::new();
    for (key, value) in table.iter() {
        let column = key.get_ref().to_string();
        let path = format!("media.{column}");
        let kind = match value.get_ref() {
            DeValue::String(word) => kind_named(word),
            _ => None,
        };
        let Some(kind) = kind else {
            let message = format!(
                "expected `image`, `document` or `audio`, found {}",
                match value.get_ref() {
                    DeValue::String(word) => format!("`{word}`"),
                    other => found(other).to_string(),
                }
            );
            r.problem(value.span(), &path, message, FIX);
            continue;
        };
        match dataset {
            None => r.problem(
                key.span(),
                &path,
                "`media` names columns of `cases_file`, and the suite has none",
                "add `cases_file = \"cases.jsonl\"`, or write a case's media as an input: \
                 `inputs = { receipt = { image = \"receipt.png\" } }`",
            ),
            Some(d)
                if !d
                    .rows
                    .iter()
                    .any(|row| row.inputs.iter().any(|(k, _)| *k == column)) =>
            {
                r.problem(
                    key.span(),
                    &path,
                    format!("{} has no column `{column}`", d.file),
                    "name a column of the dataset (its rows' keys or the CSV header)",
                )
            }
            Some(_) => columns.push((column, kind)),
        }
    }
    columns
}
