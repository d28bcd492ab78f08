//! "Did you mean ...?" for misspelt keys.

/// The candidate closest to `word`, if one is close enough to be a likely typo or a familiar short name
/// (`model` for `subject_model`, `vars` for `target_prompt_vars`).
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let by_distance = candidates
        .iter()
        .map(|c| (strsim::levenshtein(word, c), *c))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= (word.chars().count() / 3).max(2))
        .map(|(_, c)| c);
    if by_distance.is_some() {
        return by_distance;
    }
    // Not a typo but a part or an extension of a key: `prompt`, `threshold`, `system_prompt`. Of several
    // keys containing the word, the shortest is the plainest choice (`target_prompt` for `prompt`).
    candidates
        .iter()
        .filter(|c| {
            let segments_match = contains_segments(c, word) || contains_segments(word, c);
            segments_match || (word.len() >= 3 && c.starts_with(word))
        })
        .min_by_key(|c| c.len())
        .copied()
}

/// Whether `word`'s `_`-separated parts appear, consecutively and whole, among `key`'s parts.
fn contains_segments(key: &str, word: &str) -> bool {
    let key: Vec<&str> = key.split('_').collect();
    let word: Vec<&str> = word.split('_').filter(|s| !s.is_empty()).collect();
    !word.is_empty() && key.windows(word.len()).any(|w| w == word.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    use prompt_tester_keys::{Place, names_in};

    /// The distance the suggestions rank by: Levenshtein, counted in chars (strsim's).
    #[test]
    fn distance_counts_edits() {
        let edit_distance = strsim::levenshtein;
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("runs", "runs"), 0);
        assert_eq!(edit_distance("run", "runs"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("tokens", "max_tokens"), 4);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn suggests_typos_and_familiar_short_names() {
        let keys = names_in(Place::Attribute);
        let keys = keys.as_slice();
        assert_eq!(closest("run", keys), Some("runs"));
        assert_eq!(closest("pass_treshold", keys), Some("pass_threshold"));
        assert_eq!(closest("max_token", keys), Some("max_tokens"));
        assert_eq!(closest("model", keys), Some("subject_model"));
        assert_eq!(closest("provider", keys), Some("subject_provider"));
        assert_eq!(closest("prompt", keys), Some("target_prompt"));
        assert_eq!(closest("vars", keys), Some("target_prompt_vars"));
        assert_eq!(closest("threshold", keys), Some("pass_threshold"));
        assert_eq!(closest("system_prompt", keys), Some("system"));
        assert_eq!(closest("temp", keys), Some("temperature"));
        assert_eq!(closest("cache", keys), Some("judge_prompt_cache"));
    }

    #[test]
    fn suggests_nothing_for_unrelated_words() {
        let keys = names_in(Place::Attribute);
        let keys = keys.as_slice();
        assert_eq!(closest("banana", keys), None);
        assert_eq!(closest("x", keys), None);
        assert_eq!(closest("timeout", keys), None);
    }
}
