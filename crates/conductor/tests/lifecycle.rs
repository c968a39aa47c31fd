//! The cluster lifecycle through the conductor's handlers and the status sync, with the
//! simulator driver, on SQLite and MariaDB: create, update, resize, upgrade, nodegroup
//! create/update/delete, delete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use openkeel_conductor::{Action, Outcome};
use openkeel_core::objects::{ClusterHealthStatus, ClusterStatus, NodeGroup};
use openkeel_rpc::Obj;

#[tokio::test]
async fn create_then_tick_completes_with_addresses() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "alpha", 2, &[]).await;

        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateInProgress));
        assert_eq!(row.status_reason, None);
        let stack = row.stack_id.clone().expect("stack id set by the driver");
        assert!(stack.starts_with("kube-"));
        // Certificates are another issue: the refs stay NULL.
        assert_eq!(row.ca_cert_ref, None);
        assert_eq!(row.magnum_cert_ref, None);
        assert_eq!(row.api_address, None);

        let groups = ngs(db, &uuid).await;
        assert_eq!(groups.len(), 2);
        let (m, w) = (&groups[0], &groups[1]);
        assert_eq!(
            (m.name.as_str(), m.role.as_deref(), m.node_count),
            ("default-master", Some("master"), Some(1))
        );
        assert_eq!(
            (w.name.as_str(), w.role.as_deref(), w.node_count),
            ("default-worker", Some("worker"), Some(2))
        );
        for g in &groups {
            assert_eq!(g.status, Some(ClusterStatus::CreateInProgress));
            assert_eq!(g.is_default, Some(true));
            assert_eq!(g.stack_id.as_deref(), Some(stack.as_str()));
            assert_eq!(g.image_id.as_deref(), Some("image-k8s"));
            assert_eq!(g.project_id, PROJECT);
            assert_eq!(g.labels, row.labels);
        }
        assert_eq!(m.flavor_id.as_deref(), Some("m1.medium"));
        assert_eq!(w.flavor_id.as_deref(), Some("m1.small"));
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Pending)]);

        let report = c.sync_cluster_status().await;
        assert_eq!((report.checked, report.changed), (1, 1));
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::CreateComplete));
        assert_eq!(row.status_reason, None);
        assert_eq!(row.coe_version.as_deref(), Some("v1.31.2"));
        let api = row.api_address.clone().unwrap();
        assert!(
            api.starts_with("https://") && api.ends_with(":6443"),
            "{api}"
        );
        let groups = ngs(db, &uuid).await;
        assert_eq!(groups[0].node_addresses.as_ref().map(Vec::len), Some(1));
        assert_eq!(groups[1].node_addresses.as_ref().map(Vec::len), Some(2));
        assert!(groups
            .iter()
            .all(|g| g.status == Some(ClusterStatus::CreateComplete)));
        assert_eq!(rec.take(), vec![(Action::Create, Outcome::Success)]);

        // Nothing in progress any more: the next round does nothing.
        let report = c.sync_cluster_status().await;
        assert_eq!(report.checked, 0);
    });
}

#[tokio::test]
async fn update_node_count_and_health() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "alpha", &[]).await;
        rec.take();

        // Same node count, same health: nothing written.
        let before = cluster_row(db, &uuid).await;
        let r = c
            .handle_cluster_update(
                &ctx(),
                obj(db, &uuid).await,
                2,
                None,
                before.health_status_reason.clone(),
                false,
            )
            .await
            .unwrap();
        assert!(r.is_none());
        assert_eq!(cluster_row(db, &uuid).await, before);

        // Health only: saved, no driver call, no notification, status unchanged.
        let mut reason = labels(&[("api", "ok")]);
        reason.insert("node-0.Ready".into(), "True".into());
        c.handle_cluster_update(
            &ctx(),
            obj(db, &uuid).await,
            2,
            Some("HEALTHY".into()),
            Some(reason.clone()),
            false,
        )
        .await
        .unwrap()
        .unwrap();
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.health_status, Some(ClusterHealthStatus::Healthy));
        assert_eq!(row.health_status_reason, Some(reason.clone()));
        assert_eq!(row.status, Some(ClusterStatus::CreateComplete));
        assert!(rec.take().is_empty());

        // Node count: default worker resized, cluster UPDATE_IN_PROGRESS, then complete.
        c.handle_cluster_update(
            &ctx(),
            obj(db, &uuid).await,
            3,
            Some("HEALTHY".into()),
            Some(reason),
            false,
        )
        .await
        .unwrap();
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateInProgress));
        assert_eq!(
            ng_named(db, &uuid, "default-worker").await.node_count,
            Some(3)
        );
        assert_eq!(
            ng_named(db, &uuid, "default-master").await.node_count,
            Some(1)
        );
        assert_eq!(rec.take(), vec![(Action::Update, Outcome::Pending)]);
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(w.node_addresses.as_ref().map(Vec::len), Some(3));
        assert_eq!(rec.take(), vec![(Action::Update, Outcome::Success)]);
    });
}

#[tokio::test]
async fn resize_a_nodegroup() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "alpha", &[]).await;
        rec.take();
        let worker = ng_named(db, &uuid, "default-worker").await;
        c.handle_cluster_resize(
            &ctx(),
            obj(db, &uuid).await,
            5,
            vec![],
            Obj::unchanged(worker),
        )
        .await
        .unwrap();
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(
            (w.node_count, w.status),
            (Some(5), Some(ClusterStatus::UpdateInProgress))
        );
        // Resizing again while UPDATE_IN_PROGRESS is allowed (RESIZABLE).
        c.handle_cluster_resize(&ctx(), obj(db, &uuid).await, 4, vec![], Obj::unchanged(w))
            .await
            .unwrap();
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(w.status, Some(ClusterStatus::UpdateComplete));
        assert_eq!(w.node_addresses.as_ref().map(Vec::len), Some(4));
        assert_eq!(
            rec.take(),
            vec![
                (Action::Update, Outcome::Pending),
                (Action::Update, Outcome::Pending),
                (Action::Update, Outcome::Success)
            ]
        );
    });
}

#[tokio::test]
async fn an_update_failed_cluster_can_be_upgraded_again() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t1 = template(db, "k8s-131", "v1.31.2", "ubuntu").await;
        let t2 = template(db, "k8s-132", "v1.32.0", "ubuntu").await;
        let uuid = ready(&c, db, &t1, "alpha", &[]).await;
        // an operation failed (e.g. an earlier upgrade the driver could not carry out)
        let mut failed = cluster_row(db, &uuid).await;
        failed.status = Some(ClusterStatus::UpdateFailed);
        openkeel_db::cluster::update(db, &uuid, &failed, &["status"])
            .await
            .unwrap();
        let worker = ng_named(db, &uuid, "default-worker").await;
        c.handle_cluster_upgrade(
            &ctx(),
            obj(db, &uuid).await,
            Obj::unchanged(t2.clone()),
            1,
            Obj::unchanged(worker),
            false,
        )
        .await
        .expect("Magnum refuses this; OpenKeel lets the operator try again");
        c.sync_cluster_status().await;
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateComplete));
        assert_eq!(row.cluster_template_id, t2.uuid);
    });
}

#[tokio::test]
async fn upgrade_moves_the_cluster_to_the_new_template() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t1 = template(db, "k8s-131", "v1.31.2", "ubuntu").await;
        let t2 = template(db, "k8s-132", "v1.32.0", "ubuntu").await;
        let uuid = ready(&c, db, &t1, "alpha", &[]).await;
        assert_eq!(
            cluster_row(db, &uuid).await.coe_version.as_deref(),
            Some("v1.31.2")
        );
        let worker = ng_named(db, &uuid, "default-worker").await;
        c.handle_cluster_upgrade(
            &ctx(),
            obj(db, &uuid).await,
            Obj::unchanged(t2.clone()),
            1,
            Obj::unchanged(worker),
            false,
        )
        .await
        .unwrap();
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateInProgress));
        assert_eq!(row.cluster_template_id, t2.uuid);
        assert_eq!(
            row.labels
                .as_ref()
                .and_then(|l| l.get("kube_tag"))
                .map(String::as_str),
            Some("v1.32.0")
        );
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(w.status, Some(ClusterStatus::UpdateInProgress));
        assert_eq!(w.image_id.as_deref(), Some("image-k8s-132"));
        c.sync_cluster_status().await;
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateComplete));
        assert_eq!(row.coe_version.as_deref(), Some("v1.32.0"));
        assert_eq!(
            ng_named(db, &uuid, "default-worker").await.status,
            Some(ClusterStatus::UpdateComplete)
        );
    });
}

fn new_nodegroup(
    cluster: &openkeel_core::objects::Cluster,
    name: &str,
    count: i32,
) -> Obj<NodeGroup> {
    Obj::new(
        NodeGroup {
            uuid: uuid::Uuid::new_v4().to_string(),
            name: name.into(),
            cluster_id: cluster.uuid.clone().unwrap(),
            project_id: PROJECT.into(),
            labels: cluster.labels.clone(),
            flavor_id: Some("m1.large".into()),
            image_id: Some("image-k8s".into()),
            node_count: Some(count),
            role: Some("worker".into()),
            min_node_count: Some(1),
            max_node_count: Some(10),
            ..NodeGroup::default()
        },
        [
            "uuid",
            "name",
            "cluster_id",
            "project_id",
            "labels",
            "flavor_id",
            "image_id",
            "node_count",
            "role",
            "min_node_count",
            "max_node_count",
        ],
    )
}

#[tokio::test]
async fn nodegroup_create_update_delete() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "alpha", &[]).await;
        rec.take();
        let cl = cluster_row(db, &uuid).await;

        let created = c
            .handle_nodegroup_create(
                &ctx(),
                Obj::unchanged(cl.clone()),
                new_nodegroup(&cl, "extra", 2),
            )
            .await
            .unwrap();
        assert_eq!(created.status, Some(ClusterStatus::CreateInProgress));
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );
        let ng = ng_named(db, &uuid, "extra").await;
        assert_eq!(
            (ng.is_default, ng.node_count, ng.status),
            (Some(false), Some(2), Some(ClusterStatus::CreateInProgress))
        );
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
        let ng = ng_named(db, &uuid, "extra").await;
        assert_eq!(ng.status, Some(ClusterStatus::CreateComplete));
        assert_eq!(ng.node_addresses.as_ref().map(Vec::len), Some(2));

        // Update: the API's patch (max_node_count) is written with the status.
        let mut patch = Obj::unchanged(ng.clone());
        patch.data.max_node_count = Some(7);
        patch.touch("max_node_count");
        c.handle_nodegroup_update(&ctx(), obj(db, &uuid).await, patch)
            .await
            .unwrap();
        let ng = ng_named(db, &uuid, "extra").await;
        assert_eq!(
            (ng.max_node_count, ng.status),
            (Some(7), Some(ClusterStatus::UpdateInProgress))
        );
        c.sync_cluster_status().await;
        assert_eq!(
            ng_named(db, &uuid, "extra").await.status,
            Some(ClusterStatus::UpdateComplete)
        );

        // Delete: DELETE_IN_PROGRESS (persisted by the driver), then the row goes.
        let ng = ng_named(db, &uuid, "extra").await;
        c.handle_nodegroup_delete(&ctx(), obj(db, &uuid).await, Obj::unchanged(ng))
            .await
            .unwrap();
        assert_eq!(
            ng_named(db, &uuid, "extra").await.status,
            Some(ClusterStatus::DeleteInProgress)
        );
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );
        c.sync_cluster_status().await;
        assert_eq!(ngs(db, &uuid).await.len(), 2);
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
        // Nodegroup operations send no notifications of their own; the sync notifies updates.
        assert!(rec
            .take()
            .iter()
            .all(|(a, o)| *a == Action::Update && *o == Outcome::Success));
    });
}

/// OpenKeel's ordered casts are acked once handled, so a cast whose conductor went away is
/// handed to another and can run twice: a create that already stored its rows is not done
/// again, and a nodegroup create left `CREATE_IN_PROGRESS` before its cluster was marked is
/// carried on.
#[tokio::test]
async fn creates_handed_out_twice_are_carried_on_not_repeated() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let obj = new_cluster(&t, "twice", &[]);
        let uuid = obj.data.uuid.clone().unwrap();
        c.handle_cluster_create(&ctx(), obj.clone(), 1, 1, 60)
            .await
            .expect("first create");
        let first = cluster_row(db, &uuid).await;
        rec.take();
        let again = c
            .handle_cluster_create(&ctx(), obj, 1, 1, 60)
            .await
            .expect("the second run is not an error");
        assert_eq!(again.uuid.as_deref(), Some(uuid.as_str()));
        assert_eq!(cluster_row(db, &uuid).await.stack_id, first.stack_id);
        assert_eq!(ngs(db, &uuid).await.len(), 2);
        assert!(rec.take().is_empty(), "no second create notification");
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateComplete
        );

        // A nodegroup create whose first run stored the row and went no further.
        let cl = cluster_row(db, &uuid).await;
        let ng = new_nodegroup(&cl, "half", 1);
        let mut row = ng.data.clone();
        row.status = Some(ClusterStatus::CreateInProgress);
        openkeel_db::nodegroup::create_in_cluster(db, &row)
            .await
            .unwrap();
        let created = c
            .handle_nodegroup_create(&ctx(), Obj::unchanged(cl.clone()), ng.clone())
            .await
            .expect("carried on");
        assert_eq!(created.status, Some(ClusterStatus::CreateInProgress));
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateInProgress
        );
        c.sync_cluster_status().await;
        assert_eq!(
            ng_named(db, &uuid, "half").await.status,
            Some(ClusterStatus::CreateComplete)
        );
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
        // Run once more after it ended: nothing changes.
        let done = c
            .handle_nodegroup_create(&ctx(), Obj::unchanged(cl), ng)
            .await
            .expect("already handled");
        assert_eq!(done.status, Some(ClusterStatus::CreateComplete));
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::UpdateComplete
        );
    });
}

#[tokio::test]
async fn delete_removes_the_rows() {
    on_every_backend!(|db| {
        let (c, rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "alpha", &[]).await;
        let other = ready(&c, db, &t, "beta", &[]).await;
        rec.take();
        c.handle_cluster_delete(&ctx(), &uuid).await.unwrap();
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::DeleteInProgress
        );
        assert_eq!(rec.take(), vec![(Action::Delete, Outcome::Pending)]);
        let report = c.sync_cluster_status().await;
        assert_eq!(report.deleted, 1);
        assert!(get(db, &uuid).await.is_none());
        assert!(ngs(db, &uuid).await.is_empty());
        assert_eq!(rec.take(), vec![(Action::Delete, Outcome::Success)]);
        // The other cluster is untouched.
        assert_eq!(
            status(&cluster_row(db, &other).await),
            ClusterStatus::CreateComplete
        );
        assert_eq!(ngs(db, &other).await.len(), 2);
        // Deleting a cluster that is gone: ClusterNotFound.
        let e = c.handle_cluster_delete(&ctx(), &uuid).await.unwrap_err();
        assert_eq!(e.code(), 404);
    });
}

#[tokio::test]
async fn flatcar_and_other_capi_distros_resolve_to_the_simulator() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        for distro in ["flatcar", "debian", "rockylinux", "ubuntu-focal"] {
            let t = template(db, distro, "v1.30.1", distro).await;
            let uuid = ready(&c, db, &t, distro, &[]).await;
            assert_eq!(
                cluster_row(db, &uuid).await.coe_version.as_deref(),
                Some("v1.30.1")
            );
        }
    });
}

#[tokio::test]
async fn ticks_label_keeps_an_operation_in_progress() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = create(&c, &t, "slow", 1, &[("simulator_ticks", "3")]).await;
        for _ in 0..2 {
            c.sync_cluster_status().await;
            assert_eq!(
                status(&cluster_row(db, &uuid).await),
                ClusterStatus::CreateInProgress
            );
        }
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateComplete
        );
    });
}

#[tokio::test]
async fn health_poll_reports_the_simulated_health() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let plain = ready(&c, db, &t, "plain", &[]).await;
        let healthy = ready(&c, db, &t, "healthy", &[("simulator_health", "HEALTHY")]).await;
        assert_eq!(c.sync_cluster_health().await, 1);
        assert_eq!(cluster_row(db, &plain).await.health_status, None);
        let row = cluster_row(db, &healthy).await;
        assert_eq!(row.health_status, Some(ClusterHealthStatus::Healthy));
        assert_eq!(row.health_status_reason, Some(labels(&[("api", "ok")])));
    });
}

#[tokio::test]
async fn health_poll_writes_the_node_count_the_autoscaler_set() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(
            &c,
            db,
            &t,
            "scaled",
            &[
                ("simulator_health", "HEALTHY"),
                ("simulator_autoscaled_node_count", "4"),
            ],
        )
        .await;
        assert_eq!(c.sync_cluster_health().await, 1);
        let worker = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(worker.node_count, Some(4));
    });
}
