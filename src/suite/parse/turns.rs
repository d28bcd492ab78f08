//! A case's scripted conversation, `turns = ["first message", "second", ...]`, in place of the suite's
//! `prompt`, and the `turn = N` its assertions may name.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use super::super::assert::Assertion;
use crate::spanned::{Reader, nonblank};

/// How to write `turns`.
const EXAMPLE: &str =
    "write `turns = [\"first message\", \"second message\"]`: the user's messages, in order";

/// Whether the suite has no prompt and needs none: every inline case has `turns`, and it has no
/// dataset.
pub(super) fn needs_no_prompt(table: &DeTable<'_>) -> bool {
    let Some(DeValue::Array(cases)) = table.get("cases").map(|n| n.get_ref()) else {
        return false;
    };
    ["prompt", "prompts", "cases_file"]
        .iter()
        .all(|key| table.get(*key).is_none())
        && !cases.is_empty()
        && cases.iter().all(|case| match case.get_ref() {
            DeValue::Table(case) => case.contains_key("turns"),
            _ => false,
        })
}

/// The case's `turns` as written (placeholders not filled in yet), or `None` without the key or when
/// it is unusable (noted). `suite_prompt` says where the suite has a `prompt` or `prompts`: a case
/// sends one or the other, never both.
pub(super) fn turns(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    path: &str,
    suite_prompt: Option<&str>,
) -> Option<Vec<String>> {
    let node = table.get("turns")?;
    let key = format!("{path}.turns");
    if let Some(prompt) = suite_prompt {
        r.problem(
            node.span(),
            &key,
            format!("the case has `turns` and the suite has `{prompt}`: a case sends either the prompt or its turns"),
            format!(
                "make the prompt this case's first turn and move the case to a suite without `{prompt}` (a suite \
                 whose cases all have `turns` needs no prompt), or remove `turns` to send the suite's prompt"
            ),
        );
        return None;
    }
    let items = r.array(node, &key, "an array of messages", EXAMPLE)?;
    if items.is_empty() {
        r.problem(node.span(), &key, "`turns` is empty", EXAMPLE);
        return None;
    }
    let mut turns = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let key = format!("{key}[{i}]");
        let fix = "write what the user says in this turn (providers reject empty messages)";
        let example = "\"the user's message\"";
        turns.push(nonblank(
            r,
            item,
            &key,
            example,
            "the message is empty",
            fix,
        )?);
    }
    Some(turns)
}

/// Notes every assertion of the case whose `turn = N` is beyond its `turns` (a case without `turns`
/// has one). `case_at` locates the problem of an assertion read from a template or a dataset row.
pub(super) fn check_turns(
    r: &mut Reader<'_>,
    asserts: &[Assertion],
    count: usize,
    case: &str,
    case_at: Range<usize>,
) {
    for a in asserts {
        let Some(turn) = &a.turn else { continue };
        if turn.n as usize <= count {
            continue;
        }
        let has = match count {
            1 => "one reply (it has no `turns`, or one)".to_string(),
            n => format!("{n} turns"),
        };
        r.problem(
            turn.span.clone().unwrap_or_else(|| case_at.clone()),
            &turn.key,
            format!(
                "the assertion at {} checks turn {}, but case `{case}` has {has}",
                a.at, turn.n
            ),
            format!("use a turn from 1 to {count}, or remove `turn` to check the last reply"),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{Suite, parse, report};
    use crate::checks::SampleStatus;
    use crate::outcome::SampleOutcome;
    use crate::run::PromptRun;
    use crate::test_support::{answered, assert_contains, scope};

    const FILE: &str = "prompt-tests/chat.evals.toml";

    fn parsed(text: &str) -> Result<Suite, String> {
        parse("chat", FILE, Path::new("/nonexistent"), text).map_err(|p| report(FILE, text, &p))
    }

    fn problems(text: &str) -> String {
        parsed(text).expect_err("the suite has problems")
    }

    #[test]
    fn a_suite_whose_cases_all_have_turns_needs_no_prompt() {
        let suite = parsed(
            "provider = \"fake\"\nmodel = \"m\"\n[[cases]]\nname = \"a\"\ninputs = { who = \"Alice\" }\n\
             turns = [\"I am {who}.\", \"Who am I?\"]\nassert = [{ contains = \"{who}\", turn = 1 }, \
             { contains = \"x\" }]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let case = &suite.cases[0];
        assert_eq!(case.turns, ["I am {who}.", "Who am I?"]);
        // An input used only in the turns is used.
        assert!(case.unused_inputs.is_empty(), "{:?}", case.unused_inputs);
        let turns: Vec<Option<u32>> = case
            .asserts
            .iter()
            .map(|a| a.turn.as_ref().map(|t| t.n))
            .collect();
        assert_eq!(turns, [Some(1), None]);
    }

    #[test]
    fn turns_and_a_prompt_are_a_located_error_and_neither_is_the_missing_prompt() {
        let report = problems(
            "prompt = \"Say hi.\"\n[[cases]]\nname = \"a\"\nturns = [\"Hello\", \"Again\"]\n",
        );
        assert_contains(
            &report,
            &[
                "prompt-tests/chat.evals.toml:4:9: `cases[0].turns`: the case has `turns` and the suite has \
                 `prompt`: a case sends either the prompt or its turns",
                "fix: make the prompt this case's first turn and move the case to a suite without `prompt`",
            ],
        );
        let dir = crate::test_support::Scratch::new("suite-turns");
        dir.file("a.md", "Hi");
        let text = "prompts = [\"a.md\"]\n[[cases]]\nname = \"a\"\nturns = [\"Hello\"]\n";
        let found = parse("chat", FILE, dir.path(), text)
            .map(|_| ())
            .map_err(|p| super::super::report(FILE, text, &p))
            .expect_err("turns under prompts");
        assert_contains(&found, &["the suite has `prompts`"]);
        // One case without turns: the suite's prompt is missing, as before.
        let report =
            problems("[[cases]]\nname = \"a\"\nturns = [\"Hello\"]\n[[cases]]\nname = \"b\"\n");
        assert_contains(&report, &["the suite has no `prompt`"]);
        assert!(!report.contains("turns"), "{report}");
    }

    #[test]
    fn a_turn_beyond_the_turns_is_a_located_error() {
        let report = problems(
            "[[cases]]\nname = \"a\"\nturns = [\"Hello\", \"Again\"]\nassert = [{ contains = \"x\", turn = 3 }]\n",
        );
        assert_contains(
            &report,
            &[
                ":4:36: `cases[0].assert[0].turn`: the assertion at prompt-tests/chat.evals.toml:4 checks turn 3, \
                 but case `a` has 2 turns",
                "fix: use a turn from 1 to 2, or remove `turn` to check the last reply",
            ],
        );
        // A suite assertion, and one with a placeholder (read again for the case), are located at
        // themselves too; a case without turns has one reply.
        let report = problems(
            "prompt = \"Hi {x}\"\nassert = [{ contains = \"{x}\", turn = 2 }]\n[[cases]]\nname = \"b\"\ninputs = { x = \"1\" }\n",
        );
        assert_contains(
            &report,
            &[
                ":2:11: `assert[0].turn`: the assertion at prompt-tests/chat.evals.toml:2 checks turn 2, but case \
                 `b` has one reply",
                "fix: use a turn from 1 to 1",
            ],
        );
        let report = problems(
            "[[cases]]\nname = \"a\"\nturns = [\"Hello\"]\nassert = [{ contains = \"x\", turn = 0 }]\n",
        );
        assert_contains(&report, &["`cases[0].assert[0].turn`: 0 is out of range"]);
    }

    #[test]
    fn turns_must_be_messages() {
        for (turns, says) in [
            ("[]", "`cases[0].turns`: `turns` is empty"),
            (
                "\"Hello\"",
                "`cases[0].turns`: expected an array of messages, found a string",
            ),
            (
                "[\"Hi\", 3]",
                "`cases[0].turns[1]`: expected a string, found an integer",
            ),
            (
                "[\"Hi\", \" \"]",
                "`cases[0].turns[1]`: the message is empty",
            ),
        ] {
            let report = problems(&format!("[[cases]]\nname = \"a\"\nturns = {turns}\n"));
            assert_contains(&report, &[says]);
        }
        let report = problems("[[cases]]\nname = \"a\"\nturns = [\"Hi {who}\"]\n");
        assert_contains(
            &report,
            &["no input `who` for the placeholder {who} of the turns"],
        );
    }

    #[test]
    fn misspelt_keys_suggest_turns_and_turn() {
        let report = problems("prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nturn = [\"Hi\"]\n");
        assert_contains(
            &report,
            &[
                "`cases[0].turn`: unknown key `turn`",
                "did you mean `turns`?",
            ],
        );
        let report = problems(
            "[[cases]]\nname = \"a\"\nturns = [\"Hi\"]\nassert = [{ contains = \"x\", turns = 1 }]\n",
        );
        assert_contains(
            &report,
            &[
                "`cases[0].assert[0].turns`: unknown assertion `turns`",
                "fix: did you mean `turn` (the reply it checks, counted from 1",
            ],
        );
    }

    /// Runs of a two-turn conversation: "Hello Alice", then "Bonjour".
    fn conversation() -> PromptRun {
        let scope = scope("chat::a", "chat");
        let first = answered(&scope, "I am Alice.", "Hello Alice", None);
        answered(&scope, "Say it in French.", "Bonjour", Some(first))
    }

    #[test]
    fn an_assertion_checks_the_last_reply_unless_it_names_a_turn() {
        let suite = parsed(
            "[[cases]]\nname = \"a\"\nturns = [\"I am Alice.\", \"Say it in French.\"]\nassert = [\
             { contains = \"Alice\", turn = 1 }, { contains = \"Bonjour\" }, { contains = \"Bonjour\", turn = 2 }]\n\
             [[cases]]\nname = \"b\"\nturns = [\"I am Alice.\", \"Say it in French.\"]\nassert = [\
             { contains = \"Alice\" }, { contains = \"Bonjour\", turn = 1 }]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let run = conversation();
        assert_eq!(run.turns().len(), 2);
        assert_eq!(run.turn(1).map(|r| r.output.as_str()), Some("Hello Alice"));
        assert!(run.turn(0).is_none() && run.turn(3).is_none());
        let evaluate = |case: usize| {
            futures::executor::block_on(super::super::super::assert::evaluate(
                &suite.cases[case].asserts,
                None,
                &run,
            ))
        };
        assert_eq!(evaluate(0), SampleOutcome::PASSED);
        let failed = evaluate(1);
        let (SampleStatus::Failed, Some(message)) = (failed.status(), failed.message()) else {
            panic!("case b passes");
        };
        assert_contains(
            message,
            &[
                "2 of 2 assertions failed:",
                "chat.evals.toml:8: contains: expected the output to contain \"Alice\"; saw \"Bonjour\"",
                "chat.evals.toml:8: turn 1: contains: expected the output to contain \"Bonjour\"; saw \"Hello Alice\"",
            ],
        );
    }
}
