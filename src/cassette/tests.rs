//! The cassette store's own tests: keys, merges, prunes, the work directory, modes.

use super::*;

#[test]
fn a_cassette_that_does_not_parse_names_its_line_and_the_command_that_records_it_alone() {
    let dir = std::env::temp_dir().join(format!("pt-invalid-cassette-{}", std::process::id()));
    let store = CassetteStore::new(&dir);
    let path = store.path_for("quick_start");
    std::fs::create_dir_all(&dir).unwrap();
    let conflicted = "{\n  \"version\": 1,\n<<<<<<< HEAD\n  \"entries\": []\n=======\n  \"entries\": []\n>>>>>>> theirs\n}\n";
    std::fs::write(&path, conflicted).unwrap();
    let shown = store.open("quick_start").unwrap_err().to_string();
    assert!(
        shown.contains(".cassette.json:3 is not valid")
            && shown.contains("merge conflict markers")
            && shown
                .contains("PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- quick_start"),
        "{shown}"
    );
    assert!(!shown.to_lowercase().contains("delete"), "{shown}");
    std::fs::write(&path, "{\"version\": 1, \"entries\": [}").unwrap();
    let shown = CassetteStore::new(&dir)
        .open("quick_start")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains(":1 is not valid") && shown.contains("git checkout --"),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
use crate::completion::{CompletionRequest, CompletionResult};
use crate::role::CallRole;

fn entry(key: &str, run: u32) -> Entry {
    Entry {
        key: key.into(),
        test: "t".into(),
        run,
        role: CallRole::Subject,
        provider: "openai".into(),
        model: "m".into(),
        call: Exchange::Completion {
            request: CompletionRequest::new("m", "hi", 10),
            response: CompletionResult::new("hello", 1, 2),
        },
        latency_ms: 5,
        recorded_at: now_rfc3339(),
    }
}

#[test]
fn key_depends_on_run_and_request_only() {
    let req = CompletionRequest::new("m", "hi", 10);
    let k1 = entry_key("openai", &req, 1);
    assert_eq!(k1, entry_key("openai", &req, 1));
    assert_ne!(k1, entry_key("openai", &req, 2));
    assert_ne!(k1, entry_key("anthropic", &req, 1));
    let mut other = req.clone();
    other.temperature = Some(0.0);
    assert_ne!(k1, entry_key("openai", &other, 1));
    // A seed is part of the key when set; unset, the key is the one computed before seeds existed
    // (sha256 of `{"provider":"openai","model":"m","system":null,...,"run":1}`), so older
    // recordings still match.
    assert_eq!(k1, "c56028db4903ef4f9ea93a59");
    let mut seeded = req.clone();
    seeded.seed = Some(42);
    assert_ne!(k1, entry_key("openai", &seeded, 1));
}

#[test]
fn record_merge_prune_roundtrip() {
    let dir = std::env::temp_dir().join(format!("pt-cassette-{}", std::process::id()));
    let store = CassetteStore::new(&dir);
    let a = store.open("mod::greet").unwrap();
    assert_eq!(a.path().file_name().unwrap(), "mod.greet.cassette.json");
    assert_eq!(a.len(), 0);
    a.record(entry("k1", 1)).unwrap();
    a.record(entry("k0", 1)).unwrap();
    let on_disk = || CassetteStore::new(&dir).open("mod::greet").unwrap().len();
    assert_eq!(
        on_disk(),
        1,
        "the second recording within a second is buffered"
    );
    a.flush().unwrap();
    assert_eq!(on_disk(), 2);
    // A second process (a second store) records into the same file without losing k1.
    let other = CassetteStore::new(&dir).open("mod::greet").unwrap();
    other.record(entry("k2", 2)).unwrap();
    other.flush().unwrap();
    let reloaded = CassetteStore::new(&dir).open("mod::greet").unwrap();
    assert_eq!(reloaded.len(), 3);
    assert!(reloaded.lookup("k2").is_some());
    assert_eq!(
        reloaded.prune().unwrap(),
        Pruned {
            removed: 2,
            kept: 1
        }
    );
    let after = CassetteStore::new(&dir).open("mod::greet").unwrap();
    assert!(after.lookup("k1").is_none() && after.lookup("k2").is_some());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn lock_and_temporary_files_stay_in_a_directory_git_ignores() {
    let dir = std::env::temp_dir().join(format!("pt-cassette-work-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let store = CassetteStore::new(&dir);
    let cassette = store.open("greet").unwrap();
    cassette.record(entry("k1", 1)).unwrap();
    let work = dir.join(WORK_DIR);
    let listing = |d: &Path| {
        let mut names: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing(&dir), [WORK_DIR, "greet.cassette.json"]);
    // The lock file outlives the write: removing it is what let two writers hold "the" lock.
    assert_eq!(listing(&work), [".gitignore", "greet.cassette.json.lock"]);
    assert!(
        fs::read_to_string(work.join(".gitignore"))
            .unwrap()
            .ends_with("\n*\n")
    );

    // A writer killed mid-write left a partial temporary file and an empty `.gitignore`: the next
    // write mends the one and consumes the other.
    fs::write(work.join(".gitignore"), "").unwrap();
    fs::write(
        work.join("greet.cassette.json.tmp"),
        "{\"version\": 1, \"entr",
    )
    .unwrap();
    cassette.record(entry("k2", 2)).unwrap();
    cassette.flush().unwrap();
    assert_eq!(listing(&work), [".gitignore", "greet.cassette.json.lock"]);
    assert_eq!(
        fs::read_to_string(work.join(".gitignore")).unwrap(),
        WORK_DIR_GITIGNORE
    );
    assert_eq!(read_entries(&cassette.path).unwrap().len(), 2);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_skipped_test_keeps_its_recordings_through_a_prune() {
    let dir = std::env::temp_dir().join(format!("pt-cassette-keep-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let recorder = CassetteStore::new(&dir).open("suite").unwrap();
    let recorded = |test: &str, key: &str| Entry {
        test: test.into(),
        ..entry(key, 1)
    };
    recorder.record(recorded("suite::a", "a")).unwrap();
    recorder.record(recorded("suite::ab", "ab")).unwrap();
    recorder.record(recorded("suite::a::run_2", "a2")).unwrap();
    recorder.record(recorded("suite::gone", "gone")).unwrap();
    recorder.flush().unwrap();
    let cassette = CassetteStore::new(&dir).open("suite").unwrap();
    assert!(cassette.lookup("ab").is_some());
    cassette.keep_recordings_of("suite::a");
    assert_eq!(
        cassette.prune().unwrap(),
        Pruned {
            removed: 1,
            kept: 3
        }
    );
    let mut kept: Vec<String> = read_entries(&cassette.path).unwrap().into_keys().collect();
    kept.sort();
    assert_eq!(kept, ["a", "a2", "ab"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn modes_parse_and_unknown_lists_valid() {
    assert_eq!(CassetteMode::parse("Record").unwrap(), CassetteMode::Record);
    let err = CassetteMode::parse("sometimes").unwrap_err().to_string();
    assert!(err.contains("auto, replay, record, off"), "{err}");
}
