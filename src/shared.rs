//! Files that several processes share (nextest runs one process per trial): one way to take turns on
//! a file and to replace it whole, used by the cassettes, the budget ledger, the calibration results
//! and the report files.
//!
//! A [`Shared`] file has a lock file and a temporary file in a work folder beside it. [`Shared::lock`]
//! waits for the lock (an OS advisory lock, released when the process dies, so a killed process never
//! leaves a file locked); the [`SharedLock`] it returns reads the file and replaces it atomically (a
//! temporary file renamed over it), so a reader never sees half a file. [`replace`] is the same
//! atomic write for a file only one process writes (a report, a process's results fragment).
//!
//! The lock file is never deleted: deleting it while a process waits on it would let that process and
//! a newcomer (who creates a fresh file) both hold "the" lock and overwrite each other.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The work folder of the lock and temporary files of shared writes (inside the cassette folder, the
/// crate root or a results folder). It holds a
/// `.gitignore` of `*` (as cargo's `target/` does), so git never shows them, even after a `kill -9`.
pub const WORK_DIR: &str = ".prompt-tester";

pub(crate) const WORK_DIR_GITIGNORE: &str =
    "# Written by prompt-tester: lock and temporary files of cassette writes.\n*\n";

/// Creates `<dir>/.prompt-tester` with its `.gitignore` and returns its path. The `.gitignore` is
/// rewritten when it is not ours, so one left empty by a process killed while writing it is mended.
pub(crate) fn work_dir(dir: &Path) -> std::io::Result<PathBuf> {
    let work = dir.join(WORK_DIR);
    fs::create_dir_all(&work)?;
    let ignore = work.join(".gitignore");
    if fs::read_to_string(&ignore).ok().as_deref() != Some(WORK_DIR_GITIGNORE) {
        fs::write(&ignore, WORK_DIR_GITIGNORE)?;
    }
    Ok(work)
}

/// A file several processes read and rewrite, taking turns.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    path: PathBuf,
    lock: PathBuf,
    tmp: PathBuf,
}

/// This process's turn on a [`Shared`] file: held until dropped.
#[derive(Debug)]
pub(crate) struct SharedLock<'a> {
    file: &'a Shared,
    _lock: fs::File,
}

impl Shared {
    /// `path`, its lock and temporary files in `work` (`NAME.lock`, `NAME.tmp`). `work` must be on
    /// the same file system as `path` (a folder beside it), so the rename is atomic.
    pub(crate) fn new(path: impl Into<PathBuf>, work: &Path) -> Self {
        let path = path.into();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self {
            lock: work.join(format!("{name}.lock")),
            tmp: work.join(format!("{name}.tmp")),
            path,
        }
    }

    /// Waits for this process's turn: no other process holding the lock reads or writes the file
    /// until the [`SharedLock`] is dropped. (Threads of one process take turns by their own means.)
    pub(crate) fn lock(&self) -> std::io::Result<SharedLock<'_>> {
        if let Some(work) = self.lock.parent() {
            fs::create_dir_all(work)?;
        }
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)?;
        lock.lock()?;
        Ok(SharedLock {
            file: self,
            _lock: lock,
        })
    }
}

impl SharedLock<'_> {
    /// The file's text now, `None` when it does not exist.
    pub(crate) fn read(&self) -> std::io::Result<Option<String>> {
        match crate::text::read(&self.file.path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the file with `bytes` and a final newline, atomically. Only the lock holder writes the
    /// temporary file, so one name serves, overwritten after a killed writer.
    pub(crate) fn replace(&self, bytes: &[u8]) -> std::io::Result<()> {
        write_then_rename(&self.file.tmp, &self.file.path, bytes)
    }

    /// Removes the file (nothing when it is gone already).
    pub(crate) fn remove(&self) -> std::io::Result<()> {
        match fs::remove_file(&self.file.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Replaces `path` with `bytes` and a final newline, atomically, for a file one process writes at a
/// time: the temporary file beside it is named by the process (`.NAME.PID.tmp`).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    write_then_rename(&tmp, path, bytes)
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let written = fs::File::create(tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| fs::rename(tmp, path)) {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Scratch;

    #[test]
    fn a_turn_reads_what_the_last_turn_replaced() {
        let dir = Scratch::new("shared-turn");
        let file = Shared::new(dir.path().join("f.json"), &dir.path().join("work"));
        let turn = file.lock().unwrap();
        assert_eq!(turn.read().unwrap(), None);
        turn.replace(b"one").unwrap();
        drop(turn);
        let turn = file.lock().unwrap();
        assert_eq!(turn.read().unwrap().as_deref(), Some("one\n"));
        turn.remove().unwrap();
        turn.remove().unwrap();
        assert_eq!(turn.read().unwrap(), None);
        // The lock and the temporary file stay in the work folder; nothing else is left beside the file.
        assert!(dir.path().join("work/f.json.lock").exists());
        assert!(!dir.path().join("work/f.json.tmp").exists());
    }

    #[test]
    fn a_second_lock_waits_for_the_first_turn_to_end() {
        let dir = Scratch::new("shared-wait");
        let file = Shared::new(dir.path().join("f"), dir.path());
        let first = file.lock().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let other = file.clone();
        let waiter = std::thread::spawn(move || {
            // A lock file opened anew is a lock of its own (as another process's is).
            let turn = other.lock().unwrap();
            tx.send(turn.read().unwrap()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "the second turn began while the first held the lock"
        );
        first.replace(b"first").unwrap();
        drop(first);
        let seen = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(seen.as_deref(), Some("first\n"));
        waiter.join().unwrap();
    }

    #[test]
    fn replace_writes_whole_files_and_leaves_no_temporary_file() {
        let dir = Scratch::new("shared-replace");
        let path = dir.path().join("sub/report.xml");
        replace(&path, b"<a/>").unwrap();
        replace(&path, b"<b/>").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "<b/>\n");
        let left: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["report.xml"]);
    }

    /// The child's side of the test below: `PT_SHARED_COUNTER` names the file to count in.
    #[test]
    fn child_counts_in_the_shared_file() {
        let Some(path) = std::env::var_os("PT_SHARED_COUNTER") else {
            return;
        };
        let path = PathBuf::from(path);
        let file = Shared::new(&path, path.parent().unwrap());
        for _ in 0..COUNTS {
            let turn = file.lock().unwrap();
            let n: u64 = turn
                .read()
                .unwrap()
                .map_or(0, |t| t.trim().parse().unwrap());
            turn.replace((n + 1).to_string().as_bytes()).unwrap();
        }
    }

    const COUNTS: u64 = 40;

    #[test]
    fn processes_taking_turns_lose_no_write() {
        let dir = Scratch::new("shared-processes");
        let counter = dir.path().join("counter");
        let children: Vec<_> = (0..4)
            .map(|_| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "shared::tests::child_counts_in_the_shared_file"])
                    .args(["--test-threads", "1", "--quiet"])
                    .env("PT_SHARED_COUNTER", &counter)
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let n: u64 = fs::read_to_string(&counter)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(
            n,
            4 * COUNTS,
            "every process's every increment is in the file"
        );
    }
}
