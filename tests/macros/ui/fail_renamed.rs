// A key's old name still works, with a deprecation warning at the name (an error here, under
// `deny(deprecated)`, so that its text is pinned).
#![deny(deprecated)]
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "Hi", enable_cache, runs = 2)]
async fn old_name_of_the_cache_switch(_run: PromptRun) {}

fn main() {}
