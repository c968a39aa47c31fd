#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of `GET /`, `GET /v1`, microversion negotiation and the error envelope,
//! against the all-in-one server started in-process. Expected bodies are the documents
//! captured from magnum-api 23.0.0 (`crates/api/tests/data/*.json`, host rewritten).

#[path = "common/api.rs"]
mod api;

use api::server_with;
use openkeel_tests::{http, RawResponse};
use std::net::SocketAddr;

const ROOT: &str = include_str!("../../api/tests/data/root-document.json");
const V1: &str = include_str!("../../api/tests/data/v1-document.json");
const CAPTURED_HOST: &str = "127.0.0.1:9611";

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
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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

/// One answer, exactly: status, body, `Allow`, and the version headers (`Some(v)`: present,
/// echoing `v`; `None`: absent).
fn exactly(r: &RawResponse, status: u16, body: &str, version: Option<&str>, allow: Option<&str>) {
    assert_eq!((r.status, r.text().as_str()), (status, body));
    assert_eq!(r.header("allow"), allow);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    match version {
        Some(v) => assert_version_headers(r, v),
        None => assert_no_version_headers(r),
    }
    assert_request_id(r);
}

/// Routing corners where pecan, WSME and WSGI decide, each answer as the real magnum-api
/// 23.0.0 gave it (issue 18; captured with the noauth pipeline, `Accept: application/json`).
#[tokio::test]
async fn routing_corners_as_magnum() {
    let (srv, addr) = server_with("").await;
    let call = |method: &'static str,
                path: &'static str,
                version: &'static str,
                body: Option<&'static str>| async move {
        let mut h = vec![("Accept", "application/json")];
        if !version.is_empty() {
            h.push(("OpenStack-API-Version", version));
        }
        if body.is_some() {
            h.push(("Content-Type", "application/json"));
        }
        http(addr, method, path, &h, body.map(str::as_bytes))
            .await
            .expect(path)
    };
    let v = |n: &str| format!("container-infra {n}");
    let v11: &'static str = Box::leak(v("1.11").into_boxed_str());
    let v12: &'static str = Box::leak(v("1.12").into_boxed_str());
    let v14: &'static str = Box::leak(v("1.14").into_boxed_str());
    let patch_406 = |n: &str| {
        format!(
            r#"{{"errors": [{{"request_id": "", "code": "", "status": 406, "title": "Not Acceptable", "detail": "Version {n} was requested but the requested API patch is not supported for this version.", "links": []}}]}}"#
        )
    };
    let json_405 = r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "Method Not Allowed", "detail": "", "links": []}]}"#;

    // /v1/credentials below 1.12: the routing 406 for any method, no version headers.
    for (m, p, ver, n) in [
        ("PATCH", "/v1/credentials/abc", "", "1.1"),
        ("PATCH", "/v1/credentials/abc", v11, "1.11"),
        ("GET", "/v1/credentials", "", "1.1"),
        ("GET", "/v1/credentials", v11, "1.11"),
        ("POST", "/v1/credentials", v11, "1.11"),
        ("GET", "/credentials", v11, "1.11"),
    ] {
        exactly(&call(m, p, ver, None).await, 406, &patch_406(n), None, None);
    }
    // ... also with a body that would be refused at 1.12
    let r = call("PATCH", "/v1/credentials/abc", v11, Some(r#"{"x": 1}"#)).await;
    exactly(&r, 406, &patch_406("1.11"), None, None);
    // At 1.12: only PATCH of a member; a body argument other than cluster_ident is refused.
    for (m, p) in [
        ("GET", "/v1/credentials"),
        ("POST", "/v1/credentials"),
        ("PUT", "/v1/credentials"),
        ("GET", "/v1/credentials/abc"),
        ("DELETE", "/v1/credentials/abc"),
        ("GET", "/v1/credentials/a/b"),
    ] {
        exactly(
            &call(m, p, v12, None).await,
            405,
            json_405,
            None,
            Some("PATCH"),
        );
    }
    let r = call("PATCH", "/v1/credentials/abc", v12, Some(r#"{"x": 1}"#)).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Unknown argument: \"x\"", "detail": "Unknown argument: \"x\"", "links": []}]}"#,
        Some("1.12"),
        None,
    );
    let r = call("PATCH", "/v1/credentials", v12, None).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Missing argument: \"cluster_ident\"", "detail": "Missing argument: \"cluster_ident\"", "links": []}]}"#,
        Some("1.12"),
        None,
    );
    let r = call("PATCH", "/v1/credentials/abc", v12, Some("[]")).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Request must be a JSON dict", "detail": "Request must be a JSON dict", "links": []}]}"#,
        Some("1.12"),
        None,
    );

    // Segments before a collection's name are pecan routing arguments: get_all('v2').
    let marker = |m: &str| {
        format!(
            r#"{{"errors": [{{"request_id": "", "code": "client", "status": 400, "title": "Invalid input for field/attribute marker", "detail": "Invalid input for field/attribute marker. Value: '{m}'. unable to convert to uuid. Error: Expected a uuid but received {m}.", "links": []}}]}}"#
        )
    };
    for (p, m) in [
        ("/v2/clusters", "v2"),
        ("/V1/clusters", "V1"),
        ("/v1/v1/clusters", "v1"),
        ("/v2/clustertemplates", "v2"),
        ("/v2/federations", "v2"),
        ("/v2/clusters/detail", "v2"),
        ("/a/b/clusters", "a"),
    ] {
        exactly(
            &call("GET", p, v14, None).await,
            400,
            &marker(m),
            Some("1.14"),
            None,
        );
    }
    let r = call("GET", "/v2/quotas", v14, None).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Invalid input for field/attribute marker", "detail": "Invalid input for field/attribute marker. Value: 'v2'. unable to convert to int. Error: invalid literal for int() with base 10: 'v2'", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    let r = call("POST", "/v2/clusters", v14, Some("{}")).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Invalid input for field/attribute cluster", "detail": "Invalid input for field/attribute cluster. Value: 'v2'. unable to convert to Cluster. Error: Cluster.__init__() takes 1 positional argument but 2 were given", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    let r = call("POST", "/v2/certificates", v14, Some("{}")).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Invalid input for field/attribute certificate", "detail": "Invalid input for field/attribute certificate. Value: 'v2'. unable to convert to Certificate. Error: Certificate.__init__() takes 1 positional argument but 2 were given", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    let r = call("DELETE", "/v2/clusters", v14, None).await;
    exactly(
        &r,
        404,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 404, "title": "Cluster v2 could not be found", "detail": "Cluster v2 could not be found.", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    let r = call("GET", "/v2/stats", v14, None).await;
    exactly(
        &r,
        200,
        r#"{"clusters": 0, "nodes": 0}"#,
        Some("1.14"),
        None,
    );
    let not_found = r#"{"errors": [{"request_id": "", "code": "", "status": 404, "title": "Not Found", "detail": "", "links": []}]}"#;
    for p in [
        "/v2/clusters/abc",
        "/v2/mservices",
        "/a/b/c/d/e/clusters",
        "/v2",
        "/V1",
    ] {
        exactly(&call("GET", p, v14, None).await, 404, not_found, None, None);
    }
    exactly(
        &call("GET", "/v2/certificates", v14, None).await,
        405,
        json_405,
        None,
        Some("GET, PATCH, POST"),
    );

    // GET ?_method=delete|put: pecan's 405 without Allow, before the version and Accept checks.
    for p in [
        "/v1/clusters?_method=delete",
        "/v1/clusters?_method=DELETE",
        "/v1/clusters?_method=put",
        "/v1/clusters/abc?_method=delete",
        "/v1/nope?_method=delete",
        "/v1/clusters?_method=get&_method=delete",
        "/v1/clusters?%5Fmethod=de%6Cete",
        "/?_method=delete",
    ] {
        exactly(&call("GET", p, v14, None).await, 405, json_405, None, None);
    }
    exactly(
        &call(
            "GET",
            "/v1/clusters?_method=delete",
            "container-infra 1.99",
            None,
        )
        .await,
        405,
        json_405,
        None,
        None,
    );
    let r = http(
        addr,
        "GET",
        "/v1/clusters?_method=delete",
        &[("Accept", "text/html")],
        None,
    )
    .await
    .expect("GET");
    exactly(&r, 405, EMPTY_405, None, None);
    let unknown_method = r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Unknown argument: \"_method\"", "detail": "Unknown argument: \"_method\"", "links": []}]}"#;
    exactly(
        &call("GET", "/v1/clusters?_method=get", v14, None).await,
        400,
        unknown_method,
        Some("1.14"),
        None,
    );
    exactly(
        &call("POST", "/v1/clusters?_method=delete", v14, Some("{}")).await,
        400,
        unknown_method,
        Some("1.14"),
        None,
    );
    // Otherwise `_method` is the method pecan routes by (any request method): get, post,
    // delete and patch reach that handler, which refuses `_method` as an unknown argument ...
    for (m, p, body) in [
        ("DELETE", "/v1/clusters/abc?_method=get", None),
        ("POST", "/v1/clusters/abc?_method=delete", Some("{}")),
        ("PATCH", "/v1/clusters/abc?_method=delete", Some("[]")),
        ("DELETE", "/v1/clusters/abc?_method=patch", None),
        ("GET", "/v1/clusters/abc/nodegroups?_method=post", None),
        ("GET", "/v1?_method=get", None),
    ] {
        let r = call(m, p, v14, body).await;
        exactly(&r, 400, unknown_method, Some("1.14"), None);
    }
    let r = call("GET", "/v1/clusters/abc?_method=post", v14, None).await;
    exactly(
        &r,
        400,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Invalid input for field/attribute cluster", "detail": "Invalid input for field/attribute cluster. Value: 'abc'. unable to convert to Cluster. Error: Cluster.__init__() takes 1 positional argument but 2 were given", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    // ... (the root's and /v1's handlers take no argument at all) ...
    exactly(
        &call("GET", "/?_method=get", v14, None).await,
        400,
        unknown_method,
        None,
        None,
    );
    let unknown_foo = r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Unknown argument: \"foo\"", "detail": "Unknown argument: \"foo\"", "links": []}]}"#;
    exactly(
        &call("GET", "/?foo=1", v14, None).await,
        400,
        unknown_foo,
        None,
        None,
    );
    exactly(
        &call("GET", "/v1/?foo=1", v14, None).await,
        400,
        unknown_foo,
        Some("1.14"),
        None,
    );
    // ... and put, head, an unknown or an empty value reach no handler: the level's 405.
    let all = "DELETE, GET, PATCH, POST";
    for (m, p, body, ver, allow) in [
        ("GET", "/v1/clusters?_method=foo", None, v14, all),
        ("GET", "/v1/clusters?_method=", None, v14, all),
        ("GET", "/v1/clusters?_method=head", None, v14, all),
        ("POST", "/v1/clusters?_method=put", Some("{}"), v14, all),
        ("DELETE", "/v1/clusters/abc?_method=put", None, v14, all),
        (
            "PATCH",
            "/v1/clusters/abc?_method=foo",
            Some("[]"),
            v14,
            all,
        ),
        (
            "GET",
            "/v1/clusters/abc/nodegroups?_method=foo",
            None,
            v14,
            all,
        ),
        ("GET", "/?_method=foo", None, v14, "GET"),
        ("GET", "/?_method=post", None, v14, "GET"),
        ("GET", "/v1?_method=", None, v14, "GET"),
        ("GET", "/v1/nope?_method=foo", None, v14, "GET"),
        ("GET", "/v1/credentials/abc?_method=get", None, v12, "PATCH"),
        (
            "POST",
            "/v1/clusters/abc/actions/resize?_method=get",
            Some("{}"),
            v14,
            "",
        ),
    ] {
        exactly(
            &call(m, p, ver, body).await,
            405,
            json_405,
            None,
            Some(allow),
        );
    }

    // The path is percent-decoded (WSGI's PATH_INFO) before it is split and looked up.
    let r = call("GET", "/v1/clustertemplates/%7Bweird%7D", v14, None).await;
    exactly(
        &r,
        404,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 404, "title": "ClusterTemplate {weird} could not be found", "detail": "ClusterTemplate {weird} could not be found.", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    // ... for every resource's identifier.
    let weird = |what: &str| {
        format!(
            r#"{{"errors": [{{"request_id": "", "code": "client", "status": 404, "title": "{what} {{weird}} could not be found", "detail": "{what} {{weird}} could not be found.", "links": []}}]}}"#
        )
    };
    for (m, p, ver, what) in [
        ("GET", "/v1/clusters/%7Bweird%7D", v14, "Cluster"),
        (
            "DELETE",
            "/v1/clustertemplates/%7Bweird%7D",
            v14,
            "ClusterTemplate",
        ),
        ("GET", "/v1/clusters/%7Bweird%7D/nodegroups", v14, "Cluster"),
        ("GET", "/v1/certificates/%7Bweird%7D", v14, "Cluster"),
        ("PATCH", "/v1/credentials/%7Bweird%7D", v12, "Cluster"),
        ("GET", "/v1/federations/%7Bweird%7D", v14, "Federation"),
    ] {
        let version = ver.trim_start_matches("container-infra ");
        exactly(
            &call(m, p, ver, None).await,
            404,
            &weird(what),
            Some(version),
            None,
        );
    }
    let r = call("GET", "/v1/clusters/a%20b", v14, None).await;
    exactly(
        &r,
        404,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 404, "title": "Cluster a b could not be found", "detail": "Cluster a b could not be found.", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    let r = call("GET", "/v1/clusters/%FF", v14, None).await;
    exactly(
        &r,
        404,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 404, "title": "Cluster \ufffd could not be found", "detail": "Cluster \ufffd could not be found.", "links": []}]}"#,
        Some("1.14"),
        None,
    );
    exactly(
        &call("GET", "/v1/clusters/a%2Fb", v14, None).await,
        404,
        not_found,
        None,
        None,
    );
    let r = call("GET", "/v1%2Fclu%73ters", v14, None).await;
    exactly(&r, 200, r#"{"clusters": []}"#, Some("1.14"), None);
    let r = call("GET", "/v1/quotas/%7Bp%7D/Cluster", v14, None).await;
    assert_eq!(r.status, 200);
    let quota: serde_json::Value = serde_json::from_slice(&r.body).expect("JSON");
    assert_eq!(quota["project_id"], "{p}");
    srv.stop().await.expect("stop");
}

#[tokio::test]
async fn outside_the_api_pipeline() {
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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
    let (srv, addr) = server_with("").await;
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

/// The all-in-one conductor reports itself in `magnum_service` at start (`magnum/servicegroup/magnum_service_periodic.py`),
/// so `openstack coe service list` shows it `up`.
#[tokio::test]
async fn the_conductor_heartbeat_shows_in_mservices() {
    let (srv, addr) = server_with("").await;
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

/// `[oslo_middleware] enable_proxy_headers_parsing` (oslo.middleware's `http_proxy_to_wsgi`):
/// off by default, the links ignore `X-Forwarded-Proto` / `-Host`; on, they follow them.
#[tokio::test]
async fn proxy_headers_are_honoured_only_when_configured() {
    let fwd = [
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Host", "magnum.example.com"),
    ];
    let (_off, addr) = server_with("").await;
    let r = http(addr, "GET", "/v1", &fwd, None).await.expect("GET /v1");
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains(&format!("http://{addr}/v1/")), "{body}");
    assert!(!body.contains("magnum.example.com"), "{body}");

    let (_on, addr) = server_with("[oslo_middleware]\nenable_proxy_headers_parsing = true\n").await;
    let r = http(addr, "GET", "/v1", &fwd, None).await.expect("GET /v1");
    let body = String::from_utf8_lossy(&r.body).to_string();
    assert!(body.contains("https://magnum.example.com/v1/"), "{body}");
}
