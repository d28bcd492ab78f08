//! What `cargo prompt-tester` (the `cargo-prompt-tester` crate) reaches in the library: where a crate's
//! cassettes and pending recordings are, what is pending, and accepting or rejecting it under the same
//! locks and atomic writes the harness records with. Not a public API: it changes with the subcommand,
//! which pins this crate's exact version.

use std::path::{Path, PathBuf};

pub use crate::cassette::changes::{describe, line_diff, short_diff, text_of};
pub use crate::cassette::pending::{SampleId, Settled};
pub use crate::cassette::{CassetteError, Entry, Exchange};
pub use crate::role::CallRole;
pub use similar::ChangeTag;

use crate::cassette::pending;

/// The variable naming a folder of pending recordings brought from another machine (or written by
/// a CI job), read by the harness and the subcommand alike.
pub const PENDING_DIR: &str = crate::harness::PENDING_DIR;

/// Where a crate's recordings are: its cassette directory (from its `prompt-tester.toml`, as the
/// harness finds it) and the folder of its pending recordings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The cassette directory.
    pub cassette_dir: PathBuf,
    /// Where pending recordings are: the pending folder when one is given, else the cassette
    /// directory.
    pub pending_dir: PathBuf,
}

impl Layout {
    /// The layout of the crate at `root`; `pending_dir` overrides where pending recordings are looked
    /// for (else `PROMPT_TESTER_PENDING_DIR`, else beside the cassettes).
    pub fn of(
        root: &Path,
        pending_dir: Option<PathBuf>,
    ) -> Result<Self, crate::config::ConfigError> {
        let config = crate::config::Config::load(root)?;
        let pending_dir = pending_dir
            .or_else(|| crate::config::env_var(PENDING_DIR).map(PathBuf::from))
            .map(|dir| {
                if dir.is_absolute() {
                    dir
                } else {
                    root.join(dir)
                }
            })
            .unwrap_or_else(|| config.cassette_dir.clone());
        Ok(Self {
            cassette_dir: config.cassette_dir,
            pending_dir,
        })
    }

    /// Every pending sample, by pending file, with what the cassette holds for it now.
    pub fn pending(&self) -> Result<Vec<PendingFile>, CassetteError> {
        let mut files = Vec::new();
        for path in pending::pending_files(&self.pending_dir)? {
            let cassette = pending::cassette_path(&path, &self.cassette_dir);
            let accepted = pending::by_sample(crate::cassette::read_entries(&cassette)?);
            let samples = pending::by_sample(crate::cassette::read_entries(&path)?)
                .into_iter()
                .map(|(id, new)| PendingSample {
                    old: accepted.get(&id).cloned().unwrap_or_default(),
                    id,
                    new,
                })
                .collect();
            files.push(PendingFile {
                cassette,
                pending: path,
                samples,
            });
        }
        Ok(files)
    }
}

/// One pending file and the cassette it belongs to.
#[derive(Debug, Clone)]
pub struct PendingFile {
    /// The cassette the samples would go into.
    pub cassette: PathBuf,
    /// The pending file.
    pub pending: PathBuf,
    /// Its samples, sorted by test and run.
    pub samples: Vec<PendingSample>,
}

/// One pending sample: its new calls and the accepted ones they would replace.
#[derive(Debug, Clone)]
pub struct PendingSample {
    /// The test and run.
    pub id: SampleId,
    /// The calls recorded anew.
    pub new: Vec<Entry>,
    /// The calls the cassette holds for the sample now (none: it would be a first recording).
    pub old: Vec<Entry>,
}

impl PendingFile {
    /// Accepts the samples `chosen` picks into the cassette, replacing theirs.
    pub fn accept(&self, chosen: impl Fn(&SampleId) -> bool) -> Result<Settled, CassetteError> {
        pending::accept(&self.cassette, &self.pending, chosen)
    }

    /// Rejects the samples `chosen` picks: the cassette keeps its recordings.
    pub fn reject(&self, chosen: impl Fn(&SampleId) -> bool) -> Result<Settled, CassetteError> {
        pending::reject(&self.pending, chosen)
    }
}

/// Whether a test name matches `filter` as libtest's does: a substring, or the whole name with
/// `exact`.
pub fn matches_filter(name: &str, filter: Option<&str>, exact: bool) -> bool {
    match filter {
        None => true,
        Some(f) if exact => name == f,
        Some(f) => name.contains(f),
    }
}
