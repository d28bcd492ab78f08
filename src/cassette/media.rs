//! The media store: the bytes of the media parts recorded requests name, stored once each,
//! content-addressed, beside the cassettes: `<cassette folder>/media/<sha256>.<ext>`. A cassette names
//! a part by its hash (a neutral request's part, `completion/media.rs`) or by its reference, the file
//! name `<sha256>.<ext>` (a relayed body); the same image in many tests is one file, and a changed
//! image is another file and another key.
//!
//! A file is written once (a temporary file in the folder renamed to its name): a file of that name
//! is already right, since the name is the hash. Writers of cassettes that name media hold the
//! store's lock from storing the bytes until the cassette is replaced ([`super::file::rewrite_locked`]),
//! and a prune holds it while it reads every cassette and removes what none names, so a prune never
//! removes a file a cassette being written is about to name.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::CassetteError;
use super::entry::{Entry, Exchange};
use crate::completion::{ContentBlock, MediaPart};
use crate::shared::{Shared, SharedLock, work_dir};

pub use super::media_ref::{
    MEDIA_DIR, parse_reference, reference, reference_to, relayed_reference,
};

/// The media store of one cassette folder.
#[derive(Debug)]
pub struct MediaStore {
    /// `<cassette folder>/media`.
    dir: PathBuf,
    /// Its lock (see the module's header), in the cassette folder's work folder.
    shared: Shared,
}

/// Temporary files of one process get a number each: two threads storing one part never share one.
static TEMPORARY: AtomicU64 = AtomicU64::new(0);

impl MediaStore {
    /// The store of the cassettes in `cassette_dir`.
    pub fn beside(cassette_dir: &Path) -> Self {
        let dir = cassette_dir.join(MEDIA_DIR);
        let work = cassette_dir.join(crate::shared::WORK_DIR);
        Self {
            shared: Shared::new(&dir, &work),
            dir,
        }
    }

    /// The store of the cassette (or pending) file at `path`: the one in its folder.
    pub fn of_file(path: &Path) -> Self {
        Self::beside(path.parent().unwrap_or(Path::new(".")))
    }

    /// The media folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file a reference names.
    pub fn path_of(&self, reference: &str) -> PathBuf {
        self.dir.join(reference)
    }

    /// Stores `part`'s bytes unless its file is there already; returns its reference. Writers that
    /// then name the reference in a cassette hold `MediaStore::lock` from here until it is written.
    pub fn store(&self, part: &MediaPart) -> Result<String, CassetteError> {
        let name = reference(part);
        let path = self.path_of(&name);
        if path.is_file() {
            return Ok(name);
        }
        let bytes = part.bytes();
        // A part read from a cassette whose file went missing since has no bytes to store.
        if bytes.len() as u64 != part.size() {
            return Err(CassetteError::MediaMissing {
                cassette: self.dir.clone(),
                part: part.name().to_string(),
                file: part
                    .stored_file()
                    .map_or_else(|| path.clone(), Path::to_path_buf),
            });
        }
        let io = |source| CassetteError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let temporary = self.dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            TEMPORARY.fetch_add(1, Ordering::Relaxed)
        ));
        let written =
            std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written.map_err(io)?;
        Ok(name)
    }

    /// The part `reference` names, read back (shown by its reference as its name). `cassette` is the
    /// file that names it, for the error when the file is missing.
    pub fn read(&self, reference: &str, cassette: &Path) -> Result<MediaPart, CassetteError> {
        let path = self.path_of(reference);
        let missing = || CassetteError::MediaMissing {
            cassette: cassette.to_path_buf(),
            part: reference.to_string(),
            file: path.clone(),
        };
        let Some((sha, _)) = parse_reference(reference) else {
            return Err(missing());
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
            Err(source) => return Err(CassetteError::Io { path, source }),
        };
        let part = MediaPart::new(reference, bytes).map_err(|e| CassetteError::Io {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        })?;
        if !part.sha256().eq_ignore_ascii_case(sha) {
            return Err(CassetteError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "its bytes do not match the hash it is named by; restore it from version \
                     control",
                ),
            });
        }
        Ok(part)
    }

    /// Waits for the store's turn (see the module's header).
    pub(crate) fn lock(&self) -> Result<SharedLock<'_>, CassetteError> {
        let io = |source| CassetteError::Io {
            path: self.dir.clone(),
            source,
        };
        if let Some(folder) = self.dir.parent() {
            work_dir(folder).map_err(io)?;
        }
        self.shared.lock().map_err(io)
    }

    /// The media files no text of `files` names (by its hash), and temporary files a killed writer
    /// left, removed under the store's lock; `files` are read under it (a cassette written since a
    /// listing is read as it is now). Returns the files removed, sorted.
    pub(crate) fn prune(
        &self,
        files: impl FnOnce() -> Vec<PathBuf>,
    ) -> Result<Vec<PathBuf>, CassetteError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CassetteError::Io { path, source }
        };
        let stored = match std::fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&self.dir)(e)),
        };
        let _turn = self.lock()?;
        let mut named = HashSet::new();
        for file in files() {
            match crate::text::read(&file) {
                Ok(text) => named.extend(hashes_in(&text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&file)(e)),
            }
        }
        let mut removed = Vec::new();
        for found in stored {
            let path = found.map_err(io(&self.dir))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let unnamed = parse_reference(name)
                .is_some_and(|(sha, _)| !named.contains(&sha.to_ascii_lowercase()));
            // Writers store under the lock held here: a temporary file now is a killed writer's.
            let left_by_a_writer = name.starts_with('.') && name.ends_with(".tmp");
            if unnamed || left_by_a_writer {
                std::fs::remove_file(&path).map_err(io(&path))?;
                removed.push(path);
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// Every run of exactly 64 hex digits in `text`, lower-cased: the hashes it names (a neutral part's
/// `sha256`, a relayed body's reference). Cassette keys are shorter.
fn hashes_in(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|run| run.len() == 64)
        .map(str::to_ascii_lowercase)
}

/// The media parts of `exchange`'s request.
fn parts_of(exchange: &Exchange) -> impl Iterator<Item = &MediaPart> {
    let (messages, relayed) = match exchange {
        Exchange::Completion { request, .. } => (request.messages.as_slice(), &[][..]),
        // A relayed body names its media by reference; the request just made carries their bytes.
        Exchange::Raw { request, .. } => (&[][..], request.media.as_slice()),
        Exchange::Embedding { .. } => (&[][..], &[][..]),
    };
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::Media(part) => Some(part),
            _ => None,
        })
        .chain(relayed)
}

/// Whether any of `entries` names media.
pub(super) fn names_media(entries: &[Entry]) -> bool {
    entries.iter().any(|e| parts_of(&e.call).next().is_some())
}

/// Stores every media part `entries` name that the store of the file at `path` does not hold yet
/// (the caller holds the store's lock).
pub(super) fn store_parts(path: &Path, entries: &[Entry]) -> Result<(), CassetteError> {
    let store = MediaStore::of_file(path);
    for part in entries.iter().flat_map(|e| parts_of(&e.call)) {
        store.store(part).map_err(|e| match e {
            CassetteError::MediaMissing { part, file, .. } => CassetteError::MediaMissing {
                cassette: path.to_path_buf(),
                part,
                file,
            },
            other => other,
        })?;
    }
    Ok(())
}

/// Places each part `entries` name by hash in the store of the cassette at `path`: a part whose
/// file is missing is an error naming the cassette, the part and the file (the first such; every
/// part is placed).
pub(super) fn place_parts(path: &Path, entries: &mut [Entry]) -> Result<(), CassetteError> {
    let store = MediaStore::of_file(path);
    let mut missing = None;
    for entry in entries {
        let Exchange::Completion { request, .. } = &mut entry.call else {
            continue;
        };
        for block in request.messages.iter_mut().flat_map(|m| &mut m.content) {
            let ContentBlock::Media(part) = block else {
                continue;
            };
            if part.stored_file().is_none() {
                continue;
            }
            let file = store.path_of(&reference(part));
            if missing.is_none() && !file.is_file() {
                missing = Some(CassetteError::MediaMissing {
                    cassette: path.to_path_buf(),
                    part: part.name().to_string(),
                    file: file.clone(),
                });
            }
            part.place(file);
        }
    }
    missing.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::{Media, MediaType};
    use crate::test_support::Scratch;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn stores_once_by_hash_and_reads_back() {
        let dir = Scratch::new("media-store");
        let store = MediaStore::beside(dir.path());
        let part = Media::bytes("receipt.png", PNG).load().unwrap();
        let name = store.store(&part).unwrap();
        assert_eq!(name, format!("{}.png", part.sha256()));
        assert_eq!(
            parse_reference(&name),
            Some((part.sha256(), MediaType::Png))
        );
        let file = dir.path().join("media").join(&name);
        assert_eq!(std::fs::read(&file).unwrap(), PNG);
        // Stored again: the file is already right, and nothing else is left in the folder.
        let written = std::fs::metadata(&file).unwrap().modified().unwrap();
        assert_eq!(store.store(&part).unwrap(), name);
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            written
        );
        assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), 1);
        let read = store.read(&name, Path::new("c.cassette.json")).unwrap();
        assert_eq!((read.bytes(), read.sha256()), (PNG, part.sha256()));
    }

    #[test]
    fn a_missing_file_names_the_cassette_the_part_and_the_file() {
        let dir = Scratch::new("media-store");
        let store = MediaStore::beside(dir.path());
        let name = format!("{}.png", "ab".repeat(32));
        let e = store
            .read(&name, Path::new("cassettes/t.cassette.json"))
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("cassettes/t.cassette.json"), "{text}");
        assert!(text.contains(&name), "{text}");
        assert!(text.contains("restore"), "{text}");
    }

    #[test]
    fn references_are_hash_and_extension() {
        let sha = "3f".repeat(32);
        assert!(parse_reference(&format!("{sha}.jpg")).is_some());
        assert!(
            parse_reference(&format!("{sha}.jpeg")).is_none(),
            "one extension a type"
        );
        assert!(parse_reference(&format!("{}.png", "3f".repeat(31))).is_none());
        assert!(parse_reference("receipt.png").is_none());
        let text = format!(
            r#"{{"sha256":"{sha}","url":"{}.png","key":"{}"}}"#,
            "0a".repeat(32),
            "ff".repeat(12)
        );
        let found: Vec<String> = hashes_in(&text).collect();
        assert_eq!(found, [sha, "0a".repeat(32)]);
    }
}
