//! The documented defaults, in one place. The guide (`src/guide/`) and `docs/` state the same values; a test below
//! keeps them in step, and another their key tables in step with the table of keys.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The subject's `max_tokens` when neither the test nor `[defaults]` says.
pub const SUBJECT_MAX_TOKENS: u32 = 2048;

/// The judge's `max_tokens` when `[judge]` does not say.
pub const JUDGE_MAX_TOKENS: u32 = 1024;

/// The judge's temperature when `[judge]` does not say: 0, for repeatable verdicts.
pub const JUDGE_TEMPERATURE: f32 = 0.0;

/// `[judge] min_accuracy`: the least lower end (95% Wilson) of the judge's measured accuracy on a
/// question's type for its verdicts on that type not to be advisory: ten right of ten, or nineteen of
/// twenty, clear it.
pub const JUDGE_MIN_ACCURACY: f64 = 0.7;

/// `[judge] min_agreement`: with `judge_samples = k`, the least share of the k answers that must agree
/// with the majority for the verdict not to be advisory (4 of 5, or 3 of 3).
pub const JUDGE_MIN_AGREEMENT: f64 = 0.8;

/// `[judge] advisory`: what a failing advisory verdict does by default: `"fail"`, the verdict decides
/// (marked advisory), so that `require()` fails a new user's test on "no" whether or not the judge is
/// measured.
pub const JUDGE_ADVISORY: &str = "fail";

/// The most times `[judge] judge_samples` asks each question.
pub const MAX_JUDGE_SAMPLES: u32 = 99;

/// Model calls in flight per endpoint (`concurrency`), not tied to the CPU count.
pub const CONCURRENCY: usize = 16;

/// `[retry] max_attempts`: attempts in all, the first one included.
pub const MAX_ATTEMPTS: u32 = 4;

/// `[retry] initial_backoff_ms`.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);

/// `[retry] max_backoff_ms`.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `[retry] timeout_secs`: one HTTP request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// `[retry] rate_limit_budget_secs`: how long a call retries 429s.
pub const RATE_LIMIT_BUDGET_SECS: u64 = 180;

/// The largest answer body a provider call reads, in bytes (`[retry] max_response_bytes`): far above
/// any real answer, so that a broken or hostile server cannot exhaust memory with calls in flight.
pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// How many model calls an agent loop makes at most.
pub const MAX_TURNS: u32 = 8;

/// How long one tool call may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// The variables of the harness's environment a stdio MCP server gets besides the ones it is given
/// (`McpServer::env`, `McpServer::inherit_env`): what finding programs, the user's files, the locale and a
/// temporary directory need (the Windows names for the same), and no key.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub const MCP_BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
];

/// How long what is left of a stdio MCP server's process group has after SIGTERM before SIGKILL.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub const MCP_STOP_GRACE: Duration = Duration::from_secs(2);

/// `--baseline-alpha`: the significance level of a baseline comparison.
pub const BASELINE_ALPHA: f64 = 0.05;
/// Adaptive sampling: the confidence (`confidence`), so α = β = 5%. The attribute's compile-time
/// check assumes the same (the three are `prompt_tester_keys`'s).
pub const CONFIDENCE: f64 = prompt_tester_keys::sampling::DEFAULT_CONFIDENCE;

/// Adaptive sampling: the most samples (`max_runs`).
pub const MAX_RUNS: u32 = prompt_tester_keys::sampling::DEFAULT_MAX_RUNS;

/// Adaptive sampling: the indifference half-width δ (`indifference`).
pub const INDIFFERENCE: f64 = prompt_tester_keys::sampling::DEFAULT_INDIFFERENCE;

/// The suite root (`suite_roots`), relative to the crate root.
pub const SUITE_ROOT: &str = "prompt-tests";

/// The cassette directory's name inside [`SUITE_ROOT`] (`cassette_dir`).
const CASSETTES: &str = "cassettes";

/// The default suite root of the crate rooted at `root`.
pub fn suite_root(root: &Path) -> PathBuf {
    root.join(SUITE_ROOT)
}

/// The default cassette directory of the crate rooted at `root`.
pub fn cassette_dir(root: &Path) -> PathBuf {
    suite_root(root).join(CASSETTES)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use prompt_tester_keys::{Place, names_in};

    use super::*;

    /// Every place in the guide and the docs that states a default states these values.
    #[test]
    fn the_docs_state_these_defaults() {
        let keys = include_str!("guide/keys.md");
        let judge = include_str!("guide/judge.md");
        let providers = include_str!("guide/providers.md");
        let tools = include_str!("guide/tools.md");
        let statistics = include_str!("guide/statistics.md");
        let suites = include_str!("guide/suites.md");
        let benchmarks = include_str!("../docs/benchmarks.md");
        let secs = |d: Duration| d.as_secs();
        let millis = |d: Duration| d.as_millis();
        for (doc, text, stated) in [
            (
                "src/guide/keys.md",
                keys,
                format!("| `max_tokens` | default {SUBJECT_MAX_TOKENS} |"),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!(
                    "[defaults]                             # for tests that do not say\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\nmax_tokens = {SUBJECT_MAX_TOKENS}\n"
                ),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!(
                    "[judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\nmax_tokens = {JUDGE_MAX_TOKENS}\n"
                ),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("\nconcurrency = {CONCURRENCY} "),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("\nmin_accuracy = {JUDGE_MIN_ACCURACY} "),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("\nmin_agreement = {JUDGE_MIN_AGREEMENT} "),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("advisory = \"{JUDGE_ADVISORY}\" # the default:"),
            ),
            (
                "src/guide/judge.md",
                judge,
                format!("advisory = \"{JUDGE_ADVISORY}\" # the default:"),
            ),
            (
                "src/guide/judge.md",
                judge,
                format!("- `\"{JUDGE_ADVISORY}\"` (the default)"),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!(
                    "cassette_dir = \"{SUITE_ROOT}/{CASSETTES}\"\nsuite_roots = [\"{SUITE_ROOT}\"]\n"
                ),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!(
                    "[retry]\nmax_attempts = {MAX_ATTEMPTS}\ninitial_backoff_ms = {}\nmax_backoff_ms = {}\ntimeout_secs = {} ",
                    millis(INITIAL_BACKOFF),
                    millis(MAX_BACKOFF),
                    secs(REQUEST_TIMEOUT)
                ),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("\nrate_limit_budget_secs = {RATE_LIMIT_BUDGET_SECS} "),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("\nmax_response_bytes = {MAX_RESPONSE_BYTES} "),
            ),
            (
                "src/guide/providers.md",
                providers,
                format!("({RATE_LIMIT_BUDGET_SECS} s by default,"),
            ),
            (
                "src/guide/tools.md",
                tools,
                format!(
                    "those that are set: {} (the last ones are Windows')",
                    MCP_BASE_ENV
                        .iter()
                        .map(|name| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            (
                "src/guide/tools.md",
                tools,
                format!(
                    "gets SIGTERM, and SIGKILL after {} s.",
                    secs(MCP_STOP_GRACE)
                ),
            ),
            (
                "src/guide/statistics.md",
                statistics,
                format!("(`--baseline-alpha`, default {BASELINE_ALPHA})"),
            ),
            (
                "src/guide/suites.md",
                suites,
                format!("else {SUBJECT_MAX_TOKENS}). |"),
            ),
            (
                "src/guide/suites.md",
                suites,
                format!(
                    "the most rounds of tool calls before the model must answer, 0 to 100 (default {}).",
                    MAX_TURNS - 1
                ),
            ),
            (
                "src/guide/keys.md",
                keys,
                format!("(defaults {CONFIDENCE}, {MAX_RUNS}, {INDIFFERENCE}; see"),
            ),
            (
                "src/guide/suites.md",
                suites,
                format!(
                    "(default {CONFIDENCE}), at most `max_runs` samples (default {MAX_RUNS}, then inconclusive), rates \
                     within `indifference` of `pass_rate` may go either way (default {INDIFFERENCE})"
                ),
            ),
            (
                "docs/benchmarks.md",
                benchmarks,
                format!("(default: the harness's default, {CONCURRENCY})"),
            ),
        ] {
            // A statement on one line may be wrapped in the doc.
            let wrapped = || text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                text.contains(&stated) || wrapped().contains(&stated),
                "{doc} no longer states {stated:?}"
            );
        }
    }

    /// The names a table's first column shows in code spans (`[[cases]]` is `cases`,
    /// `target_prompt_vars(k = v, ...)` is `target_prompt_vars`), for the table after `heading`.
    fn table_keys(doc: &str, heading: &str) -> BTreeSet<String> {
        let (_, rest) = doc
            .split_once(heading)
            .unwrap_or_else(|| panic!("no {heading:?}"));
        let rows = rest
            .lines()
            .skip_while(|line| !line.starts_with('|'))
            .take_while(|line| line.starts_with('|'))
            // The header and the separator.
            .skip(2);
        rows.flat_map(|row| {
            let first = row.split('|').nth(1).unwrap_or_default();
            let spans: Vec<String> = first
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|code| {
                    let code = code.trim_start_matches('[');
                    code.chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect()
                })
                .collect();
            spans
        })
        .filter(|name: &String| !name.is_empty())
        .collect()
    }

    /// The keys the guide's `[defaults]` example writes or shows commented out.
    fn defaults_block_keys(doc: &str) -> BTreeSet<String> {
        let (_, rest) = doc
            .split_once("\n[defaults]")
            .expect("a [defaults] example");
        rest.lines()
            .skip(1)
            .take_while(|line| !line.trim().is_empty())
            .filter_map(|line| line.trim_start_matches("# ").split_once(" = "))
            .map(|(key, _)| key.trim().to_string())
            .collect()
    }

    /// The guide's `#[prompt_test]` table, the suite and case tables of its suites chapter and its
    /// `[defaults]` example list exactly the keys the table of keys allows there.
    #[test]
    fn the_docs_list_every_key_where_it_is_allowed() {
        let guide_keys = include_str!("guide/keys.md");
        let suites = include_str!("guide/suites.md");
        let keys = |place: Place| -> BTreeSet<String> {
            names_in(place).into_iter().map(String::from).collect()
        };
        for (doc, listed, place) in [
            (
                "src/guide/keys.md, #[prompt_test] keys",
                table_keys(guide_keys, "## `#[prompt_test]` keys"),
                Place::Attribute,
            ),
            (
                "src/guide/suites.md, Top-level keys",
                table_keys(suites, "## Top-level keys"),
                Place::Suite,
            ),
            (
                "src/guide/suites.md, Case keys",
                table_keys(suites, "## Case keys"),
                Place::Case,
            ),
            (
                "src/guide/keys.md, [defaults]",
                defaults_block_keys(guide_keys),
                Place::Defaults,
            ),
            (
                "src/guide/suites.md, A dataset judged as a whole",
                table_keys(suites, "### A dataset judged as a whole"),
                Place::Gate,
            ),
        ] {
            let table = keys(place);
            let missing: Vec<_> = table.difference(&listed).collect();
            let extra: Vec<_> = listed.difference(&table).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{doc}: missing {missing:?}, not a key there {extra:?}"
            );
        }
    }

    /// The guide's table of every key is the table of keys, row for row: its places and its help. On a
    /// difference, the message holds the table to paste.
    #[test]
    fn the_guide_shows_the_table_of_keys() {
        let mark =
            |row: &prompt_tester_keys::Row, place| if row.allowed_in(place) { "✓" } else { "" };
        let mut table = String::from(
            "| key | `#[prompt_test]` | suite | case | `[defaults]` | what it is |\n\
             | --- | :-: | :-: | :-: | :-: | --- |\n",
        );
        for row in prompt_tester_keys::ROWS {
            table.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                row.name,
                mark(row, Place::Attribute),
                mark(row, Place::Suite),
                mark(row, Place::Case),
                mark(row, Place::Defaults),
                row.help
            ));
        }
        let guide = include_str!("guide/keys.md");
        assert!(
            guide.contains(&format!("## Every key, and where it goes\n\n{table}\n")),
            "src/guide/keys.md, \"Every key, and where it goes\", should be the table of keys:\n\n{table}"
        );
    }
}
