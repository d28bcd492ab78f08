//! Who owns a recording: the test target a process runs, and a cassette's entries by key and by the
//! target that recorded them. Two targets sharing a cassette (one `cassette_dir`, a test or suite of
//! the same name) keep their recordings apart, and a prune removes only its own target's.

use std::collections::HashMap;
use std::path::Path;

use super::entry::Entry;

/// The test target that recorded an entry: `None` when its process could not tell (see
/// [`this_target`]); such a recording is no named target's to prune.
pub type Target = Option<String>;

/// An entry's place in a cassette: its target and its key.
pub type Slot = (Target, String);

/// The test target this process runs, as [`target_of`] reads it from the executable's name; `None`
/// when the process cannot tell its executable (its recordings then name no target).
pub fn this_target() -> Target {
    // Why the executable's name and not `env!("CARGO_CRATE_NAME")`: in this library that is
    // `prompt_tester`, and capturing the target's own would take a macro in the user's `main`
    // (`prompt_tester::main!()`) that every existing `fn main() { prompt_tester::main() }` would have
    // to adopt; `#[prompt_test]` registrations may come from any crate linked in, and a target of
    // suites alone registers none. `CARGO_CRATE_NAME` and `CARGO_BIN_NAME` are not set at run time.
    // Cargo names every test binary the same way (`deps/<crate name>-<16 hex digits>`, which
    // `cargo test`, nextest and coverage tools all run), so the name is there with nothing to adopt.
    let exe = std::env::current_exe()
        .ok()
        .or_else(|| std::env::args_os().next().map(Into::into))?;
    target_of(&exe)
}

/// The test target of the executable at `exe`: its file name without the platform's executable
/// suffix and without the `-<16 hex digits>` metadata hash cargo gives test binaries
/// (`deps/prompts-0123456789abcdef` is `prompts`), with `-` as `_` (`CARGO_CRATE_NAME`'s spelling,
/// which the hashed name already has: target `my-agents` runs as `my_agents-<hash>`). A binary cargo
/// copied out without the hash (`examples/harness_fixture`) is its name.
pub fn target_of(exe: &Path) -> Target {
    let name = exe.file_name()?.to_str()?;
    let name = name
        .strip_suffix(std::env::consts::EXE_SUFFIX)
        .filter(|_| !std::env::consts::EXE_SUFFIX.is_empty())
        .unwrap_or(name);
    let name = match name.rsplit_once('-') {
        Some((target, hash))
            if !target.is_empty()
                && hash.len() == 16
                && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            target
        }
        _ => name,
    };
    (!name.is_empty()).then(|| name.replace('-', "_"))
}

/// The entries of one cassette file: by key, then by the target that recorded them.
#[derive(Debug, Default, Clone)]
pub struct Recordings(HashMap<String, ByTarget>);

/// One key's recordings, one per target, sorted by target (the one naming none first). Almost always
/// one: a `Vec`, since a map's node would hold room for eleven entries per key.
#[derive(Debug, Default, Clone)]
struct ByTarget(Vec<Entry>);

impl ByTarget {
    fn get(&self, target: &Target) -> Option<&Entry> {
        self.0.iter().find(|e| e.target == *target)
    }

    fn remove(&mut self, target: &Target) -> Option<Entry> {
        let at = self.0.iter().position(|e| e.target == *target)?;
        Some(self.0.remove(at))
    }

    /// Puts `entry` in its target's place, replacing what that target had.
    fn insert(&mut self, entry: Entry) {
        match self.0.binary_search_by(|e| e.target.cmp(&entry.target)) {
            Ok(at) => self.0[at] = entry,
            Err(at) => self.0.insert(at, entry),
        }
    }
}

impl Recordings {
    /// The entries as read from a file; of two with the same key and target, the later wins.
    pub fn new(entries: Vec<Entry>) -> Self {
        let mut recordings = Self(HashMap::with_capacity(entries.len()));
        for entry in entries {
            recordings.record(entry);
        }
        recordings
    }

    /// Adds `entry`, replacing its target's own recording of the key.
    pub fn record(&mut self, entry: Entry) {
        // Room for one: a `Vec` would first grow to four.
        self.0
            .entry(entry.key.clone())
            .or_insert_with(|| ByTarget(Vec::with_capacity(1)))
            .insert(entry);
    }

    /// Whether some entry has `key`.
    pub fn has_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Puts `other`'s recordings of each of its keys in place of this one's.
    pub fn overlay(&mut self, other: Recordings) {
        self.0.extend(other.0);
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.0.values().map(|b| b.0.len()).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every entry.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.0.values().flat_map(|b| b.0.iter())
    }

    /// The entry that answers `key` for `target`: its own, else another target's (a key is a hash of
    /// everything that decides the answer, so any recording of it answers; a suite that two targets
    /// run replays from either's recordings).
    pub fn find(&self, key: &str, target: &Target) -> Option<&Entry> {
        let by_target = self.0.get(key)?;
        by_target.get(target).or_else(|| by_target.0.first())
    }

    /// Removes the entry in `slot`, if any.
    pub fn remove(&mut self, (target, key): &Slot) -> Option<Entry> {
        let by_target = self.0.get_mut(key)?;
        let removed = by_target.remove(target);
        if by_target.0.is_empty() {
            self.0.remove(key);
        }
        removed
    }

    /// The entries in the order a file holds them: by test, run, role, key and target (a call
    /// recorded again keeps its place, two targets' recordings of it sit together), so that a diff
    /// reviews well.
    pub fn into_sorted(self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self.0.into_values().flat_map(|b| b.0).collect();
        entries.sort_by(|a, b| {
            (&a.test, a.run, a.role.as_str(), &a.key, &a.target).cmp(&(
                &b.test,
                b.run,
                b.role.as_str(),
                &b.key,
                &b.target,
            ))
        });
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::entry::Exchange;
    use crate::completion::{CompletionRequest, CompletionResult};
    use crate::role::CallRole;

    fn entry(key: &str, target: Option<&str>, answer: &str) -> Entry {
        Entry {
            key: key.into(),
            test: "t".into(),
            target: target.map(str::to_string),
            run: 1,
            role: CallRole::Subject,
            provider: "openai".into(),
            model: "m".into(),
            call: Exchange::Completion {
                request: CompletionRequest::new("m", "hi", 10),
                response: CompletionResult::new(answer, 1, 2),
            },
            latency_ms: 5,
            recorded_at: "2025-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn the_target_is_the_executable_s_name_without_cargo_s_hash() {
        let cases: &[(&str, Option<&str>)] = &[
            // `cargo test --test prompts` and nextest run `deps/<crate name>-<metadata hash>`.
            (
                "/repo/target/debug/deps/prompts-0123456789abcdef",
                Some("prompts"),
            ),
            (
                "target/debug/deps/my_agents-FEDCBA9876543210",
                Some("my_agents"),
            ),
            // Examples and `cargo run` binaries are copied out without the hash.
            (
                "/repo/target/debug/examples/cassette_fixture",
                Some("cassette_fixture"),
            ),
            ("target/debug/examples/my-agents", Some("my_agents")),
            // Only cargo's hash goes: 16 hex digits after the last dash, and something before it.
            ("deps/prompts-deadbeef", Some("prompts_deadbeef")),
            (
                "deps/prompts-0123456789abcdeg",
                Some("prompts_0123456789abcdeg"),
            ),
            ("deps/-0123456789abcdef", Some("_0123456789abcdef")),
            ("/", None),
        ];
        for &(exe, expected) in cases {
            assert_eq!(target_of(Path::new(exe)).as_deref(), expected, "{exe}");
        }
        if cfg!(windows) {
            let exe = Path::new(r"C:\t\deps\prompts-0123456789abcdef.exe");
            assert_eq!(target_of(exe).as_deref(), Some("prompts"));
        }
        // This very test runs as `deps/prompt_tester-<hash>`.
        assert_eq!(this_target().as_deref(), Some("prompt_tester"));
    }

    #[test]
    fn a_target_finds_its_own_recording_first_and_any_other_after() {
        let prompts = Some("prompts".to_string());
        let agents = Some("agents".to_string());
        let mut recordings = Recordings::new(vec![entry("k", Some("agents"), "theirs")]);
        let answer = |r: &Recordings, target: &Target| {
            let found = r.find("k", target).unwrap();
            (found.target.clone(), found.call.clone())
        };
        assert_eq!(answer(&recordings, &agents).0, agents);
        assert_eq!(
            answer(&recordings, &prompts).0,
            agents,
            "another's when it has none"
        );
        recordings.record(entry("k", Some("prompts"), "mine"));
        assert_eq!(recordings.len(), 2);
        assert_eq!(answer(&recordings, &prompts).0, prompts);
        assert_eq!(answer(&recordings, &agents).0, agents, "kept apart");
        // A target with none of its own replays another's.
        assert!(recordings.find("k", &Some("third".into())).is_some());
        assert!(recordings.find("other", &prompts).is_none());
    }
}
