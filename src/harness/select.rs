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

/// How one filter (libtest-mimic's, in `args`) matches one trial, before the aggregates are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Match {
    /// A filter that cuts its run number.
    dropped: bool,
    /// libtest's ignored flag.
    ignored_flag: bool,
    /// Filtered out by name or `--skip`.
    filtered_out: bool,
}

impl Match {
    /// How far it gets: dropped, filtered out, listed, run. Of several filters the farthest wins.
    fn reach(&self, run_ignored: bool) -> u8 {
        match (self.dropped, self.filtered_out) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) if self.ignored_flag && !run_ignored => 2,
            (false, false) => 3,
        }
    }
}

/// The decision for each trial of `trials`, in order. `filters` are the command line's name filters
/// when there are several (libtest runs a trial any of them matches; `args.filter` is then none and a
/// trial none matches is dropped); with one or none, `args.filter` says.
pub fn select(trials: &[Listed<'_>], args: &Arguments, filters: &[String]) -> Vec<Choice> {
    let run_ignored = args.ignored || args.include_ignored;
    let matches = if filters.len() > 1 {
        let per_filter: Vec<Vec<Match>> = filters
            .iter()
            .map(|f| {
                let one = Arguments {
                    filter: Some(f.clone()),
                    ..args.clone()
                };
                matches(trials, &one)
            })
            .collect();
        (0..trials.len())
            .map(|i| {
                let best = per_filter.iter().map(|m| m[i]);
                let best = best
                    .max_by_key(|m| m.reach(run_ignored))
                    .expect("several filters");
                // libtest-mimic is given no filter: what no filter matches is not listed.
                Match {
                    dropped: best.dropped || best.filtered_out,
                    ..best
                }
            })
            .collect()
    } else {
        matches(trials, args)
    };
    let runs_here = |m: &Match| !m.filtered_out && (!m.ignored_flag || run_ignored);
    let aggregates_here: HashSet<&str> = trials
        .iter()
        .zip(&matches)
        .filter(|(t, m)| !m.dropped && t.parent.is_none() && runs_here(m))
        .map(|(t, _)| t.name)
        .collect();
    trials
        .iter()
        .zip(matches)
        .map(|(t, m)| {
            let fate = if m.dropped {
                Fate::Dropped
            } else if m.filtered_out {
                Fate::FilteredOut
            } else if !runs_here(&m) {
                Fate::Ignored
            } else if t.parent.is_some_and(|p| aggregates_here.contains(p)) {
                Fate::Covered
            } else {
                Fate::Runs
            };
            Choice {
                fate,
                ignored_flag: m.ignored_flag,
            }
        })
        .collect()
}

/// How `args` (with at most one filter) matches each trial.
fn matches(trials: &[Listed<'_>], args: &Arguments) -> Vec<Match> {
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
    trials
        .iter()
        .map(|t| {
            // A filter that names a single run (and not its whole test) runs it.
            let named = t
                .parent
                .is_some_and(|p| filter_matches(t.name) && !filter_matches(p));
            let ignored_flag = t.ignored && (run_ignored || !named);
            // libtest-mimic's own filter decides, asked once per trial (on a stand-in).
            let probe = Trial::test(t.name, || Ok(())).with_ignored_flag(ignored_flag);
            Match {
                dropped: dropped(t),
                ignored_flag,
                filtered_out: args.is_filtered_out(&probe),
            }
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
        let argv = std::iter::once("prog").chain(args.iter().copied());
        let (rest, filters) =
            super::super::settings::take_filters(argv.map(String::from).collect());
        let mut args = Arguments::from_iter(rest);
        if let [one] = filters.as_slice() {
            args.filter = Some(one.clone());
        }
        select(&TRIALS, &args, &filters)
            .into_iter()
            .map(|c| c.fate)
            .collect()
    }

    #[test]
    fn the_selection_as_a_table() {
        use Fate::*;
        let table: [(&[&str], [Fate; 5]); 12] = [
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
            // Several filters: a trial any of them matches, the others not listed.
            (
                &["t::run_10", "live"],
                [Dropped, Dropped, Runs, Dropped, Ignored],
            ),
            (
                &["--exact", "t::run_10", "u"],
                [Dropped, Dropped, Runs, Runs, Dropped],
            ),
            (
                &["t::run_1", "liv"],
                [Dropped, Runs, Dropped, Dropped, Ignored],
            ),
            // The aggregate one filter runs covers the run another names.
            (
                &["--include-ignored", "t::run_1", "t"],
                [Runs, Covered, Covered, Dropped, Dropped],
            ),
            (
                &["t", "liv", "--skip", "liv"],
                [Runs, Ignored, Ignored, Dropped, Dropped],
            ),
        ];
        for (args, want) in table {
            assert_eq!(fates(args), want, "{args:?}");
        }
    }

    #[test]
    fn a_named_run_is_not_flagged_ignored() {
        let args = Arguments::from_iter(["prog", "t::run_1"]);
        let choices = select(&TRIALS, &args, &[]);
        assert!(!choices[1].ignored_flag);
        assert!(choices[4].ignored_flag);
    }
}
