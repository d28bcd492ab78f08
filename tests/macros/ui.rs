//! Compile-time behaviour of `#[prompt_test]`: what compiles (and runs), and the message and span of each
//! mistake. Regenerate the expected output with `TRYBUILD=overwrite` and read the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("macros/ui/pass.rs");
    cases.compile_fail("macros/ui/fail_*.rs");
}
