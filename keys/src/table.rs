//! The table of keys: one row per key, in the order the front ends list them (the attribute's
//! "valid keys", a suite's and a case's).

use std::fmt;

use crate::range::Range;

/// The largest `seed`: Gemini's seed is a signed 32-bit integer.
pub const MAX_SEED: u32 = i32::MAX as u32;

/// The most samples a suite or case takes (`runs`, `max_runs`): more is a mistake in a file.
pub const MAX_SUITE_RUNS: u64 = 10_000;

/// The most rounds of tool calls a suite's agent loop may make (`max_tool_rounds`).
pub const MAX_TOOL_ROUNDS: u64 = 100;

/// Where a key can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// `#[prompt_test(...)]`.
    Attribute,
    /// The top of a suite file (`*.evals.toml`).
    Suite,
    /// A case of a suite (`[[cases]]`).
    Case,
    /// `[defaults]` in `prompt-tester.toml`.
    Defaults,
    /// A suite's `[gate]`: its dataset's rows judged as a whole.
    Gate,
    /// One assertion of a suite or a case, beside its kind (`{ contains = "x", turn = 2 }`).
    Assertion,
}

impl Place {
    /// Every place.
    pub const ALL: [Place; 6] = [
        Place::Attribute,
        Place::Suite,
        Place::Case,
        Place::Defaults,
        Place::Gate,
        Place::Assertion,
    ];
}

/// What a key's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string (in the attribute also an expression giving one).
    Text,
    /// A file path.
    Path,
    /// A whole number.
    Whole,
    /// A number.
    Number,
    /// A share: a number inside [0, 1] (its range says which part).
    Share,
    /// `true` or `false`; in the attribute a bare key means `true`.
    Bool,
    /// A list.
    List,
    /// `name = value` pairs: a TOML table, or `key(name = value, ...)` in the attribute.
    Table,
    /// A Rust expression the attribute takes as written (a function, a `Toolbox`).
    Code,
}

/// A key. Its [`Row`] says what it takes and where; `Display` shows its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `target_prompt`.
    TargetPrompt,
    /// `target_prompt_file`.
    TargetPromptFile,
    /// `prompt`.
    Prompt,
    /// `cases_file`.
    CasesFile,
    /// `prompts`.
    Prompts,
    /// `prompt_id`.
    PromptId,
    /// `prompt_version`.
    PromptVersion,
    /// `dataset_version`.
    DatasetVersion,
    /// `name`.
    Name,
    /// `category`.
    Category,
    /// `expected`.
    Expected,
    /// `description`.
    Description,
    /// `inputs`.
    Inputs,
    /// `turns`.
    Turns,
    /// `assert`.
    Assert,
    /// `skip`.
    Skip,
    /// `cases`.
    Cases,
    /// `subject_model`.
    SubjectModel,
    /// `subject_provider`.
    SubjectProvider,
    /// `subject_models`.
    SubjectModels,
    /// `target_prompt_vars`.
    TargetPromptVars,
    /// `provider`.
    Provider,
    /// `model`.
    Model,
    /// `max_tokens`.
    MaxTokens,
    /// `runs`.
    Runs,
    /// `pass_threshold`.
    PassThreshold,
    /// `early_stop`.
    EarlyStop,
    /// `pass_rate`.
    PassRate,
    /// `confidence`.
    Confidence,
    /// `max_runs`.
    MaxRuns,
    /// `indifference`.
    Indifference,
    /// `seed`.
    Seed,
    /// `judge_prompt_cache`.
    JudgePromptCache,
    /// `judge_samples`.
    JudgeSamples,
    /// `temperature`.
    Temperature,
    /// `system`.
    System,
    /// `messages`.
    Messages,
    /// `threshold`.
    Threshold,
    /// `run_fn`.
    RunFn,
    /// `tools`.
    Tools,
    /// `agent`.
    Agent,
    /// `mcp`.
    Mcp,
    /// `max_tool_rounds`.
    MaxToolRounds,
    /// `live_only`.
    LiveOnly,
    /// `models`.
    Models,
    /// `gate`.
    Gate,
    /// `categories` (in `[gate]`).
    Categories,
    /// `weight` (of an assertion).
    Weight,
    /// `turn` (of an assertion).
    Turn,
    /// `judge_inputs` (of a `judge` assertion).
    JudgeInputs,
    /// `media` (a dataset's media columns).
    Media,
    /// `budget`.
    Budget,
    /// `app_env` (of an application test).
    AppEnv,
}

/// One key: its name, what it takes, where it may be written, and what it means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// The key.
    pub key: Key,
    /// Its name as written.
    pub name: &'static str,
    /// What its value is.
    pub kind: Kind,
    /// Where it may be written.
    pub places: &'static [Place],
    /// The values it takes, where it has a range: checked by the attribute (on literals), a suite and
    /// the library when it builds a test's plan.
    pub range: Option<Range>,
    /// A narrower range in a suite or a case, when it has one.
    pub suite_range: Option<Range>,
    /// What a value out of `range` must be, as the attribute and the library say it: "`key` must be
    /// {rule}", "`key` is 1.5; it must be {rule}".
    pub rule: Option<&'static str>,
    /// One line on what it means, for the docs and for errors that explain the value ("use a whole
    /// number from 1 to 10000 (samples per case)").
    pub help: &'static str,
}

impl Row {
    /// Whether the key may be written at `place`.
    pub fn allowed_in(&self, place: Place) -> bool {
        self.places.contains(&place)
    }

    /// The range a value written at `place` must be in.
    pub fn range_in(&self, place: Place) -> Option<Range> {
        match place {
            Place::Suite | Place::Case => self.suite_range.or(self.range),
            Place::Attribute | Place::Defaults | Place::Gate | Place::Assertion => self.range,
        }
    }

    const fn range(mut self, range: Range) -> Row {
        self.range = Some(range);
        self
    }

    const fn suite_range(mut self, range: Range) -> Row {
        self.suite_range = Some(range);
        self
    }

    const fn rule(mut self, rule: &'static str) -> Row {
        self.rule = Some(rule);
        self
    }

    /// A number of samples (`runs`, `max_runs`): at least 1, and in a suite or a case at most
    /// [`MAX_SUITE_RUNS`].
    const fn counts_samples(self) -> Row {
        self.range(POSITIVE_U32)
            .suite_range(SUITE_RUNS)
            .rule("at least 1")
    }
}

const fn row(
    key: Key,
    name: &'static str,
    kind: Kind,
    places: &'static [Place],
    help: &'static str,
) -> Row {
    Row {
        key,
        name,
        kind,
        places,
        range: None,
        suite_range: None,
        rule: None,
        help,
    }
}

use Place::{Assertion, Attribute, Case, Defaults, Gate, Suite};

const ATTRIBUTE: &[Place] = &[Attribute];
const SUITE: &[Place] = &[Suite];
const CASE: &[Place] = &[Case];
const ASSERTION: &[Place] = &[Assertion];
const SUITE_AND_CASE: &[Place] = &[Suite, Case];
/// The keys of one test: the attribute, a suite and a case.
const TESTS: &[Place] = &[Attribute, Suite, Case];
const TESTS_AND_DEFAULTS: &[Place] = &[Attribute, Suite, Case, Defaults];
const FILES: &[Place] = &[Suite, Case, Defaults];
const GATE: &[Place] = &[Gate];
/// `pass_threshold`: a test's share of samples, and a gate's share of rows.
const TESTS_AND_GATE: &[Place] = &[Attribute, Suite, Case, Gate];

/// A whole number at least 1 that fits `u32`.
const POSITIVE_U32: Range = Range::whole(1, u32::MAX as u64);
const SUITE_RUNS: Range = Range::whole(1, MAX_SUITE_RUNS);

/// Every key, indexed by [`Key`] (the order of its variants). One row a line, so it reads as a table.
#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    // The prompt, and the structure of a suite and its cases.
    row(Key::TargetPrompt, "target_prompt", Kind::Text, ATTRIBUTE, "the prompt template, with `{name}` placeholders"),
    row(Key::TargetPromptFile, "target_prompt_file", Kind::Path, ATTRIBUTE, "a file holding the prompt template, relative to the crate root, read at compile time"),
    row(Key::Prompt, "prompt", Kind::Text, SUITE, "the prompt template, or a file beside the suite holding it"),
    row(Key::CasesFile, "cases_file", Kind::Path, SUITE, "a JSON Lines or CSV file of cases, relative to the suite"),
    row(Key::Prompts, "prompts", Kind::List, SUITE, "several versions of the prompt, files beside the suite: every case runs against each"),
    row(Key::PromptId, "prompt_id", Kind::Text, SUITE, "the prompt's name in the JSON report (else the prompt file's stem, else the suite's name)"),
    row(Key::PromptVersion, "prompt_version", Kind::Text, SUITE, "the prompt's version in the JSON report, a string or a number"),
    row(Key::DatasetVersion, "dataset_version", Kind::Text, SUITE, "the dataset's version in the JSON report, a string or a number"),
    row(Key::Name, "name", Kind::Text, CASE, "the case's name: its trial is `<suite>::<name>`"),
    row(Key::Category, "category", Kind::Text, CASE, "the case's group in the report's `by_category`"),
    row(Key::Expected, "expected", Kind::Text, CASE, "the expected answer, for `{expected}` in assertions; not sent to the model"),
    row(Key::Description, "description", Kind::Text, SUITE_AND_CASE, "free text for readers"),
    row(Key::Inputs, "inputs", Kind::Table, CASE, "values for the prompt's placeholders"),
    row(Key::Turns, "turns", Kind::List, CASE, "the user's messages of a conversation, in place of the suite's `prompt`: each is sent with the conversation so far"),
    row(Key::Assert, "assert", Kind::List, SUITE_AND_CASE, "assertions on the output: a suite's are checked on every case, before the case's own"),
    row(Key::Skip, "skip", Kind::Text, CASE, "a reason (or `true`): the case is reported ignored and makes no call"),
    row(Key::Cases, "cases", Kind::List, SUITE, "the cases, `[[cases]]` tables"),
    // The subject.
    row(Key::SubjectModel, "subject_model", Kind::Text, ATTRIBUTE, "the model under test, an id or a `Model`"),
    row(Key::SubjectProvider, "subject_provider", Kind::Text, ATTRIBUTE, "the provider of the model under test, a name or a `Provider`"),
    row(Key::SubjectModels, "subject_models", Kind::List, ATTRIBUTE, "a model matrix: one trial per `provider/model`"),
    row(Key::TargetPromptVars, "target_prompt_vars", Kind::Table, ATTRIBUTE, "values for the prompt's placeholders, any `Display` expression"),
    row(Key::Provider, "provider", Kind::Text, FILES, "the provider of the model under test: `anthropic`, `google`, `openai` or a `[providers.NAME]` endpoint"),
    row(Key::Model, "model", Kind::Text, FILES, "the model under test"),
    // The request and the sampling.
    row(Key::MaxTokens, "max_tokens", Kind::Whole, TESTS_AND_DEFAULTS, "the most tokens to generate")
        .range(POSITIVE_U32)
        .rule("at least 1"),
    row(Key::Runs, "runs", Kind::Whole, TESTS, "samples per case")
        .counts_samples(),
    row(Key::PassThreshold, "pass_threshold", Kind::Share, TESTS_AND_GATE, "a share of samples above 0 and at most 1 (0.8 = 4 of 5 samples must pass; in `[gate]`, of rows)")
        .range(Range::above_up_to(0.0, 1.0))
        .rule("in (0, 1]: the share of samples that must pass, e.g. 0.8 for 4 of 5"),
    row(Key::EarlyStop, "early_stop", Kind::Bool, TESTS_AND_DEFAULTS, "samples are sent only while the verdict can still change"),
    row(Key::PassRate, "pass_rate", Kind::Share, TESTS_AND_DEFAULTS, "a pass rate above 0 and below 1, e.g. 0.8 (adaptive sampling: is the pass rate above it?)")
        .range(Range::open(0.0, 1.0))
        .rule("above 0 and below 1, e.g. 0.8 (adaptive sampling: is the pass rate above it?)"),
    row(Key::Confidence, "confidence", Kind::Share, TESTS_AND_DEFAULTS, "a confidence from 0.5 to below 1, e.g. 0.95 (the test is wrong at most 5% of the time)")
        .range(Range::from_below(0.5, 1.0))
        .rule("at least 0.5 and below 1, e.g. 0.95 (the test is wrong at most 5% of the time)"),
    row(Key::MaxRuns, "max_runs", Kind::Whole, TESTS_AND_DEFAULTS, "the most samples adaptive sampling takes")
        .counts_samples(),
    row(Key::Indifference, "indifference", Kind::Share, TESTS_AND_DEFAULTS, "a half-width above 0 and below 0.5, e.g. 0.05 (pass rates within it of pass_rate may go either way)")
        .range(Range::open(0.0, 0.5))
        .rule("above 0 and below 0.5, e.g. 0.05 (and leave pass_rate ± indifference inside (0, 1))"),
    row(Key::Seed, "seed", Kind::Whole, TESTS_AND_DEFAULTS, "the seed of the first sample; sample k sends seed + k - 1")
        .range(Range::whole(0, MAX_SEED as u64))
        .rule("a whole number from 0 to 2147483647"),
    row(Key::JudgePromptCache, "judge_prompt_cache", Kind::Bool, ATTRIBUTE, "Anthropic prompt caching of the judge's instructions (it caches no answer: recorded answers are the cassettes)"),
    row(Key::JudgeSamples, "judge_samples", Kind::Whole, TESTS, "each judge question asked this many times, an odd number (the majority decides; `[judge] judge_samples` for the whole run)")
        .range(Range::whole(1, 99))
        .rule("an odd whole number from 1 to 99, e.g. 3"),
    row(Key::Temperature, "temperature", Kind::Number, TESTS_AND_DEFAULTS, "a temperature from 0.0 to 2.0")
        .range(Range::at_least(0.0))
        .suite_range(Range::closed(0.0, 2.0)),
    row(Key::System, "system", Kind::Text, TESTS, "the system prompt"),
    row(Key::Messages, "messages", Kind::List, TESTS, "turns sent before the prompt, each `system`, `user` or `assistant` with its text (placeholders filled as in the prompt)"),
    row(Key::Threshold, "threshold", Kind::Share, SUITE_AND_CASE, "a score from 0 to 1 (the weight of passing assertions over all weights)")
        .range(Range::closed(0.0, 1.0)),
    row(Key::RunFn, "run_fn", Kind::Code, ATTRIBUTE, "an `async fn(prompt: &str, model: &str, max_tokens: u32)`, `async fn(request: CompletionRequest)` or `async fn(sample: SampleContext)` returning `anyhow::Result<CompletionResult>`, called instead of the provider"),
    row(Key::Tools, "tools", Kind::List, TESTS, "tools the model may call: one call is made and its tool calls are checked, not run"),
    row(Key::Agent, "agent", Kind::Code, ATTRIBUTE, "a `Toolbox` or a `fn() -> Toolbox`: the model call becomes an agent loop"),
    row(Key::Mcp, "mcp", Kind::List, SUITE_AND_CASE, "MCP servers, `{ command = \"...\" }` (stdio) or `{ url = \"...\" }` (streamable HTTP): the model call becomes an agent loop running the tools they declare"),
    row(Key::MaxToolRounds, "max_tool_rounds", Kind::Whole, SUITE_AND_CASE, "rounds of tool calls an `mcp` agent loop may make before the model must answer (7 by default)")
        .range(Range::whole(0, MAX_TOOL_ROUNDS))
        .rule("a whole number from 0 to 100"),
    row(Key::LiveOnly, "live_only", Kind::Bool, TESTS, "without a recording the case is ignored, not run"),
    row(Key::Models, "models", Kind::List, SUITE_AND_CASE, "a model matrix: every case runs against each `provider/model`"),
    // A golden dataset judged as a whole.
    row(Key::Gate, "gate", Kind::Table, SUITE, "the rows of `cases_file` judged as a whole: `[gate]` with `pass_threshold` (the share of rows that must pass) and `[gate.categories]`"),
    row(Key::Categories, "categories", Kind::Table, GATE, "a gate per category: `name = share`, the share of the category's rows that must pass"),
    // An assertion's own keys, beside its kind.
    row(Key::Weight, "weight", Kind::Number, ASSERTION, "the assertion's weight in the case's score (1 by default)")
        .range(Range::at_least(0.0)),
    row(Key::Turn, "turn", Kind::Whole, ASSERTION, "the reply it checks, counted from 1 among the case's `turns` (the last by default; not on the assertions that read the whole trajectory)")
        .range(POSITIVE_U32)
        .rule("a whole number of at least 1: a turn of the case's `turns`"),
    row(Key::JudgeInputs, "judge_inputs", Kind::Bool, ASSERTION, "on a `judge` assertion: the judge is also sent the media the model was sent (its images, documents and audio)"),
    row(Key::Media, "media", Kind::Table, SUITE, "the columns of `cases_file` whose values are files (relative to the dataset file): `media = { receipt = \"image\" }` (or `document`, `audio`)"),
    row(Key::Budget, "budget", Kind::Number, TESTS_AND_DEFAULTS, "the most USD the test may spend on provider calls: its samples, judge calls, embeddings, agent turns and follow-ups together")
        .range(Range::at_least(0.0))
        .rule("at least 0, in USD, e.g. 0.50"),
    row(Key::AppEnv, "app_env", Kind::Bool, ATTRIBUTE, "an `AppRun` test whose client reads its base URL from `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` or `GOOGLE_GEMINI_BASE_URL`: they point at the recording endpoint and the test's samples run one at a time"),
];

/// The attribute's keys that describe the harness's own call: only for a test that takes a
/// `PromptRun`; an application test (its body takes an `AppRun`) calls the application itself.
pub const PROMPT_RUN_KEYS: &[Key] = &[
    Key::TargetPrompt,
    Key::TargetPromptFile,
    Key::TargetPromptVars,
    Key::SubjectModel,
    Key::SubjectProvider,
    Key::SubjectModels,
    Key::System,
    Key::Messages,
    Key::Tools,
    Key::Agent,
    Key::RunFn,
    Key::MaxTokens,
    Key::Temperature,
    Key::Seed,
];

impl Key {
    /// Its row of the table.
    pub fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// Its name as written.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The key named `name`, if there is one.
    pub fn named(name: &str) -> Option<Key> {
        ROWS.iter().find(|row| row.name == name).map(|row| row.key)
    }

    /// What the attribute says of a literal out of range: "`confidence` must be at least 0.5 and below
    /// 1, e.g. 0.95 (...)".
    pub fn must_be(self) -> String {
        format!("`{self}` must be {}", self.rule())
    }

    /// What the library says of a value out of range, after the key: "is 1.5; it must be at least 0.5
    /// and below 1, e.g. 0.95 (...)".
    pub fn is_out_of_range(self, value: f64) -> String {
        format!("is {value}; it must be {}", self.rule())
    }

    /// The rule of a key that has a range (every caller's key does: a test checks).
    fn rule(self) -> &'static str {
        self.row().rule.unwrap_or("in range")
    }

    /// The key named `name` if it may be written at `place`.
    pub fn named_in(name: &str, place: Place) -> Option<Key> {
        Key::named(name).filter(|key| key.row().allowed_in(place))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The keys that may be written at `place`, in the table's order.
pub fn keys_in(place: Place) -> impl Iterator<Item = Key> {
    ROWS.iter()
        .filter(move |row| row.allowed_in(place))
        .map(|row| row.key)
}

/// The names of the keys that may be written at `place`, in the table's order.
pub fn names_in(place: Place) -> Vec<&'static str> {
    keys_in(place).map(Key::name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_the_order_of_the_keys_and_named_once() {
        for (i, row) in ROWS.iter().enumerate() {
            assert_eq!(row.key as usize, i, "{} is out of place", row.name);
            assert_eq!(Key::named(row.name), Some(row.key));
            assert_eq!(row.key.to_string(), row.name);
            assert!(!row.places.is_empty(), "{} is allowed nowhere", row.name);
            assert!(
                !row.help.is_empty() && !row.help.ends_with('.'),
                "{}",
                row.name
            );
        }
        assert_eq!(ROWS.len(), Key::AppEnv as usize + 1);
        assert_eq!(Key::named("nope"), None);
    }

    /// The attribute's keys, in the order its "valid keys" lists them (pinned by the macro's UI tests).
    #[test]
    fn the_attribute_lists_its_keys_in_the_documented_order() {
        assert_eq!(
            names_in(Place::Attribute).join(", "),
            "target_prompt, target_prompt_file, subject_model, subject_provider, subject_models, \
             target_prompt_vars, max_tokens, runs, pass_threshold, early_stop, pass_rate, confidence, \
             max_runs, indifference, seed, judge_prompt_cache, judge_samples, temperature, system, messages, run_fn, tools, agent, live_only, \
             budget, app_env"
        );
        assert_eq!(Key::named_in("model", Place::Attribute), None);
        assert_eq!(Key::named_in("model", Place::Defaults), Some(Key::Model));
    }

    /// What each front end accepts, place by place (the readers' own tests check they read these).
    #[test]
    fn each_place_has_its_keys() {
        let settings = "provider, model, max_tokens, runs, pass_threshold, early_stop, pass_rate, \
                        confidence, max_runs, indifference, seed, judge_samples, temperature, system, messages, \
                        threshold, tools, mcp, max_tool_rounds, live_only, models";
        assert_eq!(
            names_in(Place::Suite).join(", "),
            format!(
                "prompt, cases_file, prompts, prompt_id, prompt_version, dataset_version, description, \
                 assert, cases, {settings}, gate, media, budget"
            )
        );
        assert_eq!(
            names_in(Place::Case).join(", "),
            format!(
                "name, category, expected, description, inputs, turns, assert, skip, {settings}, budget"
            )
        );
        assert_eq!(
            names_in(Place::Assertion).join(", "),
            "weight, turn, judge_inputs"
        );
        assert_eq!(
            names_in(Place::Defaults).join(", "),
            "provider, model, max_tokens, early_stop, pass_rate, confidence, max_runs, indifference, \
             seed, temperature, budget"
        );
        assert_eq!(
            names_in(Place::Gate).join(", "),
            "pass_threshold, categories"
        );
    }

    /// A number key has a range; a key with a rule has a range it describes; a suite's range is
    /// inside the key's.
    #[test]
    fn ranges_belong_to_numbers() {
        let ranged = [
            Key::MaxTokens,
            Key::Runs,
            Key::PassThreshold,
            Key::PassRate,
            Key::Confidence,
        ];
        let ranged = ranged
            .into_iter()
            .chain([Key::MaxRuns, Key::Indifference, Key::Seed]);
        for key in ranged {
            assert!(key.row().rule.is_some(), "{key} has no rule");
        }
        assert_eq!(
            Key::Confidence.is_out_of_range(1.5),
            "is 1.5; it must be at least 0.5 and below 1, e.g. 0.95 (the test is wrong at most 5% of the time)"
        );
        assert_eq!(Key::Runs.must_be(), "`runs` must be at least 1");
        for row in ROWS {
            let numeric = matches!(row.kind, Kind::Whole | Kind::Number | Kind::Share);
            assert_eq!(row.range.is_some(), numeric, "{}", row.name);
            assert!(row.rule.is_none() || row.range.is_some(), "{}", row.name);
            assert!(
                row.suite_range.is_none() || row.allowed_in(Place::Suite),
                "{}",
                row.name
            );
            if let (
                Some(Range::Whole { min, max }),
                Some(Range::Whole {
                    min: s_min,
                    max: s_max,
                }),
            ) = (row.range, row.suite_range)
            {
                assert!(min <= s_min && s_max <= max, "{}", row.name);
            }
            if row.kind == Kind::Share {
                let range = row.range_in(Place::Suite).unwrap();
                assert!(
                    !range.contains(-1e-9) && !range.contains(1.0 + 1e-9),
                    "{}",
                    row.name
                );
            }
        }
        assert_eq!(Key::Runs.row().range_in(Place::Suite), Some(SUITE_RUNS));
        // A whole number's rule states its smallest value (and the largest, unless it is u32's).
        for row in ROWS {
            if let (Some(Range::Whole { min, max }), Some(rule)) = (row.range, row.rule) {
                assert!(rule.contains(&min.to_string()), "{}: {rule}", row.name);
                assert!(
                    max == u64::from(u32::MAX) || rule.contains(&max.to_string()),
                    "{rule}"
                );
            }
        }
        assert_eq!(
            Key::Runs.row().range_in(Place::Attribute),
            Some(POSITIVE_U32)
        );
        assert_eq!(
            Key::Seed.row().range.and_then(|r| r.whole_bounds()),
            Some((0, 2_147_483_647))
        );
    }
}
