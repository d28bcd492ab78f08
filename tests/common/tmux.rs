//! `cargo prompt-tester review` in a real terminal: a tmux session on a private server per test, the
//! screen read with `capture-pane`, keys typed with `send-keys`. Shared by the review's tests and the
//! suites' (a review whose labels a later run uses); included with `#[path]`, beside a `prereq` module
//! at the crate root.
// Each test target uses part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use prompt_tester_testkit::child::Child;

/// A tmux server of its own running the review in `root`, killed (and its socket removed) when
/// dropped.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// `cargo prompt-tester review` (the subcommand's `binary`) in the crate at `root`, in a 120 x 60
    /// terminal; `None` (after saying so) without tmux.
    pub fn review(test: &str, root: &Path, binary: &Path) -> Option<Self> {
        if Command::new("tmux").arg("-V").output().is_err() {
            crate::prereq::missing(
                test,
                "tmux is not installed",
                "install it (`apt-get install tmux`): the review is tested in a real terminal",
            );
            return None;
        }
        // A server per session: one started on the socket of a server being killed may die with it.
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let socket =
            std::env::temp_dir().join(format!("pt-review-tmux-{}-{n}", std::process::id()));
        // The pane stays after the review ends, to show what it printed and its exit code.
        let script = format!(
            "'{}' prompt-tester review; echo \"[review exited $?]\"; sleep 300",
            binary.display()
        );
        let tmux = Self { socket };
        let run = tmux
            .command()
            .args([
                "new-session",
                "-d",
                "-s",
                "review",
                "-x",
                "120",
                "-y",
                "60",
                "-c",
            ])
            .args([root.as_os_str(), script.as_ref()])
            .run();
        run.assert_success();
        Some(tmux)
    }

    /// tmux on this test's server, with a clean environment (and not nested in the developer's tmux).
    fn command(&self) -> Child {
        Child::new("tmux")
            .env_remove("TMUX")
            .env_remove("CARGO_MANIFEST_DIR")
            .args([
                OsStr::new("-f"),
                OsStr::new("/dev/null"),
                OsStr::new("-S"),
                self.socket.as_os_str(),
            ])
    }

    /// What the terminal shows now.
    pub fn screen(&self) -> String {
        let run = self
            .command()
            .args(["capture-pane", "-p", "-t", "review"])
            .run();
        run.assert_success();
        run.stdout()
    }

    /// The screen once it shows every one of `parts`; panics with the screen after 20 s.
    #[track_caller]
    pub fn wait_for(&self, parts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if parts.iter().all(|p| screen.contains(p)) {
                return screen;
            }
            if Instant::now() > deadline {
                let missing: Vec<_> = parts.iter().filter(|p| !screen.contains(*p)).collect();
                panic!("the screen never showed {missing:?}:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` (literally).
    pub fn send(&self, keys: &str) {
        self.command()
            .args(["send-keys", "-t", "review", "-l", keys])
            .run()
            .assert_success();
    }

    /// Types each of `keys` once the review shows the sample it is for (the first at sample 1, the
    /// next at sample 2, ...), then waits for the review to end: the screen it ends on.
    #[track_caller]
    pub fn type_until_the_end(&self, keys: &[&str]) -> String {
        for (i, key) in keys.iter().enumerate() {
            self.wait_for(&[&format!("pending {} of ", i + 1)]);
            self.send(key);
        }
        self.wait_for(&["[review exited 0]"])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().args(["kill-server"]).run();
        let _ = std::fs::remove_file(&self.socket);
    }
}
