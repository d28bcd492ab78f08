//! The media in a request the application sent through the recording endpoint (issue 46), found only
//! at the places each API's schema carries media, so that a cassette holds a reference and the bytes
//! go to the media store. Base64 anywhere else (the Responses API's `encrypted_content`, Anthropic's
//! thinking `signature`, Gemini's `thoughtSignature`, a text part that happens to hold a data URL)
//! is not media and stays byte for byte.
//!
//! The places, as the official SDKs send them (`tests/providers/media_sdk/`):
//! - chat completions: `messages[].content[]` parts `image_url.url` (a data URL), `input_audio.data`
//!   (bare base64, its `format` beside), `file.file_data` (a data URL);
//! - the Responses API: `input[].content[]` (and a `function_call_output`'s `output[]`) parts
//!   `input_image.image_url` (a data URL) and `input_file.file_data`;
//! - Anthropic Messages: `image` and `document` blocks of `messages[].content[]` (and of a
//!   `tool_result`'s `content[]`) whose `source.type` is `base64`: `source.data`;
//! - Gemini: `contents[].parts[]`'s `inlineData.data` or `inline_data.data` (its type in `mimeType`
//!   or `mime_type`; the google-genai SDK writes URL-safe base64).

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;

use super::Api;
use crate::cassette::media::relayed_reference;
use crate::completion::MediaPart;

/// One media value of a relayed body: where it was, the type the request declares, the part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayedMedia {
    /// The JSON pointer of the string that held it (valid in the canonical body too: sorting keys
    /// moves no array item).
    pub at: String,
    /// Its media type as the request declares it (the data URL's, the block's `media_type`, the
    /// blob's `mimeType`, the audio's `format`), else as its bytes are.
    pub media_type: String,
    /// Its bytes, named by its place in the body, their type read from them.
    pub part: MediaPart,
}

impl RelayedMedia {
    /// What a stored body holds in its place ([`relayed_reference`]).
    pub fn reference(&self) -> Value {
        relayed_reference(&self.part, &self.media_type)
    }
}

/// How a schema position holds its bytes.
#[derive(Clone, Copy)]
enum Carried {
    /// `data:<type>;base64,<data>`.
    DataUrl,
    /// Bare base64, its type declared beside it (or not at all).
    Base64,
    /// Either (the Responses API's and chat's `file_data`).
    Either,
}

/// A schema position holding media: the pointer of its string, how it holds the bytes, the type
/// declared beside it.
struct Site<'a> {
    at: String,
    text: &'a str,
    carried: Carried,
    declared: Option<String>,
}

/// The media of `body`, a request of `api`, at the positions its schema carries media (see the
/// module's header), in the body's order. A value that is not a base64 data URL or base64 where one
/// is expected (an `https` image URL, a file id) is left out, and so are bytes of a type the media
/// store does not take (`MediaType`: a video, say), which stay inline.
pub fn find(api: Api, body: &Value) -> Vec<RelayedMedia> {
    let mut sites = Vec::new();
    match api {
        Api::ChatCompletions => each_part(body, "/messages", "content", &mut |at, part| {
            chat_site(at, part, &mut sites)
        }),
        Api::Responses => {
            for (i, item) in items(body.get("input")) {
                let at = format!("/input/{i}");
                for key in ["content", "output"] {
                    parts_at(item, &at, key, &mut |at, part| {
                        responses_site(at, part, &mut sites)
                    });
                }
            }
        }
        Api::Messages => each_part(body, "/messages", "content", &mut |at, block| {
            anthropic_site(&at, block, &mut sites);
            if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                parts_at(block, &at, "content", &mut |at, inner| {
                    anthropic_site(&at, inner, &mut sites)
                });
            }
        }),
        Api::GenerateContent => each_part(body, "/contents", "parts", &mut |at, part| {
            gemini_site(at, part, &mut sites)
        }),
        Api::Embeddings | Api::EmbedContent => {}
    }
    sites.into_iter().filter_map(decoded).collect()
}

/// `body` with each of `found` replaced by its [`RelayedMedia::reference`]: what a cassette holds.
pub fn referenced(mut body: Value, found: &[RelayedMedia]) -> Value {
    for media in found {
        if let Some(value) = body.pointer_mut(&media.at) {
            *value = media.reference();
        }
    }
    body
}

/// The items of an array value, with their indexes; none for anything else.
fn items(value: Option<&Value>) -> impl Iterator<Item = (usize, &Value)> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

/// Each part of each message of the array at `messages`: the items of its `content` key's array.
fn each_part<'a>(
    body: &'a Value,
    messages: &str,
    content: &str,
    site: &mut impl FnMut(String, &'a Value),
) {
    for (i, message) in items(body.pointer(messages)) {
        parts_at(message, &format!("{messages}/{i}"), content, site);
    }
}

/// Each item of `holder[key]`, when it is an array, with its pointer (`holder` being at `at`).
fn parts_at<'a>(holder: &'a Value, at: &str, key: &str, site: &mut impl FnMut(String, &'a Value)) {
    for (j, part) in items(holder.get(key)) {
        site(format!("{at}/{key}/{j}"), part);
    }
}

fn type_of(part: &Value) -> Option<&str> {
    part.get("type").and_then(Value::as_str)
}

fn text_at<'a>(part: &'a Value, pointer: &str) -> Option<&'a str> {
    part.pointer(pointer).and_then(Value::as_str)
}

fn chat_site<'a>(at: String, part: &'a Value, sites: &mut Vec<Site<'a>>) {
    let (pointer, carried, declared) = match type_of(part) {
        Some("image_url") => ("/image_url/url", Carried::DataUrl, None),
        Some("input_audio") => {
            let format = text_at(part, "/input_audio/format");
            let declared = format.map(|f| match f {
                "mp3" => "audio/mpeg".to_string(),
                other => format!("audio/{other}"),
            });
            ("/input_audio/data", Carried::Base64, declared)
        }
        Some("file") => ("/file/file_data", Carried::Either, None),
        _ => return,
    };
    push_at(sites, (at, part, pointer), carried, declared);
}

/// The site at `pointer` below `part` (at `at`), when it holds text.
fn push_at<'a>(
    sites: &mut Vec<Site<'a>>,
    (at, part, pointer): (String, &'a Value, &str),
    carried: Carried,
    declared: Option<String>,
) {
    if let Some(text) = text_at(part, pointer) {
        sites.push(Site {
            at: at + pointer,
            text,
            carried,
            declared,
        });
    }
}

fn responses_site<'a>(at: String, part: &'a Value, sites: &mut Vec<Site<'a>>) {
    let (pointer, carried) = match type_of(part) {
        Some("input_image") => ("/image_url", Carried::DataUrl),
        Some("input_file") => ("/file_data", Carried::Either),
        _ => return,
    };
    push_at(sites, (at, part, pointer), carried, None);
}

fn anthropic_site<'a>(at: &str, block: &'a Value, sites: &mut Vec<Site<'a>>) {
    let media_block = matches!(type_of(block), Some("image" | "document"));
    let base64 = text_at(block, "/source/type") == Some("base64");
    if let (true, true, Some(text)) = (media_block, base64, text_at(block, "/source/data")) {
        sites.push(Site {
            at: format!("{at}/source/data"),
            text,
            carried: Carried::Base64,
            declared: text_at(block, "/source/media_type").map(str::to_string),
        });
    }
}

fn gemini_site<'a>(at: String, part: &'a Value, sites: &mut Vec<Site<'a>>) {
    for key in ["inlineData", "inline_data"] {
        let Some(blob) = part.get(key) else { continue };
        if let Some(text) = text_at(blob, "/data") {
            let declared = text_at(blob, "/mimeType").or_else(|| text_at(blob, "/mime_type"));
            sites.push(Site {
                at: format!("{at}/{key}/data"),
                text,
                carried: Carried::Base64,
                declared: declared.map(str::to_string),
            });
        }
    }
}

/// The media a site holds, when its text is what the site takes (a base64 data URL, or base64) and
/// its bytes are of a type taken.
fn decoded(site: Site<'_>) -> Option<RelayedMedia> {
    let url = data_url(site.text);
    let (declared, data) = match (site.carried, url) {
        (Carried::DataUrl | Carried::Either, Some((media_type, data))) => (Some(media_type), data),
        (Carried::Base64 | Carried::Either, None) => (site.declared.as_deref(), site.text),
        _ => return None,
    };
    // Named by its place: a name without an extension is not checked against the bytes.
    let part = MediaPart::new(site.at.clone(), base64_bytes(data)?).ok()?;
    let media_type = declared
        .filter(|t| !t.is_empty())
        .map_or_else(|| part.media_type().mime().to_string(), str::to_string);
    Some(RelayedMedia {
        at: site.at,
        media_type,
        part,
    })
}

/// A base64 data URL's media type (without parameters) and data.
fn data_url(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let mut params = head.split(';');
    let media_type = params.next().unwrap_or_default();
    params
        .any(|p| p.eq_ignore_ascii_case("base64"))
        .then_some((media_type, data))
}

/// The bytes of standard or URL-safe base64, padded or not, line breaks ignored; `None` when it is
/// not base64 or holds nothing.
fn base64_bytes(data: &str) -> Option<Vec<u8>> {
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let standard = GeneralPurpose::new(&alphabet::STANDARD, config);
    let url_safe = GeneralPurpose::new(&alphabet::URL_SAFE, config);
    let compact: String = data.split_ascii_whitespace().collect();
    let bytes = standard
        .decode(&compact)
        .or_else(|_| url_safe.decode(&compact))
        .ok()?;
    (!bytes.is_empty()).then_some(bytes)
}

#[cfg(test)]
mod tests;
