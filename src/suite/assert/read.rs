//! Reading `assert = [{ kind = value, weight = w }, ...]` from the spanned suite file.

#[cfg(feature = "json-schema")]
use std::sync::Arc;

use toml::de::DeValue;

use super::kinds::{Assertion, Check, TurnAt};
use super::registry::{BUILT_IN, custom, custom_names, valid_kinds};
use crate::spanned::{Node, Reader, did_you_mean, found, last_key, nonblank, real, string, whole};
use prompt_tester_keys::{Key, Place, names_in};

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

/// Parses one assertion table (`path` is its key path).
pub(crate) fn parse_one(r: &mut Reader<'_>, node: &Node<'_>, path: &str) -> Option<Assertion> {
    let fix = "write each assertion as `{ kind = value }`, e.g. `{ contains = \"refund\" }`";
    let table = r.table(node, path, "an assertion table", fix)?;
    let mut weight = 1.0;
    let mut turn = None;
    let mut threshold = None;
    let mut judge_inputs = None;
    let mut kinds = Vec::new();
    for (key, value) in table.iter() {
        let k = key.get_ref().as_ref();
        if k == "threshold" {
            // `similar`'s own key; checked once the kind is known.
            threshold = Some(value);
        } else if k == "weight" {
            weight = real(
                r,
                value,
                &format!("{path}.weight"),
                |w| w >= 0.0,
                "a weight of 0 or more (1 by default)",
            )?;
        } else if k == Key::JudgeInputs.name() {
            // `judge`'s own key; checked once the kind is known.
            judge_inputs = Some(value);
        } else if k == Key::Turn.name() {
            let key = format!("{path}.turn");
            let n = whole(r, value, &key, 1, u64::from(u32::MAX), Key::Turn.row().help)?;
            turn = Some(TurnAt {
                n: n as u32,
                key,
                span: Some(value.span()),
            });
        } else if BUILT_IN.contains(&k) || custom(k).is_some() {
            kinds.push((key, value));
        } else {
            let own = names_in(Place::Assertion);
            let all: Vec<&str> = BUILT_IN.iter().copied().chain(custom_names()).collect();
            let fix = match did_you_mean(k, all.iter().chain(&own).copied()) {
                // An assertion's own key, misspelt.
                Some(close) if let Some(key) = Key::named_in(close, Place::Assertion) => {
                    format!("did you mean `{close}` ({})?", key.row().help)
                }
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
    let check = match (kind, threshold) {
        ("similar", threshold) => similar(r, node, value, threshold, path)?,
        (_, Some(threshold)) => {
            r.problem(
                threshold.span(),
                &format!("{path}.threshold"),
                format!("`threshold` belongs to `similar`, not to `{kind}`"),
                "remove it (a case's own `threshold` is written beside `assert`, not inside an assertion)",
            );
            return None;
        }
        (_, None) => check(r, kind, value, &key_path)?,
    };
    let check = match (check, judge_inputs) {
        (check, None) => check,
        (Check::Judge(q), Some(on)) => match on.get_ref() {
            DeValue::Boolean(true) => Check::JudgeWithInputs(q),
            DeValue::Boolean(false) => Check::Judge(q),
            other => {
                r.problem(
                    on.span(),
                    &format!("{path}.judge_inputs"),
                    format!("expected true or false, found {}", found(other)),
                    "write `judge_inputs = true` (the judge is sent the media the model was sent)",
                );
                return None;
            }
        },
        (_, Some(on)) => {
            r.problem(
                on.span(),
                &format!("{path}.judge_inputs"),
                format!("`judge_inputs` belongs to `judge`, not to `{kind}`"),
                "remove it, or write it on a `judge` assertion",
            );
            return None;
        }
    };
    if let Some(turn) = turn.as_ref().filter(|_| check.reads_trajectory()) {
        r.problem(
            turn.span.clone().unwrap_or_else(|| node.span()),
            &turn.key,
            format!("`{kind}` reads the sample's whole trajectory (every turn's model calls), not one turn's reply"),
            "remove `turn` from this assertion",
        );
        return None;
    }
    Some(Assertion {
        check,
        weight,
        turn,
        at: r.at(&node.span()),
    })
}

/// A string, or a non-empty array of strings.
fn strings(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<String>> {
    let example = format!(
        "write `{key} = \"text\"` or `{key} = [\"one\", \"two\"]`",
        key = last_key(key)
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
        #[cfg(feature = "json-schema")]
        "json_schema" => Check::JsonSchema(Arc::new(schema(r, node, key)?)),
        #[cfg(not(feature = "json-schema"))]
        "json_schema" => {
            r.problem(
                node.span(),
                key,
                "the `json_schema` assertion needs the `json-schema` feature of prompt-tester",
                "turn the feature on (it is a default one): `prompt-tester = { version = \"0.1\", \
                 features = [\"json-schema\"] }` in Cargo.toml",
            );
            return None;
        }
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
        "tool_sequence" => tool_sequence(r, node, key)?,
        "max_model_calls" => Check::MaxModelCalls(whole(
            r,
            node,
            key,
            1,
            u64::from(u32::MAX),
            "the most model calls (steps) the sample may make",
        )? as usize),
        "max_repeats" => Check::MaxRepeats(whole(
            r,
            node,
            key,
            1,
            u64::from(u32::MAX),
            "the most times in a row the same tool may be requested with the same arguments",
        )? as usize),
        "judge" => Check::Judge(requirement(r, node, key, "judge", "The reply is polite.")?),
        "judge_trajectory" => Check::JudgeTrajectory(requirement(
            r,
            node,
            key,
            "judge_trajectory",
            "The agent looked the order up before answering.",
        )?),
        name => {
            let custom = custom(name)?;
            let value = r.value(node, key, "value", "write a plain TOML value")?;
            Check::Custom(custom, value)
        }
    })
}

/// What the judge must confirm (`judge`, `judge_trajectory`): a string that is not blank.
fn requirement(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    kind: &str,
    example: &str,
) -> Option<String> {
    let fix = format!("write what the judge must confirm: `{kind} = {example:?}`");
    nonblank(
        r,
        node,
        key,
        &format!("{example:?}"),
        "the requirement is empty",
        fix,
    )
}

/// `{ similar = "reference", threshold = 0.8 }`: the threshold is required, since what counts as
/// similar depends on the embedding model.
fn similar(
    r: &mut Reader<'_>,
    table: &Node<'_>,
    value: &Node<'_>,
    threshold: Option<&Node<'_>>,
    path: &str,
) -> Option<Check> {
    let example = "{ similar = \"Paris is the capital of France.\", threshold = 0.8 }";
    let reference = nonblank(
        r,
        value,
        &format!("{path}.similar"),
        "\"the reference answer\"",
        "the reference text is empty",
        format!("write the text the output should mean: `{example}`"),
    )?;
    let Some(threshold) = threshold else {
        r.problem(
            table.span(),
            path,
            "`similar` has no `threshold`",
            format!(
                "add the least cosine similarity that passes, e.g. `{example}` (it depends on the embedding \
                 model: measure a few answers first)"
            ),
        );
        return None;
    };
    let threshold = real(
        r,
        threshold,
        &format!("{path}.threshold"),
        |t| t > 0.0 && t <= 1.0,
        "a cosine similarity above 0 and at most 1, e.g. `threshold = 0.8`",
    )?;
    Some(Check::Similar {
        reference,
        threshold,
    })
}

/// `tool_called = "name"`, or `tool_called = { name = "name", arguments = { ... }, min = 1, max = 2 }`
/// where the arguments are a subset a counted call's arguments must contain, and `min` and `max` count
/// the matching calls (at least 1 unless written).
fn tool_called(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Check> {
    let example = "write `tool_called = \"get_weather\"` or `tool_called = { name = \"get_weather\", arguments = \
                   { city = \"Paris\" }, min = 1, max = 2 }`";
    match node.get_ref() {
        DeValue::String(name) if !name.trim().is_empty() => Some(Check::ToolCalled {
            name: name.to_string(),
            arguments: None,
            min: 1,
            max: None,
        }),
        DeValue::Table(table) => {
            for (k, _) in table.iter() {
                let name = k.get_ref().as_ref();
                if !["name", "arguments", "min", "max"].contains(&name) {
                    r.problem(
                        k.span(),
                        &format!("{key}.{name}"),
                        format!("unknown key `{name}`"),
                        format!("the keys are `name`, `arguments`, `min` and `max`: {example}"),
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
            let count = |r: &mut Reader<'_>, bound: &str, meaning: &str| match table.get(bound) {
                None => Some(None),
                Some(n) => {
                    let key = format!("{key}.{bound}");
                    whole(r, n, &key, 0, u64::from(u32::MAX), meaning).map(|n| Some(n as usize))
                }
            };
            let min = count(r, "min", "the fewest matching calls that pass")?;
            let max = count(r, "max", "the most matching calls that pass")?;
            if let (Some(0), Some(n)) = (max, table.get("max")) {
                r.problem(
                    n.span(),
                    &format!("{key}.max"),
                    "`max = 0` asks for no call",
                    format!("write `not_tool_called = \"{name}\"` instead"),
                );
                return None;
            }
            if let (Some(low), Some(high), Some(n)) = (min, max, table.get("min"))
                && low > high
            {
                r.problem(
                    n.span(),
                    &format!("{key}.min"),
                    format!("`min = {low}` is above `max = {high}`: no count passes"),
                    "make `min` at most `max`",
                );
                return None;
            }
            if let (Some(0), None, Some(n)) = (min, max, table.get("min")) {
                r.problem(
                    n.span(),
                    &format!("{key}.min"),
                    "`min = 0` without `max` passes whatever the model does",
                    "add a `max`, or remove the assertion",
                );
                return None;
            }
            Some(Check::ToolCalled {
                name,
                arguments,
                min: min.unwrap_or(1),
                max,
            })
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

/// `tool_sequence = { tools = ["search", "reply"], order = "in_order" }` (`order` is `in_order` unless
/// written).
fn tool_sequence(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Check> {
    use crate::trajectory::ToolOrder;
    let example =
        "write `tool_sequence = { tools = [\"search\", \"reply\"], order = \"in_order\" }`";
    let orders = "`in_order` (these tools in this order, others allowed between), `exact` (exactly \
                  these, in this order), `unordered` (exactly these, in any order) or `superset` (each of \
                  these, in any order, others allowed)";
    let table = r.table(node, key, "a table", example)?;
    for (k, _) in table.iter() {
        let name = k.get_ref().as_ref();
        if name != "tools" && name != "order" {
            r.problem(
                k.span(),
                &format!("{key}.{name}"),
                format!("unknown key `{name}`"),
                format!("the keys are `tools` and `order`: {example}"),
            );
            return None;
        }
    }
    let Some(tools) = table.get("tools") else {
        r.problem(node.span(), key, "the sequence names no tools", example);
        return None;
    };
    let tools = strings(r, tools, &format!("{key}.tools"))?;
    let order = match table.get("order") {
        None => ToolOrder::InOrder,
        Some(order) => {
            let key = format!("{key}.order");
            match string(r, order, &key, "\"in_order\"")?.as_str() {
                "in_order" => ToolOrder::InOrder,
                "exact" => ToolOrder::Exact,
                "unordered" => ToolOrder::Unordered,
                "superset" => ToolOrder::Superset,
                other => {
                    r.problem(
                        order.span(),
                        &key,
                        format!("unknown order {other:?}"),
                        format!("use {orders}"),
                    );
                    return None;
                }
            }
        }
    };
    Some(Check::ToolSequence { tools, order })
}

/// A JSON schema written inline as a TOML table, or the path of a JSON file beside the suite.
#[cfg(feature = "json-schema")]
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
