//! The stand-in's HTTP side: one axum server, one path prefix per service, the real APIs'
//! document shapes, every request recorded.

use super::data::StandInData;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One request the stand-in received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// The path as received (e.g. `/internal/image/v2/images/x`).
    pub path: String,
    /// The raw query string (percent-encoded, as received), empty when none.
    pub query: String,
    /// The service the request went to: `identity`, `image`, `compute`, `network` (or `""`).
    pub service: String,
    /// Path segments before the service segment (`internal`, `admin`, a test's own prefix);
    /// `""` for the public endpoints.
    pub prefix: String,
    /// Path below the service segment (e.g. `/v2/images/x`).
    pub service_path: String,
    /// Every header, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    pub status: u16,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The query decoded into pairs.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        parse_query(&self.query)
    }
}

/// What an issued token stands for.
#[derive(Debug, Clone)]
pub(crate) struct TokenInfo {
    pub user: Value,
    pub project: Option<Value>,
    pub domain: Option<Value>,
    pub system: bool,
    pub methods: Vec<String>,
    pub issued_at: String,
    pub expires_at: String,
}

pub(crate) struct Shared {
    pub base: String,
    pub data: Mutex<StandInData>,
    pub tokens: Mutex<HashMap<String, TokenInfo>>,
    pub requests: Mutex<Vec<RecordedRequest>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const SERVICES: &[&str] = &[
    "identity",
    "image",
    "compute",
    "network",
    "volume",
    "load-balancer",
];
const DOMAIN: (&str, &str) = ("default", "Default");

fn pct_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (pct_decode(k), pct_decode(v)),
            None => (pct_decode(p), String::new()),
        })
        .collect()
}

fn now(delta_s: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(delta_s))
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// A JSON answer.
fn json_resp(status: u16, body: &Value) -> Response {
    let mut r = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body.to_string(),
    )
        .into_response();
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
}

/// An answer without a body (`204 No Content`).
fn empty_resp(status: u16) -> Response {
    StatusCode::from_u16(status)
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        .into_response()
}

fn html_resp(status: u16, title: &str, text: &str) -> Response {
    let body = format!(
        "<html>\n <head>\n  <title>{title}</title>\n </head>\n <body>\n  <h1>{title}</h1>\n  {text}<br /><br />\n\n\n\n </body>\n</html>"
    );
    let mut r = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    )
        .into_response();
    r.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/html; charset=UTF-8"),
    );
    r
}

fn keystone_error(status: u16, title: &str, message: &str) -> Response {
    json_resp(
        status,
        &json!({"error": {"code": status, "title": title, "message": message}}),
    )
}

/// keystonemiddleware's 401 in front of every service.
fn unauthorized(base: &str) -> Response {
    let mut r = keystone_error(
        401,
        "Unauthorized",
        "The request you have made requires authentication.",
    );
    if let Ok(v) = HeaderValue::from_str(&format!("Keystone uri=\"{base}/identity\"")) {
        r.headers_mut().insert("www-authenticate", v);
    }
    r
}

struct Req<'a> {
    method: &'a Method,
    /// Path below the service segment, without trailing slash (`/` when empty).
    path: String,
    query: Vec<(String, String)>,
    raw_query: &'a str,
    headers: &'a HeaderMap,
    body: Option<&'a Value>,
    /// The URL of this service's public endpoint root (`<base>/<prefix>/<service>`).
    root: String,
}

impl Req<'_> {
    fn q(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let raw_query = uri.query().unwrap_or_default().to_string();
    let body_json: Option<Value> = if body.is_empty() {
        None
    } else {
        Some(
            serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned())),
        )
    };

    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (prefix, service, rest) = match segments.iter().position(|s| SERVICES.contains(s)) {
        Some(i) => (
            segments[..i].join("/"),
            segments[i].to_string(),
            format!("/{}", segments[i + 1..].join("/")),
        ),
        None => (String::new(), String::new(), path.clone()),
    };

    // Delays and faults first (a copy of the data, the lock is not held while waiting).
    let (delay, fault) = {
        let d = lock(&shared.data);
        let target = if raw_query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{raw_query}")
        };
        let delay = d
            .delays
            .iter()
            .find(|x| target.contains(&x.path_contains))
            .map(|x| x.delay);
        let fault = d
            .faults
            .iter()
            .find(|f| {
                f.method
                    .as_deref()
                    .is_none_or(|m| m.eq_ignore_ascii_case(method.as_str()))
                    && target.contains(&f.path_contains)
            })
            .cloned();
        (delay, fault)
    };
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }

    let root = if prefix.is_empty() {
        format!("{}/{service}", shared.base)
    } else {
        format!("{}/{prefix}/{service}", shared.base)
    };
    let req = Req {
        method: &method,
        path: if rest.len() > 1 {
            rest.trim_end_matches('/').to_string()
        } else {
            "/".to_string()
        },
        query: parse_query(&raw_query),
        raw_query: &raw_query,
        headers: &headers,
        body: body_json.as_ref(),
        root,
    };

    let response = if let Some(f) = fault {
        json_resp(f.status, &f.body)
    } else {
        match service.as_str() {
            "identity" => identity(&shared, &req),
            "image" => authed(&shared, &req, image),
            "compute" => authed(&shared, &req, compute),
            "network" => authed(&shared, &req, network),
            "volume" => authed(&shared, &req, volume),
            "load-balancer" => authed(&shared, &req, octavia),
            _ if path == "/" => json_resp(200, &json!({"services": SERVICES})),
            _ => keystone_error(404, "Not Found", "The resource could not be found."),
        }
    };

    lock(&shared.requests).push(RecordedRequest {
        method: method.to_string(),
        path,
        query: raw_query.clone(),
        service,
        prefix,
        service_path: req.path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body_json,
        status: response.status().as_u16(),
    });
    response
}

fn token_valid(shared: &Shared, token: Option<&str>) -> bool {
    match token {
        Some(t) if !t.is_empty() => {
            lock(&shared.data).accept_any_token || lock(&shared.tokens).contains_key(t)
        }
        _ => false,
    }
}

fn authed(shared: &Shared, req: &Req<'_>, f: fn(&Shared, &Req<'_>) -> Response) -> Response {
    let versions_doc = req.path == "/";
    if !versions_doc && !token_valid(shared, req.header("x-auth-token")) {
        return unauthorized(&shared.base);
    }
    f(shared, req)
}

// ------------------------------------------------------------------ keystone

fn catalog(shared: &Shared) -> Value {
    let d = lock(&shared.data);
    let base = &shared.base;
    if let Some(c) = &d.catalog {
        let text = c.to_string().replace("{base}", base);
        return serde_json::from_str(&text).unwrap_or(Value::Array(Vec::new()));
    }
    let svc = |stype: &str, name: &str, path: &str| {
        let endpoints: Vec<Value> = [
            ("public", ""),
            ("internal", "/internal"),
            ("admin", "/admin"),
        ]
        .iter()
        .map(|(iface, pre)| {
            json!({"id": format!("{stype}-{iface}"), "interface": iface, "region": d.region,
                       "region_id": d.region, "url": format!("{base}{pre}{path}")})
        })
        .collect();
        json!({"id": format!("{stype}-service"), "type": stype, "name": name, "endpoints": endpoints})
    };
    let magnum: Vec<Value> = ["public", "internal", "admin"]
        .iter()
        .map(|iface| {
            json!({"id": format!("container-infra-{iface}"), "interface": iface, "region": d.region,
                   "region_id": d.region, "url": d.magnum_url})
        })
        .collect();
    let mut services = vec![
        svc("identity", "keystone", "/identity"),
        svc("image", "glance", "/image"),
        svc("compute", "nova", "/compute/v2.1"),
        svc("network", "neutron", "/network"),
        svc("block-storage", "cinderv3", "/volume/v3"),
        svc("load-balancer", "octavia", "/load-balancer"),
        json!({"id": "container-infra-service", "type": "container-infra", "name": "magnum", "endpoints": magnum}),
    ];
    if let Some(url) = &d.key_manager_url {
        let endpoints: Vec<Value> = ["public", "internal", "admin"]
            .iter()
            .map(|iface| {
                json!({"id": format!("key-manager-{iface}"), "interface": iface, "region": d.region,
                       "region_id": d.region, "url": url})
            })
            .collect();
        services.push(json!({"id": "key-manager-service", "type": "key-manager", "name": "barbican", "endpoints": endpoints}));
    }
    Value::Array(services)
}

pub(crate) fn token_body(shared: &Shared, info: &TokenInfo, with_catalog: bool) -> Value {
    let roles: Vec<Value> = lock(&shared.data)
        .roles
        .iter()
        .map(|r| json!({"id": format!("role-{r}"), "name": r}))
        .collect();
    let mut tok = Map::new();
    tok.insert("methods".into(), json!(info.methods));
    tok.insert("user".into(), info.user.clone());
    tok.insert(
        "audit_ids".into(),
        json!([uuid::Uuid::new_v4().simple().to_string()[..22].to_string()]),
    );
    tok.insert("expires_at".into(), json!(info.expires_at));
    tok.insert("issued_at".into(), json!(info.issued_at));
    let scoped = info.project.is_some() || info.domain.is_some() || info.system;
    if let Some(p) = &info.project {
        tok.insert("project".into(), p.clone());
        tok.insert("is_domain".into(), json!(false));
    }
    if let Some(d) = &info.domain {
        tok.insert("domain".into(), d.clone());
    }
    if info.system {
        tok.insert("system".into(), json!({"all": true}));
    }
    if scoped {
        tok.insert("roles".into(), Value::Array(roles));
        if with_catalog {
            tok.insert("catalog".into(), catalog(shared));
        }
    }
    json!({ "token": tok })
}

pub(crate) fn issue(shared: &Shared, info: TokenInfo) -> String {
    let token = format!("standin-{}", uuid::Uuid::new_v4().simple());
    lock(&shared.tokens).insert(token.clone(), info);
    token
}

fn domain_ref(v: Option<&Value>) -> Value {
    let id = v.and_then(|d| d.get("id")).and_then(Value::as_str);
    let name = v.and_then(|d| d.get("name")).and_then(Value::as_str);
    match (id, name) {
        (Some(id), _) => json!({"id": id, "name": if id == DOMAIN.0 { DOMAIN.1 } else { id }}),
        (None, Some(name)) => {
            json!({"id": if name == DOMAIN.1 { DOMAIN.0 } else { name }, "name": name})
        }
        _ => json!({"id": DOMAIN.0, "name": DOMAIN.1}),
    }
}

pub(crate) fn user_value(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "domain": {"id": DOMAIN.0, "name": DOMAIN.1}, "password_expires_at": null})
}

pub(crate) fn project_value(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "domain": {"id": DOMAIN.0, "name": DOMAIN.1}})
}

fn authenticate(shared: &Shared, req: &Req<'_>) -> Response {
    let Some(auth) = req.body.and_then(|b| b.get("auth")) else {
        return keystone_error(
            400,
            "Bad Request",
            "Expecting to find auth in request body.",
        );
    };
    let identity = auth.get("identity").cloned().unwrap_or(Value::Null);
    let methods: Vec<String> = identity
        .get("methods")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut default_project: Option<Value> = None;
    let user = if methods.iter().any(|m| m == "password") {
        let u = identity
            .pointer("/password/user")
            .cloned()
            .unwrap_or(Value::Null);
        let wanted = lock(&shared.data).password.clone();
        let given = u.get("password").and_then(Value::as_str);
        if wanted.is_some_and(|w| given != Some(w.as_str())) {
            return keystone_error(
                401,
                "Unauthorized",
                "The request you have made requires authentication.",
            );
        }
        let id = u.get("id").and_then(Value::as_str);
        let name = u.get("name").and_then(Value::as_str);
        match (id, name) {
            (Some(id), n) => {
                let mut v = user_value(id, n.unwrap_or(id));
                v["domain"] = domain_ref(u.get("domain"));
                v
            }
            (None, Some(name)) => {
                let mut v = user_value(name, name);
                v["domain"] = domain_ref(u.get("domain"));
                v
            }
            _ => {
                return keystone_error(
                    400,
                    "Bad Request",
                    "Expecting to find user in request body.",
                )
            }
        }
    } else if methods.iter().any(|m| m == "token") {
        let t = identity.pointer("/token/id").and_then(Value::as_str);
        let known = t.and_then(|t| lock(&shared.tokens).get(t).cloned());
        match known {
            Some(info) => {
                // Keystone scopes a request without a scope to the user's default project;
                // the stand-in takes the presented token's project as that default (what
                // keystoneauth's v3.Token plugin without a project, as Magnum's API uses
                // it for the caller's token, relies on).
                default_project = info.project.clone();
                info.user
            }
            None => {
                return keystone_error(
                    401,
                    "Unauthorized",
                    "The request you have made requires authentication.",
                )
            }
        }
    } else {
        return keystone_error(
            401,
            "Unauthorized",
            "The request you have made requires authentication.",
        );
    };

    let scope = auth.get("scope");
    let mut info = TokenInfo {
        user,
        project: None,
        domain: None,
        system: false,
        methods,
        issued_at: now(0),
        expires_at: now(3600),
    };
    if let Some(p) = scope.and_then(|s| s.get("project")) {
        let id = p.get("id").and_then(Value::as_str);
        let name = p.get("name").and_then(Value::as_str);
        let (id, name) = match (id, name) {
            (Some(id), n) => (id.to_string(), n.unwrap_or(id).to_string()),
            (None, Some(n)) => (n.to_string(), n.to_string()),
            _ => {
                return keystone_error(
                    400,
                    "Bad Request",
                    "Expecting to find project in request body.",
                )
            }
        };
        let mut v = project_value(&id, &name);
        v["domain"] = domain_ref(p.get("domain"));
        info.project = Some(v);
    } else if let Some(d) = scope.and_then(|s| s.get("domain")) {
        info.domain = Some(domain_ref(Some(d)));
    } else if scope.and_then(|s| s.get("system")).is_some() {
        info.system = true;
    } else if let Some(t) = scope.and_then(|s| s.get("OS-TRUST:trust")) {
        let tid = t.get("id").and_then(Value::as_str).unwrap_or_default();
        info.project = Some(project_value(&format!("trust-{tid}"), "trust-project"));
    } else if scope.is_none() {
        info.project = default_project;
    }
    let with_catalog = req.q("nocatalog").is_none();
    let body = token_body(shared, &info, with_catalog);
    let token = issue(shared, info);
    let mut r = json_resp(201, &body);
    if let Ok(v) = HeaderValue::from_str(&token) {
        r.headers_mut().insert("x-subject-token", v);
    }
    r
}

fn v3_doc(root: &str) -> Value {
    json!({"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
           "links": [{"rel": "self", "href": format!("{root}/v3/")}],
           "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]})
}

fn identity(shared: &Shared, req: &Req<'_>) -> Response {
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/") => json_resp(300, &json!({"versions": {"values": [v3_doc(&req.root)]}})),
        ("GET", "/v3") => json_resp(200, &json!({"version": v3_doc(&req.root)})),
        ("POST", "/v3/auth/tokens") => authenticate(shared, req),
        (m @ ("GET" | "HEAD" | "DELETE"), "/v3/auth/tokens") => {
            if !token_valid(shared, req.header("x-auth-token")) {
                return unauthorized(&shared.base);
            }
            let subject = req
                .header("x-subject-token")
                .unwrap_or_default()
                .to_string();
            let info = lock(&shared.tokens).get(&subject).cloned();
            let Some(info) = info else {
                return keystone_error(
                    404,
                    "Not Found",
                    &format!("Could not find token: {subject}."),
                );
            };
            if m == "DELETE" {
                lock(&shared.tokens).remove(&subject);
                return StatusCode::NO_CONTENT.into_response();
            }
            let with_catalog = req.q("nocatalog").is_none();
            let mut r = if m == "HEAD" {
                StatusCode::OK.into_response()
            } else {
                json_resp(200, &token_body(shared, &info, with_catalog))
            };
            if let Ok(v) = HeaderValue::from_str(&subject) {
                r.headers_mut().insert("x-subject-token", v);
            }
            r
        }
        ("GET", p) if p.starts_with("/v3/projects/") => {
            if !token_valid(shared, req.header("x-auth-token")) {
                return unauthorized(&shared.base);
            }
            let pid = &p["/v3/projects/".len()..];
            let missing = pid.starts_with("nonexistent")
                || lock(&shared.data).missing_projects.iter().any(|m| m == pid);
            if missing || pid.contains('/') {
                return keystone_error(
                    404,
                    "Not Found",
                    &format!("Could not find project: {pid}."),
                );
            }
            json_resp(
                200,
                &json!({"project": {"id": pid, "name": pid, "domain_id": "default", "enabled": true,
                    "is_domain": false, "parent_id": "default", "description": "", "tags": [], "options": {},
                    "links": {"self": format!("{}/v3/projects/{pid}", req.root)}}}),
            )
        }
        _ => keystone_error(404, "Not Found", "The resource could not be found."),
    }
}

// ------------------------------------------------------------------ paging

/// `limit` / `marker` paging over `items` by `id`; returns the page and whether it is full.
fn page<T: Clone>(
    items: &[T],
    id: impl Fn(&T) -> &str,
    limit: Option<usize>,
    marker: Option<&str>,
) -> Option<(Vec<T>, bool)> {
    let start = match marker {
        Some(m) => items.iter().position(|i| id(i) == m)? + 1,
        None => 0,
    };
    let rest = &items[start.min(items.len())..];
    match limit {
        Some(l) if l > 0 => {
            let page: Vec<T> = rest.iter().take(l).cloned().collect();
            let full = page.len() == l;
            Some((page, full))
        }
        _ => Some((rest.to_vec(), false)),
    }
}

fn limit_of(req: &Req<'_>, default: Option<usize>) -> Option<usize> {
    req.q("limit").and_then(|l| l.parse().ok()).or(default)
}

fn query_without(req: &Req<'_>, drop: &[&str]) -> String {
    req.raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let k = p.split('=').next().unwrap_or_default();
            !drop.contains(&pct_decode(k).as_str())
        })
        .collect::<Vec<_>>()
        .join("&")
}

// ------------------------------------------------------------------ glance

fn image_doc(img: &super::data::Image) -> Value {
    let mut d = Map::new();
    for (k, v) in [
        ("id", json!(img.id)),
        ("name", json!(img.name)),
        ("status", json!("active")),
        ("visibility", json!("public")),
        ("protected", json!(false)),
        ("os_hidden", json!(false)),
        ("container_format", json!("bare")),
        ("disk_format", json!("qcow2")),
        ("min_disk", json!(0)),
        ("min_ram", json!(0)),
        ("size", json!(1073741824u64)),
        ("virtual_size", json!(null)),
        ("checksum", json!("8ed8b1bd0c8a1b2ab6b3ef3b1d9e2bd4")),
        ("os_hash_algo", json!("sha512")),
        ("os_hash_value", json!(null)),
        ("owner", json!("standin-owner")),
        ("tags", json!([])),
        ("created_at", json!("2025-01-01T00:00:00Z")),
        ("updated_at", json!("2025-01-01T00:00:00Z")),
        ("self", json!(format!("/v2/images/{}", img.id))),
        ("file", json!(format!("/v2/images/{}/file", img.id))),
        ("schema", json!("/v2/schemas/image")),
    ] {
        d.insert(k.to_string(), v);
    }
    if let Some(os) = &img.os_distro {
        d.insert("os_distro".into(), json!(os));
    }
    for (k, v) in &img.properties {
        d.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Value::Object(d)
}

fn image(shared: &Shared, req: &Req<'_>) -> Response {
    let d = lock(&shared.data).clone();
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/") => json_resp(
            300,
            &json!({"versions": [{"id": "v2.16", "status": "CURRENT",
                "links": [{"rel": "self", "href": format!("{}/v2/", req.root)}]}]}),
        ),
        ("GET", "/v2/images") => {
            let mut imgs: Vec<_> = d.images.clone();
            if let Some(n) = req.q("name") {
                imgs.retain(|i| i.name == n);
            }
            if let Some(id) = req.q("id") {
                imgs.retain(|i| i.id == id);
            }
            let limit = limit_of(req, d.page_size.or(Some(25)));
            let Some((page, full)) = page(&imgs, |i| i.id.as_str(), limit, req.q("marker")) else {
                return html_resp(400, "400 Bad Request", "marker not found");
            };
            let mut body = json!({"images": page.iter().map(image_doc).collect::<Vec<_>>(),
                                  "first": "/v2/images", "schema": "/v2/schemas/images"});
            if full {
                if let Some(last) = page.last() {
                    let rest = query_without(req, &["marker"]);
                    let sep = if rest.is_empty() { "" } else { "&" };
                    body["next"] = json!(format!("/v2/images?marker={}{sep}{rest}", last.id));
                }
            }
            json_resp(200, &body)
        }
        ("GET", p) if p.starts_with("/v2/images/") => {
            let id = pct_decode(&p["/v2/images/".len()..]);
            match d.images.iter().find(|i| i.id == id) {
                Some(i) => json_resp(200, &image_doc(i)),
                None => html_resp(
                    404,
                    "404 Not Found",
                    &format!("No image found with ID {id}"),
                ),
            }
        }
        _ => html_resp(404, "404 Not Found", "The resource could not be found."),
    }
}

// ------------------------------------------------------------------ nova

fn flavor_doc(root: &str, f: &super::data::Flavor) -> Value {
    json!({"id": f.id, "name": f.name, "ram": f.ram, "vcpus": f.vcpus, "disk": f.disk,
           "OS-FLV-EXT-DATA:ephemeral": 0, "swap": 0, "rxtx_factor": 1.0,
           "os-flavor-access:is_public": true, "OS-FLV-DISABLED:disabled": false,
           "description": null, "extra_specs": {},
           "links": [{"rel": "self", "href": format!("{root}/v2.1/flavors/{}", f.id)},
                     {"rel": "bookmark", "href": format!("{root}/flavors/{}", f.id)}]})
}

fn nova_not_found(message: &str) -> Response {
    json_resp(
        404,
        &json!({"itemNotFound": {"code": 404, "message": message}}),
    )
}

fn compute(shared: &Shared, req: &Req<'_>) -> Response {
    let d = lock(&shared.data).clone();
    let v21 = json!({"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
                     "updated": "2013-07-23T11:33:21Z",
                     "links": [{"rel": "self", "href": format!("{}/v2.1/", req.root)}]});
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/") => json_resp(200, &json!({"versions": [v21]})),
        ("GET", "/v2.1") => json_resp(200, &json!({"version": v21})),
        ("GET", p @ ("/v2.1/flavors/detail" | "/v2.1/flavors")) => {
            let detail = p.ends_with("/detail");
            let limit = limit_of(req, d.page_size);
            let Some((page, full)) = page(&d.flavors, |f| f.id.as_str(), limit, req.q("marker"))
            else {
                return json_resp(
                    400,
                    &json!({"badRequest": {"code": 400, "message": "marker not found"}}),
                );
            };
            let docs: Vec<Value> = page
                .iter()
                .map(|f| {
                    let doc = flavor_doc(&req.root, f);
                    if detail {
                        doc
                    } else {
                        json!({"id": doc["id"], "name": doc["name"], "links": doc["links"], "description": null})
                    }
                })
                .collect();
            let mut body = json!({ "flavors": docs });
            if full {
                if let Some(last) = page.last() {
                    let rest = query_without(req, &["marker"]);
                    let sep = if rest.is_empty() { "" } else { "&" };
                    body["flavors_links"] = json!([{"rel": "next",
                        "href": format!("{}{p}?marker={}{sep}{rest}", req.root, last.id)}]);
                }
            }
            json_resp(200, &body)
        }
        ("GET", p) if p.starts_with("/v2.1/flavors/") => {
            let id = pct_decode(&p["/v2.1/flavors/".len()..]);
            match d.flavors.iter().find(|f| f.id == id) {
                Some(f) => json_resp(200, &json!({"flavor": flavor_doc(&req.root, f)})),
                None => nova_not_found(&format!("Flavor {id} could not be found.")),
            }
        }
        ("GET", "/v2.1/os-keypairs") => json_resp(
            200,
            &json!({"keypairs": d.keypairs.iter().map(|k| json!({"keypair": {
                "name": k.name, "public_key": k.public_key, "fingerprint": k.fingerprint, "type": "ssh"}}))
                .collect::<Vec<_>>()}),
        ),
        ("GET", p) if p.starts_with("/v2.1/os-keypairs/") => {
            let name = pct_decode(&p["/v2.1/os-keypairs/".len()..]);
            match d.keypairs.iter().find(|k| k.name == name) {
                Some(k) => json_resp(
                    200,
                    &json!({"keypair": {"name": k.name, "public_key": k.public_key,
                        "fingerprint": k.fingerprint, "type": "ssh", "user_id": "standin-user", "id": 1,
                        "deleted": false, "created_at": "2025-01-01T00:00:00.000000",
                        "updated_at": null, "deleted_at": null}}),
                ),
                None => nova_not_found(&format!("Keypair {name} not found for user standin-user")),
            }
        }
        (_, p) if p == "/v2.1/os-server-groups" || p.starts_with("/v2.1/os-server-groups/") => {
            server_groups(shared, req)
        }
        _ => nova_not_found("The resource could not be found."),
    }
}

/// Nova's newest microversion (as the version document says).
const NOVA_MAX: (u32, u32) = (2, 96);

/// The requested compute microversion: `OpenStack-API-Version: compute X.Y`, else
/// `X-OpenStack-Nova-API-Version: X.Y`, else 2.1; `latest` is the newest. `Err` is Nova's
/// 406 for a version it does not serve (or 400 for one it cannot parse).
fn nova_microversion(req: &Req<'_>) -> Result<(u32, u32), Box<Response>> {
    let raw = req
        .header("openstack-api-version")
        .and_then(|h| {
            h.split(',').find_map(|p| {
                let mut it = p.split_whitespace();
                (it.next() == Some("compute")).then(|| it.next().unwrap_or_default().to_string())
            })
        })
        .or_else(|| {
            req.header("x-openstack-nova-api-version")
                .map(str::to_string)
        });
    let Some(raw) = raw else {
        return Ok((2, 1));
    };
    if raw == "latest" {
        return Ok(NOVA_MAX);
    }
    let parsed = raw
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    match parsed {
        None => Err(Box::new(json_resp(
            400,
            &json!({"badRequest": {"code": 400, "message": format!("Invalid format for API version: {raw}")}}),
        ))),
        Some(v) if v < (2, 1) || v > NOVA_MAX => Err(Box::new(json_resp(
            406,
            &json!({"computeFault": {"code": 406, "message": format!(
                "Version {raw} is not supported by the API. Minimum is 2.1 and maximum is {}.{}.",
                NOVA_MAX.0, NOVA_MAX.1)}}),
        ))),
        Some(v) => Ok(v),
    }
}

/// The user and project of the request's token (issued by the stand-in), and whether it has
/// the admin role.
fn caller(shared: &Shared, req: &Req<'_>) -> (String, String, bool) {
    let token = req.header("x-auth-token").unwrap_or_default();
    let info = lock(&shared.tokens).get(token).cloned();
    let user = info
        .as_ref()
        .and_then(|i| i.user.get("id").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "standin-user".to_string());
    let project = info
        .as_ref()
        .and_then(|i| i.project.as_ref())
        .and_then(|p| p.get("id").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "standin-owner".to_string());
    let admin = lock(&shared.data).roles.iter().any(|r| r == "admin");
    (user, project, admin)
}

fn nova_bad_request(message: &str) -> Response {
    json_resp(
        400,
        &json!({"badRequest": {"code": 400, "message": message}}),
    )
}

fn server_group_doc(g: &super::data::ServerGroup, v: (u32, u32)) -> Value {
    let mut d = Map::new();
    d.insert("id".into(), json!(g.id));
    d.insert("name".into(), json!(g.name));
    if v >= (2, 64) {
        d.insert("policy".into(), json!(g.policy));
        d.insert("rules".into(), json!({}));
    } else {
        d.insert("policies".into(), json!([g.policy]));
        d.insert("metadata".into(), json!({}));
    }
    d.insert("members".into(), json!([]));
    if v >= (2, 13) {
        d.insert("project_id".into(), json!(g.project_id));
        d.insert("user_id".into(), json!(g.user_id));
    }
    Value::Object(d)
}

/// `os-server-groups` as Nova answers it (`nova/api/openstack/compute/server_groups.py` and
/// its JSON schemas).
fn server_groups(shared: &Shared, req: &Req<'_>) -> Response {
    let v = match nova_microversion(req) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let (user, project, admin) = caller(shared, req);
    let id = req
        .path
        .strip_prefix("/v2.1/os-server-groups/")
        .map(pct_decode);
    match (req.method.as_str(), id) {
        ("GET", None) => {
            let all = admin && req.q("all_projects").is_some_and(truthy);
            let groups: Vec<_> = lock(&shared.data)
                .server_groups
                .iter()
                .filter(|g| all || g.project_id == project)
                .cloned()
                .collect();
            let offset: usize = req.q("offset").and_then(|o| o.parse().ok()).unwrap_or(0);
            let limit: usize = req
                .q("limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(1000)
                .min(1000);
            let docs: Vec<Value> = groups
                .iter()
                .skip(offset)
                .take(limit)
                .map(|g| server_group_doc(g, v))
                .collect();
            json_resp(200, &json!({ "server_groups": docs }))
        }
        ("POST", None) => {
            let Some(sg) = req.body.and_then(|b| b.get("server_group")) else {
                return nova_bad_request("Invalid input for field/attribute server_group. Value: None. 'server_group' is a required property");
            };
            let name = sg.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty() || name.len() > 255 {
                return nova_bad_request(&format!(
                    "Invalid input for field/attribute name. Value: {name}. '{name}' is too short"
                ));
            }
            let mut allowed = vec!["affinity", "anti-affinity"];
            if v >= (2, 15) {
                allowed.extend(["soft-affinity", "soft-anti-affinity"]);
            }
            let (field, other) = if v >= (2, 64) {
                ("policy", "policies")
            } else {
                ("policies", "policy")
            };
            if sg.get(other).is_some() {
                return nova_bad_request(&format!(
                    "Invalid input for field/attribute server_group. Value: {sg}. Additional properties are not allowed ('{other}' was unexpected)"
                ));
            }
            let policy = if v >= (2, 64) {
                sg.get("policy").and_then(Value::as_str).map(str::to_string)
            } else {
                match sg
                    .get("policies")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                {
                    Some([one]) => one.as_str().map(str::to_string),
                    _ => None,
                }
            };
            let Some(policy) = policy.filter(|p| allowed.contains(&p.as_str())) else {
                return nova_bad_request(&format!(
                    "Invalid input for field/attribute {field}. Value: {}. is not one of {allowed:?}",
                    sg.get(field).cloned().unwrap_or(Value::Null)
                ));
            };
            let g = super::data::ServerGroup {
                id: uuid::Uuid::new_v4().to_string(),
                name: name.to_string(),
                policy,
                project_id: project,
                user_id: user,
            };
            lock(&shared.data).server_groups.push(g.clone());
            json_resp(200, &json!({"server_group": server_group_doc(&g, v)}))
        }
        (m @ ("GET" | "DELETE"), Some(id)) => {
            let mut d = lock(&shared.data);
            let pos = d
                .server_groups
                .iter()
                .position(|g| g.id == id && (admin || g.project_id == project));
            let Some(pos) = pos else {
                return nova_not_found(&format!("Server group {id} could not be found."));
            };
            if m == "DELETE" {
                d.server_groups.remove(pos);
                return StatusCode::NO_CONTENT.into_response();
            }
            json_resp(
                200,
                &json!({"server_group": server_group_doc(&d.server_groups[pos], v)}),
            )
        }
        _ => json_resp(
            405,
            &json!({"computeFault": {"code": 405, "message": "The method specified is not allowed for this resource."}}),
        ),
    }
}

// ------------------------------------------------------------------ cinder

fn cinder_not_found(message: &str) -> Response {
    json_resp(
        404,
        &json!({"itemNotFound": {"code": 404, "message": message}}),
    )
}

/// The requested block-storage microversion (`OpenStack-API-Version: volume 3.N`), 3.0 when
/// none is given.
fn cinder_microversion(req: &Req<'_>) -> (u32, u32) {
    req.header("openstack-api-version")
        .and_then(|h| {
            h.split(',').find_map(|p| {
                let mut it = p.split_whitespace();
                if it.next() != Some("volume") {
                    return None;
                }
                let (a, b) = it.next()?.split_once('.')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
        })
        .unwrap_or((3, 0))
}

fn volume_type_doc(t: &super::data::VolumeType) -> Value {
    json!({"id": t.id, "name": t.name, "description": null, "is_public": true,
           "os-volume-type-access:is_public": true, "extra_specs": {}, "qos_specs_id": null})
}

/// Cinder v3's volume types, with or without the project id in the path.
fn volume(shared: &Shared, req: &Req<'_>) -> Response {
    let d = lock(&shared.data).clone();
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    let rest: &[&str] = match segs.as_slice() {
        ["v3", "types", ..] => &segs[1..],
        ["v3", _project, rest @ ..] => rest,
        _ => return cinder_not_found("The resource could not be found."),
    };
    match (req.method.as_str(), rest) {
        ("GET", ["types"]) => json_resp(
            200,
            &json!({"volume_types": d.volume_types.iter().map(volume_type_doc).collect::<Vec<_>>()}),
        ),
        ("GET", ["types", "default"]) if cinder_microversion(req) >= (3, 62) => {
            match d
                .default_volume_type
                .as_ref()
                .and_then(|n| d.volume_types.iter().find(|t| &t.name == n))
            {
                Some(t) => json_resp(200, &json!({"volume_type": volume_type_doc(t)})),
                None => cinder_not_found("Default volume type can not be found."),
            }
        }
        ("GET", ["types", id]) => match d.volume_types.iter().find(|t| t.id == *id) {
            Some(t) => json_resp(200, &json!({"volume_type": volume_type_doc(t)})),
            None => cinder_not_found(&format!("Volume type {id} could not be found.")),
        },
        _ => cinder_not_found("The resource could not be found."),
    }
}

// ------------------------------------------------------------------ neutron

fn neutron_not_found(message: &str) -> Response {
    json_resp(
        404,
        &json!({"NeutronError": {"type": "HTTPNotFound", "message": message, "detail": ""}}),
    )
}

fn truthy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on")
}

fn network(shared: &Shared, req: &Req<'_>) -> Response {
    let d = lock(&shared.data).clone();
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/") => json_resp(
            200,
            &json!({"versions": [{"id": "v2.0", "status": "CURRENT",
                "links": [{"rel": "self", "href": format!("{}/v2.0/", req.root)}]}]}),
        ),
        ("GET", "/v2.0/networks") => {
            let mut nets = d.networks.clone();
            if let Some(ext) = req.q("router:external") {
                let want = truthy(ext);
                nets.retain(|n| n.external == want);
            }
            if let Some(name) = req.q("name") {
                nets.retain(|n| n.name == name);
            }
            if let Some(id) = req.q("id") {
                nets.retain(|n| n.id == id);
            }
            let limit = limit_of(req, d.page_size);
            let Some((page, full)) = page(&nets, |n| n.id.as_str(), limit, req.q("marker")) else {
                return neutron_not_found("marker not found");
            };
            let docs: Vec<Value> = page
                .iter()
                .map(|n| {
                    let subnets: Vec<&str> = d
                        .subnets
                        .iter()
                        .filter(|s| s.network_id == n.id)
                        .map(|s| s.id.as_str())
                        .collect();
                    json!({"id": n.id, "name": n.name, "tenant_id": "standin-owner",
                           "project_id": "standin-owner", "admin_state_up": true, "mtu": 1450,
                           "status": "ACTIVE", "subnets": subnets, "shared": n.shared,
                           "availability_zone_hints": [], "availability_zones": ["nova"],
                           "ipv4_address_scope": null, "ipv6_address_scope": null,
                           "router:external": n.external, "description": "",
                           "port_security_enabled": true, "tags": [], "revision_number": 1,
                           "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"})
                })
                .collect();
            let mut body = json!({ "networks": docs });
            if full {
                if let Some(last) = page.last() {
                    let rest = query_without(req, &["marker"]);
                    let sep = if rest.is_empty() { "" } else { "&" };
                    body["networks_links"] = json!([{"rel": "next",
                        "href": format!("{}/v2.0/networks?marker={}{sep}{rest}", req.root, last.id)}]);
                }
            }
            json_resp(200, &body)
        }
        ("GET", "/v2.0/subnets") => {
            let mut subs = d.subnets.clone();
            if let Some(name) = req.q("name") {
                subs.retain(|s| s.name == name);
            }
            if let Some(net) = req.q("network_id") {
                subs.retain(|s| s.network_id == net);
            }
            let limit = limit_of(req, d.page_size);
            let Some((page, full)) = page(&subs, |s| s.id.as_str(), limit, req.q("marker")) else {
                return neutron_not_found("marker not found");
            };
            let docs: Vec<Value> = page
                .iter()
                .map(|s| {
                    json!({"id": s.id, "name": s.name, "network_id": s.network_id, "cidr": s.cidr,
                           "ip_version": 4, "enable_dhcp": true, "gateway_ip": null,
                           "allocation_pools": [], "dns_nameservers": [], "host_routes": [],
                           "tenant_id": "standin-owner", "project_id": "standin-owner",
                           "description": "", "tags": [], "revision_number": 0})
                })
                .collect();
            let mut body = json!({ "subnets": docs });
            if full {
                if let Some(last) = page.last() {
                    let rest = query_without(req, &["marker"]);
                    let sep = if rest.is_empty() { "" } else { "&" };
                    body["subnets_links"] = json!([{"rel": "next",
                        "href": format!("{}/v2.0/subnets?marker={}{sep}{rest}", req.root, last.id)}]);
                }
            }
            json_resp(200, &body)
        }
        ("GET", "/v2.0/floatingips") => {
            let fips: Vec<Value> = d
                .floating_ips
                .iter()
                .filter(|f| req.q("port_id").is_none_or(|p| p == f.port_id))
                .map(|f| {
                    json!({"id": f.id, "port_id": f.port_id, "description": f.description,
                           "floating_ip_address": "172.24.4.100", "status": "ACTIVE",
                           "tenant_id": "standin-owner", "project_id": "standin-owner"})
                })
                .collect();
            json_resp(200, &json!({ "floatingips": fips }))
        }
        ("DELETE", p) if p.starts_with("/v2.0/floatingips/") => {
            let id = &p["/v2.0/floatingips/".len()..];
            let mut d = lock(&shared.data);
            let before = d.floating_ips.len();
            d.floating_ips.retain(|f| f.id != id);
            if d.floating_ips.len() == before {
                return neutron_not_found(&format!("Floating IP {id} could not be found"));
            }
            empty_resp(204)
        }
        _ => neutron_not_found("The resource could not be found."),
    }
}

/// Octavia v2: list (`project_id` filter) and cascade delete of load balancers.
fn octavia(shared: &Shared, req: &Req<'_>) -> Response {
    let not_found = |what: &str| {
        json_resp(
            404,
            &json!({"faultcode": "Client", "faultstring": what, "debuginfo": null}),
        )
    };
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/v2/lbaas/loadbalancers") | ("GET", "/v2.0/lbaas/loadbalancers") => {
            let mut d = lock(&shared.data);
            let docs: Vec<Value> = d
                .load_balancers
                .iter()
                .filter(|lb| req.q("project_id").is_none_or(|p| p == lb.project_id))
                .map(|lb| {
                    json!({"id": lb.id, "project_id": lb.project_id, "name": "",
                           "description": lb.description,
                           "provisioning_status": lb.provisioning_status,
                           "operating_status": "ONLINE", "vip_port_id": lb.vip_port_id,
                           "vip_address": "10.0.0.100", "provider": "amphora"})
                })
                .collect();
            // what was PENDING_DELETE when listed is gone afterwards
            if !d.lb_deletes_hang {
                d.load_balancers
                    .retain(|lb| lb.provisioning_status != "PENDING_DELETE");
            }
            json_resp(200, &json!({ "loadbalancers": docs }))
        }
        ("DELETE", p) if p.starts_with("/v2/lbaas/loadbalancers/") => {
            let id = &p["/v2/lbaas/loadbalancers/".len()..];
            let mut d = lock(&shared.data);
            match d.load_balancers.iter_mut().find(|lb| lb.id == id) {
                Some(lb) if lb.provisioning_status == "PENDING_DELETE" => json_resp(
                    409,
                    &json!({"faultcode": "Client", "faultstring": format!("Invalid state PENDING_DELETE of loadbalancer resource {id}"), "debuginfo": null}),
                ),
                Some(lb) => {
                    lb.provisioning_status = "PENDING_DELETE".to_string();
                    empty_resp(204)
                }
                None => not_found(&format!("Load Balancer {id} not found.")),
            }
        }
        _ => not_found("The resource could not be found."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_queries() {
        assert_eq!(
            parse_query("router%3Aexternal=True&name=a+b&x"),
            vec![
                ("router:external".to_string(), "True".to_string()),
                ("name".to_string(), "a b".to_string()),
                ("x".to_string(), String::new()),
            ]
        );
        assert_eq!(pct_decode("100%"), "100%");
        assert_eq!(pct_decode("%zz"), "%zz");
    }
}
