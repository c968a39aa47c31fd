//! The driver seam as a Kubernetes-backed driver needs it: transient driver errors leave the
//! cluster alone until the next tick, permanent ones fail the operation with their text, a
//! typed status report is written field by field, every driver call is bounded in time, and
//! the status sync never writes over an operation that started while it was asking the
//! driver. A scripted driver plays the driver's part.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::*;
use openkeel_conductor::{Conductor, ConductorSettings};
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup};
use openkeel_drivers::{
    Driver, DriverContext, DriverError, DriverRegistry, DriverResult, DriverSettings,
    NodeGroupReport, ProvidedType, ScaleManager, StatusChange, StatusReport, Writes,
};
use openkeel_rpc::{ConductorApi, Obj};
use tokio::sync::Notify;

/// A driver whose status answers are scripted, whose status call can be held at a gate, and
/// whose create can hang.
#[derive(Default)]
struct Scripted {
    answers: Mutex<VecDeque<DriverResult<StatusReport>>>,
    /// When set, `update_cluster_status` signals `entered` and waits for `release`.
    gate: Mutex<Option<(Arc<Notify>, Arc<Notify>)>>,
    hang_on_create: Mutex<bool>,
    /// How long `delete_cluster` takes.
    delete_takes: Mutex<Duration>,
    /// How long `resize_cluster` takes, and how many resizes ran at once (now, at most).
    resize_takes: Mutex<Duration>,
    resizing: AtomicUsize,
    most_resizing: AtomicUsize,
    /// How many `rotate_credential` calls arrived.
    rotations: Mutex<usize>,
    /// When set, `upgrade_cluster` refuses with `NotSupported`.
    refuse_upgrade: Mutex<bool>,
}

impl Scripted {
    fn answer(&self, a: DriverResult<StatusReport>) {
        self.answers.lock().unwrap().push_back(a);
    }
}

#[async_trait]
impl Driver for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn provides(&self) -> Vec<ProvidedType> {
        vec![ProvidedType::new("vm", "ubuntu", "kubernetes")]
    }
    async fn create_cluster(
        &self,
        _: &DriverContext<'_>,
        cluster: &mut Cluster,
        _: i32,
    ) -> DriverResult<Writes> {
        let hang = *self.hang_on_create.lock().unwrap();
        if hang {
            std::future::pending::<()>().await;
        }
        cluster.stack_id = Some("kube-abcde".into());
        Ok(Writes::none())
    }
    async fn update_cluster(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: Option<&dyn ScaleManager>,
        _: bool,
    ) -> DriverResult<Writes> {
        Ok(Writes::none())
    }
    async fn upgrade_cluster(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: &ClusterTemplate,
        _: i32,
        _: &mut NodeGroup,
        _: bool,
    ) -> DriverResult<Writes> {
        if *self.refuse_upgrade.lock().unwrap() {
            return Err(openkeel_core::error::MagnumError::with_message(
                openkeel_core::error::ErrorKind::NotSupported,
                "Upgrading this cluster is not supported by the scripted driver.",
            )
            .into());
        }
        Ok(Writes::none())
    }
    async fn delete_cluster(&self, _: &DriverContext<'_>, _: &mut Cluster) -> DriverResult<Writes> {
        let takes = *self.delete_takes.lock().unwrap();
        tokio::time::sleep(takes).await;
        Ok(Writes::none())
    }
    async fn resize_cluster(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: Option<&dyn ScaleManager>,
        _: i32,
        _: &[String],
        _: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        let now = self.resizing.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_resizing.fetch_max(now, Ordering::SeqCst);
        let takes = *self.resize_takes.lock().unwrap();
        tokio::time::sleep(takes).await;
        self.resizing.fetch_sub(1, Ordering::SeqCst);
        Ok(Writes::none())
    }
    async fn create_nodegroup(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        Ok(Writes::none())
    }
    async fn update_nodegroup(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        Ok(Writes::none())
    }
    async fn delete_nodegroup(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
        _: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        Ok(Writes::none())
    }
    async fn rotate_credential(
        &self,
        _: &DriverContext<'_>,
        _: &mut Cluster,
    ) -> DriverResult<Writes> {
        *self.rotations.lock().unwrap() += 1;
        Ok(Writes::none())
    }

    async fn update_cluster_status(
        &self,
        _: &DriverContext<'_>,
        _: &Cluster,
    ) -> DriverResult<StatusReport> {
        let gate = self.gate.lock().unwrap().clone();
        if let Some((entered, release)) = gate {
            entered.notify_one();
            release.notified().await;
        }
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Ok(StatusReport::unchanged()))
    }
}

fn with_driver(db: &openkeel_db::Database, timeout: Duration) -> (Arc<Conductor>, Arc<Scripted>) {
    let driver = Arc::new(Scripted::default());
    (on_driver(db, timeout, &driver), driver)
}

/// A conductor over `driver` (two of them on two connection pools are two conductor
/// processes as far as the database is concerned).
fn on_driver(
    db: &openkeel_db::Database,
    timeout: Duration,
    driver: &Arc<Scripted>,
) -> Arc<Conductor> {
    let mut registry = DriverRegistry::new(DriverSettings::default());
    registry.register(driver.clone());
    let settings = ConductorSettings {
        driver_call_timeout: timeout,
        ..settings()
    };
    Arc::new(Conductor::new(
        db.clone(),
        Arc::new(registry),
        Arc::new(Recorder::default()),
        settings,
    ))
}

fn change(status: ClusterStatus, reason: Option<&str>) -> Option<StatusChange> {
    Some(StatusChange {
        status,
        reason: reason.map(str::to_string),
    })
}

#[tokio::test]
async fn a_transient_error_leaves_the_cluster_for_the_next_tick_and_a_report_is_written() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "transient", 2, &[]).await;

        driver.answer(Err(DriverError::transient(
            "the management cluster's API server cannot be reached",
        )));
        let r = c.sync_cluster_status().await;
        assert_eq!((r.checked, r.transient, r.changed), (1, 1, 0), "{r:?}");
        let row = cluster_row(db, &uuid).await;
        assert_eq!(status(&row), ClusterStatus::CreateInProgress);
        assert_eq!(row.status_reason, None);

        // The next tick's report is written field by field.
        let groups = ngs(db, &uuid).await;
        let master = groups.iter().find(|n| n.role.as_deref() == Some("master"));
        let mut m = NodeGroupReport::new(master.unwrap().uuid.clone());
        m.status = change(ClusterStatus::CreateComplete, None);
        m.node_addresses = Some(vec!["10.0.0.5".into()]);
        driver.answer(Ok(StatusReport {
            status: change(ClusterStatus::CreateComplete, None),
            api_address: Some("https://192.0.2.10:6443".into()),
            coe_version: Some("v1.31.2".into()),
            nodegroups: vec![m, NodeGroupReport::new("not-a-nodegroup-of-this-cluster")],
            destroy_nodegroups: Vec::new(),
        }));
        let r = c.sync_cluster_status().await;
        assert_eq!((r.changed, r.transient, r.errors), (1, 0, 0), "{r:?}");
        let row = cluster_row(db, &uuid).await;
        assert_eq!(status(&row), ClusterStatus::CreateComplete);
        assert_eq!(row.api_address.as_deref(), Some("https://192.0.2.10:6443"));
        assert_eq!(row.coe_version.as_deref(), Some("v1.31.2"));
        let master = ng_named(db, &uuid, "default-master").await;
        assert_eq!(master.status, Some(ClusterStatus::CreateComplete));
        assert_eq!(master.node_addresses, Some(vec!["10.0.0.5".to_string()]));
        // Not named in the report: untouched.
        let worker = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(worker.status, Some(ClusterStatus::CreateInProgress));
    });
}

#[tokio::test]
async fn a_permanent_error_fails_the_operation_with_its_text() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "permanent", 2, &[]).await;
        let text = "KubeadmControlPlane kube-abcde: Machine kube-abcde-x7k2p failed: \
                    InstanceCreateFailed: No valid host was found.";
        driver.answer(Err(DriverError::permanent_message(text)));
        let r = c.sync_cluster_status().await;
        assert_eq!((r.changed, r.transient), (1, 0), "{r:?}");
        let row = cluster_row(db, &uuid).await;
        assert_eq!(status(&row), ClusterStatus::CreateFailed);
        assert_eq!(row.status_reason.as_deref(), Some(text));
        for ng in ngs(db, &uuid).await {
            assert_eq!(ng.status, Some(ClusterStatus::CreateFailed), "{}", ng.name);
            assert_eq!(ng.status_reason.as_deref(), Some(text));
        }
    });
}

#[tokio::test]
async fn a_hung_driver_call_is_bounded_and_releases_the_cluster() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_millis(300));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        *driver.hang_on_create.lock().unwrap() = true;
        let obj = new_cluster(&t, "hung", &[]);
        let uuid = obj.data.uuid.clone().unwrap();
        let started = Instant::now();
        let e = tokio::time::timeout(
            Duration::from_secs(10),
            c.cluster_create(&ctx(), obj, 1, 1, 60),
        )
        .await
        .expect("the handler returns although the driver never does")
        .expect_err("the create fails");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            e.message().contains("create_cluster did not answer within"),
            "{e}"
        );
        let row = cluster_row(db, &uuid).await;
        assert_eq!(status(&row), ClusterStatus::CreateFailed);
        assert_eq!(row.status_reason.as_deref(), Some(e.message()));

        // The cluster's lock was released: the next operation runs at once.
        tokio::time::timeout(
            Duration::from_secs(5),
            c.cluster_delete(&ctx(), uuid.clone()),
        )
        .await
        .expect("delete is not blocked")
        .expect("delete");
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::DeleteInProgress
        );

        // A status call that hangs is a transient error: nothing changes.
        let entered = Arc::new(Notify::new());
        let never = Arc::new(Notify::new());
        *driver.gate.lock().unwrap() = Some((entered, never));
        let r = c.sync_cluster_status().await;
        assert_eq!((r.checked, r.transient, r.changed), (1, 1, 0), "{r:?}");
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::DeleteInProgress
        );
    });
}

/// A delete may wait for the cluster's load balancers (`[cluster] pre_delete_lb_timeout`) on
/// top of the bound of every driver call; beyond both it fails as a timeout.
#[tokio::test]
async fn a_delete_may_take_the_pre_delete_wait_and_no_more() {
    on_every_backend!(|db| {
        let driver = Arc::new(Scripted::default());
        let mut registry = DriverRegistry::new(DriverSettings::default());
        registry.register(driver.clone());
        let settings = ConductorSettings {
            driver_call_timeout: Duration::from_millis(300),
            pre_delete_timeout: Duration::from_millis(700),
            ..settings()
        };
        let c = Arc::new(Conductor::new(
            db.clone(),
            Arc::new(registry),
            Arc::new(Recorder::default()),
            settings,
        ));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        // longer than a driver call may take, within the pre-delete wait
        let slow = create(&c, &t, "slow-lbs", 1, &[]).await;
        *driver.delete_takes.lock().unwrap() = Duration::from_millis(600);
        c.cluster_delete(&ctx(), slow.clone())
            .await
            .expect("delete");
        assert_eq!(
            status(&cluster_row(db, &slow).await),
            ClusterStatus::DeleteInProgress
        );
        // beyond both: DELETE_FAILED with the bound in the reason
        let stuck = create(&c, &t, "stuck-lbs", 1, &[]).await;
        *driver.delete_takes.lock().unwrap() = Duration::from_secs(3);
        let e = c.cluster_delete(&ctx(), stuck.clone()).await.unwrap_err();
        assert!(
            e.message()
                .contains("delete_cluster did not answer within 1 s"),
            "{e}"
        );
        assert_eq!(
            status(&cluster_row(db, &stuck).await),
            ClusterStatus::DeleteFailed
        );
    });
}

/// A resize is running (UPDATE_IN_PROGRESS); the status sync asks the driver, and while it
/// waits for the answer a second resize arrives. The driver then reports the first resize
/// complete. That answer belongs to the state the sync read: the second resize must not be
/// marked complete by it.
#[tokio::test]
async fn the_status_sync_never_writes_over_an_operation_that_started_meanwhile() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "race", 2, &[]).await;
        driver.answer(Ok(StatusReport {
            status: change(ClusterStatus::CreateComplete, None),
            ..StatusReport::default()
        }));
        c.sync_cluster_status().await;
        let w = ng_named(db, &uuid, "default-worker").await;
        c.cluster_resize(&ctx(), obj(db, &uuid).await, 3, vec![], Obj::unchanged(w))
            .await
            .expect("first resize");
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );

        let entered = Arc::new(Notify::new());
        let release = Arc::new(Notify::new());
        *driver.gate.lock().unwrap() = Some((entered.clone(), release.clone()));
        driver.answer(Ok(StatusReport {
            status: change(ClusterStatus::UpdateComplete, None),
            ..StatusReport::default()
        }));
        let sync = tokio::spawn({
            let c = c.clone();
            async move { c.sync_cluster_status().await }
        });
        entered.notified().await;
        *driver.gate.lock().unwrap() = None;

        // The second resize arrives while the driver is being asked.
        let w = ng_named(db, &uuid, "default-worker").await;
        let second = tokio::spawn({
            let c = c.clone();
            let cluster = obj(db, &uuid).await;
            async move {
                c.cluster_resize(&ctx(), cluster, 5, vec![], Obj::unchanged(w))
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        release.notify_one();
        sync.await.unwrap();
        second.await.unwrap().expect("second resize");

        let row = cluster_row(db, &uuid).await;
        assert_eq!(
            status(&row),
            ClusterStatus::UpdateInProgress,
            "the second resize is still in progress"
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(w.node_count, Some(5));
        assert_eq!(w.status, Some(ClusterStatus::UpdateInProgress));

        // The next tick completes it.
        let r = c.sync_cluster_status().await;
        assert_eq!(
            r.changed, 0,
            "nothing scripted: the driver reports no change"
        );
        driver.answer(Ok(StatusReport {
            status: change(ClusterStatus::UpdateComplete, None),
            ..StatusReport::default()
        }));
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
    });
}

/// While an operation holds the cluster, the sync skips it instead of waiting.
#[tokio::test]
async fn a_busy_cluster_is_skipped_for_one_tick() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        *driver.hang_on_create.lock().unwrap() = true;
        // A create whose driver call is in flight holds the cluster (it is bounded by the
        // 10 s driver timeout; the task is dropped at the end of the test).
        let obj = new_cluster(&t, "busy", &[]);
        let uuid = obj.data.uuid.clone().unwrap();
        let create = tokio::spawn({
            let c = c.clone();
            async move { c.cluster_create(&ctx(), obj, 1, 1, 60).await }
        });
        for _ in 0..200 {
            if get(db, &uuid).await.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let r = c.sync_cluster_status().await;
        assert_eq!((r.checked, r.busy, r.changed), (1, 1, 0), "{r:?}");
        create.abort();
    });
}

/// Two conductors (two connection pools on one MariaDB database, as two processes are):
/// two MariaDB connections to the database of `guard`.
async fn two_pools(
    guard: &openkeel_tests::MysqlDatabase,
) -> (openkeel_db::Database, openkeel_db::Database) {
    let a = openkeel_db::Database::connect(guard.url()).await.unwrap();
    openkeel_db::manage::upgrade(&a).await.unwrap();
    let b = openkeel_db::Database::connect(guard.url()).await.unwrap();
    (a, b)
}

/// Resizes of one cluster sent to two conductors at once run one after the other: the
/// cluster's lock holds across processes (MariaDB's `GET_LOCK`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operations_on_one_cluster_never_overlap_across_conductors() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let (db_a, db_b) = two_pools(&guard).await;
    let driver = Arc::new(Scripted::default());
    let a = on_driver(&db_a, Duration::from_secs(10), &driver);
    let b = on_driver(&db_b, Duration::from_secs(10), &driver);
    let t = template(&db_a, "k8s", "v1.31.2", "ubuntu").await;
    let uuid = create(&a, &t, "shared", 2, &[]).await;
    driver.answer(Ok(StatusReport {
        status: change(ClusterStatus::CreateComplete, None),
        ..StatusReport::default()
    }));
    a.sync_cluster_status().await;
    *driver.resize_takes.lock().unwrap() = Duration::from_millis(300);

    let mut ops = Vec::new();
    for (i, c) in [&a, &b, &a, &b].into_iter().enumerate() {
        let c = c.clone();
        let cluster = obj(&db_a, &uuid).await;
        let w = ng_named(&db_a, &uuid, "default-worker").await;
        ops.push(tokio::spawn(async move {
            c.cluster_resize(&ctx(), cluster, 3 + i as i32, vec![], Obj::unchanged(w))
                .await
        }));
    }
    let started = Instant::now();
    for op in ops {
        op.await.unwrap().expect("resize");
    }
    assert_eq!(
        driver.most_resizing.load(Ordering::SeqCst),
        1,
        "two resizes of one cluster ran at once"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1200),
        "one after the other"
    );
}

/// The cross-process version of the test above: while conductor A's status sync waits for
/// the driver, conductor B runs a resize. A's answer is about the state before it, so A must
/// not write it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_status_sync_never_writes_over_another_conductors_operation() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let (db_a, db_b) = two_pools(&guard).await;
    let driver = Arc::new(Scripted::default());
    let a = on_driver(&db_a, Duration::from_secs(10), &driver);
    let b = on_driver(&db_b, Duration::from_secs(10), &driver);
    let t = template(&db_a, "k8s", "v1.31.2", "ubuntu").await;
    let uuid = create(&a, &t, "race", 2, &[]).await;
    driver.answer(Ok(StatusReport {
        status: change(ClusterStatus::CreateComplete, None),
        ..StatusReport::default()
    }));
    a.sync_cluster_status().await;
    let w = ng_named(&db_a, &uuid, "default-worker").await;
    a.cluster_resize(
        &ctx(),
        obj(&db_a, &uuid).await,
        3,
        vec![],
        Obj::unchanged(w),
    )
    .await
    .expect("first resize");

    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    *driver.gate.lock().unwrap() = Some((entered.clone(), release.clone()));
    driver.answer(Ok(StatusReport {
        status: change(ClusterStatus::UpdateComplete, None),
        ..StatusReport::default()
    }));
    let sync = tokio::spawn({
        let a = a.clone();
        async move { a.sync_cluster_status().await }
    });
    entered.notified().await;
    *driver.gate.lock().unwrap() = None;
    let w = ng_named(&db_a, &uuid, "default-worker").await;
    b.cluster_resize(
        &ctx(),
        obj(&db_b, &uuid).await,
        5,
        vec![],
        Obj::unchanged(w),
    )
    .await
    .expect("second resize, on the other conductor");
    release.notify_one();
    let r = sync.await.unwrap();
    assert_eq!((r.changed, r.busy), (0, 1), "{r:?}");

    let row = cluster_row(&db_a, &uuid).await;
    assert_eq!(
        status(&row),
        ClusterStatus::UpdateInProgress,
        "the second resize is still in progress"
    );
    let w = ng_named(&db_a, &uuid, "default-worker").await;
    assert_eq!(w.node_count, Some(5));
}

/// A credential rotation rewrites what the cluster's other operations write (the Cluster API
/// driver's credential Secrets): it waits for the operation in flight, as they do.
#[tokio::test]
async fn a_credential_rotation_waits_for_the_operation_in_flight() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        *driver.hang_on_create.lock().unwrap() = true;
        let obj = new_cluster(&t, "busy", &[]);
        let uuid = obj.data.uuid.clone().unwrap();
        let create = tokio::spawn({
            let c = c.clone();
            async move { c.cluster_create(&ctx(), obj, 1, 1, 60).await }
        });
        for _ in 0..200 {
            if get(db, &uuid).await.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut row = cluster_row(db, &uuid).await;
        row.status = Some(ClusterStatus::CreateComplete);
        let rotate = tokio::spawn({
            let c = c.clone();
            async move { c.credential_rotate(&ctx(), Obj::unchanged(row)).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(*driver.rotations.lock().unwrap(), 0, "waits for the create");
        create.abort();
        rotate.await.unwrap().unwrap();
        assert_eq!(*driver.rotations.lock().unwrap(), 1);
        let after = cluster_row(db, &uuid).await;
        assert_eq!(
            after.status,
            Some(ClusterStatus::CreateInProgress),
            "no status change"
        );
    });
}

#[tokio::test]
async fn an_upgrade_the_driver_refuses_leaves_no_state_change() {
    on_every_backend!(|db| {
        let (c, driver) = with_driver(db, Duration::from_secs(10));
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let next = template(db, "k8s-next", "v1.32.1", "ubuntu").await;
        let uuid = create(&c, &t, "refused", 2, &[]).await;
        driver.answer(Ok(StatusReport {
            status: change(
                ClusterStatus::CreateComplete,
                Some("Stack CREATE completed successfully"),
            ),
            ..StatusReport::unchanged()
        }));
        c.sync_cluster_status().await;
        let before = cluster_row(db, &uuid).await;
        assert_eq!(status(&before), ClusterStatus::CreateComplete);
        let worker = ng_named(db, &uuid, "default-worker").await;

        // The statuses are saved UPDATE_IN_PROGRESS before the driver call; a refusal puts
        // back what was there.
        *driver.refuse_upgrade.lock().unwrap() = true;
        let e = c
            .handle_cluster_upgrade(
                &ctx(),
                Obj::unchanged(before.clone()),
                Obj::unchanged(next.clone()),
                1,
                Obj::unchanged(worker.clone()),
                false,
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), openkeel_core::error::ErrorKind::NotSupported);
        let after = cluster_row(db, &uuid).await;
        assert_eq!(status(&after), ClusterStatus::CreateComplete);
        assert_eq!(after.status_reason, before.status_reason);
        assert_eq!(after.cluster_template_id, before.cluster_template_id);
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(w.status, worker.status);
        assert_eq!(w.status_reason, worker.status_reason);
        // The operation is not counted as running: the next sync does not time it out.
        let r = c.sync_cluster_status().await;
        assert_eq!(r.checked, 0, "{r:?}");
    });
}
