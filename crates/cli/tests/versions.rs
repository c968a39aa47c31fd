#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of `GET /`, `GET /v1`, microversion negotiation and the error envelope,
//! against the all-in-one server started in-process. Expected bodies are the documents
//! captured from magnum-api 23.0.0 (`crates/api/tests/data/*.json`, host rewritten).

use openkeel_tests::{http, RawResponse};
use std::net::SocketAddr;

const ROOT: &str = include_str!("../../api/tests/data/root-document.json");
const V1: &str = include_str!("../../api/tests/data/v1-document.json");
const CAPTURED_HOST: &str = "127.0.0.1:9611";

async fn server() -> (openkeel::allinone::Running, SocketAddr) {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let config = openkeel::allinone::load_config(&dir, &[], &[]).expect("config");
    let opts = openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: Vec::new(),
    };
    let running = openkeel::allinone::start(opts).await.expect("start");
    let addr = running.addr;
    (running, addr)
}

fn expected(doc: &str, addr: SocketAddr) -> String {
    doc.trim_end_matches('\n')
        .replace(CAPTURED_HOST, &addr.to_string())
}

fn assert_request_id(r: &RawResponse) {
    let id = r.header("x-openstack-request-id").expect("request id");
    assert!(id.starts_with("req-") && id.len() == 40, "{id}");
}

fn assert_no_version_headers(r: &RawResponse) {
    for h in [
        "openstack-api-version",
        "openstack-api-minimum-version",
        "openstack-api-maximum-version",
        "vary",
    ] {
        assert!(r.header(h).is_none(), "unexpected {h}");
    }
}

fn assert_version_headers(r: &RawResponse, v: &str) {
    assert_eq!(
        r.header("openstack-api-minimum-version"),
        Some("container-infrastructure-management 1.1")
    );
    assert_eq!(
        r.header("openstack-api-maximum-version"),
        Some("container-infrastructure-management 1.14")
    );
    assert_eq!(
        r.header("openstack-api-version"),
        Some(format!("container-infrastructure-management {v}").as_str())
    );
    assert_eq!(r.header("vary"), Some("OpenStack-API-Version"));
}

const EMPTY_405: &str = r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "", "detail": "", "links": []}]}"#;

#[tokio::test]
async fn root_document() {
    let (srv, addr) = server().await;
    let r = http(addr, "GET", "/", &[("Accept", "*/*")], None)
        .await
        .expect("GET /");
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), expected(ROOT, addr));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    assert_request_id(&r);
    assert_no_version_headers(&r);
    // The root ignores the version header entirely.
    let r = http(
        addr,
        "GET",
        "/",
        &[("OpenStack-API-Version", "container-infra 9.9")],
        None,
    )
    .await
    .expect("GET /");
    assert_eq!(r.status, 200);
    assert_no_version_headers(&r);
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn v1_document_with_and_without_slash() {
    let (srv, addr) = server().await;
    for path in ["/v1", "/v1/"] {
        let r = http(addr, "GET", path, &[], None).await.expect("GET /v1");
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.text(), expected(V1, addr));
        assert_version_headers(&r, "1.1");
        assert_request_id(&r);
    }
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn negotiation() {
    let (srv, addr) = server().await;
    let cases = [
        ("container-infra latest", "1.14"),
        ("compute latest", "1.14"),
        ("container-infra 1.5", "1.5"),
        ("container-infra    1.5", "1.5"),
        ("container-infra 1.05", "1.5"),
        ("container-infrastructure 1.9", "1.9"),
        ("container-infrastructure-management 1.14", "1.14"),
    ];
    for (header, v) in cases {
        let r = http(
            addr,
            "GET",
            "/v1",
            &[("OpenStack-API-Version", header)],
            None,
        )
        .await
        .expect("GET");
        assert_eq!(r.status, 200, "{header}");
        assert_version_headers(&r, v);
    }
    // The old header name is not recognised: answered at 1.1.
    let r = http(
        addr,
        "GET",
        "/v1",
        &[("X-OpenStack-Magnum-API-Version", "1.9")],
        None,
    )
    .await
    .expect("GET");
    assert_version_headers(&r, "1.1");
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn unsupported_versions() {
    let (srv, addr) = server().await;
    let r = http(
        addr,
        "GET",
        "/v1",
        &[("OpenStack-API-Version", "container-infra 1.99")],
        None,
    )
    .await
    .expect("GET");
    assert_eq!(r.status, 406);
    assert_version_headers(&r, "1.99");
    assert_eq!(
        r.text(),
        r#"{"errors": [{"max_version": "1.14", "min_version": "1.1", "code": "magnum.microversion-unsupported", "links": [{"rel": "help", "href": "http://docs.openstack.org/api-guide/compute/microversions.html"}], "title": "Requested microversion is unsupported"}]}"#
    );
    let r = http(
        addr,
        "GET",
        "/v1",
        &[
            ("OpenStack-API-Version", "container-infra 2.1"),
            ("Accept", "application/json"),
        ],
        None,
    )
    .await
    .expect("GET");
    assert_eq!(r.status, 406);
    assert!(r.text().contains(r#""description": "Mutually exclusive versions requested. Version 2.1 requested but not supported by this service.The supported version range is: [container-infrastructure-management 1.1, container-infrastructure-management 1.14].""#), "{}", r.text());

    // Parse errors: no version headers; detail only when JSON is preferred.
    let r = http(
        addr,
        "GET",
        "/v1",
        &[
            ("OpenStack-API-Version", "container-infra 1.x"),
            ("Accept", "application/json"),
        ],
        None,
    )
    .await
    .expect("GET");
    assert_eq!(r.status, 406);
    assert_no_version_headers(&r);
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 406, "title": "Not Acceptable", "detail": "Invalid value for OpenStack-API-Version header", "links": []}]}"#
    );
    let r = http(
        addr,
        "GET",
        "/v1",
        &[("OpenStack-API-Version", "1.1")],
        None,
    )
    .await
    .expect("GET");
    assert_eq!(r.status, 406);
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 406, "title": "", "detail": "", "links": []}]}"#
    );
    let r = http(
        addr,
        "GET",
        "/v1",
        &[
            ("OpenStack-API-Version", "Container-Infra 1.5"),
            ("Accept", "application/json"),
        ],
        None,
    )
    .await
    .expect("GET");
    assert!(r
        .text()
        .contains("Invalid service type for OpenStack-API-Version header"));
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn routing_errors() {
    let (srv, addr) = server().await;
    let r = http(addr, "POST", "/", &[], Some(b"{}"))
        .await
        .expect("POST /");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET"));
    assert_eq!(r.text(), EMPTY_405);
    assert_request_id(&r);

    let r = http(
        addr,
        "DELETE",
        "/v1",
        &[("Accept", "application/json")],
        None,
    )
    .await
    .expect("DELETE");
    assert_eq!(r.status, 405);
    assert_no_version_headers(&r);
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "Method Not Allowed", "detail": "", "links": []}]}"#
    );

    let r = http(addr, "HEAD", "/", &[], None).await.expect("HEAD");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("content-length"), Some("14"));

    let r = http(addr, "GET", "/v1/nope", &[], None).await.expect("GET");
    assert_eq!(r.status, 404);
    assert_no_version_headers(&r);
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 404, "title": "", "detail": "", "links": []}]}"#
    );
    let r = http(
        addr,
        "GET",
        "/nope/x",
        &[("Accept", "application/json")],
        None,
    )
    .await
    .expect("GET");
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 404, "title": "Not Found", "detail": "", "links": []}]}"#
    );

    // The root document is not exempt from the Accept check.
    let r = http(addr, "GET", "/", &[("Accept", "text/html")], None)
        .await
        .expect("GET");
    assert_eq!(r.status, 406);
    assert_eq!(
        r.text(),
        r#"{"errors": [{"request_id": "", "code": "", "status": 406, "title": "", "detail": "", "links": []}]}"#
    );
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn outside_the_api_pipeline() {
    let (srv, addr) = server().await;
    let r = http(addr, "OPTIONS", "/v1/clusters", &[], None)
        .await
        .expect("OPTIONS");
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert!(r.header("x-openstack-request-id").is_none());

    let r = http(addr, "GET", "/healthcheck", &[], None)
        .await
        .expect("healthcheck");
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "OK");
    assert_eq!(r.header("content-type"), Some("text/plain; charset=UTF-8"));
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn request_ids_are_fresh() {
    let (srv, addr) = server().await;
    let a = http(
        addr,
        "GET",
        "/",
        &[(
            "X-OpenStack-Request-ID",
            "req-11111111-1111-1111-1111-111111111111",
        )],
        None,
    )
    .await
    .expect("GET");
    let b = http(addr, "GET", "/", &[], None).await.expect("GET");
    assert_ne!(
        a.header("x-openstack-request-id"),
        Some("req-11111111-1111-1111-1111-111111111111")
    );
    assert_ne!(
        a.header("x-openstack-request-id"),
        b.header("x-openstack-request-id")
    );
    srv.stop().await.expect("stop");
}

/// A 204 carries no `Content-Length` (RFC 9110 §8.6 forbids it; Magnum sends `0`).
#[tokio::test]
async fn no_content_has_no_content_length() {
    let (srv, addr) = server().await;
    let body = br#"{"name": "t204", "image_id": "ubuntu-jammy", "coe": "kubernetes", "external_network_id": "public"}"#;
    let r = http(
        addr,
        "POST",
        "/v1/clustertemplates",
        &[
            ("Content-Type", "application/json"),
            ("OpenStack-API-Version", "container-infra latest"),
        ],
        Some(body),
    )
    .await
    .expect("POST");
    assert_eq!(r.status, 201, "{}", r.text());
    let r = http(
        addr,
        "DELETE",
        "/v1/clustertemplates/t204",
        &[("OpenStack-API-Version", "container-infra latest")],
        None,
    )
    .await
    .expect("DELETE");
    assert_eq!(r.status, 204, "{}", r.text());
    assert!(r.header("content-length").is_none());
    assert!(r.body.is_empty());
    assert_version_headers(&r, "1.14");
    srv.stop().await.expect("stop");
}

/// The all-in-one conductor reports itself in `magnum_service` at start (conductor.md §5.3),
/// so `openstack coe service list` shows it `up`.
#[tokio::test]
async fn the_conductor_heartbeat_shows_in_mservices() {
    let (srv, addr) = server().await;
    let mut body = serde_json::Value::Null;
    for _ in 0..100 {
        let r = http(addr, "GET", "/v1/mservices", &[], None)
            .await
            .expect("GET /v1/mservices");
        assert_eq!(r.status, 200, "{}", r.text());
        body = serde_json::from_str(&r.text()).expect("json");
        // Magnum's heartbeat (and OpenKeel's) creates the row, then reports it up
        // (report_count 0 -> 1): wait for the report, not just the row.
        if body["mservices"][0]["report_count"].as_i64().unwrap_or(0) >= 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let services = body["mservices"].as_array().expect("mservices");
    assert_eq!(services.len(), 1, "{body}");
    assert_eq!(services[0]["binary"], "magnum-conductor");
    assert_eq!(services[0]["state"], "up");
    assert_eq!(services[0]["report_count"], 1);
    srv.stop().await.expect("stop");
}
