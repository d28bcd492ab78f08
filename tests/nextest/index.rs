//! A suite's large cassette replayed under nextest through its index (`cassette/index.rs`): each
//! `--exact` process parses only the entries it looks up, the index is written once and trusted by
//! the processes after, and an edit of the cassette is replayed as edited.

use std::time::{Duration, SystemTime};

use prompt_tester_testkit::child::Scratch;
use prompt_tester_testkit::{FakeProvider, Wire};

use super::{nextest, status, wrapper_crate};

/// Cases of suite `big`: enough for a cassette past the size an index is kept for (64 KiB).
const CASES: usize = 100;

/// The suite `big`, recorded; its cassette's time set an hour back, as a checkout's would be.
fn big(scratch: &Scratch, fake: &FakeProvider) -> std::path::PathBuf {
    wrapper_crate(scratch);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        fake.base_url(Wire::OpenAi),
    ));
    let mut suite = format!(
        "prompt = \"Say {{word}}. {}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\n\
         assert = [{{ contains = \"echo\" }}]\n",
        "Then say nothing else at all. ".repeat(8)
    );
    for i in 0..CASES {
        suite.push_str(&format!(
            "[[cases]]\nname = \"c{i:03}\"\ninputs = {{ word = \"w{i:03}\" }}\n"
        ));
    }
    scratch.file("prompt-tests/big.evals.toml", &suite);
    let record = scratch.run_example(
        "cassette_fixture",
        &[],
        &[("PROMPT_TESTER_CASSETTE", "record")],
    );
    record.assert_success();
    assert_eq!(fake.request_count(), CASES, "{}", record.context());
    let cassette = scratch.cassettes().join("big.cassette.json");
    let len = std::fs::metadata(&cassette).unwrap().len();
    assert!(
        len > 64 * 1024,
        "the cassette is large enough to index: {len} bytes"
    );
    set_modified(&cassette, SystemTime::now() - Duration::from_secs(3600));
    cassette
}

fn set_modified(path: &std::path::Path, time: SystemTime) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(time).unwrap();
}

const REPLAY: [(&str, &str); 2] = [("PROMPT_TESTER_CASSETTE", "replay"), ("CI", "1")];

#[test]
fn a_large_cassette_replays_under_nextest_through_its_index_and_an_edit_is_replayed_as_edited() {
    let fake = FakeProvider::start();
    let scratch = Scratch::new("nextest", "index");
    let cassette = big(&scratch, &fake);
    let index = scratch
        .cassettes()
        .join(".prompt-tester/big.cassette.json.index");
    let first_ten = ["-E", "test(/^big::c00/)"];
    let Some(run) = nextest(&scratch, &first_ten, &REPLAY) else {
        return;
    };
    assert!(run.success(), "{}", run.context());
    assert_eq!(status(&run, "big::c000"), "PASS", "{}", run.context());
    assert_eq!(status(&run, "big::c009"), "PASS", "{}", run.context());
    assert_eq!(
        fake.request_count(),
        CASES,
        "the trials replay: {}",
        run.context()
    );
    let written = std::fs::metadata(&index)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", index.display(), run.context()))
        .modified()
        .unwrap();

    // Every process of a second run trusts the index: a process that did not would write it anew.
    let Some(again) = nextest(&scratch, &["-E", "test(/^big::c01/)"], &REPLAY) else {
        return;
    };
    assert!(again.success(), "{}", again.context());
    assert_eq!(status(&again, "big::c015"), "PASS", "{}", again.context());
    assert_eq!(
        std::fs::metadata(&index).unwrap().modified().unwrap(),
        written,
        "the index was trusted, not written again"
    );

    // An edit of one answer, in place and of the same length, dated an hour back too: the process of
    // that trial replays the new answer (which fails its assertion), the others the same ones. (The
    // index is not trusted for the edited file; were it, the ranges would still hold each key's entry,
    // read from the file as it is now: the unit tests check the rule itself.)
    let text = std::fs::read_to_string(&cassette).unwrap();
    let answer = "\"echo: Say w003.";
    assert_eq!(text.matches(answer).count(), 1, "one answer to edit");
    std::fs::write(&cassette, text.replace(answer, "\"ECHO: Say w003.")).unwrap();
    set_modified(&cassette, SystemTime::now() - Duration::from_secs(3000));
    let Some(edited) = nextest(&scratch, &first_ten, &REPLAY) else {
        return;
    };
    assert_eq!(status(&edited, "big::c003"), "FAIL", "{}", edited.context());
    let shown = format!("{}{}", edited.stdout(), edited.stderr());
    assert!(shown.contains("ECHO: Say w003."), "{}", edited.context());
    assert_eq!(status(&edited, "big::c004"), "PASS", "{}", edited.context());
    assert_eq!(fake.request_count(), CASES, "{}", edited.context());
}
