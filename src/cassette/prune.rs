//! `--prune-cassettes`: after a run that replayed or recorded every test that can run, drop this test
//! target's recordings no test used and the cassette files no test opened that held only its own. Any
//! other run cannot tell an unused recording from one it did not get to, and no run can tell whose a
//! recording that names no target is, so it refuses (one line on stderr, a failing exit code) and
//! changes nothing. `--claim-cassettes` makes recordings that name no target this target's.

use std::path::Path;

use libtest_mimic::Arguments;

use crate::cassette::{Blocker, CassetteMode, CassetteStore, Pruned};
use crate::commands::Commands;
use crate::text::display_path;

/// Why a run with these arguments cannot prune, decided before any test runs.
pub(crate) fn refusal_before_run(
    mode: CassetteMode,
    args: &Arguments,
    filters: &[String],
) -> Option<String> {
    if mode == CassetteMode::Off {
        return Some(format!(
            "cassettes are off ({}=off or --no-cassette), so no test replays or records",
            CassetteMode::ENV
        ));
    }
    if !filters.is_empty() || args.filter.is_some() || !args.skip.is_empty() {
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

/// Prunes: keeps the recordings of the trials skipped on purpose (`(cassette, trial)` pairs), drops
/// every other unused one of this test target, removes this target's recordings from the cassette files
/// no trial opened (and a file left empty), and prints each change with paths relative to `root`.
/// Other targets' recordings stay. It refuses, changing nothing, where it cannot tell whose a
/// recording is: one that names no target (unless `claim`: then they are this target's), or a file no
/// trial opened that does not parse. Returns whether every change succeeded.
pub(crate) fn prune(
    store: &CassetteStore,
    skipped: &[(String, String)],
    root: &Path,
    claim: bool,
) -> bool {
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
    let Some(target) = store.target() else {
        eprintln!(
            "error: --prune-cassettes refused: this process cannot tell which test target it is (its \
             executable has no name), so it cannot tell its recordings from another target's; nothing \
             was pruned"
        );
        return false;
    };
    let blockers = match store.blockers() {
        Ok(blockers) => blockers,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("error: --prune-cassettes stopped; nothing was pruned");
            return false;
        }
    };
    let mut unattributed = Vec::new();
    let mut unreadable = 0;
    for (path, blocker) in blockers {
        match blocker {
            Blocker::Unattributed(n) => unattributed.push((display_path(&path, root), n)),
            Blocker::Unreadable(e) => {
                eprintln!("error: {e}");
                unreadable += 1;
            }
        }
    }
    if unreadable > 0 {
        eprintln!(
            "error: --prune-cassettes refused: {unreadable} cassette file(s) that no test of `{target}` \
             opened do not parse (above), so it cannot tell whose recordings they hold; nothing was pruned"
        );
        return false;
    }
    if !claim && !unattributed.is_empty() {
        let dir = display_path(store.dir(), root);
        eprintln!(
            "error: --prune-cassettes refused: {}; nothing was pruned",
            unattributed_refusal(target, &dir, &unattributed)
        );
        return false;
    }
    for (path, result) in store.prune_all(claim) {
        let shown = display_path(&path, root);
        match result {
            Ok(Pruned {
                removed, claimed, ..
            }) if removed + claimed == 0 => {}
            Ok(Pruned {
                removed,
                kept,
                claimed,
                ..
            }) => {
                if removed > 0 {
                    eprintln!("pruned {removed} unused recording(s) from {shown} ({kept} kept)");
                }
                if claimed > 0 {
                    eprintln!("{}", claimed_line(claimed, &shown, target));
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    match store.prune_unopened(claim) {
        Ok(changed) => {
            for (path, result) in changed {
                let shown = display_path(&path, root);
                match result {
                    Ok(Pruned {
                        removed,
                        deleted: true,
                        ..
                    }) => eprintln!("removed {shown} ({removed} recording(s); no test uses it)"),
                    Ok(Pruned { removed, kept, .. }) => eprintln!(
                        "pruned {removed} recording(s) of `{target}` from {shown}: no test of it uses them \
                         ({kept} of other targets kept)"
                    ),
                    Err(e) => {
                        eprintln!("error: {e}");
                        ok = false;
                    }
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ok = false;
        }
    }
    ok
}

/// `--claim-cassettes` without a prune: the recordings that name no target and that this run replayed
/// are rewritten naming this target. Returns whether every file was written.
pub(crate) fn claim(store: &CassetteStore, root: &Path) -> bool {
    let Some(target) = store.target() else {
        eprintln!(
            "error: --claim-cassettes: this process cannot tell which test target it is (its executable \
             has no name); nothing was claimed"
        );
        return false;
    };
    let mut ok = true;
    for (path, result) in store.claim_all() {
        match result {
            Ok(claimed) => eprintln!(
                "{}",
                claimed_line(claimed, &display_path(&path, root), target)
            ),
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    ok
}

fn claimed_line(claimed: usize, shown: &str, target: &str) -> String {
    format!("claimed {claimed} recording(s) in {shown} for `{target}` (they named no test target)")
}

/// Why recordings that name no target (`(file, how many)`, shown relative to the crate root) keep
/// `target` from pruning, and the two ways out.
fn unattributed_refusal(target: &str, dir: &str, unattributed: &[(String, usize)]) -> String {
    const SHOWN: usize = 5;
    let count: usize = unattributed.iter().map(|(_, n)| n).sum();
    let mut files = unattributed[..unattributed.len().min(SHOWN)]
        .iter()
        .map(|(file, _)| file.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if unattributed.len() > SHOWN {
        files.push_str(&format!(", and {} more", unattributed.len() - SHOWN));
    }
    format!(
        "{count} recording(s) in {} file(s) ({files}) name no test target (they were recorded before \
         cassettes named the target that records them), so `{target}` cannot tell whether another target \
         uses them. If `{target}` is the only test target recording into {dir}, claim them and prune: \
         `{}`; otherwise first run each other target once with `{}`, so that what it replays names it",
        unattributed.len(),
        Commands::new(Some(target)).claim(true),
        Commands::claim_for_another(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libtest-mimic's arguments and the name filters, as the harness splits them.
    fn args(argv: &[&str]) -> (Arguments, Vec<String>) {
        let argv = std::iter::once("prompts").chain(argv.iter().copied());
        let (rest, filters) =
            crate::harness::settings::take_filters(argv.map(String::from).collect());
        (Arguments::from_iter(rest), filters)
    }

    #[test]
    fn recordings_that_name_no_target_are_refused_with_the_two_ways_out() {
        let files: Vec<(String, usize)> = (1..=7)
            .map(|i| (format!("prompt-tests/cassettes/t{i}.cassette.json"), i))
            .collect();
        let shown = unattributed_refusal("agents", "prompt-tests/cassettes", &files);
        assert!(
            shown.starts_with(
                "28 recording(s) in 7 file(s) (prompt-tests/cassettes/t1.cassette.json, "
            ) && shown.contains("t5.cassette.json, and 2 more) name no test target"),
            "{shown}"
        );
        assert!(
            shown.contains(
                "If `agents` is the only test target recording into prompt-tests/cassettes, claim them \
                 and prune: `cargo test --test agents -- --prune-cassettes --claim-cassettes`; otherwise \
                 first run each other target once with `cargo test --test <target> -- --claim-cassettes`"
            ),
            "{shown}"
        );
    }

    #[test]
    fn only_a_plain_run_with_cassettes_may_prune() {
        let (plain, none) = args(&[]);
        for mode in [
            CassetteMode::Auto,
            CassetteMode::Replay,
            CassetteMode::Record,
        ] {
            assert_eq!(refusal_before_run(mode, &plain, &none), None, "{mode:?}");
        }
        let refused = |mode, argv: &[&str]| {
            let (args, filters) = args(argv);
            refusal_before_run(mode, &args, &filters).unwrap()
        };
        assert!(refused(CassetteMode::Off, &[]).contains("cassettes are off"));
        assert!(refused(CassetteMode::Auto, &["greet"]).contains("no filter"));
        assert!(refused(CassetteMode::Auto, &["greet", "other"]).contains("no filter"));
        assert!(refused(CassetteMode::Auto, &["--skip", "greet"]).contains("no --skip"));
        assert!(refused(CassetteMode::Auto, &["--ignored"]).starts_with("--ignored "));
        assert!(
            refused(CassetteMode::Record, &["--include-ignored"]).starts_with("--include-ignored")
        );
    }
}
