//! Building responses with Magnum's headers: the version headers on `/v1`, the request id,
//! `Content-Type: application/json` and bodies serialized as Python's `json.dumps`.

use crate::error::ApiError;
use crate::microversion::{self, Version, SERVICE_NAME};
use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use openkeel_core::pyjson;
use serde_json::Value;

/// A successful handler result.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Option<Value>,
    /// A body already rendered as `json.dumps` text (large collections are written item by
    /// item, never held as one `Value` tree); used instead of `body` when set.
    pub rendered: Option<String>,
    pub headers: Vec<(HeaderName, String)>,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            body: Some(body),
            rendered: None,
            headers: Vec::new(),
        }
    }

    pub fn ok(body: Value) -> Self {
        Self::json(200, body)
    }

    pub fn empty(status: u16) -> Self {
        Reply {
            status,
            body: None,
            rendered: None,
            headers: Vec::new(),
        }
    }

    /// A 200 whose body is already `json.dumps` text.
    pub fn ok_rendered(text: String) -> Self {
        Reply {
            status: 200,
            body: None,
            rendered: Some(text),
            headers: Vec::new(),
        }
    }

    pub fn into_response(self, version: Option<Version>, request_id: &str) -> Response {
        let body = match self.rendered {
            Some(text) => Some(text),
            None => self.body.as_ref().map(pyjson::dumps),
        };
        let mut resp = build(self.status, version, body, request_id, false);
        for (name, value) in self.headers {
            if let Ok(v) = HeaderValue::from_str(&value) {
                resp.headers_mut().append(name, v);
            }
        }
        resp
    }
}

fn insert(h: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(HeaderName::from_static(name), v);
    }
}

const MINIMUM_VERSION: HeaderName = HeaderName::from_static("openstack-api-minimum-version");
const MAXIMUM_VERSION: HeaderName = HeaderName::from_static("openstack-api-maximum-version");
const API_VERSION: HeaderName = HeaderName::from_static("openstack-api-version");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-openstack-request-id");

/// The four version headers Magnum sets on `/v1` responses.
pub fn version_headers(h: &mut HeaderMap, version: Version) {
    // the same two on every answer: made once
    static MIN_MAX: std::sync::OnceLock<[Option<HeaderValue>; 2]> = std::sync::OnceLock::new();
    let [min, max] = MIN_MAX.get_or_init(|| {
        [microversion::MIN, microversion::MAX]
            .map(|v| HeaderValue::from_str(&format!("{SERVICE_NAME} {v}")).ok())
    });
    for (name, value) in [(MINIMUM_VERSION, min), (MAXIMUM_VERSION, max)] {
        if let Some(v) = value {
            h.insert(name, v.clone());
        }
    }
    if let Ok(v) = HeaderValue::from_str(&format!("{SERVICE_NAME} {version}")) {
        h.insert(API_VERSION, v);
    }
    h.insert(
        http::header::VARY,
        HeaderValue::from_static(microversion::HEADER),
    );
}

fn build(
    status: u16,
    version: Option<Version>,
    body: Option<String>,
    request_id: &str,
    head: bool,
) -> Response {
    // room for the version headers, length, type and request id without growing
    let mut h = HeaderMap::with_capacity(8);
    if let Some(v) = version {
        version_headers(&mut h, v);
    }
    let text = body.unwrap_or_default();
    if status != 204 {
        h.insert(http::header::CONTENT_LENGTH, HeaderValue::from(text.len()));
        h.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(REQUEST_ID, v);
    }
    let body = if head || status == 204 {
        Body::empty()
    } else {
        Body::from(text)
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    *resp.headers_mut() = h;
    resp
}

/// Render an error in Magnum's envelope.
pub fn error(
    err: &ApiError,
    prefers_json: bool,
    version: Option<Version>,
    request_id: &str,
    head: bool,
) -> Response {
    // HEAD errors carry no body but the length of an empty envelope, as webob computes it.
    let text = if head {
        "{\"errors\": []}".to_string()
    } else {
        pyjson::dumps(&err.body(prefers_json))
    };
    let mut resp = build(err.status(), version, Some(text), request_id, head);
    if let ApiError::Routing {
        allow: Some(allow), ..
    } = err
    {
        if let Ok(v) = HeaderValue::from_str(allow) {
            resp.headers_mut().insert(http::header::ALLOW, v);
        }
    }
    resp
}

/// keystonemiddleware's 401 (outside Magnum's envelope): its own JSON body,
/// `WWW-Authenticate: Keystone uri="…"`, and the request id of the layer before it.
pub fn unauthorized(www_authenticate: &str, request_id: &str) -> Response {
    const BODY: &str = "{\"error\": {\"code\": 401, \"title\": \"Unauthorized\", \"message\": \"The request you have made requires authentication.\"}}";
    let mut h = HeaderMap::new();
    insert(&mut h, "content-type", "application/json; charset=UTF-8");
    insert(&mut h, "content-length", &BODY.len().to_string());
    insert(&mut h, "www-authenticate", www_authenticate);
    insert(&mut h, "x-openstack-request-id", request_id);
    let mut resp = Response::new(Body::from(BODY));
    *resp.status_mut() = StatusCode::UNAUTHORIZED;
    *resp.headers_mut() = h;
    resp
}

/// keystonemiddleware's 503 when Keystone cannot validate tokens (webob's
/// `HTTPServiceUnavailable`): JSON when the client asks for it, else plain text.
pub fn keystone_unavailable(accept: Option<&str>, request_id: &str) -> Response {
    const EXPLANATION: &str =
        "The server is currently unavailable. Please try again at a later time.";
    const DETAIL: &str = "The Keystone service is temporarily unavailable.";
    let wants_json = accept.is_some_and(|a| a.contains("application/json"));
    let (ctype, body) = if wants_json {
        (
            "application/json",
            pyjson::dumps(&serde_json::json!({
                "code": "503 Service Unavailable",
                "message": format!("{EXPLANATION}<br /><br />\n{DETAIL}\n\n"),
                "title": "Service Unavailable",
            })),
        )
    } else {
        (
            "text/plain; charset=UTF-8",
            format!("503 Service Unavailable\n\n{EXPLANATION}\n\n{DETAIL}\n\n"),
        )
    };
    let mut h = HeaderMap::new();
    insert(&mut h, "content-type", ctype);
    insert(&mut h, "content-length", &body.len().to_string());
    insert(&mut h, "x-openstack-request-id", request_id);
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    *resp.headers_mut() = h;
    resp
}

/// The CORS layer's answer to any `OPTIONS`: 200, empty body, no request id.
pub fn options() -> Response {
    let mut resp = Response::new(Body::empty());
    resp.headers_mut()
        .insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("0"));
    resp
}

/// oslo.middleware's Healthcheck: `OK` in text/plain, 204 for HEAD.
pub fn healthcheck(method: &Method) -> Response {
    if method == Method::HEAD {
        let mut resp = Response::new(Body::empty());
        *resp.status_mut() = StatusCode::NO_CONTENT;
        return resp;
    }
    let mut resp = Response::new(Body::from("OK"));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=UTF-8"),
    );
    resp.headers_mut()
        .insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("2"));
    resp
}

/// webob's `host_url`: `scheme://Host`. With proxy header parsing enabled,
/// `X-Forwarded-Proto` / `X-Forwarded-Host` (or RFC 7239 `Forwarded`) override them.
pub fn host_url(headers: &HeaderMap, proxy_headers: bool, tls: bool) -> String {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::trim);
    let mut scheme = if tls {
        "https".to_string()
    } else {
        "http".to_string()
    };
    let mut host = get("host").unwrap_or("localhost").to_string();
    if proxy_headers {
        if let Some(fwd) = get("forwarded") {
            for pair in fwd.split(',').next().unwrap_or("").split(';') {
                if let Some((k, v)) = pair.split_once('=') {
                    let v = v.trim().trim_matches('"');
                    match k.trim().to_ascii_lowercase().as_str() {
                        "proto" => scheme = v.to_string(),
                        "host" => host = v.to_string(),
                        _ => {}
                    }
                }
            }
        } else {
            if let Some(p) = get("x-forwarded-proto") {
                scheme = p.split(',').next().unwrap_or(p).trim().to_string();
            }
            if let Some(hst) = get("x-forwarded-host") {
                host = hst.split(',').next().unwrap_or(hst).trim().to_string();
            }
        }
    }
    // webob drops the default port for the scheme.
    if let Some(stripped) = host.strip_suffix(":80").filter(|_| scheme == "http") {
        host = stripped.to_string();
    } else if let Some(stripped) = host.strip_suffix(":443").filter(|_| scheme == "https") {
        host = stripped.to_string();
    }
    format!("{scheme}://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_url_rules() {
        let mut h = HeaderMap::new();
        h.insert("host", HeaderValue::from_static("magnum.example.com:9511"));
        assert_eq!(host_url(&h, false, false), "http://magnum.example.com:9511");
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert_eq!(host_url(&h, false, false), "http://magnum.example.com:9511");
        assert_eq!(host_url(&h, true, false), "https://magnum.example.com:9511");
        h.insert("host", HeaderValue::from_static("m.example.com:80"));
        h.remove("x-forwarded-proto");
        assert_eq!(host_url(&h, false, false), "http://m.example.com");
    }
}
