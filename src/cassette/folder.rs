//! The cassette folder as listed once per process: its cassette, pending and labels files. A run's
//! selection, estimate, pending table, prune and reports all ask the store's one listing
//! ([`super::CassetteStore::folder`]) instead of reading the folder each for itself; what the process
//! itself writes meanwhile the store adds.
//!
//! How often the folder is listed and a cassette file read for its recordings is counted
//! ([`reads`]): a test holds a run to one listing and one read a file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::CassetteError;

/// The files of one folder, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folder {
    files: Vec<PathBuf>,
}

static LISTINGS: AtomicUsize = AtomicUsize::new(0);
static FILE_READS: AtomicUsize = AtomicUsize::new(0);

/// How often this process listed a cassette or pending folder, and read a cassette file for its
/// recordings (a write's re-read under its lock is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// Folder listings.
    pub listings: usize,
    /// Cassette files read.
    pub files: usize,
}

/// What this process has read so far.
pub fn reads() -> Reads {
    Reads {
        listings: LISTINGS.load(Ordering::Relaxed),
        files: FILE_READS.load(Ordering::Relaxed),
    }
}

/// `read`, a read of a cassette file for its recordings, counted.
pub(super) fn counted<T>(read: impl FnOnce() -> T) -> T {
    FILE_READS.fetch_add(1, Ordering::Relaxed);
    read()
}

impl Folder {
    /// The files in `dir` (none when it does not exist).
    pub fn list(dir: &Path) -> Result<Self, CassetteError> {
        LISTINGS.fetch_add(1, Ordering::Relaxed);
        let io = |source| CassetteError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let listing = match std::fs::read_dir(dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(io(e)),
        };
        let mut files = Vec::new();
        for entry in listing {
            files.push(entry.map_err(io)?.path());
        }
        files.sort();
        Ok(Self { files })
    }

    /// The folder as another listing found it (the walk of the suite roots that hold it), counted as
    /// a listing: `files` are those directly in it.
    pub fn of_listed(mut files: Vec<PathBuf>) -> Self {
        LISTINGS.fetch_add(1, Ordering::Relaxed);
        files.sort();
        Self { files }
    }

    /// The files whose name ends in `suffix`, sorted.
    pub fn ending_in<'a>(&'a self, suffix: &'a str) -> impl Iterator<Item = &'a PathBuf> + 'a {
        self.files
            .iter()
            .filter(move |p| p.to_string_lossy().ends_with(suffix))
    }
}
