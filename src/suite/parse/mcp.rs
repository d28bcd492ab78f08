//! `mcp = [...]`: the MCP servers of a suite's agent loop, read into the [`McpServer`]s that
//! `Toolbox::mcp` takes, so a suite and a Rust test share one client and one environment rule. The
//! values of `env` and `headers` become secrets of the run as they are read: no writer shows them.

use prompt_tester_keys::Key;
use toml::de::{DeTable, DeValue};

use super::Settings;
use crate::mcp::McpServer;
use crate::spanned::{Node, Reader};

/// How a server is written, for the fixes.
#[cfg(feature = "mcp")]
const EXAMPLE: &str = "write `mcp = [{ command = \"npx\", args = [\"-y\", \"@modelcontextprotocol/server-everything\"] }]` \
                       (a stdio server) or `mcp = [{ url = \"http://127.0.0.1:8000/mcp\" }]` (streamable HTTP)";

/// Without the `mcp` feature there is no MCP client: the key is an error, not a server skipped.
#[cfg(not(feature = "mcp"))]
pub(super) fn servers(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<McpServer>> {
    r.problem(
        node.span(),
        key,
        "MCP servers need the `mcp` feature of prompt-tester",
        "turn the feature on (it is a default one): `prompt-tester = { version = \"0.1\", features = [\"mcp\"] }` \
         in Cargo.toml, or remove `mcp`",
    );
    None
}

/// Reads `mcp = [{ command = "...", args = [...], env = {...}, inherit_env = [...] }, { url = "...",
/// headers = {...} }]`; `None` when any server has a problem (each is noted).
#[cfg(feature = "mcp")]
pub(super) fn servers(r: &mut Reader<'_>, node: &Node<'_>, key: &str) -> Option<Vec<McpServer>> {
    let items = r.array(node, key, "an array of server tables", EXAMPLE)?;
    let problems_before = r.problems.len();
    let servers: Vec<McpServer> = (items.iter().enumerate())
        .filter_map(|(i, item)| server(r, item, &format!("{key}[{i}]")))
        .collect();
    (r.problems.len() == problems_before).then_some(servers)
}

/// The keys of a stdio server, and of a streamable HTTP one.
#[cfg(feature = "mcp")]
const STDIO_KEYS: [&str; 4] = ["command", "args", "env", "inherit_env"];
#[cfg(feature = "mcp")]
const HTTP_KEYS: [&str; 2] = ["url", "headers"];

#[cfg(feature = "mcp")]
fn server(r: &mut Reader<'_>, item: &Node<'_>, path: &str) -> Option<McpServer> {
    use crate::spanned::{last_key, nonblank};

    let table = r.table(item, path, "a server table", EXAMPLE)?;
    let valid: Vec<&str> = STDIO_KEYS.iter().chain(&HTTP_KEYS).copied().collect();
    r.unknown_keys(table, path, &valid, "in an MCP server");
    let at = |k: &str| format!("{path}.{k}");
    let (command, url) = (table.get("command"), table.get("url"));
    // The keys of the other transport than the one chosen: a stdio server sends no header.
    let (chosen, others, what) = match (command, url) {
        (Some(_), Some(url)) => {
            r.problem(
                url.span(),
                &at("url"),
                "a server has either `command` (started over stdio) or `url` (streamable HTTP), not both",
                "keep one, or write two servers",
            );
            return None;
        }
        (None, None) => {
            r.problem(
                item.span(),
                path,
                "the server has neither `command` nor `url`",
                EXAMPLE,
            );
            return None;
        }
        (Some(_), None) => ("command", &HTTP_KEYS[..], "a server at `url`"),
        (None, Some(_)) => ("url", &STDIO_KEYS[..], "a stdio server (`command`)"),
    };
    for other in others {
        if let Some((k, _)) = table.get_key_value(*other) {
            r.problem(
                k.span(),
                &at(other),
                format!("`{other}` is for {what}, and this server has `{chosen}`"),
                format!("remove `{other}`, or write it in a server of its kind"),
            );
        }
    }
    let text = |r: &mut Reader<'_>, node: &Node<'_>, key: &str, example: &str| {
        let fix = format!("write `{} = {example}`", last_key(key));
        nonblank(r, node, key, example, "it is empty", fix)
    };
    if let Some(node) = command {
        let command = text(r, node, &at("command"), "\"npx\"")?;
        // Each key read on after another's problem, so that one reading shows them all.
        let args = (table.get("args"))
            .and_then(|node| names(r, node, &at("args"), "[\"--stdio\"]", false))
            .unwrap_or_default();
        let inherit = (table.get("inherit_env"))
            .and_then(|node| names(r, node, &at("inherit_env"), "[\"GITHUB_TOKEN\"]", true))
            .unwrap_or_default();
        let mut server = McpServer::stdio(command, args).inherit_env(inherit);
        if let Some(node) = table.get("env") {
            let env = pairs(r, node, &at("env"), "{ LOG_LEVEL = \"debug\" }").unwrap_or_default();
            for (span, name, value) in env {
                if !is_variable_name(&name) {
                    let message = format!("{name:?} is not the name of an environment variable");
                    let key = format!("{path}.env.{name}");
                    r.problem(span, &key, message, "name it without `=`");
                    continue;
                }
                server = server.env(name, value);
            }
        }
        return Some(server);
    }
    let url_node = url.expect("a server without `command` has `url`");
    let url = text(r, url_node, &at("url"), "\"http://127.0.0.1:8000/mcp\"")?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        r.problem(
            url_node.span(),
            &at("url"),
            format!(
                "`{}` is not an http:// or https:// URL",
                crate::redact::url_for_display(&url)
            ),
            "write the server's streamable HTTP endpoint, e.g. `url = \"http://127.0.0.1:8000/mcp\"`",
        );
        return None;
    }
    crate::redact::protect_userinfo(&url);
    let mut server = McpServer::http(url);
    if let Some(node) = table.get("headers") {
        let example = "{ Authorization = \"Bearer ...\" }";
        let headers = pairs(r, node, &at("headers"), example).unwrap_or_default();
        for (span, name, value) in headers {
            let key = format!("{path}.headers.{name}");
            if reqwest::header::HeaderName::try_from(name.as_str()).is_err() {
                let message = format!("`{name}` is not a valid HTTP header name");
                r.problem(span, &key, message, "use letters, digits and `-`");
                continue;
            }
            if reqwest::header::HeaderValue::try_from(value.as_str()).is_err() {
                // The value is a secret: said to be wrong, never shown.
                let message = "its value is not valid in an HTTP header (a line break or a control character)";
                r.problem(span, &key, message, "write the value on one line");
                continue;
            }
            server = server.header(name, value);
        }
    }
    Some(server)
}

/// Reads an array of strings (`args`, or with `variables` the names of `inherit_env`): those that are,
/// the others noted.
#[cfg(feature = "mcp")]
fn names(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    example: &str,
    variables: bool,
) -> Option<Vec<String>> {
    let fix = format!("write `{} = {example}`", crate::spanned::last_key(key));
    let items = r.array(node, key, "an array of strings", fix.as_str())?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.get_ref() {
            DeValue::String(s) if variables && !is_variable_name(s) => r.problem(
                item.span(),
                &format!("{key}[{i}]"),
                format!("{s:?} is not the name of an environment variable"),
                fix.clone(),
            ),
            DeValue::String(s) => out.push(s.to_string()),
            _ => r.mismatch(item, &format!("{key}[{i}]"), "a string", fix.clone()),
        }
    }
    Some(out)
}

/// Whether `name` can name an environment variable: not empty, no `=` and no NUL.
#[cfg(feature = "mcp")]
fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// Reads a table of strings (`env`, `headers`): each name's span, the name and the value, made a
/// secret of the run; a value of another type is noted without being shown, and left out.
#[cfg(feature = "mcp")]
fn pairs(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    example: &str,
) -> Option<Vec<(std::ops::Range<usize>, String, String)>> {
    let fix = format!("write `{} = {example}`", crate::spanned::last_key(key));
    let table = r.table(node, key, "a table of strings", fix.as_str())?;
    let mut out = Vec::new();
    for (name_node, value) in table.iter() {
        let name = name_node.get_ref().to_string();
        match value.get_ref() {
            DeValue::String(v) => {
                crate::redact::protect_value(&name, v);
                out.push((name_node.span(), name, v.to_string()));
            }
            _ => r.mismatch(value, &format!("{key}.{name}"), "a string", fix.clone()),
        }
    }
    Some(out)
}

/// Whether `settings` run an agent loop: they name at least one MCP server.
pub(super) fn has_servers(settings: &Settings) -> bool {
    settings.mcp.as_ref().is_some_and(|s| !s.is_empty())
}

/// Whether `settings` declare tools of their own (`tools = []` declares none).
fn has_tools(settings: &Settings) -> bool {
    settings
        .request
        .tools
        .as_ref()
        .is_some_and(|t| !t.is_empty())
}

/// What `mcp`, `tools` and `max_tool_rounds` must agree on in a case (`table`, at `path`), once its
/// settings (`own`) are over the suite's (`merged`). Each problem is noted at a key the case wrote; one
/// the suite alone causes is the suite's ([`at_the_top`]).
pub(super) fn check_case(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    path: &str,
    own: &Settings,
    merged: &Settings,
) {
    let written = |key: Key| table.get(key.name()).map(|node| (key, node.span()));
    if has_servers(merged) && has_tools(merged) {
        let whose = match (own.mcp.is_some(), own.request.tools.is_some()) {
            (true, true) => "",
            (true, false) => " (`tools` is the suite's)",
            (false, _) => " (`mcp` is the suite's)",
        };
        if let Some((key, span)) = written(Key::Mcp).or_else(|| written(Key::Tools)) {
            let message = format!("`mcp` and `tools` are both set for this case{whose}");
            r.problem(span, &format!("{path}.{key}"), message, BOTH_FIX);
        }
    }
    if merged.max_tool_rounds.is_some()
        && !has_servers(merged)
        && let Some((key, span)) = written(Key::MaxToolRounds)
    {
        r.problem(span, &format!("{path}.{key}"), ROUNDS_ALONE, ROUNDS_FIX);
    }
}

/// What `mcp`, `tools` and `max_tool_rounds` at the top of a suite (`table`) must agree on: its own
/// `mcp` and `tools`, and a `max_tool_rounds` that some case's servers use.
pub(super) fn at_the_top(r: &mut Reader<'_>, table: &DeTable<'_>, top: &Settings) {
    if has_servers(top)
        && has_tools(top)
        && let Some(node) = table.get(Key::Mcp.name())
    {
        let message = "`mcp` and `tools` are both set at the top of the suite";
        r.problem(node.span(), Key::Mcp.name(), message, BOTH_FIX);
    }
    // A case that writes `mcp` may use it (and one whose servers cannot be read says so itself).
    let cases_write_mcp = match table.get(Key::Cases.name()).map(|n| n.get_ref()) {
        Some(DeValue::Array(cases)) => cases.iter().any(|case| {
            matches!(case.get_ref(), DeValue::Table(case) if case.get(Key::Mcp.name()).is_some())
        }),
        _ => false,
    };
    if !has_servers(top)
        && !cases_write_mcp
        && let Some(node) = table.get(Key::MaxToolRounds.name())
    {
        r.problem(
            node.span(),
            Key::MaxToolRounds.name(),
            ROUNDS_ALONE,
            ROUNDS_FIX,
        );
    }
}

const BOTH_FIX: &str =
    "the MCP servers declare the tools: remove `tools` (or write `tools = []` in the case)";
const ROUNDS_ALONE: &str =
    "`max_tool_rounds` limits the agent loop of `mcp` servers, and no server is set here";
const ROUNDS_FIX: &str = "add `mcp = [{ command = \"...\" }]` (at the top, or in the case), or remove \
                          `max_tool_rounds`: without servers one call is made and its tool calls are checked, not run";

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{Suite, parse, report};
    #[cfg(feature = "mcp")]
    use crate::case::Executor;
    use crate::test_support::assert_contains;

    const FILE: &str = "prompt-tests/s.evals.toml";

    fn parsed(text: &str) -> Result<Suite, String> {
        parse("s", FILE, Path::new("/nonexistent"), text).map_err(|p| report(FILE, text, &p))
    }

    fn problems(text: &str) -> String {
        parsed(text).expect_err("the suite has problems")
    }

    /// Without the feature, `mcp` is an error at the key naming the feature.
    #[cfg(not(feature = "mcp"))]
    #[test]
    fn without_the_feature_mcp_is_an_error_naming_it() {
        let report = problems(
            "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nmcp = [{ command = \"server\" }]\n",
        );
        assert_contains(
            &report,
            &[
                ":4:7: `cases[0].mcp`: MCP servers need the `mcp` feature of prompt-tester",
                "fix: turn the feature on (it is a default one): `prompt-tester = { version = \"0.1\", \
                 features = [\"mcp\"] }` in Cargo.toml, or remove `mcp`",
            ],
        );
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn servers_are_read_into_the_toolbox_s_servers_and_layered_like_tools() {
        use crate::mcp::McpServer;

        let suite = parsed(
            r#"
prompt = "Where is order {id}?"
mcp = [{ command = "orders-mcp", args = ["--stdio"], env = { ORDERS_DB = "/tmp/orders" }, inherit_env = ["GITHUB_TOKEN"] }]
max_tool_rounds = 3

[[cases]]
name = "suite_servers"
inputs = { id = "A-1" }

[[cases]]
name = "own_servers"
inputs = { id = "A-2" }
mcp = [{ url = "http://127.0.0.1:8000/mcp", headers = { Authorization = "Bearer tok-0123456789" } }, { command = "b" }]
max_tool_rounds = 0

[[cases]]
name = "none"
inputs = { id = "A-3" }
mcp = []
"#,
        )
        .unwrap();
        let stdio = McpServer::stdio("orders-mcp", ["--stdio"])
            .inherit_env(["GITHUB_TOKEN"])
            .env("ORDERS_DB", "/tmp/orders");
        let http = McpServer::http("http://127.0.0.1:8000/mcp")
            .header("Authorization", "Bearer tok-0123456789");
        let no_args: [&str; 0] = [];
        let settings = |i: usize| &suite.cases[i].settings;
        assert_eq!(settings(0).mcp, Some(vec![stdio]));
        assert_eq!(settings(0).max_tool_rounds, Some(3));
        assert_eq!(
            settings(1).mcp,
            Some(vec![http, McpServer::stdio("b", no_args)])
        );
        assert_eq!(settings(1).max_tool_rounds, Some(0));
        assert_eq!(settings(2).mcp, Some(vec![]));

        // `max_tool_rounds` rounds of tool calls, then the call that must answer.
        let Executor::Agent(toolbox) = crate::suite::executor(settings(0)) else {
            panic!("servers make an agent loop")
        };
        assert_eq!((toolbox.turn_limit(), toolbox.servers.len()), (4, 1));
        let Executor::Agent(toolbox) = crate::suite::executor(settings(1)) else {
            panic!("servers make an agent loop")
        };
        assert_eq!((toolbox.turn_limit(), toolbox.servers.len()), (1, 2));
        assert!(matches!(
            crate::suite::executor(settings(2)),
            Executor::Call
        ));
        // Unset, the agent loop's own default.
        let mut unset = settings(0).clone();
        unset.max_tool_rounds = None;
        let Executor::Agent(toolbox) = crate::suite::executor(&unset) else {
            panic!("servers make an agent loop")
        };
        assert_eq!(toolbox.turn_limit(), crate::tools::DEFAULT_MAX_TURNS);

        // The values of `env` and `headers` are secrets of the run from the moment they are read.
        assert_eq!(
            crate::redact::redact("sent tok-0123456789 to /tmp/orders"),
            "sent [REDACTED:Authorization] to [REDACTED:ORDERS_DB]"
        );
    }

    /// A YAML suite writes the same servers, and its errors are in YAML's words.
    #[cfg(all(feature = "mcp", feature = "yaml"))]
    #[test]
    fn a_yaml_suite_reads_the_same_servers() {
        use crate::mcp::McpServer;

        const YAML: &str = "prompt-tests/s.evals.yaml";
        let text = "prompt: Hi\nmcp:\n  - command: orders-mcp\n    args: [--stdio]\n    inherit_env: [GITHUB_TOKEN]\n\
                    max_tool_rounds: 2\ncases:\n  - name: a\n  - name: b\n    mcp:\n      - url: http://127.0.0.1:9/mcp\n";
        let suite = parse("s", YAML, Path::new("/nonexistent"), text)
            .unwrap_or_else(|p| panic!("{}", report(YAML, text, &p)));
        let stdio = McpServer::stdio("orders-mcp", ["--stdio"]).inherit_env(["GITHUB_TOKEN"]);
        assert_eq!(suite.cases[0].settings.mcp, Some(vec![stdio]));
        assert_eq!(
            suite.cases[1].settings.mcp,
            Some(vec![McpServer::http("http://127.0.0.1:9/mcp")])
        );
        assert_eq!(suite.cases[1].settings.max_tool_rounds, Some(2));
        let text = "prompt: Hi\ntools: [{ name: lookup }]\ncases:\n  - name: a\n    mcp: [{ command: x }]\n";
        let problems = parse("s", YAML, Path::new("/nonexistent"), text).expect_err("both");
        assert_contains(
            &report(YAML, text, &problems),
            &[
                ":5:10: `cases[0].mcp`: `mcp` and `tools` are both set for this case (`tools` is the suite's)",
                "fix: the MCP servers declare the tools: remove `tools` (or write `tools: []` in the case)",
            ],
        );
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn each_bad_server_is_located_with_its_fix() {
        let report = problems(
            r#"prompt = "Hi"
mcp = { command = "x" }
[[cases]]
name = "a"
mcp = [{ command = "x", url = "http://h/mcp" }, {}, "x", { command = "" }, { command = "x", headers = { a = "b" }, cwd = "." }]
[[cases]]
name = "b"
mcp = [{ url = "ftp://h", args = ["x"] }, { url = "http://h", headers = { "bad name" = "v", ok = 7 } }]
[[cases]]
name = "c"
mcp = [{ command = "x", args = "--stdio", env = { "A=B" = "1", N = 2 }, inherit_env = ["", 3] }]
"#,
        );
        assert_contains(
            &report,
            &[
                ":2:7: `mcp`: expected an array of server tables, found a table",
                "fix: write `mcp = [{ command = \"npx\", args = [\"-y\", \"@modelcontextprotocol/server-everything\"] }]` \
                 (a stdio server) or `mcp = [{ url = \"http://127.0.0.1:8000/mcp\" }]` (streamable HTTP)",
                ":5:31: `cases[0].mcp[0].url`: a server has either `command` (started over stdio) or `url` \
                 (streamable HTTP), not both",
                ":5:49: `cases[0].mcp[1]`: the server has neither `command` nor `url`",
                ":5:53: `cases[0].mcp[2]`: expected a server table, found a string",
                ":5:70: `cases[0].mcp[3].command`: it is empty",
                ":5:93: `cases[0].mcp[4].headers`: `headers` is for a server at `url`, and this server has `command`",
                ":5:116: `cases[0].mcp[4].cwd`: unknown key `cwd`",
                "fix: remove it, or use one of the valid keys in an MCP server: command, args, env, inherit_env, url, headers",
                ":8:16: `cases[1].mcp[0].url`: `ftp://h` is not an http:// or https:// URL",
                ":8:27: `cases[1].mcp[0].args`: `args` is for a stdio server (`command`), and this server has `url`",
                ":8:75: `cases[1].mcp[1].headers.bad name`: `bad name` is not a valid HTTP header name",
                ":8:98: `cases[1].mcp[1].headers.ok`: expected a string, found an integer",
                ":11:32: `cases[2].mcp[0].args`: expected an array of strings, found a string",
                "fix: write `args = [\"--stdio\"]`",
                ":11:51: `cases[2].mcp[0].env.A=B`: \"A=B\" is not the name of an environment variable",
                "fix: name it without `=`",
                ":11:68: `cases[2].mcp[0].env.N`: expected a string, found an integer",
                ":11:88: `cases[2].mcp[0].inherit_env[0]`: \"\" is not the name of an environment variable",
                ":11:92: `cases[2].mcp[0].inherit_env[1]`: expected a string, found an integer",
                "fix: write `inherit_env = [\"GITHUB_TOKEN\"]`",
            ],
        );
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn mcp_with_tools_or_rounds_without_servers_is_an_error() {
        let tools = "tools = [{ name = \"lookup\" }]";
        let server = "mcp = [{ command = \"orders-mcp\" }]";
        // Both in one case, at the top, or one each.
        for (text, at) in [
            (
                format!("prompt = \"Hi\"\n[[cases]]\nname = \"a\"\n{server}\n{tools}\n"),
                ":4:7: `cases[0].mcp`: `mcp` and `tools` are both set for this case\n",
            ),
            (
                format!("prompt = \"Hi\"\n{server}\n{tools}\n[[cases]]\nname = \"a\"\n"),
                ":2:7: `mcp`: `mcp` and `tools` are both set at the top of the suite\n",
            ),
            (
                format!("prompt = \"Hi\"\n{tools}\n[[cases]]\nname = \"a\"\n{server}\n"),
                ":5:7: `cases[0].mcp`: `mcp` and `tools` are both set for this case (`tools` is the suite's)\n",
            ),
            (
                format!("prompt = \"Hi\"\n{server}\n[[cases]]\nname = \"a\"\n{tools}\n"),
                ":5:9: `cases[0].tools`: `mcp` and `tools` are both set for this case (`mcp` is the suite's)\n",
            ),
        ] {
            let report = problems(&text);
            assert_contains(
                &report,
                &[
                    at,
                    "fix: the MCP servers declare the tools: remove `tools` (or write `tools = []` in the case)",
                ],
            );
            assert_eq!(report.matches("are both set").count(), 1, "{report}");
        }
        // A case's `tools = []` declares none: the suite's servers run.
        parsed(&format!(
            "prompt = \"Hi\"\n{server}\n[[cases]]\nname = \"a\"\ntools = []\n"
        ))
        .unwrap();

        let rounds_alone =
            "`max_tool_rounds` limits the agent loop of `mcp` servers, and no server is set here";
        let fix = "fix: add `mcp = [{ command = \"...\" }]` (at the top, or in the case), or remove \
                   `max_tool_rounds`: without servers one call is made and its tool calls are checked, not run";
        let report = problems(&format!(
            "prompt = \"Hi\"\n{tools}\n[[cases]]\nname = \"a\"\nmax_tool_rounds = 2\n"
        ));
        assert_contains(
            &report,
            &[
                &format!(":5:19: `cases[0].max_tool_rounds`: {rounds_alone}"),
                fix,
            ],
        );
        let report = problems("prompt = \"Hi\"\nmax_tool_rounds = 2\n[[cases]]\nname = \"a\"\n");
        assert_contains(
            &report,
            &[&format!(":2:19: `max_tool_rounds`: {rounds_alone}"), fix],
        );
        // The suite's rounds for the cases that have servers; a case without them makes one call.
        let suite = parsed(&format!(
            "prompt = \"Hi\"\nmax_tool_rounds = 2\n[[cases]]\nname = \"a\"\n{server}\n[[cases]]\nname = \"b\"\n"
        ))
        .unwrap();
        assert!(matches!(
            crate::suite::executor(&suite.cases[1].settings),
            Executor::Call
        ));
        let report = problems(&format!(
            "prompt = \"Hi\"\n{server}\nmax_tool_rounds = 101\n[[cases]]\nname = \"a\"\n"
        ));
        assert_contains(
            &report,
            &[
                ":3:19: `max_tool_rounds`: 101 is out of range",
                "fix: use a whole number from 0 to 100 (rounds of tool calls",
            ],
        );
    }
}
