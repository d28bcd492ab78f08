//! The syntax of the attribute's arguments: `key = value`, `key(...)` or a bare `key`, and the
//! `name = value` pairs of `target_prompt_vars(...)`, read before any key is checked.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};

use crate::errors::Errors;

/// One `key = value`, `key(...)` or bare `key` as written.
pub struct RawArg {
    /// The key as written (a raw identifier keeps its `r#`).
    pub key: Ident,
    /// What follows it.
    pub value: RawValue,
}

/// What follows a key.
pub enum RawValue {
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

/// The arguments as written, or the syntax error that stops every other check.
pub fn args(attr: TokenStream) -> syn::Result<Punctuated<RawArg, Token![,]>> {
    Punctuated::<RawArg, Token![,]>::parse_terminated.parse2(attr)
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

/// The pairs of `target_prompt_vars(...)`: names (raw identifiers unwrapped) and value expressions,
/// each name once.
pub fn vars(tokens: TokenStream, errors: &mut Errors) -> Vec<(Ident, Expr)> {
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
