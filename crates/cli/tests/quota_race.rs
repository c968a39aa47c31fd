#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The cluster quota holds under concurrency (issue: "50 concurrent creates with hard_limit N
//! leave exactly N clusters"). Magnum counts and then casts, so concurrent creates all pass
//! the count; OpenKeel counts, casts and waits for the insert under a per-project lock
//! (`openkeel_db::lock`: GET_LOCK on MariaDB). The all-in-one server (real conductor,
//! simulator driver) on SQLite and on MariaDB.

#[path = "common/api.rs"]
mod api;

use api::server_with;
use openkeel_tests::http;
use std::net::SocketAddr;

const JSON: (&str, &str) = ("Content-Type", "application/json");
const CREATES: usize = 50;
const LIMIT: i64 = 7;

async fn post(addr: SocketAddr, path: &str, body: serde_json::Value) -> (u16, String) {
    let b = body.to_string();
    let r = http(addr, "POST", path, &[JSON], Some(b.as_bytes()))
        .await
        .expect("POST");
    (r.status, r.text())
}

async fn race(addr: SocketAddr) {
    let (s, t) = post(
        addr,
        "/v1/clustertemplates",
        serde_json::json!({
            "name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
            "external_network_id": "public", "flavor_id": "m1.small",
            "master_flavor_id": "m1.small",
        }),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let (s, t) = post(
        addr,
        "/v1/quotas",
        serde_json::json!({
            "project_id": openkeel_auth::noauth::NOAUTH_PROJECT_ID,
            "resource": "Cluster", "hard_limit": LIMIT,
        }),
    )
    .await;
    assert_eq!(s, 201, "{t}");

    let mut tasks = Vec::new();
    for i in 0..CREATES {
        tasks.push(tokio::spawn(async move {
            post(
                addr,
                "/v1/clusters",
                serde_json::json!({"name": format!("c{i}"), "cluster_template_id": "k8s",
                                   "node_count": 1, "master_count": 1}),
            )
            .await
        }));
    }
    let mut accepted = 0;
    let mut refused = 0;
    for t in tasks {
        let (status, body) = t.await.unwrap();
        match status {
            202 => accepted += 1,
            403 => {
                assert!(
                    body.contains("You have reached the maximum clusters per project, 7."),
                    "{body}"
                );
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(accepted, LIMIT as usize, "exactly the quota is accepted");
    assert_eq!(refused, CREATES - LIMIT as usize);
    let r = http(addr, "GET", "/v1/clusters", &[], None).await.unwrap();
    let list: serde_json::Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(
        list["clusters"].as_array().unwrap().len(),
        LIMIT as usize,
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_creates_leave_exactly_the_quota_on_sqlite() {
    let (srv, addr) = server_with("").await;
    race(addr).await;
    srv.stop().await.expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_creates_leave_exactly_the_quota_on_mariadb() {
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    db.close().await;
    let conf = format!("[database]\nconnection = {}\n", mdb.url());
    let (srv, addr) = server_with(&conf).await;
    race(addr).await;
    srv.stop().await.expect("stop");
}
