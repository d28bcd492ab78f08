//! The replay scenario: a cassette with many entries replayed offline, the server stopped.
//! (`replay_entries_per_s`)

use std::path::Path;

use prompt_tester::CompletionRequest;
use prompt_tester::prelude::*;
use prompt_tester::testing::cassette::{
    CassetteStore, Entry, FORMAT_VERSION, entry_key, now_rfc3339,
};
use prompt_tester_testkit::{FakeProvider, Wire};
use serde_json::json;

use crate::Bench;
use crate::app_calls::TRIALS;
use crate::common::{
    MAX_TOKENS, MODEL, PROMPT, PROVIDER, SUITE, Size, case_inputs, case_name, expect_passed, mb,
    write_file,
};
use crate::judge::JUDGE_TRIAL;
use crate::results::{Figure, Report, Target};

impl Bench {
    /// A cassette with many entries, replayed offline: the server is stopped before the run, so a call
    /// that was not replayed fails its trial (replay mode fails a missing recording anyway).
    pub(crate) fn replay(&self) -> Result<Report, String> {
        let size = self.options.replay;
        let entries = size.calls();
        eprintln!("[replay] {entries} cassette entries ({size}), server stopped");
        let stopped = FakeProvider::builder().capture(false).start();
        let url = stopped.base_url(Wire::OpenAi);
        stopped.shutdown();
        let root = self.crate_root("replay", &url, size)?;
        let cassette_bytes = write_cassette(&root, size)?;
        let run = self.run_child(
            "replay",
            &root,
            &[("PROMPT_TESTER_CASSETTE", "replay")],
            &["--skip", JUDGE_TRIAL, "--skip", TRIALS],
        )?;
        expect_passed("replay", &run, size.cases)?;
        let per_s = entries as f64 / run.wall.as_secs_f64();
        let rss =
            mb(run.measured["vm_hwm_kb"].as_u64()).map_or("n/a".into(), |m| format!("{m:.1} MB"));
        let figure = Figure::new("replay_entries_per_s", per_s, 0)
            .target(Target::AtLeast(5000.0))
            .json(0);
        Ok(Report::new("replay", vec![figure]).line(format!(
            "replay:   {entries} entries ({:.1} MB cassette) in {:.2} s; peak RSS {rss}",
            cassette_bytes as f64 / 1e6,
            run.wall.as_secs_f64(),
        )))
    }
}

/// Writes the suite's cassette as the engine would have recorded it (same keys, same file format), and
/// returns its size.
pub(crate) fn write_cassette(root: &Path, size: Size) -> Result<u64, String> {
    let Size { cases, runs } = size;
    let store = CassetteStore::new(root.join("prompt-tests").join("cassettes"));
    let path = store.path_for(SUITE);
    let recorded_at = now_rfc3339();
    let mut entries = Vec::with_capacity(size.calls());
    for i in 1..=cases {
        let (n, text) = case_inputs(i);
        let prompt =
            prompt_tester::testing::render::render(PROMPT, &[("n", n), ("text", text)]).text;
        let request = CompletionRequest::new(MODEL, prompt.clone(), MAX_TOKENS);
        for run in 1..=runs {
            let answer = format!("echo: {prompt}");
            let mut response = CompletionResult::new(answer, (prompt.len() / 4) as u64, 20);
            response.stop_reason = Some("stop".into());
            response.model_used = Some(MODEL.into());
            response.request_id = Some(format!("chatcmpl-bench-{i}-{run}"));
            entries.push(Entry {
                key: entry_key(PROVIDER, &request, run),
                test: format!("{SUITE}::{}", case_name(i)),
                target: None,
                run,
                role: prompt_tester::testing::cassette::CallRole::Subject,
                provider: PROVIDER.into(),
                model: MODEL.into(),
                call: prompt_tester::testing::cassette::Exchange::Completion {
                    request: request.clone(),
                    response,
                },
                latency_ms: 180,
                recorded_at: recorded_at.clone(),
            });
        }
    }
    let body = json!({ "version": FORMAT_VERSION, "entries": entries });
    let text = serde_json::to_string_pretty(&body).map_err(|e| e.to_string())? + "\n";
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    write_file(&path, &text)?;
    Ok(text.len() as u64)
}
