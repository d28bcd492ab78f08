//! Properties over generated input: every reader of what comes from a file or the network never
//! panics and never loops on any bytes, and its error names the file (and the line, where there is
//! one). `files` drives the readers of the crate's files (suites and their datasets, calibration sets
//! and results, cassettes, baselines, `prompt-tester.toml`, `.env`), `wire` the readers of what a
//! provider or a judge answers. The inputs are valid seeds mutated (`inputs`), plus random bytes.
//!
//! Each property tries `CASES` inputs (`PROPTEST_CASES` sets another number); a failure found is
//! shrunk by proptest, then kept as a named regression test beside the property.

use std::sync::mpsc;
use std::time::Duration;

use proptest::test_runner::Config;

mod files;
mod inputs;
mod media;
mod media_store;
mod wire;

/// Inputs per property: enough to find what these found, few enough for a quick `cargo test`.
const CASES: u32 = 256;

/// The longest one read may take (a debug build on a loaded machine): beyond it, it loops.
const DEADLINE: Duration = Duration::from_secs(20);

/// The properties' configuration: [`CASES`] cases, no regression file written into the repository
/// (failures are kept as named tests instead).
fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(CASES),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

/// What `read` returns, read on a thread of its own: a panic fails the case with its message, and
/// so does a read that has not returned within [`DEADLINE`].
#[track_caller]
fn returns<T: Send + 'static>(what: &str, read: impl FnOnce() -> T + Send + 'static) -> T {
    let (sent, answer) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let _ = sent.send(read());
    });
    match answer.recv_timeout(DEADLINE) {
        Ok(value) => {
            let _ = reader.join();
            value
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not return within {DEADLINE:?}: it loops")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match reader.join() {
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{what} panicked: {message}")
            }
            Ok(()) => unreachable!("the reader sends before it ends"),
        },
    }
}
