//! What is wrong with a suite file, where (`file:line:column`), and how to fix it.

use std::fmt;
use std::ops::Range;

/// One problem in a suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Byte range in the file that the problem points at.
    pub span: Range<usize>,
    /// The key path (`cases[0].assert[1]`), or `""` for a syntax error.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl Problem {
    /// A problem at `span` for `key`.
    pub fn new(
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            span,
            key: key.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The problems of one file, rendered as `file:line:column: key: message`, the source line with a
/// caret under the column, then the fix.
pub struct Report<'a> {
    /// The file as shown (relative to the crate root).
    pub file: &'a str,
    /// The file's text.
    pub text: &'a str,
    /// The problems, in file order.
    pub problems: &'a [Problem],
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "{} has {n} problem{}; no case of this suite ran:",
            self.file,
            if n == 1 { "" } else { "s" }
        )?;
        for p in self.problems {
            let (line, column) = line_column(self.text, p.span.start);
            let key = if p.key.is_empty() {
                String::new()
            } else {
                format!(" `{}`:", p.key)
            };
            writeln!(f, "{}:{line}:{column}:{key} {}", self.file, p.message)?;
            if let Some(source) = self.text.lines().nth(line - 1) {
                let gutter = line.to_string();
                writeln!(f, "{gutter} | {source}")?;
                let pad: String = source
                    .chars()
                    .take(column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                writeln!(f, "{} | {pad}^", " ".repeat(gutter.len()))?;
            }
            writeln!(f, "  fix: {}", p.fix)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // `=` after a two-byte character is the 4th character of line 2.
        assert_eq!(line_column(text, 10), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
    }
}
