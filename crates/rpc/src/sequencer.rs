//! Arrival order for the casts of one cluster.
//!
//! Both transports run each request on its own task. Tasks spawned in order do not reach
//! their first await in order on a multi-threaded runtime, so two casts about one cluster
//! (a nodegroup update and, a millisecond later, its delete) could start the wrong way
//! round, and the late update would bring the deleted nodegroup back. A [`Turn`] is taken
//! synchronously, in arrival order, before the task is spawned; the task waits for its
//! turn, and the next one for the same key starts when it is done (its `Turn` dropped).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

/// Per-key FIFO of tasks.
#[derive(Debug, Default)]
pub struct Sequencer {
    /// The last turn handed out per key: its number and the receiver its successor waits on.
    tails: Mutex<HashMap<String, (u64, oneshot::Receiver<()>)>>,
    next: AtomicU64,
}

/// A place in the queue of one key: [`Turn::wait`] resolves when every earlier turn of
/// the key has been dropped; dropping it lets the next one go.
#[derive(Debug)]
pub struct Turn {
    sequencer: Arc<Sequencer>,
    key: String,
    number: u64,
    previous: Option<oneshot::Receiver<()>>,
    _done: oneshot::Sender<()>,
}

impl Sequencer {
    pub fn new() -> Arc<Self> {
        Arc::new(Sequencer::default())
    }

    /// Take the next turn for `key` (synchronous: call it where the arrival order is known).
    pub fn enter(self: &Arc<Self>, key: &str) -> Turn {
        let (done, rx) = oneshot::channel();
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let previous = self
            .tails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_string(), (number, rx))
            .map(|(_, r)| r);
        Turn {
            sequencer: self.clone(),
            key: key.to_string(),
            number,
            previous,
            _done: done,
        }
    }

    /// Keys with a turn outstanding (for tests).
    pub fn len(&self) -> usize {
        self.tails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Turn {
    /// Wait until the turns taken before this one for the same key are done.
    pub async fn wait(&mut self) {
        // Cancel-safe: the receiver is kept until it has resolved.
        if let Some(previous) = self.previous.as_mut() {
            // Err: the previous turn was dropped, which is what is waited for.
            let _ = previous.await;
            self.previous = None;
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut tails = self
            .sequencer
            .tails
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if tails.get(&self.key).is_some_and(|(n, _)| *n == self.number) {
            tails.remove(&self.key);
        }
        // `_done` drops after this: the successor's `wait` returns.
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn turns_of_one_key_run_in_the_order_taken_and_other_keys_do_not_wait() {
        let seq = Sequencer::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..50u64 {
            let mut turn = seq.enter("cluster-a");
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                turn.wait().await;
                // The earliest turns sleep longest: without the sequencer they would finish last.
                tokio::time::sleep(Duration::from_millis((50 - i) / 10)).await;
                log.lock().unwrap().push(i);
                drop(turn);
            }));
        }
        // Another key is not held up by cluster-a's queue.
        let mut other = seq.enter("cluster-b");
        tokio::time::timeout(Duration::from_millis(100), other.wait())
            .await
            .unwrap();
        drop(other);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*log.lock().unwrap(), (0..50).collect::<Vec<_>>());
        assert!(seq.is_empty(), "no key is left behind");
    }

    #[tokio::test]
    async fn a_turn_waits_for_the_one_before_it() {
        let seq = Sequencer::new();
        let first = seq.enter("k");
        let mut second = seq.enter("k");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), second.wait())
                .await
                .is_err(),
            "the second turn waits while the first is held"
        );
        drop(first);
        tokio::time::timeout(Duration::from_millis(50), second.wait())
            .await
            .unwrap();
        assert_eq!(seq.len(), 1);
        drop(second);
        assert!(seq.is_empty());
    }
}
