//! `docs/openapi.json`, the OpenAPI 3.1 document of the API generated from the code
//! (`openkeel_api::openapi`):
//!
//! * it is exactly what `openkeel-openapi-generator` prints (regenerate it when a route, an
//!   attribute or a view changes);
//! * it is a valid OpenAPI 3.1 document (openapi-spec-validator, from the test venv);
//! * the all-in-one server's answers along a flow through all 38 routes (successes, and
//!   error answers of every kind: handler errors, routing 404 / 405 / 406, the microversion
//!   406, unknown arguments, media types, conflicts) match it: each status is declared for
//!   its route, the required headers are there and each body validates against the declared
//!   schema (`tests/python/openapi_check.py`, JSON Schema 2020-12 with `jsonschema`); every
//!   route is seen answering its success status.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/api.rs"]
mod api;
#[path = "common/openapi_check.rs"]
mod openapi_check;

use openkeel_tests::http;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;

use openapi_check::document_path;

const REGENERATE: &str = "cargo run -q --bin openkeel-openapi-generator > docs/openapi.json";

#[test]
fn openapi_generator_prints_the_checked_in_document() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_openkeel-openapi-generator"))
        .output()
        .expect("run openkeel-openapi-generator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let on_disk = std::fs::read(document_path()).expect("docs/openapi.json");
    assert!(
        out.stdout == on_disk,
        "docs/openapi.json is stale (a route, an attribute or a view changed): {REGENERATE}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_openkeel-openapi-generator"))
        .arg("--output-file")
        .arg(&file)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read(&file).unwrap(), on_disk);
}

/// `tests/python/openapi_check.py ARGS` with the venv's Python: its exit status and output.
fn check(args: &[&str]) -> Option<(bool, String)> {
    openapi_check::run(args)
}

#[test]
fn the_document_is_valid_openapi_3_1() {
    let doc = document_path();
    let Some((ok, text)) = check(&["document", doc.to_str().unwrap()]) else {
        return;
    };
    assert!(ok, "{text}");
}

/// Every request and its answer, as `openapi_check.py exchanges` reads them.
struct Recorder {
    addr: SocketAddr,
    exchanges: Vec<Value>,
}

const LATEST: &str = "container-infra latest";

impl Recorder {
    async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> (u16, Value) {
        let r = http(self.addr, method, path, headers, body).await.unwrap();
        let text = r.text();
        self.exchanges
            .push(openapi_check::exchange(method, path, &r));
        (
            r.status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// A JSON request at the latest microversion; panics unless the answer is `want`.
    async fn expect(&mut self, want: u16, method: &str, path: &str, body: Option<Value>) -> Value {
        self.expect_at(want, LATEST, method, path, body).await
    }

    async fn expect_at(
        &mut self,
        want: u16,
        version: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let b = body.map(|b| b.to_string());
        let (status, v) = self
            .send(
                method,
                path,
                &[
                    ("Content-Type", "application/json"),
                    ("OpenStack-API-Version", version),
                ],
                b.as_deref().map(str::as_bytes),
            )
            .await;
        assert_eq!(status, want, "{method} {path} at {version}: {v}");
        v
    }
}

/// A CSR made with the openssl CLI.
fn csr(dir: &Path) -> String {
    let out = std::process::Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "n.key",
            "-out",
            "n.csr",
            "-subj",
            "/CN=node-1/O=system:nodes",
        ])
        .current_dir(dir)
        .output()
        .expect("openssl (the openssl CLI is needed by this test)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join("n.csr")).unwrap()
}

/// The flow: every route's success, then error answers of each kind.
async fn flow(r: &mut Recorder, db: &openkeel_db::Database, dir: &Path) {
    let addr = r.addr;
    // -- versions
    r.expect(200, "GET", "/", None).await;
    r.expect(200, "GET", "/v1", None).await;

    // -- cluster templates
    let template = |name: &str, kube_tag: &str| {
        json!({
            "name": name, "image_id": "ubuntu-jammy", "external_network_id": "public",
            "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small",
            "labels": {"kube_tag": kube_tag},
        })
    };
    r.expect(
        201,
        "POST",
        "/v1/clustertemplates",
        Some(template("k8s", "v1.30.4")),
    )
    .await;
    r.expect(
        201,
        "POST",
        "/v1/clustertemplates",
        Some(template("k8s-v2", "v1.31.1")),
    )
    .await;
    r.expect(200, "GET", "/v1/clustertemplates", None).await;
    r.expect(200, "GET", "/v1/clustertemplates?limit=1", None)
        .await;
    r.expect(200, "GET", "/v1/clustertemplates/detail", None)
        .await;
    r.expect(200, "GET", "/v1/clustertemplates/k8s", None).await;
    let patch = json!([{"op": "replace", "path": "/tags", "value": "openapi"}]);
    r.expect(200, "PATCH", "/v1/clustertemplates/k8s-v2", Some(patch))
        .await;

    // -- clusters
    let body =
        json!({"name": "c1", "cluster_template_id": "k8s", "node_count": 1, "master_count": 1});
    let created = r.expect(202, "POST", "/v1/clusters", Some(body)).await;
    let uuid = created["uuid"].as_str().unwrap().to_string();
    api::wait_status(addr, "c1", "CREATE_COMPLETE").await;
    r.expect(200, "GET", "/v1/clusters", None).await;
    r.expect(200, "GET", "/v1/clusters/detail", None).await;
    r.expect(200, "GET", "/v1/clusters/c1", None).await;
    // `stack_id` up to 1.12, `cluster_id` from 1.13
    let old = r
        .expect_at(200, "container-infra 1.12", "GET", "/v1/clusters/c1", None)
        .await;
    assert!(old.get("stack_id").is_some() && old.get("cluster_id").is_none());
    r.expect_at(200, "container-infra 1.12", "GET", "/v1/clusters", None)
        .await;
    let patch = json!([{"op": "replace", "path": "/node_count", "value": 2}]);
    r.expect(202, "PATCH", "/v1/clusters/c1", Some(patch)).await;
    api::wait_status(addr, "c1", "UPDATE_COMPLETE").await;
    r.expect(
        202,
        "POST",
        "/v1/clusters/c1/actions/resize",
        Some(json!({"node_count": 1})),
    )
    .await;
    // The resize is a cast and the cluster is already UPDATE_COMPLETE from the PATCH: wait
    // for the resized nodegroup (CREATE_COMPLETE until a resize completes it) first.
    api::wait_ng(addr, "c1", "default-worker", Some("UPDATE_COMPLETE")).await;
    api::wait_status(addr, "c1", "UPDATE_COMPLETE").await;
    let up = json!({"cluster_template": "k8s-v2", "max_batch_size": 1});
    r.expect(202, "POST", "/v1/clusters/c1/actions/upgrade", Some(up))
        .await;
    api::wait_status(addr, "c1", "UPDATE_COMPLETE").await;

    // -- nodegroups
    r.expect(200, "GET", "/v1/clusters/c1/nodegroups", None)
        .await;
    let ng = json!({"name": "ng1", "node_count": 1});
    r.expect(202, "POST", "/v1/clusters/c1/nodegroups", Some(ng))
        .await;
    api::wait_ng(addr, "c1", "ng1", Some("CREATE_COMPLETE")).await;
    r.expect(200, "GET", "/v1/clusters/c1/nodegroups/ng1", None)
        .await;
    let patch = json!([{"op": "replace", "path": "/max_node_count", "value": 3}]);
    r.expect(202, "PATCH", "/v1/clusters/c1/nodegroups/ng1", Some(patch))
        .await;
    api::wait_ng(addr, "c1", "ng1", Some("UPDATE_COMPLETE")).await;
    r.expect(204, "DELETE", "/v1/clusters/c1/nodegroups/ng1", None)
        .await;
    api::wait_ng(addr, "c1", "ng1", None).await;
    api::wait_status(addr, "c1", "UPDATE_COMPLETE").await;

    // -- certificates, credentials
    r.expect(200, "GET", "/v1/certificates/c1", None).await;
    r.expect(200, "GET", "/v1/certificates/c1?ca_cert_type=etcd", None)
        .await;
    let sign = json!({"cluster_uuid": uuid, "csr": csr(dir)});
    r.expect(201, "POST", "/v1/certificates", Some(sign)).await;
    r.expect(202, "PATCH", "/v1/certificates/c1", None).await;
    api::wait_status(addr, "c1", "UPDATE_COMPLETE").await;
    r.expect(202, "PATCH", "/v1/credentials/c1", None).await;

    // -- quotas
    let quota = json!({"project_id": "openapi-project", "resource": "Cluster", "hard_limit": 10});
    r.expect(201, "POST", "/v1/quotas", Some(quota.clone()))
        .await;
    r.expect(409, "POST", "/v1/quotas", Some(quota)).await;
    r.expect(200, "GET", "/v1/quotas", None).await;
    r.expect(200, "GET", "/v1/quotas?all_tenants=true", None)
        .await;
    r.expect(200, "GET", "/v1/quotas/openapi-project/Cluster", None)
        .await;
    // a project without a quota of its own: the default
    r.expect(200, "GET", "/v1/quotas/other-project/Cluster", None)
        .await;
    r.expect(
        202,
        "PATCH",
        "/v1/quotas/openapi-project/Cluster",
        Some(json!({"hard_limit": 5})),
    )
    .await;
    r.expect(204, "DELETE", "/v1/quotas/openapi-project/Cluster", None)
        .await;

    // -- stats, services
    r.expect(200, "GET", "/v1/stats", None).await;
    r.expect(200, "GET", "/v1/mservices", None).await;

    // -- federations: the create is cast to a conductor that implements none of them (as
    // Magnum's), so the one read, changed and deleted is a row put in the database.
    let fed =
        json!({"name": "f1", "hostcluster_id": uuid, "properties": {"dns-zone": "example.com."}});
    r.expect(202, "POST", "/v1/federations", Some(fed)).await;
    let row = openkeel_core::objects::Federation {
        uuid: Some("0c6ec5b2-8f6e-4bde-a3d5-2f3c9a4c7a11".into()),
        name: Some("f2".into()),
        project_id: Some("noauth-project".into()),
        hostcluster_id: Some(uuid.clone()),
        member_ids: Some(Vec::new()),
        status: Some(openkeel_core::objects::FederationStatus::CreateComplete),
        properties: Some(
            [("dns-zone".to_string(), "example.com.".to_string())]
                .into_iter()
                .collect(),
        ),
        ..Default::default()
    };
    openkeel_db::federation::create(db, &row).await.unwrap();
    r.expect(200, "GET", "/v1/federations", None).await;
    r.expect(200, "GET", "/v1/federations/detail", None).await;
    r.expect(200, "GET", "/v1/federations/f2", None).await;
    let join = json!([{"op": "add", "path": "/member_ids", "value": uuid}]);
    r.expect(202, "PATCH", "/v1/federations/f2", Some(join))
        .await;
    r.expect(204, "DELETE", "/v1/federations/f2", None).await;

    // -- error answers
    r.expect(404, "GET", "/v1/clusters/nope", None).await;
    r.expect(404, "GET", "/v1/nothing", None).await;
    r.expect(405, "PUT", "/v1/clusters", None).await;
    r.expect(400, "GET", "/v1/clusters?foo=1", None).await;
    r.expect(400, "GET", "/v1/clusters?limit=-1", None).await;
    r.expect(400, "POST", "/v1/clusters", Some(json!({}))).await;
    // the template the cluster was upgraded to is in use
    r.expect(400, "DELETE", "/v1/clustertemplates/k8s-v2", None)
        .await;
    r.expect_at(406, "container-infra 1.99", "GET", "/v1/clusters", None)
        .await;
    r.expect_at(
        406,
        "container-infra 1.8",
        "GET",
        "/v1/clusters/c1/nodegroups",
        None,
    )
    .await;
    r.expect_at(
        406,
        "container-infra 1.11",
        "PATCH",
        "/v1/credentials/c1",
        None,
    )
    .await;
    r.expect_at(406, "nova 1.1", "GET", "/v1/clusters", None)
        .await;
    // routing errors with the titles of a client that prefers JSON; the Accept refusal
    for (method, accept, status) in [
        ("PUT", "application/json", 405),
        ("GET", "application/json", 404),
        ("GET", "text/html", 406),
    ] {
        let path = if status == 404 {
            "/v1/nothing"
        } else {
            "/v1/clusters"
        };
        let (s, v) = r.send(method, path, &[("Accept", accept)], None).await;
        assert_eq!(s, status, "{method} {path}: {v}");
    }
    let (s, v) = r
        .send(
            "GET",
            "/v1/clusters",
            &[
                ("Accept", "application/json"),
                ("OpenStack-API-Version", "container-infra 2.0"),
            ],
            None,
        )
        .await;
    assert_eq!(s, 406, "{v}");
    let (s, v) = r
        .send(
            "POST",
            "/v1/clusters",
            &[
                ("Content-Type", "text/plain"),
                ("OpenStack-API-Version", LATEST),
            ],
            Some(b"{}"),
        )
        .await;
    assert_eq!(s, 415, "{v}");

    // -- teardown
    r.expect(204, "DELETE", "/v1/clusters/c1", None).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while api::call(addr, "GET", "/v1/clusters/c1", None).await.0 != 404 {
        assert!(std::time::Instant::now() < deadline, "c1 was never deleted");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    r.expect(204, "DELETE", "/v1/clustertemplates/k8s", None)
        .await;
    r.expect(204, "DELETE", "/v1/clustertemplates/k8s-v2", None)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_of_every_route_match_the_document() {
    // Without the venv (outside CI) there is no validator: skipped with a message.
    if openkeel_tests::venv().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("test.conf");
    std::fs::write(&conf, "[openkeel]\nstatus_sync_interval = 1\n").unwrap();
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).expect("config");
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .expect("start");
    let mut r = Recorder {
        addr: srv.addr,
        exchanges: Vec::new(),
    };
    flow(&mut r, &srv.db, dir.path()).await;
    srv.stop().await.expect("stop");

    let file = dir.path().join("exchanges.json");
    std::fs::write(&file, serde_json::to_vec(&r.exchanges).unwrap()).unwrap();
    let doc = document_path();
    let (ok, text) =
        check(&["exchanges", doc.to_str().unwrap(), file.to_str().unwrap()]).expect("the venv");
    assert!(ok, "answers that do not match docs/openapi.json:\n{text}");
    let report: Value = serde_json::from_str(&text).expect("the checker's report");
    let covered: Vec<&str> = report["covered"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let missing: Vec<String> = openkeel_api::openapi::catalogue::ROUTES
        .iter()
        .map(|route| format!("{} {}", route.method, route.path))
        .filter(|op| !covered.contains(&op.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "routes never seen answering their success status: {missing:?}"
    );
    eprintln!(
        "{} answers of {} routes match docs/openapi.json",
        r.exchanges.len(),
        covered.len()
    );
}
