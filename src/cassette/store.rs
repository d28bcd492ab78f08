//! The cassettes of one run: each file opened once, found by its test's or suite's name, flushed and
//! pruned together; the directory listed once (see [`super::folder`]) for every part that looks at it;
//! and the files in it that no trial of the run opened, each read once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::folder::Folder;
use super::media::MediaStore;
use super::name::{self, SUFFIX};
use super::owner::{Target, this_target};
use super::pending::{self, PENDING_SUFFIX, PendingFile};
use super::{Cassette, CassetteError, Loading, Pruned};
use crate::commands::Commands;

/// Every cassette this process opened, loaded once each.
#[derive(Debug)]
pub struct CassetteStore {
    dir: PathBuf,
    /// The test target this process runs (see [`this_target`]).
    target: Target,
    /// `PROMPT_TESTER_PENDING_DIR`: where pending recordings go instead of beside their cassettes.
    pending_dir: Option<PathBuf>,
    /// The commands its errors name (the re-recording of a cassette that does not parse).
    commands: Commands,
    /// Whole files, or through their index (a process of few trials).
    loading: Loading,
    /// By test or suite name.
    open: Mutex<BTreeMap<String, Arc<Cassette>>>,
    /// One lock a file, held while it is read: trials opening one file at once read it once, and
    /// opening one file never waits for another's.
    load_locks: Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>>,
    /// The files no trial opened, loaded once for a prune (by path).
    unopened: Mutex<BTreeMap<PathBuf, Arc<Cassette>>>,
    /// The directory, listed once (see [`folder`]).
    folder: OnceLock<Listing>,
    /// The pending folder when it is another one, listed once.
    pending_folder: OnceLock<Listing>,
}

/// A folder as listed, or why it could not be (kept to be said by each part that asks).
type Listing = Result<Arc<Folder>, (PathBuf, std::io::ErrorKind, String)>;

/// What a prune did to each cassette file it changed (or why it could not).
pub type PruneResults = Vec<(PathBuf, Result<Pruned, CassetteError>)>;

impl CassetteStore {
    /// A store for the cassettes under `dir`, recording as this process's test target.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::for_target(dir, this_target())
    }

    /// A store for the cassettes under `dir`, recording as `target`.
    pub fn for_target(dir: impl Into<PathBuf>, target: Target) -> Self {
        Self {
            dir: dir.into(),
            commands: Commands::new(target.as_deref()),
            target,
            pending_dir: None,
            loading: Loading::Whole,
            open: Mutex::new(BTreeMap::new()),
            load_locks: Mutex::new(BTreeMap::new()),
            unopened: Mutex::new(BTreeMap::new()),
            folder: OnceLock::new(),
            pending_folder: OnceLock::new(),
        }
    }

    /// The same store, its pending recordings in `dir` (when given) instead of beside the cassettes.
    pub fn with_pending_dir(self, dir: Option<PathBuf>) -> Self {
        Self {
            pending_dir: dir,
            ..self
        }
    }

    /// The same store, loading its cassettes as `loading` says (see `Loading`).
    pub fn with_loading(self, loading: Loading) -> Self {
        Self { loading, ..self }
    }

    /// The same store, its directory as `folder` (listed already) instead of listed again.
    pub fn with_folder(self, folder: Folder) -> Self {
        let listed = OnceLock::new();
        let _ = listed.set(Ok(Arc::new(folder)));
        Self {
            folder: listed,
            ..self
        }
    }

    /// The same store, naming `commands` in its errors.
    pub fn with_commands(self, commands: Commands) -> Self {
        Self { commands, ..self }
    }

    /// Where pending recordings are kept: the pending folder, else the cassette directory.
    pub fn pending_dir(&self) -> &Path {
        self.pending_dir.as_deref().unwrap_or(&self.dir)
    }

    /// The test target it records as, when the process could tell it.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file for a test or suite name: `a::b` is `a.b.cassette.json`; a name that is not ASCII
    /// words joined by `::` gets a hash in its file name (see `name.rs`).
    pub fn path_for(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{}{SUFFIX}", name::stem(name)))
    }

    /// The cassette for `name`, loaded on first use.
    pub fn open(&self, name: &str) -> Result<Arc<Cassette>, CassetteError> {
        if let Some(cassette) = self.opened_as(name) {
            return Ok(cassette);
        }
        // Read and parsed outside the store's lock, under the file's own.
        let path = self.path_for(name);
        let file_lock = self
            .load_locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(path.clone())
            .or_default()
            .clone();
        let _reading = file_lock.lock().unwrap_or_else(|e| e.into_inner());
        let loose = || self.loose().get(&path).cloned();
        let loaded = match self.opened_as(name).or_else(loose) {
            Some(cassette) => cassette,
            None => Arc::new(
                Cassette::load(
                    path.clone(),
                    pending::pending_path(&path, self.pending_dir.as_deref()),
                    self.target.clone(),
                    self.loading,
                )
                .map_err(|e| match e {
                    CassetteError::Invalid {
                        path,
                        line,
                        conflict,
                        message,
                        rerecord: None,
                    } => CassetteError::Invalid {
                        path,
                        line,
                        conflict,
                        message,
                        rerecord: Some(self.commands.record(name, &[])),
                    },
                    other => other,
                })?,
            ),
        };
        // Opened by another thread meanwhile: the first one stays.
        Ok(self
            .lock()
            .entry(name.to_string())
            .or_insert(loaded)
            .clone())
    }

    /// The cassette for `name` if it is open: no file is read.
    pub fn opened_as(&self, name: &str) -> Option<Arc<Cassette>> {
        self.lock().get(name).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Cassette>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn loose(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, Arc<Cassette>>> {
        self.unopened.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cassette directory's files, listed on first use and once per store: every part of a run
    /// that looks at the folder (labels, pending recordings, a prune) shares this listing.
    pub fn folder(&self) -> Result<Arc<Folder>, CassetteError> {
        listed(&self.folder, &self.dir)
    }

    /// Every pending file with its samples, beside what their cassettes hold now: those in the
    /// pending folder as listed once, and those this run wrote since.
    pub fn pending(&self) -> Result<Vec<PendingFile>, CassetteError> {
        let listing = match &self.pending_dir {
            Some(dir) if *dir != self.dir => listed(&self.pending_folder, dir)?,
            _ => self.folder()?,
        };
        let mut files: Vec<PathBuf> = listing.ending_in(PENDING_SUFFIX).cloned().collect();
        files.extend(
            self.opened()
                .iter()
                .filter(|c| !c.pending_samples().is_empty())
                .map(|c| c.pending_path.clone()),
        );
        files.sort();
        files.dedup();
        // A file accepted or rejected since the listing is gone.
        files.retain(|f| f.is_file());
        pending::read_pending(files, &self.dir)
    }

    /// The opened cassettes, one each.
    fn opened(&self) -> Vec<Arc<Cassette>> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = BTreeSet::new();
        open.values()
            .filter(|c| seen.insert(c.path.clone()))
            .cloned()
            .collect()
    }

    /// Writes every opened cassette's pending recordings; returns the failures.
    pub fn flush_all(&self) -> Vec<CassetteError> {
        self.opened()
            .iter()
            .filter_map(|c| c.flush().err())
            .collect()
    }

    /// The files no trial opened that do not parse: whose recordings they hold, no prune can tell.
    pub fn unreadable(&self) -> Result<Vec<CassetteError>, CassetteError> {
        Ok(self
            .unopened()?
            .iter()
            .filter_map(|path| self.load_unopened(path).err())
            .collect())
    }

    /// Prunes every opened cassette to this target's entries used in this run (and every other
    /// target's). Returns what each prune did.
    pub fn prune_all(&self) -> PruneResults {
        self.opened()
            .iter()
            .map(|c| (c.path.clone(), c.prune()))
            .collect()
    }

    /// Removes this target's entries from the cassette files in the directory that no trial of this
    /// run opened (their tests are gone or renamed, or they are another target's), deleting a file left
    /// empty. Returns what changed in each file it changed. Only meaningful after a run of every test.
    pub fn prune_unopened(&self) -> Result<PruneResults, CassetteError> {
        let mut pruned = Vec::new();
        for path in self.unopened()? {
            let result = self.load_unopened(&path).and_then(|c| c.prune_with(true));
            if !matches!(result, Ok(Pruned { removed: 0, .. })) {
                pruned.push((path, result));
            }
        }
        Ok(pruned)
    }

    /// Removes the media files (`media.rs`) no file in the cassette folder (or the pending folder)
    /// names, from the cassettes' store and from a separate pending folder's own: run after the
    /// prunes of the recordings. The folders are listed again under each store's lock, so a
    /// cassette another process wrote since the run's listing keeps its media. Returns the files
    /// removed.
    pub fn prune_media(&self) -> Result<Vec<PathBuf>, CassetteError> {
        let mut folders = vec![self.dir.clone()];
        folders.extend(self.pending_dir.clone().filter(|d| *d != self.dir));
        let naming = || {
            let mut files = Vec::new();
            for folder in &folders {
                if let Ok(listing) = std::fs::read_dir(folder) {
                    files.extend(
                        listing
                            .filter_map(|e| e.ok().map(|e| e.path()))
                            .filter(|p| p.extension().is_some_and(|e| e == "json")),
                    );
                }
            }
            files
        };
        let mut removed = Vec::new();
        for folder in &folders {
            removed.extend(MediaStore::beside(folder).prune(naming)?);
        }
        Ok(removed)
    }

    /// The cassette file at `path`, which no trial opened, loaded whole on first use.
    fn load_unopened(&self, path: &Path) -> Result<Arc<Cassette>, CassetteError> {
        if let Some(cassette) = self.loose().get(path) {
            return Ok(cassette.clone());
        }
        let pending = pending::pending_path(path, self.pending_dir.as_deref());
        let cassette = Arc::new(Cassette::load(
            path.to_path_buf(),
            pending,
            self.target.clone(),
            Loading::Whole,
        )?);
        self.loose().insert(path.to_path_buf(), cassette.clone());
        Ok(cassette)
    }

    /// The cassette files in the directory that no trial of this run opened, sorted.
    fn unopened(&self) -> Result<Vec<PathBuf>, CassetteError> {
        let opened: BTreeSet<PathBuf> = self.opened().iter().map(|c| c.path.clone()).collect();
        Ok(self
            .folder()?
            .ending_in(SUFFIX)
            .filter(|path| !opened.contains(*path))
            .cloned()
            .collect())
    }
}

/// The listing of `dir` kept in `cell`, listed on first use.
fn listed(cell: &OnceLock<Listing>, dir: &Path) -> Result<Arc<Folder>, CassetteError> {
    let listed = cell.get_or_init(|| {
        Folder::list(dir).map(Arc::new).map_err(|e| match e {
            CassetteError::Io { path, source } => (path, source.kind(), source.to_string()),
            other => (
                dir.to_path_buf(),
                std::io::ErrorKind::Other,
                other.to_string(),
            ),
        })
    });
    listed
        .clone()
        .map_err(|(path, kind, message)| CassetteError::Io {
            path,
            source: std::io::Error::new(kind, message),
        })
}
