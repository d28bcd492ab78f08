//! The cassette files: records, merges, prunes, their lock and temporary files, and errors.

use std::fs;
use std::sync::Arc;

use super::entry::FORMAT_VERSION;
use super::*;
use crate::completion::{CompletionRequest, CompletionResult, Message};
use crate::role::CallRole;
use crate::shared::{WORK_DIR, WORK_DIR_GITIGNORE};
use crate::test_support::Scratch;

/// The entries of the file at `path`, in file order.
fn read_entries(path: &Path) -> Result<Vec<Entry>, CassetteError> {
    Ok(read_body(path)?.entries)
}

#[test]
fn a_cassette_that_does_not_parse_names_its_line_and_the_command_that_records_it_alone() {
    let scratch = Scratch::new("invalid-cassette");
    let dir = scratch.path();
    // The commands name the store's target: here `evals`.
    let store = CassetteStore::for_target(dir, Some("evals".into()));
    let path = store.path_for("quick_start");
    let conflicted = "{\n  \"version\": 4,\n<<<<<<< HEAD\n  \"entries\": []\n=======\n  \"entries\": []\n>>>>>>> theirs\n}\n";
    std::fs::write(&path, conflicted).unwrap();
    let shown = store.open("quick_start").unwrap_err().to_string();
    assert!(
        shown.contains(".cassette.json:3 is not valid")
            && shown.contains("merge conflict markers")
            && shown
                .contains("PROMPT_TESTER_CASSETTE=record cargo test --test evals -- quick_start"),
        "{shown}"
    );
    assert!(!shown.to_lowercase().contains("delete"), "{shown}");
    std::fs::write(&path, "{\"version\": 4, \"entries\": [}").unwrap();
    let shown = CassetteStore::new(dir)
        .open("quick_start")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains(":1 is not valid") && shown.contains("git checkout --"),
        "{shown}"
    );
}

/// Cassette `name`, opened by a store of this process's target in a new scratch folder `scratch`,
/// and that folder (the cassette's files go when it is dropped).
pub(super) fn opened(scratch: &str, name: &str) -> (Scratch, Arc<Cassette>) {
    let scratch = Scratch::new(scratch);
    let cassette = CassetteStore::new(scratch.path()).open(name).unwrap();
    (scratch, cassette)
}

fn entry(key: &str, run: u32) -> Entry {
    Entry {
        key: key.into(),
        test: "t".into(),
        target: None,
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
fn key_covers_every_turn_of_the_conversation() {
    let conversation = |example: &str| {
        let mut request = CompletionRequest::new("m", "Review: Dull.", 16);
        request.system = Some("Label reviews.".into());
        request.messages = vec![
            Message::user(example),
            Message::assistant("positive"),
            Message::user("Review: Dull."),
        ];
        request
    };
    let (old, new) = (
        conversation("Review: Loved it."),
        conversation("Review: Adored it."),
    );
    // The same prompt, the same system prompt: only an earlier turn differs.
    assert_ne!(entry_key("openai", &old, 1), entry_key("openai", &new, 1));
    assert_eq!(
        super::changes::describe(&old, &new),
        ["message 1 (user): -\"Review: Loved it.\" +\"Review: Adored it.\""]
    );
    let mut answered = old.clone();
    answered.messages[1] = Message::assistant("negative");
    assert_eq!(
        super::changes::describe(&old, &answered),
        ["message 2 (assistant): -\"positive\" +\"negative\""]
    );
}

/// A prune that removed `removed` entries and kept `kept`, deleting nothing.
fn removed_and_kept(removed: usize, kept: usize) -> Pruned {
    Pruned {
        removed,
        kept,
        ..Pruned::default()
    }
}

#[test]
fn record_merge_prune_roundtrip() {
    let (scratch, a) = opened("cassette", "mod::greet");
    let dir = scratch.path();
    assert_eq!(a.path().file_name().unwrap(), "mod.greet.cassette.json");
    assert_eq!(a.recorded_len(), None);
    a.record(entry("k1", 1)).unwrap();
    a.record(entry("k0", 1)).unwrap();
    let on_disk = || {
        CassetteStore::new(dir)
            .open("mod::greet")
            .unwrap()
            .recorded_len()
    };
    assert_eq!(
        on_disk(),
        Some(1),
        "the second recording within a second is buffered"
    );
    a.flush().unwrap();
    assert_eq!(on_disk(), Some(2));
    // A second process (a second store) records into the same file without losing k1.
    let other = CassetteStore::new(dir).open("mod::greet").unwrap();
    other.record(entry("k2", 2)).unwrap();
    other.flush().unwrap();
    let reloaded = CassetteStore::new(dir).open("mod::greet").unwrap();
    assert_eq!(reloaded.recorded_len(), Some(3));
    assert!(reloaded.lookup("k2").unwrap().is_some());
    assert_eq!(reloaded.prune().unwrap(), removed_and_kept(2, 1));
    let after = CassetteStore::new(dir).open("mod::greet").unwrap();
    assert!(after.lookup("k1").unwrap().is_none() && after.lookup("k2").unwrap().is_some());
}

#[test]
fn lock_and_temporary_files_stay_in_a_directory_git_ignores() {
    let (scratch, cassette) = opened("cassette-work", "greet");
    let dir = scratch.path();
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
    assert_eq!(listing(dir), [WORK_DIR, "greet.cassette.json"]);
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
        "{\"version\": 4, \"entr",
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
}

#[test]
fn a_skipped_test_keeps_its_recordings_through_a_prune() {
    let (scratch, recorder) = opened("cassette-keep", "suite");
    let dir = scratch.path();
    let recorded = |test: &str, key: &str| Entry {
        test: test.into(),
        ..entry(key, 1)
    };
    recorder.record(recorded("suite::a", "a")).unwrap();
    recorder.record(recorded("suite::ab", "ab")).unwrap();
    recorder.record(recorded("suite::a::run_2", "a2")).unwrap();
    recorder.record(recorded("suite::gone", "gone")).unwrap();
    recorder.flush().unwrap();
    let cassette = CassetteStore::new(dir).open("suite").unwrap();
    assert!(cassette.lookup("ab").unwrap().is_some());
    cassette.keep_recordings_of("suite::a");
    assert_eq!(cassette.prune().unwrap(), removed_and_kept(1, 3));
    let mut kept: Vec<String> = read_entries(&cassette.path)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    kept.sort();
    assert_eq!(kept, ["a", "a2", "ab"]);
}

#[test]
fn modes_parse_and_unknown_lists_valid() {
    assert_eq!(CassetteMode::parse("Record").unwrap(), CassetteMode::Record);
    let err = CassetteMode::parse("sometimes").unwrap_err().to_string();
    assert!(err.contains("auto, replay, record, off"), "{err}");
}

fn store_of(dir: &Path, target: &str) -> CassetteStore {
    CassetteStore::for_target(dir, Some(target.to_string()))
}

/// `(target, key)` of every entry of the file at `path`, in file order.
fn owners(path: &Path) -> Vec<(Option<String>, String)> {
    read_entries(path)
        .unwrap()
        .into_iter()
        .map(|e| (e.target, e.key))
        .collect()
}

fn owned(target: Option<&str>, key: &str) -> (Option<String>, String) {
    (target.map(str::to_string), key.to_string())
}

#[test]
fn two_targets_recording_the_same_call_keep_their_recordings_apart_and_prune_only_their_own() {
    let scratch = Scratch::new("cassette-targets");
    let dir = scratch.path();
    // `prompts` and `agents` each have a test `plan` with the same first call (`same`).
    for (target, own) in [("prompts", "p-only"), ("agents", "a-only")] {
        let plan = store_of(dir, target).open("plan").unwrap();
        plan.record(entry("same", 1)).unwrap();
        plan.record(entry(own, 1)).unwrap();
        plan.flush().unwrap();
    }
    let path = dir.join("plan.cassette.json");
    assert_eq!(owners(&path).len(), 4, "{:?}", owners(&path));
    assert!(
        fs::read_to_string(&path)
            .unwrap()
            .contains(&format!("\"version\": {FORMAT_VERSION}"))
    );
    // `prompts` changed its test: it now uses `same` only, and prunes.
    let prompts = store_of(dir, "prompts");
    let plan = prompts.open("plan").unwrap();
    assert_eq!(
        plan.lookup("same").unwrap().unwrap().target.as_deref(),
        Some("prompts"),
        "its own recording first"
    );
    assert!(prompts.unreadable().unwrap().is_empty());
    assert_eq!(plan.prune().unwrap(), removed_and_kept(1, 3));
    assert_eq!(
        owners(&path),
        [
            owned(Some("agents"), "a-only"),
            owned(Some("agents"), "same"),
            owned(Some("prompts"), "same"),
        ]
    );
    // A cassette no trial of `prompts` opened: only its entries go; a file left empty goes too.
    let other = store_of(dir, "agents").open("other").unwrap();
    other.record(entry("x", 1)).unwrap();
    other.flush().unwrap();
    let mine = store_of(dir, "prompts").open("gone").unwrap();
    mine.record(entry("y", 1)).unwrap();
    mine.flush().unwrap();
    let pruned = store_of(dir, "prompts").prune_unopened().unwrap();
    let pruned: Vec<(PathBuf, Pruned)> = pruned.into_iter().map(|(p, r)| (p, r.unwrap())).collect();
    let removed = Pruned {
        removed: 1,
        deleted: true,
        ..Pruned::default()
    };
    assert_eq!(
        pruned,
        [
            (dir.join("gone.cassette.json"), removed),
            (path.clone(), removed_and_kept(1, 2))
        ]
    );
    assert!(!dir.join("gone.cassette.json").exists());
    assert_eq!(owners(&dir.join("other.cassette.json")).len(), 1);
    assert_eq!(
        owners(&path),
        [
            owned(Some("agents"), "a-only"),
            owned(Some("agents"), "same")
        ]
    );
    // Without a recording of its own, a target replays another's: the key decides the answer.
    let replayed = store_of(dir, "prompts")
        .open("plan")
        .unwrap()
        .lookup("same");
    assert_eq!(replayed.unwrap().unwrap().target.as_deref(), Some("agents"));
}

/// A cassette whose entries name no target (recorded by a process that could not tell its own).
fn untargeted(entries: &[&str]) -> String {
    let entries: Vec<Entry> = entries.iter().map(|k| entry(k, 1)).collect();
    let body = FileBody {
        version: FORMAT_VERSION,
        entries,
        verdicts: Vec::new(),
    };
    serde_json::to_string_pretty(&body).unwrap() + "\n"
}

#[test]
fn a_file_of_a_version_not_read_is_refused_with_what_to_do() {
    let scratch = Scratch::new("cassette-version");
    let dir = scratch.path();
    let path = dir.join("greet.cassette.json");
    fs::write(&path, "{\"version\": 6, \"entries\": []}").unwrap();
    let shown = CassetteStore::new(dir)
        .open("greet")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains("greet.cassette.json is in format version 6")
            && shown.contains("reads version 5")
            && shown.contains("upgrade prompt-tester"),
        "{shown}"
    );
    fs::write(&path, "{\"version\": 4, \"entries\": []}").unwrap();
    let shown = CassetteStore::new(dir)
        .open("greet")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains("greet.cassette.json is in format version 4")
            && shown.contains("an earlier prompt-tester wrote it: record it again"),
        "{shown}"
    );
}

#[test]
fn a_prune_keeps_recordings_that_name_no_target_and_stops_at_a_file_that_does_not_parse() {
    let scratch = Scratch::new("cassette-untargeted");
    let dir = scratch.path();
    let greet = dir.join("greet.cassette.json");
    fs::write(&greet, untargeted(&["used", "stale"])).unwrap();
    fs::write(dir.join("gone.cassette.json"), untargeted(&["g"])).unwrap();
    fs::write(dir.join("broken.cassette.json"), "<<<<<<< HEAD\n").unwrap();
    let store = store_of(dir, "prompts");
    assert!(
        store
            .open("greet")
            .unwrap()
            .lookup("used")
            .unwrap()
            .is_some()
    );
    let unreadable: Vec<String> = store
        .unreadable()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        unreadable.len() == 1 && unreadable[0].contains("broken.cassette.json:1 is not valid"),
        "{unreadable:?}"
    );
    fs::remove_file(dir.join("broken.cassette.json")).unwrap();
    assert_eq!(
        store.prune_all()[0].1.as_ref().unwrap(),
        &removed_and_kept(0, 2)
    );
    assert!(store.prune_unopened().unwrap().is_empty());
    assert_eq!(owners(&greet), [owned(None, "used"), owned(None, "stale")]);
    assert!(dir.join("gone.cassette.json").exists());
    // A process that cannot tell its target owns nothing: it prunes nothing.
    let unknown = CassetteStore::for_target(dir, None);
    assert!(unknown.prune_unopened().unwrap().is_empty());
}

#[test]
fn names_that_shared_a_file_record_into_their_own_and_a_long_one_records() {
    let scratch = Scratch::new("cassette-names");
    let dir = scratch.path();
    let store = store_of(dir, "prompts");
    let long = "x".repeat(300);
    let names = ["挨拶", "質問", "a::b", "a.b", long.as_str()];
    for (i, name) in names.iter().enumerate() {
        let cassette = store.open(name).unwrap();
        let recorded = Entry {
            test: format!("{name}::case"),
            ..entry(&format!("k{i}"), 1)
        };
        cassette.record(recorded).unwrap();
        cassette.flush().unwrap();
    }
    let mut files: Vec<PathBuf> = names.iter().map(|n| store.path_for(n)).collect();
    assert_eq!(
        files[2],
        dir.join("a.b.cassette.json"),
        "ASCII words keep their name"
    );
    files.sort();
    files.dedup();
    assert_eq!(files.len(), names.len(), "{files:?}");
    for (i, name) in names.iter().enumerate() {
        let reread = store_of(dir, "prompts").open(name).unwrap();
        assert_eq!(reread.recorded_len(), Some(1), "{name}");
        assert!(reread.lookup(&format!("k{i}")).unwrap().is_some(), "{name}");
    }
}

#[test]
fn the_judge_s_instructions_are_written_once_per_file_and_read_back_whole() {
    let scratch = Scratch::new("cassette-texts");
    let dir = scratch.path();
    let store = store_of(dir, "prompts");
    let greet = store.open("greet").unwrap();
    let instructions = "You are a strict judge. ".repeat(40);
    for (key, run) in [("j1", 1), ("j2", 2)] {
        let mut judged = entry(key, run);
        judged.role = CallRole::Judge;
        if let Exchange::Completion { request, .. } = &mut judged.call {
            request.system = Some(instructions.clone());
        }
        greet.record(judged).unwrap();
    }
    let mut short = entry("s", 1);
    if let Exchange::Completion { request, .. } = &mut short.call {
        request.system = Some("Be brief.".into());
    }
    greet.record(short).unwrap();
    greet.flush().unwrap();
    let path = dir.join("greet.cassette.json");
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches("You are a strict judge.").count(),
        40,
        "once, not twice:\n{text}"
    );
    assert_eq!(text.matches("\"system_text\"").count(), 2, "{text}");
    assert!(
        text.contains("\"system\": \"Be brief.\""),
        "a short one stays inline:\n{text}"
    );
    let systems: Vec<Option<String>> = read_entries(&path)
        .unwrap()
        .into_iter()
        .map(|e| match e.call {
            Exchange::Completion { request, .. } => request.system,
            Exchange::Embedding { .. } | Exchange::Raw { .. } => None,
        })
        .collect();
    assert_eq!(
        systems,
        // In file order: run 1's judge and subject calls, then run 2's.
        [
            Some(instructions.clone()),
            Some("Be brief.".into()),
            Some(instructions)
        ]
    );
    // A text the entries name but the file lacks is a located error, not a silent gap.
    fs::write(&path, text.replace("\"texts\": {", "\"texts_gone\": {")).unwrap();
    let broken = read_entries(&path).unwrap_err().to_string();
    assert!(broken.contains("is not in the file's `texts`"), "{broken}");
}

#[test]
fn a_write_waiting_for_the_file_lock_does_not_hold_up_replays_or_recordings() {
    let (scratch, c) = opened("cassette-write-waits", "t");
    c.record(entry("a", 1)).unwrap();
    // Another process holds the file's lock: the next write waits for it.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(scratch.path().join(WORK_DIR).join("t.cassette.json.lock"))
        .unwrap();
    lock.lock().unwrap();
    c.record(entry("b", 2)).unwrap_or_default();
    let writer = {
        let c = c.clone();
        std::thread::spawn(move || c.flush())
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (done, finished) = std::sync::mpsc::channel();
    let reader = {
        let c = c.clone();
        std::thread::spawn(move || {
            let found = c.lookup("a").unwrap().is_some();
            c.record(entry("c", 3)).unwrap_or_default();
            done.send(found).unwrap();
        })
    };
    let found = finished.recv_timeout(std::time::Duration::from_secs(10));
    lock.unlock().unwrap();
    assert_eq!(found, Ok(true), "the replay waited for the write");
    writer.join().unwrap().unwrap();
    reader.join().unwrap();
    c.flush().unwrap();
    let keys: Vec<String> = read_entries(c.path())
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, ["a", "b", "c"]);
}

/// An entry whose request carries the image `bytes`, shown as `receipt.png`, keyed as the engine keys it.
pub(super) fn with_image(bytes: &[u8]) -> Entry {
    let part = crate::completion::Media::bytes("receipt.png", bytes)
        .load()
        .unwrap();
    let mut request = CompletionRequest::new("m", "Total?", 10);
    request.messages[0]
        .content
        .push(crate::completion::ContentBlock::Media(part));
    Entry {
        key: entry_key("openai", &request, 1),
        call: Exchange::Completion {
            request,
            response: CompletionResult::new("7.50", 1, 2),
        },
        ..entry("", 1)
    }
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR receipt";

#[test]
fn media_is_stored_once_beside_the_cassette_and_named_by_its_hash() {
    let (scratch, a) = opened("cassette-media", "receipt");
    let recorded = with_image(PNG);
    let key = recorded.key.clone();
    a.record(recorded).unwrap();
    a.flush().unwrap();
    let text = fs::read_to_string(a.path()).unwrap();
    let part = crate::completion::Media::bytes("r.png", PNG)
        .load()
        .unwrap();
    let file = scratch
        .path()
        .join("media")
        .join(format!("{}.png", part.sha256()));
    assert_eq!(fs::read(&file).unwrap(), PNG);
    assert!(
        text.contains(&format!("\"sha256\": \"{}\"", part.sha256())),
        "{text}"
    );
    assert!(text.contains(&format!("\"size\": {}", PNG.len())), "{text}");
    assert!(
        !text.contains(&part.base64()) && !text.contains("\"data\""),
        "{text}"
    );
    assert!(
        text.contains(&format!("\"version\": {FORMAT_VERSION}")),
        "{text}"
    );
    // Another test with the same image: one file.
    let b = CassetteStore::new(scratch.path()).open("other").unwrap();
    b.record(with_image(PNG)).unwrap();
    b.flush().unwrap();
    assert_eq!(
        fs::read_dir(scratch.path().join("media")).unwrap().count(),
        1
    );
    // Read back: the part's bytes come from the store; a changed image is another key.
    let found = CassetteStore::new(scratch.path())
        .open("receipt")
        .unwrap()
        .lookup(&key)
        .unwrap()
        .unwrap();
    let Exchange::Completion { request, .. } = &found.call else {
        panic!("a completion");
    };
    assert_eq!(
        request.messages[0].content,
        with_image(PNG).request_content()
    );
    let crate::completion::ContentBlock::Media(read) = &request.messages[0].content[1] else {
        panic!("a media part");
    };
    assert_eq!(read.bytes(), PNG);
    // The review shows the part as the file it is in, to open.
    let shown = changes::text_of(&request.messages[0]);
    assert!(
        shown.ends_with(&format!("[image receipt.png, 24 B: {}]", file.display())),
        "{shown}"
    );
    assert_eq!(
        entry_key("openai", request, 1),
        key,
        "the key is the hash's"
    );
    let changed = [PNG, b" more"].concat();
    assert_ne!(with_image(&changed).key, key);
}

impl Entry {
    fn request_content(&self) -> Vec<crate::completion::ContentBlock> {
        match &self.call {
            Exchange::Completion { request, .. } => request.messages[0].content.clone(),
            _ => Vec::new(),
        }
    }
}

#[test]
fn a_missing_media_file_is_an_error_naming_the_cassette_the_part_and_the_file() {
    let (scratch, a) = opened("cassette-media-missing", "receipt");
    a.record(with_image(PNG)).unwrap();
    a.flush().unwrap();
    let media = scratch.path().join("media");
    let file = fs::read_dir(&media)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::remove_file(&file).unwrap();
    let shown = CassetteStore::new(scratch.path())
        .open("receipt")
        .unwrap_err()
        .to_string();
    crate::test_support::assert_contains(
        &shown,
        &[
            "receipt.cassette.json",
            "media part receipt.png",
            &file.display().to_string(),
            "which is missing",
            "git checkout --",
            "record the test again",
        ],
    );
}

#[test]
fn a_prune_removes_the_media_no_cassette_names() {
    let (scratch, a) = opened("cassette-media-prune", "receipt");
    a.record(with_image(PNG)).unwrap();
    a.flush().unwrap();
    let b = CassetteStore::new(scratch.path()).open("other").unwrap();
    let other = [PNG, b" other"].concat();
    b.record(with_image(&other)).unwrap();
    b.flush().unwrap();
    let media = scratch.path().join("media");
    assert_eq!(fs::read_dir(&media).unwrap().count(), 2);
    // `other` is gone (its test was removed): its image is named by no cassette.
    fs::remove_file(b.path()).unwrap();
    let store = CassetteStore::new(scratch.path());
    let removed = store.prune_media().unwrap();
    let other_part = crate::completion::Media::bytes("o.png", other)
        .load()
        .unwrap();
    assert_eq!(
        removed,
        [media.join(format!("{}.png", other_part.sha256()))]
    );
    assert_eq!(fs::read_dir(&media).unwrap().count(), 1);
    assert!(store.open("receipt").is_ok(), "what a cassette names stays");
    assert_eq!(
        store.prune_media().unwrap(),
        Vec::<std::path::PathBuf>::new()
    );
    // A killed writer's temporary file (writers store under the lock the prune holds).
    let left = media.join(format!(".{}.png.4242.0.tmp", "ab".repeat(32)));
    fs::write(&left, b"half").unwrap();
    assert_eq!(store.prune_media().unwrap(), std::slice::from_ref(&left));
    assert!(!left.exists());
    assert_eq!(fs::read_dir(&media).unwrap().count(), 1);
}

/// Pending recordings kept in their own folder (`PROMPT_TESTER_PENDING_DIR`) store their media in
/// that folder's store: a prune removes what no pending file (or cassette) names there too.
#[test]
fn a_prune_removes_the_media_of_a_separate_pending_folder_no_file_names() {
    let scratch = Scratch::new("cassette-media-prune-pending");
    let (cassettes, pending) = (scratch.path().join("c"), scratch.path().join("p"));
    fs::create_dir_all(&cassettes).unwrap();
    let store = CassetteStore::new(&cassettes).with_pending_dir(Some(pending.clone()));
    let part = |bytes: &[u8]| {
        crate::completion::Media::bytes("r.png", bytes)
            .load()
            .unwrap()
    };
    let (named, unnamed) = (part(PNG), part(&[PNG, b" gone"].concat()));
    let media = super::media::MediaStore::beside(&pending);
    for p in [&named, &unnamed] {
        media.store(p).unwrap();
    }
    fs::write(
        pending.join("receipt.pending.json"),
        format!("{{\"sha256\": \"{}\"}}", named.sha256()),
    )
    .unwrap();
    assert_eq!(
        store.prune_media().unwrap(),
        [media.path_of(&super::media::reference(&unnamed))]
    );
    assert!(media.path_of(&super::media::reference(&named)).is_file());
}
