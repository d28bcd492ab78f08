//! Media parts of a message (issue 46): an image, a document (PDF or plain text) or audio, held as
//! its bytes with the media type read from them. [`Media`] is what a test names (a file or bytes);
//! [`MediaPart`] is the loaded part a [`ContentBlock::Media`](super::ContentBlock::Media) carries.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// The media types a part may have, each detected from the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MediaType {
    /// `image/png`
    Png,
    /// `image/jpeg`
    Jpeg,
    /// `image/gif`
    Gif,
    /// `image/webp`
    Webp,
    /// `application/pdf`
    Pdf,
    /// `text/plain` (UTF-8)
    Text,
    /// `audio/wav`
    Wav,
    /// `audio/mpeg` (MP3)
    Mp3,
}

/// What kind of part a media type makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MediaKind {
    /// An image.
    Image,
    /// A document: PDF or plain text.
    Document,
    /// Audio.
    Audio,
}

impl MediaType {
    const ALL: [MediaType; 8] = [
        Self::Png,
        Self::Jpeg,
        Self::Gif,
        Self::Webp,
        Self::Pdf,
        Self::Text,
        Self::Wav,
        Self::Mp3,
    ];

    /// Its MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Pdf => "application/pdf",
            Self::Text => "text/plain",
            Self::Wav => "audio/wav",
            Self::Mp3 => "audio/mpeg",
        }
    }

    /// The kind of part it makes.
    pub fn kind(self) -> MediaKind {
        match self {
            Self::Png | Self::Jpeg | Self::Gif | Self::Webp => MediaKind::Image,
            Self::Pdf | Self::Text => MediaKind::Document,
            Self::Wav | Self::Mp3 => MediaKind::Audio,
        }
    }

    /// The file extensions that name it (the first is the one to rename to).
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Png => &["png"],
            Self::Jpeg => &["jpg", "jpeg"],
            Self::Gif => &["gif"],
            Self::Webp => &["webp"],
            Self::Pdf => &["pdf"],
            Self::Text => &["txt", "text", "md", "csv"],
            Self::Wav => &["wav"],
            Self::Mp3 => &["mp3"],
        }
    }

    /// The extension a file of this type is stored under in the media store (`png`, `jpg`, `txt`).
    pub fn extension(self) -> &'static str {
        self.extensions()[0]
    }

    pub(crate) fn from_mime(mime: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.mime() == mime)
    }

    pub(crate) fn from_extension(extension: &str) -> Option<Self> {
        let extension = extension.to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|t| t.extensions().contains(&extension.as_str()))
    }

    /// The type `bytes` are, from their first bytes (UTF-8 text last, as it has no signature).
    pub fn detect(bytes: &[u8]) -> Option<Self> {
        let riff =
            |form: &[u8]| bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == form;
        // An MPEG audio frame: 11 sync bits, a version that is not reserved, layer III.
        let mpeg_frame = bytes.len() >= 2
            && bytes[0] == 0xFF
            && bytes[1] & 0xE0 == 0xE0
            && (bytes[1] >> 3) & 0b11 != 0b01
            && (bytes[1] >> 1) & 0b11 == 0b01;
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else if riff(b"WEBP") {
            Some(Self::Webp)
        } else if bytes.starts_with(b"%PDF-") {
            Some(Self::Pdf)
        } else if riff(b"WAVE") {
            Some(Self::Wav)
        } else if bytes.starts_with(b"ID3") || mpeg_frame {
            Some(Self::Mp3)
        } else if std::str::from_utf8(bytes).is_ok() && !bytes.contains(&0) {
            Some(Self::Text)
        } else {
            None
        }
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mime())
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Image => "image",
            Self::Document => "document",
            Self::Audio => "audio",
        })
    }
}

/// How closely OpenAI reads an image (`detail`); the other providers take no such setting and
/// ignore it. It prices the image too: `low` is one fixed price, `high` and `auto` are counted by
/// its tiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetail {
    /// The provider chooses (what is sent unless a test says otherwise).
    #[default]
    Auto,
    /// A 512x512 reading at one fixed price.
    Low,
    /// The full reading, tile by tile.
    High,
}

impl ImageDetail {
    /// Its name on the wire and in a suite (`auto`, `low`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Low => "low",
            Self::High => "high",
        }
    }

    /// The detail `word` names.
    pub fn named(word: &str) -> Option<Self> {
        [Self::Auto, Self::Low, Self::High]
            .into_iter()
            .find(|d| d.as_str() == word)
    }

    fn is_auto(&self) -> bool {
        *self == Self::Auto
    }
}

/// Why a [`Media`] could not be loaded: each names the file and says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MediaError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The file (or the bytes) is empty.
    Empty {
        /// The file's name.
        name: String,
    },
    /// The bytes are none of the types taken.
    Unknown {
        /// The file's name.
        name: String,
    },
    /// The extension names another type than the bytes are.
    Mismatch {
        /// The file's name.
        name: String,
        /// The type the extension names.
        by_extension: MediaType,
        /// The type the bytes are.
        by_bytes: MediaType,
    },
    /// A `detail` was given for a part that is not an image.
    DetailNotImage {
        /// The file's name.
        name: String,
        /// The type the bytes are.
        media_type: MediaType,
    },
}

const TAKEN: &str = "PNG, JPEG, GIF, WebP, PDF, UTF-8 text, WAV or MP3";

impl fmt::Display for MediaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { path, reason } => write!(
                f,
                "media file {}: cannot read it ({reason}); a relative path is read from the test's \
                 crate directory",
                path.display()
            ),
            Self::Empty { name } => {
                write!(f, "media {name}: it is empty; give a file with content")
            }
            Self::Unknown { name } => write!(
                f,
                "media {name}: its bytes are not a type taken ({TAKEN}); convert it to one of them"
            ),
            Self::Mismatch {
                name,
                by_extension,
                by_bytes,
            } => write!(
                f,
                "media {name}: its extension says {by_extension} but its bytes are {by_bytes}; \
                 rename it to .{} (or replace it with a real {by_extension} file)",
                by_bytes.extensions()[0]
            ),
            Self::DetailNotImage { name, media_type } => write!(
                f,
                "media {name}: a `detail` is given but it is {media_type}, not an image; \
                 remove the `detail`"
            ),
        }
    }
}

impl std::error::Error for MediaError {}

/// An image, a document or audio for a prompt, from a file or bytes; read and checked when the
/// request is built (a missing file or a wrong type errors the sample, naming the file). URLs are
/// not taken: their content could change behind a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    source: PartSource,
    detail: ImageDetail,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PartSource {
    File(PathBuf),
    Bytes { name: String, bytes: Arc<[u8]> },
}

impl Media {
    /// The file at `path` (relative paths from the test's crate directory, where `cargo test` runs).
    pub fn file(path: impl AsRef<Path>) -> Self {
        Self {
            source: PartSource::File(path.as_ref().to_path_buf()),
            detail: ImageDetail::Auto,
        }
    }

    /// `bytes` shown as `name` (a file name: its extension, when it has one, is checked).
    pub fn bytes(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            source: PartSource::Bytes {
                name: name.into(),
                bytes: bytes.into().into(),
            },
            detail: ImageDetail::Auto,
        }
    }

    /// This image read at `detail` (OpenAI's setting; an error when loaded if it is not an image).
    pub fn detail(mut self, detail: ImageDetail) -> Self {
        self.detail = detail;
        self
    }

    /// The part: its bytes read, its type detected and checked against its extension.
    pub fn load(&self) -> Result<MediaPart, MediaError> {
        let part = match &self.source {
            PartSource::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| MediaError::Read {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
                let name = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                MediaPart::new(name, bytes)
            }
            PartSource::Bytes { name, bytes } => MediaPart::new(name.clone(), bytes.clone()),
        }?;
        part.with_detail(self.detail)
    }
}

/// A loaded media part: its bytes, their type and a name to show (the file name). A part read
/// from a cassette names its bytes by their hash and reads them from the cassettes' media store
/// when asked (`cassette::media`).
#[derive(Clone)]
pub struct MediaPart {
    media_type: MediaType,
    name: String,
    /// The SHA-256 of its bytes, in hex: what a recording and a call's key name.
    sha256: String,
    size: u64,
    detail: ImageDetail,
    bytes: PartBytes,
}

/// Where a part's bytes are.
#[derive(Clone)]
enum PartBytes {
    /// In memory (a part a test gave, or one read back).
    Held(Arc<[u8]>),
    /// In the media store, read on first use: a part as a cassette names it. The file is empty
    /// until the cassette's reader places it (`MediaPart::place`).
    Stored {
        file: PathBuf,
        read: std::sync::OnceLock<Arc<[u8]>>,
    },
}

/// Two parts are equal when their type, name, bytes (by hash) and detail are.
impl PartialEq for MediaPart {
    fn eq(&self, other: &Self) -> bool {
        (self.media_type, &self.name, &self.sha256, self.detail)
            == (other.media_type, &other.name, &other.sha256, other.detail)
    }
}

impl Eq for MediaPart {}

impl MediaPart {
    /// A part of `bytes` named `name`, its type detected from the bytes and checked against the
    /// name's extension.
    pub fn new(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Result<Self, MediaError> {
        let (name, bytes) = (name.into(), bytes.into());
        if bytes.is_empty() {
            return Err(MediaError::Empty { name });
        }
        let by_bytes =
            MediaType::detect(&bytes).ok_or_else(|| MediaError::Unknown { name: name.clone() })?;
        let by_extension = Path::new(&name)
            .extension()
            .and_then(|e| e.to_str())
            .and_then(MediaType::from_extension);
        // Text has no signature: any extension not naming a binary type may hold it.
        if let Some(by_extension) = by_extension
            && by_extension != by_bytes
        {
            return Err(MediaError::Mismatch {
                name,
                by_extension,
                by_bytes,
            });
        }
        Ok(Self::held(by_bytes, name, bytes))
    }

    fn held(media_type: MediaType, name: String, bytes: Arc<[u8]>) -> Self {
        Self {
            media_type,
            name,
            sha256: crate::text::sha256_hex(&[&bytes], 32),
            size: bytes.len() as u64,
            detail: ImageDetail::Auto,
            bytes: PartBytes::Held(bytes),
        }
    }

    /// This part read at `detail`; `Err` when it is not an image and `detail` is not `auto`.
    pub fn with_detail(mut self, detail: ImageDetail) -> Result<Self, MediaError> {
        if detail != ImageDetail::Auto && self.kind() != MediaKind::Image {
            return Err(MediaError::DetailNotImage {
                name: self.name,
                media_type: self.media_type,
            });
        }
        self.detail = detail;
        Ok(self)
    }

    /// How closely it is to be read (an image's; `auto` for any other part).
    pub fn detail(&self) -> ImageDetail {
        self.detail
    }

    /// Its media type.
    pub fn media_type(&self) -> MediaType {
        self.media_type
    }

    /// The kind of part it is.
    pub fn kind(&self) -> MediaKind {
        self.media_type.kind()
    }

    /// The name it is shown as.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its bytes (a part read from a cassette reads them from the media store on first use; empty
    /// if its file went missing since the cassette was read, which checked it was there).
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            PartBytes::Held(bytes) => bytes,
            PartBytes::Stored { file, read } => read.get_or_init(|| {
                std::fs::read(file)
                    .map(Arc::from)
                    .unwrap_or_else(|_| Arc::from(Vec::new()))
            }),
        }
    }

    /// How many bytes it has.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its bytes in standard base64.
    pub fn base64(&self) -> String {
        STANDARD.encode(self.bytes())
    }

    /// Its text, for a plain-text document (checked UTF-8 when loaded).
    pub fn text(&self) -> Option<&str> {
        (self.media_type == MediaType::Text)
            .then(|| std::str::from_utf8(self.bytes()).ok())
            .flatten()
    }

    /// Its size as its header tells it (pixels, pages, seconds); `None` when unreadable, or text.
    pub fn extent(&self) -> Option<super::Extent> {
        use super::Extent;
        use super::media_header as header;
        let bytes = self.bytes();
        let pixels = |(width, height)| Extent::Pixels { width, height };
        match self.media_type {
            MediaType::Png => header::png_size(bytes).map(pixels),
            MediaType::Jpeg => header::jpeg_size(bytes).map(pixels),
            MediaType::Gif => header::gif_size(bytes).map(pixels),
            MediaType::Webp => header::webp_size(bytes).map(pixels),
            MediaType::Pdf => header::pdf_pages(bytes).map(Extent::Pages),
            MediaType::Wav => header::wav_seconds(bytes).map(Extent::Seconds),
            MediaType::Mp3 => header::mp3_seconds(bytes).map(Extent::Seconds),
            MediaType::Text => None,
        }
    }

    /// The SHA-256 of its bytes, in hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The file its bytes are stored in when it names them (read from a cassette), placed.
    pub(crate) fn stored_file(&self) -> Option<&Path> {
        match &self.bytes {
            PartBytes::Stored { file, .. } => Some(file),
            PartBytes::Held(_) => None,
        }
    }

    /// A part read from a cassette: its bytes are in `file` (the cassette's reader places it).
    pub(crate) fn place(&mut self, file: PathBuf) {
        if let PartBytes::Stored { file: at, .. } = &mut self.bytes {
            *at = file;
        }
    }
}

/// Its name, type and size; never its bytes.
impl fmt::Debug for MediaPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MediaPart")
            .field("name", &self.name)
            .field("media_type", &self.media_type.mime())
            .field("len", &self.size)
            .field("detail", &self.detail)
            .finish()
    }
}

/// How a part is written in a recorded request, the one place that decides it: its type, name,
/// hash and size, never its bytes (they are in the media store beside the cassettes, named by the
/// hash). Fields in a fixed order, so keys are stable; `detail` is written only when not `auto`, so
/// the keys recorded before it existed stay.
#[derive(Serialize, Deserialize)]
struct RecordedPart {
    media_type: String,
    name: String,
    sha256: String,
    size: u64,
    #[serde(default, skip_serializing_if = "ImageDetail::is_auto")]
    detail: ImageDetail,
}

impl Serialize for MediaPart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RecordedPart {
            media_type: self.media_type.mime().to_string(),
            name: self.name.clone(),
            sha256: self.sha256.clone(),
            size: self.size,
            detail: self.detail,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MediaPart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let stored = RecordedPart::deserialize(deserializer)?;
        let media_type = MediaType::from_mime(&stored.media_type).ok_or_else(|| {
            D::Error::custom(format!("unknown media type {:?}", stored.media_type))
        })?;
        let well_formed =
            stored.sha256.len() == 64 && stored.sha256.bytes().all(|b| b.is_ascii_hexdigit());
        if !well_formed {
            return Err(D::Error::custom(format!(
                "media {}: its sha256 {:?} is not 64 hex digits",
                stored.name, stored.sha256
            )));
        }
        Ok(Self {
            media_type,
            name: stored.name,
            sha256: stored.sha256.to_ascii_lowercase(),
            size: stored.size,
            detail: stored.detail,
            bytes: PartBytes::Stored {
                file: PathBuf::new(),
                read: std::sync::OnceLock::new(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn types_are_read_from_the_bytes() {
        for (bytes, expected) in [
            (PNG, Some(MediaType::Png)),
            (&b"\xFF\xD8\xFF\xE0"[..], Some(MediaType::Jpeg)),
            (b"GIF89a\x01\0", Some(MediaType::Gif)),
            (b"RIFF\x24\0\0\0WEBPVP8 ", Some(MediaType::Webp)),
            (b"RIFF\x24\0\0\0WAVEfmt ", Some(MediaType::Wav)),
            (b"%PDF-1.4\n", Some(MediaType::Pdf)),
            (b"ID3\x04\0", Some(MediaType::Mp3)),
            (&[0xFF, 0xFB, 0x90, 0x64][..], Some(MediaType::Mp3)),
            // An AAC ADTS header has the sync bits but layer 00: not MP3.
            (&[0xFF, 0xF1, 0x50, 0x80][..], None),
            (b"Total 7.50\n", Some(MediaType::Text)),
            (&[0xC3, 0x28][..], None),
        ] {
            assert_eq!(MediaType::detect(bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn extension_mismatch_names_the_file_both_types_and_the_fix() {
        let e = Media::bytes("receipt.jpg", PNG).load().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("receipt.jpg"), "{text}");
        assert!(
            text.contains("image/jpeg") && text.contains("image/png"),
            "{text}"
        );
        assert!(text.contains("rename it to .png"), "{text}");
        assert!(matches!(
            Media::bytes("notes.pdf", "just text").load(),
            Err(MediaError::Mismatch { .. })
        ));
        // Text has no signature: any extension not naming a binary type may hold it.
        let part = Media::bytes("notes.log", "just text").load().unwrap();
        assert_eq!(
            (part.kind(), part.text()),
            (MediaKind::Document, Some("just text"))
        );
        assert!(matches!(
            Media::bytes("e.txt", "").load(),
            Err(MediaError::Empty { .. })
        ));
        assert!(matches!(
            Media::bytes("b.bin", vec![0u8, 1, 2]).load(),
            Err(MediaError::Unknown { .. })
        ));
    }

    /// Each type's header reader is the one its part takes (the readers: `media_header.rs`).
    #[test]
    fn a_part_reads_its_extent_with_its_types_reader() {
        let part = |name: &str| {
            Media::file(format!(
                "{}/tests/fixtures/media/{name}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .load()
            .unwrap()
            .extent()
        };
        let pixels = Some(super::super::Extent::Pixels {
            width: 37,
            height: 23,
        });
        for name in ["png", "jpg", "gif", "vp8.webp"]
            .map(|e| format!("red-37x23{}{e}", if e.contains('.') { "-" } else { "." }))
        {
            assert_eq!(part(&name), pixels, "{name}");
        }
        assert_eq!(part("two-pages.pdf"), Some(super::super::Extent::Pages(2)));
        assert_eq!(
            part("silence-1.5s.wav"),
            Some(super::super::Extent::Seconds(1.5))
        );
        assert!(matches!(
            part("silence-xing.mp3"),
            Some(super::super::Extent::Seconds(_))
        ));
        assert_eq!(Media::bytes("n.txt", "text").load().unwrap().extent(), None);
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = Media::file("no/such/receipt.png").load().unwrap_err();
        assert!(e.to_string().contains("no/such/receipt.png"), "{e}");
    }

    #[test]
    fn serialises_by_hash_never_bytes_and_back() {
        let part = Media::bytes("r.png", PNG).load().unwrap();
        let json = serde_json::to_string(&part).unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"media_type":"image/png","name":"r.png","sha256":"{}","size":{}}}"#,
                part.sha256(),
                PNG.len()
            )
        );
        let read: MediaPart = serde_json::from_str(&json).unwrap();
        assert_eq!((&read, read.size()), (&part, PNG.len() as u64));
        assert_eq!(
            read.stored_file(),
            Some(Path::new("")),
            "placed by its reader"
        );
        // As a block of a recorded request: tagged `media`, and read back.
        let block = super::super::ContentBlock::Media(part.clone());
        let json_block = serde_json::to_string(&block).unwrap();
        assert!(
            json_block.starts_with(r#"{"type":"media","media_type":"image/png""#),
            "{json_block}"
        );
        assert_eq!(
            serde_json::from_str::<super::super::ContentBlock>(&json_block).unwrap(),
            block
        );
        let no_hash = json.replace(part.sha256(), "3f2a");
        assert!(serde_json::from_str::<MediaPart>(&no_hash).is_err());
    }
}
