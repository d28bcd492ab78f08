//! Calls the application makes itself, through the recording endpoint, taken through the engine's one
//! flow (`Engine::exchange`): the cassette decision, the budget, the recording (first, or pending), the
//! price, and the sample's usage. Only the request and the answer differ: raw HTTP, not a
//! [`crate::completion::CompletionRequest`].

use std::future::Future;
use std::time::Duration;

use tracing::Instrument as _;

use super::bill::Billed;
use super::{Call, CallError, CallRole, Engine, RunScope};
use crate::budget::{Worst, approx};
use crate::cassette::diff;
use crate::cassette::raw::{RawRequest, RawResponse};
use crate::cassette::{Exchange, Recorded};
use crate::completion::CompletionResult;
use crate::provider::relayed::{self, Api};
use crate::provider::{ProviderClient, ProviderError};

/// The output a request that sets no limit is held at under a budget (its worst case).
pub const UNBOUNDED_OUTPUT: u64 = 16_384;

/// Lines of a request's body diff a stale call's message shows.
const CHANGES_SHOWN: usize = 8;

/// A request the application sent, as the engine takes it.
#[derive(Debug, Clone)]
pub(crate) struct Relayed {
    /// The request as recorded.
    pub request: RawRequest,
    /// Its API.
    pub api: Api,
    /// The model it names.
    pub model: String,
    /// Its place among the sample's identical requests, 1-based.
    pub ordinal: u32,
    /// The application sent its own credentials.
    pub sends_key: bool,
}

/// What the provider answered, and its tokens and cost as priced today.
#[derive(Debug, Clone)]
pub(crate) struct RelayedAnswer {
    /// The answer, as recorded.
    pub response: RawResponse,
    /// Its tokens (the text is not read) and cost, set when it is priced.
    pub tokens: CompletionResult,
}

impl Recorded for Relayed {
    type Answer = RelayedAnswer;

    fn answer_in(exchange: Exchange) -> Option<RelayedAnswer> {
        match exchange {
            Exchange::Raw { response, .. } => Some(RelayedAnswer {
                response,
                tokens: CompletionResult::default(),
            }),
            _ => None,
        }
    }

    fn exchange(&self, answer: &RelayedAnswer) -> Exchange {
        Exchange::Raw {
            request: self.request.clone(),
            response: answer.response.clone(),
        }
    }

    /// Against the closest recorded request to the same path (the one request diff,
    /// [`diff::closest`]: bounded work, whatever the body's size): a line per JSON path that changed;
    /// or, when none did, that only fresh tool-call ids differ, or that the sample now sends it more
    /// often.
    fn changes(&self, recorded: &[Exchange]) -> Vec<String> {
        let same_path = recorded.iter().filter_map(|e| match e {
            Exchange::Raw { request, .. } if request.path == self.request.path => Some(request),
            _ => None,
        });
        match diff::closest(&self.request, same_path) {
            None => Vec::new(),
            Some(closest) if !closest.is_empty() => closest.lines(CHANGES_SHOWN),
            Some(closest) if !closest.fresh_ids.is_empty() => {
                let renamed: Vec<String> = closest
                    .fresh_ids
                    .iter()
                    .map(|(old, new)| format!("{old} → {new}"))
                    .collect();
                vec![format!(
                    "only its tool-call ids differ ({}): a recording replays the ids it was recorded \
                     with, so the application must send the same ones",
                    renamed.join(", ")
                )]
            }
            Some(_) => vec![format!(
                "the sample sent this same request {} times; it was recorded fewer times",
                self.ordinal
            )],
        }
    }
}

impl Billed for Relayed {
    /// Its body's bytes by the approximation and its media by their provider's rule, its output at
    /// the limit it sets (else [`UNBOUNDED_OUTPUT`]).
    fn worst(&self, engine: &Engine, provider: &str) -> Worst {
        let media = match approx::media_input_tokens(&self.request.media, self.api.wire()) {
            Ok(media) => media,
            Err(_) if super::bill::free_input(engine, provider, &self.model) => 0,
            Err(why) => {
                return Worst::UncountedMedia {
                    model: format!("{provider}/{}", self.model),
                    why,
                };
            }
        };
        let input = approx::tokens_of_bytes(self.request.body.to_string().len() as u64)
            + media
            + approx::REQUEST_OVERHEAD;
        let output = self
            .api
            .max_output(&self.request.body)
            .unwrap_or(UNBOUNDED_OUTPUT);
        let price = engine.config.price_of(provider, &self.model, input);
        engine.worst(provider, &self.model, price, |p| {
            approx::worst_cost(p, input, output)
        })
    }

    /// Its tokens read from the answer in its wire format, then priced.
    fn price(&self, engine: &Engine, provider: &str, answer: &mut RelayedAnswer) {
        answer.tokens = relayed::tokens(self.api, &answer.response);
        engine.price(&mut answer.tokens, provider, &self.model);
    }

    fn cost(answer: &RelayedAnswer) -> Option<f64> {
        answer.tokens.cost_usd
    }
}

impl Engine {
    /// One call of `scope`'s application to `provider` (whose client is `client`), keyed `key`:
    /// replayed, or `upstream` made and recorded, as the cassette decision says; `sent` says how far
    /// the forwarded request got, should the call be dropped before it ends. Counted in the scope's
    /// usage as a subject call; its ending is not noted on the scope (the caller notes it).
    pub(crate) async fn relay(
        &self,
        scope: &RunScope,
        client: &ProviderClient,
        relayed: &Relayed,
        key: String,
        sent: &crate::provider::Sent,
        upstream: impl Future<Output = Result<(RelayedAnswer, Duration), ProviderError>>,
    ) -> Result<(RelayedAnswer, Duration, bool), CallError> {
        let provider = client.name().to_string();
        let call = Call {
            scope,
            role: CallRole::Subject,
            provider: &provider,
            model: &relayed.model,
            key,
            sends_key: relayed.sends_key,
        };
        // Not `exchange`: which endings the sample notes is the endpoint's to say (a provider's error
        // answer goes back to the client, which may retry it to success).
        let span = call.span();
        let (answer, latency, replayed) = self
            .exchange_once(call, client, relayed, sent, upstream)
            .instrument(span)
            .await?;
        scope.state().account(|usage| {
            usage.add_call(
                CallRole::Subject,
                &provider,
                &relayed.model,
                &answer.tokens,
                replayed,
            )
        });
        scope.state().count_app_call();
        Ok((answer, latency, replayed))
    }

    /// The recording endpoint's address, `start` starting it on the engine's runtime on the first ask.
    pub(crate) fn listening(
        &self,
        start: impl FnOnce(&tokio::runtime::Handle) -> super::app_calls::Listening,
    ) -> &super::app_calls::Listening {
        self.endpoint.get_or_init(|| start(self.runtime.handle()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::raw::{RawBody, chat_request};
    use crate::completion::MediaPart;
    use crate::provider::relayed::media;
    use serde_json::json;

    /// A chat request sending `png` as a data URL, as the endpoint records it (the image named by
    /// its reference).
    fn sending(png: &[u8], text: &str) -> RawRequest {
        use base64::Engine as _;
        let url = format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(png)
        );
        let body = json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}
        ]}]});
        let found = media::find(Api::ChatCompletions, &body);
        chat_request(media::referenced(body, &found))
    }

    #[test]
    fn a_changed_image_is_said_by_its_place_hashes_and_sizes_its_size_folded_in() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        let bigger = [&png[..], b"more"].concat();
        let old = sending(&png, "Total?");
        let recorded = [Exchange::Raw {
            request: old,
            response: RawResponse {
                status: 200,
                content_type: "application/json".into(),
                body: RawBody::Json(json!({})),
            },
        }];
        let relayed = |request| Relayed {
            request,
            api: Api::ChatCompletions,
            model: "m".into(),
            ordinal: 1,
            sends_key: false,
        };
        let sha = |bytes: &[u8]| {
            MediaPart::new("r.png", bytes.to_vec())
                .unwrap()
                .sha256()
                .to_string()
        };
        let (a, b) = (sha(&png), sha(&bigger));
        let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count() + 1;
        let n = n.max(4);
        let said = relayed(sending(&bigger, "Sum?")).changes(&recorded);
        assert_eq!(
            said,
            [
                format!(
                    "image messages[0].content[0].image_url.url changed (sha {}… -> {}…, 16 B -> 20 B)",
                    &a[..n],
                    &b[..n]
                ),
                "messages[0].content[1].text: \"Total?\" → \"Sum?\"".to_string(),
            ]
        );
    }
}
