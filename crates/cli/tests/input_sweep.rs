#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Bad input never gets a 500: a sweep of every route of the API with malformed and odd bodies,
//! content types, query strings and microversion headers, against the all-in-one server
//! with a template, a complete cluster and its nodegroups in place. Each answer must be
//! below 500 and carry a JSON body (Magnum's error envelope for errors).

#[path = "common/api.rs"]
mod api;

use api::server;
use openkeel_tests::http;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

const LATEST: (&str, &str) = ("OpenStack-API-Version", "container-infra latest");

async fn json_call(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> Value {
    let b = body.map(|b| b.to_string());
    let r = http(
        addr,
        method,
        path,
        &[("Content-Type", "application/json"), LATEST],
        b.as_deref().map(str::as_bytes),
    )
    .await
    .unwrap();
    assert!(r.status < 300, "{method} {path}: {} {}", r.status, r.text());
    serde_json::from_str(&r.text()).unwrap_or(Value::Null)
}

fn bodies() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "",
        "null",
        "[]",
        "{",
        "{}",
        "\"s\"",
        "1e999",
        "-1",
        "true",
        "{\"a\":1}",
        "{\"name\": \"\\ud800\"}",
        "\u{feff}{}",
        "{\"name\": \"\\u0000\"}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    v.push(format!("{}{}", "[".repeat(300), "]".repeat(300)).into_bytes());
    v.push(format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300)).into_bytes());
    v.push(vec![0xff, 0xfe, b'{', b'}']);
    for j in [
        json!({"node_count": 10u128.pow(30).to_string().parse::<f64>().unwrap()}),
        json!({"node_count": "abc"}),
        json!({"node_count": -5}),
        json!({"node_count": 1.5}),
        json!({"labels": "{'a': }"}),
        json!({"labels": [1]}),
        json!({"labels": {"a": 1}, "coe": "kubernetes", "image_id": "ubuntu-jammy",
               "external_network_id": "public"}),
        json!([{"op": "replace", "path": "/node_count", "value": "x"}]),
        json!([{"op": "add", "path": "/labels/a", "value": {"x": 1}}]),
        json!([{"op": "remove", "path": "/"}]),
        json!([{"op": "bad", "path": "/name"}]),
        json!([{"path": "/name"}]),
        json!([1, 2]),
        json!([{"op": "replace", "path": "/labels", "value": "{'a': 'b'"}]),
        json!([{"op": "replace", "path": "/max_node_count", "value": -1}]),
        json!([{"op": "replace", "path": "/min_node_count", "value": 10_000_000_000u64}]),
        json!({"cluster_uuid": "c1", "csr": "garbage"}),
        json!({"cluster_uuid": 5, "csr": 5}),
        json!({"project_id": "p1", "resource": "Cluster", "hard_limit": "x"}),
        json!({"project_id": null, "resource": null, "hard_limit": 1e40}),
        json!({"cluster_template": "t1", "max_batch_size": "z"}),
        json!({"node_count": 2, "nodes_to_remove": "x", "nodegroup": 7}),
        json!({"name": "x".repeat(10_000)}),
        json!({"hosts": 5, "hostcluster_id": [], "properties": "x"}),
        json!({"cluster_template_id": null, "name": null}),
        json!({"create_timeout": 1e20, "cluster_template_id": "t1"}),
        json!({"master_count": "1", "cluster_template_id": "t1"}),
        json!({"docker_volume_size": -1, "cluster_template_id": "t1"}),
        json!({"image_id": 5, "coe": "kubernetes"}),
        json!({"coe": "x", "image_id": "ubuntu-jammy", "external_network_id": "public"}),
    ] {
        v.push(j.to_string().into_bytes());
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_gets_a_server_error() {
    let (srv, addr) = server().await;
    json_call(
        addr,
        "POST",
        "/v1/clustertemplates",
        Some(
            json!({"name": "t1", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small"}),
        ),
    )
    .await;
    json_call(
        addr,
        "POST",
        "/v1/clusters",
        Some(json!({"name": "c1", "cluster_template_id": "t1", "node_count": 1})),
    )
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while json_call(addr, "GET", "/v1/clusters/c1", None).await["status"] != "CREATE_COMPLETE" {
        assert!(std::time::Instant::now() < deadline, "c1 never completed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let ngs = json_call(addr, "GET", "/v1/clusters/c1/nodegroups", None).await;
    let ng = ngs["nodegroups"][0]["uuid"].as_str().unwrap().to_string();

    let routes: Vec<(&str, String)> = vec![
        ("GET", "/v1/clustertemplates".into()),
        ("GET", "/v1/clustertemplates/detail".into()),
        ("POST", "/v1/clustertemplates".into()),
        ("GET", "/v1/clustertemplates/t1".into()),
        ("PATCH", "/v1/clustertemplates/t1".into()),
        ("DELETE", "/v1/clustertemplates/zzz".into()),
        ("GET", "/v1/clusters".into()),
        ("GET", "/v1/clusters/detail".into()),
        ("POST", "/v1/clusters".into()),
        ("GET", "/v1/clusters/c1".into()),
        ("PATCH", "/v1/clusters/c1".into()),
        ("DELETE", "/v1/clusters/zzz".into()),
        ("POST", "/v1/clusters/c1/actions/resize".into()),
        ("POST", "/v1/clusters/c1/actions/upgrade".into()),
        ("GET", "/v1/clusters/c1/nodegroups".into()),
        ("POST", "/v1/clusters/c1/nodegroups".into()),
        ("GET", format!("/v1/clusters/c1/nodegroups/{ng}")),
        ("PATCH", format!("/v1/clusters/c1/nodegroups/{ng}")),
        ("DELETE", "/v1/clusters/c1/nodegroups/zzz".into()),
        ("GET", "/v1/certificates/c1".into()),
        ("POST", "/v1/certificates".into()),
        ("PATCH", "/v1/certificates/c1".into()),
        ("PATCH", "/v1/credentials/c1".into()),
        ("GET", "/v1/quotas".into()),
        ("POST", "/v1/quotas".into()),
        ("GET", "/v1/quotas/p1/Cluster".into()),
        ("PATCH", "/v1/quotas/p1/Cluster".into()),
        ("DELETE", "/v1/quotas/p1/Cluster".into()),
        ("GET", "/v1/stats".into()),
        ("GET", "/v1/mservices".into()),
        ("GET", "/v1/federations".into()),
        ("POST", "/v1/federations".into()),
        ("GET", "/v1/federations/zz".into()),
        ("PATCH", "/v1/federations/zz".into()),
        ("DELETE", "/v1/federations/zz".into()),
        ("GET", "/".into()),
        ("GET", "/v1".into()),
        ("GET", "/v1/".into()),
    ];
    let queries = [
        "",
        "?limit=-1",
        "?limit=abc",
        "?limit=99999999999999999999",
        "?marker=zzz",
        "?marker=00000000-0000-0000-0000-000000000000",
        "?sort_key=;drop",
        "?sort_key=uuid&sort_dir=up",
        "?detail=foo",
        "?ca_cert_type=bad",
        "?rollback=maybe",
        "?all_tenants=x",
        "?limit=1&marker=%ff",
        "?%zz=1",
    ];
    let versions = [
        "container-infra latest",
        "container-infra 1.1",
        "container-infra 1.99",
        "container-infra abc",
        "",
        "container-infra 1.1.1",
        "magnum 1.9",
        "container-infra -1.0",
    ];
    let content_types = [
        "application/json",
        "text/plain",
        "",
        "application/json; charset=latin1",
        "multipart/form-data",
    ];
    let bodies = bodies();
    let mut sent = 0usize;
    let mut failures = Vec::new();
    let mut check = |what: String, status: u16, body: String| {
        sent += 1;
        let json_ok = serde_json::from_str::<Value>(&body).is_ok();
        if status >= 500 || (status >= 400 && !json_ok) {
            failures.push(format!(
                "{what} -> {status} {}",
                &body[..body.len().min(200)]
            ));
        }
    };
    for (method, path) in &routes {
        for q in queries {
            for v in versions {
                let body = (!matches!(*method, "GET" | "DELETE")).then_some(&b"{}"[..]);
                let r = http(
                    addr,
                    method,
                    &format!("{path}{q}"),
                    &[
                        ("Content-Type", "application/json"),
                        ("OpenStack-API-Version", v),
                    ],
                    body,
                )
                .await
                .unwrap();
                check(format!("{method} {path}{q} [{v}]"), r.status, r.text());
            }
        }
        if matches!(*method, "POST" | "PATCH") {
            for b in &bodies {
                for ct in content_types {
                    let r = http(addr, method, path, &[("Content-Type", ct), LATEST], Some(b))
                        .await
                        .unwrap();
                    let shown = String::from_utf8_lossy(&b[..b.len().min(60)]).into_owned();
                    check(
                        format!("{method} {path} [{ct}] {shown}"),
                        r.status,
                        r.text(),
                    );
                }
            }
        }
    }
    assert!(sent > 4000, "{sent}");
    assert!(
        failures.is_empty(),
        "{} of {sent}:\n{}",
        failures.len(),
        failures.join("\n")
    );
    srv.stop().await.expect("stop");
}
