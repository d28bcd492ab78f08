//! Names of providers and models, as enums for the common ones and plain strings for the rest.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::Deserialize;
use std::fmt;

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

impl WireFormat {
    /// Why this wire format cannot embed, for the one without an embeddings API.
    pub(crate) fn embeddings_unsupported(self) -> Option<&'static str> {
        (self == WireFormat::Anthropic).then_some(
            "Anthropic has no embeddings API: set [embeddings] provider to an OpenAI-compatible endpoint \
             (openai, or a [providers.NAME] such as Ollama, vLLM or llama-server --embeddings) or to google",
        )
    }
}

impl<'de> Deserialize<'de> for WireFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Some(provider) = built_in(&name) {
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

/// What the crate knows about one built-in provider. Every place that names a built-in provider
/// (the [`Provider`] enum, `kind = "..."`, the built-in endpoints, their base-URL variables, the
/// public URLs a key is required at) reads [`BUILT_IN`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProviderInfo {
    /// The canonical name (configuration, cassettes, reports): also the name of its wire format.
    pub name: &'static str,
    /// Other names that mean this provider.
    pub aliases: &'static [&'static str],
    /// The wire format it speaks.
    pub wire: WireFormat,
    /// Its public base URL (OpenAI's includes `/v1`).
    pub base_url: &'static str,
    /// The environment variable that overrides the base URL.
    pub base_url_env: &'static str,
    /// The environment variables that may hold the key, first set wins.
    pub key_env: &'static [&'static str],
}

/// The built-in providers.
pub(crate) const BUILT_IN: [ProviderInfo; 3] = [
    ProviderInfo {
        name: "anthropic",
        aliases: &[],
        wire: WireFormat::Anthropic,
        base_url: "https://api.anthropic.com",
        base_url_env: "ANTHROPIC_BASE_URL",
        key_env: &["ANTHROPIC_API_KEY"],
    },
    ProviderInfo {
        name: "google",
        aliases: &["gemini"],
        wire: WireFormat::Google,
        base_url: "https://generativelanguage.googleapis.com",
        base_url_env: "GOOGLE_GEMINI_BASE_URL",
        key_env: &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
    },
    ProviderInfo {
        name: "openai",
        aliases: &[],
        wire: WireFormat::OpenAi,
        base_url: "https://api.openai.com/v1",
        base_url_env: "OPENAI_BASE_URL",
        key_env: &["OPENAI_API_KEY"],
    },
];

/// The built-in provider called `name` or one of its aliases.
pub(crate) fn built_in(name: &str) -> Option<&'static ProviderInfo> {
    BUILT_IN
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

/// The built-in provider that speaks `wire`.
pub(crate) fn built_in_for(wire: WireFormat) -> &'static ProviderInfo {
    BUILT_IN
        .iter()
        .find(|p| p.wire == wire)
        .expect("every wire format has a built-in provider")
}

/// A model provider: one of the built-in three, or a named endpoint from `prompt-tester.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// Google Gemini API.
    Google,
    /// OpenAI Chat Completions (or any server set through `OPENAI_BASE_URL`).
    OpenAi,
    /// A named endpoint from `[providers.NAME]` in `prompt-tester.toml`.
    Named(String),
}

impl Provider {
    /// The name used in configuration, cassettes and reports.
    pub fn name(&self) -> &str {
        match self {
            Provider::Anthropic => built_in_for(WireFormat::Anthropic).name,
            Provider::Google => built_in_for(WireFormat::Google).name,
            Provider::OpenAi => built_in_for(WireFormat::OpenAi).name,
            Provider::Named(name) => name,
        }
    }
}

impl From<&str> for Provider {
    fn from(name: &str) -> Self {
        match built_in(name).map(|p| p.wire) {
            Some(WireFormat::Anthropic) => Provider::Anthropic,
            Some(WireFormat::Google) => Provider::Google,
            Some(WireFormat::OpenAi) => Provider::OpenAi,
            None => Provider::Named(name.to_string()),
        }
    }
}

impl From<String> for Provider {
    fn from(name: String) -> Self {
        Provider::from(name.as_str())
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! models {
    ($($(#[$doc:meta])* $variant:ident => $id:literal,)*) => {
        /// Well-known model ids. Any other id can be given as a string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Model {
            $($(#[$doc])* $variant,)*
        }

        impl Model {
            /// The provider's id of this model.
            pub fn id(self) -> &'static str {
                match self {
                    $(Model::$variant => $id,)*
                }
            }
        }
    };
}

models! {
    /// `claude-haiku-4-5`
    ClaudeHaiku45 => "claude-haiku-4-5",
    /// `claude-sonnet-4-6`
    ClaudeSonnet46 => "claude-sonnet-4-6",
    /// `claude-opus-4-7`
    ClaudeOpus47 => "claude-opus-4-7",
    /// `gemini-2.5-flash`
    Gemini25Flash => "gemini-2.5-flash",
    /// `gemini-2.5-pro`
    Gemini25Pro => "gemini-2.5-pro",
    /// `gemini-2.0-flash`
    Gemini20Flash => "gemini-2.0-flash",
    /// `gemini-2.0-flash-lite`
    Gemini20FlashLite => "gemini-2.0-flash-lite",
    /// `gemini-3.1-flash-lite`
    Gemini31FlashLite => "gemini-3.1-flash-lite",
    /// `gpt-4o`
    Gpt4o => "gpt-4o",
    /// `gpt-4o-mini`
    Gpt4oMini => "gpt-4o-mini",
    /// `gpt-4.1`
    Gpt41 => "gpt-4.1",
    /// `gpt-4.1-mini`
    Gpt41Mini => "gpt-4.1-mini",
    /// `o3-mini`
    O3Mini => "o3-mini",
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A model id from either a [`Model`] or a string (what `subject_model` accepts).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelId(pub String);

impl From<Model> for ModelId {
    fn from(model: Model) -> Self {
        ModelId(model.id().to_string())
    }
}

impl From<&str> for ModelId {
    fn from(id: &str) -> Self {
        ModelId(id.to_string())
    }
}

impl From<String> for ModelId {
    fn from(id: String) -> Self {
        ModelId(id)
    }
}

/// A subject of a model matrix or of `--subject`: `provider/model`, split at the first `/` (model ids
/// may contain more: `local/org/model-7b`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subject {
    /// The provider (a built-in name or a `[providers.NAME]` endpoint).
    pub provider: String,
    /// The model id.
    pub model: String,
}

/// A `provider/model` text that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{value:?} is not `provider/model`: {problem}; write e.g. `anthropic/claude-haiku-4-5` or \
     `local/SmolLM2-135M-Instruct`"
)]
#[non_exhaustive]
pub struct SubjectError {
    /// The text as given.
    pub value: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

impl std::str::FromStr for Subject {
    type Err = SubjectError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let error = |problem| SubjectError {
            value: value.to_string(),
            problem,
        };
        if value.trim() != value {
            return Err(error("it has leading or trailing spaces"));
        }
        let (provider, model) = value
            .split_once('/')
            .ok_or_else(|| error("there is no `/` between the provider and the model"))?;
        if provider.is_empty() {
            return Err(error("the provider before the `/` is empty"));
        }
        if model.is_empty() {
            return Err(error("the model after the `/` is empty"));
        }
        Ok(Self {
            provider: provider.to_string(),
            model: model.to_string(),
        })
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

impl serde::Serialize for Subject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Subject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_and_aliases_come_from_the_table() {
        let names = ["anthropic", "google", "gemini", "openai", "ollama"];
        assert_eq!(
            names.map(Provider::from),
            [
                Provider::Anthropic,
                Provider::Google,
                Provider::Google,
                Provider::OpenAi,
                Provider::Named("ollama".into()),
            ]
        );
        assert_eq!(Provider::Google.name(), "google");
        assert_eq!(Provider::from("gemini").to_string(), "google");
        assert_eq!(built_in("gemini").map(|p| p.name), Some("google"));
        assert_eq!(built_in("ollama"), None);
        for wire in [
            WireFormat::Anthropic,
            WireFormat::Google,
            WireFormat::OpenAi,
        ] {
            assert_eq!(built_in_for(wire).wire, wire);
        }
    }

    #[test]
    fn subjects_split_at_the_first_slash() {
        let s: Subject = "local/org/SmolLM2-135M".parse().unwrap();
        assert_eq!(
            (s.provider.as_str(), s.model.as_str()),
            ("local", "org/SmolLM2-135M")
        );
        assert_eq!(s.to_string(), "local/org/SmolLM2-135M");
        for (bad, problem) in [
            ("claude-haiku-4-5", "there is no `/`"),
            ("/m", "the provider before"),
            ("anthropic/", "the model after"),
            (" a/b", "leading or trailing spaces"),
        ] {
            let e = bad.parse::<Subject>().unwrap_err();
            assert!(e.to_string().contains(problem), "{bad}: {e}");
            assert!(e.to_string().contains("anthropic/claude-haiku-4-5"), "{e}");
        }
    }
}
