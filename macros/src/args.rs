//! The arguments of `#[prompt_test(...)]`: each key looked up in the table of keys
//! (`prompt_tester_keys`), checked by its kind ([`crate::checks`]), then the sampling keys together
//! ([`crate::sampling`]) and the keys that exclude each other.

use std::collections::BTreeMap;

use proc_macro2::{Span, TokenStream};
use prompt_tester_keys::vocabulary::whose;
use prompt_tester_keys::{Key, Kind, Place, Reading, names_in};
use syn::ext::IdentExt;
use syn::{Expr, Ident};

use crate::checks::{self, Prompt, Value};
use crate::errors::Errors;
use crate::messages::{self, Messages};
use crate::raw::{self, RawArg, RawValue};
use crate::sampling;
use crate::suggest::closest;

/// The form of a test, told by the type of its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `run: PromptRun`: the harness calls the model with the test's prompt.
    Prompt,
    /// `run: AppRun`: the body calls the application itself.
    App,
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
    /// `system`.
    pub system: Option<Expr>,
    /// `messages`, as written until every key is read (whether `system` is set decides a check).
    messages_written: Option<Expr>,
    /// `messages`, checked.
    pub messages: Option<Messages>,
    /// `run_fn`.
    pub run_fn: Option<Expr>,
    /// `tools`.
    pub tools: Option<Expr>,
    /// `agent`.
    pub agent: Option<Expr>,
    /// The numbers and flags (`max_tokens`, the sampling keys, `seed`, `judge_samples`, `temperature`,
    /// `judge_prompt_cache`, `live_only`), each checked: a normalised literal or the expression as written.
    pub values: BTreeMap<Key, Value>,
}

impl Args {
    /// The checked value of a number or flag key, if it was given.
    pub fn value(&self, key: Key) -> Option<&Value> {
        self.values.get(&key)
    }

    /// Whether `app_env` is set (a bare `app_env` or `app_env = true`; checked to be a literal).
    pub fn app_env(&self) -> bool {
        match self.value(Key::AppEnv) {
            Some(Value::Lit(_)) => true,
            Some(Value::Expr(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(set),
                ..
            }))) => set.value,
            _ => false,
        }
    }
}

/// Parses and checks the attribute's arguments for a test of `form`. On a syntax error nothing else
/// can be checked.
pub fn parse(attr: TokenStream, form: Form, errors: &mut Errors) -> Args {
    let raw = match raw::args(attr) {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(e);
            return Args::default();
        }
    };
    let mut args = Args::default();
    let mut seen: Vec<Key> = Vec::new();
    for arg in raw {
        let name = arg.key.unraw().to_string();
        // A suite's name for a key is taken too (`prompt`, `inputs`, `model`, `provider`, `models`).
        let key = match Key::read_in(&name, Place::Attribute) {
            Reading::Own(key) | Reading::Twin(key) => key,
            Reading::OtherSide(_, note) => {
                let whose = whose(&name, Place::Attribute);
                errors.at(&arg.key, format!("{whose}: {note}"));
                continue;
            }
            Reading::Unknown => {
                errors.at(&arg.key, unknown_key_message(&name));
                continue;
            }
        };
        if seen.contains(&key) {
            errors.at(&arg.key, format!("`{key}` is given twice; keep one"));
            continue;
        }
        seen.push(key);
        if form == Form::App && prompt_tester_keys::PROMPT_RUN_KEYS.contains(&key) {
            errors.at(
                &arg.key,
                format!(
                    "`{name}` is for tests that take a `PromptRun`; an `AppRun` test calls the \
                     application itself: remove `{name}` (the application's client sets its own \
                     request), or take `run: PromptRun` to test a prompt"
                ),
            );
            continue;
        }
        if key == Key::AppEnv
            && let RawValue::Assign(_, expr) = &arg.value
            && !matches!(
                expr,
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Bool(_),
                    ..
                })
            )
        {
            // The harness decides before any test runs whether to set the variables: it reads the
            // registration, not an expression evaluated later.
            errors.at(
                expr,
                "`app_env` takes `true` or `false` as written, not an expression",
            );
            continue;
        }
        if form == Form::Prompt && key == Key::AppEnv {
            errors.at(
                &arg.key,
                "`app_env` is for tests that take an `AppRun` (the application's client reads its \
                 base URL from the environment); a `PromptRun` test's calls are the harness's own: \
                 remove `app_env`, or take `run: AppRun`",
            );
            continue;
        }
        args.take(key, arg, errors);
    }
    if let Some(models) = &args.subject_models {
        // Each entry names its provider: a single subject beside the list would be ambiguous.
        for key in [Key::SubjectModel, Key::SubjectProvider] {
            if seen.contains(&key) {
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
    if let Some(expr) = args.messages_written.take() {
        args.messages = messages::read(expr, args.system.is_some(), errors);
    }
    sampling::check(&args.values, errors);
    check_placeholders(&args, errors);
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
    if form == Form::Prompt
        && !seen
            .iter()
            .any(|k| matches!(k, Key::TargetPrompt | Key::TargetPromptFile))
    {
        errors.push(syn::Error::new(
            Span::call_site(),
            "#[prompt_test] needs a prompt: add `target_prompt = \"...\"` or \
             `target_prompt_file = \"prompts/NAME.md\"` (relative to the crate root); or, to test \
             the application's own calls with no prompt, take `run: AppRun`",
        ));
    }
    args
}

/// A prompt written as a literal: each of its `{placeholders}` needs a value in `target_prompt_vars`,
/// as each of a suite's needs an input (a prompt from a file or an expression is checked when the test
/// runs, before any call).
fn check_placeholders(args: &Args, errors: &mut Errors) {
    let Some((
        _,
        Prompt::Inline(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(prompt),
            ..
        })),
    )) = &args.prompt
    else {
        return;
    };
    let template = prompt.value();
    let given: Vec<String> = args.vars.iter().map(|(name, _)| name.to_string()).collect();
    for name in prompt_tester_keys::template::placeholders(&template) {
        if !given.iter().any(|g| g == name) {
            errors.at(
                prompt,
                format!(
                    "placeholder {{{name}}} of `target_prompt` has no value: add \
                     `target_prompt_vars({name} = ...)` (or write the brace as part of the text otherwise, \
                     such as `{{ {name} }}`)"
                ),
            );
        }
    }
}

fn unknown_key_message(key: &str) -> String {
    let keys = names_in(Place::Attribute);
    // A suite's names are taken too, so they may be what was meant.
    let mut candidates = keys.clone();
    candidates.extend(
        prompt_tester_keys::TWINS
            .iter()
            .map(|(_, suite)| suite.name()),
    );
    let hint = match closest(key, &candidates) {
        Some(best) => format!("; did you mean `{best}`?"),
        None => String::new(),
    };
    let twins: Vec<String> = prompt_tester_keys::TWINS
        .iter()
        .map(|(attribute, suite)| format!("{suite} for {attribute}"))
        .collect();
    format!(
        "unknown key `{key}` in #[prompt_test]{hint}\nvalid keys: {}\nas in suites, also: {}",
        keys.join(", "),
        twins.join(", ")
    )
}

impl Args {
    /// Fills the field of `key` from `arg`, or reports why it cannot.
    fn take(&mut self, key: Key, arg: RawArg, errors: &mut Errors) {
        let RawArg {
            key: key_ident,
            value,
        } = arg;
        let kind = key.row().kind;
        if kind == Kind::Table {
            match value {
                RawValue::List(_, tokens) => self.vars = raw::vars(tokens, errors),
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
            // A bare `judge_prompt_cache`, `live_only` or `early_stop` reads naturally as "set".
            RawValue::Flag if kind == Kind::Bool => {
                let set = Value::Lit(quote::quote_spanned!(key_ident.span()=> true));
                self.values.insert(key, set);
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
        let value = match kind {
            Kind::Whole => checks::whole(key, expr, errors),
            Kind::Share => checks::share(key, expr, errors),
            Kind::Number if key == Key::Budget => checks::budget(expr, errors),
            Kind::Number => checks::temperature(expr, errors),
            Kind::Bool => checks::boolean(key, expr, errors),
            _ => {
                self.take_expr(key, key_ident, expr, errors);
                return;
            }
        };
        if let Some(value) = value {
            self.values.insert(key, value);
        }
    }

    /// Fills the field of a key whose value is kept as an expression (checked when it is a literal).
    fn take_expr(&mut self, key: Key, key_ident: Ident, expr: Expr, errors: &mut Errors) {
        match key {
            Key::TargetPrompt | Key::TargetPromptFile => {
                if let Some((first, _)) = &self.prompt {
                    errors.at(
                        &key_ident,
                        format!("give either `target_prompt` or `target_prompt_file`, not both (`{first}` is already set)"),
                    );
                    return;
                }
                if let Some(prompt) = checks::prompt(key, expr, errors) {
                    self.prompt = Some((key_ident, prompt));
                }
            }
            Key::SubjectModel => self.subject_model = checks::string_or_expr(key, expr, errors),
            Key::SubjectProvider => {
                self.subject_provider = checks::string_or_expr(key, expr, errors)
            }
            Key::SubjectModels => self.subject_models = checks::subject_models(expr, errors),
            Key::System => self.system = checks::string_or_expr(key, expr, errors),
            Key::Messages => self.messages_written = Some(expr),
            Key::RunFn => self.run_fn = checks::code(key, expr, errors),
            Key::Tools => self.tools = checks::code(key, expr, errors),
            Key::Agent => self.agent = checks::code(key, expr, errors),
            _ => unreachable!("`{key}` is not a key of the attribute"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(attr: TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        parse(attr, Form::Prompt, &mut errors);
        errors
            .into_error()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    /// Checks that there are as many errors as `expected` texts, each containing its own, in order.
    fn assert_errors(errors: &[String], expected: &[&str]) {
        assert_eq!(errors.len(), expected.len(), "{errors:?}");
        for (error, expected) in errors.iter().zip(expected) {
            assert!(error.contains(expected), "{expected:?} not in {error}");
        }
    }

    /// An application test takes the keys of any test, and no key of the harness's own call.
    #[test]
    fn an_app_run_test_takes_no_key_of_the_prompt_s_call() {
        let app = |attr: TokenStream| {
            let mut errors = Errors::default();
            parse(attr, Form::App, &mut errors);
            errors
                .into_error()
                .map(|e| e.into_iter().map(|e| e.to_string()).collect())
                .unwrap_or_default()
        };
        let ok: Vec<String> = app(quote::quote!(
            runs = 5,
            pass_threshold = 0.8,
            early_stop,
            budget = 0.5,
            live_only,
            judge_samples = 3
        ));
        assert!(ok.is_empty(), "{ok:?}");
        assert_errors(
            &app(quote::quote!(
                target_prompt = "x",
                subject_model = "m",
                runs = 2
            )),
            &[
                "`target_prompt` is for tests that take a `PromptRun`; an `AppRun` test calls the application itself",
                "`subject_model` is for tests that take a `PromptRun`",
            ],
        );
        for key in prompt_tester_keys::PROMPT_RUN_KEYS {
            let ident = Ident::new(key.name(), Span::call_site());
            assert_eq!(app(quote::quote!(#ident = X)).len(), 1, "{key}");
        }
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
            judge_prompt_cache,
            temperature = 0,
            system = "Be brief.",
            messages = [user("Hi"), assistant("Hello.")],
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
        assert_errors(
            &errors,
            &[
                "\"nomodel\" is not `provider/model`: there is no `/`",
                "the provider before the `/` is empty",
                "the model after the `/` is empty",
                "listed twice",
                "is a string",
            ],
        );
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
            assert_errors(&errors_of(attr), &[expected]);
        }
        assert!(errors_of(quote::quote!(target_prompt = "x", subject_models = MODELS)).is_empty());
    }

    #[test]
    fn reports_every_mistake_at_once() {
        let errors = errors_of(quote::quote! {
            runs = 0, runs = 2, pass_threshold = 1.5, max_tokens = 0, modl = "x", temperature = -1,
        });
        assert_errors(
            &errors,
            &[
                "at least 1",
                "given twice",
                "(0, 1]",
                "`max_tokens` must be at least 1",
                "did you mean `model`?",
                "cannot be negative",
                "needs a prompt",
            ],
        );
        // A suite's name for a key is that key: given twice with the attribute's.
        let errors = errors_of(quote::quote! {
            prompt = "x", target_prompt = "y", model = "m", provider = "p",
        });
        assert_errors(&errors, &["`target_prompt` is given twice; keep one"]);
    }

    /// A suite's name for a key is read as the key; a suite's key the attribute has no use for says
    /// what to write instead.
    #[test]
    fn a_suite_s_name_is_read_and_a_suite_only_key_teaches_the_attribute_s_way() {
        let mut errors = Errors::default();
        let args = parse(
            quote::quote!(target_prompt = "x", judge_prompt_cache, models = ["a/b"]),
            Form::Prompt,
            &mut errors,
        );
        assert!(errors.into_error().is_none());
        assert!(args.value(Key::JudgePromptCache).is_some());
        assert!(
            args.subject_models.is_some(),
            "`models` is `subject_models`"
        );
        assert_errors(
            &errors_of(quote::quote!(
                target_prompt = "x",
                threshold = 0.5,
                skip = "later"
            )),
            &[
                "`threshold` is a suite's key, not #[prompt_test]'s: the function's body passes or fails each \
                 sample; `pass_threshold` is the share of samples that must pass",
                "`skip` is a suite's key, not #[prompt_test]'s: a #[prompt_test] is not skipped by a key",
            ],
        );
    }

    #[test]
    fn a_budget_is_a_number_of_usd_of_at_least_0() {
        assert!(errors_of(quote::quote!(target_prompt = "x", budget = 0.5)).is_empty());
        assert!(errors_of(quote::quote!(target_prompt = "x", budget = LIMIT)).is_empty());
        assert_errors(
            &errors_of(quote::quote!(target_prompt = "x", budget = -1.0)),
            &["`budget` must be at least 0, in USD, e.g. 0.50"],
        );
        assert_errors(
            &errors_of(quote::quote!(target_prompt = "x", budget = "ten")),
            &["`budget` expects a number of USD, e.g. 0.50"],
        );
    }

    /// `judge_samples`: odd, from 1 to 99 (an even count of answers could split evenly).
    #[test]
    fn judge_samples_is_an_odd_whole_number() {
        for ok in [
            quote::quote!(1),
            quote::quote!(3),
            quote::quote!(99),
            quote::quote!(SAMPLES),
        ] {
            let errors = errors_of(quote::quote!(target_prompt = "x", judge_samples = #ok));
            assert!(errors.is_empty(), "{ok}: {errors:?}");
        }
        for (value, expected) in [
            (
                quote::quote!(2),
                "`judge_samples` is 2, an even number: the answers could split evenly; write an odd number, \
                 e.g. `judge_samples = 3`",
            ),
            (
                quote::quote!(0),
                "`judge_samples` must be an odd whole number from 1 to 99, e.g. 3",
            ),
            (
                quote::quote!(101),
                "`judge_samples` is too large (at most 99)",
            ),
            (quote::quote!(2.5), "`judge_samples` expects a whole number"),
        ] {
            let errors = errors_of(quote::quote!(target_prompt = "x", judge_samples = #value));
            assert_errors(&errors, &[expected]);
        }
    }

    #[test]
    fn non_literal_values_pass_through() {
        let errors = errors_of(quote::quote! {
            target_prompt = PROMPT, runs = RUNS, pass_threshold = THRESHOLD, max_tokens = tokens(),
        });
        assert!(errors.is_empty(), "{errors:?}");
    }

    /// Every key the table gives the attribute is read: none is unknown, and each literal of the wrong
    /// kind is reported at the key's own value.
    #[test]
    fn every_key_of_the_table_is_read() {
        for key in prompt_tester_keys::keys_in(Place::Attribute) {
            let ident = Ident::new(key.name(), Span::call_site());
            let written = match key.row().kind {
                Kind::Table => quote::quote!(#ident(x = 1)),
                _ => quote::quote!(#ident = VALUE),
            };
            let prompt = match key {
                Key::TargetPrompt | Key::TargetPromptFile => quote::quote!(),
                _ => quote::quote!(target_prompt = "x",),
            };
            let errors = errors_of(quote::quote!(#prompt #written));
            // `target_prompt_file` needs a literal path and `app_env` a literal flag; every other key
            // takes an expression.
            let expected = usize::from(matches!(key, Key::TargetPromptFile | Key::AppEnv));
            assert_eq!(errors.len(), expected, "{key}: {errors:?}");
            // A character literal is a value of no key.
            if key.row().kind != Kind::Table {
                let errors = errors_of(quote::quote!(#prompt #ident = 'c'));
                assert_eq!(errors.len(), 1, "{key}: {errors:?}");
                assert!(errors[0].contains(&format!("`{key}`")), "{key}: {errors:?}");
            }
        }
    }
}
