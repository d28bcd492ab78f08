//! The input tokens of a media part, by each provider's documented rule, from the size its header
//! tells ([`crate::completion::Extent`]). What no rule prices, or a part whose size cannot be read,
//! has no count: the estimate says "unpriced" and a budget refuses the call.

use crate::completion::{Extent, ImageDetail, MediaKind, MediaPart};
use crate::config::WireFormat;

/// OpenAI Chat Completions: low 85; high fits 2048x2048, then its shortest side down to 768, 170 per
/// 512-px tile plus 85 (platform.openai.com/docs/guides/images-vision#calculating-costs). `auto` is
/// counted as high, the larger.
pub fn openai_image(width: u32, height: u32, detail: ImageDetail) -> u64 {
    if detail == ImageDetail::Low {
        return 85;
    }
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let fit = (2048.0 / w).min(2048.0 / h).min(1.0);
    (w, h) = (w * fit, h * fit);
    // Scaled down only: a small image is not enlarged (a 512x512 image costs one tile, 255).
    let shortest = (768.0 / w.min(h)).min(1.0);
    (w, h) = ((w * shortest).round(), (h * shortest).round());
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    170 * tiles as u64 + 85
}

/// Anthropic: width x height / 750, after a long edge over 1568 px is scaled down to it
/// (docs.anthropic.com/en/docs/build-with-claude/vision#calculate-image-costs).
pub fn anthropic_image(width: u32, height: u32) -> u64 {
    let (w, h) = (f64::from(width), f64::from(height));
    let scale = (1568.0 / w.max(h)).min(1.0);
    let (w, h) = ((w * scale).round(), (h * scale).round());
    (w * h / 750.0).ceil() as u64
}

/// Anthropic PDFs, a page: its text, up to 3,000 tokens, and its image, a full-size one about 1,600
/// (docs.anthropic.com/en/docs/build-with-claude/pdf-support#estimate-your-costs).
pub const ANTHROPIC_PDF_PAGE: u64 = 3_000 + 1_600;

/// OpenAI PDFs, a page: its text and an image of it, with no published rule: Anthropic's bound for
/// the text and a portrait page's image at high detail (4 tiles, 765)
/// (platform.openai.com/docs/guides/pdf-files#how-it-works).
pub const OPENAI_PDF_PAGE: u64 = 3_000 + 765;

/// Gemini: 258 for an image of at most 384 px each side, else 258 per 768x768 tile
/// (ai.google.dev/gemini-api/docs/tokens#multimodal-tokens).
pub fn gemini_image(width: u32, height: u32) -> u64 {
    if width <= 384 && height <= 384 {
        return 258;
    }
    258 * u64::from(width.div_ceil(768)) * u64::from(height.div_ceil(768))
}

/// Gemini: 258 a PDF page (ai.google.dev/gemini-api/docs/document-processing#technical-details).
pub const GEMINI_PDF_PAGE: u64 = 258;

/// Gemini: 32 a second of audio, a started second counted whole
/// (ai.google.dev/gemini-api/docs/tokens#multimodal-tokens).
pub fn gemini_audio(seconds: f64) -> u64 {
    32 * seconds.ceil() as u64
}

/// The input tokens of `part` sent in `wire`; `Err` says why it has no count, naming the part.
/// A plain-text document is text: the caller counts it as such.
pub fn media_tokens(wire: WireFormat, part: &MediaPart) -> Result<u64, String> {
    let named = |why: &str| {
        format!(
            "the {} {} ({}): {why}",
            part.kind(),
            part.name(),
            part.media_type()
        )
    };
    if part.kind() == MediaKind::Audio && wire != WireFormat::Google {
        return Err(named(&format!(
            "no published token rate for audio in the {} format",
            crate::provider::wire_name(wire)
        )));
    }
    let unread = || {
        named(&format!(
            "its {} cannot be read from its header",
            match part.kind() {
                MediaKind::Image => "width and height",
                MediaKind::Document => "page count",
                _ => "duration",
            }
        ))
    };
    let extent = part.extent().ok_or_else(unread)?;
    Ok(match (wire, extent) {
        (WireFormat::OpenAi, Extent::Pixels { width, height }) => {
            openai_image(width, height, part.detail())
        }
        (WireFormat::Anthropic, Extent::Pixels { width, height }) => anthropic_image(width, height),
        (WireFormat::Google, Extent::Pixels { width, height }) => gemini_image(width, height),
        (WireFormat::OpenAi, Extent::Pages(pages)) => OPENAI_PDF_PAGE * u64::from(pages),
        (WireFormat::Anthropic, Extent::Pages(pages)) => ANTHROPIC_PDF_PAGE * u64::from(pages),
        (WireFormat::Google, Extent::Pages(pages)) => GEMINI_PDF_PAGE * u64::from(pages),
        (WireFormat::Google, Extent::Seconds(seconds)) => gemini_audio(seconds),
        _ => return Err(unread()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::completion::Media;

    /// The providers' own worked examples.
    #[test]
    fn each_rule_gives_its_providers_documented_examples() {
        // OpenAI: 1024x1024 high 765; 2048x4096 high 1105; 4096x8192 low 85.
        assert_eq!(openai_image(1024, 1024, ImageDetail::High), 765);
        assert_eq!(openai_image(2048, 4096, ImageDetail::High), 1105);
        assert_eq!(openai_image(4096, 8192, ImageDetail::Low), 85);
        // A small image is one tile, not enlarged.
        assert_eq!(openai_image(512, 512, ImageDetail::High), 255);
        assert_eq!(openai_image(37, 23, ImageDetail::High), 255);
        // Anthropic's table: 200x200 about 54, 1000x1000 about 1334, 1092x1092 about 1590.
        assert_eq!(anthropic_image(200, 200), 54);
        assert_eq!(anthropic_image(1000, 1000), 1334);
        assert_eq!(anthropic_image(1092, 1092), 1590);
        // A long edge over 1568 is scaled to it first: 3136x1568 is counted as 1568x784.
        assert_eq!(anthropic_image(3136, 1568), anthropic_image(1568, 784));
        assert_eq!(anthropic_image(1568, 784), 1568 * 784 / 750 + 1);
        // Gemini: 384x384 one image, 258; 600x400 one tile; 1600x900 3x2 tiles.
        assert_eq!(gemini_image(384, 384), 258);
        assert_eq!(gemini_image(600, 400), 258);
        assert_eq!(gemini_image(1600, 900), 258 * 6);
        // Gemini: a minute of audio is 1,920 tokens.
        assert_eq!(gemini_audio(60.0), 1920);
        assert_eq!(gemini_audio(1.5), 64);
    }

    fn fixture(name: &str) -> MediaPart {
        Media::file(format!(
            "{}/tests/fixtures/media/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .load()
        .unwrap()
    }

    #[test]
    fn a_part_is_counted_by_its_wire_formats_rule_from_its_header() {
        let png = fixture("red-37x23.png");
        assert_eq!(media_tokens(WireFormat::OpenAi, &png), Ok(255));
        assert_eq!(media_tokens(WireFormat::Anthropic, &png), Ok(2));
        assert_eq!(media_tokens(WireFormat::Google, &png), Ok(258));
        // The part's own detail prices it: `low` one fixed price, `high` as `auto`.
        let at = |detail| png.clone().with_detail(detail).unwrap();
        assert_eq!(
            media_tokens(WireFormat::OpenAi, &at(ImageDetail::Low)),
            Ok(85)
        );
        assert_eq!(
            media_tokens(WireFormat::OpenAi, &at(ImageDetail::High)),
            Ok(255)
        );
        assert_eq!(
            media_tokens(WireFormat::Anthropic, &at(ImageDetail::Low)),
            Ok(2)
        );
        let pdf = fixture("two-pages.pdf");
        assert_eq!(media_tokens(WireFormat::Google, &pdf), Ok(516));
        assert_eq!(media_tokens(WireFormat::Anthropic, &pdf), Ok(9_200));
        assert_eq!(media_tokens(WireFormat::OpenAi, &pdf), Ok(7_530));
        let wav = fixture("silence-1.5s.wav");
        assert_eq!(media_tokens(WireFormat::Google, &wav), Ok(64));
        assert_eq!(
            media_tokens(WireFormat::OpenAi, &wav),
            Err(
                "the audio silence-1.5s.wav (audio/wav): no published token rate for audio in the \
                 OpenAI Chat Completions format"
                    .to_string()
            )
        );
        assert!(media_tokens(WireFormat::Anthropic, &wav).is_err());
        // A PNG whose header is cut short: its size is unknown, so is its count.
        let cut = Media::bytes("cut.png", &png.bytes()[..20]).load().unwrap();
        assert_eq!(
            media_tokens(WireFormat::Google, &cut),
            Err(
                "the image cut.png (image/png): its width and height cannot be read from its header"
                    .to_string()
            )
        );
    }
}
