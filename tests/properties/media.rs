//! Media headers (an image's size, a PDF's pages, audio's seconds), read from any bytes: whatever
//! they are, the reader returns, and what it reads is a size, never a panic.

use prompt_tester::prelude::Media;
use proptest::prelude::*;

use super::inputs::hostile;
use super::{config, returns};

/// Real files of every type a header is read from (`tests/fixtures/media/`).
fn seeds() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/media");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect()
}

#[test]
fn any_bytes_give_a_size_or_unknown_never_a_panic() {
    let seeds = seeds();
    assert!(seeds.len() >= 10, "the fixtures of every media type");
    proptest!(config(), |(bytes in hostile(seeds.clone()))| {
        let bytes = bytes.0;
        // Most mutants keep their seed's signature, so each type's reader gets mangled headers.
        returns("the media header reader", move || {
            if let Ok(part) = Media::bytes("m", bytes).load() {
                let _ = part.extent();
            }
        });
    });
}
