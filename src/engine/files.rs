//! The engine's file I/O (a cassette read, written, its file lock and `sync_all`), run on the
//! runtime's blocking threads: the async threads that drive every call never wait for a disk.

use std::sync::Arc;

use super::{CassetteMode, Engine, RunScope, cassette};

impl Engine {
    /// Runs `io` (a cassette's file reads and writes, its file lock, `sync_all`) on the runtime's
    /// blocking threads: the async threads that drive every call never wait for a disk.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        io: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        match self.runtime.spawn_blocking(io).await {
            Ok(out) => out,
            Err(e) => match e.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(e) => panic!("a cassette's file I/O did not finish: {e}"),
            },
        }
    }

    /// `scope`'s cassette (none with cassettes off), read on first use off the async threads.
    pub(super) async fn cassette_of(
        &self,
        scope: &RunScope,
    ) -> Result<Option<Arc<cassette::Cassette>>, cassette::CassetteError> {
        if self.mode == CassetteMode::Off {
            return Ok(None);
        }
        if let Some(cassette) = self.cassettes.opened_as(&scope.identity().cassette) {
            return Ok(Some(cassette));
        }
        let (store, name) = (
            self.cassettes.clone(),
            scope.identity().cassette.to_string(),
        );
        tracing::debug!(cassette = %name, "reading the cassette");
        self.blocking(move || store.open(&name)).await.map(Some)
    }

    /// Keeps what `scope`'s checks decided beside the calls it recorded in this run (see
    /// [`cassette::Cassette::note_verdict`]); `verdict` names no sample yet, the scope does. A write
    /// that fails here is kept, retried and reported when the run flushes its recordings; a cassette
    /// that cannot be read was reported by the calls.
    pub async fn note_verdict(&self, scope: &RunScope, mut verdict: cassette::RecordedChecks) {
        let Ok(Some(cassette)) = self.cassette_of(scope).await else {
            return;
        };
        let sample = cassette.sample(&scope.identity().test, scope.identity().run_index);
        // Asked here, on the runtime's thread: a replaying run then starts no blocking task per sample.
        if !cassette.keeps_verdict_of(&sample) {
            return;
        }
        verdict.target = sample.target.clone();
        verdict.test = sample.test.clone();
        verdict.run = sample.run;
        let _ = self
            .blocking(move || cassette.note_verdict(&sample, verdict))
            .await;
    }
}
