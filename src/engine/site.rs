//! What the messages about a call that is not made (or made and unanswered) name: the call's site,
//! and what changed since its sample was recorded.

use super::{Call, CallError, Engine, display_path};
use crate::cassette::decision::{CallSite, Refusal};
use crate::cassette::{self, Cassette, Recorded};
use crate::role::{CallRole, JudgeUse};

impl Engine {
    /// What the message about a call that is not made names. Built only then: a replayed call never
    /// pays for these strings.
    pub(super) fn call_site<'a>(
        &self,
        call: &Call<'a>,
        cassette: Option<&cassette::Cassette>,
        missing_key: &'a Option<String>,
        (changes, role_recorded): (Vec<String>, bool),
    ) -> CallSite<'a> {
        let scope = call.scope;
        let judge_key = self.judge_missing_key(call.role);
        // A body's judge calls show in its recordings; without any, it may still ask.
        let judge_recorded = || {
            cassette.is_some_and(|c| {
                let sample = c.sample(&scope.identity().test, scope.identity().run_index);
                !c.recorded_calls(&sample, CallRole::Judge).is_empty()
            })
        };
        let judge_use = match scope.identity().judge {
            JudgeUse::IfTheBodyAsks if judge_key.is_some() && judge_recorded() => JudgeUse::Yes,
            judge_use => judge_use,
        };
        let (also_missing, judge_key_if_asked) = match judge_use {
            JudgeUse::Yes => (judge_key.into_iter().collect(), None),
            JudgeUse::No => (Vec::new(), None),
            JudgeUse::IfTheBodyAsks => (Vec::new(), judge_key),
        };
        let path = cassette.map_or_else(
            || self.cassettes.path_for(&scope.identity().cassette),
            |c| c.path().to_path_buf(),
        );
        CallSite {
            commands: self.commands.clone(),
            filter: &scope.identity().filter,
            cassette: display_path(&path, &self.config.root),
            cassette_file: cassette.map_or_else(String::new, |c| c.file_name()),
            role: call.role,
            run: (scope.identity().run_index, scope.identity().runs),
            provider: call.provider,
            mode: self.mode,
            missing_key: missing_key.as_deref(),
            also_missing,
            judge_key_if_asked,
            changes,
            role_recorded,
        }
    }

    /// The key the judge needs and misses, for a subject call's message: recording the subject's
    /// answer anew records the judge's verdict on it too, when the test asks the judge.
    fn judge_missing_key(&self, role: CallRole) -> Option<String> {
        let judge = self
            .config
            .judge
            .as_ref()
            .filter(|_| role == CallRole::Subject)?;
        let endpoint = self.config.endpoint(&judge.provider).ok()?;
        crate::provider::missing_key_for(endpoint)
    }

    /// What differs between the requests `cassette` holds for the call's sample and role and `request`
    /// (the closest one's changes), and whether it holds any of that role (none: this call was never
    /// recorded, rather than changed).
    pub(super) fn what_changed(
        &self,
        call: &Call<'_>,
        cassette: &Cassette,
        request: &impl Recorded,
    ) -> (Vec<String>, bool) {
        let sample = cassette.sample(&call.scope.identity().test, call.scope.identity().run_index);
        let recorded = cassette.recorded_calls(&sample, call.role);
        (request.changes(&recorded), !recorded.is_empty())
    }

    /// A stale call made in auto mode that got no answer at all (offline, say): after the provider's
    /// error, the error says the recording is stale, with what changed and the command that records
    /// it, as under CI.
    pub(super) fn stale_unanswered(
        &self,
        call: &Call<'_>,
        cassette: &Cassette,
        request: &impl Recorded,
        error: &crate::provider::ProviderError,
    ) -> CallError {
        let sample = cassette.sample(&call.scope.identity().test, call.scope.identity().run_index);
        let refusal = Refusal::Stale {
            recorded: cassette.sample_recordings(&sample),
        };
        let (changes, role_recorded) = self.what_changed(call, cassette, request);
        let said = self
            .call_site(
                call,
                Some(cassette),
                &None,
                (changes.clone(), role_recorded),
            )
            .refusal(&refusal);
        let failed = CallError::provider(error);
        let message = format!("{failed}. {said}");
        CallError::refused(&refusal, changes, message).caused_by(failed)
    }
}
