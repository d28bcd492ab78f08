//! Cassette file names: one per test or suite name, never shared by two names, never too long for the
//! file system.
//!
//! A name of ASCII words joined by `::` (`nested::greet`, a suite `a/b.evals.toml`) keeps the name it
//! always had, `::` as `.` (`nested.greet.cassette.json`): within such names the mapping is one to one.
//! Any other name (a dot of its own, as in `a.b.evals.toml`, a character that is not an ASCII letter,
//! digit, `_` or `-`, or a name too long) gets its readable part, cut short, then `~` and a hash of the
//! whole name (`__~1f0c….cassette.json` for `挨拶`): `~` never appears in the first kind, so no two
//! names share a file. Files stay ASCII: a file system that normalises Unicode (macOS) would list a
//! name other than the one written.

/// How every cassette file name ends.
pub const SUFFIX: &str = ".cassette.json";

/// The longest stem whose lock file (`<stem>.cassette.json.lock`, the longest name written) fits in
/// 255 bytes, the limit of common file systems.
const MAX_STEM: usize = 255 - SUFFIX.len() - ".lock".len();

/// How much of the readable name a hashed stem keeps before `~` and the hash.
const KEPT: usize = 64;

/// The stem of `name`'s cassette file.
pub fn stem(name: &str) -> String {
    let readable = readable(name);
    let plain = name.split("::").all(|word| {
        !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    if plain && readable.len() <= MAX_STEM {
        return readable;
    }
    let hash = crate::text::sha256_hex(&[name.as_bytes()], 8);
    // The readable name is ASCII, so any byte index is a character boundary.
    let kept = readable[..readable.len().min(KEPT)].trim_start_matches('.');
    format!("{kept}~{hash}")
}

/// `::` as `.`, every other character but an ASCII letter, digit, `.`, `_` or `-` as `_`. Not one to
/// one (`a::b` and `a.b`, `挨拶` and `質問`): a name it does not keep apart gets a hash too.
fn readable(name: &str) -> String {
    name.replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> String {
        format!("{}{SUFFIX}", stem(name))
    }

    #[test]
    fn names_of_ascii_words_keep_the_file_they_always_had() {
        assert_eq!(file("quick_start"), "quick_start.cassette.json");
        assert_eq!(
            file("nested::fake_colour"),
            "nested.fake_colour.cassette.json"
        );
        assert_eq!(file("a::b-c::D9"), "a.b-c.D9.cassette.json");
    }

    #[test]
    fn no_two_names_share_a_file() {
        let names = [
            "挨拶", "質問", "a::b", "a.b", "a_b", "a b", "a:b", "a::", "::a", "a::::b", "a.", ".a",
            "_a", "a~b",
        ];
        let files: Vec<String> = names.iter().map(|n| file(n)).collect();
        let mut unique = files.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{files:?}");
        assert!(files.iter().all(|f| f.is_ascii()), "{files:?}");
        assert!(file("挨拶").starts_with("__~"), "{}", file("挨拶"));
        assert!(file("a.b").starts_with("a.b~"), "{}", file("a.b"));
        assert!(!file(".a").starts_with('.'), "no hidden files");
        // The hash is of the name: the same file in every run and every version (the guide shows it).
        assert_eq!(stem("挨拶"), "__~886c45f23fa911ae");
    }

    #[test]
    fn a_long_name_is_cut_short_and_its_lock_file_name_fits() {
        for name in [
            "x".repeat(MAX_STEM),
            "x".repeat(MAX_STEM + 1),
            "é".repeat(300),
            format!("{}::{}", "a".repeat(200), "b".repeat(200)),
        ] {
            let lock = format!("{}.lock", file(&name));
            assert!(lock.len() <= 255, "{} bytes: {lock}", lock.len());
        }
        // The longest plain name that fits keeps its name; one byte more is hashed.
        assert_eq!(stem(&"x".repeat(MAX_STEM)), "x".repeat(MAX_STEM));
        assert_eq!(stem(&"x".repeat(MAX_STEM + 1)).len(), KEPT + 17);
        assert_ne!(
            file(&"x".repeat(MAX_STEM + 1)),
            file(&"x".repeat(MAX_STEM + 2)),
            "names alike for their first {KEPT} bytes"
        );
    }
}
