//! A cassette's index: where each entry sits in the file, so that a process that runs one trial (a
//! `--exact` process under nextest) parses the entries it looks up and not the whole file.
//!
//! A TOML suite has one cassette for all its cases; under nextest each of its trials is a process,
//! and each parsed the whole file: with 2,000 cases, 2,000 entries parsed by each of 2,000 processes.
//! The index, `<cassette dir>/.prompt-tester/<file name>.index` (the git-ignored work folder), lists
//! every entry's key, byte range and test, and the range of the file's shared `texts`. A process
//! reads the cassette's bytes (a system call, cheap) and the index, and parses an entry only when a
//! lookup asks for its key ([`Unread`]); everything that needs every entry (a prune, a miss:
//! telling a stale recording from one never made) parses the file it read, as a whole load does.
//! Writes never use the index: they re-read the file under its lock (`file::rewrite_locked`).
//!
//! **When the index is trusted.** It is keyed by the file's contents the way git's index is: it records
//! the file's length, modification time (ns) and inode as read from the open file, and is used only
//! when all three still match AND the file's modification time is at least [`RACY`] older than the
//! index file's own: a file changed in the instant the index was written (the same timestamp tick)
//! could match while its contents differ, so it is parsed again ("racy"). Any write of a cassette by
//! prompt-tester or git replaces the file (a new inode, a new time); an edit in place changes its time.
//! Hashing the contents instead would cost a debug build as much as parsing them. Otherwise (no index,
//! another file, a racy one, a corrupt or foreign-version index, an entry whose range does not parse
//! to its key) the file is parsed whole as before, never an error, and the index is written anew
//! (atomically, through `shared::Shared`), unless the file itself is racy now. The index holds no key
//! of any provider: only entry keys (hashes), offsets and test names.
//!
//! Only a process of few trials loads this way ([`Loading::FewTrials`]), and only a file of at least
//! [`INDEX_MIN_BYTES`]; a whole `cargo test` run parses each file once, as before.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use super::entry::{Entry, FileBody, entry_from_json};
use super::file::{CassetteError, parse_body, read_body};
use crate::shared::Shared;
use crate::shared::{WORK_DIR, work_dir};

/// How a store loads its cassettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loading {
    /// Each file parsed whole (a run of many trials).
    #[default]
    Whole,
    /// A file of at least `min_len` bytes through its index, when the index is trusted (a process
    /// that runs one trial, or few).
    FewTrials {
        /// Smaller files are parsed whole: their index would save little.
        min_len: u64,
    },
}

impl Loading {
    /// [`Loading::FewTrials`] for files of [`INDEX_MIN_BYTES`] or more.
    pub const FEW_TRIALS: Self = Self::FewTrials {
        min_len: INDEX_MIN_BYTES,
    };
}

/// The smallest cassette loaded through an index (about 60 one-call entries).
pub const INDEX_MIN_BYTES: u64 = 64 * 1024;

/// How much older than its index a file must be for the index to be trusted.
pub const RACY: Duration = Duration::from_secs(2);

/// The first line of an index this version reads: any other is ignored.
const HEADER: &str = "prompt-tester cassette index 1";

/// What a load read: a body parsed whole, or a file to parse entry by entry.
#[derive(Debug)]
pub(super) enum Loaded {
    Whole(FileBody),
    Indexed(Unread),
}

/// A cassette file's text, not parsed, with its trusted index.
#[derive(Debug)]
pub(super) struct Unread {
    text: String,
    /// The index's entry lines: `key \t start \t end \t test as JSON`.
    lines: String,
    /// How many entries the file holds.
    len: usize,
    /// Where the file's `texts` object is.
    texts_at: Option<(usize, usize)>,
    /// The shared texts, parsed when an entry first needs them.
    texts: Option<BTreeMap<String, String>>,
}

impl Unread {
    /// How many entries the file holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The file's entries for `key`, in file order; `None` when the index does not match the file
    /// (then load it whole).
    pub(super) fn entries_of(&mut self, key: &str) -> Option<Vec<Entry>> {
        let mut ranges = Vec::new();
        for line in self.lines.lines() {
            if let Some(rest) = line.strip_prefix(key).and_then(|r| r.strip_prefix('\t')) {
                let mut fields = rest.splitn(3, '\t');
                let start: usize = fields.next()?.parse().ok()?;
                let end: usize = fields.next()?.parse().ok()?;
                ranges.push((start, end));
            }
        }
        if ranges.is_empty() {
            return Some(Vec::new());
        }
        if self.texts.is_none() {
            self.texts = Some(match self.texts_at {
                Some((start, end)) => serde_json::from_str(self.text.get(start..end)?).ok()?,
                None => BTreeMap::new(),
            });
        }
        let texts = self.texts.as_ref()?;
        ranges
            .into_iter()
            .map(|(start, end)| {
                let entry = entry_from_json(self.text.get(start..end)?, texts).ok()?;
                (entry.key == key).then_some(entry)
            })
            .collect()
    }

    /// Whether an entry was recorded by trial `test` or one of its `::run_N` trials.
    pub(super) fn has_recordings_of(&self, test: &str) -> bool {
        // JSON escapes character by character: `test`'s encoding equals the entry's exactly when the
        // names are equal, and `test::`'s (without its closing quote) begins the entry's when it begins
        // with `test::`.
        let exact = json_string(test);
        let runs = json_string(&format!("{test}::"));
        let runs = &runs[..runs.len() - 1];
        self.lines
            .lines()
            .filter_map(|line| line.splitn(4, '\t').nth(3))
            .any(|recorded| recorded == exact || recorded.starts_with(runs))
    }

    /// The whole file, parsed.
    pub(super) fn whole(&self, path: &Path) -> Result<FileBody, CassetteError> {
        parse_body(path, &self.text)
    }
}

/// The cassette at `path`, loaded as `loading` says (a missing file is an empty body).
pub(super) fn load(path: &Path, loading: Loading) -> Result<Loaded, CassetteError> {
    let Loading::FewTrials { min_len } = loading else {
        return read_body(path).map(Loaded::Whole);
    };
    let read = fs::File::open(path).and_then(|mut file| {
        // The time and length of the very file read: a rename over it later is another inode.
        let stamp = Stamp::of(&file.metadata()?);
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok((stamp, bytes))
    });
    let (stamp, text) = match read {
        Ok((stamp, bytes)) => match String::from_utf8(bytes) {
            Ok(text) => (stamp.filter(|s| s.len == text.len() as u64), text),
            // Missing, or not UTF-8: the whole load says so as before.
            Err(_) => return read_body(path).map(Loaded::Whole),
        },
        Err(_) => return read_body(path).map(Loaded::Whole),
    };
    let Some(stamp) = stamp.filter(|s| s.len >= min_len) else {
        return parse_body(path, &text).map(Loaded::Whole);
    };
    let index = index_path(path);
    if let Some(trusted) = trusted(&index, stamp) {
        return Ok(Loaded::Indexed(Unread { text, ..trusted }));
    }
    let body = parse_body(path, &text)?;
    if !stamp.racy_at(SystemTime::now()) {
        // An index that cannot be written costs the next process a whole load, nothing more.
        let _ = write(&index, stamp, &text, &body);
    }
    Ok(Loaded::Whole(body))
}

/// Where the index of the cassette at `path` is kept.
pub(super) fn index_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(WORK_DIR).join(format!("{name}.index"))
}

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    /// Modification time, ns since the epoch.
    mtime: u128,
    /// The inode (0 where there is none): a file renamed over another is another file.
    ino: u64,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Option<Self> {
        Some(Self {
            len: meta.len(),
            mtime: nanos(meta.modified().ok()?)?,
            ino: inode(meta),
        })
    }

    /// Whether a change of the file could still go unseen by an index written at `written`.
    fn racy_at(&self, written: SystemTime) -> bool {
        nanos(written).is_none_or(|written| self.mtime + RACY.as_nanos() > written)
    }

    fn line(&self) -> String {
        format!("{} {} {}", self.len, self.mtime, self.ino)
    }
}

fn nanos(time: SystemTime) -> Option<u128> {
    time.duration_since(UNIX_EPOCH).ok().map(|d| d.as_nanos())
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// The index at `index` when it describes the file stamped `stamp`, and is not racy (its text left
/// empty).
fn trusted(index: &Path, stamp: Stamp) -> Option<Unread> {
    let written = fs::metadata(index).ok()?.modified().ok()?;
    if stamp.racy_at(written) {
        return None;
    }
    let content = fs::read_to_string(index).ok()?;
    let mut head = content.splitn(5, '\n');
    if head.next()? != HEADER || head.next()? != stamp.line() {
        return None;
    }
    let len = head.next()?.strip_prefix("entries ")?.parse().ok()?;
    let texts_at = match head.next()?.strip_prefix("texts ")? {
        "-" => None,
        range => {
            let (start, end) = range.split_once(' ')?;
            Some((start.parse().ok()?, end.parse().ok()?))
        }
    };
    let lines = head.next().unwrap_or_default().to_string();
    (lines.lines().count() == len).then_some(Unread {
        text: String::new(),
        lines,
        len,
        texts_at,
        texts: None,
    })
}

/// Writes the index of `text` (the file stamped `stamp`, parsed as `body`); `None` when the file's
/// layout could not be found or the index could not be written.
fn write(index: &Path, stamp: Stamp, text: &str, body: &FileBody) -> Option<()> {
    let layout = scan(text)?;
    if layout.entries.len() != body.entries.len() {
        return None;
    }
    let mut out = format!(
        "{HEADER}\n{}\nentries {}\n",
        stamp.line(),
        body.entries.len()
    );
    match layout.texts {
        Some((start, end)) => writeln!(out, "texts {start} {end}").ok()?,
        None => out.push_str("texts -\n"),
    }
    for ((start, end), entry) in layout.entries.iter().zip(&body.entries) {
        if entry.key.is_empty() || entry.key.contains(['\t', '\n', '\r']) {
            return None;
        }
        writeln!(
            out,
            "{}\t{start}\t{end}\t{}",
            entry.key,
            json_string(&entry.test)
        )
        .ok()?;
    }
    let work = work_dir(index.parent()?.parent()?).ok()?;
    let shared = Shared::new(index, &work);
    let turn = shared.lock().ok()?;
    turn.replace(out.trim_end().as_bytes()).ok()
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serialises")
}

/// Where a cassette file's `texts` and each of its entries are, as byte ranges.
#[derive(Debug, Default, PartialEq)]
struct FolderLayout {
    texts: Option<(usize, usize)>,
    entries: Vec<(usize, usize)>,
}

/// The layout of `text`, a cassette's JSON object. serde_json's raw values borrow their text from
/// `text` unparsed, so where each one starts in it is its layout.
fn scan(text: &str) -> Option<FolderLayout> {
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        texts: Option<&'a RawValue>,
        #[serde(borrow)]
        entries: Vec<&'a RawValue>,
    }
    let raw: Raw<'_> = serde_json::from_str(text).ok()?;
    let range = |value: &RawValue| {
        let start = value.get().as_ptr() as usize - text.as_ptr() as usize;
        (start, start + value.get().len())
    };
    Some(FolderLayout {
        texts: raw.texts.map(range),
        entries: raw.entries.into_iter().map(range).collect(),
    })
}

#[cfg(test)]
mod tests;
