//! The file format of `prompt-tester.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use prompt_tester_keys::{Key, Range};
use serde::Deserialize;
use toml::Spanned;

use super::{
    Config, ConfigError, ConfigSource, Defaults, EmbeddingsConfig, JudgeConfig, SamplingKeys,
    defaults,
};
use crate::config::sampling::MAX_SEED;

/// The smallest `[retry] max_response_bytes`: a real answer is larger than a few kilobytes.
const MIN_RESPONSE_BYTES: u64 = 64 * 1024;

/// The longest duration a `[retry]` key accepts, in seconds (a day): longer waits are mistakes, and
/// far larger values would overflow the clock.
const MAX_RETRY_SECS: f64 = 86_400.0;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    concurrency: Option<usize>,
    cassette_dir: Option<PathBuf>,
    suite_roots: Option<Vec<PathBuf>>,
    #[serde(default)]
    defaults: FileDefaults,
    judge: Option<FileJudge>,
    embeddings: Option<FileEmbeddings>,
    #[serde(default)]
    retry: FileRetry,
    #[serde(default)]
    providers: BTreeMap<String, super::providers::FileProvider>,
    #[serde(default)]
    prices: BTreeMap<String, super::providers::FilePrice>,
}

/// `[defaults]`: the keys the table allows in `Place::Defaults` (a test checks they are the same).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDefaults {
    provider: Option<String>,
    model: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    seed: Option<Spanned<u32>>,
    early_stop: Option<bool>,
    pass_rate: Option<Spanned<f64>>,
    confidence: Option<Spanned<f64>>,
    max_runs: Option<Spanned<u32>>,
    indifference: Option<Spanned<f64>>,
    budget: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJudge {
    provider: String,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    min_accuracy: Option<Spanned<f64>>,
    advisory: Option<Spanned<String>>,
    judge_samples: Option<Spanned<u32>>,
    min_agreement: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEmbeddings {
    provider: Spanned<String>,
    model: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRetry {
    max_attempts: Option<u32>,
    initial_backoff_ms: Option<u64>,
    max_backoff_ms: Option<u64>,
    timeout_secs: Option<Spanned<f64>>,
    rate_limit_budget_secs: Option<Spanned<f64>>,
    max_response_bytes: Option<Spanned<u64>>,
}

/// The seeds `[defaults] seed` takes: the table's (a `u32` already has the lower end).
fn seed_range() -> Range {
    Key::Seed.row().range.expect("`seed` has a range")
}

/// serde's "unknown field `subject_model`" with the name this file gives the key, when the field is
/// #[prompt_test]'s name for one (`model`).
fn with_the_file_s_name(message: String) -> String {
    let field = message
        .split_once("unknown field `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(field, _)| field);
    match field.and_then(|f| Key::meant_in(f, prompt_tester_keys::Place::Defaults).map(|k| (f, k)))
    {
        Some((field, key)) if field != key.name() => format!(
            "{}\n`{field}` is #[prompt_test]'s name for `{key}`: write `{key}` here\n",
            message.trim_end()
        ),
        _ => message,
    }
}

impl Config {
    /// Applies the text of a configuration file (`path` is for messages).
    pub(crate) fn apply_file(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: with_the_file_s_name(e.to_string()),
        })?;
        let source = ConfigSource { path, text };
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
            Err(source.invalid(
                Some(value.span().start),
                key,
                format!("is {secs}: use a number of seconds, {bound} and at most {MAX_RETRY_SECS} (a day)"),
            ))
        };
        if let Some(c) = file.concurrency {
            if c == 0 {
                return Err(source.invalid(
                    None,
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
        let d = &file.defaults;
        if let Some(seed) = &d.seed
            && !seed_range().contains_whole(i128::from(*seed.get_ref()))
        {
            return Err(source.invalid(
                Some(seed.span().start),
                "defaults.seed",
                format!(
                    "is {}; use a whole number from 0 to {MAX_SEED}",
                    seed.get_ref()
                ),
            ));
        }
        if let Some(budget) = &d.budget
            && !Key::Budget
                .row()
                .range
                .is_some_and(|r| r.contains(*budget.get_ref()))
        {
            return Err(source.invalid(
                Some(budget.span().start),
                "defaults.budget",
                Key::Budget.is_out_of_range(*budget.get_ref()),
            ));
        }
        self.sampling = SamplingKeys {
            early_stop: d.early_stop,
            pass_rate: d.pass_rate.as_ref().map(|v| *v.get_ref()),
            confidence: d.confidence.as_ref().map(|v| *v.get_ref()),
            max_runs: d.max_runs.as_ref().map(|v| *v.get_ref()),
            indifference: d.indifference.as_ref().map(|v| *v.get_ref()),
            ..SamplingKeys::default()
        };
        if let Err(e) = self.sampling.check_defaults() {
            let key = e.key();
            // The adaptive keys are the ones `check_defaults` finds fault with.
            let span = match key {
                Key::PassRate => d.pass_rate.as_ref().map(Spanned::span),
                Key::Confidence => d.confidence.as_ref().map(Spanned::span),
                Key::MaxRuns => d.max_runs.as_ref().map(Spanned::span),
                _ => d.indifference.as_ref().map(Spanned::span),
            };
            return Err(source.invalid(
                span.map(|s| s.start),
                format!("defaults.{key}"),
                e.problem(),
            ));
        }
        self.defaults = Defaults {
            provider: file.defaults.provider,
            model: file.defaults.model,
            max_tokens: file.defaults.max_tokens,
            temperature: file.defaults.temperature,
            seed: file.defaults.seed.map(Spanned::into_inner),
            budget: file.defaults.budget.map(Spanned::into_inner),
        };
        if let Some(judge) = file.judge {
            let min_accuracy = match &judge.min_accuracy {
                Some(m) if !(0.0..=1.0).contains(m.get_ref()) => {
                    return Err(source.invalid(
                        Some(m.span().start),
                        "judge.min_accuracy",
                        format!(
                            "is {}: use a share from 0 to 1, the least lower end of the judge's measured accuracy \
                             on a question's type, e.g. {} (0 never makes a measured verdict advisory)",
                            m.get_ref(),
                            defaults::JUDGE_MIN_ACCURACY
                        ),
                    ));
                }
                Some(m) => *m.get_ref(),
                None => defaults::JUDGE_MIN_ACCURACY,
            };
            let samples = match &judge.judge_samples {
                Some(k) if *k.get_ref() % 2 == 0 || *k.get_ref() > defaults::MAX_JUDGE_SAMPLES => {
                    return Err(source.invalid(
                        Some(k.span().start),
                        "judge.judge_samples",
                        format!(
                            "is {}: use an odd number from 1 to {}, so the k answers always have a majority \
                             (3 or 5 is usual)",
                            k.get_ref(),
                            defaults::MAX_JUDGE_SAMPLES
                        ),
                    ));
                }
                Some(k) => *k.get_ref(),
                None => 1,
            };
            let min_agreement = match &judge.min_agreement {
                Some(m) if !(0.0..=1.0).contains(m.get_ref()) => {
                    return Err(source.invalid(
                        Some(m.span().start),
                        "judge.min_agreement",
                        format!(
                            "is {}: use a share from 0 to 1 of the judge_samples answers that must agree, e.g. {}",
                            m.get_ref(),
                            defaults::JUDGE_MIN_AGREEMENT
                        ),
                    ));
                }
                Some(m) => *m.get_ref(),
                None => defaults::JUDGE_MIN_AGREEMENT,
            };
            let advisory = match &judge.advisory {
                None => super::AdvisoryPolicy::default(),
                Some(word) => super::AdvisoryPolicy::from_word(word.get_ref()).ok_or_else(|| {
                    source.invalid(
                        Some(word.span().start),
                        "judge.advisory",
                        format!(
                            "is {:?}: write \"fail\" (the default: the verdict decides, the sample fails, marked \
                             advisory), \"warn\" (the \"no\" is reported but does not fail the sample) or \"error\" \
                             (the sample errors: the judge is not measured on this kind of question)",
                            word.get_ref()
                        ),
                    )
                })?,
            };
            self.judge = Some(JudgeConfig {
                provider: judge.provider,
                model: judge.model,
                max_tokens: judge.max_tokens.unwrap_or(defaults::JUDGE_MAX_TOKENS),
                temperature: judge.temperature.or(Some(defaults::JUDGE_TEMPERATURE)),
                min_accuracy,
                advisory,
                samples,
                min_agreement,
            });
        }
        let r = &mut self.retry;
        if let Some(n) = file.retry.max_attempts {
            if n == 0 {
                return Err(source.invalid(
                    None,
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
        if let Some(bytes) = &file.retry.max_response_bytes {
            let value = *bytes.get_ref();
            if value < MIN_RESPONSE_BYTES {
                return Err(source.invalid(
                    Some(bytes.span().start),
                    "retry.max_response_bytes",
                    format!(
                        "is {value}: use a number of bytes, at least {MIN_RESPONSE_BYTES} (a real answer is \
                         larger than a few kilobytes)"
                    ),
                ));
            }
            r.max_response_bytes = value;
        }
        if let Some(secs) = &file.retry.rate_limit_budget_secs {
            r.rate_limit_budget = seconds("retry.rate_limit_budget_secs", secs, 0.0)?;
        }
        self.apply_providers(source, file.providers)?;
        self.apply_prices(source, file.prices)?;
        if let Some(embeddings) = file.embeddings {
            let at = embeddings.provider.span().start;
            let provider = embeddings.provider.into_inner();
            // Checked here, where the line is known, rather than at the first `similar`.
            let problem = match self.endpoint(&provider) {
                Err(unknown) => Some(unknown.to_string()),
                Ok(endpoint) => endpoint
                    .wire
                    .embeddings_unsupported()
                    .map(|why| format!("is {provider:?}: {why}")),
            };
            if let Some(problem) = problem {
                return Err(source.invalid(Some(at), "embeddings.provider", problem));
            }
            self.embeddings = Some(EmbeddingsConfig {
                provider,
                model: embeddings.model,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::from_file;
    use super::*;
    use crate::config::WireFormat;

    /// Why a file of `text` is rejected.
    fn rejection(text: &str) -> String {
        from_file(text).unwrap_err().to_string()
    }

    /// Checks that each file of `cases` is rejected, its message `fits` the expected text.
    fn assert_rejected(cases: &[(&str, &str)], fits: fn(&str, &str) -> bool) {
        for (text, expected) in cases {
            let err = rejection(text);
            assert!(fits(&err, expected), "{expected:?} does not fit {err}");
        }
    }

    #[test]
    fn file_configures_judge_endpoints_and_prices() {
        let config = from_file(
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
        let unknown = config.endpoint("nope").unwrap_err();
        assert_eq!((unknown.name.as_str(), &unknown.closest), ("nope", &None));
        assert!(unknown.to_string().contains("[providers.nope]"));
    }

    #[test]
    fn the_judge_s_trust_keys_are_read_and_bad_values_name_the_key_and_the_line() {
        let config = from_file(
            "[judge]\nprovider = \"a\"\nmodel = \"b\"\nmin_accuracy = 0.9\nadvisory = \"error\"\n\
             judge_samples = 5\nmin_agreement = 0.6\n",
        )
        .unwrap();
        let judge = config.judge.unwrap();
        assert_eq!(
            (
                judge.min_accuracy,
                judge.advisory,
                judge.samples,
                judge.min_agreement
            ),
            (0.9, super::super::AdvisoryPolicy::Error, 5, 0.6)
        );
        let head = "[judge]\nprovider = \"a\"\nmodel = \"b\"\n";
        // Each names the file, the line and the key, and says what to write.
        for (line, expected) in [
            (
                "judge_samples = 2",
                "prompt-tester.toml:4: `judge.judge_samples` is 2: use an odd number from 1 to 99",
            ),
            ("judge_samples = 101", "use an odd number from 1 to 99"),
            (
                "min_accuracy = 1.5",
                "prompt-tester.toml:4: `judge.min_accuracy` is 1.5: use a share from 0 to 1",
            ),
            (
                "min_agreement = -0.1",
                "prompt-tester.toml:4: `judge.min_agreement` is -0.1: use a share from 0 to 1",
            ),
            (
                "advisory = \"maybe\"",
                "prompt-tester.toml:4: `judge.advisory` is \"maybe\": write \"fail\" (the default",
            ),
            (
                "advisory = \"ignore\"",
                "\"warn\" (the \"no\" is reported but does not fail the sample) or \"error\"",
            ),
        ] {
            let err = rejection(&format!("{head}{line}\n"));
            assert!(err.contains(expected), "{line}: {err}");
        }
    }

    /// Every `prompt-tester.toml` example on the front page and in the guide's chapters on
    /// configuration is a valid configuration (the other TOML blocks are a `Cargo.toml` and suites,
    /// which start by saying so).
    #[test]
    fn the_docs_configuration_examples_are_valid() {
        let mut checked = 0;
        for (doc, text) in [
            ("README.md", include_str!("../../README.md")),
            ("src/guide/start.md", include_str!("../guide/start.md")),
            ("src/guide/keys.md", include_str!("../guide/keys.md")),
            ("src/guide/judge.md", include_str!("../guide/judge.md")),
            (
                "src/guide/providers.md",
                include_str!("../guide/providers.md"),
            ),
        ] {
            let blocks = text
                .split("```toml\n")
                .skip(1)
                .filter_map(|rest| rest.split_once("```").map(|(block, _)| block))
                .filter(|b| {
                    !b.starts_with("[dev-dependencies]") && !b.starts_with("# prompt-tests/")
                });
            for block in blocks {
                let mut config = Config::defaults("/crate");
                if let Err(e) = config.apply_file(Path::new(doc), block) {
                    panic!("{e}\nin {doc}'s block:\n{block}");
                }
                checked += 1;
            }
        }
        assert!(checked >= 6, "{checked} blocks");
    }

    #[test]
    fn unknown_keys_name_the_file_line_and_key() {
        let err = rejection("concurrency = 2\n[judge]\nmodle = \"x\"\n");
        assert!(err.contains("prompt-tester.toml"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("modle"), "{err}");
    }

    #[test]
    fn embeddings_name_a_provider_that_has_an_embeddings_api() {
        let config = from_file(
            "[embeddings]\nprovider = \"local\"\nmodel = \"m\"\n[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n\
             embeddings_base_url = \"http://127.0.0.1:2/v1\"\n",
        )
        .unwrap();
        let embeddings = config.embeddings.as_ref().unwrap();
        assert_eq!(
            (embeddings.provider.as_str(), embeddings.model.as_str()),
            ("local", "m")
        );
        assert_eq!(
            config.embeddings_base_urls["local"],
            "http://127.0.0.1:2/v1"
        );
        assert_eq!(
            config.endpoint("local").unwrap().base_url,
            "http://127.0.0.1:1/v1"
        );
        assert!(
            from_file("[embeddings]\nprovider = \"gemini\"\nmodel = \"gemini-embedding-001\"\n")
                .is_ok()
        );
        assert_rejected(
            &[
                (
                    "concurrency = 2\n[embeddings]\nprovider = \"anthropic\"\nmodel = \"m\"\n",
                    "prompt-tester.toml:3: `embeddings.provider` is \"anthropic\": Anthropic has no embeddings API",
                ),
                (
                    "[embeddings]\nprovider = \"nope\"\nmodel = \"m\"\n",
                    "prompt-tester.toml:2: `embeddings.provider` unknown provider \"nope\"",
                ),
                (
                    "[embeddings]\nprovider = \"openai\"\n",
                    "missing field `model`",
                ),
                (
                    "[embeddings]\nprovider = \"openai\"\nmodel = \"m\"\ndims = 3\n",
                    "unknown field `dims`",
                ),
            ],
            |err, expected| err.contains(expected),
        );
    }

    #[test]
    fn sampling_defaults_are_read_and_checked_at_their_line() {
        let config =
            from_file("[defaults]\nseed = 42\nearly_stop = true\npass_rate = 0.9\nmax_runs = 60\n")
                .unwrap();
        assert_eq!(config.defaults.seed, Some(42));
        assert_eq!(config.sampling.early_stop, Some(true));
        assert_eq!(
            (config.sampling.pass_rate, config.sampling.max_runs),
            (Some(0.9), Some(60))
        );
        assert_rejected(
            &[
                (
                    "[defaults]\nmodel = \"m\"\nconfidence = 1.5\n",
                    "prompt-tester.toml:3: `defaults.confidence` is 1.5; it must be at least 0.5 and below 1",
                ),
                (
                    "[defaults]\npass_rate = 0.8\nmax_runs = 10\n",
                    "prompt-tester.toml:3: `defaults.max_runs` is 10, but even when every run passes the test needs 24",
                ),
                (
                    "[defaults]\npass_rate = 0.9\nindifference = 0.1\n",
                    "prompt-tester.toml:3: `defaults.indifference` is 0.1; with `pass_rate = 0.9` it must be above 0 and \
                 below 0.1",
                ),
                (
                    "[defaults]\nindifference = 0.7\n",
                    "prompt-tester.toml:2: `defaults.indifference` is 0.7",
                ),
                (
                    "[defaults]\n\nseed = 3000000000\n",
                    "prompt-tester.toml:3: `defaults.seed` is 3000000000; use a whole number from 0 to 2147483647",
                ),
                (
                    "[defaults]\npass_rate = 0.8\nindifference = 1e-10\n",
                    "prompt-tester.toml:3: `defaults.indifference` is 0.0000000001: too small for any test to decide",
                ),
            ],
            |err, start| err.starts_with(start),
        );
    }

    /// `[defaults]` takes exactly the keys the table allows there: serde lists the fields it expects
    /// beside an unknown one.
    #[test]
    fn defaults_take_the_keys_of_the_table() {
        let err = rejection("[defaults]\nnot_a_key = 1\n");
        let (_, expected) = err
            .split_once("expected one of ")
            .unwrap_or_else(|| panic!("{err}"));
        let mut read: Vec<&str> = expected
            .split(", ")
            .map(|field| field.trim().trim_matches('`'))
            .take_while(|field| !field.is_empty() && !field.contains(char::is_whitespace))
            .collect();
        let mut table = prompt_tester_keys::names_in(prompt_tester_keys::Place::Defaults);
        read.sort_unstable();
        table.sort_unstable();
        assert_eq!(read, table, "{err}");
    }

    /// The attribute's name for a key of `[defaults]` (or `[judge]`) is told the file's.
    #[test]
    fn the_attribute_s_name_for_a_key_is_told_the_file_s() {
        let err = rejection("[defaults]\nsubject_model = \"m\"\n");
        assert!(
            err.contains("line 2") && err.contains("unknown field `subject_model`"),
            "{err}"
        );
        assert!(
            err.contains(
                "`subject_model` is #[prompt_test]'s name for `model`: write `model` here"
            ),
            "{err}"
        );
        let err = rejection("[judge]\nsubject_provider = \"anthropic\"\nmodel = \"m\"\n");
        assert!(
            err.contains(
                "`subject_provider` is #[prompt_test]'s name for `provider`: write `provider` here"
            ),
            "{err}"
        );
        assert!(!rejection("[defaults]\nnot_a_key = 1\n").contains("#[prompt_test]"));
    }

    #[test]
    fn a_default_budget_is_read_and_a_negative_one_names_its_line() {
        let config = from_file("[defaults]\nbudget = 0.25\n").unwrap();
        assert_eq!(config.defaults.budget, Some(0.25));
        let err = rejection("[defaults]\n\nbudget = -1.0\n");
        assert!(
            err.contains(":3") && err.contains("defaults.budget"),
            "{err}"
        );
        assert!(err.contains("it must be at least 0, in USD"), "{err}");
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
    fn a_response_cap_below_a_real_answer_names_the_line_and_key() {
        let err = rejection("[retry]\n\nmax_response_bytes = 100\n");
        assert!(
            err.starts_with(
                "prompt-tester.toml:3: `retry.max_response_bytes` is 100: use a number of bytes"
            ),
            "{err}"
        );
        let config = from_file("[retry]\nmax_response_bytes = 1048576\n").unwrap();
        assert_eq!(config.retry.max_response_bytes, 1_048_576);
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
            let err = rejection(text);
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
            Duration::from_secs(super::super::DEFAULT_RATE_LIMIT_BUDGET_SECS)
        );
    }
}
