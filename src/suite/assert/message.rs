//! The text of failure details: what the output was, quoted and shortened.

use crate::render::shorten;

/// The most characters of the output a failure quotes.
const SEEN: usize = 160;

/// The output, shortened, quoted and escaped onto one line.
pub(super) fn seen(output: &str) -> String {
    format!("{:?}", shorten(output, SEEN))
}

/// The end of the output, shortened from the front.
pub(super) fn seen_tail(output: &str) -> String {
    let output = output.trim();
    let n = output.chars().count();
    if n <= SEEN {
        return format!("{output:?}");
    }
    let tail: String = output.chars().skip(n - (SEEN - 1)).collect();
    format!("\"…{}", &format!("{tail:?}")[1..])
}

/// Around the first occurrence of `needle` (a byte range of `output`).
pub(super) fn seen_around(output: &str, start: usize, end: usize) -> String {
    let before: String = output[..start]
        .chars()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let after: String = output[end..].chars().take(40).collect();
    let lead = if before.len() < start { "…" } else { "" };
    let trail = if after.len() < output.len() - end {
        "…"
    } else {
        ""
    };
    format!(
        "{:?}",
        format!("{lead}{before}{}{after}{trail}", &output[start..end])
    )
}

/// The items quoted and escaped, joined by commas.
pub(super) fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The plural ending for a count of `n`.
pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
