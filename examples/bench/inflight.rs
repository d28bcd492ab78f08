//! The in-flight scenario: many calls at a fixed latency; does the harness keep C calls in flight all
//! the time? (`inflight_efficiency`)

use prompt_tester_testkit::Wire;

use crate::Bench;
use crate::common::{counting_server, expect_requests, ms};
use crate::results::{Figure, Report, Target};

impl Bench {
    /// Many calls at a fixed latency: does the harness keep C calls in flight all the time?
    pub(crate) fn inflight(&self) -> Result<Report, String> {
        let o = &self.options;
        let calls = o.inflight.calls();
        eprintln!(
            "[inflight] {calls} calls ({}) at {:?}",
            o.inflight, o.latency
        );
        let server = counting_server(o.latency);
        let root = self.crate_root("inflight", &server.base_url(Wire::OpenAi), o.inflight)?;
        let run = self.run_live("inflight", &root, o.inflight.cases)?;
        expect_requests("inflight", &server, calls)?;
        let concurrency = o.concurrency();
        let ideal = o.latency.mul_f64(calls as f64 / concurrency as f64);
        // The least wall time possible when every call takes exactly the latency: whole rounds of C
        // calls (the last round is not full).
        let whole_rounds = o.latency.mul_f64(calls.div_ceil(concurrency) as f64);
        let efficiency = ideal.as_secs_f64() / run.wall.as_secs_f64();
        let figure = Figure::new("inflight_efficiency", efficiency, 3)
            .target(Target::AtLeast(0.9))
            .json(3);
        Ok(Report::new("inflight", vec![figure]).line(format!(
            "inflight: {calls} calls at {:.0} ms, C = {concurrency}: ideal {:.2} s ({:.2} s in whole rounds of C \
             calls), measured {:.2} s; most calls in flight at the server: {}",
            ms(o.latency),
            ideal.as_secs_f64(),
            whole_rounds.as_secs_f64(),
            run.wall.as_secs_f64(),
            server.max_concurrent()
        )))
    }
}
