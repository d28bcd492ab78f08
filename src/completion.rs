//! The provider-neutral request and response of one model call.
//!
//! Token counts follow one convention across providers, so that cost and assertions never depend on
//! which wire format produced them:
//! - `input_tokens` is every prompt token the model processed, **including** cache reads and writes;
//!   `cached_input_tokens` and `cache_creation_tokens` are subsets of it.
//! - `output_tokens` is every generated token billed at the output rate, **including** thinking;
//!   `thoughts_tokens` is the subset spent on thinking/reasoning.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod media;
mod media_header;

pub use media::{ImageDetail, Media, MediaError, MediaKind, MediaPart, MediaType};
pub use media_header::Extent;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (or the tool results the harness sends back).
    User,
    /// The model.
    Assistant,
}

/// One part of a message. More kinds of part may come: a `match` needs a `_` arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model asked to call a tool.
    ToolUse {
        /// The provider's id of the call (synthesised where the provider has none).
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, as JSON.
        input: Value,
        /// An opaque signature the provider wants back with the call (Gemini `thoughtSignature`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thought_signature: Option<String>,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the call this answers.
        tool_use_id: String,
        /// The tool's name (Gemini needs it to pair the result).
        name: String,
        /// What the tool returned.
        content: String,
        /// Whether the tool failed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image, a document (PDF or plain text) or audio, sent in each provider's own shape.
    Media(MediaPart),
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its parts, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// Its text blocks, joined by newlines.
    pub(crate) fn text(&self) -> String {
        self.texts().join("\n")
    }

    /// Its text blocks, in order (tool calls and results left out).
    pub(crate) fn texts(&self) -> Vec<&str> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// What the model said in one answer: its text (kept, even empty, when it called no tool), then
    /// the tools it called.
    pub(crate) fn said(text: &str, tool_calls: &[ToolCall]) -> Self {
        let mut content = Vec::new();
        if !text.is_empty() || tool_calls.is_empty() {
            content.push(ContentBlock::Text {
                text: text.to_string(),
            });
        }
        content.extend(tool_calls.iter().map(|c| ContentBlock::ToolUse {
            id: c.id.clone(),
            name: c.name.clone(),
            input: c.arguments.clone(),
            thought_signature: c.thought_signature.clone(),
        }));
        Self {
            role: Role::Assistant,
            content,
        }
    }
}

/// Who speaks a turn written before the prompt (`messages`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnRole {
    /// The system prompt (the first turn only).
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One turn of the conversation a test sends before its prompt: `messages` in a suite, or
/// `messages = [system("..."), user("..."), assistant("...")]` in `#[prompt_test]` (an expression there
/// gives any list of `Turn`s). Its text may hold `{placeholders}`, filled as the prompt's are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who speaks it.
    pub role: TurnRole,
    /// Its text.
    pub content: String,
}

impl Turn {
    /// The system prompt, as the first turn.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(TurnRole::System, content)
    }

    /// A user turn.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(TurnRole::User, content)
    }

    /// An assistant turn: what the model is shown to have answered.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(TurnRole::Assistant, content)
    }

    fn new(role: TurnRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its input.
    pub input_schema: Value,
}

/// A schema the answer must follow (structured output): each provider enforces it its own way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSchema {
    /// A short name for the schema (used as the tool or schema name on the wire).
    pub name: String,
    /// The JSON schema.
    pub schema: Value,
}

/// Everything that decides a model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionRequest {
    /// The model id as the provider knows it.
    pub model: String,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The most tokens to generate.
    pub max_tokens: u32,
    /// Sampling temperature; the provider's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The sampling seed, where the provider takes one (OpenAI-compatible `seed`, Gemini
    /// `generationConfig.seed`; Anthropic has none). Left out of recordings when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Structured output the answer must follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<ResponseSchema>,
    /// Ask the provider to cache the system prompt (Anthropic `cache_control`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_system: bool,
}

impl CompletionRequest {
    /// A request with one user message and no options.
    pub fn new(model: impl Into<String>, prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            model: model.into(),
            system: None,
            messages: vec![Message::user(prompt)],
            max_tokens,
            temperature: None,
            seed: None,
            tools: Vec::new(),
            response_schema: None,
            cache_system: false,
        }
    }

    /// Appends one tool round: the assistant's call `id` of tool `name` with `input`, and the user's
    /// message carrying its result (`is_error` when the tool failed). For the project's tests of the
    /// wire formats; the agent loop builds its rounds from the model's answers.
    #[doc(hidden)]
    pub fn push_tool_round(
        &mut self,
        (id, name): (&str, &str),
        input: Value,
        (result, is_error): (&str, bool),
    ) {
        self.messages.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input,
                thought_signature: None,
            }],
        });
        self.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                name: name.into(),
                content: result.into(),
                is_error,
            }],
        });
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as JSON.
    pub arguments: Value,
    /// An opaque signature the provider wants back with the call in the next turn (Gemini
    /// `thoughtSignature`, required by Gemini 3 in multi-turn function calling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// The answer of one model call. Only `text` and the token counts are required; a custom `run_fn`
/// may leave the rest at their defaults (`CompletionResult::new`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct CompletionResult {
    /// The text of the answer (text blocks joined).
    pub text: String,
    /// Every prompt token processed, cache reads and writes included.
    pub input_tokens: u64,
    /// Every token generated and billed as output, thinking included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache (a subset of `input_tokens`).
    pub cached_input_tokens: u64,
    /// Prompt tokens written to the provider's cache (a subset of `input_tokens`).
    pub cache_creation_tokens: u64,
    /// Thinking/reasoning tokens (a subset of `output_tokens`).
    pub thoughts_tokens: u64,
    /// The provider's own stop reason (`end_turn`, `STOP`, `length`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The provider blocked the prompt or the answer (safety, content filter).
    pub safety_filtered: bool,
    /// The model that answered, as the provider reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_used: Option<String>,
    /// The model version the provider reports (Gemini `modelVersion`, OpenAI `system_fingerprint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
    /// The provider's id of the request or response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Tool calls the model made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Cost in USD; `None` when the model's price is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl CompletionResult {
    /// A result with text and token counts only (for custom executors).
    pub fn new(text: impl Into<String>, input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            text: text.into(),
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }
}
