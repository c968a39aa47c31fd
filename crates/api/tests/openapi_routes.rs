#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The route catalogue (`openkeel_api::openapi::catalogue::ROUTES`) agrees with the router:
//! every catalogue route reaches a handler through `dispatch` (no routing 404 / 405, whose
//! envelope has an empty `code`), at the lowest microversion the catalogue gives it, and a
//! route that starts at a later microversion is refused with 406 one version below.
//!
//! The router runs with nothing wired (no database, conductor or policy): a handler answers
//! with its own error (a 400 for a body without its mandatory attributes, a 500 for the
//! missing database), which is what tells it was reached.

use axum::body::Body;
use http::Request;
use http_body_util::BodyExt;
use openkeel_api::openapi::catalogue::{Route, Versions, ROUTES};
use openkeel_api::ApiState;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

/// A concrete path for a template: every parameter a plausible value.
fn concrete(r: &Route) -> String {
    r.path
        .split('/')
        .map(|s| match s {
            "{project_id}" => "p1",
            "{resource}" => "Cluster",
            s if s.starts_with('{') => "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn send(r: &Route, minor: u32) -> (u16, Value) {
    let app = openkeel_api::router(Arc::new(ApiState::default()));
    let mut req = Request::builder().method(r.method).uri(concrete(r)).header(
        "OpenStack-API-Version",
        format!("container-infra 1.{minor}"),
    );
    let body = if r.request.is_some() {
        req = req.header("Content-Type", "application/json");
        // an empty object (or patch): the handler refuses it, after routing
        Body::from(if r.request == Some("JsonPatch") {
            "[]"
        } else {
            "{}"
        })
    } else {
        Body::empty()
    };
    let resp = app.oneshot(req.body(body).unwrap()).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// A routing error: pecan's 404 / 405 (or the 406 of a versioned handler looked up while
/// routing), rendered with an empty `code`.
fn routing_error(status: u16, body: &Value) -> bool {
    matches!(status, 404..=406) && body["errors"][0]["code"] == ""
}

#[tokio::test]
async fn every_catalogue_route_reaches_its_handler() {
    assert_eq!(ROUTES.len(), 38);
    for r in ROUTES.iter() {
        let minor = match r.versions {
            Versions::NotNegotiated => 1,
            Versions::Since(m) => m,
        };
        let (status, body) = send(r, minor).await;
        assert!(
            !routing_error(status, &body),
            "{} {} at 1.{minor} is not routed to a handler: {status} {body}",
            r.method,
            r.path
        );
        // the latest version reaches it too
        let (status, body) = send(r, 14).await;
        assert!(
            !routing_error(status, &body),
            "{} {} at 1.14: {status} {body}",
            r.method,
            r.path
        );
    }
}

#[tokio::test]
async fn routes_of_later_microversions_are_refused_below_them() {
    let mut checked = 0;
    for r in ROUTES.iter() {
        let Versions::Since(minor) = r.versions else {
            continue;
        };
        if minor == 1 {
            continue;
        }
        let (status, body) = send(r, minor - 1).await;
        assert_eq!(
            status,
            406,
            "{} {} at 1.{}: {body}",
            r.method,
            r.path,
            minor - 1
        );
        checked += 1;
    }
    // resize, upgrade, the five nodegroup routes, credentials
    assert_eq!(checked, 8);
}

#[tokio::test]
async fn the_check_sees_a_route_the_router_does_not_have() {
    let mut bogus = ROUTES[17];
    bogus.path = "/v1/clusters/{cluster_ident}/nodegroups/{nodegroup_ident}/extra";
    let (status, body) = send(&bogus, 14).await;
    assert!(routing_error(status, &body), "{status} {body}");
    let mut bogus = ROUTES[2];
    bogus.method = "PUT";
    let (status, body) = send(&bogus, 14).await;
    assert!(routing_error(status, &body), "{status} {body}");
}
