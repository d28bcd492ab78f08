//! How the engine holds a call to the run's and the test's budgets: the call's worst case reserved
//! before it is made, settled to its real cost after.

use super::{CallError, CallErrorKind, Engine, RunScope};
use crate::budget::{Budget, Worst, approx};
use crate::cassette::Recorded;
use crate::completion::{CompletionRequest, CompletionResult};
use crate::embedding::{Embedding, EmbeddingRequest};

impl Engine {
    /// Reserves a call's worst case in the run's budget and in `scope`'s test's, or refuses the call
    /// (an error naming the budget, or the unpriced model). Nothing is held without a budget.
    pub(super) fn hold<'a>(
        &'a self,
        scope: &'a RunScope,
        worst: impl FnOnce() -> Worst,
    ) -> Result<Held<'a>, CallError> {
        let budgets: Vec<&Budget> = self
            .budget
            .as_deref()
            .into_iter()
            .chain(scope.budget.as_deref())
            .collect();
        if budgets.is_empty() {
            return Ok(Held(Vec::new()));
        }
        let worst = worst();
        let mut held = Held(Vec::with_capacity(budgets.len()));
        for budget in budgets {
            match budget.reserve(&worst) {
                Ok(usd) => held.0.push((budget, usd)),
                Err(refused) => {
                    // What the other budget held for it is released.
                    held.settle(Some(0.0));
                    return Err(CallError::new(CallErrorKind::Budget, refused.to_string())
                        .caused_by(refused));
                }
            }
        }
        Ok(held)
    }

    /// The worst case of a call to `provider/model` at `price`, `cost` of it when it is known.
    pub(super) fn worst(
        &self,
        provider: &str,
        model: &str,
        price: Option<crate::pricing::Price>,
        cost: impl FnOnce(&crate::pricing::Price) -> f64,
    ) -> Worst {
        match price {
            Some(price) => Worst::Usd(cost(&price)),
            None => Worst::Unpriced(format!("{provider}/{model}")),
        }
    }
}

/// A kind of call as the engine prices and bills it: its worst case, computed only under a budget,
/// its answer priced from today's table (a replayed cost follows today's prices), and the real cost
/// that settles the budget.
pub(super) trait Billed: Recorded {
    /// The worst case of this request to `provider`.
    fn worst(&self, engine: &Engine, provider: &str) -> Worst;
    /// Prices `answer` to this request of `provider` from `engine`'s table.
    fn price(&self, engine: &Engine, provider: &str, answer: &mut Self::Answer);
    /// What `answer` cost; `None` when unpriced.
    fn cost(answer: &Self::Answer) -> Option<f64>;
}

impl Billed for CompletionRequest {
    /// Its input by the approximation, its output at `max_tokens`.
    fn worst(&self, engine: &Engine, provider: &str) -> Worst {
        let input = approx::input_tokens(self);
        let price = engine.config.price_of(provider, &self.model, input);
        engine.worst(provider, &self.model, price, |p| {
            approx::worst_cost(p, input, u64::from(self.max_tokens))
        })
    }

    fn price(&self, engine: &Engine, provider: &str, answer: &mut CompletionResult) {
        engine.price(answer, provider, &self.model);
    }

    fn cost(answer: &CompletionResult) -> Option<f64> {
        answer.cost_usd
    }
}

impl Billed for EmbeddingRequest {
    /// Its input by the approximation.
    fn worst(&self, engine: &Engine, provider: &str) -> Worst {
        let input = approx::embedding_tokens(self);
        let price = engine.config.price_of(provider, &self.model, input);
        engine.worst(provider, &self.model, price, |p| {
            approx::worst_cost(p, input, 0)
        })
    }

    fn price(&self, engine: &Engine, provider: &str, answer: &mut Embedding) {
        engine.price_embedding(answer, provider, &self.model);
    }

    fn cost(answer: &Embedding) -> Option<f64> {
        answer.cost_usd
    }
}

/// What a call holds in each budget it is under, until it is settled.
pub(super) struct Held<'a>(Vec<(&'a Budget, f64)>);

impl Held<'_> {
    /// Settles every reservation to `actual` (unpriced, `None`: the worst case stays spent).
    pub(super) fn settle(&mut self, actual: Option<f64>) {
        for (budget, reserved) in self.0.drain(..) {
            budget.settle(reserved, actual.unwrap_or(reserved));
        }
    }
}
