//! What the unit tests share: a test's scratch folder in the temporary directory, the check that a
//! text (a report of problems, a summary, a prompt) says each of some parts, and runs answered
//! without a call for the code that checks them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::completion::CompletionResult;
use crate::engine::{Completed, Engine, RunScope};
use crate::run::{Continue, PromptRun, RunRequest};

/// A test's own scratch folder (the process id and a number), empty when made, removed when
/// dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// A new empty folder `pt-<name>-<pid>-<n>`: `n` keeps the tests that run at once apart.
    pub(crate) fn new(name: &str) -> Self {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pt-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The folder.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `bytes` to `relative` in the folder, and gives its path.
    pub(crate) fn file(&self, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(relative);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Panics, showing `text`, unless it contains each of `parts`.
#[track_caller]
pub(crate) fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} not in\n{text}");
    }
}

/// The scope of run 1 of 1 of `test`, whose cassette and filter are `suite`, on the unit tests' engine.
pub(crate) fn scope(test: &str, suite: &str) -> Arc<RunScope> {
    Arc::new(RunScope::new(
        Engine::for_unit_tests(),
        crate::engine::SampleIdentity::new(test, suite, suite, 1, 1),
    ))
}

/// `prompt` answered `output` by model `m` of provider `fake` (replayed: 5 tokens in, 7 out, 10 ms),
/// after the turns of `previous` when it continues that conversation.
pub(crate) fn answered(
    scope: &Arc<RunScope>,
    prompt: &str,
    output: &str,
    previous: Option<PromptRun>,
) -> PromptRun {
    let request = RunRequest {
        prompt: prompt.into(),
        vars: Default::default(),
        media: Default::default(),
        provider: "fake".into(),
        model: "m".into(),
        continues: Continue::Not("a unit test"),
        previous: previous.map(Arc::new),
    };
    let completed = Completed {
        result: CompletionResult::new(output, 5, 7),
        latency: Duration::from_millis(10),
        replayed: true,
    };
    PromptRun::from_result(scope.clone(), request, completed, Vec::new())
}
