//! `messages = [{ role = "system", content = "..." }, { role = "user", ... }, ...]`: the turns a suite
//! or a case sends before its prompt, each located, then checked in order by the rule every wire
//! format takes (`crate::conversation::check`).

use prompt_tester_keys::Key;
use prompt_tester_keys::conversation::{self as rule, Role};
use toml::de::DeTable;

use super::Settings;

use crate::completion::{Turn, TurnRole};
use crate::spanned::{Node, Reader, did_you_mean, string};

const TURN_KEYS: [&str; 2] = ["role", "content"];

const EXAMPLE: &str = "write `messages = [{ role = \"system\", content = \"You label reviews.\" }, { role = \"user\", \
                       content = \"Great film!\" }, { role = \"assistant\", content = \"positive\" }]`";

/// The turns of `messages` at `node` (`key` is its path), when every one is well formed and they come
/// in an order every wire format takes; `system_key` says the table sets `system` too.
pub(super) fn messages(
    r: &mut Reader<'_>,
    node: &Node<'_>,
    key: &str,
    system_key: bool,
) -> Option<Vec<Turn>> {
    let items = r.array(node, key, "an array of turns", EXAMPLE)?;
    let problems_before = r.problems.len();
    let mut turns = Vec::new();
    let mut spans = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("{key}[{i}]");
        let turn_table = "a turn table `{ role = \"...\", content = \"...\" }`";
        let Some(table) = r.table(item, &path, turn_table, EXAMPLE) else {
            continue;
        };
        r.unknown_keys(table, &path, &TURN_KEYS, "in a turn");
        // A key every turn needs: its node, or a problem saying how to add it.
        let required = |r: &mut Reader<'_>, name: &str, fix: &str| {
            let node = table.get(name);
            if node.is_none() {
                let message = format!("the turn has no {name}");
                r.problem(item.span(), &format!("{path}.{name}"), message, fix);
            }
            node
        };
        let role_fix = "add `role = \"user\"` (or `\"system\"`, `\"assistant\"`)";
        let role = required(r, "role", role_fix).and_then(|n| {
            string(r, n, &format!("{path}.role"), "\"user\"").and_then(|name| {
                let role = role_named(&name);
                if role.is_none() {
                    let hint = Role::known_as(&name)
                        .map(Role::name)
                        .or_else(|| did_you_mean(&name, Role::names()))
                        .map_or_else(String::new, |r| format!("did you mean `{r}`? "));
                    r.problem(
                        n.span(),
                        &format!("{path}.role"),
                        format!("unknown role `{name}`"),
                        format!("{hint}a turn's role is `system`, `user` or `assistant`"),
                    );
                }
                role
            })
        });
        let content = required(r, "content", "add `content = \"...\"`: the turn's text")
            .and_then(|n| string(r, n, &format!("{path}.content"), "\"Great film!\""));
        if let (Some(role), Some(content)) = (role, content) {
            turns.push(Turn { role, content });
            spans.push(item.span());
        }
    }
    if r.problems.len() > problems_before {
        return None;
    }
    if let Err(problem) = crate::conversation::check(&turns, system_key) {
        let at = format!("{key}[{}]", problem.index);
        r.problem(
            spans[problem.index].clone(),
            &at,
            problem.message,
            problem.fix,
        );
        return None;
    }
    Some(turns)
}

fn role_named(name: &str) -> Option<TurnRole> {
    Role::named(name).map(crate::conversation::turn_role)
}

/// Adds to `placeholders` those of the `messages` in `settings` not there yet.
pub(super) fn add_placeholders(placeholders: &mut Vec<String>, settings: &Settings) {
    let turns = settings.request.messages.as_deref().unwrap_or_default();
    for p in crate::conversation::placeholders(turns) {
        if !placeholders.contains(&p) {
            placeholders.push(p);
        }
    }
}

/// A case's `system` under its suite's `system` turn, or the case's `system` turn under its suite's
/// `system` (one level giving both is `messages`' own problem): the system prompt given twice.
pub(super) fn system_across_levels(
    r: &mut Reader<'_>,
    table: &DeTable<'_>,
    path: &str,
    own: &Settings,
    merged: &Settings,
) {
    let system_turn = |s: &Settings| {
        s.request
            .messages
            .as_ref()
            .and_then(|m| m.first())
            .is_some_and(|t| t.role == crate::completion::TurnRole::System)
    };
    if merged.request.system.is_none() || !system_turn(merged) {
        return;
    }
    let (key, whose) = if system_turn(own) {
        (Key::Messages, "`system` is the suite's")
    } else {
        (
            Key::System,
            "the `system` turn is in the suite's `messages`",
        )
    };
    let Some(node) = table.get(key.name()) else {
        return;
    };
    let message = format!("{} ({whose})", rule::SYSTEM_TWICE);
    let fix = rule::SYSTEM_TWICE_FIX;
    r.problem(node.span(), &format!("{path}.{key}"), message, fix);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{parse, report};
    use crate::completion::Turn;

    const FILE: &str = "s.evals.toml";

    fn parsed(text: &str) -> Result<super::super::Suite, String> {
        parse("s", FILE, Path::new("/nonexistent"), text).map_err(|p| report(FILE, text, &p))
    }

    const FEW_SHOT: &str = "messages = [\n  { role = \"system\", content = \"Label {thing} reviews.\" },\n  \
                            { role = \"user\", content = \"Loved it.\" },\n  { role = \"assistant\", content = \"positive\" },\n]\n";

    #[test]
    fn a_suites_turns_reach_every_case_and_a_cases_replace_them() {
        let text = format!(
            "prompt = \"Review: {{review}}\"\n{FEW_SHOT}[[cases]]\nname = \"a\"\ninputs = {{ thing = \"film\", review = \"Dull.\" }}\n\
             [[cases]]\nname = \"b\"\ninputs = {{ review = \"Dull.\" }}\nmessages = [{{ role = \"user\", content = \"Hi\" }}, \
             {{ role = \"assistant\", content = \"Hello\" }}]\n"
        );
        let suite = parsed(&text).unwrap();
        let a = suite.cases[0].settings.request.messages.as_deref().unwrap();
        assert_eq!(
            a,
            [
                Turn::system("Label {thing} reviews."),
                Turn::user("Loved it."),
                Turn::assistant("positive")
            ]
        );
        let b = suite.cases[1].settings.request.messages.as_deref().unwrap();
        assert_eq!(b, [Turn::user("Hi"), Turn::assistant("Hello")]);
    }

    /// Each problem is located at its turn (`line:column`), names the key and says the fix.
    #[test]
    fn a_turn_out_of_order_or_malformed_is_located() {
        let case = "[[cases]]\nname = \"a\"\n";
        for (messages, at, says) in [
            (
                "messages = [{ role = \"user\", content = \"a\" }, { role = \"user\", content = \"b\" }]",
                ":1:47: `messages[1]`: turns 1 and 2 are both `user` turns",
                "fix: join them into one turn",
            ),
            (
                "messages = [{ role = \"user\", content = \"a\" }]",
                ":1:13: `messages[0]`: the last turn (1) is a `user` turn, and the prompt follows as another",
                "end with the `assistant` turn that answers it",
            ),
            (
                "messages = [{ role = \"assistant\", content = \"a\" }]",
                ":1:13: `messages[0]`: turn 1 is an `assistant` turn with no `user` turn before it",
                "the order every provider takes: an optional `system` turn first",
            ),
            (
                "messages = [{ role = \"model\", content = \"a\" }]",
                ":1:22: `messages[0].role`: unknown role `model`",
                "did you mean `assistant`? a turn's role is `system`, `user` or `assistant`",
            ),
            (
                "messages = [{ role = \"user\", text = \"a\" }]",
                ":1:30: `messages[0].text`: unknown key `text`",
                "valid keys in a turn: role, content",
            ),
            (
                "messages = [{ role = \"user\", content = \" \" }, { role = \"assistant\", content = \"b\" }]",
                ":1:13: `messages[0]`: turn 1 (`user`) has no text",
                "write its text",
            ),
            (
                "messages = \"hi\"",
                ":1:12: `messages`: expected an array of turns, found a string",
                "write `messages = [{ role = \"system\"",
            ),
            (
                "system = \"Be brief.\"\nmessages = [{ role = \"system\", content = \"a\" }]",
                ":2:13: `messages[0]`: the system prompt is given twice",
                "keep one: remove `system`, or the `system` turn of `messages`",
            ),
        ] {
            let text = format!("{messages}\nprompt = \"Hi\"\n{case}");
            let report = parsed(&text).expect_err(messages);
            assert!(
                report.contains(&format!("{FILE}{at}")),
                "{messages}:\n{report}"
            );
            assert!(report.contains(says), "{messages}:\n{report}");
        }
    }

    #[test]
    fn the_system_prompt_given_across_suite_and_case_is_an_error_at_the_case() {
        let text = format!(
            "prompt = \"Hi\"\nsystem = \"Be brief.\"\n[[cases]]\nname = \"a\"\n{FEW_SHOT}inputs = {{ thing = \"x\" }}\n"
        );
        let report = parsed(&text).unwrap_err();
        assert!(
            report.contains(&format!(
                "{FILE}:5:12: `cases[0].messages`: the system prompt is given twice: by `system` and by the `system` \
                 turn of `messages` (`system` is the suite's)"
            )),
            "{report}"
        );
        let text = format!(
            "prompt = \"Hi\"\n{FEW_SHOT}[[cases]]\nname = \"a\"\nsystem = \"x\"\ninputs = {{ thing = \"x\" }}\n"
        );
        let report = parsed(&text).unwrap_err();
        assert!(
            report.contains("`cases[0].system`: the system prompt is given twice")
                && report.contains("(the `system` turn is in the suite's `messages`)"),
            "{report}"
        );
    }

    #[test]
    fn a_placeholder_of_a_turn_needs_an_input() {
        let text = format!("prompt = \"Hi\"\n{FEW_SHOT}[[cases]]\nname = \"a\"\n");
        let report = parsed(&text).unwrap_err();
        assert!(
            report.contains(
                "`cases[0].inputs`: no input `thing` for the placeholder {thing} of the prompt or `messages`"
            ),
            "{report}"
        );
    }
}
