//! The request context, as Magnum's `magnum.common.context.RequestContext` (an oslo.context
//! `RequestContext`) carries it from the API through RPC to the conductor.
//!
//! The API builds it from the identity headers ([`RequestContext::from_headers`], Magnum's
//! `ContextHook.before`); `to_dict` gives the key set and order oslo.messaging flattens into
//! `_context_*` keys and that policy checks see as credentials.

use serde_json::{Map, Value};
use std::sync::Arc;

/// What Magnum's context carries. Identity fields are `None` when the header was absent.
#[derive(Clone, Default, PartialEq)]
pub struct RequestContext {
    pub user_id: Option<String>,
    pub user_name: Option<String>,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    pub domain_id: Option<String>,
    pub domain_name: Option<String>,
    pub user_domain_id: Option<String>,
    pub user_domain_name: Option<String>,
    pub project_domain_id: Option<String>,
    pub system_scope: Option<String>,
    /// The user's token. Never logged (see the `Debug` note on [`RequestContext::redacted`]).
    pub auth_token: Option<String>,
    pub auth_url: Option<String>,
    /// keystonemiddleware's validated token body (`keystone.token_info`), shared with the
    /// token cache (a body with its catalogue is several KB; requests never copy it).
    pub auth_token_info: Option<Arc<Value>>,
    pub trust_id: Option<String>,
    pub password: Option<String>,
    /// `X-Roles` split on `,` without trimming; a missing header gives `[""]`, as Magnum.
    pub roles: Vec<String>,
    pub is_admin: bool,
    pub is_admin_project: bool,
    pub read_only: bool,
    pub show_deleted: bool,
    /// Set by handlers for admins (list / update / delete across projects).
    pub all_tenants: bool,
    /// `req-<uuid4>`.
    pub request_id: String,
    pub global_request_id: Option<String>,
    pub resource_uuid: Option<String>,
    /// The policy credentials the API built for this context (see [`CredentialsCache`]).
    pub credentials_cache: CredentialsCache,
}

/// Policy credentials (the context's [`RequestContext::to_dict`]) the API built once for a
/// request and keeps for its later checks (`openkeel_api::request`), where building them for
/// each check was a tenth of a cluster show. Not part of the context's value: any two are
/// equal, and it is never shown or sent.
#[derive(Clone, Default)]
pub struct CredentialsCache(pub Option<Arc<Value>>);

impl PartialEq for CredentialsCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for RequestContext {
    /// Tokens, token bodies and passwords are redacted: a context may be logged.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hide = |v: &Option<String>| v.as_ref().map(|_| "***");
        f.debug_struct("RequestContext")
            .field("request_id", &self.request_id)
            .field("user_id", &self.user_id)
            .field("user_name", &self.user_name)
            .field("project_id", &self.project_id)
            .field("project_name", &self.project_name)
            .field("roles", &self.roles)
            .field("is_admin", &self.is_admin)
            .field("all_tenants", &self.all_tenants)
            .field("auth_token", &hide(&self.auth_token))
            .field("password", &hide(&self.password))
            .finish_non_exhaustive()
    }
}

/// A minimal view of request headers, so that this crate needs no HTTP dependency.
pub trait HeaderLookup {
    /// The first value of a header (case-insensitive name), if present and valid UTF-8.
    fn header(&self, name: &str) -> Option<&str>;
}

impl RequestContext {
    /// A fresh `req-<uuid4>` id.
    pub fn new_request_id() -> String {
        format!("req-{}", uuid::Uuid::new_v4())
    }

    /// Build the context from the identity headers as Magnum's `ContextHook.before` does.
    /// `is_admin` is left false: the caller evaluates policy rule `context_is_admin` and sets it.
    pub fn from_headers(
        headers: &impl HeaderLookup,
        request_id: String,
        auth_url: Option<String>,
    ) -> Self {
        let get = |n: &str| headers.header(n).map(str::to_string);
        let roles = match headers.header("X-Roles") {
            Some(v) => v.split(',').map(str::to_string).collect(),
            None => vec![String::new()],
        };
        RequestContext {
            user_name: get("X-User-Name"),
            user_id: get("X-User-Id"),
            project_name: get("X-Project-Name"),
            project_id: get("X-Project-Id"),
            user_domain_id: get("X-User-Domain-Id"),
            user_domain_name: get("X-User-Domain-Name"),
            auth_token: get("X-Auth-Token"),
            auth_url,
            roles,
            request_id,
            // oslo.context's default, which Magnum's make_context keeps
            is_admin_project: true,
            ..Default::default()
        }
    }

    /// True when any role matches `role` case-insensitively (oslo.policy's `role:` check).
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }

    /// `user_identity` as oslo.context formats it: five fields, `-` for empty.
    pub fn user_identity(&self) -> String {
        fn f(v: &Option<String>) -> &str {
            v.as_deref().filter(|s| !s.is_empty()).unwrap_or("-")
        }
        [
            f(&self.user_id),
            f(&self.project_id),
            f(&self.domain_id),
            f(&self.user_domain_id),
            f(&self.project_domain_id),
        ]
        .join(" ")
    }

    /// Magnum's `RequestContext.to_dict()`: oslo.context's keys updated with Magnum's, in the
    /// order observed on the wire (`magnum/common/context.py`, `oslo_context/context.py`). Policy credentials are this dictionary.
    pub fn to_dict(&self) -> Map<String, Value> {
        self.to_dict_with(
            self.auth_token_info
                .as_deref()
                .cloned()
                .unwrap_or(Value::Null),
        )
    }

    /// `to_dict()` with `auth_token_info` given.
    fn to_dict_with(&self, auth_token_info: Value) -> Map<String, Value> {
        let s = |v: &Option<String>| {
            v.as_ref()
                .map(|x| Value::String(x.clone()))
                .unwrap_or(Value::Null)
        };
        // sized for the 25 keys below: no regrowth of the map, twice a request
        let mut m = Map::with_capacity(25);
        m.insert("user".into(), s(&self.user_id));
        m.insert("project_id".into(), s(&self.project_id));
        m.insert("system_scope".into(), s(&self.system_scope));
        m.insert("project".into(), s(&self.project_id));
        m.insert("domain".into(), s(&self.domain_id));
        m.insert("user_domain".into(), s(&self.user_domain_id));
        m.insert("project_domain".into(), s(&self.project_domain_id));
        m.insert("is_admin".into(), Value::Bool(self.is_admin));
        m.insert("read_only".into(), Value::Bool(self.read_only));
        m.insert("show_deleted".into(), Value::Bool(self.show_deleted));
        m.insert("auth_token".into(), s(&self.auth_token));
        m.insert("request_id".into(), Value::String(self.request_id.clone()));
        m.insert("global_request_id".into(), s(&self.global_request_id));
        m.insert("resource_uuid".into(), s(&self.resource_uuid));
        m.insert(
            "roles".into(),
            Value::Array(self.roles.iter().cloned().map(Value::String).collect()),
        );
        m.insert("user_identity".into(), Value::String(self.user_identity()));
        m.insert(
            "is_admin_project".into(),
            Value::Bool(self.is_admin_project),
        );
        m.insert("auth_url".into(), s(&self.auth_url));
        m.insert("user_domain_id".into(), s(&self.user_domain_id));
        m.insert("user_domain_name".into(), s(&self.user_domain_name));
        m.insert("user_name".into(), s(&self.user_name));
        m.insert("user_id".into(), s(&self.user_id));
        m.insert("project_name".into(), s(&self.project_name));
        m.insert("auth_token_info".into(), auth_token_info);
        m.insert("all_tenants".into(), Value::Bool(self.all_tenants));
        m
    }

    /// Policy credentials: `to_dict()` as a JSON value.
    pub fn credentials(&self) -> Value {
        Value::Object(self.to_dict())
    }

    /// [`RequestContext::credentials`] with `auth_token_info` as `null`: for policy checks
    /// whose rules never read the token body (the default rules), without copying it.
    pub fn credentials_without_token_info(&self) -> Value {
        Value::Object(self.to_dict_with(Value::Null))
    }

    /// The default policy target when a handler gives none: the caller's own project and user.
    pub fn default_target(&self) -> Value {
        let s = |v: &Option<String>| {
            v.as_ref()
                .map(|x| Value::String(x.clone()))
                .unwrap_or(Value::Null)
        };
        let mut m = Map::new();
        m.insert("project_id".into(), s(&self.project_id));
        m.insert("user_id".into(), s(&self.user_id));
        Value::Object(m)
    }

    /// Fields safe to log: request id, user and project (never tokens or passwords).
    pub fn redacted(&self) -> String {
        format!(
            "request_id={} user_id={} project_id={}",
            self.request_id,
            self.user_id.as_deref().unwrap_or("-"),
            self.project_id.as_deref().unwrap_or("-")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_without_the_token_body() {
        let ctx = RequestContext {
            user_id: Some("u".into()),
            auth_token_info: Some(Arc::new(
                serde_json::json!({"token": {"catalog": [1, 2, 3]}}),
            )),
            ..Default::default()
        };
        let full = ctx.credentials();
        let light = ctx.credentials_without_token_info();
        assert_eq!(full["auth_token_info"]["token"]["catalog"][2], 3);
        assert_eq!(light["auth_token_info"], Value::Null);
        let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&full), keys(&light), "same keys, same order");
        let mut f = full;
        f["auth_token_info"] = Value::Null;
        assert_eq!(f, light);
    }
    use std::collections::HashMap;

    struct H(HashMap<String, String>);
    impl HeaderLookup for H {
        fn header(&self, name: &str) -> Option<&str> {
            self.0.get(&name.to_ascii_lowercase()).map(String::as_str)
        }
    }
    fn h(pairs: &[(&str, &str)]) -> H {
        H(pairs
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect())
    }

    #[test]
    fn roles_split_without_trimming() {
        let c = RequestContext::from_headers(
            &h(&[("X-Roles", "member, reader")]),
            "req-1".into(),
            None,
        );
        assert_eq!(c.roles, vec!["member".to_string(), " reader".to_string()]);
        assert!(!c.has_role("reader"));
    }

    #[test]
    fn missing_roles_header_gives_one_empty_role() {
        let c = RequestContext::from_headers(&h(&[]), "req-1".into(), None);
        assert_eq!(c.roles, vec![String::new()]);
    }

    #[test]
    fn to_dict_has_the_wire_keys_in_order() {
        let c = RequestContext::from_headers(
            &h(&[
                ("X-User-Id", "u"),
                ("X-Project-Id", "p"),
                ("X-Roles", "admin"),
            ]),
            "req-x".into(),
            Some("http://ks/v3".into()),
        );
        let keys: Vec<_> = c.to_dict().keys().cloned().collect();
        assert_eq!(keys.first().map(String::as_str), Some("user"));
        assert_eq!(keys.last().map(String::as_str), Some("all_tenants"));
        assert_eq!(keys.len(), 25);
        assert_eq!(c.user_identity(), "u p - - -");
        assert!(c.has_role("ADMIN"));
    }

    #[test]
    fn redacted_never_shows_the_token() {
        let c = RequestContext::from_headers(
            &h(&[("X-Auth-Token", "secret-token")]),
            "req-1".into(),
            None,
        );
        assert!(!c.redacted().contains("secret-token"));
        assert!(!format!("{c:?}").contains("secret-token"));
    }
}
