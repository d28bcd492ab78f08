//! The HTML report scenario: the report (`--html`) of a synthetic 1,000-trial, 5-sample run, written
//! in process; its size and the time to write it. (`html_report`)

use std::time::Instant;

use serde_json::json;

use crate::Bench;
use crate::big_report;
use crate::common::ms;
use crate::results::{Figure, Report, Target};

/// Trials and samples of the synthetic run whose HTML report is measured.
pub(crate) const HTML_TRIALS: usize = 1000;
pub(crate) const HTML_SAMPLES: u32 = 5;

impl Bench {
    /// Writes the HTML report of a synthetic run: how big, how long.
    pub(crate) fn html(&self) -> Result<Report, String> {
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
        let figures = vec![
            Figure::new("html_report_mb", bytes as f64 / 1e6, 2)
                .note(format!("({HTML_TRIALS}x{HTML_SAMPLES})")),
            Figure::new("html_report_write_ms", ms(write), 0)
                .target(Target::Below(1000.0))
                .json_at("html_report.write_ms", 1),
        ];
        let report = json!({ "trials": HTML_TRIALS, "samples": HTML_SAMPLES, "bytes": bytes });
        Ok(Report::new("html", figures).data("html_report", report))
    }
}
