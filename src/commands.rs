//! The commands that messages tell the user to run, from one place that knows the test target's name.

/// The prompt tests' cargo test target, as the README sets it up (`cargo test --test prompts`).
pub const TEST_TARGET: &str = "prompts";

/// `cargo test --test prompts -- <args>`.
fn cargo_test(args: &str) -> String {
    format!("cargo test --test {TEST_TARGET} -- {args}")
}

/// Records the tests `filter` selects, with the keys to set first when they are missing.
pub fn record(filter: &str, missing_keys: &[&str]) -> String {
    let keys: String = missing_keys
        .iter()
        .map(|var| format!("{var}=... "))
        .collect();
    format!("{keys}PROMPT_TESTER_CASSETTE=record {}", cargo_test(filter))
}

/// Reviews the pending recordings, one screen each.
pub const REVIEW: &str = "cargo prompt-tester review";

/// Re-runs exactly one trial.
pub fn rerun(trial: &str) -> String {
    cargo_test(&format!("--exact {}", shell_word(trial)))
}

/// `text` as one shell word: quoted when it holds more than name characters (a matrix trial's
/// `[provider/model|variant]`: the bar would be a pipe).
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_:./-".contains(c);
    if text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Claims for test target `target` the recordings that name none (`--claim-cassettes`), and prunes
/// when `prune`. The target is this process's, not always `prompts`.
pub fn claim(target: &str, prune: bool) -> String {
    let prune = if prune { "--prune-cassettes " } else { "" };
    format!("cargo test --test {target} -- {prune}--claim-cassettes")
}

/// Writes the JSON report of a run to `path` (a baseline for `--baseline`).
pub fn report(path: &str) -> String {
    cargo_test(&format!("--report {path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_name_the_target_the_filter_and_the_missing_key() {
        assert_eq!(
            record("quick_start", &["OPENAI_API_KEY"]),
            "OPENAI_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- quick_start"
        );
        assert_eq!(
            record("a", &[]),
            "PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- a"
        );
        assert_eq!(rerun("a::b"), "cargo test --test prompts -- --exact a::b");
        assert_eq!(
            report("r.json"),
            "cargo test --test prompts -- --report r.json"
        );
        assert_eq!(
            rerun("s::c[fake/a|v1]"),
            "cargo test --test prompts -- --exact 's::c[fake/a|v1]'"
        );
        assert_eq!(
            claim("agents", true),
            "cargo test --test agents -- --prune-cassettes --claim-cassettes"
        );
        assert_eq!(
            claim("prompts", false),
            "cargo test --test prompts -- --claim-cassettes"
        );
        assert_eq!(
            rerun("it's"),
            r"cargo test --test prompts -- --exact 'it'\''s'"
        );
    }
}
