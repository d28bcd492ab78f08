//! One recorded call as a cassette file holds it, the file's body and version, and the keys that
//! find a call's recording.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Serialize};

use crate::completion::{CompletionRequest, CompletionResult};
use crate::embedding::{Embedding, EmbeddingRequest};
use crate::role::CallRole;

use super::raw::{RawRequest, RawResponse};

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
pub struct Entry {
    /// Hash of what decides the answer (see [`entry_key`] and [`embedding_key`]).
    pub key: String,
    /// The trial that recorded it.
    pub test: String,
    /// The test target that recorded it (`prompts`, see `cassette::owner`): a prune removes only its own
    /// target's. `None` when the recording process could not tell its target.
    pub target: Option<String>,
    /// The run index (1-based) it belongs to.
    pub run: u32,
    /// `subject`, `judge` or `embedding`.
    pub role: CallRole,
    /// The provider name.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// What was asked and answered.
    pub call: Exchange,
    /// How long the call took when recorded, in milliseconds.
    pub latency_ms: u64,
    /// When it was recorded (RFC 3339, UTC).
    pub recorded_at: String,
}

/// A recorded request and its answer: a completion, or (role `embedding`) an embedding.
// Entries live in a map once per cassette; boxing the larger variant would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Exchange {
    /// A model call (subject or judge).
    Completion {
        /// The request as sent (provider-neutral; no headers, no URL).
        request: CompletionRequest,
        /// The response.
        response: CompletionResult,
    },
    /// An embeddings call.
    Embedding {
        /// The text and model.
        request: EmbeddingRequest,
        /// The vector and its token count.
        response: Embedding,
    },
    /// A call the application made itself through the recording endpoint.
    Raw {
        /// The HTTP request, without headers.
        request: RawRequest,
        /// The provider's answer.
        response: RawResponse,
    },
}

/// An entry as written: a completion has the keys `request` and `response`, an embedding
/// `embedding_request` and `embedding`, a call through the recording endpoint `http_request` and
/// `http_response`.
#[derive(Serialize, Deserialize)]
struct RawEntry {
    key: String,
    test: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    run: u32,
    role: CallRole,
    provider: String,
    model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request: Option<CompletionRequest>,
    /// The request's system prompt, when the file's `texts` hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<CompletionResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    embedding_request: Option<EmbeddingRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    embedding: Option<Embedding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_request: Option<RawRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_response: Option<RawResponse>,
    latency_ms: u64,
    recorded_at: String,
}

impl TryFrom<RawEntry> for Entry {
    type Error = String;

    fn try_from(raw: RawEntry) -> Result<Self, String> {
        let http = (raw.http_request, raw.http_response);
        let completion_fields = raw.request.is_some()
            || raw.response.is_some()
            || raw.embedding_request.is_some()
            || raw.embedding.is_some();
        let call = match http {
            (Some(request), Some(response)) if !completion_fields => {
                Some(Exchange::Raw { request, response })
            }
            (None, None) => None,
            _ => {
                return Err(format!(
                    "entry {}: a call through the recording endpoint holds `http_request` and \
                     `http_response` (and nothing else)",
                    raw.key
                ));
            }
        };
        let call = match call {
            Some(call) => call,
            None => match (
                raw.role,
                raw.request,
                raw.response,
                raw.embedding_request,
                raw.embedding,
            ) {
                (CallRole::Embedding, None, None, Some(request), Some(response)) => {
                    Exchange::Embedding { request, response }
                }
                (
                    CallRole::Subject | CallRole::Judge,
                    Some(request),
                    Some(response),
                    None,
                    None,
                ) => Exchange::Completion { request, response },
                (CallRole::Embedding, ..) => {
                    return Err(format!(
                        "entry {}: an `embedding` entry holds `embedding_request` and `embedding` (and no \
                     `request` or `response`)",
                        raw.key
                    ));
                }
                _ => {
                    return Err(format!(
                        "entry {}: a `{}` entry holds `request` and `response` (and no `embedding_request` \
                     or `embedding`)",
                        raw.key,
                        raw.role.as_str()
                    ));
                }
            },
        };
        Ok(Entry {
            key: raw.key,
            test: raw.test,
            target: raw.target,
            run: raw.run,
            role: raw.role,
            provider: raw.provider,
            model: raw.model,
            call,
            latency_ms: raw.latency_ms,
            recorded_at: raw.recorded_at,
        })
    }
}

impl From<Entry> for RawEntry {
    fn from(entry: Entry) -> Self {
        let (mut request, mut response, mut embedding_request, mut embedding) =
            (None, None, None, None);
        let (mut http_request, mut http_response) = (None, None);
        match entry.call {
            Exchange::Completion {
                request: q,
                response: a,
            } => (request, response) = (Some(q), Some(a)),
            Exchange::Embedding {
                request: q,
                response: a,
            } => (embedding_request, embedding) = (Some(q), Some(a)),
            Exchange::Raw {
                request: q,
                response: a,
            } => (http_request, http_response) = (Some(q), Some(a)),
        }
        RawEntry {
            key: entry.key,
            test: entry.test,
            target: entry.target,
            run: entry.run,
            role: entry.role,
            provider: entry.provider,
            model: entry.model,
            request,
            system_text: None,
            response,
            embedding_request,
            embedding,
            http_request,
            http_response,
            latency_ms: entry.latency_ms,
            recorded_at: entry.recorded_at,
        }
    }
}

/// A cassette file: its format version and its entries.
///
/// On disk, a system prompt of [`SHARED_TEXT_MIN`] bytes or more is written once, in the
/// file's `texts` under a short hash, and each entry that sends it names the hash as `system_text`:
/// the judge's instructions, the same in every judge call, no longer repeat in every entry, so a diff
/// of the file shows what changed. Reading puts each text back; nothing replay needs is lost.
#[derive(Debug, Default, Clone, Serialize)]
#[serde(into = "DiskBody")]
pub struct FileBody {
    /// The format version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// The recordings.
    pub entries: Vec<Entry>,
    /// What the checks of each sample recorded here decided when it was recorded: what a review
    /// shows as "before".
    pub verdicts: Vec<RecordedChecks>,
}

/// What one sample's checks decided on the answers recorded with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedChecks {
    /// The test target that recorded the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The trial.
    pub test: String,
    /// The run index, 1-based.
    pub run: u32,
    /// `passed`, `failed` or `errored` (an unavailable call learnt nothing either).
    pub status: crate::checks::SampleStatus,
    /// Each check: a suite assertion (`contains at file:line`) or a judge question, and how it went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckVerdict>,
    /// The settings of the judge that answered its judge questions (its instructions' hash,
    /// temperature, `max_tokens`), so a label of its answers applies only to the same judge. Left out
    /// without judge questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_settings: Option<crate::checks::JudgeSettings>,
}

/// One check of a sample and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckVerdict {
    /// What was checked: `contains (a.evals.toml:4)`, `judge: Is Alice named?`.
    pub check: String,
    /// Whether it held.
    pub passed: bool,
    /// A judge answer nothing measures well enough (its judge is not measured on such questions, or
    /// measured too low): shown as advisory in review. Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
    /// A judge answer's question type, as the judge gave it (left out when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_type: Option<String>,
    /// A judge answer's judge call, by its cassette key (its first ask): what a label of the answer
    /// records (left out when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_key: Option<String>,
}

impl CheckVerdict {
    /// `check` and whether it held, neither advisory nor typed.
    pub fn new(check: String, passed: bool) -> Self {
        Self {
            check,
            passed,
            advisory: false,
            question_type: None,
            judge_key: None,
        }
    }
}

/// A system prompt at least this long is stored once per file (see [`FileBody`]).
pub const SHARED_TEXT_MIN: usize = 256;

/// A cassette file as written (`texts` before `entries`, so a reader knows them when it meets an entry).
#[derive(Serialize)]
struct DiskBody {
    version: u32,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    texts: BTreeMap<String, String>,
    entries: Vec<RawEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    verdicts: Vec<RecordedChecks>,
}

impl From<FileBody> for DiskBody {
    fn from(body: FileBody) -> Self {
        let mut texts = BTreeMap::new();
        let entries = body
            .entries
            .into_iter()
            .map(|entry| {
                let mut raw = RawEntry::from(entry);
                let long = raw
                    .request
                    .as_mut()
                    .and_then(|r| r.system.take_if(|system| system.len() >= SHARED_TEXT_MIN));
                if let Some(system) = long {
                    let name = text_name(&system);
                    texts.insert(name.clone(), system);
                    raw.system_text = Some(name);
                }
                raw
            })
            .collect();
        DiskBody {
            version: body.version,
            texts,
            entries,
            verdicts: body.verdicts,
        }
    }
}

/// Read as the file streams by: each entry becomes an [`Entry`] as soon as it is read (its shared text
/// put back), so a large cassette is never held twice.
impl<'de> Deserialize<'de> for FileBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BodyVisitor)
    }
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = FileBody;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a cassette file: an object with `version` and `entries`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FileBody, A::Error> {
        let (mut version, mut entries) = (None, None);
        let mut texts = BTreeMap::new();
        let mut verdicts = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => version = Some(map.next_value()?),
                "texts" => texts = map.next_value()?,
                "entries" => entries = Some(map.next_value_seed(Entries(&texts))?),
                "verdicts" => verdicts = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(FileBody {
            version: version.ok_or_else(|| A::Error::missing_field("version"))?,
            entries: entries.ok_or_else(|| A::Error::missing_field("entries"))?,
            verdicts,
        })
    }
}

/// A file's entries, read with the texts the file holds.
struct Entries<'a>(&'a BTreeMap<String, String>);

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = Vec<Entry>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<Entry>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = Vec<Entry>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Entry>, A::Error> {
        let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(raw) = seq.next_element::<RawEntry>()? {
            entries.push(unpacked(raw, self.0).map_err(A::Error::custom)?);
        }
        Ok(entries)
    }
}

/// One entry of a file, from its JSON text alone (`index.rs` reads an entry where the index says it
/// is), its shared system prompt put back from the file's `texts`.
pub(super) fn entry_from_json(
    json: &str,
    texts: &BTreeMap<String, String>,
) -> Result<Entry, String> {
    let raw: RawEntry = serde_json::from_str(json).map_err(|e| e.to_string())?;
    unpacked(raw, texts)
}

/// `raw` as an entry, its shared system prompt put back from `texts`.
fn unpacked(mut raw: RawEntry, texts: &BTreeMap<String, String>) -> Result<Entry, String> {
    if let Some(name) = raw.system_text.take() {
        let text = texts.get(&name).ok_or_else(|| {
            format!(
                "entry {}: its `system_text` {name:?} is not in the file's `texts` (which come before \
                 the entries)",
                raw.key
            )
        })?;
        match raw.request.as_mut() {
            Some(request) => request.system = Some(text.clone()),
            None => {
                return Err(format!(
                    "entry {}: `system_text` is given without a `request`",
                    raw.key
                ));
            }
        }
    }
    Entry::try_from(raw)
}

/// The name a shared text is stored under: the first 8 bytes of its SHA-256, in hex.
fn text_name(text: &str) -> String {
    crate::text::sha256_hex(&[text.as_bytes()], 8)
}

/// The version cassette files are written and read in; a file of another version is refused, not
/// misread. Version 5 names media parts by their hash (their bytes in the media store, `media.rs`).
pub const FORMAT_VERSION: u32 = 5;

/// The key of a call: a hash of the provider, the model, the rendered request and the run index.
/// It never includes a key or a URL, so a cassette replays against any endpoint.
pub fn entry_key(provider: &str, request: &CompletionRequest, run: u32) -> String {
    entry_key_nth(provider, request, run, 0)
}

/// The key of the `nth` (from 0) ask of the same request in one sample (`judge_samples`); the first's
/// is [`entry_key`]'s, so recordings made before keep their keys.
pub fn entry_key_nth(provider: &str, request: &CompletionRequest, run: u32, nth: u32) -> String {
    #[derive(Serialize)]
    struct Keyed<'a> {
        provider: &'a str,
        model: &'a str,
        system: &'a Option<String>,
        messages: &'a [crate::completion::Message],
        max_tokens: u32,
        temperature: Option<f32>,
        // Left out when unset, so keys recorded before seeds existed still match.
        #[serde(skip_serializing_if = "Option::is_none")]
        seed: Option<u32>,
        tools: &'a [crate::completion::ToolSpec],
        response_schema: &'a Option<crate::completion::ResponseSchema>,
        run: u32,
        #[serde(skip_serializing_if = "is_first")]
        nth: u32,
    }
    let keyed = Keyed {
        provider,
        model: &request.model,
        system: &request.system,
        messages: &request.messages,
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        seed: request.seed,
        tools: &request.tools,
        response_schema: &request.response_schema,
        run,
        nth,
    };
    digest_of(&keyed)
}

fn is_first(nth: &u32) -> bool {
    *nth == 0
}

/// The key of an embeddings call: a hash of the provider, the model and the text. The run index is
/// left out on purpose: an embedding does not vary between runs, so every run of a test (and every
/// case of a suite embedding the same reference) replays one recording.
pub fn embedding_key(provider: &str, request: &EmbeddingRequest) -> String {
    #[derive(Serialize)]
    struct EmbeddingKeyed<'a> {
        kind: &'static str,
        provider: &'a str,
        model: &'a str,
        input: &'a str,
    }
    let keyed = EmbeddingKeyed {
        kind: "embedding",
        provider,
        model: &request.model,
        input: &request.input,
    };
    digest_of(&keyed)
}

/// The key of a raw call: a hash of the sample (test and run), the request (method, path, query,
/// canonical body) and its place among the sample's identical requests (`ordinal`, 1-based: the k-th
/// identical request replays the k-th recording). No header and no URL: it replays against any host.
#[cfg(any(feature = "endpoint", test))]
pub fn raw_key(test: &str, run: u32, request: &super::raw::RawRequest, ordinal: u32) -> String {
    #[derive(Serialize)]
    struct RawKeyed<'a> {
        kind: &'static str,
        test: &'a str,
        run: u32,
        method: &'a str,
        path: &'a str,
        query: &'a [(String, String)],
        body: &'a serde_json::Value,
        ordinal: u32,
    }
    digest_of(&RawKeyed {
        kind: "raw",
        test,
        run,
        method: &request.method,
        path: &request.path,
        query: &request.query,
        body: &request.body,
        ordinal,
    })
}

/// The first 12 bytes of the SHA-256 of `keyed`'s JSON, in hex: a cassette key.
fn digest_of(keyed: &impl Serialize) -> String {
    let bytes = serde_json::to_vec(keyed).expect("a request always serialises");
    crate::text::sha256_hex(&[&bytes], 12)
}

/// A request a cassette entry holds with its answer: a completion or an embedding.
pub trait Recorded {
    /// What the provider answers it with.
    type Answer: Clone;
    /// The answer `exchange` holds, when it holds a call of this kind.
    fn answer_in(exchange: Exchange) -> Option<Self::Answer>;
    /// This request and `answer`, as an entry holds them.
    fn exchange(&self, answer: &Self::Answer) -> Exchange;
    /// What differs between this request and the closest of `recorded` (the sample's recorded calls,
    /// in key order), said briefly, for a stale call's message; empty when nothing tells.
    fn changes(&self, recorded: &[Exchange]) -> Vec<String>;
}

/// Implements [`Recorded`] for a request whose calls an [`Exchange`] variant holds as `request` and
/// `response`: the two kinds of call differ only in their types and their variant.
macro_rules! recorded_in {
    ($variant:ident: $request:ty => $answer:ty, $changes:expr) => {
        impl Recorded for $request {
            type Answer = $answer;

            fn answer_in(exchange: Exchange) -> Option<$answer> {
                match exchange {
                    Exchange::$variant { response, .. } => Some(response),
                    _ => None,
                }
            }

            fn exchange(&self, answer: &$answer) -> Exchange {
                Exchange::$variant {
                    request: self.clone(),
                    response: answer.clone(),
                }
            }

            fn changes(&self, recorded: &[Exchange]) -> Vec<String> {
                $changes(self, recorded)
            }
        }
    };
}

recorded_in!(Completion: CompletionRequest => CompletionResult, |new, recorded: &[Exchange]| {
    recorded
        .iter()
        .filter_map(|e| match e {
            Exchange::Completion { request, .. } => Some(super::changes::describe(request, new)),
            _ => None,
        })
        .min_by_key(Vec::len)
        .unwrap_or_default()
});
// Embeddings are keyed by their text alone: a new text is a first recording, never a stale one.
recorded_in!(Embedding: EmbeddingRequest => Embedding, |_, _: &[Exchange]| Vec::new());

/// The current time as RFC 3339 UTC, for `recorded_at`.
pub fn now_rfc3339() -> String {
    crate::utc::Utc::now().rfc3339()
}

/// Converts a recorded latency back to a `Duration`.
pub fn latency_of(entry: &Entry) -> Duration {
    Duration::from_millis(entry.latency_ms)
}
