//! Budgets: a limit on what a run (`--budget`, `PROMPT_TESTER_BUDGET`) or one test (its `budget` key)
//! may spend on provider calls.
//!
//! Before each call it makes (never a replay, which costs nothing) the engine reserves the call's worst
//! case ([`approx`]: the input by a conservative count of its text, the output at `max_tokens`, at the
//! model's prices); a call whose worst case does not fit in what is left is not made. After the call the
//! reservation is settled to the call's real cost. A budget's state lives in its [`Ledger`]: in the
//! process, or under nextest (one process per trial) in a file of the run's own in the crate's
//! `.prompt-tester/budget/` folder, named by `NEXTEST_RUN_ID` and rewritten under a lock, so the
//! budget holds for the whole run and two runs at once keep their spend apart.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

pub mod approx;
mod ledger;
mod media_tokens;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use ledger::Ledger;
pub use ledger::Spend;
use serde::Serialize;

/// Whose budget it is: the run's, or one test's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// The run's (`--budget`).
    Run,
    /// The test's own `budget` key.
    Test(String),
}

/// One budget: its limit and what has been spent and reserved against it.
#[derive(Debug)]
pub struct Budget {
    limit_usd: f64,
    owner: Owner,
    ledger: Ledger,
    /// Calls this process refused for this budget.
    refused: AtomicU64,
}

/// Why a call was not made under a budget.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OverBudget {
    /// Its worst case does not fit in what is left.
    #[error(
        "{} of ${limit:.5} reached after ${spent:.5}: the call could cost up to ${worst:.5}, which is more \
         than is left; {}",
        owner.what(),
        owner.raise()
    )]
    Reached {
        /// The budget's owner.
        owner: Owner,
        /// The limit, USD.
        limit: f64,
        /// Spent and reserved so far, USD.
        spent: f64,
        /// The call's worst case, USD.
        worst: f64,
    },
    /// The model has no known price, so its call cannot be held to the budget.
    #[error(
        "{model} has no known price, so under a budget its call is refused (its cost could not be held to \
         the budget); add [prices.\"{bare}\"] to prompt-tester.toml, or `free = true` to a self-hosted \
         [providers.NAME]",
        bare = model.split_once('/').map_or(model.as_str(), |(_, m)| m)
    )]
    Unpriced {
        /// `provider/model`.
        model: String,
    },
    /// A media part of the call has no token count (no published rule for it in its provider's
    /// format, or its size unreadable from its header), so its call cannot be held to the budget.
    #[error(
        "{model}: {why}, so its input tokens have no count and under a budget its call is refused \
         (its cost could not be held to the budget); run it without a budget, or send a part the \
         provider's format prices"
    )]
    UncountedMedia {
        /// `provider/model`.
        model: String,
        /// Which part, and why it has no count.
        why: String,
    },
    /// The run's ledger file cannot be read or written (under nextest): the call is not made, as the
    /// spend of the run's other processes is unknown.
    #[error("the budget ledger {}: {problem}; the call is not made", path.display())]
    Ledger {
        /// The file.
        path: PathBuf,
        /// What failed.
        problem: String,
    },
}

impl Owner {
    fn what(&self) -> String {
        match self {
            Owner::Run => "budget".to_string(),
            Owner::Test(test) => format!("test `{test}`'s budget"),
        }
    }

    fn raise(&self) -> &'static str {
        match self {
            Owner::Run => "raise --budget (or PROMPT_TESTER_BUDGET) to make it",
            Owner::Test(_) => "raise the test's `budget` to make it",
        }
    }
}

/// The run's budget as the JSON and HTML reports write it: what was spent against it, beside the
/// summary's line.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BudgetReport {
    /// The budget, USD.
    pub limit_usd: f64,
    /// Spent on the calls made, USD (by the whole run under nextest).
    pub spent_usd: f64,
    /// Calls not made for the budget (their samples errored).
    pub refused_calls: u64,
    /// The figures are the whole nextest run's, kept in its ledger.
    pub whole_nextest_run: bool,
    /// Why the spend is unknown (the nextest run's ledger cannot be read or does not parse):
    /// `spent_usd` then counts nothing. Written only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl BudgetReport {
    /// The summary's line: what was spent against the budget, and the calls it refused.
    pub fn summary_line(&self) -> String {
        // An unusable ledger's spend is unknown, never $0.
        let spent = match &self.unknown {
            None => format!("${:.5}", self.spent_usd),
            Some(why) => format!("unknown ({why})"),
        };
        let refused = match self.refused_calls {
            0 => String::new(),
            1 => "; 1 call was not made for it".to_string(),
            n => format!("; {n} calls were not made for it"),
        };
        let whole = if self.whole_nextest_run {
            " (the whole nextest run)"
        } else {
            ""
        };
        format!(
            "budget ${:.5}: spent {spent}{whole}{refused}\n",
            self.limit_usd
        )
    }
}

/// A call's worst case, as a budget sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Worst {
    /// At most this many USD.
    Usd(f64),
    /// Unknown: `provider/model` has no price.
    Unpriced(String),
    /// Unknown: a media part of the call to `model` (`provider/model`) has no token count, `why`.
    UncountedMedia {
        /// `provider/model`.
        model: String,
        /// Which part, and why.
        why: String,
    },
}

impl Budget {
    /// The run's budget of `limit_usd`: kept in this process, or with `shared` (the crate root and the
    /// nextest run id) in the run's ledger file that every process of the run shares.
    pub fn for_run(limit_usd: f64, shared: Option<(&std::path::Path, &str)>) -> Self {
        let ledger = match shared {
            Some((root, run)) => Ledger::shared(root, run),
            None => Ledger::local(),
        };
        Self {
            limit_usd,
            owner: Owner::Run,
            ledger,
            refused: AtomicU64::new(0),
        }
    }

    /// Test `test`'s own budget of `limit_usd` (its samples all run in one process).
    pub fn for_test(limit_usd: f64, test: &str) -> Self {
        Self {
            limit_usd,
            owner: Owner::Test(test.to_string()),
            ledger: Ledger::local(),
            refused: AtomicU64::new(0),
        }
    }

    /// Reserves `worst` for a call, or says why the call may not be made.
    pub fn reserve(&self, worst: &Worst) -> Result<f64, OverBudget> {
        let refuse = |refused: OverBudget| {
            self.refused.fetch_add(1, Ordering::Relaxed);
            Err(refused)
        };
        let usd = match worst {
            Worst::Usd(usd) => *usd,
            // An unknown worst case is refused: counted for the run's reports (a ledger that cannot
            // be written is said below).
            Worst::Unpriced(model) => {
                let _ = self.ledger.update(|spend| spend.refused += 1);
                return refuse(OverBudget::Unpriced {
                    model: model.clone(),
                });
            }
            Worst::UncountedMedia { model, why } => {
                let _ = self.ledger.update(|spend| spend.refused += 1);
                return refuse(OverBudget::UncountedMedia {
                    model: model.clone(),
                    why: why.clone(),
                });
            }
        };
        let limit = self.limit_usd;
        let held = self.ledger.update(|spend| {
            let committed = spend.spent + spend.reserved;
            // A hair of tolerance: a budget of exactly N worst cases allows N calls despite rounding.
            if committed + usd > limit * (1.0 + 1e-9) {
                spend.refused += 1;
                return Err(committed);
            }
            spend.reserved += usd;
            Ok(())
        });
        match held {
            Ok(Ok(())) => Ok(usd),
            Ok(Err(spent)) => refuse(OverBudget::Reached {
                owner: self.owner.clone(),
                limit,
                spent,
                worst: usd,
            }),
            Err((path, problem)) => refuse(OverBudget::Ledger { path, problem }),
        }
    }

    /// Settles a reservation of `reserved` to the call's real cost `actual`.
    pub fn settle(&self, reserved: f64, actual: f64) {
        // A ledger that cannot be written keeps the reservation: the budget errs on the safe side.
        let _ = self.ledger.update(|spend| {
            spend.reserved = (spend.reserved - reserved).max(0.0);
            spend.spent += actual;
        });
    }

    /// What has been spent (and is reserved) so far: by the whole run, for a shared ledger; `Err`
    /// says why that cannot be told (the ledger unreadable or corrupt).
    pub fn spend(&self) -> Result<Spend, String> {
        self.ledger
            .read()
            .map_err(|(path, problem)| format!("the budget ledger {}: {problem}", path.display()))
    }

    /// How many calls this process refused for this budget.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// What the reports write of the budget: the whole run's spend and refusals under nextest (from
    /// its ledger), this process's otherwise.
    pub fn report(&self) -> BudgetReport {
        let (spend, unknown) = match self.spend() {
            Ok(spend) => (spend, None),
            Err(why) => (Spend::default(), Some(why)),
        };
        let shared = matches!(self.ledger, Ledger::Shared { .. });
        BudgetReport {
            limit_usd: self.limit_usd,
            spent_usd: spend.spent,
            refused_calls: if shared {
                spend.refused.max(self.refused())
            } else {
                self.refused()
            },
            whole_nextest_run: shared,
            unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_of_n_worst_cases_allows_n_calls_and_refuses_the_next() {
        let budget = Budget::for_run(0.3, None);
        let worst = Worst::Usd(0.1);
        for _ in 0..3 {
            let held = budget.reserve(&worst).unwrap();
            budget.settle(held, 0.1);
        }
        let refused = budget.reserve(&worst).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "budget of $0.30000 reached after $0.30000: the call could cost up to $0.10000, which is more \
             than is left; raise --budget (or PROMPT_TESTER_BUDGET) to make it"
        );
        assert_eq!(budget.refused(), 1);
        assert!((budget.spend().unwrap().spent - 0.3).abs() < 1e-12);
    }

    #[test]
    fn reservations_in_flight_count_and_settle_to_the_real_cost() {
        let budget = Budget::for_test(0.25, "t");
        let a = budget.reserve(&Worst::Usd(0.1)).unwrap();
        let _b = budget.reserve(&Worst::Usd(0.1)).unwrap();
        // Two in flight: a third worst case does not fit.
        let refused = budget.reserve(&Worst::Usd(0.1)).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("test `t`'s budget of $0.25000 reached after $0.20000")
        );
        budget.settle(a, 0.01);
        budget.reserve(&Worst::Usd(0.1)).unwrap();
        let unpriced = budget
            .reserve(&Worst::Unpriced("fake/mystery".into()))
            .unwrap_err();
        assert!(
            unpriced.to_string().starts_with(
                "fake/mystery has no known price, so under a budget its call is refused"
            )
        );
        assert!(unpriced.to_string().contains("[prices.\"mystery\"]"));
        // A media part with no token count is refused the same way, saying which part and why.
        let uncounted = budget
            .reserve(&Worst::UncountedMedia {
                model: "openai/m".into(),
                why: "the audio a.wav (audio/wav): no published token rate".into(),
            })
            .unwrap_err();
        assert!(
            uncounted.to_string().starts_with(
                "openai/m: the audio a.wav (audio/wav): no published token rate, so its input \
                 tokens have no count and under a budget its call is refused"
            ),
            "{uncounted}"
        );
        assert_eq!(budget.refused(), 3);
    }

    #[test]
    fn a_shared_ledger_is_one_budget_for_every_process_of_a_run() {
        let dir = crate::test_support::Scratch::new("budget-ledger");
        let first = Budget::for_run(0.2, Some((dir.path(), "run-1")));
        let second = Budget::for_run(0.2, Some((dir.path(), "run-1")));
        let held = first.reserve(&Worst::Usd(0.1)).unwrap();
        first.settle(held, 0.1);
        let held = second.reserve(&Worst::Usd(0.1)).unwrap();
        second.settle(held, 0.1);
        assert!(first.reserve(&Worst::Usd(0.1)).is_err());
        assert!((second.spend().unwrap().spent - 0.2).abs() < 1e-12);
        // The reports say the whole run's refusals, whichever process refused.
        assert!(second.reserve(&Worst::Unpriced("p/m".into())).is_err());
        let report = first.report();
        assert_eq!((report.refused_calls, first.refused()), (2, 1));
        assert!(report.whole_nextest_run);
        assert!((report.spent_usd - 0.2).abs() < 1e-12);
        // Another nextest run starts from nothing.
        let next = Budget::for_run(0.2, Some((dir.path(), "run-2")));
        assert_eq!(next.spend().unwrap().spent, 0.0);
        next.reserve(&Worst::Usd(0.1)).unwrap();
    }

    #[test]
    fn a_corrupt_ledger_refuses_the_runs_calls_and_never_a_later_runs() {
        let dir = crate::test_support::Scratch::new("budget-corrupt");
        for (run, garbage) in [
            ("run-a", "garbage"),
            (
                "run-b",
                r#"{"nextest_run":"run-b","spent":-1.0,"reserved":0.0}"#,
            ),
        ] {
            let path = ledger::path(dir.path(), run);
            let first = Budget::for_run(1.0, Some((dir.path(), run)));
            first.settle(first.reserve(&Worst::Usd(0.1)).unwrap(), 0.1);
            std::fs::write(&path, garbage).unwrap();
            let refused = first.reserve(&Worst::Usd(0.1)).unwrap_err().to_string();
            crate::test_support::assert_contains(
                &refused,
                &[
                    &format!("the budget ledger {}: corrupt (", path.display()),
                    "so this nextest run's spend is unknown and its calls are refused; delete the file \
                     to clear it (a later nextest run starts a new ledger); the call is not made",
                ],
            );
            // The run's other processes refuse too, though the file parses now; its spend is unknown.
            let other = Budget::for_run(1.0, Some((dir.path(), run)));
            assert!(other.reserve(&Worst::Usd(0.1)).is_err());
            assert!(
                other
                    .report()
                    .summary_line()
                    .starts_with("budget $1.00000: spent unknown (the budget ledger "),
                "{}",
                other.report().summary_line()
            );
            let report = other.report();
            assert!(report.unknown.is_some_and(|why| why.contains("corrupt (")));
            // A later run is not blocked.
            let later = Budget::for_run(1.0, Some((dir.path(), &format!("{run}-later"))));
            later.settle(later.reserve(&Worst::Usd(0.1)).unwrap(), 0.1);
            assert!((later.spend().unwrap().spent - 0.1).abs() < 1e-12);
        }
    }

    /// Two nextest runs at once (two terminals, a watcher, two partitions on one machine): their
    /// processes take turns on the crate's ledgers, and neither reads the other's spend as nothing.
    #[test]
    fn two_runs_at_once_keep_their_spend_apart_whatever_the_order_of_their_writes() {
        let dir = crate::test_support::Scratch::new("budget-two-runs");
        let process = |run: &str| Budget::for_run(0.2, Some((dir.path(), run)));
        let call = |budget: &Budget| {
            let held = budget.reserve(&Worst::Usd(0.1))?;
            budget.settle(held, 0.1);
            Ok::<(), OverBudget>(())
        };
        // Each call a process of its own, the two runs' writes interleaved.
        for _ in 0..2 {
            call(&process("run-a")).unwrap();
            call(&process("run-b")).unwrap();
        }
        for run in ["run-a", "run-b"] {
            let third = call(&process(run)).unwrap_err().to_string();
            assert!(
                third.starts_with("budget of $0.20000 reached after $0.20000"),
                "{run}: {third}"
            );
            assert!((process(run).spend().unwrap().spent - 0.2).abs() < 1e-12);
        }
        // A run id that is no plain name still has a file of its own.
        let odd = ledger::path(dir.path(), "a/b c");
        assert_eq!(odd.parent(), ledger::path(dir.path(), "run-a").parent());
        assert_ne!(odd, ledger::path(dir.path(), "a_b_c"));
    }

    #[test]
    fn a_new_runs_first_write_drops_the_ledgers_of_runs_long_over() {
        let dir = crate::test_support::Scratch::new("budget-stale");
        let (old, recent) = (
            ledger::path(dir.path(), "old"),
            ledger::path(dir.path(), "recent"),
        );
        for run in ["old", "recent"] {
            let budget = Budget::for_run(1.0, Some((dir.path(), run)));
            budget.settle(budget.reserve(&Worst::Usd(0.1)).unwrap(), 0.1);
        }
        let long_ago = std::time::SystemTime::now() - ledger::STALE_AFTER * 2;
        std::fs::File::options()
            .write(true)
            .open(&old)
            .and_then(|f| f.set_modified(long_ago))
            .unwrap();
        let new = Budget::for_run(1.0, Some((dir.path(), "new")));
        new.reserve(&Worst::Usd(0.1)).unwrap();
        assert!(!old.exists(), "a run not written for a day is over");
        assert!(recent.exists(), "a recent run may still be running");
    }
}
