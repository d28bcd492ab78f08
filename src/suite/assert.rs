//! Suite assertions: parsing `{ kind = value, weight = w }` tables, checking them against a
//! [`PromptRun`], and scoring a case.

use std::sync::Arc;

use regex::Regex;
use toml::de::DeValue;

use crate::harness::outcome::SampleOutcome;
use crate::harness::record::shorten;
use crate::run::PromptRun;
use crate::spanned::{Node, Reader, did_you_mean, found, real, string, whole};

/// A custom assertion, registered from Rust with [`register_assertion!`](crate::register_assertion)
/// and used in a suite as `{ <name> = <value> }`.
pub struct CustomAssertion {
    /// The key that names it in a suite.
    pub name: &'static str,
    /// Checks a run against the value written in the suite; `Err` says why it failed.
    pub check: fn(&PromptRun, &toml::Value) -> Result<(), String>,
}

inventory::collect!(CustomAssertion);

/// Registers a custom suite assertion: `register_assertion!("name", check)` where `check` is a
/// `fn(&PromptRun, &toml::Value) -> Result<(), String>` (the value is what the suite wrote after the name).
///
/// ```no_run
/// use prompt_tester::{PromptRun, toml};
///
/// // In a suite: assert = [{ min_sentences = 2 }]
/// fn min_sentences(run: &PromptRun, value: &toml::Value) -> Result<(), String> {
///     let want = value.as_integer().ok_or("min_sentences needs a whole number")? as usize;
///     let seen = run.output.matches(['.', '!', '?']).count();
///     if seen >= want { Ok(()) } else { Err(format!("expected at least {want} sentences, saw {seen}")) }
/// }
/// prompt_tester::register_assertion!("min_sentences", min_sentences);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! register_assertion {
    ($name:expr, $check:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::__private::CustomAssertion { name: $name, check: $check }
        }
    };
}

/// The built-in assertion kinds, in documentation order.
pub const BUILT_IN: [&str; 16] = [
    "contains",
    "not_contains",
    "icontains",
    "regex",
    "equals",
    "starts_with",
    "ends_with",
    "is_json",
    "json_schema",
    "max_latency",
    "max_cost",
    "max_tokens",
    "max_words",
    "tool_called",
    "not_tool_called",
    "judge",
];

/// The registered custom assertion called `name`. A name used twice, or a built-in name, is reported
/// by [`registry_conflicts`]; lookups take the first.
fn custom(name: &str) -> Option<&'static CustomAssertion> {
    if BUILT_IN.contains(&name) || name == "weight" {
        return None;
    }
    inventory::iter::<CustomAssertion>
        .into_iter()
        .find(|c| c.name == name)
}

/// Names of registered custom assertions, sorted.
pub fn custom_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = inventory::iter::<CustomAssertion>
        .into_iter()
        .map(|c| c.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Custom assertions that cannot be used: a built-in name, `weight`, or registered twice.
pub fn registry_conflicts() -> Vec<String> {
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for c in inventory::iter::<CustomAssertion> {
        *seen.entry(c.name).or_default() += 1;
    }
    seen.into_iter()
        .filter_map(|(name, n)| {
            if BUILT_IN.contains(&name) || name == "weight" {
                Some(format!("custom assertion `{name}` has the name of a built-in key: rename it"))
            } else if n > 1 {
                Some(format!("custom assertion `{name}` is registered {n} times: keep one register_assertion!"))
            } else {
                None
            }
        })
        .collect()
}

/// What one assertion checks.
#[derive(Clone)]
pub enum Check {
    /// Every string appears in the output.
    Contains(Vec<String>),
    /// No string appears in the output.
    NotContains(Vec<String>),
    /// Every string appears, ignoring case.
    IContains(Vec<String>),
    /// Every pattern matches (multi-line mode: `^` and `$` match at line ends).
    Regex(Vec<Regex>),
    /// The stripped output equals the text.
    Equals(String),
    /// The stripped output starts with the text.
    StartsWith(String),
    /// The stripped output ends with the text.
    EndsWith(String),
    /// The stripped output is (`true`) or is not (`false`) JSON.
    IsJson(bool),
    /// The stripped output is JSON valid under the schema.
    JsonSchema(Arc<jsonschema::Validator>),
    /// Latency in seconds at most.
    MaxLatency(f64),
    /// Cost in USD at most (passes when the price is unknown).
    MaxCost(f64),
    /// Completion tokens at most.
    MaxTokens(u64),
    /// Words (whitespace-separated) at most.
    MaxWords(u64),
    /// The model called the tool, with arguments containing these (any arguments when `None`).
    ToolCalled {
        /// The tool's name.
        name: String,
        /// A JSON subset the arguments of one call must contain.
        arguments: Option<serde_json::Value>,
    },
    /// The model called none of these tools.
    NotToolCalled(Vec<String>),
    /// The judge answers yes to the requirement.
    Judge(String),
    /// A registered custom assertion with its value.
    Custom(&'static CustomAssertion, toml::Value),
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl Check {
    /// The key that names this kind in a suite.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Contains(_) => "contains",
            Check::NotContains(_) => "not_contains",
            Check::IContains(_) => "icontains",
            Check::Regex(_) => "regex",
            Check::Equals(_) => "equals",
            Check::StartsWith(_) => "starts_with",
            Check::EndsWith(_) => "ends_with",
            Check::IsJson(_) => "is_json",
            Check::JsonSchema(_) => "json_schema",
            Check::MaxLatency(_) => "max_latency",
            Check::MaxCost(_) => "max_cost",
            Check::MaxTokens(_) => "max_tokens",
            Check::MaxWords(_) => "max_words",
            Check::ToolCalled { .. } => "tool_called",
            Check::NotToolCalled(_) => "not_tool_called",
            Check::Judge(_) => "judge",
            Check::Custom(c, _) => c.name,
        }
    }
}

/// One assertion of a case.
#[derive(Debug, Clone)]
pub struct Assertion {
    /// What it checks.
    pub check: Check,
    /// Its weight in the score (1 by default).
    pub weight: f64,
    /// `file:line` where it is written.
    pub at: String,
}

/// Parses an `assert = [ ... ]` array.
pub(crate) fn parse_list(r: &mut Reader<'_>, node: &Node<'_>, path: &str) -> Vec<Assertion> {
    match node.get_ref() {
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| parse_one(r, item, &format!("{path}[{i}]")))
            .collect(),
        DeValue::Table(_) => parse_one(r, node, path).into_iter().collect(),
        _ => {
            r.mismatch(
                node,
                path,
                "an array of assertions",
                "write `assert = [{ contains = \"...\" }, { max_words = 50 }]`",
            );
            Vec::new()
        }
    }
}

fn valid_kinds() -> String {
    let custom = custom_names();
    let mut list = BUILT_IN.join(", ");
    if !custom.is_empty() {
        list.push_str(&format!("; custom: {}", custom.join(", ")));
    }
    list
}

fn parse_one(r: &mut Reader<'_>, node: &Node<'_>, path: &str) -> Option<Assertion> {
    let DeValue::Table(table) = node.get_ref() else {
        r.mismatch(
            node,
            path,
            "an assertion table",
            "write each assertion as `{ kind = value }`, e.g. `{ contains = \"refund\" }`",
        );
        return None;
    };
    let mut weight = 1.0;
    let mut kinds = Vec::new();
    for (key, value) in table.iter() {
        let k = key.get_ref().as_ref();
        if k == "weight" {
            weight = real(
                r,
                value,
                &format!("{path}.weight"),
                |w| w >= 0.0,
                "a weight of 0 or more (1 by default)",
            )?;
        } else if BUILT_IN.contains(&k) || custom(k).is_some() {
            kinds.push((key, value));
        } else {
            let all: Vec<&str> = BUILT_IN.iter().copied().chain(custom_names()).collect();
            let fix = match did_you_mean(k, all.iter().copied()) {
                Some(close) => format!(
                    "did you mean `{close}`? Valid assertions: {}",
                    valid_kinds()
                ),
                None => format!(
                    "use one of: {} (custom ones are registered with register_assertion!)",
                    valid_kinds()
                ),
            };
            r.problem(
                key.span(),
                &format!("{path}.{k}"),
                format!("unknown assertion `{k}`"),
                fix,
            );
            return None;
        }
    }
    let (key, value) = match kinds.as_slice() {
        [one] => *one,
        [] => {
            r.problem(
                node.span(),
                path,
                "the table names no assertion",
                format!("add one of: {}", valid_kinds()),
            );
            return None;
        }
        [_, second, ..] => {
            let names: Vec<&str> = kinds.iter().map(|(k, _)| k.get_ref().as_ref()).collect();
            r.problem(
                second.0.span(),
                path,
                format!("one table holds several assertions ({})", names.join(", ")),
                "write one assertion per table: `[{ contains = \"a\" }, { max_words = 50 }]`",
            );
            return None;
        }
    };
    let kind = key.get_ref().as_ref();
    let key_path = format!("{path}.{kind}");
    let check = check(r, kind, value, &key_path)?;
    Some(Assertion {
        check,
        weight,
        at: r.at(&node.span()),
    })
}

/// A string, or a non-empty array of strings.
fn strings(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<String>> {
    let example = format!(
        "write `{key} = \"text\"` or `{key} = [\"one\", \"two\"]`",
        key = key.rsplit('.').next().unwrap_or(key)
    );
    match node.get_ref() {
        DeValue::String(s) => Some(vec![s.to_string()]),
        DeValue::Array(items) if !items.is_empty() => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item.get_ref() {
                    DeValue::String(s) => out.push(s.to_string()),
                    _ => {
                        r.mismatch(item, &format!("{key}[{i}]"), "a string", example.clone());
                        return None;
                    }
                }
            }
            Some(out)
        }
        DeValue::Array(_) => {
            r.problem(node.span(), key, "the list is empty", example);
            None
        }
        _ => {
            r.mismatch(node, key, "a string or a list of strings", example);
            None
        }
    }
}

fn check(r: &mut Reader<'_>, kind: &str, node: &Node<'_>, key: &str) -> Option<Check> {
    Some(match kind {
        "contains" => Check::Contains(strings(r, node, key)?),
        "not_contains" => Check::NotContains(strings(r, node, key)?),
        "icontains" => Check::IContains(strings(r, node, key)?),
        "regex" => {
            let patterns = strings(r, node, key)?;
            let mut regexes = Vec::new();
            for p in patterns {
                match regex::RegexBuilder::new(&p).multi_line(true).build() {
                    Ok(re) => regexes.push(re),
                    Err(e) => {
                        let text = e.to_string();
                        let last = text.lines().last().unwrap_or_default().trim();
                        let why = last.strip_prefix("error: ").unwrap_or(last).to_string();
                        r.problem(
                            node.span(),
                            key,
                            format!("invalid regex {p:?}: {why}"),
                            "correct the pattern (Rust regex syntax; in a TOML basic string a backslash is written \
                             `\\\\`, or use a literal string: '\\d+')",
                        );
                        return None;
                    }
                }
            }
            Check::Regex(regexes)
        }
        "equals" => Check::Equals(string(r, node, key, "\"the exact answer\"")?),
        "starts_with" => Check::StartsWith(string(r, node, key, "\"Dear\"")?),
        "ends_with" => Check::EndsWith(string(r, node, key, "\"Regards.\"")?),
        "is_json" => match node.get_ref() {
            DeValue::Boolean(b) => Check::IsJson(*b),
            _ => {
                r.mismatch(
                    node,
                    key,
                    "true or false",
                    "write `is_json = true` (or false: the output must not be JSON)",
                );
                return None;
            }
        },
        "json_schema" => Check::JsonSchema(Arc::new(schema(r, node, key)?)),
        "max_latency" => Check::MaxLatency(real(
            r,
            node,
            key,
            |x| x > 0.0,
            "a number of seconds above 0, e.g. `max_latency = 5`",
        )?),
        "max_cost" => Check::MaxCost(real(
            r,
            node,
            key,
            |x| x >= 0.0,
            "a cost in USD of 0 or more, e.g. `max_cost = 0.01`",
        )?),
        "max_tokens" => {
            Check::MaxTokens(whole(r, node, key, 0, u64::MAX >> 1, "completion tokens")?)
        }
        "max_words" => Check::MaxWords(whole(
            r,
            node,
            key,
            0,
            u64::MAX >> 1,
            "words in the output",
        )?),
        "tool_called" => tool_called(r, node, key)?,
        "not_tool_called" => Check::NotToolCalled(strings(r, node, key)?),
        "judge" => {
            let requirement = string(r, node, key, "\"The reply is polite.\"")?;
            if requirement.trim().is_empty() {
                r.problem(
                    node.span(),
                    key,
                    "the requirement is empty",
                    "write what the judge must confirm: `judge = \"The reply is polite.\"`",
                );
                return None;
            }
            Check::Judge(requirement)
        }
        name => {
            let custom = custom(name)?;
            let value = r.value(node, key, "value", "write a plain TOML value")?;
            Check::Custom(custom, value)
        }
    })
}

/// `tool_called = "name"`, or `tool_called = { name = "name", arguments = { ... } }` where the arguments
/// are a subset one call's arguments must contain.
fn tool_called(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Check> {
    let example = "write `tool_called = \"get_weather\"` or `tool_called = { name = \"get_weather\", arguments = \
                   { city = \"Paris\" } }`";
    match node.get_ref() {
        DeValue::String(name) if !name.trim().is_empty() => Some(Check::ToolCalled {
            name: name.to_string(),
            arguments: None,
        }),
        DeValue::Table(table) => {
            for (k, _) in table.iter() {
                let name = k.get_ref().as_ref();
                if name != "name" && name != "arguments" {
                    r.problem(
                        k.span(),
                        &format!("{key}.{name}"),
                        format!("unknown key `{name}`"),
                        format!("the keys are `name` and `arguments`: {example}"),
                    );
                    return None;
                }
            }
            let Some(name_node) = table.get("name") else {
                r.problem(node.span(), key, "the tool has no name", example);
                return None;
            };
            let name = string(r, name_node, &format!("{key}.name"), "\"get_weather\"")?;
            let arguments = match table.get("arguments") {
                None => None,
                Some(args) => {
                    let key = format!("{key}.arguments");
                    Some(r.value::<serde_json::Value>(args, &key, "arguments", example)?)
                }
            };
            Some(Check::ToolCalled { name, arguments })
        }
        other => {
            r.problem(
                node.span(),
                key,
                format!("expected a tool name or a table, found {}", found(other)),
                example,
            );
            None
        }
    }
}

/// A JSON schema written inline as a TOML table, or the path of a JSON file beside the suite.
fn schema(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<jsonschema::Validator> {
    let json = match node.get_ref() {
        DeValue::Table(_) => {
            let fix = "write the schema as a TOML table of JSON values";
            r.value::<serde_json::Value>(node, key, "schema", fix)?
        }
        DeValue::String(file) => {
            let fix = "create the JSON schema file beside the suite, correct the path, or write the schema \
                       inline as a table";
            let (text, path) = r.read_beside(node, key, file, "schema", fix)?;
            match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    r.problem(
                        node.span(),
                        key,
                        format!(
                            "schema file `{file}` is not JSON: {} at {}:{}:{}",
                            e,
                            path.display(),
                            e.line(),
                            e.column()
                        ),
                        "correct the JSON in the schema file",
                    );
                    return None;
                }
            }
        }
        _ => {
            r.mismatch(node, key, "a schema table or a file name", "write `json_schema = { type = \"object\", required = [\"answer\"] }` or `json_schema = \"schema.json\"`");
            return None;
        }
    };
    match jsonschema::validator_for(&json) {
        Ok(v) => Some(v),
        Err(e) => {
            r.problem(
                node.span(),
                key,
                format!("invalid JSON schema: {e}"),
                "correct the schema (JSON Schema draft 2020-12 unless `$schema` says otherwise)",
            );
            None
        }
    }
}

/// The outcome of one assertion on one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether it passed.
    pub passed: bool,
    /// Why it failed (kind, expected, seen), or a note on a pass (an unknown price).
    pub detail: Option<String>,
}

impl Verdict {
    fn pass() -> Self {
        Self {
            passed: true,
            detail: None,
        }
    }

    fn fail(kind: &str, expected: impl std::fmt::Display, seen: impl std::fmt::Display) -> Self {
        Self {
            passed: false,
            detail: Some(format!("{kind}: expected {expected}; saw {seen}")),
        }
    }
}

const SEEN: usize = 160;

/// The output, shortened, quoted and escaped onto one line.
fn seen(output: &str) -> String {
    format!("{:?}", shorten(output, SEEN))
}

/// The end of the output, shortened from the front.
fn seen_tail(output: &str) -> String {
    let output = output.trim();
    let n = output.chars().count();
    if n <= SEEN {
        return format!("{output:?}");
    }
    let tail: String = output.chars().skip(n - (SEEN - 1)).collect();
    format!("\"…{}", &format!("{tail:?}")[1..])
}

/// Around the first occurrence of `needle` (a byte range of `output`).
fn seen_around(output: &str, start: usize, end: usize) -> String {
    let before: String = output[..start]
        .chars()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let after: String = output[end..].chars().take(40).collect();
    let lead = if before.len() < start { "…" } else { "" };
    let trail = if after.len() < output.len() - end {
        "…"
    } else {
        ""
    };
    format!(
        "{:?}",
        format!("{lead}{before}{}{after}{trail}", &output[start..end])
    )
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tool calls of a run; with `expected = (name, arguments)`, the calls of `name` say why their
/// arguments do not contain `arguments`.
fn calls_seen(run: &PromptRun, expected: Option<(&str, &serde_json::Value)>) -> String {
    if run.tool_calls.is_empty() {
        return format!("no tool call; the output: {}", seen(&run.output));
    }
    let calls: Vec<String> = run
        .tool_calls
        .iter()
        .map(|c| {
            let why = expected
                .filter(|(name, _)| *name == c.name)
                .and_then(|(_, e)| crate::tools::json_mismatch(e, &c.arguments))
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            shorten(&format!("{}({}){why}", c.name, c.arguments), SEEN)
        })
        .collect();
    calls.join(", ")
}

fn words(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Checks one assertion other than `judge` (which needs the judge; see [`evaluate`]).
pub fn check_sync(check: &Check, run: &PromptRun) -> Verdict {
    let out = run.output.as_str();
    let stripped = out.trim();
    match check {
        Check::Contains(needles) => {
            let missing: Vec<String> = needles
                .iter()
                .filter(|n| !out.contains(n.as_str()))
                .cloned()
                .collect();
            if missing.is_empty() {
                return Verdict::pass();
            }
            let expected = if needles.len() == 1 {
                format!("the output to contain {}", quoted_list(needles))
            } else {
                format!(
                    "the output to contain all of {} (missing {})",
                    quoted_list(needles),
                    quoted_list(&missing)
                )
            };
            Verdict::fail("contains", expected, seen(out))
        }
        Check::IContains(needles) => {
            let lower = out.to_lowercase();
            let missing: Vec<String> = needles
                .iter()
                .filter(|n| !lower.contains(&n.to_lowercase()))
                .cloned()
                .collect();
            if missing.is_empty() {
                return Verdict::pass();
            }
            Verdict::fail(
                "icontains",
                format!(
                    "the output to contain {} ignoring case (missing {})",
                    quoted_list(needles),
                    quoted_list(&missing)
                ),
                seen(out),
            )
        }
        Check::NotContains(needles) => match needles
            .iter()
            .find_map(|n| out.find(n.as_str()).map(|i| (n, i)))
        {
            None => Verdict::pass(),
            Some((needle, i)) => Verdict::fail(
                "not_contains",
                format!("the output not to contain {}", quoted_list(needles)),
                format!(
                    "{needle:?} at character {}: {}",
                    out[..i].chars().count() + 1,
                    seen_around(out, i, i + needle.len())
                ),
            ),
        },
        Check::Regex(regexes) => match regexes.iter().find(|re| !re.is_match(out)) {
            None => Verdict::pass(),
            Some(re) => Verdict::fail("regex", format!("a match for /{}/", re.as_str()), seen(out)),
        },
        Check::Equals(expected) => {
            if stripped == expected.trim() {
                Verdict::pass()
            } else {
                Verdict::fail(
                    "equals",
                    format!(
                        "exactly {:?} (output stripped of surrounding whitespace)",
                        expected.trim()
                    ),
                    seen(out),
                )
            }
        }
        Check::StartsWith(prefix) => {
            if stripped.starts_with(prefix.as_str()) {
                Verdict::pass()
            } else {
                Verdict::fail(
                    "starts_with",
                    format!("the output to start with {prefix:?}"),
                    seen(out),
                )
            }
        }
        Check::EndsWith(suffix) => {
            if stripped.ends_with(suffix.as_str()) {
                Verdict::pass()
            } else {
                Verdict::fail(
                    "ends_with",
                    format!("the output to end with {suffix:?}"),
                    seen_tail(out),
                )
            }
        }
        Check::IsJson(want) => match (serde_json::from_str::<serde_json::Value>(stripped), want) {
            (Ok(_), true) | (Err(_), false) => Verdict::pass(),
            (Ok(_), false) => Verdict::fail(
                "is_json",
                "output that is not JSON",
                format!("valid JSON: {}", seen(out)),
            ),
            (Err(e), true) => {
                let fence = if stripped.starts_with("```") {
                    " (the JSON is wrapped in a ``` code fence)"
                } else {
                    ""
                };
                Verdict::fail(
                    "is_json",
                    "the output to be JSON",
                    format!("{e}{fence}: {}", seen(out)),
                )
            }
        },
        Check::JsonSchema(validator) => match serde_json::from_str::<serde_json::Value>(stripped) {
            Err(e) => Verdict::fail(
                "json_schema",
                "JSON that follows the schema",
                format!("output that is not JSON ({e}): {}", seen(out)),
            ),
            Ok(value) => {
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .take(3)
                    .map(|e| {
                        let at = e.instance_path.as_str();
                        if at.is_empty() {
                            e.to_string()
                        } else {
                            format!("{at}: {e}")
                        }
                    })
                    .collect();
                if errors.is_empty() {
                    Verdict::pass()
                } else {
                    Verdict::fail(
                        "json_schema",
                        "JSON that follows the schema",
                        format!("{} in {}", errors.join("; "), seen(out)),
                    )
                }
            }
        },
        Check::MaxLatency(max) => {
            let secs = run.latency.as_secs_f64();
            if secs <= *max {
                Verdict::pass()
            } else {
                let recorded = if run.replayed {
                    " (recorded latency)"
                } else {
                    ""
                };
                Verdict::fail(
                    "max_latency",
                    format!("at most {max}s"),
                    format!("{secs:.3}s{recorded}"),
                )
            }
        }
        Check::MaxCost(max) => match run.cost_usd {
            Some(cost) if cost <= *max => Verdict::pass(),
            Some(cost) => {
                Verdict::fail("max_cost", format!("at most ${max}"), format!("${cost:.6}"))
            }
            None => Verdict {
                passed: true,
                detail: Some(format!(
                    "max_cost: passed without a check: the price of {} is unknown (add [prices.\"{}\"] to \
                     prompt-tester.toml, or `free = true` to [providers.{}] if it is self-hosted)",
                    run.model, run.model, run.provider
                )),
            },
        },
        Check::MaxTokens(max) => {
            if run.output_tokens <= *max {
                Verdict::pass()
            } else {
                Verdict::fail(
                    "max_tokens",
                    format!("at most {max} completion token{}", words(*max)),
                    format!("{}", run.output_tokens),
                )
            }
        }
        Check::MaxWords(max) => {
            let n = out.split_whitespace().count() as u64;
            if n <= *max {
                Verdict::pass()
            } else {
                Verdict::fail(
                    "max_words",
                    format!("at most {max} word{}", words(*max)),
                    format!("{n} words: {}", seen(out)),
                )
            }
        }
        Check::ToolCalled { name, arguments } => {
            match crate::tools::check_tool_called(&run.tool_calls, name, arguments.as_ref()) {
                Ok(_) => Verdict::pass(),
                Err(_) => {
                    let expected = match arguments {
                        Some(args) => {
                            format!("a call of `{name}` with arguments containing {args}")
                        }
                        None => format!("a call of `{name}`"),
                    };
                    Verdict::fail(
                        "tool_called",
                        expected,
                        calls_seen(run, arguments.as_ref().map(|a| (name.as_str(), a))),
                    )
                }
            }
        }
        Check::NotToolCalled(names) => {
            match names
                .iter()
                .find_map(|n| crate::tools::check_not_tool_called(&run.tool_calls, n).err())
            {
                None => Verdict::pass(),
                Some(_) => Verdict::fail(
                    "not_tool_called",
                    format!("no call of {}", quoted_list(names)),
                    calls_seen(run, None),
                ),
            }
        }
        Check::Judge(_) => Verdict {
            passed: false,
            detail: Some("judge: not asked".to_string()),
        },
        Check::Custom(custom, value) => {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (custom.check)(run, value)
            }));
            match outcome {
                Ok(Ok(())) => Verdict::pass(),
                Ok(Err(why)) => Verdict {
                    passed: false,
                    detail: Some(format!(
                        "{}: {why} (value {value}); saw {}",
                        custom.name,
                        seen(out)
                    )),
                },
                Err(_) => Verdict {
                    passed: false,
                    detail: Some(format!(
                        "{}: the custom assertion panicked (value {value})",
                        custom.name
                    )),
                },
            }
        }
    }
}

/// Checks every assertion of a case on one run and scores it: passed when every assertion passes, or,
/// with a `threshold`, when the weight of the passing ones over all weights reaches it. The judge is
/// asked once for all `judge` assertions (one call), and not at all when the case has already failed.
/// A judge that gives no verdict (or cannot be asked) errors the sample whatever the weights: that
/// says nothing about the output.
pub async fn evaluate(
    asserts: &[Assertion],
    threshold: Option<f64>,
    run: &PromptRun,
) -> SampleOutcome {
    let mut verdicts: Vec<Option<Verdict>> = asserts
        .iter()
        .map(|a| (!matches!(a.check, Check::Judge(_))).then(|| check_sync(&a.check, run)))
        .collect();
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    let sync_failed = verdicts.iter().flatten().any(|v| !v.passed);
    let best: f64 = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.as_ref().is_none_or(|v| v.passed))
        .map(|(a, _)| a.weight)
        .sum();
    let decided = match threshold {
        None => sync_failed,
        Some(t) => total > 0.0 && best / total + 1e-9 < t,
    };
    let questions: Vec<(usize, &str)> = asserts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match &a.check {
            Check::Judge(q) => Some((i, q.as_str())),
            _ => None,
        })
        .collect();
    if !questions.is_empty() {
        if decided {
            for (i, _) in &questions {
                verdicts[*i] = Some(Verdict {
                    passed: false,
                    detail: Some("judge: not asked, the case fails anyway".into()),
                });
            }
        } else {
            let asked: Vec<&str> = questions.iter().map(|(_, q)| *q).collect();
            let answers = match run.ask_all(&asked).await {
                Ok(answers) => answers,
                Err(e) => return SampleOutcome::Errored(format!("judge: {e}")),
            };
            for ((i, q), verdict) in questions.iter().zip(answers) {
                verdicts[*i] = Some(if verdict.passed {
                    Verdict::pass()
                } else {
                    let reasoning = verdict
                        .reasoning
                        .unwrap_or_else(|| "no reasoning given".into());
                    let snippet = verdict
                        .snippet
                        .map(|s| format!(" (snippet {:?})", shorten(&s, 120)))
                        .unwrap_or_default();
                    Verdict::fail(
                        "judge",
                        format!("the judge to confirm {q:?}"),
                        format!(
                            "{:?}: {}{snippet}",
                            verdict.answer,
                            shorten(&reasoning, 400)
                        ),
                    )
                });
            }
        }
    }

    let verdicts: Vec<Verdict> = verdicts
        .into_iter()
        .map(|v| v.unwrap_or_else(Verdict::pass))
        .collect();
    let passed_weight: f64 = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| v.passed)
        .map(|(a, _)| a.weight)
        .sum();
    let failed: Vec<String> = asserts
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| !v.passed)
        .map(|(a, v)| format!("{}: {}", a.at, v.detail.clone().unwrap_or_default()))
        .collect();
    let score = if total > 0.0 {
        passed_weight / total
    } else {
        1.0
    };
    let ok = match threshold {
        None => failed.is_empty(),
        Some(t) => score + 1e-9 >= t,
    };
    if ok {
        return SampleOutcome::Passed;
    }
    let head = match threshold {
        None => format!(
            "{} of {} assertion{} failed:",
            failed.len(),
            asserts.len(),
            if asserts.len() == 1 { "" } else { "s" }
        ),
        Some(t) => format!(
            "score {score:.2} is below the threshold {t} ({} of {} assertions failed; weight {passed_weight} of {total} passed):",
            failed.len(),
            asserts.len()
        ),
    };
    let notes: Vec<String> = verdicts
        .iter()
        .filter(|v| v.passed)
        .filter_map(|v| v.detail.clone())
        .collect();
    let mut lines = vec![head];
    lines.extend(failed.into_iter().map(|f| format!("- {f}")));
    lines.extend(notes.into_iter().map(|n| format!("note: {n}")));
    SampleOutcome::Failed(lines.join("\n"))
}
