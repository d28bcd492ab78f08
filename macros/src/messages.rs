//! `messages = [system("..."), user("..."), assistant("...")]`: each turn's role checked by name
//! (did you mean...?), and the order of the turns by the rule every wire format takes
//! (`prompt_tester_keys::conversation`), at compile time. Any other expression is a list of `Turn`s
//! the library checks when the test's trials are built.

use proc_macro2::TokenStream;
use prompt_tester_keys::conversation::{self, Role};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit};

use crate::errors::Errors;
use crate::suggest::closest;

/// The turns as written.
pub enum Messages {
    /// `[role("text"), ...]`: each turn's role and text expression.
    Literal(Vec<(Role, Expr)>),
    /// An expression giving the turns (checked at run time).
    Expr(Expr),
}

const FORM: &str = "write each turn as `system(\"...\")`, `user(\"...\")` or `assistant(\"...\")`, e.g. \
                    `messages = [user(\"Great film!\"), assistant(\"positive\")]`";

/// Reads `messages = ...`; `system_key` says `system` is set too.
pub fn read(expr: Expr, system_key: bool, errors: &mut Errors) -> Option<Messages> {
    let items = match expr {
        Expr::Array(array) => array.elems,
        Expr::Lit(_) => {
            errors.at(&expr, format!("`messages` expects a list of turns: {FORM}"));
            return None;
        }
        other => return Some(Messages::Expr(other)),
    };
    let mut turns = Vec::new();
    let mut ok = true;
    for item in items {
        match turn(&item, errors) {
            Some(turn) => turns.push((turn, item)),
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    let checked: Vec<(Role, Option<String>)> = turns
        .iter()
        .map(|((role, text), _)| (*role, literal_text(text)))
        .collect();
    let roles: Vec<(Role, Option<&str>)> =
        checked.iter().map(|(r, t)| (*r, t.as_deref())).collect();
    if system_key && roles.first().is_some_and(|(r, _)| *r == Role::System) {
        errors.at(
            &turns[0].1,
            format!(
                "{}; {}",
                conversation::SYSTEM_TWICE,
                conversation::SYSTEM_TWICE_FIX
            ),
        );
        return None;
    }
    if let Err(problem) = conversation::check(&roles) {
        errors.at(&turns[problem.index].1, format!("`messages`: {problem}"));
        return None;
    }
    Some(Messages::Literal(
        turns.into_iter().map(|(t, _)| t).collect(),
    ))
}

/// One `role("text")`, or why it is not one.
fn turn(item: &Expr, errors: &mut Errors) -> Option<(Role, Expr)> {
    let Expr::Call(call) = item else {
        errors.at(item, FORM);
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        errors.at(&call.func, FORM);
        return None;
    };
    let Some(ident) = path.path.get_ident() else {
        errors.at(&call.func, FORM);
        return None;
    };
    let name = ident.to_string();
    let Some(role) = Role::named(&name) else {
        let names = Role::names();
        let hint = Role::known_as(&name)
            .map(Role::name)
            .or_else(|| closest(&name, &names))
            .map_or_else(String::new, |r| format!("; did you mean `{r}`?"));
        errors.at(
            ident,
            format!("unknown role `{name}` in `messages`{hint}\nroles: system, user, assistant"),
        );
        return None;
    };
    if call.args.len() != 1 {
        errors.at(
            &call.args,
            format!("`{role}(...)` takes one argument, the turn's text: `{role}(\"...\")`"),
        );
        return None;
    }
    let text = call.args[0].clone();
    if let Expr::Lit(ExprLit { lit, .. }) = &text
        && !matches!(lit, Lit::Str(_))
    {
        errors.at(
            &text,
            format!("`{role}(...)` expects a string (or an expression)"),
        );
        return None;
    }
    Some((role, text))
}

/// The text of a string literal; `None` for an expression.
fn literal_text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// The `Vec<Turn>` the messages build.
pub fn tokens(messages: &Messages, private: &TokenStream) -> TokenStream {
    match messages {
        Messages::Literal(turns) => {
            let turns = turns.iter().map(|(role, text)| {
                let ctor = syn::Ident::new(role.name(), text.span());
                quote_spanned!(text.span()=> #private::Turn::#ctor(#text))
            });
            quote!(#private::turn_list([#(#turns),*]))
        }
        Messages::Expr(expr) => quote_spanned!(expr.span()=> #private::turn_list(#expr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(expr: TokenStream, system_key: bool) -> Vec<String> {
        let mut errors = Errors::default();
        read(syn::parse2(expr).unwrap(), system_key, &mut errors);
        errors
            .into_error()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_literal_list_in_order_is_read_and_an_expression_passes() {
        let ok = quote!([system("You label."), user(TEXT), assistant("positive")]);
        assert!(errors_of(ok, false).is_empty());
        assert!(errors_of(quote!(few_shot()), true).is_empty());
        assert!(errors_of(quote!([]), false).is_empty());
    }

    #[test]
    fn roles_and_order_are_checked() {
        let cases = [
            (
                quote!([model("x")]),
                "unknown role `model` in `messages`; did you mean `assistant`?",
            ),
            (quote!([usr("x"), assistant("y")]), "did you mean `user`?"),
            (quote!([user("x")]), "the last turn (1) is a `user` turn"),
            (quote!([assistant("x")]), "no `user` turn before it"),
            (
                quote!([user("x"), assistant("")]),
                "turn 2 (`assistant`) has no text",
            ),
            (
                quote!([user("a", "b"), assistant("y")]),
                "takes one argument",
            ),
            (quote!([user(1), assistant("y")]), "expects a string"),
            (quote!(["x"]), "write each turn as"),
            (quote!("x"), "expects a list of turns"),
        ];
        for (expr, expected) in cases {
            let errors = errors_of(expr, false);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains(expected),
                "{expected:?} not in {errors:?}"
            );
        }
        let errors = errors_of(quote!([system("a"), user("b"), assistant("c")]), true);
        assert!(errors[0].contains("given twice"), "{errors:?}");
    }
}
