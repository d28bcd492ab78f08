//! The conversation a test sends before its prompt (`messages`): the roles a turn may have and the one
//! order of turns every wire format takes, checked by the attribute (at compile time, on a literal
//! list) and by the library (a suite's `messages`, an attribute's list given as an expression).
//!
//! The rule is the strictest of the three: Anthropic takes the system prompt apart and wants `user`
//! first (it folds repeated roles into one turn), Gemini takes it apart too (`systemInstruction`)
//! and wants `user` and `model` turns, many chat templates of local models reject turns that do not
//! alternate. So: an optional `system` turn first, then `user` and `assistant` alternating, from `user`
//! to `assistant`, since the prompt is the `user` turn that follows.

use std::fmt;

/// Who speaks a turn of `messages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The system prompt.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// Every role, in the order the messages list them.
    pub const ALL: [Role; 3] = [Role::System, Role::User, Role::Assistant];

    /// Its name as written (`system`, `user`, `assistant`).
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// The role named `name`, if there is one.
    pub fn named(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.name() == name)
    }

    /// The role another API names `word` (`model`, `human`, `developer`...), for "did you mean".
    pub fn known_as(word: &str) -> Option<Role> {
        match word.to_ascii_lowercase().as_str() {
            "developer" | "instructions" | "sys" => Some(Role::System),
            "human" | "usr" | "customer" => Some(Role::User),
            "model" | "ai" | "bot" | "assistent" | "gpt" | "llm" => Some(Role::Assistant),
            other => Role::named(other),
        }
    }

    /// The names of every role.
    pub fn names() -> [&'static str; 3] {
        Role::ALL.map(Role::name)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The order every wire format takes, as the errors state it.
pub const RULE: &str = "an optional `system` turn first, then `user` and `assistant` turns alternating, from a \
                        `user` turn to an `assistant` turn, since the prompt is the `user` turn that follows";

/// What the errors say when both the `system` key and a `system` turn give a system prompt.
pub const SYSTEM_TWICE: &str =
    "the system prompt is given twice: by `system` and by the `system` turn of `messages`";

/// How to fix [`SYSTEM_TWICE`].
pub const SYSTEM_TWICE_FIX: &str = "keep one: remove `system`, or the `system` turn of `messages`";

/// A turn out of the order every wire format takes, or without text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The turn at fault, counted from 0.
    pub index: usize,
    /// What is wrong with it.
    pub message: String,
    /// How to fix it, with the rule.
    pub fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message, self.fix)
    }
}

/// The first problem of a conversation whose turns are `turns`: each role, and its text where it is
/// known (`None`: an expression, known only at run time).
pub fn check(turns: &[(Role, Option<&str>)]) -> Result<(), Problem> {
    let problem = |index: usize, message: String, fix: &str| Problem {
        index,
        message,
        fix: format!("{fix} (the order every provider takes: {RULE})"),
    };
    // The role the next turn must have, after the optional system turn.
    let mut expected = Role::User;
    for (i, (role, text)) in turns.iter().enumerate() {
        let n = i + 1;
        if text.is_some_and(|t| t.trim().is_empty()) {
            return Err(problem(
                i,
                format!("turn {n} (`{role}`) has no text"),
                "write its text, or remove the turn (providers reject empty turns)",
            ));
        }
        match role {
            Role::System if i == 0 => continue,
            Role::System => {
                return Err(problem(
                    i,
                    format!("turn {n} is a `system` turn: only the first turn may be"),
                    "move its text into the first turn, a `system` one",
                ));
            }
            _ if *role == expected => {}
            Role::Assistant if expected == Role::User && !follows_user(turns, i) => {
                return Err(problem(
                    i,
                    format!("turn {n} is an `assistant` turn with no `user` turn before it"),
                    "start with the `user` turn it answers",
                ));
            }
            _ => {
                return Err(problem(
                    i,
                    format!("turns {i} and {n} are both `{role}` turns"),
                    "join them into one turn, or put the other role's turn between them",
                ));
            }
        }
        expected = match role {
            Role::User => Role::Assistant,
            _ => Role::User,
        };
    }
    if expected == Role::Assistant {
        let last = turns.len() - 1;
        return Err(problem(
            last,
            format!(
                "the last turn ({}) is a `user` turn, and the prompt follows as another",
                turns.len()
            ),
            "end with the `assistant` turn that answers it, or move its text into the prompt",
        ));
    }
    Ok(())
}

/// Whether turn `i` has a `user` turn before it (else it opens the conversation).
fn follows_user(turns: &[(Role, Option<&str>)], i: usize) -> bool {
    turns[..i].iter().any(|(role, _)| *role == Role::User)
}

#[cfg(test)]
mod tests {
    use super::*;

    use Role::{Assistant, System, User};

    fn check_roles(roles: &[Role]) -> Result<(), Problem> {
        let turns: Vec<(Role, Option<&str>)> = roles.iter().map(|r| (*r, Some("text"))).collect();
        check(&turns)
    }

    #[test]
    fn alternating_turns_after_an_optional_system_turn_pass() {
        for roles in [
            &[][..],
            &[System],
            &[User, Assistant],
            &[System, User, Assistant],
            &[System, User, Assistant, User, Assistant],
        ] {
            assert_eq!(check_roles(roles), Ok(()), "{roles:?}");
        }
        // A text known only at run time is checked then.
        assert_eq!(check(&[(User, None), (Assistant, None)]), Ok(()));
    }

    #[test]
    fn each_order_a_provider_rejects_names_the_turn_and_the_fix() {
        let cases: [(&[Role], usize, &str, &str); 6] = [
            (
                &[Assistant],
                0,
                "turn 1 is an `assistant` turn with no `user` turn before it",
                "start with the `user` turn",
            ),
            (
                &[System, Assistant, User],
                1,
                "turn 2 is an `assistant` turn with no `user` turn before it",
                "start with",
            ),
            (
                &[User, User, Assistant],
                1,
                "turns 1 and 2 are both `user` turns",
                "join them",
            ),
            (
                &[User, Assistant, Assistant],
                2,
                "turns 2 and 3 are both `assistant` turns",
                "join them",
            ),
            (
                &[User, System, Assistant],
                1,
                "turn 2 is a `system` turn: only the first turn may be",
                "move its text",
            ),
            (
                &[System, User],
                1,
                "the last turn (2) is a `user` turn, and the prompt follows as another",
                "end with the `assistant` turn",
            ),
        ];
        for (roles, index, message, fix) in cases {
            let problem = check_roles(roles).expect_err("rejected");
            assert_eq!(problem.index, index, "{roles:?}");
            assert_eq!(problem.message, message, "{roles:?}");
            assert!(problem.fix.starts_with(fix), "{roles:?}: {}", problem.fix);
            assert!(
                problem
                    .fix
                    .ends_with(&format!("(the order every provider takes: {RULE})"))
            );
        }
    }

    #[test]
    fn a_turn_without_text_is_rejected() {
        let problem = check(&[(User, Some("Hi")), (Assistant, Some("  \n"))]).unwrap_err();
        assert_eq!(
            (problem.index, problem.message.as_str()),
            (1, "turn 2 (`assistant`) has no text")
        );
    }

    #[test]
    fn roles_are_named_once() {
        for role in Role::ALL {
            assert_eq!(Role::named(role.name()), Some(role));
            assert_eq!(role.to_string(), role.name());
        }
        assert_eq!(Role::named("model"), None);
        assert_eq!(Role::known_as("model"), Some(Role::Assistant));
        assert_eq!(Role::known_as("Human"), Some(Role::User));
        assert_eq!(Role::known_as("developer"), Some(Role::System));
        assert_eq!(Role::known_as("banana"), None);
        assert_eq!(Role::names(), ["system", "user", "assistant"]);
    }
}
