//! `cargo prompt-tester init`: the README's quick start set up in an existing crate. It adds the test
//! target and the dependencies its files need to `Cargo.toml` (keeping the file's formatting), writes
//! one test, the judge's configuration, one suite and the nextest test group, git-ignores pending
//! recordings (`*.pending.json`, in the crate's `.gitignore`), marks the cassettes' media folder
//! binary (in `.gitattributes`), and prints the commands
//! that list, record and replay them. It never overwrites: when any file it would write is there, it
//! names them and writes nothing.

mod manifest;
mod template;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

pub use manifest::Source;
use manifest::{edit_manifest, edit_nextest};

/// What `init` is asked for.
#[derive(Debug)]
pub struct Request {
    /// The crate root (the folder of its `Cargo.toml`).
    pub root: PathBuf,
    /// The test target's name.
    pub target: String,
    /// Where the prompt-tester dependency comes from.
    pub source: Source,
}

/// The test target's file, as the quick start has it.
const MAIN_PATH: &str = "prompt-tests/main.rs";
const NEXTEST_PATH: &str = ".config/nextest.toml";
const GITIGNORE_PATH: &str = ".gitignore";
const GITATTRIBUTES_PATH: &str = ".gitattributes";
/// The cassettes the quick start's target records into.
const CASSETTES_PATH: &str = "prompt-tests/cassettes";

/// The version requirement of the prompt-tester this subcommand belongs to: its own version's
/// `major.minor` (`0.1.0` is `"0.1"`), as the README's dependency line.
pub fn own_version() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.to_string(),
    }
}

/// Whether `name` can be a test target whose commands the harness names right: the harness reads its
/// name from the test binary's file name, where cargo writes `-` as `_`.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !ok {
        bail!(
            "--name {name:?}: a test target's name here is letters, digits and `_` (not first a digit); \
             `-` is not taken, since the test binary's file name, which the harness names its commands \
             from, spells it `_`"
        );
    }
    Ok(())
}

/// Sets the crate up, or refuses naming every file in the way; returns what to print.
pub fn run(request: &Request) -> anyhow::Result<String> {
    check_name(&request.target)?;
    let root = &request.root;
    let manifest_path = root.join("Cargo.toml");
    let manifest_text = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("reading {}", manifest_path.display()))?;
    let gitignore_path = root.join(GITIGNORE_PATH);
    let gitignore_text = read_if_there(&gitignore_path)?;
    let gitattributes_path = root.join(GITATTRIBUTES_PATH);
    let gitattributes_text = read_if_there(&gitattributes_path)?;
    let nextest_path = root.join(NEXTEST_PATH);
    let nextest_text = read_if_there(&nextest_path)?;

    // Every problem first, all of them named, before anything is written.
    let new_files = [
        (MAIN_PATH, template::MAIN_RS),
        (template::SUITE_PATH, template::SUITE),
        ("prompt-tester.toml", template::CONFIG),
    ];
    let mut in_the_way: Vec<String> = new_files
        .iter()
        .filter(|(path, _)| root.join(path).exists())
        .map(|(path, _)| format!("{path} exists"))
        .collect();
    let manifest = edit_manifest(&manifest_text, &request.target, MAIN_PATH, &request.source);
    let nextest = edit_nextest(nextest_text.as_deref(), &request.target);
    let (manifest, nextest) = match (manifest, nextest) {
        (Ok(manifest), Ok(nextest)) if in_the_way.is_empty() => (manifest, nextest),
        (manifest, nextest) => {
            in_the_way.extend(manifest.err().map(|c| c.0));
            in_the_way.extend(nextest.err().map(|c| c.0));
            bail!(
                "init wrote nothing: {}. It never overwrites a file or a test target: move what is in \
                 the way, or set the crate up by hand (README.md, \"Quick start\")",
                in_the_way.join("; ")
            );
        }
    };
    let (manifest, added) = manifest;

    for (path, text) in new_files {
        write_new(&root.join(path), text)?;
    }
    write(&nextest_path, &nextest)?;
    if let Some(gitignore) = edit_gitignore(gitignore_text.as_deref()) {
        write(&gitignore_path, &gitignore)?;
    }
    if let Some(gitattributes) = edit_gitattributes(gitattributes_text.as_deref()) {
        write(&gitattributes_path, &gitattributes)?;
    }
    write(&manifest_path, &manifest)?;
    Ok(said(request, &added.dependencies, nextest_text.is_some()))
}

/// The pattern of pending recordings: they wait for a review on one machine, never for a commit.
fn pending_pattern() -> String {
    format!(
        "*{}",
        prompt_tester::_cargo_prompt_tester_support::PENDING_SUFFIX
    )
}

/// `.gitignore` (its text, `None` when there is none) with pending recordings ignored, or `None` when
/// a line of it ignores them already.
fn edit_gitignore(text: Option<&str>) -> Option<String> {
    with_line(
        text,
        &pending_pattern(),
        "# prompt-tester: recordings waiting for `cargo prompt-tester review`",
    )
}

/// The line that marks the cassettes' media store binary: git shows no text diff of an image and
/// converts no line ending in it.
fn media_attributes() -> String {
    format!(
        "{CASSETTES_PATH}/{}/** binary",
        prompt_tester::_cargo_prompt_tester_support::MEDIA_DIR
    )
}

/// `.gitattributes` (its text, `None` when there is none) with the media store marked binary, or
/// `None` when a line of it says so already.
fn edit_gitattributes(text: Option<&str>) -> Option<String> {
    with_line(
        text,
        &media_attributes(),
        "# prompt-tester: images, documents and audio the cassettes name, stored by their hash",
    )
}

/// `text` (a file's, `None` when there is none) with `line` added under `comment`, or `None` when a
/// line of it is `line` already.
fn with_line(text: Option<&str>, line: &str, comment: &str) -> Option<String> {
    let text = text.unwrap_or_default();
    if text.lines().any(|l| l.trim() == line) {
        return None;
    }
    let mut edited = text.to_string();
    if !edited.is_empty() && !edited.ends_with('\n') {
        edited.push('\n');
    }
    let _ = writeln!(edited, "{comment}\n{line}");
    Some(edited)
}

/// The file at `path`'s text, `None` when there is none.
fn read_if_there(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes a file that is not there (a file made meanwhile is not overwritten either).
fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// What was done, then the commands to list, record (with keys, or against a local server) and
/// replay the new tests.
fn said(request: &Request, dependencies: &[&str], merged_nextest: bool) -> String {
    let target = &request.target;
    let test = format!("cargo test --test {target}");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Created {MAIN_PATH} (one #[prompt_test]), {} (one suite), prompt-tester.toml (the judge)",
        template::SUITE_PATH
    );
    let deps = if dependencies.is_empty() {
        String::new()
    } else {
        format!(" and the dev-dependencies {}", dependencies.join(", "))
    };
    let _ = writeln!(
        out,
        "{} {NEXTEST_PATH} (the `{}` test group); added to Cargo.toml the test target `{target}`{deps}; \
         {GITIGNORE_PATH} ignores pending recordings ({}); {GITATTRIBUTES_PATH} marks the media folder \
         binary ({})",
        if merged_nextest {
            "Added to"
        } else {
            "Created"
        },
        template::TEST_GROUP,
        pending_pattern(),
        media_attributes(),
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "List the tests:");
    let _ = writeln!(out, "  {test} -- --list");
    let _ = writeln!(
        out,
        "Record them with keys (Gemini answers, Claude judges):"
    );
    let _ = writeln!(
        out,
        "  GOOGLE_API_KEY=... ANTHROPIC_API_KEY=... PROMPT_TESTER_CASSETTE=record {test}"
    );
    let _ = writeln!(
        out,
        "Or, with no key, against a local OpenAI-compatible server (llama-server, Ollama, vLLM) serving MODEL:"
    );
    let local = "PROMPT_TESTER_SUBJECT=openai/MODEL PROMPT_TESTER_JUDGE_PROVIDER=openai \
                 PROMPT_TESTER_JUDGE_MODEL=MODEL";
    let _ = writeln!(
        out,
        "  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 {local} PROMPT_TESTER_CASSETTE=record {test}"
    );
    let _ = writeln!(
        out,
        "Then commit the cassettes and replay them, offline from now on (in CI too):"
    );
    let _ = writeln!(out, "  git add prompt-tests/cassettes");
    let _ = writeln!(out, "  {test}");
    let _ = writeln!(
        out,
        "(What the local server recorded replays with its model named again:)"
    );
    let _ = writeln!(out, "  {local} {test}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependency_is_this_subcommand_s_own_version() {
        assert_eq!(own_version(), "0.1");
    }

    #[test]
    fn a_name_the_commands_could_not_name_is_refused() {
        for good in ["prompts", "evals", "my_evals2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["my-evals", "", "2evals", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_next_lines_name_the_target_in_every_command() {
        let request = Request {
            root: PathBuf::from("."),
            target: "evals".into(),
            source: Source::Version("0.1".into()),
        };
        let text = said(&request, &["prompt-tester", "anyhow"], false);
        for line in text.lines().filter(|l| l.contains("cargo test")) {
            assert!(line.contains("cargo test --test evals"), "{line}");
        }
        assert!(
            text.contains("  cargo test --test evals -- --list\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  GOOGLE_API_KEY=... ANTHROPIC_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test evals\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn pending_recordings_are_git_ignored_once_beside_what_the_file_ignores() {
        let root = std::env::temp_dir().join(format!("pt-init-gitignore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), "/target").unwrap();
        std::fs::write(root.join(".gitattributes"), "*.sh text eol=lf").unwrap();
        let request = Request {
            root: root.clone(),
            target: "prompts".into(),
            source: Source::Version("0.1".into()),
        };
        let said = run(&request).unwrap();
        let ignore = std::fs::read_to_string(root.join(".gitignore")).unwrap();
        let attributes = std::fs::read_to_string(root.join(".gitattributes")).unwrap();
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(
            attributes,
            "*.sh text eol=lf\n# prompt-tester: images, documents and audio the cassettes name, stored \
             by their hash\nprompt-tests/cassettes/media/** binary\n"
        );
        assert!(
            said.contains(".gitattributes marks the media folder binary (prompt-tests/cassettes/media/** binary)"),
            "{said}"
        );
        assert_eq!(edit_gitattributes(Some(&attributes)), None, "once");
        assert_eq!(
            ignore,
            "/target\n# prompt-tester: recordings waiting for `cargo prompt-tester review`\n*.pending.json\n"
        );
        assert!(
            said.contains(".gitignore ignores pending recordings (*.pending.json)"),
            "{said}"
        );
        // Once: a file that ignores them already is left as it is; none is made.
        assert_eq!(edit_gitignore(Some("x\n*.pending.json\n")), None);
        assert_eq!(
            edit_gitignore(None).as_deref(),
            Some(
                "# prompt-tester: recordings waiting for `cargo prompt-tester review`\n*.pending.json\n"
            )
        );
    }
}
