//! `cargo prompt-tester` (the `cargo-prompt-tester` binary) as a user runs it, on a scratch crate whose
//! cassettes and pending files are written here through the library's entry type: `pending`,
//! `accept`, `reject` and where each finds the files (`commands.rs`), and the interactive review in a
//! real terminal, a tmux session (`terminal.rs`).

mod commands;
#[path = "../prereq/mod.rs"]
mod prereq;
mod terminal;
#[path = "../common/tmux.rs"]
mod tmux;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use prompt_tester::testing::cassette::{CallRole, Entry, Exchange, entry_key};
use prompt_tester::{CompletionRequest, CompletionResult};
use prompt_tester_testkit::child::{self, Child, Run, Scratch};
use serde_json::json;

/// The binary, built once per test process so it is never stale (`cargo test --test review` alone
/// does not build other packages' binaries).
fn binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        // This package's own folder names the checkout these tests were built from.
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        child::built_binary("cargo-prompt-tester", &workspace)
    })
}

/// The provider and model every entry names.
const PROVIDER: &str = "openai";
const MODEL: &str = "gpt-4o-mini";

/// One recorded call of `test`'s run `run`, as the engine records it (same key).
fn entry(test: &str, run: u32, role: CallRole, prompt: &str, answer: &str) -> Entry {
    let request = CompletionRequest::new(MODEL, prompt, 200);
    let mut response = CompletionResult::new(answer, prompt.len() as u64 / 4, 12);
    response.cost_usd = Some(0.0001 * f64::from(run));
    Entry {
        key: entry_key(PROVIDER, &request, run),
        target: Some("prompts".into()),
        test: test.into(),
        run,
        role,
        provider: PROVIDER.into(),
        model: MODEL.into(),
        call: Exchange::Completion { request, response },
        latency_ms: 400 + u64::from(run),
        recorded_at: "2026-01-01T00:00:00Z".into(),
    }
}

/// A judge call about `answer`, its prompt shaped as the judge writes it.
fn judged(test: &str, run: u32, answer: &str, verdict: &str) -> Entry {
    let prompt = format!(
        "RESPONSE (the text to judge):\n<<<RESPONSE t\n{answer}\nRESPONSE t>>>\n\nQUESTION:\nIs Alice greeted?\n"
    );
    let reply = format!(r#"{{"reasoning": "r", "answer": "{verdict}"}}"#);
    entry(test, run, CallRole::Judge, &prompt, &reply)
}

/// Writes `entries` as a cassette (or pending) file at `path`.
fn write(path: &Path, entries: &[Entry]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let body =
        json!({"version": prompt_tester::testing::cassette::FORMAT_VERSION, "entries": entries});
    std::fs::write(path, serde_json::to_string_pretty(&body).unwrap()).unwrap();
}

/// The keys a cassette or pending file holds.
fn keys(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect()
}

/// A crate with two cassettes and a pending file for each:
/// - `quick`: `quick::greet` runs 1 (subject and judge) and 2 (subject) pending with a changed
///   prompt; `quick::other` recorded and not pending.
/// - `suite`: `suite::case_a` run 1 answered again (the same request).
struct Fixture {
    scratch: Scratch,
    /// The cassette folder.
    cassettes: PathBuf,
    /// The accepted entries, and the pending ones.
    old: Vec<Entry>,
    new: Vec<Entry>,
}

impl Fixture {
    fn new(name: &str) -> Self {
        Self::in_folders(name, "prompt-tests/cassettes", None)
    }

    /// The fixture with its cassettes in `cassettes` (relative to the root) and its pending files in
    /// `pending` (else beside them).
    fn in_folders(name: &str, cassettes: &str, pending: Option<&str>) -> Self {
        let scratch = Scratch::new("review", name);
        scratch.file(
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        );
        let cassettes = scratch.path().join(cassettes);
        let pending = pending.map_or_else(|| cassettes.clone(), |p| scratch.path().join(p));
        let (greet, other, case) = ("quick::greet", "quick::other", "suite::case_a");
        let old = vec![
            entry(greet, 1, CallRole::Subject, "Say hi to Alice.", "Hi Alice!"),
            judged(greet, 1, "Hi Alice!", "yes"),
            entry(
                greet,
                2,
                CallRole::Subject,
                "Say hi to Alice.",
                "Hello, Alice.",
            ),
            entry(other, 1, CallRole::Subject, "Count to three.", "1, 2, 3"),
            entry(case, 1, CallRole::Subject, "Capital of France?", "Paris"),
        ];
        let new = vec![
            entry(
                greet,
                1,
                CallRole::Subject,
                "Say hello to Alice.",
                "Hello there!",
            ),
            judged(greet, 1, "Hello there!", "no"),
            entry(
                greet,
                2,
                CallRole::Subject,
                "Say hello to Alice.",
                "Hello, Alice!",
            ),
            entry(case, 1, CallRole::Subject, "Capital of France?", "Paris."),
        ];
        write(&cassettes.join("quick.cassette.json"), &old[..4]);
        write(&cassettes.join("suite.cassette.json"), &old[4..]);
        write(&pending.join("quick.pending.json"), &new[..3]);
        write(&pending.join("suite.pending.json"), &new[3..]);
        Self {
            scratch,
            cassettes,
            old,
            new,
        }
    }

    fn root(&self) -> &Path {
        self.scratch.path()
    }

    fn cassette(&self, stem: &str) -> PathBuf {
        self.cassettes.join(format!("{stem}.cassette.json"))
    }

    fn pending(&self, stem: &str) -> PathBuf {
        self.cassettes.join(format!("{stem}.pending.json"))
    }

    /// The command in the crate root, with a clean environment.
    fn command(&self, args: &[&str]) -> Child {
        Child::new(binary())
            .root(self.root())
            .env_remove("CARGO_MANIFEST_DIR")
            .args(args)
    }

    /// Runs it as cargo does (`prompt-tester` first), with no terminal.
    fn run(&self, args: &[&str]) -> Run {
        let mut all = vec!["prompt-tester"];
        all.extend_from_slice(args);
        let mut command = self.command(&all).command();
        command.stdin(std::process::Stdio::null());
        Run(command.output().expect("the binary runs"))
    }

    /// Runs it with `args`, which succeeds and prints each of `parts`.
    #[track_caller]
    fn succeeds_saying(&self, args: &[&str], parts: &[&str]) {
        let run = self.run(args);
        run.assert_success();
        child::assert_contains(&run.stdout(), parts);
    }
}
