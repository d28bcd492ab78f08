//! A prompt-test binary with no Rust tests of its own: it runs the TOML suites of its crate root
//! (`CARGO_MANIFEST_DIR`). `tests/cassettes.rs` runs it in scratch roots whose suites all pass, so
//! that a run of every test can prune cassettes, and many at once to record into one cassette.

use std::process::ExitCode;

fn main() -> ExitCode {
    prompt_tester::main()
}
