//! How a server is named in messages and tool results, and its own secrets kept out of every text it
//! sends back. A label reaches the model (a failed `tools/call` answers with it), so it reaches the
//! next request's cassette entry and the reports: it shows the URL without credentials or query values
//! and the command without the values of secret-looking arguments, and never a header or env value.

use super::{McpServer, Stdio, Transport};
use crate::redact::{self, MIN_SECRET_LEN, REDACTED, names_a_secret};

/// The server as messages name it: ``MCP server `cmd args` `` or `MCP server at URL`.
pub(super) fn label(server: &McpServer) -> String {
    let label = match &server.transport {
        Transport::Stdio(Stdio { command, args, .. }) => {
            let mut label = format!("MCP server `{}", redact::urls_for_display(command));
            for arg in shown_args(args).0 {
                label.push(' ');
                label.push_str(&arg);
            }
            label.push('`');
            label
        }
        Transport::Http { url, .. } => format!("MCP server at {}", redact::url_for_display(url)),
    };
    ServerSecrets::of(server).message(&label)
}

/// `args` as they may be shown, and the values hidden: the value after a secret-looking flag
/// (`--api-key VALUE`), of a secret-looking name (`--token=VALUE`, `API_KEY=VALUE`,
/// `Authorization: VALUE`), and the credentials and query values of URLs.
pub(super) fn shown_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut shown = Vec::new();
    let mut hidden = Vec::new();
    let mut hide_next = false;
    for arg in args {
        if std::mem::take(&mut hide_next) {
            hidden.push(arg.clone());
            shown.push(REDACTED.to_string());
            continue;
        }
        match masked(arg) {
            Some((masked, value)) => {
                hidden.push(value);
                shown.push(masked);
            }
            None => {
                hide_next = arg.starts_with('-') && !arg.contains('=') && names_a_secret(arg);
                hidden.extend(redact::urls_in(arg).flat_map(url_secrets));
                shown.push(redact::urls_for_display(arg).into_owned());
            }
        }
    }
    (shown, hidden)
}

/// `arg` with the value of a secret-looking `name=value` or `name: value` in it hidden (also inside
/// another: `--header=Authorization: Bearer x`), and that value; `None` when it names no secret.
fn masked(arg: &str) -> Option<(String, String)> {
    let at = arg.find(['=', ':'])?;
    let (name, rest) = arg.split_at(at);
    if rest.starts_with("://") || name.is_empty() {
        return None; // a URL's scheme
    }
    let (sep, value) = rest.split_at(1);
    if names_a_secret(name) && !value.trim().is_empty() {
        return Some((format!("{name}{sep}{REDACTED}"), value.trim().to_string()));
    }
    let (inner, hidden) = masked(value)?;
    Some((format!("{name}{sep}{inner}"), hidden))
}

/// The secret values of one server, found in its configuration: header values, the credentials and
/// query values of its URL, the values of its secret-looking variables (set or inherited) and
/// arguments.
pub(super) struct ServerSecrets {
    /// The URL as written, and as shown.
    url: Option<(String, String)>,
    /// Longest first, so that a value containing another goes whole.
    values: Vec<String>,
}

impl ServerSecrets {
    pub(super) fn of(server: &McpServer) -> Self {
        let mut values = Vec::new();
        let mut url = None;
        match &server.transport {
            Transport::Stdio(Stdio {
                args, env, inherit, ..
            }) => {
                values.extend(shown_args(args).1);
                values.extend(
                    env.iter()
                        .filter(|(name, _)| names_a_secret(name))
                        .map(|(_, value)| value.clone()),
                );
                values.extend(
                    inherit
                        .iter()
                        .filter(|name| names_a_secret(name))
                        .filter_map(|name| crate::config::var_os(name)?.into_string().ok()),
                );
            }
            Transport::Http { url: raw, headers } => {
                url = Some((raw.clone(), redact::url_for_display(raw)));
                values.extend(url_secrets(raw));
                values.extend(headers.iter().map(|(_, value)| value.clone()));
            }
        }
        // A header's `Bearer TOKEN`: the token alone too.
        let words: Vec<String> = values
            .iter()
            .filter_map(|v| v.trim().rsplit_once(' ').map(|(_, w)| w.to_string()))
            .collect();
        values.extend(words);
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Self { url, values }
    }

    /// A tool's output as the model gets it: the server's URL as shown and its secret values
    /// replaced, the rest as it came.
    pub(super) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        if let Some((raw, shown)) = &self.url {
            out = out.replace(raw.as_str(), shown);
        }
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }

    /// A message about the server (an error, the end of its stderr): scrubbed, every URL in it shown
    /// without credentials or query values, and the run's own secrets redacted.
    pub(super) fn message(&self, text: &str) -> String {
        let scrubbed = self.scrub(text);
        redact::redact(&redact::urls_for_display(&scrubbed)).into_owned()
    }
}

/// The credentials of `url` (whole, user and password) and its query values.
fn url_secrets(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return found;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some((userinfo, _)) = rest[..end].rsplit_once('@') {
        found.push(userinfo.to_string());
        found.extend(userinfo.split(':').map(str::to_string));
    }
    if let Some((_, query)) = rest[end..].split_once('?') {
        let query = query.split('#').next().unwrap_or_default();
        found.extend(
            query
                .split('&')
                .map(|pair| pair.split_once('=').map_or(pair, |(_, v)| v).to_string()),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn secret_looking_arguments_are_hidden_and_the_rest_shown() {
        let args = strings(&[
            "--stdio",
            "--api-key",
            "sk-live-0123456789",
            "--token=ghp_abcdefghijkl",
            "GITHUB_TOKEN=ghp_mnopqrstuvwx",
            "--header",
            "Authorization: Bearer eyJhbGciOi.abc",
            "--header=x-api-key:k-0123456789",
            "--url=http://bob:s3cretpw@127.0.0.1:9/mcp?sig=abcdef123456",
            "--port",
            "8080",
            "C:\\servers\\mcp",
        ]);
        let (shown, hidden) = shown_args(&args);
        assert_eq!(
            shown,
            strings(&[
                "--stdio",
                "--api-key",
                "[REDACTED]",
                "--token=[REDACTED]",
                "GITHUB_TOKEN=[REDACTED]",
                "--header",
                "Authorization:[REDACTED]",
                "--header=x-api-key:[REDACTED]",
                "--url=http://[REDACTED]@127.0.0.1:9/mcp?sig=[REDACTED]",
                "--port",
                "8080",
                "C:\\servers\\mcp",
            ])
        );
        assert_eq!(
            hidden,
            strings(&[
                "sk-live-0123456789",
                "ghp_abcdefghijkl",
                "ghp_mnopqrstuvwx",
                "Bearer eyJhbGciOi.abc",
                "k-0123456789",
                "bob:s3cretpw",
                "bob",
                "s3cretpw",
                "abcdef123456",
            ])
        );
    }

    #[test]
    fn labels_show_no_secret_of_the_server() {
        let http = McpServer::http("http://mcpuser:hunter2pw@127.0.0.1:9/mcp?token=tok-s3cret-123")
            .header("authorization", "Bearer header-secret-value");
        assert_eq!(
            label(&http),
            "MCP server at http://[REDACTED]@127.0.0.1:9/mcp?token=[REDACTED]"
        );
        let secrets = ServerSecrets::of(&http);
        let echoed = "called http://mcpuser:hunter2pw@127.0.0.1:9/mcp?token=tok-s3cret-123 with \
                      Bearer header-secret-value; token tok-s3cret-123, user mcpuser:hunter2pw";
        let scrubbed = secrets.scrub(echoed);
        for secret in ["hunter2pw", "tok-s3cret-123", "header-secret-value"] {
            assert!(!scrubbed.contains(secret), "{scrubbed}");
        }
        assert!(
            scrubbed.starts_with("called http://[REDACTED]@127.0.0.1:9/mcp?token=[REDACTED] with"),
            "{scrubbed}"
        );
        // Messages also lose the query values of URLs the configuration does not know.
        assert_eq!(
            secrets.message("redirected to https://other/?code=abcdefgh"),
            "redirected to https://other/?code=[REDACTED]"
        );

        let stdio = McpServer::stdio("my-server", ["--stdio", "--api-key", "sk-live-0123456789"])
            .env("SERVICE_TOKEN", "env-secret-value")
            .env("LOG_LEVEL", "debug-verbose");
        assert_eq!(
            label(&stdio),
            "MCP server `my-server --stdio --api-key [REDACTED]`"
        );
        assert_eq!(stdio.to_string(), label(&stdio));
        let debug = format!("{stdio:?}");
        assert!(
            !debug.contains("sk-live") && !debug.contains("env-secret"),
            "{debug}"
        );
        let scrubbed = ServerSecrets::of(&stdio)
            .scrub("key sk-live-0123456789, env-secret-value, debug-verbose");
        assert_eq!(scrubbed, "key [REDACTED], [REDACTED], debug-verbose");
    }
}
