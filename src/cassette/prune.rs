//! `--prune-cassettes`: after a run that replayed or recorded every test that can run, drop this test
//! target's recordings no test used and the cassette files no test opened that held only its own. Any
//! other run cannot tell an unused recording from one it did not get to, so it refuses (one line on
//! stderr, a failing exit code) and changes nothing. Then the media files no cassette names go.

use std::path::Path;

use libtest_mimic::Arguments;

use crate::cassette::{CassetteMode, CassetteStore, Pruned};
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
/// Other targets' recordings stay, and those that name no target. It refuses, changing nothing, when
/// a file no trial opened does not parse. Returns whether every change succeeded.
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
    let Some(target) = store.target() else {
        eprintln!(
            "error: --prune-cassettes refused: this process cannot tell which test target it is (its \
             executable has no name), so it cannot tell its recordings from another target's; nothing \
             was pruned"
        );
        return false;
    };
    let unreadable = match store.unreadable() {
        Ok(unreadable) => unreadable,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("error: --prune-cassettes stopped; nothing was pruned");
            return false;
        }
    };
    if !unreadable.is_empty() {
        for e in &unreadable {
            eprintln!("error: {e}");
        }
        eprintln!(
            "error: --prune-cassettes refused: {} cassette file(s) that no test of `{target}` opened do \
             not parse (above), so it cannot tell whose recordings they hold; nothing was pruned",
            unreadable.len()
        );
        return false;
    }
    for (path, result) in store.prune_all() {
        let shown = display_path(&path, root);
        match result {
            Ok(Pruned { removed: 0, .. }) => {}
            Ok(Pruned { removed, kept, .. }) => {
                eprintln!("pruned {removed} unused recording(s) from {shown} ({kept} kept)")
            }
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    match store.prune_unopened() {
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
    // Media only after every recording pruned cleanly: a failed prune may leave names it meant to drop.
    if ok {
        match store.prune_media() {
            Ok(removed) if removed.is_empty() => {}
            Ok(removed) => {
                for path in &removed {
                    eprintln!(
                        "removed {} (no cassette names it)",
                        display_path(path, root)
                    );
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    ok
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
