//! Every scenario's figures: the table, then the JSON object of the last line.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use crate::Options;
use crate::common::mb;
use crate::dataset::DatasetFigures;
use crate::html::HtmlReport;
use crate::inflight::Inflight;
use crate::judge::{Judge, QUESTIONS};
use crate::overhead::Overhead;
use crate::ratelimit::{RATELIMIT_ALLOWED, RATELIMIT_LATENCY, RateLimit};
use crate::record::Record;
use crate::replay::Replay;
use crate::sampling::{
    EARLY_RUNS, EARLY_THRESHOLD, SAMPLING_CONCURRENCY, SAMPLING_RATES, Sampling,
};

/// Every scenario's figures.
pub(crate) struct Results {
    pub(crate) inflight: Inflight,
    pub(crate) ratelimit: RateLimit,
    pub(crate) overhead: Overhead,
    pub(crate) replay: Replay,
    pub(crate) record: Record,
    pub(crate) judge: Judge,
    pub(crate) dataset: DatasetFigures,
    pub(crate) html: HtmlReport,
    pub(crate) sampling: Sampling,
}

impl Results {
    pub(crate) fn table(&self, o: &Options) -> String {
        let rl = &self.ratelimit;
        let (i, ov, r, rec, j) = (
            &self.inflight,
            &self.overhead,
            &self.replay,
            &self.record,
            &self.judge,
        );
        let yes = |ok: bool| if ok { "yes" } else { "NO" };
        let rss = mb(ov.rss_kb);
        let d = &self.dataset;
        let rows: Vec<[String; 4]> = vec![
            [
                "inflight_efficiency".into(),
                format!("{:.3}", i.efficiency()),
                ">= 0.9".into(),
                yes(i.efficiency() >= 0.9).into(),
            ],
            [
                "ratelimit_slowdown".into(),
                format!("{:.2}", rl.slowdown()),
                "<= 1.5".into(),
                yes(rl.slowdown() <= 1.5).into(),
            ],
            [
                "overhead_us_per_trial".into(),
                format!("{:.0}", ov.us_per_trial()),
                "< 1000".into(),
                yes(ov.us_per_trial() < 1000.0).into(),
            ],
            [
                "replay_entries_per_s".into(),
                format!("{:.0}", r.per_s()),
                ">= 5000".into(),
                yes(r.per_s() >= 5000.0).into(),
            ],
            [
                "peak_rss_mb".into(),
                rss.map_or("n/a".into(), |m| format!("{m:.1}")),
                "< 200".into(),
                rss.map_or("n/a", |m| yes(m < 200.0)).into(),
            ],
            [
                "dataset_list_ms".into(),
                format!("{:.0}", d.list.as_secs_f64() * 1e3),
                "< 500".into(),
                yes(d.list < Duration::from_millis(500)).into(),
            ],
            [
                "dataset_exact_ms".into(),
                format!("{:.0}", d.exact.as_secs_f64() * 1e3),
                "< 100".into(),
                yes(d.exact < Duration::from_millis(100)).into(),
            ],
            [
                "record_entries_per_s (info)".into(),
                format!("{:.0}", rec.entries as f64 / rec.wall.as_secs_f64()),
                "-".into(),
                "-".into(),
            ],
            [
                "sampling.adaptive_saving".into(),
                format!("{:.0}%", self.sampling.adaptive_saving() * 100.0),
                ">= 30%".into(),
                yes(self.sampling.adaptive_saving() >= 0.3).into(),
            ],
            [
                "sampling.early_stop_saving (info)".into(),
                format!("{:.0}%", self.sampling.early_saving() * 100.0),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask (5 sequential)".into(),
                format!("{:.0}", j.ask),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask_all".into(),
                format!("{:.0}", j.ask_all),
                "-".into(),
                "-".into(),
            ],
            [
                "judge_ms.ask_parallel".into(),
                format!("{:.0}", j.ask_parallel),
                "-".into(),
                "-".into(),
            ],
            [
                format!(
                    "html_report_mb ({}x{})",
                    self.html.trials, self.html.samples
                ),
                format!("{:.2}", self.html.bytes as f64 / 1e6),
                "-".into(),
                "-".into(),
            ],
            [
                "html_report_write_ms".into(),
                format!("{:.0}", self.html.write.as_secs_f64() * 1000.0),
                "< 1000".into(),
                yes(self.html.write < Duration::from_secs(1)).into(),
            ],
        ];
        let mut out = String::from("\n");
        writeln!(
            out,
            "{:<30} {:>10}  {:>8}  {:>3}",
            "figure", "value", "target", "ok"
        )
        .ok();
        writeln!(out, "{}", "-".repeat(57)).ok();
        for [figure, value, target, ok] in rows {
            writeln!(out, "{figure:<30} {value:>10}  {target:>8}  {ok:>3}").ok();
        }
        let secs = |d: Duration| d.as_secs_f64();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(out).ok();
        writeln!(
            out,
            "inflight: {} calls at {:.0} ms, C = {}: ideal {:.2} s ({:.2} s in whole rounds of C calls), \
             measured {:.2} s; most calls in flight at the server: {}",
            i.calls,
            ms(i.latency),
            i.concurrency,
            secs(i.ideal()),
            secs(i.whole_rounds()),
            secs(i.wall),
            i.max_in_flight
        )
        .ok();
        writeln!(
            out,
            "ratelimit: {} calls at {:.0} ms, {} allowed in flight: ideal {:.2} s, measured {:.2} s \
             ({:.2}x), 0 failed; the provider answered {} requests 429; {}",
            rl.calls,
            ms(RATELIMIT_LATENCY),
            RATELIMIT_ALLOWED,
            secs(rl.ideal()),
            secs(rl.wall),
            rl.slowdown(),
            rl.rejected,
            rl.summary
        )
        .ok();
        writeln!(
            out,
            "overhead: {} trials at zero latency in {:.2} s ({:.2} s inside the harness); CPU {} per trial",
            ov.trials,
            secs(ov.wall),
            ov.harness_wall_ms / 1e3,
            ov.cpu_ms.map_or("n/a".into(), |c| format!("{:.0} us", c * 1e3 / ov.trials as f64)),
        )
        .ok();
        writeln!(
            out,
            "replay:   {} entries ({:.1} MB cassette) in {:.2} s; peak RSS {}",
            r.entries,
            r.cassette_bytes as f64 / 1e6,
            secs(r.wall),
            mb(r.rss_kb).map_or("n/a".into(), |m| format!("{m:.1} MB")),
        )
        .ok();
        writeln!(
            out,
            "record:   {} calls recorded into one new cassette at zero latency in {:.2} s",
            rec.entries,
            secs(rec.wall)
        )
        .ok();
        writeln!(
            out,
            "peak_rss_mb: the {}-trial run of the overhead scenario",
            ov.trials
        )
        .ok();
        writeln!(
            out,
            "judge:    {} questions at {:.0} ms: ask one by one {:.0} ms, ask_all {:.0} ms, ask_parallel {:.0} ms",
            QUESTIONS.len(),
            ms(j.latency),
            j.ask,
            j.ask_all,
            j.ask_parallel
        )
        .ok();
        writeln!(
            out,
            "dataset:  {} JSON Lines rows listed in {:.0} ms ({:.0} ms inside the harness); --exact one row \
             {:.0} ms ({:.1} ms inside)",
            d.rows,
            ms(d.list),
            d.list_harness_ms,
            ms(d.exact),
            d.exact_harness_ms
        )
        .ok();
        let sm = &self.sampling;
        let per_rate = |rows: &[(f64, f64)]| {
            SAMPLING_RATES
                .iter()
                .zip(rows)
                .map(|(p, (calls, passed))| {
                    format!("p={p}: {calls:.1} calls ({:.1}% passed)", passed * 100.0)
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            out,
            "sampling: mean calls per decided test over {} simulated tests per rate, waves of at most {}:\n  \
             adaptive (pass_rate 0.8, indifference 0.05, confidence 0.95): {}; mean {:.1} vs the fixed-sample N = {} \
             at the same alpha, beta, delta ({:.0}% fewer)\n  \
             early_stop (runs {EARLY_RUNS}, threshold {EARLY_THRESHOLD}): {}; mean {:.2} vs {EARLY_RUNS} ({:.0}% fewer)",
            sm.tests,
            SAMPLING_CONCURRENCY,
            per_rate(&sm.adaptive),
            Sampling::mean(&sm.adaptive),
            sm.fixed_n,
            sm.adaptive_saving() * 100.0,
            per_rate(&sm.early),
            Sampling::mean(&sm.early),
            sm.early_saving() * 100.0,
        )
        .ok();
        if o.quick {
            writeln!(
                out,
                "(quick mode: smaller counts; the figures are indicative, see docs/benchmarks.md)"
            )
            .ok();
        }
        out
    }

    pub(crate) fn json(&self, mode: &str) -> Value {
        let round = |x: f64, places: i32| {
            let f = 10f64.powi(places);
            (x * f).round() / f
        };
        let mut judge = BTreeMap::new();
        judge.insert("ask", self.judge.ask);
        judge.insert("ask_all", self.judge.ask_all);
        judge.insert("ask_parallel", self.judge.ask_parallel);
        json!({
            "inflight_efficiency": round(self.inflight.efficiency(), 3),
            "ratelimit_slowdown": round(self.ratelimit.slowdown(), 3),
            "overhead_us_per_trial": round(self.overhead.us_per_trial(), 1),
            "replay_entries_per_s": round(self.replay.per_s(), 0),
            "peak_rss_mb": mb(self.overhead.rss_kb),
            "judge_ms": judge,
            "dataset_list_ms": round(self.dataset.list.as_secs_f64() * 1e3, 1),
            "dataset_exact_ms": round(self.dataset.exact.as_secs_f64() * 1e3, 1),
            "html_report": {
                "trials": self.html.trials,
                "samples": self.html.samples,
                "bytes": self.html.bytes,
                "write_ms": round(self.html.write.as_secs_f64() * 1000.0, 1),
            },
            "sampling": {
                "fixed_n": self.sampling.fixed_n,
                "adaptive_mean_calls": self.sampling.adaptive.iter().map(|(c, _)| round(*c, 2)).collect::<Vec<_>>(),
                "early_stop_mean_calls": self.sampling.early.iter().map(|(c, _)| round(*c, 3)).collect::<Vec<_>>(),
                "rates": SAMPLING_RATES,
                "adaptive_saving": round(self.sampling.adaptive_saving(), 3),
                "early_stop_saving": round(self.sampling.early_saving(), 3),
            },
            "mode": mode,
        })
    }
}
