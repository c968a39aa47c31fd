#![allow(clippy::unwrap_used, clippy::expect_used)]
//! gophercloud's TestNodeGroupsCRUD sends three nodegroup updates and the delete within a few
//! milliseconds. The casts must reach the conductor's handlers in that order: when the delete
//! ran first, a late update saved `UPDATE_IN_PROGRESS` over `DELETE_IN_PROGRESS` and the
//! nodegroup stayed for ever (seen once in CI: the acceptance test waited for a 404 until
//! go test's timeout). The all-in-one server (in-process transport, simulator driver),
//! repeated, since the lost order was a race.

use openkeel_tests::http;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

async fn server() -> (openkeel::allinone::Running, SocketAddr) {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let conf = dir.join("test.conf");
    std::fs::write(&conf, "[openkeel]\nstatus_sync_interval = 1\n").unwrap();
    let config = openkeel::allinone::load_config(&dir, &[conf], &[]).expect("config");
    let running = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .expect("start");
    let addr = running.addr;
    (running, addr)
}

async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let b = body.map(|b| b.to_string());
    let r = http(
        addr,
        method,
        path,
        &[
            ("Content-Type", "application/json"),
            ("OpenStack-API-Version", "container-infra latest"),
        ],
        b.as_deref().map(str::as_bytes),
    )
    .await
    .unwrap();
    let text = r.text();
    (
        r.status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn wait_status(addr: SocketAddr, cluster: &str, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, c) = call(addr, "GET", &format!("/v1/clusters/{cluster}"), None).await;
        if c["status"] == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{cluster} never reached {want}: {c}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_ng(addr: SocketAddr, cluster: &str, ng: &str, want: Option<&str>) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (s, n) = call(
            addr,
            "GET",
            &format!("/v1/clusters/{cluster}/nodegroups/{ng}"),
            None,
        )
        .await;
        match want {
            None if s == 404 => return n,
            Some(w) if n["status"] == w => return n,
            _ => {}
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nodegroup {ng} never reached {want:?}: {s} {n}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodegroup_updates_then_delete_sent_at_once_end_with_the_nodegroup_gone() {
    let (srv, addr) = server().await;
    let (s, t) = call(
        addr,
        "POST",
        "/v1/clustertemplates",
        Some(
            json!({"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small"}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let (s, c) = call(
        addr,
        "POST",
        "/v1/clusters",
        Some(json!({"name": "c1", "cluster_template_id": "k8s", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{c}");
    wait_status(addr, "c1", "CREATE_COMPLETE").await;

    for round in 0..5 {
        let name = format!("ng-{round}");
        let (s, n) = call(
            addr,
            "POST",
            "/v1/clusters/c1/nodegroups",
            Some(json!({"name": name, "node_count": 2})),
        )
        .await;
        assert_eq!(s, 202, "{n}");
        let uuid = n["uuid"].as_str().unwrap().to_string();
        wait_ng(addr, "c1", &uuid, Some("CREATE_COMPLETE")).await;
        let path = format!("/v1/clusters/c1/nodegroups/{uuid}");
        for patch in [
            json!([{"op": "replace", "path": "/min_node_count", "value": 2}]),
            json!([{"op": "replace", "path": "/max_node_count", "value": 5}]),
            json!([{"op": "replace", "path": "/min_node_count", "value": 1},
                   {"op": "replace", "path": "/max_node_count", "value": 3}]),
        ] {
            let (s, n) = call(addr, "PATCH", &path, Some(patch)).await;
            assert_eq!(s, 202, "round {round}: {n}");
        }
        let (s, e) = call(addr, "DELETE", &path, None).await;
        assert_eq!(s, 204, "round {round}: {e}");
        wait_ng(addr, "c1", &uuid, None).await;
        wait_status(addr, "c1", "UPDATE_COMPLETE").await;
    }
    srv.stop().await.expect("stop");
}
