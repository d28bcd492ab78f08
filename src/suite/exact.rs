//! Pure: a TOML suite as a `--exact` process needs it. nextest runs one trial per process; parsing
//! every case of a large suite in each made the run's cost grow with the square of its cases. With
//! one case wanted, every other `[[cases]]` table is blanked (its bytes become spaces, its line ends
//! kept), so the parser reads the suite's own keys and that case only, and every position it reports
//! (byte, line, column) is the file's. When the file's shape is not plain enough to blank safely
//! (multi-line strings) or the case is not found once, the caller parses the whole file.

/// `text` with every `[[cases]]` table but the one named `wanted` blanked, or `None` when unsure.
pub(crate) fn only_case(text: &str, wanted: &str) -> Option<String> {
    // A header inside a multi-line string is not one: such files are parsed whole.
    if text.contains("\"\"\"") || text.contains("'''") {
        return None;
    }
    let mut blank: Vec<std::ops::Range<usize>> = Vec::new();
    // The case being read: where it starts, and whether it is the wanted one.
    let mut case: Option<(usize, bool)> = None;
    let mut found = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            let is_case = t
                .strip_prefix("[[cases]]")
                .is_some_and(|rest| rest.trim().is_empty() || rest.trim_start().starts_with('#'));
            let inside_case = t.starts_with("[cases.") || t.starts_with("[[cases.");
            if is_case || !inside_case {
                if let Some((start, false)) = case.take() {
                    blank.push(start..offset);
                }
                if is_case {
                    case = Some((offset, false));
                }
            }
        } else if let Some((_, keep)) = &mut case
            && name_of(t) == Some(wanted)
        {
            *keep = true;
            found += 1;
        }
        offset += line.len();
    }
    if let Some((start, false)) = case {
        blank.push(start..offset);
    }
    if found != 1 {
        return None;
    }
    let mut out = text.as_bytes().to_vec();
    for range in blank {
        for byte in &mut out[range] {
            if *byte != b'\n' && *byte != b'\r' {
                *byte = b' ';
            }
        }
    }
    // Only ASCII bytes of whole lines were replaced by spaces: still UTF-8.
    String::from_utf8(out).ok()
}

/// The name a `name = "..."` line gives (a plain string: no escapes).
fn name_of(line: &str) -> Option<&str> {
    let value = line
        .strip_prefix("name")?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    let inner = value.strip_prefix('"')?;
    let end = inner.find('"')?;
    let (name, rest) = (&inner[..end], inner[end + 1..].trim());
    (!name.contains('\\') && (rest.is_empty() || rest.starts_with('#'))).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = "prompt = \"Hi {x}\"\n\n[[cases]]\nname = \"a\"\ninputs = { x = \"é\" }\n\n\
                         [[cases]] # second\nname = \"b\"\n[cases.inputs]\nx = \"2\"\n\n[[cases]]\nname = \"c\"\n";

    #[test]
    fn other_cases_become_spaces_keeping_every_position() {
        let only = only_case(SUITE, "b").unwrap();
        assert_eq!(only.len(), SUITE.len());
        assert_eq!(only.lines().count(), SUITE.lines().count());
        assert!(only.contains("[[cases]] # second\nname = \"b\"\n[cases.inputs]\nx = \"2\"\n"));
        assert!(!only.contains("name = \"a\"") && !only.contains("name = \"c\""));
        assert!(only.starts_with("prompt = \"Hi {x}\"\n"));
        // What is kept sits where it was.
        assert_eq!(only.find("name = \"b\""), SUITE.find("name = \"b\""));
    }

    #[test]
    fn unsure_files_are_left_to_the_whole_parse() {
        // No such case, or two of that name: the whole parse says what is wrong.
        assert_eq!(only_case(SUITE, "z"), None);
        assert_eq!(
            only_case(&format!("{SUITE}[[cases]]\nname = \"a\"\n"), "a"),
            None
        );
        // A multi-line string may hold a line that looks like a header.
        assert_eq!(
            only_case(&format!("system = \"\"\"\n[[cases]]\n\"\"\"\n{SUITE}"), "a"),
            None
        );
        assert_eq!(only_case(&format!("x = '''\n'''\n{SUITE}"), "a"), None);
    }
}
