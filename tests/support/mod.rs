//! Shared by the harness's end-to-end tests: run an example fixture (`harness_fixture`,
//! `cassette_fixture`) in a scratch crate root.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary of the example `name`, built by `cargo test` with the other examples.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let path = target
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo test` (it builds the examples) or `cargo build --example {name}`",
        path.display()
    );
    path
}

/// A scratch crate root for one fixture run, so cassettes and configuration stay out of the repo.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("pt-harness-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Writes `prompt-tester.toml` in the scratch root.
    pub fn config(&self, text: &str) {
        std::fs::write(self.0.join("prompt-tester.toml"), text).unwrap();
    }

    /// The scratch root's cassette directory.
    pub fn cassettes(&self) -> PathBuf {
        self.0.join("prompt-tests").join("cassettes")
    }

    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_example("harness_fixture", args, env)
    }

    /// Runs the example binary `example` to completion in this root.
    pub fn run_example(&self, example: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = self.command(example, args, env).output();
        Run(output.expect("the fixture runs"))
    }

    /// The command that runs the example binary `example` in this root, with a clean environment.
    pub fn command(&self, example: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(example_binary(example));
        cmd.args(args)
            .current_dir(&self.0)
            .env("CARGO_MANIFEST_DIR", &self.0)
            .env("NO_COLOR", "1")
            .env_remove("PROMPT_TESTER_CASSETTE")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("GOOGLE_GEMINI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("PROMPT_TESTER_JUDGE_MODEL")
            .env_remove("PROMPT_TESTER_JUDGE_PROVIDER")
            .env_remove("RUST_TEST_THREADS")
            .env_remove("FAKE_API_KEY")
            .env_remove("FIXTURE_THING")
            .env_remove("CI");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Run(pub Output);

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }
    /// Panics with the output unless the run exited with 0.
    pub fn assert_success(&self) {
        assert_eq!(self.code(), Some(0), "{}\n{}", self.stdout(), self.stderr());
    }

    /// The outcome libtest printed for `trial` (`ok`, `FAILED`, `ignored`, ...).
    pub fn outcome(&self, trial: &str) -> String {
        self.stdout()
            .lines()
            .filter_map(|l| l.strip_prefix("test "))
            .filter_map(|l| l.split_once(" ... "))
            .find(|(name, _)| name.trim_end() == trial)
            .map(|(_, outcome)| outcome.to_string())
            .unwrap_or_else(|| panic!("no result line for {trial} in:\n{}", self.stdout()))
    }
}

/// The body of a test that, in a child process the test binary started on itself, is the whole
/// program: it runs `harness` with the arguments (JSON) in `args_var` and exits with its code. In a
/// normal run, where `args_var` is unset, it does nothing.
pub fn run_as_child(args_var: &str, harness: prompt_tester::Harness) {
    let Ok(args) = std::env::var(args_var) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(&args).expect("child arguments are JSON");
    let code = harness.run_with_args(args);
    std::process::exit(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        101
    });
}

/// This test binary, started to run only its `child_harness` test with the harness arguments `argv`
/// (see [`run_as_child`]).
pub fn child_command(args_var: &str, argv: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary path"));
    cmd.args([
        "--exact",
        "child_harness",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(
        args_var,
        serde_json::to_string(argv).expect("arguments as JSON"),
    );
    cmd
}
