//! The report files of a run rendered from its records (JUnit, JSON, HTML): by a `cargo test` run at
//! its end, and by `cargo prompt-tester report` from a results folder.

use std::path::{Path, PathBuf};

use crate::calibration::after_run::CalibrationReport;
use crate::record::TrialRecord;
use crate::report::{self as report, html};
use serde::{Deserialize, Serialize};

/// Report paths asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Asked {
    /// JUnit XML.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junit: Option<PathBuf>,
    /// The JSON report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<PathBuf>,
    /// The HTML report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<PathBuf>,
}

impl From<&crate::harness::settings::Reports> for Asked {
    fn from(reports: &crate::harness::settings::Reports) -> Self {
        Self {
            junit: reports.junit.clone(),
            json: reports.json.clone(),
            html: reports.html.clone(),
        }
    }
}

/// What the report writers are given.
pub(crate) struct Rendered<'a> {
    pub records: &'a [TrialRecord],
    pub calibration: Option<&'a CalibrationReport>,
    /// The crate's labels of its own outputs, for each suite's label-corrected rate.
    pub labels: &'a crate::calibration::corrected::Labels,
    pub extras: &'a html::Extras,
    pub info: &'a html::RunInfo,
}

impl Rendered<'_> {
    /// Writes every report `asked` names; false when one could not be written (each said on stderr).
    pub(crate) fn write(&self, asked: &Asked) -> bool {
        let mut ok = true;
        let mut wrote = |kind: &str, path: &Path, result: std::io::Result<()>| {
            if let Err(e) = result {
                eprintln!(
                    "error: cannot write the {kind} report {}: {e}",
                    path.display()
                );
                ok = false;
            }
        };
        if let Some(path) = &asked.junit {
            wrote("JUnit", path, report::write_junit(path, self.records));
        }
        if let Some(path) = &asked.json {
            let budget = self.info.budget.clone();
            wrote(
                "JSON",
                path,
                report::write_json(path, self.records, self.calibration, self.labels, budget),
            );
        }
        if let Some(path) = &asked.html {
            wrote(
                "HTML",
                path,
                html::write_html(path, self.records, self.info, self.extras),
            );
        }
        ok
    }
}

/// The commit the run tested: `git rev-parse` in the crate root; `None` outside git.
pub(crate) fn git_commit(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}
