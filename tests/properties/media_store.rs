//! The media store beside the cassettes under concurrent processes: recorders (each its own process,
//! as nextest runs trials) record requests with images while other processes prune the store, the
//! images stored before any cassette names them (a file that is there is not written again, the
//! race a prune could lose it in). At the end every media file a cassette names is there and reads
//! back to its hash, and a last prune leaves no file that no cassette names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use prompt_tester::completion::{
    CompletionRequest, CompletionResult, ContentBlock, Media, MediaPart,
};
use prompt_tester::testing::cassette::{
    CallRole, CassetteStore, Entry, Exchange, MediaStore, entry_key, now_rfc3339, reference,
};
use prompt_tester_testkit::child::{Child, Scratch};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// The variables that tell the child what to do.
const ROLE: &str = "PT_MEDIA_STORE_ROLE";
const DIR: &str = "PT_MEDIA_STORE_DIR";
const IMAGES: &str = "PT_MEDIA_STORE_IMAGES";

/// Image `n` of the pool: a PNG signature then bytes of its own.
fn image(n: usize) -> MediaPart {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend(format!("image {n} ").repeat(50 + n).bytes());
    Media::bytes(format!("image{n}.png"), bytes).load().unwrap()
}

/// A call of test `test` whose prompt carries `part`.
fn entry(test: &str, part: MediaPart) -> Entry {
    let mut request = CompletionRequest::new("m", "Total?", 10);
    request.messages[0].content.push(ContentBlock::Media(part));
    Entry {
        key: entry_key("openai", &request, 1),
        test: test.into(),
        target: None,
        run: 1,
        role: CallRole::Subject,
        provider: "openai".into(),
        model: "m".into(),
        call: Exchange::Completion {
            request,
            response: CompletionResult::new("7.50", 1, 1),
        },
        latency_ms: 1,
        recorded_at: now_rfc3339(),
    }
}

/// The store of the cassettes in `dir`, recording as one target.
fn store(dir: &Path) -> CassetteStore {
    CassetteStore::for_target(dir, Some("props".into()))
}

/// What a child process does, told by its variables: a recorder records a call per image of its
/// list into its own cassette (each written at once); a pruner prunes the media store again and
/// again.
#[test]
#[ignore = "helper: media_store_survives_concurrent_recording_and_prune runs it in child processes"]
fn media_store_child() {
    let dir = PathBuf::from(std::env::var(DIR).unwrap());
    match std::env::var(ROLE).unwrap().as_str() {
        "prune" => {
            for _ in 0..40 {
                store(&dir).prune_media().unwrap();
            }
        }
        recorder => {
            let images: Vec<usize> = std::env::var(IMAGES)
                .unwrap()
                .split(',')
                .filter_map(|n| n.parse().ok())
                .collect();
            let cassette = store(&dir).open(recorder).unwrap();
            for n in images {
                cassette.record(entry(recorder, image(n))).unwrap();
                cassette.flush().unwrap();
            }
        }
    }
}

/// The media files in the store of `dir`, by name.
fn stored(dir: &Path) -> BTreeSet<String> {
    match std::fs::read_dir(dir.join("media")) {
        Ok(listing) => listing
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with('.'))
            .collect(),
        Err(_) => BTreeSet::new(),
    }
}

#[test]
fn media_store_survives_concurrent_recording_and_prune() {
    const POOL: usize = 6;
    // Each case starts processes: a few cases, each a different mix.
    let config = Config {
        cases: 6,
        failure_persistence: None,
        ..super::config()
    };
    let recorders = prop::collection::vec(prop::collection::vec(0..POOL, 1..5), 2..5);
    let mut runner = TestRunner::new(config);
    let case = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&(recorders, 1..3usize), |(recorders, pruners)| {
            let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let scratch = Scratch::new("media-store", &format!("case{n}"));
            let dir = scratch.path().to_path_buf();
            // Every image of the pool is stored before any cassette names one: unnamed, each is
            // what a prune removes, until a recorder's cassette names it.
            let media = MediaStore::beside(&dir);
            for n in 0..POOL {
                media.store(&image(n)).unwrap();
            }
            let mut children = Vec::new();
            for (i, images) in recorders.iter().enumerate() {
                let list: Vec<String> = images.iter().map(usize::to_string).collect();
                children.push(child(&dir, &format!("t{i}"), &list.join(",")));
            }
            for _ in 0..pruners {
                children.push(child(&dir, "prune", ""));
            }
            for child in children {
                let out = child.wait_with_output().unwrap();
                prop_assert!(
                    out.status.success(),
                    "{}\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            // Every cassette reads (none names a missing file), and each part reads back whole.
            let named: BTreeSet<String> = recorders
                .iter()
                .flatten()
                .map(|&n| reference(&image(n)))
                .collect();
            for (i, images) in recorders.iter().enumerate() {
                let cassette = store(&dir).open(&format!("t{i}"));
                prop_assert!(cassette.is_ok(), "t{i}: {}", cassette.unwrap_err());
                let entries = cassette.unwrap().entries();
                let distinct: BTreeSet<&usize> = images.iter().collect();
                prop_assert_eq!(entries.len(), distinct.len());
                for entry in entries {
                    let Exchange::Completion { request, .. } = &entry.call else {
                        panic!("a completion");
                    };
                    let ContentBlock::Media(part) = &request.messages[0].content[1] else {
                        panic!("a media part");
                    };
                    let read = media.read(&reference(part), Path::new("t.cassette.json"));
                    prop_assert!(read.is_ok(), "{}", read.unwrap_err());
                    let read = read.unwrap();
                    prop_assert_eq!(read.bytes(), part.bytes());
                }
            }
            prop_assert!(stored(&dir).is_superset(&named));
            // A last prune, alone: what no cassette names is gone, what one names stays.
            store(&dir).prune_media().unwrap();
            prop_assert_eq!(stored(&dir), named);
            Ok(())
        })
        .unwrap();
}

/// This test binary as a child: `role` in the cassette folder `dir`, with `images`.
fn child(dir: &Path, role: &str, images: &str) -> std::process::Child {
    Child::this_test("media_store::media_store_child")
        .args(["--ignored"])
        .env(ROLE, role)
        .env(DIR, dir)
        .env(IMAGES, images)
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary starts")
}
