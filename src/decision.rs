//! What one model call does: replay it, make it (and record it or not), ignore the trial, or fail.
//!
//! One pure function, [`decide`], takes everything that matters (cassette mode, whether the call is
//! recorded, whether a needed key is missing, CI, `live_only`) so that the whole policy is one table;
//! the engine only acts on the answer.

use crate::cassette::CassetteMode;

/// What the cassette holds for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// An entry for this very call.
    Found,
    /// Entries, but none for this call: the prompt or the inputs changed since they were recorded.
    Stale {
        /// How many entries the cassette holds.
        recorded: usize,
    },
    /// No cassette file, or one without entries (or cassettes are off).
    Absent,
}

/// Everything the decision depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Situation<'a> {
    /// The cassette mode.
    pub mode: CassetteMode,
    /// What the cassette holds for this call.
    pub recording: Recording,
    /// The variable to set when the provider needs a key and none is set.
    pub missing_key: Option<&'a str>,
    /// Whether this runs under CI ([`crate::config::is_ci`]).
    pub ci: bool,
    /// Whether the test is meant only for live runs (`live_only = true`).
    pub live_only: bool,
}

/// Why a trial is ignored rather than run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignore {
    /// No recording and no key, outside CI: set the key to record it.
    NoKey {
        /// The variable to set.
        var: String,
    },
    /// A `live_only` test without a recording: it runs only with cassettes `off` or `record`.
    LiveOnly,
}

/// Why a call fails without being made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The cassette has recordings, but none for this call.
    Stale {
        /// How many entries the cassette holds.
        recorded: usize,
    },
    /// Replay-only mode and no recording at all.
    NotRecorded,
    /// Auto mode under CI and no recording: CI never calls a provider for a missing recording.
    NotRecordedUnderCi,
    /// The call must be made (cassettes `off` or `record`) but the key is not set.
    MissingKey {
        /// The variable to set.
        var: String,
    },
}

/// What to do with one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Answer from the cassette.
    Replay,
    /// Call the provider, and record the answer when `record` is set.
    Call {
        /// Whether to write the answer into the cassette.
        record: bool,
    },
    /// Make no call; the trial is ignored.
    Ignore(Ignore),
    /// Make no call; the sample fails.
    Fail(Refusal),
}

/// The policy, in one place. Auto mode replays what is recorded; for the rest it calls and records
/// when a key is at hand, ignores the trial (with the key to set) when none is, and under CI fails
/// with the record command instead (a test nobody recorded must not leave the build green). A
/// `live_only` test without a recording is ignored in auto and replay modes, under CI too.
pub fn decide(s: &Situation<'_>) -> Decision {
    let missing_key = |var: &str| {
        Decision::Fail(Refusal::MissingKey {
            var: var.to_string(),
        })
    };
    match s.mode {
        CassetteMode::Off | CassetteMode::Record => match s.missing_key {
            Some(var) => missing_key(var),
            None => Decision::Call {
                record: s.mode == CassetteMode::Record,
            },
        },
        CassetteMode::Auto | CassetteMode::Replay => match s.recording {
            Recording::Found => Decision::Replay,
            _ if s.live_only => Decision::Ignore(Ignore::LiveOnly),
            Recording::Stale { recorded } => Decision::Fail(Refusal::Stale { recorded }),
            Recording::Absent if s.mode == CassetteMode::Replay => {
                Decision::Fail(Refusal::NotRecorded)
            }
            Recording::Absent if s.ci => Decision::Fail(Refusal::NotRecordedUnderCi),
            Recording::Absent => match s.missing_key {
                Some(var) => Decision::Ignore(Ignore::NoKey {
                    var: var.to_string(),
                }),
                None => Decision::Call { record: true },
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CassetteMode::{Auto, Off, Record, Replay};
    use Recording::{Absent, Found};

    const STALE: Recording = Recording::Stale { recorded: 3 };

    fn call(record: bool) -> Decision {
        Decision::Call { record }
    }
    fn no_key() -> Decision {
        Decision::Ignore(Ignore::NoKey { var: "K".into() })
    }
    fn live_only() -> Decision {
        Decision::Ignore(Ignore::LiveOnly)
    }
    fn fail(r: Refusal) -> Decision {
        Decision::Fail(r)
    }
    fn missing_key() -> Decision {
        fail(Refusal::MissingKey { var: "K".into() })
    }

    #[test]
    fn the_whole_table() {
        let stale = fail(Refusal::Stale { recorded: 3 });
        // (mode, recording, key set, ci, live_only) -> decision
        #[rustfmt::skip]
        let table: Vec<(CassetteMode, Recording, bool, bool, bool, Decision)> = vec![
            // auto: replay what is recorded, whatever else holds
            (Auto, Found, false, false, false, Decision::Replay),
            (Auto, Found, true, true, true, Decision::Replay),
            // auto, changed since recorded: fail (re-record), unless live only
            (Auto, STALE, true, false, false, stale.clone()),
            (Auto, STALE, false, true, false, stale.clone()),
            (Auto, STALE, true, true, true, live_only()),
            // auto, nothing recorded, locally: record with a key, else ignore with the key to set
            (Auto, Absent, true, false, false, call(true)),
            (Auto, Absent, false, false, false, no_key()),
            // ... under CI: fail with the record command, key or no key (no provider call)
            (Auto, Absent, true, true, false, fail(Refusal::NotRecordedUnderCi)),
            (Auto, Absent, false, true, false, fail(Refusal::NotRecordedUnderCi)),
            // ... live only: ignored, in CI too, key or no key
            (Auto, Absent, true, false, true, live_only()),
            (Auto, Absent, false, false, true, live_only()),
            (Auto, Absent, true, true, true, live_only()),
            (Auto, Absent, false, true, true, live_only()),
            // replay: never calls
            (Replay, Found, false, false, false, Decision::Replay),
            (Replay, STALE, true, false, false, stale),
            (Replay, Absent, true, false, false, fail(Refusal::NotRecorded)),
            (Replay, Absent, true, true, false, fail(Refusal::NotRecorded)),
            (Replay, Absent, false, true, true, live_only()),
            (Replay, STALE, true, false, true, live_only()),
            // record: always calls and records; a missing key fails
            (Record, Found, true, false, false, call(true)),
            (Record, Absent, true, true, true, call(true)),
            (Record, Found, false, false, false, missing_key()),
            (Record, Absent, false, true, true, missing_key()),
            // off: always calls, records nothing; a missing key fails
            (Off, Absent, true, false, false, call(false)),
            (Off, Absent, true, true, true, call(false)),
            (Off, Absent, false, true, false, missing_key()),
            (Off, Absent, false, false, true, missing_key()),
        ];
        for (mode, recording, key, ci, live_only, want) in table {
            let situation = Situation {
                mode,
                recording,
                missing_key: (!key).then_some("K"),
                ci,
                live_only,
            };
            assert_eq!(decide(&situation), want, "{situation:?}");
        }
    }
}
