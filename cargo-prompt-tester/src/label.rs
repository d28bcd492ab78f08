//! `cargo prompt-tester label [FILTER] [--random N]`: a person says whether each recorded judge answer
//! of accepted samples is right or wrong, one line per answer on standard input (`r`, `w`, `s`kip,
//! `q`uit), so it runs in a terminal and from a script alike. Each sample's labels are written at once
//! into the `*.labels.toml` beside its suite file (a `#[prompt_test]`'s: beside its cassette), each with
//! the cassette key of the judge call it judges; `--random N` draws N samples at random, which is what
//! the prediction-powered pass rate needs: first those drawn before whose random labels are stale (their
//! judge call's key changed: recorded again), then samples never drawn.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};

use prompt_tester::_cargo_prompt_tester_support::{
    CallRole, Label, RecordedSample, add_labels, judge_key_of, judge_of, judged_questions,
    matches_filter, question_type_of,
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
    let (mut samples, keyless): (Vec<RecordedSample>, Vec<RecordedSample>) = place
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
        .partition(|s| !answerable(s).is_empty());
    if !keyless.is_empty() {
        println!(
            "{} sample(s) have no recorded judge call for their judge answers, and a label names the judge \
             call it judges: record them again to label them (e.g. {})",
            keyless.len(),
            keyless[0].id
        );
    }
    if let Some(n) = request.random {
        let drawn: Vec<Label> = place
            .layout
            .read_labels(&place.cwd)?
            .into_iter()
            .filter(|l| l.random)
            .collect();
        let (stale, never) = pool(&samples, &drawn);
        let mut rng = match request.seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => StdRng::from_os_rng(),
        };
        let mut draw = |from: &[usize], k: usize| -> Vec<usize> {
            let mut picked: Vec<usize> =
                rand::seq::index::sample(&mut rng, from.len(), k.min(from.len()))
                    .into_iter()
                    .map(|i| from[i])
                    .collect();
            picked.sort_unstable();
            picked
        };
        // A sample drawn before stays in the draw: its new answers are labelled first, so the labelled
        // samples stay a uniform draw; then samples never drawn.
        let again = draw(&stale, n);
        let fresh = draw(&never, n - again.len());
        if !again.is_empty() {
            println!(
                "{} sample(s) drawn at random before have stale labels (their judge call was made again): \
                 labelling their new answers first",
                again.len()
            );
        }
        samples = again
            .into_iter()
            .chain(fresh)
            .map(|i| samples[i].clone())
            .collect();
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
        for (question, passed, judge_key) in answerable(sample) {
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
                    judge_key: judge_key.clone(),
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

/// The judge answers of a recorded sample a label can name: each question of its verdict, whether it
/// passed and the key of its judge call; none when a judge call is not found.
fn answerable(sample: &RecordedSample) -> Vec<(String, bool, String)> {
    let Some(verdict) = &sample.verdict else {
        return Vec::new();
    };
    judged_questions(verdict)
        .into_iter()
        .map(|(question, passed)| {
            let key = judge_key_of(Some(verdict), &sample.entries, &question)?;
            Some((question, passed, key))
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

/// Where `--random` draws from, as indexes into `samples`: those drawn before (a label drawn at random)
/// whose random labels are stale (one names a judge call the sample no longer has), and those never
/// drawn. A sample whose random labels all name its judge calls is labelled: it is not drawn again.
fn pool(samples: &[RecordedSample], drawn: &[Label]) -> (Vec<usize>, Vec<usize>) {
    let (mut stale, mut never) = (Vec::new(), Vec::new());
    for (i, sample) in samples.iter().enumerate() {
        let mine: Vec<&Label> = drawn
            .iter()
            .filter(|l| l.trial == sample.id.test && l.sample == sample.id.run)
            .collect();
        let current = answerable(sample);
        let named = |l: &&Label| {
            current
                .iter()
                .any(|(q, _, key)| *q == l.question && *key == l.judge_key)
        };
        if mine.is_empty() {
            never.push(i);
        } else if !mine.iter().all(named) {
            stale.push(i);
        }
    }
    (stale, never)
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
