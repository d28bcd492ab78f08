//! The live progress line on stderr: trials done of total, calls in flight, made and replayed, failures
//! and cost so far, elapsed time.
//!
//! libtest writes its `test name ... ok` lines to stdout, where a progress bar would garble them, so the
//! line is drawn only where it cannot: stderr is a terminal and stdout is not (redirected), or libtest's
//! per-test lines are off (`--format terse`, `-q`). Never for `--list`, `--format json`, under nextest
//! or under CI ([`shows`] decides; the rest is I/O). Without the `progress` feature (indicatif) it is
//! never drawn.

use std::sync::Arc;
#[cfg(feature = "progress")]
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(feature = "progress")]
use std::time::Duration;

#[cfg(feature = "progress")]
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use libtest_mimic::FormatSetting;

use crate::engine::{CallEnd, CallEvent};
#[cfg(feature = "progress")]
use crate::record::Status;
use crate::record::TrialRecord;

/// Where the run's output goes and how libtest was asked to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Console {
    /// stderr is a terminal.
    pub stderr_terminal: bool,
    /// stdout is a terminal.
    pub stdout_terminal: bool,
    /// `--format` (pretty when not given).
    pub format: Option<FormatSetting>,
    /// `-q` / `--quiet`.
    pub quiet: bool,
    /// `--list`.
    pub list: bool,
    /// nextest runs this process.
    pub nextest: bool,
    /// `CI` is set.
    pub ci: bool,
    /// The run's log writes to stderr (`harness::log`): a redrawn line would cut its lines.
    pub logging: bool,
}

impl Console {
    /// The console of this process, as libtest's arguments describe it, under nextest or CI or not.
    pub fn of(args: &libtest_mimic::Arguments, nextest: bool, ci: bool) -> Self {
        use std::io::IsTerminal;
        Self {
            stderr_terminal: std::io::stderr().is_terminal(),
            stdout_terminal: std::io::stdout().is_terminal(),
            format: args.format,
            quiet: args.quiet,
            list: args.list,
            nextest,
            ci,
            logging: false,
        }
    }
}

/// The run's calls as they happen: under way, made, replayed, failed.
#[derive(Debug, Default)]
pub struct CallCounts {
    in_flight: AtomicUsize,
    made: AtomicU64,
    replayed: AtomicU64,
    failed: AtomicU64,
}

impl CallCounts {
    /// Counts one call event.
    pub fn count(&self, event: CallEvent) {
        match event {
            CallEvent::Started(_) => {
                self.in_flight.fetch_add(1, Ordering::Relaxed);
            }
            CallEvent::Finished(_, end) => {
                self.in_flight.fetch_sub(1, Ordering::Relaxed);
                let counter = match end {
                    CallEnd::Made => &self.made,
                    CallEnd::Replayed => &self.replayed,
                    CallEnd::Failed => &self.failed,
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Calls under way now.
    #[cfg_attr(not(any(feature = "progress", test)), allow(dead_code))]
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Calls that ended so far: (made, replayed, failed).
    #[cfg_attr(not(any(feature = "progress", test)), allow(dead_code))]
    pub fn ended(&self) -> (u64, u64, u64) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        (load(&self.made), load(&self.replayed), load(&self.failed))
    }
}

/// Whether the progress line is drawn.
#[cfg_attr(not(feature = "progress"), allow(dead_code))]
pub fn shows(c: &Console) -> bool {
    if c.list || c.nextest || c.ci || c.logging || !c.stderr_terminal {
        return false;
    }
    let per_test_lines = match c.format {
        Some(FormatSetting::Json) => return false,
        Some(FormatSetting::Terse) => false,
        Some(FormatSetting::Pretty) | None => !c.quiet,
    };
    !c.stdout_terminal || !per_test_lines
}

/// The drawn line: trials done of total, and failures and cost so far.
#[cfg(feature = "progress")]
pub struct Line {
    bar: ProgressBar,
    so_far: Mutex<(u64, f64)>,
}

/// Without the `progress` feature there is no line to draw.
#[cfg(not(feature = "progress"))]
pub struct Line;

#[cfg(not(feature = "progress"))]
impl Line {
    /// Never drawn without the `progress` feature.
    pub fn start(_console: &Console, _total: u64, _calls: Arc<CallCounts>) -> Option<Self> {
        None
    }

    /// Nothing to count.
    pub fn trial_done(&self, _record: &TrialRecord) {}

    /// Nothing to remove.
    pub fn finish(&self) {}
}

#[cfg(feature = "progress")]
impl Line {
    /// Starts the line for `total` trials, when [`shows`] says so, with the run's `calls` in flight.
    pub fn start(console: &Console, total: u64, calls: Arc<CallCounts>) -> Option<Self> {
        if !shows(console) {
            return None;
        }
        let style =
            ProgressStyle::with_template("{bar:24} {pos}/{len} trials, {calls}, {msg}, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key(
                    "calls",
                    move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let (made, replayed, _) = calls.ended();
                        let in_flight = calls.in_flight();
                        let _ = write!(
                            w,
                            "{in_flight} calls in flight, {made} made, {replayed} replayed"
                        );
                    },
                );
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(style);
        bar.set_message(words(0, 0.0));
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(Self {
            bar,
            so_far: Mutex::new((0, 0.0)),
        })
    }

    /// Counts a finished trial.
    pub fn trial_done(&self, record: &TrialRecord) {
        let mut so_far = self.so_far.lock().unwrap_or_else(|e| e.into_inner());
        so_far.0 += u64::from(matches!(record.status, Status::Failed | Status::Errored));
        so_far.1 += record.usage.total().cost.priced_usd();
        self.bar.set_message(words(so_far.0, so_far.1));
        self.bar.inc(1);
    }

    /// Removes the line before the summary is printed.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(feature = "progress")]
fn words(failed: u64, usd: f64) -> String {
    format!("{failed} failed, ${usd:.4}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_only_where_it_cannot_garble_libtest_or_logs() {
        let redirected = Console {
            stderr_terminal: true,
            ..Console::default()
        };
        assert!(shows(&redirected), "stdout redirected, stderr a terminal");
        let both = Console {
            stdout_terminal: true,
            ..redirected
        };
        assert!(!shows(&both), "per-test lines on the same terminal");
        assert!(shows(&Console {
            quiet: true,
            ..both
        }));
        assert!(shows(&Console {
            format: Some(FormatSetting::Terse),
            ..both
        }));
        for off in [
            Console {
                stderr_terminal: false,
                ..redirected
            },
            Console {
                list: true,
                ..redirected
            },
            Console {
                nextest: true,
                ..redirected
            },
            Console {
                ci: true,
                ..redirected
            },
            Console {
                logging: true,
                ..redirected
            },
            Console {
                format: Some(FormatSetting::Json),
                ..redirected
            },
            Console {
                format: Some(FormatSetting::Json),
                quiet: true,
                ..both
            },
        ] {
            assert!(!shows(&off), "{off:?}");
        }
    }
}
