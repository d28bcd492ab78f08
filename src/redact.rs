//! Secrets never leave the process: every text that is written (cassettes, reports) or shown (errors,
//! failure messages) passes through [`redact`] first.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock, RwLock};

/// Values shorter than this are not treated as secrets: redacting `1` or `true` would mangle text.
pub(crate) const MIN_SECRET_LEN: usize = 8;

/// What replaces a secret that has no variable name to show.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) const REDACTED: &str = "[REDACTED]";

fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
}

/// Whether a variable, a command-line flag (`--api-key`) or a header (`Authorization`) names a secret:
/// the variables' rule, and the words a password or a credential goes by.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn names_a_secret(name: &str) -> bool {
    let upper = name.trim().trim_start_matches('-').to_ascii_uppercase();
    is_secret_name(&upper)
        || [
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "CREDENTIALS",
            "AUTH",
            "AUTHORIZATION",
            "COOKIE",
        ]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
}

/// The secret variables of this process: the names declared with [`protect_vars`], and the
/// `(variable name, value)` pairs found, longest value first so that a secret that contains another is
/// replaced whole.
#[derive(Default)]
struct Secrets {
    declared: Vec<String>,
    /// Secrets that are not variables: the credentials of the base URLs ([`protect_userinfo`]).
    given: Vec<(String, String)>,
    /// The crate's `.env` variables ([`protect_dotenv`]): kept beside the environment, not in it.
    dotenv: Vec<(String, String)>,
    found: Vec<(String, String)>,
}

impl Secrets {
    fn refresh(&mut self) {
        let vars = std::env::vars().chain(self.dotenv.iter().cloned());
        let mut found = collect(vars, &self.declared);
        found.extend(self.given.iter().cloned());
        found.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        found.dedup();
        self.found = found;
    }
}

fn secrets() -> &'static RwLock<Secrets> {
    static SECRETS: OnceLock<RwLock<Secrets>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        RwLock::new(Secrets {
            found: collect(std::env::vars(), &[]),
            ..Secrets::default()
        })
    })
}

/// Treats the values of the variables `names` as secrets too, whatever their names: the engine
/// declares every endpoint's `api_key_env` (a key may live in `OLLAMA_PASS` or `MY_CREDENTIAL`).
pub fn protect_vars<'a>(names: impl IntoIterator<Item = &'a str>) {
    let mut secrets = secrets().write().unwrap_or_else(|e| e.into_inner());
    let before = secrets.declared.len();
    for name in names {
        if !secrets.declared.iter().any(|d| d == name) {
            secrets.declared.push(name.to_string());
        }
    }
    if secrets.declared.len() > before {
        secrets.refresh();
    }
}

/// Treats the `.env` file's variables as the environment's: a value whose name says it is a secret,
/// or that [`protect_vars`] declares, is redacted.
pub fn protect_dotenv(vars: &[(String, String)]) {
    let mut secrets = secrets().write().unwrap_or_else(|e| e.into_inner());
    let before = secrets.dotenv.len();
    for pair in vars {
        if !secrets.dotenv.contains(pair) {
            secrets.dotenv.push(pair.clone());
        }
    }
    if secrets.dotenv.len() > before {
        secrets.refresh();
    }
}

/// The name credentials of a base URL are redacted under: `[REDACTED:URL_USERINFO]`.
const USERINFO: &str = "URL_USERINFO";

/// Treats the credentials in `url` (`scheme://user:password@host`) as secrets wherever they appear,
/// not only inside a URL: the user and the password as written and decoded, and the HTTP Basic
/// credential the client sends for them. A server may send any of these back in a body.
pub fn protect_userinfo(url: &str) {
    let values = userinfo_values(url);
    if values.is_empty() {
        return;
    }
    let mut secrets = secrets().write().unwrap_or_else(|e| e.into_inner());
    let before = secrets.given.len();
    for value in values {
        let pair = (USERINFO.to_string(), value);
        if !secrets.given.contains(&pair) {
            secrets.given.push(pair);
        }
    }
    if secrets.given.len() > before {
        secrets.refresh();
    }
}

/// Treats a credential an application's client sent through the recording endpoint, or a suite's MCP
/// server header or variable, as a secret (redacted as `[REDACTED:name]`): a provider or a server may
/// send it back.
#[cfg(any(feature = "endpoint", feature = "mcp"))]
pub(crate) fn protect_value(name: &str, value: &str) {
    let value = credential_of(value);
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let pair = (name.to_string(), value.to_string());
    if secrets()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .given
        .contains(&pair)
    {
        return;
    }
    let mut secrets = secrets().write().unwrap_or_else(|e| e.into_inner());
    if !secrets.given.contains(&pair) {
        secrets.given.push(pair);
        secrets.refresh();
    }
}

/// The credential a key header's value carries: the value, trimmed, without its `Bearer` scheme,
/// which HTTP matches in any case (`bearer sk-...` is a key too; RFC 9110, 11.1). Empty when the
/// header carries no credential (`Authorization: Bearer `, as a client without a key sends).
#[cfg(any(feature = "endpoint", feature = "mcp"))]
pub(crate) fn credential_of(value: &str) -> &str {
    let value = value.trim();
    match value.get(..6) {
        Some(scheme)
            if scheme.eq_ignore_ascii_case("bearer")
                && value[6..].chars().next().is_none_or(char::is_whitespace) =>
        {
            value[6..].trim()
        }
        _ => value,
    }
}

/// The secret forms of `url`'s userinfo (values shorter than [`MIN_SECRET_LEN`] left out).
fn userinfo_values(url: &str) -> Vec<String> {
    static AUTHORITY: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^\s*[A-Za-z][A-Za-z0-9+.\-]*://([^/?#@\s]+)@")
            .expect("the pattern compiles")
    });
    let Some(userinfo) = AUTHORITY.captures(url).and_then(|c| c.get(1)) else {
        return Vec::new();
    };
    let (user, password) = userinfo
        .as_str()
        .split_once(':')
        .unwrap_or((userinfo.as_str(), ""));
    let (user_text, password_text) = (percent_decoded(user), percent_decoded(password));
    // As the HTTP client sends them: `Authorization: Basic base64(user:password)`.
    let basic = base64(format!("{user_text}:{password_text}").as_bytes());
    let mut values = vec![
        user.to_string(),
        password.to_string(),
        user_text,
        password_text,
        basic,
    ];
    values.retain(|v| v.len() >= MIN_SECRET_LEN);
    values.sort();
    values.dedup();
    values
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648), for the Basic credential.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn collect(
    vars: impl Iterator<Item = (String, String)>,
    declared: &[String],
) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = vars
        .filter(|(name, value)| {
            (is_secret_name(name) || declared.contains(name))
                && value.trim().len() >= MIN_SECRET_LEN
        })
        .map(|(name, value)| (name, value.trim().to_string()))
        .collect();
    found.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    found
}

/// The credentials of every URL in `text` (`scheme://user:password@host`) replaced: a base URL may carry
/// them, and it is shown in errors and written in reports.
fn without_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    static USERINFO: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#@\s]+@")
            .expect("the pattern compiles")
    });
    USERINFO.replace_all(text, "${1}[REDACTED]@")
}

/// `url` as it may be shown: no credentials (`user:password@` becomes `[REDACTED]@`), and no value of
/// its query or fragment (`?token=abc&x` becomes `?token=[REDACTED]&[REDACTED]`). A query value is a
/// credential or a session id more often than not, and scheme, host and path say which server it is.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn url_for_display(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = match authority.rfind('@') {
        Some(at) => format!("{REDACTED}@{}", &authority[at + 1..]),
        None => authority.to_string(),
    };
    let (tail, fragment) = match tail.split_once('#') {
        Some((tail, fragment)) => (tail, Some(fragment)),
        None => (tail, None),
    };
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    let mut shown = format!("{scheme}://{host}{path}");
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, "")) => format!("{name}="),
                Some((name, _)) => format!("{name}={REDACTED}"),
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_string(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    if fragment.is_some_and(|f| !f.is_empty()) {
        shown.push('#');
        shown.push_str(REDACTED);
    }
    shown
}

/// A URL ends at white space, a quote, an angle bracket, a brace or a parenthesis: error texts put it
/// in `(...)`. Square brackets stay: an IPv6 host is one, and so is an earlier `[REDACTED]`.
static URL: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'`<>(){}]+"#)
        .expect("the pattern compiles")
});

/// Every URL in `text` as [`url_for_display`] shows it: for messages that may quote a server's URL
/// (a transport error names the URL it could not reach).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn urls_for_display(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    URL.replace_all(text, |c: &regex::Captures<'_>| url_for_display(&c[0]))
}

/// The URLs in `text`.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn urls_in(text: &str) -> impl Iterator<Item = &str> {
    URL.find_iter(text).map(|m| m.as_str())
}

fn redact_with<'a>(text: &'a str, secrets: &[(String, String)]) -> Cow<'a, str> {
    let mut out = without_userinfo(text);
    for (name, value) in secrets {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), &format!("[REDACTED:{name}]")));
        }
    }
    out
}

/// Replaces the value of every environment variable whose name ends in `KEY`, `TOKEN` or `SECRET`, or
/// that [`protect_vars`] declared (values of 8 characters or more), with `[REDACTED:NAME]`, the
/// credentials of the base URLs wherever they appear ([`protect_userinfo`]) with
/// `[REDACTED:URL_USERINFO]`, and the credentials of every URL (`scheme://user:password@host`) with
/// `[REDACTED]`.
///
/// The list is read once per process, after `.env` is loaded by the harness, and again when variables
/// are declared.
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = secrets().read().unwrap_or_else(|e| e.into_inner());
    redact_with(text, &secrets.found)
}

/// `text` safe to print on a terminal: control characters other than newline and tab (an escape
/// sequence in a model's answer or a provider's error could move the cursor, retitle the window or hide
/// lines) are shown escaped, as `\u{1b}`.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if unsafe_char(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(
            for_terminal("judge: \u{1b}[2Jgone\u{7}\r ok\n\tnext"),
            "judge: \\u{1b}[2Jgone\\u{7}\\u{d} ok\n\tnext"
        );
        assert!(matches!(for_terminal("plain\ntext"), Cow::Borrowed(_)));
    }

    #[test]
    fn redacts_values_of_key_token_and_secret_variables() {
        let secrets = collect(
            [
                ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
                ("GITHUB_TOKEN", "ghp_abcdefghij"),
                ("my_secret", "hunter2hunter2"),
                ("SHORT_KEY", "abc"),
                ("PATH", "/usr/bin:/bin"),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string())),
            &[],
        );
        let text =
            "x-api-key: sk-ant-0123456789 token=ghp_abcdefghij s=hunter2hunter2 abc /usr/bin:/bin";
        let out = redact_with(text, &secrets);
        assert_eq!(
            out,
            "x-api-key: [REDACTED:ANTHROPIC_API_KEY] token=[REDACTED:GITHUB_TOKEN] \
             s=[REDACTED:my_secret] abc /usr/bin:/bin"
        );
    }

    #[test]
    fn credentials_in_urls_are_removed() {
        assert_eq!(
            redact_with(
                "cannot connect to http://bob:s3cretpw@127.0.0.1:9/v1/chat/completions (and https://t0k3n@h/x)",
                &[]
            ),
            "cannot connect to http://[REDACTED]@127.0.0.1:9/v1/chat/completions (and https://[REDACTED]@h/x)"
        );
        for plain in ["mail bob@example.com", "http://h/a@b", "no url here"] {
            assert_eq!(redact_with(plain, &[]), plain);
        }
    }

    #[test]
    fn urls_are_shown_without_credentials_query_values_or_fragment() {
        for (url, shown) in [
            (
                "http://mcpuser:hunter2pw@127.0.0.1:9/mcp?token=tok-123&team=blue&flag&empty=",
                "http://[REDACTED]@127.0.0.1:9/mcp?token=[REDACTED]&team=[REDACTED]&[REDACTED]&empty=",
            ),
            (
                "https://h.example/a/b#access_token=x",
                "https://h.example/a/b#[REDACTED]",
            ),
            ("https://h.example?k=v", "https://h.example?k=[REDACTED]"),
            ("https://t0k3n@h", "https://[REDACTED]@h"),
            ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
            (
                "http://[::1]:8000/mcp?key=k",
                "http://[::1]:8000/mcp?key=[REDACTED]",
            ),
            ("not a url", "not a url"),
        ] {
            assert_eq!(url_for_display(url), shown);
        }
        assert_eq!(
            urls_for_display(
                "error sending request for url (http://u:p@h/mcp?token=abc): refused; see \"https://x/?a=b\""
            ),
            "error sending request for url (http://[REDACTED]@h/mcp?token=[REDACTED]): refused; \
             see \"https://x/?a=[REDACTED]\""
        );
        // Shown twice, the same.
        let once = urls_for_display("at http://u:p@[::1]/m?t=v#f").into_owned();
        assert_eq!(once, "at http://[REDACTED]@[::1]/m?t=[REDACTED]#[REDACTED]");
        assert_eq!(urls_for_display(&once), once);
        assert!(matches!(urls_for_display("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn names_of_secrets_include_passwords_and_credentials() {
        for name in [
            "--api-key",
            "--token",
            "ANTHROPIC_API_KEY",
            "--password",
            "db_passwd",
            "Authorization",
            "--client-secret",
            "GOOGLE_CREDENTIALS",
        ] {
            assert!(names_a_secret(name), "{name}");
        }
        for name in ["--port", "--key-file", "PATH", "--verbose", "x-demo"] {
            assert!(!names_a_secret(name), "{name}");
        }
    }

    #[test]
    fn the_credentials_of_a_base_url_are_secrets_bare_decoded_and_as_basic_auth() {
        assert_eq!(
            base64(b"Aladdin:open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b""), "");
        let values = userinfo_values("http://pt-hostile-user:p%40ss-w0rd-long@127.0.0.1:9/v1");
        assert_eq!(
            values,
            [
                "cHQtaG9zdGlsZS11c2VyOnBAc3MtdzByZC1sb25n",
                "p%40ss-w0rd-long",
                "p@ss-w0rd-long",
                "pt-hostile-user",
            ]
        );
        // Short parts are left to the URL pattern; no userinfo, no secret.
        assert_eq!(userinfo_values("http://bob:pw@h/v1"), ["Ym9iOnB3"]);
        assert!(userinfo_values("http://127.0.0.1:9/v1").is_empty());
        assert!(userinfo_values("mail bob@example.com").is_empty());
    }

    #[test]
    fn longer_secret_wins_over_a_contained_one() {
        let secrets = collect(
            [("A_KEY", "abcdefgh"), ("B_KEY", "abcdefgh-longer")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string())),
            &[],
        );
        assert_eq!(
            redact_with("abcdefgh-longer abcdefgh", &secrets),
            "[REDACTED:B_KEY] [REDACTED:A_KEY]"
        );
    }

    /// The endpoint's empty-key rule: a client without a key sends its scheme alone, in either case.
    #[cfg(feature = "endpoint")]
    #[test]
    fn a_bearer_scheme_in_any_case_carries_the_credential_after_it() {
        for (value, credential) in [
            ("Bearer sk-upper-0123", "sk-upper-0123"),
            ("bearer sk-lower-0123", "sk-lower-0123"),
            ("  BEARER\tsk-shout-0123 ", "sk-shout-0123"),
            ("Bearer ", ""),
            ("bearer ", ""),
            ("bearer", ""),
            ("sk-bare-0123", "sk-bare-0123"),
            ("bearerish-token", "bearerish-token"),
        ] {
            assert_eq!(credential_of(value), credential, "{value:?}");
        }
    }

    /// What a provider echoes back is the key alone: it is redacted, not only `bearer KEY` whole.
    #[cfg(feature = "endpoint")]
    #[test]
    fn a_key_sent_with_a_lower_case_bearer_scheme_is_redacted() {
        protect_value("authorization", "bearer sk-lower-case-scheme-0123456789");
        assert_eq!(
            redact("invalid key sk-lower-case-scheme-0123456789"),
            "invalid key [REDACTED:authorization]"
        );
    }

    #[test]
    fn declared_variables_are_secrets_whatever_their_names() {
        let vars = || {
            [
                ("OLLAMA_PASS", "correct-horse-battery"),
                ("PLAIN", "not a secret value"),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
        };
        let text = "sent correct-horse-battery; not a secret value";
        assert_eq!(redact_with(text, &collect(vars(), &[])), text);
        assert_eq!(
            redact_with(text, &collect(vars(), &["OLLAMA_PASS".to_string()])),
            "sent [REDACTED:OLLAMA_PASS]; not a secret value"
        );
    }
}
