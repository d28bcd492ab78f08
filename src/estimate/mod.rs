//! `--estimate`: what a live or re-recording run of the selected trials would cost and how many calls
//! it would make, computed without a call. Pure: from each trial's plan and request and the calls its
//! samples recorded (`harness::estimate` gathers them and prints [`render`]).
//!
//! A sample with recordings costs what its calls cost at today's prices: the calls a replay of it
//! makes (its checks replayed: the judge's and the embeddings a re-recording run would make for it,
//! those another sample recorded first included), or, where it cannot be replayed (a test body's, an
//! agent's, one missing a recording), every call recorded under its name. A sample the plan may take
//! beyond those recorded costs the mean of the recorded ones. A trial with no recording is approximated from its rendered request
//! ([`crate::budget::approx`]: an upper bound); what cannot be known before the run (the judge calls a
//! test body makes, an agent's turns, a `run_fn`'s calls) is named unknown, never guessed.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod render;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::budget::approx;
use crate::cassette::{Entry, Exchange};
use crate::completion::CompletionRequest;
use crate::config::Config;
use crate::plan::SamplePlan;
use crate::role::CallRole;
use crate::usage::{Tally, Usage};

pub use render::render;

/// How a trial's subject is answered, as far as the estimate cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// One call of the rendered request.
    Call,
    /// An agent loop: at least one call, the turns unknown.
    Agent,
    /// A custom executor (`run_fn`): its calls are its own.
    Custom,
    /// No subject call (a calibration set's given answers).
    Given,
    /// An application test (`AppRun`): its calls are the application's, through the endpoint.
    App,
}

/// One trial to estimate.
#[derive(Debug)]
pub struct Trial<'a> {
    /// The trial name.
    pub name: String,
    /// Its plan (one sample for a numbered run).
    pub plan: SamplePlan,
    /// Its first sample's index (a numbered run's own).
    pub first_run: u32,
    /// The subject's provider and its first request, or why there is none (a provider or model
    /// not set, a media file that cannot be read), said with where to fix it.
    pub request: Result<(String, CompletionRequest), String>,
    /// How the subject is answered.
    pub subject: Subject,
    /// A Rust body judges its samples: the calls it makes are unknown.
    pub body: bool,
    /// The other calls its checks are known to make (judge, embeddings).
    pub other_calls: Vec<CallRole>,
    /// Each recorded sample's calls, by its index.
    pub recorded: BTreeMap<u32, Recorded<'a>>,
}

/// One recorded sample's calls, as the estimate learns them.
#[derive(Debug)]
pub enum Recorded<'a> {
    /// Replayed: the calls a replay of the sample makes (as many as a re-recording run makes, an
    /// embedding another sample recorded first included), priced as the replay prices them.
    Replayed(Box<Usage>),
    /// The calls recorded under its name, when it cannot be replayed (a test body, an agent, a
    /// recording missing): an embedding it shares with another sample counts under that one only.
    Found(Vec<&'a Entry>),
}

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// No call of the kind.
    None,
    /// The recordings, at today's prices.
    Recorded,
    /// The rendered request, by the approximation: an upper bound.
    Approximated,
    /// Not known before the run.
    Unknown,
}

/// Calls and cost of one kind of call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    /// Calls expected (at the pass rate the plan assumes).
    pub calls: f64,
    /// Calls at most (every sample the plan may take).
    pub max_calls: f64,
    /// Cost expected, USD, of the priced calls.
    pub cost_usd: f64,
    /// Cost at most, USD, of the priced calls.
    pub max_cost_usd: f64,
    /// Expected calls of models without a price (their cost not counted).
    pub unpriced_calls: f64,
    /// Where it comes from.
    pub basis: Basis,
}

impl Default for Figure {
    fn default() -> Self {
        Self {
            calls: 0.0,
            max_calls: 0.0,
            cost_usd: 0.0,
            max_cost_usd: 0.0,
            unpriced_calls: 0.0,
            basis: Basis::None,
        }
    }
}

impl Figure {
    fn add(&mut self, other: &Figure) {
        self.calls += other.calls;
        self.max_calls += other.max_calls;
        self.cost_usd += other.cost_usd;
        self.max_cost_usd += other.max_cost_usd;
        self.unpriced_calls += other.unpriced_calls;
        self.basis = match (self.basis, other.basis) {
            (Basis::None, b) | (b, Basis::None) => b,
            (Basis::Unknown, _) | (_, Basis::Unknown) => Basis::Unknown,
            (Basis::Approximated, _) | (_, Basis::Approximated) => Basis::Approximated,
            _ => Basis::Recorded,
        };
    }
}

/// The estimate of one trial.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialEstimate {
    /// The trial name.
    pub trial: String,
    /// Samples expected at the pass rate the plan assumes.
    pub samples: f64,
    /// Samples at most.
    pub max_samples: u32,
    /// Its calls by kind.
    #[serde(flatten)]
    pub calls: Kinds,
    /// What is not known before the run, named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// `provider/model` of calls without a price.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub unpriced: BTreeSet<String>,
}

/// Calls and cost by kind of call: the subject's, the judge's, embeddings'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Kinds {
    /// The subject's calls (agent turns included).
    pub subject: Figure,
    /// The judge's calls.
    pub judge: Figure,
    /// Embeddings calls.
    pub embedding: Figure,
}

impl Kinds {
    /// Subject, judge and embeddings together.
    pub fn total(&self) -> Figure {
        let mut all = self.subject;
        all.add(&self.judge);
        all.add(&self.embedding);
        all
    }

    /// The three kinds, in that order.
    pub fn each(&self) -> [&Figure; 3] {
        [&self.subject, &self.judge, &self.embedding]
    }

    fn add(&mut self, other: &Kinds) {
        self.subject.add(&other.subject);
        self.judge.add(&other.judge);
        self.embedding.add(&other.embedding);
    }
}

/// The estimate of a run: each trial's, and their sum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// Each trial, in the run's order.
    pub trials: Vec<TrialEstimate>,
    /// The calls of every trial, by kind.
    #[serde(flatten)]
    pub calls: Kinds,
    /// Every unpriced `provider/model`.
    pub unpriced: BTreeSet<String>,
    /// The whole run's figures under nextest, when they differ: there each gate is a process of its
    /// own and runs every row it counts, so a row several selected gates count runs once per gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under_nextest: Option<Figure>,
}

impl Estimate {
    /// Subject, judge and embeddings together.
    pub fn total(&self) -> Figure {
        self.calls.total()
    }

    /// Notes `under_nextest` from `gates`: each row's trial name to how many selected gates count it.
    /// A row counted by `k` gates runs `k` times under nextest, once here.
    pub fn with_gates_under_nextest(mut self, gates: &BTreeMap<String, u32>) -> Self {
        let mut all = self.total();
        let mut again = false;
        for trial in &self.trials {
            let k = gates.get(&trial.trial).copied().unwrap_or(1);
            if k > 1 {
                again = true;
                let one = trial.calls.total();
                for _ in 1..k {
                    all.add(&one);
                }
            }
        }
        self.under_nextest = again.then_some(all);
        self
    }
}

/// The estimate of `trials` at `config`'s prices.
pub fn estimate(config: &Config, trials: &[Trial<'_>]) -> Estimate {
    let mut out = Estimate {
        trials: Vec::with_capacity(trials.len()),
        calls: Kinds::default(),
        unpriced: BTreeSet::new(),
        under_nextest: None,
    };
    for trial in trials {
        let one = of_trial(config, trial);
        out.calls.add(&one.calls);
        out.unpriced.extend(one.unpriced.iter().cloned());
        out.trials.push(one);
    }
    out
}

/// One sample's calls of one kind: how many, their priced cost, how many lack a price.
#[derive(Debug, Clone, Copy, Default)]
struct KindCalls {
    calls: f64,
    usd: f64,
    unpriced: f64,
}

impl KindCalls {
    /// A replay's tally of one kind of call.
    fn of(tally: &Tally) -> KindCalls {
        KindCalls {
            calls: tally.calls as f64,
            usd: tally.cost.priced_usd(),
            unpriced: tally.cost.unpriced_calls() as f64,
        }
    }

    fn plus(self, other: KindCalls) -> KindCalls {
        KindCalls {
            calls: self.calls + other.calls,
            usd: self.usd + other.usd,
            unpriced: self.unpriced + other.unpriced,
        }
    }

    fn times(self, n: f64) -> KindCalls {
        KindCalls {
            calls: self.calls * n,
            usd: self.usd * n,
            unpriced: self.unpriced * n,
        }
    }
}

const ROLES: [CallRole; 3] = [CallRole::Subject, CallRole::Judge, CallRole::Embedding];

/// The samples `plan` takes on average when each passes with probability `p`, in the waves
/// [`crate::outcome::next_wave`] launches (as many at once as may be in flight): exact, from the chance
/// of every count of passes and failures after each wave. What `--estimate` expects of a plan at the
/// pass rate it assumes ([`SamplePlan::pass_threshold`]).
pub fn expected_samples(plan: &SamplePlan, p: f64) -> f64 {
    use crate::outcome::{SampleOutcome, next_wave};
    let (pass, fail) = (SampleOutcome::PASSED, SampleOutcome::failed(String::new()));
    // The chance of each (passes, failures) before a wave, the plan still undecided.
    let mut states: BTreeMap<(u32, u32), f64> = [((0, 0), 1.0)].into();
    let mut expected = 0.0;
    while !states.is_empty() {
        let mut next: BTreeMap<(u32, u32), f64> = BTreeMap::new();
        for ((passed, failed), chance) in states {
            let taken: Vec<&SampleOutcome> = std::iter::repeat_n(&pass, passed as usize)
                .chain(std::iter::repeat_n(&fail, failed as usize))
                .collect();
            let wave = next_wave(plan, &taken, u32::MAX);
            // Counts too unlikely to move the figure are dropped: the states stay few.
            if wave == 0 || chance < 1e-12 {
                continue;
            }
            expected += chance * f64::from(wave);
            // Binomial(wave, p): the chance of each count of passes in the wave.
            let mut of_k = (1.0 - p).powi(wave as i32);
            for k in 0..=wave {
                if k > 0 {
                    of_k *= f64::from(wave - k + 1) / f64::from(k) * p / (1.0 - p);
                }
                let at = (passed + k, failed + wave - k);
                let share = if p >= 1.0 {
                    f64::from(u8::from(k == wave))
                } else {
                    of_k
                };
                if share > 0.0 {
                    *next.entry(at).or_insert(0.0) += chance * share;
                }
            }
        }
        states = next;
    }
    expected
}

fn of_trial(config: &Config, trial: &Trial<'_>) -> TrialEstimate {
    let max = trial.plan.max_runs();
    let expected = expected_samples(&trial.plan, trial.plan.pass_threshold());
    let runs: Vec<u32> = (trial.first_run..trial.first_run + max).collect();
    let mut unpriced = BTreeSet::new();
    let mut unknown = Vec::new();
    // Each recorded sample the plan may take, by role.
    let mut found_by_name = false;
    let recorded: Vec<[KindCalls; 3]> = runs
        .iter()
        .filter_map(|run| trial.recorded.get(run))
        .map(|sample| match sample {
            Recorded::Replayed(usage) => {
                unpriced.extend(usage.unpriced.iter().cloned());
                [&usage.subject, &usage.judge, &usage.embedding].map(KindCalls::of)
            }
            Recorded::Found(entries) => {
                found_by_name = true;
                ROLES.map(|role| {
                    entries
                        .iter()
                        .filter(|e| e.role == role)
                        .map(|e| priced(config, e, &mut unpriced))
                        .fold(KindCalls::default(), KindCalls::plus)
                })
            }
        })
        .collect();
    let figures = if recorded.is_empty() {
        approximated(config, trial, &mut unpriced, &mut unknown)
    } else {
        if recorded.len() < runs.len() {
            unknown.push(format!(
                "{} of {} samples recorded: the others are taken to cost their mean",
                recorded.len(),
                runs.len()
            ));
        }
        let n = recorded.len() as f64;
        ROLES.map(|role| {
            let i = role_index(role);
            let sum = recorded
                .iter()
                .map(|r| r[i])
                .fold(KindCalls::default(), KindCalls::plus);
            let mean = sum.times(1.0 / n);
            let missing = (runs.len() - recorded.len()) as f64;
            let max_calls = sum.plus(mean.times(missing));
            // A fixed plan takes each sample: the recorded ones as they are, to the digit.
            let expected_calls = if expected == f64::from(max) {
                max_calls
            } else {
                mean.times(expected)
            };
            Figure {
                calls: expected_calls.calls,
                max_calls: max_calls.calls,
                cost_usd: expected_calls.usd,
                max_cost_usd: max_calls.usd,
                unpriced_calls: expected_calls.unpriced,
                basis: if max_calls.calls == 0.0 {
                    Basis::None
                } else {
                    Basis::Recorded
                },
            }
        })
    };
    if found_by_name && trial.other_calls.contains(&CallRole::Embedding) {
        // An embedding is keyed by its text alone: a text two samples embed is recorded once, under
        // the sample that embedded it first, and a live run embeds it for each. A replayed sample
        // counts it; one found by its name alone cannot.
        unknown.push(
            "embeddings of a text another sample recorded first: counted under that sample only"
                .to_string(),
        );
    }
    if trial.body {
        unknown.push(
            "the calls its test body makes (judge, embeddings, follow-ups) beyond those recorded"
                .to_string(),
        );
    }
    let [subject, judge, embedding] = figures;
    TrialEstimate {
        trial: trial.name.clone(),
        samples: expected,
        max_samples: max,
        calls: Kinds {
            subject,
            judge,
            embedding,
        },
        unknown,
        unpriced,
    }
}

fn role_index(role: CallRole) -> usize {
    match role {
        CallRole::Subject => 0,
        CallRole::Judge => 1,
        CallRole::Embedding => 2,
    }
}

/// A recorded call at today's prices; an unpriced model is named in `unpriced`.
fn priced(config: &Config, entry: &Entry, unpriced: &mut BTreeSet<String>) -> KindCalls {
    let usd = match &entry.call {
        Exchange::Completion { response, .. } => {
            config.cost_of(&entry.provider, &entry.model, response)
        }
        Exchange::Raw { request, response } => {
            let tokens = crate::provider::relayed::tokens_of(request, response);
            config.cost_of(&entry.provider, &entry.model, &tokens)
        }
        Exchange::Embedding { response, .. } => {
            let tokens = response.input_tokens;
            let price = config.price_of(&entry.provider, &entry.model, tokens.unwrap_or(0));
            crate::pricing::embedding_cost(price.as_ref(), tokens)
        }
    };
    match usd {
        Some(usd) => KindCalls {
            calls: 1.0,
            usd,
            unpriced: 0.0,
        },
        None => {
            unpriced.insert(format!("{}/{}", entry.provider, entry.model));
            KindCalls {
                calls: 1.0,
                usd: 0.0,
                unpriced: 1.0,
            }
        }
    }
}

/// The figures of a trial with no recording: the subject's call from its rendered request, an upper
/// bound; the other calls named unknown.
fn approximated(
    config: &Config,
    trial: &Trial<'_>,
    unpriced: &mut BTreeSet<String>,
    unknown: &mut Vec<String>,
) -> [Figure; 3] {
    let expected = expected_samples(&trial.plan, trial.plan.pass_threshold());
    let max = f64::from(trial.plan.max_runs());
    let mut subject = Figure::default();
    match (trial.subject, &trial.request) {
        (Subject::Given, _) => {}
        (Subject::Custom, _) => {
            subject.basis = Basis::Unknown;
            unknown.push("the calls its run_fn makes".to_string());
        }
        (Subject::App, _) => {
            subject.basis = Basis::Unknown;
            unknown.push(
                "the calls its application makes (an AppRun test, through the recording endpoint)"
                    .to_string(),
            );
        }
        (_, Err(why)) => {
            subject.basis = Basis::Unknown;
            unknown.push(format!("the subject: {why}"));
        }
        (kind, Ok((provider, request))) => {
            let wire = config.endpoint(provider).ok().map(|e| e.wire);
            let free_input = || {
                (config.price_of(provider, &request.model, 0))
                    .is_some_and(|p| approx::input_is_free(&p))
            };
            let counted = match approx::input_tokens(request, wire) {
                // Input a model does not charge for needs no count.
                Err(_) if free_input() => Ok(0),
                counted => counted,
            };
            let worst = match counted {
                Ok(input) => {
                    let worst = config
                        .price_of(provider, &request.model, input)
                        .map(|p| approx::worst_cost(&p, input, u64::from(request.max_tokens)));
                    if worst.is_none() {
                        unpriced.insert(format!("{provider}/{}", request.model));
                    }
                    worst
                }
                // Not the model's price: the fix is not a [prices] row, so it is named apart.
                Err(why) => {
                    unknown.push(format!("unpriced: {why}"));
                    None
                }
            };
            subject = Figure {
                calls: expected,
                max_calls: max,
                cost_usd: worst.unwrap_or(0.0) * expected,
                max_cost_usd: worst.unwrap_or(0.0) * max,
                unpriced_calls: if worst.is_none() { expected } else { 0.0 },
                basis: Basis::Approximated,
            };
            if kind == Subject::Agent {
                subject.basis = Basis::Unknown;
                unknown.push(
                    "an agent loop's turns after the first (each a call of a longer conversation)"
                        .to_string(),
                );
            }
        }
    }
    let other = |role: CallRole, what: &str, unknown: &mut Vec<String>| {
        if trial.other_calls.contains(&role) {
            unknown.push(format!(
                "{what}: their prompts hold the answer, unknown before the run"
            ));
            Figure {
                basis: Basis::Unknown,
                ..Figure::default()
            }
        } else {
            Figure::default()
        }
    };
    let mut judge = other(CallRole::Judge, "the judge's calls", unknown);
    if trial.subject == Subject::Given {
        // A calibration set's calls are the judge's on its items, none recorded: unknown, not none.
        unknown.push("the judge's calls on its items: none recorded".to_string());
        judge.basis = Basis::Unknown;
    }
    let embedding = other(CallRole::Embedding, "the embeddings calls", unknown);
    if trial.body {
        // The body's own calls are named by the caller; these are not known either.
        return [
            subject,
            Figure {
                basis: Basis::Unknown,
                ..judge
            },
            embedding,
        ];
    }
    [subject, judge, embedding]
}

#[cfg(test)]
mod tests;
