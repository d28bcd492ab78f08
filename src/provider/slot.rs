//! One HTTP exchange in one of the endpoint's in-flight slots, its answer's head first: the slot held
//! until its body is read.

use std::time::{Duration, Instant, SystemTime};

use super::limiter::{self, Limiter, Outcome};
use super::{Failure, ProviderClient, Sent};

/// A request sent in one of the endpoint's in-flight slots, its answer's head come, its body being read.
pub(super) struct Answering<'a> {
    limiter: &'a Limiter,
    permit: limiter::Permit<'a>,
    started: Instant,
    pub(super) response: reqwest::Response,
}

impl Answering<'_> {
    /// The body read: the slot given back, paced by what the answer says of the provider's limits;
    /// the latency from sending to the body's end.
    pub(super) fn end(self) -> Duration {
        let latency = self.started.elapsed();
        let headers = self.response.headers();
        if let Some(window) = limiter::window(headers, SystemTime::now()) {
            self.limiter.pace(window);
        }
        self.permit.finish(match self.response.status().as_u16() {
            200..=299 => Outcome::Success,
            429 | 529 => Outcome::RateLimited,
            _ => Outcome::Neutral,
        });
        latency
    }
}

impl ProviderClient {
    /// [`ProviderClient::in_slot`] up to the answer's head: the slot is held until its body is read
    /// and [`Answering::end`] gives it back.
    pub(super) async fn send_in_slot(
        &self,
        builder: reqwest::RequestBuilder,
        url: &str,
        sent: &Sent,
    ) -> Result<Answering<'_>, Failure> {
        let permit = self.limiter.acquire().await;
        let started = Instant::now();
        tracing::debug!(
            provider = %self.endpoint.name,
            url = %crate::redact::url_for_display(url),
            "sending"
        );
        sent.sending();
        let response = builder
            .send()
            .await
            .map_err(|e| self.transport_failure(url, &e))?;
        let status = response.status().as_u16();
        tracing::debug!(status, "the provider answered");
        sent.answered(status);
        Ok(Answering {
            limiter: &self.limiter,
            permit,
            started,
            response,
        })
    }
}
