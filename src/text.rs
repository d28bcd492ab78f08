//! Text files as every reader reads them: lines ending in `\n`, and UTF-8, or an error that says
//! where it is not. And the one SHA-256 in hex that cassette keys, file names and media hashes use.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::io;
use std::path::Path;

use ring::digest::{Context, SHA256};

/// The file at `path` as UTF-8 text, its lines ending in `\n` ([`read_bytes`]). A file that is not
/// UTF-8 (a binary, another encoding, a cut multi-byte character) is an `InvalidData` error naming the
/// line and column of its first byte that is not.
pub(crate) fn read(path: &Path) -> io::Result<String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = valid.len() - line_start + 1;
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("line {line}, column {column} is not UTF-8 text (save the file as UTF-8)"),
        )
    })
}

/// The bytes of the file at `path`, each `\r\n` read as `\n`: a Windows checkout (git's `autocrlf`)
/// holds the `\r\n` a prompt, a suite or a dataset was never written with, and what is rendered, keyed
/// and compared from it must be the text of every other checkout. A lone `\r` is kept.
pub(crate) fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    Ok(unix_line_endings(std::fs::read(path)?))
}

/// `bytes` with each `\r\n` as `\n` (neither byte is ever part of a multi-byte UTF-8 character).
fn unix_line_endings(mut bytes: Vec<u8>) -> Vec<u8> {
    // Most files have no `\r`: one memchr pass instead of a debug build's byte loop over them.
    if !bytes.contains(&b'\r') {
        return bytes;
    }
    let mut kept = 0;
    for i in 0..bytes.len() {
        if !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            bytes[kept] = bytes[i];
            kept += 1;
        }
    }
    bytes.truncate(kept);
    bytes
}

/// The first `bytes` bytes (at most 32) of the SHA-256 of `parts` fed in order, in hex. ring's,
/// which rustls already builds: a hash crate of its own would add eight crates to every build.
pub(crate) fn sha256_hex(parts: &[&[u8]], bytes: usize) -> String {
    let mut context = Context::new(&SHA256);
    for part in parts {
        context.update(part);
    }
    hex(&context.finish().as_ref()[..bytes])
}

/// The SHA-256, in hex, of `parts` each written as its length then its bytes: parts that cannot run
/// into each other (`"ab" + "c"` and `"a" + "bc"` differ).
pub(crate) fn digest_of_parts<S: AsRef<str>>(parts: impl IntoIterator<Item = S>) -> String {
    let mut context = Context::new(&SHA256);
    for part in parts {
        let part = part.as_ref();
        context.update(&part.len().to_le_bytes());
        context.update(part.as_bytes());
    }
    hex(context.finish().as_ref())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(2 * bytes.len());
    for b in bytes {
        hex.push(char::from(DIGITS[usize::from(b >> 4)]));
        hex.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    hex
}

/// `path` relative to `root` when it is below it.
pub fn display_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-2's "abc" vector, fed whole or in parts, in full or cut to its first bytes.
    #[test]
    fn sha256_hex_is_the_standard_digest_cut_to_its_first_bytes() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(&[b"abc"], 32), abc);
        assert_eq!(sha256_hex(&[b"a", b"", b"bc"], 32), abc);
        assert_eq!(sha256_hex(&[b"abc"], 6), abc[..12]);
        assert_ne!(digest_of_parts(["ab", "c"]), digest_of_parts(["a", "bc"]));
    }

    #[test]
    fn the_first_byte_that_is_not_utf8_is_located() {
        let dir = crate::test_support::Scratch::new("text");
        let error = read(&dir.file("t.toml", b"a = 1\nb = \"caf\xe9\"\n")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            error.to_string(),
            "line 2, column 9 is not UTF-8 text (save the file as UTF-8)"
        );
    }

    #[test]
    fn windows_line_endings_read_as_the_text_of_every_other_checkout() {
        let dir = crate::test_support::Scratch::new("text-crlf");
        let crlf = dir.file("p.md", "Say hi\r\nto {name}.\r\n\r\nA lone \r stays.\r\n");
        assert_eq!(
            read(&crlf).unwrap(),
            "Say hi\nto {name}.\n\nA lone \r stays.\n"
        );
        assert_eq!(
            read_bytes(&crlf).unwrap(),
            read(&crlf).unwrap().into_bytes()
        );
        let bad = dir.file("b.toml", b"a = 1\r\nb = \"caf\xe9\"\r\n");
        assert_eq!(
            read(&bad).unwrap_err().to_string(),
            "line 2, column 9 is not UTF-8 text (save the file as UTF-8)"
        );
    }
}
