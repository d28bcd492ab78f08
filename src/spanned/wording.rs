//! The problems of a YAML suite in YAML's words.
//!
//! The readers word their messages and fixes once, in TOML (`write \`runs = 1\``, "expected a table"),
//! since the tree they walk is the same for both formats. A YAML file's are rewritten when shown: inside
//! backticks `key = value` becomes `key: value` (an inline table `{ a = 1 }` becomes the flow mapping
//! `{ a: 1 }`, valid YAML as it stands) and `[[cases]]` a list under `cases:`; outside them TOML's type
//! names become YAML's.

use std::borrow::Cow;

/// TOML's words and YAML's, longest first (each is replaced once, left to right).
const WORDS: &[(&str, &str)] = &[
    ("an array of tables", "a list of mappings"),
    ("an array of tool tables", "a list of tool mappings"),
    ("a tool table", "a tool mapping"),
    ("an assertion table", "an assertion mapping"),
    ("a JSON schema table", "a JSON schema mapping"),
    ("an array of prompt files", "a list of prompt files"),
    ("an array", "a list"),
    ("a TOML table", "a mapping"),
    ("as a TOML table", "as a mapping"),
    ("a TOML value", "a YAML value"),
    ("plain TOML value", "plain YAML value"),
    ("inline table", "mapping"),
    ("a table", "a mapping"),
    ("TOML basic string", "double-quoted YAML string"),
    ("TOML", "YAML"),
];

/// `text` as a YAML file's problem says it.
pub(crate) fn yaml(text: &str) -> Cow<'_, str> {
    if !text.contains(['`', '=']) && !WORDS.iter().any(|(toml, _)| text.contains(toml)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // Alternately prose and code: an unpaired backtick leaves the rest prose.
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        out.push_str(&prose(&rest[..open]));
        let code = &rest[open + 1..open + 1 + len];
        out.push_str(&code_span(code, &rest[open + 2 + len..]));
        rest = &rest[open + 2 + len..];
        if let Some(tail) = rest.strip_prefix(" table") {
            // "a `[[cases]]` table" was rewritten whole by `code_span`.
            if code.starts_with("[[") {
                rest = tail;
            }
        }
    }
    out.push_str(&prose(rest));
    Cow::Owned(out)
}

fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (toml, yaml) in WORDS {
            if let Some(after) = rest.strip_prefix(toml) {
                out.push_str(yaml);
                rest = after;
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// One code span, backticks included; `after` is what follows it.
fn code_span(code: &str, after: &str) -> String {
    if let Some(key) = code.strip_prefix("[[").and_then(|c| c.strip_suffix("]]")) {
        return if after.starts_with(" table") {
            format!("`- ` item under `{key}:`")
        } else {
            format!("`{key}:` with a `- ` item")
        };
    }
    format!("`{}`", code.replace(" = ", ": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_becomes_yaml_and_type_names_yaml_s() {
        assert_eq!(
            yaml("write `runs = 1` or more (samples per case)"),
            "write `runs: 1` or more (samples per case)"
        );
        assert_eq!(
            yaml("write `inputs = { name = \"value\", ... }`"),
            "write `inputs: { name: \"value\", ... }`"
        );
        assert_eq!(
            yaml("expected an array of tables, found a table"),
            "expected a list of mappings, found a mapping"
        );
        assert_eq!(
            yaml("write each case as a `[[cases]]` table"),
            "write each case as a `- ` item under `cases:`"
        );
        assert_eq!(
            yaml("add at least one case: `[[cases]]` then `name = \"...\"`"),
            "add at least one case: `cases:` with a `- ` item then `name: \"...\"`"
        );
        // Prose keeps its equals signs and a lone backtick.
        assert_eq!(yaml("a = b, `x"), "a = b, `x");
        assert_eq!(yaml("nothing to change"), "nothing to change");
    }
}
