//! [`KeystoneCloud`]: the real services, found in the Keystone v3 catalogue.
//!
//! Each look-up builds its client as Magnum's `OpenStackClients` does (session from the
//! context, endpoint from the catalogue with `[<service>_client] region_name` /
//! `endpoint_type`), then makes the same requests openstacksdk makes for Magnum:
//!
//! | look-up | requests |
//! |---|---|
//! | `find_image(x)` | `GET <image>/v2/images/<x>`; on 404/400/403 `GET <image>/v2/images?name=<x>` (all pages) |
//! | `list_flavors` | `GET <compute>/flavors/detail?is_public=None` (all pages) |
//! | `keypair_exists(k)` | `GET <compute>/os-keypairs/<k>` |
//! | `list_external_networks` | `GET <network>/v2.0/networks?router:external=True` (all pages) |
//! | `list_networks` / `list_subnets` | `GET <network>/v2.0/networks` / `.../subnets` (all pages) |
//! | `project_exists(p)` | `GET <identity>/v3/projects/<p>` |
//!
//! with `X-Auth-Token: <token>` and a bound on every request. Errors are Magnum's: failing to
//! build a client gives 403 `AuthorizationFailure` (`glance connection failed. reason: ...` /
//! `... unexpected client error occurred: ...`); SDK errors Magnum does not catch give a 500
//! `MagnumException` whose text is openstacksdk's or keystoneauth's.

use crate::http::{HttpClient, Response, TransportError};
use crate::session::{identity_v3, Authenticator, Session, SessionError};
use crate::settings::{ClientSettings, CloudSettings};
use async_trait::async_trait;
use openkeel_core::cloud::{Cloud, Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use reqwest::{Method, Url};
use serde_json::Value;
use std::sync::Arc;

/// Most pages followed in one list (a runaway `next` link never loops forever).
const MAX_PAGES: usize = 1000;

/// Glance image attributes that are part of the image schema; the rest are custom properties.
const GLANCE_BASE_KEYS: &[&str] = &[
    "id",
    "name",
    "status",
    "visibility",
    "protected",
    "os_hidden",
    "checksum",
    "os_hash_algo",
    "os_hash_value",
    "owner",
    "size",
    "virtual_size",
    "min_ram",
    "min_disk",
    "container_format",
    "disk_format",
    "created_at",
    "updated_at",
    "tags",
    "direct_url",
    "locations",
    "self",
    "file",
    "schema",
    "stores",
    "os_distro",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    Glance,
    Nova,
    Neutron,
    Identity,
    Cinder,
    Octavia,
}

impl Service {
    /// The `OpenStackClients` method name Magnum puts in `AuthorizationFailure`.
    fn client(self) -> &'static str {
        match self {
            Service::Glance => "glance",
            Service::Nova => "nova",
            Service::Neutron => "neutron",
            Service::Identity => "keystone",
            Service::Cinder => "cinder",
            Service::Octavia => "octavia",
        }
    }

    fn service_type(self) -> &'static str {
        match self {
            Service::Glance => "image",
            Service::Nova => "compute",
            Service::Neutron => "network",
            Service::Identity => "identity",
            Service::Cinder => "block-storage",
            Service::Octavia => "load-balancer",
        }
    }

    /// Whether Magnum wraps client-building errors in `AuthorizationFailure`
    /// (`@exception.wrap_keystone_exception` on `glance()`, `nova()`, `neutron()`; the
    /// identity client of `_validate_project_id` is not wrapped: its errors give a 500).
    fn wrapped(self) -> bool {
        !matches!(self, Service::Identity)
    }
}

/// A client for one service: the token to send and the versioned API root.
pub(crate) struct Conn {
    pub token: String,
    pub base: Url,
    pub service_token: bool,
}

/// A failed call, typed by whether retrying may help; Magnum's error when it reaches the
/// API ([`CallError::into_magnum`]), a driver error in the conductor
/// ([`CallError::into_driver`]).
pub(crate) enum CallError {
    /// The client could not be built (session, catalogue).
    Build { svc: Service, err: SessionError },
    /// The service answered an error or could not be reached.
    Failure(Failure),
    /// A Magnum error the look-up itself raises (not found, duplicates).
    Magnum(MagnumError),
}

impl From<Failure> for CallError {
    fn from(f: Failure) -> Self {
        CallError::Failure(f)
    }
}

impl From<MagnumError> for CallError {
    fn from(e: MagnumError) -> Self {
        CallError::Magnum(e)
    }
}

impl CallError {
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            CallError::Build { err, .. } => err.is_transient(),
            CallError::Failure(f) => f.is_transient(),
            CallError::Magnum(_) => false,
        }
    }

    pub(crate) fn into_magnum(self) -> MagnumError {
        match self {
            CallError::Build { svc, err } => KeystoneCloud::build_error(svc, err),
            CallError::Failure(f) => f.into_error(),
            CallError::Magnum(e) => e,
        }
    }

    pub(crate) fn into_driver(self) -> openkeel_drivers::DriverError {
        if self.is_transient() {
            openkeel_drivers::DriverError::transient(self.into_magnum().message().to_string())
        } else {
            openkeel_drivers::DriverError::permanent(self.into_magnum())
        }
    }
}

/// The catalogue endpoint of `svc` (Cinder under any of its service types, as keystoneauth
/// matches `block-storage` with its aliases `volumev3` and `volume`).
fn endpoint_for(session: &Session, svc: Service, cs: &ClientSettings) -> Result<String, String> {
    let types: &[&str] = match svc {
        Service::Cinder => &["block-storage", "volumev3", "volume"],
        other => &[other.service_type()],
    };
    let mut first_err = None;
    for t in types {
        match session
            .catalog
            .endpoint(t, &cs.endpoint_type, cs.region_name.as_deref())
        {
            Ok(e) => return Ok(e.url),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_default())
}

/// Why a call failed after the client was built.
pub(crate) enum Failure {
    Http(Box<Response>),
    Transport(TransportError),
    Invalid(String),
}

impl Failure {
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            Failure::Http(r) => Some(r.status),
            _ => None,
        }
    }

    /// Whether retrying later may succeed: the service could not be reached or timed out,
    /// or answered 5xx, 409 or 429.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Failure::Http(r) => r.status >= 500 || r.status == 409 || r.status == 429,
            Failure::Transport(_) => true,
            Failure::Invalid(_) => false,
        }
    }

    /// The 500 Magnum gives for an SDK error it does not catch.
    pub(crate) fn into_error(self) -> MagnumError {
        match self {
            Failure::Http(r) => MagnumError::internal(r.sdk_error()),
            Failure::Transport(t) => MagnumError::internal(t.to_string()),
            Failure::Invalid(m) => MagnumError::internal(m),
        }
    }
}

/// The Glance/Nova/Neutron/Keystone look-ups against the real services.
pub struct KeystoneCloud {
    settings: Arc<CloudSettings>,
    http: HttpClient,
    auth: Authenticator,
}

impl std::fmt::Debug for KeystoneCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeystoneCloud")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl KeystoneCloud {
    /// Build the cloud from its settings. Fails with `ConfigInvalid` when the TLS files of
    /// `[keystone_auth]` cannot be used.
    pub fn new(settings: CloudSettings) -> Result<KeystoneCloud, MagnumError> {
        let http = HttpClient::new(&settings)
            .map_err(|e| MagnumError::new(ErrorKind::ConfigInvalid, &[("error_msg", &e)]))?;
        let settings = Arc::new(settings);
        let auth = Authenticator::new(settings.clone(), http.clone());
        Ok(KeystoneCloud {
            settings,
            http,
            auth,
        })
    }

    pub fn settings(&self) -> &CloudSettings {
        &self.settings
    }

    fn client_settings(&self, svc: Service) -> &ClientSettings {
        match svc {
            Service::Glance => &self.settings.glance_client,
            Service::Nova => &self.settings.nova_client,
            Service::Neutron => &self.settings.neutron_client,
            Service::Identity => &self.settings.identity_client,
            Service::Cinder => &self.settings.cinder_client,
            Service::Octavia => &self.settings.octavia_client,
        }
    }

    fn build_error(svc: Service, err: SessionError) -> MagnumError {
        let (prefix, msg) = match err {
            SessionError::NoCredentials => {
                // Raised by Magnum's KeystoneClientV3 itself, whichever client asked.
                return MagnumError::new(
                    ErrorKind::AuthorizationFailure,
                    &[
                        ("client", &"keystone"),
                        (
                            "message",
                            &"reason Keystone API connection failed: no password or token found.",
                        ),
                    ],
                );
            }
            SessionError::Authorization(m) => ("reason: ", m),
            SessionError::Client(m) | SessionError::Unavailable(m) => {
                ("unexpected client error occurred: ", m)
            }
        };
        if svc.wrapped() {
            MagnumError::new(
                ErrorKind::AuthorizationFailure,
                &[
                    ("client", &svc.client()),
                    ("message", &format!("{prefix}{msg}")),
                ],
            )
        } else {
            MagnumError::internal(msg)
        }
    }

    /// Build the client for `svc`: session, catalogue endpoint, versioned root.
    pub(crate) async fn connect(
        &self,
        ctx: &RequestContext,
        svc: Service,
    ) -> Result<Conn, CallError> {
        let session: Session = self
            .auth
            .session(ctx)
            .await
            .map_err(|err| CallError::Build { svc, err })?;
        let cs = self.client_settings(svc);
        let endpoint = match endpoint_for(&session, svc, cs) {
            Ok(e) => e,
            // The identity service may be missing from the catalogue: its URL is the auth URL.
            Err(e) => match (svc, self.settings.auth_url()) {
                (Service::Identity, Some(u)) if !session.catalog.is_empty() => u.to_string(),
                _ => {
                    return Err(CallError::Build {
                        svc,
                        err: SessionError::Client(e),
                    })
                }
            },
        };
        let base = versioned_root(svc, &endpoint).map_err(|e| CallError::Build {
            svc,
            err: SessionError::Client(e),
        })?;
        Ok(Conn {
            token: session.token,
            base,
            service_token: session.service,
        })
    }

    /// [`KeystoneCloud::connect`], or `None` when the catalogue has no usable endpoint for
    /// `svc` (a cloud without that service).
    pub(crate) async fn connect_if_listed(
        &self,
        ctx: &RequestContext,
        svc: Service,
    ) -> Result<Option<Conn>, CallError> {
        match self.connect(ctx, svc).await {
            Ok(c) => Ok(Some(c)),
            Err(CallError::Build {
                err: SessionError::Client(_),
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The catalogue URL of `service_type` for `interface` (any region), with the caller's
    /// session: keystoneauth's `session.get_endpoint(service_type=..., interface=...)`.
    pub(crate) async fn catalog_url(
        &self,
        ctx: &RequestContext,
        service_type: &str,
        interface: &str,
        region_name: Option<&str>,
    ) -> Result<String, CallError> {
        let session: Session = self
            .auth
            .session(ctx)
            .await
            .map_err(|err| CallError::Build {
                svc: Service::Identity,
                err,
            })?;
        session
            .catalog
            .endpoint(service_type, interface, region_name)
            .map(|e| e.url)
            .map_err(|e| CallError::Build {
                svc: Service::Identity,
                err: SessionError::Client(e),
            })
    }

    /// Send one request with the connection's token (and `extra` headers).
    pub(crate) async fn send(
        &self,
        conn: &Conn,
        method: Method,
        url: &Url,
        extra: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Response, Failure> {
        let mut headers: Vec<(&str, &str)> = vec![("X-Auth-Token", &conn.token)];
        headers.extend_from_slice(extra);
        let resp = self
            .http
            .send(method, url, &headers, body)
            .await
            .map_err(Failure::Transport)?;
        if resp.status == 401 && conn.service_token {
            self.auth.invalidate_service();
        }
        Ok(resp)
    }

    pub(crate) async fn get(&self, conn: &Conn, url: &Url) -> Result<Response, Failure> {
        self.send(conn, Method::GET, url, &[], None).await
    }

    /// GET a list and follow its `next` links; `key` names the list in the body.
    pub(crate) async fn list(
        &self,
        conn: &Conn,
        first: Url,
        key: &str,
    ) -> Result<Vec<Value>, Failure> {
        let mut out = Vec::new();
        let mut next = Some(first);
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(Failure::Invalid(format!(
                    "more than {MAX_PAGES} pages listing {key}"
                )));
            }
            let resp = self.get(conn, &url).await?;
            if !resp.is_success() {
                return Err(Failure::Http(Box::new(resp)));
            }
            let body = resp.json();
            let items = body.get(key).and_then(Value::as_array).ok_or_else(|| {
                Failure::Invalid(format!("{} answered without a {key} list", resp.url))
            })?;
            if items.is_empty() {
                break;
            }
            out.extend(items.iter().cloned());
            next = next_link(&conn.base, &url, &body, key);
        }
        Ok(out)
    }
}

/// The versioned API root under a catalogue endpoint, as openstacksdk's discovery ends up
/// with for Magnum's services: Glance `…/v2`, Nova `…/v2.1` (a versioned endpoint such as
/// `…/v2.1/<project>` is kept), Neutron `…/v2.0`, Keystone `…/v3`.
fn versioned_root(svc: Service, endpoint: &str) -> Result<Url, String> {
    let mut url =
        Url::parse(endpoint.trim()).map_err(|e| format!("Invalid endpoint URL {endpoint}: {e}"))?;
    if url.cannot_be_a_base() {
        return Err(format!("Invalid endpoint URL {endpoint}"));
    }
    if svc == Service::Identity {
        return identity_v3(url.as_str());
    }
    let segs: Vec<String> = url
        .path_segments()
        .map(|s| s.filter(|p| !p.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let is_version = |s: &str, major: &str| {
        s == major
            || s.strip_prefix(major)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
    };
    let (keep, add) = match svc {
        Service::Glance => (segs.last().is_some_and(|s| is_version(s, "v2")), "v2"),
        Service::Nova => (segs.iter().any(|s| is_version(s, "v2")), "v2.1"),
        Service::Neutron => (segs.last().is_some_and(|s| is_version(s, "v2")), "v2.0"),
        // `…/v3/<project>` and `…/v3` are used as they are.
        Service::Cinder => (segs.iter().any(|s| is_version(s, "v3")), "v3"),
        Service::Octavia => (segs.last().is_some_and(|s| is_version(s, "v2")), "v2"),
        Service::Identity => (true, ""),
    };
    if let Ok(mut p) = url.path_segments_mut() {
        p.pop_if_empty();
        if !keep {
            p.push(add);
        }
    }
    url.set_query(None);
    Ok(url)
}

pub(crate) fn join(base: &Url, segments: &[&str]) -> Url {
    let mut url = base.clone();
    if let Ok(mut p) = url.path_segments_mut() {
        p.pop_if_empty();
        for s in segments {
            p.push(s);
        }
    }
    url
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The next page: Glance's `next` (`/v2/images?marker=…`, relative to the versioned root once
/// its version prefix is dropped, as openstacksdk does), or Nova/Neutron's `<key>_links`
/// `rel=next` href. Links to another origin are not followed (the token would go there).
fn next_link(base: &Url, current: &Url, body: &Value, key: &str) -> Option<Url> {
    let href = body
        .get(format!("{key}_links"))
        .and_then(Value::as_array)
        .and_then(|links| {
            links
                .iter()
                .find(|l| l.get("rel").and_then(Value::as_str) == Some("next"))
        })
        .and_then(|l| l.get("href"))
        .or_else(|| body.get("next"))
        .and_then(Value::as_str)?;
    let url = if href.starts_with("http://") || href.starts_with("https://") {
        Url::parse(href).ok()?
    } else {
        let mut rel = href;
        if rel.starts_with("/v") {
            rel = rel.get(rel[1..].find('/')? + 1..)?;
        }
        let joined = format!("{}{}", base.as_str().trim_end_matches('/'), rel);
        Url::parse(&joined).ok()?
    };
    if !same_origin(&url, base) || &url == current {
        if !same_origin(&url, base) {
            tracing::warn!(list = key, "not following a next link to another origin");
        }
        return None;
    }
    Some(url)
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn int_field(v: &Value, key: &str) -> i64 {
    match v.get(key) {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// A Glance v2 image document as the validators see it.
pub(crate) fn image_from_json(v: &Value) -> Option<Image> {
    let obj = v.as_object()?;
    let id = str_field(v, "id")?;
    let properties = obj
        .iter()
        .filter(|(k, _)| !GLANCE_BASE_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(Image {
        id,
        name: str_field(v, "name"),
        os_distro: str_field(v, "os_distro"),
        properties,
    })
}

fn flavor_from_json(v: &Value) -> Option<Flavor> {
    Some(Flavor {
        id: str_field(v, "id")?,
        name: str_field(v, "name").unwrap_or_default(),
        disk: int_field(v, "disk"),
        vcpus: int_field(v, "vcpus"),
        ram: int_field(v, "ram"),
    })
}

fn named_from_json(v: &Value) -> Option<NamedResource> {
    Some(NamedResource {
        id: str_field(v, "id")?,
        name: str_field(v, "name").unwrap_or_default(),
    })
}

/// The look-ups with typed errors ([`Cloud`] and the driver's `DriverCloud` share them).
impl KeystoneCloud {
    pub(crate) async fn find_image_call(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Image, CallError> {
        let conn = self.connect(ctx, Service::Glance).await?;
        let not_found = || MagnumError::new(ErrorKind::ImageNotFound, &[("image_id", &name_or_id)]);
        // openstacksdk's find: first as an id, whatever it looks like.
        if !name_or_id.is_empty() {
            let url = join(&conn.base, &["images", name_or_id]);
            let resp = self.get(&conn, &url).await?;
            match resp.status {
                200..=299 => {
                    return image_from_json(&resp.json()).ok_or_else(|| {
                        Failure::Invalid(format!("{} answered without an image", resp.url)).into()
                    })
                }
                400 | 403 | 404 => {}
                _ => return Err(Failure::Http(Box::new(resp)).into()),
            }
        }
        let mut url = join(&conn.base, &["images"]);
        url.query_pairs_mut().append_pair("name", name_or_id);
        let items = match self.list(&conn, url, "images").await {
            Ok(items) => items,
            Err(f) if f.status() == Some(404) => return Err(not_found().into()),
            Err(f) if f.status() == Some(403) => {
                return Err(MagnumError::new(
                    ErrorKind::ImageNotAuthorized,
                    &[("image_id", &name_or_id)],
                )
                .into())
            }
            Err(f) => return Err(f.into()),
        };
        let mut matches = items
            .iter()
            .filter_map(image_from_json)
            .filter(|i| i.id == name_or_id || i.name.as_deref() == Some(name_or_id));
        let first = matches.next().ok_or_else(not_found)?;
        if matches.next().is_some() {
            return Err(MagnumError::with_message(
                ErrorKind::Conflict,
                format!(
                    "Multiple images exist with same name '{name_or_id}'. Please use the image ID instead."
                ),
            )
            .into());
        }
        Ok(first)
    }

    pub(crate) async fn list_flavors_call(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<Flavor>, CallError> {
        let conn = self.connect(ctx, Service::Nova).await?;
        let mut url = join(&conn.base, &["flavors", "detail"]);
        url.query_pairs_mut().append_pair("is_public", "None");
        let items = self.list(&conn, url, "flavors").await?;
        Ok(items.iter().filter_map(flavor_from_json).collect())
    }

    pub(crate) async fn keypair_exists_call(
        &self,
        ctx: &RequestContext,
        name: &str,
    ) -> Result<bool, CallError> {
        let conn = self.connect(ctx, Service::Nova).await?;
        let url = join(&conn.base, &["os-keypairs", name]);
        let resp = self.get(&conn, &url).await?;
        match resp.status {
            200..=299 => Ok(true),
            404 => Ok(false),
            _ => Err(Failure::Http(Box::new(resp)).into()),
        }
    }

    pub(crate) async fn list_external_networks_call(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, CallError> {
        let conn = self.connect(ctx, Service::Neutron).await?;
        let mut url = join(&conn.base, &["networks"]);
        url.query_pairs_mut().append_pair("router:external", "True");
        let items = self.list(&conn, url, "networks").await?;
        Ok(items.iter().filter_map(named_from_json).collect())
    }

    pub(crate) async fn list_networks_call(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, CallError> {
        let conn = self.connect(ctx, Service::Neutron).await?;
        let url = join(&conn.base, &["networks"]);
        let items = self.list(&conn, url, "networks").await?;
        Ok(items.iter().filter_map(named_from_json).collect())
    }

    pub(crate) async fn list_subnets_call(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, CallError> {
        let conn = self.connect(ctx, Service::Neutron).await?;
        let url = join(&conn.base, &["subnets"]);
        let items = self.list(&conn, url, "subnets").await?;
        Ok(items.iter().filter_map(named_from_json).collect())
    }

    pub(crate) async fn project_exists_call(
        &self,
        ctx: &RequestContext,
        project_id: &str,
    ) -> Result<bool, CallError> {
        let conn = self.connect(ctx, Service::Identity).await?;
        let url = join(&conn.base, &["projects", project_id]);
        let resp = self.get(&conn, &url).await?;
        match resp.status {
            200..=299 => Ok(true),
            404 => Ok(false),
            _ => Err(Failure::Http(Box::new(resp)).into()),
        }
    }
}

#[async_trait]
impl Cloud for KeystoneCloud {
    async fn find_image(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Image, MagnumError> {
        self.find_image_call(ctx, name_or_id)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn list_flavors(&self, ctx: &RequestContext) -> Result<Vec<Flavor>, MagnumError> {
        self.list_flavors_call(ctx)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn keypair_exists(&self, ctx: &RequestContext, name: &str) -> Result<bool, MagnumError> {
        self.keypair_exists_call(ctx, name)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn list_external_networks(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        self.list_external_networks_call(ctx)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn list_networks(&self, ctx: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        self.list_networks_call(ctx)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn list_subnets(&self, ctx: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        self.list_subnets_call(ctx)
            .await
            .map_err(CallError::into_magnum)
    }

    async fn project_exists(
        &self,
        ctx: &RequestContext,
        project_id: &str,
    ) -> Result<bool, MagnumError> {
        self.project_exists_call(ctx, project_id)
            .await
            .map_err(CallError::into_magnum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(svc: Service, e: &str) -> String {
        versioned_root(svc, e)
            .map(|u| u.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn versioned_roots() {
        assert_eq!(root(Service::Glance, "http://h:9292"), "http://h:9292/v2");
        assert_eq!(
            root(Service::Glance, "http://h/image/"),
            "http://h/image/v2"
        );
        assert_eq!(
            root(Service::Glance, "http://h/image/v2"),
            "http://h/image/v2"
        );
        assert_eq!(
            root(Service::Nova, "http://h/compute/v2.1"),
            "http://h/compute/v2.1"
        );
        assert_eq!(
            root(Service::Nova, "http://h:8774/v2.1/abc"),
            "http://h:8774/v2.1/abc"
        );
        assert_eq!(root(Service::Nova, "http://h:8774/"), "http://h:8774/v2.1");
        assert_eq!(
            root(Service::Neutron, "http://h:9696"),
            "http://h:9696/v2.0"
        );
        assert_eq!(
            root(Service::Neutron, "http://h/network/v2.0/"),
            "http://h/network/v2.0"
        );
        assert_eq!(
            root(Service::Identity, "http://h/identity"),
            "http://h/identity/v3"
        );
        assert_eq!(root(Service::Octavia, "http://h:9876"), "http://h:9876/v2");
        assert_eq!(
            root(Service::Octavia, "http://h/load-balancer/v2.0"),
            "http://h/load-balancer/v2.0"
        );
        assert!(versioned_root(Service::Glance, "not a url").is_err());
    }

    #[test]
    fn next_links() {
        let base = Url::parse("http://h/image/v2").unwrap();
        let cur = Url::parse("http://h/image/v2/images?name=x").unwrap();
        let n = next_link(
            &base,
            &cur,
            &json!({"next": "/v2/images?marker=a&name=x"}),
            "images",
        );
        assert_eq!(
            n.map(|u| u.to_string()).as_deref(),
            Some("http://h/image/v2/images?marker=a&name=x")
        );
        let base = Url::parse("http://h/compute/v2.1").unwrap();
        let body = json!({"flavors_links": [{"rel": "next", "href": "http://h/compute/v2.1/flavors/detail?marker=2"}]});
        let n = next_link(&base, &cur, &body, "flavors");
        assert_eq!(
            n.map(|u| u.to_string()).as_deref(),
            Some("http://h/compute/v2.1/flavors/detail?marker=2")
        );
        let body = json!({"flavors_links": [{"rel": "next", "href": "http://evil/x"}]});
        assert_eq!(next_link(&base, &cur, &body, "flavors"), None);
        assert_eq!(next_link(&base, &cur, &json!({}), "flavors"), None);
    }

    #[test]
    fn image_documents() {
        let i = image_from_json(&json!({"id": "i1", "name": "n", "os_distro": "ubuntu",
            "status": "active", "magnum_driver": "k8s_capi", "hw_disk_bus": "scsi"}))
        .unwrap();
        assert_eq!(i.os_distro.as_deref(), Some("ubuntu"));
        assert_eq!(i.magnum_driver(), Some("k8s_capi"));
        assert!(!i.properties.contains_key("status"));
        assert!(image_from_json(&json!({"name": "x"})).is_none());
        let f = flavor_from_json(
            &json!({"id": "1", "name": "m1.tiny", "disk": 1, "ram": 512, "vcpus": 1}),
        )
        .unwrap();
        assert_eq!((f.disk, f.ram, f.vcpus), (1, 512, 1));
    }

    #[test]
    fn build_errors_as_magnum() {
        let e = KeystoneCloud::build_error(Service::Glance, SessionError::NoCredentials);
        assert_eq!(e.code(), 403);
        assert_eq!(
            e.message(),
            "keystone connection failed. reason Keystone API connection failed: no password or token found."
        );
        let e = KeystoneCloud::build_error(
            Service::Nova,
            SessionError::Client("publicURL endpoint for compute service not found".into()),
        );
        assert_eq!(
            e.message(),
            "nova connection failed. unexpected client error occurred: publicURL endpoint for compute service not found"
        );
        let e = KeystoneCloud::build_error(Service::Identity, SessionError::Client("x".into()));
        assert_eq!((e.code(), e.message()), (500, "x"));
        let e =
            KeystoneCloud::build_error(Service::Neutron, SessionError::Authorization("y".into()));
        assert_eq!(e.message(), "neutron connection failed. reason: y");
    }
}
