//! Names of providers and models, as enums for the common ones and plain strings for the rest.

use std::fmt;

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
            Provider::Anthropic => "anthropic",
            Provider::Google => "google",
            Provider::OpenAi => "openai",
            Provider::Named(name) => name,
        }
    }
}

impl From<&str> for Provider {
    fn from(name: &str) -> Self {
        match name {
            "anthropic" => Provider::Anthropic,
            "google" | "gemini" => Provider::Google,
            "openai" => Provider::OpenAi,
            other => Provider::Named(other.to_string()),
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
