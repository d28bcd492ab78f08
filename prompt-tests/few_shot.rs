//! A conversation before the prompt in `#[prompt_test]` (`messages`), against the local model: the
//! example turns make it answer with the city alone. (The suite `few_shot.evals.toml` does the same
//! in TOML.)

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Capital of {country}?",
    target_prompt_vars(country = "France"),
    messages = [
        system("Answer with the city name only."),
        user("Capital of Italy?"),
        assistant("Rome"),
        user("Capital of Germany?"),
        assistant("Berlin"),
    ],
    max_tokens = 30
)]
fn answers_with_the_city_alone(run: PromptRun) {
    assert_eq!(run.output.trim(), "Paris", "the whole answer is the city");
    // The prompt is the last turn; the conversation went before it.
    assert_eq!(run.prompt, "Capital of France?");
}
