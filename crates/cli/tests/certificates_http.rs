#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level answers of `/v1/certificates` and `/v1/credentials` on the all-in-one server
//! (real conductor, x509keypair cert manager, simulator driver): status codes and Magnum's
//! error bodies for the paths around the happy ones (the happy paths run through the real
//! client in `cli_e2e.rs`).

#[path = "common/api.rs"]
mod api;

use api::{call_at, detail, server};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_and_credential_routes() {
    let (srv, addr) = server().await;
    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clustertemplates",
        "1.1",
        Some(
            json!({"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small"}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clusters",
        "1.1",
        Some(json!({"name": "c1", "cluster_template_id": "k8s", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{t}");
    let uuid = t["uuid"].as_str().unwrap().to_string();
    for _ in 0..200 {
        let (_, c) = call_at(addr, "GET", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
        if c["status"] == "CREATE_COMPLETE" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // GET: the CA, with links; by name too.
    let (s, c) = call_at(addr, "GET", "/v1/certificates/c1", "1.1", None).await;
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["cluster_uuid"], uuid.as_str());
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["cluster_uuid", "links", "pem"]);
    assert_eq!(
        c["links"][0]["href"],
        format!("http://{addr}/v1/certificates/{uuid}").as_str()
    );
    let (s, e) = call_at(addr, "GET", "/v1/certificates/nope", "1.1", None).await;
    assert_eq!(s, 404);
    assert_eq!(detail(&e), "Cluster nope could not be found.");
    let (s, _) = call_at(addr, "GET", "/v1/certificates", "1.1", None).await;
    assert_eq!(s, 405);

    // POST: unknown cluster → 400 (resolved while the body is parsed), missing cluster_uuid
    // → 400 (Magnum: 500), bad CSR → the conductor's InvalidCsr, unknown attribute → 400.
    let (s, e) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": "nope", "csr": "x"})),
    )
    .await;
    assert_eq!(s, 400, "{e}");
    assert_eq!(detail(&e), "Cluster nope could not be found.");
    let (s, e) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"csr": "x"})),
    )
    .await;
    assert_eq!(s, 400, "{e}");
    assert_eq!(detail(&e), "cluster_uuid is required");
    let (s, e) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": uuid, "csr": "not a csr"})),
    )
    .await;
    assert_eq!(s, 400, "{e}");
    assert_eq!(detail(&e), "Received invalid csr b'not a csr'.");
    let (s, e) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": uuid, "csr": "x", "color": "red"})),
    )
    .await;
    assert_eq!(s, 400, "{e}");
    assert_eq!(
        detail(&e),
        "Unknown attribute for argument certificate: color"
    );

    // PATCH /v1/credentials: only from 1.12 (below, Magnum's routing 406); the simulator
    // accepts it.
    let (s, _) = call_at(
        addr,
        "PATCH",
        &format!("/v1/credentials/{uuid}"),
        "1.11",
        None,
    )
    .await;
    assert_eq!(s, 406);
    let (s, r) = call_at(
        addr,
        "PATCH",
        &format!("/v1/credentials/{uuid}"),
        "1.12",
        None,
    )
    .await;
    assert_eq!(s, 202, "{r}");
    assert_eq!(r, json!({"uuid": uuid}));

    // PATCH /v1/certificates: rotation accepted → 202 with the uuid; a JSON list is refused.
    let (s, e) = call_at(
        addr,
        "PATCH",
        "/v1/certificates/c1",
        "1.1",
        Some(json!([1])),
    )
    .await;
    assert_eq!(s, 400, "{e}");
    let (s, r) = call_at(addr, "PATCH", "/v1/certificates/c1", "1.1", None).await;
    assert_eq!(s, 202, "{r}");
    assert_eq!(r, json!({"uuid": uuid}));
    srv.stop().await.expect("stop");
}
