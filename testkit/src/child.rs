//! Running a harness in a child process, the one way the project's tests do it: a scratch crate root,
//! a binary cargo built (an example, a test target, or the running test binary itself), a clean
//! environment, and the output with the helpers every such test needs.
//!
//! The environment is clean because the child reads its configuration from it: a variable the
//! developer or CI exported (`PROMPT_TESTER_*`, `CI`, an API key, nextest's own variables) would
//! otherwise change what the child does. A test sets what it needs after the clean-up, so its own
//! values win.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use std::sync::Mutex;

/// Variables removed from every child's environment (with every `PROMPT_TESTER_*` and `NEXTEST*`).
pub const CLEARED: &[&str] = &[
    "CI",
    "RUST_TEST_THREADS",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "FAKE_API_KEY",
    // A run on GitHub Actions appends its summary there: the project's own CI would get every child's.
    "GITHUB_STEP_SUMMARY",
];

/// Prefixes of the variables removed from every child's environment.
pub const CLEARED_PREFIXES: &[&str] = &["PROMPT_TESTER_", "NEXTEST", "FIXTURE_", "PT_"];

/// The repository's root (the workspace), whichever package the running test belongs to.
pub fn repo_root() -> PathBuf {
    let testkit = Path::new(env!("CARGO_MANIFEST_DIR"));
    testkit
        .parent()
        .expect("testkit/ is in the repository")
        .to_path_buf()
}

/// The example crate's root, `prompt-tests/`: its `prompt-tester.toml`, suites and cassettes.
pub fn examples_root() -> PathBuf {
    repo_root().join("prompt-tests")
}

/// `target/<profile>`, the directory above the running test binary's `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// The binary of `package` in the workspace of `manifest`, built now in the profile the tests run in
/// (`cargo test --test X` alone builds no other package's binary, so one built earlier may be stale).
pub fn built_binary(package: &str, manifest: &Path) -> PathBuf {
    build(&["-p", package], manifest);
    let binary = profile_dir().join(format!("{package}{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "{} was not built", binary.display());
    binary
}

/// `cargo build --quiet <what>` for the workspace of `manifest`, in the profile the tests run in.
fn build(what: &[&str], manifest: &Path) {
    let profile = match profile_dir().file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_string(),
        Some(other) => other.to_string(),
    };
    let status = cargo()
        .args(["build", "--quiet"])
        .args(what)
        .args(["--profile", &profile])
        .arg("--manifest-path")
        .arg(manifest)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build {} failed", what.join(" "));
}

/// The binary of the example `name`, which `cargo test` and `cargo nextest run` build with the tests.
pub fn example_binary(name: &str) -> PathBuf {
    let path = profile_dir()
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo test` (it builds the examples) or `cargo build --example {name}`",
        path.display()
    );
    path
}

/// The binary of the example `name` of the package at `manifest_dir`, built once per test process so
/// that it is never stale: `cargo test --test tools` alone does not build the examples, and an old
/// build would test old code.
pub fn fresh_example_binary(name: &str, manifest_dir: &Path) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|b| b == name) {
        build(&["--example", name], &manifest_dir.join("Cargo.toml"));
        built.push(name.to_string());
    }
    example_binary(name)
}

/// The cargo that runs this test, without the variables it set for the test process: build scripts
/// that track them (ring's does) would look dirty, and this cargo would rebuild half the tree, and the
/// next `cargo test` rebuild it back.
pub fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key == "OUT_DIR"
            || key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_BIN_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_MANIFEST_LINKS",
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
            ]
            .contains(&key.as_ref())
        {
            cargo.env_remove(key.as_ref());
        }
    }
    cargo
}

/// The newest `name-<hash>` executable in the running test's own directory (`target/<profile>/deps`),
/// where cargo and nextest put every test binary of the package.
pub fn test_binary(name: &str) -> PathBuf {
    let deps = profile_dir().join("deps");
    newest_hashed(&deps, name).unwrap_or_else(|| {
        panic!(
            "no {name} test binary in {}: run `cargo test`",
            deps.display()
        )
    })
}

/// The newest `name-<16 hex digits>` executable in `dir`, as cargo names the binaries it builds there
/// (`deps/`, and `examples/` beside the hard link without the hash).
pub fn newest_hashed(dir: &Path, name: &str) -> Option<PathBuf> {
    let prefix = format!("{name}-");
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let file = file
                .strip_suffix(std::env::consts::EXE_SUFFIX)
                .unwrap_or(&file);
            file.strip_prefix(&prefix)
                .is_some_and(|hash| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
}

/// A scratch crate root in the temporary directory, removed when dropped, so that configuration,
/// suites and cassettes of one run stay out of the repository and away from other tests.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// An empty root `pt-<group>-<name>-<pid>`.
    pub fn new(group: &str, name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("pt-{group}-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The root.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `relative` (creating its directories).
    pub fn file(&self, relative: &str, text: &str) {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Writes `prompt-tester.toml`.
    pub fn config(&self, text: &str) {
        self.file("prompt-tester.toml", text);
    }

    /// The root's cassette directory.
    pub fn cassettes(&self) -> PathBuf {
        self.0.join("prompt-tests").join("cassettes")
    }

    /// A child running `program` in this root (its `CARGO_MANIFEST_DIR` and working directory).
    pub fn child(&self, program: impl AsRef<std::ffi::OsStr>) -> Child {
        Child::new(program).root(&self.0)
    }

    /// A child running the example `name` in this root.
    pub fn example(&self, name: &str) -> Child {
        self.child(example_binary(name))
    }

    /// The command that runs the example `example` in this root with `args` and `env`.
    pub fn command(&self, example: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
        self.example(example).args(args).envs(env).command()
    }

    /// Runs the example `example` in this root with `args` and `env`, to completion.
    pub fn run_example(&self, example: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.example(example).args(args).envs(env).run()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process to run, with a clean environment (see the module's documentation).
#[derive(Debug)]
pub struct Child(Command);

impl Child {
    /// `program` with a clean environment and `NO_COLOR=1`.
    pub fn new(program: impl AsRef<std::ffi::OsStr>) -> Self {
        let mut cmd = Command::new(program);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if CLEARED.contains(&key.as_ref())
                || CLEARED_PREFIXES.iter().any(|p| key.starts_with(p))
            {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.env("NO_COLOR", "1");
        Child(cmd)
    }

    /// The running test binary, to run only its test `test` (exactly, on one thread).
    pub fn this_test(test: &str) -> Self {
        let mut child = Self::new(std::env::current_exe().expect("test binary path"));
        child.0.args(["--exact", test, "--test-threads=1"]);
        child
    }

    /// The running test binary, to run only its ignored test `child_harness`, which [`run_as_child`]
    /// turns into the harness run with the arguments `argv` (passed as JSON in `args_var`).
    pub fn harness(args_var: &str, argv: &[&str]) -> Self {
        let mut child = Self::this_test("child_harness");
        child.0.args(["--ignored", "--nocapture"]).env(
            args_var,
            serde_json::to_string(argv).expect("arguments as JSON"),
        );
        child
    }

    /// Runs in `root`: its working directory and `CARGO_MANIFEST_DIR`.
    pub fn root(mut self, root: &Path) -> Self {
        self.0.current_dir(root).env("CARGO_MANIFEST_DIR", root);
        self
    }

    /// Adds arguments.
    pub fn args<S: AsRef<std::ffi::OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.0.args(args);
        self
    }

    /// Sets a variable.
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.0.env(key, value);
        self
    }

    /// Sets variables.
    pub fn envs<'a>(mut self, vars: impl IntoIterator<Item = &'a (&'a str, &'a str)>) -> Self {
        for (key, value) in vars {
            self.0.env(key, value);
        }
        self
    }

    /// Points every provider at `fake`: the base URL variable of each wire.
    pub fn base_urls(self, fake: &crate::FakeProvider) -> Self {
        use crate::Wire;
        self.env("OPENAI_BASE_URL", fake.base_url(Wire::OpenAi))
            .env("ANTHROPIC_BASE_URL", fake.base_url(Wire::Anthropic))
            .env("GOOGLE_GEMINI_BASE_URL", fake.base_url(Wire::Gemini))
    }

    /// Removes a variable.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.0.env_remove(key);
        self
    }

    /// The command, to spawn it or adjust it further.
    pub fn command(self) -> Command {
        self.0
    }

    /// Runs it to completion.
    pub fn run(mut self) -> Run {
        Run(self.0.output().expect("the child process runs"))
    }
}

/// What a child process left.
#[derive(Debug)]
pub struct Run(pub Output);

impl Run {
    /// Its stdout, lossily decoded.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    /// Its stderr, lossily decoded.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Its exit code (`None` when a signal ended it).
    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    /// Whether it exited with 0.
    pub fn success(&self) -> bool {
        self.0.status.success()
    }

    /// Exit code, stdout and stderr, to show when an assertion fails.
    pub fn context(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code(),
            self.stdout(),
            self.stderr()
        )
    }

    /// Panics with the output unless the run exited with 0.
    #[track_caller]
    pub fn assert_success(&self) {
        self.assert_code(0);
    }

    /// Panics with the output unless the run exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) {
        assert_eq!(self.code(), Some(code), "{}", self.context());
    }

    /// The trial names a `--list` run printed (its `<name>: test` lines), in order.
    pub fn listed(&self) -> Vec<String> {
        self.stdout()
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(|name| name.trim().to_string())
            .collect()
    }

    /// Panics with the output unless stdout contains `text`.
    pub fn assert_stdout_has(&self, text: &str) {
        assert!(
            self.stdout().contains(text),
            "no {text:?} in:\n{}",
            self.context()
        );
    }

    /// Panics with the output unless stderr contains `text`.
    pub fn assert_stderr_has(&self, text: &str) {
        assert!(
            self.stderr().contains(text),
            "no {text:?} in:\n{}",
            self.context()
        );
    }

    /// Panics with the output unless libtest printed `outcome` for every one of `trials`.
    pub fn assert_outcomes(&self, trials: &[&str], outcome: &str) {
        for trial in trials {
            assert_eq!(self.outcome(trial), outcome, "{trial}:\n{}", self.context());
        }
    }

    /// The outcome libtest printed for `trial` (`ok`, `FAILED`, `ignored`, ...); panics with the
    /// output when there is none.
    pub fn outcome(&self, trial: &str) -> String {
        outcome(&self.stdout(), trial)
            .unwrap_or_else(|| panic!("no result line for {trial} in:\n{}", self.context()))
    }
}

/// The outcome libtest printed for `trial` in `stdout`: `test <name> ... <outcome>`, the name padded
/// to a column by libtest-mimic. A trial that prints to stdout from another thread can land its line
/// between the name and the outcome: the outcome is then the next line that is one.
pub fn outcome(stdout: &str, trial: &str) -> Option<String> {
    let is_outcome = |text: &str| matches!(text, "ok" | "FAILED") || text.starts_with("ignored");
    let lines: Vec<&str> = stdout.lines().collect();
    lines.iter().enumerate().find_map(|(i, line)| {
        let (name, rest) = line.strip_prefix("test ")?.split_once(" ... ")?;
        if name.trim_end() != trial {
            return None;
        }
        let rest = rest.trim();
        if is_outcome(rest) {
            return Some(rest.to_string());
        }
        lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| is_outcome(l))
            .map(str::to_string)
    })
}

/// The arguments that make libtest skip every trial whose name contains one of `filters`:
/// `--skip <filter>` for each (libtest takes one positional filter, so the others are skips).
pub fn skipping<'a>(filters: &[&'a str]) -> Vec<&'a str> {
    filters
        .iter()
        .flat_map(|filter| ["--skip", filter])
        .collect()
}

/// Panics, showing `text`, unless it contains each of `parts`.
#[track_caller]
pub fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

/// Panics, showing `text`, if it contains `part`.
#[track_caller]
pub fn assert_lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "{part:?} in:\n{text}");
}

/// The body of the ignored test `child_harness` of a test binary that [`Child::harness`] starts: in
/// that child it is the whole program, running `harness` with the arguments (JSON) in `args_var` and
/// exiting with its code (0, 2 for a usage error, 101 otherwise). In a normal run, where `args_var` is
/// unset, it does nothing.
pub fn run_as_child(args_var: &str, harness: impl FnOnce(Vec<String>) -> ExitCode) {
    let Ok(args) = std::env::var(args_var) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(&args).expect("child arguments are JSON");
    let code = harness(args);
    std::process::exit(if code == ExitCode::SUCCESS {
        0
    } else if code == ExitCode::from(2) {
        2
    } else {
        101
    });
}

/// The entry of the JSON array `list` (a report's `tests` or `suites`) whose `field` is `value`;
/// panics naming what it looked for, and the list, when there is none.
pub fn entry<'a>(list: &'a serde_json::Value, field: &str, value: &str) -> &'a serde_json::Value {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list:#}"))
        .iter()
        .find(|e| e[field] == value)
        .unwrap_or_else(|| panic!("no entry with {field} = {value:?} in {list:#}"))
}

#[cfg(test)]
mod tests {
    use super::outcome;

    #[test]
    fn outcome_reads_padded_libtest_lines() {
        let stdout = "running 2 tests\ntest a      ... ok\ntest a::b   ... FAILED\ntest c ... ignored, live only\n";
        assert_eq!(outcome(stdout, "a").as_deref(), Some("ok"));
        assert_eq!(outcome(stdout, "a::b").as_deref(), Some("FAILED"));
        assert_eq!(outcome(stdout, "c").as_deref(), Some("ignored, live only"));
        assert_eq!(outcome(stdout, "d"), None);
        // A trial's own output between libtest's name and its outcome.
        let interleaved = "test g ... OUTPUT 1 echo: Name a tree.\nok\ntest h ... ok\n";
        assert_eq!(outcome(interleaved, "g").as_deref(), Some("ok"));
        assert_eq!(outcome(interleaved, "h").as_deref(), Some("ok"));
    }
}
