//! The three wire formats and the token counts an answer reports.

/// The three wire formats the fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Google Gemini (`POST /v1beta/models/{model}:generateContent`).
    Gemini,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
}

impl Wire {
    /// The wire format a request path belongs to.
    pub fn of_path(path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else if path.contains(":generateContent") {
            Some(Wire::Gemini)
        } else if path.ends_with("/chat/completions") {
            Some(Wire::OpenAi)
        } else {
            None
        }
    }
}

/// Token counts of a fake answer, in prompt-tester's convention: `input_tokens` includes the cached
/// ones and `output_tokens` includes the thinking ones. Each wire format gets them in its own shape
/// (Anthropic's `input_tokens` excludes cache reads; Gemini's `candidatesTokenCount` excludes thoughts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Every prompt token, cached ones included.
    pub input_tokens: u64,
    /// Every generated token, thinking included.
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cached_input_tokens: u64,
    /// Thinking tokens.
    pub thoughts_tokens: u64,
}

impl Usage {
    /// Plain input and output counts.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// With this many of the input tokens read from the cache.
    pub fn cached(self, cached_input_tokens: u64) -> Self {
        Self {
            cached_input_tokens,
            ..self
        }
    }

    /// With this many of the output tokens spent thinking.
    pub fn thoughts(self, thoughts_tokens: u64) -> Self {
        Self {
            thoughts_tokens,
            ..self
        }
    }
}
