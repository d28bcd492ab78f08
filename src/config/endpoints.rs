//! Endpoints: the wire formats, where each endpoint is, and what its calls cost.

use super::{CONFIG_FILE, Config};
use crate::completion::CompletionResult;
use crate::model::WireFormat;
use crate::pricing::Price;

/// Where and how to reach one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointConfig {
    /// The name tests use (`subject_provider = "..."`).
    pub name: String,
    /// Its wire format.
    pub wire: WireFormat,
    /// The base URL (for OpenAI-compatible endpoints it includes `/v1`).
    pub base_url: String,
    /// Environment variables that may hold the key, first set wins; empty for keyless servers.
    pub api_key_env: Vec<String>,
    /// The most calls in flight to this endpoint (subject and judge together).
    pub max_in_flight: usize,
}

impl Config {
    /// The price of `model` called through the endpoint `provider` for a prompt of `prompt_tokens`:
    /// $0 on a free endpoint, else the list price or `[prices]` override; `None` when unknown.
    pub(crate) fn price_of(
        &self,
        provider: &str,
        model: &str,
        prompt_tokens: u64,
    ) -> Option<Price> {
        let free = self
            .endpoint(provider)
            .is_ok_and(|e| self.free_endpoints.contains(&e.name));
        if free {
            Some(Price::free())
        } else {
            crate::pricing::price_for_prompt(model, prompt_tokens, &self.prices)
        }
    }

    /// The cost of `result` from `model` on the endpoint `provider`; `None` when its price is unknown.
    pub(crate) fn cost_of(
        &self,
        provider: &str,
        model: &str,
        result: &CompletionResult,
    ) -> Option<f64> {
        self.price_of(provider, model, result.input_tokens)
            .map(|price| crate::pricing::cost(result, &price))
    }

    /// The endpoint called `name`, or an error listing the known ones.
    pub(crate) fn endpoint(&self, name: &str) -> Result<&EndpointConfig, UnknownProvider> {
        let name = crate::model::built_in(name).map_or(name, |p| p.name);
        self.endpoints.get(name).ok_or_else(|| {
            let known: Vec<String> = self.endpoints.keys().cloned().collect();
            let aliases = crate::model::BUILT_IN
                .iter()
                .flat_map(|p| p.aliases.iter().copied());
            let closest =
                crate::spanned::did_you_mean(name, known.iter().map(String::as_str).chain(aliases))
                    .map(str::to_string);
            UnknownProvider {
                name: name.to_string(),
                closest,
                known,
            }
        })
    }
}

/// A provider name no endpoint has: what [`ConfigError::UnknownProvider`](super::ConfigError::UnknownProvider) says, and the reason a
/// case or a call that names it cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownProvider {
    /// The name as written.
    pub name: String,
    /// The closest known name, if one is close.
    pub closest: Option<String>,
    /// The endpoints there are.
    pub known: Vec<String>,
}

impl std::fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            name,
            closest,
            known,
        } = self;
        write!(f, "unknown provider {name:?}")?;
        if let Some(best) = closest {
            write!(f, " (did you mean {best:?}?)")?;
        }
        write!(
            f,
            ": use one of {} or add [providers.{name}] with a base_url to {CONFIG_FILE}",
            known.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::from_file;
    use super::*;
    use std::path::Path;

    #[test]
    fn a_free_endpoint_costs_nothing_and_an_unknown_hosted_model_stays_unpriced() {
        let config = from_file(
            r#"
[providers.local]
base_url = "http://127.0.0.1:8080/v1"
free = true
[providers.vllm]
base_url = "http://127.0.0.1:8000/v1"
[prices."my-fine-tune"]
input_mtok = 1.0
output_mtok = 2.0
"#,
        )
        .unwrap();
        let result = CompletionResult {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..CompletionResult::default()
        };
        // Any model on the free endpoint, even one the price table knows.
        for model in ["SmolLM2-135M-Instruct", "claude-haiku-4-5", "my-fine-tune"] {
            assert_eq!(
                config.cost_of("local", model, &result),
                Some(0.0),
                "{model}"
            );
        }
        // Elsewhere: unknown models stay unpriced, known ones keep their price.
        assert_eq!(
            config.cost_of("vllm", "SmolLM2-135M-Instruct", &result),
            None
        );
        assert_eq!(
            config.cost_of("openai", "gpt-4o-audio-preview", &result),
            None
        );
        assert_eq!(config.cost_of("unknown-endpoint", "qwen3", &result), None);
        assert_eq!(config.cost_of("vllm", "my-fine-tune", &result), Some(3.0));
        assert_eq!(
            config.cost_of("anthropic", "claude-haiku-4-5", &result),
            Some(6.0)
        );
        assert!(config.price_of("local", "anything", 0).is_some());
        assert!(config.price_of("vllm", "anything", 0).is_none());
        // `free` is a boolean; anything else names the key.
        let err = from_file("[providers.local]\nbase_url = \"http://x/v1\"\nfree = \"yes\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("free") && err.contains("line 3"), "{err}");
    }

    #[test]
    fn kind_takes_wire_names_and_aliases() {
        let kind = |k: &str| {
            let mut config = Config::defaults("/crate");
            config
                .apply_file(
                    Path::new("p.toml"),
                    &format!("[providers.x]\nbase_url = \"http://x/v1\"\nkind = \"{k}\"\n"),
                )
                .map(|()| config.endpoint("x").unwrap().wire)
                .map_err(|e| e.to_string())
        };
        assert_eq!(kind("anthropic"), Ok(WireFormat::Anthropic));
        assert_eq!(kind("google"), Ok(WireFormat::Google));
        assert_eq!(kind("gemini"), Ok(WireFormat::Google));
        assert_eq!(kind("openai"), Ok(WireFormat::OpenAi));
        let err = kind("claude").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert!(
            err.contains("unknown variant `claude`, expected one of `anthropic`, `gemini`, `google`, `openai`"),
            "{err}"
        );
        // The aliases resolve to the built-in endpoints too.
        let config = Config::defaults("/crate");
        assert_eq!(config.endpoint("gemini").unwrap().name, "google");
        assert_eq!(
            config.endpoint("google").unwrap().api_key_env,
            ["GOOGLE_API_KEY", "GEMINI_API_KEY"]
        );
    }
}
