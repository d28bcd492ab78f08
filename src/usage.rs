//! Accounting, one set of types: token counts that add, a cost that is known or unpriced, and a
//! usage that keeps the subject's calls and the judge's apart and sums them.
//!
//! "Unpriced" has one meaning everywhere: a call whose model has no known price. Its cost is unknown,
//! not zero, so a sum over calls is known only when every call in it was priced ([`Cost::known`]).
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::BTreeSet;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

use crate::role::CallRole;

use crate::completion::CompletionResult;
use crate::embedding::Embedding;

/// One field of a sum of counts, added to: whole counts saturate (a provider or a replayed cassette
/// may report `u64::MAX` tokens; the sum stays the largest count instead of overflowing), costs add.
trait Accumulate {
    fn accumulate(&mut self, other: Self);
}

impl Accumulate for u64 {
    fn accumulate(&mut self, other: Self) {
        *self = self.saturating_add(other);
    }
}

impl Accumulate for f64 {
    fn accumulate(&mut self, other: Self) {
        *self += other;
    }
}

/// `+=` and `+` that add every field of a sum of counts. The destructuring names every field, so a
/// field added to the type and not here is a compile error, not a count silently dropped.
macro_rules! adds_fieldwise {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Accumulate for $ty {
            fn accumulate(&mut self, other: Self) {
                let $ty { $($field),* } = other;
                $(self.$field.accumulate($field);)*
            }
        }

        impl AddAssign for $ty {
            fn add_assign(&mut self, other: Self) {
                self.accumulate(other);
            }
        }

        impl Add for $ty {
            type Output = Self;
            fn add(mut self, other: Self) -> Self {
                self += other;
                self
            }
        }
    };
}

/// Token counts of one call or of a sum of calls (same convention as [`CompletionResult`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every prompt token processed (cache reads and writes included).
    pub input: u64,
    /// Every output token (thinking included).
    pub output: u64,
    /// Prompt tokens read from cache (a subset of `input`).
    pub cached_input: u64,
    /// Prompt tokens written to cache (a subset of `input`).
    pub cache_creation: u64,
    /// Thinking tokens (a subset of `output`).
    pub thoughts: u64,
}

impl Tokens {
    /// The counts of one call.
    pub fn of(result: &CompletionResult) -> Self {
        Self {
            input: result.input_tokens,
            output: result.output_tokens,
            cached_input: result.cached_input_tokens,
            cache_creation: result.cache_creation_tokens,
            thoughts: result.thoughts_tokens,
        }
    }

    /// Writes these counts into `result` (the answer of an agent loop carries its turns' sums).
    pub(crate) fn write_to(self, result: &mut CompletionResult) {
        result.input_tokens = self.input;
        result.output_tokens = self.output;
        result.cached_input_tokens = self.cached_input;
        result.cache_creation_tokens = self.cache_creation;
        result.thoughts_tokens = self.thoughts;
    }
}

adds_fieldwise!(Tokens {
    input,
    output,
    cached_input,
    cache_creation,
    thoughts
});

/// The cost of one call or of a sum of calls: the priced part in USD, how many calls had no price, and
/// how many are counted at their worst case (an upper bound: a call dropped after its request was sent,
/// whose real cost nobody will know).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    priced_usd: f64,
    unpriced_calls: u64,
    bounded_calls: u64,
}

impl Cost {
    /// The cost of one call: `None` is a call whose model has no known price.
    pub fn of_call(usd: Option<f64>) -> Self {
        match usd {
            Some(usd) => Self {
                priced_usd: usd,
                ..Self::default()
            },
            None => Self {
                unpriced_calls: 1,
                ..Self::default()
            },
        }
    }

    /// The cost of one call known only as at most `worst` (`None`: unpriced).
    pub fn at_most(worst: Option<f64>) -> Self {
        Self {
            bounded_calls: 1,
            ..Self::of_call(worst)
        }
    }

    /// How many calls are counted at their worst case: the priced cost is then an upper bound.
    pub fn bounded_calls(&self) -> u64 {
        self.bounded_calls
    }

    /// The whole cost, when every call was priced; `None` when any was not (a partial sum would
    /// understate it).
    pub fn known(&self) -> Option<f64> {
        (self.unpriced_calls == 0).then_some(self.priced_usd)
    }

    /// The cost of the priced calls alone.
    pub fn priced_usd(&self) -> f64 {
        self.priced_usd
    }

    /// How many calls had no price.
    pub fn unpriced_calls(&self) -> u64 {
        self.unpriced_calls
    }
}

adds_fieldwise!(Cost {
    priced_usd,
    unpriced_calls,
    bounded_calls
});

/// Calls, tokens and cost of one kind of call (subject or judge).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "TallyFields", from = "TallyFields")]
pub struct Tally {
    /// Calls made or replayed.
    pub calls: u64,
    /// Of which replayed from a cassette.
    pub replayed: u64,
    /// Their tokens.
    pub tokens: Tokens,
    /// Their cost.
    pub cost: Cost,
}

impl Tally {
    /// Counts one call.
    pub fn add_call(&mut self, result: &CompletionResult, replayed: bool) {
        self.count_call(Tokens::of(result), result.cost_usd, replayed);
    }

    /// Counts one call of `tokens` costing `cost_usd` (`None`: unpriced).
    fn count_call(&mut self, tokens: Tokens, cost_usd: Option<f64>, replayed: bool) {
        self.count(tokens, Cost::of_call(cost_usd), replayed);
    }

    fn count(&mut self, tokens: Tokens, cost: Cost, replayed: bool) {
        *self += Tally {
            calls: 1,
            replayed: u64::from(replayed),
            tokens,
            cost,
        };
    }
}

adds_fieldwise!(Tally {
    calls,
    replayed,
    tokens,
    cost
});

/// A [`Tally`] as the JSON report writes it (documented in src/guide/suites.md): flat token fields and the
/// priced cost with the count of unpriced calls beside it.
#[derive(Serialize, Deserialize)]
struct TallyFields {
    calls: u64,
    replayed: u64,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    cache_creation_tokens: u64,
    #[serde(default)]
    thoughts_tokens: u64,
    cost_usd: f64,
    unpriced_calls: u64,
    /// Calls counted at their worst case (`cost_usd` is then an upper bound); written only when some are.
    #[serde(default, skip_serializing_if = "is_zero")]
    bounded_calls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl From<Tally> for TallyFields {
    fn from(t: Tally) -> Self {
        Self {
            calls: t.calls,
            replayed: t.replayed,
            input_tokens: t.tokens.input,
            output_tokens: t.tokens.output,
            cached_input_tokens: t.tokens.cached_input,
            cache_creation_tokens: t.tokens.cache_creation,
            thoughts_tokens: t.tokens.thoughts,
            cost_usd: t.cost.priced_usd,
            unpriced_calls: t.cost.unpriced_calls,
            bounded_calls: t.cost.bounded_calls,
        }
    }
}

impl From<TallyFields> for Tally {
    fn from(f: TallyFields) -> Self {
        Self {
            calls: f.calls,
            replayed: f.replayed,
            tokens: Tokens {
                input: f.input_tokens,
                output: f.output_tokens,
                cached_input: f.cached_input_tokens,
                cache_creation: f.cache_creation_tokens,
                thoughts: f.thoughts_tokens,
            },
            cost: Cost {
                priced_usd: f.cost_usd,
                unpriced_calls: f.unpriced_calls,
                bounded_calls: f.bounded_calls,
            },
        }
    }
}

/// The accounting of a run (or, summed, of a trial or a whole run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Calls to the model under test.
    pub subject: Tally,
    /// Calls to the judge.
    pub judge: Tally,
    /// Embeddings calls (`similar`, `run.similarity`).
    pub embedding: Tally,
    /// `provider/model` of calls whose price is unknown (their cost is not counted, not $0).
    pub unpriced: BTreeSet<String>,
}

impl Usage {
    /// Counts one call of `role` to `provider/model`.
    pub fn add_call(
        &mut self,
        role: CallRole,
        provider: &str,
        model: &str,
        result: &CompletionResult,
        replayed: bool,
    ) {
        self.count(
            role,
            provider,
            model,
            Tokens::of(result),
            result.cost_usd,
            replayed,
        );
    }

    /// Counts one embeddings call to `provider/model`.
    pub fn add_embedding(
        &mut self,
        provider: &str,
        model: &str,
        embedding: &Embedding,
        replayed: bool,
    ) {
        let tokens = Tokens {
            input: embedding.input_tokens.unwrap_or(0),
            ..Tokens::default()
        };
        let cost = embedding.cost_usd;
        self.count(CallRole::Embedding, provider, model, tokens, cost, replayed);
    }

    /// Counts one call of `role` to `provider/model`, which is unpriced when `cost_usd` is `None`.
    fn count(
        &mut self,
        role: CallRole,
        provider: &str,
        model: &str,
        tokens: Tokens,
        cost_usd: Option<f64>,
        replayed: bool,
    ) {
        if cost_usd.is_none() {
            self.unpriced.insert(format!("{provider}/{model}"));
        }
        self.tally(role).count_call(tokens, cost_usd, replayed);
    }

    fn tally(&mut self, role: CallRole) -> &mut Tally {
        match role {
            CallRole::Subject => &mut self.subject,
            CallRole::Judge => &mut self.judge,
            CallRole::Embedding => &mut self.embedding,
        }
    }

    /// Counts one call of `role` to `provider/model` whose request was sent and that was dropped
    /// before its answer: its tokens unknown, its cost at most `worst` (`None`: unpriced).
    pub(crate) fn add_unanswered(
        &mut self,
        role: CallRole,
        provider: &str,
        model: &str,
        worst: Option<f64>,
    ) {
        if worst.is_none() {
            self.unpriced.insert(format!("{provider}/{model}"));
        }
        self.tally(role)
            .count(Tokens::default(), Cost::at_most(worst), false);
    }

    /// Subject, judge and embeddings together.
    pub fn total(&self) -> Tally {
        self.subject + self.judge + self.embedding
    }
}

/// The line under the summary's and the estimate's figures that names the models without a price
/// and how to give them one (empty when every model had a price).
pub fn unpriced_models_line(unpriced: &BTreeSet<String>) -> String {
    if unpriced.is_empty() {
        return String::new();
    }
    let models: Vec<&str> = unpriced.iter().map(String::as_str).collect();
    format!(
        "unpriced models (cost unknown, not counted; add [prices.\"MODEL\"] to prompt-tester.toml, or \
         `free = true` to a self-hosted [providers.NAME]): {}\n",
        models.join(", ")
    )
}

impl AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, other: &Usage) {
        self.subject += other.subject;
        self.judge += other.judge;
        self.embedding += other.embedding;
        self.unpriced.extend(other.unpriced.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_at_the_largest_number_saturate_instead_of_overflowing() {
        // A replayed entry may say u64::MAX tokens: twice of it stays the largest count.
        let mut huge = CompletionResult::new("x", u64::MAX, u64::MAX);
        huge.cost_usd = Some(1.0);
        let mut usage = Usage::default();
        for _ in 0..2 {
            usage.add_call(CallRole::Subject, "p", "m", &huge, true);
        }
        let total = usage.total();
        assert_eq!(total.tokens.input, u64::MAX);
        assert_eq!(total.tokens.output, u64::MAX);
        assert_eq!(total.calls, 2);
        let mut twice = usage.clone();
        twice += &usage;
        assert_eq!(twice.total().tokens.input, u64::MAX);
    }

    fn call(input: u64, output: u64, cost: Option<f64>) -> CompletionResult {
        let mut result = CompletionResult::new("", input, output);
        result.cost_usd = cost;
        result
    }

    #[test]
    fn a_cost_is_known_only_when_every_call_was_priced() {
        let mut cost = Cost::of_call(Some(0.25));
        assert_eq!(cost.known(), Some(0.25));
        cost += Cost::of_call(None);
        assert_eq!(cost.known(), None);
        assert_eq!((cost.priced_usd(), cost.unpriced_calls()), (0.25, 1));
    }

    #[test]
    fn usage_sums_subject_and_judge_and_names_unpriced_models() {
        let mut usage = Usage::default();
        usage.add_call(CallRole::Subject, "p", "m", &call(10, 2, Some(0.5)), true);
        usage.add_call(CallRole::Judge, "p", "j", &call(7, 1, None), false);
        let total = usage.total();
        assert_eq!((total.calls, total.replayed), (2, 1));
        assert_eq!((total.tokens.input, total.tokens.output), (17, 3));
        assert_eq!(total.cost.known(), None);
        assert_eq!(usage.unpriced.iter().collect::<Vec<_>>(), ["p/j"]);
        let embedded = Embedding {
            vector: vec![1.0],
            input_tokens: Some(5),
            model_used: None,
            cost_usd: Some(0.25),
        };
        usage.add_embedding("p", "e", &embedded, false);
        assert_eq!(
            (usage.embedding.calls, usage.embedding.tokens.input),
            (1, 5)
        );
        assert_eq!(usage.total().calls, 3);
        assert_eq!(usage.total().tokens.input, 22);
        let unknown = Embedding {
            cost_usd: None,
            ..embedded
        };
        usage.add_embedding("g", "e", &unknown, true);
        assert_eq!(usage.unpriced.iter().collect::<Vec<_>>(), ["g/e", "p/j"]);
        let mut twice = usage.clone();
        twice += &usage;
        assert_eq!(twice.total().calls, 8);
    }

    #[test]
    fn a_tally_serializes_in_the_report_shape_and_reads_back() {
        let mut tally = Tally::default();
        tally.add_call(&call(3, 4, None), true);
        tally.tokens.thoughts = 2;
        let json = serde_json::to_value(tally).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"calls": 1, "replayed": 1, "input_tokens": 3, "output_tokens": 4,
                "cached_input_tokens": 0, "cache_creation_tokens": 0, "thoughts_tokens": 2,
                "cost_usd": 0.0, "unpriced_calls": 1})
        );
        assert_eq!(serde_json::from_value::<Tally>(json).unwrap(), tally);
    }

    #[test]
    fn call_roles_are_written_as_before() {
        assert_eq!(
            serde_json::to_value(CallRole::Judge).unwrap(),
            serde_json::json!("judge")
        );
        let role: CallRole = serde_json::from_value(serde_json::json!("subject")).unwrap();
        assert_eq!(role, CallRole::Subject);
        assert_eq!(
            serde_json::to_value(CallRole::Embedding).unwrap(),
            serde_json::json!("embedding")
        );
    }
}
