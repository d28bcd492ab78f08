//! The crate's `.env` file: read whole and checked first, then handed to the configuration's reading
//! of the environment (variables the process has win) and to the redaction list; never written into
//! the environment, which other threads may be reading.

use std::path::{Path, PathBuf};

use super::error::HarnessError;

/// The byte-order mark dotenvy skips when it loads a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Loads `<root>/.env`, if there is one, beneath the environment (see [`crate::config::add_dotenv`]).
/// A file that does not parse loads nothing: the error names its line, never its text (which may hold
/// a key).
pub(crate) fn load(root: &Path) -> Result<(), HarnessError> {
    let path = root.join(".env");
    if read(&path)?.is_none() {
        return Ok(());
    }
    let values = dotenvy::from_path_iter(&path)
        .and_then(|vars| vars.collect::<Result<Vec<(String, String)>, _>>())
        .map_err(|e| error(path, &e, b""))?;
    crate::redact::protect_dotenv(&values);
    crate::config::add_dotenv(values);
    Ok(())
}

/// The names the file at `path` sets, in order (`None`: there is no file), without loading them.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<String>>, HarnessError> {
    let text = match crate::text::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(error(path.to_path_buf(), &dotenvy::Error::Io(e), b"")),
    };
    let body = text.as_bytes();
    let body = body.strip_prefix(BOM).unwrap_or(body);
    dotenvy::from_read_iter(body)
        .map(|item| item.map(|(name, _)| name))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|e| error(path.to_path_buf(), &e, body))
}

/// The error for `e`, located by its line in `body` where dotenvy says which line it was.
fn error(path: PathBuf, e: &dotenvy::Error, body: &[u8]) -> HarnessError {
    let problem = match e {
        // dotenvy's message quotes the line, which may hold a key: name only where it is.
        dotenvy::Error::LineParse(line, at) => format!(
            "{} is not `NAME=value` (an unclosed quote, or a name a variable cannot have); its text is \
             not shown, as it may hold a key",
            place(&String::from_utf8_lossy(body), line, *at)
        ),
        other => other.to_string(),
    };
    HarnessError::Dotenv { path, problem }
}

/// Where the logical line `line` that dotenvy could not parse at byte `at` of it is in `text`: "line
/// L, column C" (the column when the problem is on its first line). dotenvy reads whole lines (a
/// quoted value may go on over several), so `line` begins at a line's start: the first such start is
/// it, as the same text earlier would have failed first.
fn place(text: &str, line: &str, at: usize) -> String {
    let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    let Some(number) = starts
        .enumerate()
        .find(|&(_, start)| !line.is_empty() && text[start..].starts_with(line))
        .map(|(number, _)| number)
    else {
        return "a line".to_string();
    };
    let first = line.split('\n').next().unwrap_or_default();
    match first.get(..at) {
        Some(before) if at < first.trim_end().len() => {
            format!("line {}, column {}", number + 1, before.chars().count() + 1)
        }
        _ => format!("line {}", number + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Scratch;

    /// Checks that a `.env` holding `text` is a problem that says `says` and shows no secret of it
    /// (`sk-live` stands for one).
    #[track_caller]
    fn problem_saying(text: &[u8], says: &str) {
        let dir = Scratch::new("dotenv");
        let error = read(&dir.file(".env", text)).unwrap_err().to_string();
        assert!(error.contains(says), "{error}");
        assert!(!error.contains("sk-live"), "{error}");
    }

    #[test]
    fn a_loaded_file_is_read_beneath_the_environment_and_never_written_into_it() {
        let dir = Scratch::new("dotenv-load");
        dir.file(
            ".env",
            "PT_DOTENV_TEST_ONLY_KEY=sk-dotenv-test-0123456789
PATH=/nowhere-from-dotenv
",
        );
        load(dir.path()).unwrap();
        // Not set in the environment (other threads may read it), yet what the configuration reads.
        assert_eq!(std::env::var_os("PT_DOTENV_TEST_ONLY_KEY"), None);
        assert_eq!(
            crate::config::env_var("PT_DOTENV_TEST_ONLY_KEY").as_deref(),
            Some("sk-dotenv-test-0123456789")
        );
        // A variable the process has wins.
        assert_eq!(
            crate::config::env_var("PATH"),
            std::env::var("PATH").ok().filter(|p| !p.trim().is_empty())
        );
        // Its secrets are redacted like the environment's.
        assert_eq!(
            crate::redact::redact("k=sk-dotenv-test-0123456789"),
            "k=[REDACTED:PT_DOTENV_TEST_ONLY_KEY]"
        );
    }

    #[test]
    fn a_line_that_does_not_parse_is_named_by_number_without_its_text() {
        problem_saying(
            b"A=1\n# c\nB=2\nSECRET_KEY sk-live-abcdefgh\n",
            ".env: line 4, column 12 is not `NAME=value`",
        );
        problem_saying(
            b"A=1\nB=\"unclosed sk-live-abcdefgh\nC=3\n",
            ": line 2 is not",
        );
    }

    /// The line is found where it starts, not where its text first appears (line 2's value holds
    /// line 3's text; a name may hold `-`, so line 3 wants its `=` where `def` is).
    #[test]
    fn the_line_named_is_the_one_that_does_not_parse_with_the_column_of_the_problem() {
        problem_saying(
            b"A=\"x\"\nB=sk-live-abc def\nsk-live-abc def\n",
            ".env: line 3, column 13 is not `NAME=value`",
        );
        // An unclosed quote: the line it opens on.
        problem_saying(b"A=1\nB=\"open\nC=2\n", ".env: line 2 is not");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_naming_the_file_and_line() {
        problem_saying(
            b"A=1\nB=\xff\xfe\n",
            ".env: line 2, column 3 is not UTF-8 text",
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped_as_dotenvy_skips_it() {
        let dir = Scratch::new("dotenv-bom");
        let path = dir.file(".env", b"\xEF\xBB\xBFPT_BOM_NAME=1\n");
        assert_eq!(read(&path).unwrap(), Some(vec!["PT_BOM_NAME".to_string()]));
        assert_eq!(read(&dir.path().join("none")).unwrap(), None);
    }
}
