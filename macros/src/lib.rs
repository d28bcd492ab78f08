//! The `#[prompt_test]` attribute of [prompt-tester](https://docs.rs/prompt-tester). Use it through
//! `prompt_tester::prelude::*`; this crate is an implementation detail and its version is pinned.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod args;
mod checks;
mod errors;
mod expand;
mod messages;
mod raw;
mod sampling;
mod suggest;

use proc_macro::TokenStream;

/// Registers an async (or plain) function as a prompt test, run by the prompt-tester harness.
///
/// ```ignore
/// use prompt_tester::prelude::*;
///
/// #[prompt_test(
///     target_prompt = "Summarise in one sentence: {text}",
///     subject_model = "gemini-3.1-flash-lite",      // or Model::Gemini31FlashLite
///     subject_provider = "google",                 // or Provider::Google
///     target_prompt_vars(text = "Alice leads Project Phoenix."),
///     runs = 5,
///     pass_threshold = 0.8,
/// )]
/// async fn summary_mentions_alice(run: PromptRun) -> anyhow::Result<()> {
///     anyhow::ensure!(run.output.contains("Alice"));
///     Ok(())
/// }
/// ```
///
/// The function keeps its signature (it can still be called directly). It takes one argument, the
/// [`PromptRun`] of a sample, and returns `()`, `anyhow::Result<()>` or `Result<(), E>` with
/// `E: Into<anyhow::Error>`. It cannot be generic or take `self`.
///
/// Keys (values may be any expression of the right type unless a literal is required):
///
/// | key | value |
/// |---|---|
/// | `target_prompt` | the template, a `&'static str` with `{name}` placeholders |
/// | `target_prompt_file` | a string literal: a file relative to the crate root, read at compile time |
/// | `subject_model` | a model id string or a `Model` (default: `[defaults] model`) |
/// | `subject_provider` | a provider name or a `Provider` (default: `[defaults] provider`) |
/// | `subject_models` | a list of `"provider/model"` strings: one trial per model; not with `subject_model` or `subject_provider` |
/// | `target_prompt_vars(name = value, ...)` | values for the placeholders, anything `Display` |
/// | `max_tokens` | `u32`, at least 1 (default: `[defaults] max_tokens`, else 2048) |
/// | `runs` | `u32`, how many samples, at least 1 (default 1) |
/// | `pass_threshold` | the share of samples that must pass, in (0, 1] (default 1.0) |
/// | `early_stop` | `bool`: with `runs`, samples are sent only while the verdict can still change; a bare `early_stop` means `true` |
/// | `pass_rate`, `confidence`, `max_runs`, `indifference` | adaptive sampling instead of `runs`: the pass rate asked about, in (0, 1); the confidence, in [0.5, 1) (default 0.95); the most samples, a `u32` (default 40); the indifference, in (0, 0.5) (default 0.05) |
/// | `seed` | a `u32` from 0 to 2147483647: sample k sends seed + k − 1 |
/// | `judge_prompt_cache` | `bool`: Anthropic prompt caching of the judge's instructions, the first sample sent alone to prime it; a bare `judge_prompt_cache` means `true` |
/// | `judge_samples` | `u32`, odd, from 1 to 99: each judge question asked this many times, the majority decides and the agreement is in the verdict (default: `[judge] judge_samples`, else 1) |
/// | `temperature` | `f32` |
/// | `system` | the system prompt, `&str` or `String` |
/// | `messages` | turns sent before the prompt: `[system("..."), user("..."), assistant("...")]` (roles and their order checked at compile time: an optional `system` turn first, then `user` and `assistant` alternating, ending with `assistant`), or any expression giving a list of `Turn`s; `{placeholders}` filled from `target_prompt_vars` |
/// | `run_fn` | an `async fn(prompt: &str, model: &str, max_tokens: u32)`, an `async fn(request: CompletionRequest)` (the whole request: system prompt, `messages` then the prompt, tools) or an `async fn(sample: SampleContext)` (the request, the prompt's inputs, and `base_url`: the recording endpoint's URL for the application's own client), returning `anyhow::Result<CompletionResult>`, used instead of the provider |
/// | `tools` | the tools the model may call: a `Vec<ToolSpec>` (or an array or iterator of them); one model call, its tool calls in `run.tool_calls` |
/// | `agent` | a `Toolbox` (tools with handlers, MCP servers) or a `fn() -> Toolbox`: the model call becomes an agent loop; not with `tools` or `run_fn` |
/// | `live_only` | `bool`: without a recording the test is ignored, not run; a bare `live_only` means `true` |
/// | `budget` | `f64`, USD, at least 0: the most the test may spend on provider calls (default: `[defaults] budget`) |
/// | `app_env` | `bool` literal, only with an `AppRun`: the application's client reads its base URL from `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` or `GOOGLE_GEMINI_BASE_URL`, which point at the recording endpoint; the test's samples run one at a time; a bare `app_env` means `true` |
///
/// A function taking an `AppRun` instead is an application test: no prompt, its body calls the
/// application through `run.base_url(provider)` and asks the judge about any text; the keys of a
/// prompt's own call (`target_prompt`, `target_prompt_file`, `target_prompt_vars`, the subject keys,
/// `system`, `messages`, `tools`, `agent`, `run_fn`, `max_tokens`, `temperature`, `seed`) are errors
/// there, and it needs prompt-tester's `endpoint` feature.
///
/// Exactly one of `target_prompt` and `target_prompt_file` is required (a `PromptRun` test). A suite's names are taken too:
/// `prompt`, `inputs(...)`, `model`, `provider`, `models` for `target_prompt`, `target_prompt_vars(...)`,
/// `subject_model`, `subject_provider`, `subject_models`; a suite's key the attribute has no use for
/// (`threshold`, `skip`, `assert`, ...) is an error that says what to write instead. Literal values are checked at compile time (`runs = 0`,
/// `pass_threshold = 1.5`, `max_tokens = 0`, a misspelt key, a placeholder of a literal prompt with no
/// value); every mistake is reported at once, at the offending key or value.
///
/// [`PromptRun`]: https://docs.rs/prompt-tester/latest/prompt_tester/struct.PromptRun.html
#[proc_macro_attribute]
pub fn prompt_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    let line = fn_name_line(&item);
    expand::expand(attr.into(), item.into(), line).into()
}

/// The line of the function's name, where a reader looks for the test (`line!()` in the expansion would
/// give the attribute's first line instead). Attributes are groups, so the first top-level `fn` is the
/// keyword of this function.
fn fn_name_line(item: &TokenStream) -> Option<u32> {
    let mut tokens = item.clone().into_iter();
    tokens
        .by_ref()
        .find(|t| matches!(t, proc_macro::TokenTree::Ident(i) if i.to_string() == "fn"))?;
    match tokens.next()? {
        proc_macro::TokenTree::Ident(name) => u32::try_from(name.span().line()).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use prompt_tester_keys::{Place, names_in};

    /// The attribute's documentation lists every key of the table, and no other.
    #[test]
    fn the_docs_list_every_key() {
        let listed: BTreeSet<String> = include_str!("lib.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("/// | `"))
            .filter_map(|row| row.split(" | ").next())
            .flat_map(|first| {
                let names: Vec<String> = format!("`{first}")
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(|code| {
                        code.chars()
                            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                            .collect()
                    })
                    .collect();
                names
            })
            .collect();
        let keys: BTreeSet<String> = names_in(Place::Attribute)
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(listed, keys);
    }
}
