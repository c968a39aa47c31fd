//! The all-in-one server with `[openkeel] auth_strategy = keystone` in front of the real
//! Keystone 30.0.0 that `tests/run.sh` starts: every 401 path with keystonemiddleware's exact
//! answer, public routes, forged identity headers, the context filled from the token, the
//! 503 of an unreachable Keystone, and tokens kept out of the logs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::{http, Keystone, RawResponse};
use serde_json::Value;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub const UNAUTHORIZED_BODY: &str = r#"{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}"#;

/// The `[keystone_authtoken]` section for the test Keystone, with the magnum service user.
pub fn authtoken_conf(ks: &Keystone, auth_url: &str) -> String {
    format!(
        "[openkeel]\nauth_strategy = keystone\n\n[keystone_authtoken]\nwww_authenticate_uri = {www}\nauth_url = {auth_url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n",
        www = ks.url,
        pw = ks.password("magnum"),
    )
}

async fn start(dir: &Path, conf_text: &str) -> (openkeel::allinone::Running, SocketAddr) {
    let conf = dir.join("test.conf");
    std::fs::write(&conf, conf_text).expect("conf");
    let config = openkeel::allinone::load_config(dir, &[conf], &[]).expect("config");
    let running = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: vec![dir.to_path_buf()],
    })
    .await
    .expect("start");
    let addr = running.addr;
    (running, addr)
}

fn assert_401(r: &RawResponse, ks: &Keystone, what: &str) {
    assert_eq!(r.status, 401, "{what}: {}", r.text());
    assert_eq!(r.text(), UNAUTHORIZED_BODY, "{what}");
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=UTF-8"),
        "{what}"
    );
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Keystone uri=\"{}\"", ks.url).as_str()),
        "{what}"
    );
    assert!(
        r.header("x-openstack-request-id")
            .is_some_and(|id| id.starts_with("req-")),
        "{what}"
    );
    assert_eq!(r.header("openstack-api-version"), None, "{what}");
}

/// A writer collecting the log output of the whole test binary.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() -> Logs {
    static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Logs::default();
        let w = logs.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || w.clone())
            .try_init();
        logs
    })
    .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_auth_paths() {
    let logs = capture_logs();
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (srv, addr) = start(dir.path(), &authtoken_conf(&ks, &ks.url)).await;
    let demo = ks.token("demo").await;

    // Public routes: no token needed, and a bad token is not even looked at.
    for path in ["/", "/v1", "/v1/"] {
        let r = http(addr, "GET", path, &[], None).await.unwrap();
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        let r = http(addr, "GET", path, &[("X-Auth-Token", "bogus")], None)
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{path} with a bad token");
    }
    // `/v1.json` is public for the middleware too (whatever the API then answers).
    let r = http(addr, "GET", "/v1.json", &[], None).await.unwrap();
    assert_ne!(r.status, 401, "{}", r.text());

    // Every 401 path, before routing, Accept and microversion checks.
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, String)>);
    let cases: Vec<Case> = vec![
        ("GET", "/v1/clusters", vec![]),
        ("GET", "/clusters", vec![]),
        ("GET", "/v1/no-such-route", vec![]),
        ("POST", "/v1/clustertemplates", vec![]),
        ("GET", "/v1/clusters", vec![("X-Auth-Token", String::new())]),
        (
            "GET",
            "/v1/clusters",
            vec![("X-Auth-Token", "bogus".into())],
        ),
        (
            "GET",
            "/v1/clusters",
            vec![("X-Storage-Token", "bogus".into())],
        ),
        (
            "GET",
            "/v1/clusters",
            vec![
                ("X-Auth-Token", "bogus".into()),
                ("Accept", "text/html".into()),
            ],
        ),
        (
            "GET",
            "/v1/clusters",
            vec![
                ("X-Auth-Token", "bogus".into()),
                ("OpenStack-API-Version", "container-infra 9.9".into()),
            ],
        ),
        // forged identity headers without a token
        (
            "GET",
            "/v1/mservices",
            vec![
                ("X-Roles", "admin".into()),
                ("X-User-Id", "u".into()),
                ("X-Project-Id", "p".into()),
                ("X-Identity-Status", "Confirmed".into()),
            ],
        ),
        // a valid user token with an invalid service token
        (
            "GET",
            "/v1/clusters",
            vec![
                ("X-Auth-Token", demo.clone()),
                ("X-Service-Token", "bogus".into()),
            ],
        ),
        // a service token alone
        (
            "GET",
            "/v1/clusters",
            vec![("X-Service-Token", ks.token("magnum").await)],
        ),
    ];
    for (method, path, headers) in &cases {
        let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let body = (*method == "POST").then_some(&b"{}"[..]);
        let r = http(addr, method, path, &h, body).await.unwrap();
        assert_401(
            &r,
            &ks,
            &format!(
                "{method} {path} {:?}",
                headers.iter().map(|(k, _)| k).collect::<Vec<_>>()
            ),
        );
    }

    // A revoked token (never validated before, so not cached).
    let revoked = ks.token("demo").await;
    ks.revoke(&revoked).await;
    let r = http(
        addr,
        "GET",
        "/v1/clusters",
        &[("X-Auth-Token", &revoked)],
        None,
    )
    .await
    .unwrap();
    assert_401(&r, &ks, "revoked token");

    // Valid: the version headers and the view are there.
    let r = http(
        addr,
        "GET",
        "/v1/clusters",
        &[("X-Auth-Token", &demo)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("openstack-api-version").is_some());
    assert_eq!(r.header("www-authenticate"), None);
    // With a valid service token too.
    let svc = ks.token("magnum").await;
    let r = http(
        addr,
        "GET",
        "/v1/clusters",
        &[("X-Auth-Token", &demo), ("X-Service-Token", &svc)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());

    // Forged identity headers next to a real token are replaced by the token's.
    let forged = [
        ("X-Auth-Token", demo.as_str()),
        ("X-Roles", "admin"),
        ("X-Project-Id", "someone-else"),
        ("X-User-Id", "someone"),
        ("X-Is-Admin-Project", "True"),
    ];
    let r = http(addr, "GET", "/v1/mservices", &forged, None)
        .await
        .unwrap();
    assert_eq!(r.status, 403, "a member stays a member: {}", r.text());
    assert!(r.text().contains("magnum-service:get_all"), "{}", r.text());
    let admin = ks.token("admin").await;
    let r = http(
        addr,
        "GET",
        "/v1/mservices",
        &[("X-Auth-Token", &admin)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());

    // The context comes from the token: what demo creates belongs to demo's user and project.
    let body = br#"{"name": "ks-template", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small"}"#;
    let r = http(
        addr,
        "POST",
        "/v1/clustertemplates",
        &[
            ("X-Auth-Token", &demo),
            ("Content-Type", "application/json"),
            ("X-Project-Id", "forged"),
            ("X-User-Id", "forged"),
        ],
        Some(body),
    )
    .await
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.text());
    let t: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(t["project_id"], ks.project_id("demo").as_str());
    assert_eq!(t["user_id"], ks.user_id("demo").as_str());
    let request_id = r.header("x-openstack-request-id").unwrap().to_string();
    // alt cannot see it; the demo reader can.
    let alt = ks.token("alt").await;
    let path = format!("/v1/clustertemplates/{}", t["uuid"].as_str().unwrap());
    let r = http(addr, "GET", &path, &[("X-Auth-Token", &alt)], None)
        .await
        .unwrap();
    assert_eq!(r.status, 404, "{}", r.text());
    let reader = ks.token("demo-reader").await;
    let r = http(addr, "GET", &path, &[("X-Auth-Token", &reader)], None)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());

    srv.stop().await.unwrap();

    // Logs: request id, user id and project id are there; no token ever is.
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert!(text.contains(&request_id), "request id not logged");
    assert!(text.contains(&ks.user_id("demo")), "user id not logged");
    assert!(
        text.contains(&ks.project_id("demo")),
        "project id not logged"
    );
    for (name, token) in [
        ("demo", &demo),
        ("admin", &admin),
        ("service", &svc),
        ("revoked", &revoked),
        ("alt", &alt),
        ("reader", &reader),
    ] {
        assert!(
            !text.contains(token.as_str()),
            "the {name} token appears in the logs"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_unreachable_is_503() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v3", listener.local_addr().unwrap());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let (srv, addr) = start(dir.path(), &authtoken_conf(&ks, &dead)).await;
    let token = ks.token("demo").await;
    let r = http(
        addr,
        "GET",
        "/v1/clusters",
        &[("X-Auth-Token", &token), ("Accept", "application/json")],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r
        .text()
        .contains("The Keystone service is temporarily unavailable."));
    // No token: still 401, Keystone is not needed to say so.
    let r = http(addr, "GET", "/v1/clusters", &[], None).await.unwrap();
    assert_eq!(r.status, 401);
    srv.stop().await.unwrap();
}

#[tokio::test]
async fn keystone_strategy_needs_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("test.conf");
    std::fs::write(&conf, "[openkeel]\nauth_strategy = keystone\n").unwrap();
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).unwrap();
    let err = openkeel::wiring::auth_mode(&config).expect_err("refused");
    assert!(err.to_string().contains("auth_url"), "{err}");
}
