//! A dataset in JSON Lines: one object a row, an optional metadata line first.

use serde_json::Value;

use super::{FileProblem, JSONL_KEYS, NAME_KEYS, Row, RowProblem, name_problem};

/// A JSON scalar as text (strings as they are, numbers and booleans as written), else `None`.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// serde_json's message without its position (the line is the file's, not the one-line text's).
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&at).unwrap_or(&text).to_string()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The rows of a JSON Lines file and the version its metadata line gives, if it has one.
pub(super) fn jsonl(bytes: &[u8]) -> Result<(Vec<Row>, Option<String>), FileProblem> {
    let mut rows = Vec::new();
    let mut version = None;
    let mut first = true;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let Ok(text) = std::str::from_utf8(raw) else {
            rows.push(Row {
                line,
                name: Row::line_name(line),
                problems: vec![RowProblem::new(
                    "",
                    "the line is not valid UTF-8",
                    "save the file as UTF-8",
                )],
                ..Row::default()
            });
            first = false;
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                rows.push(Row {
                    line,
                    name: Row::line_name(line),
                    problems: vec![RowProblem::new(
                        format!("column {}", e.column()),
                        format!("not JSON: {}", json_error(&e)),
                        "write each row as one JSON object on one line: {\"name\": \"...\", \"expected\": \"...\", ...}",
                    )],
                    ..Row::default()
                });
                first = false;
                continue;
            }
        };
        let is_meta = value.get("dataset_version").is_some()
            && NAME_KEYS.iter().all(|k| value.get(k).is_none());
        if is_meta && first {
            version = Some(metadata(&value, line)?);
            first = false;
            continue;
        }
        first = false;
        rows.push(jsonl_row(value, line, is_meta));
    }
    Ok((rows, version))
}

/// The `dataset_version` of the metadata line.
fn metadata(value: &Value, line: usize) -> Result<String, FileProblem> {
    let fix = "write the metadata line as {\"dataset_version\": \"2025-06\"} (optionally with \"description\")";
    if let Value::Object(map) = value
        && let Some(key) = map
            .keys()
            .find(|k| *k != "dataset_version" && *k != "description")
    {
        return Err(FileProblem {
            line,
            message: format!("unknown key `{key}` in the metadata line"),
            fix: fix.into(),
        });
    }
    match value.get("dataset_version").and_then(scalar) {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(FileProblem {
            line,
            message: "`dataset_version` must be a non-empty string or a number".into(),
            fix: fix.into(),
        }),
    }
}

/// One JSON Lines row (`misplaced_meta`: a metadata line that is not the first line).
fn jsonl_row(value: Value, line: usize, misplaced_meta: bool) -> Row {
    let mut row = Row {
        line,
        name: Row::line_name(line),
        ..Row::default()
    };
    let Value::Object(map) = value else {
        row.problems.push(RowProblem::new(
            "",
            format!("expected a JSON object, found {}", json_type(&value)),
            "write each row as {\"name\": \"...\", \"expected\": \"...\", ...}",
        ));
        return row;
    };
    if misplaced_meta {
        row.problems.push(RowProblem::new(
            "`dataset_version`",
            "a metadata line is read only as the first line of the file",
            "move {\"dataset_version\": \"...\"} to the first line, or give this row a `name`",
        ));
        return row;
    }
    let mut problem = |place: &str, message: String, fix: &str| {
        row.problems
            .push(RowProblem::new(format!("`{place}`"), message, fix))
    };
    let mut name = None;
    match (map.get("name"), map.get("id")) {
        (Some(_), Some(_)) => problem(
            "id",
            "the row has both `name` and `id`".into(),
            "keep one of them: it names the trial `<suite>::<name>`",
        ),
        (None, None) => problem(
            "name",
            "the row has no `name` or `id`".into(),
            "add \"name\": \"...\" (the trial is `<suite>::<name>`)",
        ),
        (Some(v), None) | (None, Some(v)) => {
            let key = if map.contains_key("name") {
                "name"
            } else {
                "id"
            };
            match scalar(v).filter(|_| !v.is_boolean()) {
                Some(n) => match name_problem(&n) {
                    None => name = Some(n),
                    Some(why) => problem(
                        key,
                        format!("{n:?} is not a usable name: {why}"),
                        "use a non-empty name without `::`, control characters or leading or trailing spaces",
                    ),
                },
                None => problem(
                    key,
                    format!("expected a string or a number, found {}", json_type(v)),
                    "write \"name\": \"...\"",
                ),
            }
        }
    }
    let mut optional_text = |key: &str, fix: &str| match map.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => {
            let text = scalar(v);
            if text.is_none() {
                problem(
                    key,
                    format!("expected a string, found {}", json_type(v)),
                    fix,
                );
            }
            text
        }
    };
    let category = optional_text("category", "write \"category\": \"billing\"");
    let expected = optional_text(
        "expected",
        "write \"expected\": \"...\" (text, a number or a boolean)",
    );
    let skip = match map.get("skip") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("skipped in the dataset".to_string()),
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(other) => {
            problem(
                "skip",
                format!(
                    "expected the reason as a string, found {}",
                    json_type(other)
                ),
                "write \"skip\": \"why it is skipped\" (or true)",
            );
            None
        }
    };
    let mut inputs = Vec::new();
    let mut input = |key: &str, place: String, value: &Value| match scalar(value) {
        Some(text) => inputs.push((key.to_string(), text)),
        None => problem(
            &place,
            format!("expected a string, found {}", json_type(value)),
            "write the value as text (it is pasted into the prompt; JSON can be written as a string)",
        ),
    };
    match map.get("inputs") {
        Some(Value::Object(values)) => {
            for (key, value) in values {
                input(key, format!("inputs.{key}"), value);
            }
            for key in map.keys().filter(|k| !JSONL_KEYS.contains(&k.as_str())) {
                problem(
                    key,
                    format!("unknown key `{key}` in a row that has an `inputs` object"),
                    &format!(
                        "move it into `inputs`, or remove it (the keys of a row are {})",
                        JSONL_KEYS.join(", ")
                    ),
                );
            }
        }
        Some(other) => problem(
            "inputs",
            format!("expected an object, found {}", json_type(other)),
            "write \"inputs\": {\"name\": \"value\", ...}, or the inputs as keys of the row",
        ),
        None => {
            for (key, value) in map
                .iter()
                .filter(|(k, _)| !JSONL_KEYS.contains(&k.as_str()))
            {
                input(key, key.clone(), value);
            }
        }
    }
    let asserts = match map.get("assert") {
        None => None,
        Some(v @ (Value::Array(_) | Value::Object(_))) => Some(v.clone()),
        Some(other) => {
            problem(
                "assert",
                format!(
                    "expected an array of assertions, found {}",
                    json_type(other)
                ),
                "write \"assert\": [{\"contains\": \"...\"}, {\"max_words\": 50}]",
            );
            None
        }
    };
    if let (Some(name), true) = (name, row.problems.is_empty()) {
        row.name = name;
    }
    Row {
        category,
        skip,
        expected,
        inputs,
        asserts,
        ..row
    }
}
