//! The prerequisites some of the project's tests need from outside the repository: a local model server
//! (`PROMPT_TESTER_LOCAL_BASE_URL`) and the shared recorded provider responses (`../shared/fixtures`).
//!
//! One rule decides what a missing one does: under CI (`prompt_tester::config::is_ci`, the rule the
//! harness uses) the test fails and says what to provide; otherwise it is skipped with one line written
//! straight to stderr, which libtest does not capture, so the skip shows under a plain `cargo test`.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;

/// The variable that names a local OpenAI-compatible server, `http://127.0.0.1:PORT/v1`.
pub const LOCAL_BASE_URL: &str = "PROMPT_TESTER_LOCAL_BASE_URL";

/// The local server's base URL, if the variable is set (no message: for configuration, not a test).
pub fn local_base_url_var() -> Option<String> {
    std::env::var(LOCAL_BASE_URL)
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// The local server's base URL for `test`; `None` when it is not set, after [`missing`] has spoken.
pub fn local_base_url(test: &str) -> Option<String> {
    let url = local_base_url_var();
    if url.is_none() {
        missing(
            test,
            &format!("{LOCAL_BASE_URL} is not set"),
            &format!(
                "start the local model (`scripts/local-model.sh install`, then `export {LOCAL_BASE_URL}=$(scripts/local-model.sh start)`)"
            ),
        );
    }
    url
}

/// `../shared/fixtures/<sub>` beside the clone, for `test`; `None` when it is absent, after
/// [`missing`] has spoken.
pub fn shared_fixtures(test: &str, sub: &str) -> Option<PathBuf> {
    let dir = prompt_tester_testkit::child::repo_root()
        .join("../shared/fixtures")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    missing(
        test,
        &format!("{} is absent", dir.display()),
        "the recorded provider responses are not part of the repository: put the shared fixtures beside the \
         clone, in ../shared/fixtures",
    );
    None
}

/// A prerequisite of `test` is missing: under CI this panics (the test fails); otherwise it writes one
/// line to stderr and the caller returns.
pub fn missing(test: &str, what: &str, fix: &str) {
    let line = format!("{test}: prerequisite missing: {what}; {fix}");
    if prompt_tester::config::is_ci() {
        panic!("{line}. Under CI a missing prerequisite fails the test.");
    }
    // Not `eprintln!`: libtest captures it and shows it only when the test fails.
    let _ = writeln!(std::io::stderr(), "SKIPPED {line}");
}

/// Chromium and its WebDriver server (Debian's `chromium` and `chromium-driver`) for `test`; `None`
/// when either is not on `PATH`, after [`missing`] has spoken.
pub fn browser(test: &str) -> Option<(PathBuf, PathBuf)> {
    let find = |names: &[&str]| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
            .find(|p| p.is_file())
    };
    let chromium = find(&["chromium", "chromium-browser", "google-chrome"]);
    let driver = find(&["chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        (c, _) => {
            let what = if c.is_none() {
                "chromium"
            } else {
                "chromedriver"
            };
            missing(
                test,
                &format!("{what} is not on PATH"),
                "install a headless browser: `apt-get install -y chromium chromium-driver` (.ci/run does)",
            );
            None
        }
    }
}
