//! The all-in-one wiring: `Conductor` behind `InProcess` (RPC cast/call semantics) with the
//! periodic status loop running, on SQLite and MariaDB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use openkeel_conductor::spawn_periodic;
use openkeel_core::error::ErrorKind;
use openkeel_core::objects::ClusterStatus;
use openkeel_rpc::inprocess::InProcess;
use openkeel_rpc::{ConductorApi, Obj};

/// Poll `check` every 20 ms for up to 10 s.
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn casts_and_the_status_loop_drive_a_cluster_end_to_end() {
    on_every_backend!(|db| {
        let (conductor, _rec) = conductor(db);
        let rpc: Arc<dyn ConductorApi> =
            Arc::new(InProcess::new(conductor.clone(), Duration::from_secs(60)));
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let task = spawn_periodic(conductor.clone(), Duration::from_millis(50), stop_rx);

        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let cluster = new_cluster(&t, "e2e", &[]);
        let uuid = cluster.data.uuid.clone().unwrap();
        rpc.cluster_create(&ctx(), cluster, 1, 2, 60).await.unwrap();
        eventually("CREATE_COMPLETE", || async {
            get(db, &uuid).await.and_then(|c| c.status) == Some(ClusterStatus::CreateComplete)
        })
        .await;

        // A cast whose handler refuses (status precondition) still returns Ok to the caller.
        let mut stale = obj(db, &uuid).await;
        stale.data.status = Some(ClusterStatus::CreateInProgress);
        rpc.cluster_update(&ctx(), stale, 5, None, None, false)
            .await
            .unwrap();

        // A call returns the handler's error.
        let w = ng_named(db, &uuid, "default-worker").await;
        let mut stale = obj(db, &uuid).await;
        stale.data.status = Some(ClusterStatus::DeleteInProgress);
        let e = rpc
            .cluster_upgrade(
                &ctx(),
                stale,
                Obj::unchanged(t.clone()),
                1,
                Obj::unchanged(w.clone()),
                false,
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);

        rpc.cluster_resize(&ctx(), obj(db, &uuid).await, 4, vec![], Obj::unchanged(w))
            .await
            .unwrap();
        // One sync round writes the nodegroup, then the cluster: wait for both.
        eventually("resize complete", || async {
            let ng = ng_named(db, &uuid, "default-worker").await;
            ng.status == Some(ClusterStatus::UpdateComplete)
                && ng.node_addresses.as_ref().map(Vec::len) == Some(4)
                && status(&cluster_row(db, &uuid).await) == ClusterStatus::UpdateComplete
        })
        .await;

        rpc.cluster_delete(&ctx(), uuid.clone()).await.unwrap();
        eventually("rows gone", || async {
            get(db, &uuid).await.is_none() && ngs(db, &uuid).await.is_empty()
        })
        .await;

        stop_tx.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the loop stops on shutdown")
            .unwrap();
    });
}

#[tokio::test]
async fn the_loop_stops_when_the_shutdown_sender_is_dropped() {
    let db = openkeel_db::Database::in_memory().await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let (conductor, _rec) = conductor(&db);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let task = spawn_periodic(conductor, Duration::from_secs(3600), stop_rx);
    drop(stop_tx);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("stopped")
        .unwrap();
}

#[tokio::test]
async fn a_round_handles_many_clusters_with_bounded_concurrency() {
    on_every_backend!(|db| {
        let settings = openkeel_conductor::ConductorSettings {
            sync_concurrency: 3,
            ..settings()
        };
        let (c, _rec) = conductor_with(db, settings, true);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let mut uuids = Vec::new();
        for i in 0..10 {
            uuids.push(create(&c, &t, &format!("c{i}"), 1, &[]).await);
        }
        let report = c.sync_cluster_status().await;
        assert_eq!((report.checked, report.changed, report.errors), (10, 10, 0));
        for u in &uuids {
            assert_eq!(
                status(&cluster_row(db, u).await),
                ClusterStatus::CreateComplete
            );
        }
    });
}

/// A status tick reads the clusters in progress, the live conductors, and the clusters'
/// nodegroups and templates in a fixed number of statements, however many clusters there are,
/// and writes nothing when nothing changed.
#[tokio::test]
async fn a_status_tick_costs_the_same_statements_for_10_or_40_clusters() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let mut per_tick = Vec::new();
        for n in [10, 40] {
            while c.sync_cluster_status().await.checked < n {
                create(&c, &t, "slow", 1, &[("simulator_ticks", "1000000")]).await;
            }
            let before = db.statement_count();
            let r = c.sync_cluster_status().await;
            let statements = db.statement_count() - before;
            assert_eq!((r.checked, r.changed, r.errors), (n, 0, 0), "{r:?}");
            per_tick.push(statements);
        }
        assert_eq!(
            per_tick[0], per_tick[1],
            "statements per tick: {per_tick:?}"
        );
        assert!(per_tick[0] <= 4, "statements per tick: {per_tick:?}");
    });
}
