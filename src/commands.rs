//! The commands that messages tell the user to run, from one value that knows the test target's name.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

/// The test target's name when the process cannot tell its own: the one the README sets up.
pub const DEFAULT_TARGET: &str = "prompts";

/// Reviews the pending recordings, one screen each.
pub const REVIEW: &str = "cargo prompt-tester review";

/// The commands of one run, for the test target it is (`cargo test --test <target> -- ...`): read
/// once with the run's settings, from the running binary's name (`cassette::owner::this_target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commands {
    target: String,
}

impl Default for Commands {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Commands {
    /// The commands of test target `target` (`None`: the process cannot tell it, so the README's
    /// `prompts`).
    pub fn new(target: Option<&str>) -> Self {
        Self {
            target: target.unwrap_or(DEFAULT_TARGET).to_string(),
        }
    }

    /// The test target's name, as `cargo test --test` takes it.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// `cargo test --test <target> -- <args>`.
    fn cargo_test(&self, args: &str) -> String {
        format!("cargo test --test {} -- {args}", self.target)
    }

    /// Records the tests `filter` selects, with the keys to set first when they are missing.
    pub fn record(&self, filter: &str, missing_keys: &[&str]) -> String {
        let keys: String = missing_keys
            .iter()
            .map(|var| format!("{var}=... "))
            .collect();
        format!(
            "{keys}PROMPT_TESTER_CASSETTE=record {}",
            self.cargo_test(filter)
        )
    }

    /// Re-runs exactly one trial.
    pub fn rerun(&self, trial: &str) -> String {
        self.cargo_test(&format!("--exact {}", shell_word(trial)))
    }

    /// Writes the JSON report of a run to `path` (a baseline for `--baseline`).
    pub fn report(&self, path: &str) -> String {
        self.cargo_test(&format!("--report {path}"))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_name_the_target_the_filter_and_the_missing_key() {
        let prompts = Commands::default();
        assert_eq!(
            prompts.record("quick_start", &["OPENAI_API_KEY"]),
            "OPENAI_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- quick_start"
        );
        assert_eq!(
            prompts.record("a", &[]),
            "PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- a"
        );
        assert_eq!(
            prompts.rerun("a::b"),
            "cargo test --test prompts -- --exact a::b"
        );
        assert_eq!(
            prompts.report("r.json"),
            "cargo test --test prompts -- --report r.json"
        );
        assert_eq!(
            prompts.rerun("s::c[fake/a|v1]"),
            "cargo test --test prompts -- --exact 's::c[fake/a|v1]'"
        );
        assert_eq!(
            prompts.rerun("it's"),
            r"cargo test --test prompts -- --exact 'it'\''s'"
        );
    }

    /// A target named otherwise is named in every command.
    #[test]
    fn every_command_names_the_target_it_was_made_for() {
        let evals = Commands::new(Some("evals"));
        assert_eq!(evals.target(), "evals");
        for command in [
            evals.record("a", &[]),
            evals.rerun("a"),
            evals.report("PATH"),
        ] {
            assert!(command.contains("cargo test --test evals -- "), "{command}");
            assert!(!command.contains("prompts"), "{command}");
        }
    }
}
