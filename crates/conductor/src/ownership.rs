//! Which conductor runs the periodic work of which cluster (several conductors on one
//! database). Magnum has no such thing: every conductor syncs every cluster on every tick.
//!
//! The live conductors are the `magnum_service` rows of binary `magnum-conductor` whose
//! heartbeat is within `[DEFAULT] service_down_time` ([`MagnumService::is_up`], the rule
//! magnum-api's `service list` shows); a conductor is known by its row's `host`
//! (`[DEFAULT] host`). Each cluster belongs to the live conductor with the highest
//! rendezvous weight `weight(host, cluster uuid)`: every conductor computes the same owner
//! from the same rows without talking to the others, a conductor that stops heartbeating
//! loses its clusters to the others (each to its own second choice, so they spread evenly)
//! once its row is older than `service_down_time`, and one that comes back takes exactly
//! its clusters back. The weight is a fixed function (FNV-1a and a SplitMix64 finalizer), so
//! conductors of different builds agree.
//!
//! Two conductors with the same `host` share one row and count as one member: both run that
//! member's share (twice the work, nothing left out). With `[DEFAULT] host` unset, every
//! OpenKeel conductor is the NULL-host member, so each runs everything, as Magnum does.

use chrono::NaiveDateTime;
use openkeel_core::objects::MagnumService;
use openkeel_db::{magnum_service, Database, DbError, Page};
use std::time::Duration;

use crate::heartbeat::CONDUCTOR_BINARY;

/// The live conductors as one conductor sees them on one tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    me: String,
    live: Vec<String>,
}

/// FNV-1a over `parts` (separated, so `("ab", "c")` and `("a", "bc")` differ), finished by
/// SplitMix64 so that near-identical inputs (uuids differing in one digit) spread out.
fn weight(host: &str, uuid: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host.bytes().chain([0xff]).chain(uuid.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

impl Membership {
    /// `me` among `live` (added if its own heartbeat is not there yet).
    pub fn new(me: Option<&str>, live: impl IntoIterator<Item = Option<String>>) -> Self {
        let me = me.unwrap_or_default().to_string();
        let mut live: Vec<String> = live.into_iter().map(Option::unwrap_or_default).collect();
        live.push(me.clone());
        live.sort();
        live.dedup();
        Membership { me, live }
    }

    /// One member only: this conductor runs everything (SQLite, tests, a lone conductor).
    pub fn alone() -> Self {
        Membership::new(None, [])
    }

    /// The live conductors read from `magnum_service` now (one statement).
    pub async fn read(
        db: &Database,
        me: Option<&str>,
        service_down_time: Duration,
    ) -> Result<Self, DbError> {
        let now = chrono::Utc::now().naive_utc();
        let rows = magnum_service::list(db, None, &Page::all()).await?;
        Ok(Self::from_rows(me, &rows, now, service_down_time))
    }

    fn from_rows(
        me: Option<&str>,
        rows: &[MagnumService],
        now: NaiveDateTime,
        service_down_time: Duration,
    ) -> Self {
        let down = service_down_time.as_secs();
        Membership::new(
            me,
            rows.iter()
                .filter(|s| s.binary.as_deref() == Some(CONDUCTOR_BINARY) && s.is_up(now, down))
                .map(|s| s.host.clone()),
        )
    }

    /// The member that owns cluster `uuid`.
    pub fn owner(&self, uuid: &str) -> &str {
        self.live
            .iter()
            .max_by_key(|h| (weight(h, uuid), std::cmp::Reverse(h.as_str())))
            .map_or(self.me.as_str(), String::as_str)
    }

    /// Whether this conductor runs the periodic work of cluster `uuid`.
    pub fn owns(&self, uuid: &str) -> bool {
        self.live.len() <= 1 || self.owner(uuid) == self.me
    }

    /// How many conductors are live (this one included).
    pub fn size(&self) -> usize {
        self.live.len()
    }

    /// The ordered queues ([`openkeel_rpc::oslo::ORDERED_SHARDS`]) whose casts this conductor
    /// runs, as a mask (bit *i*: shard *i*): each shard belongs to one live conductor as a
    /// cluster does (the key `openkeel-ordered-shard-<i>`), all of them when it is alone.
    pub fn ordered_shards(&self) -> u32 {
        (0..openkeel_rpc::oslo::ORDERED_SHARDS)
            .filter(|i| self.owns(&format!("openkeel-ordered-shard-{i}")))
            .fold(0, |m, i| m | (1 << i))
    }
}

/// Tell `keep` which ordered queues are this conductor's ([`Membership::ordered_shards`]),
/// from the live set read every `interval`, until `stop`. The RPC server hands the others
/// over to the conductors they belong to (`RpcServer::ordered_shards`), so that the casts
/// are shared out as the periodic work is.
pub fn spawn_ordered_shards(
    db: Database,
    host: Option<String>,
    service_down_time: Duration,
    interval: Duration,
    keep: impl Fn(u32) + Send + Sync + 'static,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = None;
        loop {
            match Membership::read(&db, host.as_deref(), service_down_time).await {
                Ok(m) => {
                    let mask = m.ordered_shards();
                    // Said again when the live set's size changes too, even with the same
                    // queues (a third conductor may take its share from the other one only):
                    // the log always shows the view the queues were taken from.
                    if last != Some((mask, m.size())) {
                        tracing::info!(
                            conductors = m.size(),
                            shards = format!("{mask:#06x}"),
                            "ordered queues this conductor keeps"
                        );
                        last = Some((mask, m.size()));
                    }
                    keep(mask);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the live conductors; the ordered queues kept are unchanged");
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = stop.changed() => break,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuids(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("{:08x}-7c2d-4b1e-9f3a-{:012x}", i * 7919, i))
            .collect()
    }

    fn hosts(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|h| Some((*h).to_string())).collect()
    }

    #[test]
    fn each_ordered_shard_is_kept_by_exactly_one_live_conductor() {
        let live = hosts(&["c1", "c2", "c3"]);
        let masks: Vec<u32> = ["c1", "c2", "c3"]
            .iter()
            .map(|me| Membership::new(Some(me), live.clone()).ordered_shards())
            .collect();
        assert_eq!(
            masks[0] | masks[1] | masks[2],
            openkeel_rpc::oslo::ALL_ORDERED_SHARDS
        );
        assert_eq!(masks[0] & masks[1], 0);
        assert_eq!(masks[0] & masks[2], 0);
        assert_eq!(masks[1] & masks[2], 0);
        assert!(masks.iter().all(|m| *m != 0), "{masks:x?}");
        assert_eq!(
            Membership::alone().ordered_shards(),
            openkeel_rpc::oslo::ALL_ORDERED_SHARDS
        );
    }

    #[test]
    fn every_cluster_has_exactly_one_owner_and_the_shares_are_even() {
        let live = hosts(&["c1", "c2", "c3"]);
        let views: Vec<Membership> = ["c1", "c2", "c3"]
            .iter()
            .map(|me| Membership::new(Some(me), live.clone()))
            .collect();
        let mut counts = [0usize; 3];
        for u in uuids(3000) {
            let owners: Vec<usize> = (0..3).filter(|i| views[*i].owns(&u)).collect();
            assert_eq!(owners.len(), 1, "{u}: {owners:?}");
            counts[owners[0]] += 1;
        }
        for c in counts {
            assert!((850..1150).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn a_member_leaving_moves_only_its_clusters_and_coming_back_takes_them_back() {
        let all = Membership::new(Some("c1"), hosts(&["c1", "c2", "c3"]));
        let without_c2 = Membership::new(Some("c1"), hosts(&["c1", "c3"]));
        for u in uuids(500) {
            let before = all.owner(&u).to_string();
            let after = without_c2.owner(&u);
            if before == "c2" {
                assert_ne!(after, "c2");
            } else {
                assert_eq!(after, before, "{u} moved although its owner stayed");
            }
        }
    }

    #[test]
    fn the_live_set_is_the_conductor_rows_within_service_down_time() {
        let now = chrono::Utc::now().naive_utc();
        let row = |host: &str, binary: &str, age: i64| MagnumService {
            host: Some(host.into()),
            binary: Some(binary.into()),
            last_seen_up: Some(now - chrono::Duration::seconds(age)),
            ..MagnumService::default()
        };
        let rows = [
            row("c1", "magnum-conductor", 1),
            row("c2", "magnum-conductor", 100),
            row("c3", "magnum-conductor", 5),
            row("api", "magnum-api", 1),
        ];
        let m = Membership::from_rows(Some("c1"), &rows, now, Duration::from_secs(10));
        assert_eq!(m.live, vec!["c1".to_string(), "c3".to_string()]);
        // Its own heartbeat not written yet: still a member.
        let m = Membership::from_rows(Some("c9"), &rows, now, Duration::from_secs(10));
        assert_eq!(m.size(), 3);
        assert!(Membership::alone().owns("anything"));
    }
}
