//! The judge scenario: one `#[prompt_test]` asks five questions with `ask` one after another, with
//! one `ask_all`, and with `ask_parallel`, against a judge with a fixed latency. (`judge_ms`)

use std::sync::Mutex;
use std::time::{Duration, Instant};

use prompt_tester::RunError;
use prompt_tester::prelude::*;
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Wire};
use serde_json::{Value, json};

use crate::Bench;
use crate::common::{Size, expect_requests, ms};
use crate::results::{Figure, Report};

/// The trial of the judge scenario: `judge_timing` below, named by its module path as every
/// `#[prompt_test]` is. Other scenarios skip it.
pub(crate) const JUDGE_TRIAL: &str = "judge::judge_timing";
pub(crate) const QUESTIONS: [&str; 5] = [
    "Does the response repeat the customer's message?",
    "Does the response avoid mentioning prices?",
    "Is the response a single paragraph?",
    "Is the tone of the response neutral?",
    "Does the response mention the case number?",
];

/// The judge timings the `judge_timing` test leaves for the child to report.
pub(crate) static JUDGE_TIMES: Mutex<Option<Value>> = Mutex::new(None);

/// The judge scenario's test: 5 questions three ways, each timed. Every verdict must come back "yes"
/// (the fake judge says so), which checks that the calls really were judged.
#[prompt_test(
    target_prompt = "Repeat the customer's message: the parcel for case 17 has not arrived."
)]
async fn judge_timing(run: PromptRun) -> anyhow::Result<()> {
    let started = Instant::now();
    for question in QUESTIONS {
        let verdict = run.ask(question).await?;
        anyhow::ensure!(
            verdict.passed,
            "ask({question:?}) did not pass: {verdict:?}"
        );
    }
    let sequential = started.elapsed();

    let all = timed("ask_all", run.ask_all(&QUESTIONS)).await?;
    let parallel = timed("ask_parallel", run.ask_parallel(&QUESTIONS)).await?;

    let ms = |d: Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
    *JUDGE_TIMES.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(json!({ "ask": ms(sequential), "ask_all": ms(all), "ask_parallel": ms(parallel) }));
    Ok(())
}

/// Times one batch of the questions (`ask_all`, `ask_parallel`): every verdict must pass.
async fn timed(
    what: &str,
    batch: impl Future<Output = Result<Vec<JudgeVerdict>, RunError>>,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let verdicts = batch.await?;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        verdicts.len() == QUESTIONS.len() && verdicts.iter().all(|v| v.passed),
        "{what}: {verdicts:?}"
    );
    Ok(elapsed)
}

impl Bench {
    /// Five judge questions three ways, against a judge with a fixed latency.
    pub(crate) fn judge(&self) -> Result<Report, String> {
        let latency = self.options.judge_latency;
        eprintln!(
            "[judge] {} questions: ask x {}, ask_all, ask_parallel at {latency:?}",
            QUESTIONS.len(),
            QUESTIONS.len()
        );
        let server = FakeProvider::builder()
            .respond_with(move |r| judge_reply(r).delayed(latency))
            .capture(false)
            .start();
        let root = self.crate_root("judge", &server.base_url(Wire::OpenAi), Size::new(1, 1))?;
        let run = self.run_live_on("judge", &root, &["--exact", JUDGE_TRIAL], 1)?;
        // One subject call, 5 asks, 1 ask_all, 5 parallel asks.
        expect_requests("judge", &server, 1 + 2 * QUESTIONS.len() + 1)?;
        let times = &run.measured["judge"];
        let get = |key: &str| {
            times[key]
                .as_f64()
                .ok_or_else(|| format!("judge: the child reported no {key} time"))
        };
        let (ask, ask_all, ask_parallel) = (get("ask")?, get("ask_all")?, get("ask_parallel")?);
        let figure = |key: &str, ms: f64| Figure::new(format!("judge_ms.{key}"), ms, 0).json(1);
        let figures = vec![
            figure("ask", ask).note(format!("({} sequential)", QUESTIONS.len())),
            figure("ask_all", ask_all),
            figure("ask_parallel", ask_parallel),
        ];
        Ok(Report::new("judge", figures).line(format!(
            "judge:    {} questions at {:.0} ms: ask one by one {ask:.0} ms, ask_all {ask_all:.0} ms, \
             ask_parallel {ask_parallel:.0} ms",
            QUESTIONS.len(),
            ms(latency),
        )))
    }
}

/// The fake judge: a verdict of "yes" for each question asked, in the schema the request names; the
/// subject's call gets a plain answer.
pub(crate) fn judge_reply(request: &CapturedRequest) -> Reply {
    if !request.wants_structured() {
        return Reply::answer(
            request,
            &format!("echo: {}", request.last_user_text().unwrap_or_default()),
        );
    }
    let verdict = |index: Option<usize>| {
        let mut v = json!({
            "question_type": "factual_presence",
            "reasoning": "The response repeats the customer's message.",
            "snippet": null,
            "answer": "yes",
        });
        if let Some(i) = index {
            v["index"] = json!(i);
        }
        v
    };
    let schema = request
        .json
        .as_ref()
        .and_then(|j| j["response_format"]["json_schema"]["name"].as_str());
    let value = match schema {
        Some("judge_verdicts") => {
            json!({ "verdicts": (1..=QUESTIONS.len()).map(|i| verdict(Some(i))).collect::<Vec<_>>() })
        }
        _ => verdict(None),
    };
    Reply::structured(request, &value)
}
