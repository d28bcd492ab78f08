//! The keys of [prompt-tester](https://docs.rs/prompt-tester) in one table, shared by the library (suites,
//! `prompt-tester.toml`, the plans it builds at run time) and the `#[prompt_test]` attribute (its
//! compile-time checks), so the two cannot disagree about a key.
//!
//! - [`ROWS`]: every key of the attribute, of a suite and its cases, and of `[defaults]`, with its
//!   [`Kind`], its [`Range`], the [`Place`]s it may be written and a help line. [`Key`] names a key in
//!   errors, typed.
//! - [`sampling`]: the defaults of the sampling keys, what contradicts what among them, and the
//!   messages both front ends give.
//! - [`conversation`]: the roles of a turn of `messages` and the one order of turns every provider
//!   takes, with the messages both front ends give.
//! - [`vocabulary`]: the keys the front ends name differently, the old spellings still read, and what
//!   to write instead of a key only one front end has.
//! - [`template`]: the grammar of `{placeholder}`s in a prompt, which both check.
//! - [`sprt`]: the passes in a row an adaptive test needs (the smallest `max_runs` that lets it pass).
//!
//! An implementation detail of `prompt-tester` and `prompt-tester-macros`; its version is pinned.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod conversation;
mod range;
pub mod sampling;
pub mod sprt;
mod table;
pub mod template;
pub mod vocabulary;

pub use range::Range;
pub use table::{
    Key, Kind, MAX_SEED, MAX_SUITE_RUNS, PROMPT_RUN_KEYS, Place, ROWS, Row, keys_in, names_in,
};
pub use vocabulary::{Reading, TWINS};
