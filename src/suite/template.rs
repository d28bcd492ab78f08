//! `{name}` in assertion values: `{ equals = "{expected}" }`, `{ contains = "{city}" }`.
//!
//! An assertion whose strings name a placeholder is kept as a TOML value and read again for each case
//! with the case's `expected` and inputs filled in, through the one assertion reader
//! ([`assert::parse_one`]): the value is written as TOML text and parsed back. Filling is
//! [`render`](crate::render::render)'s (only known names, each once, other braces stay); inside `regex`
//! a filled-in value is escaped so that it matches literally. Assertions without placeholders are read
//! once, as before.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize as _;
use toml::de::DeValue;

use super::assert::{self, Assertion};
use crate::render::{placeholders, render};
use crate::spanned::{Node, Problem, Reader};

/// The name the expected answer goes by in assertion values.
pub const EXPECTED: &str = "expected";

/// An assertion as written: read already, or read again for each case.
#[derive(Debug, Clone)]
pub enum Pending {
    /// No placeholders: the same for every case.
    Ready(Assertion),
    /// Names placeholders: filled in per case.
    Template(Template),
}

impl Pending {
    /// The call besides the subject's that checking it makes (see [`assert::Check::call`]); a
    /// template's kind is its table's key.
    pub fn call(&self) -> Option<crate::role::CallRole> {
        use crate::role::CallRole;
        match self {
            Pending::Ready(a) => a.check.call(),
            Pending::Template(t) => {
                let table = t.value.as_table()?;
                if table.contains_key("judge") || table.contains_key("judge_trajectory") {
                    Some(CallRole::Judge)
                } else if table.contains_key("similar") {
                    Some(CallRole::Embedding)
                } else {
                    None
                }
            }
        }
    }
}

/// An assertion table that names `{placeholders}`.
#[derive(Debug, Clone)]
pub struct Template {
    /// The table as written.
    value: toml::Value,
    /// Its key path (`assert[1]`, `cases[0].assert[2]`).
    path: String,
    /// `file:line` where it is written.
    at: String,
    /// Where it is in the suite file (`None` in a dataset row).
    pub span: Option<Range<usize>>,
    /// The placeholders it names.
    names: Vec<String>,
}

/// Where assertions are read from: the file they are written in and the directory schema files are
/// relative to.
#[derive(Clone, Copy)]
pub struct TemplateSource<'a> {
    /// The file as shown.
    pub file: &'a str,
    /// The suite's directory.
    pub dir: &'a Path,
}

/// The values a case gives placeholders in its assertions: `expected`, then its inputs.
pub fn vars(expected: Option<&str>, inputs: &[(String, String)]) -> Vec<(String, String)> {
    expected
        .map(|e| (EXPECTED.to_string(), e.to_string()))
        .into_iter()
        .chain(inputs.iter().cloned())
        .collect()
}

/// Placeholder names in the strings of `value`, each once.
fn names_in(value: &toml::Value, names: &mut Vec<String>) {
    match value {
        toml::Value::String(s) => {
            for p in placeholders(s) {
                if !names.contains(&p) {
                    names.push(p);
                }
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| names_in(v, names)),
        toml::Value::Table(t) => t.values().for_each(|v| names_in(v, names)),
        _ => {}
    }
}

/// `value` with `{name}` filled in every string from `vars`.
fn fill(value: &toml::Value, vars: &[(String, String)]) -> toml::Value {
    match value {
        toml::Value::String(s) => toml::Value::String(render(s, vars).text),
        toml::Value::Array(items) => {
            toml::Value::Array(items.iter().map(|v| fill(v, vars)).collect())
        }
        toml::Value::Table(t) => {
            toml::Value::Table(t.iter().map(|(k, v)| (k.clone(), fill(v, vars))).collect())
        }
        other => other.clone(),
    }
}

/// An assertion table with its placeholders filled in; under `regex` the values are escaped.
pub fn substitute(assertion: &toml::Value, vars: &[(String, String)]) -> toml::Value {
    let toml::Value::Table(table) = assertion else {
        return fill(assertion, vars);
    };
    let escaped: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.clone(), regex::escape(v)))
        .collect();
    toml::Value::Table(
        table
            .iter()
            .map(|(k, v)| {
                let vars = if k == "regex" { &escaped } else { vars };
                (k.clone(), fill(v, vars))
            })
            .collect(),
    )
}

/// Reads one assertion table held as a value, through the suite's assertion reader. Its problems'
/// spans point into the value's own text: callers locate them.
fn read_value(
    value: &toml::Value,
    path: &str,
    at: &str,
    src: TemplateSource<'_>,
) -> Result<Assertion, Vec<Problem>> {
    let text = value.to_string();
    let node = DeValue::parse(&text).map_err(|e| {
        vec![Problem::new(
            0..0,
            path,
            format!("cannot read the assertion: {}", e.message()),
            "write the assertion as `{ kind = value }`",
        )]
    })?;
    let mut r = Reader::new(src.file, src.dir, &text);
    let read = assert::parse_one(&mut r, &node, path);
    match read {
        Some(mut a) if r.problems.is_empty() => {
            a.at = at.to_string();
            // Its span is in the value's own text: the caller's span locates it.
            if let Some(turn) = &mut a.turn {
                turn.span = None;
            }
            Ok(a)
        }
        _ => Err(r.problems),
    }
}

impl Template {
    /// The assertion for a case with these values.
    fn instantiate(
        &self,
        vars: &[(String, String)],
        src: TemplateSource<'_>,
    ) -> Result<Assertion, Vec<Problem>> {
        let span = self.span.clone().unwrap_or(0..0);
        if self.names.iter().any(|n| n == EXPECTED) && !vars.iter().any(|(k, _)| k == EXPECTED) {
            return Err(vec![Problem::new(
                span,
                &self.path,
                format!(
                    "the assertion at {} uses {{expected}}, but the case has no `expected` value",
                    self.at
                ),
                "give the case `expected = \"...\"` (in a dataset: an `expected` column or key)",
            )]);
        }
        let read = read_value(&substitute(&self.value, vars), &self.path, &self.at, src);
        read.map(|mut a| {
            if let Some(turn) = &mut a.turn {
                turn.span = self.span.clone();
            }
            a
        })
        .map_err(|problems| {
            problems
                .into_iter()
                .map(|p| {
                    let message = if self.names.is_empty() {
                        p.message
                    } else {
                        format!("{} (with this case's values filled in)", p.message)
                    };
                    Problem {
                        span: span.clone(),
                        message,
                        ..p
                    }
                })
                .collect()
        })
    }
}

/// Reads `assert = [...]` from the suite file: assertions without placeholders as today, the others as
/// templates, checked now with every name in `known` filled in with itself (a kind, type or range
/// problem is the suite's).
pub fn read_list(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    path: &str,
    known: &[String],
    src: TemplateSource<'_>,
) -> Vec<Pending> {
    let DeValue::Array(items) = node.get_ref() else {
        return assert::parse_list(r, node, path)
            .into_iter()
            .map(Pending::Ready)
            .collect();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let value = match item.get_ref() {
            DeValue::Table(_) => {
                toml::Value::deserialize(toml::de::ValueDeserializer::from(item.clone())).ok()
            }
            _ => None,
        };
        let mut names = Vec::new();
        if let Some(v) = &value {
            names_in(v, &mut names);
        }
        let Some(value) = value.filter(|_| !names.is_empty()) else {
            out.extend(assert::parse_one(r, item, &path).map(Pending::Ready));
            continue;
        };
        let template = Template {
            value,
            path,
            at: r.at(&item.span()),
            span: Some(item.span()),
            names,
        };
        let check: Vec<(String, String)> = template
            .names
            .iter()
            .filter(|n| known.contains(n))
            .map(|n| (n.clone(), n.clone()))
            .collect();
        match read_value(
            &substitute(&template.value, &check),
            &template.path,
            &template.at,
            src,
        ) {
            Ok(_) => out.push(Pending::Template(template)),
            Err(problems) => {
                for p in problems {
                    r.problem(item.span(), &p.key, p.message, p.fix);
                }
            }
        }
    }
    out
}

/// The assertions of a dataset row (its JSON `assert` as TOML), written at `at`: read, like every
/// template, when the row's trial is built.
pub fn row_templates(value: &toml::Value, at: &str) -> Vec<Pending> {
    let items: Vec<&toml::Value> = match value {
        toml::Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let mut names = Vec::new();
            names_in(v, &mut names);
            Pending::Template(Template {
                value: v.clone(),
                path: format!("assert[{i}]"),
                at: at.to_string(),
                span: None,
                names,
            })
        })
        .collect()
}

/// The assertions of one case: every pending one, filled in with `vars`.
pub fn instantiate(
    pending: &[Pending],
    vars: &[(String, String)],
    src: TemplateSource<'_>,
) -> Result<Vec<Assertion>, Vec<Problem>> {
    let mut out = Vec::with_capacity(pending.len());
    let mut problems = Vec::new();
    for p in pending {
        match p {
            Pending::Ready(a) => out.push(a.clone()),
            Pending::Template(t) => match t.instantiate(vars, src) {
                Ok(a) => out.push(a),
                Err(p) => problems.extend(p),
            },
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// The placeholder names the templates among `pending` use (inputs named there are used, not unused).
pub fn names_used(pending: &[Pending]) -> impl Iterator<Item = &str> {
    pending
        .iter()
        .flat_map(|p| match p {
            Pending::Template(t) => t.names.as_slice(),
            Pending::Ready(_) => &[],
        })
        .map(String::as_str)
}

/// A JSON value as TOML (`null` has no TOML form: the path of the first one is the error).
pub fn json_to_toml(value: &serde_json::Value, path: &str) -> Result<toml::Value, String> {
    use serde_json::Value as J;
    Ok(match value {
        J::Null => return Err(path.to_string()),
        J::Bool(b) => toml::Value::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => toml::Value::String(s.clone()),
        J::Array(items) => toml::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| json_to_toml(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(map) => toml::Value::Table(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), json_to_toml(v, &format!("{path}.{k}"))?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> toml::Value {
        text.parse::<toml::Table>().unwrap()["a"].clone()
    }

    fn vars() -> Vec<(String, String)> {
        super::vars(Some("1+1=2"), &[("city".into(), "St. Louis (MO)".into())])
    }

    #[test]
    fn known_names_are_filled_other_braces_stay() {
        let filled = substitute(
            &value(r#"a = { contains = ["{expected} in {city}", "{other} {\"k\": 1}"] }"#),
            &vars(),
        );
        assert_eq!(
            filled,
            value(r#"a = { contains = ["1+1=2 in St. Louis (MO)", "{other} {\"k\": 1}"] }"#)
        );
    }

    #[test]
    fn inside_regex_a_value_is_escaped() {
        let filled = substitute(
            &value(r#"a = { regex = '^{expected}$', weight = 2 }"#),
            &vars(),
        );
        assert_eq!(filled, value(r#"a = { regex = '^1\+1=2$', weight = 2 }"#));
        let src = TemplateSource {
            file: "s.evals.toml",
            dir: Path::new("."),
        };
        let a = read_value(&filled, "assert[0]", "s.evals.toml:3", src).unwrap();
        let super::assert::Check::Regex(res) = &a.check else {
            panic!("{:?}", a.check)
        };
        assert!(res[0].is_match("1+1=2"));
        assert!(!res[0].is_match("11=2"));
        assert_eq!((a.at.as_str(), a.weight), ("s.evals.toml:3", 2.0));
    }

    #[test]
    fn json_converts_to_toml_and_null_is_named() {
        let json = serde_json::json!([{ "contains": "x", "weight": 2 }, { "max_words": 1.5 }]);
        assert_eq!(
            json_to_toml(&json, "assert").unwrap(),
            value(r#"a = [{ contains = "x", weight = 2 }, { max_words = 1.5 }]"#)
        );
        let json = serde_json::json!([{ "contains": ["a", null] }]);
        assert_eq!(
            json_to_toml(&json, "assert").unwrap_err(),
            "assert[0].contains[1]"
        );
    }
}
