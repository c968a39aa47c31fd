//! Token validation as keystonemiddleware's `auth_token` filter does it in Magnum's API
//! pipeline (`keystonemiddleware/auth_token/__init__.py`, `AuthProtocol.process_request`):
//!
//! * the request's `X-Auth-Token` (or `X-Storage-Token`) and optional `X-Service-Token` are
//!   validated with `GET /v3/auth/tokens` (`X-Subject-Token`), authenticated with the
//!   middleware's own service credentials (`[keystone_authtoken]` password plugin options);
//!   the identity endpoint is taken from the service token's catalogue (`interface`,
//!   `region_name`), as keystoneauth's adapter does, falling back to `auth_url`;
//! * a token is invalid when Keystone answers 404, when it has expired (unless a valid
//!   service token with one of `service_token_roles` allows it), when its bind cannot be
//!   honoured (`enforce_token_bind`), or when its application credential's access rules do not
//!   allow this request (`service_type`);
//! * the identity headers a service sees are computed from the token body
//!   ([`Identity::headers`]), and every header a client could forge is listed in
//!   [`AUTH_HEADERS`] so the caller removes them first;
//! * results (valid bodies and invalid tokens) are cached in process for `token_cache_time`
//!   seconds (`-1`: no cache), keyed by the SHA-256 of the token, with a size bound.
//!
//! Keystone unreachable or refusing the service credentials gives [`AuthFailure::Unavailable`]
//! (keystonemiddleware's 503). Tokens are never logged.

use openkeel_cloud::catalog::Catalog;
use openkeel_cloud::http::HttpClient;
use openkeel_cloud::session::{identity_v3, Authenticator, Session, SessionError};
use openkeel_cloud::CloudSettings;
use reqwest::{Method, Url};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The `[keystone_authtoken]` options the validator applies.
#[derive(Debug, Clone)]
pub struct AuthTokenSettings {
    /// `www_authenticate_uri`: the `WWW-Authenticate: Keystone uri="…"` value.
    pub www_authenticate_uri: Option<String>,
    /// `interface` (default `internal`) and `region_name`: where the identity endpoint is
    /// found in the service token's catalogue.
    pub interface: String,
    pub region_name: Option<String>,
    /// `include_service_catalog`: ask for (and pass on) the catalogue.
    pub include_service_catalog: bool,
    /// `token_cache_time` in seconds; `-1` disables the cache.
    pub token_cache_time: i64,
    /// The most tokens kept in the cache (OpenKeel's bound; keystonemiddleware's in-process
    /// cache has none).
    pub cache_size: usize,
    /// `service_token_roles` / `service_token_roles_required`.
    pub service_token_roles: Vec<String>,
    pub service_token_roles_required: bool,
    /// `enforce_token_bind` (`disabled`, `permissive`, `strict`, `required`, or a bind name).
    pub enforce_token_bind: String,
    /// `service_type`: needed to honour application-credential access rules.
    pub service_type: Option<String>,
    /// The middleware's own credentials (`[keystone_authtoken]` `auth_url`, `username`,
    /// `password`, `project_name`, … in `keystone_auth`) and the session options (`cafile`,
    /// `certfile`, `keyfile`, `insecure`, `http_connect_timeout` as `timeout`).
    pub credentials: CloudSettings,
}

impl Default for AuthTokenSettings {
    fn default() -> Self {
        AuthTokenSettings {
            www_authenticate_uri: None,
            interface: "internal".to_string(),
            region_name: None,
            include_service_catalog: true,
            token_cache_time: 300,
            cache_size: DEFAULT_CACHE_SIZE,
            service_token_roles: vec!["service".to_string()],
            service_token_roles_required: true,
            enforce_token_bind: "permissive".to_string(),
            service_type: None,
            credentials: CloudSettings::default(),
        }
    }
}

/// Default bound of the validation cache.
pub const DEFAULT_CACHE_SIZE: usize = 10_000;

/// Every header keystonemiddleware removes from a request before validating
/// (`_AuthTokenRequest._all_auth_headers`), so a client cannot forge an identity.
pub const AUTH_HEADERS: &[&str] = &[
    "x-service-catalog",
    "x-identity-status",
    "x-service-identity-status",
    "x-is-admin-project",
    "x-role",
    "x-user",
    "x-tenant-id",
    "x-tenant-name",
    "x-tenant",
    "x-domain-id",
    "x-domain-name",
    "x-project-id",
    "x-project-name",
    "x-project-domain-id",
    "x-project-domain-name",
    "x-user-id",
    "x-user-name",
    "x-user-domain-id",
    "x-user-domain-name",
    "x-service-domain-id",
    "x-service-domain-name",
    "x-service-project-id",
    "x-service-project-name",
    "x-service-project-domain-id",
    "x-service-project-domain-name",
    "x-service-user-id",
    "x-service-user-name",
    "x-service-user-domain-id",
    "x-service-user-domain-name",
    "x-roles",
    "x-service-roles",
    "openstack-system-scope",
];

/// Why a request is not let through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// keystonemiddleware's 401: no token, an invalid or expired one, or an invalid service
    /// token.
    Unauthorized,
    /// keystonemiddleware's 503 (`The Keystone service is temporarily unavailable.`): Keystone
    /// cannot be reached or refuses the middleware's own credentials. The detail is logged,
    /// never sent.
    Unavailable(String),
}

/// A validated request: the headers to set, and the user token's body
/// (`keystone.token_info`, the context's `auth_token_info`).
#[derive(Debug, Clone)]
pub struct Identity {
    pub headers: Vec<(&'static str, String)>,
    /// [`Identity::headers`] as HTTP header values, built once per cache entry (cloning one
    /// is a reference count, not a copy of the catalogue header). Values that are not valid
    /// header text are left out, as before.
    pub header_values: Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>,
    pub token_info: Arc<Value>,
    pub user_id: Option<String>,
    pub project_id: Option<String>,
}

/// What is cached per token.
#[derive(Clone)]
enum Cached {
    Valid(Arc<Value>),
    Invalid,
}

struct Entry {
    value: Cached,
    until: Instant,
    /// The identity computed from a valid body for requests without a service token
    /// (headers, catalogue header): computed once, reused while the entry lives.
    identity: Option<Arc<Identity>>,
}

/// The in-process validation cache: SHA-256 of the token → result, with an expiry and a
/// size bound (expired entries are dropped first, then the oldest).
struct TokenCache {
    ttl: Option<Duration>,
    max: usize,
    entries: HashMap<[u8; 32], Entry>,
}

impl TokenCache {
    fn key(token: &str) -> [u8; 32] {
        let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut k = [0u8; 32];
        k.copy_from_slice(d.as_ref());
        k
    }

    fn get(&mut self, key: &[u8; 32]) -> Option<Cached> {
        let now = Instant::now();
        match self.entries.get(key) {
            Some(e) if e.until > now => Some(e.value.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn set(&mut self, key: [u8; 32], value: Cached) {
        let Some(ttl) = self.ttl else { return };
        if self.max == 0 {
            return;
        }
        let now = Instant::now();
        if self.entries.len() >= self.max && !self.entries.contains_key(&key) {
            self.entries.retain(|_, e| e.until > now);
            while self.entries.len() >= self.max {
                let oldest = self
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.until)
                    .map(|(k, _)| *k);
                match oldest {
                    Some(k) => {
                        self.entries.remove(&k);
                    }
                    None => break,
                }
            }
        }
        self.entries.insert(
            key,
            Entry {
                value,
                until: now + ttl,
                identity: None,
            },
        );
    }
}

/// The validator. One per API process; cheap to share behind an `Arc`.
pub struct AuthToken {
    settings: AuthTokenSettings,
    http: HttpClient,
    service: Authenticator,
    cache: Mutex<TokenCache>,
}

impl std::fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthToken")
            .field("www_authenticate_uri", &self.settings.www_authenticate_uri)
            .field("token_cache_time", &self.settings.token_cache_time)
            .finish_non_exhaustive()
    }
}

/// Why a token is not valid, or validation could not be done.
enum FetchError {
    Invalid,
    Unavailable(String),
}

impl AuthToken {
    /// Build the validator. Fails when the TLS files cannot be read or no `auth_url` is set.
    pub fn new(settings: AuthTokenSettings) -> Result<AuthToken, String> {
        if settings.credentials.auth_url().is_none() {
            return Err("[keystone_authtoken] auth_url is required with auth_strategy = keystone (the middleware's own credentials: auth_type = password, auth_url, username, password, project_name, user_domain_name, project_domain_name)".to_string());
        }
        let http = HttpClient::new(&settings.credentials)?;
        let service = Authenticator::new(Arc::new(settings.credentials.clone()), http.clone());
        let ttl = (settings.token_cache_time >= 0)
            .then(|| Duration::from_secs(settings.token_cache_time as u64));
        let cache = TokenCache {
            ttl,
            max: settings.cache_size,
            entries: HashMap::new(),
        };
        Ok(AuthToken {
            settings,
            http,
            service,
            cache: Mutex::new(cache),
        })
    }

    /// `Keystone uri="<www_authenticate_uri>"` (keystonemiddleware's `_reject_auth_headers`;
    /// when the option is unset it falls back to the auth URL, as keystonemiddleware falls
    /// back to its identity server's).
    pub fn www_authenticate(&self) -> String {
        let uri = self
            .settings
            .www_authenticate_uri
            .as_deref()
            .filter(|u| !u.is_empty())
            .or(self.settings.credentials.auth_url())
            .unwrap_or("");
        format!("Keystone uri=\"{uri}\"")
    }

    /// Number of cached validation results (for tests and metrics).
    pub fn cached_tokens(&self) -> usize {
        self.cache.lock().map(|c| c.entries.len()).unwrap_or(0)
    }

    /// `AuthProtocol.process_request` for one request: the user token (`X-Auth-Token` or
    /// `X-Storage-Token`), the optional `X-Service-Token`, the request's method and path (for
    /// access rules).
    pub async fn authenticate(
        &self,
        user_token: Option<&str>,
        service_token: Option<&str>,
        method: &str,
        path: &str,
    ) -> Result<Arc<Identity>, AuthFailure> {
        // Fast path: a user token alone whose identity was computed before and is still
        // cached; expiry and access rules are checked again, as for any cached body.
        let user_key = user_token
            .map(str::trim)
            .filter(|t| !t.is_empty() && service_token.is_none())
            .map(TokenCache::key);
        if let Some(key) = &user_key {
            let memo = self.cache.lock().ok().and_then(|mut c| {
                c.get(key)?;
                c.entries.get(key).and_then(|e| e.identity.clone())
            });
            if let Some(id) = memo {
                if self.usable(&id.token_info, false)
                    && self.access_rules_allow(&id.token_info, false, method, path)
                {
                    return Ok(id);
                }
            }
        }
        let mut allow_expired = false;
        let mut service_status: Option<bool> = None;
        let mut service_body: Option<Arc<Value>> = None;
        if let Some(st) = service_token {
            match self.fetch(st, false).await {
                Ok(body) if self.usable(&body, false) && self.bind_ok(&body) => {
                    let roles = role_names(&body);
                    let passed = roles
                        .iter()
                        .any(|r| self.settings.service_token_roles.iter().any(|s| s == r));
                    service_status = Some(if self.settings.service_token_roles_required {
                        passed
                    } else {
                        true
                    });
                    allow_expired = passed;
                    service_body = Some(body);
                }
                Ok(_) | Err(FetchError::Invalid) => {
                    tracing::info!("Invalid service token");
                    service_status = Some(false);
                }
                Err(FetchError::Unavailable(e)) => return Err(AuthFailure::Unavailable(e)),
            }
        }
        let user_token = user_token.map(str::trim).filter(|t| !t.is_empty());
        let Some(ut) = user_token else {
            tracing::info!("Rejecting request: no token");
            return Err(AuthFailure::Unauthorized);
        };
        let body = match self.fetch(ut, allow_expired).await {
            Ok(b) => b,
            Err(FetchError::Invalid) => {
                tracing::info!("Rejecting request: invalid user token");
                return Err(AuthFailure::Unauthorized);
            }
            Err(FetchError::Unavailable(e)) => return Err(AuthFailure::Unavailable(e)),
        };
        if !self.usable(&body, allow_expired)
            || !self.access_rules_allow(&body, service_token.is_some(), method, path)
            || (service_token.is_none() && !self.bind_ok(&body))
        {
            tracing::info!("Rejecting request: user token expired or not usable here");
            return Err(AuthFailure::Unauthorized);
        }
        if service_status == Some(false) {
            tracing::info!("Rejecting request: invalid service token");
            return Err(AuthFailure::Unauthorized);
        }
        let confirmed_service = match service_status {
            Some(true) => service_body.as_deref(),
            _ => None,
        };
        let identity = Arc::new(self.identity(body, confirmed_service));
        if let Some(key) = &user_key {
            if let Ok(mut c) = self.cache.lock() {
                if let Some(e) = c.entries.get_mut(key) {
                    if matches!(e.value, Cached::Valid(_)) && e.until > Instant::now() {
                        e.identity = Some(identity.clone());
                    }
                }
            }
        }
        Ok(identity)
    }

    /// The identity of a validated, usable token body (keystonemiddleware's
    /// `_build_user_headers` and the catalogue header), with the service token's headers
    /// when a service token was confirmed.
    fn identity(&self, body: Arc<Value>, service_body: Option<&Value>) -> Identity {
        let mut headers = Vec::with_capacity(24);
        headers.push(("x-identity-status", "Confirmed".to_string()));
        auth_headers(&body, "", &mut headers);
        let token = body.get("token").unwrap_or(&Value::Null);
        let admin_project = token
            .get("is_admin_project")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        headers.push((
            "x-is-admin-project",
            if admin_project { "True" } else { "False" }.to_string(),
        ));
        for (old, new) in [
            ("x-role", "x-roles"),
            ("x-user", "x-user-name"),
            ("x-tenant-id", "x-project-id"),
            ("x-tenant-name", "x-project-name"),
            ("x-tenant", "x-project-name"),
        ] {
            if let Some(v) = headers
                .iter()
                .find(|(n, _)| *n == new)
                .map(|(_, v)| v.clone())
            {
                headers.push((old, v));
            }
        }
        if self.settings.include_service_catalog {
            if let Some(catalog) = token.get("catalog").and_then(Value::as_array) {
                let normalized = normalize_catalog(catalog);
                headers.push((
                    "x-service-catalog",
                    openkeel_core::pyjson::dumps(&normalized),
                ));
            }
        }
        if let Some(sb) = service_body {
            headers.push(("x-service-identity-status", "Confirmed".to_string()));
            auth_headers(sb, "service-", &mut headers);
        }
        let get = |p: &str| body.pointer(p).and_then(Value::as_str).map(str::to_string);
        let header_values = headers
            .iter()
            .filter_map(|(n, v)| {
                let name = reqwest::header::HeaderName::from_bytes(n.as_bytes()).ok()?;
                Some((name, reqwest::header::HeaderValue::from_str(v).ok()?))
            })
            .collect();
        Identity {
            user_id: get("/token/user/id"),
            project_id: get("/token/project/id"),
            headers,
            header_values,
            token_info: body,
        }
    }

    /// Not expired (`will_expire_soon(stale_duration=0)`), unless expired tokens are allowed.
    fn usable(&self, body: &Value, allow_expired: bool) -> bool {
        if allow_expired {
            return true;
        }
        let expires = body
            .pointer("/token/expires_at")
            .and_then(Value::as_str)
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
        match expires {
            Some(t) => t.with_timezone(&chrono::Utc) > chrono::Utc::now(),
            None => false,
        }
    }

    /// `_confirm_token_bind`. OpenKeel has no Kerberos front end, so a Kerberos bind is never
    /// honoured (as keystonemiddleware without `REMOTE_USER`).
    fn bind_ok(&self, body: &Value) -> bool {
        let mode = self.settings.enforce_token_bind.as_str();
        if mode == "disabled" {
            return true;
        }
        let permissive = mode == "permissive" || mode == "strict";
        let bind = body
            .pointer("/token/bind")
            .and_then(Value::as_object)
            .filter(|b| !b.is_empty());
        let Some(bind) = bind else {
            return permissive;
        };
        let name = if permissive || mode == "required" {
            None
        } else {
            Some(mode)
        };
        if let Some(n) = name {
            if !bind.contains_key(n) {
                return false;
            }
        }
        bind.keys()
            .all(|kind| kind != "kerberos" && mode == "permissive")
    }

    /// `validate_allowed_request`: application-credential access rules.
    fn access_rules_allow(
        &self,
        body: &Value,
        has_service: bool,
        method: &str,
        path: &str,
    ) -> bool {
        let Some(rules) = body
            .pointer("/token/application_credential/access_rules")
            .and_then(Value::as_array)
        else {
            return true;
        };
        let Some(my_type) = self
            .settings
            .service_type
            .as_deref()
            .filter(|s| !s.is_empty())
        else {
            tracing::warn!("Cannot validate request with restricted access rules. Set service_type in [keystone_authtoken] to allow access rule validation.");
            return false;
        };
        let in_catalog = body
            .pointer("/token/catalog")
            .and_then(Value::as_array)
            .is_some_and(|c| {
                c.iter()
                    .any(|s| s.get("type").and_then(Value::as_str) == Some(my_type))
            });
        if !in_catalog {
            return false;
        }
        if has_service {
            return true;
        }
        rules.iter().any(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            s("method") == method && s("service") == my_type && path_matches(path, s("path"))
        })
    }

    /// `fetch_token`: the cache, else Keystone.
    async fn fetch(&self, token: &str, allow_expired: bool) -> Result<Arc<Value>, FetchError> {
        let key = TokenCache::key(token);
        let cached = self.cache.lock().ok().and_then(|mut c| c.get(&key));
        match cached {
            Some(Cached::Valid(b)) => return Ok(b),
            Some(Cached::Invalid) => return Err(FetchError::Invalid),
            None => {}
        }
        let result = self.verify(token, allow_expired, true).await;
        let store = match &result {
            Ok(b) => Some(Cached::Valid(b.clone())),
            Err(FetchError::Invalid) => Some(Cached::Invalid),
            Err(FetchError::Unavailable(_)) => None,
        };
        if let Some(v) = store {
            if let Ok(mut c) = self.cache.lock() {
                c.set(key, v);
            }
        }
        result
    }

    async fn service_session(&self) -> Result<Session, FetchError> {
        let admin = openkeel_core::context::RequestContext {
            is_admin: true,
            ..Default::default()
        };
        self.service.session(&admin).await.map_err(|e| {
            FetchError::Unavailable(match e {
                SessionError::NoCredentials => "no service credentials".to_string(),
                SessionError::Authorization(m)
                | SessionError::Client(m)
                | SessionError::Unavailable(m) => m,
            })
        })
    }

    /// The identity endpoint (`…/v3`) from the service catalogue, else the auth URL.
    fn identity_url(&self, catalog: &Catalog) -> Result<Url, FetchError> {
        let from_catalog = catalog
            .endpoint(
                "identity",
                &self.settings.interface,
                self.settings.region_name.as_deref(),
            )
            .ok()
            .map(|e| e.url);
        let base = match from_catalog {
            Some(u) => u,
            None => self
                .settings
                .credentials
                .auth_url()
                .unwrap_or_default()
                .to_string(),
        };
        let mut url = identity_v3(&base).map_err(FetchError::Unavailable)?;
        if let Ok(mut segs) = url.path_segments_mut() {
            segs.push("auth").push("tokens");
        }
        Ok(url)
    }

    /// `IdentityServer.verify_token`: `GET /v3/auth/tokens` with the service token. A 401
    /// means the service token went stale: it is renewed and the call retried once.
    async fn verify(
        &self,
        token: &str,
        allow_expired: bool,
        retry: bool,
    ) -> Result<Arc<Value>, FetchError> {
        let session = self.service_session().await?;
        let mut url = self.identity_url(&session.catalog)?;
        {
            let mut q = Vec::new();
            if !self.settings.include_service_catalog {
                q.push("nocatalog");
            }
            if allow_expired {
                q.push("allow_expired=1");
            }
            if !q.is_empty() {
                url.set_query(Some(&q.join("&")));
            }
        }
        let resp = self
            .http
            .send(
                Method::GET,
                &url,
                &[("X-Auth-Token", &session.token), ("X-Subject-Token", token)],
                None,
            )
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "Unable to validate token");
                FetchError::Unavailable(e.to_string())
            })?;
        match resp.status {
            200..=299 => {
                let body = resp.json();
                if body.get("token").and_then(Value::as_object).is_none() {
                    tracing::warn!("Invalid token contents.");
                    return Err(FetchError::Invalid);
                }
                Ok(Arc::new(body))
            }
            404 => {
                tracing::info!("Authorization failed for token");
                Err(FetchError::Invalid)
            }
            401 if retry => {
                tracing::info!("Identity server rejected authorization; retrying validation");
                self.service.invalidate_service();
                Box::pin(self.verify(token, allow_expired, false)).await
            }
            401 => {
                tracing::error!(
                    "Identity server rejected authorization necessary to fetch token data"
                );
                Err(FetchError::Unavailable(
                    "Identity server rejected authorization necessary to fetch token data"
                        .to_string(),
                ))
            }
            status => {
                tracing::error!(status, "Bad response code while validating token");
                Err(FetchError::Unavailable(
                    "Failed to fetch token data from identity server".to_string(),
                ))
            }
        }
    }
}

/// The fuzz entry point for Keystone token bodies ([`crate::fuzzing::token_body`]): `raw` is
/// read as the body of `GET /v3/auth/tokens` and goes through every check and header
/// `authenticate` applies to it, with a validator that has access rules, the catalogue header
/// and permissive binding enabled. Nothing is sent anywhere.
pub(crate) fn fuzz_token_body(raw: &[u8]) {
    static VALIDATOR: std::sync::OnceLock<Option<AuthToken>> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        AuthToken::new(AuthTokenSettings {
            service_type: Some("container-infra".to_string()),
            credentials: CloudSettings {
                www_authenticate_uri: Some("http://127.0.0.1:1/v3".into()),
                ..Default::default()
            },
            ..Default::default()
        })
        .ok()
    });
    let Some(v) = validator else {
        return;
    };
    let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    if body.get("token").and_then(Value::as_object).is_none() {
        return;
    }
    let body = Arc::new(body);
    let _ = v.usable(&body, false);
    let _ = v.bind_ok(&body);
    let _ = v.access_rules_allow(&body, false, "GET", "/v1/clusters/abc");
    let _ = v.access_rules_allow(&body, true, "PATCH", "/v1/clusters");
    let _ = role_names(&body);
    let service = body.clone();
    let _ = v.identity(body, Some(&service));
}

fn role_names(body: &Value) -> Vec<String> {
    body.pointer("/token/roles")
        .and_then(Value::as_array)
        .map(|roles| {
            roles
                .iter()
                .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `_set_auth_headers`: the roles, system scope and identity headers of one token, named
/// `x-<prefix>…` (`prefix` is `""` or `"service-"`).
fn auth_headers(body: &Value, prefix: &str, out: &mut Vec<(&'static str, String)>) {
    let token = body.get("token").unwrap_or(&Value::Null);
    let s = |p: &str| token.pointer(p).and_then(Value::as_str).map(str::to_string);
    let user = prefix.is_empty();
    let name = |u: &'static str, svc: &'static str| if user { u } else { svc };
    out.push((
        name("x-roles", "x-service-roles"),
        role_names(body).join(","),
    ));
    if token.pointer("/system/all").and_then(Value::as_bool) == Some(true) {
        out.push(("openstack-system-scope", "all".to_string()));
    }
    let fields: [(&'static str, &'static str, Option<String>); 10] = [
        ("x-domain-id", "x-service-domain-id", s("/domain/id")),
        ("x-domain-name", "x-service-domain-name", s("/domain/name")),
        ("x-project-id", "x-service-project-id", s("/project/id")),
        (
            "x-project-name",
            "x-service-project-name",
            s("/project/name"),
        ),
        (
            "x-project-domain-id",
            "x-service-project-domain-id",
            s("/project/domain/id"),
        ),
        (
            "x-project-domain-name",
            "x-service-project-domain-name",
            s("/project/domain/name"),
        ),
        ("x-user-id", "x-service-user-id", s("/user/id")),
        ("x-user-name", "x-service-user-name", s("/user/name")),
        (
            "x-user-domain-id",
            "x-service-user-domain-id",
            s("/user/domain/id"),
        ),
        (
            "x-user-domain-name",
            "x-service-user-domain-name",
            s("/user/domain/name"),
        ),
    ];
    for (u, svc, v) in fields {
        if let Some(v) = v {
            out.push((name(u, svc), v));
        }
    }
}

/// `_normalize_catalog`: the v3 catalogue in the v2 shape of `X-Service-Catalog`.
fn normalize_catalog(catalog: &[Value]) -> Value {
    let mut services = Vec::new();
    for svc in catalog {
        let mut service = Map::new();
        service.insert(
            "type".into(),
            svc.get("type").cloned().unwrap_or(Value::Null),
        );
        if let Some(n) = svc.get("name") {
            service.insert("name".into(), n.clone());
        }
        // regions in first-seen order
        let mut regions: Vec<(Option<String>, Map<String, Value>)> = Vec::new();
        for ep in svc
            .get("endpoints")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let region = ep.get("region").and_then(Value::as_str).map(str::to_string);
            let idx = match regions.iter().position(|(r, _)| *r == region) {
                Some(i) => i,
                None => {
                    let mut m = Map::new();
                    if let Some(r) = region.as_ref().filter(|r| !r.is_empty()) {
                        m.insert("region".into(), Value::String(r.clone()));
                    }
                    regions.push((region.clone(), m));
                    regions.len() - 1
                }
            };
            let iface = ep
                .get("interface")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_lowercase();
            regions[idx].1.insert(
                format!("{iface}URL"),
                ep.get("url").cloned().unwrap_or(Value::Null),
            );
        }
        service.insert(
            "endpoints".into(),
            Value::Array(regions.into_iter().map(|(_, m)| Value::Object(m)).collect()),
        );
        services.push(Value::Object(service));
    }
    Value::Array(services)
}

/// keystonemiddleware's `_path_matches`: `*` and `{tag}` match one non-empty path segment
/// part (no `/`), `**` matches anything, other characters match themselves.
pub fn path_matches(path: &str, pattern: &str) -> bool {
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Tok {
        One,
        Any,
        Lit(char),
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' => match chars[i..].iter().position(|c| *c == '}') {
                Some(end) => {
                    toks.push(Tok::One);
                    i += end + 1;
                }
                None => {
                    i += 1; // an unclosed brace matches nothing in the regex
                }
            },
            '*' if chars.get(i + 1) == Some(&'*') => {
                toks.push(Tok::Any);
                i += 2;
            }
            '*' => {
                toks.push(Tok::One);
                i += 1;
            }
            '}' => i += 1,
            c => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    fn go(p: &[char], t: &[Tok]) -> bool {
        match t.first() {
            None => p.is_empty(),
            Some(Tok::Lit(c)) => p.first() == Some(c) && go(&p[1..], &t[1..]),
            Some(Tok::Any) => (0..=p.len()).any(|n| go(&p[n..], &t[1..])),
            Some(Tok::One) => {
                let max = p.iter().position(|c| *c == '/').unwrap_or(p.len());
                (1..=max).any(|n| go(&p[n..], &t[1..]))
            }
        }
    }
    let p: Vec<char> = path.chars().collect();
    go(&p, &toks)
}

/// Magnum's `acl_public_routes = /, /v1`: the path with trailing slashes removed (Python's
/// `rstrip('/') or path`) matched against `^<route>(\.json)?$`.
pub fn is_public_path(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    let p = if trimmed.is_empty() { path } else { trimmed };
    matches!(p, "/" | "/.json" | "/v1" | "/v1.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn public_routes_as_magnum() {
        for p in ["/", "/v1", "/v1/", "/v1.json", "/.json", "/v1//"] {
            assert!(is_public_path(p), "{p}");
        }
        for p in ["//", "/v1/clusters", "/clusters", "/v2", "/v1x", ""] {
            assert!(!is_public_path(p), "{p}");
        }
    }

    #[test]
    fn access_rule_paths() {
        assert!(path_matches("/v1/clusters", "/v1/clusters"));
        assert!(path_matches("/v1/clusters/abc", "/v1/clusters/*"));
        assert!(path_matches("/v1/clusters/abc", "/v1/clusters/{uuid}"));
        assert!(!path_matches("/v1/clusters/abc/x", "/v1/clusters/*"));
        assert!(path_matches("/v1/clusters/abc/x", "/v1/**"));
        assert!(!path_matches("/v1/clusters/", "/v1/clusters/*"));
        assert!(!path_matches("/v2/clusters", "/v1/**"));
    }

    #[test]
    fn catalog_normalized_like_keystonemiddleware() {
        let c = vec![
            json!({"type": "identity", "name": "keystone", "endpoints": [
            {"interface": "public", "region": "R1", "url": "http://a"},
            {"interface": "internal", "region": "R1", "url": "http://b"},
            {"interface": "admin", "region": "R2", "url": "http://c"}]}),
        ];
        assert_eq!(
            openkeel_core::pyjson::dumps(&normalize_catalog(&c)),
            r#"[{"type": "identity", "name": "keystone", "endpoints": [{"region": "R1", "publicURL": "http://a", "internalURL": "http://b"}, {"region": "R2", "adminURL": "http://c"}]}]"#
        );
    }

    #[test]
    fn headers_from_a_project_token() {
        let body = json!({"token": {"user": {"id": "u1", "name": "demo", "domain": {"id": "default", "name": "Default"}},
            "project": {"id": "p1", "name": "demo", "domain": {"id": "default", "name": "Default"}},
            "roles": [{"id": "r1", "name": "member"}, {"id": "r2", "name": "reader"}]}});
        let mut h = Vec::new();
        auth_headers(&body, "", &mut h);
        let get = |n: &str| h.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("x-roles"), Some("member,reader"));
        assert_eq!(get("x-user-id"), Some("u1"));
        assert_eq!(get("x-project-domain-name"), Some("Default"));
        assert_eq!(get("x-domain-id"), None);
        assert_eq!(get("openstack-system-scope"), None);
    }

    #[test]
    fn cache_expires_and_is_bounded() {
        let mut c = TokenCache {
            ttl: Some(Duration::from_secs(60)),
            max: 3,
            entries: HashMap::new(),
        };
        for t in ["a", "b", "c", "d", "e"] {
            c.set(TokenCache::key(t), Cached::Invalid);
        }
        assert_eq!(c.entries.len(), 3);
        assert!(c.get(&TokenCache::key("e")).is_some());
        assert!(c.get(&TokenCache::key("a")).is_none());
        let mut c = TokenCache {
            ttl: Some(Duration::ZERO),
            max: 3,
            entries: HashMap::new(),
        };
        c.set(TokenCache::key("a"), Cached::Invalid);
        assert!(c.get(&TokenCache::key("a")).is_none());
        let mut c = TokenCache {
            ttl: None,
            max: 3,
            entries: HashMap::new(),
        };
        c.set(TokenCache::key("a"), Cached::Invalid);
        assert!(c.entries.is_empty());
    }

    #[test]
    fn expired_tokens_are_not_usable() {
        let v = AuthToken::new(AuthTokenSettings {
            credentials: CloudSettings {
                www_authenticate_uri: Some("http://127.0.0.1:1/v3".into()),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let past = json!({"token": {"expires_at": "2020-01-01T00:00:00.000000Z"}});
        let future = json!({"token": {"expires_at": "2999-01-01T00:00:00.000000Z"}});
        let none = json!({"token": {}});
        assert!(!v.usable(&past, false));
        assert!(
            v.usable(&past, true),
            "a valid service token allows expired tokens"
        );
        assert!(v.usable(&future, false));
        assert!(!v.usable(&none, false));
    }

    #[test]
    fn bind_modes() {
        let v = |mode: &str| {
            AuthToken::new(AuthTokenSettings {
                enforce_token_bind: mode.to_string(),
                credentials: CloudSettings {
                    www_authenticate_uri: Some("http://127.0.0.1:1/v3".into()),
                    ..Default::default()
                },
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let none = json!({"token": {}});
        let krb = json!({"token": {"bind": {"kerberos": "u@R"}}});
        let other = json!({"token": {"bind": {"x509": "abc"}}});
        assert!(v("permissive").bind_ok(&none));
        assert!(!v("required").bind_ok(&none));
        assert!(!v("permissive").bind_ok(&krb));
        assert!(v("permissive").bind_ok(&other));
        assert!(!v("strict").bind_ok(&other));
        assert!(v("disabled").bind_ok(&krb));
        assert!(!v("kerberos").bind_ok(&other));
    }
}
