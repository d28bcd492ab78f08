//! The three wire formats and the token counts an answer reports.

/// The three wire formats the fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Google Gemini (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`).
    Gemini,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
}

impl Wire {
    /// The wire format a request path belongs to (completions and embeddings alike).
    pub fn of_path(path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else if [
            ":generateContent",
            ":streamGenerateContent",
            ":embedContent",
            ":batchEmbedContents",
        ]
        .iter()
        .any(|method| path.contains(method))
        {
            Some(Wire::Gemini)
        } else if path.ends_with("/chat/completions") || path.ends_with("/embeddings") {
            Some(Wire::OpenAi)
        } else {
            None
        }
    }

    /// Whether a request path is an embeddings call (OpenAI `/embeddings`, Gemini `:embedContent` and
    /// `:batchEmbedContents`).
    pub fn is_embeddings_path(path: &str) -> bool {
        let path = path.split('?').next().unwrap_or(path);
        path.ends_with("/embeddings")
            || path.contains(":embedContent")
            || path.contains(":batchEmbedContents")
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

/// A deterministic stand-in for an embedding model: how often each letter a-z occurs in `text`
/// (ignoring case), plus one slot for digits. Texts made of the same words are close (cosine near 1),
/// unrelated ones further apart, and the vector of a text is always the same, so tests can compute the
/// similarity they expect.
pub fn fake_embedding(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; 27];
    for c in text.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' => vector[(c as u8 - b'a') as usize] += 1.0,
            '0'..='9' => vector[26] += 1.0,
            _ => {}
        }
    }
    vector
}
