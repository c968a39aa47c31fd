//! Lists of one kind for many clusters in one request. The status sync asks the driver about
//! every cluster in progress, a few at a time (the conductor's `sync_concurrency`); each asks
//! for the same kinds of objects (KubeadmControlPlanes, MachineDeployments, Machines, ...)
//! labelled with its own cluster name. Asks for one kind are collected into a batch answered
//! by one LIST with a set-based selector (`cluster.x-k8s.io/cluster-name in (a,b,c)`), so the
//! requests per cluster per tick fall as the clusters in progress grow (magnum-cluster-api
//! makes two lists per nodegroup per cluster per tick).
//!
//! When a batch is sent: the status calls in flight ([`Batches::observing`]) mark the phases
//! in which they wait for lists ([`Batches::waiting`]); a batch is sent as soon as every call
//! in flight is waiting (nobody else can join it: a new call starts only when one ends), or
//! after [`MAX_WAIT`] at the latest, but never before [`MIN_WAIT`] (calls started together
//! need a moment to count themselves in). A single call in flight is answered after
//! [`MIN_WAIT`], so one cluster's status costs only a few milliseconds more.
//!
//! Each answer is a fresh LIST (a quorum read of the API server, as the single list was), not
//! a cache: nothing read here can be older than the ask, so the completion rules see at least
//! what the driver itself wrote before asking.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use openkeel_drivers::DriverError;
use serde_json::Value;
use tokio::sync::{oneshot, Notify};

/// The longest the first ask of a batch waits for others to join it.
pub const MAX_WAIT: Duration = Duration::from_secs(1);

/// The shortest: status calls started together by the conductor take a moment each to count
/// themselves in flight ([`Batches::observing`]); a batch sent as soon as the first caller
/// alone was waiting left with one ask, and the tick's others each sent their own (9–17
/// requests for 8 clusters instead of 6).
pub const MIN_WAIT: Duration = Duration::from_millis(5);

/// At most this many names in one selector (the request's URL stays a few KiB).
pub const MAX_NAMES: usize = 100;

type Answer = Result<Vec<Value>, DriverError>;

/// One ask: the name it selects and where its answer goes.
pub type Ask = (String, oneshot::Sender<Answer>);

/// The asks waiting for their batch, by batch key (kind and what the names select), and the
/// calls that ask.
#[derive(Default)]
pub struct Batches {
    pending: Mutex<HashMap<String, Vec<Ask>>>,
    in_flight: AtomicUsize,
    waiting: AtomicUsize,
    changed: Notify,
}

/// A status call in flight (until dropped).
pub struct Observing<'a>(&'a Batches);

impl Drop for Observing<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

/// A status call waiting for its lists (until dropped).
pub struct Waiting<'a>(&'a Batches);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

impl std::fmt::Debug for Batches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches").finish_non_exhaustive()
    }
}

impl Batches {
    /// Count a status call in flight while the guard lives.
    pub fn observing(&self) -> Observing<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
        Observing(self)
    }

    /// Count a call as waiting for its lists while the guard lives.
    pub fn waiting(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
        Waiting(self)
    }

    /// Every call in flight waits for lists (or none is in flight).
    fn all_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) >= self.in_flight.load(Ordering::SeqCst)
    }

    /// Resolves when a batch should be sent: after [`MIN_WAIT`], once every call in flight
    /// waits, or when [`MAX_WAIT`] has passed.
    pub async fn settle(&self) {
        let deadline = tokio::time::Instant::now() + MAX_WAIT;
        tokio::time::sleep(MIN_WAIT).await;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.all_waiting() {
                return;
            }
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Add an ask for `name` to the batch `key`; `true` when it is the first (its caller
    /// starts the batch's flush).
    pub fn join(&self, key: &str, name: &str, answer: oneshot::Sender<Answer>) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = pending.entry(key.to_string()).or_default();
        waiting.push((name.to_string(), answer));
        waiting.len() == 1
    }

    /// The asks of the batch `key`, which stops taking new ones (the next ask starts a new
    /// batch).
    pub fn take(&self, key: &str) -> Vec<Ask> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.remove(key).unwrap_or_default()
    }
}

/// The distinct names of `asks`, in chunks of at most [`MAX_NAMES`].
pub fn chunks(asks: &[Ask]) -> Vec<Vec<String>> {
    let names: BTreeSet<&str> = asks.iter().map(|(n, _)| n.as_str()).collect();
    let names: Vec<String> = names.into_iter().map(str::to_string).collect();
    names.chunks(MAX_NAMES).map(<[String]>::to_vec).collect()
}

/// `key in (a,b,c)`.
pub fn set_selector(key: &str, names: &[String]) -> String {
    format!("{key} in ({})", names.join(","))
}

/// `items` grouped by `name_of` (objects without a name are dropped).
pub fn group_by(
    items: Vec<Value>,
    name_of: impl Fn(&Value) -> Option<&str>,
) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for item in items {
        if let Some(name) = name_of(&item).map(str::to_string) {
            out.entry(name).or_default().push(item);
        }
    }
    out
}

/// Answer every ask of `asks` whose name is in `names`: its group of `found`, or the error.
pub fn answer(
    asks: &mut Vec<Ask>,
    names: &[String],
    found: &Result<BTreeMap<String, Vec<Value>>, DriverError>,
) {
    let (these, rest): (Vec<_>, Vec<_>) = std::mem::take(asks)
        .into_iter()
        .partition(|(n, _)| names.contains(n));
    *asks = rest;
    for (name, tx) in these {
        let a = match found {
            Ok(groups) => Ok(groups.get(&name).cloned().unwrap_or_default()),
            Err(e) => Err(e.clone()),
        };
        // the asker may have given up (its call's timeout): nothing to do
        let _ = tx.send(a);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_batch_answers_each_ask_with_its_own_objects() {
        let b = Batches::default();
        let (t1, r1) = oneshot::channel();
        let (t2, r2) = oneshot::channel();
        let (t3, mut r3) = oneshot::channel();
        assert!(b.join("md", "a", t1));
        assert!(!b.join("md", "b", t2));
        assert!(b.join("kcp", "a", t3), "another kind is another batch");
        let mut asks = b.take("md");
        assert!(b.take("md").is_empty());
        let names = chunks(&asks);
        assert_eq!(names, vec![vec!["a".to_string(), "b".to_string()]]);
        assert_eq!(set_selector("l", &names[0]), "l in (a,b)");
        let items = vec![
            json!({"metadata": {"name": "a-1", "labels": {"l": "a"}}}),
            json!({"metadata": {"name": "x-1", "labels": {"l": "x"}}}),
            json!({"metadata": {"name": "a-2", "labels": {"l": "a"}}}),
        ];
        let groups = group_by(items, |o| o["metadata"]["labels"]["l"].as_str());
        answer(&mut asks, &names[0], &Ok(groups));
        assert!(asks.is_empty());
        let a = r1.blocking_recv().unwrap().unwrap();
        assert_eq!(a.len(), 2);
        assert!(r2.blocking_recv().unwrap().unwrap().is_empty());
        assert!(r3.try_recv().is_err(), "the other batch is still waiting");
    }

    #[test]
    fn an_error_reaches_every_ask_of_the_chunk() {
        let b = Batches::default();
        let (t1, r1) = oneshot::channel();
        b.join("md", "a", t1);
        let mut asks = b.take("md");
        let e = DriverError::transient("down".to_string());
        answer(&mut asks, &["a".to_string()], &Err(e.clone()));
        assert_eq!(r1.blocking_recv().unwrap().unwrap_err(), e);
    }

    #[tokio::test]
    async fn a_batch_is_sent_once_every_call_in_flight_waits() {
        let b = std::sync::Arc::new(Batches::default());
        // nobody in flight (a caller that does not count itself): after MIN_WAIT
        tokio::time::timeout(MIN_WAIT + Duration::from_millis(50), b.settle())
            .await
            .unwrap();
        let first = b.observing();
        let second = b.observing();
        let w1 = b.waiting();
        let b2 = b.clone();
        let started = tokio::time::Instant::now();
        let settled = tokio::spawn(async move { b2.settle().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!settled.is_finished(), "the second call may still join");
        // the second call ends without asking: everyone left waits
        drop(second);
        settled.await.unwrap();
        assert!(started.elapsed() < MAX_WAIT);
        drop(w1);
        // a call in flight that never waits: MAX_WAIT at the latest
        let started = tokio::time::Instant::now();
        b.settle().await;
        assert!(started.elapsed() >= MAX_WAIT);
        drop(first);
    }

    #[test]
    fn names_are_distinct_and_chunked() {
        let mut asks = Vec::new();
        for i in 0..(MAX_NAMES + 5) {
            let (t, _r) = oneshot::channel();
            asks.push((format!("c{i:03}"), t));
        }
        let (t, _r) = oneshot::channel();
        asks.push(("c000".to_string(), t));
        let c = chunks(&asks);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].len(), MAX_NAMES);
        assert_eq!(c[1].len(), 5);
    }
}
