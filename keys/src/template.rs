//! The grammar of `{placeholder}`s in a prompt template, one for the library's rendering and the
//! attribute's compile-time check that every placeholder has a value.

/// `Some(name)` when `s` (the text after a `{`) starts with `name}` and `name` is an identifier
/// (`{ }`, `{1}` and JSON's braces are not placeholders).
pub fn placeholder_name(s: &str) -> Option<&str> {
    let end = s.find('}')?;
    let name = &s[..end];
    let mut chars = name.chars();
    let first = chars.next()?;
    let ident = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some(name)
}

/// The names of every placeholder in `template`, each once, in order of first appearance.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match placeholder_name(after) {
            Some(name) => {
                if !names.contains(&name) {
                    names.push(name);
                }
                rest = &after[name.len() + 1..];
            }
            None => rest = after,
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_identifiers_in_braces_are_placeholders() {
        assert_eq!(
            placeholders("{a} {\"k\": 1} { b } {9} {a} {_c1}{{d}}"),
            ["a", "_c1", "d"]
        );
    }
}
