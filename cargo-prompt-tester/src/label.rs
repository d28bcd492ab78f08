//! `cargo prompt-tester label [FILTER] [--random N]`: a person says whether each recorded judge answer
//! of accepted samples is right or wrong, one line per answer on standard input (`r`, `w`, `s`kip,
//! `q`uit), so it runs in a terminal and from a script alike. Each sample's labels are written at once
//! into the `*.labels.toml` beside its suite file (a `#[prompt_test]`'s: beside its cassette); `--random
//! N` draws N samples at random (not yet labelled at random), which is what the prediction-powered pass
//! rate needs.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use prompt_tester::_cargo_prompt_tester_support::{
    CallRole, Label, RecordedSample, add_labels, judge_of, judged_questions, matches_filter,
    question_type_of,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::locate::Place;
use crate::review::compare;

/// What `label` was asked for.
pub struct Request {
    /// Only the trials whose name contains it (or is it, with `exact`).
    pub filter: Option<String>,
    /// The trial named exactly `filter`.
    pub exact: bool,
    /// Draw this many samples at random.
    pub random: Option<usize>,
    /// The draw's seed (reproducible draws, for tests); else a random one.
    pub seed: Option<u64>,
}

/// `cargo prompt-tester label`, answers read from `input`.
pub fn run(place: &Place, request: &Request, input: &mut dyn BufRead) -> anyhow::Result<()> {
    let mut samples: Vec<RecordedSample> = place
        .layout
        .recorded()?
        .into_iter()
        .filter(|s| matches_filter(&s.id.test, request.filter.as_deref(), request.exact))
        // A calibration set's items are labelled in the set already.
        .filter(|s| !s.id.test.starts_with("calibration::"))
        .filter(|s| {
            s.verdict
                .as_ref()
                .is_some_and(|v| !judged_questions(v).is_empty())
        })
        .collect();
    if let Some(n) = request.random {
        // Samples already labelled at random are not drawn again: each draw stays uniform over the rest.
        let labelled: BTreeSet<(String, u32)> = place
            .layout
            .read_labels(&place.cwd)?
            .into_iter()
            .filter(|l| l.random)
            .map(|l| (l.trial, l.sample))
            .collect();
        samples.retain(|s| !labelled.contains(&(s.id.test.clone(), s.id.run)));
        let mut rng = match request.seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => StdRng::from_os_rng(),
        };
        let mut drawn =
            rand::seq::index::sample(&mut rng, samples.len(), n.min(samples.len())).into_vec();
        drawn.sort_unstable();
        samples = drawn.into_iter().map(|i| samples[i].clone()).collect();
    }
    if samples.is_empty() {
        println!(
            "no recorded sample with a judge answer to label{} (in {})",
            request
                .filter
                .as_deref()
                .map(|f| format!(" matches {f:?}"))
                .unwrap_or_default(),
            place.shown(&place.layout.cassette_dir)
        );
        return Ok(());
    }
    let random = request.random.is_some();
    let total = samples.len();
    let mut out = std::io::stdout();
    let (mut answers, mut files) = (0, BTreeSet::new());
    'samples: for (i, sample) in samples.iter().enumerate() {
        let Some(verdict) = &sample.verdict else {
            continue;
        };
        writeln!(
            out,
            "\nsample {} of {total}: {} ({})",
            i + 1,
            sample.id,
            place.shown(&sample.cassette)
        )?;
        for call in compare::calls(&sample.entries, CallRole::Subject, &compare::as_recorded) {
            writeln!(out, "  answer:")?;
            for line in compare::answer_text(&call.response).lines() {
                writeln!(out, "    {line}")?;
            }
        }
        let mut labels = Vec::new();
        for (question, passed) in judged_questions(verdict) {
            let said = if passed { "passed" } else { "FAILED" };
            loop {
                write!(
                    out,
                    "  judge: {question} → {said}. Is that right? [r]ight [w]rong [s]kip [q]uit: "
                )?;
                out.flush()?;
                let mut line = String::new();
                if input.read_line(&mut line)? == 0 {
                    writeln!(out)?;
                    save(place, sample, &labels, &mut files)?;
                    answers += labels.len();
                    break 'samples;
                }
                let right = match line.trim() {
                    "r" | "right" => true,
                    "w" | "wrong" => false,
                    "s" | "skip" => break,
                    "q" | "quit" => {
                        save(place, sample, &labels, &mut files)?;
                        answers += labels.len();
                        break 'samples;
                    }
                    other => {
                        writeln!(out, "  {other:?}: answer r, w, s or q")?;
                        continue;
                    }
                };
                labels.push(Label {
                    trial: sample.id.test.clone(),
                    sample: sample.id.run,
                    question: question.clone(),
                    judged: passed,
                    right,
                    random,
                    question_type: question_type_of(Some(verdict), &question),
                    judge: judge_of(&sample.entries),
                    judge_settings: verdict.judge_settings.clone(),
                });
                break;
            }
        }
        save(place, sample, &labels, &mut files)?;
        answers += labels.len();
    }
    let files: Vec<String> = files.into_iter().collect();
    println!(
        "\nlabelled {answers} judge answer(s){}{}",
        if random { " drawn at random" } else { "" },
        if files.is_empty() {
            String::new()
        } else {
            format!(" into {}", files.join(", "))
        }
    );
    if answers > 0 {
        println!(
            "the next run reads them: labels drawn at random correct the suite's pass rate (prediction-powered), \
             the others measure the judge by question type"
        );
    }
    Ok(())
}

/// Writes one sample's `labels` into its labels file, noting the file.
fn save(
    place: &Place,
    sample: &RecordedSample,
    labels: &[Label],
    files: &mut BTreeSet<String>,
) -> anyhow::Result<()> {
    if labels.is_empty() {
        return Ok(());
    }
    let path = place.layout.labels_path(&sample.id.test, &sample.cassette);
    let shown = place.shown(&path);
    add_labels(&path, &shown, labels)?;
    files.insert(shown);
    Ok(())
}
