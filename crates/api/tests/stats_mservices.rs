#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of `GET /v1/stats` and `GET /v1/mservices` against a real database
//! (SQLite, and MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set) and Magnum's default policy.
//! Expected bodies and messages are the ones the real magnum-api 23.0.0 gives.

#[macro_use]
mod common;

use chrono::{Duration, Utc};
use common::{Api, Who, LATEST};
use openkeel_core::objects::{Cluster, MagnumService, NodeGroup};
use openkeel_db::Database;

/// A cluster of `project` with a master nodegroup of `masters` and a worker one of `workers`.
async fn cluster_with_nodes(db: &Database, project: &str, masters: i32, workers: i32) {
    let c = openkeel_db::cluster::create(
        db,
        &Cluster {
            name: Some(format!("c-{project}-{workers}")),
            project_id: Some(project.into()),
            user_id: Some(format!("{project}-user")),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let uuid = c.uuid.clone().unwrap();
    for (name, role, n) in [
        ("default-master", "master", masters),
        ("default-worker", "worker", workers),
    ] {
        openkeel_db::nodegroup::create(
            db,
            &NodeGroup {
                name: name.into(),
                cluster_id: uuid.clone(),
                project_id: project.into(),
                role: Some(role.into()),
                node_count: Some(n),
                is_default: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
}

on_both!(
    stats_counts_and_scoping,
    stats_errors_and_routing,
    mservices_bodies_and_state,
    mservices_errors_and_routing,
);

async fn stats_counts_and_scoping(api: Api) {
    assert_eq!(
        api.get(Who::Admin, "/v1/stats").await.body,
        r#"{"clusters": 0, "nodes": 0}"#
    );
    cluster_with_nodes(&api.db, "p1", 1, 2).await;
    cluster_with_nodes(&api.db, "p1", 3, 4).await;
    cluster_with_nodes(&api.db, "p2", 1, 1).await;
    // Admin without project_id: totals over every project, masters included.
    let r = api.get(Who::Admin, "/v1/stats").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, r#"{"clusters": 3, "nodes": 12}"#);
    assert_eq!(
        api.get(Who::Admin, "/v1/stats?project_id=p1").await.body,
        r#"{"clusters": 2, "nodes": 10}"#
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/stats?project_id=p2&type=CLUSTER")
            .await
            .body,
        r#"{"clusters": 1, "nodes": 2}"#
    );
    // A non-admin reader: its own project by default, and only it.
    assert_eq!(
        api.get(Who::Member("p1"), "/v1/stats").await.body,
        r#"{"clusters": 2, "nodes": 10}"#
    );
    assert_eq!(
        api.get(Who::Member("p1"), "/v1/stats?project_id=p1")
            .await
            .body,
        r#"{"clusters": 2, "nodes": 10}"#
    );
    assert_eq!(
        api.get(Who::Member("p1"), "/v1/stats?project_id=p2")
            .await
            .err(),
        (403, "Not authorized.".into())
    );
    let r = api.get(Who::Member("p9"), "/v1/stats").await;
    assert_eq!(r.body, r#"{"clusters": 0, "nodes": 0}"#);
}

async fn stats_errors_and_routing(api: Api) {
    let r = api.get(Who::Admin, "/v1/stats?type=foo").await;
    assert_eq!(
        r.err(),
        (
            400,
            "Invalid stats type. Allowed values are 'cluster'".into()
        )
    );
    assert_eq!(r.json()["errors"][0]["title"], "Invalid stats type");
    assert_eq!(
        api.get(Who::Admin, "/v1/stats?foo=1").await.err(),
        (400, "Unknown argument: \"foo\"".into())
    );
    for (m, p) in [
        ("GET", "/v1/stats/x"),
        ("POST", "/v1/stats"),
        ("DELETE", "/v1/stats"),
    ] {
        let r = api.call(Who::Admin, m, p, None, LATEST).await;
        assert_eq!(r.status, 405, "{m} {p}");
        assert_eq!(r.header("allow"), Some("GET"));
    }
    // The policy (`stats:get_all`, admin or project reader) runs before the type check.
    let r = api
        .call(Who::Member("p1"), "GET", "/v1/stats?type=foo", None, LATEST)
        .await;
    assert_eq!(r.status, 400);
}

async fn mservices_bodies_and_state(api: Api) {
    assert_eq!(
        api.get(Who::Admin, "/v1/mservices").await.body,
        r#"{"mservices": []}"#
    );
    let now = Utc::now().naive_utc();
    let fresh = openkeel_db::magnum_service::create(
        &api.db,
        &MagnumService {
            host: Some("magnum-ref".into()),
            binary: Some("magnum-conductor".into()),
            report_count: 86,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // Heartbeat older than service_down_time (180 s): down.
    openkeel_db::magnum_service::create(
        &api.db,
        &MagnumService {
            host: Some("old-host".into()),
            binary: Some("magnum-conductor".into()),
            created_at: Some(now - Duration::seconds(1000)),
            disabled: Some(true),
            disabled_reason: Some("maintenance".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // Recent row forced down: down.
    openkeel_db::magnum_service::create(
        &api.db,
        &MagnumService {
            host: Some("forced".into()),
            binary: Some("magnum-conductor".into()),
            forced_down: Some(true),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let r = api.get(Who::Admin, "/v1/mservices").await;
    assert_eq!(r.status, 200);
    let j = r.json();
    let created = j["mservices"][0]["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    let old_created = j["mservices"][1]["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    let forced_created = j["mservices"][2]["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        r.body,
        format!(
            concat!(
                r#"{{"mservices": [{{"host": "magnum-ref", "binary": "magnum-conductor", "state": "up", "id": {}, "report_count": 86, "disabled": false, "disabled_reason": null, "created_at": "{}", "updated_at": null}}, "#,
                r#"{{"host": "old-host", "binary": "magnum-conductor", "state": "down", "id": {}, "report_count": 0, "disabled": true, "disabled_reason": "maintenance", "created_at": "{}", "updated_at": null}}, "#,
                r#"{{"host": "forced", "binary": "magnum-conductor", "state": "down", "id": {}, "report_count": 0, "disabled": false, "disabled_reason": null, "created_at": "{}", "updated_at": null}}]}}"#
            ),
            fresh.id,
            created,
            fresh.id + 1,
            old_created,
            fresh.id + 2,
            forced_created
        )
    );
}

async fn mservices_errors_and_routing(api: Api) {
    assert_eq!(
        api.get(Who::Admin, "/v1/mservices?limit=1").await.err(),
        (400, "Unknown argument: \"limit\"".into())
    );
    for (m, p) in [
        ("GET", "/v1/mservices/1"),
        ("POST", "/v1/mservices"),
        ("PATCH", "/v1/mservices"),
    ] {
        let r = api.call(Who::Admin, m, p, None, LATEST).await;
        assert_eq!(r.status, 405, "{m} {p}");
        assert_eq!(r.header("allow"), Some("GET"));
    }
    assert_eq!(
        api.get(Who::Member("p1"), "/v1/mservices").await.err(),
        (
            403,
            "Policy doesn't allow magnum-service:get_all to be performed.".into()
        )
    );
    assert_eq!(
        api.get(Who::Admin, "/mservices").await.body,
        r#"{"mservices": []}"#
    );
}
