//! The cassette index: built, trusted, rejected after an edit or when racy, ignored when corrupt, and
//! a load through it answering as a whole load does.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::*;
use crate::cassette::entry::SHARED_TEXT_MIN;
use crate::cassette::{Cassette, Exchange, Target, now_rfc3339};
use crate::completion::{CompletionRequest, CompletionResult};
use crate::role::CallRole;
use crate::test_support::Scratch;

const ANY: Loading = Loading::FewTrials { min_len: 0 };

fn entry(key: &str, test: &str, run: u32, target: Option<&str>, answer: &str) -> Entry {
    let mut request = CompletionRequest::new("m", format!("question {key}"), 10);
    // Long enough to be stored once in the file's `texts`.
    request.system = Some("You answer briefly. ".repeat(SHARED_TEXT_MIN / 10));
    Entry {
        key: key.into(),
        test: test.into(),
        target: target.map(str::to_string),
        run,
        role: CallRole::Subject,
        provider: "openai".into(),
        model: "m".into(),
        call: Exchange::Completion {
            request,
            response: CompletionResult::new(answer, 1, 2),
        },
        latency_ms: 5,
        recorded_at: now_rfc3339(),
    }
}

/// The entries of a suite `s`: each case's call, two trials asking one identical call (`shared`,
/// recorded by `s::a` as another target and by `s::b` before entries named theirs), and a numbered
/// run.
fn entries() -> Vec<Entry> {
    vec![
        entry("k1", "s::a", 1, Some("prompts"), "one"),
        entry("k2", "s::b", 1, Some("prompts"), "two"),
        entry("shared", "s::a", 1, Some("other"), "shared by other"),
        entry("shared", "s::b", 1, Some("prompts"), "shared, mine"),
        entry("k3", "s::c::run_2", 2, Some("prompts"), "three"),
        entry("k{\"[4", "s::\"quoted\"", 1, Some("prompts"), "four } ]"),
    ]
}

/// Writes `entries` as a cassette is written, its time `age` in the past; returns the file.
fn write_cassette(dir: &Path, entries: Vec<Entry>, age: Duration) -> PathBuf {
    let path = dir.join("s.cassette.json");
    let body = FileBody {
        version: crate::cassette::entry::FORMAT_VERSION,
        entries,
        verdicts: Vec::new(),
    };
    let json = serde_json::to_string_pretty(&body).unwrap();
    assert!(json.contains("\"texts\""), "the test covers shared texts");
    fs::write(&path, json + "\n").unwrap();
    age_file(&path, age);
    path
}

fn age_file(path: &Path, age: Duration) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

fn open(path: &Path, target: &str, loading: Loading) -> Cassette {
    let target: Target = Some(target.into());
    Cassette::load(path.into(), path.with_extension("pending"), target, loading).unwrap()
}

/// A cassette opened through its index (written by a first load).
fn indexed(path: &Path, target: &str) -> Cassette {
    assert!(!open(path, target, ANY).is_partial(), "no index yet");
    let cassette = open(path, target, ANY);
    assert!(
        cassette.is_partial(),
        "the index written by the first load is trusted"
    );
    cassette
}

fn answer(entry: Entry) -> String {
    match entry.call {
        Exchange::Completion { response, .. } => response.text,
        other => panic!("not a completion: {other:?}"),
    }
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn an_index_is_written_beside_the_cassette_and_holds_no_entry_contents() {
    let scratch = Scratch::new("index-written");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    open(&path, "prompts", ANY);
    let index = fs::read_to_string(index_path(&path)).unwrap();
    let mut lines = index.lines();
    assert_eq!(lines.next(), Some(HEADER));
    assert_eq!(lines.nth(1), Some("entries 6"));
    assert!(
        index.contains("k1\t") && index.contains("\t\"s::\\\"quoted\\\"\""),
        "{index}"
    );
    assert!(
        !index.contains("one") && !index.contains("briefly"),
        "{index}"
    );
    // In the git-ignored work folder.
    assert_eq!(
        index_path(&path).parent().unwrap().file_name().unwrap(),
        WORK_DIR
    );
    assert!(scratch.path().join(WORK_DIR).join(".gitignore").exists());
}

#[test]
fn a_small_file_or_a_whole_load_writes_no_index() {
    let scratch = Scratch::new("index-small");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    let len = fs::metadata(&path).unwrap().len();
    open(&path, "prompts", Loading::FewTrials { min_len: len + 1 });
    open(&path, "prompts", Loading::Whole);
    assert!(!index_path(&path).exists());
}

#[test]
fn lookups_through_the_index_answer_as_a_whole_load_does() {
    let scratch = Scratch::new("index-lookup");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    let whole = open(&path, "prompts", Loading::Whole);
    let partial = indexed(&path, "prompts");
    for key in ["k1", "k2", "shared", "k3", "k{\"[4", "never"] {
        assert_eq!(
            partial.lookup(key).unwrap(),
            whole.lookup(key).unwrap(),
            "{key}"
        );
    }
    // Another trial's identical call answers: `s::b`'s, this target's own, before `other`'s.
    let shared = partial.lookup("shared").unwrap().unwrap();
    assert_eq!(shared.test, "s::b");
    // The shared system prompt is put back.
    let Exchange::Completion { request, .. } = partial.lookup("k1").unwrap().unwrap().call else {
        panic!("a completion");
    };
    assert!(request.system.unwrap().starts_with("You answer briefly."));
    // Only what was looked up was parsed.
    assert!(partial.is_partial());
}

#[test]
fn a_miss_tells_stale_from_never_recorded_as_a_whole_load_does() {
    let scratch = Scratch::new("index-miss");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    let whole = open(&path, "prompts", Loading::Whole);
    let partial = indexed(&path, "prompts");
    for (test, run) in [
        ("s::a", 1),
        ("s::b", 1),
        ("s::c", 2),
        ("s::new", 1),
        ("s::a", 2),
    ] {
        assert_eq!(
            partial.sample_recordings(&partial.sample(test, run)),
            whole.sample_recordings(&whole.sample(test, run)),
            "{test} run {run}"
        );
    }
    assert_eq!(partial.sample_recordings(&partial.sample("s::new", 1)), 0);
    assert_eq!(partial.sample_recordings(&partial.sample("s::b", 1)), 2);
    assert_eq!(partial.recorded_len(), whole.recorded_len());
}

#[test]
fn whether_a_trial_has_recordings_is_answered_from_the_index() {
    let scratch = Scratch::new("index-has");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    let whole = open(&path, "prompts", Loading::Whole);
    let partial = indexed(&path, "prompts");
    for test in [
        "s::a",
        "s::c",
        "s::\"quoted\"",
        "s::",
        "s",
        "s::new",
        "s::c::run",
    ] {
        assert_eq!(
            partial.has_recordings_of(test),
            whole.has_recordings_of(test),
            "{test}"
        );
    }
    assert!(partial.has_recordings_of("s::c") && !partial.has_recordings_of("s::"));
    assert!(partial.is_partial(), "answered without parsing the entries");
}

#[test]
fn an_edit_of_the_same_length_is_seen() {
    let scratch = Scratch::new("index-edit");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    assert_eq!(
        answer(indexed(&path, "prompts").lookup("k1").unwrap().unwrap()),
        "one"
    );
    // Edited in place (the same inode), a minute later, to an answer of the same length.
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("\"one\"", "\"new\"")).unwrap();
    age_file(&path, Duration::from_secs(5));
    let again = open(&path, "prompts", ANY);
    assert!(!again.is_partial());
    assert_eq!(answer(again.lookup("k1").unwrap().unwrap()), "new");
    // Replaced by a rename, with the same length and time as the file indexed now.
    // That load indexed the edited file.
    let now_indexed = open(&path, "prompts", ANY);
    assert!(now_indexed.is_partial());
    assert_eq!(answer(now_indexed.lookup("k1").unwrap().unwrap()), "new");
    let modified = fs::metadata(&path).unwrap().modified().unwrap();
    let other = scratch.path().join("other");
    fs::write(
        &other,
        fs::read_to_string(&path)
            .unwrap()
            .replace("\"new\"", "\"old\""),
    )
    .unwrap();
    fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    fs::rename(&other, &path).unwrap();
    let renamed = open(&path, "prompts", ANY);
    if cfg!(unix) {
        assert!(!renamed.is_partial(), "another inode");
        assert_eq!(answer(renamed.lookup("k1").unwrap().unwrap()), "old");
    }
}

#[test]
fn a_racy_file_is_parsed_and_not_indexed() {
    let scratch = Scratch::new("index-racy");
    // Written just now: an index written now could miss a change made in the same instant.
    let path = write_cassette(scratch.path(), entries(), Duration::ZERO);
    assert!(!open(&path, "prompts", ANY).is_partial());
    assert!(!index_path(&path).exists(), "no index of a racy file");
    // An index written within the racy margin of the file's time is not trusted.
    age_file(&path, MINUTE);
    indexed(&path, "prompts");
    let modified = fs::metadata(&path).unwrap().modified().unwrap();
    let index = fs::File::options()
        .write(true)
        .open(index_path(&path))
        .unwrap();
    index.set_modified(modified + RACY / 2).unwrap();
    assert!(!open(&path, "prompts", ANY).is_partial());
}

#[test]
fn a_corrupt_or_foreign_index_is_ignored() {
    let scratch = Scratch::new("index-corrupt");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    indexed(&path, "prompts");
    let index = index_path(&path);
    let good = fs::read_to_string(&index).unwrap();
    let broken = [
        good.replace(HEADER, "prompt-tester cassette index 99"),
        good.lines().take(4).collect::<Vec<_>>().join("\n"),
        good.replace("k1\t", "k1\tx"),
        "garbage".to_string(),
        String::new(),
    ];
    for text in broken {
        fs::write(&index, &text).unwrap();
        age_file(&index, Duration::ZERO);
        let cassette = open(&path, "prompts", ANY);
        assert_eq!(
            answer(cassette.lookup("k1").unwrap().unwrap()),
            "one",
            "{text}"
        );
        assert_eq!(
            answer(cassette.lookup("k2").unwrap().unwrap()),
            "two",
            "{text}"
        );
    }
    // Ranges that point elsewhere: the entry there has another key, and the file is parsed whole.
    fs::write(
        &index,
        good.replace("k1\t", "k1-moved\t").replace("k2\t", "k1\t"),
    )
    .unwrap();
    age_file(&index, Duration::ZERO);
    let cassette = open(&path, "prompts", ANY);
    assert!(cassette.is_partial());
    assert_eq!(answer(cassette.lookup("k1").unwrap().unwrap()), "one");
    assert!(!cassette.is_partial());
}

#[test]
fn a_recording_made_through_the_index_keeps_every_other_entry() {
    let scratch = Scratch::new("index-record");
    let path = write_cassette(scratch.path(), entries(), MINUTE);
    let partial = Arc::new(indexed(&path, "prompts"));
    assert!(partial.lookup("k2").unwrap().is_some());
    partial
        .record(entry("k9", "s::d", 1, None, "nine"))
        .unwrap();
    partial.flush().unwrap();
    let written = open(&path, "prompts", Loading::Whole);
    assert_eq!(written.recorded_len(), Some(7));
    assert_eq!(
        written.lookup("k9").unwrap().unwrap().target.as_deref(),
        Some("prompts")
    );
    assert_eq!(answer(written.lookup("k1").unwrap().unwrap()), "one");
}

#[test]
fn the_layout_finds_texts_and_entries_whatever_their_contents() {
    let text = r#" { "version" : 4, "note": "a } ] \" { [", "texts": {"a": "x\"}"},
        "entries": [ {"k": "]"} ,[1, {"x": [2]}], "s\\", 3 ], "verdicts": [] }"#;
    let layout = scan(text).unwrap();
    let slice = |(start, end): (usize, usize)| &text[start..end];
    assert_eq!(slice(layout.texts.unwrap()), r#"{"a": "x\"}"}"#);
    let found: Vec<&str> = layout.entries.iter().map(|r| slice(*r)).collect();
    assert_eq!(
        found,
        [r#"{"k": "]"}"#, r#"[1, {"x": [2]}]"#, r#""s\\""#, "3"]
    );
    assert_eq!(scan("[1]"), None);
    assert_eq!(scan(r#"{"version": 4}"#), None, "no entries");
}

/// A trial run alone (nextest) reads its cassette through the index: a media file its recording
/// names that is gone fails its lookup as a whole load fails, naming the cassette, the part and the
/// file, not a replay that passes without it.
#[test]
fn a_missing_media_file_fails_a_lookup_through_the_index_as_a_whole_load_does() {
    let scratch = Scratch::new("index-media-missing");
    let path = scratch.path().join("receipt.cassette.json");
    let recorded = crate::cassette::tests::with_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let key = recorded.key.clone();
    let writer = open(&path, "prompts", ANY);
    writer.record(recorded).unwrap();
    writer.flush().unwrap();
    age_file(&path, MINUTE);
    let cassette = indexed(&path, "prompts");
    assert!(cassette.lookup(&key).unwrap().is_some());
    let media = scratch.path().join("media");
    for file in fs::read_dir(&media).unwrap() {
        fs::remove_file(file.unwrap().path()).unwrap();
    }
    let cassette = open(&path, "prompts", ANY);
    assert!(cassette.is_partial());
    let error = cassette.lookup(&key).unwrap_err();
    let whole = Cassette::load(
        path.clone(),
        path.with_extension("pending"),
        Some("prompts".into()),
        Loading::Whole,
    )
    .unwrap_err();
    for e in [&error, &whole] {
        assert!(matches!(e, CassetteError::MediaMissing { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("receipt.cassette.json") && text.contains(&*media.to_string_lossy()),
            "{text}"
        );
    }
    assert_eq!(error.to_string(), whole.to_string());
}
