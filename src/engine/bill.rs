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
            .chain(scope.identity().budget.as_deref())
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
    /// Its input by the approximation (its media by its provider's rule), its output at
    /// `max_tokens`.
    fn worst(&self, engine: &Engine, provider: &str) -> Worst {
        let wire = engine.config.endpoint(provider).ok().map(|e| e.wire);
        let input = match approx::input_tokens(self, wire) {
            Ok(input) => input,
            Err(_) if free_input(engine, provider, &self.model) => 0,
            Err(why) => {
                return Worst::UncountedMedia {
                    model: format!("{provider}/{}", self.model),
                    why,
                };
            }
        };
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

/// Whether `provider/model` charges nothing for input, so a media part with no count costs nothing.
pub(super) fn free_input(engine: &Engine, provider: &str, model: &str) -> bool {
    (engine.config.price_of(provider, model, 0)).is_some_and(|p| approx::input_is_free(&p))
}

/// What a call holds in each budget it is under, until it is settled.
pub(super) struct Held<'a>(Vec<(&'a Budget, f64)>);

/// A call made, from its budgets' reservation until it is settled. Dropped before that (its future
/// cancelled, as `tokio::time::timeout` does), it settles as the guide's rule for a call that ends
/// without a status says: released if its request was never sent; else spent at its worst case, and
/// counted in its sample's usage at that cost, an upper bound.
pub(super) struct InFlight<'a, R: Billed> {
    engine: &'a Engine,
    call: &'a super::Call<'a>,
    request: &'a R,
    sent: &'a crate::provider::Sent,
    held: Held<'a>,
    settled: bool,
}

impl<'a, R: Billed> InFlight<'a, R> {
    pub(super) fn new(
        engine: &'a Engine,
        call: &'a super::Call<'a>,
        request: &'a R,
        sent: &'a crate::provider::Sent,
        held: Held<'a>,
    ) -> Self {
        Self {
            engine,
            call,
            request,
            sent,
            held,
            settled: false,
        }
    }

    /// Settles the call's reservations to `actual` (see [`Held::settle`]).
    pub(super) fn settle(&mut self, actual: Option<f64>) {
        self.settled = true;
        self.held.settle(actual);
    }
}

impl<R: Billed> Drop for InFlight<'_, R> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        if !self.sent.may_be_billed() {
            self.held.settle(Some(0.0));
            return;
        }
        // Spent as reserved: the same worst case, so the figures show what the budget counts.
        self.held.settle(None);
        let call = self.call;
        let worst = match self.request.worst(self.engine, call.provider) {
            Worst::Usd(usd) => Some(usd),
            Worst::Unpriced(_) | Worst::UncountedMedia { .. } => None,
        };
        call.scope
            .state()
            .account(|usage| usage.add_unanswered(call.role, call.provider, call.model, worst));
    }
}

impl Held<'_> {
    /// Settles every reservation to `actual` (unpriced, `None`: the worst case stays spent).
    pub(super) fn settle(&mut self, actual: Option<f64>) {
        for (budget, reserved) in self.0.drain(..) {
            budget.settle(reserved, actual.unwrap_or(reserved));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::super::{Engine, RunScope, SampleIdentity};
    use super::Billed;
    use crate::budget::Budget;
    use crate::cassette::Policy;
    use crate::completion::CompletionRequest;
    use crate::role::CallRole;

    /// A server on 127.0.0.1 that takes connections and never answers, and an engine under a budget
    /// of `limit` whose endpoint `slow` (one call in flight) is that server.
    fn silent_server_engine(limit: f64) -> (std::net::TcpListener, Arc<Engine>) {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let mut config = crate::config::Config::defaults(std::env::temp_dir());
        config
            .apply_file(
                std::path::Path::new("prompt-tester.toml"),
                &format!(
                    "[providers.slow]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmax_in_flight = 1\n\n\
                     [prices.\"m\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\n"
                ),
            )
            .unwrap();
        let budget = Budget::for_run(limit, None);
        let engine = Engine::with_budget(config, Policy::off(), Arc::new(()), Some(budget), None);
        (server, engine)
    }

    #[test]
    fn a_dropped_call_is_spent_at_its_worst_case_once_sent_and_released_before() {
        let (_server, engine) = silent_server_engine(1.0);
        let scope = RunScope::new(engine.clone(), SampleIdentity::new("t", "t", "t", 1, 1));
        let request = CompletionRequest::new("m", "Q 1", 64);
        let worst = match request.worst(&engine, "slow") {
            crate::budget::Worst::Usd(usd) => usd,
            other => panic!("{other:?}"),
        };
        engine.block_on(async {
            let call = || engine.complete(&scope, CallRole::Judge, "slow", request.clone());
            // The first is sent and never answered; the second waits for the one slot and is dropped
            // while the first still holds it (a slot freed in the same poll would let it be sent).
            let (first, second) = tokio::join!(
                tokio::time::timeout(Duration::from_millis(400), call()),
                tokio::time::timeout(Duration::from_millis(200), call()),
            );
            assert!(first.is_err() && second.is_err(), "both time out");
        });
        let spend = engine.budget().unwrap().spend().unwrap();
        assert!(
            (spend.spent - worst).abs() < 1e-12,
            "{spend:?}, worst {worst}"
        );
        assert_eq!(spend.reserved, 0.0, "{spend:?}");
        // The figures show what the budget counts, as an upper bound.
        let judge = scope.state().usage().judge;
        assert_eq!(
            (judge.calls, judge.cost.bounded_calls()),
            (1, 1),
            "{judge:?}"
        );
        assert!((judge.cost.priced_usd() - worst).abs() < 1e-12, "{judge:?}");
    }
}
