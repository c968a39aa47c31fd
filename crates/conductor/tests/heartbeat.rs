//! The `magnum_service` heartbeat (`magnum/servicegroup/magnum_service_periodic.py`) on SQLite and MariaDB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use openkeel_conductor::heartbeat::{report_state, CONDUCTOR_BINARY};
use openkeel_conductor::spawn_heartbeat;
use openkeel_db::magnum_service;

#[tokio::test]
async fn first_round_creates_the_row_and_each_round_counts() {
    on_every_backend!(|db| {
        let s1 = report_state(db, Some("conductor-a"), CONDUCTOR_BINARY)
            .await
            .unwrap();
        assert_eq!(s1.host.as_deref(), Some("conductor-a"));
        assert_eq!(s1.binary.as_deref(), Some("magnum-conductor"));
        assert_eq!(s1.report_count, 1);
        assert_eq!(s1.disabled, Some(false));
        assert_eq!(s1.forced_down, Some(false));
        let first_seen = s1.last_seen_up.expect("last_seen_up set");
        let s2 = report_state(db, Some("conductor-a"), CONDUCTOR_BINARY)
            .await
            .unwrap();
        assert_eq!(s2.id, s1.id, "the same row is reported");
        assert_eq!(s2.report_count, 2);
        assert!(s2.last_seen_up.unwrap() >= first_seen);
        // another host gets its own row
        let b = report_state(db, Some("conductor-b"), CONDUCTOR_BINARY)
            .await
            .unwrap();
        assert_ne!(b.id, s1.id);
        assert_eq!(b.report_count, 1);
    });
}

#[tokio::test]
async fn an_unset_host_is_a_null_host_row_found_again_on_restart() {
    on_every_backend!(|db| {
        let a = report_state(db, None, CONDUCTOR_BINARY).await.unwrap();
        assert_eq!(a.host, None);
        let b = report_state(db, None, CONDUCTOR_BINARY).await.unwrap();
        assert_eq!(b.id, a.id);
        assert_eq!(b.report_count, 2);
        let rows = magnum_service::list(db, None, &Default::default())
            .await
            .unwrap();
        assert_eq!(rows.iter().filter(|s| s.host.is_none()).count(), 1);
    });
}

#[tokio::test]
async fn the_loop_reports_at_once_then_on_its_interval_and_stops() {
    on_every_backend!(|db| {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let h = spawn_heartbeat(
            db.clone(),
            Some("loop-host".into()),
            Duration::from_millis(100),
            stop_rx,
        );
        let mut count = 0;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if let Some(s) =
                magnum_service::get_by_host_and_binary(db, "loop-host", CONDUCTOR_BINARY)
                    .await
                    .unwrap()
            {
                count = s.report_count;
                if count >= 3 {
                    break;
                }
            }
        }
        assert!(count >= 3, "three rounds within 2 s, saw {count}");
        stop_tx.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(2), h)
            .await
            .expect("loop stops")
            .unwrap();
        // a dropped sender stops it too (no busy loop)
        let (tx, rx) = tokio::sync::watch::channel(false);
        let h = spawn_heartbeat(
            db.clone(),
            Some("loop-host-2".into()),
            Duration::from_secs(60),
            rx,
        );
        drop(tx);
        tokio::time::timeout(Duration::from_secs(2), h)
            .await
            .expect("loop stops when the sender is gone")
            .unwrap();
    });
}
