//! openkeel-api: Magnum's REST API on axum.
//!
//! The request path, top to bottom (`dispatch`): CORS `OPTIONS` and `/healthcheck` outside
//! the API pipeline → request id → `Accept` check → root prefix rewrite (`/clusters` ≡
//! `/v1/clusters`) → microversion negotiation → route → handler → view. Every failure is
//! rendered by [`error::ApiError`] in one place.

pub mod accept;
pub mod body;
pub mod dberr;
pub mod error;
pub mod fuzzing;
pub mod links;
pub mod metrics;
pub mod microversion;
pub mod openapi;
pub mod pagination;
pub mod patch;
pub mod policy_target;
pub mod query;
pub mod request;
pub mod resources;
pub mod response;
pub mod routes;
pub mod validation;
pub mod versions;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use http::{HeaderMap, Method};
use std::sync::Arc;

use error::ApiError;
use microversion::Version;
use response::Reply;

/// What the API needs at run time. Built once at start-up and shared by every request.
#[derive(Clone)]
pub struct ApiState {
    /// `[oslo_middleware] enable_proxy_headers_parsing`: honour `X-Forwarded-Proto` /
    /// `X-Forwarded-Host` / `Forwarded` when building links.
    pub enable_proxy_headers_parsing: bool,
    /// `https` when the listener terminates TLS (`[api] enabled_ssl`).
    pub tls: bool,
    /// How identities are established.
    pub auth: request::AuthMode,
    /// `[keystone_authtoken] www_authenticate_uri` (the context's `auth_url`).
    pub auth_url: Option<String>,
    /// The policy engine; `None` only in unit tests of routing (everything allowed).
    pub policy: Option<Arc<dyn request::PolicyCheck>>,
    /// The database (reads, and the writes Magnum's API makes itself).
    pub db: Option<openkeel_db::Database>,
    /// The conductor, through the configured transport.
    pub conductor: Option<Arc<dyn openkeel_rpc::ConductorApi>>,
    /// Glance / Nova / Neutron / Keystone look-ups.
    pub cloud: Option<Arc<dyn openkeel_core::cloud::Cloud>>,
    /// The loaded cluster drivers (template create's driver selection); `None` skips it.
    pub drivers: Option<Arc<dyn validation::DriverCatalog>>,
    /// `[cluster_template]`, `[cinder] default_boot_volume_size`, `[api] max_limit`.
    pub template_settings: validation::TemplateSettings,
    /// `[quotas] max_clusters_per_project` (cluster create's quota check).
    pub clusters: resources::clusters::ClusterSettings,
    /// `[DEFAULT] service_down_time` (seconds; mservices' up / down state).
    pub service_down_time: u64,
    /// Large collection pages built at once (`[openkeel] list_concurrency`,
    /// [`list_permits`]).
    pub list_permits: Arc<tokio::sync::Semaphore>,
    /// Cluster creates cast but not inserted yet, counted by the quota check.
    pub pending_creates: Arc<resources::clusters::PendingCreates>,
    /// `[openkeel] api_max_body_size` and `api_body_read_timeout`.
    pub body_limits: body::BodyLimits,
    /// The Prometheus metrics of this API (recorded by `dispatch`, served by the process's
    /// metrics listener).
    pub metrics: Arc<metrics::ApiMetrics>,
}

impl Default for ApiState {
    /// Nothing wired, every setting at Magnum's default.
    fn default() -> Self {
        ApiState {
            enable_proxy_headers_parsing: false,
            tls: false,
            auth: request::AuthMode::default(),
            auth_url: None,
            policy: None,
            db: None,
            conductor: None,
            cloud: None,
            drivers: None,
            template_settings: validation::TemplateSettings::default(),
            clusters: resources::clusters::ClusterSettings::default(),
            service_down_time: resources::mservices::DEFAULT_SERVICE_DOWN_TIME,
            list_permits: list_permits(0),
            pending_creates: Arc::default(),
            body_limits: body::BodyLimits::default(),
            metrics: Arc::default(),
        }
    }
}

/// Bounds how many large collection pages are built at once (the rows of a 1,000-cluster
/// page take a few MiB; sixteen at once would make the process ten times its idle size).
/// Requests beyond the bound wait their turn: with the CPU already busy rendering, this
/// costs no throughput. `[openkeel] list_concurrency`, 0 meaning the available cores (at
/// least 2); docs/performance.md has the measurement.
pub fn list_permits(list_concurrency: usize) -> std::sync::Arc<tokio::sync::Semaphore> {
    let n = if list_concurrency > 0 {
        list_concurrency
    } else {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2)
    };
    std::sync::Arc::new(tokio::sync::Semaphore::new(n))
}

impl std::fmt::Debug for ApiState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiState")
            .field(
                "enable_proxy_headers_parsing",
                &self.enable_proxy_headers_parsing,
            )
            .field("tls", &self.tls)
            .field("auth", &self.auth)
            .field("db", &self.db.is_some())
            .field("conductor", &self.conductor.is_some())
            .field("cloud", &self.cloud.is_some())
            .finish_non_exhaustive()
    }
}

/// The axum application: one fallback handler, because Magnum's routing rules (prefix
/// rewrite, 404/405 envelopes without version headers, `Allow` lists) are reproduced in
/// [`routes`], not by axum's matcher.
pub fn router(state: Arc<ApiState>) -> Router {
    Router::new().fallback(dispatch).with_state(state)
}

/// Everything a handler may read about the request.
#[derive(Debug)]
pub struct RequestInfo {
    pub method: Method,
    /// Path segments (percent-decoded, as WSGI's `PATH_INFO`) after the rewrite, starting
    /// with `v1` for API routes; empty for `/`.
    pub segments: Vec<String>,
    /// pecan's routing arguments: the path segments that came before the collection's name
    /// (`GET /v2/clusters` → `["v2"]`), the first positional arguments of a list handler
    /// ([`routes::routing_args`], read by [`query::parse_args`]). Usually empty.
    pub positional: Vec<String>,
    pub query: Option<String>,
    pub headers: HeaderMap,
    /// `scheme://host[:port]` as webob's `host_url`.
    pub host_url: String,
    pub request_id: String,
    /// The negotiated microversion (1.1 for the root document, which does not negotiate).
    pub version: Version,
    /// The validated user token's body (keystonemiddleware's `keystone.token_info`), with
    /// `auth_strategy = keystone`.
    pub token_info: Option<Arc<serde_json::Value>>,
}

impl RequestInfo {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Every request runs inside its own span (instrumented, never entered across an `.await`),
/// and is counted in the API's metrics under its route template ([`routes::template`]).
async fn dispatch(State(state): State<Arc<ApiState>>, req: Request) -> Response {
    use tracing::Instrument;
    let route = routes::template(req.method(), req.uri().path(), req.uri().query());
    let method = req.method().clone();
    let span = tracing::info_span!(
        "request",
        request_id = tracing::field::Empty,
        user_id = tracing::field::Empty,
        project_id = tracing::field::Empty,
        method = %method,
        path = %req.uri().path(),
        route
    );
    let started = std::time::Instant::now();
    let metrics = state.metrics.clone();
    let in_flight = metrics.start();
    let resp = dispatch_inner(state, req).instrument(span.clone()).await;
    drop(in_flight);
    metrics.observe(
        route,
        &method,
        resp.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    // One line per request (request id, user and project from the span; never a token).
    span.in_scope(|| {
        tracing::info!(
            status = resp.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "request handled"
        )
    });
    resp
}

async fn dispatch_inner(state: Arc<ApiState>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();

    // CORS middleware answers every OPTIONS before the request-id layer.
    if method == Method::OPTIONS {
        return response::options();
    }
    // oslo.middleware Healthcheck, mounted beside the API pipeline.
    if path == "/healthcheck" {
        return response::healthcheck(&method);
    }

    let request_id = openkeel_core::context::RequestContext::new_request_id();
    tracing::Span::current().record("request_id", request_id.as_str());

    let mut headers = req.headers().clone();
    // A body declared larger than the limit is refused before anything reads it.
    if let Some(refused) = body::declared_too_large(&headers, state.body_limits) {
        let prefers_json = accept::prefers_json(
            headers
                .get(http::header::ACCEPT)
                .and_then(|v| v.to_str().ok()),
        );
        return response::error(
            &ApiError::body_refused(refused),
            prefers_json,
            None,
            &request_id,
            method == Method::HEAD,
        );
    }
    // keystonemiddleware's auth_token sits before the API application: a refused request
    // never reaches the Accept check, the routing or the microversion negotiation.
    let mut token_info = None;
    if let request::AuthMode::Keystone(auth) = &state.auth {
        match keystone_auth(auth, &method, &path, &mut headers).await {
            Ok(info) => token_info = info,
            Err(resp) => return resp.finish(&request_id, &headers),
        }
    }
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let prefers_json = accept::prefers_json(accept.as_deref());
    let is_head = method == Method::HEAD;
    let render_error = |err: ApiError, version: Option<Version>| {
        response::error(&err, prefers_json, version, &request_id, is_head)
    };

    let query = req.uri().query().map(str::to_string);
    // pecan routes by the `_method` parameter when there is one; a GET that asks for DELETE
    // or PUT through it is refused before any routing (the root's too) and before the Accept
    // check.
    let method = match routes::routing_method(&method, query.as_deref()) {
        Ok(m) => m,
        Err(err) => return render_error(err, None),
    };

    if !accept::admits_json(accept.as_deref()) {
        return render_error(ApiError::not_acceptable(""), None);
    }

    // WSGI's PATH_INFO is percent-decoded (UTF-8, invalid bytes replaced) before pecan
    // splits it: `%7Bweird%7D` is looked up as `{weird}`, `a%2Fb` is two segments.
    let mut segments = routes::path_segments(&path);
    let host_url = response::host_url(&headers, state.enable_proxy_headers_parsing, state.tls);

    if segments.is_empty() {
        let info = RequestInfo {
            method,
            segments,
            query,
            headers,
            host_url,
            request_id: request_id.clone(),
            version: microversion::MIN,
            token_info,
            positional: Vec::new(),
        };
        let result = routes::root(&info);
        return match result {
            Ok(reply) => reply.into_response(None, &request_id),
            Err(err) => render_error(err, None),
        };
    }

    if segments[0] != "v1" {
        segments.insert(0, "v1".to_string());
    }
    let positional = routes::routing_args(&mut segments, &method);

    let header_value = headers
        .get(microversion::HEADER)
        .and_then(|v| v.to_str().ok());
    let requested = match microversion::parse(header_value) {
        Ok(v) => v,
        Err(e) => return render_error(ApiError::not_acceptable(e.message()), None),
    };
    let version = match microversion::check_range(requested) {
        Ok(v) => v,
        Err(e) => return render_error(ApiError::Microversion(e), Some(requested)),
    };

    let info = RequestInfo {
        method,
        segments,
        query,
        headers,
        host_url,
        request_id: request_id.clone(),
        version,
        token_info,
        positional,
    };
    let body = body::bounded(req.into_body(), state.body_limits);
    let result: Result<Reply, ApiError> = routes::v1(&state, &info, body).await;
    match result {
        Ok(reply) => reply.into_response(Some(version), &request_id),
        Err(err) => {
            let keep = err.keeps_version_headers();
            if err.status() >= 500 {
                tracing::error!(status = err.status(), error = ?err, "request failed");
            }
            render_error(err, keep.then_some(version))
        }
    }
}

/// A request refused by the token validation.
enum Refusal {
    Unauthorized(String),
    Unavailable,
}

impl Refusal {
    fn finish(self, request_id: &str, headers: &HeaderMap) -> Response {
        match self {
            Refusal::Unauthorized(www) => response::unauthorized(&www, request_id),
            Refusal::Unavailable => {
                let accept = headers
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok());
                response::keystone_unavailable(accept, request_id)
            }
        }
    }
}

/// keystonemiddleware's `process_request` for one request: public routes pass untouched;
/// otherwise the client's identity headers are removed, the tokens validated and the
/// identity headers of the token set. Returns the token body.
async fn keystone_auth(
    auth: &openkeel_auth::authtoken::AuthToken,
    method: &Method,
    path: &str,
    headers: &mut HeaderMap,
) -> Result<Option<Arc<serde_json::Value>>, Refusal> {
    if openkeel_auth::authtoken::is_public_path(path) {
        return Ok(None);
    }
    // The request's few headers against the list, not the ~30 names against the map.
    let forged: Vec<http::HeaderName> = headers
        .keys()
        .filter(|k| openkeel_auth::authtoken::AUTH_HEADERS.contains(&k.as_str()))
        .cloned()
        .collect();
    for h in forged {
        headers.remove(h);
    }
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let user_token = get("x-auth-token").or_else(|| get("x-storage-token"));
    let service_token = get("x-service-token");
    match auth
        .authenticate(user_token, service_token, method.as_str(), path)
        .await
    {
        Ok(identity) => {
            // (the span's user_id / project_id are recorded with the context)
            for (name, value) in &identity.header_values {
                headers.insert(name.clone(), value.clone());
            }
            Ok(Some(identity.token_info.clone()))
        }
        Err(openkeel_auth::authtoken::AuthFailure::Unauthorized) => {
            Err(Refusal::Unauthorized(auth.www_authenticate()))
        }
        Err(openkeel_auth::authtoken::AuthFailure::Unavailable(detail)) => {
            tracing::error!(%detail, "Unable to validate token");
            Err(Refusal::Unavailable)
        }
    }
}

/// Read a request body (bounded by [`body::bounded`] in `dispatch`).
pub async fn read_body(body: Body) -> Result<bytes_compat::Bytes, ApiError> {
    axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|e| match body::refusal_of(&e) {
            Some(refused) => ApiError::body_refused(refused),
            None => ApiError::Handler(openkeel_core::error::MagnumError::client_side(
                "Request body unreadable",
            )),
        })
}

/// Re-export so handlers do not need their own `bytes` dependency.
pub mod bytes_compat {
    pub use axum::body::Bytes;
}
