//! The `[providers.NAME]` and `[prices."MODEL"]` tables of `prompt-tester.toml`: each endpoint and price
//! read and checked where it is written.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::{Config, ConfigError, ConfigSource, EndpointConfig, WireFormat, env_var};
use crate::pricing::Price;

/// A `[providers.NAME]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileProvider {
    /// The wire format; a named endpoint speaks OpenAI's when it is not written.
    kind: Option<Spanned<WireFormat>>,
    base_url: Option<String>,
    /// An environment variable that, when set, overrides `base_url`.
    base_url_env: Option<String>,
    /// Where the endpoint's embeddings are served, when not at `base_url` (a second llama-server).
    embeddings_base_url: Option<String>,
    /// An environment variable that, when set, overrides `embeddings_base_url`.
    embeddings_base_url_env: Option<String>,
    api_key_env: Option<String>,
    max_in_flight: Option<usize>,
    /// Every model on this endpoint costs $0 (a self-hosted server).
    #[serde(default)]
    free: bool,
}

/// A `[prices."MODEL"]` table: a [`Price`], its numbers located so a bad one names its line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FilePrice {
    input_mtok: Spanned<f64>,
    output_mtok: Spanned<f64>,
    cache_read_mtok: Option<Spanned<f64>>,
    cache_write_mtok: Option<Spanned<f64>>,
    checked: Option<String>,
}

/// The [`Price`] of a `[prices]` table, or the field that is negative or not a number: its name, where
/// its value starts and the value.
fn price_of(p: FilePrice) -> Result<Price, (&'static str, usize, f64)> {
    let checked = |field: &'static str, value: &Spanned<f64>| {
        let v = *value.get_ref();
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err((field, value.span().start, v))
        }
    };
    let optional =
        |field, value: &Option<Spanned<f64>>| value.as_ref().map(|v| checked(field, v)).transpose();
    Ok(Price {
        input_mtok: checked("input_mtok", &p.input_mtok)?,
        output_mtok: checked("output_mtok", &p.output_mtok)?,
        cache_read_mtok: optional("cache_read_mtok", &p.cache_read_mtok)?,
        cache_write_mtok: optional("cache_write_mtok", &p.cache_write_mtok)?,
        checked: p.checked,
    })
}

impl Config {
    /// Applies the `[providers]` tables of the file `source`.
    pub(super) fn apply_providers(
        &mut self,
        source: ConfigSource<'_>,
        providers: BTreeMap<String, FileProvider>,
    ) -> Result<(), ConfigError> {
        // A built-in provider's alias configures that provider (`[providers.gemini]` is `google`).
        let mut canonical: BTreeMap<&'static str, String> = BTreeMap::new();
        for (written_name, p) in providers {
            let key = format!("providers.{written_name}");
            let info = crate::model::built_in(&written_name);
            if let Some(info) = info
                && let Some(first) = canonical.insert(info.name, written_name.clone())
            {
                return Err(source.invalid(
                    None,
                    key,
                    format!(
                        "configures the built-in provider `{}`, as [providers.{first}] does already; keep one of \
                         the two tables",
                        info.name
                    ),
                ));
            }
            let kind = p.kind.as_ref().map(|k| *k.get_ref());
            if let (Some(info), Some(written)) = (info, &p.kind)
                && *written.get_ref() != info.wire
            {
                let said = crate::model::built_in_for(*written.get_ref()).name;
                return Err(source.invalid(
                    Some(written.span().start),
                    format!("{key}.kind"),
                    format!(
                        "is \"{said}\", but `{written_name}` is the built-in provider that speaks the {} wire format: \
                         remove `kind`, or give an endpoint that speaks {said}'s format a name of its own \
                         (`[providers.my-{said}]`)",
                        info.name
                    ),
                ));
            }
            let name = info.map_or(written_name, |i| i.name.to_string());
            let builtin = self.endpoints.get(&name).cloned();
            let base_url = p
                .base_url_env
                .as_deref()
                .and_then(env_var)
                .or(p.base_url)
                .or_else(|| builtin.as_ref().map(|b| b.base_url.clone()))
                .ok_or_else(|| {
                    source.invalid(None, &key, "needs `base_url = \"http://host:port/v1\"`")
                })?;
            let api_key_env = match p.api_key_env {
                Some(var) => vec![var],
                None => builtin
                    .as_ref()
                    .map(|b| b.api_key_env.clone())
                    .unwrap_or_default(),
            };
            let wire = builtin
                .as_ref()
                .map(|b| b.wire)
                .or(kind)
                .unwrap_or(WireFormat::OpenAi);
            let max_in_flight = p.max_in_flight.unwrap_or(self.concurrency);
            if max_in_flight == 0 {
                return Err(source.invalid(
                    None,
                    format!("{key}.max_in_flight"),
                    "must be at least 1",
                ));
            }
            match p
                .embeddings_base_url_env
                .as_deref()
                .and_then(env_var)
                .or(p.embeddings_base_url)
            {
                Some(url) => self.embeddings_base_urls.insert(name.clone(), url),
                None => self.embeddings_base_urls.remove(&name),
            };
            if p.free {
                self.free_endpoints.insert(name.clone());
            } else {
                self.free_endpoints.remove(&name);
            }
            if p.max_in_flight.is_some() {
                self.own_in_flight.insert(name.clone());
            }
            self.endpoints.insert(
                name.clone(),
                EndpointConfig {
                    name,
                    wire,
                    base_url,
                    api_key_env,
                    max_in_flight,
                },
            );
        }
        Ok(())
    }

    /// Applies the `[prices]` tables of the file `source`.
    pub(super) fn apply_prices(
        &mut self,
        source: ConfigSource<'_>,
        prices: BTreeMap<String, FilePrice>,
    ) -> Result<(), ConfigError> {
        for (model, price) in prices {
            let price = price_of(price).map_err(|(field, at, value)| {
                source.invalid(
                    Some(at),
                    format!("prices.\"{model}\".{field}"),
                    format!(
                        "is {value}: a price is USD per million tokens, 0 or more (`free = true` on a \
                         self-hosted [providers.NAME] makes every model on it $0)"
                    ),
                )
            })?;
            self.prices.insert(model, price);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::from_file;
    use super::*;

    /// Why a file of `text` is rejected.
    fn rejection(text: &str) -> String {
        from_file(text).unwrap_err().to_string()
    }

    #[test]
    fn a_kind_that_contradicts_a_built_in_provider_names_its_line() {
        let err = rejection("concurrency = 2\n[providers.anthropic]\nkind = \"openai\"\n");
        assert!(
            err.starts_with(
                "prompt-tester.toml:3: `providers.anthropic.kind` is \"openai\", but `anthropic` is the \
                 built-in provider that speaks the anthropic wire format: remove `kind`"
            ),
            "{err}"
        );
        let err = rejection("[providers.gemini]\nkind = \"anthropic\"\n");
        assert!(
            err.starts_with("prompt-tester.toml:2: `providers.gemini.kind`"),
            "{err}"
        );
        // A kind that agrees (under an alias too) stays fine.
        let agrees =
            "[providers.anthropic]\nkind = \"anthropic\"\n[providers.google]\nkind = \"gemini\"\n";
        let config = from_file(agrees).unwrap();
        assert_eq!(
            config.endpoint("anthropic").unwrap().wire,
            WireFormat::Anthropic
        );
        assert_eq!(config.endpoint("google").unwrap().wire, WireFormat::Google);
        // An alias configures the provider it names, once.
        let alias = from_file("[providers.gemini]\nbase_url = \"http://h/v1beta\"\n").unwrap();
        let google = alias.endpoint("google").unwrap();
        assert_eq!(
            (google.wire, google.base_url.as_str()),
            (WireFormat::Google, "http://h/v1beta")
        );
        let twice = rejection(
            "[providers.gemini]\nmax_in_flight = 2\n[providers.google]\nmax_in_flight = 3\n",
        );
        assert!(
            twice.contains("`providers.google` configures the built-in provider `google`, as [providers.gemini] does"),
            "{twice}"
        );
        let named =
            from_file("[providers.mine]\nbase_url = \"http://h/v1\"\nkind = \"anthropic\"\n");
        assert_eq!(
            named.unwrap().endpoint("mine").unwrap().wire,
            WireFormat::Anthropic
        );
    }

    #[test]
    fn a_negative_or_non_numeric_price_names_its_line_and_key() {
        for (text, expected) in [
            (
                "[prices.\"m\"]\ninput_mtok = -1\noutput_mtok = 2.0\n",
                "prompt-tester.toml:2: `prices.\"m\".input_mtok` is -1: a price is USD per million tokens, \
                     0 or more",
            ),
            (
                "[prices.\"m\"]\ninput_mtok = 1.0\noutput_mtok = -0.5\n",
                "prompt-tester.toml:3: `prices.\"m\".output_mtok` is -0.5",
            ),
            (
                "[prices.\"m\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\ncache_read_mtok = nan\n",
                "prompt-tester.toml:4: `prices.\"m\".cache_read_mtok` is NaN",
            ),
            (
                "[prices.\"m\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\ncache_write_mtok = -inf\n",
                "prompt-tester.toml:4: `prices.\"m\".cache_write_mtok` is -inf",
            ),
            (
                "[prices.\"m\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\ninput = 3\n",
                "unknown field `input`",
            ),
        ] {
            let err = rejection(text);
            assert!(err.contains(expected), "{expected:?} not in {err}");
        }
        let free = from_file("[prices.\"m\"]\ninput_mtok = 0\noutput_mtok = 0.0\n").unwrap();
        assert_eq!(free.prices["m"].input_mtok, 0.0);
    }
}
