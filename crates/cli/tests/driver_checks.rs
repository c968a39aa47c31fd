#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The API asks the cluster's driver, as Magnum does: `validate_master_size` on create
//! (`enforce_cluster_master_size_supported`) and `validate_master_resize` when the master
//! nodegroup is resized (`Driver.get_driver_for_cluster`). The embedded server runs the
//! simulator driver, which — like magnum-cluster-api — resizes masters to any odd count; the
//! base driver (Magnum's in-tree default) refuses, which the API crate's tests cover.

#[path = "common/api.rs"]
mod api;

use api::{call, detail, server, wait_status};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn master_counts_are_the_drivers_decision() {
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

    // Create: the simulator keeps the base rule (odd, at least 1).
    for (count, status, msg) in [
        (
            2,
            400,
            "master nodegroup size of 2 is invalid, size cannot be an even number.",
        ),
        (
            0,
            400,
            "Invalid input for field/attribute master_count. Value: '0'. Value should be greater or equal to 1",
        ),
    ] {
        let (s, e) = call(
            addr,
            "POST",
            "/v1/clusters",
            Some(json!({"name": "bad", "cluster_template_id": "k8s", "master_count": count})),
        )
        .await;
        assert_eq!((s, detail(&e)), (status, msg), "{e}");
    }
    let (s, c) = call(
        addr,
        "POST",
        "/v1/clusters",
        Some(json!({"name": "c1", "cluster_template_id": "k8s", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{c}");
    wait_status(addr, "c1", "CREATE_COMPLETE").await;

    // Resize of the master nodegroup: the simulator (like magnum-cluster-api) takes odd
    // counts, refuses even ones with the size message.
    let (s, e) = call(
        addr,
        "POST",
        "/v1/clusters/c1/actions/resize",
        Some(json!({"node_count": 2, "nodegroup": "default-master"})),
    )
    .await;
    assert_eq!(
        (s, detail(&e)),
        (
            400,
            "master nodegroup size of 2 is invalid, size cannot be an even number."
        ),
        "{e}"
    );
    let (s, r) = call(
        addr,
        "POST",
        "/v1/clusters/c1/actions/resize",
        Some(json!({"node_count": 3, "nodegroup": "default-master"})),
    )
    .await;
    assert_eq!(s, 202, "{r}");
    wait_status(addr, "c1", "UPDATE_COMPLETE").await;
    let (_, ng) = call(
        addr,
        "GET",
        "/v1/clusters/c1/nodegroups/default-master",
        None,
    )
    .await;
    assert_eq!(ng["node_count"], 3, "{ng}");
    srv.stop().await.unwrap();
}
