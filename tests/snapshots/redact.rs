//! What varies between two runs of the same fixed run, replaced by a fixed mark before the comparison.
//! Each rule says what it replaces and why; every other byte is compared as written.

use std::path::Path;

use regex::Regex;

/// A file's redaction: its text and the scratch crate's folder.
pub type Redaction = fn(&str, &Path) -> String;

/// The scratch crate's folder: its path holds the test process's id.
fn root(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "[ROOT]")
}

/// The value of every `"key": value` in a JSON text (pretty or compact) replaced by `mark`.
fn json_values(text: &str, keys: &[&str], mark: &str) -> String {
    let value = format!(
        r#""({})":(\s*)("[^"]*"|-?[0-9][0-9.eE+-]*)"#,
        keys.join("|")
    );
    Regex::new(&value)
        .unwrap()
        .replace_all(text, format!(r#""$1":${{2}}{mark}"#))
        .into_owned()
}

/// A JSON report or the HTML page (whose data is a JSON block; the rest of the page is a constant).
pub fn report(text: &str, at: &Path) -> String {
    let text = root(text, at);
    // When the run and each suite ran (`timestamp`), and the HTML report's `date`.
    let text = json_values(&text, &["timestamp", "date"], "[TIMESTAMP]");
    // How long each trial took (`duration`), and the run's wall time and start (the HTML report's
    // `wall_secs` and `started_unix`): the machine's speed and the clock.
    json_values(
        &text,
        &["duration", "wall_secs", "started_unix"],
        "[SECONDS]",
    )
}

/// A cassette as the recording run wrote it.
pub fn cassette(text: &str, at: &Path) -> String {
    let text = root(text, at);
    // When each answer was recorded, and how long the loopback call took.
    let text = json_values(&text, &["recorded_at"], "[TIMESTAMP]");
    json_values(&text, &["latency_ms"], "[MS]")
}

/// The JUnit XML.
pub fn junit(text: &str, at: &Path) -> String {
    let text = root(text, at);
    // Each test case's wall time.
    Regex::new(r#" time="[0-9.]+""#)
        .unwrap()
        .replace_all(&text, r#" time="[SECONDS]""#)
        .into_owned()
}

/// The Markdown summary.
pub fn markdown(text: &str, at: &Path) -> String {
    root(text, at)
}

/// The summary on stderr.
pub fn stderr(text: &str, at: &Path) -> String {
    let text = root(text, at);
    // The run's wall time.
    Regex::new(r"wall time [0-9.]+s")
        .unwrap()
        .replace_all(&text, "wall time [SECONDS]")
        .into_owned()
}

/// What `cargo prompt-tester report` says on stderr.
pub fn report_command(text: &str, at: &Path) -> String {
    let text = stderr(text, at);
    // The results folder it read: named by the run's start time and the process's id.
    Regex::new(r"results/[0-9]{8}T[0-9]{6}Z-[0-9]+")
        .unwrap()
        .replace_all(&text, "results/[RUN]")
        .into_owned()
}
