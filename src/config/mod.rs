//! Configuration in one place: `prompt-tester.toml` at the crate root, then environment variables,
//! then the builder in `main` (each overrides the one before).
//!
//! The file format is in `file` (its `[providers]` and `[prices]` in `providers`), the environment in
//! `env`, endpoints and their prices in `endpoints`;
//! the defaults themselves are in `src/defaults.rs`.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod endpoints;
mod env;
mod file;
mod layered;
mod providers;
mod sampling;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::defaults;
use crate::model::BUILT_IN;
pub use crate::model::WireFormat;
pub use crate::pricing::Price;
pub use endpoints::EndpointConfig;
pub use endpoints::UnknownProvider;
pub use env::is_ci;
#[cfg(feature = "mcp")]
pub(crate) use env::var_os;
#[cfg(feature = "endpoint")]
pub(crate) use env::{APP_ENV, app_env_was};
pub(crate) use env::{add_dotenv, env_var};
pub(crate) use layered::{Layered, layered_fieldwise};
pub use sampling::{MAX_SEED, SamplingKeys, SamplingProblem, run_seed};

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
    /// A cassette mode (`PROMPT_TESTER_CASSETTE`) that names no mode.
    #[error("{name}={value:?} is not a cassette mode: use one of auto, replay, record, off")]
    Mode {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
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
    /// A provider name no endpoint has (`base_url`, a test's provider).
    #[error("{0}")]
    UnknownProvider(UnknownProvider),
}

impl From<UnknownProvider> for ConfigError {
    fn from(unknown: UnknownProvider) -> Self {
        Self::UnknownProvider(unknown)
    }
}

/// `path` or `path:line`.
fn located(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

/// A configuration file as its readers see it: its path, which errors name, and its text, in which a
/// value's span finds its line.
#[derive(Clone, Copy)]
struct ConfigSource<'a> {
    path: &'a Path,
    text: &'a str,
}

impl ConfigSource<'_> {
    /// `key` is invalid (`problem`: why, and how to fix it); `at`, where its value starts, gives the
    /// error its line.
    fn invalid(
        &self,
        at: Option<usize>,
        key: impl Into<String>,
        problem: impl Into<String>,
    ) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            line: at.map(|at| crate::spanned::line_column(self.text, at).0),
            key: key.into(),
            problem: problem.into(),
        }
    }
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
    /// `[judge] min_accuracy`: below this lower end of the judge's measured accuracy on a question's
    /// type (95% Wilson), its verdicts on that type are advisory.
    pub min_accuracy: f64,
    /// `[judge] advisory`: what a failing advisory verdict does where the harness sees it decide.
    pub advisory: AdvisoryPolicy,
    /// `[judge] judge_samples`: how many times each question is asked (odd); the verdict is the
    /// majority's.
    pub samples: u32,
    /// `[judge] min_agreement`: below this share of the answers agreeing with the majority, a verdict
    /// asked several times is advisory.
    pub min_agreement: f64,
}

impl JudgeConfig {
    /// `provider`/`model` with the default `max_tokens`, temperature, `min_accuracy` and `advisory`.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            model: model.into(),
            max_tokens: defaults::JUDGE_MAX_TOKENS,
            temperature: Some(defaults::JUDGE_TEMPERATURE),
            min_accuracy: defaults::JUDGE_MIN_ACCURACY,
            advisory: AdvisoryPolicy::default(),
            samples: 1,
            min_agreement: defaults::JUDGE_MIN_AGREEMENT,
        }
    }
}

/// What a failing advisory verdict (a judge not measured, or measured too low, on the question's type)
/// does where the harness sees the verdict decide: a suite's `judge` assertion, `JudgeVerdict::require`
/// (`[judge] advisory`; the default is `"fail"` (`defaults::JUDGE_ADVISORY`)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdvisoryPolicy {
    /// The verdict decides: the sample fails, its message marked advisory (the default).
    Fail,
    /// The sample does not fail on it: the "no" is reported (the summary, every report), not counted.
    Warn,
    /// The sample errors: the judge is not measured on this kind of question.
    Error,
}

impl AdvisoryPolicy {
    /// Each policy and the word `prompt-tester.toml` writes for it.
    const WORDS: [(&'static str, AdvisoryPolicy); 3] = [
        ("fail", AdvisoryPolicy::Fail),
        ("warn", AdvisoryPolicy::Warn),
        ("error", AdvisoryPolicy::Error),
    ];

    /// The policy `word` names, if any.
    pub(crate) fn from_word(word: &str) -> Option<Self> {
        Self::WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, p)| *p)
    }

    /// The word `prompt-tester.toml` writes for it.
    pub fn word(self) -> &'static str {
        Self::WORDS
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("fail", |(w, _)| w)
    }
}

impl Default for AdvisoryPolicy {
    fn default() -> Self {
        Self::from_word(defaults::JUDGE_ADVISORY)
            .expect("defaults::JUDGE_ADVISORY names a policy (a unit test checks it)")
    }
}

/// Which model embeds texts for the `similar` assertion and `run.similarity` (`[embeddings]`).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsConfig {
    /// The provider name (an OpenAI-compatible endpoint or `google`; Anthropic has no embeddings API).
    pub provider: String,
    /// The embedding model id.
    pub model: String,
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
    /// The largest answer body read, in bytes: a longer one makes the call fail (not retried).
    pub max_response_bytes: u64,
}

/// The default of `[retry] rate_limit_budget_secs`.
pub const DEFAULT_RATE_LIMIT_BUDGET_SECS: u64 = defaults::RATE_LIMIT_BUDGET_SECS;

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: defaults::MAX_ATTEMPTS,
            initial_backoff: defaults::INITIAL_BACKOFF,
            max_backoff: defaults::MAX_BACKOFF,
            request_timeout: defaults::REQUEST_TIMEOUT,
            rate_limit_budget: Duration::from_secs(defaults::RATE_LIMIT_BUDGET_SECS),
            max_response_bytes: defaults::MAX_RESPONSE_BYTES,
        }
    }
}

/// The subject call's provider, model, `max_tokens` and temperature: `[defaults]` sets them for tests
/// that do not say, and a test or a suite says them for itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Defaults {
    /// The subject provider.
    pub provider: Option<String>,
    /// The subject model.
    pub model: Option<String>,
    /// `max_tokens` (2048 when set nowhere).
    pub max_tokens: Option<u32>,
    /// The temperature.
    pub temperature: Option<f32>,
    /// The seed of the first sample (`seed`): sample k sends `seed + k − 1` where the provider takes one.
    pub seed: Option<u32>,
    /// The most USD one test may spend on provider calls (`budget`).
    pub budget: Option<f64>,
}

layered_fieldwise!(pub(crate) Defaults {
    provider,
    model,
    max_tokens,
    temperature,
    seed,
    budget
});

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// The crate root: relative paths are resolved against it.
    pub root: PathBuf,
    /// The most model calls in flight per provider, unless an endpoint says otherwise: set through
    /// [`Config::set_concurrency`] only, which applies it to the endpoints.
    concurrency: usize,
    /// The judge, if configured.
    pub judge: Option<JudgeConfig>,
    /// The embedding model, if configured.
    pub embeddings: Option<EmbeddingsConfig>,
    /// Endpoints whose embeddings are served at another base URL (`embeddings_base_url`), by name.
    pub embeddings_base_urls: BTreeMap<String, String>,
    /// Defaults for tests.
    pub defaults: Defaults,
    /// Sampling defaults for tests (`early_stop` and adaptive sampling's keys in `[defaults]`).
    pub sampling: SamplingKeys,
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
    /// Every test's subject for this run (`PROMPT_TESTER_SUBJECT` or `--subject`), if one is set.
    pub subject: Option<crate::model::Subject>,
    /// Endpoints whose `max_in_flight` their own table sets: `concurrency` does not override it.
    own_in_flight: BTreeSet<String>,
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
            embeddings: None,
            embeddings_base_urls: BTreeMap::new(),
            defaults: Defaults::default(),
            sampling: SamplingKeys::default(),
            retry: RetryConfig::default(),
            endpoints,
            prices: BTreeMap::new(),
            free_endpoints: BTreeSet::new(),
            subject: None,
            own_in_flight: BTreeSet::new(),
        }
    }

    /// Loads `prompt-tester.toml` (or `PROMPT_TESTER_CONFIG`) under `root`, then the environment.
    pub fn load(root: impl Into<PathBuf>) -> Result<Self, ConfigError> {
        let root = root.into();
        let mut config = Self::defaults(&root);
        let path = match env_var("PROMPT_TESTER_CONFIG") {
            // Named on purpose: a file that is not there is a mistake, not the defaults.
            Some(p) if !root.join(&p).is_file() => {
                return Err(ConfigError::Env {
                    name: "PROMPT_TESTER_CONFIG",
                    value: p.clone(),
                    expected: format!(
                        "the path of a configuration file, relative to the crate root {}; no file is at {}",
                        root.display(),
                        root.join(&p).display()
                    ),
                });
            }
            Some(p) => root.join(p),
            None => root.join(CONFIG_FILE),
        };
        if path.exists() {
            let text = crate::text::read(&path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            config.apply_file(&path, &text)?;
        }
        config.apply_env()?;
        Ok(config)
    }

    /// Sets the judge's provider and model, keeping its `max_tokens` and temperature when one was
    /// configured, else the defaults.
    pub fn set_judge(&mut self, provider: impl Into<String>, model: impl Into<String>) {
        let base = self.judge.take();
        self.judge = Some(match base {
            Some(base) => JudgeConfig {
                provider: provider.into(),
                model: model.into(),
                ..base
            },
            None => JudgeConfig::new(provider, model),
        });
    }

    /// The most model calls in flight per provider, unless an endpoint sets its own `max_in_flight`.
    /// It is set one way, [`Config::set_concurrency`] (what `Harness::concurrency` and
    /// `PROMPT_TESTER_CONCURRENCY` do), which the endpoints' limits follow:
    ///
    /// ```
    /// let mut config = prompt_tester::config::Config::defaults(".");
    /// config.set_concurrency(2);
    /// assert_eq!(config.concurrency(), 2);
    /// ```
    ///
    /// The field is not public: assigning it would bypass the endpoints' limits.
    ///
    /// ```compile_fail
    /// let mut config = prompt_tester::config::Config::defaults(".");
    /// config.concurrency = 2;
    /// ```
    pub fn concurrency(&self) -> usize {
        self.concurrency
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
}

/// The judge is not configured: how to configure it (the seed's `ConfigurationError`).
pub(crate) fn judge_not_configured() -> String {
    format!(
        "this test asks the judge, but no judge model is configured. Add to {CONFIG_FILE} at the crate root:\n\
         \n    [judge]\n    provider = \"anthropic\"   # or google, openai, or a [providers.NAME] endpoint\n    \
         model = \"claude-haiku-4-5\"\n\n\
         or set PROMPT_TESTER_JUDGE_PROVIDER and PROMPT_TESTER_JUDGE_MODEL, or call .judge(provider, model) \
         on the Harness builder in main."
    )
}

/// Embeddings are not configured: how to configure them.
pub(crate) fn embeddings_not_configured() -> String {
    format!(
        "this test compares meanings (`similar` or run.similarity), but no embedding model is configured. \
         Add to {CONFIG_FILE} at the crate root:\n\n    [embeddings]\n    provider = \"openai\"   # or google, \
         or an OpenAI-compatible [providers.NAME] endpoint\n    model = \"text-embedding-3-small\"\n"
    )
}

/// The configuration a file of `text` gives, on the defaults (for tests).
#[cfg(test)]
fn from_file(text: &str) -> Result<Config, ConfigError> {
    let mut config = Config::defaults("/crate");
    config.apply_file(Path::new("prompt-tester.toml"), text)?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_advisory_policy_is_fail_and_every_word_reads_back() {
        assert_eq!(AdvisoryPolicy::default(), AdvisoryPolicy::Fail);
        for (word, policy) in AdvisoryPolicy::WORDS {
            assert_eq!(
                (AdvisoryPolicy::from_word(word), policy.word()),
                (Some(policy), word)
            );
        }
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
                min_accuracy: 0.7,
                advisory: AdvisoryPolicy::Fail,
                samples: 1,
                min_agreement: 0.8,
            })
        );
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
}
