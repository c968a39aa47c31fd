//! The all-in-one server of the tests that drive it over HTTP, and a few requests to a
//! running API (noauth; the latest microversion unless a test asks for another).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::http;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;

/// The all-in-one (embedded default: SQLite in a temporary directory, noauth, the simulator
/// driver) on a free loopback port, its status loop every second.
pub async fn server() -> (openkeel::allinone::Running, SocketAddr) {
    server_with("[openkeel]\nstatus_sync_interval = 1\n").await
}

/// The all-in-one with `conf` as an extra configuration file.
pub async fn server_with(conf: &str) -> (openkeel::allinone::Running, SocketAddr) {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let file = dir.join("extra.conf");
    std::fs::write(&file, conf).expect("config file");
    let config = openkeel::allinone::load_config(&dir, &[file], &[]).expect("config");
    let opts = openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: Vec::new(),
    };
    let running = openkeel::allinone::start(opts).await.expect("start");
    let addr = running.addr;
    (running, addr)
}

/// A JSON request at the latest microversion: the status and the JSON answer (a string when
/// the answer is not JSON).
pub async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    call_at(addr, method, path, "latest", body).await
}

/// [`call`] at microversion `version`.
pub async fn call_at(
    addr: SocketAddr,
    method: &str,
    path: &str,
    version: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let b = body.map(|b| b.to_string());
    let v = format!("container-infra {version}");
    let r = http(
        addr,
        method,
        path,
        &[
            ("Content-Type", "application/json"),
            ("OpenStack-API-Version", v.as_str()),
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

/// The `detail` of an error envelope.
pub fn detail(v: &Value) -> &str {
    v["errors"][0]["detail"].as_str().unwrap_or_default()
}

pub async fn wait_status(addr: SocketAddr, cluster: &str, want: &str) {
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

pub async fn wait_ng(addr: SocketAddr, cluster: &str, ng: &str, want: Option<&str>) -> Value {
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
