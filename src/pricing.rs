//! List prices (USD per million tokens) and the cost of a call.
//!
//! The built-in table, `src/pricing/table.rs` (TOML data, one row a price), carries the list prices
//! of the public dataset pydantic/genai-prices (MIT), commit 47df840a, each with the date its
//! authors last checked it (`checked`). Configuration
//! (`[prices."model-id"]`) overrides or extends it.
//!
//! - A dated or suffixed id maps to its family by the longest known prefix that ends on a `-`, `@` or
//!   `:` boundary, when what follows is a date or version (`claude-haiku-4-5-20251001`,
//!   `gpt-4o-2024-08-06`, `gemini-2.5-pro-preview-03-25`, `claude-3-opus-latest`). A suffix naming
//!   another product (`gpt-4o-audio-preview`, `o3-pro`, `gemini-2.5-flash-image`) does not match, so
//!   such a model stays unpriced rather than priced wrongly.
//! - Cache reads and writes have their own rates; Anthropic cache writes are priced at the 5-minute
//!   rate (the usage does not say which lifetime was written). Thinking is already in output tokens.
//! - Long-context tiers (e.g. past 200k prompt tokens for claude-sonnet-4-5 and gemini-2.5-pro,
//!   272k for gpt-5.4): [`price_for`] gives the base tier, [`price_for_prompt`] applies the tier by
//!   the prompt's size, and [`cost_of`] does both in one step.
//! - Announced price changes are kept with their start date; the price in force today applies.
//!
//! Its layer and the path of a sample through it: `docs/architecture.md`.

mod table;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::completion::CompletionResult;

/// The price of one model, USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Uncached input.
    pub input_mtok: f64,
    /// Output (thinking included).
    pub output_mtok: f64,
    /// Cache reads (defaults to the input price).
    #[serde(default)]
    pub cache_read_mtok: Option<f64>,
    /// Cache writes (defaults to the input price).
    #[serde(default)]
    pub cache_write_mtok: Option<f64>,
    /// When the price was checked.
    #[serde(default)]
    pub checked: Option<String>,
}

impl Price {
    /// $0 for every token: the price of any model on a self-hosted endpoint (`free = true`).
    pub fn free() -> Self {
        Self {
            input_mtok: 0.0,
            output_mtok: 0.0,
            cache_read_mtok: None,
            cache_write_mtok: None,
            checked: None,
        }
    }
}

/// The cost of `result` at `price`.
pub fn cost(result: &CompletionResult, price: &Price) -> f64 {
    let cached = result.cached_input_tokens as f64;
    let written = result.cache_creation_tokens as f64;
    let uncached = (result.input_tokens as f64 - cached - written).max(0.0);
    (uncached * price.input_mtok
        + cached * price.cache_read_mtok.unwrap_or(price.input_mtok)
        + written * price.cache_write_mtok.unwrap_or(price.input_mtok)
        + result.output_tokens as f64 * price.output_mtok)
        / 1_000_000.0
}

/// The cost of an embeddings call of `input_tokens` at `price`: input only. Unknown when the price
/// is, or when the provider did not count the tokens of a call that is not free.
pub fn embedding_cost(price: Option<&Price>, input_tokens: Option<u64>) -> Option<f64> {
    let price = price?;
    let tokens = match input_tokens {
        Some(tokens) => tokens,
        // $0 a token costs $0 whatever the count.
        None if price.input_mtok == 0.0 => 0,
        None => return None,
    };
    Some(tokens as f64 * price.input_mtok / 1_000_000.0)
}

/// The list price of `model` (dated ids map to their family), overrides first. Long-context tiers
/// are not applied: see [`price_for_prompt`].
pub fn price_for(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    lookup(model, None, overrides, &today())
}

/// The price of `model` for a prompt of `prompt_tokens` (cached ones included), with the model's
/// long-context tier when the prompt is past it. Overrides apply as they are (they have no tiers).
pub fn price_for_prompt(
    model: &str,
    prompt_tokens: u64,
    overrides: &BTreeMap<String, Price>,
) -> Option<Price> {
    lookup(model, Some(prompt_tokens), overrides, &today())
}

/// The cost of `result` from `model`, with the tier its prompt size falls in; `None` when the
/// model's price is unknown.
pub fn cost_of(
    model: &str,
    result: &CompletionResult,
    overrides: &BTreeMap<String, Price>,
) -> Option<f64> {
    price_for_prompt(model, result.input_tokens, overrides).map(|price| cost(result, &price))
}

/// Today's date, `YYYY-MM-DD` (UTC), to pick the price period in force.
fn today() -> String {
    crate::utc::Utc::now().date()
}

/// One built-in price (a row of [`table::PRICES`], whose module describes the fields).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceRow {
    family: String,
    /// The day the price starts, `YYYY-MM-DD`; empty for always.
    #[serde(default)]
    from: String,
    checked: String,
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    long: Option<LongTier>,
}

/// The rates for prompts of more than `above` tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct LongTier {
    above: u64,
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

impl PriceRow {
    /// The price for a prompt of `prompt_tokens` (the base tier when unknown).
    fn price(&self, prompt_tokens: Option<u64>) -> Price {
        let (input_mtok, output_mtok, cache_read_mtok, cache_write_mtok) = match self.long {
            Some(tier) if prompt_tokens.is_some_and(|n| n > tier.above) => {
                (tier.input, tier.output, tier.cache_read, tier.cache_write)
            }
            _ => (self.input, self.output, self.cache_read, self.cache_write),
        };
        Price {
            input_mtok,
            output_mtok,
            cache_read_mtok,
            cache_write_mtok,
            checked: Some(self.checked.clone()),
        }
    }
}

/// The built-in table: data, not code, read once.
static TABLE: LazyLock<Vec<PriceRow>> = LazyLock::new(|| {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct PricesFile {
        prices: Vec<PriceRow>,
    }
    // Compiled in and checked by the tests below: it cannot fail at a user's.
    toml::from_str::<PricesFile>(table::PRICES)
        .expect("the price table in src/pricing/table.rs is valid TOML")
        .prices
});

/// Words allowed right after a family id: versions and channels of the same model, not other
/// products (`audio`, `realtime`, `pro`, `mini`, `image`, ... are not here on purpose).
const SAME_MODEL_WORDS: &[&str] = &[
    "latest",
    "preview",
    "exp",
    "experimental",
    "chat",
    "codex",
    "thinking",
];

/// Whether `rest`, what follows a family id in a model id, names a version of that same model.
fn is_version_suffix(rest: &str) -> bool {
    if rest.is_empty() {
        return true;
    }
    let Some(body) = rest.strip_prefix(['-', '@', ':']) else {
        return false;
    };
    let mut tokens = body.split(['-', '@', ':', '.']).filter(|t| !t.is_empty());
    let Some(first) = tokens.next() else {
        return false;
    };
    let is_digits = |t: &str| t.chars().all(|c| c.is_ascii_digit());
    let is_version = |t: &str| t.len() >= 2 && t.starts_with('v') && is_digits(&t[1..]);
    // A lone short number right after the family is a different model (claude-opus-4 vs
    // claude-opus-4-1); dates and build numbers are at least three digits (20250514, 2024, 001).
    let first_ok = (is_digits(first) && first.len() >= 3)
        || SAME_MODEL_WORDS.contains(&first)
        || is_version(first);
    first_ok && tokens.all(|t| is_digits(t) || SAME_MODEL_WORDS.contains(&t) || is_version(t))
}

/// How well `family` fits `model`: its length when `model` is `family` plus a version suffix.
fn fit(model: &str, family: &str) -> Option<usize> {
    let rest = model.strip_prefix(family)?;
    is_version_suffix(rest).then_some(family.len())
}

fn lookup(
    model: &str,
    prompt_tokens: Option<u64>,
    overrides: &BTreeMap<String, Price>,
    today: &str,
) -> Option<Price> {
    let model = model.trim();
    if let Some(price) = overrides.get(model) {
        return Some(price.clone());
    }
    let normalized = model.trim_start_matches("models/").to_ascii_lowercase();
    let best_override = overrides
        .iter()
        .filter_map(|(family, price)| {
            fit(&normalized, &family.to_ascii_lowercase()).map(|len| (len, price))
        })
        .max_by_key(|(len, _)| *len);
    let best_builtin = TABLE
        .iter()
        .filter(|entry| entry.from.is_empty() || entry.from.as_str() <= today)
        .filter_map(|entry| fit(&normalized, &entry.family).map(|len| (len, entry)))
        // Longest family first; among periods of one family, the latest start in force.
        .max_by(|(la, a), (lb, b)| la.cmp(lb).then_with(|| a.from.cmp(&b.from)));
    match (best_override, best_builtin) {
        (Some((lo, price)), Some((lb, _))) if lo >= lb => Some(price.clone()),
        (Some((_, price)), None) => Some(price.clone()),
        (_, Some((_, entry))) => Some(entry.price(prompt_tokens)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(model: &str) -> Option<Price> {
        lookup(model, None, &BTreeMap::new(), "2026-11-29")
    }

    fn rates(model: &str) -> Option<(f64, f64)> {
        builtin(model).map(|p| (p.input_mtok, p.output_mtok))
    }

    /// The table parses, and every row is dated and priced sensibly.
    #[test]
    fn the_table_is_well_formed() {
        assert_eq!(TABLE.len(), 78);
        let is_date = |d: &str| {
            d.len() == 10
                && d.chars().enumerate().all(|(i, c)| {
                    if i == 4 || i == 7 {
                        c == '-'
                    } else {
                        c.is_ascii_digit()
                    }
                })
        };
        for entry in TABLE.iter() {
            assert!(!entry.family.is_empty());
            assert!(is_date(&entry.checked), "{entry:?}");
            assert!(entry.from.is_empty() || is_date(&entry.from), "{entry:?}");
            assert!(entry.input >= 0.0 && entry.output >= 0.0, "{entry:?}");
        }
    }

    #[test]
    fn an_embedding_costs_its_input_tokens_and_is_unknown_without_them() {
        let small = builtin("text-embedding-3-small").unwrap();
        let cost = embedding_cost(Some(&small), Some(1_000_000)).unwrap();
        assert!((cost - 0.02).abs() < 1e-12, "{cost}");
        assert_eq!(embedding_cost(Some(&small), None), None);
        assert_eq!(embedding_cost(None, Some(5)), None);
        assert_eq!(embedding_cost(Some(&Price::free()), None), Some(0.0));
    }

    #[test]
    fn families_and_dated_ids() {
        assert_eq!(rates("claude-haiku-4-5"), Some((1.0, 5.0)));
        assert_eq!(rates("claude-haiku-4-5-20251001"), Some((1.0, 5.0)));
        assert_eq!(rates("claude-sonnet-4-6"), Some((3.0, 15.0)));
        assert_eq!(rates("claude-opus-4-7"), Some((5.0, 25.0)));
        assert_eq!(rates("claude-opus-4-20250514"), Some((15.0, 75.0)));
        assert_eq!(rates("claude-opus-4@20250514"), Some((15.0, 75.0)));
        assert_eq!(rates("claude-3-opus-latest"), Some((15.0, 75.0)));
        assert_eq!(rates("claude-3-5-sonnet-v2@20241022"), Some((3.0, 15.0)));
        assert_eq!(rates("gpt-4o-2024-08-06"), Some((2.5, 10.0)));
        assert_eq!(rates("gpt-4o-mini-2024-07-18"), Some((0.15, 0.6)));
        assert_eq!(rates("o3-mini-2025-01-31"), Some((1.1, 4.4)));
        assert_eq!(rates("gpt-5-chat-latest"), Some((1.25, 10.0)));
        assert_eq!(rates("gemini-2.5-flash"), Some((0.3, 2.5)));
        assert_eq!(rates("models/gemini-2.5-pro"), Some((1.25, 10.0)));
        assert_eq!(rates("gemini-2.5-pro-preview-03-25"), Some((1.25, 10.0)));
        assert_eq!(rates("gemini-2.0-flash-001"), Some((0.1, 0.4)));
        assert_eq!(rates("gemini-2.0-flash-lite"), Some((0.075, 0.3)));
        assert_eq!(rates("gemini-3.1-flash-lite-preview"), Some((0.25, 1.5)));
        assert_eq!(rates("text-embedding-3-small"), Some((0.02, 0.0)));
        assert_eq!(rates("text-embedding-3-large"), Some((0.13, 0.0)));
        assert_eq!(rates("models/gemini-embedding-001"), Some((0.15, 0.0)));
        assert_eq!(
            builtin("claude-haiku-4-5").unwrap().checked.as_deref(),
            Some("2026-07-29")
        );
        assert_eq!(
            builtin("claude-haiku-4-5").unwrap().cache_read_mtok,
            Some(0.1)
        );
        assert_eq!(
            builtin("claude-haiku-4-5").unwrap().cache_write_mtok,
            Some(1.25)
        );
    }

    #[test]
    fn other_products_and_unknown_models_are_unpriced() {
        for model in [
            "gpt-4o-audio-preview",
            "gpt-4o-realtime-preview",
            "o3-pro",
            "gemini-2.5-flash-image",
            "claude-opus-4-9",
            "gpt-5.7",
            "gpt-4-32k",
            "qwen3:0.6b",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "",
        ] {
            assert_eq!(builtin(model), None, "{model}");
        }
    }

    #[test]
    fn periods_follow_the_date() {
        let at = |model: &str, day: &str| {
            lookup(model, None, &BTreeMap::new(), day).map(|p| p.input_mtok)
        };
        assert_eq!(at("claude-sonnet-5", "2026-08-31"), Some(2.0));
        assert_eq!(at("claude-sonnet-5", "2026-09-01"), Some(3.0));
        assert_eq!(at("gemini-3.6-flash", "2026-12-31"), Some(0.75));
        assert_eq!(at("gemini-3.6-flash", "2027-01-01"), Some(1.5));
        assert_eq!(at("o3", "2026-01-01"), Some(2.0));
    }

    #[test]
    fn long_context_tiers() {
        let none = BTreeMap::new();
        let small = lookup(
            "claude-sonnet-4-5-20250929",
            Some(200_000),
            &none,
            "2026-11-29",
        )
        .unwrap();
        assert_eq!((small.input_mtok, small.output_mtok), (3.0, 15.0));
        let big = lookup(
            "claude-sonnet-4-5-20250929",
            Some(200_001),
            &none,
            "2026-11-29",
        )
        .unwrap();
        assert_eq!(
            (big.input_mtok, big.output_mtok, big.cache_read_mtok),
            (6.0, 22.5, Some(0.6))
        );
        // The 4-6 surcharge is gone after 2026-03-13.
        let flat = lookup("claude-sonnet-4-6", Some(500_000), &none, "2026-11-29").unwrap();
        assert_eq!(flat.input_mtok, 3.0);
        let before = lookup("claude-sonnet-4-6", Some(500_000), &none, "2026-03-12").unwrap();
        assert_eq!(before.input_mtok, 6.0);
        let gemini = lookup("gemini-2.5-pro", Some(250_000), &none, "2026-11-29").unwrap();
        assert_eq!((gemini.input_mtok, gemini.output_mtok), (2.5, 15.0));
    }

    #[test]
    fn overrides_win_and_map_dated_ids() {
        let mut overrides = BTreeMap::new();
        let mine = Price {
            input_mtok: 9.0,
            output_mtok: 9.0,
            cache_read_mtok: None,
            cache_write_mtok: None,
            checked: None,
        };
        overrides.insert("claude-haiku-4-5".to_string(), mine.clone());
        overrides.insert("gpt-4o".to_string(), mine.clone());
        overrides.insert("my-local-model".to_string(), mine.clone());
        assert_eq!(
            price_for("claude-haiku-4-5", &overrides),
            Some(mine.clone())
        );
        assert_eq!(
            price_for("claude-haiku-4-5-20251001", &overrides),
            Some(mine.clone())
        );
        assert_eq!(price_for("my-local-model", &overrides), Some(mine.clone()));
        // An override of gpt-4o does not capture gpt-4o-mini, which the table knows better.
        assert_eq!(
            price_for("gpt-4o-mini", &overrides).unwrap().input_mtok,
            0.15
        );
        assert_eq!(
            price_for_prompt("claude-haiku-4-5", 1_000_000, &overrides),
            Some(mine)
        );
    }

    #[test]
    fn cost_counts_cache_reads_writes_and_output() {
        let price = builtin("claude-haiku-4-5").unwrap();
        let result = CompletionResult {
            input_tokens: 1_000_000 + 2_000_000 + 4_000_000,
            cached_input_tokens: 2_000_000,
            cache_creation_tokens: 4_000_000,
            output_tokens: 1_000_000,
            ..CompletionResult::default()
        };
        // 1M uncached at $1 + 2M read at $0.10 + 4M written at $1.25 + 1M out at $5.
        assert!((cost(&result, &price) - (1.0 + 0.2 + 5.0 + 5.0)).abs() < 1e-9);
        assert_eq!(cost_of("nope", &result, &BTreeMap::new()), None);
    }
}
