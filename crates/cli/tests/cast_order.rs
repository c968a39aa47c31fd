#![allow(clippy::unwrap_used, clippy::expect_used)]
//! gophercloud's TestNodeGroupsCRUD sends three nodegroup updates and the delete within a few
//! milliseconds. The casts must reach the conductor's handlers in that order: when the delete
//! ran first, a late update saved `UPDATE_IN_PROGRESS` over `DELETE_IN_PROGRESS` and the
//! nodegroup stayed for ever (seen once in CI: the acceptance test waited for a 404 until
//! go test's timeout). The all-in-one server (in-process transport, simulator driver),
//! repeated, since the lost order was a race.

#[path = "common/api.rs"]
mod api;

use api::{call, server, wait_ng, wait_status};
use serde_json::json;

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
