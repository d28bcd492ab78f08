//! The check of each key's value on its own: literals are checked against the key's kind and range
//! in the table (`prompt_tester_keys`), any other expression is kept as written and typed by the field
//! it fills.

use proc_macro2::{Span, TokenStream};
use prompt_tester_keys::sampling::EvenJudgeSamples;
use prompt_tester_keys::{Key, Range};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

use crate::errors::Errors;

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

/// The tokens of a checked value: the normalised literal, or the expression as written.
pub fn value_tokens(value: &Value) -> TokenStream {
    match value {
        Value::Lit(tokens) => tokens.clone(),
        Value::Expr(expr) => quote::quote!(#expr),
    }
}

/// `target_prompt = expr` (a string literal or an expression) or `target_prompt_file = "path"` (a
/// literal path to a file under the crate root).
pub fn prompt(key: Key, expr: Expr, errors: &mut Errors) -> Option<Prompt> {
    if key == Key::TargetPrompt {
        return match &expr {
            Expr::Lit(ExprLit {
                lit: Lit::Str(_), ..
            }) => Some(Prompt::Inline(expr)),
            Expr::Lit(_) => {
                errors.at(
                    &expr,
                    "`target_prompt` expects a string: the prompt template",
                );
                None
            }
            _ => Some(Prompt::Inline(expr)),
        };
    }
    let Expr::Lit(ExprLit {
        lit: Lit::Str(path),
        ..
    }) = &expr
    else {
        // `include_str!` needs a literal, so a constant or an expression cannot be read.
        errors.at(
            &expr,
            "`target_prompt_file` expects a string literal: a path relative to the crate root, \
             e.g. \"prompts/summary.md\"",
        );
        return None;
    };
    let value = path.value();
    if value.trim().is_empty() {
        errors.at(
            path,
            "`target_prompt_file` is empty; give a path relative to the crate root",
        );
        return None;
    }
    if value.starts_with('/') || value.starts_with('\\') {
        errors.at(
            path,
            "`target_prompt_file` is relative to the crate root (the directory of Cargo.toml); \
             remove the leading `/`",
        );
        return None;
    }
    if let Some(problem) = prompt_file_problem(&value) {
        errors.at(path, problem);
        return None;
    }
    Some(Prompt::File(path.clone()))
}

/// Why the prompt file cannot be included, said without the absolute path (the message is the same on
/// every machine). `include_str!` in the expansion would report it too, but only as "couldn't read".
/// Outside cargo (no `CARGO_MANIFEST_DIR`) the check is left to `include_str!`.
pub fn prompt_file_problem(path: &str) -> Option<String> {
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

const SUBJECT_MODELS_EXAMPLE: &str =
    "subject_models = [\"local/SmolLM2-135M-Instruct\", \"anthropic/claude-haiku-4-5\"]";

/// `subject_models = ["provider/model", ...]`: a literal list is checked here (each entry split at its
/// first `/`, none empty, none twice); any other expression is checked when the trials are built.
pub fn subject_models(expr: Expr, errors: &mut Errors) -> Option<Expr> {
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

/// A string key (`subject_model`, `subject_provider`, `system`): a non-empty literal or an expression.
pub fn string_or_expr(key: Key, expr: Expr, errors: &mut Errors) -> Option<Expr> {
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

/// A key taking Rust code (`run_fn`, `tools`, `agent`): any expression but a literal.
pub fn code(key: Key, expr: Expr, errors: &mut Errors) -> Option<Expr> {
    let Expr::Lit(_) = &expr else {
        return Some(expr);
    };
    let expected = match key {
        Key::RunFn => "`run_fn` expects the path of an async fn, e.g. `run_fn = my_executor`",
        Key::Tools => "`tools` expects a `Vec<ToolSpec>` (or an array or iterator of them)",
        _ => {
            "`agent` expects a `Toolbox` or the path of a `fn() -> Toolbox`, e.g. `agent = my_agent`"
        }
    };
    errors.at(&expr, expected);
    None
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

/// The table's range of a numeric key.
fn range_of(key: Key) -> Range {
    key.row()
        .range
        .unwrap_or_else(|| panic!("`{key}` has no range in the table"))
}

/// A whole-number key (`max_tokens`, `runs`, `max_runs`, `seed`, `judge_samples`, odd): a literal in the
/// key's range becomes a `u32` literal; any other expression is kept (and checked when the test runs).
pub fn whole(key: Key, expr: Expr, errors: &mut Errors) -> Option<Value> {
    let range = range_of(key);
    let (min, max) = range
        .whole_bounds()
        .unwrap_or_else(|| panic!("`{key}` is not a whole number in the table"));
    let not_whole = match key {
        Key::Seed => "`seed` expects a whole number, e.g. 42".to_string(),
        _ => format!("`{key}` expects a whole number (u32)"),
    };
    let value = match number(&expr) {
        None => return Some(Value::Expr(expr)),
        Some(Err(e)) => {
            errors.push(e);
            return None;
        }
        Some(Ok(Number::Int(value))) => value,
        Some(Ok(_)) => {
            errors.at(&expr, not_whole);
            return None;
        }
    };
    // `seed` says its whole range; a count its minimum, and u32's maximum only when past it.
    let problem = match key {
        Key::Seed if !range.contains_whole(value) => Some(key.must_be()),
        Key::Seed => None,
        _ if value < i128::from(min) => Some(key.must_be()),
        _ if value > i128::from(max) => Some(format!("`{key}` is too large (at most {max})")),
        // An even number of judge answers could split evenly.
        Key::JudgeSamples => EvenJudgeSamples::of(value as u64).map(|even| even.to_string()),
        _ => None,
    };
    if let Some(problem) = problem {
        errors.at(&expr, problem);
        return None;
    }
    let value = u32::try_from(value).expect("the table's whole ranges fit u32");
    let mut lit = proc_macro2::Literal::u32_suffixed(value);
    lit.set_span(expr.span());
    Some(Value::Lit(quote::ToTokens::into_token_stream(lit)))
}

/// A share (`pass_threshold`, `pass_rate`, `confidence`, `indifference`): a numeric literal in the
/// key's range becomes an `f64` literal.
pub fn share(key: Key, expr: Expr, errors: &mut Errors) -> Option<Value> {
    let not_a_number = match key {
        Key::PassThreshold => "`pass_threshold` expects a number in (0, 1], e.g. 0.8",
        Key::PassRate => "`pass_rate` expects a number, e.g. 0.8",
        Key::Confidence => "`confidence` expects a number, e.g. 0.95",
        _ => "`indifference` expects a number, e.g. 0.05",
    };
    let range = range_of(key);
    float_arg(
        expr,
        errors,
        not_a_number,
        |value| (!range.contains(value)).then(|| key.must_be()),
        false,
    )
}

/// `temperature`: a numeric literal in its range becomes an `f32` literal.
pub fn temperature(expr: Expr, errors: &mut Errors) -> Option<Value> {
    let range = range_of(Key::Temperature);
    float_arg(
        expr,
        errors,
        "`temperature` expects a number, e.g. 0.0",
        |value| (!range.contains(value)).then(|| "`temperature` cannot be negative".to_string()),
        true,
    )
}

/// `budget`: a numeric literal of at least 0 (USD) becomes an `f64` literal.
pub fn budget(expr: Expr, errors: &mut Errors) -> Option<Value> {
    let range = range_of(Key::Budget);
    float_arg(
        expr,
        errors,
        "`budget` expects a number of USD, e.g. 0.50",
        |value| (!range.contains(value)).then(|| Key::Budget.must_be()),
        false,
    )
}

/// A float argument: an expression other than a literal is kept as written; a numeric literal is
/// checked (`invalid` gives the error, if any) and typed f32 or f64, any other literal is an error.
fn float_arg(
    expr: Expr,
    errors: &mut Errors,
    not_a_number: &str,
    invalid: impl FnOnce(f64) -> Option<String>,
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

/// A flag (`judge_prompt_cache`, `live_only`, `early_stop`) written with a value: a `bool` literal or an
/// expression.
pub fn boolean(key: Key, expr: Expr, errors: &mut Errors) -> Option<Value> {
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
}
