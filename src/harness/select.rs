//! Which trials a command line runs: a pure function of the trials' names and the libtest arguments.
//!
//! A numbered run (`t::run_3`) is ignored unless named, so that a plain run makes N calls, not 2N; a
//! filter that names a single run (and not its whole test) runs it; with `--include-ignored` a test's
//! aggregate trial takes the N samples, so its numbered runs report "covered by the aggregate trial".

use std::collections::HashSet;

use libtest_mimic::{Arguments, Trial};

use crate::trial_name;

/// A trial as the selection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed<'a> {
    /// Its name.
    pub name: &'a str,
    /// The trial it is a numbered run of.
    pub parent: Option<&'a str>,
    /// Ignored unless asked for.
    pub ignored: bool,
}

/// What the command line does with one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Not listed at all: a filter that cuts its run number (`t::run_1` does not select `t::run_10`).
    Dropped,
    /// Filtered out by name or `--skip`.
    FilteredOut,
    /// Listed, and libtest reports it ignored without running it.
    Ignored,
    /// Runs.
    Runs,
    /// Runs as "ignored: covered by the aggregate trial", without a call: its test's aggregate trial
    /// runs in the same process.
    Covered,
}

/// The decision for one trial: its fate, and the ignored flag libtest is given (it decides `--list
/// --ignored` and how `--ignored` selects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// What happens to it.
    pub fate: Fate,
    /// libtest's ignored flag.
    pub ignored_flag: bool,
}

/// The decision for each trial of `trials`, in order.
pub fn select(trials: &[Listed<'_>], args: &Arguments) -> Vec<Choice> {
    let filter_matches = |name: &str| match &args.filter {
        Some(f) if args.exact => name == f,
        Some(f) => name.contains(f.as_str()),
        None => false,
    };
    let run_ignored = args.ignored || args.include_ignored;
    // libtest matches substrings, so `name::run_1` would also select `run_10`..`run_19`: a numbered
    // run the filter matches only up to the middle of its number is dropped.
    let dropped = |t: &Listed<'_>| match args.filter.as_deref().filter(|_| !args.exact) {
        Some(filter) => t.parent.is_some() && !trial_name::selects_whole_number(t.name, filter),
        None => false,
    };
    let flags: Vec<bool> = trials
        .iter()
        .map(|t| {
            // A filter that names a single run (and not its whole test) runs it.
            let named = t
                .parent
                .is_some_and(|p| filter_matches(t.name) && !filter_matches(p));
            t.ignored && (run_ignored || !named)
        })
        .collect();
    // Whether libtest-mimic runs a trial of this name and flag (its own filter, on a stand-in).
    // libtest-mimic's own filter decides, asked once per trial.
    let filtered: Vec<bool> = trials
        .iter()
        .zip(&flags)
        .map(|(t, &ignored)| {
            let probe = Trial::test(t.name, || Ok(())).with_ignored_flag(ignored);
            args.is_filtered_out(&probe)
        })
        .collect();
    let runs_here = |filtered_out: bool, ignored: bool| !filtered_out && (!ignored || run_ignored);
    let aggregates_here: HashSet<&str> = trials
        .iter()
        .zip(flags.iter().zip(&filtered))
        .filter(|(t, (ignored, filtered_out))| {
            !dropped(t) && t.parent.is_none() && runs_here(**filtered_out, **ignored)
        })
        .map(|(t, _)| t.name)
        .collect();
    trials
        .iter()
        .zip(flags.into_iter().zip(filtered))
        .map(|(t, (ignored_flag, filtered_out))| {
            let fate = if dropped(t) {
                Fate::Dropped
            } else if filtered_out {
                Fate::FilteredOut
            } else if !runs_here(filtered_out, ignored_flag) {
                Fate::Ignored
            } else if t.parent.is_some_and(|p| aggregates_here.contains(p)) {
                Fate::Covered
            } else {
                Fate::Runs
            };
            Choice { fate, ignored_flag }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIALS: [Listed<'static>; 5] = [
        Listed {
            name: "t",
            parent: None,
            ignored: false,
        },
        Listed {
            name: "t::run_1",
            parent: Some("t"),
            ignored: true,
        },
        Listed {
            name: "t::run_10",
            parent: Some("t"),
            ignored: true,
        },
        Listed {
            name: "u",
            parent: None,
            ignored: false,
        },
        Listed {
            name: "live",
            parent: None,
            ignored: true,
        },
    ];

    fn fates(args: &[&str]) -> Vec<Fate> {
        let args = Arguments::from_iter(std::iter::once("prog").chain(args.iter().copied()));
        select(&TRIALS, &args).into_iter().map(|c| c.fate).collect()
    }

    #[test]
    fn the_selection_as_a_table() {
        use Fate::*;
        let table: [(&[&str], [Fate; 5]); 7] = [
            (&[], [Runs, Ignored, Ignored, Runs, Ignored]),
            (&["t"], [Runs, Ignored, Ignored, FilteredOut, FilteredOut]),
            // A filter naming one run runs it alone, and does not select run_10.
            (
                &["t::run_1"],
                [FilteredOut, Runs, Dropped, FilteredOut, FilteredOut],
            ),
            (
                &["--exact", "t::run_10"],
                [FilteredOut, FilteredOut, Runs, FilteredOut, FilteredOut],
            ),
            (&["--ignored"], [FilteredOut, Runs, Runs, FilteredOut, Runs]),
            // The aggregate takes the samples: its numbered runs are covered.
            (&["--include-ignored"], [Runs, Covered, Covered, Runs, Runs]),
            (
                &["--skip", "t"],
                [FilteredOut, FilteredOut, FilteredOut, Runs, Ignored],
            ),
        ];
        for (args, want) in table {
            assert_eq!(fates(args), want, "{args:?}");
        }
    }

    #[test]
    fn a_named_run_is_not_flagged_ignored() {
        let args = Arguments::from_iter(["prog", "t::run_1"]);
        let choices = select(&TRIALS, &args);
        assert!(!choices[1].ignored_flag);
        assert!(choices[4].ignored_flag);
    }
}
