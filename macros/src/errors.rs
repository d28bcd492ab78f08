//! Every mistake found in one attribute, kept (combined into one `syn::Error`) so the user sees them all
//! in one build.

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
