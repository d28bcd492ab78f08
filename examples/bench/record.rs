//! The record scenario: the in-flight scenario's calls recorded into a new cassette at zero latency
//! (`--record`). (`record_entries_per_s`, table only)

use std::time::Duration;

use prompt_tester::testing::cassette::CassetteStore;
use prompt_tester_testkit::Wire;
use serde_json::Value;

use crate::Bench;
use crate::app_calls::TRIALS;
use crate::common::{SUITE, counting_server, expect_passed, expect_requests};
use crate::judge::JUDGE_TRIAL;
use crate::results::{Figure, Report};

impl Bench {
    /// The in-flight scenario's calls recorded into a new cassette at zero latency (`--record`): what
    /// writing recordings costs.
    pub(crate) fn record(&self) -> Result<Report, String> {
        let size = self.options.inflight;
        let entries = size.calls();
        eprintln!("[record] {entries} calls ({size}) recorded at zero latency");
        let server = counting_server(Duration::ZERO);
        let root = self.crate_root("record", &server.base_url(Wire::OpenAi), size)?;
        let run = self.run_child(
            "record",
            &root,
            &[],
            &["--record", "--skip", JUDGE_TRIAL, "--skip", TRIALS],
        )?;
        expect_passed("record", &run, size.cases)?;
        expect_requests("record", &server, entries)?;
        let path = CassetteStore::new(root.join("prompt-tests").join("cassettes")).path_for(SUITE);
        let recorded = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["entries"].as_array().map(Vec::len));
        if recorded != Some(entries) {
            return Err(format!(
                "record: {} holds {recorded:?} entries; expected {entries}",
                path.display()
            ));
        }
        let per_s = entries as f64 / run.wall.as_secs_f64();
        let figure = Figure::new("record_entries_per_s", per_s, 0).note("(info)");
        Ok(Report::new("record", vec![figure]).line(format!(
            "record:   {entries} calls recorded into one new cassette at zero latency in {:.2} s",
            run.wall.as_secs_f64()
        )))
    }
}
