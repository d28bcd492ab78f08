//! Embeddings: the provider-neutral request and answer of an embeddings call, and the cosine
//! similarity the `similar` assertion and [`PromptRun::similarity`](crate::PromptRun::similarity)
//! compare with.
//!
//! Embeddings come from the provider's own embeddings API, configured by `[embeddings] provider` and
//! `model` in `prompt-tester.toml`: OpenAI-compatible `POST {base}/embeddings` (OpenAI, Ollama, vLLM,
//! llama-server started with `--embeddings`) and Gemini `models/{model}:embedContent`. Anthropic has no
//! embeddings API. The calls go through the engine like every model call: recorded in and replayed
//! from the test's cassette, their tokens and cost counted apart (`usage.embedding`).
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::{Deserialize, Serialize};

/// One text to embed with one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingRequest {
    /// The embedding model id.
    pub model: String,
    /// The text.
    pub input: String,
}

impl EmbeddingRequest {
    /// The embedding of `input` by `model`.
    pub fn new(model: impl Into<String>, input: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            input: input.into(),
        }
    }
}

/// The answer of one embeddings call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Embedding {
    /// The vector.
    pub vector: Vec<f32>,
    /// The input tokens the provider counted; `None` when its answer does not say (Gemini's
    /// `embedContent` may not), and then the call's cost is unknown rather than $0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// The model that answered, as the provider reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_used: Option<String>,
    /// Cost in USD; `None` when the model's price (or the token count) is unknown. Not recorded: a
    /// replayed call is priced with today's table.
    #[serde(skip)]
    pub cost_usd: Option<f64>,
}

/// Why two vectors have no cosine similarity: the reason a similarity's error
/// ([`RunError::Cosine`](crate::RunError::Cosine)) carries.
#[derive(Debug, Clone, PartialEq)]
pub enum CosineProblem {
    /// The vectors have different lengths (two different embedding models).
    Lengths(usize, usize),
    /// A vector is empty or all zeros: it has no direction.
    Zero,
}

impl std::fmt::Display for CosineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CosineProblem::Lengths(a, b) => write!(
                f,
                "the embeddings have different lengths ({a} and {b}): both must come from one embedding model"
            ),
            CosineProblem::Zero => {
                f.write_str("an embedding is empty or all zeros, so it has no direction to compare")
            }
        }
    }
}

/// The cosine similarity of `a` and `b`, in [-1, 1] (computed in `f64`).
pub fn cosine(a: &[f32], b: &[f32]) -> Result<f64, CosineProblem> {
    if a.len() != b.len() {
        return Err(CosineProblem::Lengths(a.len(), b.len()));
    }
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return Err(CosineProblem::Zero);
    }
    // Rounding can push the ratio of parallel vectors a hair past 1.
    Ok((dot / (aa.sqrt() * bb.sqrt())).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert_eq!(cosine(&[1.0, 0.0], &[2.0, 0.0]), Ok(1.0));
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), Ok(0.0));
        let opposite = cosine(&[1.0, 1.0], &[-1.0, -1.0]).unwrap();
        assert!((opposite + 1.0).abs() < 1e-12, "{opposite}");
        let c = cosine(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        // 32 / (sqrt(14) * sqrt(77))
        assert!((c - 0.974_631_846_197_076_2).abs() < 1e-12, "{c}");
        assert_eq!(
            cosine(&[1.0], &[1.0, 2.0]),
            Err(CosineProblem::Lengths(1, 2))
        );
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), Err(CosineProblem::Zero));
        assert_eq!(cosine(&[], &[]), Err(CosineProblem::Zero));
    }

    #[test]
    fn an_embedding_records_without_its_cost_and_reads_without_tokens() {
        let e = Embedding {
            vector: vec![0.5, -0.25],
            input_tokens: Some(3),
            model_used: None,
            cost_usd: Some(1.0),
        };
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"vector": [0.5, -0.25], "input_tokens": 3})
        );
        let back: Embedding = serde_json::from_value(serde_json::json!({"vector": [1.0]})).unwrap();
        assert_eq!((back.input_tokens, back.cost_usd), (None, None));
    }
}
