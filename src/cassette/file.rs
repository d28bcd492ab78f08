//! Cassette and pending files on disk: reading one (with a located error and advice that never says
//! "delete it"), and rewriting one under its lock with an atomic rename. Lock and temporary files live
//! in [`crate::shared::WORK_DIR`], which ignores itself for git.

use std::path::{Path, PathBuf};

use super::entry::{FORMAT_VERSION, FileBody};
use crate::redact::redact;
use crate::shared::{Shared, work_dir};

/// A cassette file error.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// Reading or writing failed.
    #[error("cassette {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a cassette: most often a merge left conflict markers in it.
    #[error(
        "cassette {}:{line} is not valid: {message}; {}",
        path.display(),
        invalid_advice(path, *conflict, rerecord.as_deref())
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line the reader stopped at (the first conflict marker's, when there is one).
        line: usize,
        /// The file holds merge conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`).
        conflict: bool,
        /// serde's message.
        message: String,
        /// The command that re-records this file alone, when the cassette's name is known.
        rerecord: Option<String>,
    },
    /// The file is of a format version other than the one this prompt-tester reads and writes.
    #[error(
        "cassette {} is in format version {version}, which this prompt-tester does not read (it reads \
         version {FORMAT_VERSION}); {}",
        path.display(),
        if *version > FORMAT_VERSION {
            "a newer prompt-tester wrote it: upgrade prompt-tester"
        } else {
            "an earlier prompt-tester wrote it: record it again"
        }
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its `version`.
        version: u32,
    },
    /// A media part a recorded request names is not in the media store beside the cassettes.
    #[error(
        "cassette {}: its media part {part} is stored as {}, which is missing; restore the file from \
         version control (`git checkout -- {}`) or record the test again",
        cassette.display(),
        file.display(),
        file.display()
    )]
    MediaMissing {
        /// The cassette (or pending) file naming the part.
        cassette: PathBuf,
        /// The part's name.
        part: String,
        /// The file its bytes should be in.
        file: PathBuf,
    },
}

/// What to do about a cassette that does not parse: never "delete it", which loses every recording.
fn invalid_advice(path: &Path, conflict: bool, rerecord: Option<&str>) -> String {
    let first = if conflict {
        "it holds merge conflict markers: resolve them (keep one side of each conflicting recording)".to_string()
    } else {
        format!(
            "restore it from version control (`git checkout -- {}`)",
            path.display()
        )
    };
    match rerecord {
        Some(command) => format!("{first}, or record this cassette again: `{command}`"),
        None => first,
    }
}

/// The file at `path`: its entries and verdicts (an empty body when it does not exist).
pub fn read_body(path: &Path) -> Result<FileBody, CassetteError> {
    let text = match crate::text::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(FileBody {
                version: FORMAT_VERSION,
                ..FileBody::default()
            });
        }
        Err(source) => {
            return Err(CassetteError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse_body(path, &text)
}

/// `text`, the file at `path`, parsed: its entries and verdicts.
pub(super) fn parse_body(path: &Path, text: &str) -> Result<FileBody, CassetteError> {
    let mut body: FileBody = serde_json::from_str(text).map_err(|e| {
        let marker = text.lines().position(|l| {
            ["<<<<<<<", "=======", ">>>>>>>"]
                .iter()
                .any(|m| l.starts_with(m))
        });
        CassetteError::Invalid {
            path: path.to_path_buf(),
            line: marker.map_or(e.line(), |i| i + 1),
            conflict: marker.is_some(),
            message: e.to_string(),
            rerecord: None,
        }
    })?;
    if body.version != FORMAT_VERSION {
        return Err(CassetteError::Version {
            path: path.to_path_buf(),
            version: body.version,
        });
    }
    super::media::place_parts(path, &mut body.entries)?;
    Ok(body)
}

/// What to do with a file whose rewrite leaves no entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenEmpty {
    /// Write it empty (a cassette: its name says the test was recorded).
    Keep,
    /// Remove it (a pending file: nothing left to review).
    Remove,
}

/// Under the file's lock: re-reads it (another process may have written), applies `edit` (which
/// returns the entries in the order to write them), and writes the result atomically (a temporary
/// file renamed over it), redacted. Returns whether the file was removed instead
/// ([`WhenEmpty::Remove`] and nothing left).
///
/// The lock and the temporary file are `shared::Shared`'s, in [`crate::shared::WORK_DIR`].
pub fn rewrite_locked(
    path: &Path,
    when_empty: WhenEmpty,
    edit: impl FnOnce(FileBody) -> FileBody,
) -> Result<bool, CassetteError> {
    let io = |source| CassetteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let shared = Shared::new(path, &work_dir(dir).map_err(io)?);
    let turn = shared.lock().map_err(io)?;
    let mut body = edit(read_body(path)?);
    if body.entries.is_empty() && when_empty == WhenEmpty::Remove {
        return turn.remove().map(|()| true).map_err(io);
    }
    body.version = FORMAT_VERSION;
    // The media first, and the store held until the file names them: a prune never sees them unnamed.
    let store = super::media::MediaStore::of_file(path);
    let _media_turn = match super::media::names_media(&body.entries) {
        true => Some(store.lock()?),
        false => None,
    };
    super::media::store_parts(path, &body.entries)?;
    let json = serde_json::to_string_pretty(&body).expect("a cassette always serialises");
    turn.replace(redact(&json).as_bytes())
        .map(|()| false)
        .map_err(io)
}
