//! The overhead scenario: many one-call trials at zero latency, cassettes off; what the harness
//! itself costs per trial, and its memory. (`overhead_us_per_trial`, `peak_rss_mb`)

use std::time::Duration;

use prompt_tester_testkit::Wire;

use crate::Bench;
use crate::common::{counting_server, expect_requests};

pub(crate) struct Overhead {
    pub(crate) trials: usize,
    pub(crate) wall: Duration,
    pub(crate) harness_wall_ms: f64,
    pub(crate) cpu_ms: Option<f64>,
    pub(crate) rss_kb: Option<u64>,
}

impl Overhead {
    pub(crate) fn us_per_trial(&self) -> f64 {
        self.wall.as_secs_f64() * 1e6 / self.trials as f64
    }
}

impl Bench {
    /// Many one-call trials at zero latency: what the harness itself costs per trial, and its memory.
    pub(crate) fn overhead(&self) -> Result<Overhead, String> {
        let trials = self.options.overhead_trials;
        eprintln!("[overhead] {trials} trials of one call at zero latency, cassettes off");
        let server = counting_server(Duration::ZERO);
        let root = self.crate_root("overhead", &server.base_url(Wire::OpenAi), trials, 1)?;
        let run = self.run_live("overhead", &root, trials)?;
        expect_requests("overhead", &server, trials)?;
        Ok(Overhead {
            trials,
            wall: run.wall,
            harness_wall_ms: run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN),
            cpu_ms: run.measured["cpu_ms"].as_f64(),
            rss_kb: run.measured["vm_hwm_kb"].as_u64(),
        })
    }
}
