//! Where the Markdown summary goes: `--markdown PATH` or `PROMPT_TESTER_MARKDOWN` (a file, or `off`),
//! and GitHub's step summary (`GITHUB_STEP_SUMMARY`).

use std::path::PathBuf;

/// What `--markdown` or `PROMPT_TESTER_MARKDOWN` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkdownSetting {
    /// `off`: no summary, not even in GitHub's step summary.
    Off,
    /// The file to write the summary to.
    File(PathBuf),
}

impl MarkdownSetting {
    /// `off`, or the path of a file. A word that reads as a switch (`on`, `true`, `1`, `false`, `0`,
    /// `no`, `none`) is an error: it would otherwise name a file.
    pub fn parse(value: &str) -> Result<Self, &'static str> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(Self::Off),
            "on" | "yes" | "true" | "1" | "no" | "none" | "false" | "0" => Err(
                "is not a path: give the file to write the Markdown summary to (./NAME for a file so \
                 named), or off for no summary at all, not even in GITHUB_STEP_SUMMARY",
            ),
            _ => Ok(Self::File(PathBuf::from(value.trim()))),
        }
    }
}

/// Where the Markdown summary goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markdown {
    /// The file to write it to: `--markdown PATH` / `PROMPT_TESTER_MARKDOWN=PATH`.
    pub file: Option<PathBuf>,
    /// The file to append it to: `GITHUB_STEP_SUMMARY`, which GitHub Actions sets.
    pub step_summary: Option<PathBuf>,
}

/// The variable of the Markdown summary.
pub const MARKDOWN: &str = "PROMPT_TESTER_MARKDOWN";

impl Markdown {
    /// Where the summary goes, from the setting, `GITHUB_STEP_SUMMARY` and whether this process is one
    /// of nextest's (each runs one trial: the summary of a nextest run is `cargo prompt-tester
    /// report`'s). A file that is the step summary is appended to, once.
    pub fn resolve(
        setting: Option<MarkdownSetting>,
        step_summary: Option<PathBuf>,
        one_of_nextest: bool,
    ) -> Self {
        let file = match setting {
            Some(MarkdownSetting::Off) => return Self::default(),
            Some(MarkdownSetting::File(path)) => Some(path),
            None => None,
        };
        // The step summary is appended to, never replaced, even when named as the file.
        let file = file.filter(|f| step_summary.as_ref().is_none_or(|s| !same_file(f, s)));
        let step_summary = step_summary.filter(|_| !one_of_nextest);
        Self { file, step_summary }
    }
}

/// Whether two paths name one file: the same as written, or, when both exist, the same file.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}
