//! The in-flight scenario: many calls at a fixed latency; does the harness keep C calls in flight all
//! the time? (`inflight_efficiency`)

use std::time::Duration;

use prompt_tester_testkit::Wire;

use crate::Bench;
use crate::common::{counting_server, expect_requests};

pub(crate) struct Inflight {
    pub(crate) calls: usize,
    pub(crate) latency: Duration,
    pub(crate) concurrency: usize,
    pub(crate) wall: Duration,
    pub(crate) max_in_flight: usize,
}

impl Inflight {
    pub(crate) fn ideal(&self) -> Duration {
        self.latency
            .mul_f64(self.calls as f64 / self.concurrency as f64)
    }

    /// The least wall time possible when every call takes exactly `latency`: whole rounds of C calls
    /// (the last round is not full).
    pub(crate) fn whole_rounds(&self) -> Duration {
        self.latency
            .mul_f64(self.calls.div_ceil(self.concurrency) as f64)
    }

    pub(crate) fn efficiency(&self) -> f64 {
        self.ideal().as_secs_f64() / self.wall.as_secs_f64()
    }
}

impl Bench {
    /// Many calls at a fixed latency: does the harness keep C calls in flight all the time?
    pub(crate) fn inflight(&self) -> Result<Inflight, String> {
        let o = &self.options;
        let calls = o.inflight_cases * o.inflight_runs as usize;
        eprintln!(
            "[inflight] {calls} calls ({} cases x {} runs) at {:?}",
            o.inflight_cases, o.inflight_runs, o.latency
        );
        let server = counting_server(o.latency);
        let root = self.crate_root(
            "inflight",
            &server.base_url(Wire::OpenAi),
            o.inflight_cases,
            o.inflight_runs,
        )?;
        let run = self.run_live("inflight", &root, o.inflight_cases)?;
        expect_requests("inflight", &server, calls)?;
        Ok(Inflight {
            calls,
            latency: o.latency,
            concurrency: o.concurrency(),
            wall: run.wall,
            max_in_flight: server.max_concurrent(),
        })
    }
}
