//! Cassette file names: suites whose names once shared a file (non-ASCII names, `a/b` beside `a.b`)
//! each record into their own and replay, and a suite name too long for a lock file records.

use super::*;

/// Records one case in each of `suites` (in a new scratch root), checks that each has its own file,
/// ASCII and short enough for its lock file, then replays them all offline. Returns the file names.
fn record_and_replay(scratch_name: &str, suites: &[&str]) -> Vec<String> {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake(scratch_name, &server);
    for (i, name) in suites.iter().enumerate() {
        suite(&scratch, name, 1, &[("c", &format!("thing {i}"))]);
    }
    let record = scratch.run_example(SUITES_ONLY, &["--record"], &[("FAKE_API_KEY", SECRET)]);
    record.assert_success();
    assert_eq!(server.request_count(), suites.len());
    let files: Vec<String> = files_under(&scratch.cassettes())
        .into_iter()
        .map(|f| f.display().to_string())
        .filter(|f| f.ends_with(".cassette.json"))
        .collect();
    assert_eq!(files.len(), suites.len(), "one file per suite: {files:?}");
    for file in &files {
        assert!(
            file.is_ascii() && file.len() + ".lock".len() <= 255,
            "{file}"
        );
        let tests = tests_in(&scratch.cassettes().join(file));
        assert_eq!(tests.len(), 1, "{file}: {tests:?}");
    }
    drop(server);
    let replay = scratch.run_example(SUITES_ONLY, &[], &[]);
    replay.assert_success();
    replay.assert_stderr_has(&format!("({} replayed from cassettes)", suites.len()));
    files
}

#[test]
fn suites_whose_names_once_shared_a_file_record_and_replay_apart() {
    let files = record_and_replay("names", &["挨拶", "質問", "a/b", "a.b"]);
    assert!(
        files.contains(&"a.b.cassette.json".to_string()),
        "`a/b` keeps the name it had: {files:?}"
    );
}

#[test]
fn a_suite_name_too_long_for_a_lock_file_records_and_replays() {
    // 240 bytes: the suite file fits in a file name (255 bytes), its lock file once did not.
    let files = record_and_replay("long-name", &["l".repeat(240).as_str(), "short"]);
    assert!(
        files.contains(&"short.cassette.json".to_string()),
        "{files:?}"
    );
}
