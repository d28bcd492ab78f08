//! One trial that touches every package of the floor, so that none is left out of the binary: it reads
//! `.env` and a TOML configuration, picks a sample at random, builds the HTTPS request a provider call
//! would send (and sends it only when `FLOOR_SEND` is set), and prints in colour.

use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::{Arguments, Trial};
use owo_colors::{OwoColorize, Stream};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The rebuild's one-line edit changes this line.
const EDIT: &str = "edit 0";

/// A test case, registered at link time as `#[prompt_test]` registers its tests.
pub struct Case {
    name: &'static str,
    prompt: &'static str,
}

inventory::collect!(Case);
inventory::submit! { Case { name: "summary", prompt: "Summarise in one sentence: {text}" } }

#[derive(Deserialize)]
struct Config {
    judge: Judge,
}

#[derive(Deserialize)]
struct Judge {
    provider: String,
    model: String,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    prompt: String,
    seed: u32,
}

fn run(case: &Case) -> anyhow::Result<()> {
    let _ = dotenvy::dotenv();
    let config: Config =
        toml::from_str("[judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n")?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        let body = Request {
            model: &config.judge.model,
            prompt: case.prompt.replace("{text}", EDIT),
            seed: rand::rng().random_range(0..1000),
        };
        let url = format!("https://{}.invalid/v1/messages", config.judge.provider);
        let request = client.post(url).json(&body).build()?;
        if std::env::var_os("FLOOR_SEND").is_some() {
            let answer = client.execute(request).await?.text().await?;
            anyhow::ensure!(!answer.is_empty(), "empty answer");
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        anyhow::Ok(())
    })?;
    println!("{}", case.name.if_supports_color(Stream::Stdout, |t| t.green()));
    Ok(())
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let trials = inventory::iter::<Case>
        .into_iter()
        .map(|case| Trial::test(case.name, move || run(case).map_err(|e| format!("{e:#}").into())))
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
