//! The built-in list prices, USD per million tokens: prices/{anthropic,google,openai}.yml of the public
//! dataset pydantic/genai-prices (MIT) @ 47df840a, as TOML (data, not code) that `pricing` reads once.
//! The fields of a row:
//!
//! family      the model family id (dated and versioned ids map to it)
//! from        the day this price starts (absent: always); the latest start in force applies
//! checked     when the dataset's authors last checked the price
//! input, output, cache_read, cache_write
//!             the rates; a cache rate left out means the input rate applies
//! long        a long-context tier: its rates for prompts of more than `above` tokens

/// The table, TOML: `prices = [{ family = .., from = .., checked = .., input = .., .. }, ..]`.
pub(super) const PRICES: &str = r#"
prices = [
    # Anthropic (cache writes at the 5-minute rate).
    { family = "claude-3-haiku", checked = "2026-07-29", input = 0.25, output = 1.25, cache_read = 0.03, cache_write = 0.3 },
    { family = "claude-3-sonnet", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-3-opus", checked = "2026-07-29", input = 15.0, output = 75.0, cache_read = 1.5, cache_write = 18.75 },
    { family = "claude-3-5-haiku", checked = "2026-07-29", input = 0.8, output = 4.0, cache_read = 0.08, cache_write = 1.0 },
    { family = "claude-3-5-sonnet", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-3-7-sonnet", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-haiku-4-5", checked = "2026-07-29", input = 1.0, output = 5.0, cache_read = 0.1, cache_write = 1.25 },
    { family = "claude-sonnet-4", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-sonnet-4-0", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-sonnet-4-5", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75, long = { above = 200_000, input = 6.0, output = 22.5, cache_read = 0.6, cache_write = 7.5 } },
    # The >200k surcharge of claude-sonnet-4-6 and claude-opus-4-6 ended on 2026-03-13.
    { family = "claude-sonnet-4-6", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75, long = { above = 200_000, input = 6.0, output = 22.5, cache_read = 0.6, cache_write = 7.5 } },
    { family = "claude-sonnet-4-6", from = "2026-03-13", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-opus-4", checked = "2026-07-29", input = 15.0, output = 75.0, cache_read = 1.5, cache_write = 18.75 },
    { family = "claude-opus-4-0", checked = "2026-07-29", input = 15.0, output = 75.0, cache_read = 1.5, cache_write = 18.75 },
    { family = "claude-opus-4-1", checked = "2026-07-29", input = 15.0, output = 75.0, cache_read = 1.5, cache_write = 18.75 },
    { family = "claude-opus-4-5", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25 },
    { family = "claude-opus-4-6", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25, long = { above = 200_000, input = 10.0, output = 37.5, cache_read = 1.0, cache_write = 12.5 } },
    { family = "claude-opus-4-6", from = "2026-03-13", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25 },
    { family = "claude-opus-4-7", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25 },
    { family = "claude-opus-4-8", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25 },
    { family = "claude-opus-5", checked = "2026-07-29", input = 5.0, output = 25.0, cache_read = 0.5, cache_write = 6.25 },
    # Introductory price until 2026-08-31.
    { family = "claude-sonnet-5", checked = "2026-07-29", input = 2.0, output = 10.0, cache_read = 0.2, cache_write = 2.5 },
    { family = "claude-sonnet-5", from = "2026-09-01", checked = "2026-07-29", input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 },
    { family = "claude-fable-5", checked = "2026-07-29", input = 10.0, output = 50.0, cache_read = 1.0, cache_write = 12.5 },
    # Google (Gemini bills cache storage per hour, not per written token: no write rate).
    { family = "gemini-1.5-flash", checked = "2025-07-04", input = 0.075, output = 0.3, cache_read = 0.01875, long = { above = 128_000, input = 0.15, output = 0.6, cache_read = 0.0375 } },
    { family = "gemini-1.5-pro", checked = "2025-06-22", input = 1.25, output = 5.0, long = { above = 128_000, input = 2.5, output = 10.0 } },
    { family = "gemini-2.0-flash", checked = "2025-07-04", input = 0.1, output = 0.4, cache_read = 0.025 },
    { family = "gemini-2.0-flash-lite", checked = "2025-07-04", input = 0.075, output = 0.3 },
    { family = "gemini-2.5-flash", checked = "2025-10-31", input = 0.3, output = 2.5, cache_read = 0.03 },
    { family = "gemini-2.5-flash-lite", checked = "2025-10-31", input = 0.1, output = 0.4, cache_read = 0.01 },
    { family = "gemini-2.5-pro", checked = "2025-10-31", input = 1.25, output = 10.0, cache_read = 0.125, long = { above = 200_000, input = 2.5, output = 15.0, cache_read = 0.25 } },
    { family = "gemini-3-flash-preview", checked = "2025-12-19", input = 0.5, output = 3.0, cache_read = 0.05 },
    { family = "gemini-3-pro-preview", checked = "2025-11-18", input = 2.0, output = 12.0, cache_read = 0.2, long = { above = 200_000, input = 4.0, output = 18.0, cache_read = 0.4 } },
    { family = "gemini-3.1-flash-lite", checked = "2026-05-12", input = 0.25, output = 1.5, cache_read = 0.025 },
    { family = "gemini-3.1-pro-preview", checked = "2026-02-23", input = 2.0, output = 12.0, cache_read = 0.2, long = { above = 200_000, input = 4.0, output = 18.0, cache_read = 0.4 } },
    { family = "gemini-3.5-flash", checked = "2026-05-19", input = 1.5, output = 9.0, cache_read = 0.15 },
    { family = "gemini-3.5-flash-lite", checked = "2026-07-22", input = 0.3, output = 2.5, cache_read = 0.03 },
    # Introductory prices until 2026-12-31.
    { family = "gemini-3.6-flash", checked = "2026-08-13", input = 0.75, output = 3.75, cache_read = 0.075 },
    { family = "gemini-3.6-flash", from = "2027-01-01", checked = "2026-08-13", input = 1.5, output = 7.5, cache_read = 0.15 },
    { family = "gemini-3.7-flash", checked = "2026-08-13", input = 0.75, output = 3.75, cache_read = 0.075 },
    { family = "gemini-3.7-flash", from = "2027-01-01", checked = "2026-08-13", input = 1.5, output = 7.5, cache_read = 0.15 },
    # Gemini embeddings bill input only. The dataset's row carries no check date of its own: the date
    # here is the newest check in its Google file (the snapshot the row was taken from). The price page:
    # https://ai.google.dev/gemini-api/docs/pricing
    { family = "gemini-embedding-001", checked = "2026-08-13", input = 0.15, output = 0.0 },
    # OpenAI.
    { family = "gpt-3.5-turbo", checked = "2025-07-04", input = 0.5, output = 1.5 },
    { family = "gpt-4", checked = "2025-07-04", input = 30.0, output = 60.0 },
    { family = "gpt-4-turbo", checked = "2025-07-04", input = 10.0, output = 30.0 },
    { family = "gpt-4.1", checked = "2025-07-04", input = 2.0, output = 8.0, cache_read = 0.5 },
    { family = "gpt-4.1-mini", checked = "2025-07-04", input = 0.4, output = 1.6, cache_read = 0.1 },
    { family = "gpt-4.1-nano", checked = "2025-07-04", input = 0.1, output = 0.4, cache_read = 0.025 },
    { family = "gpt-4o", checked = "2025-07-04", input = 2.5, output = 10.0, cache_read = 1.25 },
    { family = "gpt-4o-mini", checked = "2025-07-04", input = 0.15, output = 0.6, cache_read = 0.075 },
    { family = "o1", checked = "2025-07-04", input = 15.0, output = 60.0, cache_read = 7.5 },
    { family = "o1-mini", checked = "2025-07-04", input = 1.1, output = 4.4, cache_read = 0.55 },
    # o3 dropped by 80% on 2025-06-10.
    { family = "o3", checked = "2025-07-12", input = 10.0, output = 40.0, cache_read = 0.5 },
    { family = "o3", from = "2025-06-10", checked = "2025-07-12", input = 2.0, output = 8.0, cache_read = 0.5 },
    { family = "o3-mini", checked = "2025-07-04", input = 1.1, output = 4.4, cache_read = 0.55 },
    { family = "o4-mini", checked = "2025-07-04", input = 1.1, output = 4.4, cache_read = 0.275 },
    { family = "gpt-5", checked = "2025-11-13", input = 1.25, output = 10.0, cache_read = 0.125 },
    { family = "gpt-5-mini", checked = "2025-11-13", input = 0.25, output = 2.0, cache_read = 0.025 },
    { family = "gpt-5-nano", checked = "2025-11-13", input = 0.05, output = 0.4, cache_read = 0.005 },
    { family = "gpt-5-pro", checked = "2025-11-13", input = 15.0, output = 120.0 },
    { family = "gpt-5.1", checked = "2025-11-13", input = 1.25, output = 10.0, cache_read = 0.125 },
    { family = "gpt-5.2", checked = "2025-12-11", input = 1.75, output = 14.0, cache_read = 0.175 },
    { family = "gpt-5.2-pro", checked = "2025-12-11", input = 21.0, output = 168.0 },
    { family = "gpt-5.3", checked = "2026-05-07", input = 1.75, output = 14.0, cache_read = 0.175 },
    { family = "gpt-5.4", checked = "2026-03-06", input = 2.5, output = 15.0, cache_read = 0.25, long = { above = 272_000, input = 5.0, output = 22.5, cache_read = 0.5 } },
    { family = "gpt-5.4-mini", checked = "2026-03-18", input = 0.75, output = 4.5, cache_read = 0.075 },
    { family = "gpt-5.4-nano", checked = "2026-03-18", input = 0.2, output = 1.25, cache_read = 0.02 },
    { family = "gpt-5.4-pro", checked = "2026-03-06", input = 30.0, output = 180.0, long = { above = 272_000, input = 60.0, output = 270.0 } },
    { family = "gpt-5.5", checked = "2026-04-24", input = 5.0, output = 30.0, cache_read = 0.5 },
    { family = "gpt-5.5-pro", checked = "2026-04-24", input = 30.0, output = 180.0 },
    { family = "gpt-5.6", checked = "2026-08-02", input = 5.0, output = 30.0, cache_read = 0.5, cache_write = 6.25, long = { above = 272_000, input = 10.0, output = 45.0, cache_read = 1.0, cache_write = 12.5 } },
    { family = "gpt-5.6-sol", checked = "2026-08-02", input = 5.0, output = 30.0, cache_read = 0.5, cache_write = 6.25, long = { above = 272_000, input = 10.0, output = 45.0, cache_read = 1.0, cache_write = 12.5 } },
    # Luna and Terra prices dropped on 2026-07-30.
    { family = "gpt-5.6-luna", checked = "2026-08-02", input = 1.0, output = 6.0, cache_read = 0.1, cache_write = 1.25, long = { above = 272_000, input = 2.0, output = 9.0, cache_read = 0.2, cache_write = 2.5 } },
    { family = "gpt-5.6-luna", from = "2026-07-30", checked = "2026-08-02", input = 0.2, output = 1.2, cache_read = 0.02, cache_write = 0.25, long = { above = 272_000, input = 0.4, output = 1.8, cache_read = 0.04, cache_write = 0.5 } },
    { family = "gpt-5.6-terra", checked = "2026-08-02", input = 2.5, output = 15.0, cache_read = 0.25, cache_write = 3.125, long = { above = 272_000, input = 5.0, output = 22.5, cache_read = 0.5, cache_write = 6.25 } },
    # Embeddings bill input only.
    { family = "text-embedding-3-small", checked = "2025-07-04", input = 0.02, output = 0.0 },
    { family = "text-embedding-3-large", checked = "2025-07-04", input = 0.13, output = 0.0 },
    { family = "gpt-5.6-terra", from = "2026-07-30", checked = "2026-08-02", input = 2.0, output = 12.0, cache_read = 0.2, cache_write = 2.5, long = { above = 272_000, input = 4.0, output = 18.0, cache_read = 0.4, cache_write = 5.0 } },
]
"#;
