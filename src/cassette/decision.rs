//! What one model call does: replay it, make it (and record it or not), ignore the trial, or fail.
//!
//! One pure function, [`decide`], takes everything that matters (cassette mode, whether the call is
//! recorded, whether a needed key is missing, CI, `live_only`, where replacements go) so that the whole
//! policy is one table;
//! the engine only acts on the answer. What the user reads about a call that is not made (why, and the
//! command that fixes it) is written here too, by pure functions of the decision.

use crate::cassette::CassetteMode;
use crate::commands::{Commands, REVIEW};
use crate::role::CallRole;

/// What the cassette holds for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// An entry for this very call.
    Found,
    /// Recordings of this very sample (test and run), but none for this call: the prompt, the inputs
    /// or a setting changed since they were recorded. A new answer *replaces* them.
    Stale {
        /// How many entries the cassette holds for the sample.
        recorded: usize,
    },
    /// Nothing recorded for this sample (no file, another test's entries only, or cassettes off): a
    /// new answer is a *first* recording.
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
    /// Where an answer that replaces a sample's recordings goes.
    pub replacements: Replacements,
}

/// Where a new answer that replaces a sample's accepted recordings goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replacements {
    /// Pending beside the cassette, for `cargo prompt-tester review` (the default).
    #[default]
    Pending,
    /// Pending in `PROMPT_TESTER_PENDING_DIR`: under CI too, a stale call is then made (a live job
    /// that keeps the folder as an artifact).
    PendingDir,
    /// Straight into the cassette (`--accept`, `PROMPT_TESTER_ACCEPT=1`).
    Accept,
}

/// Where a call's answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Nowhere (cassettes off).
    Nowhere,
    /// Into the cassette: a first recording, or a replacement accepted at once.
    Cassette,
    /// Into the pending recordings, for review: it would replace what the cassette holds.
    Pending,
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
pub enum CallDecision {
    /// Answer from the cassette.
    Replay,
    /// Call the provider, and write the answer where `write` says.
    Call {
        /// Where the answer goes.
        write: Write,
    },
    /// Make no call; the trial is ignored.
    Ignore(Ignore),
    /// Make no call; the sample fails.
    Fail(Refusal),
}

/// The policy, in one place. Auto mode replays what is recorded; a first recording it makes and
/// writes into the cassette when a key is at hand, ignores the trial (with the key to set) when none
/// is, and under CI fails with the record command instead (a test nobody recorded must not leave the
/// build green). A stale call (the sample has recordings, none for this request) is made locally with
/// a key and its answer goes pending for review; under CI it fails, unless a pending folder is set.
/// `--record` calls everything; what would replace a recording goes pending too, unless accepted at
/// once. A `live_only` test without a recording is ignored in auto and replay modes, under CI too.
pub fn decide(s: &Situation<'_>) -> CallDecision {
    let missing_key = |var: &str| {
        CallDecision::Fail(Refusal::MissingKey {
            var: var.to_string(),
        })
    };
    let replacing = match s.replacements {
        Replacements::Accept => Write::Cassette,
        Replacements::Pending | Replacements::PendingDir => Write::Pending,
    };
    match s.mode {
        CassetteMode::Off => match s.missing_key {
            Some(var) => missing_key(var),
            None => CallDecision::Call {
                write: Write::Nowhere,
            },
        },
        CassetteMode::Record => match (s.missing_key, s.recording) {
            (Some(var), _) => missing_key(var),
            (None, Recording::Absent) => CallDecision::Call {
                write: Write::Cassette,
            },
            (None, Recording::Found | Recording::Stale { .. }) => {
                CallDecision::Call { write: replacing }
            }
        },
        CassetteMode::Auto | CassetteMode::Replay => match s.recording {
            Recording::Found => CallDecision::Replay,
            _ if s.live_only => CallDecision::Ignore(Ignore::LiveOnly),
            Recording::Stale { recorded } => {
                let stale = CallDecision::Fail(Refusal::Stale { recorded });
                let may_call = s.mode == CassetteMode::Auto
                    && (!s.ci || s.replacements == Replacements::PendingDir);
                match s.missing_key {
                    None if may_call => CallDecision::Call { write: replacing },
                    _ => stale,
                }
            }
            Recording::Absent if s.mode == CassetteMode::Replay => {
                CallDecision::Fail(Refusal::NotRecorded)
            }
            Recording::Absent if s.ci => CallDecision::Fail(Refusal::NotRecordedUnderCi),
            Recording::Absent => match s.missing_key {
                Some(var) => CallDecision::Ignore(Ignore::NoKey {
                    var: var.to_string(),
                }),
                None => CallDecision::Call {
                    write: Write::Cassette,
                },
            },
        },
    }
}

/// Whether a call in `situation` is ignored rather than made or replayed: the harness asks this before
/// the run, with what it can tell of the recording then, so that nextest (which reads an ignored
/// trial's exit status as a pass) can be told up front.
pub fn ignored(situation: &Situation<'_>) -> bool {
    matches!(decide(situation), CallDecision::Ignore(_))
}

/// How the summary and libtest say a `live_only` test without a recording was not run.
pub const LIVE_ONLY: &str = "live only, not run";

/// Why a trial is ignored: the kind, and the message that says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// Why.
    pub why: Ignore,
    /// The reason shown, with the command that records the test.
    pub message: String,
}

/// The call a message is about, and where its recording is or would be.
#[derive(Debug, Clone)]
pub struct CallSite<'a> {
    /// The commands to name, for this run's test target.
    pub commands: Commands,
    /// The name filter that re-runs (and so records) the test.
    pub filter: &'a str,
    /// The cassette, as shown (relative to the crate root).
    pub cassette: String,
    /// The cassette's file name.
    pub cassette_file: String,
    /// Who makes the call.
    pub role: CallRole,
    /// The sample's index, 1-based, and how many the test takes.
    pub run: (u32, u32),
    /// The provider name.
    pub provider: &'a str,
    /// The cassette mode.
    pub mode: CassetteMode,
    /// The key variable to set, when it is missing.
    pub missing_key: Option<&'a str>,
    /// The keys the sample's other calls need and miss (the judge's): recording the sample makes
    /// them too.
    pub also_missing: Vec<String>,
    /// The judge's key, when it is missing and the test body may ask the judge (not known before it
    /// runs): the record command names it as needed only then.
    pub judge_key_if_asked: Option<String>,
    /// For a stale call: what differs between the recorded request and this one, said briefly
    /// ("model a → b", "max_tokens 200 → 400", a diff of the prompt).
    pub changes: Vec<String>,
    /// For a stale call: whether the sample's recordings hold a call of this role. When they hold none
    /// (a judge added since), this call was never recorded rather than changed.
    pub role_recorded: bool,
}

impl CallSite<'_> {
    fn record(&self) -> String {
        let mut keys: Vec<&str> = self.missing_key.into_iter().collect();
        for key in &self.also_missing {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
        let command = self.commands.record(self.filter, &keys);
        match &self.judge_key_if_asked {
            Some(key) if !keys.contains(&key.as_str()) => {
                format!("{command} (and {key}=... if the test body asks the judge)")
            }
            _ => command,
        }
    }

    /// Why the trial is ignored, said with what to do about it.
    pub fn unavailable(&self, why: Ignore) -> Unavailable {
        let (path, record) = (&self.cassette, self.record());
        let message = match &why {
            Ignore::NoKey { var } => {
                format!("no recording in {path} and {var} is not set; record it with: {record}")
            }
            Ignore::LiveOnly => format!(
                "{LIVE_ONLY}: no recording in {path}; run it live with PROMPT_TESTER_CASSETTE=off, or record \
                 it with: {record}"
            ),
        };
        Unavailable { why, message }
    }

    /// Why a call fails without being made, said with how to fix it.
    pub fn refusal(&self, refusal: &Refusal) -> String {
        let (path, record) = (&self.cassette, self.record());
        let call = format!(
            "{} call of run {}/{}",
            self.role.as_str(),
            self.run.0,
            self.run.1
        );
        match refusal {
            Refusal::Stale { recorded } => {
                let what = if !self.role_recorded {
                    format!(
                        "It was never recorded: the sample's recordings hold no {} call",
                        self.role.as_str()
                    )
                } else if self.changes.is_empty() {
                    "The prompt or the case inputs changed since it was recorded".to_string()
                } else {
                    format!("Changed since it was recorded: {}", self.changes.join("; "))
                };
                format!(
                    "{} has {recorded} recording(s) of this sample but none for this call ({call}). {what}. \
                     Record the new answers as pending with: {record} (then review them: {})",
                    self.cassette_file, REVIEW,
                )
            }
            Refusal::NotRecorded => format!(
                "{path} has no recording for this call ({call}) and cassettes are replay-only \
                 (PROMPT_TESTER_CASSETTE=replay). Record it with: {record}"
            ),
            Refusal::NotRecordedUnderCi => format!(
                "no recording for this call in {path} ({call}). Under CI, auto mode never calls a provider for a \
                 missing recording: record it and commit the cassette: {record}. (A live CI job sets \
                 PROMPT_TESTER_CASSETTE=off or record; a test meant only for live runs says `live_only = true`.)"
            ),
            Refusal::MissingKey { var } => format!(
                "{}: {var} is not set (cassettes are {}); set it in the environment or .env",
                self.provider,
                if self.mode == CassetteMode::Off {
                    "off"
                } else {
                    "being recorded"
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CassetteMode::{Auto, Off, Record, Replay};
    use Recording::{Absent, Found};

    const STALE: Recording = Recording::Stale { recorded: 3 };

    fn call(write: Write) -> CallDecision {
        CallDecision::Call { write }
    }
    const CASSETTE: Write = Write::Cassette;
    const PENDING: Write = Write::Pending;
    const NOWHERE: Write = Write::Nowhere;
    fn no_key() -> CallDecision {
        CallDecision::Ignore(Ignore::NoKey { var: "K".into() })
    }
    fn live_only() -> CallDecision {
        CallDecision::Ignore(Ignore::LiveOnly)
    }
    fn fail(r: Refusal) -> CallDecision {
        CallDecision::Fail(r)
    }
    fn missing_key() -> CallDecision {
        fail(Refusal::MissingKey { var: "K".into() })
    }

    #[test]
    fn the_whole_table() {
        let stale = fail(Refusal::Stale { recorded: 3 });
        // (mode, recording, key set, ci, live_only) -> decision, replacements pending beside the cassette
        #[rustfmt::skip]
        let table: Vec<(CassetteMode, Recording, bool, bool, bool, CallDecision)> = vec![
            // auto: replay what is recorded, whatever else holds
            (Auto, Found, false, false, false, CallDecision::Replay),
            (Auto, Found, true, true, true, CallDecision::Replay),
            // auto, changed since recorded: locally with a key, call and keep the answer pending
            (Auto, STALE, true, false, false, call(PENDING)),
            // ... without a key, or under CI: fail (nothing to call with, or CI never calls)
            (Auto, STALE, false, false, false, stale.clone()),
            (Auto, STALE, true, true, false, stale.clone()),
            (Auto, STALE, false, true, false, stale.clone()),
            (Auto, STALE, true, true, true, live_only()),
            // auto, nothing recorded for the sample, locally: record with a key, else ignore
            (Auto, Absent, true, false, false, call(CASSETTE)),
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
            (Replay, Found, false, false, false, CallDecision::Replay),
            (Replay, STALE, true, false, false, stale),
            (Replay, Absent, true, false, false, fail(Refusal::NotRecorded)),
            (Replay, Absent, true, true, false, fail(Refusal::NotRecorded)),
            (Replay, Absent, false, true, true, live_only()),
            (Replay, STALE, true, false, true, live_only()),
            // record: always calls; a first recording goes into the cassette, a replacement pending
            (Record, Found, true, false, false, call(PENDING)),
            (Record, STALE, true, true, false, call(PENDING)),
            (Record, Absent, true, true, true, call(CASSETTE)),
            (Record, Found, false, false, false, missing_key()),
            (Record, Absent, false, true, true, missing_key()),
            // off: always calls, records nothing; a missing key fails
            (Off, Absent, true, false, false, call(NOWHERE)),
            (Off, Found, true, true, true, call(NOWHERE)),
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
                replacements: Replacements::Pending,
            };
            assert_eq!(decide(&situation), want, "{situation:?}");
        }
    }

    #[test]
    fn a_pending_folder_lets_ci_make_stale_calls_and_accept_writes_them_into_the_cassette() {
        let decide_with = |mode, recording, ci, replacements| {
            decide(&Situation {
                mode,
                recording,
                missing_key: None,
                ci,
                live_only: false,
                replacements,
            })
        };
        use Replacements::{Accept, PendingDir};
        // Under CI, a pending folder and a key: the stale call is made, and lands pending.
        assert_eq!(decide_with(Auto, STALE, true, PendingDir), call(PENDING));
        // A first recording under CI still fails: a pending folder holds replacements only.
        assert_eq!(
            decide_with(Auto, Absent, true, PendingDir),
            fail(Refusal::NotRecordedUnderCi)
        );
        // --accept: replacements go straight into the cassette, locally and under --record.
        assert_eq!(decide_with(Auto, STALE, false, Accept), call(CASSETTE));
        assert_eq!(decide_with(Record, Found, true, Accept), call(CASSETTE));
        // ... but CI still never makes a stale call without a pending folder.
        assert_eq!(
            decide_with(Auto, STALE, true, Accept),
            fail(Refusal::Stale { recorded: 3 })
        );
    }

    #[test]
    fn a_stale_call_s_record_command_names_every_key_the_sample_misses() {
        let site = CallSite {
            commands: Commands::default(),
            filter: "summary",
            cassette: "prompt-tests/cassettes/summary.cassette.json".into(),
            cassette_file: "summary.cassette.json".into(),
            role: CallRole::Subject,
            run: (1, 5),
            provider: "google",
            mode: Auto,
            missing_key: Some("GOOGLE_API_KEY"),
            also_missing: vec!["ANTHROPIC_API_KEY".into(), "GOOGLE_API_KEY".into()],
            judge_key_if_asked: None,
            changes: vec!["prompt: -\"a\" +\"b\"".into()],
            role_recorded: true,
        };
        let said = site.refusal(&Refusal::Stale { recorded: 2 });
        assert!(
            said.contains(
                "GOOGLE_API_KEY=... ANTHROPIC_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test"
            ),
            "{said}"
        );
        assert!(
            said.contains("Changed since it was recorded: prompt: -\"a\" +\"b\""),
            "{said}"
        );
    }

    /// A test body's judge calls are not known before it runs: its record command names the judge's
    /// missing key as needed only if the body asks the judge.
    #[test]
    fn a_body_s_record_command_names_the_judge_s_key_conditionally() {
        let site = CallSite {
            commands: Commands::default(),
            filter: "summary",
            cassette: "prompt-tests/cassettes/summary.cassette.json".into(),
            cassette_file: "summary.cassette.json".into(),
            role: CallRole::Subject,
            run: (1, 1),
            provider: "openai",
            mode: Auto,
            missing_key: Some("OPENAI_API_KEY"),
            also_missing: Vec::new(),
            judge_key_if_asked: Some("ANTHROPIC_API_KEY".into()),
            changes: Vec::new(),
            role_recorded: false,
        };
        let said = site
            .unavailable(Ignore::NoKey {
                var: "OPENAI_API_KEY".into(),
            })
            .message;
        assert!(
            said.starts_with(
                "no recording in prompt-tests/cassettes/summary.cassette.json and \
                              OPENAI_API_KEY is not set; record it with: OPENAI_API_KEY=... \
                              PROMPT_TESTER_CASSETTE=record cargo test"
            ) && said.ends_with(
                "-- summary (and ANTHROPIC_API_KEY=... if the test body asks the judge)"
            ),
            "{said}"
        );
    }

    /// A judge call whose sample's recordings hold no judge call was never recorded: it is said so, not
    /// said to have changed (issue 37).
    #[test]
    fn a_call_of_a_role_the_sample_never_recorded_is_not_recorded_rather_than_changed() {
        let site = CallSite {
            commands: Commands::default(),
            filter: "summary",
            cassette: "prompt-tests/cassettes/summary.cassette.json".into(),
            cassette_file: "summary.cassette.json".into(),
            role: CallRole::Judge,
            run: (1, 1),
            provider: "openai",
            mode: Auto,
            missing_key: None,
            also_missing: Vec::new(),
            judge_key_if_asked: None,
            changes: Vec::new(),
            role_recorded: false,
        };
        let said = site.refusal(&Refusal::Stale { recorded: 1 });
        assert!(
            said.contains("It was never recorded: the sample's recordings hold no judge call."),
            "{said}"
        );
        assert!(!said.contains("changed"), "{said}");
        assert!(
            said.contains("PROMPT_TESTER_CASSETTE=record cargo test"),
            "{said}"
        );
    }
}
