//! `--prune-cassettes`: after a run that replayed or recorded every test that can run, drop the
//! recordings no test used and the cassette files no test opened. Any other run cannot tell an unused
//! recording from one it did not get to, so it refuses (one line on stderr, a failing exit code) and
//! changes nothing.

use std::collections::BTreeSet;
use std::path::Path;

use libtest_mimic::Arguments;

use super::record::{Status, TrialRecord};
use crate::cassette::{CassetteMode, CassetteStore, Pruned};
use crate::engine::display_path;

/// Why a run with these arguments cannot prune, decided before any test runs.
pub(crate) fn refusal_before_run(mode: CassetteMode, args: &Arguments) -> Option<String> {
    if mode == CassetteMode::Off {
        return Some(format!(
            "cassettes are off ({}=off or --no-cassette), so no test replays or records",
            CassetteMode::ENV
        ));
    }
    if args.filter.is_some() || !args.skip.is_empty() {
        return Some("it needs a run of every test (no filter, no --skip)".into());
    }
    if args.ignored || args.include_ignored {
        let flag = if args.ignored {
            "--ignored"
        } else {
            "--include-ignored"
        };
        return Some(format!(
            "{flag} changes which tests run; prune from a plain run"
        ));
    }
    None
}

/// Why this run, now finished, cannot prune: a trial that did not pass (failed, or ignored for want of
/// a recording) may not have used its recordings. Trials skipped on purpose (`on_purpose`) and live-only
/// trials do not count; `incomplete` names any other reason the run is not trustworthy (unwritten recordings).
pub(crate) fn refusal_after_run(
    records: &[TrialRecord],
    on_purpose: &BTreeSet<String>,
    incomplete: Option<&str>,
) -> Option<String> {
    const SHOWN: usize = 5;
    let blocking: Vec<String> = records
        .iter()
        .filter(|r| match r.status {
            // A live-only test without a recording has none to keep or lose.
            Status::Passed | Status::LiveOnly => false,
            Status::Ignored => !on_purpose.contains(&r.name),
            _ => true,
        })
        .map(|r| format!("{}: {}", r.name, format!("{:?}", r.status).to_lowercase()))
        .collect();
    if !blocking.is_empty() {
        let more = blocking.len().saturating_sub(SHOWN);
        let mut list = blocking[..blocking.len().min(SHOWN)].join(", ");
        if more > 0 {
            list.push_str(&format!(", and {more} more"));
        }
        return Some(format!("{} trial(s) did not pass ({list})", blocking.len()));
    }
    incomplete.map(str::to_string)
}

/// Prunes: keeps the recordings of the trials skipped on purpose (`(cassette, trial)` pairs), drops
/// every other unused one, removes the cassette files no trial opened, and prints each change with
/// paths relative to `root`. Returns whether every change succeeded.
pub(crate) fn prune(store: &CassetteStore, skipped: &[(String, String)], root: &Path) -> bool {
    let mut ok = true;
    for (cassette, trial) in skipped {
        match store.open(cassette) {
            Ok(cassette) => cassette.keep_recordings_of(trial),
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    if !ok {
        // A cassette that cannot be read cannot be pruned safely either.
        eprintln!("error: --prune-cassettes stopped; nothing was pruned");
        return false;
    }
    for (path, result) in store.prune_all() {
        match result {
            Ok(Pruned { removed: 0, .. }) => {}
            Ok(Pruned { removed, kept }) => eprintln!(
                "pruned {removed} unused recording(s) from {} ({kept} kept)",
                display_path(&path, root)
            ),
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    match store.remove_unopened() {
        Ok(removed) => {
            for (path, entries) in removed {
                let held = entries.map_or("not a valid cassette".into(), |n| {
                    format!("{n} recording(s)")
                });
                eprintln!(
                    "removed {} ({held}; no test uses it)",
                    display_path(&path, root)
                );
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ok = false;
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(argv: &[&str]) -> Arguments {
        Arguments::from_iter(std::iter::once("prompts").chain(argv.iter().copied()))
    }

    fn record(name: &str, status: Status) -> TrialRecord {
        TrialRecord::unrun(name.into(), status, "why", None)
    }

    #[test]
    fn only_a_plain_run_with_cassettes_may_prune() {
        let plain = args(&[]);
        for mode in [
            CassetteMode::Auto,
            CassetteMode::Replay,
            CassetteMode::Record,
        ] {
            assert_eq!(refusal_before_run(mode, &plain), None, "{mode:?}");
        }
        let refused = |mode, argv: &[&str]| refusal_before_run(mode, &args(argv)).unwrap();
        assert!(refused(CassetteMode::Off, &[]).contains("cassettes are off"));
        assert!(refused(CassetteMode::Auto, &["greet"]).contains("no filter"));
        assert!(refused(CassetteMode::Auto, &["--skip", "greet"]).contains("no --skip"));
        assert!(refused(CassetteMode::Auto, &["--ignored"]).starts_with("--ignored "));
        assert!(
            refused(CassetteMode::Record, &["--include-ignored"]).starts_with("--include-ignored")
        );
    }

    #[test]
    fn a_trial_that_did_not_pass_blocks_unless_skipped_on_purpose() {
        let skipped: BTreeSet<String> = ["s::later".to_string()].into();
        let passed = [
            record("s::a", Status::Passed),
            record("s::later", Status::Ignored),
        ];
        assert_eq!(refusal_after_run(&passed, &skipped, None), None);
        assert_eq!(
            refusal_after_run(&passed, &skipped, Some("recordings were not written")).as_deref(),
            Some("recordings were not written")
        );
        let mut partial = passed.to_vec();
        partial.push(record("s::new", Status::Ignored));
        partial.push(record("s::b", Status::Failed));
        assert_eq!(
            refusal_after_run(&partial, &skipped, None).as_deref(),
            Some("2 trial(s) did not pass (s::new: ignored, s::b: failed)")
        );
        let many: Vec<TrialRecord> = (0..7)
            .map(|i| record(&format!("t{i}"), Status::Failed))
            .collect();
        assert!(
            refusal_after_run(&many, &skipped, None)
                .unwrap()
                .ends_with("t4: failed, and 2 more)")
        );
    }
}
