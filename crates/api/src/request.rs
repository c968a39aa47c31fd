//! Per-request plumbing shared by every resource handler: the request context (Magnum's
//! `ContextHook`), policy enforcement, body and query parsing with Magnum's errors.

use crate::error::ApiError;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_auth::noauth;
use openkeel_core::context::{HeaderLookup, RequestContext};
use openkeel_core::error::{ErrorKind, MagnumError};
use serde_json::Value;
use std::sync::Arc;

/// The policy engine as the API sees it (implemented by `openkeel-auth`'s enforcer).
pub trait PolicyCheck: Send + Sync + 'static {
    /// Evaluate `rule` for `target` with `creds` (the context's `to_dict()`).
    fn enforce(&self, rule: &str, target: &Value, creds: &Value) -> bool;

    /// [`PolicyCheck::enforce`] on the target `target(keys)` builds: with at least the `keys`
    /// the rules substitute, or whole for `None` (what this default asks for).
    fn enforce_on(
        &self,
        rule: &str,
        target: &mut dyn FnMut(Option<&[String]>) -> Value,
        creds: &Value,
    ) -> bool {
        self.enforce(rule, &target(None), creds)
    }

    /// Called once per request before any check: re-read changed policy files.
    fn refresh(&self) {}

    /// Whether rules may read `auth_token_info` from the credentials (else it is left out).
    fn reads_token_info(&self) -> bool {
        true
    }
}

/// The credentials of a policy check: Magnum's `context.to_dict()`; the validated token body
/// is left out when no rule reads it (it is large and would be copied for every check).
/// Built once per request by [`context`] and kept in the context: after it only `is_admin`
/// and `all_tenants` change (here, and kept up to date in the copy), which are checked.
fn policy_credentials(state: &ApiState, ctx: &RequestContext) -> Arc<Value> {
    if let Some(c) = &ctx.credentials_cache.0 {
        let same = |key, now| c.get(key) == Some(&Value::Bool(now));
        if same("is_admin", ctx.is_admin) && same("all_tenants", ctx.all_tenants) {
            debug_assert_eq!(**c, build_credentials(state, ctx), "stale credentials");
            return c.clone();
        }
    }
    Arc::new(build_credentials(state, ctx))
}

fn build_credentials(state: &ApiState, ctx: &RequestContext) -> Value {
    match &state.policy {
        Some(p) if !p.reads_token_info() => ctx.credentials_without_token_info(),
        _ => ctx.credentials(),
    }
}

/// Set `key` of the context's kept credentials, after the context's own field changed.
fn update_credentials(ctx: &mut RequestContext, key: &str, value: bool) {
    if let Some(c) = &mut ctx.credentials_cache.0 {
        if let Some(v) = Arc::make_mut(c).get_mut(key) {
            *v = Value::Bool(value);
        }
    }
}

/// How the caller's identity is established.
#[derive(Debug, Clone, Default)]
pub enum AuthMode {
    /// Magnum's paste pipeline without `authtoken`: identity headers trusted verbatim, the
    /// dev-mode identity when there are none ([`openkeel_auth::noauth`]).
    #[default]
    NoAuth,
    /// keystonemiddleware-equivalent token validation: `dispatch` removes the client's
    /// identity headers, validates `X-Auth-Token` (and `X-Service-Token`) and sets the
    /// identity headers of the token before the handler runs; the context reads them.
    Keystone(Arc<openkeel_auth::authtoken::AuthToken>),
}

struct Headers<'a>(&'a http::HeaderMap);

impl HeaderLookup for Headers<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Build the request context as Magnum's `ContextHook.before`, then compute `is_admin` with
/// the `context_is_admin` rule.
pub fn context(state: &ApiState, req: &RequestInfo) -> RequestContext {
    let h = &req.headers;
    let has_identity = noauth::has_identity(|n| h.contains_key(n));
    let mut ctx = match state.auth {
        AuthMode::NoAuth if !has_identity => RequestContext::from_headers(
            &noauth::WithDefaults(Headers(h)),
            req.request_id.clone(),
            state.auth_url.clone(),
        ),
        _ => RequestContext::from_headers(
            &Headers(h),
            req.request_id.clone(),
            state.auth_url.clone(),
        ),
    };
    ctx.auth_token_info = req.token_info.clone();
    let span = tracing::Span::current();
    if let Some(u) = ctx.user_id.as_deref() {
        span.record("user_id", u);
    }
    if let Some(p) = ctx.project_id.as_deref() {
        span.record("project_id", p);
    }
    if let Some(p) = &state.policy {
        p.refresh();
    }
    let creds = policy_credentials(state, &ctx);
    ctx.is_admin = match &state.policy {
        Some(p) => p.enforce("context_is_admin", &creds, &creds),
        None => ctx.has_role("admin"),
    };
    ctx.credentials_cache.0 = Some(creds);
    let is_admin = ctx.is_admin;
    update_credentials(&mut ctx, "is_admin", is_admin);
    ctx
}

/// `policy.enforce(context, rule, target)`: 403 `PolicyNotAuthorized` on refusal. A `None`
/// target becomes the caller's own project and user, as Magnum does.
pub fn enforce(
    state: &ApiState,
    ctx: &RequestContext,
    rule: &str,
    target: Option<&Value>,
) -> Result<(), ApiError> {
    let default_target;
    let target = match target {
        Some(t) => t,
        None => {
            default_target = ctx.default_target();
            &default_target
        }
    };
    let allowed = match &state.policy {
        Some(p) => p.enforce(rule, target, &policy_credentials(state, ctx)),
        None => true,
    };
    decided(ctx, rule, allowed)
}

/// `policy.enforce(context, rule, obj.as_dict())`: [`enforce`] with the object as the target,
/// of which only the fields the rules substitute are built ([`crate::policy_target`]).
pub fn enforce_on<T: serde::Serialize>(
    state: &ApiState,
    ctx: &RequestContext,
    rule: &str,
    obj: &T,
) -> Result<(), ApiError> {
    let allowed = match &state.policy {
        Some(p) => p.enforce_on(
            rule,
            &mut |keys| crate::policy_target::of(obj, keys),
            &policy_credentials(state, ctx),
        ),
        None => true,
    };
    decided(ctx, rule, allowed)
}

/// A check's answer: refused is 403 `PolicyNotAuthorized`, logged.
fn decided(ctx: &RequestContext, rule: &str, allowed: bool) -> Result<(), ApiError> {
    if allowed {
        Ok(())
    } else {
        tracing::info!(rule, user_id = ?ctx.user_id, project_id = ?ctx.project_id, "policy refused");
        Err(MagnumError::policy_not_authorized(rule).into())
    }
}

/// Read a JSON body that may be any JSON value (the PATCH routes take a list).
pub async fn json_value_body(req: &RequestInfo, body: Body) -> Result<Value, ApiError> {
    let bytes = crate::read_body(body).await?;
    match req.header("content-type") {
        None => {
            let raw = String::from_utf8_lossy(&bytes);
            return Err(MagnumError::new(ErrorKind::UnknownArgument, &[("argname", &raw)]).into());
        }
        Some(ct) => {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if mime != "application/json" && mime != "application/javascript" {
                return Err(MagnumError::new(
                    ErrorKind::UnsupportedMediaType,
                    &[("mimetype", &mime)],
                )
                .into());
            }
        }
    }
    serde_json::from_slice(&bytes)
        .map_err(|_| MagnumError::client_side("Request is not in valid JSON format").into())
}

/// The query string as ordered (key, value) pairs, percent-decoded (`+` is a space).
pub fn query_pairs(req: &RequestInfo) -> Vec<(String, String)> {
    req.query.as_deref().map(parse_query).unwrap_or_default()
}

/// A query string as ordered (key, value) pairs, percent-decoded (`+` is a space).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    decode(s, true)
}

/// A request path as WSGI's `PATH_INFO` carries it to pecan: `%XX` decoded, the bytes read
/// as UTF-8 (invalid sequences replaced by U+FFFD, as webob's `path_info`), `+` kept.
pub fn percent_decode_path(path: &str) -> String {
    decode(path, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let pair = &bytes[i + 1..i + 3];
                let hex = pair
                    .iter()
                    .all(u8::is_ascii_hexdigit)
                    .then(|| std::str::from_utf8(pair).ok())
                    .flatten()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
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

impl PolicyCheck for openkeel_auth::Enforcer {
    fn enforce(&self, rule: &str, target: &Value, creds: &Value) -> bool {
        openkeel_auth::Enforcer::enforce(self, rule, target, creds)
    }

    fn enforce_on(
        &self,
        rule: &str,
        target: &mut dyn FnMut(Option<&[String]>) -> Value,
        creds: &Value,
    ) -> bool {
        openkeel_auth::Enforcer::enforce_on(self, rule, target, creds)
    }

    fn refresh(&self) {
        self.reload_if_due(openkeel_auth::policy::RELOAD_CHECK_INTERVAL);
    }

    fn reads_token_info(&self) -> bool {
        openkeel_auth::Enforcer::reads_token_info(self)
    }
}

/// Make the context see every project (`context.all_tenants = True`) after checking the
/// admin-only rule, as the handlers do for admins.
pub fn widen(state: &ApiState, ctx: &mut RequestContext, rule: &str) -> Result<(), ApiError> {
    if ctx.is_admin {
        enforce(state, ctx, rule, None)?;
        ctx.all_tenants = true;
        update_credentials(ctx, "all_tenants", true);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials kept in the context follow its `is_admin` and `all_tenants`: changed
    /// through `widen` they are updated in place, changed otherwise they are built again.
    #[test]
    fn kept_credentials_follow_the_context() {
        let policy = openkeel_auth::Enforcer::new(openkeel_auth::PolicyOptions::default())
            .map(|p| Arc::new(p) as Arc<dyn PolicyCheck>)
            .ok();
        let state = ApiState {
            policy,
            ..Default::default()
        };
        let mut ctx = RequestContext {
            user_id: Some("u".into()),
            project_id: Some("p".into()),
            roles: vec!["admin".into()],
            ..Default::default()
        };
        ctx.credentials_cache.0 = Some(Arc::new(build_credentials(&state, &ctx)));
        ctx.is_admin = true;
        assert_eq!(
            policy_credentials(&state, &ctx)["is_admin"],
            true,
            "rebuilt"
        );
        update_credentials(&mut ctx, "is_admin", true);
        widen(&state, &mut ctx, "cluster:get_all_all_projects").unwrap();
        let kept = ctx.credentials_cache.0.clone().unwrap();
        let creds = policy_credentials(&state, &ctx);
        assert!(Arc::ptr_eq(&kept, &creds), "the kept credentials are used");
        assert_eq!(
            (creds["is_admin"].clone(), creds["all_tenants"].clone()),
            (true.into(), true.into())
        );
        assert_eq!(*creds, build_credentials(&state, &ctx));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b+c"), "a b c");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%+1"), "% 1");
        assert_eq!(percent_decode_path("%+1"), "%+1");
        assert_eq!(percent_decode("50%"), "50%");
        assert_eq!(percent_decode("%41"), "A");
        assert_eq!(percent_decode_path("/v1/a+b%7Bweird%7D"), "/v1/a+b{weird}");
        assert_eq!(
            percent_decode_path("/v1/%C3%A9/%FF/a%2Fb"),
            "/v1/\u{e9}/\u{fffd}/a/b"
        );
    }
}
