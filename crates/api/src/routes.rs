//! Magnum's route table (the pecan controllers of `magnum/api/controllers/v1/`): which (method, path) reaches which handler, and
//! the 404 / 405 (`Allow`) answers pecan gives for everything else. Each resource module
//! owns the routes under its collection and exposes one `route` function.

use crate::error::ApiError;
use crate::resources;
use crate::response::Reply;
use crate::{versions, ApiState, RequestInfo};
use axum::body::Body;
use http::Method;

/// The collections under `/v1` (the children of Magnum's `v1.Controller`).
const COLLECTIONS: [&str; 8] = [
    "clusters",
    "clustertemplates",
    "quotas",
    "certificates",
    "mservices",
    "stats",
    "federations",
    "credentials",
];

/// pecan's `RestController._route` method override: the method a request is routed by is its
/// `_method` parameter (the last one, lowercased) when it has one, else the HTTP method.
///
/// * A `GET` asking for `delete` or `put` is refused with a 405 (no `Allow`) by the root
///   controller, before the version is negotiated: the `Err`.
/// * `get`, `post`, `delete` and `patch` route as those methods (`POST ...?_method=delete`
///   reaches the delete handler, which then refuses `_method` as an unknown argument, as
///   WSME does).
/// * Anything else (`put`, `head`, an empty or unknown value) reaches pecan's
///   `_handle_unknown_method` or a `put` handler no Magnum controller has, so it routes as a
///   method no route takes: the level's 405 with its `Allow`, as a `PUT` or `HEAD` does.
///
/// The handlers' `is_head` (no body) stays with the HTTP method.
pub fn routing_method(method: &Method, query: Option<&str>) -> Result<Method, ApiError> {
    let Some(asked) = crate::request::parse_query(query.unwrap_or(""))
        .into_iter()
        .rev()
        .find(|(k, _)| k == "_method")
        .map(|(_, v)| v.to_lowercase())
    else {
        return Ok(method.clone());
    };
    if method == Method::GET && matches!(asked.as_str(), "delete" | "put") {
        return Err(ApiError::method_not_allowed_without_allow());
    }
    Ok(match asked.as_str() {
        "get" => Method::GET,
        "post" => Method::POST,
        "delete" => Method::DELETE,
        "patch" => Method::PATCH,
        "head" => Method::HEAD,
        _ => Method::PUT,
    })
}

/// pecan's routing arguments. `v1.Controller.get` takes `*args`, so pecan's
/// `_find_sub_controllers` looks for the first segment naming a collection and hands the
/// segments before it to that collection as leading positional arguments: `GET /v2/clusters`
/// (rewritten by the root to `/v1/v2/clusters`), `/V1/clusters` and `/v1/v1/clusters` call
/// `get_all('v2')` / `get_all('V1')` / `get_all('v1')`, whose first argument is the marker.
///
/// For a `GET` of the collection itself (or its `detail`) the segments are returned, to be
/// converted as the handler's first arguments ([`crate::query::parse_args`]). For any
/// other request they become the leading member segments (`DELETE /v2/clusters` is
/// `delete('v2')`, as `DELETE /v1/clusters/v2`; `POST /v2/clusters` passes `'v2'` as the
/// body argument, as a `POST` to a member path does). `segments` is rewritten to
/// `["v1", collection, ...]` either way.
pub fn routing_args(segments: &mut Vec<String>, method: &Method) -> Vec<String> {
    let Some(at) = segments
        .iter()
        .skip(1)
        .position(|s| COLLECTIONS.contains(&s.as_str()))
        .map(|i| i + 1)
    else {
        return Vec::new();
    };
    if at == 1 {
        return Vec::new();
    }
    let prefix: Vec<String> = segments.drain(1..at).collect();
    let with_detail =
        ["clusters", "clustertemplates", "federations"].contains(&segments[1].as_str());
    let list = match &segments[2..] {
        [] => true,
        [d] => d == "detail" && with_detail,
        _ => false,
    };
    if method == Method::GET && list {
        return prefix;
    }
    // `CertificateController.post(certificate)` takes them as its body argument; a POST to
    // one of its member paths is a 404 instead.
    if method == Method::POST && segments[1] == "certificates" && segments.len() == 2 {
        return prefix;
    }
    for (i, p) in prefix.into_iter().enumerate() {
        segments.insert(2 + i, p);
    }
    Vec::new()
}

/// The path's segments as pecan splits them: WSGI's `PATH_INFO` is percent-decoded (UTF-8,
/// invalid bytes replaced) first, so `%7Bweird%7D` is looked up as `{weird}` and `a%2Fb` is
/// two segments; empty segments (a trailing slash) are dropped.
pub fn path_segments(path: &str) -> Vec<String> {
    crate::request::percent_decode_path(path)
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The `route` label of requests that reach no route of Magnum's table.
pub const UNMATCHED: &str = "unmatched";

/// The route template a request is counted under in the API's metrics: the `/v1` form of
/// the entry of Magnum's route table whose handler the request reaches
/// (`/v1/clusters/{cluster_ident}` for `GET /clusters/c1`), `/`, `/healthcheck`, or
/// [`UNMATCHED`] for a path outside the table (pecan's 404s). Computed from the path with the
/// routing rules of [`crate::dispatch`] (the prefix rewrite, [`routing_method`],
/// [`routing_args`]), never the raw path, so the label's values are a fixed set.
pub fn template(method: &Method, path: &str, query: Option<&str>) -> &'static str {
    if path == "/healthcheck" {
        return "/healthcheck";
    }
    let mut segments = path_segments(path);
    if segments.is_empty() {
        return "/";
    }
    if segments[0] != "v1" {
        segments.insert(0, "v1".to_string());
    }
    let method = routing_method(method, query).unwrap_or_else(|_| method.clone());
    routing_args(&mut segments, &method);
    let get = method == Method::GET;
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["v1"] => "/v1",
        ["v1", "clustertemplates"] => "/v1/clustertemplates",
        ["v1", "clustertemplates", "detail"] if get => "/v1/clustertemplates/detail",
        ["v1", "clustertemplates", _] => "/v1/clustertemplates/{ct_ident}",
        ["v1", "clusters"] => "/v1/clusters",
        ["v1", "clusters", "detail"] if get => "/v1/clusters/detail",
        ["v1", "clusters", _] => "/v1/clusters/{cluster_ident}",
        ["v1", "clusters", _, "actions", "resize"] => "/v1/clusters/{cluster_ident}/actions/resize",
        ["v1", "clusters", _, "actions", "upgrade"] => {
            "/v1/clusters/{cluster_ident}/actions/upgrade"
        }
        ["v1", "clusters", _, "nodegroups"] => "/v1/clusters/{cluster_ident}/nodegroups",
        ["v1", "clusters", _, "nodegroups", _] => {
            "/v1/clusters/{cluster_ident}/nodegroups/{ng_ident}"
        }
        ["v1", "certificates"] => "/v1/certificates",
        ["v1", "certificates", _] => "/v1/certificates/{cluster_ident}",
        ["v1", "credentials", _] => "/v1/credentials/{cluster_ident}",
        ["v1", "quotas"] => "/v1/quotas",
        ["v1", "quotas", _, _] => "/v1/quotas/{project_id}/{resource}",
        ["v1", "stats"] => "/v1/stats",
        ["v1", "mservices"] => "/v1/mservices",
        ["v1", "federations"] => "/v1/federations",
        ["v1", "federations", "detail"] if get => "/v1/federations/detail",
        ["v1", "federations", _] => "/v1/federations/{federation_ident}",
        _ => UNMATCHED,
    }
}

/// `GET /`: the root document; any other method is 405 `Allow: GET`. Its handler takes no
/// arguments, so any query parameter is WSME's `Unknown argument` (as for `/v1`).
pub fn root(req: &RequestInfo) -> Result<Reply, ApiError> {
    match req.method {
        Method::GET => {
            crate::query::parse_args(req, &[])?;
            Ok(Reply::ok(versions::root(&req.host_url)))
        }
        _ => Err(ApiError::method_not_allowed("GET")),
    }
}

/// Everything under `/v1` (after the prefix rewrite and version negotiation).
///
/// Each collection's future is boxed: a future holds the state of every future it awaits,
/// so without the boxes this one (and the request's around it) would be as large as the
/// largest operation of the API (about 10 KB), copied whole at every level of nesting
/// before its first poll, for every request.
pub async fn v1(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["v1"] => match req.method {
            Method::GET => {
                crate::query::parse_args(req, &[])?;
                Ok(Reply::ok(versions::v1(&req.host_url)))
            }
            _ => Err(ApiError::method_not_allowed("GET")),
        },
        ["v1", "clustertemplates", rest @ ..] => {
            Box::pin(resources::cluster_templates::route(state, req, body, rest)).await
        }
        ["v1", "clusters", rest @ ..] => {
            Box::pin(resources::clusters::route(state, req, body, rest)).await
        }
        ["v1", "certificates", rest @ ..] => {
            Box::pin(resources::certificates::route(state, req, body, rest)).await
        }
        ["v1", "credentials", rest @ ..] => {
            Box::pin(resources::certificates::route_credentials(
                state, req, body, rest,
            ))
            .await
        }
        ["v1", "quotas", rest @ ..] => {
            Box::pin(resources::quotas::route(state, req, body, rest)).await
        }
        ["v1", "stats", rest @ ..] => Box::pin(resources::stats::route(state, req, rest)).await,
        ["v1", "mservices", rest @ ..] => {
            Box::pin(resources::mservices::route(state, req, rest)).await
        }
        ["v1", "federations", rest @ ..] => {
            Box::pin(resources::federations::route(state, req, body, rest)).await
        }
        // No collection of that name: `v1.Controller.get` answers a GET (404); for any other
        // method pecan finds no handler on `v1.Controller` (405, `Allow: GET`).
        _ if req.method == Method::GET => Err(ApiError::not_found()),
        _ => Err(ApiError::method_not_allowed("GET")),
    }
}

#[cfg(test)]
mod template_tests {
    use super::*;

    fn t(method: &str, path: &str) -> &'static str {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        template(
            &method.parse::<Method>().unwrap_or(Method::GET),
            path,
            query,
        )
    }

    #[test]
    fn requests_are_counted_under_their_route_template() {
        assert_eq!(t("GET", "/"), "/");
        assert_eq!(t("GET", "/healthcheck"), "/healthcheck");
        assert_eq!(t("GET", "/v1"), "/v1");
        assert_eq!(t("GET", "/v1/"), "/v1");
        assert_eq!(t("POST", "/v1/clustertemplates"), "/v1/clustertemplates");
        assert_eq!(
            t("GET", "/v1/clustertemplates/detail"),
            "/v1/clustertemplates/detail"
        );
        assert_eq!(
            t("DELETE", "/v1/clustertemplates/k8s"),
            "/v1/clustertemplates/{ct_ident}"
        );
        assert_eq!(t("GET", "/v1/clusters"), "/v1/clusters");
        assert_eq!(t("GET", "/v1/clusters/detail"), "/v1/clusters/detail");
        // `detail` is an ident for anything but GET (`delete('detail')`).
        assert_eq!(
            t("DELETE", "/v1/clusters/detail"),
            "/v1/clusters/{cluster_ident}"
        );
        assert_eq!(t("GET", "/v1/clusters/c1"), "/v1/clusters/{cluster_ident}");
        assert_eq!(
            t("POST", "/v1/clusters/c1/actions/resize"),
            "/v1/clusters/{cluster_ident}/actions/resize"
        );
        assert_eq!(
            t("GET", "/v1/clusters/c1/nodegroups"),
            "/v1/clusters/{cluster_ident}/nodegroups"
        );
        assert_eq!(
            t("PATCH", "/v1/clusters/c1/nodegroups/ng-1"),
            "/v1/clusters/{cluster_ident}/nodegroups/{ng_ident}"
        );
        assert_eq!(
            t("GET", "/v1/certificates/c1"),
            "/v1/certificates/{cluster_ident}"
        );
        assert_eq!(
            t("PATCH", "/v1/credentials/c1"),
            "/v1/credentials/{cluster_ident}"
        );
        assert_eq!(
            t("GET", "/v1/quotas/p/Cluster"),
            "/v1/quotas/{project_id}/{resource}"
        );
        assert_eq!(t("GET", "/v1/stats"), "/v1/stats");
        assert_eq!(t("GET", "/v1/mservices"), "/v1/mservices");
        assert_eq!(
            t("GET", "/v1/federations/f"),
            "/v1/federations/{federation_ident}"
        );
        // A 405 on a known path keeps its template.
        assert_eq!(t("PUT", "/v1/clusters"), "/v1/clusters");
    }

    #[test]
    fn aliases_count_under_the_v1_form() {
        assert_eq!(t("GET", "/clusters"), "/v1/clusters");
        assert_eq!(t("GET", "/clusters/c1"), "/v1/clusters/{cluster_ident}");
        // pecan's routing arguments: `GET /v2/clusters` is `get_all('v2')`, a DELETE of it
        // `delete('v2')`.
        assert_eq!(t("GET", "/v2/clusters"), "/v1/clusters");
        assert_eq!(t("DELETE", "/v2/clusters"), "/v1/clusters/{cluster_ident}");
        // routed by `_method`
        assert_eq!(
            t("POST", "/v1/clusters/c1?_method=delete"),
            "/v1/clusters/{cluster_ident}"
        );
        // percent-decoded before splitting, as WSGI's PATH_INFO
        assert_eq!(t("GET", "/v1/clusters/a%2Fb"), UNMATCHED);
    }

    #[test]
    fn paths_outside_the_table_are_unmatched() {
        for (m, p) in [
            ("GET", "/v1/nonexistent"),
            ("GET", "/nonexistent/path/x"),
            ("GET", "/v1/clusters/c1/x/y/z"),
            ("GET", "/v1/quotas/p"),
            ("PATCH", "/v1/credentials"),
            ("GET", "/v1/clusters/c1/detail"),
        ] {
            assert_eq!(t(m, p), UNMATCHED, "{m} {p}");
        }
    }
}
