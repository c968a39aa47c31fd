//! Where a request's token and catalogue come from, in Magnum's order
//! (`magnum/common/keystone.py KeystoneClientV3._get_auth`):
//!
//! 1. the context carries keystonemiddleware's validated token body (`auth_token_info`): its
//!    catalogue and the context's token are used as they are, no Keystone call;
//! 2. else the context has a token: OpenKeel validates it, `GET /v3/auth/tokens` with the token
//!    as both `X-Auth-Token` and `X-Subject-Token` (Keystone lets a token's owner validate it),
//!    and uses the returned catalogue with the caller's token. Magnum's keystoneauth `Token`
//!    plugin instead re-authenticates (`POST /v3/auth/tokens`, method `token`, no scope) and
//!    uses the new token; validation issues no new token and keeps the caller's scope;
//! 3. else, for admin contexts, the `[keystone_auth]` service credentials: password auth
//!    `POST /v3/auth/tokens`; the token is cached until a minute before it expires;
//! 4. else Magnum's `keystone connection failed. reason Keystone API connection failed: no
//!    password or token found.`

use crate::catalog::Catalog;
use crate::http::HttpClient;
use crate::settings::CloudSettings;
use openkeel_core::context::RequestContext;
use reqwest::{Method, Url};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};

/// A token and the catalogue to find endpoints in.
#[derive(Clone)]
pub struct Session {
    pub token: String,
    pub catalog: Catalog,
    /// True when the token is the cached service token.
    pub service: bool,
    /// The id of the project the token is scoped to (`token.project.id`), when known.
    pub project_id: Option<String>,
}

fn token_project_id(body: &Value) -> Option<String> {
    body.get("token")
        .unwrap_or(body)
        .pointer("/project/id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Why no session could be built, in the classes Magnum's `wrap_keystone_exception` tells
/// apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// No token, no token body, not admin (Magnum's own `AuthorizationFailure`).
    NoCredentials,
    /// keystoneauth `AuthorizationFailure` (`reason: <msg>`).
    Authorization(String),
    /// Any other keystoneauth client error (`unexpected client error occurred: <msg>`).
    Client(String),
    /// Keystone could not be reached, timed out or answered 5xx: the same text as
    /// [`SessionError::Client`] for Magnum's callers, but worth retrying.
    Unavailable(String),
}

impl SessionError {
    /// Whether retrying later may succeed (Keystone unreachable, a timeout, a 5xx).
    pub fn is_transient(&self) -> bool {
        matches!(self, SessionError::Unavailable(_))
    }
}

/// A failed Keystone answer: 5xx and 429 are worth retrying, the rest are not.
fn answer_error(resp: &crate::http::Response) -> SessionError {
    if resp.status >= 500 || resp.status == 429 {
        SessionError::Unavailable(resp.keystoneauth_error())
    } else {
        SessionError::Client(resp.keystoneauth_error())
    }
}

struct CachedToken {
    session: Session,
    /// Unix seconds after which the token is not reused.
    refresh_after: i64,
}

pub struct Authenticator {
    settings: Arc<CloudSettings>,
    http: HttpClient,
    service: Mutex<Option<CachedToken>>,
}

const MULTIPLE_SCOPES: &str = "Authentication cannot be scoped to multiple targets. Pick one of: project, domain, trust, system or unscoped";

fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.is_empty())
}

/// The Keystone v3 root under an auth URL (`http://h:5000` and `http://h:5000/v3` both give
/// `http://h:5000/v3`).
pub fn identity_v3(auth_url: &str) -> Result<Url, String> {
    let mut url =
        Url::parse(auth_url.trim()).map_err(|e| format!("Invalid identity URL {auth_url}: {e}"))?;
    let last_is_v3 = url
        .path_segments()
        .and_then(|mut s| s.rfind(|p| !p.is_empty()))
        .map(|p| p == "v3")
        .unwrap_or(false);
    if let Ok(mut segs) = url.path_segments_mut() {
        segs.pop_if_empty();
        if !last_is_v3 {
            segs.push("v3");
        }
    }
    Ok(url)
}

fn auth_tokens_url(auth_url: &str) -> Result<Url, String> {
    let mut url = identity_v3(auth_url)?;
    if let Ok(mut segs) = url.path_segments_mut() {
        segs.push("auth").push("tokens");
    }
    Ok(url)
}

impl Authenticator {
    pub fn new(settings: Arc<CloudSettings>, http: HttpClient) -> Self {
        Authenticator {
            settings,
            http,
            service: Mutex::new(None),
        }
    }

    /// The session for this context (see the module docs for the order).
    pub async fn session(&self, ctx: &RequestContext) -> Result<Session, SessionError> {
        let info = ctx
            .auth_token_info
            .as_ref()
            .filter(|v| !v.is_null() && v.as_object().is_none_or(|m| !m.is_empty()));
        if let Some(info) = info {
            let token = present(&ctx.auth_token).ok_or_else(|| {
                SessionError::Client("the validated token body came without its token".to_string())
            })?;
            return Ok(Session {
                token: token.to_string(),
                catalog: Catalog::from_token_body(info),
                service: false,
                project_id: token_project_id(info),
            });
        }
        if let Some(token) = present(&ctx.auth_token) {
            return self.validate(token).await;
        }
        if ctx.is_admin {
            return self.service_session().await;
        }
        Err(SessionError::NoCredentials)
    }

    /// Forget the cached service token (a service answered 401 to it).
    pub fn invalidate_service(&self) {
        let mut guard = self.service.lock().unwrap_or_else(|e| e.into_inner());
        *guard = None;
    }

    fn auth_url(&self) -> Result<&str, SessionError> {
        self.settings.auth_url().ok_or_else(|| {
            SessionError::Client(
                "Auth plugin requires parameters which were not given: auth_url".to_string(),
            )
        })
    }

    async fn validate(&self, token: &str) -> Result<Session, SessionError> {
        let url = auth_tokens_url(self.auth_url()?).map_err(SessionError::Client)?;
        let resp = self
            .http
            .send(
                Method::GET,
                &url,
                &[("X-Auth-Token", token), ("X-Subject-Token", token)],
                None,
            )
            .await
            .map_err(|e| SessionError::Unavailable(e.to_string()))?;
        if !resp.is_success() {
            return Err(answer_error(&resp));
        }
        let body = resp.json();
        if body.get("token").is_none() {
            return Err(SessionError::Client(
                "Invalid token format for fetching catalog".to_string(),
            ));
        }
        Ok(Session {
            token: token.to_string(),
            catalog: Catalog::from_token_body(&body),
            service: false,
            project_id: token_project_id(&body),
        })
    }

    pub(crate) async fn service_session(&self) -> Result<Session, SessionError> {
        let now = chrono::Utc::now().timestamp();
        {
            let guard = self.service.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(c) = guard.as_ref().filter(|c| now < c.refresh_after) {
                return Ok(c.session.clone());
            }
        }
        let ka = &self.settings.keystone_auth;
        match ka.auth_type.as_deref().filter(|t| !t.is_empty()) {
            None | Some("password") | Some("v3password") => {}
            Some(other) => {
                return Err(SessionError::Client(format!(
                "[keystone_auth] auth_type {other} is not supported (OpenKeel supports password)"
            )))
            }
        }
        let url = auth_tokens_url(self.auth_url()?).map_err(SessionError::Client)?;
        let body = self.password_body()?;
        let resp = self
            .http
            .send(Method::POST, &url, &[], Some(&body))
            .await
            .map_err(|e| SessionError::Unavailable(e.to_string()))?;
        if !resp.is_success() {
            return Err(answer_error(&resp));
        }
        let token = resp
            .header("x-subject-token")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                SessionError::Client("Keystone answered without X-Subject-Token".to_string())
            })?
            .to_string();
        let body = resp.json();
        let expires = body
            .pointer("/token/expires_at")
            .and_then(Value::as_str)
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.timestamp())
            .unwrap_or(now);
        let session = Session {
            token,
            catalog: Catalog::from_token_body(&body),
            service: true,
            project_id: token_project_id(&body),
        };
        let mut guard = self.service.lock().unwrap_or_else(|e| e.into_inner());
        *guard = Some(CachedToken {
            session: session.clone(),
            refresh_after: expires - 60,
        });
        Ok(session)
    }

    /// keystoneauth's v3 `Password` request body from `[keystone_auth]`.
    fn password_body(&self) -> Result<Value, SessionError> {
        let ka = &self.settings.keystone_auth;
        let domain = |id: Option<&str>, name: Option<&str>| -> Option<Value> {
            match (id, name) {
                (Some(id), _) => Some(json!({"id": id})),
                (None, Some(name)) => Some(json!({"name": name})),
                (None, None) => None,
            }
        };
        let (mut user_domain_id, mut user_domain_name) =
            (present(&ka.user_domain_id), present(&ka.user_domain_name));
        if user_domain_id.is_none() && user_domain_name.is_none() {
            user_domain_id = present(&ka.default_domain_id);
            user_domain_name = present(&ka.default_domain_name);
        }
        let (mut project_domain_id, mut project_domain_name) = (
            present(&ka.project_domain_id),
            present(&ka.project_domain_name),
        );
        if project_domain_id.is_none() && project_domain_name.is_none() {
            project_domain_id = present(&ka.default_domain_id);
            project_domain_name = present(&ka.default_domain_name);
        }

        let mut user = Map::new();
        if let Some(id) = present(&ka.user_id) {
            user.insert("id".into(), json!(id));
        }
        if let Some(name) = present(&ka.username) {
            user.insert("name".into(), json!(name));
            if let Some(d) = domain(user_domain_id, user_domain_name) {
                user.insert("domain".into(), d);
            }
        }
        user.insert(
            "password".into(),
            json!(ka.password.clone().unwrap_or_default()),
        );

        let project = present(&ka.project_id).is_some() || present(&ka.project_name).is_some();
        let dom = present(&ka.domain_id).is_some() || present(&ka.domain_name).is_some();
        let trust = present(&ka.trust_id).is_some();
        let system = present(&ka.system_scope).is_some();
        if [project, dom, trust, system].iter().filter(|b| **b).count() > 1 {
            return Err(SessionError::Authorization(MULTIPLE_SCOPES.to_string()));
        }
        let scope = if let Some(id) = present(&ka.project_id) {
            Some(json!({"project": {"id": id}}))
        } else if let Some(name) = present(&ka.project_name) {
            let mut p = Map::new();
            p.insert("name".into(), json!(name));
            if let Some(d) = domain(project_domain_id, project_domain_name) {
                p.insert("domain".into(), d);
            }
            Some(json!({ "project": p }))
        } else if dom {
            domain(present(&ka.domain_id), present(&ka.domain_name)).map(|d| json!({"domain": d}))
        } else if let Some(t) = present(&ka.trust_id) {
            Some(json!({"OS-TRUST:trust": {"id": t}}))
        } else if let Some(s) = present(&ka.system_scope) {
            let mut m = Map::new();
            m.insert(s.to_string(), json!(true));
            Some(json!({ "system": m }))
        } else {
            None
        };

        let mut auth = Map::new();
        auth.insert(
            "identity".into(),
            json!({"methods": ["password"], "password": {"user": user}}),
        );
        if let Some(s) = scope {
            auth.insert("scope".into(), s);
        }
        Ok(json!({ "auth": auth }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::KeystoneAuthSettings;

    fn auth(ka: KeystoneAuthSettings) -> Authenticator {
        let settings = CloudSettings {
            keystone_auth: ka,
            ..Default::default()
        };
        let http = HttpClient::new(&settings).ok();
        Authenticator::new(Arc::new(settings), http.unwrap_or_else(|| panic!("client")))
    }

    #[test]
    fn v3_urls() {
        let u = |s: &str| identity_v3(s).map(|u| u.to_string()).unwrap_or_default();
        assert_eq!(u("http://h:5000"), "http://h:5000/v3");
        assert_eq!(u("http://h:5000/"), "http://h:5000/v3");
        assert_eq!(u("http://h/identity/v3"), "http://h/identity/v3");
        assert_eq!(u("http://h/identity/v3/"), "http://h/identity/v3");
        assert_eq!(u("http://h/identity"), "http://h/identity/v3");
    }

    #[test]
    fn password_body_like_keystoneauth() {
        let a = auth(KeystoneAuthSettings {
            username: Some("magnum".into()),
            password: Some("pw".into()),
            user_domain_id: Some("default".into()),
            project_name: Some("service".into()),
            project_domain_id: Some("default".into()),
            ..Default::default()
        });
        assert_eq!(
            a.password_body().ok(),
            Some(
                json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
                "name": "magnum", "domain": {"id": "default"}, "password": "pw"}}},
                "scope": {"project": {"name": "service", "domain": {"id": "default"}}}}})
            )
        );
        let a = auth(KeystoneAuthSettings {
            user_id: Some("u1".into()),
            password: Some("pw".into()),
            system_scope: Some("all".into()),
            ..Default::default()
        });
        assert_eq!(
            a.password_body()
                .ok()
                .and_then(|b| b.pointer("/auth/scope").cloned()),
            Some(json!({"system": {"all": true}}))
        );
        let a = auth(KeystoneAuthSettings {
            username: Some("u".into()),
            default_domain_name: Some("Default".into()),
            project_id: Some("p".into()),
            trust_id: Some("t".into()),
            ..Default::default()
        });
        assert_eq!(
            a.password_body().err(),
            Some(SessionError::Authorization(MULTIPLE_SCOPES.into()))
        );
    }

    #[tokio::test]
    async fn no_credentials_without_token_or_admin() {
        let a = auth(KeystoneAuthSettings::default());
        let ctx = RequestContext::default();
        assert_eq!(
            a.session(&ctx).await.err(),
            Some(SessionError::NoCredentials)
        );
        let ctx = RequestContext {
            is_admin: true,
            ..Default::default()
        };
        assert_eq!(
            a.session(&ctx).await.err(),
            Some(SessionError::Client(
                "Auth plugin requires parameters which were not given: auth_url".into()
            ))
        );
    }
}
