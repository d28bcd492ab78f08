//! The code `#[prompt_test]` generates: the function as written, plus a `RustTest` registered with
//! inventory. The generated code names the library only through `::prompt_tester::__private`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, ReturnType, Type};

use prompt_tester_keys::Key;
use prompt_tester_keys::sampling::SAMPLING_KEYS;

use crate::args::{self, Args, Form};
use crate::checks::{Prompt, value_tokens};
use crate::errors::Errors;

/// Expands `#[prompt_test(attr)] item`. On errors the function is still emitted unchanged, so the only
/// messages the user sees are ours (not "cannot find function" elsewhere).
/// `line` is the line of the function's name, when the compiler tells it.
pub fn expand(attr: TokenStream, item: TokenStream, line: Option<u32>) -> TokenStream {
    let mut errors = Errors::default();
    let parsed = syn::parse2::<ItemFn>(item.clone());
    let form = parsed.as_ref().map_or(Form::Prompt, form_of);
    let args = args::parse(attr, form, &mut errors);
    let func = match parsed {
        Ok(func) => func,
        Err(_) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                "#[prompt_test] applies to a function: `async fn name(run: PromptRun) -> anyhow::Result<()>`",
            ));
            let errors = errors.into_error().map(|e| e.to_compile_error());
            return quote!(#item #errors);
        }
    };
    check_signature(&func, &mut errors);
    if let Some(errors) = errors.into_error() {
        let errors = errors.to_compile_error();
        return quote!(#func #errors);
    }
    let registration = registration(&func, &args, form, line);
    quote! {
        #func
        #registration
    }
}

/// The form of the test: an application test when its argument's type is `AppRun` (by its last
/// segment: `AppRun`, `prompt_tester::AppRun`), else a prompt test.
fn form_of(func: &ItemFn) -> Form {
    match func.sig.inputs.first() {
        Some(FnArg::Typed(arg)) => match &*arg.ty {
            Type::Path(path)
                if path
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "AppRun") =>
            {
                Form::App
            }
            _ => Form::Prompt,
        },
        _ => Form::Prompt,
    }
}

/// The shape the harness can call: `[async] fn name(run: PromptRun) -> R` with `R: IntoTestResult`.
fn check_signature(func: &ItemFn, errors: &mut Errors) {
    let sig = &func.sig;
    for attr in &func.attrs {
        let path = attr.path();
        if path.segments.last().is_some_and(|s| s.ident == "test") {
            errors.at(
                attr,
                "remove this attribute: #[prompt_test] registers the function with the prompt-tester \
                 harness; `#[test]` would have libtest call it without a `PromptRun`",
            );
        }
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.at(unsafety, "a #[prompt_test] function cannot be `unsafe`");
    }
    if !sig.generics.params.is_empty() {
        errors.at(
            &sig.generics,
            "a #[prompt_test] function cannot be generic: the harness calls it with a `PromptRun`",
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.at(
            where_clause,
            "a #[prompt_test] function cannot have a `where` clause",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a #[prompt_test] function cannot be variadic");
    }
    let mut inputs = sig.inputs.iter();
    match inputs.next() {
        None => errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            "a #[prompt_test] function takes one argument, the sample: `run: PromptRun`",
        )),
        Some(FnArg::Receiver(receiver)) => errors.at(
            receiver,
            "a #[prompt_test] function cannot take `self`: write a free function taking `run: PromptRun`",
        ),
        Some(FnArg::Typed(arg)) => {
            if let Type::ImplTrait(_) = &*arg.ty {
                errors.at(&arg.ty, "a #[prompt_test] function cannot be generic: write `PromptRun`");
            }
        }
    }
    // After `self` the advice is already to write a free function; more errors there would only confuse.
    let after_receiver = matches!(sig.inputs.first(), Some(FnArg::Receiver(_)));
    for extra in inputs.filter(|_| !after_receiver) {
        errors.at(
            extra,
            "a #[prompt_test] function takes one argument (`run: PromptRun`); remove this one",
        );
    }
}

/// `const _: () = { ... inventory::submit! { RustTest { ... } } };` for a checked function.
fn registration(func: &ItemFn, args: &Args, form: Form, line: Option<u32>) -> TokenStream {
    let sig = &func.sig;
    let ident = &sig.ident;
    let name = ident.unraw().to_string();
    let ident_span = ident.span();

    // `run` is the macro's own binding (mixed-site hygiene: it cannot clash with the user's names), but it
    // sits at the argument's type so that "expected X, found `PromptRun`" points there.
    let arg_span = match sig.inputs.first() {
        Some(FnArg::Typed(arg)) => arg.ty.span(),
        _ => ident_span,
    };
    let run = Ident::new("run", Span::mixed_site().located_at(arg_span));
    let called = if sig.asyncness.is_some() {
        quote_spanned!(ident_span=> #ident(#run).await)
    } else {
        quote_spanned!(ident_span=> #ident(#run))
    };
    // The result gets its own binding at the return type, so that "cannot return `i32`" points at `i32`
    // rather than at the call. (A mixed-site binding would be reported at the attribute instead, so this
    // one has the user's hygiene and a name no user item is likely to have.)
    let return_span = match &sig.output {
        ReturnType::Default => ident_span,
        ReturnType::Type(_, ty) => ty.span(),
    };
    let output = Ident::new("__prompt_test_output", return_span);
    let result = quote_spanned! {return_span=>
        let #output = #called;
        ::prompt_tester::__private::IntoTestResult::into_test_result(#output)
    };
    let spec = spec_body(args);

    let line = match line {
        Some(line) => quote!(#line),
        None => quote!(::core::line!()),
    };
    let spec_fn = Ident::new("__prompt_test_spec", Span::mixed_site());
    let body = quote!(|#run| ::std::boxed::Box::pin(async move { #result }));
    let (body, needs) = match form {
        Form::Prompt => (
            quote!(::prompt_tester::__private::Body::Prompt(#body)),
            quote!(),
        ),
        Form::App if args.app_env() => (
            quote!(::prompt_tester::__private::Body::AppEnv(#body)),
            quote_spanned!(arg_span=> ::prompt_tester::__private::app_test_needs_endpoint!();),
        ),
        Form::App => (
            quote!(::prompt_tester::__private::Body::App(#body)),
            quote_spanned!(arg_span=> ::prompt_tester::__private::app_test_needs_endpoint!();),
        ),
    };
    quote! {
        // A body returning `()` is bound and passed to `into_test_result` on purpose; an attribute
        // that sets every request key leaves nothing to the spec's `..Default::default()`.
        #[allow(
            non_upper_case_globals,
            clippy::let_unit_value,
            clippy::unit_arg,
            clippy::needless_update
        )]
        const _: () = {
            #needs
            fn #spec_fn() -> ::prompt_tester::__private::TestSpec {
                #spec
            }
            ::prompt_tester::__private::inventory::submit! {
                ::prompt_tester::__private::RustTest {
                    name: #name,
                    module_path: ::core::module_path!(),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    file: ::core::file!(),
                    line: #line,
                    spec: #spec_fn,
                    body: #body,
                }
            }
        };
    }
}

/// The `TestSpec { ... }` expression: only the given keys, the rest from `Default`.
fn spec_body(args: &Args) -> TokenStream {
    let private = quote!(::prompt_tester::__private);
    let mut fields = Vec::new();
    // The keys that describe the request, gathered into the `Written` that suites share.
    let mut request = Vec::new();
    // Of those, the ones `[defaults]` sets too (provider, model, max_tokens, temperature).
    let mut call = Vec::new();
    if let Some((_, prompt)) = &args.prompt {
        let source = match prompt {
            Prompt::Inline(expr) => {
                quote_spanned!(expr.span()=> #private::PromptSource::Inline(#expr))
            }
            // The path is joined to the crate root here so that a missing file is a compile error at the path.
            Prompt::File(path) => quote_spanned! {path.span()=>
                #private::PromptSource::File {
                    path: #path,
                    text: ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #path)),
                }
            },
        };
        fields.push(quote!(target_prompt: #source));
    }
    if let Some(model) = &args.subject_model {
        let value = quote_spanned!(model.span()=> #private::model_id(#model));
        call.push(quote!(model: ::core::option::Option::Some(#value)));
    }
    if let Some(models) = &args.subject_models {
        let value = quote_spanned!(models.span()=> #private::subject_list(#models));
        fields.push(quote!(subject_models: ::core::option::Option::Some(#value)));
    }
    if let Some(provider) = &args.subject_provider {
        let value = quote_spanned!(provider.span()=> #private::provider_name(#provider));
        call.push(quote!(provider: ::core::option::Option::Some(#value)));
    }
    if !args.vars.is_empty() {
        let vars = args.vars.iter().map(|(name, value)| {
            let name = name.to_string();
            // Text stays text; `Media` becomes a part of the prompt (the trait decides, not the macro).
            let rendered =
                quote_spanned!(value.span()=> #private::IntoPromptVar::prompt_var(&(#value)));
            quote!((::std::string::String::from(#name), #rendered))
        });
        fields.push(quote!(target_prompt_vars: ::std::vec![#(#vars),*]));
    }
    if let Some(max_tokens) = args.value(Key::MaxTokens) {
        let value = value_tokens(max_tokens);
        call.push(quote!(max_tokens: ::core::option::Option::Some(#value)));
    }
    // The sampling keys, gathered into the `SamplingKeys` that suites and `[defaults]` share.
    let sampling: Vec<TokenStream> = SAMPLING_KEYS
        .into_iter()
        .filter_map(|key| {
            // The fields of `SamplingKeys` are named as the keys.
            let field = Ident::new(key.name(), Span::call_site());
            let value = value_tokens(args.value(key)?);
            Some(quote!(#field: ::core::option::Option::Some(#value)))
        })
        .collect();
    if !sampling.is_empty() {
        fields.push(quote! {
            sampling: #private::SamplingKeys {
                #(#sampling,)*
                ..::core::default::Default::default()
            }
        });
    }
    if let Some(seed) = args.value(Key::Seed) {
        let value = value_tokens(seed);
        call.push(quote!(seed: ::core::option::Option::Some(#value)));
    }
    if let Some(cache) = args.value(Key::JudgePromptCache) {
        let value = value_tokens(cache);
        fields.push(quote!(judge_prompt_cache: #value));
    }
    if let Some(samples) = args.value(Key::JudgeSamples) {
        let value = value_tokens(samples);
        fields.push(quote!(judge_samples: ::core::option::Option::Some(#value)));
    }
    if let Some(temperature) = args.value(Key::Temperature) {
        let value = value_tokens(temperature);
        call.push(quote!(temperature: ::core::option::Option::Some(#value)));
    }
    if let Some(budget) = args.value(Key::Budget) {
        let value = value_tokens(budget);
        call.push(quote!(budget: ::core::option::Option::Some(#value)));
    }
    if let Some(system) = &args.system {
        let value = quote_spanned!(system.span()=> ::std::convert::Into::<::std::string::String>::into(#system));
        request.push(quote!(system: ::core::option::Option::Some(#value)));
    }
    if let Some(messages) = &args.messages {
        let value = crate::messages::tokens(messages, &private);
        request.push(quote!(messages: ::core::option::Option::Some(#value)));
    }
    if let Some(run_fn) = &args.run_fn {
        // A non-capturing closure (so it is a plain `fn` pointer) that hands the sample to the user's
        // function in the form its arguments take (`RunFnForm`: the prompt, model and max_tokens, the
        // whole request, or the sample). Located at `run_fn`'s value, so that a signature mismatch
        // points there.
        let site = Span::mixed_site().located_at(run_fn.span());
        let sample = Ident::new("sample", site);
        let call =
            quote_spanned!(run_fn.span()=> #private::RunFnForm::call(#run_fn, #sample).await);
        fields.push(quote! {
            run_fn: ::core::option::Option::Some(
                (|#sample: #private::SampleContext| -> #private::RunFnFuture {
                    ::std::boxed::Box::pin(async move { #call })
                }) as fn(#private::SampleContext) -> #private::RunFnFuture
            )
        });
    }
    if let Some(tools) = &args.tools {
        let value = quote_spanned!(tools.span()=> ::std::iter::FromIterator::from_iter(#tools));
        request.push(quote!(tools: ::core::option::Option::Some(#value)));
    }
    if let Some(live_only) = args.value(Key::LiveOnly) {
        let value = value_tokens(live_only);
        fields.push(quote!(live_only: #value));
    }
    if let Some(agent) = &args.agent {
        let value = quote_spanned!(agent.span()=> #private::IntoToolbox::into_toolbox(#agent));
        fields.push(quote!(toolbox: ::core::option::Option::Some(#value)));
    }
    if !call.is_empty() {
        request.push(quote! {
            call: #private::Defaults {
                #(#call,)*
                ..::core::default::Default::default()
            }
        });
    }
    if !request.is_empty() {
        fields.push(quote! {
            request: #private::Written {
                #(#request,)*
                ..::core::default::Default::default()
            }
        });
    }
    quote! {
        #private::TestSpec {
            #(#fields,)*
            ..::core::default::Default::default()
        }
    }
}
