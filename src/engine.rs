//! The engine every trial shares: configuration, one tokio runtime, the provider clients, the
//! cassettes, and the accounting of each run. Model calls go through [`Engine::complete`], which decides
//! between replaying a cassette and calling the provider.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::budget::Budget;
use crate::cassette::decision::{
    self, CallDecision, Recording, Refusal, Replacements, Situation, Write,
};
use crate::cassette::{self, CassetteMode, CassetteStore, Entry, Policy, ReplaceInto};
use crate::completion::{CompletionRequest, CompletionResult};
use crate::config::Config;
use crate::embedding::{Embedding, EmbeddingRequest};
use crate::provider::ProviderClient;
pub use crate::role::CallRole;
use crate::stats::agreement::Agreement;
use crate::trajectory::NotedCall;
pub use crate::usage::Usage;
use tracing::Instrument as _;

pub(crate) mod app_calls;
mod bill;
pub(crate) mod call_error;
mod event;
mod files;
#[cfg(feature = "endpoint")]
pub(crate) mod relay;
mod same_call;
mod scope;
mod site;
pub(crate) mod state;
use bill::Billed;
pub use call_error::{CallEnding, CallError, CallErrorKind};
pub use event::{CallEnd, CallEvent, CallObserver};
pub use scope::{RunScope, SampleIdentity};

/// A call's answer and how it was obtained.
#[derive(Debug, Clone)]
pub struct Completed {
    /// The answer, priced.
    pub result: CompletionResult,
    /// The call's wall time, or the recorded one.
    pub latency: Duration,
    /// Whether it came from a cassette.
    pub replayed: bool,
}

/// The shared engine.
pub struct Engine {
    /// The configuration.
    pub config: Config,
    /// The cassette mode.
    pub mode: CassetteMode,
    runtime: tokio::runtime::Runtime,
    http: crate::provider::LazyHttp,
    clients: Mutex<BTreeMap<String, Arc<ProviderClient>>>,
    /// The cassettes this run opened (shared with the blocking threads that read and write them).
    pub cassettes: Arc<CassetteStore>,
    /// `CI` is set: read once, when the run starts.
    ci: bool,
    /// Where answers that replace a sample's recordings go.
    replacements: Replacements,
    /// Who hears of each call (the run's reporter).
    observer: Arc<dyn CallObserver>,
    /// The run's budget (`--budget`), if it has one.
    budget: Option<Arc<Budget>>,
    /// The commands messages name, for this run's test target.
    pub commands: crate::commands::Commands,
    /// The calls being made now, so that an identical one waits and replays it.
    same_calls: same_call::SameCalls,
    /// The recording endpoint's address, set when a sample first asks for its URL.
    #[cfg(feature = "endpoint")]
    endpoint: std::sync::OnceLock<app_calls::Listening>,
    /// The configured judge's measurement per question type, set once before the trials.
    pub(crate) judge_measured: std::sync::OnceLock<BTreeMap<String, Agreement>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("root", &self.config.root)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// A call under way: told to the observer when it starts, and when it ends however it ends (an
/// early `?` included).
struct Underway<'a> {
    observer: &'a dyn CallObserver,
    role: CallRole,
    end: CallEnd,
}

impl<'a> Underway<'a> {
    fn start(observer: &'a dyn CallObserver, role: CallRole) -> Self {
        observer.call_event(CallEvent::Started(role));
        Self {
            observer,
            role,
            end: CallEnd::Failed,
        }
    }
}

impl Drop for Underway<'_> {
    fn drop(&mut self) {
        self.observer
            .call_event(CallEvent::Finished(self.role, self.end));
    }
}

impl Engine {
    /// The engine of one run, using cassettes as `policy` says (read once by the run's settings);
    /// `observer` hears of every call.
    pub fn new(config: Config, policy: Policy, observer: Arc<dyn CallObserver>) -> Arc<Self> {
        Self::with_budget(config, policy, observer, None, None)
    }

    /// [`Engine::new`], under the run's `budget` when it has one: no call is made whose worst case
    /// could take the run's spend past it; `opened`: the cassettes the catalog opened (the same
    /// directory, pending folder and commands as `policy`'s), so no file is read twice.
    pub fn with_budget(
        config: Config,
        policy: Policy,
        observer: Arc<dyn CallObserver>,
        budget: Option<Budget>,
        opened: Option<Arc<CassetteStore>>,
    ) -> Arc<Self> {
        // A key variable may have any name (`api_key_env = "OLLAMA_PASS"`): its value is a secret too.
        crate::redact::protect_vars(
            config
                .endpoints
                .values()
                .flat_map(|e| e.api_key_env.iter().map(String::as_str)),
        );
        // A base URL's credentials go to the server, which may send them back bare.
        for url in config
            .endpoints
            .values()
            .map(|e| &e.base_url)
            .chain(config.embeddings_base_urls.values())
        {
            crate::redact::protect_userinfo(url);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("prompt-tester")
            .build()
            .expect("the tokio runtime starts");
        let http = crate::provider::LazyHttp::new(config.concurrency().max(16));
        Arc::new(Self {
            cassettes: opened.unwrap_or_else(|| {
                Arc::new(
                    CassetteStore::new(&config.cassette_dir)
                        .with_pending_dir(policy.pending_dir)
                        .with_commands(policy.commands.clone()),
                )
            }),
            commands: policy.commands,
            config,
            mode: policy.mode,
            runtime,
            http,
            clients: Mutex::new(BTreeMap::new()),
            ci: policy.ci,
            replacements: policy.replacements,
            observer,
            budget: budget.map(Arc::new),
            same_calls: same_call::SameCalls::default(),
            #[cfg(feature = "endpoint")]
            endpoint: Default::default(),
            judge_measured: std::sync::OnceLock::new(),
        })
    }

    /// The run's budget, if it has one.
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_deref()
    }

    /// An engine for unit tests: the configuration of the crate under test (its `prompt-tester.toml`,
    /// else the defaults), cassettes off.
    #[cfg(test)]
    pub(crate) fn for_unit_tests() -> Arc<Self> {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let config = Config::load(&root).unwrap_or_else(|_| Config::defaults(&root));
        Self::new(config, Policy::off(), Arc::new(()))
    }

    /// Runs a future to completion on the shared runtime (callable from many threads at once).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The client for the provider called `name`.
    pub fn client(&self, name: &str) -> Result<Arc<ProviderClient>, CallError> {
        let endpoint = self.config.endpoint(name)?;
        // Keyed by the endpoint, not the name used (`gemini` is `google`): one in-flight limit each.
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let client = clients.entry(endpoint.name.clone()).or_insert_with(|| {
            Arc::new(ProviderClient::shared(
                endpoint,
                &self.config.retry,
                self.http.clone(),
            ))
        });
        Ok(client.clone())
    }

    /// The rate-limit answers and in-flight limit of every endpoint called so far, by name.
    pub fn rate_limits(&self) -> Vec<(String, crate::provider::RateLimitStats)> {
        let clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients
            .iter()
            .map(|(name, client)| (name.clone(), client.rate_limits()))
            .collect()
    }

    /// Makes (or replays) one model call for `scope`.
    pub async fn complete(
        &self,
        scope: &RunScope,
        role: CallRole,
        provider: &str,
        request: CompletionRequest,
    ) -> Result<Completed, CallError> {
        self.complete_nth(scope, role, provider, request, 0).await
    }

    /// [`Engine::complete`] of the `nth` (from 0) ask of one request in a sample, under its own key.
    pub(crate) async fn complete_nth(
        &self,
        scope: &RunScope,
        role: CallRole,
        provider: &str,
        request: CompletionRequest,
        nth: u32,
    ) -> Result<Completed, CallError> {
        let client = self
            .client(provider)
            .inspect_err(|e| scope.state().note_call(role, e.ending()))?;
        // A part the wire format does not take fails before the cassette and the provider.
        if let Some(why) = crate::provider::unsendable(client.endpoint(), &request) {
            let error = CallError::new(CallErrorKind::Config, why);
            scope.state().note_call(role, error.ending());
            return Err(error);
        }
        let call = Call {
            scope,
            role,
            provider,
            model: &request.model,
            key: cassette::entry_key_nth(provider, &request, scope.identity().run_index, nth),
            sends_key: false,
        };
        let sent = crate::provider::Sent::default();
        let (result, latency, replayed) = self
            .exchange(
                call,
                &client,
                &request,
                &sent,
                client.complete_sent(&request, &sent),
            )
            .await?;
        scope
            .state()
            .account(|usage| usage.add_call(role, provider, &request.model, &result, replayed));
        if role == CallRole::Subject {
            scope.state().note_model_call(NotedCall::of_request(
                provider, &request, &result, latency, replayed,
            ));
        }
        Ok(Completed {
            result,
            latency,
            replayed,
        })
    }

    /// Embeds one text for `scope` (an embeddings call of `provider`, recorded and replayed like a model
    /// call, counted as `usage.embedding`).
    pub async fn embed(
        &self,
        scope: &RunScope,
        provider: &str,
        request: EmbeddingRequest,
    ) -> Result<Embedding, CallError> {
        let client = self
            .embeddings_client(provider)
            .inspect_err(|e| scope.state().note_call(CallRole::Embedding, e.ending()))?;
        let call = Call {
            scope,
            role: CallRole::Embedding,
            provider,
            model: &request.model,
            key: cassette::embedding_key(provider, &request),
            sends_key: false,
        };
        let sent = crate::provider::Sent::default();
        let (embedding, _, replayed) = self
            .exchange(
                call,
                &client,
                &request,
                &sent,
                client.embed_sent(&request, &sent),
            )
            .await?;
        scope
            .state()
            .account(|usage| usage.add_embedding(provider, &request.model, &embedding, replayed));
        Ok(embedding)
    }

    /// The one flow of a call, whatever it asks: the recorded answer to `request` with its recorded
    /// latency, or `answer` from the provider with the latency of the request that answered, recorded
    /// with `request` when the decision says so. Either is priced with today's table. Returns the
    /// answer, its latency and whether it was replayed. A call made (not replayed) is first held to the
    /// run's and the test's budgets ([`Billed`]); `sent` says how far its request got, should the call
    /// be dropped before it ends ([`bill::InFlight`]).
    async fn exchange<R: Billed>(
        &self,
        call: Call<'_>,
        client: &ProviderClient,
        request: &R,
        sent: &crate::provider::Sent,
        answer: impl Future<Output = Result<(R::Answer, Duration), crate::provider::ProviderError>>,
    ) -> Result<(R::Answer, Duration, bool), CallError> {
        let (scope, role) = (call.scope, call.role);
        let span = call.span();
        let exchanged = self
            .exchange_once(call, client, request, sent, answer)
            .instrument(span)
            .await;
        scope.state().note_call(
            role,
            match &exchanged {
                Ok((_, _, true)) => CallEnding::Replayed,
                Ok(_) => CallEnding::Made,
                Err(e) => e.ending(),
            },
        );
        exchanged
    }

    /// [`Engine::exchange`], before the call's ending is noted on its scope.
    async fn exchange_once<R: Billed>(
        &self,
        call: Call<'_>,
        client: &ProviderClient,
        request: &R,
        sent: &crate::provider::Sent,
        answer: impl Future<Output = Result<(R::Answer, Duration), crate::provider::ProviderError>>,
    ) -> Result<(R::Answer, Duration, bool), CallError> {
        let mut underway = Underway::start(&*self.observer, call.role);
        let cassette = self
            .cassette_of(call.scope)
            .await
            .map_err(|e| CallError::new(CallErrorKind::Cassette, e.to_string()).caused_by(e))?;
        let mut prepared =
            self.prepare(&call, call.missing_key(client), request, cassette.clone())?;
        // A first recording waits for an identical call being made, then decides again (and replays
        // it); its turn is held until its own answer is recorded.
        let first = matches!(prepared, Prepared::Call(Keep::First(_)));
        let turn = if first && self.mode == CassetteMode::Auto {
            Some(
                self.same_calls
                    .turn(&call.scope.identity().cassette, &call.key)
                    .await,
            )
        } else {
            None
        };
        if turn.is_some() {
            prepared = self.prepare(&call, call.missing_key(client), request, cassette)?;
        }
        let keep = match prepared {
            Prepared::Replay(entry) => {
                let latency = cassette::latency_of(&entry);
                let mut answer = R::answer_in(entry.call).ok_or_else(|| {
                    CallError::new(CallErrorKind::Cassette, mismatched(&entry.key, call.role))
                })?;
                request.price(self, call.provider, &mut answer);
                underway.end = CallEnd::Replayed;
                tracing::debug!(latency_ms = latency.as_millis() as u64, "replayed");
                return Ok((answer, latency, true));
            }
            Prepared::Call(keep) => keep,
        };
        let held = self.hold(call.scope, || request.worst(self, call.provider))?;
        let mut held = bill::InFlight::new(self, &call, request, sent, held);
        tracing::debug!("calling the provider");
        let answered = answer.await;
        let (mut answer, latency) = match answered {
            Ok(answered) => answered,
            Err(e) => {
                tracing::debug!(
                    status = e.status,
                    error = %crate::redact::redact(&e.to_string()),
                    "no answer"
                );
                // An error status is not billed; a call that got no status (a timeout, a dropped
                // connection) or a success it could not read may have been: its worst case stays spent.
                let billed = matches!(e.status, None | Some(200..=299));
                held.settle(if billed { None } else { Some(0.0) });
                // In auto mode a call that replaces a sample's recordings is a stale one.
                if let (None, CassetteMode::Auto, Keep::Replacing(cassette, _)) =
                    (e.status, self.mode, &keep)
                {
                    return Err(self.stale_unanswered(&call, cassette, request, &e));
                }
                return Err(CallError::provider(&e));
            }
        };
        request.price(self, call.provider, &mut answer);
        tracing::debug!(latency_ms = latency.as_millis() as u64, "answered");
        held.settle(R::cost(&answer));
        drop(held);
        // Made, and paid for, even if recording it fails below.
        underway.end = CallEnd::Made;
        let to = match &keep {
            Keep::Nowhere => None,
            Keep::First(cassette) => Some((cassette, None)),
            Keep::Replacing(cassette, into) => Some((cassette, Some(*into))),
        };
        if let Some((cassette, replacing)) = to {
            let entry = Entry {
                key: call.key,
                test: call.scope.identity().test.to_string(),
                // The cassette names the target that records it.
                target: None,
                run: call.scope.identity().run_index,
                role: call.role,
                provider: call.provider.to_string(),
                model: call.model.to_string(),
                call: request.exchange(&answer),
                latency_ms: latency.as_millis() as u64,
                recorded_at: cassette::now_rfc3339(),
            };
            let cassette = cassette.clone();
            tracing::debug!(cassette = %cassette.file_name(), into = ?replacing, "recording the answer");
            self.blocking(move || match replacing {
                None => cassette.record(entry),
                Some(into) => cassette.record_replacing(entry, into),
            })
            .await
            .map_err(|e| CallError::new(CallErrorKind::Cassette, e.to_string()).caused_by(e))?;
            tracing::debug!("recorded");
        }
        drop(turn);
        Ok((answer, latency, false))
    }

    /// The client for `provider`'s embeddings: the endpoint's own client, or one of its own when the
    /// endpoint serves embeddings at another base URL (a second server, with its own in-flight limit).
    fn embeddings_client(&self, provider: &str) -> Result<Arc<ProviderClient>, CallError> {
        let endpoint = self.config.endpoint(provider)?;
        let Some(base_url) = self.config.embeddings_base_urls.get(&endpoint.name) else {
            return self.client(provider);
        };
        let endpoint = crate::config::EndpointConfig {
            base_url: base_url.clone(),
            ..endpoint.clone()
        };
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let client = clients
            .entry(format!("{} embeddings", endpoint.name))
            .or_insert_with(|| {
                Arc::new(ProviderClient::shared(
                    &endpoint,
                    &self.config.retry,
                    self.http.clone(),
                ))
            });
        Ok(client.clone())
    }

    /// Looks the call up in its scope's cassette and decides what to do with it: the recorded entry
    /// to replay, or the call to make and where its answer goes; an ignored or refused call is an
    /// error worded for the user. `request` is the completion asked (none for an embedding), for
    /// saying what changed when the recording is stale; `cassette` is the scope's, opened.
    fn prepare(
        &self,
        call: &Call<'_>,
        missing_key: Option<String>,
        request: &impl cassette::Recorded,
        cassette: Option<Arc<cassette::Cassette>>,
    ) -> Result<Prepared, CallError> {
        let scope = call.scope;
        let (recording, entry) = match &cassette {
            Some(c) => {
                // Record mode calls anyway: a recorded entry is neither looked up nor marked used.
                let found = match self.mode {
                    CassetteMode::Record => None,
                    _ => c.lookup(&call.key).map_err(|e| {
                        CallError::new(CallErrorKind::Cassette, e.to_string()).caused_by(e)
                    })?,
                };
                match found {
                    Some(entry) => (Recording::Found, Some(entry)),
                    // Embeddings are keyed by their text alone: a new text is a first recording.
                    None if call.role == CallRole::Embedding => (Recording::Absent, None),
                    None => match c.sample_recordings(
                        &c.sample(&scope.identity().test, scope.identity().run_index),
                    ) {
                        0 => (Recording::Absent, None),
                        recorded => (Recording::Stale { recorded }, None),
                    },
                }
            }
            None => (Recording::Absent, None),
        };
        let decision = decision::decide(&Situation {
            mode: self.mode,
            recording,
            missing_key: missing_key.as_deref(),
            ci: self.ci,
            live_only: scope.identity().live_only,
            replacements: self.replacements,
        });
        tracing::debug!(?recording, ?decision, "cassette looked up");
        let site = |changes| self.call_site(call, cassette.as_deref(), &missing_key, changes);
        match decision {
            CallDecision::Replay => Ok(Prepared::Replay(Box::new(
                entry.expect("a found recording has its entry"),
            ))),
            CallDecision::Call { write } => Ok(Prepared::Call(match (write, cassette) {
                (Write::Nowhere, _) | (_, None) => Keep::Nowhere,
                (_, Some(c)) if recording == Recording::Absent => Keep::First(c),
                (Write::Cassette, Some(c)) => Keep::Replacing(c, ReplaceInto::Cassette),
                (Write::Pending, Some(c)) => Keep::Replacing(c, ReplaceInto::Pending),
            })),
            CallDecision::Ignore(why) => Err(CallError::unavailable(
                site((Vec::new(), true)).unavailable(why),
            )),
            CallDecision::Fail(refusal) => {
                let (changes, role_recorded) = match (&refusal, &cassette) {
                    (Refusal::Stale { .. }, Some(c)) => self.what_changed(call, c, request),
                    _ => (Vec::new(), true),
                };
                let message = site((changes.clone(), role_recorded)).refusal(&refusal);
                Err(if role_recorded {
                    CallError::refused(&refusal, changes, message)
                } else {
                    CallError::new(CallErrorKind::NotRecorded { ci: self.ci }, message)
                })
            }
        }
    }

    /// Whether this run records or calls live: a provider may be called (replay mode, and auto mode
    /// under CI, only replay).
    pub(crate) fn may_call(&self) -> bool {
        match self.mode {
            CassetteMode::Replay => false,
            CassetteMode::Auto => !self.ci,
            CassetteMode::Record | CassetteMode::Off => true,
        }
    }

    /// Accounts a result produced by a custom executor (`run_fn`) as a subject call.
    pub fn account_external(
        &self,
        scope: &RunScope,
        provider: &str,
        model: &str,
        mut result: CompletionResult,
        latency: Duration,
    ) -> Completed {
        if result.cost_usd.is_none() {
            self.price(&mut result, provider, model);
        }
        scope
            .state()
            .account(|usage| usage.add_call(CallRole::Subject, provider, model, &result, false));
        Completed {
            result,
            latency,
            replayed: false,
        }
    }

    /// Prices an embedding from the current table (see [`crate::pricing::embedding_cost`]).
    fn price_embedding(&self, embedding: &mut Embedding, provider: &str, model: &str) {
        let tokens = embedding.input_tokens;
        let price = self.config.price_of(provider, model, tokens.unwrap_or(0));
        embedding.cost_usd = crate::pricing::embedding_cost(price.as_ref(), tokens);
    }

    /// Prices a result from the current table (a replayed cost follows today's prices).
    fn price(&self, result: &mut CompletionResult, provider: &str, model: &str) {
        result.cost_usd = self.config.cost_of(provider, model, result);
    }
}

/// One call: for whom, of what kind, to where, and its cassette key.
struct Call<'a> {
    scope: &'a RunScope,
    role: CallRole,
    provider: &'a str,
    model: &'a str,
    key: String,
    /// The caller sent its own credentials (a call through the recording endpoint): no key is missing.
    sends_key: bool,
}

impl Call<'_> {
    /// The log's span of this call: whose, of what kind, to where, under which key.
    fn span(&self) -> tracing::Span {
        tracing::debug_span!(
            "call",
            test = %self.scope.identity().test,
            run = self.scope.identity().run_index,
            role = %self.role.as_str(),
            provider = %self.provider,
            model = %self.model,
            key = %self.key,
        )
    }

    /// The variable to set when the call needs a key and has none.
    fn missing_key(&self, client: &ProviderClient) -> Option<String> {
        (!self.sends_key).then(|| client.missing_key()).flatten()
    }
}

/// What [`Engine::prepare`] decided.
enum Prepared {
    /// Replay this entry.
    Replay(Box<Entry>),
    /// Make the call, and keep its answer as this says.
    Call(Keep),
}

/// Where a call's answer is kept.
enum Keep {
    /// Nowhere (cassettes off).
    Nowhere,
    /// In the cassette, as the sample's first recording.
    First(Arc<cassette::Cassette>),
    /// As a replacement of the sample's recordings, pending or accepted at once.
    Replacing(Arc<cassette::Cassette>, ReplaceInto),
}

/// The error of an entry whose kind is not the call's (a hand-edited cassette: keys of completions and
/// embeddings are hashes of different things, so they do not collide).
fn mismatched(key: &str, role: CallRole) -> String {
    format!(
        "cassette entry {key} does not hold a recording of a {} call; delete it and record again",
        role.as_str()
    )
}

pub use crate::text::display_path;
