//! Checking one assertion against a [`PromptRun`]: [`check_sync`] dispatches each kind to the
//! function of its kind or family.

use std::fmt::Display;

use super::kinds::Check;
use super::message::{plural, quoted_list, seen, seen_around, seen_tail};
use super::registry::CustomAssertion;
use crate::run::{Expect, PromptRun, RunError};

/// The outcome of one assertion on one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether it passed.
    pub passed: bool,
    /// Why it failed (kind, expected, seen), or a note on a pass (an unknown price).
    pub detail: Option<String>,
}

impl Verdict {
    /// A pass without a note.
    pub(super) fn pass() -> Self {
        Self {
            passed: true,
            detail: None,
        }
    }

    /// A failure: `{kind}: expected {expected}; saw {seen}`.
    pub(super) fn fail(kind: &str, expected: impl Display, seen: impl Display) -> Self {
        Self {
            passed: false,
            detail: Some(format!("{kind}: expected {expected}; saw {seen}")),
        }
    }

    /// A pass when `ok`, else the failure `fail` builds (only then: it formats the output).
    fn pass_or(ok: bool, fail: impl FnOnce() -> Verdict) -> Self {
        if ok { Self::pass() } else { fail() }
    }

    /// A failure with a detail of its own shape.
    fn failed(detail: String) -> Self {
        Self {
            passed: false,
            detail: Some(detail),
        }
    }
}

/// Checks one assertion other than `judge` and `similar` (which call a model; see
/// [`evaluate`](super::evaluate)).
pub fn check_sync(check: &Check, run: &PromptRun) -> Verdict {
    let out = run.output.as_str();
    match check {
        Check::Contains(needles) => contains(needles, out),
        Check::IContains(needles) => icontains(needles, out),
        Check::NotContains(needles) => not_contains(needles, out),
        Check::Regex(regexes) => match regexes.iter().find(|re| !re.is_match(out)) {
            None => Verdict::pass(),
            Some(re) => Verdict::fail("regex", format!("a match for /{}/", re.as_str()), seen(out)),
        },
        Check::Equals(_) | Check::StartsWith(_) | Check::EndsWith(_) => exact_form(check, out),
        Check::IsJson(want) => is_json(*want, out),
        #[cfg(feature = "json-schema")]
        Check::JsonSchema(validator) => json_schema(validator, out),
        Check::MaxLatency(max) => max_latency(*max, run),
        Check::MaxCost(max) => max_cost(*max, run),
        Check::MaxTokens(max) => max_tokens(*max, run),
        Check::MaxWords(max) => max_words(*max, out),
        Check::ToolCalled {
            name,
            arguments,
            min,
            max,
        } => on_trajectory(check, run, |e| {
            let most = max.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Included);
            e.tool_calls(
                name,
                arguments.as_ref(),
                (std::ops::Bound::Included(*min), most),
            )
            .map(drop)
        }),
        Check::NotToolCalled(names) => on_trajectory(check, run, |e| {
            names
                .iter()
                .try_for_each(|n| e.tool_calls(n, None, 0..=0).map(drop))
        }),
        Check::ToolSequence { tools, order } => on_trajectory(check, run, |e| {
            let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
            e.tool_sequence(&tools, *order)
        }),
        Check::MaxModelCalls(max) => {
            on_trajectory(check, run, |e| e.model_calls(..=*max).map(drop))
        }
        Check::MaxRepeats(k) => on_trajectory(check, run, |e| e.no_loop(*k)),
        Check::Judge(_) | Check::JudgeWithInputs(_) | Check::JudgeTrajectory(_) => {
            Verdict::failed(format!("{}: not asked", check.kind()))
        }
        Check::Similar { .. } => Verdict::failed("similar: not compared".to_string()),
        Check::Custom(custom, value) => custom_check(custom, value, run),
    }
}

/// The needles `found` does not find, in order.
fn missing(needles: &[String], found: impl Fn(&str) -> bool) -> Vec<String> {
    needles.iter().filter(|n| !found(n)).cloned().collect()
}

fn contains(needles: &[String], out: &str) -> Verdict {
    let missing = missing(needles, |n| out.contains(n));
    Verdict::pass_or(missing.is_empty(), || {
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
    })
}

fn icontains(needles: &[String], out: &str) -> Verdict {
    let lower = out.to_lowercase();
    let missing = missing(needles, |n| lower.contains(&n.to_lowercase()));
    Verdict::pass_or(missing.is_empty(), || {
        let expected = format!(
            "the output to contain {} ignoring case (missing {})",
            quoted_list(needles),
            quoted_list(&missing)
        );
        Verdict::fail("icontains", expected, seen(out))
    })
}

fn not_contains(needles: &[String], out: &str) -> Verdict {
    match needles
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
    }
}

/// `equals`, `starts_with` and `ends_with`, on the output stripped of surrounding whitespace.
fn exact_form(check: &Check, out: &str) -> Verdict {
    let stripped = out.trim();
    let (ok, expected, seen): (bool, String, fn(&str) -> String) = match check {
        Check::Equals(text) => {
            let text = text.trim();
            let expected = format!("exactly {text:?} (output stripped of surrounding whitespace)");
            (stripped == text, expected, seen)
        }
        Check::StartsWith(prefix) => {
            let expected = format!("the output to start with {prefix:?}");
            (stripped.starts_with(prefix.as_str()), expected, seen)
        }
        // What a suffix misses is at the end of the output.
        Check::EndsWith(suffix) => {
            let expected = format!("the output to end with {suffix:?}");
            (stripped.ends_with(suffix.as_str()), expected, seen_tail)
        }
        // check_sync sends only these three kinds here.
        other => unreachable!("`{}` is not an exact-form check", other.kind()),
    };
    Verdict::pass_or(ok, || Verdict::fail(check.kind(), expected, seen(out)))
}

fn is_json(want: bool, out: &str) -> Verdict {
    let stripped = out.trim();
    match (serde_json::from_str::<serde_json::Value>(stripped), want) {
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
    }
}

#[cfg(feature = "json-schema")]
fn json_schema(validator: &jsonschema::Validator, out: &str) -> Verdict {
    let value = match serde_json::from_str::<serde_json::Value>(out.trim()) {
        Ok(value) => value,
        Err(e) => {
            return Verdict::fail(
                "json_schema",
                "JSON that follows the schema",
                format!("output that is not JSON ({e}): {}", seen(out)),
            );
        }
    };
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
    Verdict::pass_or(errors.is_empty(), || {
        Verdict::fail(
            "json_schema",
            "JSON that follows the schema",
            format!("{} in {}", errors.join("; "), seen(out)),
        )
    })
}

fn max_latency(max: f64, run: &PromptRun) -> Verdict {
    let secs = run.latency.as_secs_f64();
    Verdict::pass_or(secs <= max, || {
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
    })
}

/// Passes with a note when the price is unknown: a limit that cannot be checked must not fail runs.
fn max_cost(max: f64, run: &PromptRun) -> Verdict {
    match run.cost_usd {
        Some(cost) => Verdict::pass_or(cost <= max, || {
            Verdict::fail("max_cost", format!("at most ${max}"), format!("${cost:.6}"))
        }),
        None => Verdict {
            passed: true,
            detail: Some(format!(
                "max_cost: passed without a check: the price of {} is unknown (add [prices.\"{}\"] to \
                 prompt-tester.toml, or `free = true` to [providers.{}] if it is self-hosted)",
                run.model, run.model, run.provider
            )),
        },
    }
}

fn max_tokens(max: u64, run: &PromptRun) -> Verdict {
    Verdict::pass_or(run.output_tokens <= max, || {
        Verdict::fail(
            "max_tokens",
            format!("at most {max} completion token{}", plural(max)),
            run.output_tokens,
        )
    })
}

fn max_words(max: u64, out: &str) -> Verdict {
    let n = out.split_whitespace().count() as u64;
    Verdict::pass_or(n <= max, || {
        Verdict::fail(
            "max_words",
            format!("at most {max} word{}", plural(max)),
            format!("{n} words: {}", seen(out)),
        )
    })
}

/// A check on the sample's trajectory, by the expectations the Rust tests use; a failure prints the
/// whole trajectory, one line per model call.
fn on_trajectory(
    check: &Check,
    run: &PromptRun,
    expect: impl FnOnce(&Expect<'_>) -> Result<(), RunError>,
) -> Verdict {
    let trajectory = run.trajectory();
    match expect(&Expect(&trajectory)) {
        Ok(()) => Verdict::pass(),
        Err(e) => Verdict::failed(format!("{}: {e}", check.kind())),
    }
}

/// A registered check; a panic in it fails the assertion instead of the whole run.
fn custom_check(custom: &CustomAssertion, value: &toml::Value, run: &PromptRun) -> Verdict {
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (custom.check)(run, value)));
    match outcome {
        Ok(Ok(())) => Verdict::pass(),
        Ok(Err(why)) => Verdict::failed(format!(
            "{}: {why} (value {value}); saw {}",
            custom.name,
            seen(&run.output)
        )),
        Err(_) => Verdict::failed(format!(
            "{}: the custom assertion panicked (value {value})",
            custom.name
        )),
    }
}
