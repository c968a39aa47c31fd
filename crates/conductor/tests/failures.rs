//! Failure paths on SQLite and MariaDB: operations the simulator fails on the status tick
//! (`simulator_fail_on`), driver calls that fail at once (`simulator_raise_on`, the
//! conductor's own error handling), status preconditions, driver selection errors and
//! OpenKeel's operation timeouts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use openkeel_conductor::{Action, ConductorSettings, Outcome};
use openkeel_core::error::ErrorKind;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_db::cluster;
use openkeel_rpc::Obj;

fn reason(c: &Cluster) -> String {
    c.status_reason.clone().unwrap_or_default()
}

fn extra_ng(cl: &Cluster, name: &str) -> Obj<NodeGroup> {
    Obj::new(
        NodeGroup {
            uuid: uuid::Uuid::new_v4().to_string(),
            name: name.into(),
            cluster_id: cl.uuid.clone().unwrap(),
            project_id: PROJECT.into(),
            labels: cl.labels.clone(),
            node_count: Some(1),
            role: Some("worker".into()),
            ..NodeGroup::default()
        },
        [
            "uuid",
            "name",
            "cluster_id",
            "project_id",
            "labels",
            "node_count",
            "role",
        ],
    )
}

#[tokio::test]
async fn fail_on_create_ends_in_create_failed() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "doomed", 2, &[("simulator_fail_on", "create")]).await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateInProgress
        );
        rec.take();
        c.sync_cluster_status().await;
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        assert!(
            reason(&row).contains("simulator_fail_on"),
            "{}",
            reason(&row)
        );
        assert!(ngs(db, &uuid)
            .await
            .iter()
            .all(|n| n.status == Some(ClusterStatus::CreateFailed) && n.status_reason.is_some()));
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Failure)]);
        // A failed cluster can still be deleted.
        c.handle_cluster_delete(&ctx(), &uuid).await.unwrap();
        c.sync_cluster_status().await;
        assert!(get(db, &uuid).await.is_none());
    });
}

#[tokio::test]
async fn fail_on_every_other_operation() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let t2 = template(db, "k8s-next", "v1.32.0", "ubuntu").await;

        // update
        let u = ready(&c, db, &t, "u", &[("simulator_fail_on", "update")]).await;
        c.handle_cluster_update(
            &ctx(),
            obj(db, &u).await,
            4,
            None,
            cluster_row(db, &u).await.health_status_reason,
            false,
        )
        .await
        .unwrap();
        c.sync_cluster_status().await;
        let row = cluster_row(db, &u).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateFailed));
        assert!(reason(&row).contains("update"));

        // resize: cluster and nodegroup fail
        let r = ready(&c, db, &t, "r", &[("simulator_fail_on", "resize")]).await;
        let w = ng_named(db, &r, "default-worker").await;
        c.handle_cluster_resize(&ctx(), obj(db, &r).await, 3, vec![], Obj::unchanged(w))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &r).await),
            ClusterStatus::UpdateFailed
        );
        assert_eq!(
            ng_named(db, &r, "default-worker").await.status,
            Some(ClusterStatus::UpdateFailed)
        );
        // After UPDATE_FAILED a resize is allowed again (RESIZABLE).
        let w = ng_named(db, &r, "default-worker").await;
        assert!(c
            .handle_cluster_resize(&ctx(), obj(db, &r).await, 2, vec![], Obj::unchanged(w))
            .await
            .is_ok());

        // upgrade
        let g = ready(&c, db, &t, "g", &[("simulator_fail_on", "upgrade")]).await;
        let w = ng_named(db, &g, "default-worker").await;
        c.handle_cluster_upgrade(
            &ctx(),
            obj(db, &g).await,
            Obj::unchanged(t2.clone()),
            1,
            Obj::unchanged(w),
            false,
        )
        .await
        .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &g).await),
            ClusterStatus::UpdateFailed
        );
        assert_eq!(
            ng_named(db, &g, "default-worker").await.status,
            Some(ClusterStatus::UpdateFailed)
        );

        // nodegroup_create / nodegroup_update / nodegroup_delete
        let n = ready(
            &c,
            db,
            &t,
            "n",
            &[(
                "simulator_fail_on",
                "nodegroup_create,nodegroup_update,nodegroup_delete",
            )],
        )
        .await;
        let cl = cluster_row(db, &n).await;
        c.handle_nodegroup_create(&ctx(), Obj::unchanged(cl.clone()), extra_ng(&cl, "x"))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &n).await),
            ClusterStatus::UpdateFailed
        );
        assert_eq!(
            ng_named(db, &n, "x").await.status,
            Some(ClusterStatus::CreateFailed)
        );

        let w = ng_named(db, &n, "default-worker").await;
        c.handle_nodegroup_update(&ctx(), obj(db, &n).await, Obj::unchanged(w))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            ng_named(db, &n, "default-worker").await.status,
            Some(ClusterStatus::UpdateFailed)
        );
        assert_eq!(
            status(&cluster_row(db, &n).await),
            ClusterStatus::UpdateFailed
        );

        let x = ng_named(db, &n, "x").await;
        c.handle_nodegroup_delete(&ctx(), obj(db, &n).await, Obj::unchanged(x))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        let x = ng_named(db, &n, "x").await;
        assert_eq!(x.status, Some(ClusterStatus::DeleteFailed));
        assert!(x
            .status_reason
            .unwrap_or_default()
            .contains("nodegroup_delete"));

        // delete
        let d = ready(&c, db, &t, "d", &[("simulator_fail_on", "delete")]).await;
        c.handle_cluster_delete(&ctx(), &d).await.unwrap();
        rec.take();
        c.sync_cluster_status().await;
        let row = cluster_row(db, &d).await;
        assert_eq!(row.status, Some(ClusterStatus::DeleteFailed));
        assert_eq!(ngs(db, &d).await.len(), 2);
        assert_eq!(rec.take(), vec![(Action::Delete, Outcome::Failure)]);
    });
}

#[tokio::test]
async fn driver_errors_take_the_conductors_failure_paths() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;

        // create: CREATE_FAILED at once, error returned, nodegroups stay CREATE_IN_PROGRESS.
        let obj_c = new_cluster(&t, "bad-create", &[("simulator_raise_on", "create")]);
        let uuid = obj_c.data.uuid.clone().unwrap();
        let e = c
            .handle_cluster_create(&ctx(), obj_c, 1, 1, 60)
            .await
            .unwrap_err();
        assert!(e.message().contains("create_cluster refused"));
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        assert_eq!(reason(&row), e.message());
        assert_eq!(ngs(db, &uuid).await.len(), 2);
        assert_eq!(
            rec.take(),
            vec![
                (Action::Create, Outcome::Pending),
                (Action::Create, Outcome::Failure)
            ]
        );

        // update: UPDATE_FAILED, the worker's node_count restored.
        let u = ready(&c, db, &t, "u", &[("simulator_raise_on", "update")]).await;
        rec.take();
        let e = c
            .handle_cluster_update(
                &ctx(),
                obj(db, &u).await,
                5,
                None,
                cluster_row(db, &u).await.health_status_reason,
                false,
            )
            .await
            .unwrap_err();
        let row = cluster_row(db, &u).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateFailed));
        assert_eq!(reason(&row), e.message());
        assert_eq!(ng_named(db, &u, "default-worker").await.node_count, Some(2));
        assert_eq!(
            rec.take(),
            vec![
                (Action::Update, Outcome::Pending),
                (Action::Update, Outcome::Failure)
            ]
        );

        // resize: both UPDATE_FAILED, node_count restored.
        let r = ready(&c, db, &t, "r", &[("simulator_raise_on", "resize")]).await;
        let w = ng_named(db, &r, "default-worker").await;
        c.handle_cluster_resize(&ctx(), obj(db, &r).await, 7, vec![], Obj::unchanged(w))
            .await
            .unwrap_err();
        assert_eq!(
            status(&cluster_row(db, &r).await),
            ClusterStatus::UpdateFailed
        );
        let w = ng_named(db, &r, "default-worker").await;
        assert_eq!(
            (w.node_count, w.status),
            (Some(2), Some(ClusterStatus::UpdateFailed))
        );
        assert!(w
            .status_reason
            .unwrap_or_default()
            .contains("resize_cluster refused"));

        // upgrade: both UPDATE_FAILED, template unchanged.
        let t2 = template(db, "k8s-next", "v1.32.0", "ubuntu").await;
        let g = ready(&c, db, &t, "g", &[("simulator_raise_on", "upgrade")]).await;
        let w = ng_named(db, &g, "default-worker").await;
        c.handle_cluster_upgrade(
            &ctx(),
            obj(db, &g).await,
            Obj::unchanged(t2),
            1,
            Obj::unchanged(w),
            false,
        )
        .await
        .unwrap_err();
        let row = cluster_row(db, &g).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateFailed));
        assert_eq!(row.cluster_template_id, t.uuid);
        assert_eq!(
            ng_named(db, &g, "default-worker").await.status,
            Some(ClusterStatus::UpdateFailed)
        );

        // delete: DELETE_FAILED, rows kept.
        let d = ready(&c, db, &t, "d", &[("simulator_raise_on", "delete")]).await;
        c.handle_cluster_delete(&ctx(), &d).await.unwrap_err();
        assert_eq!(
            status(&cluster_row(db, &d).await),
            ClusterStatus::DeleteFailed
        );

        // nodegroups: NG *_FAILED with reason, cluster UPDATE_FAILED.
        let n = ready(
            &c,
            db,
            &t,
            "n",
            &[("simulator_raise_on", "nodegroup_create,nodegroup_delete")],
        )
        .await;
        let cl = cluster_row(db, &n).await;
        c.handle_nodegroup_create(&ctx(), Obj::unchanged(cl.clone()), extra_ng(&cl, "x"))
            .await
            .unwrap_err();
        let x = ng_named(db, &n, "x").await;
        assert_eq!(x.status, Some(ClusterStatus::CreateFailed));
        assert!(x
            .status_reason
            .clone()
            .unwrap_or_default()
            .contains("create_nodegroup refused"));
        let row = cluster_row(db, &n).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateFailed));
        assert_eq!(
            row.status_reason, None,
            "the cluster's status_reason is left untouched"
        );
        c.handle_nodegroup_delete(&ctx(), obj(db, &n).await, Obj::unchanged(x))
            .await
            .unwrap_err();
        assert_eq!(
            ng_named(db, &n, "x").await.status,
            Some(ClusterStatus::DeleteFailed)
        );
    });
}

#[tokio::test]
async fn status_preconditions() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "busy", 1, &[]).await;
        rec.take();
        let msg = |e: openkeel_core::error::MagnumError| (e.kind(), e.message().to_string());

        let e = c
            .handle_cluster_update(&ctx(), obj(db, &uuid).await, 3, None, None, false)
            .await
            .unwrap_err();
        assert_eq!(
            msg(e),
            (
                ErrorKind::NotSupported,
                "Updating a cluster when status is \"CREATE_IN_PROGRESS\" is not supported.".into()
            )
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        let e = c
            .handle_cluster_resize(
                &ctx(),
                obj(db, &uuid).await,
                3,
                vec![],
                Obj::unchanged(w.clone()),
            )
            .await
            .unwrap_err();
        assert_eq!(
            msg(e).1,
            "Resizing a cluster when status is \"CREATE_IN_PROGRESS\" is not supported."
        );
        let e = c
            .handle_cluster_upgrade(
                &ctx(),
                obj(db, &uuid).await,
                Obj::unchanged(t.clone()),
                1,
                Obj::unchanged(w.clone()),
                false,
            )
            .await
            .unwrap_err();
        assert_eq!(
            msg(e).1,
            "Upgrading a cluster when status is \"CREATE_IN_PROGRESS\" is not supported."
        );
        assert_eq!(e_code(&c, db, &uuid).await, 400);
        assert_eq!(
            rec.take(),
            vec![
                (Action::Update, Outcome::Failure),
                (Action::Update, Outcome::Failure),
                (Action::Update, Outcome::Failure),
                (Action::Update, Outcome::Failure),
            ]
        );
        // A nodegroup still CREATE_IN_PROGRESS cannot be updated; the message shows the
        // cluster's status (Magnum quirk).
        let mut cl = obj(db, &uuid).await;
        cl.data.status = Some(ClusterStatus::UpdateComplete);
        let e = c
            .handle_nodegroup_update(&ctx(), cl, Obj::unchanged(w))
            .await
            .unwrap_err();
        assert_eq!(
            msg(e).1,
            "nodegroup_update when nodegroup status is \"UPDATE_COMPLETE\" is not supported."
        );
        // Nothing was written by the refused operations.
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateInProgress));
        assert_eq!(
            ng_named(db, &uuid, "default-worker").await.node_count,
            Some(1)
        );
        // The checks use the status carried by the object, not the row.
        c.sync_cluster_status().await;
        let mut stale = obj(db, &uuid).await;
        stale.data.status = Some(ClusterStatus::CreateInProgress);
        assert!(c
            .handle_cluster_update(&ctx(), stale, 3, None, None, false)
            .await
            .is_err());
        // Delete has no precondition.
        let other = create(&c, &t, "busy2", 1, &[]).await;
        c.handle_cluster_delete(&ctx(), &other).await.unwrap();
        assert_eq!(
            status(&cluster_row(db, &other).await),
            ClusterStatus::DeleteInProgress
        );
    });
}

async fn e_code(c: &openkeel_conductor::Conductor, db: &openkeel_db::Database, uuid: &str) -> u16 {
    c.handle_cluster_update(&ctx(), obj(db, uuid).await, 9, None, None, false)
        .await
        .unwrap_err()
        .code()
}

#[tokio::test]
async fn unsupported_cluster_types_fail_the_create() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "bm", "v1.31.2", "ubuntu").await;
        let mut bm = t.clone();
        bm.server_type = Some("bm".into());
        openkeel_db::cluster_template::update(
            db,
            t.uuid.as_deref().unwrap(),
            &bm,
            &["server_type"],
        )
        .await
        .unwrap();
        let obj_c = new_cluster(&bm, "baremetal", &[]);
        let uuid = obj_c.data.uuid.clone().unwrap();
        let e = c
            .handle_cluster_create(&ctx(), obj_c, 1, 1, 60)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ClusterTypeNotSupported);
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        assert_eq!(
            reason(&row),
            "Cluster type (bm, ubuntu, kubernetes) is not supported by any loaded cluster driver. \
             Loaded drivers support: (vm, debian, kubernetes), (vm, flatcar, kubernetes), \
             (vm, rockylinux, kubernetes), (vm, ubuntu, kubernetes), (vm, ubuntu-focal, kubernetes)."
        );

        // A template naming an unknown driver.
        let tn = template(db, "named", "v1.31.2", "ubuntu").await;
        let mut named = tn.clone();
        named.driver = Some("k8s_nope".into());
        openkeel_db::cluster_template::update(db, tn.uuid.as_deref().unwrap(), &named, &["driver"])
            .await
            .unwrap();
        let obj_c = new_cluster(&named, "named", &[]);
        let uuid = obj_c.data.uuid.clone().unwrap();
        c.handle_cluster_create(&ctx(), obj_c, 1, 1, 60)
            .await
            .unwrap_err();
        assert_eq!(
            reason(&cluster_row(db, &uuid).await),
            "Cluster driver (k8s_nope) not supported."
        );

        // The simulator is off unless enabled: no driver is loaded.
        let (off, _) = conductor_with(db, settings(), false);
        let t3 = template(db, "plain", "v1.31.2", "ubuntu").await;
        let obj_c = new_cluster(&t3, "nodriver", &[]);
        let uuid = obj_c.data.uuid.clone().unwrap();
        off.handle_cluster_create(&ctx(), obj_c, 1, 1, 60)
            .await
            .unwrap_err();
        assert!(reason(&cluster_row(db, &uuid).await)
            .ends_with("Loaded drivers support: none (no cluster drivers are loaded)."));
    });
}

#[tokio::test]
async fn a_duplicate_uuid_leaves_the_existing_cluster_as_it_is() {
    // Magnum's conductor raises ClusterAlreadyExists into the log (the create is a cast);
    // OpenKeel's takes the second create of one uuid for its cast handed out again
    // (lifecycle.rs, creates_handed_out_twice_are_carried_on_not_repeated) and leaves the
    // stored cluster alone either way.
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let first = new_cluster(&t, "one", &[]);
        let again = first.clone();
        let uuid = first.data.uuid.clone().unwrap();
        c.handle_cluster_create(&ctx(), first, 1, 1, 60)
            .await
            .unwrap();
        let second = c
            .handle_cluster_create(&ctx(), again, 1, 1, 60)
            .await
            .unwrap();
        assert_eq!(second.uuid.as_deref(), Some(uuid.as_str()));
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateInProgress
        );
        assert_eq!(ngs(db, &uuid).await.len(), 2);
    });
}

#[tokio::test]
async fn create_that_never_finishes_times_out_to_create_failed() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "stuck", 1, &[("simulator_ticks", "100000")]).await;
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateInProgress
        );
        // Pretend it was created 2 hours ago; create_timeout is 60 minutes.
        let mut old = cluster_row(db, &uuid).await;
        old.created_at = old.created_at.map(|t| t - chrono::Duration::hours(2));
        cluster::update(db, &uuid, &old, &["created_at"])
            .await
            .unwrap();
        rec.take();
        let report = c.sync_cluster_status().await;
        assert_eq!(report.timed_out, 1);
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        let r = reason(&row);
        assert!(
            r.starts_with(
                "Timed out: the operation did not finish within 60 minutes (create_timeout)"
            ),
            "{r}"
        );
        assert!(ngs(db, &uuid)
            .await
            .iter()
            .all(|n| n.status == Some(ClusterStatus::CreateFailed)));
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Failure)]);
    });
}

#[tokio::test]
async fn operation_that_never_finishes_times_out_to_failed() {
    on_every_backend!(|db| {
        let settings = ConductorSettings {
            operation_timeout: Duration::from_secs(1),
            ..settings()
        };
        let (c, rec) = conductor_with(db, settings, true);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "stuck", &[]).await;
        // From now on every operation on this cluster needs many ticks.
        let mut cl = cluster_row(db, &uuid).await;
        cl.labels
            .get_or_insert_with(Default::default)
            .insert("simulator_ticks".into(), "100000".into());
        cluster::update(db, &uuid, &cl, &["labels"]).await.unwrap();

        let w = ng_named(db, &uuid, "default-worker").await;
        c.handle_cluster_resize(&ctx(), obj(db, &uuid).await, 3, vec![], Obj::unchanged(w))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );
        tokio::time::sleep(Duration::from_millis(2200)).await;
        rec.take();
        assert_eq!(c.sync_cluster_status().await.timed_out, 1);
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateFailed));
        assert!(
            reason(&row).contains("UPDATE_IN_PROGRESS since"),
            "{}",
            reason(&row)
        );
        assert_eq!(
            ng_named(db, &uuid, "default-worker").await.status,
            Some(ClusterStatus::UpdateFailed)
        );
        assert_eq!(rec.take(), vec![(Action::Update, Outcome::Failure)]);

        // Delete stuck too → DELETE_FAILED, the rows stay.
        c.handle_cluster_delete(&ctx(), &uuid).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2200)).await;
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::DeleteFailed
        );
    });
}

#[tokio::test]
async fn a_cluster_without_a_driver_still_times_out() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "orphan", 1, &[]).await;
        // The conductor restarts without the simulator: no driver can finish the create.
        let (off, _) = conductor_with(db, settings(), false);
        let report = off.sync_cluster_status().await;
        assert_eq!((report.checked, report.changed, report.errors), (1, 0, 0));
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateInProgress
        );
        let mut old = cluster_row(db, &uuid).await;
        old.created_at = old.created_at.map(|t| t - chrono::Duration::hours(2));
        cluster::update(db, &uuid, &old, &["created_at"])
            .await
            .unwrap();
        assert_eq!(off.sync_cluster_status().await.timed_out, 1);
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateFailed
        );
    });
}

/// A create whose template was deleted while the cast was on its way (the HTTP fuzzer's
/// stuck cluster, issue 16): the cluster the API answered 202 for is `CREATE_FAILED` with
/// the reason and no nodegroups, the failure is notified, and it can be deleted without a
/// driver. Magnum leaves it `CREATE_IN_PROGRESS`, and its delete raises
/// `ClusterTemplateNotFound` for ever.
#[tokio::test]
async fn a_create_whose_template_is_gone_fails_and_can_be_deleted() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "gone", "v1.31.2", "ubuntu").await;
        let tid = t.uuid.clone().unwrap();
        let obj_c = new_cluster(&t, "late", &[]);
        let uuid = obj_c.data.uuid.clone().unwrap();
        openkeel_db::cluster_template::destroy(db, &tid)
            .await
            .unwrap();
        let e = c
            .handle_cluster_create(&ctx(), obj_c, 1, 1, 60)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ClusterTemplateNotFound);
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        assert_eq!(
            reason(&row),
            format!("ClusterTemplate {tid} could not be found.")
        );
        assert!(ngs(db, &uuid).await.is_empty());
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Failure)]);
        // Nothing in progress: the status sync has nothing to do.
        assert_eq!(c.sync_cluster_status().await.checked, 0);

        c.handle_cluster_delete(&ctx(), &uuid).await.unwrap();
        assert!(get(db, &uuid).await.is_none());
        assert_eq!(
            rec.take(),
            vec![
                (Action::Delete, Outcome::Pending),
                (Action::Delete, Outcome::Success)
            ]
        );

        // A cluster Magnum left behind the same way (in progress, no stack, no template) is
        // deleted too; one that reached its driver (a stack id) still needs its template.
        let mut gone = t.clone();
        gone.uuid = Some(uuid::Uuid::new_v4().to_string());
        let mut stuck = new_cluster(&gone, "stuck", &[]).data;
        stuck.status = Some(ClusterStatus::CreateInProgress);
        let mut reached = new_cluster(&gone, "reached", &[]).data;
        reached.stack_id = Some("kube-abc".into());
        cluster::create(db, &stuck).await.unwrap();
        cluster::create(db, &reached).await.unwrap();
        let (stuck, reached) = (stuck.uuid.unwrap(), reached.uuid.unwrap());
        c.handle_cluster_delete(&ctx(), &stuck).await.unwrap();
        assert!(get(db, &stuck).await.is_none());
        let e = c.handle_cluster_delete(&ctx(), &reached).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ClusterTemplateNotFound);
        assert!(get(db, &reached).await.is_some());
    });
}

/// A create whose conductor was killed after the cluster's rows were written and before the
/// driver was called (no stack id, and no operation holds the cluster's lock): the status
/// sync fails it once it is older than twice the driver-call bound, instead of leaving it
/// `CREATE_IN_PROGRESS` for its whole create_timeout (the conductor SIGKILL drill found
/// such clusters still in progress). A create running now (its lock held) and one whose
/// driver was called (a stack id) are left alone.
#[tokio::test]
async fn a_create_interrupted_before_its_driver_fails_at_the_next_tick() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let old = |name: &str, stack: Option<&str>| {
            let mut cl = new_cluster(&t, name, &[]).data;
            cl.status = Some(ClusterStatus::CreateInProgress);
            cl.stack_id = stack.map(str::to_string);
            cl.created_at = Some(chrono::Utc::now().naive_utc() - chrono::Duration::minutes(10));
            cl
        };
        let interrupted = old("interrupted", None);
        let reached = old("reached", Some("kube-reach"));
        let mut fresh = old("fresh", None);
        fresh.created_at = Some(chrono::Utc::now().naive_utc());
        for cl in [&interrupted, &reached, &fresh] {
            cluster::create(db, cl).await.unwrap();
        }
        let mut ng = NodeGroup {
            name: "default-worker".into(),
            cluster_id: interrupted.uuid.clone().unwrap(),
            project_id: PROJECT.into(),
            role: Some("worker".into()),
            node_count: Some(1),
            is_default: Some(true),
            status: Some(ClusterStatus::CreateInProgress),
            ..NodeGroup::default()
        };
        ng.uuid = uuid::Uuid::new_v4().to_string();
        openkeel_db::nodegroup::create(db, &ng).await.unwrap();
        rec.take();

        let report = c.sync_cluster_status().await;
        assert_eq!(report.timed_out, 1, "{report:?}");
        let row = cluster_row(db, interrupted.uuid.as_deref().unwrap()).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateFailed));
        assert_eq!(
            reason(&row),
            openkeel_conductor::periodic::INTERRUPTED_CREATE
        );
        assert_eq!(
            ngs(db, interrupted.uuid.as_deref().unwrap()).await[0].status,
            Some(ClusterStatus::CreateFailed)
        );
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Failure)]);
        for cl in [&reached, &fresh] {
            assert_eq!(
                status(&cluster_row(db, cl.uuid.as_deref().unwrap()).await),
                ClusterStatus::CreateInProgress,
                "{:?}",
                cl.name
            );
        }
    });
}

/// A TCP proxy to `target` standing for a database server that goes away: while its flag is
/// set, every new connection is dropped at once, and setting it ([`cut`]) also breaks the
/// connections already open, as a server restart does.
struct Proxy {
    addr: std::net::SocketAddr,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Proxy {
    async fn start(target: std::net::SocketAddr) -> Proxy {
        use std::sync::atomic::Ordering::SeqCst;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (flag, conns) = (down.clone(), open.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if flag.load(SeqCst) {
                    drop(inbound);
                    continue;
                }
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                conns.lock().unwrap().push(task.abort_handle());
            }
        });
        Proxy { addr, down, open }
    }

    /// The server goes away: open connections broken, new ones refused.
    fn cut(&self) {
        self.down.store(true, std::sync::atomic::Ordering::SeqCst);
        for c in self.open.lock().unwrap().drain(..) {
            c.abort();
        }
    }

    fn restore(&self) {
        self.down.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// An operation that arrives while MariaDB cannot be reached (restarting, failing over)
/// waits for it instead of being dropped: the MariaDB drill lost an update answered 202 that
/// way (the cluster's lock, taken on a connection of its own, failed at once). Nothing of the
/// operation has run before its lock is held, so asking again is safe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_waits_for_an_unreachable_database_instead_of_being_dropped() {
    use openkeel_rpc::ConductorApi;
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let direct = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&direct).await.unwrap();
    // mysql://user:pass@host:port/db → the same through the proxy
    let (head, rest) = mdb.url().rsplit_once('@').unwrap();
    let (hostport, path) = rest.split_once('/').unwrap();
    let target = tokio::net::lookup_host(hostport)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = Proxy::start(target).await;
    let db = openkeel_db::Database::connect(&format!("{head}@{}/{path}", proxy.addr))
        .await
        .unwrap();
    let (c, _rec) = conductor(&db);
    let t = template(&db, "k8s", "v1.31.2", "ubuntu").await;
    let uuid = ready(&c, &db, &t, "alpha", &[]).await;
    let cluster = obj(&db, &uuid).await;

    proxy.cut();
    let c2 = c.clone();
    let update = tokio::spawn(async move {
        c2.cluster_update(&ctx(), cluster, 3, None, None, false)
            .await
    });
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    if update.is_finished() {
        panic!(
            "the update gave up while the database was unreachable: {:?}",
            update.await
        );
    }
    proxy.restore();
    tokio::time::timeout(std::time::Duration::from_secs(30), update)
        .await
        .expect("the update went on once the database was back")
        .unwrap()
        .unwrap();
    let row = cluster_row(&direct, &uuid).await;
    assert_eq!(row.status, Some(ClusterStatus::UpdateInProgress));
    assert_eq!(
        ng_named(&direct, &uuid, "default-worker").await.node_count,
        Some(3)
    );
}
