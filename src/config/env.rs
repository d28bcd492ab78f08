//! Environment variables: base URLs, the judge, concurrency.

use super::{BUILT_IN, Config, ConfigError};

/// Whether this runs under CI (`CI` set to anything but `false` or `0`, as most CI services do).
pub fn is_ci() -> bool {
    env_var("CI").is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "0"))
}

/// Reads an environment variable, treating an empty value as unset.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Config {
    /// Applies the environment variables (base URLs, judge, concurrency).
    pub(crate) fn apply_env(&mut self) -> Result<(), ConfigError> {
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
        if let Some(value) = env_var("PROMPT_TESTER_SUBJECT") {
            let subject =
                value
                    .parse()
                    .map_err(|e: crate::model::SubjectError| ConfigError::Env {
                        name: "PROMPT_TESTER_SUBJECT",
                        value: value.clone(),
                        expected: format!(
                            "`provider/model`, the model every test of the run targets ({})",
                            e.problem
                        ),
                    })?;
            self.subject = Some(subject);
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
}
