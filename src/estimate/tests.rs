use super::*;
use crate::completion::CompletionResult;
use crate::plan::Threshold;
use crate::pricing::Price;

fn config() -> Config {
    let mut config = Config::defaults(std::path::Path::new("."));
    let mut price = Price::free();
    price.input_mtok = 1.0;
    price.output_mtok = 2.0;
    config.prices.insert("m".into(), price);
    config
}

fn entry(run: u32, role: CallRole, model: &str, tokens: (u64, u64)) -> Entry {
    Entry {
        key: format!("{run}-{role:?}"),
        test: "t".into(),
        target: None,
        run,
        role,
        provider: "anthropic".into(),
        model: model.into(),
        call: Exchange::Completion {
            request: CompletionRequest::new(model, "p", 10),
            response: CompletionResult::new("a", tokens.0, tokens.1),
        },
        latency_ms: 1,
        recorded_at: String::new(),
    }
}

fn fixed(runs: u32) -> SamplePlan {
    SamplePlan::All(Threshold {
        runs,
        pass_threshold: 1.0,
    })
}

fn trial<'a>(plan: SamplePlan, recorded: BTreeMap<u32, Vec<&'a Entry>>) -> Trial<'a> {
    let recorded = recorded
        .into_iter()
        .map(|(run, entries)| (run, Recorded::Found(entries)))
        .collect();
    Trial {
        name: "t".into(),
        plan,
        first_run: 1,
        request: Ok((
            "anthropic".into(),
            CompletionRequest::new("m", "abcdef", 100),
        )),
        subject: Subject::Call,
        body: false,
        other_calls: Vec::new(),
        recorded,
    }
}

#[test]
fn recorded_samples_cost_their_calls_at_today_s_prices() {
    let entries = [
        entry(1, CallRole::Subject, "m", (1000, 500)),
        entry(1, CallRole::Judge, "m", (2000, 10)),
        entry(2, CallRole::Subject, "m", (1000, 700)),
        // A second call of sample 2 (an agent turn, a scripted turn, a follow-up): counted as well.
        entry(2, CallRole::Subject, "m", (3000, 100)),
    ];
    let recorded = BTreeMap::from([
        (1, vec![&entries[0], &entries[1]]),
        (2, vec![&entries[2], &entries[3]]),
    ]);
    let e = estimate(&config(), &[trial(fixed(2), recorded)]);
    let t = &e.trials[0];
    assert_eq!((t.calls.subject.calls, t.calls.judge.calls), (3.0, 1.0));
    assert_eq!(t.calls.subject.basis, Basis::Recorded);
    let subject = (2000.0 + 1000.0 + 1400.0 + 3000.0 + 200.0) / 1e6;
    assert!((t.calls.subject.cost_usd - subject).abs() < 1e-15);
    assert!((t.calls.judge.cost_usd - 2020.0 / 1e6).abs() < 1e-15);
    let text = render(&e);
    assert!(
        text.ends_with(&format!(
            "estimate: 4 model calls; total cost ${:.5}\n",
            subject + 2020.0 / 1e6
        )),
        "{text}"
    );
    assert!(text.contains("recorded"), "{text}");
}

#[test]
fn a_replayed_sample_counts_the_calls_its_replay_makes_and_names_no_shared_embedding() {
    use crate::embedding::Embedding;
    // Two samples embed the same reference: the cassette holds it once (under sample 1), and each
    // sample's replay asks for it.
    let mut embedding = Embedding {
        vector: vec![1.0],
        input_tokens: Some(4),
        model_used: None,
        cost_usd: Some(4e-6),
    };
    let replayed = |embedding: &Embedding| {
        let mut usage = Usage::default();
        let mut answer = CompletionResult::new("a", 100, 10);
        answer.cost_usd = Some(120e-6);
        usage.add_call(CallRole::Subject, "anthropic", "m", &answer, true);
        usage.add_embedding("anthropic", "e", embedding, true);
        usage.add_embedding("anthropic", "e", embedding, true);
        usage
    };
    let first = replayed(&embedding);
    embedding.cost_usd = None;
    let second = replayed(&embedding);
    let mut t = trial(fixed(2), BTreeMap::new());
    t.other_calls = vec![CallRole::Embedding];
    t.recorded = BTreeMap::from([
        (1, Recorded::Replayed(Box::new(first))),
        (2, Recorded::Replayed(Box::new(second))),
    ]);
    let e = estimate(&config(), &[t]);
    let t = &e.trials[0];
    assert_eq!((t.calls.subject.calls, t.calls.embedding.calls), (2.0, 4.0));
    assert!((t.calls.subject.cost_usd - 240e-6).abs() < 1e-15);
    assert!((t.calls.embedding.cost_usd - 8e-6).abs() < 1e-15);
    assert_eq!(t.calls.embedding.unpriced_calls, 2.0);
    assert_eq!(e.unpriced.iter().collect::<Vec<_>>(), ["anthropic/e"]);
    assert!(t.unknown.is_empty(), "{:?}", t.unknown);
    // Found by its name alone, a sample's shared embeddings are named as not counted.
    let entries = [entry(1, CallRole::Subject, "m", (1000, 0))];
    let mut found = trial(fixed(1), BTreeMap::from([(1, vec![&entries[0]])]));
    found.other_calls = vec![CallRole::Embedding];
    let e = estimate(&config(), &[found]);
    assert!(e.trials[0].unknown[0].starts_with("embeddings of a text another sample"));
}

#[test]
fn an_adaptive_plan_expects_its_mean_samples_and_bounds_by_its_maximum() {
    let entries = [entry(1, CallRole::Subject, "m", (1000, 0))];
    let recorded = BTreeMap::from([(1, vec![&entries[0]])]);
    let sprt = crate::stats::sprt::Sprt::new(0.8, 0.05, 0.95, 40).unwrap();
    let plan = SamplePlan::Adaptive(sprt);
    let e = estimate(&config(), &[trial(plan, recorded)]);
    let t = &e.trials[0];
    let mean = expected_samples(&plan, 0.8);
    assert_eq!(t.max_samples, 40);
    assert!((t.samples - mean).abs() < 1e-12);
    assert!((t.calls.subject.cost_usd - mean * 1e-3).abs() < 1e-12);
    assert!((t.calls.subject.max_cost_usd - 40.0 * 1e-3).abs() < 1e-12);
    assert!(t.unknown[0].starts_with("1 of 40 samples recorded"));
    let text = render(&e);
    assert!(text.contains("(max 40)"), "{text}");
    assert!(text.contains("at most (every sample the plans may take): 40 model calls"));
}

#[test]
fn an_unrecorded_trial_is_approximated_from_its_request_as_an_upper_bound() {
    let e = estimate(&config(), &[trial(fixed(3), BTreeMap::new())]);
    let t = &e.trials[0];
    // "abcdef": 2 tokens, one message (8) and the request (16); 100 output tokens at most.
    let worst = (26.0 * 1.0 + 100.0 * 2.0) / 1e6;
    assert_eq!(t.calls.subject.basis, Basis::Approximated);
    assert_eq!(t.calls.subject.calls, 3.0);
    assert!((t.calls.subject.cost_usd - 3.0 * worst).abs() < 1e-15);
    let text = render(&e);
    assert!(text.contains("≤$0.00068"), "{text}");
    assert!(
        text.contains("approximated figures are upper bounds"),
        "{text}"
    );
}

#[test]
fn unpriced_models_and_unknown_calls_are_named_never_counted_as_zero() {
    let entries = [entry(1, CallRole::Subject, "mystery", (1000, 0))];
    let recorded = BTreeMap::from([(1, vec![&entries[0]])]);
    let mut body = trial(fixed(1), BTreeMap::new());
    body.name = "body".into();
    body.body = true;
    body.request = Ok(("anthropic".into(), CompletionRequest::new("m", "p", 5)));
    let mut judged = trial(fixed(1), BTreeMap::new());
    judged.name = "judged".into();
    judged.other_calls = vec![CallRole::Judge];
    let mut set = trial(fixed(4), BTreeMap::new());
    set.name = "set".into();
    set.subject = Subject::Given;
    let e = estimate(&config(), &[trial(fixed(1), recorded), body, judged, set]);
    assert_eq!(e.trials[3].calls.judge.basis, Basis::Unknown);
    assert_eq!(e.unpriced.iter().collect::<Vec<_>>(), ["anthropic/mystery"]);
    assert_eq!(e.trials[0].calls.subject.unpriced_calls, 1.0);
    assert_eq!(e.trials[1].calls.judge.basis, Basis::Unknown);
    let text = render(&e);
    for part in [
        "unpriced models (cost unknown, not counted",
        "anthropic/mystery",
        "body: the calls its test body makes",
        "judged: the judge's calls: their prompts hold the answer",
        "set: the judge's calls on its items: none recorded",
        "+ unpriced calls\n",
    ] {
        assert!(text.contains(part), "{part:?} not in\n{text}");
    }
}

#[test]
fn expected_samples_follow_the_plan_s_waves() {
    let threshold = Threshold {
        runs: 5,
        pass_threshold: 0.8,
    };
    assert_eq!(expected_samples(&SamplePlan::All(threshold), 0.5), 5.0);
    // Early stop launches the four it needs at once, and a fifth when exactly one of them failed
    // (4 x 0.8^3 x 0.2 = 0.4096).
    let early = SamplePlan::EarlyStop(threshold);
    assert_eq!(expected_samples(&early, 1.0), 4.0);
    assert!((expected_samples(&early, 0.8) - 4.4096).abs() < 1e-9);
    let sprt = crate::stats::sprt::Sprt::new(0.8, 0.05, 0.95, 40).unwrap();
    let adaptive = SamplePlan::Adaptive(sprt);
    // Every sample passes: the 24 passes in a row that decide it.
    assert!((expected_samples(&adaptive, 1.0) - 24.0).abs() < 1e-9);
    let at_rate = expected_samples(&adaptive, 0.8);
    assert!(at_rate > 6.0 && at_rate < 40.0, "{at_rate}");
}

#[test]
fn a_row_two_gates_count_is_estimated_twice_under_nextest_and_once_here() {
    let e = entry(1, CallRole::Subject, "m", (1000, 500));
    let row = |name: &str| Trial {
        name: name.into(),
        ..trial(fixed(1), BTreeMap::from([(1, vec![&e])]))
    };
    let estimate = estimate(&config(), &[row("ds::a1"), row("ds::b1")]);
    let once = estimate.total();
    assert_eq!(once.calls, 2.0);
    // Nothing counted twice: no nextest figure.
    let alone = BTreeMap::from([("ds::a1".to_string(), 1), ("ds::b1".to_string(), 1)]);
    assert_eq!(
        estimate
            .clone()
            .with_gates_under_nextest(&alone)
            .under_nextest,
        None
    );
    // `ds::gate` and `ds::gate::a` both count a1.
    let shared = BTreeMap::from([("ds::a1".to_string(), 2), ("ds::b1".to_string(), 1)]);
    let nextest = estimate
        .with_gates_under_nextest(&shared)
        .under_nextest
        .expect("a row two gates count");
    assert_eq!(nextest.calls, 3.0);
    assert!(
        (nextest.cost_usd - once.cost_usd * 1.5).abs() < 1e-15,
        "{nextest:?}"
    );
    assert_eq!(nextest.basis, Basis::Recorded);
}

/// An application test without a recording estimates nothing of its application's calls, and says so.
#[test]
fn an_unrecorded_app_run_test_estimates_nothing_and_says_so() {
    let mut app = trial(fixed(3), BTreeMap::new());
    (app.subject, app.request, app.body) = (Subject::App, Err("an application test".into()), true);
    let e = estimate(&config(), &[app]);
    let t = &e.trials[0];
    assert_eq!(t.calls.subject.basis, Basis::Unknown);
    assert_eq!(
        (t.calls.subject.calls, t.calls.subject.cost_usd),
        (0.0, 0.0)
    );
    assert!(
        t.unknown
            .iter()
            .any(|u| u.contains("the calls its application makes (an AppRun test")),
        "{:?}",
        t.unknown
    );
}

/// A request of the text "abcdef" and the fixture file `name` (`tests/fixtures/media/`).
fn with_media(name: &str) -> CompletionRequest {
    let part = crate::completion::Media::file(format!(
        "{}/tests/fixtures/media/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .load()
    .unwrap();
    let mut request = CompletionRequest::new("m", "abcdef", 100);
    request.messages[0]
        .content
        .push(crate::completion::ContentBlock::Media(part));
    request
}

#[test]
fn an_unrecorded_image_is_counted_by_its_providers_rule_and_audio_it_cannot_price_is_unpriced() {
    let text_only = estimate(&config(), &[trial(fixed(1), BTreeMap::new())]);
    let mut t = trial(fixed(1), BTreeMap::new());
    t.request = Ok(("anthropic".into(), with_media("red-37x23.png")));
    let image = estimate(&config(), &[t]);
    // 37x23 / 750, rounded up: 2 tokens more than the text alone, at $1 a million.
    let more = image.trials[0].calls.subject.cost_usd - text_only.trials[0].calls.subject.cost_usd;
    assert!((more - 2e-6).abs() < 1e-12, "{more}");
    let mut t = trial(fixed(1), BTreeMap::new());
    t.request = Ok(("google".into(), with_media("silence-1.5s.wav")));
    let mut config = config();
    config.prices.insert("g".into(), {
        let mut p = Price::free();
        p.input_mtok = 1.0;
        p
    });
    t.request.as_mut().unwrap().1.model = "g".into();
    let gemini_audio = estimate(&config, &[t]);
    // Two started seconds of 32 tokens, the text's 2, a message's 8 and the request's 16.
    assert!(
        (gemini_audio.trials[0].calls.subject.cost_usd - (64.0 + 2.0 + 8.0 + 16.0) / 1e6).abs()
            < 1e-12
    );
    let mut t = trial(fixed(1), BTreeMap::new());
    t.request = Ok(("openai".into(), with_media("silence-1.5s.wav")));
    t.request.as_mut().unwrap().1.model = "m".into();
    let audio = estimate(&config, &[t]);
    let figure = audio.trials[0].calls.subject;
    assert_eq!(
        (figure.unpriced_calls, figure.cost_usd, figure.basis),
        (1.0, 0.0, Basis::Approximated)
    );
    // Named apart from the unpriced models: the fix is not a price.
    assert!(audio.unpriced.is_empty(), "{:?}", audio.unpriced);
    let text = render(&audio);
    assert!(
        text.contains(
            "t: unpriced: the audio silence-1.5s.wav (audio/wav): no published token rate for audio \
             in the OpenAI Chat Completions format"
        ),
        "{text}"
    );
    assert!(text.contains("unpriced"), "{text}");
    assert!(
        text.ends_with("total cost $0.00000 + unpriced calls\n"),
        "{text}"
    );
}

#[test]
fn a_part_with_no_count_costs_nothing_where_input_is_free() {
    // A self-hosted endpoint's model (`free = true`), or any price of $0 input: its output alone.
    let mut config = config();
    let mut price = Price::free();
    price.output_mtok = 2.0;
    config.prices.insert("local".into(), price);
    let mut t = trial(fixed(1), BTreeMap::new());
    let mut request = with_media("silence-1.5s.wav");
    request.model = "local".into();
    t.request = Ok(("openai".into(), request));
    let e = estimate(&config, &[t]);
    let figure = e.trials[0].calls.subject;
    assert_eq!(figure.unpriced_calls, 0.0, "{:?}", e.trials[0].unknown);
    assert!((figure.cost_usd - 100.0 * 2.0 / 1e6).abs() < 1e-15);
}

#[test]
fn a_recording_replaces_the_media_estimate() {
    // The audio OpenAI's format cannot price is unpriced only until a call is recorded: then its
    // recorded usage is the figure.
    let recorded = entry(1, CallRole::Subject, "m", (1000, 500));
    let mut t = trial(fixed(1), BTreeMap::from([(1, vec![&recorded])]));
    t.request = Ok(("openai".into(), with_media("silence-1.5s.wav")));
    let e = estimate(&config(), &[t]);
    let figure = e.trials[0].calls.subject;
    assert_eq!(
        (figure.basis, figure.unpriced_calls),
        (Basis::Recorded, 0.0)
    );
    assert!((figure.cost_usd - 2000.0 / 1e6).abs() < 1e-15);
    assert!(e.trials[0].unknown.is_empty(), "{:?}", e.trials[0].unknown);
}
