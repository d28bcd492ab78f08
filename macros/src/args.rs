//! Parsing and checking the arguments of `#[prompt_test(...)]`.
//!
//! Every mistake found is kept (combined into one `syn::Error`) so the user sees them all in one build.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Token, UnOp};

use crate::suggest::closest;

/// Every key, in the order the documentation lists them.
pub const KEYS: &[&str] = &[
    "target_prompt",
    "target_prompt_file",
    "subject_model",
    "subject_provider",
    "subject_models",
    "target_prompt_vars",
    "max_tokens",
    "runs",
    "pass_threshold",
    "early_stop",
    "pass_rate",
    "confidence",
    "max_runs",
    "indifference",
    "seed",
    "enable_cache",
    "temperature",
    "system",
    "run_fn",
    "tools",
    "agent",
    "live_only",
];

/// Collects errors so that all of them are reported together.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds an error at `tokens`.
    pub fn at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// The combined error, if any.
    pub fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}

/// One `key = value`, `key(...)` or bare `key` as written.
struct RawArg {
    key: Ident,
    value: RawValue,
}

enum RawValue {
    /// `key = expr`
    Assign(Token![=], Expr),
    /// `key(...)`
    List(syn::token::Paren, TokenStream),
    /// `key`
    Flag,
}

impl Parse for RawArg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `parse_any` so that a keyword used as a key (`type = ...`) gets the "unknown key" message.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            let eq = input.parse()?;
            RawValue::Assign(eq, input.parse()?)
        } else if input.peek(syn::token::Paren) {
            let content;
            let paren = syn::parenthesized!(content in input);
            RawValue::List(paren, content.parse()?)
        } else if input.is_empty() || input.peek(Token![,]) {
            RawValue::Flag
        } else {
            // syn's own "expected `,`" would point past the key without saying what is missing.
            return Err(input.error(format!("expected `=` after `{key}`: `{key} = ...`")));
        };
        Ok(RawArg { key, value })
    }
}

/// One `name = value` inside `target_prompt_vars(...)`.
struct RawVar {
    name: Ident,
    value: Expr,
}

impl Parse for RawVar {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = Ident::parse_any(input)?;
        if !input.peek(Token![=]) {
            return Err(syn::Error::new(
                name.span(),
                format!("`{name}` needs a value: `target_prompt_vars({name} = value, ...)`"),
            ));
        }
        input.parse::<Token![=]>()?;
        Ok(RawVar {
            name,
            value: input.parse()?,
        })
    }
}

/// Where the prompt template comes from.
pub enum Prompt {
    /// `target_prompt = expr`.
    Inline(Expr),
    /// `target_prompt_file = "path"`.
    File(LitStr),
}

/// A value after checking: a literal normalised to its field's type, or the user's expression as written.
pub enum Value {
    /// A checked literal, re-emitted with the literal's span.
    Lit(TokenStream),
    /// Any other expression, typed by the field it fills.
    Expr(Expr),
}

/// The checked arguments.
#[derive(Default)]
pub struct Args {
    /// `target_prompt` or `target_prompt_file` (exactly one, when no error was reported).
    pub prompt: Option<(Ident, Prompt)>,
    /// `subject_model`.
    pub subject_model: Option<Expr>,
    /// `subject_provider`.
    pub subject_provider: Option<Expr>,
    /// `subject_models`: a list of `provider/model` (checked when written as literals).
    pub subject_models: Option<Expr>,
    /// `target_prompt_vars(...)`: names (raw identifiers unwrapped) and value expressions.
    pub vars: Vec<(Ident, Expr)>,
    /// `max_tokens`.
    pub max_tokens: Option<Value>,
    /// `runs`.
    pub runs: Option<Value>,
    /// `pass_threshold`.
    pub pass_threshold: Option<Value>,
    /// `early_stop`.
    pub early_stop: Option<Value>,
    /// `pass_rate`.
    pub pass_rate: Option<Value>,
    /// `confidence`.
    pub confidence: Option<Value>,
    /// `max_runs`.
    pub max_runs: Option<Value>,
    /// `indifference`.
    pub indifference: Option<Value>,
    /// `seed`.
    pub seed: Option<Value>,
    /// `enable_cache`.
    pub enable_cache: Option<Value>,
    /// `temperature`.
    pub temperature: Option<Value>,
    /// `system`.
    pub system: Option<Expr>,
    /// `run_fn`.
    pub run_fn: Option<Expr>,
    /// `tools`.
    pub tools: Option<Expr>,
    /// `agent`.
    pub agent: Option<Expr>,
    /// `live_only`.
    pub live_only: Option<Value>,
}

/// Parses and checks the attribute's arguments. On a syntax error nothing else can be checked.
pub fn parse(attr: TokenStream, errors: &mut Errors) -> Args {
    let raw = match Punctuated::<RawArg, Token![,]>::parse_terminated.parse2(attr) {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(e);
            return Args::default();
        }
    };
    let mut args = Args::default();
    let mut seen: Vec<String> = Vec::new();
    for arg in raw {
        let key = arg.key.unraw().to_string();
        if !KEYS.contains(&key.as_str()) {
            errors.at(&arg.key, unknown_key_message(&key));
            continue;
        }
        if seen.contains(&key) {
            errors.at(&arg.key, format!("`{key}` is given twice; keep one"));
            continue;
        }
        seen.push(key.clone());
        args.take(&key, arg, errors);
    }
    if let Some(models) = &args.subject_models {
        // Each entry names its provider: a single subject beside the list would be ambiguous.
        for key in ["subject_model", "subject_provider"] {
            if seen.iter().any(|k| k == key) {
                errors.at(
                    models,
                    format!(
                        "`subject_models` and `{key}` cannot be combined: each entry of `subject_models` is \
                         `provider/model`; keep the list, or `subject_provider` and `subject_model` alone"
                    ),
                );
            }
        }
    }
    sampling_conflicts(&args, errors);
    if let Some(agent) = &args.agent {
        // An agent loop makes the provider calls itself, and its tools need handlers.
        if args.run_fn.is_some() {
            errors.at(agent, "`agent` and `run_fn` cannot be combined: `run_fn` replaces the model call the agent loop makes");
        }
        if args.tools.is_some() {
            errors.at(
                agent,
                "`agent` and `tools` cannot be combined: add the tools to the `Toolbox` with handlers \
                 (`Toolbox::new().tool(Tool::new(...))`), or keep `tools` alone to only check the calls",
            );
        }
    }
    // A prompt key that was given but rejected has its own error already.
    if !seen
        .iter()
        .any(|k| k == "target_prompt" || k == "target_prompt_file")
    {
        errors.push(syn::Error::new(
            Span::call_site(),
            "#[prompt_test] needs a prompt: add `target_prompt = \"...\"` or \
             `target_prompt_file = \"prompts/NAME.md\"` (relative to the crate root)",
        ));
    }
    args
}

fn unknown_key_message(key: &str) -> String {
    let hint = match closest(key, KEYS) {
        Some(best) => format!("; did you mean `{best}`?"),
        None => String::new(),
    };
    format!(
        "unknown key `{key}` in #[prompt_test]{hint}\nvalid keys: {}",
        KEYS.join(", ")
    )
}

impl Args {
    /// Fills the field of `key` from `arg`, or reports why it cannot.
    fn take(&mut self, key: &str, arg: RawArg, errors: &mut Errors) {
        let RawArg {
            key: key_ident,
            value,
        } = arg;
        if key == "target_prompt_vars" {
            match value {
                RawValue::List(_, tokens) => self.vars = parse_vars(tokens, errors),
                RawValue::Assign(eq, expr) => errors.at(
                    quote::quote!(#eq #expr),
                    "`target_prompt_vars` takes a list: `target_prompt_vars(name = value, ...)`",
                ),
                RawValue::Flag => errors.at(
                    &key_ident,
                    "`target_prompt_vars` takes a list: `target_prompt_vars(name = value, ...)`",
                ),
            }
            return;
        }
        let expr = match value {
            RawValue::Assign(_, expr) => expr,
            // A bare `enable_cache`, `live_only` or `early_stop` reads naturally as "set".
            RawValue::Flag if matches!(key, "enable_cache" | "live_only" | "early_stop") => {
                let set = Some(Value::Lit(quote::quote_spanned!(key_ident.span()=> true)));
                match key {
                    "enable_cache" => self.enable_cache = set,
                    "live_only" => self.live_only = set,
                    _ => self.early_stop = set,
                }
                return;
            }
            RawValue::Flag => {
                errors.at(&key_ident, format!("`{key}` needs a value: `{key} = ...`"));
                return;
            }
            RawValue::List(paren, _) => {
                errors.push(syn::Error::new(
                    paren.span.join(),
                    format!("`{key}` takes a value, not a list: `{key} = ...`"),
                ));
                return;
            }
        };
        match key {
            "target_prompt" | "target_prompt_file" => self.take_prompt(key_ident, expr, errors),
            "subject_model" => self.subject_model = string_or_expr(key, expr, errors),
            "subject_provider" => self.subject_provider = string_or_expr(key, expr, errors),
            "subject_models" => self.subject_models = subject_models(expr, errors),
            "system" => self.system = string_or_expr(key, expr, errors),
            "max_tokens" => self.max_tokens = positive_u32(key, expr, errors),
            "runs" => self.runs = positive_u32(key, expr, errors),
            "pass_threshold" => self.pass_threshold = pass_threshold(expr, errors),
            "temperature" => self.temperature = temperature(expr, errors),
            "enable_cache" => self.enable_cache = boolean(key, expr, errors),
            "live_only" => self.live_only = boolean(key, expr, errors),
            "early_stop" => self.early_stop = boolean(key, expr, errors),
            "pass_rate" => self.pass_rate = unit_share(key, expr, errors, PASS_RATE),
            "confidence" => self.confidence = unit_share(key, expr, errors, CONFIDENCE),
            "indifference" => self.indifference = unit_share(key, expr, errors, INDIFFERENCE),
            "max_runs" => self.max_runs = positive_u32(key, expr, errors),
            "seed" => self.seed = seed(expr, errors),
            "run_fn" => match &expr {
                Expr::Lit(_) => errors.at(
                    &expr,
                    "`run_fn` expects the path of an async fn, e.g. `run_fn = my_executor`",
                ),
                _ => self.run_fn = Some(expr),
            },
            "tools" => match &expr {
                Expr::Lit(_) => errors.at(
                    &expr,
                    "`tools` expects a `Vec<ToolSpec>` (or an array or iterator of them)",
                ),
                _ => self.tools = Some(expr),
            },
            "agent" => match &expr {
                Expr::Lit(_) => errors.at(
                    &expr,
                    "`agent` expects a `Toolbox` or the path of a `fn() -> Toolbox`, e.g. `agent = my_agent`",
                ),
                _ => self.agent = Some(expr),
            },
            _ => unreachable!("every key in KEYS is handled"),
        }
    }

    fn take_prompt(&mut self, key: Ident, expr: Expr, errors: &mut Errors) {
        if let Some((first, _)) = &self.prompt {
            errors.at(
                &key,
                format!("give either `target_prompt` or `target_prompt_file`, not both (`{first}` is already set)"),
            );
            return;
        }
        let prompt = if key == "target_prompt" {
            match &expr {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(_), ..
                }) => Prompt::Inline(expr),
                Expr::Lit(_) => {
                    errors.at(
                        &expr,
                        "`target_prompt` expects a string: the prompt template",
                    );
                    return;
                }
                _ => Prompt::Inline(expr),
            }
        } else {
            match &expr {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(path),
                    ..
                }) => {
                    let value = path.value();
                    if value.trim().is_empty() {
                        errors.at(
                            path,
                            "`target_prompt_file` is empty; give a path relative to the crate root",
                        );
                        return;
                    }
                    if value.starts_with('/') || value.starts_with('\\') {
                        errors.at(
                            path,
                            "`target_prompt_file` is relative to the crate root (the directory of Cargo.toml); \
                             remove the leading `/`",
                        );
                        return;
                    }
                    if let Some(problem) = prompt_file_problem(&value) {
                        errors.at(path, problem);
                        return;
                    }
                    Prompt::File(path.clone())
                }
                // `include_str!` needs a literal, so a constant or an expression cannot be read.
                _ => {
                    errors.at(
                        &expr,
                        "`target_prompt_file` expects a string literal: a path relative to the crate root, \
                         e.g. \"prompts/summary.md\"",
                    );
                    return;
                }
            }
        };
        self.prompt = Some((key, prompt));
    }
}

/// Why the prompt file cannot be included, said without the absolute path (the message is the same on
/// every machine). `include_str!` in the expansion would report it too, but only as "couldn't read".
/// Outside cargo (no `CARGO_MANIFEST_DIR`) the check is left to `include_str!`.
fn prompt_file_problem(path: &str) -> Option<String> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let full = std::path::Path::new(&root).join(path);
    if full.is_file() {
        None
    } else if full.exists() {
        Some(format!("`{path}` is not a file"))
    } else {
        Some(format!(
            "prompt file `{path}` not found: `target_prompt_file` is relative to the crate root (the directory \
             of Cargo.toml)"
        ))
    }
}

fn parse_vars(tokens: TokenStream, errors: &mut Errors) -> Vec<(Ident, Expr)> {
    let raw = match Punctuated::<RawVar, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(e);
            return Vec::new();
        }
    };
    let mut vars: Vec<(Ident, Expr)> = Vec::new();
    for RawVar { name, value } in raw {
        let name = name.unraw();
        if vars.iter().any(|(n, _)| *n == name) {
            errors.at(
                &name,
                format!("`{name}` is given twice in `target_prompt_vars`; keep one"),
            );
            continue;
        }
        vars.push((name, value));
    }
    vars
}

const SUBJECT_MODELS_EXAMPLE: &str =
    "subject_models = [\"local/SmolLM2-135M-Instruct\", \"anthropic/claude-haiku-4-5\"]";

/// `subject_models = ["provider/model", ...]`: a literal list is checked here (each entry split at its
/// first `/`, none empty, none twice); any other expression is checked when the trials are built.
fn subject_models(expr: Expr, errors: &mut Errors) -> Option<Expr> {
    let list = match &expr {
        Expr::Array(list) => list,
        Expr::Lit(_) => {
            errors.at(
                &expr,
                format!("`subject_models` expects a list of `provider/model` strings: `{SUBJECT_MODELS_EXAMPLE}`"),
            );
            return None;
        }
        _ => return Some(expr),
    };
    if list.elems.is_empty() {
        errors.at(
            &expr,
            format!("`subject_models` is empty; list at least one `provider/model`: `{SUBJECT_MODELS_EXAMPLE}`"),
        );
        return None;
    }
    let mut problem = false;
    let mut seen: Vec<String> = Vec::new();
    for elem in &list.elems {
        let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = elem
        else {
            if let Expr::Lit(_) = elem {
                errors.at(
                    elem,
                    "each entry of `subject_models` is a string: \"provider/model\"",
                );
                problem = true;
            }
            continue;
        };
        let value = s.value();
        let why = match value.split_once('/') {
            None => Some("there is no `/` between the provider and the model"),
            Some(("", _)) => Some("the provider before the `/` is empty"),
            Some((_, "")) => Some("the model after the `/` is empty"),
            Some(_) if value.trim() != value => Some("it has leading or trailing spaces"),
            Some(_) => None,
        };
        if let Some(why) = why {
            errors.at(
                s,
                format!("{value:?} is not `provider/model`: {why}; write e.g. \"anthropic/claude-haiku-4-5\""),
            );
            problem = true;
        } else if seen.contains(&value) {
            errors.at(
                s,
                format!("\"{value}\" is listed twice in `subject_models`; keep one"),
            );
            problem = true;
        }
        seen.push(value);
    }
    (!problem).then_some(expr)
}

fn string_or_expr(key: &str, expr: Expr, errors: &mut Errors) -> Option<Expr> {
    match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.value().trim().is_empty() => {
            errors.at(&expr, format!("`{key}` is empty"));
            None
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(_), ..
        }) => Some(expr),
        Expr::Lit(_) => {
            errors.at(
                &expr,
                format!("`{key}` expects a string (or an expression)"),
            );
            None
        }
        _ => Some(expr),
    }
}

/// The value of a numeric literal, possibly negated.
enum Number {
    Int(i128),
    Float(f64),
    Other,
}

fn number(expr: &Expr) -> Option<syn::Result<Number>> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => Some(match lit {
            Lit::Int(i) => i.base10_parse::<i128>().map(Number::Int),
            Lit::Float(f) => f.base10_parse::<f64>().map(Number::Float),
            _ => Ok(Number::Other),
        }),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => number(expr).map(|n| {
            n.map(|n| match n {
                Number::Int(i) => Number::Int(-i),
                Number::Float(f) => Number::Float(-f),
                Number::Other => Number::Other,
            })
        }),
        Expr::Group(g) => number(&g.expr),
        Expr::Paren(p) => number(&p.expr),
        _ => None,
    }
}

/// A whole-number argument: a literal's value, or what to keep instead.
enum Whole {
    /// The literal's value, and the literal.
    Literal(i128, Expr),
    /// The expression as written (checked at run time), or nothing after an error.
    Keep(Option<Value>),
}

/// Reads a whole-number literal (`not_whole` says what was expected when it is another literal).
fn whole_literal(expr: Expr, errors: &mut Errors, not_whole: String) -> Whole {
    match number(&expr) {
        None => Whole::Keep(Some(Value::Expr(expr))),
        Some(Err(e)) => {
            errors.push(e);
            Whole::Keep(None)
        }
        Some(Ok(Number::Int(value))) => Whole::Literal(value, expr),
        Some(Ok(_)) => {
            errors.at(&expr, not_whole);
            Whole::Keep(None)
        }
    }
}

/// A `u32` literal of `value` at `expr`'s span.
fn u32_literal(value: u32, expr: &Expr) -> Value {
    let mut lit = proc_macro2::Literal::u32_suffixed(value);
    lit.set_span(expr.span());
    Value::Lit(quote::ToTokens::into_token_stream(lit))
}

fn positive_u32(key: &str, expr: Expr, errors: &mut Errors) -> Option<Value> {
    let (value, expr) = match whole_literal(
        expr,
        errors,
        format!("`{key}` expects a whole number (u32)"),
    ) {
        Whole::Literal(value, expr) => (value, expr),
        Whole::Keep(kept) => return kept,
    };
    if value < 1 {
        errors.at(&expr, format!("`{key}` must be at least 1"));
        return None;
    }
    match u32::try_from(value) {
        Ok(value) => Some(u32_literal(value, &expr)),
        Err(_) => {
            errors.at(
                &expr,
                format!("`{key}` is too large (at most {})", u32::MAX),
            );
            None
        }
    }
}

fn pass_threshold(expr: Expr, errors: &mut Errors) -> Option<Value> {
    let out_of_range =
        "`pass_threshold` must be in (0, 1]: the share of runs that must pass, e.g. 0.8 for 4 of 5";
    float_arg(
        expr,
        errors,
        "`pass_threshold` expects a number in (0, 1], e.g. 0.8",
        |value| (!(value > 0.0 && value <= 1.0)).then_some(out_of_range),
        false,
    )
}

/// A share's range: `(low, high, low included, message)`.
type Range = (f64, f64, bool, &'static str);

const PASS_RATE: Range = (
    0.0,
    1.0,
    false,
    "`pass_rate` must be above 0 and below 1, e.g. 0.8 (adaptive sampling: is the pass rate above it?)",
);
const CONFIDENCE: Range = (
    0.5,
    1.0,
    true,
    "`confidence` must be at least 0.5 and below 1, e.g. 0.95 (the test is wrong at most 5% of the time)",
);
const INDIFFERENCE: Range = (
    0.0,
    0.5,
    false,
    "`indifference` must be above 0 and below 0.5, e.g. 0.05 (and leave pass_rate ± indifference inside (0, 1))",
);

/// A number in an open interval (or half-open: `low` included), checked when it is a literal.
fn unit_share(key: &str, expr: Expr, errors: &mut Errors, range: Range) -> Option<Value> {
    let (low, high, low_included, message) = range;
    float_arg(
        expr,
        errors,
        if key == "confidence" {
            "`confidence` expects a number, e.g. 0.95"
        } else if key == "pass_rate" {
            "`pass_rate` expects a number, e.g. 0.8"
        } else {
            "`indifference` expects a number, e.g. 0.05"
        },
        |v| {
            let above = if low_included { v >= low } else { v > low };
            (!(above && v < high)).then_some(message)
        },
        false,
    )
}

/// `seed`: a whole number that fits Gemini's signed 32-bit seed.
fn seed(expr: Expr, errors: &mut Errors) -> Option<Value> {
    let (value, expr) = match whole_literal(
        expr,
        errors,
        "`seed` expects a whole number, e.g. 42".into(),
    ) {
        Whole::Literal(value, expr) => (value, expr),
        Whole::Keep(kept) => return kept,
    };
    match u32::try_from(value) {
        Ok(value) if value <= i32::MAX as u32 => Some(u32_literal(value, &expr)),
        _ => {
            errors.at(
                &expr,
                format!("`seed` must be a whole number from 0 to {}", i32::MAX),
            );
            None
        }
    }
}

/// Sampling keys that contradict each other in one attribute, and an adaptive test that can never pass
/// (`max_runs` below the passes it needs), when the values are literals. The library checks the same
/// at run time for values given as expressions.
fn sampling_conflicts(args: &Args, errors: &mut Errors) {
    let fixed = args
        .runs
        .as_ref()
        .map(|_| "runs")
        .or(args.pass_threshold.as_ref().map(|_| "pass_threshold"));
    let adaptive_only = [
        ("confidence", &args.confidence),
        ("max_runs", &args.max_runs),
        ("indifference", &args.indifference),
    ]
    .into_iter()
    .find_map(|(key, value)| value.as_ref().map(|v| (key, v)));
    if let Some(pass_rate) = &args.pass_rate {
        if let Some(key) = fixed {
            errors.at(
                value_tokens(pass_rate),
                format!(
                    "`pass_rate` cannot be combined with `{key}`: `pass_rate` samples until the pass rate is known \
                     (adaptive sampling, at most `max_runs`), `runs` and `pass_threshold` take a fixed number; keep one \
                     of the two"
                ),
            );
            return;
        }
        if let Some(early_stop) = &args.early_stop {
            errors.at(
                value_tokens(early_stop),
                "`early_stop` applies to `runs = N`; adaptive sampling (`pass_rate`) stops as soon as it can by \
                 itself: remove `early_stop`",
            );
        }
        check_adaptive(args, errors);
    } else if let (Some(_), Some((key, value))) = (fixed, adaptive_only) {
        errors.at(
            value_tokens(value),
            format!(
                "`{key}` applies only to adaptive sampling (`pass_rate = ...`), not beside `runs` / \
                 `pass_threshold`; remove it, or replace `runs` and `pass_threshold` with `pass_rate`"
            ),
        );
    }
}

/// Literal adaptive values checked together: the indifference leaves both hypotheses inside (0, 1),
/// and `max_runs` allows the passes a passing test needs (Wald's boundary, as `stats::sprt` computes it).
fn check_adaptive(args: &Args, errors: &mut Errors) {
    let literal = |value: &Option<Value>| match value {
        Some(Value::Lit(tokens)) => syn::parse2::<syn::LitFloat>(tokens.clone())
            .ok()
            .and_then(|l| l.base10_parse::<f64>().ok())
            .or_else(|| {
                syn::parse2::<syn::LitInt>(tokens.clone())
                    .ok()
                    .and_then(|l| l.base10_parse::<f64>().ok())
            }),
        _ => None,
    };
    let Some(pass_rate) = literal(&args.pass_rate) else {
        return;
    };
    let indifference = match &args.indifference {
        None => 0.05,
        Some(_) => match literal(&args.indifference) {
            Some(d) => d,
            None => return,
        },
    };
    let confidence = match &args.confidence {
        None => 0.95,
        Some(_) => match literal(&args.confidence) {
            Some(c) => c,
            None => return,
        },
    };
    let limit = pass_rate.min(1.0 - pass_rate);
    if indifference >= limit {
        // Shown as written (0.1, not 0.09999999999999998).
        let limit = (limit * 1e6).round() / 1e6;
        let at = args
            .indifference
            .as_ref()
            .or(args.pass_rate.as_ref())
            .map(value_tokens);
        errors.at(
            at,
            format!(
                "`indifference` is {indifference}; with `pass_rate = {pass_rate}` it must be below {limit} \
                 (pass_rate ± indifference must lie strictly between 0 and 1)"
            ),
        );
        return;
    }
    let Some(max_runs) = literal(&args.max_runs).or(args.max_runs.is_none().then_some(40.0)) else {
        return;
    };
    let (p0, p1) = (pass_rate - indifference, pass_rate + indifference);
    let alpha = 1.0 - confidence;
    let upper = ((1.0 - alpha) / alpha).ln();
    // The same tolerance as `stats::sprt`, so both count the same passes.
    let needed = ((upper - 1e-9) / (p1 / p0).ln()).ceil().max(1.0);
    if max_runs < needed {
        let at = args
            .max_runs
            .as_ref()
            .or(args.pass_rate.as_ref())
            .map(value_tokens);
        errors.at(
            at,
            format!(
                "`max_runs` is {max_runs}, but even when every run passes the test needs {needed} runs to pass \
                 (pass_rate {pass_rate}, indifference {indifference}, confidence {confidence}); raise `max_runs` to \
                 at least {needed}, or widen `indifference` or lower `confidence`"
            ),
        );
    }
}

/// The tokens of a checked value: the normalised literal, or the expression as written.
pub fn value_tokens(value: &Value) -> TokenStream {
    match value {
        Value::Lit(tokens) => tokens.clone(),
        Value::Expr(expr) => quote::quote!(#expr),
    }
}

fn temperature(expr: Expr, errors: &mut Errors) -> Option<Value> {
    float_arg(
        expr,
        errors,
        "`temperature` expects a number, e.g. 0.0",
        |value| (value < 0.0).then_some("`temperature` cannot be negative"),
        true,
    )
}

/// A float argument: an expression other than a literal is kept as written; a numeric literal is
/// checked (`invalid` gives the error, if any) and typed f32 or f64, any other literal is an error.
fn float_arg(
    expr: Expr,
    errors: &mut Errors,
    not_a_number: &str,
    invalid: impl FnOnce(f64) -> Option<&'static str>,
    f32: bool,
) -> Option<Value> {
    let value = match number(&expr) {
        None => return Some(Value::Expr(expr)),
        Some(Err(e)) => {
            errors.push(e);
            return None;
        }
        Some(Ok(Number::Int(i))) => i as f64,
        Some(Ok(Number::Float(f))) => f,
        Some(Ok(Number::Other)) => {
            errors.at(&expr, not_a_number);
            return None;
        }
    };
    if let Some(message) = invalid(value) {
        errors.at(&expr, message);
        return None;
    }
    Some(Value::Lit(float_literal(value, expr.span(), f32)))
}

/// A float literal of `value` (typed f32 or f64) at `span`, so that `pass_threshold = 1` works too.
fn float_literal(value: f64, span: Span, f32: bool) -> TokenStream {
    let mut lit = if f32 {
        proc_macro2::Literal::f32_suffixed(value as f32)
    } else {
        proc_macro2::Literal::f64_suffixed(value)
    };
    lit.set_span(span);
    quote::ToTokens::into_token_stream(lit)
}

fn boolean(key: &str, expr: Expr, errors: &mut Errors) -> Option<Value> {
    match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(_), ..
        }) => Some(Value::Expr(expr)),
        Expr::Lit(_) => {
            errors.at(&expr, format!("`{key}` expects `true` or `false`"));
            None
        }
        _ => Some(Value::Expr(expr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(attr: TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        parse(attr, &mut errors);
        errors
            .into_error()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn accepts_a_full_attribute() {
        let errors = errors_of(quote::quote! {
            target_prompt = "Summarise {text} in {n} words",
            subject_model = Model::Gemini31FlashLite,
            subject_provider = "google",
            target_prompt_vars(text = "Alice", n = 3),
            runs = 5,
            pass_threshold = 0.8,
            max_tokens = 100,
            enable_cache,
            temperature = 0,
            system = "Be brief.",
            run_fn = my_executor,
            tools = my_tools(),
            live_only,
        });
        assert!(errors.is_empty(), "{errors:?}");
        let errors = errors_of(quote::quote! {
            target_prompt = "x", subject_models = ["local/org/model", "anthropic/claude-haiku-4-5"],
        });
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn subject_models_are_checked_entry_by_entry() {
        let errors = errors_of(quote::quote! {
            target_prompt = "x", subject_models = ["a/b", "nomodel", "/m", "p/", "a/b", 3],
        });
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors[0].contains("\"nomodel\" is not `provider/model`: there is no `/`"));
        assert!(errors[1].contains("the provider before the `/` is empty"));
        assert!(errors[2].contains("the model after the `/` is empty"));
        assert!(errors[3].contains("listed twice"));
        assert!(errors[4].contains("is a string"));
        for (attr, expected) in [
            (
                quote::quote!(
                    target_prompt = "x",
                    subject_models = ["a/b"],
                    subject_provider = "a"
                ),
                "`subject_models` and `subject_provider` cannot be combined",
            ),
            (
                quote::quote!(target_prompt = "x", subject_models = []),
                "is empty",
            ),
            (
                quote::quote!(target_prompt = "x", subject_models = "a/b"),
                "expects a list",
            ),
        ] {
            let errors = errors_of(attr);
            assert!(
                errors.len() == 1 && errors[0].contains(expected),
                "{errors:?}"
            );
        }
        assert!(errors_of(quote::quote!(target_prompt = "x", subject_models = MODELS)).is_empty());
    }

    #[test]
    fn reports_every_mistake_at_once() {
        let errors = errors_of(quote::quote! {
            runs = 0, runs = 2, pass_threshold = 1.5, max_tokens = 0, model = "x", temperature = -1,
        });
        assert_eq!(errors.len(), 7, "{errors:?}");
        assert!(errors[0].contains("at least 1"));
        assert!(errors[1].contains("given twice"));
        assert!(errors[2].contains("(0, 1]"));
        assert!(errors[3].contains("`max_tokens` must be at least 1"));
        assert!(errors[4].contains("did you mean `subject_model`?"));
        assert!(errors[5].contains("cannot be negative"));
        assert!(errors[6].contains("needs a prompt"));
    }

    #[test]
    fn prompt_files_are_checked_under_the_crate_root() {
        // `cargo test` runs with `CARGO_MANIFEST_DIR` set to this crate, as the compiler does for the macro.
        assert_eq!(prompt_file_problem("src/lib.rs"), None);
        assert_eq!(
            prompt_file_problem("src").as_deref(),
            Some("`src` is not a file")
        );
        let missing = prompt_file_problem("prompts/nope.md").expect("a missing file is reported");
        assert!(
            missing.starts_with("prompt file `prompts/nope.md` not found"),
            "{missing}"
        );
    }

    #[test]
    fn non_literal_values_pass_through() {
        let errors = errors_of(quote::quote! {
            target_prompt = PROMPT, runs = RUNS, pass_threshold = THRESHOLD, max_tokens = tokens(),
        });
        assert!(errors.is_empty(), "{errors:?}");
    }
}
