//! Reading a `*.evals.toml` file into a [`Suite`], with every problem located by `line:column`.
//!
//! The suite format only: its keys, settings, cases and messages. Walking the spanned TOML and
//! collecting problems is [`crate::spanned`]'s.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

use prompt_tester_keys::vocabulary::{twin_message, whose};
use prompt_tester_keys::{Key, Place, Reading, names_in};
use toml::de::{DeTable, DeValue};

use super::assert::Assertion;
use super::dataset::{self, Dataset, Format, Row, RowProblem};
use super::template::{self, EXPECTED, Pending, TemplateSource};
use crate::case::SuiteInfo;
use crate::spanned::{
    Document, NamedTables, Node, Problem, Reader, Syntax, found, scalar_text, string, unknown_key,
};

mod gate;
mod mcp;
pub(crate) mod media;
mod messages;
mod prompt;
mod settings;
mod turns;

pub use gate::GateSpec;
use prompt::{prompt, variants};
pub use settings::Settings;
use settings::settings;

/// One case of a suite.
#[derive(Debug)]
pub struct Case {
    /// Its name (the trial is `<suite>::<name>`).
    pub name: String,
    /// Its category, for the report's `by_category`.
    pub category: Option<String>,
    /// Values for the prompt's placeholders, in file order.
    pub inputs: Vec<(String, String)>,
    /// Media inputs (`receipt = { image = "receipt.png" }`), read and checked, by name.
    pub media: std::collections::BTreeMap<String, crate::completion::MediaPart>,
    /// The user's messages of a scripted conversation (`turns`), placeholders not filled in yet; empty
    /// when the case sends the suite's prompt.
    pub turns: Vec<String>,
    /// Its assertions, the suite-wide ones first.
    pub asserts: Vec<Assertion>,
    /// Why it is skipped, if it is.
    pub skip: Option<String>,
    /// Its settings, the suite's filled in.
    pub settings: Settings,
    /// Inputs no placeholder uses (a warning, not an error: they may be kept for the record).
    pub unused_inputs: Vec<String>,
}

/// A suite's `cases_file` and what its rows share.
#[derive(Debug)]
pub struct Rows {
    /// The rows.
    pub dataset: Dataset,
    /// The suite's settings (a row has none of its own).
    pub settings: Settings,
    /// The suite's assertions, checked on every row before its own.
    pub asserts: Vec<Pending>,
    /// The prompt's placeholders: each needs an input.
    pub placeholders: Vec<String>,
    /// The suite file as shown, and its directory (schema files are relative to it).
    pub suite_file: String,
    /// The suite's directory.
    pub dir: std::path::PathBuf,
    /// `[gate]`: the rows judged as a whole rather than each a trial.
    pub gate: Option<GateSpec>,
    /// `media`: the columns whose values are files of a kind.
    pub media: Vec<(String, crate::completion::MediaKind)>,
    /// The dataset file's directory: a media column's files are relative to it.
    pub dataset_dir: std::path::PathBuf,
}

/// One version of a suite's prompt (`prompts = [...]`): every case runs against each.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptVariant {
    /// Its name in trial names and the matrix: the file's stem.
    pub name: String,
    /// The prompt template.
    pub text: String,
}

/// A parsed suite file.
#[derive(Debug)]
pub struct Suite {
    /// Its name, file (relative to the crate root), and the prompt and dataset versions it tests.
    pub info: SuiteInfo,
    /// The prompt template (empty when the suite has `prompts`).
    pub prompt: String,
    /// The prompt variants (`prompts = [...]`), in file order; empty with a single `prompt`.
    pub variants: Vec<PromptVariant>,
    /// The inline cases, in file order.
    pub cases: Vec<Case>,
    /// The rows of `cases_file`, after the inline cases.
    pub rows: Option<Rows>,
    /// What the file says that works but should change, `file:line: message` (a key under the
    /// attribute's name): each case of the suite carries them, and a run shows each once.
    pub warnings: Vec<String>,
}

/// How to correct a TOML syntax error.
const TOML_SYNTAX_FIX: &str = "correct the TOML at this position (strings need quotes, inline tables stay on one \
                               line, `[[cases]]` starts a case)";

/// `table` with every key under the name `place` gives it, by the table of keys: the attribute's name
/// for a key (`target_prompt` at the top of a suite) is read as the key, with a warning; a key of the attribute only, or of no place, is a problem (`prefix` leads the key's path;
/// `where_` says the place in the message, e.g. "in a case").
fn own_names<'t, 'i>(
    r: &mut Reader<'_>,
    table: &'t DeTable<'i>,
    place: Place,
    prefix: &str,
    where_: &str,
) -> Cow<'t, DeTable<'i>> {
    let valid = names_in(place);
    let mut twins = Vec::new();
    // In file order, as the warnings are read (the table is sorted by name).
    let mut keys: Vec<_> = table.iter().map(|(key, _)| key).collect();
    keys.sort_by_key(|key| key.span().start);
    for key in keys {
        let k = key.get_ref().as_ref();
        let path = format!("{prefix}{k}");
        let own = match Key::read_in(k, place) {
            Reading::Own(_) => continue,
            Reading::Twin(own) => own,
            Reading::OtherSide(_, note) => {
                r.problem(key.span(), &path, whose(k, place), note);
                continue;
            }
            Reading::Unknown => {
                unknown_key(r, key, &path, &valid, where_);
                continue;
            }
        };
        if table.get(own.name()).is_some() {
            r.problem(
                key.span(),
                &path,
                format!("`{k}` and `{own}` are one key, given twice"),
                format!("keep `{own}` alone"),
            );
        } else {
            r.warn(&key.span(), twin_message(k, own));
            twins.push((key.clone(), own));
        }
    }
    if twins.is_empty() {
        return Cow::Borrowed(table);
    }
    let mut table = table.clone();
    for (key, own) in twins {
        if let Some(value) = table.remove(key.get_ref().as_ref()) {
            table.insert(
                toml::Spanned::new(key.span(), Cow::Borrowed(own.name())),
                value,
            );
        }
    }
    Cow::Owned(table)
}

/// The problems of a file as the failing trial shows them (the tests' shorthand for `spanned::FileError`).
#[cfg(test)]
pub(crate) fn report(file: &str, text: &str, problems: &[Problem]) -> String {
    crate::spanned::FileError::invalid(file, crate::spanned::FileKind::Suite, text, problems)
        .to_string()
}

/// Parses the text of a suite file. `file` is how it is shown, `dir` where relative paths start.
pub fn parse(name: &str, file: &str, dir: &Path, text: &str) -> Result<Suite, Vec<Problem>> {
    let syntax = Syntax::of(file);
    let fail = |problem| Err(vec![problem]);
    let (document, found) = match Document::read(text, syntax, TOML_SYNTAX_FIX) {
        Ok(read) => read,
        Err(problem) => return fail(problem),
    };
    let root = match document.table() {
        Ok(root) => root,
        Err(problem) => return fail(problem),
    };
    let mut r = Reader::new(file, dir, text);
    let from_document = found.len();
    r.problems = found;
    let table = &*own_names(
        &mut r,
        root.get_ref(),
        Place::Suite,
        "",
        "at the top of a suite",
    );

    let suite_settings = settings(&mut r, table, "");
    let (prompt, prompt_file) = match turns::needs_no_prompt(table) {
        true => (None, None),
        false => prompt(&mut r, table, file),
    };
    let variants = variants(&mut r, table);
    // Every placeholder of every variant needs an input: the texts together have them all.
    let templates = match &prompt {
        Some(p) => Some(p.clone()),
        None if !variants.is_empty() => Some(
            variants
                .iter()
                .map(|v| v.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        None => None,
    };
    let mut text_of = |key: &str| {
        let node = table.get(key)?;
        let text = scalar_text(node.get_ref());
        if text.is_none() {
            r.mismatch(node, key, "a string", format!("write `{key} = \"...\"`"));
        }
        text
    };
    let prompt_id = text_of("prompt_id");
    let prompt_version = text_of("prompt_version");
    let dataset_version = text_of("dataset_version");
    // A description is for readers of the file; it only has to be text.
    let _ = text_of("description");
    let src = TemplateSource { file, dir };
    let mut placeholders = templates
        .as_deref()
        .map(crate::render::placeholders)
        .unwrap_or_default();
    // A row's inputs fill the suite's `messages` too.
    messages::add_placeholders(&mut placeholders, &suite_settings);
    // A suite assertion's placeholders are the prompt's inputs and `expected`.
    let known: Vec<String> = placeholders
        .iter()
        .cloned()
        .chain([EXPECTED.to_string()])
        .collect();
    let suite_asserts = match table.get("assert") {
        Some(node) => template::read_list(&mut r, node, "assert", &known, src),
        None => Vec::new(),
    };

    let prompt_key = if table.get("prompts").is_some() {
        "prompts"
    } else {
        "prompt"
    };
    let mut cases = Vec::new();
    match table.get("cases") {
        None if table.get("cases_file").is_some() => {}
        None => r.problem(
            0..0,
            "cases",
            "the suite has no cases",
            "add at least one case: `[[cases]]` then `name = \"...\"`, `inputs = { ... }` and `assert = [ ... ]`, \
             or `cases_file = \"golden/cases.jsonl\"`",
        ),
        Some(node) => {
            let tables = NamedTables {
                key: "cases",
                each: "case",
                article: "a",
                owner: "suite",
            };
            cases = r.named_tables(node, &tables, |case: &Case| &case.name, |r, case_table, span, path| {
                let prompt = (templates.as_deref(), prompt_key);
                case(r, case_table, span, path, &suite_settings, &suite_asserts, prompt, src)
            });
        }
    }

    mcp::at_the_top(&mut r, table, &suite_settings);
    let gate = gate::gate(&mut r, table);
    if let Some(node) = table.get("media")
        && table.get("cases_file").is_none()
    {
        media::columns(&mut r, node, None);
    }
    let rows = table.get("cases_file").and_then(|node| {
        let cases_relative = scalar_text(node.get_ref()).unwrap_or_default();
        let mut dataset = cases_file(&mut r, node, file)?;
        let mut names: BTreeSet<String> = cases.iter().map(|c: &Case| c.name.clone()).collect();
        for row in &mut dataset.rows {
            if !names.insert(row.name.clone()) {
                row.problems.push(RowProblem::new(
                    "",
                    format!("a case named `{}` already exists in this suite", row.name),
                    "give every case and row a distinct name",
                ));
                row.name = Row::line_name(row.line);
                names.insert(row.name.clone());
            }
        }
        if dataset.rows.is_empty() && cases.is_empty() {
            r.problem(
                node.span(),
                "cases_file",
                format!("{} has no rows", dataset.file),
                "add rows to the file, or `[[cases]]` to the suite",
            );
        }
        let media = table.get("media").map_or_else(Vec::new, |node| {
            media::columns(&mut r, node, Some(&dataset))
        });
        let dataset_dir = dir
            .join(&cases_relative)
            .parent()
            .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
        Some(Rows {
            media,
            dataset_dir,
            dataset,
            settings: suite_settings.clone(),
            asserts: suite_asserts.clone(),
            placeholders,
            suite_file: file.to_string(),
            dir: dir.to_path_buf(),
            gate: None,
        })
    });
    let rows = match (gate, rows) {
        (Some(gate), rows) if table.get("cases_file").is_none() || rows.is_some() => {
            let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
            gate::check(&mut r, &gate, rows.as_ref().map(|r| &r.dataset), &names);
            rows.map(|rows| Rows {
                gate: Some(gate),
                ..rows
            })
        }
        (_, rows) => rows,
    };

    if !r.problems.is_empty() {
        let mut problems = r.problems;
        let found_later = problems.split_off(from_document);
        problems.extend(
            found_later
                .into_iter()
                .filter(|p| !document.explains(&p.key)),
        );
        problems.sort_by_key(|p| p.span.start);
        return Err(problems);
    }
    let prompt_id = prompt_id
        .or_else(|| {
            prompt_file
                .as_ref()
                .and_then(|f| Path::new(f).file_stem())
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| name.to_string());
    Ok(Suite {
        info: SuiteInfo {
            name: name.to_string(),
            file: file.to_string(),
            prompt_id,
            prompt_version,
            dataset_version: dataset_version
                .or_else(|| rows.as_ref().map(|r| r.dataset.version.clone())),
        },
        prompt: prompt.unwrap_or_default(),
        variants,
        cases,
        rows,
        warnings: r.warnings,
    })
}

#[allow(clippy::too_many_arguments)]
fn case(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    span: Range<usize>,
    path: &str,
    suite: &Settings,
    suite_asserts: &[Pending],
    (prompt, prompt_key): (Option<&str>, &str),
    src: TemplateSource<'_>,
) -> Option<Case> {
    let problems_before = r.problems.len();
    let table = &*own_names(r, table, Place::Case, &format!("{path}."), "in a case");
    let own_turns = turns::turns(r, table, path, prompt.map(|_| prompt_key));
    let name = match table.get("name") {
        None => {
            r.problem(
                span.clone(),
                &format!("{path}.name"),
                "the case has no name",
                "add `name = \"...\"` (the trial is `<suite>::<name>`)",
            );
            None
        }
        Some(node) => {
            let name = string(r, node, &format!("{path}.name"), "\"mentions_the_product\"");
            match name {
                Some(n) if let Some(why) = dataset::name_problem(&n) => {
                    r.problem(
                        node.span(),
                        &format!("{path}.name"),
                        format!("{n:?} is not a usable case name: {why}"),
                        "use a non-empty name without `::`, control characters or leading or trailing spaces",
                    );
                    None
                }
                n => n,
            }
        }
    };
    let category = table
        .get("category")
        .and_then(|n| string(r, n, &format!("{path}.category"), "\"billing\""));
    if let Some(node) = table.get("description") {
        string(r, node, &format!("{path}.description"), "\"...\"");
    }
    let expected = table.get(EXPECTED).and_then(|node| {
        let text = scalar_text(node.get_ref());
        if text.is_none() {
            r.mismatch(
                node,
                &format!("{path}.{EXPECTED}"),
                "a string",
                "write `expected = \"the answer\"`",
            );
        }
        text
    });
    let skip = match table.get("skip") {
        None => None,
        Some(node) => match node.get_ref() {
            DeValue::String(s) if !s.trim().is_empty() => Some(s.to_string()),
            DeValue::Boolean(true) => Some("skipped in the suite".to_string()),
            DeValue::Boolean(false) => None,
            other => {
                r.problem(
                    node.span(),
                    &format!("{path}.skip"),
                    format!("expected the reason as a string, found {}", found(other)),
                    "write `skip = \"why it is skipped\"`",
                );
                None
            }
        },
    };
    let inputs_key = "inputs";
    let inputs_path = format!("{path}.{inputs_key}");
    let mut inputs = Vec::new();
    let mut media_inputs = std::collections::BTreeMap::new();
    let mut media_at = Vec::new();
    // Every key written, well-typed or not: a mistyped input is one problem, not also a missing one.
    let mut input_keys = Vec::new();
    if let Some(node) = table.get(inputs_key) {
        match node.get_ref() {
            DeValue::Table(values) => {
                for (key, value) in values.iter() {
                    let k = key.get_ref().to_string();
                    input_keys.push(k.clone());
                    match scalar_text(value.get_ref()) {
                        Some(v) => inputs.push((k, v)),
                        None if let DeValue::Table(t) = value.get_ref() => {
                            let key = format!("{inputs_path}.{k}");
                            if let Some(part) = media::input(r, value, t, &key) {
                                media_at.push((k.clone(), value.span()));
                                media_inputs.insert(k, part);
                            }
                        }
                        None => {
                            r.mismatch(value, &format!("{inputs_path}.{k}"), "a string", format!("write the value as text: `{k} = \"...\"` (it is pasted into the prompt)"));
                        }
                    }
                }
            }
            _ => {
                r.mismatch(
                    node,
                    &inputs_path,
                    "a table",
                    "write `inputs = { name = \"value\", ... }`",
                );
            }
        }
    }
    // An assertion's template shows a media input as its file name.
    let vars = template::vars(
        expected.as_deref(),
        &with_file_names(&inputs, &media_inputs),
    );
    let mut pending: Vec<Pending> = suite_asserts.to_vec();
    if let Some(node) = table.get("assert") {
        let known: Vec<String> = vars.iter().map(|(k, _)| k.clone()).collect();
        pending.extend(template::read_list(
            r,
            node,
            &format!("{path}.assert"),
            &known,
            src,
        ));
    }
    let asserts: Vec<Assertion> = if r.problems.len() > problems_before {
        Vec::new()
    } else {
        template::instantiate(&pending, &vars, src).unwrap_or_else(|found| {
            let at = table.get("name").map_or(span.clone(), |n| n.span());
            for p in found {
                r.problem(
                    at.clone(),
                    path,
                    format!("`{}`: {}", p.key, p.message),
                    p.fix,
                );
            }
            Vec::new()
        })
    };
    let own = settings(r, table, path);
    if suite.models.is_some() && own.models.is_none() {
        // A case's single model under a suite's matrix is ambiguous: one of the models, or instead?
        for key in ["provider", "model"] {
            if let Some(node) = table.get(key) {
                r.problem(
                    node.span(),
                    &format!("{path}.{key}"),
                    format!("the suite sets `models`, so a case cannot set `{key}` alone"),
                    "give the case its own `models = [\"provider/model\"]`, or move the suite's `models` into its cases",
                );
            }
        }
    }
    let settings = own.over(suite);
    if r.problems.len() == problems_before {
        messages::system_across_levels(r, table, path, &own, &settings);
        mcp::check_case(r, table, path, &own, &settings);
        let turns = own_turns.as_deref().unwrap_or_default();
        let placed = media::placed(&settings, turns, &inputs, &media_inputs);
        if let Err((name, problem)) = placed
            && let Some((_, span)) = media_at.iter().find(|(k, _)| *k == name)
        {
            r.problem(
                span.clone(),
                &format!("{inputs_path}.{name}"),
                problem,
                media::WHERE,
            );
        }
    }
    if let Some(problem) = unweighted(settings.min_score, &asserts) {
        let (at, key) = match table.get(Key::Threshold.name()) {
            Some(node) => (node.span(), format!("{path}.threshold")),
            None => (
                table.get("assert").map_or(span.clone(), |n| n.span()),
                format!("{path}.assert"),
            ),
        };
        r.problem(at, &key, problem, UNWEIGHTED_FIX);
    }

    let case_at = table.get("name").map_or(span.clone(), |n| n.span());
    let count = own_turns.as_ref().map_or(1, Vec::len);
    turns::check_turns(r, &asserts, count, name.as_deref().unwrap_or(path), case_at);
    // A case's turns are its prompt: their placeholders need inputs as the prompt's do.
    let joined = own_turns.as_ref().map(|t| t.join("\n"));
    let what = if joined.is_some() { "turns" } else { "prompt" };
    let mut unused_inputs = Vec::new();
    if let Some(prompt) = joined.as_deref().or(prompt) {
        let mut placeholders = crate::render::placeholders(prompt);
        messages::add_placeholders(&mut placeholders, &settings);
        // A skipped case does not run: its inputs may be incomplete until it is ready.
        if skip.is_none() {
            for p in &placeholders {
                if !input_keys.contains(p) {
                    let span = table.get(inputs_key).map_or_else(
                        || table.get("name").map_or(span.clone(), |n| n.span()),
                        |n| n.span(),
                    );
                    r.problem(
                        span,
                        &inputs_path,
                        format!(
                            "no input `{p}` for the placeholder {{{p}}} of the {what} or `messages`"
                        ),
                        format!("add `{p} = \"...\"` to this case's inputs"),
                    );
                }
            }
        }
        let used: Vec<&str> = template::names_used(&pending).collect();
        let names = inputs.iter().map(|(k, _)| k).chain(media_inputs.keys());
        unused_inputs = names
            .filter(|k| !placeholders.contains(k) && !used.contains(&k.as_str()))
            .cloned()
            .collect();
    }
    if r.problems.len() > problems_before {
        return None;
    }
    Some(Case {
        name: name?,
        category,
        inputs,
        media: media_inputs,
        turns: own_turns.unwrap_or_default(),
        asserts,
        skip,
        settings,
        unused_inputs,
    })
}

/// `inputs` and each media input as its file name: what an assertion's template is filled with.
pub(crate) fn with_file_names(
    inputs: &[(String, String)],
    media: &std::collections::BTreeMap<String, crate::completion::MediaPart>,
) -> Vec<(String, String)> {
    let names = media
        .iter()
        .map(|(k, part)| (k.clone(), part.name().to_string()));
    inputs.iter().cloned().chain(names).collect()
}

/// How to fix a case whose assertions all weigh 0 under a `threshold`.
pub(super) const UNWEIGHTED_FIX: &str =
    "give the assertions that count a weight above 0 (1 by default), or remove `threshold`";

/// What is wrong with a scored case (`threshold` set) whose assertions all weigh 0: its score is
/// always 1, so it passes whatever the output.
pub(super) fn unweighted(min_score: Option<f64>, asserts: &[Assertion]) -> Option<String> {
    // `threshold = 0` passes any score: the weights change nothing there.
    let threshold = min_score.filter(|t| *t > 0.0)?;
    (!asserts.is_empty() && asserts.iter().all(|a| a.weight == 0.0)).then(|| {
        format!(
            "every assertion weighs 0, so the score is always 1 and the case passes `threshold = {threshold}` \
             whatever the output"
        )
    })
}

/// Reads the dataset `cases_file` names (relative to the suite); a problem with the file as a whole is
/// the suite's.
fn cases_file(r: &mut Reader<'_>, node: &Node<'_>, file: &str) -> Option<dataset::Dataset> {
    let relative = string(r, node, "cases_file", "\"golden/cases.jsonl\"")?;
    let Some(format) = Format::of(&relative) else {
        r.problem(
            node.span(),
            "cases_file",
            format!("`{relative}` is neither JSON Lines nor CSV"),
            "name a `.jsonl` file (one JSON object per line) or a `.csv` file (with a header row)",
        );
        return None;
    };
    // Shown like the suite file: relative to the crate root.
    let shown = match Path::new(file).parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            format!("{}/{relative}", parent.to_string_lossy())
        }
        _ => relative.clone(),
    };
    let fix = "create the file, or correct the path (relative to the suite file)";
    let read = crate::text::read_bytes;
    let bytes = r.read_file_beside(node.span(), "cases_file", &relative, "dataset", fix, read)?;
    match dataset::read(format, &shown, &bytes) {
        Ok(dataset) => Some(dataset),
        Err(p) => {
            r.problem(
                node.span(),
                "cases_file",
                format!("{shown}:{}: {}", p.line, p.message),
                p.fix,
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_indifference_too_small_to_decide_is_a_located_error_not_a_hang() {
        // Once `passes_to_pass` overflowed here (a panic in a debug build, a loop in a release build),
        // even under `--list`.
        let text = "prompt = \"Say hi.\"\nprovider = \"local\"\nmodel = \"m\"\npass_rate = 0.8\nindifference = 1e-10\n\n[[cases]]\nname = \"a\"\n";
        let started = std::time::Instant::now();
        let suite = parse("s", "s.evals.toml", Path::new("/nonexistent"), text)
            .unwrap_or_else(|p| panic!("{}", report("s.evals.toml", text, &p)));
        let config = crate::config::Config::defaults(Path::new("."));
        let error =
            super::super::plan(&config, &suite, &suite.cases[0], "s::a").expect_err("rejected");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let crate::suite::CaseProblem::Sampling { at, whence, .. } = &error else {
            panic!("{error:?}")
        };
        assert_eq!((at.as_str(), *whence), ("s.evals.toml:5", ""));
        let problem = error.to_string();
        // Located at the key, with the range that works.
        assert!(problem.contains("s.evals.toml:5:"), "{problem}");
        assert!(
            problem.contains("`indifference` is 0.0000000001: too small for any test to decide")
                && problem.contains("widen `indifference`"),
            "{problem}"
        );
    }
}
