//! A few requests to a running API (noauth, latest microversion) for the tests that drive
//! the services over HTTP.
#![allow(dead_code, clippy::unwrap_used)]

use openkeel_tests::http;
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;

pub async fn call(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
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
