//! Declarative suites in TOML or YAML (`*.evals.toml`, `*.evals.yaml`, `*.evals.yml` under the suite
//! roots, `prompt-tests/` by default): one format, read into one spanned tree whatever the syntax.
//!
//! Each case is a trial `<suite>::<case>`, run like a `#[prompt_test]`: N samples, a pass threshold,
//! `::run_i` single-run trials, one cassette per suite. A file that cannot be used becomes one failing
//! trial, `<suite>::suite_file_error`, whose message locates every problem; other suites run normally.
//! The format is documented in `src/guide/suites.md`.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

pub mod assert;
mod case_problem;
pub mod dataset;
mod exact;
pub mod gates;
pub mod parse;
pub mod rows;
pub mod template;
mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::case::{
    Case, CaseInfo, Column, Evaluator, Executor, RequestTemplate, Sampling, SuiteInfo,
};
use crate::config::Config;
use crate::model::Subject;
use crate::plan::SamplePlan;
use crate::spanned::{FileError, FileKind, Syntax};
use assert::Check;
use parse::Suite;

pub use assert::CustomAssertion;
pub use case_problem::{CaseProblem, InvalidRow};
pub use walk::Walked;

/// The suffixes of suite files: TOML, then YAML's two spellings.
pub const SUFFIXES: &[&str] = &[".evals.toml", ".evals.yaml", ".evals.yml"];

/// The last segment of the failing trial that stands for a suite file that cannot be used.
pub const FILE_ERROR: &str = "suite_file_error";

/// The trial that reports custom assertions that cannot be used.
pub const REGISTRY_ERROR: &str = "prompt_tester::custom_assertions";

/// A suite file found under a root.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteFile {
    /// The suite's name: its path under the root without `.evals.toml` (or `.evals.yaml`, `.evals.yml`),
    /// `/` written `::`.
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// The file as shown: relative to the crate root when below it.
    pub display: String,
}

/// What the suites hold, trial by trial: cases to run, cases skipped on purpose, and the failing trials
/// that stand for what cannot be used (a broken file, a missing root, conflicting custom assertions).
pub enum Item {
    /// A case to run.
    Case(Box<Case>),
    /// A case skipped on purpose (`skip = "reason"`).
    Skipped {
        /// The trial name.
        name: String,
        /// The reason given.
        reason: String,
        /// The case.
        info: CaseInfo,
    },
    /// A dataset row, built into its case only when a trial of it runs.
    Row(Box<LazyRow>),
    /// The gates of one column of a gated dataset (`[gate]`): its rows are their samples, not trials.
    Gates(Box<gates::Gates>),
    /// A failing trial with this message.
    Broken {
        /// The trial name.
        name: String,
        /// What is wrong, located, with the fix.
        message: String,
        /// The suite file it stands for, if any.
        info: Option<CaseInfo>,
    },
}

/// A dataset row as the harness lists it: what its trials need up front (name, runs, subject, cassette)
/// is the suite's, so listing thousands of rows reads none of their assertions or placeholders; the
/// case itself, or the message of a malformed row, is built once, when its first trial runs.
pub struct LazyRow {
    /// The trial name.
    pub name: String,
    /// The row, for the reports.
    pub info: CaseInfo,
    /// Samples per row (the suite's `runs`).
    pub runs: u32,
    /// The provider the suite names (else `[defaults]`), for the nextest pre-check.
    pub provider: Option<String>,
    /// The suite's cassette.
    pub cassette: String,
    /// The suite's `live_only`.
    pub live_only: bool,
    /// The calls besides the subject's that the suite's assertions make (a row's own are not read).
    pub other_calls: Vec<crate::role::CallRole>,
    /// The case, or why it cannot run (the failing trial's message); built on first use.
    pub build: Arc<dyn Fn() -> Result<Arc<Case>, CaseProblem> + Send + Sync>,
}

/// The items of every suite under the configured roots. With `exact` (`--exact NAME`), only the suite
/// the requested trial belongs to is read, and only that case is resolved.
pub fn items(config: &Config, walked: &Walked, exact: Option<&str>) -> Vec<Item> {
    let wanted = |name: &str| exact.is_none_or(|f| f == name);
    let mut items = Vec::new();
    let conflicts = assert::registry_conflicts();
    if !conflicts.is_empty() && wanted(REGISTRY_ERROR) {
        items.push(broken(
            REGISTRY_ERROR.to_string(),
            conflicts.join("\n"),
            None,
        ));
    }
    let (files, problems) = walked.suites(config);
    for (name, message) in problems {
        if wanted(&name) {
            items.push(broken(name, message, None));
        }
    }
    let mut by_name: BTreeMap<&str, Vec<&SuiteFile>> = BTreeMap::new();
    for file in &files {
        by_name.entry(file.name.as_str()).or_default().push(file);
    }
    for (name, same) in by_name {
        if exact.is_some_and(|f| f != name && !f.starts_with(&format!("{name}::"))) {
            continue;
        }
        let error_trial = exact.map_or_else(|| format!("{name}::{FILE_ERROR}"), str::to_string);
        if let [one, _, ..] = same.as_slice() {
            items.push(broken(
                error_trial,
                same_name(name, &same),
                Some(broken_case(one)),
            ));
            continue;
        }
        let file = same[0];
        let case = exact.and_then(|f| wanted_case(name, f));
        match load(file, case) {
            Ok(suite) => items.extend(suite_items(config, Arc::new(suite), exact)),
            Err(error) => items.push(broken(
                error_trial,
                error.to_string(),
                Some(broken_case(file)),
            )),
        }
    }
    items
}

/// The message of suite files that share a name: under two roots, or side by side in two formats.
fn same_name(name: &str, files: &[&SuiteFile]) -> String {
    let shown: Vec<&str> = files.iter().map(|f| f.display.as_str()).collect();
    let listed = crate::render::and_list(&shown, str::to_string);
    let count = if files.len() == 2 { "two" } else { "several" };
    let side_by_side = files
        .windows(2)
        .all(|w| w[0].path.parent() == w[1].path.parent());
    if side_by_side {
        format!(
            "{count} suite files are named `{name}`: {listed}, the same suite in more than one format; keep \
             one of them (or rename one: a suite's name is its path under its suite root)"
        )
    } else {
        format!(
            "{count} suite files are named `{name}`: {listed}; rename one (a suite's name is its path under its \
             suite root)"
        )
    }
}

/// The case a `--exact` trial of suite `suite` names (`suite::case`, `suite::case[column]`,
/// `suite::case::run_N`).
fn wanted_case<'a>(suite: &str, exact: &'a str) -> Option<&'a str> {
    let rest = exact.strip_prefix(suite)?.strip_prefix("::")?;
    let end = [rest.find('['), rest.find("::")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Reads and parses one suite file; `Err` (shown) is the failing trial's message. With `case`, a TOML
/// suite's other cases are not read when that case can be found alone
/// (`exact.rs`): a `--exact` process does work in proportion to its trial, not to its suite.
pub fn load(file: &SuiteFile, case: Option<&str>) -> Result<Suite, FileError> {
    let text = FileError::read(&file.path, &file.display, FileKind::Suite)?;
    let dir = file.path.parent().unwrap_or(Path::new("."));
    let toml = file.path.extension().is_some_and(|e| e == "toml");
    if let Some(case) = case.filter(|_| toml)
        && let Some(only) = exact::only_case(&text, case)
        && let Ok(suite) = parse::parse(&file.name, &file.display, dir, &only)
        && suite.cases.iter().any(|c| c.name == case)
    {
        return Ok(suite);
    }
    parse::parse(&file.name, &file.display, dir, &text)
        .map_err(|problems| FileError::invalid(&file.display, FileKind::Suite, &text, &problems))
}

fn broken(name: String, message: String, info: Option<CaseInfo>) -> Item {
    Item::Broken {
        name,
        message,
        info,
    }
}

fn broken_case(file: &SuiteFile) -> CaseInfo {
    CaseInfo {
        suite: SuiteInfo {
            name: file.name.clone(),
            file: file.display.clone(),
            prompt_id: file.name.clone(),
            prompt_version: None,
            dataset_version: None,
        },
        case: FILE_ERROR.to_string(),
        category: None,
    }
}

/// The models of a case's matrix: `--subject` collapses the model axis onto its one model.
fn models<'a>(config: &Config, settings: &'a parse::Settings) -> &'a [Subject] {
    match &config.subject {
        Some(_) => &[],
        None => settings.models.as_deref().unwrap_or_default(),
    }
}

/// Which trials of a suite a run asks for: every one, or with `exact` the one it names.
struct Wanted<'a> {
    suite: &'a Suite,
    /// The names of the suite's prompt variants.
    variants: &'a [String],
    exact: Option<&'a str>,
}

impl Wanted<'_> {
    /// The row of the case or dataset row `case` (`suite::case`), and those of its trials over
    /// `models` that are wanted: each column, its trial name, and the case as the reports name it.
    fn trials(
        &self,
        models: &[Subject],
        case: &str,
        category: Option<&String>,
    ) -> (String, Vec<(Column, String, CaseInfo)>) {
        let row = format!("{}::{}", self.suite.info.name, case);
        let exact = self.exact;
        // The case, one of its columns, or one of their numbered runs.
        if exact.is_some_and(|f| !crate::trial_name::exact_is_in_row(f, &row)) {
            return (row, Vec::new());
        }
        let trials = Column::all(models, self.variants)
            .into_iter()
            .map(|column| {
                let name = column.trial(&row);
                (column, name)
            })
            .filter(|(_, name)| exact.is_none_or(|f| crate::trial_name::exact_is_in_trial(f, name)))
            .map(|(column, name)| {
                let info = CaseInfo {
                    suite: self.suite.info.clone(),
                    case: case.to_string(),
                    category: category.cloned(),
                };
                (column, name, info)
            })
            .collect();
        (row, trials)
    }
}

/// The items of a parsed suite (with `exact`, only the requested one, resolved for its trial).
fn suite_items(config: &Config, suite: Arc<Suite>, exact: Option<&str>) -> Vec<Item> {
    let mut items = Vec::new();
    let variants: Vec<String> = suite.variants.iter().map(|v| v.name.clone()).collect();
    let wanted = Wanted {
        suite: &suite,
        variants: &variants,
        exact,
    };
    for case in &suite.cases {
        let models = models(config, &case.settings);
        let (row, trials) = wanted.trials(models, &case.name, case.category.as_ref());
        for (column, name, info) in trials {
            items.push(match &case.skip {
                Some(reason) => Item::Skipped {
                    name,
                    reason: reason.clone(),
                    info,
                },
                None => match plan(config, &suite, case, &name) {
                    Ok(plan) => {
                        let place = RowPlace {
                            row: &row,
                            column,
                            info,
                            dataset: None,
                        };
                        Item::Case(Box::new(resolve(config, &suite, case, place, plan)))
                    }
                    Err(error) => broken(name, error.to_string(), Some(info)),
                },
            });
        }
    }
    let Some(rows) = &suite.rows else {
        return items;
    };
    let models = models(config, &rows.settings);
    let config = Arc::new(config.clone());
    if rows.gate.is_some() {
        items.extend(
            gates::gates(&config, &suite, &wanted, models)
                .into_iter()
                .map(|g| Item::Gates(Box::new(g))),
        );
        // A gated suite's rows are not trials; `--exact suite::row` still runs one alone.
        if exact.is_none() {
            return items;
        }
    }
    for (index, row) in rows.dataset.rows.iter().enumerate() {
        let (row_name, trials) = wanted.trials(models, &row.name, row.category.as_ref());
        for (column, name, info) in trials {
            // A skipped row makes no call: it may lack inputs, but not be unreadable.
            if let Some(reason) = row.skip.as_ref().filter(|_| row.problems.is_empty()) {
                items.push(Item::Skipped {
                    name,
                    reason: reason.clone(),
                    info,
                });
                continue;
            }
            let built = Arc::new(std::sync::OnceLock::new());
            let (suite_, config_, row_, row_info, column_) = (
                suite.clone(),
                config.clone(),
                row_name.clone(),
                info.clone(),
                column.clone(),
            );
            let build = move || {
                built
                    .get_or_init(|| {
                        row_case(&config_, &suite_, index, &row_, row_info.clone(), &column_)
                    })
                    .clone()
            };
            let call = rows.settings.request.call.over(&config.defaults);
            items.push(Item::Row(Box::new(LazyRow {
                name,
                info,
                // The numbered runs to list; a plan that does not hold fails the row when it runs.
                runs: SamplePlan::from_keys(&rows.settings.sampling.over(&config.sampling))
                    .map_or(1, |plan| plan.max_runs()),
                provider: call.provider,
                cassette: suite.info.name.clone(),
                live_only: rows.settings.live_only.unwrap_or(false),
                other_calls: other_calls(rows.asserts.iter().filter_map(|a| a.call())),
                build: Arc::new(build),
            })));
        }
    }
    items
}

/// The case of the row at `index` of `suite`'s rows (`row` is `suite::row`) in `column`, or the failing
/// trial's message.
fn row_case(
    config: &Config,
    suite: &Suite,
    index: usize,
    row: &str,
    info: CaseInfo,
    column: &Column,
) -> Result<Arc<Case>, CaseProblem> {
    let rows = suite.rows.as_ref().expect("a row's suite has rows");
    let written = &rows.dataset.rows[index];
    let case = rows.case(written)?;
    let plan = plan(config, suite, &case, &column.trial(row))?;
    let place = RowPlace {
        row,
        column: column.clone(),
        info,
        dataset: Some(rows.dataset.file.as_str()),
    };
    Ok(Arc::new(resolve(config, suite, &case, place, plan)))
}

/// The sampling plan of a case: its keys over the suite's (merged when parsed), `[defaults]` under
/// both; `Err` names where the key to fix was written (`file:line`) and what is wrong.
fn plan(
    config: &Config,
    suite: &Suite,
    case: &parse::Case,
    name: &str,
) -> Result<SamplePlan, CaseProblem> {
    let s = &case.settings;
    SamplePlan::from_keys(&s.sampling.over(&config.sampling)).map_err(|problem| {
        let key = problem.key();
        let at = s
            .sampling_at
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, at)| at.clone());
        let (at, whence) = match at {
            Some(at) => (at, ""),
            None => (
                suite.info.file.clone(),
                " (with [defaults] in prompt-tester.toml)",
            ),
        };
        CaseProblem::Sampling {
            at,
            case: name.to_string(),
            whence,
            problem,
        }
    })
}

/// Where a case runs: its row (`suite::case`), its column of a matrix, its report entry, and the
/// dataset file of a row.
struct RowPlace<'a> {
    row: &'a str,
    column: Column,
    info: CaseInfo,
    dataset: Option<&'a str>,
}

/// A suite case in one column (a model, a prompt variant, both, or none) as a [`Case`]: the suite's
/// settings under the case's, `[defaults]` under both. `dataset` is the file of a row (its warnings name
/// the file, once for all its rows).
fn resolve(
    config: &Config,
    suite: &Suite,
    case: &parse::Case,
    place: RowPlace<'_>,
    plan: SamplePlan,
) -> Case {
    let RowPlace {
        row,
        column,
        info,
        dataset,
    } = place;
    let s = &case.settings;
    let name = column.trial(row);
    let template = match &column.prompt {
        Some(variant) => suite
            .variants
            .iter()
            .find(|v| v.name == *variant)
            .map_or(suite.prompt.as_str(), |v| v.text.as_str()),
        None => suite.prompt.as_str(),
    };
    // A case's scripted turns stand for the prompt: the first is sent as it, the others after it.
    // Its media placed as the prompt's parts, as a Rust test's are (`render::place`).
    let first = case.turns.first().map_or(template, String::as_str);
    let media_names: Vec<&str> = case.media.keys().map(String::as_str).collect();
    let (pieces, _) = crate::render::render_pieces(first, &case.inputs, &media_names);
    let (rendered, prompt_content) = crate::render::place(&pieces, &case.media);
    let later: Vec<String> = (case.turns.iter().skip(1))
        .map(|turn| crate::render::render(turn, &case.inputs).text)
        .collect();
    let vars = case.inputs.iter().cloned().collect();
    let mut written = s.request.clone();
    // Every input was checked to be there, and every media input placed in a user turn, when the
    // file was read.
    let mut turn_parts = Vec::new();
    if let Some(turns) = &written.messages {
        turn_parts =
            crate::conversation::media_parts(turns, &case.inputs, &case.media).unwrap_or_default();
        written.messages = Some(crate::conversation::render_turns(turns, &case.inputs).0);
    }
    let rendered_turns = written.messages.clone().unwrap_or_default();
    if let Some(subject) = &column.subject {
        written.call.provider = Some(subject.provider.clone());
        written.call.model = Some(subject.model.clone());
    }
    let at = format!("case `{name}` ({})", suite.info.file);
    let mut request = RequestTemplate::resolve(config, written, rendered, vars, |missing| {
        let keys = crate::render::and_list(missing, |m| format!("`{m} = \"...\"`"));
        let keys = Syntax::of(&suite.info.file).words(&keys).into_owned();
        format!(
            "case `{name}` names no {}: add {keys} to {} (at the top, or in the case) or set [defaults] in {}",
            missing.join(" and "),
            suite.info.file,
            crate::config::CONFIG_FILE
        )
    })
    .calling_a_known_provider(config, &at);
    request.turns = later;
    crate::conversation::with_parts(&mut request.history, &rendered_turns, turn_parts);
    request.media = case.media.clone();
    request.prompt_content = prompt_content;
    let who = dataset.map_or_else(|| format!("case `{row}`"), |file| format!("rows of {file}"));
    let mut warnings = warnings(config, suite, case, &who, &request);
    warnings.extend(request.seed_warning(config));
    let other_calls = other_calls(case.asserts.iter().filter_map(|a| a.check.call()));
    // The record command re-runs the whole suite: any of its cases that asks the judge needs its key.
    let suite_calls = (suite.cases.iter().flat_map(|c| &c.asserts)).filter_map(|a| a.check.call());
    let rows_calls = (suite.rows.iter().flat_map(|r| &r.asserts)).filter_map(|a| a.call());
    let judge = match suite_calls
        .chain(rows_calls)
        .chain(other_calls.iter().copied())
        .any(|call| call == crate::role::CallRole::Judge)
    {
        true => crate::role::JudgeUse::Yes,
        false => crate::role::JudgeUse::No,
    };
    let asserts = Arc::new(case.asserts.clone());
    let min_score = s.min_score;
    let evaluator: Evaluator = Arc::new(move |run| {
        let asserts = asserts.clone();
        Box::pin(async move { assert::evaluate(&asserts, min_score, &run).await })
    });
    Case {
        cassette: suite.info.name.clone(),
        filter: suite.info.name.clone(),
        name,
        request,
        sampling: Sampling {
            plan,
            prime_first: false,
            cache_judge: false,
            live_only: s.live_only.unwrap_or(false),
            judge_samples: s.judge_samples,
        },
        executor: executor(s),
        evaluator,
        other_calls,
        judge,
        warnings,
        info: Some(info),
        cell: column.cell(row),
    }
}

/// How a case's model is called: once, or with MCP servers in an agent loop (the one of
/// `agent = Toolbox`), whose `max_tool_rounds` rounds of tool calls take one model call each.
fn executor(settings: &parse::Settings) -> Executor {
    let servers = settings.mcp.clone().unwrap_or_default();
    if servers.is_empty() {
        return Executor::Call;
    }
    let mut toolbox = crate::tools::Toolbox::new();
    if let Some(rounds) = settings.max_tool_rounds {
        toolbox = toolbox.max_turns(rounds.saturating_add(1));
    }
    toolbox.servers = servers;
    Executor::Agent(toolbox)
}

/// Each of `calls` once, in order.
fn other_calls(calls: impl Iterator<Item = crate::role::CallRole>) -> Vec<crate::role::CallRole> {
    let mut once = Vec::new();
    for call in calls {
        if !once.contains(&call) {
            once.push(call);
        }
    }
    once
}

/// What is suspicious about a case that still runs: inputs no placeholder uses, no assertions, a
/// `tool_called` check without tools, a `max_cost` check on an unpriced model.
fn warnings(
    config: &Config,
    suite: &Suite,
    case: &parse::Case,
    who: &str,
    request: &RequestTemplate,
) -> Vec<String> {
    let s = &case.settings;
    let syntax = Syntax::of(&suite.info.file);
    let mut warnings = suite.warnings.clone();
    if !case.unused_inputs.is_empty() {
        warnings.push(format!(
            "{who}: input(s) {} match no placeholder of the prompt and are not sent",
            case.unused_inputs
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if case.asserts.is_empty() {
        warnings.push(format!(
            "{who}: no assertions: it passes whenever the model answers; add {} in {}",
            syntax.words("`assert = [...]`"),
            suite.info.file
        ));
    }
    if s.request.tools.as_ref().is_none_or(Vec::is_empty)
        && s.mcp.as_ref().is_none_or(Vec::is_empty)
        && let Some(a) = case.asserts.iter().find(|a| a.check.asks_for_tools())
    {
        warnings.push(format!(
            "{who}: asserts `{}` but declares no tools: add {} or {} to {} (at the top, or in the case)",
            a.check.kind(),
            syntax.words("`tools = [{ name = \"...\", ... }]`"),
            syntax.words("`mcp = [{ command = \"...\" }]`"),
            suite.info.file
        ));
    }
    if let Ok(Subject { provider, model }) = &request.subject {
        let priced = config.price_of(provider, model, 0).is_some();
        if !priced
            && case
                .asserts
                .iter()
                .any(|a| matches!(a.check, Check::MaxCost(_)))
        {
            warnings.push(format!(
                "{who}: max_cost passes without a check: the price of {model} is unknown (add \
                 [prices.\"{model}\"] to {}, or `free = true` to [providers.{provider}] if it is self-hosted)",
                crate::config::CONFIG_FILE
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod key_tests;
#[cfg(test)]
mod media_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trajectory_tests;
#[cfg(all(test, feature = "yaml"))]
mod yaml_tests;
