//! Scoring a case's assertions on one run, asking the judge when the score depends on it.

use super::check::{Verdict, check_sync};
use super::kinds::{Assertion, Check};
use super::message::seen;
use crate::checks::AssertionRecord;
use crate::judge::JudgeVerdict;
use crate::outcome::SampleOutcome;
use crate::render::shorten;
use crate::run::PromptRun;
use crate::run::RunError;

/// What the judge is sent with a question: the output, the output with the media the model was sent,
/// or the trajectory. Questions alike go in one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sees {
    Output,
    WithInputs,
    Trajectory,
}

/// Checks every assertion of a case on one run and scores it: passed when every assertion passes, or,
/// with a `min_score` (the suite key `threshold`), when the weight of the passing ones over all weights
/// reaches it. The judge is asked once for all `judge` assertions (one call), and not at all when the
/// case has already failed. A judge that gives no verdict (or cannot be asked) errors the sample
/// whatever the weights: that says nothing about the output.
///
/// `run` is the last reply of the case's conversation: an assertion with `turn = N` checks the run of
/// turn N instead (the judge is asked once per turn it is asked about).
pub async fn evaluate(
    asserts: &[Assertion],
    min_score: Option<f64>,
    run: &PromptRun,
) -> SampleOutcome {
    let mut targets = Vec::with_capacity(asserts.len());
    for a in asserts {
        match &a.turn {
            None => targets.push(run),
            Some(turn) => match run.turn(turn.n as usize) {
                Some(target) => targets.push(target),
                // The suite reader refuses such a turn: only a conversation cut short gets here.
                None => {
                    return SampleOutcome::errored(format!(
                        "{}: checks turn {}, but the conversation has {} turn(s)",
                        a.at,
                        turn.n,
                        run.turns().len()
                    ));
                }
            },
        }
    }
    let mut verdicts: Vec<Option<Verdict>> = asserts
        .iter()
        .zip(&targets)
        .map(|(a, run)| {
            (!matches!(
                a.check,
                Check::Judge(_)
                    | Check::JudgeWithInputs(_)
                    | Check::JudgeTrajectory(_)
                    | Check::Similar { .. }
            ))
            .then(|| check_sync(&a.check, run))
        })
        .collect();
    // Embeddings are asked only when the case can still pass, like the judge.
    let similar: Vec<(usize, &str, f64)> = asserts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match &a.check {
            Check::Similar {
                reference,
                threshold,
            } => Some((i, reference.as_str(), *threshold)),
            _ => None,
        })
        .collect();
    if !similar.is_empty() {
        let decided = already_failed(asserts, &verdicts, min_score);
        for (i, reference, threshold) in similar {
            verdicts[i] = Some(if decided {
                Verdict {
                    passed: false,
                    detail: Some("similar: not compared, the case fails anyway".into()),
                }
            } else {
                match compared(targets[i], reference, threshold).await {
                    Ok(verdict) => verdict,
                    Err(outcome) => return outcome,
                }
            });
        }
    }
    let mut decided = already_failed(asserts, &verdicts, min_score);
    // The judge's questions by what they are about: a turn's reply (the last one's as written) or the
    // trajectory, each in one call.
    let mut questions: Vec<((Option<u32>, Sees), AskedQuestions<'_>)> = Vec::new();
    for (i, a) in asserts.iter().enumerate() {
        let (q, sees) = match &a.check {
            Check::Judge(q) => (q, Sees::Output),
            Check::JudgeWithInputs(q) => (q, Sees::WithInputs),
            Check::JudgeTrajectory(q) => (q, Sees::Trajectory),
            _ => continue,
        };
        let about = (a.turn.as_ref().map(|t| t.n), sees);
        match questions.iter_mut().find(|(t, _)| *t == about) {
            Some((_, asked)) => asked.push((i, q.as_str())),
            None => questions.push((about, vec![(i, q.as_str())])),
        }
    }
    // `[judge] advisory = "error"`: an advisory "no" errors the sample, its assertions still recorded.
    let mut errored = None;
    for ((_, sees), questions) in &questions {
        let kind = asserts[questions[0].0].check.kind();
        if decided {
            for (i, _) in questions {
                verdicts[*i] = Some(Verdict {
                    passed: false,
                    detail: Some(if errored.is_some() {
                        format!("{kind}: not asked, the sample errors anyway")
                    } else {
                        format!("{kind}: not asked, the case fails anyway")
                    }),
                });
            }
            continue;
        }
        let asked: Vec<&str> = questions.iter().map(|(_, q)| *q).collect();
        let target = targets[questions[0].0];
        let answers = match sees {
            Sees::Output => target.ask_all(&asked).await,
            Sees::WithInputs => target.ask_all_with_inputs(&asked).await,
            Sees::Trajectory => target.ask_trajectory_all(&asked).await,
        };
        let answers = match answers {
            Ok(answers) => answers,
            Err(RunError::Call { error: e, .. }) if let Some(u) = e.as_unavailable() => {
                return SampleOutcome::unavailable(u);
            }
            Err(e) => return SampleOutcome::errored(format!("judge: {e}")),
        };
        for ((i, q), answer) in questions.iter().zip(answers) {
            verdicts[*i] = Some(match answer.require() {
                Ok(answer) if answer.passed => Verdict::pass(),
                // `[judge] advisory = "warn"`: reported in the assertion's note, not counted.
                Ok(answer) => {
                    let said = judged(kind, q, answer).detail.unwrap_or_default();
                    Verdict {
                        passed: true,
                        detail: Some(format!("{said}; not counted ([judge] advisory = \"warn\")")),
                    }
                }
                Err(failed) if failed.errors() => {
                    let message = format!("{}: {failed}", asserts[*i].at);
                    errored.get_or_insert(message);
                    decided = true;
                    judged(kind, q, *failed.verdict)
                }
                Err(failed) => judged(kind, q, *failed.verdict),
            });
        }
    }
    let verdicts: Vec<Verdict> = verdicts
        .into_iter()
        .zip(asserts)
        .map(|(v, a)| {
            let v = v.unwrap_or_else(Verdict::pass);
            // A check of an earlier reply says which.
            match (&a.turn, v.detail) {
                (Some(turn), Some(detail)) => Verdict {
                    passed: v.passed,
                    detail: Some(format!("turn {}: {detail}", turn.n)),
                },
                (_, detail) => Verdict { detail, ..v },
            }
        })
        .collect();
    run.scope
        .state()
        .note(|c| c.assertions = records(asserts, &verdicts));
    match errored {
        Some(message) => SampleOutcome::errored(message),
        None => score(asserts, &verdicts, min_score),
    }
}

/// The judge's questions about one reply: each assertion's index and its question.
type AskedQuestions<'a> = Vec<(usize, &'a str)>;

/// Whether the verdicts known so far fail the case whatever the others (`None`) turn out to be.
fn already_failed(
    asserts: &[Assertion],
    verdicts: &[Option<Verdict>],
    min_score: Option<f64>,
) -> bool {
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    // The answers not known yet: at best they all pass.
    let best = weight_where(asserts, verdicts, |v| v.as_ref().is_none_or(|v| v.passed));
    match min_score {
        None => verdicts.iter().flatten().any(|v| !v.passed),
        Some(t) => total > 0.0 && best / total + 1e-9 < t,
    }
}

/// The verdict of `similar`: the score against the threshold, or how the sample ends when there is
/// no score (an unavailable call ignores the trial; a failed call errors the sample, since it says
/// nothing about the output). An empty output fails: it means nothing.
async fn compared(
    run: &PromptRun,
    reference: &str,
    threshold: f64,
) -> Result<Verdict, SampleOutcome> {
    match run.similarity(reference).await {
        Ok(score) => Ok(similar_verdict(score, threshold, reference, &run.output)),
        Err(RunError::EmptyText("output")) => Ok(Verdict::fail(
            "similar",
            format!("an output meaning {}", seen(reference)),
            "an empty output",
        )),
        Err(RunError::Call { error: e, .. }) if let Some(u) = e.as_unavailable() => {
            Err(SampleOutcome::unavailable(u))
        }
        Err(e) => Err(SampleOutcome::errored(format!("similar: {e}"))),
    }
}

/// The verdict on a similarity `score`: the failure shows the score, the threshold and both texts.
pub(crate) fn similar_verdict(
    score: f64,
    threshold: f64,
    reference: &str,
    output: &str,
) -> Verdict {
    if score + 1e-9 >= threshold {
        return Verdict::pass();
    }
    Verdict::fail(
        "similar",
        format!(
            "a cosine similarity of at least {threshold} to the reference {}",
            seen(reference)
        ),
        format!("{score:.3} for the output {}", seen(output)),
    )
}

/// Each assertion's verdict, for the reports.
fn records(asserts: &[Assertion], verdicts: &[Verdict]) -> Vec<AssertionRecord> {
    asserts
        .iter()
        .zip(verdicts)
        .map(|(a, v)| AssertionRecord {
            kind: a.check.kind().to_string(),
            at: a.at.clone(),
            passed: v.passed,
            message: v.detail.clone(),
        })
        .collect()
}

/// The sum of the weights of the assertions whose verdict satisfies `counts`.
fn weight_where<V>(asserts: &[Assertion], verdicts: &[V], counts: impl Fn(&V) -> bool) -> f64 {
    asserts
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| counts(v))
        .map(|(a, _)| a.weight)
        .sum()
}

/// The verdict on the judge's "no" to `question` (of the assertion `kind`); an advisory one says so.
fn judged(kind: &str, question: &str, answer: JudgeVerdict) -> Verdict {
    let votes = answer
        .votes
        .map(|v| format!(" ({v} answers agree)"))
        .unwrap_or_default();
    let advisory = answer
        .advisory
        .as_ref()
        .map(|a| format!("; {a}"))
        .unwrap_or_default();
    let reasoning = answer
        .reasoning
        .unwrap_or_else(|| "no reasoning given".into());
    let snippet = answer
        .snippet
        .map(|s| format!(" (snippet {:?})", shorten(&s, 120)))
        .unwrap_or_default();
    Verdict::fail(
        kind,
        format!("the judge to confirm {question:?}"),
        format!(
            "{:?}{votes}: {}{snippet}{advisory}",
            answer.answer,
            shorten(&reasoning, 400)
        ),
    )
}

/// The sample's outcome from every assertion's verdict; a failure lists the failed assertions, then
/// the notes of the passing ones.
fn score(asserts: &[Assertion], verdicts: &[Verdict], min_score: Option<f64>) -> SampleOutcome {
    let total: f64 = asserts.iter().map(|a| a.weight).sum();
    let passed_weight = weight_where(asserts, verdicts, |v| v.passed);
    let failed: Vec<String> = asserts
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| !v.passed)
        .map(|(a, v)| format!("{}: {}", a.at, v.detail.clone().unwrap_or_default()))
        .collect();
    let score = if total > 0.0 {
        passed_weight / total
    } else {
        1.0
    };
    let ok = match min_score {
        None => failed.is_empty(),
        Some(t) => score + 1e-9 >= t,
    };
    if ok {
        return SampleOutcome::PASSED;
    }
    let head = match min_score {
        None => format!(
            "{} of {} assertion{} failed:",
            failed.len(),
            asserts.len(),
            if asserts.len() == 1 { "" } else { "s" }
        ),
        Some(t) => format!(
            "score {score:.2} is below the score threshold {t} ({} of {} assertions failed; weight {passed_weight} of {total} passed):",
            failed.len(),
            asserts.len()
        ),
    };
    let notes = verdicts
        .iter()
        .filter(|v| v.passed)
        .filter_map(|v| v.detail.clone());
    let mut lines = vec![head];
    lines.extend(failed.into_iter().map(|f| format!("- {f}")));
    lines.extend(notes.map(|n| format!("note: {n}")));
    SampleOutcome::failed(lines.join("\n"))
}
