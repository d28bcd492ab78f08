use proc_macro::TokenStream; #[proc_macro_attribute] pub fn prompt_test(_a: TokenStream, i: TokenStream) -> TokenStream { i }
