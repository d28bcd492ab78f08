//! How the engine holds a call to the run's and the test's budgets: the call's worst case reserved
//! before it is made, settled to its real cost after.

use super::{CallError, Engine, RunScope};
use crate::budget::{Budget, Worst, approx};
use crate::completion::CompletionRequest;
use crate::embedding::EmbeddingRequest;

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
                    return Err(CallError::Failed(refused.to_string()));
                }
            }
        }
        Ok(held)
    }

    /// The worst case of a completion: its input by the approximation, its output at `max_tokens`.
    pub(super) fn worst_completion(&self, provider: &str, request: &CompletionRequest) -> Worst {
        let input = approx::input_tokens(request);
        let price = self.config.price_of(provider, &request.model, input);
        self.worst(provider, &request.model, price, |p| {
            approx::worst_cost(p, input, u64::from(request.max_tokens))
        })
    }

    /// The worst case of an embeddings call: its input by the approximation.
    pub(super) fn worst_embedding(&self, provider: &str, request: &EmbeddingRequest) -> Worst {
        let input = approx::embedding_tokens(request);
        let price = self.config.price_of(provider, &request.model, input);
        self.worst(provider, &request.model, price, |p| {
            approx::worst_cost(p, input, 0)
        })
    }

    /// The worst case of a call to `provider/model` at `price`, `cost` of it when it is known.
    fn worst(
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

/// How a call is held to a budget: its worst case, computed only under one, and its real cost once
/// answered and priced.
pub(super) struct Bill<W, C> {
    pub(super) worst: W,
    pub(super) cost: C,
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
