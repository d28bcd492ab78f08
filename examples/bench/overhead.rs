//! The overhead scenario: many one-call trials at zero latency, cassettes off; what the harness
//! itself costs per trial, and its memory. (`overhead_us_per_trial`, `peak_rss_mb`)

use std::time::Duration;

use prompt_tester_testkit::Wire;

use crate::Bench;
use crate::common::{Size, counting_server, expect_requests, mb};
use crate::results::{Figure, Report, Target};

impl Bench {
    /// Many one-call trials at zero latency: what the harness itself costs per trial, and its memory
    /// (a report of its own: its row and line stand apart from the cost's).
    pub(crate) fn overhead(&self) -> Result<(Report, Report), String> {
        let trials = self.options.overhead_trials;
        eprintln!("[overhead] {trials} trials of one call at zero latency, cassettes off");
        let server = counting_server(Duration::ZERO);
        let root = self.crate_root(
            "overhead",
            &server.base_url(Wire::OpenAi),
            Size::new(trials, 1),
        )?;
        let run = self.run_live("overhead", &root, trials)?;
        expect_requests("overhead", &server, trials)?;
        let harness_wall_ms = run.measured["harness_wall_ms"].as_f64().unwrap_or(f64::NAN);
        let cpu = run.measured["cpu_ms"].as_f64().map_or("n/a".into(), |c| {
            format!("{:.0} us", c * 1e3 / trials as f64)
        });
        let us_per_trial = run.wall.as_secs_f64() * 1e6 / trials as f64;
        let cost = Figure::new("overhead_us_per_trial", us_per_trial, 0)
            .target(Target::Below(1000.0))
            .json(1);
        let cost = Report::new("overhead", vec![cost]).line(format!(
            "overhead: {trials} trials at zero latency in {:.2} s ({:.2} s inside the harness); CPU {cpu} \
             per trial",
            run.wall.as_secs_f64(),
            harness_wall_ms / 1e3,
        ));
        let rss = Figure::new("peak_rss_mb", mb(run.measured["vm_hwm_kb"].as_u64()), 1)
            .target(Target::Below(200.0))
            .json(1);
        let rss = Report::new("peak_rss", vec![rss]).line(format!(
            "peak_rss_mb: the {trials}-trial run of the overhead scenario"
        ));
        Ok((cost, rss))
    }
}
