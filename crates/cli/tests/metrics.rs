//! The metrics listeners (docs/operating.md), scraped during the end-to-end flow: the real
//! `openstack coe` CLI drives `openkeel-api` + `openkeel-conductor` (MariaDB, RabbitMQ)
//! through a recording proxy, so the test knows every request the API answered; the API's
//! counters must equal them exactly, per route template, method and status, and the
//! conductor's must show the create cast, the driver calls and the clusters of the database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;
#[path = "common/openapi_check.rs"]
mod openapi_check;
#[path = "common/split.rs"]
mod split;

use coe::Cli;
use openkeel::services::{self, ServiceOptions};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The series of one family in a scrape: label set (as written) → value.
fn family(scrape: &str, name: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in scrape.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (metric, labels) = match series.find('{') {
            Some(i) => (&series[..i], &series[i..]),
            None => (series, ""),
        };
        if metric == name {
            out.insert(labels.to_string(), value.parse().unwrap());
        }
    }
    out
}

async fn scrape(addr: SocketAddr) -> String {
    let r = openkeel_tests::http(addr, "GET", "/metrics", &[], None)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    r.text()
}

/// The route template of a path this test sends, written out by hand (not with the code
/// under test): the few shapes of the flow, anything else fails the test.
fn expected_route(method: &str, path: &str) -> &'static str {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        [] => "/",
        ["v1"] => "/v1",
        ["v1", "clustertemplates"] => "/v1/clustertemplates",
        ["v1", "clustertemplates", _] => "/v1/clustertemplates/{ct_ident}",
        ["v1", "clusters"] => "/v1/clusters",
        ["v1", "clusters", "detail"] if method == "GET" => "/v1/clusters/detail",
        ["v1", "clusters", _] => "/v1/clusters/{cluster_ident}",
        ["v1", "no-such-collection"] => "unmatched",
        _ => panic!("the flow sent {method} {path}, which this test does not expect"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listeners_count_what_the_cli_sent_through_api_and_conductor() {
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
        return;
    };
    let Some(_) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exchange = openkeel_tests::magnum::unique("okt-metrics");
    // Both services read the same file: each takes its own listener (port 0: a free one).
    let config = split::service_config_with(
        dir.path(),
        mdb.url(),
        &exchange,
        "api_metrics_listen = 127.0.0.1:0\nconductor_metrics_listen = 127.0.0.1:0\n",
    );
    let conductor = services::start_conductor(ServiceOptions {
        config: config.clone(),
        config_dirs: Vec::new(),
        bind: None,
    })
    .await
    .expect("conductor");
    let api = services::start_api(ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: Some("127.0.0.1:0".parse().unwrap()),
    })
    .await
    .expect("api");
    let api_metrics = api.metrics_addr.expect("the API's metrics listener");
    let conductor_metrics = conductor
        .metrics_addr
        .expect("the conductor's metrics listener");
    assert_ne!(api_metrics, conductor_metrics);

    // Nothing counted before the first request.
    let before = scrape(api_metrics).await;
    assert!(
        family(&before, "openkeel_api_requests_total").is_empty(),
        "{before}"
    );
    assert!(before.contains("# TYPE openkeel_api_requests_total counter\n"));

    let rec = openapi_check::Recording::start(api.addr).await;
    let proxy = rec.addr;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{proxy}/v1"),
        auth: coe::Auth::None,
    };
    cli.create_template("k8s", &[]).await;
    cli.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s",
        "--node-count",
        "1",
    ])
    .await;
    cli.wait_status("c1", "CREATE_COMPLETE").await;
    let list = cli.json(&["cluster", "list"]).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    cli.json(&["cluster", "show", "c1"]).await;
    let err = cli.fails(&["cluster", "show", "nope"]).await;
    assert!(err.contains("could not be found"), "{err}");
    // A path outside Magnum's route table, through the proxy too.
    let r = openkeel_tests::http(proxy, "GET", "/v1/no-such-collection", &[], None)
        .await
        .unwrap();
    assert_eq!(r.status, 404);

    // The API: exactly what the proxy forwarded, per route template, method and status.
    let exchanges = rec.taken();
    let sent: Vec<(String, String, u64)> = exchanges
        .iter()
        .map(|e| {
            let path = e["path"].as_str().unwrap_or_default();
            (
                e["method"].as_str().unwrap_or_default().to_string(),
                path.split('?').next().unwrap_or_default().to_string(),
                e["status"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert!(sent.iter().any(|(_, _, s)| *s == 404));
    // what the split processes answered matches docs/openapi.json too
    openapi_check::assert_exchanges_match(&exchanges, dir.path());
    let mut expected: BTreeMap<String, f64> = BTreeMap::new();
    let mut expected_count: BTreeMap<String, f64> = BTreeMap::new();
    for (method, path, status) in &sent {
        let route = expected_route(method, path);
        *expected
            .entry(format!(
                "{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}}"
            ))
            .or_default() += 1.0;
        *expected_count
            .entry(format!("{{route=\"{route}\",method=\"{method}\"}}"))
            .or_default() += 1.0;
    }
    let after = scrape(api_metrics).await;
    assert_eq!(
        family(&after, "openkeel_api_requests_total"),
        expected,
        "sent: {sent:?}\n{after}"
    );
    assert_eq!(
        family(&after, "openkeel_api_request_duration_seconds_count"),
        expected_count,
        "{after}"
    );
    // Every request's latency in the +Inf bucket, none in flight now.
    let inf: f64 = family(&after, "openkeel_api_request_duration_seconds_bucket")
        .iter()
        .filter(|(k, _)| k.contains("le=\"+Inf\""))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(inf, sent.len() as f64);
    assert_eq!(
        family(&after, "openkeel_api_requests_in_flight"),
        BTreeMap::from([(String::new(), 0.0)])
    );
    assert!(
        family(&after, "process_resident_memory_bytes")
            .values()
            .all(|v| *v > 0.0),
        "{after}"
    );
    // The API's listener serves the API's families only.
    assert!(!after.contains("openkeel_conductor_"), "{after}");

    // The conductor: the create cast, the driver calls, the status syncs, the clusters.
    let c = scrape(conductor_metrics).await;
    let rpc = family(&c, "openkeel_conductor_rpc_messages_total");
    assert_eq!(
        rpc.get("{method=\"cluster_create\",outcome=\"ok\"}"),
        Some(&1.0),
        "{c}"
    );
    assert_eq!(
        rpc.keys()
            .filter(|k| k.contains("method=\"cluster_"))
            .count(),
        1,
        "{c}"
    );
    let calls = family(&c, "openkeel_conductor_driver_calls_total");
    assert_eq!(
        calls.get("{driver=\"simulator\",operation=\"create_cluster\",outcome=\"ok\"}"),
        Some(&1.0),
        "{c}"
    );
    assert!(
        calls
            .get("{driver=\"simulator\",operation=\"update_cluster_status\",outcome=\"ok\"}")
            .is_some_and(|n| *n >= 1.0),
        "{c}"
    );
    assert_eq!(
        family(&c, "openkeel_conductor_driver_call_duration_seconds_count")
            .get("{driver=\"simulator\",operation=\"create_cluster\"}"),
        Some(&1.0),
        "{c}"
    );
    assert!(
        family(&c, "openkeel_conductor_status_sync_duration_seconds_count")
            .get("")
            .is_some_and(|n| *n >= 1.0),
        "{c}"
    );
    // Clusters by status: what the database holds, every other status 0.
    let rows = openkeel_db::cluster::list(
        &db,
        &openkeel_db::Scope::admin_all_tenants(),
        &openkeel_db::ClusterFilters::default(),
        &openkeel_db::Page::all(),
    )
    .await
    .unwrap();
    let mut in_db: BTreeMap<String, f64> = BTreeMap::new();
    for r in &rows {
        let s = r.status.map(|s| s.as_str()).unwrap_or("none");
        *in_db.entry(format!("{{status=\"{s}\"}}")).or_default() += 1.0;
    }
    assert_eq!(in_db.get("{status=\"CREATE_COMPLETE\"}"), Some(&1.0));
    let gauge = family(&c, "openkeel_conductor_clusters");
    assert_eq!(
        gauge.len(),
        openkeel_core::objects::ClusterStatus::ALL.len(),
        "{c}"
    );
    for (labels, n) in &gauge {
        assert_eq!(
            *n,
            in_db.get(labels).copied().unwrap_or(0.0),
            "{labels}\n{c}"
        );
    }
    assert!(!c.contains("openkeel_api_"), "{c}");

    // Only /metrics, only GET / HEAD.
    let r = openkeel_tests::http(conductor_metrics, "GET", "/", &[], None)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    let r = openkeel_tests::http(api_metrics, "POST", "/metrics", &[], Some(b""))
        .await
        .unwrap();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));

    api.stop().await.unwrap();
    conductor.stop().await;
    // The listeners went with their services.
    assert!(
        openkeel_tests::http(api_metrics, "GET", "/metrics", &[], None)
            .await
            .is_err()
    );
}

/// The all-in-one serves the API's and the conductor's metrics on one listener.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_all_in_one_serves_both_halves_on_the_api_metrics_listener() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("test.conf");
    std::fs::write(
        &conf,
        "[openkeel]\nstatus_sync_interval = 1\napi_metrics_listen = 127.0.0.1:0\n",
    )
    .unwrap();
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).unwrap();
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap();
    let metrics = srv.metrics_addr.expect("metrics listener");
    let t = openkeel_tests::http(
        srv.addr,
        "POST",
        "/clustertemplates",
        &[("Content-Type", "application/json")],
        Some(
            br#"{"name": "t", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small"}"#,
        ),
    )
    .await
    .unwrap();
    assert_eq!(t.status, 201, "{}", t.text());
    let h = openkeel_tests::http(srv.addr, "GET", "/healthcheck", &[], None)
        .await
        .unwrap();
    assert_eq!(h.status, 200);
    let s = scrape(metrics).await;
    assert_eq!(
        family(&s, "openkeel_api_requests_total"),
        BTreeMap::from([
            (
                "{route=\"/healthcheck\",method=\"GET\",status=\"200\"}".to_string(),
                1.0
            ),
            (
                "{route=\"/v1/clustertemplates\",method=\"POST\",status=\"201\"}".to_string(),
                1.0
            ),
        ]),
        "{s}"
    );
    assert_eq!(
        family(&s, "openkeel_conductor_clusters").get("{status=\"CREATE_COMPLETE\"}"),
        Some(&0.0),
        "{s}"
    );
    srv.stop().await.unwrap();
}
