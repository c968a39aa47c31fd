#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of `GET /v1/stats` and `GET /v1/mservices` against a real database
//! (SQLite, and MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set) and Magnum's default policy.
//! Expected bodies and messages are the ones the real magnum-api 23.0.0 gives.

use std::sync::Arc;

use async_trait::async_trait;
use axum::body::Body;
use chrono::{Duration, Utc};
use http::Request;
use http_body_util::BodyExt;
use openkeel_api::ApiState;
use openkeel_core::cloud::{Cloud, Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, MagnumService, NodeGroup};
use openkeel_db::Database;
use serde_json::Value;
use tower::ServiceExt;

// ---------------------------------------------------------------------------------------
// Harness (SQLite, and MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set; Magnum's default policy)
// ---------------------------------------------------------------------------------------

/// Keystone as the reference rig's stubcloud answers it: every project exists except those
/// named `nonexistent*`. Nothing else is asked by these routes.
struct FakeCloud;

#[async_trait]
impl Cloud for FakeCloud {
    async fn find_image(&self, _: &RequestContext, id: &str) -> Result<Image, MagnumError> {
        Err(MagnumError::new(
            ErrorKind::ImageNotFound,
            &[("image_id", &id)],
        ))
    }
    async fn list_flavors(&self, _: &RequestContext) -> Result<Vec<Flavor>, MagnumError> {
        Ok(Vec::new())
    }
    async fn keypair_exists(&self, _: &RequestContext, _: &str) -> Result<bool, MagnumError> {
        Ok(false)
    }
    async fn list_external_networks(
        &self,
        _: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(Vec::new())
    }
    async fn list_networks(&self, _: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(Vec::new())
    }
    async fn list_subnets(&self, _: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(Vec::new())
    }
    async fn project_exists(&self, _: &RequestContext, p: &str) -> Result<bool, MagnumError> {
        Ok(!p.starts_with("nonexistent"))
    }
}

struct Api {
    app: axum::Router,
    db: Database,
    _guard: Option<openkeel_tests::MysqlDatabase>,
}

async fn state_for(db: Database) -> ApiState {
    openkeel_db::manage::upgrade(&db).await.expect("schema");
    let enforcer = openkeel_auth::Enforcer::new(openkeel_auth::PolicyOptions {
        policy_file: None,
        policy_dirs: Vec::new(),
        ..Default::default()
    })
    .expect("policy");
    ApiState {
        db: Some(db),
        cloud: Some(Arc::new(FakeCloud)),
        policy: Some(Arc::new(enforcer)),
        ..Default::default()
    }
}

async fn sqlite() -> Api {
    let db = Database::in_memory().await.expect("sqlite");
    let state = state_for(db.clone()).await;
    Api {
        app: openkeel_api::router(Arc::new(state)),
        db,
        _guard: None,
    }
}

async fn mariadb() -> Option<Api> {
    let guard = openkeel_tests::fresh_mysql_database().await?;
    let db = Database::connect(guard.url()).await.expect("mariadb");
    let state = state_for(db.clone()).await;
    Some(Api {
        app: openkeel_api::router(Arc::new(state)),
        db,
        _guard: Some(guard),
    })
}

struct Resp {
    status: u16,
    headers: http::HeaderMap,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn header(&self, n: &str) -> Option<&str> {
        self.headers.get(n).and_then(|v| v.to_str().ok())
    }

    /// The `detail` of an error envelope.
    fn detail(&self) -> String {
        self.json()["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Status and error detail, for one-line assertions.
    fn err(&self) -> (u16, String) {
        (self.status, self.detail())
    }
}

/// Who is calling.
#[derive(Clone, Copy)]
enum Who {
    /// The noauth default identity (admin of `noauth-project`).
    Admin,
    /// A member of the named project (user `<project>-user`).
    Member(&'static str),
}

impl Api {
    async fn call(&self, who: Who, method: &str, path: &str, body: Option<&str>) -> Resp {
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "magnum.example.com:9511")
            .header("OpenStack-API-Version", "container-infra 1.14");
        if let Who::Member(p) = who {
            b = b
                .header("X-User-Id", format!("{p}-user"))
                .header("X-Project-Id", p)
                .header("X-Roles", "member,reader")
                .header("X-Auth-Token", "t");
        }
        let req = match body {
            Some(text) => b
                .header("content-type", "application/json")
                .body(Body::from(text.to_string())),
            None => b.body(Body::empty()),
        }
        .unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        Resp {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    async fn get(&self, who: Who, path: &str) -> Resp {
        self.call(who, "GET", path, None).await
    }
}

/// Run each scenario on SQLite, and on MariaDB when one is available.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $( #[tokio::test] async fn $name() { super::$name(super::sqlite().await).await; } )*
        }
        mod mariadb_backend {
            $( #[tokio::test] async fn $name() { if let Some(api) = super::mariadb().await { super::$name(api).await; } } )*
        }
    };
}

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
        let r = api.call(Who::Admin, m, p, None).await;
        assert_eq!(r.status, 405, "{m} {p}");
        assert_eq!(r.header("allow"), Some("GET"));
    }
    // The policy (`stats:get_all`, admin or project reader) runs before the type check.
    let r = api
        .call(Who::Member("p1"), "GET", "/v1/stats?type=foo", None)
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
        let r = api.call(Who::Admin, m, p, None).await;
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
