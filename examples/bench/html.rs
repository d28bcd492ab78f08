//! The HTML report scenario: the report (`--html`) of a synthetic 1,000-trial, 5-sample run, written
//! in process; its size and the time to write it. (`html_report`)

use std::time::{Duration, Instant};

use crate::Bench;
use crate::big_report;

/// The HTML report of a synthetic run.
pub(crate) struct HtmlReport {
    pub(crate) trials: usize,
    pub(crate) samples: u32,
    pub(crate) bytes: u64,
    pub(crate) write: Duration,
}

/// Trials and samples of the synthetic run whose HTML report is measured.
pub(crate) const HTML_TRIALS: usize = 1000;
pub(crate) const HTML_SAMPLES: u32 = 5;

impl Bench {
    /// Writes the HTML report of a synthetic run: how big, how long.
    pub(crate) fn html(&self) -> Result<HtmlReport, String> {
        let records = big_report::records(HTML_TRIALS, HTML_SAMPLES);
        let path = self.base.join("report.html");
        let started = Instant::now();
        prompt_tester::testing::write_html(
            &path,
            &records,
            &prompt_tester::testing::RunInfo::default(),
            &prompt_tester::testing::Extras::default(),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let write = started.elapsed();
        let bytes = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        Ok(HtmlReport {
            trials: HTML_TRIALS,
            samples: HTML_SAMPLES,
            bytes,
            write,
        })
    }
}
