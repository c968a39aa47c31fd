//! [`BarbicanClient`]: the Barbican (key-manager v1) calls of Magnum's `barbican` cert manager
//! (`magnum/common/cert_manager/barbican_cert_manager.py`, through openstacksdk's
//! `key_manager` proxy).
//!
//! As Magnum's `get_admin_clients()`, every call uses the **service** session: the
//! `[keystone_auth]` credentials (password, optionally trust-scoped), whatever the request's
//! context; the endpoint is the catalogue's `key-manager` service with `[barbican_client]
//! region_name` / `endpoint_type` (TLS options from `[keystone_auth]`, as Magnum's one
//! keystoneauth session). The requests:
//!
//! | call | request |
//! |---|---|
//! | [`BarbicanClient::create_secret`] | `POST <v1>/secrets` `{"payload", "payload_content_type": "text/plain", "name"}` |
//! | [`BarbicanClient::create_container`] | `POST <v1>/containers` `{"name", "type": "certificate", "secret_refs": [{"name", "secret_ref"}]}` |
//! | [`BarbicanClient::get_container`] | `GET <v1>/containers/<uuid>` |
//! | [`BarbicanClient::get_secret_payload`] | `GET <v1>/secrets/<uuid>`, then `GET <v1>/secrets/<uuid>/payload` with `Accept: <content_types.default>` |
//! | [`BarbicanClient::delete_secret`] / [`BarbicanClient::delete_container`] | `DELETE <v1>/secrets/<uuid>` / `.../containers/<uuid>` (404 ignored, as openstacksdk's `ignore_missing=True`) |
//!
//! `<v1>` is the catalogue URL, with `/v1` appended unless it already ends with it (the
//! version openstacksdk's discovery picks). Besides `X-Auth-Token`, OpenKeel sends the
//! token's project as `X-Project-Id` (keystonemiddleware in front of Barbican strips and
//! re-derives that header from the token; Barbican's `unauthenticated-context` pipeline
//! reads it). Payloads (private keys, passphrases) are never logged: only methods, URLs
//! and statuses are (see [`crate::http`]).

use crate::http::{HttpClient, Response};
use crate::session::{Authenticator, Session};
use crate::settings::{ClientSettings, CloudSettings};
use reqwest::{Method, Url};
use serde_json::{json, Value};
use std::sync::Arc;

/// Why a Barbican call failed. The texts are openstacksdk's / keystoneauth's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BarbicanError {
    /// No session or no `key-manager` endpoint (Magnum: the keystoneauth error).
    Connect(String),
    /// Barbican answered 404 (openstacksdk `NotFoundException` / `ResourceNotFound`).
    NotFound(String),
    /// Any other HTTP or transport failure, or an answer that is not what Barbican sends.
    Failed(String),
}

impl std::fmt::Display for BarbicanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BarbicanError::Connect(m) | BarbicanError::NotFound(m) | BarbicanError::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for BarbicanError {}

/// One entry of a container's `secret_refs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef {
    pub name: String,
    pub secret_ref: String,
}

/// A container as `GET /v1/containers/<uuid>` returns it (the parts Magnum reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub container_ref: String,
    pub name: Option<String>,
    /// `type` (`certificate` for Magnum's).
    pub kind: Option<String>,
    pub secret_refs: Vec<SecretRef>,
}

impl Container {
    /// The ref of the secret called `name` (`certificate`, `private_key`, ...).
    pub fn secret(&self, name: &str) -> Option<&str> {
        self.secret_refs
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.secret_ref.as_str())
    }
}

/// The last path segment of a ref (`ref.split('/')[-1]`, as Magnum).
pub fn ref_uuid(r: &str) -> &str {
    r.rsplit('/').next().unwrap_or(r)
}

/// The Barbican client (service credentials, see the module docs).
pub struct BarbicanClient {
    http: HttpClient,
    auth: Authenticator,
    client: ClientSettings,
}

impl std::fmt::Debug for BarbicanClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarbicanClient")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

struct Conn {
    session: Session,
    v1: Url,
}

impl BarbicanClient {
    /// `settings` gives `[keystone_auth]` (credentials, TLS, timeout); `client` is
    /// `[barbican_client]`.
    pub fn new(settings: CloudSettings, client: ClientSettings) -> Result<BarbicanClient, String> {
        let http = HttpClient::new(&settings)?;
        let settings = Arc::new(settings);
        let auth = Authenticator::new(settings, http.clone());
        Ok(BarbicanClient { http, auth, client })
    }

    async fn connect(&self) -> Result<Conn, BarbicanError> {
        let session = self.auth.service_session().await.map_err(|e| {
            BarbicanError::Connect(match e {
                crate::session::SessionError::NoCredentials => {
                    "Keystone API connection failed: no password or token found.".to_string()
                }
                crate::session::SessionError::Authorization(m)
                | crate::session::SessionError::Client(m)
                | crate::session::SessionError::Unavailable(m) => m,
            })
        })?;
        let endpoint = session
            .catalog
            .endpoint(
                "key-manager",
                &self.client.endpoint_type,
                self.client.region_name.as_deref(),
            )
            .map_err(BarbicanError::Connect)?;
        let v1 = v1_root(&endpoint.url).map_err(BarbicanError::Connect)?;
        Ok(Conn { session, v1 })
    }

    fn url(conn: &Conn, parts: &[&str]) -> Url {
        let mut url = conn.v1.clone();
        if let Ok(mut segs) = url.path_segments_mut() {
            segs.pop_if_empty();
            for p in parts {
                segs.push(p);
            }
        }
        url
    }

    async fn call(
        &self,
        conn: &Conn,
        method: Method,
        url: &Url,
        accept: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Response, BarbicanError> {
        let mut headers: Vec<(&str, &str)> = vec![("X-Auth-Token", conn.session.token.as_str())];
        if let Some(p) = conn.session.project_id.as_deref() {
            headers.push(("X-Project-Id", p));
        }
        if let Some(a) = accept {
            headers.push(("Accept", a));
        }
        let resp = self
            .http
            .send(method, url, &headers, body)
            .await
            .map_err(|e| BarbicanError::Failed(e.to_string()))?;
        if resp.status == 401 && conn.session.service {
            self.auth.invalidate_service();
        }
        match resp.status {
            s if (200..300).contains(&s) => Ok(resp),
            404 => Err(BarbicanError::NotFound(resp.sdk_error())),
            _ => Err(BarbicanError::Failed(resp.sdk_error())),
        }
    }

    /// `create_secret(payload=..., payload_content_type='text/plain', name=...)`: the
    /// `secret_ref`.
    pub async fn create_secret(&self, name: &str, payload: &str) -> Result<String, BarbicanError> {
        let conn = self.connect().await?;
        let body = json!({"payload": payload, "payload_content_type": "text/plain", "name": name});
        let resp = self
            .call(
                &conn,
                Method::POST,
                &Self::url(&conn, &["secrets"]),
                None,
                Some(&body),
            )
            .await?;
        resp.json()
            .get("secret_ref")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| BarbicanError::Failed("Barbican answered without secret_ref".into()))
    }

    /// `create_container(name=..., type='certificate', secret_refs=[...])`: the
    /// `container_ref`.
    pub async fn create_container(
        &self,
        name: &str,
        secret_refs: &[SecretRef],
    ) -> Result<String, BarbicanError> {
        let conn = self.connect().await?;
        let refs: Vec<Value> = secret_refs
            .iter()
            .map(|s| json!({"name": s.name, "secret_ref": s.secret_ref}))
            .collect();
        let body = json!({"name": name, "type": "certificate", "secret_refs": refs});
        let resp = self
            .call(
                &conn,
                Method::POST,
                &Self::url(&conn, &["containers"]),
                None,
                Some(&body),
            )
            .await?;
        resp.json()
            .get("container_ref")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| BarbicanError::Failed("Barbican answered without container_ref".into()))
    }

    /// `get_container(uuid)`.
    pub async fn get_container(&self, uuid: &str) -> Result<Container, BarbicanError> {
        let conn = self.connect().await?;
        let resp = self
            .call(
                &conn,
                Method::GET,
                &Self::url(&conn, &["containers", uuid]),
                None,
                None,
            )
            .await?;
        let body = resp.json();
        let s = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
        let secret_refs = body
            .get("secret_refs")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|r| {
                        Some(SecretRef {
                            name: r.get("name")?.as_str()?.to_string(),
                            secret_ref: r.get("secret_ref")?.as_str()?.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Container {
            container_ref: s("container_ref").unwrap_or_default(),
            name: s("name"),
            kind: s("type"),
            secret_refs,
        })
    }

    /// `get_secret(uuid).payload`: the metadata, then the payload in its default content
    /// type (`text/plain` for Magnum's secrets), decoded as UTF-8.
    pub async fn get_secret_payload(&self, uuid: &str) -> Result<String, BarbicanError> {
        let conn = self.connect().await?;
        let meta = self
            .call(
                &conn,
                Method::GET,
                &Self::url(&conn, &["secrets", uuid]),
                None,
                None,
            )
            .await?
            .json();
        let content_type = meta
            .pointer("/content_types/default")
            .and_then(Value::as_str)
            .unwrap_or("text/plain")
            .to_string();
        let resp = self
            .call(
                &conn,
                Method::GET,
                &Self::url(&conn, &["secrets", uuid, "payload"]),
                Some(&content_type),
                None,
            )
            .await?;
        String::from_utf8(resp.body)
            .map_err(|_| BarbicanError::Failed(format!("secret {uuid}: payload is not UTF-8")))
    }

    /// `delete_secret(uuid)` (a missing secret is not an error).
    pub async fn delete_secret(&self, uuid: &str) -> Result<(), BarbicanError> {
        self.delete(&["secrets", uuid]).await
    }

    /// `delete_container(uuid)` (a missing container is not an error).
    pub async fn delete_container(&self, uuid: &str) -> Result<(), BarbicanError> {
        self.delete(&["containers", uuid]).await
    }

    async fn delete(&self, parts: &[&str]) -> Result<(), BarbicanError> {
        let conn = self.connect().await?;
        match self
            .call(&conn, Method::DELETE, &Self::url(&conn, parts), None, None)
            .await
        {
            Ok(_) | Err(BarbicanError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The v1 API root under a catalogue URL.
fn v1_root(endpoint: &str) -> Result<Url, String> {
    let mut url = Url::parse(endpoint.trim())
        .map_err(|e| format!("Invalid key-manager endpoint {endpoint}: {e}"))?;
    let last_is_v1 = url
        .path_segments()
        .and_then(|mut s| s.rfind(|p| !p.is_empty()))
        .is_some_and(|p| p == "v1");
    if let Ok(mut segs) = url.path_segments_mut() {
        segs.pop_if_empty();
        if !last_is_v1 {
            segs.push("v1");
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_roots() {
        let u = |s: &str| v1_root(s).map(|u| u.to_string()).unwrap_or_default();
        assert_eq!(u("http://h:9311"), "http://h:9311/v1");
        assert_eq!(u("http://h:9311/"), "http://h:9311/v1");
        assert_eq!(u("http://h/key-manager"), "http://h/key-manager/v1");
        assert_eq!(u("http://h/key-manager/v1/"), "http://h/key-manager/v1");
    }

    #[test]
    fn ref_uuids_are_the_last_segment() {
        assert_eq!(ref_uuid("http://h:9311/v1/containers/abc"), "abc");
        assert_eq!(ref_uuid("abc"), "abc");
    }
}
