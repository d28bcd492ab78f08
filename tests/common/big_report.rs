//! A synthetic run for the HTML report's benchmark and its browser test: `trials` trials of `samples`
//! samples each, every tenth one failing, each sample with an output, two assertions and a judge answer
//! whose snippet is in the output. Shared by `examples/bench/html.rs` and `tests/suites/html.rs`.

use std::time::Duration;

use prompt_tester::testing::{
    AssertionRecord, CaseInfo, JudgeAnswer, SampleOutcome, SampleRecord, Status, SuiteInfo,
    TrialRecord,
};

/// The records of the synthetic run.
pub fn records(trials: usize, samples: u32) -> Vec<TrialRecord> {
    (0..trials)
        .map(|i| {
            let failing = i % 10 == 0;
            let suite = format!("suite_{}", i % 20);
            let mut r = TrialRecord::unrun(
                format!("{suite}::case_{i:04}"),
                if failing { Status::Failed } else { Status::Passed },
                "",
                Some(CaseInfo {
                    suite: SuiteInfo {
                        name: suite.clone(),
                        file: format!("prompt-tests/{suite}.evals.toml"),
                        prompt_id: suite,
                        prompt_version: None,
                        dataset_version: None,
                    },
                    case: format!("case_{i:04}"),
                    category: Some(["facts", "style", "safety"][i % 3].to_string()),
                }),
            );
            r.message = failing.then(|| format!("1/{samples} samples passed (need {samples})"));
            r.runs_total = samples;
            r.runs_required = samples;
            r.runs_passed = if failing { 1 } else { samples };
            r.duration = Duration::from_millis(400 + i as u64 % 300);
            r.prompt = Some(format!("Summarise memo {i} for the weekly update in two sentences."));
            r.samples = (1..=samples)
                .map(|run| {
                    let ok = !failing || run == 1;
                    let output = format!(
                        "Memo {i}, run {run}: the team shipped the billing migration on time and the \
                         on-call load fell by a third. Next week: the search rewrite and hiring two \
                         engineers for the platform group."
                    );
                    SampleRecord {
                        run,
                        outcome: if ok {
                            SampleOutcome::PASSED
                        } else {
                            SampleOutcome::failed("judge: expected yes; saw no")
                        },
                        output: Some(output),
                        assertions: vec![
                            AssertionRecord {
                                kind: "contains".into(),
                                at: format!("prompt-tests/s.evals.toml:{}", 3 + i),
                                passed: true,
                                message: None,
                            },
                            AssertionRecord {
                                kind: "judge".into(),
                                at: format!("prompt-tests/s.evals.toml:{}", 3 + i),
                                passed: ok,
                                message: (!ok).then(|| "judge: expected yes; saw no".to_string()),
                            },
                        ],
                        observations: Vec::new(),
                        judge: vec![JudgeAnswer {
                            judge_key: String::new(),
                            question: "Does it mention the billing migration?".into(),
                            answer: if ok { "yes" } else { "no" }.into(),
                            passed: ok,
                            reasoning: Some("The summary names the migration.".into()),
                            snippet: Some("the billing migration".into()),
                            question_type: Some("factual_presence".into()),
                            measurement: None,
                            advisory: None,
                            votes: None,
                        }],
                        tool_calls: Vec::new(),
                        transcript: Vec::new(),
                        steps: Vec::new(),
                        latency: Some(Duration::from_millis(400)),
                        replayed: true,
                    }
                })
                .collect();
            r
        })
        .collect()
}
