//! Configuration in one place: `prompt-tester.toml` at the crate root, then environment variables,
//! then the builder in `main` (each overrides the one before).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::completion::CompletionResult;
use crate::defaults;
use crate::model::BUILT_IN;
use crate::pricing::Price;

/// The configuration file's name, looked up at the crate root.
pub const CONFIG_FILE: &str = "prompt-tester.toml";

/// A configuration error: the file, where, and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has an unknown or mistyped key.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// toml's message, with line, column and the offending line.
        message: String,
    },
    /// An environment variable holds a value that is not allowed.
    #[error("environment variable {name}={value:?} is not valid: {expected}")]
    Env {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is allowed.
        expected: String,
    },
    /// A value is out of range.
    #[error("{}: `{key}` {problem}", located(path, *line))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The value's line in the file, when known.
        line: Option<usize>,
        /// The key.
        key: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

/// `path` or `path:line`.
fn located(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

/// The three wire formats a provider can speak. In `kind = "..."` each is named by its built-in
/// provider's name or alias (`gemini` is `google`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WireFormat {
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Google,
    /// OpenAI Chat Completions.
    OpenAi,
}

impl<'de> Deserialize<'de> for WireFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Some(provider) = crate::model::built_in(&name) {
            return Ok(provider.wire);
        }
        let mut known: Vec<&str> = BUILT_IN
            .iter()
            .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
            .collect();
        known.sort_unstable();
        // serde's own wording for an unknown variant.
        let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
        Err(serde::de::Error::custom(format!(
            "unknown variant `{name}`, expected one of {}",
            known.join(", ")
        )))
    }
}

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

/// Which model judges.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeConfig {
    /// The judge's provider name.
    pub provider: String,
    /// The judge's model id.
    pub model: String,
    /// The most tokens a verdict may take.
    pub max_tokens: u32,
    /// The judge's temperature (0 by default, for repeatable verdicts).
    pub temperature: Option<f32>,
}

/// Retry policy for transient provider faults.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    /// Attempts in all, the first one included.
    pub max_attempts: u32,
    /// The first backoff; it doubles on every retry, with jitter.
    pub initial_backoff: Duration,
    /// The longest backoff (and the longest `retry-after` honoured).
    pub max_backoff: Duration,
    /// Timeout of one HTTP request.
    pub request_timeout: Duration,
    /// How long a call keeps retrying rate-limit answers (429), counted from the first one; they do
    /// not count against `max_attempts`.
    pub rate_limit_budget: Duration,
}

/// The default of `[retry] rate_limit_budget_secs`.
pub const DEFAULT_RATE_LIMIT_BUDGET_SECS: u64 = defaults::RATE_LIMIT_BUDGET_SECS;

/// The longest duration a `[retry]` key accepts, in seconds (a day): longer waits are mistakes, and
/// far larger values would overflow the clock.
const MAX_RETRY_SECS: f64 = 86_400.0;

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: defaults::MAX_ATTEMPTS,
            initial_backoff: defaults::INITIAL_BACKOFF,
            max_backoff: defaults::MAX_BACKOFF,
            request_timeout: defaults::REQUEST_TIMEOUT,
            rate_limit_budget: Duration::from_secs(defaults::RATE_LIMIT_BUDGET_SECS),
        }
    }
}

/// Defaults for tests that do not say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Defaults {
    /// Default subject provider.
    pub provider: Option<String>,
    /// Default subject model.
    pub model: Option<String>,
    /// Default `max_tokens` (2048 when unset).
    pub max_tokens: Option<u32>,
    /// Default temperature.
    pub temperature: Option<f32>,
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The crate root: relative paths are resolved against it.
    pub root: PathBuf,
    /// The most model calls in flight per provider, unless an endpoint says otherwise.
    pub concurrency: usize,
    /// The judge, if configured.
    pub judge: Option<JudgeConfig>,
    /// Defaults for tests.
    pub defaults: Defaults,
    /// Retry policy.
    pub retry: RetryConfig,
    /// Endpoints by name (the three built-ins plus configured ones).
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// Extra or overriding prices, by model id.
    pub prices: BTreeMap<String, Price>,
    /// Endpoints on which every model costs $0 (`free = true`: self-hosted servers).
    pub free_endpoints: BTreeSet<String>,
    /// Where cassettes live.
    pub cassette_dir: PathBuf,
    /// Where `*.evals.toml` suites are looked for.
    pub suite_roots: Vec<PathBuf>,
    /// Endpoints whose `max_in_flight` their own table sets: `concurrency` does not override it.
    own_in_flight: BTreeSet<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    concurrency: Option<usize>,
    cassette_dir: Option<PathBuf>,
    suite_roots: Option<Vec<PathBuf>>,
    #[serde(default)]
    defaults: FileDefaults,
    judge: Option<FileJudge>,
    #[serde(default)]
    retry: FileRetry,
    #[serde(default)]
    providers: BTreeMap<String, FileProvider>,
    #[serde(default)]
    prices: BTreeMap<String, Price>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDefaults {
    provider: Option<String>,
    model: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJudge {
    provider: String,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRetry {
    max_attempts: Option<u32>,
    initial_backoff_ms: Option<u64>,
    max_backoff_ms: Option<u64>,
    timeout_secs: Option<Spanned<f64>>,
    rate_limit_budget_secs: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileProvider {
    #[serde(default = "default_kind")]
    kind: WireFormat,
    base_url: Option<String>,
    /// An environment variable that, when set, overrides `base_url`.
    base_url_env: Option<String>,
    api_key_env: Option<String>,
    max_in_flight: Option<usize>,
    /// Every model on this endpoint costs $0 (a self-hosted server).
    #[serde(default)]
    free: bool,
}

fn default_kind() -> WireFormat {
    WireFormat::OpenAi
}

/// Whether this runs under CI (`CI` set to anything but `false` or `0`, as most CI services do).
pub fn is_ci() -> bool {
    env_var("CI").is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "0"))
}

/// Reads an environment variable, treating an empty value as unset.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Config {
    /// Built-in defaults for a crate rooted at `root`, with no file and no environment.
    pub fn defaults(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let mut endpoints = BTreeMap::new();
        for p in &BUILT_IN {
            endpoints.insert(
                p.name.to_string(),
                EndpointConfig {
                    name: p.name.to_string(),
                    wire: p.wire,
                    base_url: p.base_url.to_string(),
                    api_key_env: p.key_env.iter().map(|k| k.to_string()).collect(),
                    max_in_flight: defaults::CONCURRENCY,
                },
            );
        }
        Self {
            cassette_dir: defaults::cassette_dir(&root),
            suite_roots: vec![defaults::suite_root(&root)],
            root,
            concurrency: defaults::CONCURRENCY,
            judge: None,
            defaults: Defaults::default(),
            retry: RetryConfig::default(),
            endpoints,
            prices: BTreeMap::new(),
            free_endpoints: BTreeSet::new(),
            own_in_flight: BTreeSet::new(),
        }
    }

    /// Loads `prompt-tester.toml` (or `PROMPT_TESTER_CONFIG`) under `root`, then the environment.
    pub fn load(root: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        let root = root.into();
        let mut config = Self::defaults(&root);
        let path = match env_var("PROMPT_TESTER_CONFIG") {
            Some(p) => root.join(p),
            None => root.join(CONFIG_FILE),
        };
        if path.exists() {
            let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            config.apply_file(&path, &text)?;
        }
        config.apply_env()?;
        Ok(config)
    }

    /// Applies the text of a configuration file (`path` is for messages).
    pub fn apply_file(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let invalid = |key: &str, problem: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            line: None,
            key: key.to_string(),
            problem: problem.to_string(),
        };
        // A number of seconds in [min, a day], or an error at its line.
        let seconds = |key: &str, value: &Spanned<f64>, min: f64| {
            let secs = *value.get_ref();
            if secs >= min && secs <= MAX_RETRY_SECS {
                return Ok(Duration::from_secs_f64(secs));
            }
            let bound = if min > 0.0 {
                "more than 0"
            } else {
                "0 or more"
            };
            Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                line: Some(
                    text[..value.span().start.min(text.len())]
                        .matches('\n')
                        .count()
                        + 1,
                ),
                key: key.to_string(),
                problem: format!(
                    "is {secs}: use a number of seconds, {bound} and at most {MAX_RETRY_SECS} (a day)"
                ),
            })
        };
        if let Some(c) = file.concurrency {
            if c == 0 {
                return Err(invalid(
                    "concurrency",
                    "must be at least 1 (model calls in flight)",
                ));
            }
            self.set_concurrency(c);
        }
        if let Some(dir) = file.cassette_dir {
            self.cassette_dir = self.root.join(dir);
        }
        if let Some(roots) = file.suite_roots {
            self.suite_roots = roots.into_iter().map(|r| self.root.join(r)).collect();
        }
        self.defaults = Defaults {
            provider: file.defaults.provider,
            model: file.defaults.model,
            max_tokens: file.defaults.max_tokens,
            temperature: file.defaults.temperature,
        };
        if let Some(judge) = file.judge {
            self.judge = Some(JudgeConfig {
                provider: judge.provider,
                model: judge.model,
                max_tokens: judge.max_tokens.unwrap_or(defaults::JUDGE_MAX_TOKENS),
                temperature: judge.temperature.or(Some(defaults::JUDGE_TEMPERATURE)),
            });
        }
        let r = &mut self.retry;
        if let Some(n) = file.retry.max_attempts {
            if n == 0 {
                return Err(invalid(
                    "retry.max_attempts",
                    "must be at least 1 (1 means no retry)",
                ));
            }
            r.max_attempts = n;
        }
        if let Some(ms) = file.retry.initial_backoff_ms {
            r.initial_backoff = Duration::from_millis(ms);
        }
        if let Some(ms) = file.retry.max_backoff_ms {
            r.max_backoff = Duration::from_millis(ms);
        }
        if let Some(secs) = &file.retry.timeout_secs {
            r.request_timeout = seconds("retry.timeout_secs", secs, f64::MIN_POSITIVE)?;
        }
        if let Some(secs) = &file.retry.rate_limit_budget_secs {
            r.rate_limit_budget = seconds("retry.rate_limit_budget_secs", secs, 0.0)?;
        }
        for (name, p) in file.providers {
            let key = format!("providers.{name}");
            let builtin = self.endpoints.get(&name).cloned();
            let base_url = p
                .base_url_env
                .as_deref()
                .and_then(env_var)
                .or(p.base_url)
                .or_else(|| builtin.as_ref().map(|b| b.base_url.clone()))
                .ok_or_else(|| invalid(&key, "needs `base_url = \"http://host:port/v1\"`"))?;
            let api_key_env = match p.api_key_env {
                Some(var) => vec![var],
                None => builtin
                    .as_ref()
                    .map(|b| b.api_key_env.clone())
                    .unwrap_or_default(),
            };
            let wire = builtin.as_ref().map(|b| b.wire).unwrap_or(p.kind);
            let max_in_flight = p.max_in_flight.unwrap_or(self.concurrency);
            if max_in_flight == 0 {
                return Err(invalid(
                    &format!("{key}.max_in_flight"),
                    "must be at least 1",
                ));
            }
            if p.free {
                self.free_endpoints.insert(name.clone());
            } else {
                self.free_endpoints.remove(&name);
            }
            if p.max_in_flight.is_some() {
                self.own_in_flight.insert(name.clone());
            }
            self.endpoints.insert(
                name.clone(),
                EndpointConfig {
                    name,
                    wire,
                    base_url,
                    api_key_env,
                    max_in_flight,
                },
            );
        }
        self.prices.extend(file.prices);
        Ok(())
    }

    /// Applies the environment variables (base URLs, judge, concurrency).
    pub fn apply_env(&mut self) -> Result<(), ConfigError> {
        for p in &BUILT_IN {
            if let (Some(url), Some(endpoint)) =
                (env_var(p.base_url_env), self.endpoints.get_mut(p.name))
            {
                endpoint.base_url = url;
            }
        }
        if let Some(value) = env_var("PROMPT_TESTER_CONCURRENCY") {
            let n: usize = value
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or(ConfigError::Env {
                    name: "PROMPT_TESTER_CONCURRENCY",
                    value: value.clone(),
                    expected: "a whole number of model calls in flight, at least 1".into(),
                })?;
            self.set_concurrency(n);
        }
        let provider = env_var("PROMPT_TESTER_JUDGE_PROVIDER");
        let model = env_var("PROMPT_TESTER_JUDGE_MODEL");
        if provider.is_some() || model.is_some() {
            let base = self.judge.as_ref();
            match (
                provider.or(base.map(|j| j.provider.clone())),
                model.or(base.map(|j| j.model.clone())),
            ) {
                (Some(provider), Some(model)) => self.set_judge(provider, model),
                _ => {
                    return Err(ConfigError::Env {
                        name: "PROMPT_TESTER_JUDGE_MODEL",
                        value: String::new(),
                        expected:
                            "set both PROMPT_TESTER_JUDGE_PROVIDER and PROMPT_TESTER_JUDGE_MODEL, \
                                   or configure [judge] in prompt-tester.toml"
                                .into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Sets the judge's provider and model, keeping its `max_tokens` and temperature when one was
    /// configured, else the defaults.
    pub fn set_judge(&mut self, provider: impl Into<String>, model: impl Into<String>) {
        let base = self.judge.take();
        self.judge = Some(JudgeConfig {
            provider: provider.into(),
            model: model.into(),
            max_tokens: base
                .as_ref()
                .map_or(defaults::JUDGE_MAX_TOKENS, |j| j.max_tokens),
            temperature: base
                .as_ref()
                .map_or(Some(defaults::JUDGE_TEMPERATURE), |j| j.temperature),
        });
    }

    /// Sets the calls in flight for every endpoint that does not set its own `max_in_flight`.
    pub fn set_concurrency(&mut self, n: usize) {
        self.concurrency = n.max(1);
        for endpoint in self.endpoints.values_mut() {
            if !self.own_in_flight.contains(&endpoint.name) {
                endpoint.max_in_flight = self.concurrency;
            }
        }
    }

    /// The price of `model` called through the endpoint `provider` for a prompt of `prompt_tokens`:
    /// $0 on a free endpoint, else the list price or `[prices]` override; `None` when unknown.
    pub fn price_of(&self, provider: &str, model: &str, prompt_tokens: u64) -> Option<Price> {
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
    pub fn cost_of(&self, provider: &str, model: &str, result: &CompletionResult) -> Option<f64> {
        self.price_of(provider, model, result.input_tokens)
            .map(|price| crate::pricing::cost(result, &price))
    }

    /// The endpoint called `name`, or an error listing the known ones.
    pub fn endpoint(&self, name: &str) -> Result<&EndpointConfig, String> {
        let name = crate::model::built_in(name).map_or(name, |p| p.name);
        self.endpoints.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.endpoints.keys().map(String::as_str).collect();
            format!(
                "unknown provider {name:?}: use one of {} or add [providers.{name}] with a base_url to {CONFIG_FILE}",
                known.join(", ")
            )
        })
    }
}

/// The judge is not configured: how to configure it (the seed's `ConfigurationError`).
pub fn judge_not_configured() -> String {
    format!(
        "this test asks the judge, but no judge model is configured. Add to {CONFIG_FILE} at the crate root:\n\
         \n    [judge]\n    provider = \"anthropic\"   # or google, openai, or a [providers.NAME] endpoint\n    \
         model = \"claude-haiku-4-5\"\n\n\
         or set PROMPT_TESTER_JUDGE_PROVIDER and PROMPT_TESTER_JUDGE_MODEL, or call .judge(provider, model) \
         on the Harness builder in main."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_configures_judge_endpoints_and_prices() {
        let mut config = Config::defaults("/crate");
        config
            .apply_file(
                Path::new("prompt-tester.toml"),
                r#"
concurrency = 4
[judge]
provider = "ollama"
model = "qwen3"
[providers.ollama]
base_url = "http://127.0.0.1:11434/v1"
[prices."my-model"]
input_mtok = 1.0
output_mtok = 2.0
"#,
            )
            .unwrap();
        assert_eq!(config.concurrency, 4);
        assert_eq!(config.judge.as_ref().unwrap().provider, "ollama");
        let ollama = config.endpoint("ollama").unwrap();
        assert_eq!(ollama.wire, WireFormat::OpenAi);
        assert!(ollama.api_key_env.is_empty());
        assert_eq!(ollama.max_in_flight, 4);
        assert!(config.prices.contains_key("my-model"));
        assert!(
            config
                .endpoint("nope")
                .unwrap_err()
                .contains("[providers.nope]")
        );
    }

    #[test]
    fn a_free_endpoint_costs_nothing_and_an_unknown_hosted_model_stays_unpriced() {
        let mut config = Config::defaults("/crate");
        config
            .apply_file(
                Path::new("prompt-tester.toml"),
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
        let err = Config::defaults("/crate")
            .apply_file(
                Path::new("prompt-tester.toml"),
                "[providers.local]\nbase_url = \"http://x/v1\"\nfree = \"yes\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("free") && err.contains("line 3"), "{err}");
    }

    /// Every `prompt-tester.toml` example in the README is a valid configuration (the other TOML blocks
    /// are a `Cargo.toml` and a suite, which start by saying so).
    #[test]
    fn the_readme_configuration_examples_are_valid() {
        let readme = include_str!("../README.md");
        let blocks: Vec<&str> = readme
            .split("```toml\n")
            .skip(1)
            .filter_map(|rest| rest.split_once("```").map(|(block, _)| block))
            .filter(|b| !b.starts_with("[dev-dependencies]") && !b.starts_with("# prompt-tests/"))
            .collect();
        assert!(blocks.len() >= 3, "{blocks:?}");
        for block in blocks {
            let mut config = Config::defaults("/crate");
            if let Err(e) = config.apply_file(Path::new("README.md"), block) {
                panic!("{e}\nin the README's block:\n{block}");
            }
        }
    }

    #[test]
    fn unknown_keys_name_the_file_line_and_key() {
        let mut config = Config::defaults("/crate");
        let err = config
            .apply_file(
                Path::new("prompt-tester.toml"),
                "concurrency = 2\n[judge]\nmodle = \"x\"\n",
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("prompt-tester.toml"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("modle"), "{err}");
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

    #[test]
    fn set_judge_keeps_the_configured_judges_settings_else_the_defaults() {
        let mut config = Config::defaults("/crate");
        config.set_judge("anthropic", "claude-haiku-4-5");
        let judge = config.judge.clone().unwrap();
        assert_eq!((judge.max_tokens, judge.temperature), (1024, Some(0.0)));
        config
            .apply_file(
                Path::new("p.toml"),
                "[judge]\nprovider = \"a\"\nmodel = \"b\"\nmax_tokens = 10\ntemperature = 0.5\n",
            )
            .unwrap();
        config.set_judge("openai", "gpt-4o");
        assert_eq!(
            config.judge,
            Some(JudgeConfig {
                provider: "openai".into(),
                model: "gpt-4o".into(),
                max_tokens: 10,
                temperature: Some(0.5),
            })
        );
    }

    #[test]
    fn zero_concurrency_is_rejected() {
        let mut config = Config::defaults("/crate");
        let err = config
            .apply_file(Path::new("p.toml"), "concurrency = 0")
            .unwrap_err();
        assert!(err.to_string().contains("`concurrency`"));
    }

    #[test]
    fn an_endpoints_own_max_in_flight_wins_over_every_concurrency() {
        let mut config = Config::defaults("/crate");
        config
            .apply_file(
                Path::new("p.toml"),
                "concurrency = 4\n[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\nmax_in_flight = 2\n\
                 [providers.other]\nbase_url = \"http://127.0.0.1:2/v1\"\n",
            )
            .unwrap();
        let limit = |c: &Config, name: &str| c.endpoint(name).unwrap().max_in_flight;
        assert_eq!(limit(&config, "local"), 2);
        assert_eq!(limit(&config, "other"), 4);
        assert_eq!(limit(&config, "anthropic"), 4);
        // What PROMPT_TESTER_CONCURRENCY and Harness::concurrency do: the default for the others.
        config.set_concurrency(16);
        assert_eq!(config.concurrency, 16);
        assert_eq!(limit(&config, "local"), 2);
        assert_eq!(limit(&config, "other"), 16);
        assert_eq!(limit(&config, "anthropic"), 16);
    }

    #[test]
    fn retry_durations_out_of_range_name_the_line_and_key() {
        for (text, key) in [
            ("[retry]\ntimeout_secs = 1e30\n", "retry.timeout_secs"),
            ("[retry]\ntimeout_secs = 0\n", "retry.timeout_secs"),
            ("[retry]\ntimeout_secs = nan\n", "retry.timeout_secs"),
            (
                "concurrency = 2\n\n[retry]\nrate_limit_budget_secs = -1\n",
                "retry.rate_limit_budget_secs",
            ),
            (
                "[retry]\nrate_limit_budget_secs = inf\n",
                "retry.rate_limit_budget_secs",
            ),
        ] {
            let mut config = Config::defaults("/crate");
            let err = config
                .apply_file(Path::new("prompt-tester.toml"), text)
                .unwrap_err()
                .to_string();
            let line = text
                .lines()
                .position(|l| l.contains(key.trim_start_matches("retry.")))
                .unwrap()
                + 1;
            assert!(
                err.starts_with(&format!("prompt-tester.toml:{line}: `{key}` is ")),
                "{err}"
            );
            assert!(err.contains("at most 86400"), "{err}");
        }
        let mut config = Config::defaults("/crate");
        config
            .apply_file(
                Path::new("p.toml"),
                "[retry]\ntimeout_secs = 30\nrate_limit_budget_secs = 0.5\n",
            )
            .unwrap();
        assert_eq!(config.retry.request_timeout, Duration::from_secs(30));
        assert_eq!(config.retry.rate_limit_budget, Duration::from_millis(500));
        assert_eq!(
            Config::defaults("/").retry.rate_limit_budget,
            Duration::from_secs(DEFAULT_RATE_LIMIT_BUDGET_SECS)
        );
    }
}
