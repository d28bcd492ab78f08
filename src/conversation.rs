//! The conversation a test sends before its prompt (`messages`): checked against the one order of
//! turns every wire format takes (the rule is `prompt_tester_keys::conversation`'s, shared with the
//! attribute), its placeholders filled as the prompt's, and split into the request's system prompt
//! and the turns ahead of the prompt.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use prompt_tester_keys::conversation::{self as rule, Problem, Role};

use std::collections::BTreeMap;

use crate::completion::{ContentBlock, MediaPart, Message, Turn, TurnRole};
use crate::render::render;

/// The rule's name for `role`.
fn role_of(role: TurnRole) -> Role {
    match role {
        TurnRole::System => Role::System,
        TurnRole::User => Role::User,
        TurnRole::Assistant => Role::Assistant,
    }
}

/// How `role` is written (`"user"`).
pub fn role_name(role: TurnRole) -> &'static str {
    role_of(role).name()
}

/// The turn role the rule's `role` stands for.
pub fn turn_role(role: Role) -> TurnRole {
    match role {
        Role::System => TurnRole::System,
        Role::User => TurnRole::User,
        Role::Assistant => TurnRole::Assistant,
    }
}

/// The first problem of `turns`, sent with a `system` key when `system_key`: an order some wire
/// format rejects, a turn without text, or the system prompt given twice.
pub fn check(turns: &[Turn], system_key: bool) -> Result<(), Problem> {
    if system_key && turns.first().is_some_and(|t| t.role == TurnRole::System) {
        return Err(Problem {
            index: 0,
            message: rule::SYSTEM_TWICE.to_string(),
            fix: rule::SYSTEM_TWICE_FIX.to_string(),
        });
    }
    let roles: Vec<(Role, Option<&str>)> = turns
        .iter()
        .map(|t| (role_of(t.role), Some(t.content.as_str())))
        .collect();
    rule::check(&roles)
}

/// `turns` with their placeholders filled from `vars`, and the placeholders that had no value (each
/// once, in order).
pub fn render_turns<K: AsRef<str>, V: AsRef<str>>(
    turns: &[Turn],
    vars: &[(K, V)],
) -> (Vec<Turn>, Vec<String>) {
    let mut missing: Vec<String> = Vec::new();
    let rendered = turns
        .iter()
        .map(|turn| {
            let r = render(&turn.content, vars);
            for name in r.missing {
                if !missing.contains(&name) {
                    missing.push(name);
                }
            }
            Turn {
                role: turn.role,
                content: r.text,
            }
        })
        .collect();
    (rendered, missing)
}

/// The turns that place media, each its index and its parts.
pub type TurnParts = Vec<(usize, Vec<ContentBlock>)>;

/// The parts of each user turn of `turns` that places media (its index and parts, as
/// [`crate::render::place`] makes the prompt's), its text placeholders filled from `vars`. `Err` is the
/// first system or assistant turn with a placeholder of `media`, its index, role and the name: only
/// a user message takes parts.
pub fn media_parts<K: AsRef<str>, V: AsRef<str>>(
    turns: &[Turn],
    vars: &[(K, V)],
    media: &BTreeMap<String, MediaPart>,
) -> Result<TurnParts, (usize, TurnRole, String)> {
    let names: Vec<&str> = media.keys().map(String::as_str).collect();
    let mut placed = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let (pieces, _) = crate::render::render_pieces(&turn.content, vars, &names);
        let Some(name) = pieces.iter().find_map(|p| match p {
            crate::render::Piece::Media(name) => Some(name.clone()),
            crate::render::Piece::Text(_) => None,
        }) else {
            continue;
        };
        if turn.role != TurnRole::User {
            return Err((i, turn.role, name));
        }
        placed.push((i, crate::render::place(&pieces, media).1));
    }
    Ok(placed)
}

/// `history` (the turns of `turns` after [`split`]) with the user turns of `parts` sent as their parts.
pub fn with_parts(history: &mut [Message], turns: &[Turn], parts: TurnParts) {
    for (i, content) in parts {
        // `split` leaves the system turns out of the history.
        let systems = turns[..i]
            .iter()
            .filter(|t| t.role == TurnRole::System)
            .count();
        if let Some(message) = history.get_mut(i - systems) {
            message.content = content;
        }
    }
}

/// The placeholders of every turn, each once, in order.
pub fn placeholders(turns: &[Turn]) -> Vec<String> {
    render_turns::<&str, &str>(turns, &[]).1
}

/// The system prompt (the `system` key's, else the first turn's) and the turns ahead of the prompt.
pub fn split(system: Option<String>, turns: Vec<Turn>) -> (Option<String>, Vec<Message>) {
    let mut system = system;
    let mut history = Vec::with_capacity(turns.len());
    for turn in turns {
        match turn.role {
            // `check` keeps a system turn first and alone; a second would only reach a run_fn's
            // request, which keeps the first.
            TurnRole::System => {
                system.get_or_insert(turn.content);
            }
            TurnRole::User => history.push(Message::user(turn.content)),
            TurnRole::Assistant => history.push(Message::assistant(turn.content)),
        }
    }
    (system, history)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn few_shot() -> Vec<Turn> {
        vec![
            Turn::system("You label {thing}s."),
            Turn::user("great {thing}"),
            Turn::assistant("positive"),
        ]
    }

    #[test]
    fn placeholders_are_filled_in_every_turn_as_in_the_prompt() {
        let (turns, missing) = render_turns(&few_shot(), &[("thing", "film {x}")]);
        assert_eq!(turns[0].content, "You label film {x}s.");
        assert_eq!(turns[1].content, "great film {x}");
        assert_eq!(turns[2].content, "positive");
        assert!(missing.is_empty());
        let (_, missing) = render_turns(&few_shot(), &[("other", "x")]);
        assert_eq!(missing, ["thing"]);
        assert_eq!(placeholders(&few_shot()), ["thing"]);
    }

    #[test]
    fn the_system_turn_becomes_the_system_prompt() {
        let (system, history) = split(None, few_shot());
        assert_eq!(system.as_deref(), Some("You label {thing}s."));
        assert_eq!(
            history,
            [
                Message::user("great {thing}"),
                Message::assistant("positive")
            ]
        );
        let (system, history) = split(Some("Key.".into()), few_shot()[1..].to_vec());
        assert_eq!((system.as_deref(), history.len()), (Some("Key."), 2));
    }

    #[test]
    fn the_system_prompt_given_twice_and_a_bad_order_are_problems() {
        assert_eq!(check(&few_shot(), false), Ok(()));
        assert_eq!(check(&few_shot()[1..], true), Ok(()));
        let twice = check(&few_shot(), true).unwrap_err();
        assert_eq!(twice.message, rule::SYSTEM_TWICE);
        assert!(twice.fix.contains("keep one"), "{}", twice.fix);
        let problem = check(&few_shot()[..2], false).unwrap_err();
        assert_eq!(problem.index, 1);
        assert!(problem.message.contains("is a `user` turn"), "{problem}");
    }

    /// A user turn places media as the prompt does; a system or assistant turn is text, named when
    /// it places media.
    #[test]
    fn a_user_turn_takes_media_parts_and_others_are_named() {
        let png =
            crate::completion::Media::bytes("r.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec())
                .load()
                .unwrap();
        let media = BTreeMap::from([("receipt".to_string(), png)]);
        let turns = vec![
            Turn::system("You read receipts."),
            Turn::user("For {who}: {receipt}"),
            Turn::assistant("Noted."),
        ];
        let parts = media_parts(&turns, &[("who", "Ann")], &media).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].0, 1);
        assert!(matches!(
            parts[0].1.as_slice(),
            [ContentBlock::Text { text }, ContentBlock::Media(p)] if text == "For Ann: " && p.name() == "r.png"
        ));
        let (_, mut history) = split(None, turns.clone());
        with_parts(&mut history, &turns, parts);
        assert_eq!(
            history[0].content.len(),
            2,
            "the user turn, after the system turn"
        );
        assert_eq!(history[1], Message::assistant("Noted."));

        let wrong = vec![Turn::user("Hi"), Turn::assistant("I saw {receipt}")];
        assert_eq!(
            media_parts::<&str, &str>(&wrong, &[], &media),
            Err((1, TurnRole::Assistant, "receipt".to_string()))
        );
    }
}
