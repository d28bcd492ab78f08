//! A suite's prompt: `prompt` (inline text or a file beside the suite), `prompts` (versions of it), or,
//! when the suite names neither, the prompt file beside it that has its name.

use std::path::Path;

use toml::de::DeTable;

use super::PromptVariant;
use crate::spanned::{Reader, string};

/// A prompt value names a file when it is one line without spaces or braces and has an extension.
pub(super) fn looks_like_path(value: &str) -> bool {
    !value.is_empty()
        && !value.contains(|c: char| c.is_whitespace() || c == '{' || c == '}')
        && Path::new(value)
            .extension()
            .is_some_and(|e| !e.is_empty() && e.len() <= 8)
}

/// The extensions of the prompt file a suite that names no `prompt` uses: `support.evals.yaml` takes
/// `support.md`, `support.txt` or `support.prompt` beside it.
pub const PROMPT_EXTENSIONS: &[&str] = &["md", "txt", "prompt"];

/// The prompt template and, when it came from a file, the file as written. `file` is the suite file as
/// shown: a suite without `prompt` or `prompts` takes the prompt file beside it with its name.
pub(super) fn prompt(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    file: &str,
) -> (Option<String>, Option<String>) {
    let Some(node) = table.get("prompt") else {
        if table.get("prompts").is_some() {
            return (None, None);
        }
        return beside(r, file);
    };
    if let Some(both) = table.get("prompts") {
        r.problem(
            both.span(),
            "prompts",
            "the suite has both `prompt` and `prompts`",
            "keep `prompt` for one prompt, or list every version in `prompts = [\"reply_v1.md\", \"reply_v2.md\"]`",
        );
        return (None, None);
    }
    let Some(value) = string(r, node, "prompt", "\"support_reply.md\"") else {
        return (None, None);
    };
    if !looks_like_path(&value) {
        if value.trim().is_empty() {
            r.problem(
                node.span(),
                "prompt",
                "the prompt is empty",
                "write the prompt text, or the name of a file beside the suite",
            );
        }
        return (Some(value), None);
    }
    let fix = "create the file beside the suite, correct the name, or write the prompt text inline (text \
               with spaces or {placeholders} is taken as the prompt itself)";
    match r.read_beside(node, "prompt", &value, "prompt", fix) {
        Some((text, _)) => (Some(text), Some(value)),
        None => (None, None),
    }
}

/// The prompt file beside the suite `file` with the suite's name, when there is exactly one.
fn beside(r: &mut Reader<'_>, file: &str) -> (Option<String>, Option<String>) {
    let name = Path::new(file)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let stem = crate::suite::SUFFIXES
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    let candidates: Vec<String> = PROMPT_EXTENSIONS
        .iter()
        .map(|e| format!("{stem}.{e}"))
        .collect();
    let found: Vec<&str> = candidates
        .iter()
        .map(String::as_str)
        .filter(|c| r.is_beside(c))
        .collect();
    let example = &candidates[0];
    match found.as_slice() {
        [] => {
            let looked = candidates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            r.problem(
                0..0,
                "prompt",
                format!("the suite has no `prompt`, and no prompt file beside it has its name ({looked})"),
                format!(
                    "create `{example}` beside the suite, or add `prompt = \"{example}\"` (a file beside the \
                     suite) or the prompt text inline, with {{placeholders}} for the case inputs"
                ),
            );
            (None, None)
        }
        [one] => {
            let fix = "make it readable UTF-8 text";
            match r.read_file_beside(0..0, "prompt", one, "prompt", fix, crate::text::read) {
                Some(text) => (Some(text), Some(one.to_string())),
                None => (None, None),
            }
        }
        several => {
            let listed = crate::render::and_list(several, |c| format!("`{c}`"));
            r.problem(
                0..0,
                "prompt",
                format!(
                    "the suite names no `prompt`, and {} prompt files beside it have its name: {listed}",
                    several.len()
                ),
                format!(
                    "name the one to use: `prompt = \"{}\"`, or remove the others",
                    several[0]
                ),
            );
            (None, None)
        }
    }
}

/// The prompt variants of `prompts = ["reply_v1.md", ...]`: files beside the suite, named by their stems.
pub(super) fn variants(r: &mut Reader<'_>, table: &DeTable<'_>) -> Vec<PromptVariant> {
    let Some(node) = table.get("prompts") else {
        return Vec::new();
    };
    let example =
        "write `prompts = [\"reply_v1.md\", \"reply_v2.md\"]`: prompt files beside the suite";
    let Some(items) = r.array(node, "prompts", "an array of prompt files", example) else {
        return Vec::new();
    };
    if items.is_empty() {
        r.problem(node.span(), "prompts", "`prompts` is empty", example);
    }
    let mut variants: Vec<PromptVariant> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let key = format!("prompts[{i}]");
        let Some(file) = string(r, item, &key, "\"reply_v1.md\"") else {
            continue;
        };
        if !looks_like_path(&file) {
            r.problem(
                item.span(),
                &key,
                format!("{file:?} is not a prompt file"),
                "name a file beside the suite (`reply_v1.md`); inline prompt text goes in `prompt`",
            );
            continue;
        }
        let fix = "create the file beside the suite, or correct the name";
        let Some((text, _)) = r.read_beside(item, &key, &file, "prompt", fix) else {
            continue;
        };
        let name = Path::new(&file)
            .file_stem()
            .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
        if variants.iter().any(|v| v.name == name) {
            r.problem(
                item.span(),
                &key,
                format!("two prompt variants are named `{name}` (the file stem names a variant)"),
                "rename one of the files",
            );
            continue;
        }
        if name.contains(['[', ']', '|']) {
            r.problem(
                item.span(),
                &key,
                format!("the variant name `{name}` has `[`, `]` or `|`, which trial names use"),
                "rename the file",
            );
            continue;
        }
        variants.push(PromptVariant { name, text });
    }
    variants
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_paths_are_told_from_prompt_text() {
        assert!(looks_like_path("support_reply.md"));
        assert!(looks_like_path("prompts/reply.txt"));
        assert!(!looks_like_path("Reply to {message}."));
        assert!(!looks_like_path("Say hi."));
    }
}
