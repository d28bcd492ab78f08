//! What a media part's header says of its size: an image's width and height, a PDF's pages, an
//! audio clip's seconds. Read from the bytes alone (no decoding library): what token costs and the
//! reports need. Each reader is pure and total: a truncated or lying header gives `None`, never a
//! panic. Which reader a part's type takes is `MediaPart::extent`'s choice.

/// The size of a media part, as its header tells it (as the reports write it: `{"pixels": {"width":
/// 640, "height": 480}}`, `{"pages": 3}`, `{"seconds": 1.5}`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Extent {
    /// An image of `width` x `height` pixels.
    Pixels {
        /// Width, pixels.
        width: u32,
        /// Height, pixels.
        height: u32,
    },
    /// A PDF of this many pages.
    Pages(u32),
    /// Audio of this many seconds.
    Seconds(f64),
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pixels { width, height } => write!(f, "{width}x{height}"),
            Self::Pages(1) => f.write_str("1 page"),
            Self::Pages(n) => write!(f, "{n} pages"),
            Self::Seconds(s) => write!(f, "{s:.1} s"),
        }
    }
}

fn be16(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u32::from(u16::from_be_bytes([b[0], b[1]])))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn le16(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
}

fn le24(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(3)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], 0]))
}

fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A size with no zero side (a zero side is a header that lies or defers the size).
fn nonzero(width: u32, height: u32) -> Option<(u32, u32)> {
    (width > 0 && height > 0).then_some((width, height))
}

/// A PNG's size: its first chunk, IHDR, holds width and height (big-endian).
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    // The PNG specification caps each side at 2^31 - 1.
    let (width, height) = (be32(bytes, 16)?, be32(bytes, 20)?);
    if width > i32::MAX as u32 || height > i32::MAX as u32 {
        return None;
    }
    nonzero(width, height)
}

/// A JPEG's size: the first start-of-frame marker (SOF0 to SOF15 but DHT, JPG and DAC), reached by
/// walking the segments' lengths.
pub fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut at = 2usize;
    loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        // Any number of 0xFF fill bytes may precede a marker.
        while *bytes.get(at)? == 0xFF {
            at += 1;
        }
        let marker = *bytes.get(at)?;
        at += 1;
        match marker {
            // Markers without a segment: TEM, the restart markers, SOI.
            0x01 | 0xD0..=0xD8 => continue,
            // End of image or start of scan before any frame: no size to read.
            0xD9 | 0xDA => return None,
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                // Length (2), precision (1), height (2), width (2).
                let (height, width) = (be16(bytes, at + 3)?, be16(bytes, at + 5)?);
                return nonzero(width, height);
            }
            _ => {
                let length = be16(bytes, at)? as usize;
                if length < 2 {
                    return None;
                }
                at += length;
            }
        }
    }
}

/// A GIF's size: its logical screen (little-endian, after the six-byte signature).
pub fn gif_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
        return None;
    }
    nonzero(le16(bytes, 6)?, le16(bytes, 8)?)
}

/// A WebP's size from its first chunk: lossy `VP8 ` (its key frame's 14-bit sides), lossless `VP8L`
/// (14-bit sides minus one) or extended `VP8X` (the canvas's 24-bit sides minus one).
pub fn webp_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WEBP" {
        return None;
    }
    let data = 20;
    match bytes.get(12..16)? {
        b"VP8 " => {
            // A frame tag (3 bytes), then the key frame's start code.
            if bytes.get(data + 3..data + 6)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            nonzero(
                le16(bytes, data + 6)? & 0x3FFF,
                le16(bytes, data + 8)? & 0x3FFF,
            )
        }
        b"VP8L" => {
            if *bytes.get(data)? != 0x2F {
                return None;
            }
            let bits = le32(bytes, data + 1)?;
            nonzero((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        }
        b"VP8X" => nonzero(le24(bytes, data + 4)? + 1, le24(bytes, data + 7)? + 1),
        _ => None,
    }
}

/// A PDF's pages: its page objects counted (`/Type /Page`, not the `/Pages` tree's nodes). A PDF
/// whose page objects are compressed in object streams shows none: unknown.
pub fn pdf_pages(bytes: &[u8]) -> Option<u32> {
    if !bytes.starts_with(b"%PDF-") {
        return None;
    }
    let is_delimiter = |b: u8| b.is_ascii_whitespace() || b"()<>[]{}/%".contains(&b);
    let mut pages = 0u32;
    let mut rest = bytes;
    while let Some(at) = find(rest, b"/Type") {
        rest = &rest[at + 5..];
        let after = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let name = &rest[after..];
        if name.starts_with(b"/Page") && name.get(5).is_none_or(|&b| is_delimiter(b)) {
            pages = pages.saturating_add(1);
        }
    }
    (pages > 0).then_some(pages)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A WAV's seconds: its `data` chunk's size over the byte rate its `fmt ` chunk gives. A data chunk
/// said to run past the file's end (a lying or streamed header) is unknown.
pub fn wav_seconds(bytes: &[u8]) -> Option<f64> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WAVE" {
        return None;
    }
    let mut at = 12usize;
    let mut byte_rate = None;
    while let (Some(id), Some(size)) = (bytes.get(at..at + 4), le32(bytes, at + 4)) {
        let body = at + 8;
        let size = size as usize;
        match id {
            b"fmt " => byte_rate = Some(le32(bytes, body + 8)?),
            b"data" => {
                let rate = byte_rate.filter(|&r| r > 0)?;
                if body.checked_add(size)? > bytes.len() {
                    return None;
                }
                return Some(size as f64 / f64::from(rate));
            }
            _ => {}
        }
        // Chunks are padded to an even length.
        at = body.checked_add(size)?.checked_add(size % 2)?;
    }
    None
}

/// An MPEG audio layer III frame header's facts.
struct Mp3Frame {
    /// Bits per second.
    bitrate: u32,
    sample_rate: u32,
    samples_per_frame: u32,
    /// Bytes from the frame's start to a Xing/Info tag, when the frame holds one.
    xing_at: usize,
}

/// The layer III frame header at the start of `b`, if it is one.
fn mp3_frame(b: &[u8]) -> Option<Mp3Frame> {
    let h = b.get(..4)?;
    if h[0] != 0xFF || h[1] & 0xE0 != 0xE0 || (h[1] >> 1) & 0b11 != 0b01 {
        return None;
    }
    // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5; 1 is reserved.
    let version = (h[1] >> 3) & 0b11;
    let (bitrate_index, rate_index) = (usize::from(h[2] >> 4), usize::from((h[2] >> 2) & 0b11));
    const MPEG1_KBPS: [u32; 15] = [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
    ];
    const MPEG2_KBPS: [u32; 15] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
    let (kbps, rates, samples_per_frame) = match version {
        3 => (MPEG1_KBPS, [44_100, 48_000, 32_000], 1152),
        2 => (MPEG2_KBPS, [22_050, 24_000, 16_000], 576),
        0 => (MPEG2_KBPS, [11_025, 12_000, 8_000], 576),
        _ => return None,
    };
    let kbps = *kbps.get(bitrate_index).filter(|&&k| k > 0)?;
    let sample_rate = *rates.get(rate_index)?;
    let mono = h[3] >> 6 == 0b11;
    // The side information after the 4-byte header, before a Xing/Info tag.
    let side = match (version == 3, mono) {
        (true, false) => 32,
        (true, true) | (false, false) => 17,
        (false, true) => 9,
    };
    Some(Mp3Frame {
        bitrate: kbps * 1000,
        sample_rate,
        samples_per_frame,
        xing_at: 4 + side,
    })
}

/// An MP3's seconds: the frame count of its Xing/Info tag when it has one, else (constant bitrate)
/// its audio bytes over its first frame's bitrate. ID3v2 (before) and ID3v1 (after) tags are not
/// audio.
pub fn mp3_seconds(bytes: &[u8]) -> Option<f64> {
    let mut start = 0usize;
    if bytes.starts_with(b"ID3") {
        // A syncsafe size (7 bits a byte) after the version and the flags; a footer adds ten bytes.
        let size = bytes.get(6..10)?.iter().try_fold(0usize, |n, &b| {
            (b < 0x80).then_some((n << 7) | usize::from(b))
        })?;
        let footer = if bytes.get(5)? & 0x10 != 0 { 10 } else { 0 };
        start = 10 + size + footer;
    }
    // Some encoders pad before the first frame: look a little way for it.
    let first = (start..bytes.len().min(start.saturating_add(4096)))
        .find(|&at| mp3_frame(&bytes[at..]).is_some())?;
    let frame = mp3_frame(&bytes[first..])?;
    let tag = first + frame.xing_at;
    if matches!(bytes.get(tag..tag + 4), Some(b"Xing" | b"Info")) {
        let flags = be32(bytes, tag + 4)?;
        // Without its frame count the tag says nothing of the length.
        if flags & 1 == 0 {
            return None;
        }
        let frames = be32(bytes, tag + 8)?;
        return (frames > 0).then(|| {
            f64::from(frames) * f64::from(frame.samples_per_frame) / f64::from(frame.sample_rate)
        });
    }
    let mut end = bytes.len();
    if end >= first + 128 && bytes[end - 128..].starts_with(b"TAG") {
        end -= 128;
    }
    Some((end - first) as f64 * 8.0 / f64::from(frame.bitrate))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extent the reader of `name`'s extension reads from `bytes`.
    fn extent(name: &str, bytes: &[u8]) -> Option<Extent> {
        let pixels = |(width, height)| Extent::Pixels { width, height };
        match name.rsplit('.').next().unwrap() {
            "png" => png_size(bytes).map(pixels),
            "jpg" => jpeg_size(bytes).map(pixels),
            "gif" => gif_size(bytes).map(pixels),
            "webp" => webp_size(bytes).map(pixels),
            "pdf" => pdf_pages(bytes).map(Extent::Pages),
            "wav" => wav_seconds(bytes).map(Extent::Seconds),
            "mp3" => mp3_seconds(bytes).map(Extent::Seconds),
            other => panic!("{other}"),
        }
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/media/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Files written by ImageMagick 6.9 (`convert -size 37x23 xc:red`, its WebP in each of the three
    /// chunk kinds, a progressive JPEG), `lame` 3.100 and Python's `wave`: real encoders' headers.
    #[test]
    fn every_image_format_gives_its_size() {
        for name in [
            "red-37x23.png",
            "red-37x23.jpg",
            "red-37x23-progressive.jpg",
            "red-37x23.gif",
            "red-37x23-vp8.webp",
            "red-37x23-vp8l.webp",
            "red-37x23-vp8x.webp",
        ] {
            assert_eq!(
                extent(name, &fixture(name)),
                Some(Extent::Pixels {
                    width: 37,
                    height: 23
                }),
                "{name}"
            );
        }
    }

    #[test]
    fn a_pdf_counts_its_page_objects_not_its_page_tree() {
        let pdf = fixture("two-pages.pdf");
        assert_eq!(pdf_pages(&pdf), Some(2));
        // `/Pages` nodes alone are not pages; `/PageLabels` is another name.
        assert_eq!(
            pdf_pages(b"%PDF-1.7\n<< /Type /Pages /Count 9 >> << /Type/PageLabels >>"),
            None
        );
        assert_eq!(pdf_pages(b"not a pdf /Type /Page"), None);
        assert_eq!(extent("two-pages.pdf", &pdf), Some(Extent::Pages(2)));
    }

    #[test]
    fn audio_gives_its_seconds() {
        // 12,000 16-bit mono samples at 8 kHz.
        assert_eq!(wav_seconds(&fixture("silence-1.5s.wav")), Some(1.5));
        // lame padded the 1.5 s to whole frames: 23 of 576 samples at 8 kHz, 1.656 s, told by the
        // Xing tag; the constant-bitrate files (no tag) say as much by their size.
        let xing = mp3_seconds(&fixture("silence-xing.mp3")).unwrap();
        assert!((xing - 23.0 * 576.0 / 8000.0).abs() < 1e-9, "{xing}");
        let cbr = mp3_seconds(&fixture("silence-cbr.mp3")).unwrap();
        assert!((cbr - 1656.0 * 8.0 / 8000.0).abs() < 1e-9, "{cbr}");
        let mpeg1 = mp3_seconds(&fixture("silence-cbr-44k.mp3")).unwrap();
        assert!((mpeg1 - 6165.0 * 8.0 / 32000.0).abs() < 1e-9, "{mpeg1}");
        // An ID3v2 tag before the audio is skipped.
        let mut tagged = b"ID3\x04\0\0\0\0\0\x05hello".to_vec();
        tagged.extend(fixture("silence-cbr.mp3"));
        assert_eq!(mp3_seconds(&tagged), Some(cbr));
    }

    #[test]
    fn a_truncated_or_lying_header_is_unknown() {
        // The shortest prefix that tells the size is the header's end; every shorter one is unknown.
        for (name, header_end) in [
            ("red-37x23.png", Some(24)),
            ("red-37x23.gif", Some(10)),
            ("red-37x23-vp8.webp", Some(30)),
            ("red-37x23-vp8l.webp", Some(25)),
            ("red-37x23-vp8x.webp", Some(30)),
            // Its SOF0 marker is at 158, after the JFIF and quantisation tables' segments.
            ("red-37x23.jpg", Some(158 + 9)),
            ("silence-1.5s.wav", None),
        ] {
            let bytes = fixture(name);
            let whole = extent(name, &bytes);
            let needed = (0..=bytes.len())
                .find(|&n| extent(name, &bytes[..n]).is_some())
                .unwrap();
            assert_eq!(extent(name, &bytes[..needed]), whole, "{name}");
            // A WAV's data must all be there.
            assert_eq!(needed, header_end.unwrap_or(bytes.len()), "{name}");
        }
        // A WAV whose data chunk says more bytes than the file has.
        let mut wav = fixture("silence-1.5s.wav");
        wav.truncate(1000);
        assert_eq!(wav_seconds(&wav), None);
        // A zero-sized image, a JPEG whose scan starts before any frame.
        let mut png = fixture("red-37x23.png");
        png[16..20].copy_from_slice(&[0; 4]);
        assert_eq!(png_size(&png), None);
        assert_eq!(jpeg_size(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2]), None);
        // A segment length of zero would loop: unknown.
        assert_eq!(jpeg_size(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0, 0xFF]), None);
    }

    #[test]
    fn extents_read_as_people_say_them() {
        let shown = [
            Extent::Pixels {
                width: 1024,
                height: 768,
            },
            Extent::Pages(1),
            Extent::Pages(3),
            Extent::Seconds(1.656),
        ]
        .map(|e| e.to_string());
        assert_eq!(shown, ["1024x768", "1 page", "3 pages", "1.7 s"]);
    }
}
