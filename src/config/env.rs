//! Environment variables: base URLs, the judge, concurrency.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::RwLock;

use super::{BUILT_IN, Config, ConfigError};

/// Whether this runs under CI (`CI` set to anything but `false` or `0`, as most CI services do).
pub fn is_ci() -> bool {
    env_var("CI").is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "0"))
}

/// The crate's `.env` values, beneath the process environment: a variable the process has is never
/// taken from them (as dotenvy's loading does). Kept here rather than written into the environment:
/// `set_var` is unsound once threads exist. Process-wide, as the environment they extend is.
static DOTENV: RwLock<BTreeMap<String, String>> = RwLock::new(BTreeMap::new());

/// Adds a `.env` file's `(name, value)` pairs beneath the environment; a name already added keeps
/// its first value (a second harness in the process reads the same file).
pub(crate) fn add_dotenv(values: impl IntoIterator<Item = (String, String)>) {
    let mut dotenv = DOTENV.write().unwrap_or_else(|e| e.into_inner());
    for (name, value) in values {
        dotenv.entry(name).or_insert(value);
    }
}

/// Set on a test binary started again for `app_env` tests: `PORT/SECRET` of the recording endpoint
/// its built-in providers' base-URL variables point at.
pub(crate) const APP_ENV: &str = "PROMPT_TESTER_APP_ENV";

/// The variable holding what `name` held before `app_env` pointed it at the endpoint.
pub(crate) fn app_env_was(name: &str) -> String {
    format!("PROMPT_TESTER_APP_ENV_WAS_{name}")
}

/// A variable as the harness sees it: the process environment's, else the `.env` file's. Under
/// `app_env`, a built-in provider's base-URL variable reads what it held before: the harness's own
/// calls must not go to the endpoint that relays to them.
pub(crate) fn var_os(name: &str) -> Option<OsString> {
    if std::env::var_os(APP_ENV).is_some() && BUILT_IN.iter().any(|p| p.base_url_env == name) {
        return std::env::var_os(app_env_was(name)).or_else(|| dotenv(name));
    }
    std::env::var_os(name).or_else(|| dotenv(name))
}

fn dotenv(name: &str) -> Option<OsString> {
    let dotenv = DOTENV.read().unwrap_or_else(|e| e.into_inner());
    dotenv.get(name).map(OsString::from)
}

/// Reads an environment variable (or the `.env` file's, see [`var_os`]), treating an empty value
/// as unset.
pub(crate) fn env_var(name: &str) -> Option<String> {
    var_os(name)
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.trim().is_empty())
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
