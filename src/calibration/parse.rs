//! Reading a `*.calibration.toml` file into a [`Set`], every problem located by `line:column` and key.

use std::path::Path;

use toml::de::{DeTable, DeValue};

use crate::judge::QUESTION_TYPES;
use crate::spanned::{
    NamedTables, Problem, Reader, did_you_mean, real, string, toml_root, unknown_key,
};

/// One labelled judge case.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationItem {
    /// Its name (the trial is `calibration::<set>::<name>`).
    pub name: String,
    /// The question type (one of the judge's seven), if given.
    pub kind: Option<String>,
    /// The prompt the response answers (context for the judge), or `""`.
    pub prompt: String,
    /// The response to judge.
    pub response: String,
    /// The yes/no question.
    pub question: String,
    /// The correct answer: `true` for "yes".
    pub expected: bool,
}

/// A parsed calibration set.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    /// The set's name (file stem without `.calibration.toml`, `/` written `::`).
    pub name: String,
    /// The file, as shown.
    pub file: String,
    /// The least share of items the judge must get right, if the set requires one.
    pub min_accuracy: Option<f64>,
    /// The items, in file order.
    pub items: Vec<CalibrationItem>,
}

const SET_KEYS: [&str; 3] = ["description", "min_accuracy", "items"];
const ITEM_KEYS: [&str; 7] = [
    "name",
    "type",
    "prompt",
    "response",
    "question",
    "expected",
    "description",
];

/// The problems of a file as the failing trial shows them (the tests' shorthand for `spanned::FileError`).
#[cfg(test)]
pub(crate) fn report(file: &str, text: &str, problems: &[Problem]) -> String {
    crate::spanned::FileError::invalid(
        file,
        crate::spanned::FileKind::CalibrationSet,
        text,
        problems,
    )
    .to_string()
}

/// Parses the text of a calibration file shown as `file`.
pub fn parse(name: &str, file: &str, text: &str) -> Result<Set, Vec<Problem>> {
    let root = toml_root(
        text,
        "correct the TOML at this position (strings need quotes, `[[items]]` starts an item)",
    )
    .map_err(|p| vec![p])?;
    let mut r = Reader::new(file, Path::new("."), text);
    let table = root.get_ref();
    for (key, _) in table.iter() {
        if !SET_KEYS.contains(&key.get_ref().as_ref()) {
            let path = key.get_ref().to_string();
            unknown_key(
                &mut r,
                key,
                &path,
                &SET_KEYS,
                "at the top of a calibration set",
            );
        }
    }
    if let Some(node) = table.get("description") {
        string(&mut r, node, "description", "\"...\"");
    }
    let min_accuracy = table.get("min_accuracy").and_then(|node| {
        real(
            &mut r,
            node,
            "min_accuracy",
            |x| x > 0.0 && x <= 1.0,
            "a share in (0, 1], e.g. `min_accuracy = 0.9` for 90% of the items right",
        )
    });
    let mut items = Vec::new();
    match table.get("items").map(|n| (n, n.get_ref())) {
        None => r.problem(
            0..0,
            "items",
            "the calibration set has no items",
            "add `[[items]]` tables with `name`, `response`, `question` and `expected = \"yes\"` or \"no\"",
        ),
        Some((node, _)) => {
            let tables = NamedTables {
                key: "items",
                each: "item",
                article: "an",
                owner: "set",
            };
            items = r.named_tables(node, &tables, |item: &CalibrationItem| &item.name, item);
        }
    }
    if !r.problems.is_empty() {
        let mut problems = r.problems;
        problems.sort_by_key(|p| p.span.start);
        return Err(problems);
    }
    Ok(Set {
        name: name.to_string(),
        file: file.to_string(),
        min_accuracy,
        items,
    })
}

fn item(
    r: &mut Reader<'_>,
    t: &DeTable<'_>,
    span: std::ops::Range<usize>,
    path: &str,
) -> Option<CalibrationItem> {
    for (key, _) in t.iter() {
        let k = key.get_ref().as_ref();
        if !ITEM_KEYS.contains(&k) {
            unknown_key(r, key, &format!("{path}.{k}"), &ITEM_KEYS, "in an item");
        }
    }
    let text = |r: &mut Reader<'_>, key: &str, required: bool| -> Option<String> {
        let full = format!("{path}.{key}");
        match t.get(key) {
            Some(node) => {
                let s = string(r, node, &full, "\"...\"")?;
                if required && s.trim().is_empty() {
                    r.problem(
                        node.span(),
                        &full,
                        format!("`{key}` is empty"),
                        format!("write the {key} as text"),
                    );
                    return None;
                }
                Some(s)
            }
            None if required => {
                r.problem(
                    span.clone(),
                    &full,
                    format!("the item has no `{key}`"),
                    format!("add `{key} = \"...\"` to the item"),
                );
                None
            }
            None => Some(String::new()),
        }
    };
    let name = text(r, "name", true);
    let response = text(r, "response", true);
    let question = text(r, "question", true);
    let prompt = text(r, "prompt", false);
    let _ = text(r, "description", false);
    let name = name.filter(|n| {
        let ok = !n.contains("::") && !n.chars().any(char::is_whitespace);
        if !ok {
            let node = &t["name"];
            r.problem(
                node.span(),
                &format!("{path}.name"),
                format!("the item name `{n}` holds `::` or a space"),
                "use letters, digits and `_` (the name ends the trial name `calibration::<set>::<name>`)",
            );
        }
        ok
    });
    let expected = match t.get("expected") {
        None => {
            r.problem(
                span.clone(),
                &format!("{path}.expected"),
                "the item has no `expected` answer",
                "add `expected = \"yes\"` or `expected = \"no\"` (the correct answer to the question)",
            );
            None
        }
        Some(node) => match node.get_ref() {
            DeValue::String(s) if s == "yes" => Some(true),
            DeValue::String(s) if s == "no" => Some(false),
            _ => {
                r.problem(
                    node.span(),
                    &format!("{path}.expected"),
                    "`expected` must be \"yes\" or \"no\"",
                    "write `expected = \"yes\"` or `expected = \"no\"`",
                );
                None
            }
        },
    };
    let kind = match t.get("type") {
        None => Some(None),
        Some(node) => {
            let key = format!("{path}.type");
            let s = string(r, node, &key, "\"factual_presence\"")?;
            if QUESTION_TYPES.contains(&s.as_str()) {
                Some(Some(s))
            } else {
                let hint = match did_you_mean(&s, QUESTION_TYPES) {
                    Some(close) => format!("did you mean `{close}`? "),
                    None => String::new(),
                };
                r.problem(
                    node.span(),
                    &key,
                    format!("unknown question type `{s}`"),
                    format!("{hint}use one of {}", QUESTION_TYPES.join(", ")),
                );
                None
            }
        }
    };
    Some(CalibrationItem {
        name: name?,
        kind: kind?,
        prompt: prompt?,
        response: response?,
        question: question?,
        expected: expected?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    fn problems(text: &str) -> String {
        let problems = parse("s", "s.calibration.toml", text).unwrap_err();
        report("s.calibration.toml", text, &problems)
    }

    #[test]
    fn a_set_reads_its_items_in_order() {
        let set = parse(
            "basics",
            "basics.calibration.toml",
            r#"
min_accuracy = 0.75
[[items]]
name = "alice"
type = "factual_presence"
prompt = "Summarise."
response = "Alice leads."
question = "Is Alice mentioned?"
expected = "yes"
[[items]]
name = "no_bob"
response = "Alice leads."
question = "Is Bob mentioned?"
expected = "no"
"#,
        )
        .unwrap();
        assert_eq!(set.min_accuracy, Some(0.75));
        assert_eq!(set.items.len(), 2);
        assert_eq!(set.items[0].kind.as_deref(), Some("factual_presence"));
        assert!(set.items[0].expected && !set.items[1].expected);
        assert_eq!(set.items[1].prompt, "");
    }

    #[test]
    fn every_problem_is_located_with_its_key_and_fix() {
        let text = r#"min_accuracy = 1.5
minimum = 2
[[items]]
name = "a"
type = "factual_presense"
response = "x"
question = "q?"
expected = "maybe"
[[items]]
name = "a"
response = ""
question = "q?"
"#;
        let report = problems(text);
        assert_contains(
            &report,
            &[
                "s.calibration.toml:1:16: `min_accuracy`: 1.5 is out of range",
                "unknown key `minimum`",
                "`items[0].type`: unknown question type `factual_presense`",
                "did you mean `factual_presence`?",
                "`items[0].expected`: `expected` must be \"yes\" or \"no\"",
                "`items[1].response`: `response` is empty",
                "`items[1].expected`: the item has no `expected` answer",
            ],
        );
        assert!(problems("").contains("the calibration set has no items"));
        assert!(problems("items = 3").contains("expected an array of tables, found an integer"));
        assert!(
            problems(
                "[[items]]\nname = \"a b\"\nresponse = \"r\"\nquestion = \"q\"\nexpected = \"no\"\n"
            )
            .contains("holds `::` or a space")
        );
    }

    #[test]
    fn duplicate_names_are_refused() {
        let one =
            "[[items]]\nname = \"a\"\nresponse = \"r\"\nquestion = \"q\"\nexpected = \"no\"\n";
        let report = problems(&format!("{one}{one}"));
        assert!(
            report.contains(
                "s.calibration.toml:7:8: `items[1].name`: an item named `a` already exists"
            ),
            "{report}"
        );
    }
}
