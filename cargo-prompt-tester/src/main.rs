//! `cargo prompt-tester`: what a prompt change did to the recorded answers, and keeping the good ones.
//!
//! A run that would replace a sample's recordings writes the new answers *pending* beside the
//! cassette (`<stem>.pending.json`, or under `PROMPT_TESTER_PENDING_DIR`). This command lists them
//! (`pending`), shows each against the accepted one in the terminal (`review`), and accepts or rejects
//! them by test name (`accept`, `reject`). `label` (and `y`/`n` in `review`) records a person's word that
//! a recorded judge answer is right or wrong, beside the suite file (or a `#[prompt_test]`'s cassette). It
//! reaches the library only through its `_cargo_prompt_tester_support` module, which is why the
//! library's version is pinned exactly.

mod init;
mod label;
mod locate;
mod review;
mod settle;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use crate::locate::Place;

/// Review what a prompt change did to recorded model answers, then accept or reject it.
#[derive(Debug, Parser)]
#[command(
    name = "cargo prompt-tester",
    bin_name = "cargo prompt-tester",
    version
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// What every subcommand takes.
#[derive(Debug, Args)]
struct Global {
    /// The crate's Cargo.toml; its folder is the crate root [default: the nearest Cargo.toml at or
    /// above the current folder, or the current folder when that is a workspace's root]
    #[arg(long, global = true, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// Where the pending recordings are, for ones brought from another machine or a CI artifact
    /// [default: PROMPT_TESTER_PENDING_DIR, else beside the cassettes]
    #[arg(long, global = true, value_name = "DIR")]
    pending_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Set prompt tests up in this crate: the test target, its dependencies, one test, the judge's
    /// prompt-tester.toml, one suite and the nextest test group (never overwriting a file)
    Init(Init),
    /// Show each pending sample against the accepted one, and accept, reject or skip it (needs a
    /// terminal)
    Review,
    /// Accept pending recordings into their cassettes, replacing each sample's recordings
    Accept(Filter),
    /// Reject pending recordings: the cassettes keep theirs, the pending ones are deleted
    Reject(Filter),
    /// Say whether each recorded judge answer of accepted samples is right or wrong, one line per answer
    /// on standard input (r, w, s skip, q quit); the labels go beside the suite file (a #[prompt_test]'s
    /// beside its cassette): `*.labels.toml`
    Label(LabelArgs),
    /// List the pending recordings, one line per test and sample
    Pending {
        /// Print one JSON array, an object per pending test and sample
        #[arg(long)]
        json: bool,
    },
    /// Render the merged reports of a run from its results (every process of a nextest run, every
    /// partition copied from other machines), with the summary
    Report(Report),
}

/// What `report` renders, and from where.
#[derive(Debug, Args)]
struct Report {
    /// Write the HTML report to PATH
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Write JUnit XML to PATH
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write the JSON report to PATH
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Write the Markdown summary to PATH (`off`: not even to GITHUB_STEP_SUMMARY) [default:
    /// PROMPT_TESTER_MARKDOWN; appended to GITHUB_STEP_SUMMARY when set]
    #[arg(long, value_name = "PATH")]
    markdown: Option<String>,
    /// Compare with an earlier JSON report
    #[arg(long, value_name = "PATH")]
    baseline: Option<PathBuf>,
    /// A results folder (its latest run is taken) or one run's folder; each is a partition of one
    /// run, as from the jobs of a CI matrix [default: the crate's last run, in PROMPT_TESTER_RESULTS
    /// or .prompt-tester/results]
    #[arg(long, value_name = "DIR")]
    from: Vec<PathBuf>,
}

/// What `init` sets up.
#[derive(Debug, Args)]
struct Init {
    /// The test target's name: `cargo test --test NAME` runs it
    #[arg(long, value_name = "NAME", default_value = "prompts")]
    name: String,
    /// Depend on the prompt-tester at DIR (a checkout) instead of the crates.io release of this
    /// subcommand's version: for trying a checkout, and for this project's tests, which run offline
    #[arg(long, value_name = "DIR")]
    prompt_tester_path: Option<PathBuf>,
}

/// Which tests, by name, as libtest filters them.
#[derive(Debug, Args)]
struct Filter {
    /// Only the tests whose name contains FILTER [default: every test]
    filter: Option<String>,
    /// The test named exactly FILTER
    #[arg(long, requires = "filter")]
    exact: bool,
}

/// What `label` takes.
#[derive(Debug, Args)]
struct LabelArgs {
    #[command(flatten)]
    filter: Filter,
    /// Offer N samples drawn at random (among those not yet labelled at random): their labels correct
    /// the suite's pass rate (the prediction-powered estimate)
    #[arg(long, value_name = "N")]
    random: Option<usize>,
    /// The seed of the random draw, to draw the same samples again [default: a random seed]
    #[arg(long, value_name = "SEED", requires = "random")]
    seed: Option<u64>,
}

/// Exit codes: 0 done, 1 an error (a file, the configuration), 2 a usage error (as clap's).
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse_from(arguments(std::env::args_os()));
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The arguments without the `prompt-tester` that cargo passes first when run as `cargo
/// prompt-tester ...`, so the binary also runs as `cargo-prompt-tester ...`.
fn arguments(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "prompt-tester") {
        args.remove(1);
    }
    args
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if matches!(cli.command, Command::Review)
        && !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal())
    {
        eprintln!(
            "error: `cargo prompt-tester review` is interactive and needs a terminal (its input and output \
             are not one). Without a terminal use:\n  \
             cargo prompt-tester pending [--json]       list what is pending\n  \
             cargo prompt-tester accept [FILTER]        accept it into the cassettes\n  \
             cargo prompt-tester reject [FILTER]        reject it (the cassettes keep theirs)"
        );
        return Ok(ExitCode::from(USAGE));
    }
    // `init` works on a crate that has no prompt tests yet: it needs no cassette folder.
    if let Command::Init(init) = &cli.command {
        return set_up(&cli.global, init);
    }
    if let Command::Report(report) = &cli.command {
        return render(&cli.global, report);
    }
    let place = Place::find(
        cli.global.manifest_path.as_deref(),
        cli.global.pending_dir.as_deref(),
    )?;
    match cli.command {
        Command::Init(ref init) => return set_up(&cli.global, init),
        Command::Review => review::run(&place)?,
        Command::Accept(f) => settle::settle(&place, settle::Verdict::Accept, f.filter, f.exact)?,
        Command::Reject(f) => settle::settle(&place, settle::Verdict::Reject, f.filter, f.exact)?,
        Command::Pending { json } => settle::list(&place, json)?,
        Command::Label(args) => {
            let request = label::Request {
                filter: args.filter.filter,
                exact: args.filter.exact,
                random: args.random,
                seed: args.seed,
            };
            label::run(&place, &request, &mut std::io::stdin().lock())?;
        }
        Command::Report(ref report) => return render(&cli.global, report),
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo prompt-tester report`: the reports written, or why not.
fn render(global: &Global, report: &Report) -> anyhow::Result<ExitCode> {
    use prompt_tester::_cargo_prompt_tester_support::{ReportRequest, report as render_report};
    let cwd = std::env::current_dir().context("the current folder")?;
    let here = |p: &Option<PathBuf>| p.as_ref().map(|p| cwd.join(p));
    let request = ReportRequest {
        root: locate::crate_root(global.manifest_path.as_deref(), &cwd)?,
        from: report.from.iter().map(|dir| cwd.join(dir)).collect(),
        junit: here(&report.junit),
        json: here(&report.report),
        html: here(&report.html),
        // As given: the reports name it so, and it is read from here.
        baseline: report.baseline.clone(),
        markdown: report.markdown.as_ref().map(|m| match m.as_str() {
            "off" => m.clone(),
            path => cwd.join(path).display().to_string(),
        }),
    };
    let done = render_report(&request)?;
    let shown = |p: &std::path::Path| p.strip_prefix(&cwd).unwrap_or(p).display().to_string();
    eprintln!(
        "report: {} trials from {}",
        done.trials,
        done.folders
            .iter()
            .map(|f| shown(f))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for path in &done.written {
        eprintln!("wrote {}", shown(path));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cargo prompt-tester init`, in the crate `global` names (else the current folder's).
fn set_up(global: &Global, init: &Init) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("the current folder")?;
    let source = match &init.prompt_tester_path {
        Some(dir) => {
            let dir = cwd.join(dir);
            let dir = dir.canonicalize().with_context(|| {
                format!("--prompt-tester-path {}: no such folder", dir.display())
            })?;
            init::Source::Path(dir.to_string_lossy().into_owned())
        }
        None => init::Source::Version(init::own_version()),
    };
    let request = init::Request {
        root: locate::crate_root(global.manifest_path.as_deref(), &cwd)?,
        target: init.name.clone(),
        source,
    };
    print!("{}", init::run(&request)?);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Cli {
        Cli::try_parse_from(arguments(args.iter().map(OsString::from))).unwrap()
    }

    #[test]
    fn takes_the_subcommand_name_cargo_passes_or_none() {
        let cli = parsed(&["cargo-prompt-tester", "prompt-tester", "pending", "--json"]);
        assert!(matches!(cli.command, Command::Pending { json: true }));
        let cli = parsed(&["cargo-prompt-tester", "accept", "greet", "--exact"]);
        match cli.command {
            Command::Accept(f) => assert_eq!((f.filter.as_deref(), f.exact), (Some("greet"), true)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn global_options_go_before_or_after_the_subcommand() {
        let cli = parsed(&["c", "prompt-tester", "--pending-dir", "p", "reject"]);
        assert_eq!(cli.global.pending_dir, Some(PathBuf::from("p")));
        let cli = parsed(&["c", "review", "--manifest-path", "x/Cargo.toml"]);
        assert_eq!(
            cli.global.manifest_path,
            Some(PathBuf::from("x/Cargo.toml"))
        );
    }

    #[test]
    fn exact_needs_a_filter() {
        let args = ["c", "accept", "--exact"].map(OsString::from);
        assert!(Cli::try_parse_from(args).is_err());
    }
}
