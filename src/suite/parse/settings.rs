//! The settings of a suite or a case (provider, model, sampling, thresholds, tools): their keys,
//! how each is read, and how a case's settings fill in from the suite's.

use toml::de::{DeTable, DeValue};

use crate::case::Written;
use crate::completion::ToolSpec;
use crate::config::{Defaults, MAX_SEED, SamplingError, SamplingKeys};
use crate::model::Subject;
use crate::spanned::{Node, Reader, a_type, real, string, unknown_key, whole};

/// Sampling and scoring settings, at suite level or overridden by a case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The request: provider, model, system prompt, `max_tokens`, temperature, tools.
    pub request: Written,
    /// Samples per case and what decides them: `runs`, `pass_threshold`, `early_stop`, and adaptive
    /// sampling's `pass_rate`, `confidence`, `max_runs`, `indifference`.
    pub sampling: SamplingKeys,
    /// Where each sampling key was written (`file:line`), for the problems found once `[defaults]`
    /// fill the gaps.
    pub sampling_at: Vec<(&'static str, String)>,
    /// The score a sample needs (weights of passing assertions over all weights): the key `threshold`,
    /// named apart from `pass_threshold`, a share of samples.
    pub min_score: Option<f64>,
    /// Meant only for live runs: without a recording the case is ignored ("live only, not run").
    pub live_only: Option<bool>,
    /// The subjects of a model matrix (`models = ["provider/model", ...]`): one trial each.
    pub models: Option<Vec<Subject>>,
}

impl Settings {
    /// These settings, each unset one taken from `base`.
    pub fn over(&self, base: &Settings) -> Settings {
        Settings {
            request: self.request.over(&base.request),
            sampling: self.sampling.over(&base.sampling),
            sampling_at: self
                .sampling_at
                .iter()
                .chain(&base.sampling_at)
                .cloned()
                .collect(),
            min_score: self.min_score.or(base.min_score),
            live_only: self.live_only.or(base.live_only),
            models: self.models.clone().or_else(|| base.models.clone()),
        }
    }
}

/// The keys of the settings, valid at the top of a suite and in a case.
pub(super) const SETTING_KEYS: [&str; 17] = [
    "provider",
    "model",
    "max_tokens",
    "temperature",
    "seed",
    "system",
    "runs",
    "pass_threshold",
    "early_stop",
    "pass_rate",
    "confidence",
    "max_runs",
    "indifference",
    "threshold",
    "tools",
    "live_only",
    "models",
];

/// The sampling keys, as `SamplingError::key` names them.
const SAMPLING_KEYS: [&str; 7] = [
    "runs",
    "pass_threshold",
    "early_stop",
    "pass_rate",
    "confidence",
    "max_runs",
    "indifference",
];

/// Reads the settings keys of `table` (`prefix` is the key path of the table, `""` at the top).
pub(super) fn settings(r: &mut Reader<'_>, table: &DeTable<'_>, prefix: &str) -> Settings {
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
    let boolean = |r: &mut Reader<'_>, key: &str, fix: &str| {
        let node = table.get(key)?;
        match node.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                let found = format!("expected `true` or `false`, found {}", a_type(other));
                r.problem(node.span(), &path(key), found, fix);
                None
            }
        }
    };
    let live_only = boolean(
        r,
        "live_only",
        "write `live_only = true` (without a recording the case is ignored, not run)",
    );
    let early_stop = boolean(
        r,
        "early_stop",
        "write `early_stop = true` (samples are sent only while the verdict can still change)",
    );
    let seed = count(
        r,
        "seed",
        0,
        u64::from(MAX_SEED),
        "the seed of run 1; run k sends seed + k - 1",
    );
    let pass_rate = fraction(
        r,
        "pass_rate",
        |p| p > 0.0 && p < 1.0,
        "a pass rate above 0 and below 1, e.g. 0.8 (adaptive sampling: is the pass rate above it?)",
    );
    let confidence = fraction(
        r,
        "confidence",
        |c| (0.5..1.0).contains(&c),
        "a confidence from 0.5 to below 1, e.g. 0.95 (the test is wrong at most 5% of the time)",
    );
    let indifference = fraction(
        r,
        "indifference",
        |d| d > 0.0 && d < 0.5,
        "a half-width above 0 and below 0.5, e.g. 0.05 (pass rates within it of pass_rate may go either way)",
    );
    let max_runs = count(
        r,
        "max_runs",
        1,
        10_000,
        "the most samples adaptive sampling takes",
    );
    let sampling = SamplingKeys {
        runs,
        pass_threshold,
        early_stop,
        pass_rate,
        confidence,
        max_runs,
        indifference,
    };
    // Keys written together that contradict each other; the rest is checked once `[defaults]` fill in.
    if let Some(problem) = sampling.conflict() {
        let key = problem.key();
        let span = table.get(key).map_or(0..0, |n| n.span());
        let fix = match problem {
            SamplingError::Both(_) => {
                "keep either `runs` / `pass_threshold` (a fixed number of samples) or `pass_rate` (adaptive sampling)"
            }
            _ => "remove it",
        };
        r.problem(span, &path(key), problem.to_string(), fix);
    }
    let sampling_at = SAMPLING_KEYS
        .iter()
        .filter_map(|&key| Some((key, r.at(&table.get(key)?.span()))))
        .collect();
    let models = table
        .get("models")
        .and_then(|node| subjects(r, node, &path("models")));
    if models.is_some() {
        for key in ["provider", "model"] {
            if let Some(node) = table.get(key) {
                r.problem(
                    node.span(),
                    &path(key),
                    format!("`{key}` and `models` are both set here"),
                    "keep `models = [\"provider/model\", ...]` for a model matrix, or `provider` and `model` for one model",
                );
            }
        }
    }
    Settings {
        request: Written {
            call: Defaults {
                provider,
                model,
                max_tokens,
                temperature: temperature.map(|t| t as f32),
                seed,
            },
            system,
            tools,
        },
        sampling,
        sampling_at,
        min_score,
        live_only,
        models,
    }
}

/// Reads `models = ["provider/model", ...]`: at least one, each split at its first `/`, none twice.
fn subjects(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<Subject>> {
    let example =
        "write `models = [\"anthropic/claude-haiku-4-5\", \"local/SmolLM2-135M-Instruct\"]`";
    let DeValue::Array(items) = node.get_ref() else {
        r.mismatch(node, key, "an array of `provider/model` strings", example);
        return None;
    };
    if items.is_empty() {
        r.problem(node.span(), key, format!("`{key}` is empty"), example);
        return None;
    }
    let problems_before = r.problems.len();
    let mut subjects: Vec<Subject> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("{key}[{i}]");
        let Some(text) = string(r, item, &path, "\"anthropic/claude-haiku-4-5\"") else {
            continue;
        };
        match text.parse::<Subject>() {
            Ok(s) if subjects.contains(&s) => {
                r.problem(
                    item.span(),
                    &path,
                    format!("{s} is listed twice"),
                    "keep one",
                );
            }
            Ok(s) => subjects.push(s),
            Err(e) => r.problem(
                item.span(),
                &path,
                format!("{:?} is not `provider/model`: {}", e.value, e.problem),
                example,
            ),
        }
    }
    (r.problems.len() == problems_before).then_some(subjects)
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
