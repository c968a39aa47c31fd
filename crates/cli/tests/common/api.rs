//! The all-in-one server of the tests that drive it over HTTP, and a few requests to a
//! running API (noauth, or with a Keystone token: [`Target`]; the latest microversion unless
//! a test asks for another).
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

/// Where the requests go: an API's address and, behind Keystone, the token they carry
/// (`X-Auth-Token`). A bare address is a noauth API.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl From<SocketAddr> for Target {
    fn from(addr: SocketAddr) -> Self {
        Target { addr, token: None }
    }
}

impl From<&Target> for Target {
    fn from(t: &Target) -> Self {
        t.clone()
    }
}

/// A JSON request at the latest microversion: the status and the JSON answer (a string when
/// the answer is not JSON).
pub async fn call(
    to: impl Into<Target>,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    call_at(to, method, path, "latest", body).await
}

/// [`call`] at microversion `version`.
pub async fn call_at(
    to: impl Into<Target>,
    method: &str,
    path: &str,
    version: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let to = to.into();
    let b = body.map(|b| b.to_string());
    let v = format!("container-infra {version}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("OpenStack-API-Version", v.as_str()),
    ];
    if let Some(token) = &to.token {
        headers.push(("X-Auth-Token", token.as_str()));
    }
    let r = http(
        to.addr,
        method,
        path,
        &headers,
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

/// How long a wait below gives a cluster or nodegroup (the Cluster API driver's take longer
/// than the simulator's: the management cluster's controllers and the stand-in play them).
const WAIT: Duration = Duration::from_secs(180);

pub async fn wait_status(to: impl Into<Target>, cluster: &str, want: &str) {
    let to = to.into();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (_, c) = call(&to, "GET", &format!("/v1/clusters/{cluster}"), None).await;
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

pub async fn wait_ng(to: impl Into<Target>, cluster: &str, ng: &str, want: Option<&str>) -> Value {
    let to = to.into();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (s, n) = call(
            &to,
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

/// Wait until the cluster `cluster` is gone (404).
pub async fn wait_gone(to: impl Into<Target>, cluster: &str) {
    let to = to.into();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (s, c) = call(&to, "GET", &format!("/v1/clusters/{cluster}"), None).await;
        if s == 404 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{cluster} never went: {s} {c}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
