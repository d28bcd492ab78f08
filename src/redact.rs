//! Secrets never leave the process: every text that is written (cassettes, reports) or shown (errors,
//! failure messages) passes through [`redact`] first.

use std::borrow::Cow;
use std::sync::OnceLock;

/// Values shorter than this are not treated as secrets: redacting `1` or `true` would mangle text.
const MIN_SECRET_LEN: usize = 8;

fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
}

/// The secrets of this process: `(variable name, value)`, longest value first so that a secret that
/// contains another is replaced whole.
fn secrets() -> &'static [(String, String)] {
    static SECRETS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SECRETS.get_or_init(|| collect(std::env::vars()))
}

fn collect(vars: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = vars
        .filter(|(name, value)| is_secret_name(name) && value.trim().len() >= MIN_SECRET_LEN)
        .map(|(name, value)| (name, value.trim().to_string()))
        .collect();
    found.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    found
}

fn redact_with<'a>(text: &'a str, secrets: &[(String, String)]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for (name, value) in secrets {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), &format!("[REDACTED:{name}]")));
        }
    }
    out
}

/// Replaces the value of every environment variable whose name ends in `KEY`, `TOKEN` or `SECRET`
/// (values of 8 characters or more) with `[REDACTED:NAME]`.
///
/// The list is read once per process, after `.env` is loaded by the harness.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_with(text, secrets())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn longer_secret_wins_over_a_contained_one() {
        let secrets = collect(
            [("A_KEY", "abcdefgh"), ("B_KEY", "abcdefgh-longer")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string())),
        );
        assert_eq!(
            redact_with("abcdefgh-longer abcdefgh", &secrets),
            "[REDACTED:B_KEY] [REDACTED:A_KEY]"
        );
    }
}
