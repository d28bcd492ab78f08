//! The server: its shared state, the builder, the connection loop and the [`FakeProvider`] handle.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::Notify;

use crate::{CapturedRequest, Echo, Fault, Reply, Responder, Usage, Wire};

struct State {
    capture: bool,
    requests: Mutex<Vec<CapturedRequest>>,
    queue: Mutex<VecDeque<Reply>>,
    responder: Mutex<Responder>,
    received: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Requests beyond this many being answered get a 429 asking to retry after the duration.
    reject_beyond: Option<(usize, Duration)>,
    /// Requests being answered (not rejected) now.
    admitted: AtomicUsize,
    max_admitted: AtomicUsize,
    rejected: AtomicUsize,
}

/// A poisoned lock only means a responder panicked in another connection; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a request as in flight until it is answered or its connection is dropped.
struct InFlight(Arc<State>);

impl InFlight {
    fn enter(state: &Arc<State>) -> Self {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(state.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request admitted under [`Builder::reject_beyond`], until it is answered.
struct Admitted(Arc<State>);

impl Admitted {
    /// Admits the request, or `None` when `limit` others are being answered.
    fn enter(state: &Arc<State>, limit: usize) -> Option<Self> {
        let now = state.admitted.fetch_add(1, Ordering::SeqCst) + 1;
        if now > limit {
            state.admitted.fetch_sub(1, Ordering::SeqCst);
            state.rejected.fetch_add(1, Ordering::SeqCst);
            return None;
        }
        state.max_admitted.fetch_max(now, Ordering::SeqCst);
        Some(Self(state.clone()))
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.admitted.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A fixed reply to the requests it matches (`None` for the others).
type Rule = Arc<dyn Fn(&CapturedRequest) -> Option<Reply> + Send + Sync>;

/// Configures a [`FakeProvider`] before it starts.
pub struct Builder {
    echo: Echo,
    responder: Option<Responder>,
    /// Fixed answers to the requests they match, tried in order before the responder or the echo.
    rules: Vec<Rule>,
    capture: bool,
    reject_beyond: Option<(usize, Duration)>,
}

impl Builder {
    /// The echo's fixed answer text.
    pub fn echo_text(mut self, text: impl Into<String>) -> Self {
        self.echo.text = Some(text.into());
        self
    }

    /// The echo's fixed latency.
    pub fn latency(mut self, latency: Duration) -> Self {
        self.echo.latency = latency;
        self
    }

    /// The echo's fixed token counts.
    pub fn usage(mut self, usage: Usage) -> Self {
        self.echo.usage = Some(usage);
        self
    }

    /// Makes the echo call tools: a request offering tools gets a call of its first one with
    /// `arguments`, and the request carrying its result gets `echo: <result>` ([`Echo::tool_arguments`]).
    pub fn call_tools(mut self, arguments: serde_json::Value) -> Self {
        self.echo.tool_arguments = Some(arguments);
        self
    }

    /// Answers with `responder` instead of the echo.
    pub fn respond_with(
        mut self,
        responder: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.responder = Some(Arc::new(responder));
        self
    }

    /// Answers `text` (usage estimated) to every request for `model`, before the responder or the echo.
    pub fn answer_model(self, model: &str, text: &str) -> Self {
        let (model, text) = (model.to_string(), text.to_string());
        self.rule(move |request| {
            (request.model().as_deref() == Some(&*model)).then(|| Reply::answer(request, &text))
        })
    }

    /// Answers `text` (usage estimated) to every request whose last user message is `prompt`, before
    /// the responder or the echo.
    pub fn answer_prompt(self, prompt: &str, text: &str) -> Self {
        let text = text.to_string();
        self.reply_prompt_with(prompt, move |request| Reply::answer(request, &text))
    }

    /// Replies `reply` (an error, say) to every request whose last user message is `prompt`, before the
    /// responder or the echo.
    pub fn reply_prompt(self, prompt: &str, reply: Reply) -> Self {
        self.reply_prompt_with(prompt, move |_| reply.clone())
    }

    fn reply_prompt_with(
        self,
        prompt: &str,
        reply: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let prompt = prompt.to_string();
        self.rule(move |request| {
            (request.last_user_text().as_deref() == Some(&*prompt)).then(|| reply(request))
        })
    }

    fn rule(
        mut self,
        rule: impl Fn(&CapturedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Arc::new(rule));
        self
    }

    /// Whether to keep every request (on by default; a benchmark of many calls may turn it off and
    /// still read [`FakeProvider::request_count`] and [`FakeProvider::max_concurrent`]).
    pub fn capture(mut self, capture: bool) -> Self {
        self.capture = capture;
        self
    }

    /// Answers 429 ([`Reply::rate_limited_secs`], asking to retry after `retry_after`) to every request
    /// that arrives while `limit` others are being answered, as a provider limiting concurrency does.
    pub fn reject_beyond(mut self, limit: usize, retry_after: Duration) -> Self {
        self.reject_beyond = Some((limit, retry_after));
        self
    }

    /// Starts the server on an ephemeral port of 127.0.0.1.
    pub fn try_start(self) -> std::io::Result<FakeProvider> {
        let mut responder = self.responder.unwrap_or_else(|| self.echo.responder());
        if !self.rules.is_empty() {
            let (rules, otherwise) = (self.rules, responder);
            responder = Arc::new(move |request| {
                rules
                    .iter()
                    .find_map(|rule| rule(request))
                    .unwrap_or_else(|| otherwise(request))
            });
        }
        let state = Arc::new(State {
            capture: self.capture,
            requests: Mutex::new(Vec::new()),
            queue: Mutex::new(VecDeque::new()),
            responder: Mutex::new(responder),
            received: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            reject_beyond: self.reject_beyond,
            admitted: AtomicUsize::new(0),
            max_admitted: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
        });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server_state = state.clone();
        let thread = std::thread::Builder::new()
            .name("fake-provider".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = addr_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(serve(server_state, addr_tx, stop_rx));
                // Dropping the runtime here cancels every connection task, which closes their sockets.
            })?;
        let addr = addr_rx.recv().map_err(|_| {
            std::io::Error::other("the fake provider's thread ended before binding")
        })??;
        Ok(FakeProvider {
            addr,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Starts the server; panics if 127.0.0.1 cannot be bound (a test fixture, not library code).
    pub fn start(self) -> FakeProvider {
        self.try_start().expect("the fake provider binds 127.0.0.1")
    }
}

async fn serve(
    state: Arc<State>,
    addr_tx: std::sync::mpsc::Sender<std::io::Result<SocketAddr>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(listener) => listener,
        Err(e) => {
            let _ = addr_tx.send(Err(e));
            return;
        }
    };
    let _ = addr_tx.send(listener.local_addr());
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_connection(stream, state.clone()));
                }
            }
        }
    }
}

async fn serve_connection(stream: tokio::net::TcpStream, state: Arc<State>) {
    // A handler that must drop the connection signals here; dropping the connection future closes
    // the socket without a response, which axum's own server loop would not allow.
    let kill = Arc::new(Notify::new());
    let service = {
        let kill = kill.clone();
        service_fn(move |request| handle(request, state.clone(), kill.clone()))
    };
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        _ = kill.notified() => {}
    }
}

async fn handle(
    request: Request<Incoming>,
    state: Arc<State>,
    kill: Arc<Notify>,
) -> Result<Response<ReplyBody>, Infallible> {
    let _in_flight = InFlight::enter(&state);
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes().to_vec())
        .unwrap_or_default();
    let captured = CapturedRequest {
        index: state.received.fetch_add(1, Ordering::SeqCst),
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_else(|| parts.uri.path().to_string()),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        json: serde_json::from_slice(&body).ok(),
        body,
        received_at: Instant::now(),
    };
    if state.capture {
        lock(&state.requests).push(captured.clone());
    }
    let admitted = match state.reject_beyond {
        Some((limit, after)) => match Admitted::enter(&state, limit) {
            Some(admitted) => Some(admitted),
            None => {
                let wire = captured.wire().unwrap_or(Wire::OpenAi);
                return Ok(respond(Reply::rate_limited_secs(wire, after)));
            }
        },
        None => None,
    };
    let scripted = lock(&state.queue).pop_front();
    let reply = match scripted {
        Some(reply) => reply,
        None => {
            let responder = lock(&state.responder).clone();
            responder(&captured)
        }
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if reply.fault == Some(Fault::DropConnection) {
        kill.notify_one();
        std::future::pending::<()>().await;
    }
    drop(admitted);
    Ok(respond(reply.streamed_for(&captured)))
}

/// The HTTP response for `reply`.
fn respond(reply: Reply) -> Response<ReplyBody> {
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    let body = match reply.fault {
        Some(Fault::AbortBody) => {
            let half = reply.body.len() / 2;
            ReplyBody {
                data: Some(Bytes::copy_from_slice(&reply.body[..half])),
                abort: true,
                ..ReplyBody::default()
            }
        }
        Some(Fault::Endless(every)) => ReplyBody {
            endless: Some((Bytes::from(reply.body), every)),
            ..ReplyBody::default()
        },
        _ if is_event_stream(&reply) => {
            let mut events = crate::stream::split_events(&reply.body)
                .into_iter()
                .map(Bytes::copy_from_slice);
            let pause = match reply.fault {
                Some(Fault::PauseAfterFirst(pause)) => Some(Box::pin(tokio::time::sleep(pause))),
                _ => None,
            };
            ReplyBody {
                data: events.next(),
                events: events.collect(),
                pause,
                ..ReplyBody::default()
            }
        }
        _ => ReplyBody {
            data: Some(Bytes::from(reply.body)),
            ..ReplyBody::default()
        },
    };
    response.body(body).unwrap_or_else(|e| {
        Response::builder()
            .status(500)
            .body(ReplyBody {
                data: Some(Bytes::from(format!(
                    "fake provider: bad scripted reply: {e}"
                ))),
                ..ReplyBody::default()
            })
            .unwrap_or_default()
    })
}

fn is_event_stream(reply: &Reply) -> bool {
    reply
        .headers
        .iter()
        .any(|(name, value)| name == "content-type" && value.starts_with("text/event-stream"))
}

/// A response body: the bytes (a stream's events one chunk each), then (for [`Fault::AbortBody`]) a short pause, so that hyper flushes
/// what it has, and an error that makes hyper close the connection mid-body; or (for
/// [`Fault::Endless`]) the same bytes once per interval, forever.
#[derive(Default)]
pub struct ReplyBody {
    data: Option<Bytes>,
    /// A stream's events after the first, sent one per frame.
    events: VecDeque<Bytes>,
    abort: bool,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    endless: Option<(Bytes, Duration)>,
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        if !self.events.is_empty() {
            // A stream's pause after its first event (`Fault::PauseAfterFirst`).
            if let Some(pause) = self.pause.as_mut() {
                if pause.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.pause = None;
            }
            if let Some(event) = self.events.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(event))));
            }
        }
        if let Some((chunk, every)) = self.endless.clone() {
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(every)));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.pause = None;
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if self.abort {
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(20))));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.abort = false;
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fake provider aborts the body",
            ))));
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.events.is_empty() && !self.abort && self.endless.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let unknown = self.abort || self.endless.is_some() || !self.events.is_empty();
        match (&self.data, unknown) {
            // An aborted, endless or streamed body has no known length: hyper sends it chunked.
            (_, true) => SizeHint::default(),
            (Some(data), false) => SizeHint::with_exact(data.len() as u64),
            (None, false) => SizeHint::with_exact(0),
        }
    }
}

/// A fake provider listening on 127.0.0.1. Dropping it stops the server.
pub struct FakeProvider {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeProvider {
    /// A fake with the default echo responder (no latency, estimated usage).
    pub fn start() -> Self {
        Self::builder().start()
    }

    /// A fake with the default echo responder that answers each call after `latency`.
    pub fn with_latency(latency: Duration) -> Self {
        Self::builder().latency(latency).start()
    }

    /// A builder, to set the echo's text, latency and usage, or a responder.
    pub fn builder() -> Builder {
        Builder {
            echo: Echo::default(),
            responder: None,
            rules: Vec::new(),
            capture: true,
            reject_beyond: None,
        }
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL a client of `wire` is configured with: the root for Anthropic and Gemini,
    /// `.../v1` for OpenAI-compatible clients (which append `/chat/completions`).
    pub fn base_url(&self, wire: Wire) -> String {
        match wire {
            Wire::Anthropic | Wire::Gemini => self.url(),
            Wire::OpenAi => format!("{}/v1", self.url()),
        }
    }

    /// Queues a scripted reply; queued replies answer requests in order before the responder does.
    pub fn push(&self, reply: Reply) {
        lock(&self.state.queue).push_back(reply);
    }

    /// Queues several scripted replies.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.state.queue).extend(replies);
    }

    /// Scripted replies not yet used.
    pub fn queued(&self) -> usize {
        lock(&self.state.queue).len()
    }

    /// Replaces the responder (and the builder's fixed answers with it).
    pub fn respond_with(
        &self,
        responder: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static,
    ) {
        *lock(&self.state.responder) = Arc::new(responder);
    }

    /// Replaces the responder with an echo.
    pub fn set_echo(&self, echo: Echo) {
        *lock(&self.state.responder) = echo.responder();
    }

    /// The requests received so far (empty when capture is off).
    pub fn requests(&self) -> Vec<CapturedRequest> {
        lock(&self.state.requests).clone()
    }

    /// How many requests arrived (counted even when capture is off).
    pub fn request_count(&self) -> usize {
        self.state.received.load(Ordering::SeqCst)
    }

    /// The most requests that were being answered at once.
    pub fn max_concurrent(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests answered 429 under [`Builder::reject_beyond`].
    pub fn rejected(&self) -> usize {
        self.state.rejected.load(Ordering::SeqCst)
    }

    /// The most requests admitted (answered, not rejected) at once under [`Builder::reject_beyond`].
    pub fn max_admitted(&self) -> usize {
        self.state.max_admitted.load(Ordering::SeqCst)
    }

    /// Requests being answered now.
    pub fn in_flight(&self) -> usize {
        self.state.in_flight.load(Ordering::SeqCst)
    }

    /// Forgets captured requests, counts and queued replies (the responder stays).
    pub fn reset(&self) {
        lock(&self.state.requests).clear();
        lock(&self.state.queue).clear();
        self.state.received.store(0, Ordering::SeqCst);
        self.state.max_in_flight.store(
            self.state.in_flight.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
    }

    /// Stops the server and waits for its thread (also done on drop).
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}
