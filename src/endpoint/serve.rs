//! The recording endpoint's HTTP server (hyper, HTTP/1.1, on the engine's runtime): each request
//! checked (the run's secret, a sample's token, a known provider, a served API, a JSON body), then
//! taken through the engine's flow (`Engine::relay`); the answer sent back as recorded, or the
//! provider's own error answer as it came; a live stream passed on as it comes, recorded once whole.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument as _;

use super::route::{self, Refused};
use crate::cassette::raw::{RawBody, RawRequest, RawResponse, canonical, parse_events};
use crate::cassette::raw_key;
use crate::config::WireFormat;
use crate::engine::app_calls::{Listening, Registry};
use crate::engine::relay::{Relayed, RelayedAnswer};
use crate::engine::{CallEnding, CallRole, RunScope};
use crate::provider::relayed::{self, Api, SUPPORTED};
use crate::provider::{CREDENTIAL_HEADERS, Forwarded, ProviderError};

/// The events of a live stream read ahead of the client, at most.
const STREAM_BUFFER: usize = 64;

/// The largest request body read.
const MAX_REQUEST_BYTES: usize = 64 << 20;

/// The status of a call the endpoint refuses to make (no recording, the budget, no key): a client
/// error the common clients do not retry (not 408, 409 or 429).
pub(crate) const REFUSED: u16 = 400;

/// Request headers not forwarded: the connection's own, and the encodings (the answer is read whole).
const HOP_BY_HOP: [&str; 7] = [
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "accept-encoding",
    "keep-alive",
    "upgrade",
];

/// Binds an ephemeral port on 127.0.0.1 (the port bound for `app_env`, if it was) and serves it on
/// `handle`, until the engine's [`Listening`] goes.
pub(crate) fn start(handle: &tokio::runtime::Handle) -> Listening {
    let (listener, secret) = super::app_env::take_preset().unwrap_or_else(|| {
        // Binding the loopback interface on port 0 fails only when the machine has no loopback.
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .expect("the recording endpoint binds 127.0.0.1");
        (listener, super::route::random_hex(16))
    });
    let origin = listener
        .local_addr()
        .map(|a| format!("http://{a}"))
        .unwrap_or_default();
    let listening = Listening {
        origin,
        secret,
        samples: Arc::default(),
    };
    handle.spawn(accept(
        listener,
        listening.secret.clone(),
        Arc::downgrade(&listening.samples),
    ));
    listening
}

/// What every connection's handler reads.
struct Shared {
    secret: String,
    samples: Arc<Registry>,
}

async fn accept(listener: std::net::TcpListener, secret: String, samples: Weak<Registry>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors, most likely: wait for some to close.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Some(samples) = samples.upgrade() else {
            return;
        };
        let shared = Arc::new(Shared {
            secret: secret.clone(),
            samples,
        });
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(request, &shared).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A request the endpoint answers itself, in the provider's error shape.
struct Refusal {
    status: u16,
    wire: Option<WireFormat>,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: u16, wire: Option<WireFormat>, code: &'static str, message: String) -> Self {
        Self {
            status,
            wire,
            code,
            message,
        }
    }

    fn response(self) -> Response<Full<Bytes>> {
        let body = route::error_body(self.wire, self.status, self.code, &self.message);
        reply(self.status, "application/json", body.to_string().into())
    }
}

fn reply<B>(status: u16, content_type: &str, body: B) -> Response<B> {
    let mut response = with_status(status, body);
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}

/// `body` answered with `status` (one no HTTP status is: 502).
fn with_status<B>(status: u16, body: B) -> Response<B> {
    let mut response = Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    response
}

/// What the endpoint answers: a whole body, or a live stream passed on as it comes.
type Answer = Either<Full<Bytes>, Passing>;

/// One request's way through the engine, owning what it needs: it ends with the whole answer, or
/// (a live stream) once the stream it passed on ended and was recorded.
type Exchange = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Refusal>> + Send>>;

/// A live stream's head, sent to the handler as it comes: its status, content type, and its events
/// as they arrive.
struct Head {
    status: u16,
    content_type: String,
    events: mpsc::Receiver<Bytes>,
    /// Set when the client went away having read every event passed on so far.
    gone: Arc<AtomicBool>,
}

async fn answer(request: Request<Incoming>, shared: &Shared) -> Response<Answer> {
    // The path names the run's secret and the sample's token: neither is logged, nor is the query.
    let span = tracing::debug_span!("endpoint", method = %request.method());
    let response = answer_in(request, shared).instrument(span.clone()).await;
    span.in_scope(|| tracing::debug!(status = response.status().as_u16(), "answered the client"));
    response
}

async fn answer_in(request: Request<Incoming>, shared: &Shared) -> Response<Answer> {
    let incoming = match checked(request, shared).await {
        Ok(incoming) => incoming,
        Err(refusal) => return refusal.response().map(Either::Left),
    };
    let (head, streaming) = oneshot::channel();
    let mut exchange: Exchange = Box::pin(serve(incoming, head).in_current_span());
    tokio::select! {
        biased;
        ended = &mut exchange => ended.unwrap_or_else(Refusal::response).map(Either::Left),
        // A live stream: its events go to the client as they come, the exchange driven by its body.
        Ok(head) = streaming => {
            let passing = Passing {
                client_gone: head.gone,
                events: head.events,
                exchange: Some(exchange),
                ended: None,
            };
            reply(head.status, &head.content_type, Either::Right(passing))
        }
    }
}

/// A live stream's body: each event as it comes, while it drives the exchange that reads them from
/// upstream and records the stream once it ended whole. Dropped (the client gone) with events unread,
/// the exchange is dropped with it, as a cancelled call: nothing recorded, its place given back, its
/// cost settled. Dropped with every event read (a client stops at the last one it needs, such as
/// `[DONE]`), the exchange goes on for its sample to wait for: the stream is recorded if upstream
/// ends without another event, and not if one comes that the client will never read.
struct Passing {
    client_gone: Arc<AtomicBool>,
    events: mpsc::Receiver<Bytes>,
    exchange: Option<Exchange>,
    /// Set when the exchange ended: whether the stream was received whole (and recorded).
    ended: Option<bool>,
}

impl hyper::body::Body for Passing {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Some(exchange) = this.exchange.as_mut()
            && let Poll::Ready(ended) = exchange.as_mut().poll(cx)
        {
            this.exchange = None;
            this.ended = Some(ended.is_ok());
        }
        match this.events.poll_recv(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(Ok(Frame::data(event)))),
            // Every event passed on: the body ends once the exchange did (the stream recorded), or,
            // the stream not received whole, with an error, so that the client sees it cut.
            Poll::Ready(None) => match this.ended.take() {
                Some(false) => Poll::Ready(Some(Err(std::io::Error::other(
                    "the provider's stream did not end whole",
                )))),
                Some(true) => Poll::Ready(None),
                None if this.exchange.is_none() => Poll::Ready(None),
                None => Poll::Pending,
            },
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Passing {
    fn drop(&mut self) {
        if let Some(exchange) = self.exchange.take()
            && self.events.is_empty()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            self.client_gone.store(true, Ordering::Release);
            // Its sample waits for it (`SampleState::settled`).
            runtime.spawn(exchange);
        }
    }
}

/// The request's parts the engine and the upstream call need.
struct Checked {
    scope: Arc<RunScope>,
    provider: String,
    wire: WireFormat,
    rest: String,
    api: Api,
    query: Vec<(String, String)>,
    headers: Vec<(HeaderName, HeaderValue)>,
    sends_key: bool,
    body: Bytes,
}

/// The request checked (`incoming`) through the engine: replayed, or forwarded and recorded; a live
/// stream's head goes to `head` as it comes.
async fn serve(
    incoming: Checked,
    head: oneshot::Sender<Head>,
) -> Result<Response<Full<Bytes>>, Refusal> {
    tracing::debug!(
        test = %incoming.scope.identity().test,
        run = incoming.scope.identity().run_index,
        provider = %incoming.provider,
        path = %incoming.rest,
        "a request of the application's client"
    );
    let scope = incoming.scope.clone();
    let _under_way = scope.state().under_way();
    let engine = scope.engine().clone();
    let json: serde_json::Value = serde_json::from_slice(&incoming.body).map_err(|e| {
        Refusal::new(
            400,
            Some(incoming.wire),
            "invalid_json",
            format!("the recording endpoint reads JSON request bodies; this one is not: {e}"),
        )
    })?;
    if let Some(task) = relayed::first_user_text(incoming.api, &json) {
        scope.state().note_task(task);
    }
    // The media go to the store, the body names them: its key is the media's hash, not their bytes.
    let media = relayed::media::find(incoming.api, &json);
    let raw = RawRequest {
        method: "POST".into(),
        path: incoming.rest.clone(),
        query: incoming.query.clone(),
        body: canonical(relayed::media::referenced(json, &media)),
        media: media.into_iter().map(|m| m.part).collect(),
    };
    let model = relayed::model_of(&raw);
    let owner = crate::trial_name::sample_owner(&scope.identity().test, scope.identity().run_index)
        .to_string();
    let same = raw_key(&owner, scope.identity().run_index, &raw, 0);
    // Given back unless its answer is kept, however the request ends (the client gone included).
    let place = scope.state().place(same);
    let ordinal = place.ordinal();
    let key = raw_key(&owner, scope.identity().run_index, &raw, ordinal);
    let relayed = Relayed {
        request: raw,
        api: incoming.api,
        model,
        ordinal,
        sends_key: incoming.sends_key,
    };
    let client = engine
        .client(&incoming.provider)
        .map_err(|e| Refusal::new(404, Some(incoming.wire), "unknown_provider", e.to_string()))?;
    let url = route::upstream_url(
        &client.endpoint().base_url,
        incoming.wire,
        &incoming.rest,
        &incoming.query,
    );
    let mut went = Went {
        head: Some(head),
        ..Went::default()
    };
    let sent = crate::provider::Sent::default();
    let upstream = upstream(
        incoming.api,
        &client,
        &url,
        incoming.headers,
        incoming.body,
        &sent,
        &mut went,
    );
    let made = engine
        .relay(&scope, &client, &relayed, key, &sent, upstream)
        .await;
    if made.is_ok() {
        place.keep();
    }
    match made {
        Ok((answer, latency, replayed)) => {
            if let Some(read) = crate::provider::steps::read(&relayed.request, &answer.response) {
                scope.state().note_model_call(read.noted(
                    &incoming.provider,
                    &relayed.model,
                    &answer.tokens,
                    latency,
                    replayed,
                ));
            }
            let ending = if replayed {
                CallEnding::Replayed
            } else {
                CallEnding::Made
            };
            scope.state().note_call(CallRole::Subject, ending);
            if !incoming.api.embeds() {
                let text =
                    crate::provider::relayed::answer_text(&relayed.request, &answer.response);
                scope.state().note_answer(text);
            }
            Ok(recorded(&answer.response))
        }
        // The provider's own answer (a 429, a 5xx, a 4xx): as it came, so the client's retries run.
        Err(_) if went.passed.is_some() => Ok(went.passed.map(as_it_came).expect("checked above")),
        // Sent, but no answer came back (a refused connection, a timeout).
        Err(e) if went.attempted => Err(Refusal::new(
            502,
            Some(incoming.wire),
            "upstream_failed",
            e.to_string(),
        )),
        // Refused before it was made: the sample ends by it, whatever its code returns.
        Err(e) => {
            let code = if e.is_unavailable() {
                "prompt_tester_unavailable"
            } else {
                "prompt_tester_refused"
            };
            let message = format!("prompt-tester: {e}");
            scope.state().note_call(CallRole::Subject, e.ending());
            scope.state().refuse(e);
            Err(Refusal::new(REFUSED, Some(incoming.wire), code, message))
        }
    }
}

/// The request checked: the secret, the sample, the provider, the API, the method; its credentials
/// found (and declared secrets), its body read.
async fn checked(request: Request<Incoming>, shared: &Shared) -> Result<Checked, Refusal> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let target = route::split(&path, &shared.secret).map_err(|refused| match refused {
        Refused::NoSecret => Refusal::new(
            403,
            None,
            "forbidden",
            "this URL is not one the recording endpoint gave out: ask the sample for its base URL \
             (SampleContext::base_url, PromptRun::base_url)"
                .into(),
        ),
        Refused::Incomplete => Refusal::new(
            404,
            None,
            "unsupported_path",
            format!(
                "no provider path after the sample's URL; the recording endpoint serves {SUPPORTED}"
            ),
        ),
    })?;
    let scope = shared
        .samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(target.sample)
        .and_then(Weak::upgrade)
        .ok_or_else(|| {
            Refusal::new(
                404,
                None,
                "unknown_sample",
                super::app_env::unknown_sample(target.sample),
            )
        })?;
    scope.state().count_request();
    let endpoint = scope
        .engine()
        .config
        .endpoint(target.provider)
        .map_err(|e| Refusal::new(404, None, "unknown_provider", e.to_string()))?
        .clone();
    let wire = endpoint.wire;
    let unsupported = |why: String| Refusal::new(404, Some(wire), "unsupported_path", why);
    let (api, _) = Api::of_path(target.rest).ok_or_else(|| {
        unsupported(format!(
            "POST {} is not served by the recording endpoint; it serves {SUPPORTED}",
            target.rest
        ))
    })?;
    if api.wire() != wire {
        return Err(unsupported(format!(
            "POST {} is not an API of provider {:?}, whose wire format is {wire:?}; the recording endpoint \
             serves {SUPPORTED}",
            target.rest, endpoint.name
        )));
    }
    if parts.method != Method::POST {
        return Err(Refusal::new(
            405,
            Some(wire),
            "method_not_allowed",
            format!(
                "{} {}: the recording endpoint serves POST only",
                parts.method, target.rest
            ),
        ));
    }
    let mut sends_key = false;
    let mut query = Vec::new();
    let mut headers = Vec::new();
    for (name, value) in route::query_pairs(parts.uri.query().unwrap_or("")) {
        if name == "key" {
            crate::redact::protect_value("GOOGLE_API_KEY", &value);
            sends_key = true;
            if let Ok(mut value) = HeaderValue::from_str(&value) {
                value.set_sensitive(true);
                headers.push((HeaderName::from_static("x-goog-api-key"), value));
            }
        } else {
            query.push((name, value));
        }
    }
    query.sort();
    for (name, value) in &parts.headers {
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        if CREDENTIAL_HEADERS.contains(&name.as_str()) {
            // async-openai with no key sends `Authorization: Bearer `: no credential, so the
            // endpoint's own key (or, with none, "no key") applies.
            if crate::redact::credential_of(value.to_str().unwrap_or("x")).is_empty() {
                continue;
            }
            sends_key = true;
            crate::redact::protect_value(name.as_str(), value.to_str().unwrap_or(""));
        }
        headers.push((name.clone(), value.clone()));
    }
    let body = Limited::new(body, MAX_REQUEST_BYTES)
        .collect()
        .await
        .map_err(|e| {
            Refusal::new(
                400,
                Some(wire),
                "unreadable_body",
                format!("the request's body: {e}"),
            )
        })?
        .to_bytes();
    Ok(Checked {
        scope,
        provider: endpoint.name,
        wire,
        rest: target.rest.to_string(),
        api,
        query,
        headers,
        sends_key,
        body,
    })
}

/// How far a forwarded request went: whether it was tried at all, and the provider's answer to pass
/// back as it came when it is not one to record; where a live stream's head goes.
#[derive(Default)]
struct Went {
    attempted: bool,
    passed: Option<Forwarded>,
    head: Option<oneshot::Sender<Head>>,
}

/// Forwards the request once; a success the client can read is the answer, anything else is kept
/// in `went.passed` to go back as it came (and is not recorded). A stream (`text/event-stream`) is
/// passed on as it comes (its head to `went.head`) and is the answer once it ended whole.
async fn upstream(
    api: Api,
    client: &crate::provider::ProviderClient,
    url: &str,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    sent: &crate::provider::Sent,
    went: &mut Went,
) -> Result<(RelayedAnswer, Duration), ProviderError> {
    went.attempted = true;
    let mut forwarding = client.forward(url, headers, body.to_vec(), sent).await?;
    let status = forwarding.status();
    let content_type = forwarding
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let success = (200..300).contains(&status);
    let answered = |body, latency| {
        let response = RawResponse {
            status,
            content_type: content_type.clone(),
            body,
        };
        let tokens = relayed::tokens(api, &response);
        (RelayedAnswer { response, tokens }, latency)
    };
    let not_recorded = |message: String| ProviderError {
        provider: client.name().to_string(),
        status: Some(status),
        error_type: None,
        message,
        request_id: None,
        attempts: 1,
    };
    if success
        && content_type.starts_with("text/event-stream")
        && let Some(head) = went.head.take()
    {
        let (events, passed) = mpsc::channel(STREAM_BUFFER);
        let gone = Arc::new(AtomicBool::new(false));
        let _ = head.send(Head {
            status,
            content_type: content_type.clone(),
            events: passed,
            gone: gone.clone(),
        });
        let mut whole = Vec::new();
        while let Some(chunk) = forwarding.chunk().await? {
            whole.extend_from_slice(&chunk);
            if gone.load(Ordering::Acquire) || events.send(chunk).await.is_err() {
                return Err(not_recorded(
                    "the application's client went away before the stream ended: not recorded"
                        .into(),
                ));
            }
        }
        let latency = forwarding.end();
        return match String::from_utf8(whole) {
            Ok(text) => Ok(answered(RawBody::Events(parse_events(&text)), latency)),
            Err(_) => Err(not_recorded(
                "a stream that is not UTF-8 text, passed to the application's client".into(),
            )),
        };
    }
    let forwarded = forwarding.whole().await?;
    let read = success
        .then(|| {
            serde_json::from_slice(&forwarded.body)
                .ok()
                .map(RawBody::Json)
        })
        .flatten();
    match read {
        Some(body) => Ok(answered(body, forwarded.latency)),
        None => {
            went.passed = Some(forwarded);
            Err(not_recorded(format!(
                "HTTP {status}, passed back to the application's client"
            )))
        }
    }
}

/// A recorded (or just recorded) answer, as the client reads it.
fn recorded(response: &RawResponse) -> Response<Full<Bytes>> {
    let body = match &response.body {
        RawBody::Json(json) => json.to_string(),
        RawBody::Events(events) => crate::cassette::raw::write_events(events),
    };
    reply(response.status, &response.content_type, body.into())
}

/// The provider's answer as it came: its status, headers (the connection's own left out) and body.
fn as_it_came(forwarded: Forwarded) -> Response<Full<Bytes>> {
    let mut response = with_status(forwarded.status, Full::new(Bytes::from(forwarded.body)));
    for (name, value) in &forwarded.headers {
        if !HOP_BY_HOP.contains(&name.as_str()) && name.as_str() != "content-encoding" {
            response.headers_mut().append(name.clone(), value.clone());
        }
    }
    response
}
