//! How far a call's request got, for a call dropped before it ends.

use std::sync::atomic::{AtomicU8, Ordering};

/// How far a call's latest request got, for a call dropped before it ends: its budget is settled by
/// it (released if nothing was sent, spent at its worst case if the provider may bill it).
#[derive(Debug, Default)]
pub(crate) struct Sent(AtomicU8);

impl Sent {
    const SENDING: u8 = 1;
    const REFUSED: u8 = 2;

    pub(super) fn sending(&self) {
        self.0.store(Self::SENDING, Ordering::Relaxed);
    }

    /// An error status is not billed; a success is.
    pub(super) fn answered(&self, status: u16) {
        if !(200..300).contains(&status) {
            self.0.store(Self::REFUSED, Ordering::Relaxed);
        }
    }

    /// The request went out and got no error status: the provider may bill it.
    pub(crate) fn may_be_billed(&self) -> bool {
        self.0.load(Ordering::Relaxed) == Self::SENDING
    }
}
