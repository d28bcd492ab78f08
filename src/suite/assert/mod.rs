//! Suite assertions: parsing `{ kind = value, weight = w }` tables, checking them against a
//! [`PromptRun`](crate::PromptRun), and scoring a case.
//!
//! [`registry`] holds the custom assertions and the names, [`kinds`] the types, [`read`] reads them
//! from the suite file, [`check`] checks one, [`evaluate`](mod@evaluate) scores a case, [`message`]
//! words what was seen.

mod check;
mod evaluate;
mod kinds;
mod message;
mod read;
mod registry;

#[cfg(test)]
pub use check::check_sync;
pub use evaluate::evaluate;
#[cfg(test)]
pub(crate) use evaluate::similar_verdict;
pub use kinds::{Assertion, Check};
pub(crate) use read::{parse_list, parse_one};
pub use registry::{BUILT_IN, CustomAssertion, registry_conflicts};
