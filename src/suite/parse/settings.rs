//! The settings of a suite or a case (provider, model, sampling, thresholds, tools): their keys,
//! how each is read, and how a case's settings fill in from the suite's.

use prompt_tester_keys::sampling::{EvenJudgeSamples, SAMPLING_KEYS};
use prompt_tester_keys::{Key, Place};
use toml::de::{DeTable, DeValue};

use crate::case::Written;
use crate::completion::ToolSpec;
use crate::config::{Defaults, SamplingKeys, SamplingProblem};
use crate::mcp::McpServer;
use crate::model::Subject;
use crate::spanned::{Node, Reader, a_type, real, string, whole};

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
    pub sampling_at: Vec<(Key, String)>,
    /// The score a sample needs (weights of passing assertions over all weights): the key `threshold`,
    /// named apart from `pass_threshold`, a share of samples.
    pub min_score: Option<f64>,
    /// Meant only for live runs: without a recording the case is ignored ("live only, not run").
    pub live_only: Option<bool>,
    /// How many times each judge question is asked (`judge_samples`, odd).
    pub judge_samples: Option<u32>,
    /// The subjects of a model matrix (`models = ["provider/model", ...]`): one trial each.
    pub models: Option<Vec<Subject>>,
    /// The MCP servers of an agent loop (`mcp`; `Some(vec![])` has none, overriding a suite's).
    pub mcp: Option<Vec<McpServer>>,
    /// Rounds of tool calls the agent loop may make before the model must answer.
    pub max_tool_rounds: Option<u32>,
}

crate::config::layered_fieldwise!(pub Settings {
    request,
    sampling,
    sampling_at,
    min_score,
    live_only,
    judge_samples,
    models,
    mcp,
    max_tool_rounds
});

/// Reads the settings keys of `table` (`prefix` is the key path of the table, `""` at the top): each
/// by its row of the table of keys, which gives its range and the help its problems show.
pub(super) fn settings(r: &mut Reader<'_>, table: &DeTable<'_>, prefix: &str) -> Settings {
    let path = |key: Key| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    let node_of = |key: Key| table.get(key.name());
    // A case's ranges are its suite's.
    let range_of = |key: Key| {
        key.row()
            .range_in(Place::Suite)
            .expect("the table gives every number a range")
    };
    // Each setting is read where it is written, if it is.
    let text = |r: &mut Reader<'_>, key: Key, example: &str| {
        let node = node_of(key)?;
        string(r, node, &path(key), example)
    };
    let count = |r: &mut Reader<'_>, key: Key| {
        let node = node_of(key)?;
        let (min, max) = range_of(key)
            .whole_bounds()
            .expect("a count's range is whole");
        whole(r, node, &path(key), min, max, key.row().help).map(|n| n as u32)
    };
    let fraction = |r: &mut Reader<'_>, key: Key| {
        let node = node_of(key)?;
        let range = range_of(key);
        real(r, node, &path(key), |x| range.contains(x), key.row().help)
    };
    let provider = text(r, Key::Provider, "\"anthropic\"");
    let model = text(r, Key::Model, "\"claude-haiku-4-5\"");
    let system = text(r, Key::System, "\"You are a support agent.\"");
    let messages = node_of(Key::Messages).and_then(|node| {
        let system_key = node_of(Key::System).is_some();
        super::messages::messages(r, node, &path(Key::Messages), system_key)
    });
    let max_tokens = count(r, Key::MaxTokens);
    let runs = count(r, Key::Runs);
    let temperature = fraction(r, Key::Temperature);
    let budget = fraction(r, Key::Budget);
    let pass_threshold = fraction(r, Key::PassThreshold);
    let min_score = fraction(r, Key::Threshold);
    let tools = node_of(Key::Tools).and_then(|node| tool_specs(r, node, &path(Key::Tools)));
    let mcp = node_of(Key::Mcp).and_then(|node| super::mcp::servers(r, node, &path(Key::Mcp)));
    let max_tool_rounds = count(r, Key::MaxToolRounds);
    let boolean = |r: &mut Reader<'_>, key: Key| {
        let node = node_of(key)?;
        match node.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                let found = format!("expected `true` or `false`, found {}", a_type(other));
                let fix = format!("write `{key} = true` ({})", key.row().help);
                r.problem(node.span(), &path(key), found, fix);
                None
            }
        }
    };
    let live_only = boolean(r, Key::LiveOnly);
    let judge_samples = count(r, Key::JudgeSamples);
    if let (Some(even), Some(node)) = (
        judge_samples.and_then(|k| EvenJudgeSamples::of(u64::from(k))),
        node_of(Key::JudgeSamples),
    ) {
        r.problem(
            node.span(),
            &path(Key::JudgeSamples),
            even.problem(),
            even.fix(),
        );
    }
    let seed = count(r, Key::Seed);
    let sampling = SamplingKeys {
        runs,
        pass_threshold,
        early_stop: boolean(r, Key::EarlyStop),
        pass_rate: fraction(r, Key::PassRate),
        confidence: fraction(r, Key::Confidence),
        max_runs: count(r, Key::MaxRuns),
        indifference: fraction(r, Key::Indifference),
    };
    // Keys written together that contradict each other; the rest is checked once `[defaults]` fill in.
    if let Some(problem) = sampling.conflict() {
        let key = problem.key();
        let span = node_of(key).map_or(0..0, |n| n.span());
        let fix = match problem {
            SamplingProblem::Both(_) => {
                "keep either `runs` / `pass_threshold` (a fixed number of samples) or `pass_rate` (adaptive sampling)"
            }
            _ => "remove it",
        };
        r.problem(span, &path(key), problem.to_string(), fix);
    }
    let sampling_at = SAMPLING_KEYS
        .into_iter()
        .filter_map(|key| Some((key, r.at(&node_of(key)?.span()))))
        .collect();
    let models = node_of(Key::Models).and_then(|node| subjects(r, node, &path(Key::Models)));
    if models.is_some() {
        for key in [Key::Provider, Key::Model] {
            if let Some(node) = node_of(key) {
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
                budget,
            },
            system,
            messages,
            tools,
        },
        sampling,
        sampling_at,
        min_score,
        live_only,
        judge_samples,
        models,
        mcp,
        max_tool_rounds,
    }
}

/// Reads `models = ["provider/model", ...]`: at least one, each split at its first `/`, none twice.
fn subjects(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<Subject>> {
    let example =
        "write `models = [\"anthropic/claude-haiku-4-5\", \"local/SmolLM2-135M-Instruct\"]`";
    let items = r.array(node, key, "an array of `provider/model` strings", example)?;
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
    let items = r.array(node, key, "an array of tool tables", example)?;
    let problems_before = r.problems.len();
    let mut specs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("{key}[{i}]");
        let Some(table) = r.table(item, &path, "a tool table", example) else {
            continue;
        };
        r.unknown_keys(table, &path, &TOOL_KEYS, "in a tool");
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{parse, report};
    use crate::test_support::assert_contains;

    const FILE: &str = "s.evals.toml";

    /// The report of a suite that has problems.
    fn problems(text: &str) -> String {
        match parse("s", FILE, Path::new("/nonexistent"), text) {
            Ok(_) => panic!("no problem in\n{text}"),
            Err(problems) => report(FILE, text, &problems),
        }
    }

    /// A suite written with the attribute's names is read as with its own, each name noted with its
    /// line and the suite's name; a key of the attribute only says what a suite does instead.
    #[test]
    fn the_attribute_s_names_are_read_with_a_warning() {
        let text = "target_prompt = \"Say {x}\"\nsubject_models = [\"local/m\"]\n[[cases]]\nname = \"a\"\n\
                    target_prompt_vars = { x = \"1\" }\n";
        let suite = parse("s", FILE, Path::new("/nonexistent"), text)
            .unwrap_or_else(|p| panic!("{}", report(FILE, text, &p)));
        assert_eq!(suite.prompt, "Say {x}");
        assert_eq!(suite.cases[0].inputs, [("x".to_string(), "1".to_string())]);
        assert!(suite.cases[0].settings.models.is_some());
        let said = |old: &str, new: &str| {
            format!(
                "`{old}` is #[prompt_test]'s name for `{new}`; read as `{new}`: write `{new}` in a suite"
            )
        };
        assert_eq!(
            suite.warnings,
            [
                format!("s.evals.toml:1: {}", said("target_prompt", "prompt")),
                format!("s.evals.toml:2: {}", said("subject_models", "models")),
                format!("s.evals.toml:5: {}", said("target_prompt_vars", "inputs")),
            ]
        );
        // Both names of one key.
        let report = problems("prompt = \"a\"\ntarget_prompt = \"b\"\n[[cases]]\nname = \"a\"\n");
        assert!(
            report.contains(
                ":2:1: `target_prompt`: `target_prompt` and `prompt` are one key, given twice"
            ) && report.contains("fix: keep `prompt` alone"),
            "{report}"
        );
        // The attribute's only keys.
        let report = problems(
            "prompt = \"Hi\"\njudge_prompt_cache = true\n[[cases]]\nname = \"a\"\nrun_fn = \"f\"\n",
        );
        assert_contains(
            &report,
            &[
                ":2:1: `judge_prompt_cache`: `judge_prompt_cache` is #[prompt_test]'s key, not a suite's\n",
                "fix: a suite's judge calls are not prompt-cached; write the test as a #[prompt_test] to cache",
                ":5:1: `cases[0].run_fn`: `run_fn` is #[prompt_test]'s key, not a suite's\n",
                "fix: a suite calls a provider: name an endpoint of prompt-tester.toml (`[providers.NAME]`)",
            ],
        );
    }

    /// A range's problem shows the table's range and help line.
    #[test]
    fn problems_show_the_tables_range_and_help() {
        let report = problems("prompt = \"Hi\"\nmax_runs = 20000\n[[cases]]\nname = \"a\"\n");
        assert!(
            report.contains(
                ":2:12: `max_runs`: 20000 is out of range\n2 | max_runs = 20000\n  |            ^\n  fix: use a \
                 whole number from 1 to 10000 (the most samples adaptive sampling takes)"
            ),
            "{report}"
        );
        let report = problems("prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nlive_only = 1\n");
        assert!(
            report.contains(
                "fix: write `live_only = true` (without a recording the case is ignored, not run)"
            ),
            "{report}"
        );
    }
}
