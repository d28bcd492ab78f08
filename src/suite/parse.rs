//! Reading a `*.evals.toml` file into a [`Suite`], with every problem located by `line:column`.
//!
//! The suite format only: its keys, settings, cases and messages. Walking the spanned TOML and
//! collecting problems is [`crate::spanned`]'s.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};

use super::assert::{self, Assertion};
use crate::completion::ToolSpec;
use crate::spanned::{
    Node, Problem, Reader, Report, a_type, found, real, scalar_text, string, unknown_key, whole,
};

/// Sampling and scoring settings, at suite level or overridden by a case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The subject provider.
    pub provider: Option<String>,
    /// The subject model.
    pub model: Option<String>,
    /// The most tokens to generate.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// The system prompt.
    pub system: Option<String>,
    /// Samples per case.
    pub runs: Option<u32>,
    /// Share of samples that must pass.
    pub pass_threshold: Option<f64>,
    /// The score a sample needs (weights of passing assertions over all weights): the key `threshold`,
    /// named apart from `pass_threshold`, a share of samples.
    pub min_score: Option<f64>,
    /// Tools declared to the model (no handlers: its calls are there for `tool_called` assertions).
    pub tools: Option<Vec<ToolSpec>>,
    /// Meant only for live runs: without a recording the case is ignored ("live only, not run").
    pub live_only: Option<bool>,
}

impl Settings {
    /// These settings, each unset one taken from `base`.
    pub fn over(&self, base: &Settings) -> Settings {
        Settings {
            provider: self.provider.clone().or_else(|| base.provider.clone()),
            model: self.model.clone().or_else(|| base.model.clone()),
            max_tokens: self.max_tokens.or(base.max_tokens),
            temperature: self.temperature.or(base.temperature),
            system: self.system.clone().or_else(|| base.system.clone()),
            runs: self.runs.or(base.runs),
            pass_threshold: self.pass_threshold.or(base.pass_threshold),
            min_score: self.min_score.or(base.min_score),
            tools: self.tools.clone().or_else(|| base.tools.clone()),
            live_only: self.live_only.or(base.live_only),
        }
    }
}

/// One case of a suite.
#[derive(Debug)]
pub struct Case {
    /// Its name (the trial is `<suite>::<name>`).
    pub name: String,
    /// Its category, for the report's `by_category`.
    pub category: Option<String>,
    /// Values for the prompt's placeholders, in file order.
    pub inputs: Vec<(String, String)>,
    /// Its assertions, the suite-wide ones first.
    pub asserts: Vec<Assertion>,
    /// Why it is skipped, if it is.
    pub skip: Option<String>,
    /// Its settings, the suite's filled in.
    pub settings: Settings,
    /// Inputs no placeholder uses (a warning, not an error: they may be kept for the record).
    pub unused_inputs: Vec<String>,
}

/// A parsed suite file.
#[derive(Debug)]
pub struct Suite {
    /// The suite's name.
    pub name: String,
    /// The file as shown (relative to the crate root).
    pub file: String,
    /// The prompt template.
    pub prompt: String,
    /// `prompt_id`, else the prompt file's stem, else the suite name.
    pub prompt_id: String,
    /// `prompt_version`, if given.
    pub prompt_version: Option<String>,
    /// `dataset_version`, if given.
    pub dataset_version: Option<String>,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

const SETTING_KEYS: [&str; 10] = [
    "provider",
    "model",
    "max_tokens",
    "temperature",
    "system",
    "runs",
    "pass_threshold",
    "threshold",
    "tools",
    "live_only",
];
const SUITE_KEYS: [&str; 7] = [
    "prompt",
    "prompt_id",
    "prompt_version",
    "dataset_version",
    "description",
    "assert",
    "cases",
];
const CASE_KEYS: [&str; 6] = [
    "name",
    "category",
    "description",
    "inputs",
    "assert",
    "skip",
];

/// Notes every key of `table` that is neither in `keys` nor a setting (`prefix` leads the key's path).
fn unknown_keys(r: &mut Reader<'_>, table: &DeTable<'_>, keys: &[&str], prefix: &str, place: &str) {
    let valid: Vec<&str> = keys.iter().chain(SETTING_KEYS.iter()).copied().collect();
    for (key, _) in table.iter() {
        let k = key.get_ref().as_ref();
        if !valid.contains(&k) {
            unknown_key(r, key, &format!("{prefix}{k}"), &valid, place);
        }
    }
}

/// The problems of a suite file as the failing trial's message.
pub fn report(file: &str, text: &str, problems: &[Problem]) -> String {
    Report {
        file,
        text,
        problems,
        consequence: "no case of this suite ran",
    }
    .to_string()
}

/// Parses the text of a suite file. `file` is how it is shown, `dir` where relative paths start.
pub fn parse(name: &str, file: &str, dir: &Path, text: &str) -> Result<Suite, Vec<Problem>> {
    let root = match DeTable::parse(text) {
        Ok(root) => root,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().trim().replace('\n', "; ");
            return Err(vec![Problem::new(
                span,
                "",
                format!("TOML syntax error: {message}"),
                "correct the TOML at this position (strings need quotes, inline tables stay on one line, \
                 `[[cases]]` starts a case)",
            )]);
        }
    };
    let mut r = Reader::new(file, dir, text);
    let table = root.get_ref();

    unknown_keys(&mut r, table, &SUITE_KEYS, "", "at the top of a suite");

    let suite_settings = settings(&mut r, table, "");
    let (prompt, prompt_file) = prompt(&mut r, table);
    let mut text_of = |key: &str| {
        let node = table.get(key)?;
        let text = scalar_text(node.get_ref());
        if text.is_none() {
            r.mismatch(node, key, "a string", format!("write `{key} = \"...\"`"));
        }
        text
    };
    let prompt_id = text_of("prompt_id");
    let prompt_version = text_of("prompt_version");
    let dataset_version = text_of("dataset_version");
    // A description is for readers of the file; it only has to be text.
    let _ = text_of("description");
    let suite_asserts = match table.get("assert") {
        Some(node) => assert::parse_list(&mut r, node, "assert"),
        None => Vec::new(),
    };

    let mut cases = Vec::new();
    match table.get("cases") {
        None => r.problem(
            0..0,
            "cases",
            "the suite has no cases",
            "add at least one case: `[[cases]]` then `name = \"...\"`, `inputs = { ... }` and `assert = [ ... ]`",
        ),
        Some(node) => match node.get_ref() {
            DeValue::Array(items) => {
                let mut names = BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("cases[{i}]");
                    let DeValue::Table(case_table) = item.get_ref() else {
                        r.mismatch(item, &path, "a table", "write each case as a `[[cases]]` table");
                        continue;
                    };
                    if let Some(case) = case(&mut r, case_table, item.span(), &path, &suite_settings, &suite_asserts, prompt.as_deref()) {
                        if !names.insert(case.name.clone()) {
                            let span = case_table.get("name").map_or(item.span(), |n| n.span());
                            r.problem(span, &format!("{path}.name"), format!("a case named `{}` already exists in this suite", case.name), "give every case a distinct name");
                        }
                        cases.push(case);
                    }
                }
            }
            _ => {
                r.mismatch(node, "cases", "an array of tables", "write each case as a `[[cases]]` table");
            }
        },
    }

    if !r.problems.is_empty() {
        let mut problems = r.problems;
        problems.sort_by_key(|p| p.span.start);
        return Err(problems);
    }
    let prompt_id = prompt_id
        .or_else(|| {
            prompt_file
                .as_ref()
                .and_then(|f| Path::new(f).file_stem())
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| name.to_string());
    Ok(Suite {
        name: name.to_string(),
        file: file.to_string(),
        prompt: prompt.unwrap_or_default(),
        prompt_id,
        prompt_version,
        dataset_version,
        cases,
    })
}

/// A prompt value names a file when it is one line without spaces or braces and has an extension.
fn looks_like_path(value: &str) -> bool {
    !value.is_empty()
        && !value.contains(|c: char| c.is_whitespace() || c == '{' || c == '}')
        && Path::new(value)
            .extension()
            .is_some_and(|e| !e.is_empty() && e.len() <= 8)
}

/// The prompt template and, when it came from a file, the file as written.
fn prompt(r: &mut Reader<'_>, table: &DeTable<'_>) -> (Option<String>, Option<String>) {
    let Some(node) = table.get("prompt") else {
        r.problem(
            0..0,
            "prompt",
            "the suite has no `prompt`",
            "add `prompt = \"support_reply.md\"` (a file beside the suite) or the prompt text inline, with \
             {placeholders} for the case inputs",
        );
        return (None, None);
    };
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

/// Reads the settings keys of `table` (`prefix` is the key path of the table, `""` at the top).
fn settings(r: &mut Reader<'_>, table: &DeTable<'_>, prefix: &str) -> Settings {
    let path = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    // Each setting is read where it is written, if it is.
    let text = |r: &mut Reader<'_>, key: &str, example: &str| {
        let node = table.get(key)?;
        string(r, node, &path(key), example)
    };
    let count = |r: &mut Reader<'_>, key: &str, min: u64, max: u64, meaning: &str| {
        let node = table.get(key)?;
        whole(r, node, &path(key), min, max, meaning).map(|n| n as u32)
    };
    let fraction = |r: &mut Reader<'_>, key: &str, ok: fn(f64) -> bool, allowed: &str| {
        let node = table.get(key)?;
        real(r, node, &path(key), ok, allowed)
    };
    let provider = text(r, "provider", "\"anthropic\"");
    let model = text(r, "model", "\"claude-haiku-4-5\"");
    let system = text(r, "system", "\"You are a support agent.\"");
    let max_tokens = count(
        r,
        "max_tokens",
        1,
        u64::from(u32::MAX),
        "the most tokens to generate",
    );
    let runs = count(r, "runs", 1, 10_000, "samples per case");
    let temperature = fraction(
        r,
        "temperature",
        |t| (0.0..=2.0).contains(&t),
        "a temperature from 0.0 to 2.0",
    );
    let pass_threshold = fraction(
        r,
        "pass_threshold",
        |t| t > 0.0 && t <= 1.0,
        "a share of runs above 0 and at most 1 (0.8 = 4 of 5 runs must pass)",
    );
    let min_score = fraction(
        r,
        "threshold",
        |t| (0.0..=1.0).contains(&t),
        "a score from 0 to 1 (the weight of passing assertions over all weights)",
    );
    let tools = table
        .get("tools")
        .and_then(|node| tool_specs(r, node, &path("tools")));
    let live_only = table
        .get("live_only")
        .and_then(|node| match node.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                r.problem(
                    node.span(),
                    &path("live_only"),
                    format!("expected `true` or `false`, found {}", a_type(other)),
                    "write `live_only = true` (without a recording the case is ignored, not run)",
                );
                None
            }
        });
    Settings {
        provider,
        model,
        max_tokens,
        temperature: temperature.map(|t| t as f32),
        system,
        runs,
        pass_threshold,
        min_score,
        tools,
        live_only,
    }
}

const TOOL_KEYS: [&str; 3] = ["name", "description", "input_schema"];

/// Reads `tools = [{ name = "...", description = "...", input_schema = { ... } }, ...]`: tools declared
/// to the model, which may call them; without an input schema a tool takes no arguments.
fn tool_specs(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<ToolSpec>> {
    let example = "write `tools = [{ name = \"get_weather\", description = \"...\", input_schema = { type = \"object\", \
                   properties = { city = { type = \"string\" } } } }]`";
    let DeValue::Array(items) = node.get_ref() else {
        r.mismatch(node, key, "an array of tool tables", example);
        return None;
    };
    let problems_before = r.problems.len();
    let mut specs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("{key}[{i}]");
        let DeValue::Table(table) = item.get_ref() else {
            r.mismatch(item, &path, "a tool table", example);
            continue;
        };
        for (k, _) in table.iter() {
            if !TOOL_KEYS.contains(&k.get_ref().as_ref()) {
                let name = k.get_ref().as_ref();
                unknown_key(r, k, &format!("{path}.{name}"), &TOOL_KEYS, "in a tool");
            }
        }
        let Some(name_node) = table.get("name") else {
            r.problem(
                item.span(),
                &format!("{path}.name"),
                "the tool has no name",
                example,
            );
            continue;
        };
        let Some(name) = string(r, name_node, &format!("{path}.name"), "\"get_weather\"") else {
            continue;
        };
        if specs.iter().any(|s: &ToolSpec| s.name == name) {
            r.problem(
                name_node.span(),
                &format!("{path}.name"),
                format!("a tool named `{name}` is already declared"),
                "give every tool a distinct name",
            );
        }
        let description = match table.get("description") {
            Some(n) => string(
                r,
                n,
                &format!("{path}.description"),
                "\"The current weather in a city\"",
            )
            .unwrap_or_default(),
            None => String::new(),
        };
        let input_schema = match table.get("input_schema") {
            None => serde_json::json!({"type": "object", "properties": {}}),
            Some(n) if matches!(n.get_ref(), DeValue::Table(_)) => {
                let key = format!("{path}.input_schema");
                match r.value(n, &key, "schema", "write the JSON schema as a TOML table") {
                    Some(v) => v,
                    None => continue,
                }
            }
            Some(n) => {
                r.mismatch(
                    n,
                    &format!("{path}.input_schema"),
                    "a JSON schema table",
                    "write `input_schema = { type = \"object\", properties = { ... } }`",
                );
                continue;
            }
        };
        specs.push(ToolSpec::new(name, description, input_schema));
    }
    (r.problems.len() == problems_before).then_some(specs)
}

#[allow(clippy::too_many_arguments)]
fn case(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    span: Range<usize>,
    path: &str,
    suite: &Settings,
    suite_asserts: &[Assertion],
    prompt: Option<&str>,
) -> Option<Case> {
    let problems_before = r.problems.len();
    unknown_keys(r, table, &CASE_KEYS, &format!("{path}."), "in a case");
    let name = match table.get("name") {
        None => {
            r.problem(
                span.clone(),
                &format!("{path}.name"),
                "the case has no name",
                "add `name = \"...\"` (the trial is `<suite>::<name>`)",
            );
            None
        }
        Some(node) => {
            let name = string(r, node, &format!("{path}.name"), "\"mentions_the_product\"");
            match name {
                Some(n) if n.trim().is_empty() || n.contains("::") || n.trim() != n => {
                    r.problem(
                        node.span(),
                        &format!("{path}.name"),
                        format!("{n:?} is not a usable case name"),
                        "use a non-empty name without `::` and without leading or trailing spaces",
                    );
                    None
                }
                n => n,
            }
        }
    };
    let category = table
        .get("category")
        .and_then(|n| string(r, n, &format!("{path}.category"), "\"billing\""));
    if let Some(node) = table.get("description") {
        string(r, node, &format!("{path}.description"), "\"...\"");
    }
    let skip = match table.get("skip") {
        None => None,
        Some(node) => match node.get_ref() {
            DeValue::String(s) if !s.trim().is_empty() => Some(s.to_string()),
            DeValue::Boolean(true) => Some("skipped in the suite".to_string()),
            DeValue::Boolean(false) => None,
            other => {
                r.problem(
                    node.span(),
                    &format!("{path}.skip"),
                    format!("expected the reason as a string, found {}", found(other)),
                    "write `skip = \"why it is skipped\"`",
                );
                None
            }
        },
    };
    let inputs_key = "inputs";
    let inputs_path = format!("{path}.{inputs_key}");
    let mut inputs = Vec::new();
    // Every key written, well-typed or not: a mistyped input is one problem, not also a missing one.
    let mut input_keys = Vec::new();
    if let Some(node) = table.get(inputs_key) {
        match node.get_ref() {
            DeValue::Table(values) => {
                for (key, value) in values.iter() {
                    let k = key.get_ref().to_string();
                    input_keys.push(k.clone());
                    match scalar_text(value.get_ref()) {
                        Some(v) => inputs.push((k, v)),
                        None => {
                            r.mismatch(value, &format!("{inputs_path}.{k}"), "a string", format!("write the value as text: `{k} = \"...\"` (it is pasted into the prompt)"));
                        }
                    }
                }
            }
            _ => {
                r.mismatch(
                    node,
                    &inputs_path,
                    "a table",
                    "write `inputs = { name = \"value\", ... }`",
                );
            }
        }
    }
    let mut asserts: Vec<Assertion> = suite_asserts.to_vec();
    if let Some(node) = table.get("assert") {
        asserts.extend(assert::parse_list(r, node, &format!("{path}.assert")));
    }
    let settings = settings(r, table, path).over(suite);

    let mut unused_inputs = Vec::new();
    if let Some(prompt) = prompt {
        let placeholders = crate::render::placeholders(prompt);
        // A skipped case does not run: its inputs may be incomplete until it is ready.
        if skip.is_none() {
            for p in &placeholders {
                if !input_keys.contains(p) {
                    let span = table.get(inputs_key).map_or_else(
                        || table.get("name").map_or(span.clone(), |n| n.span()),
                        |n| n.span(),
                    );
                    r.problem(
                        span,
                        &inputs_path,
                        format!("no input `{p}` for the placeholder {{{p}}} of the prompt"),
                        format!("add `{p} = \"...\"` to this case's inputs"),
                    );
                }
            }
        }
        unused_inputs = inputs
            .iter()
            .filter(|(k, _)| !placeholders.contains(k))
            .map(|(k, _)| k.clone())
            .collect();
    }
    if r.problems.len() > problems_before {
        return None;
    }
    Some(Case {
        name: name?,
        category,
        inputs,
        asserts,
        skip,
        settings,
        unused_inputs,
    })
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
