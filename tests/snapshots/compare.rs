//! The snapshots compared with the committed files, or written anew when asked.

use std::path::Path;

/// The variable that says what to do with the snapshots.
pub const VAR: &str = "PROMPT_TESTER_SNAPSHOTS";

/// The command that writes the snapshots anew.
pub const UPDATE: &str =
    "PROMPT_TESTER_SNAPSHOTS=overwrite cargo test -p prompt-tester-tests --test snapshots";

/// What `PROMPT_TESTER_SNAPSHOTS` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Unset or `compare`: a difference fails the test.
    Compare,
    /// `overwrite`: the committed files are replaced by this run's.
    Overwrite,
}

impl Mode {
    /// The mode `value` names; anything else is an error naming the variable and its values.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.trim() {
            "compare" => Ok(Self::Compare),
            "overwrite" => Ok(Self::Overwrite),
            other => Err(format!(
                "{VAR}={other:?} is not a mode: use overwrite (write the snapshots anew) or compare (the \
                 default), or unset it"
            )),
        }
    }

    /// The mode of this run, from `PROMPT_TESTER_SNAPSHOTS`.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(VAR) {
            Ok(value) => Self::parse(&value),
            Err(std::env::VarError::NotPresent) => Ok(Self::Compare),
            Err(std::env::VarError::NotUnicode(value)) => {
                Err(format!("{VAR}={value:?} is not UTF-8"))
            }
        }
    }
}

/// One file's expected text: its path under the snapshots' folder and the redacted text.
#[derive(Debug)]
pub struct Snapshot {
    pub name: String,
    pub text: String,
}

impl Snapshot {
    pub fn new(name: &str, text: String) -> Self {
        Self {
            name: name.to_string(),
            text,
        }
    }
}

/// Compares `snapshots` with the files in `dir` (every file there must be one of them), or, in
/// [`Mode::Overwrite`], makes `dir` hold exactly them.
pub fn check(mode: Mode, dir: &Path, snapshots: &[Snapshot]) {
    let committed = files_under(dir);
    if mode == Mode::Overwrite {
        for stale in committed
            .iter()
            .filter(|f| !snapshots.iter().any(|s| &s.name == *f))
        {
            std::fs::remove_file(dir.join(stale)).unwrap();
        }
        for snapshot in snapshots {
            let path = dir.join(&snapshot.name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &snapshot.text).unwrap();
        }
        eprintln!(
            "{VAR}=overwrite: wrote {} snapshots in {}",
            snapshots.len(),
            dir.display()
        );
        return;
    }
    let mut problems = Vec::new();
    for snapshot in snapshots {
        match std::fs::read_to_string(dir.join(&snapshot.name)) {
            Ok(expected) if expected == snapshot.text => {}
            Ok(expected) => problems.push(format!(
                "{} differs (- committed, + this run):\n{}",
                snapshot.name,
                diff(&expected, &snapshot.text)
            )),
            Err(e) => problems.push(format!("{}: no committed snapshot ({e})", snapshot.name)),
        }
    }
    for gone in committed
        .iter()
        .filter(|f| !snapshots.iter().any(|s| &s.name == *f))
    {
        problems.push(format!(
            "{gone}: committed, but this run wrote no such file"
        ));
    }
    assert!(
        problems.is_empty(),
        "{} snapshot(s) of {} differ:\n\n{}\n\nIf the change is intended, write them anew and review the \
         diff before committing:\n    {UPDATE}",
        problems.len(),
        dir.display(),
        problems.join("\n\n")
    );
}

/// The files under `dir`, as paths relative to it with `/` between folders, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap();
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                found.push(parts.join("/"));
            }
        }
    }
    found.sort();
    found
}

/// The changed lines with three of context; a line longer than 200 characters (the HTML page's data
/// is one) is shown around its first difference from the line it replaces.
fn diff(expected: &str, actual: &str) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual);
    let (old, new) = (diff.old_slices(), diff.new_slices());
    let mut out = String::new();
    for group in diff.grouped_ops(3) {
        out.push_str("@@\n");
        for op in group {
            let (olds, news) = (op.old_range(), op.new_range());
            for change in diff.iter_changes(&op) {
                // The line on the other side at the same place in this change, if there is one.
                let (sign, counterpart) = match change.tag() {
                    similar::ChangeTag::Delete => {
                        let at = change.old_index().unwrap() - olds.start;
                        ('-', news.clone().nth(at).map(|i| new[i]))
                    }
                    similar::ChangeTag::Insert => {
                        let at = change.new_index().unwrap() - news.start;
                        ('+', olds.clone().nth(at).map(|i| old[i]))
                    }
                    similar::ChangeTag::Equal => (' ', None),
                };
                out.push(sign);
                out.push_str(&shorten(change.value(), counterpart.unwrap_or("")));
                if !change.value().ends_with('\n') {
                    out.push_str(" [no newline at the end]");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// `line` without its end, or, when it is long, the part of it around where it first differs from
/// `other`.
fn shorten(line: &str, other: &str) -> String {
    const LONG: usize = 200;
    let line = line.strip_suffix('\n').unwrap_or(line);
    if line.chars().count() <= LONG {
        return line.to_string();
    }
    let at = line
        .char_indices()
        .zip(other.chars())
        .find(|((_, a), b)| a != b)
        .map_or(line.len().min(other.len()), |((i, _), _)| i);
    let from = floor(line, at.saturating_sub(80));
    let to = floor(line, (at + 120).min(line.len()));
    format!(
        "[{} characters, from byte {from}:] …{}…",
        line.chars().count(),
        &line[from..to]
    )
}

/// The nearest char boundary of `text` at or before `at`.
fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_one_of_two_words() {
        assert_eq!(Mode::parse("overwrite"), Ok(Mode::Overwrite));
        assert_eq!(Mode::parse("compare"), Ok(Mode::Compare));
        let err = Mode::parse("1").unwrap_err();
        assert!(
            err.contains("PROMPT_TESTER_SNAPSHOTS=\"1\" is not a mode"),
            "{err}"
        );
    }

    #[test]
    fn a_long_line_is_shown_around_its_first_difference() {
        let expected = format!("head\n{}A{}\n", "x".repeat(300), "y".repeat(300));
        let actual = format!("head\n{}B{}\n", "x".repeat(300), "y".repeat(300));
        let around = |c: char| format!("{}{c}{}", "x".repeat(80), "y".repeat(119));
        let want = format!(
            "@@\n head\n-[601 characters, from byte 220:] …{}…\n+[601 characters, from byte 220:] …{}…\n",
            around('A'),
            around('B')
        );
        assert_eq!(diff(&expected, &actual), want);
    }

    #[test]
    fn a_short_line_is_shown_whole() {
        assert_eq!(diff("a\nb\nc\n", "a\nB\nc\n"), "@@\n a\n-b\n+B\n c\n");
    }
}
