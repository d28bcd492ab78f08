//! A media part's reference: the one textual form that names its bytes in the media store
//! ([`super::media`]), the file name `<sha256>.<ext>`, as cassettes and relayed bodies write it.

use std::path::{Path, PathBuf};

use crate::completion::{MediaPart, MediaType};

/// The media folder's name, in the cassette folder.
pub const MEDIA_DIR: &str = "media";

/// The file `reference` names in the media store beside the files of `folder`.
pub fn stored_path(folder: &Path, reference: &str) -> PathBuf {
    folder.join(MEDIA_DIR).join(reference)
}

/// A part's reference, the one textual form that names its bytes: the file name `<sha256>.<ext>`.
pub fn reference(part: &MediaPart) -> String {
    reference_to(part.sha256(), part.media_type())
}

/// The reference of the bytes hashed `sha256`, of `media_type`.
pub fn reference_to(sha256: &str, media_type: MediaType) -> String {
    format!("{sha256}.{}", media_type.extension())
}

/// What a relayed body (`raw.rs`) holds in place of the media `part` its request declared as
/// `media_type`: the part's reference, the declared type and its size.
pub fn relayed_reference(part: &MediaPart, media_type: &str) -> serde_json::Value {
    serde_json::json!({
        "media": reference(part),
        "media_type": media_type,
        "size": part.size(),
    })
}

/// The hash and type a reference names, when `text` is one (`<64 hex digits>.<ext>`).
pub fn parse_reference(text: &str) -> Option<(&str, MediaType)> {
    let (sha, extension) = text.split_once('.')?;
    let media_type = MediaType::from_extension(extension)?;
    (is_sha256(sha) && media_type.extension() == extension).then_some((sha, media_type))
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}
