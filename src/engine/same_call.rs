//! One call at a time per recording: trials that ask the very same call (two cases rendering one
//! prompt, one text embedded twice) share its key, and a cassette holds one answer per key. Made
//! together, both would be paid for and the second would overwrite the first; the number of calls
//! would depend on timing. So a second identical call waits for the first and then replays what
//! it recorded, as every later run does offline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// A cassette's name and a call's key.
type CallSlot = (String, String);

/// The calls of this run being made now, by slot.
#[derive(Default)]
pub(super) struct SameCalls {
    making: Mutex<HashMap<CallSlot, Arc<AsyncMutex<()>>>>,
}

/// The right to make the call of one slot; identical calls wait until it is dropped.
pub(super) struct SlotGuard<'a> {
    calls: &'a SameCalls,
    slot: CallSlot,
    guard: Option<OwnedMutexGuard<()>>,
}

impl SameCalls {
    /// Waits until no other call of `key` in `cassette` is being made.
    pub(super) async fn turn(&self, cassette: &str, key: &str) -> SlotGuard<'_> {
        let slot = (cassette.to_string(), key.to_string());
        let lock = self
            .lock()
            .entry(slot.clone())
            .or_insert_with(|| Arc::new(AsyncMutex::new(())))
            .clone();
        SlotGuard {
            calls: self,
            slot,
            guard: Some(lock.lock_owned().await),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallSlot, Arc<AsyncMutex<()>>>> {
        self.making.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Slots with a call being made or waited for (for tests: a finished run leaves none).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut making = self.calls.lock();
        // The map and this guard hold the lock; anyone else holding it waits for its turn. Checked
        // under the map's lock, so no one can take a clone between the check and the removal.
        if let Some(guard) = &self.guard
            && Arc::strong_count(OwnedMutexGuard::mutex(guard)) == 2
        {
            making.remove(&self.slot);
        }
        self.guard = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn identical_calls_take_turns_and_their_slot_is_forgotten_after() {
        let calls = Arc::new(SameCalls::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let (calls, inside, most) = (calls.clone(), inside.clone(), most.clone());
                tokio::spawn(async move {
                    // Four of one key, four of four others.
                    let key = if i % 2 == 0 {
                        "same".to_string()
                    } else {
                        format!("own{i}")
                    };
                    let _turn = calls.turn("suite", &key).await;
                    if key == "same" {
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    if key == "same" {
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(calls.len(), 0, "every slot is forgotten once its calls end");
    }

    #[tokio::test]
    async fn only_the_same_key_in_the_same_cassette_waits() {
        let calls = SameCalls::default();
        let _a = calls.turn("a", "k").await;
        let wait = Duration::from_secs(1);
        let other_cassette = tokio::time::timeout(wait, calls.turn("b", "k")).await;
        assert!(
            other_cassette.is_ok(),
            "another cassette's call of one key does not wait"
        );
        let other_key = tokio::time::timeout(wait, calls.turn("a", "j")).await;
        assert!(
            other_key.is_ok(),
            "another key in the same cassette does not wait"
        );
        assert!(
            tokio::time::timeout(Duration::from_millis(50), calls.turn("a", "k"))
                .await
                .is_err(),
            "the same slot waits"
        );
    }
}
