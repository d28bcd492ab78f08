//! Declarative suites in TOML (`*.evals.toml` under the suite roots, `prompt-tests/` by default).
//!
//! Each case is a trial `<suite>::<case>`, run like a `#[prompt_test]`: N samples, a pass threshold,
//! `::run_i` single-run trials, one cassette per suite. A file that cannot be used becomes one failing
//! trial, `<suite>::suite_file_error`, whose message locates every problem; other suites run normally.
//! The format is documented in `docs/suites.md`.

pub mod assert;
pub mod parse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libtest_mimic::Arguments;

use crate::cassette::CassetteMode;
use crate::completion::{CompletionRequest, Message};
use crate::config::Config;
use crate::engine::{CallRole, RunScope, engine};
use crate::harness::record::CaseInfo;
use crate::harness::rust_test::{DEFAULT_MAX_TOKENS, prompt_run, subject_or_defaults};
use crate::harness::trial::{Plan, Sample, SampleFn};
use crate::harness::{
    TrialDef, TrialKind, exact_filter, statically_unavailable, trials_with_runs, under_nextest,
};
use assert::{Assertion, Check};
use parse::{Case, Suite};

pub use assert::CustomAssertion;

/// The suffix of suite files.
pub const SUFFIX: &str = ".evals.toml";

/// The last segment of the failing trial that stands for a suite file that cannot be used.
pub const FILE_ERROR: &str = "suite_file_error";

/// The trial that reports custom assertions that cannot be used.
pub const REGISTRY_ERROR: &str = "prompt_tester::custom_assertions";

/// A suite file found under a root.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteFile {
    /// The suite's name: its path under the root without `.evals.toml`, `/` written `::`.
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// The file as shown: relative to the crate root when below it.
    pub display: String,
}

/// Trials of every suite under the configured roots. With `--exact`, only the suite the requested
/// trial belongs to is read, and only that trial is built.
pub fn trials(config: &Config, args: &Arguments, mode: CassetteMode) -> Vec<TrialDef> {
    let exact = exact_filter(args);
    let wanted = |name: &str| exact.is_none_or(|f| f == name);
    let mut defs = Vec::new();
    let conflicts = assert::registry_conflicts();
    if !conflicts.is_empty() && wanted(REGISTRY_ERROR) {
        defs.push(broken(
            REGISTRY_ERROR.to_string(),
            conflicts.join("\n"),
            None,
        ));
    }
    let (files, problems) = discover(config);
    for (name, message) in problems {
        if wanted(&name) {
            defs.push(broken(name, message, None));
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
        if let [one, two, ..] = same.as_slice() {
            let message = format!(
                "two suite files are named `{name}`: {} and {}; rename one (a suite's name is its path under its \
                 suite root)",
                one.display, two.display
            );
            defs.push(broken(error_trial, message, Some(broken_case(one))));
            continue;
        }
        let file = same[0];
        match load(file) {
            Ok(suite) => defs.extend(suite_trials(config, suite, exact, mode)),
            Err(message) => defs.push(broken(error_trial, message, Some(broken_case(file)))),
        }
    }
    defs
}

/// Reads and parses one suite file; `Err` is the failing trial's message.
pub fn load(file: &SuiteFile) -> Result<Suite, String> {
    let text = std::fs::read_to_string(&file.path)
        .map_err(|e| format!("{}: cannot read the suite file: {e}", file.display))?;
    let dir = file.path.parent().unwrap_or(Path::new("."));
    parse::parse(&file.name, &file.display, dir, &text)
        .map_err(|problems| parse::report(&file.display, &text, &problems))
}

fn broken(name: String, message: String, case: Option<CaseInfo>) -> TrialDef {
    TrialDef {
        name,
        ignored: false,
        parent: None,
        case,
        kind: TrialKind::Broken(message),
    }
}

fn broken_case(file: &SuiteFile) -> CaseInfo {
    CaseInfo {
        suite: file.name.clone(),
        file: file.display.clone(),
        case: FILE_ERROR.to_string(),
        category: None,
        prompt_id: file.name.clone(),
        prompt_version: None,
        dataset_version: None,
    }
}

/// Suite files under the configured roots, sorted by path, and the failing trials of roots that do
/// not exist (the default `prompt-tests/` may be absent: a crate without suites).
pub fn discover(config: &Config) -> (Vec<SuiteFile>, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let default_root = config.root.join("prompt-tests");
    for root in &config.suite_roots {
        if !root.is_dir() {
            if *root != default_root {
                let shown = crate::engine::display_path(root, &config.root);
                problems.push((
                    format!("suite_roots::{}", shown.replace(['/', '\\'], "::")),
                    format!(
                        "the suite root `{shown}` in suite_roots of {} is not a directory; create it or correct \
                         suite_roots",
                        crate::config::CONFIG_FILE
                    ),
                ));
            }
            continue;
        }
        let mut found = Vec::new();
        walk(root, &mut found);
        for path in found {
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let relative = relative.to_string_lossy().replace('\\', "/");
            let Some(stem) = relative.strip_suffix(SUFFIX) else {
                continue;
            };
            files.push(SuiteFile {
                name: stem.replace('/', "::"),
                display: crate::engine::display_path(&path, &config.root),
                path,
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    (files, problems)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            walk(&path, found);
        } else if name.ends_with(SUFFIX) {
            found.push(path);
        }
    }
}

/// What every trial of one case shares.
struct Prepared {
    suite: String,
    prompt: String,
    vars: BTreeMap<String, String>,
    subject: Result<(String, String), String>,
    system: Option<String>,
    max_tokens: u32,
    temperature: Option<f32>,
    asserts: Vec<Assertion>,
    tools: Vec<crate::completion::ToolSpec>,
    min_score: Option<f64>,
    runs: u32,
    pass_threshold: f64,
    live_only: bool,
    warnings: Vec<String>,
    case: CaseInfo,
}

/// The trials of a parsed suite (with `--exact`, only the requested one).
pub fn suite_trials(
    config: &Config,
    suite: Suite,
    exact: Option<&str>,
    mode: CassetteMode,
) -> Vec<TrialDef> {
    let mut defs = Vec::new();
    for case in &suite.cases {
        let name = format!("{}::{}", suite.name, case.name);
        let info = CaseInfo {
            suite: suite.name.clone(),
            file: suite.file.clone(),
            case: case.name.clone(),
            category: case.category.clone(),
            prompt_id: suite.prompt_id.clone(),
            prompt_version: suite.prompt_version.clone(),
            dataset_version: suite.dataset_version.clone(),
        };
        if let Some(reason) = &case.skip {
            if exact.is_none_or(|f| f == name) {
                // Not flagged ignored: the trial runs to report itself ignored with its reason (and a
                // record). Under nextest an ignored outcome reads as a pass, so there it is flagged.
                defs.push(TrialDef {
                    name,
                    ignored: under_nextest(),
                    parent: None,
                    case: Some(info),
                    kind: TrialKind::Skip(reason.clone()),
                });
            }
            continue;
        }
        let prepared = Arc::new(prepare(config, &suite, case, &name, info.clone()));
        let provider = case
            .settings
            .provider
            .clone()
            .or_else(|| config.defaults.provider.clone());
        let unrecordable = statically_unavailable(
            config,
            mode,
            provider.as_deref(),
            &suite.name,
            prepared.live_only,
        );
        defs.extend(trials_with_runs(
            &name,
            prepared.runs,
            exact,
            unrecordable,
            Some(info),
            |trial_name, only_run| {
                let prepared = prepared.clone();
                TrialKind::Plan(Box::new(move || plan(prepared, trial_name, only_run)))
            },
        ));
    }
    defs
}

fn prepare(config: &Config, suite: &Suite, case: &Case, name: &str, info: CaseInfo) -> Prepared {
    let s = &case.settings;
    let rendered = crate::render::render(&suite.prompt, &case.inputs);
    let subject = subject_or_defaults(s.provider.clone(), s.model.clone(), config).map_err(|missing| {
        let keys = missing.iter().map(|m| format!("`{m} = \"...\"`")).collect::<Vec<_>>().join(" and ");
        format!(
            "case `{name}` names no {}: add {keys} to {} (at the top, or in the case) or set [defaults] in {}",
            missing.join(" and "),
            suite.file,
            crate::config::CONFIG_FILE
        )
    });
    let mut warnings = Vec::new();
    if !case.unused_inputs.is_empty() {
        warnings.push(format!(
            "case `{name}`: input(s) {} match no placeholder of the prompt and are not sent",
            case.unused_inputs
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if case.asserts.is_empty() {
        warnings.push(format!(
            "case `{name}` has no assertions: it passes whenever the model answers; add `assert = [...]` in {}",
            suite.file
        ));
    }
    if s.tools.as_ref().is_none_or(Vec::is_empty)
        && case
            .asserts
            .iter()
            .any(|a| matches!(a.check, Check::ToolCalled { .. }))
    {
        warnings.push(format!(
            "case `{name}` asserts `tool_called` but declares no tools: add `tools = [{{ name = \"...\", ... }}]` \
             to {} (at the top, or in the case)",
            suite.file
        ));
    }
    if let Ok((provider, model)) = &subject {
        let priced = config.price_of(provider, model, 0).is_some();
        if !priced
            && case
                .asserts
                .iter()
                .any(|a| matches!(a.check, Check::MaxCost(_)))
        {
            warnings.push(format!(
                "case `{name}`: max_cost passes without a check: the price of {model} is unknown (add \
                 [prices.\"{model}\"] to {}, or `free = true` to [providers.{provider}] if it is self-hosted)",
                crate::config::CONFIG_FILE
            ));
        }
    }
    Prepared {
        suite: suite.name.clone(),
        prompt: rendered.text,
        vars: case.inputs.iter().cloned().collect(),
        subject,
        system: s.system.clone(),
        max_tokens: s
            .max_tokens
            .or(config.defaults.max_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS),
        temperature: s.temperature.or(config.defaults.temperature),
        asserts: case.asserts.clone(),
        tools: s.tools.clone().unwrap_or_default(),
        min_score: s.min_score,
        runs: s.runs.unwrap_or(1),
        pass_threshold: s.pass_threshold.unwrap_or(1.0),
        live_only: s.live_only.unwrap_or(false),
        warnings,
        case: info,
    }
}

fn plan(p: Arc<Prepared>, name: String, only_run: Option<u32>) -> Plan {
    let shared = p.clone();
    let sample: SampleFn = Arc::new(move |scope: Arc<RunScope>| {
        let p = shared.clone();
        Box::pin(async move {
            let (provider, model) = match &p.subject {
                Ok(pm) => pm.clone(),
                Err(message) => return Sample::errored(message.clone()),
            };
            let request = CompletionRequest {
                model: model.clone(),
                system: p.system.clone(),
                messages: vec![Message::user(p.prompt.clone())],
                max_tokens: p.max_tokens,
                temperature: p.temperature,
                tools: p.tools.clone(),
                response_schema: None,
                cache_system: false,
            };
            let messages = request.messages.clone();
            let completed = engine()
                .complete(&scope, CallRole::Subject, &provider, request)
                .await;
            let run = match prompt_run(
                completed,
                scope,
                p.prompt.clone(),
                p.vars.clone(),
                provider,
                model,
                messages,
            ) {
                Ok(run) => run,
                Err(failed) => return failed,
            };
            Sample {
                outcome: assert::evaluate(&p.asserts, p.min_score, &run).await,
                output: Some(run.output),
            }
        })
    });
    Plan {
        name,
        cassette: p.suite.clone(),
        filter: p.suite.clone(),
        runs: p.runs,
        threshold: p.pass_threshold,
        only_run,
        prime_first: false,
        cache_judge: false,
        live_only: p.live_only,
        warnings: p.warnings.clone(),
        case: Some(p.case.clone()),
        sample,
    }
}
#[cfg(test)]
mod tests;
