// Sampling keys out of range or contradicting each other: each reported at its value.
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "x", pass_rate = 0.8, confidence = 1.5)]
fn confidence_above_one(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", pass_rate = 0.8, max_runs = 10)]
fn max_runs_below_the_passes_needed(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", runs = 5, pass_rate = 0.8)]
fn pass_rate_with_runs(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", pass_rate = 0.9, indifference = 0.1)]
fn indifference_out_of_range(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", pass_rate = 1.0, indifference = -0.05)]
fn pass_rate_and_indifference_out_of_range(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", runs = 5, max_runs = 60)]
fn max_runs_with_runs(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", pass_rate = 0.8, early_stop)]
fn early_stop_with_pass_rate(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", seed = -1, early_stop = 1)]
fn negative_seed_and_a_number_for_a_flag(_run: PromptRun) {}

fn main() {}
