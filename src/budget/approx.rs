//! What a call may cost before it is made: its input tokens by a conservative approximation of its
//! text, its output bounded by `max_tokens`, at the model's prices.
//!
//! No tokenizer is shipped (each provider has its own): the input is counted as one token per
//! [`BYTES_PER_TOKEN`] bytes of its text, rounded up, plus [`MESSAGE_OVERHEAD`] tokens for each message
//! (the system prompt counts as one), [`REQUEST_OVERHEAD`] for the request, and the tools' JSON schemas
//! counted as text. A media part is counted by its provider's documented rule ([`media_tokens`]);
//! one with no count makes the request's count unknown. BPE tokenizers
//! average about four bytes a token on English text and three on code, so the count is above what a
//! provider reports for ordinary prompts; it is what `--budget` holds in reserve for a call and what
//! `--estimate` shows for a test with no recording.

use super::media_tokens::media_tokens;
use crate::completion::{CompletionRequest, ContentBlock, MediaPart, MediaType};
use crate::config::WireFormat;
use crate::embedding::EmbeddingRequest;
use crate::pricing::Price;

/// Bytes of text counted as one token.
pub const BYTES_PER_TOKEN: u64 = 3;

/// Tokens counted for each message besides its text (role markers, separators).
pub const MESSAGE_OVERHEAD: u64 = 8;

/// Tokens counted once a request (the chat template's framing, the reply's priming).
pub const REQUEST_OVERHEAD: u64 = 16;

/// `bytes` of text as tokens, rounded up.
pub fn tokens_of_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The input tokens of `request` sent in `wire`, by the approximation above; `Err` says why a
/// media part of it has no count (no wire format known counts none).
pub fn input_tokens(request: &CompletionRequest, wire: Option<WireFormat>) -> Result<u64, String> {
    let mut bytes = 0u64;
    let mut media = 0u64;
    let mut messages = 0u64;
    if let Some(system) = &request.system {
        bytes += system.len() as u64;
        messages += 1;
    }
    for message in &request.messages {
        messages += 1;
        for block in &message.content {
            bytes += match block {
                ContentBlock::Text { text } => text.len(),
                ContentBlock::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
                ContentBlock::ToolResult { name, content, .. } => name.len() + content.len(),
                ContentBlock::Media(part) => {
                    let (text, tokens) = part_count(part, wire)?;
                    media += tokens;
                    text
                }
            } as u64;
        }
    }
    for tool in &request.tools {
        bytes += (tool.name.len() + tool.description.len()) as u64;
        bytes += tool.input_schema.to_string().len() as u64;
    }
    if let Some(schema) = &request.response_schema {
        bytes += schema.schema.to_string().len() as u64;
    }
    Ok(tokens_of_bytes(bytes) + media + messages * MESSAGE_OVERHEAD + REQUEST_OVERHEAD)
}

/// The input tokens of the media `parts` of a request sent through the recording endpoint in
/// `wire` (its body names them by reference, and is counted as text apart).
#[cfg_attr(not(feature = "endpoint"), allow(dead_code))]
pub fn media_input_tokens(parts: &[MediaPart], wire: WireFormat) -> Result<u64, String> {
    let (mut text, mut media) = (0, 0);
    for part in parts {
        let (bytes, tokens) = part_count(part, Some(wire))?;
        text += bytes as u64;
        media += tokens;
    }
    Ok(tokens_of_bytes(text) + media)
}

/// A media part's count: a plain-text document's bytes, counted as text, or its tokens by its
/// provider's rule.
fn part_count(part: &MediaPart, wire: Option<WireFormat>) -> Result<(usize, u64), String> {
    if part.media_type() == MediaType::Text {
        return Ok((part.bytes().len(), 0));
    }
    let wire = wire.ok_or_else(|| {
        format!(
            "the {} {}: its provider is not known",
            part.kind(),
            part.name()
        )
    })?;
    Ok((0, media_tokens(wire, part)?))
}

/// The input tokens of an embeddings call.
pub fn embedding_tokens(request: &EmbeddingRequest) -> u64 {
    tokens_of_bytes(request.input.len() as u64) + MESSAGE_OVERHEAD + REQUEST_OVERHEAD
}

/// Whether `price` charges nothing for input (a `free` endpoint's): then a part with no token count
/// costs nothing either.
pub fn input_is_free(price: &Price) -> bool {
    [price.cache_read_mtok, price.cache_write_mtok]
        .into_iter()
        .flatten()
        .fold(price.input_mtok, f64::max)
        == 0.0
}

/// The most a call of `input` tokens and at most `max_output` output tokens costs at `price`: every
/// input token at the dearest input rate (a cache write costs more than a plain token).
pub fn worst_cost(price: &Price, input: u64, max_output: u64) -> f64 {
    let input_rate = [price.cache_read_mtok, price.cache_write_mtok]
        .into_iter()
        .flatten()
        .fold(price.input_mtok, f64::max);
    (input as f64 * input_rate + max_output as f64 * price.output_mtok) / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{Message, ToolSpec};

    #[test]
    fn text_is_counted_a_token_per_three_bytes_rounded_up_plus_each_message() {
        let mut request = CompletionRequest::new("m", "abcd", 10);
        // 4 bytes: 2 tokens, one message: 8, the request: 16.
        assert_eq!(input_tokens(&request, None).unwrap(), 2 + 8 + 16);
        request.system = Some("xyz".into());
        assert_eq!(input_tokens(&request, None).unwrap(), 3 + 16 + 16);
        request.messages.push(Message::assistant("é"));
        // "é" is two bytes: 9 bytes in all.
        assert_eq!(input_tokens(&request, None).unwrap(), 3 + 24 + 16);
        request.tools.push(ToolSpec {
            name: "t".into(),
            description: "d".into(),
            input_schema: serde_json::json!({}),
        });
        // "t", "d" and "{}": 4 bytes more, 13 in all.
        assert_eq!(input_tokens(&request, None).unwrap(), 5 + 24 + 16);
        assert_eq!(
            embedding_tokens(&EmbeddingRequest::new("e", "abcdefg")),
            3 + 8 + 16
        );
    }

    #[test]
    fn the_worst_case_takes_the_dearest_input_rate_and_every_output_token() {
        let mut price = Price::free();
        price.input_mtok = 1.0;
        price.output_mtok = 2.0;
        assert_eq!(worst_cost(&price, 1_000_000, 500_000), 2.0);
        price.cache_write_mtok = Some(1.25);
        price.cache_read_mtok = Some(0.1);
        assert_eq!(worst_cost(&price, 1_000_000, 0), 1.25);
    }

    #[test]
    fn input_is_free_only_when_every_input_rate_is_zero() {
        let mut price = Price::free();
        price.output_mtok = 2.0;
        assert!(input_is_free(&price));
        price.cache_write_mtok = Some(0.5);
        assert!(!input_is_free(&price));
        price.cache_write_mtok = None;
        price.input_mtok = 0.1;
        assert!(!input_is_free(&price));
    }

    #[test]
    fn relayed_media_are_counted_by_their_provider_s_rule_and_text_as_text() {
        let png = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/media/receipt.png"),
        )
        .unwrap();
        let part = |bytes: &[u8]| MediaPart::new("/messages/0/content/1", bytes.to_vec()).unwrap();
        // A 2x2 PNG: one tile at high detail, one token by Anthropic's area rule.
        let image = part(&png);
        let both = [image.clone(), part(b"Total 7.50\n")];
        assert_eq!(media_input_tokens(&both, WireFormat::OpenAi), Ok(255 + 4));
        assert_eq!(media_input_tokens(&both, WireFormat::Anthropic), Ok(1 + 4));
        assert_eq!(media_input_tokens(&[], WireFormat::Google), Ok(0));
        let wav = part(b"RIFF\x24\0\0\0WAVEfmt ");
        let why = media_input_tokens(&[image, wav], WireFormat::OpenAi).unwrap_err();
        assert!(
            why.contains("/messages/0/content/1") && why.contains("audio"),
            "{why}"
        );
    }

    /// The approximation is above what a tokenizer counts on ordinary English: about four bytes a
    /// token, so three bytes a token overcounts.
    #[test]
    fn ordinary_prose_is_overcounted() {
        let prose = "Summarise the memo below in two sentences for a busy reader.";
        let words = prose.split_whitespace().count() as u64;
        // A BPE tokenizer gives about one token per English word and punctuation mark.
        assert!(tokens_of_bytes(prose.len() as u64) > words + 1);
    }
}
