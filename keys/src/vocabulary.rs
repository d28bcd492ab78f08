//! One vocabulary for the two front ends: the keys they name differently ([`TWINS`]), and what to
//! write instead of a key only the other one has ([`ONE_SIDE`]). [`Key::read_in`] says what a name written somewhere means, for both front ends.

use crate::table::{Key, Place};

/// The keys the two front ends name differently, as (the attribute's, a suite's): each front end takes
/// the other's name too where that one is not its own key, so a user who knows one can write the other.
pub const TWINS: &[(Key, Key)] = &[
    (Key::TargetPrompt, Key::Prompt),
    (Key::TargetPromptVars, Key::Inputs),
    (Key::SubjectModel, Key::Model),
    (Key::SubjectProvider, Key::Provider),
    (Key::SubjectModels, Key::Models),
];

/// The keys only one front end has, each with what to write in the other instead.
pub const ONE_SIDE: &[(Key, &str)] = &[
    // The attribute's only: what a suite does instead.
    (
        Key::TargetPromptFile,
        "a suite's `prompt` may name a file beside the suite: `prompt = \"summary.md\"`",
    ),
    (
        Key::JudgePromptCache,
        "a suite's judge calls are not prompt-cached; write the test as a #[prompt_test] to cache the judge's instructions",
    ),
    (
        Key::RunFn,
        "a suite calls a provider: name an endpoint of prompt-tester.toml (`[providers.NAME]`) as its `provider`, or write the test as a #[prompt_test] with `run_fn`",
    ),
    (
        Key::Agent,
        "a suite's agent loop runs the tools of its `mcp = [...]` servers (`tools` are offered and their calls checked, not run); Rust tool handlers need #[prompt_test(agent = ...)]",
    ),
    (
        Key::AppEnv,
        "a suite's calls are the harness's own: an application whose client reads its base URL from the environment is tested by a #[prompt_test(app_env)] taking an `AppRun`",
    ),
    // A suite's only: what the attribute does instead.
    (
        Key::Mcp,
        "give the test `agent = my_agent` with `fn my_agent() -> Toolbox { Toolbox::new().mcp(McpServer::stdio(...)) }`",
    ),
    (
        Key::MaxToolRounds,
        "an agent's `Toolbox::max_turns(n)` counts model calls: n - 1 rounds of tool calls",
    ),
    (
        Key::CasesFile,
        "a golden dataset is read by a suite (`*.evals.toml`); a #[prompt_test] is one test",
    ),
    (
        Key::Prompts,
        "write one #[prompt_test] per version of the prompt, or a suite with `prompts = [...]`",
    ),
    (
        Key::PromptId,
        "a #[prompt_test] is reported under its function's name",
    ),
    (
        Key::PromptVersion,
        "a #[prompt_test] is reported under its function's name, with no version",
    ),
    (Key::DatasetVersion, "a #[prompt_test] reads no dataset"),
    (Key::Name, "a #[prompt_test] is named by its function"),
    (
        Key::Category,
        "group the tests in a module: the trial is `module::function`",
    ),
    (
        Key::Expected,
        "assert on `run.output` in the function's body",
    ),
    (Key::Description, "write a doc comment on the function"),
    (
        Key::Turns,
        "continue the conversation in the function's body with `run.follow_up(\"...\")`",
    ),
    (Key::Assert, "assert on `run.output` in the function's body"),
    (
        Key::Skip,
        "a #[prompt_test] is not skipped by a key: remove the attribute, or mark it `live_only` to run it only live",
    ),
    (Key::Cases, "write one #[prompt_test] function per case"),
    (
        Key::Threshold,
        "the function's body passes or fails each sample; `pass_threshold` is the share of samples that must pass",
    ),
    (
        Key::Gate,
        "a gate judges the rows of a suite's `cases_file`",
    ),
    (
        Key::Media,
        "a #[prompt_test] reads no dataset: give media as `target_prompt_vars(receipt = Media::file(\"receipt.png\"))`",
    ),
];

/// What a name written at a place means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The place's own key.
    Own(Key),
    /// The other front end's name for a key of this place (`target_prompt` in a suite is `prompt`).
    Twin(Key),
    /// A key of the other front end only, with what to write here instead.
    OtherSide(Key, &'static str),
    /// No key of this place.
    Unknown,
}

/// The two front ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// `#[prompt_test(...)]`.
    Attribute,
    /// A suite file, with its cases.
    Suite,
}

impl Side {
    /// The front end `place` belongs to; none for places both share (`[defaults]`, a gate, an
    /// assertion).
    fn of(place: Place) -> Option<Side> {
        match place {
            Place::Attribute => Some(Side::Attribute),
            Place::Suite | Place::Case => Some(Side::Suite),
            Place::Defaults | Place::Gate | Place::Assertion => None,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Attribute => Side::Suite,
            Side::Suite => Side::Attribute,
        }
    }

    /// Whether `key` may be written on this side.
    fn has(self, key: Key) -> bool {
        let row = key.row();
        match self {
            Side::Attribute => row.allowed_in(Place::Attribute),
            Side::Suite => row.allowed_in(Place::Suite) || row.allowed_in(Place::Case),
        }
    }
}

impl Key {
    /// The key the other front end names this one by (`prompt` for `target_prompt`, and back).
    pub fn twin(self) -> Option<Key> {
        TWINS.iter().find_map(|&(attribute, suite)| {
            if attribute == self {
                Some(suite)
            } else if suite == self {
                Some(attribute)
            } else {
                None
            }
        })
    }

    /// The key `name` means at `place`: its own, or the other front end's name for a key of `place`
    /// (`model` in the attribute is `subject_model`).
    pub fn meant_in(name: &str, place: Place) -> Option<Key> {
        Key::named_in(name, place).or_else(|| {
            Key::named(name)?
                .twin()
                .filter(|twin| twin.row().allowed_in(place))
        })
    }

    /// What to write instead of this key on the front end that lacks it.
    pub fn elsewhere(self) -> Option<&'static str> {
        ONE_SIDE
            .iter()
            .find(|(key, _)| *key == self)
            .map(|&(_, note)| note)
    }

    /// What `name`, written at `place`, means.
    pub fn read_in(name: &str, place: Place) -> Reading {
        if let Some(key) = Key::named_in(name, place) {
            return Reading::Own(key);
        }
        if let Some(key) = Key::meant_in(name, place) {
            return Reading::Twin(key);
        }
        let (Some(key), Some(side)) = (Key::named(name), Side::of(place)) else {
            return Reading::Unknown;
        };
        match key.elsewhere() {
            Some(note) if side.other().has(key) && !side.has(key) => Reading::OtherSide(key, note),
            _ => Reading::Unknown,
        }
    }
}

/// What is said of a key of the other front end written at `place` (`written` as the user wrote it):
/// whose key it is. The key's note ([`Key::elsewhere`]) says what to write instead.
pub fn whose(written: &str, place: Place) -> String {
    match place {
        Place::Attribute => format!("`{written}` is a suite's key, not #[prompt_test]'s"),
        _ => format!("`{written}` is #[prompt_test]'s key, not a suite's"),
    }
}

/// The note of a suite written with the attribute's name: "`target_prompt` is #[prompt_test]'s name
/// for `prompt`; read as `prompt`, write `prompt` in a suite".
pub fn twin_message(written: &str, key: Key) -> String {
    format!(
        "`{written}` is #[prompt_test]'s name for `{key}`; read as `{key}`: write `{key}` in a suite"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::ROWS;

    #[test]
    fn each_front_end_takes_the_other_s_name_for_its_key() {
        let cases = [
            ("prompt", Place::Attribute, Key::TargetPrompt),
            ("inputs", Place::Attribute, Key::TargetPromptVars),
            ("model", Place::Attribute, Key::SubjectModel),
            ("provider", Place::Attribute, Key::SubjectProvider),
            ("models", Place::Attribute, Key::SubjectModels),
            ("target_prompt", Place::Suite, Key::Prompt),
            ("subject_model", Place::Case, Key::Model),
            ("target_prompt_vars", Place::Case, Key::Inputs),
            ("subject_models", Place::Suite, Key::Models),
        ];
        for (name, place, key) in cases {
            assert_eq!(Key::meant_in(name, place), Some(key), "{name}");
            assert_eq!(Key::read_in(name, place), Reading::Twin(key), "{name}");
        }
        // Only where the key belongs: a suite's top has no `inputs`.
        assert_eq!(Key::meant_in("target_prompt_vars", Place::Suite), None);
        for &(attribute, suite) in TWINS {
            assert!(attribute.row().allowed_in(Place::Attribute), "{attribute}");
            assert!(!suite.row().allowed_in(Place::Attribute), "{suite}");
        }
    }

    /// Every key one front end has and the other lacks (and has no twin for) says what to write there
    /// instead; no other key has such a note.
    #[test]
    fn a_key_of_one_front_end_only_names_the_other_s_way() {
        for row in ROWS {
            let (attribute, suite) = (Side::Attribute.has(row.key), Side::Suite.has(row.key));
            let one_side = attribute != suite && row.key.twin().is_none();
            assert_eq!(
                row.key.elsewhere().is_some(),
                one_side,
                "{}: a note exactly when only one front end has it",
                row.name
            );
            if one_side {
                // Written on the other front end, it is read as this key, with its note.
                let others: &[Place] = match attribute {
                    true => &[Place::Suite, Place::Case],
                    false => &[Place::Attribute],
                };
                for &other in others {
                    assert!(
                        matches!(Key::read_in(row.name, other), Reading::OtherSide(key, _) if key == row.key),
                        "{} at {other:?}",
                        row.name
                    );
                }
            }
        }
        assert_eq!(
            Key::read_in("threshold", Place::Attribute),
            Reading::OtherSide(Key::Threshold, Key::Threshold.elsewhere().unwrap())
        );
        assert_eq!(
            Key::read_in("skip", Place::Attribute),
            Reading::OtherSide(Key::Skip, Key::Skip.elsewhere().unwrap())
        );
        assert_eq!(
            Key::read_in("run_fn", Place::Case),
            Reading::OtherSide(Key::RunFn, Key::RunFn.elsewhere().unwrap())
        );
        // A suite's key in the wrong part of a suite is not the other front end's: plain unknown.
        assert_eq!(Key::read_in("cases_file", Place::Case), Reading::Unknown);
        assert_eq!(Key::read_in("nope", Place::Attribute), Reading::Unknown);
        assert_eq!(
            whose("threshold", Place::Attribute),
            "`threshold` is a suite's key, not #[prompt_test]'s"
        );
        assert_eq!(
            whose("run_fn", Place::Case),
            "`run_fn` is #[prompt_test]'s key, not a suite's"
        );
    }
}
