//! The recording endpoint's URLs (pure, but for their random parts). A sample's base URL is
//! `http://127.0.0.1:PORT/SECRET/SAMPLE/PROVIDER` (and `/v1` for an OpenAI-compatible provider, whose
//! clients append `/chat/completions`); a request's path is split back into these parts, its upstream
//! URL built from the endpoint's configured base URL, and a refusal worded in the provider's error shape.

use serde_json::{Value, json};

use crate::config::WireFormat;

/// A request's path, split: the sample's token, the provider's name, and the provider's own path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    /// The sample's part of the URL.
    pub sample: &'a str,
    /// The endpoint's name (`openai`, `anthropic`, `google`, a `[providers.NAME]`).
    pub provider: &'a str,
    /// The provider's path, from its first `/` (`/v1/chat/completions`).
    pub rest: &'a str,
}

/// Why a path is refused before anything else is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The path does not start with the run's secret.
    NoSecret,
    /// The secret, but no sample and provider after it.
    Incomplete,
}

/// `path` split into its parts, when it starts with `secret`.
pub fn split<'a>(path: &'a str, secret: &str) -> Result<Target<'a>, Refused> {
    let rest = path
        .strip_prefix('/')
        .and_then(|p| p.strip_prefix(secret))
        .and_then(|p| p.strip_prefix('/'))
        .ok_or(Refused::NoSecret)?;
    let (sample, rest) = rest.split_once('/').ok_or(Refused::Incomplete)?;
    let (provider, rest) = match rest.split_once('/') {
        Some((provider, _)) => (provider, &rest[provider.len()..]),
        None => (rest, ""),
    };
    if sample.is_empty() || provider.is_empty() || rest.is_empty() {
        return Err(Refused::Incomplete);
    }
    Ok(Target {
        sample,
        provider,
        rest,
    })
}

/// The base URL a client of `wire` is given for `provider` in `sample`: OpenAI-compatible clients
/// expect one ending in `/v1`, Anthropic and Gemini clients the host's root.
pub fn base_url(
    origin: &str,
    secret: &str,
    sample: &str,
    provider: &str,
    wire: WireFormat,
) -> String {
    let base = format!("{origin}/{secret}/{sample}/{provider}");
    match wire {
        WireFormat::OpenAi => format!("{base}/v1"),
        WireFormat::Anthropic | WireFormat::Google => base,
    }
}

/// Where a request to `rest` goes, on the endpoint configured at `base` (with the query `query`). An
/// OpenAI-compatible base URL holds its version (`.../v1`), so the client's `/v1` is dropped; an
/// Anthropic or Gemini base URL may hold it (`.../v1beta`) or not.
pub fn upstream_url(
    base: &str,
    wire: WireFormat,
    rest: &str,
    query: &[(String, String)],
) -> String {
    let base = base.trim().trim_end_matches('/');
    let (version, after) = match rest[1..].split_once('/') {
        Some((version, _)) => (version, &rest[1 + version.len()..]),
        None => ("", rest),
    };
    let drop_version = match wire {
        WireFormat::OpenAi => true,
        WireFormat::Anthropic | WireFormat::Google => {
            !version.is_empty() && base.ends_with(&format!("/{version}"))
        }
    };
    let mut url = format!("{base}{}", if drop_version { after } else { rest });
    for (i, (name, value)) in query.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        url.push_str(&encoded(name));
        url.push('=');
        url.push_str(&encoded(value));
    }
    url
}

/// A query's pairs, decoded; `+` is a space.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decoded(name), decoded(value))
        })
        .collect()
}

fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = [bytes[i + 1], bytes[i + 2]];
                let hex = std::str::from_utf8(&hex).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A refusal's body in `wire`'s error shape (OpenAI's when the provider is not known yet), so that
/// the client reports the message as the provider's own error.
pub fn error_body(wire: Option<WireFormat>, status: u16, code: &str, message: &str) -> Value {
    match wire {
        Some(WireFormat::Anthropic) => json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
        }),
        Some(WireFormat::Google) => json!({
            "error": {"code": status, "message": message, "status": "FAILED_PRECONDITION"},
        }),
        Some(WireFormat::OpenAi) | None => json!({
            "error": {"message": message, "type": "invalid_request_error", "param": null, "code": code},
        }),
    }
}

/// `n` random bytes in hex.
pub(crate) fn random_hex(n: usize) -> String {
    (0..n)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_splits_only_under_the_secret() {
        assert_eq!(
            split("/s3cret/abc/openai/v1/chat/completions", "s3cret"),
            Ok(Target {
                sample: "abc",
                provider: "openai",
                rest: "/v1/chat/completions"
            })
        );
        assert_eq!(
            split(
                "/s3cret/abc/google/v1beta/models/m:generateContent",
                "s3cret"
            )
            .map(|t| t.rest),
            Ok("/v1beta/models/m:generateContent")
        );
        assert_eq!(
            split("/v1/chat/completions", "s3cret"),
            Err(Refused::NoSecret)
        );
        assert_eq!(
            split("/s3cretX/abc/openai/v1/x", "s3cret"),
            Err(Refused::NoSecret)
        );
        assert_eq!(
            split("/wrong/abc/openai/v1/x", "s3cret"),
            Err(Refused::NoSecret)
        );
        assert_eq!(
            split("/s3cret/abc/openai", "s3cret"),
            Err(Refused::Incomplete)
        );
        assert_eq!(split("/s3cret/abc", "s3cret"), Err(Refused::Incomplete));
    }

    #[test]
    fn base_urls_have_the_shape_each_client_expects() {
        let o = "http://127.0.0.1:9";
        assert_eq!(
            base_url(o, "s", "t", "openai", WireFormat::OpenAi),
            "http://127.0.0.1:9/s/t/openai/v1"
        );
        assert_eq!(
            base_url(o, "s", "t", "anthropic", WireFormat::Anthropic),
            "http://127.0.0.1:9/s/t/anthropic"
        );
    }

    #[test]
    fn upstream_urls_keep_one_version_segment() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            upstream_url(
                "https://api.openai.com/v1",
                WireFormat::OpenAi,
                "/v1/chat/completions",
                &[]
            ),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            upstream_url(
                "http://127.0.0.1:8080/api/",
                WireFormat::OpenAi,
                "/v1/embeddings",
                &[]
            ),
            "http://127.0.0.1:8080/api/embeddings"
        );
        assert_eq!(
            upstream_url(
                "https://api.anthropic.com",
                WireFormat::Anthropic,
                "/v1/messages",
                &[]
            ),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            upstream_url("http://h/v1", WireFormat::Anthropic, "/v1/messages", &[]),
            "http://h/v1/messages"
        );
        let rest = "/v1beta/models/m:streamGenerateContent";
        assert_eq!(
            upstream_url(
                "https://g.example",
                WireFormat::Google,
                rest,
                &q(&[("alt", "sse")])
            ),
            "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            upstream_url(
                "http://h/v1beta",
                WireFormat::Google,
                rest,
                &q(&[("a b", "c&d")])
            ),
            "http://h/v1beta/models/m:streamGenerateContent?a%20b=c%26d"
        );
    }

    #[test]
    fn queries_decode() {
        assert_eq!(
            query_pairs("alt=sse&key=a%2Bb+c&flag"),
            vec![
                ("alt".to_string(), "sse".to_string()),
                ("key".into(), "a+b c".into()),
                ("flag".into(), String::new())
            ]
        );
        assert_eq!(
            query_pairs("x=%zz%4"),
            vec![("x".to_string(), "%zz%4".to_string())]
        );
    }

    #[test]
    fn refusals_take_each_provider_s_error_shape() {
        let anthropic = error_body(Some(WireFormat::Anthropic), 400, "c", "no recording");
        assert_eq!(anthropic["error"]["message"], "no recording");
        assert_eq!(anthropic["type"], "error");
        let gemini = error_body(Some(WireFormat::Google), 400, "c", "m");
        assert_eq!(gemini["error"]["code"], 400);
        let openai = error_body(None, 404, "unsupported_path", "m");
        assert_eq!(openai["error"]["code"], "unsupported_path");
    }
}
