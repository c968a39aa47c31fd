//! What the Cluster API driver is given from the cloud (`openkeel_drivers::deps`):
//!
//! * [`DriverCloud`] for [`KeystoneCloud`]: the flavor, image, network and subnet look-ups are
//!   [`Cloud`]'s own requests (one implementation, errors kept typed so that an unreachable
//!   service or a 5xx is a *transient* driver error and "not found" a *permanent* one with
//!   Magnum's message), plus what only the driver needs: Cinder's default volume type and
//!   Nova server groups.
//! * [`DriverCloud`] for [`SimulatedCloud`]: the embedded default's answers.
//! * [`KeystoneApplicationCredentials`]: Keystone application credentials as
//!   magnum-cluster-api 0.38.2's `clients.py` makes them.
//!
//! | call | requests |
//! |---|---|
//! | `default_volume_type` | `GET <block-storage>/types/default` (microversion 3.62); on 404/406 `GET <block-storage>/types` (first one) |
//! | `ensure_server_group(n, p)` | `GET <compute>/os-server-groups[?all_projects=True]&limit=&offset=` (pages until empty); none named `n`: `POST <compute>/os-server-groups` `{"server_group": {"name": n, "policy": p}}` |
//! | `delete_server_group(n)` | the same list, then `DELETE <compute>/os-server-groups/<id>` for each named `n` (404 is fine) |
//! | application credential create | `GET <identity>/v3/regions` (`[cinder_client] region_name` must be one), `POST <identity>/v3/users/<user>/application_credentials` with the user's token |
//! | application credential delete (cluster delete) | `GET <identity>/v3/users/<user>/application_credentials` (the credentials named `<uuid>` or `<uuid>-…`), `DELETE …/<id>` with the service credentials |
//! | application credential delete by id (rotation) | `DELETE <identity>/v3/users/<user>/application_credentials/<id>` with the service credentials |
//!
//! Nova calls send microversion 2.64 (`OpenStack-API-Version: compute 2.64`): the first that
//! takes `policy` (a string) instead of `policies` (a list), and late enough for the
//! `soft-*` policies (2.15).

use crate::keystone::{join, CallError, Failure, KeystoneCloud, Service};
use crate::session::SessionError;
use crate::simulated::SimulatedCloud;
use crate::validate::{one_network, one_subnet};
use async_trait::async_trait;
use openkeel_core::cloud::{Cloud, Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::Cluster;
use openkeel_drivers::deps::{
    is_cluster_credential, ApplicationCredential, ApplicationCredentials, DriverCloud,
};
use openkeel_drivers::{DriverError, DriverResult};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The Nova microversion of the server-group calls.
pub const NOVA_MICROVERSION: &str = "2.64";
const NOVA_HEADERS: &[(&str, &str)] = &[
    ("OpenStack-API-Version", "compute 2.64"),
    ("X-OpenStack-Nova-API-Version", NOVA_MICROVERSION),
];
/// `GET /types/default` exists from block-storage microversion 3.62. magnum-cluster-api asks
/// without a microversion, so Cinder answers 404 (`Volume type default could not be
/// found.`) and it takes the first listed type instead; OpenKeel asks for the default.
const CINDER_DEFAULT_TYPE_HEADERS: &[(&str, &str)] = &[("OpenStack-API-Version", "volume 3.62")];
/// Page size asked of Nova's server-group list.
const SERVER_GROUP_PAGE: usize = 1000;
const MAX_PAGES: usize = 1000;

/// A flavor by name or id (Magnum's `FlavorNotFound` when none).
pub fn pick_flavor(flavors: Vec<Flavor>, name_or_id: &str) -> Result<Flavor, MagnumError> {
    flavors
        .into_iter()
        .find(|f| f.name == name_or_id || f.id == name_or_id)
        .ok_or_else(|| MagnumError::new(ErrorKind::FlavorNotFound, &[("flavor", &name_or_id)]))
}

/// How often the deletion of a cluster's load balancers is checked (Magnum: every second).
const LB_POLL: Duration = Duration::from_secs(1);

/// `re.match(r"Kubernetes .+ from cluster <uuid>", description)`: the load balancers the
/// cluster's cloud controller manager makes for its Services.
fn lb_of_cluster(description: &str, uuid: &str) -> bool {
    let Some(rest) = description.strip_prefix("Kubernetes ") else {
        return false;
    };
    let tail = format!(" from cluster {uuid}");
    rest.char_indices()
        .skip(1)
        .take_while(|(i, _)| !rest[..*i].contains('\n'))
        .any(|(i, _)| rest[i..].starts_with(&tail))
}

/// `re.match(r"Floating IP for Kubernetes .+ from cluster <uuid>$", description)`.
fn fip_of_cluster(description: &str, uuid: &str) -> bool {
    let d = description.strip_suffix('\n').unwrap_or(description);
    d.strip_prefix("Floating IP for ").is_some_and(|rest| {
        lb_of_cluster(rest, uuid) && rest.ends_with(&format!(" from cluster {uuid}"))
    })
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl KeystoneCloud {
    /// The server groups visible to the caller named `name` (all projects for admin
    /// contexts, as magnum-cluster-api lists them; then only those of the context's project
    /// when it has one).
    async fn server_groups_named(
        &self,
        conn: &crate::keystone::Conn,
        ctx: &RequestContext,
        name: &str,
    ) -> Result<Vec<String>, CallError> {
        let mut ids = Vec::new();
        let mut offset = 0usize;
        for _ in 0..MAX_PAGES {
            let mut url = join(&conn.base, &["os-server-groups"]);
            {
                let mut q = url.query_pairs_mut();
                if ctx.is_admin {
                    q.append_pair("all_projects", "True");
                }
                q.append_pair("limit", &SERVER_GROUP_PAGE.to_string());
                q.append_pair("offset", &offset.to_string());
            }
            let resp = self
                .send(conn, Method::GET, &url, NOVA_HEADERS, None)
                .await?;
            if !resp.is_success() {
                return Err(Failure::Http(Box::new(resp)).into());
            }
            let body = resp.json();
            let groups = body
                .get("server_groups")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    Failure::Invalid(format!("{} answered without server_groups", resp.url))
                })?;
            if groups.is_empty() {
                return Ok(ids);
            }
            offset += groups.len();
            for g in groups {
                if g.get("name").and_then(Value::as_str) != Some(name) {
                    continue;
                }
                let project = g.get("project_id").and_then(Value::as_str);
                let wanted = ctx.project_id.as_deref().filter(|p| !p.is_empty());
                if let (true, Some(p), Some(w)) = (ctx.is_admin, project, wanted) {
                    if p != w {
                        continue;
                    }
                }
                if let Some(id) = str_of(g, "id") {
                    ids.push(id);
                }
            }
        }
        Err(Failure::Invalid(format!("more than {MAX_PAGES} pages listing server groups")).into())
    }

    async fn ensure_server_group_call(
        &self,
        ctx: &RequestContext,
        name: &str,
        policy: &str,
    ) -> Result<String, CallError> {
        let conn = self.connect(ctx, Service::Nova).await?;
        let mut found = self.server_groups_named(&conn, ctx, name).await?;
        match found.len() {
            0 => {}
            1 => return Ok(found.remove(0)),
            _ => {
                return Err(MagnumError::with_message(
                    ErrorKind::Conflict,
                    format!("too many server groups with name {name} were found"),
                )
                .into())
            }
        }
        let url = join(&conn.base, &["os-server-groups"]);
        let body = json!({"server_group": {"name": name, "policy": policy}});
        let resp = self
            .send(&conn, Method::POST, &url, NOVA_HEADERS, Some(&body))
            .await?;
        if !resp.is_success() {
            return Err(Failure::Http(Box::new(resp)).into());
        }
        let doc = resp.json();
        doc.pointer("/server_group/id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                Failure::Invalid(format!("{} answered without a server group id", resp.url)).into()
            })
    }

    async fn delete_server_group_call(
        &self,
        ctx: &RequestContext,
        name: &str,
    ) -> Result<(), CallError> {
        let conn = self.connect(ctx, Service::Nova).await?;
        for id in self.server_groups_named(&conn, ctx, name).await? {
            let url = join(&conn.base, &["os-server-groups", &id]);
            let resp = self
                .send(&conn, Method::DELETE, &url, NOVA_HEADERS, None)
                .await?;
            if !resp.is_success() && resp.status != 404 {
                return Err(Failure::Http(Box::new(resp)).into());
            }
        }
        Ok(())
    }

    /// Magnum's `delete_loadbalancers` (see [`DriverCloud::delete_cluster_load_balancers`]).
    async fn delete_load_balancers_call(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        timeout: Duration,
    ) -> Result<(), CallError> {
        // no load-balancer service: the cluster can have none
        let Some(lb_conn) = self.connect_if_listed(ctx, Service::Octavia).await? else {
            return Ok(());
        };
        let list_url = join(&lb_conn.base, &["lbaas", "loadbalancers"]);
        let lbs = self
            .list(&lb_conn, list_url.clone(), "loadbalancers")
            .await?;
        let mut candidates = Vec::new();
        let mut neutron = None;
        for lb in lbs.iter().filter(|lb| {
            lb_of_cluster(
                lb.get("description").and_then(Value::as_str).unwrap_or(""),
                cluster_uuid,
            )
        }) {
            let (Some(id), status) = (str_of(lb, "id"), str_of(lb, "provisioning_status")) else {
                continue;
            };
            if matches!(status.as_deref(), Some("PENDING_DELETE" | "DELETED")) {
                continue;
            }
            tracing::info!(load_balancer = %id, cluster = cluster_uuid, "deleting the cluster's load balancer");
            let mut url = join(&lb_conn.base, &["lbaas", "loadbalancers", &id]);
            url.query_pairs_mut().append_pair("cascade", "true");
            let resp = self.send(&lb_conn, Method::DELETE, &url, &[], None).await?;
            if !resp.is_success() && resp.status != 404 {
                return Err(Failure::Http(Box::new(resp)).into());
            }
            candidates.push(id);
            // its floating IP, when the cloud controller manager made it
            let Some(port) = str_of(lb, "vip_port_id").filter(|p| !p.is_empty()) else {
                continue;
            };
            if neutron.is_none() {
                neutron = Some(self.connect(ctx, Service::Neutron).await?);
            }
            let Some(net) = neutron.as_ref() else {
                continue;
            };
            let mut url = join(&net.base, &["floatingips"]);
            url.query_pairs_mut().append_pair("port_id", &port);
            let fips = self.list(net, url, "floatingips").await?;
            if let Some(fip) = fips.first() {
                let desc = fip.get("description").and_then(Value::as_str).unwrap_or("");
                if let (true, Some(fid)) = (fip_of_cluster(desc, cluster_uuid), str_of(fip, "id")) {
                    tracing::info!(floating_ip = %fid, cluster = cluster_uuid, "deleting the load balancer's floating IP");
                    let url = join(&net.base, &["floatingips", &fid]);
                    let resp = self.send(net, Method::DELETE, &url, &[], None).await?;
                    if !resp.is_success() && resp.status != 404 {
                        return Err(Failure::Http(Box::new(resp)).into());
                    }
                }
            }
        }
        if candidates.is_empty() {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let lbs = self
                .list(&lb_conn, list_url.clone(), "loadbalancers")
                .await?;
            let left: Vec<&String> = candidates
                .iter()
                .filter(|id| {
                    lbs.iter().any(|lb| {
                        str_of(lb, "id").as_deref() == Some(id.as_str())
                            && str_of(lb, "provisioning_status").as_deref() != Some("DELETED")
                    })
                })
                .collect();
            if left.is_empty() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(MagnumError::internal(format!(
                    "Timeout waiting for the load balancers {left:?} to be deleted."
                ))
                .into());
            }
            tokio::time::sleep(LB_POLL.min(deadline - tokio::time::Instant::now())).await;
        }
    }

    async fn volume_types_call(
        &self,
        ctx: &RequestContext,
    ) -> Result<Option<Vec<String>>, CallError> {
        // no block-storage endpoint in the catalogue: Cinder CSI is off, as
        // magnum-cluster-api's `is_service_enabled("volumev3" | "block-storage")`
        let Some(conn) = self.connect_if_listed(ctx, Service::Cinder).await? else {
            return Ok(None);
        };
        let url = join(&conn.base, &["types"]);
        let types = self.list(&conn, url, "volume_types").await?;
        Ok(Some(
            types.iter().filter_map(|t| str_of(t, "name")).collect(),
        ))
    }

    async fn default_volume_type_call(&self, ctx: &RequestContext) -> Result<String, CallError> {
        let conn = self.connect(ctx, Service::Cinder).await?;
        let url = join(&conn.base, &["types", "default"]);
        let resp = self
            .send(&conn, Method::GET, &url, CINDER_DEFAULT_TYPE_HEADERS, None)
            .await?;
        if resp.is_success() {
            if let Some(name) = resp
                .json()
                .pointer("/volume_type/name")
                .and_then(Value::as_str)
            {
                return Ok(name.to_string());
            }
        } else if resp.status != 404 && resp.status != 406 {
            return Err(Failure::Http(Box::new(resp)).into());
        }
        // No default type (or a Cinder before 3.62): the first type, as magnum-cluster-api.
        let url = join(&conn.base, &["types"]);
        let types = self.list(&conn, url, "volume_types").await?;
        types
            .first()
            .and_then(|t| str_of(t, "name"))
            .ok_or_else(|| {
                MagnumError::internal("Cinder has no volume type (no default, none listed)").into()
            })
    }
}

#[async_trait]
impl DriverCloud for KeystoneCloud {
    async fn flavor(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Flavor> {
        let flavors = self
            .list_flavors_call(ctx)
            .await
            .map_err(CallError::into_driver)?;
        Ok(pick_flavor(flavors, name_or_id)?)
    }

    async fn image(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Image> {
        self.find_image_call(ctx, name_or_id)
            .await
            .map_err(CallError::into_driver)
    }

    async fn network(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
        external: bool,
    ) -> DriverResult<NamedResource> {
        let networks = if external {
            self.list_external_networks_call(ctx).await
        } else {
            self.list_networks_call(ctx).await
        }
        .map_err(CallError::into_driver)?;
        Ok(one_network(networks, name_or_id, external)?)
    }

    async fn subnet(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<NamedResource> {
        let subnets = self
            .list_subnets_call(ctx)
            .await
            .map_err(CallError::into_driver)?;
        Ok(one_subnet(subnets, name_or_id)?)
    }

    async fn default_volume_type(&self, ctx: &RequestContext) -> DriverResult<String> {
        self.default_volume_type_call(ctx)
            .await
            .map_err(CallError::into_driver)
    }

    async fn volume_types(&self, ctx: &RequestContext) -> DriverResult<Option<Vec<String>>> {
        self.volume_types_call(ctx)
            .await
            .map_err(CallError::into_driver)
    }

    async fn delete_cluster_load_balancers(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        timeout: Duration,
    ) -> DriverResult<()> {
        self.delete_load_balancers_call(ctx, cluster_uuid, timeout)
            .await
            .map_err(|e| pre_deletion_failed(cluster_uuid, e.into_driver()))
    }

    async fn ensure_server_group(
        &self,
        ctx: &RequestContext,
        name: &str,
        policy: &str,
    ) -> DriverResult<String> {
        self.ensure_server_group_call(ctx, name, policy)
            .await
            .map_err(CallError::into_driver)
    }

    async fn delete_server_group(&self, ctx: &RequestContext, name: &str) -> DriverResult<()> {
        self.delete_server_group_call(ctx, name)
            .await
            .map_err(CallError::into_driver)
    }
}

/// The simulated cloud's answers: its [`Cloud`] look-ups (any image, the built-in flavors,
/// any fixed network or subnet, `public` as the only external network), `__DEFAULT__` as
/// Cinder's default volume type, and server groups that always exist (a stable id per name)
/// and always delete.
#[async_trait]
impl DriverCloud for SimulatedCloud {
    async fn flavor(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Flavor> {
        Ok(pick_flavor(self.list_flavors(ctx).await?, name_or_id)?)
    }

    async fn image(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Image> {
        Ok(self.find_image(ctx, name_or_id).await?)
    }

    async fn network(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
        external: bool,
    ) -> DriverResult<NamedResource> {
        let networks = if external {
            self.list_external_networks(ctx).await?
        } else {
            self.networks_named(ctx, name_or_id).await?
        };
        Ok(one_network(networks, name_or_id, external)?)
    }

    async fn subnet(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<NamedResource> {
        Ok(one_subnet(
            self.subnets_named(ctx, name_or_id).await?,
            name_or_id,
        )?)
    }

    async fn default_volume_type(&self, _ctx: &RequestContext) -> DriverResult<String> {
        Ok(SimulatedCloud::DEFAULT_VOLUME_TYPE.to_string())
    }

    async fn volume_types(&self, _ctx: &RequestContext) -> DriverResult<Option<Vec<String>>> {
        Ok(Some(vec![SimulatedCloud::DEFAULT_VOLUME_TYPE.to_string()]))
    }

    async fn delete_cluster_load_balancers(
        &self,
        _ctx: &RequestContext,
        _cluster_uuid: &str,
        _timeout: Duration,
    ) -> DriverResult<()> {
        // the simulated cloud has no Octavia
        Ok(())
    }

    async fn ensure_server_group(
        &self,
        ctx: &RequestContext,
        name: &str,
        _policy: &str,
    ) -> DriverResult<String> {
        let project = ctx.project_id.as_deref().unwrap_or_default();
        Ok(SimulatedCloud::server_group_id(project, name))
    }

    async fn delete_server_group(&self, _ctx: &RequestContext, _name: &str) -> DriverResult<()> {
        Ok(())
    }
}

/// Magnum's `PreDeletionFailed` around a failure, keeping whether it was transient.
fn pre_deletion_failed(
    cluster_uuid: &str,
    e: openkeel_drivers::DriverError,
) -> openkeel_drivers::DriverError {
    let err = MagnumError::new(
        ErrorKind::PreDeletionFailed,
        &[("cluster_uuid", &cluster_uuid), ("msg", &e.message())],
    );
    if e.is_transient() {
        openkeel_drivers::DriverError::transient(err.message().to_string())
    } else {
        openkeel_drivers::DriverError::permanent(err)
    }
}

/// Where application credentials are used: `[capi_client] endpoint_type` (the identity
/// endpoint's interface, `URL` dropped as magnum-cluster-api does) and `[cinder_client]
/// region_name` (the region written into `clouds.yaml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplicationCredentialSettings {
    pub endpoint_type: String,
    pub region_name: Option<String>,
}

/// [`ApplicationCredentials`] over Keystone.
///
/// * `create`: with the requesting user's token (the context's `auth_token`, its validated
///   body in `auth_token_info` when the API had one), owner `cluster.user_id` (else the
///   context's user), name = the cluster's uuid (`create_named`: the name given, a
///   rotation's `<uuid>-<suffix>`), description `Magnum cluster (<uuid>)`, no roles, restrictions or expiry, so it carries the token's roles. Before creating,
///   `[cinder_client] region_name` is checked as Magnum's `cinder_region_name()` checks it
///   (unset, or not a Keystone region: 400 `InvalidParameterValue` with Magnum's text);
///   magnum-cluster-api only finds out after the credential exists. A credential of that
///   name left by an earlier failed create (Keystone's 409) is deleted and created again:
///   its secret cannot be read back.
/// * `delete`: with the service credentials (`[keystone_auth]`), every credential of the user
///   named the cluster's uuid or `<uuid>-…` (rotations); not found is
///   success, and so is Forbidden (magnum-cluster-api's rule: a policy that forbids the
///   look-up would otherwise block the cluster's deletion forever), logged as a warning.
/// * `delete_id`: with the service credentials, one credential by id; not found is success,
///   Forbidden is an error (a rotation reports that the old credential is still there).
pub struct KeystoneApplicationCredentials {
    cloud: Arc<KeystoneCloud>,
    settings: ApplicationCredentialSettings,
}

impl std::fmt::Debug for KeystoneApplicationCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeystoneApplicationCredentials")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl KeystoneApplicationCredentials {
    pub fn new(cloud: Arc<KeystoneCloud>, settings: ApplicationCredentialSettings) -> Self {
        KeystoneApplicationCredentials { cloud, settings }
    }

    /// Magnum's `KeystoneClientV3.get_validate_region_name`.
    async fn validated_region(&self, conn: &crate::keystone::Conn) -> Result<String, CallError> {
        let Some(region) = self.settings.region_name.clone().filter(|r| !r.is_empty()) else {
            return Err(MagnumError::invalid_parameter(
                "region_name needs to be configured in magnum.conf",
            )
            .into());
        };
        let url = join(&conn.base, &["regions"]);
        let regions: Vec<String> = match self.cloud.list(conn, url, "regions").await {
            Ok(items) => items.iter().filter_map(|r| str_of(r, "id")).collect(),
            Err(f) if f.status() == Some(404) => Vec::new(),
            Err(f) => {
                let transient = f.is_transient();
                tracing::warn!(error = %f.into_error().message(), "Failed to list regions");
                let e = MagnumError::new(ErrorKind::RegionsListFailed, &[]);
                return Err(if transient {
                    CallError::Build {
                        svc: Service::Identity,
                        err: SessionError::Unavailable(e.message().to_string()),
                    }
                } else {
                    e.into()
                });
            }
        };
        if regions.contains(&region) {
            Ok(region)
        } else {
            let mut shown = regions;
            shown.push("unspecified".to_string());
            Err(MagnumError::invalid_parameter(format!(
                "region_name {region} is invalid, expecting a region_name in {}.",
                shown.join("/")
            ))
            .into())
        }
    }

    async fn create_call(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        name: Option<&str>,
    ) -> Result<ApplicationCredential, CallError> {
        let uuid = cluster
            .uuid
            .as_deref()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| MagnumError::internal("the cluster has no uuid"))?;
        let name = name.unwrap_or(uuid);
        let user = cluster
            .user_id
            .as_deref()
            .or(ctx.user_id.as_deref())
            .filter(|u| !u.is_empty())
            .ok_or_else(|| MagnumError::internal("the cluster has no user_id"))?;
        let conn = self.cloud.connect(ctx, Service::Identity).await?;
        let region_name = self.validated_region(&conn).await?;
        let interface = self.settings.endpoint_type.replace("URL", "");
        let auth_url = self
            .cloud
            .catalog_url(ctx, "identity", &interface, None)
            .await?;
        let url = join(&conn.base, &["users", user, "application_credentials"]);
        let body = json!({"application_credential": {
            "name": name,
            "description": format!("Magnum cluster ({uuid})"),
        }});
        let mut resp = self
            .cloud
            .send(&conn, Method::POST, &url, &[], Some(&body))
            .await?;
        if resp.status == 409 {
            tracing::warn!(
                cluster = uuid,
                user,
                name,
                "an application credential of this name exists (an earlier create failed): replacing it"
            );
            self.delete_named(&conn, user, name, false).await?;
            resp = self
                .cloud
                .send(&conn, Method::POST, &url, &[], Some(&body))
                .await?;
        }
        if !resp.is_success() {
            return Err(Failure::Http(Box::new(resp)).into());
        }
        let doc = resp.json();
        let cred = doc
            .get("application_credential")
            .cloned()
            .unwrap_or_default();
        match (str_of(&cred, "id"), str_of(&cred, "secret")) {
            (Some(id), Some(secret)) => {
                tracing::info!(cluster = uuid, user, name, credential = %id, "application credential created");
                Ok(ApplicationCredential {
                    id,
                    secret,
                    auth_url,
                    region_name: Some(region_name),
                })
            }
            _ => Err(Failure::Invalid(format!(
                "{} answered without an application credential id and secret",
                resp.url
            ))
            .into()),
        }
    }

    /// Delete every credential of `user` named `name` (with `rotations`: also those named
    /// `<name>-…`, found by listing all of the user's, Keystone has no prefix filter); 404
    /// and 403 are success.
    async fn delete_named(
        &self,
        conn: &crate::keystone::Conn,
        user: &str,
        name: &str,
        rotations: bool,
    ) -> Result<(), CallError> {
        let mut url = join(&conn.base, &["users", user, "application_credentials"]);
        if !rotations {
            url.query_pairs_mut().append_pair("name", name);
        }
        let resp = self.cloud.get(conn, &url).await?;
        match resp.status {
            200..=299 => {}
            404 => return Ok(()),
            403 => {
                tracing::warn!(user, name, "Keystone forbids listing the user's application credentials: the credential is left in place");
                return Ok(());
            }
            _ => return Err(Failure::Http(Box::new(resp)).into()),
        }
        let doc = resp.json();
        let ids: Vec<String> = doc
            .get("application_credentials")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|c| {
                        let n = c.get("name").and_then(Value::as_str).unwrap_or_default();
                        if rotations {
                            is_cluster_credential(n, name)
                        } else {
                            n == name
                        }
                    })
                    .filter_map(|c| str_of(c, "id"))
                    .collect()
            })
            .unwrap_or_default();
        for id in ids {
            let url = join(&conn.base, &["users", user, "application_credentials", &id]);
            let resp = self
                .cloud
                .send(conn, Method::DELETE, &url, &[], None)
                .await?;
            match resp.status {
                200..=299 | 404 => {
                    tracing::info!(user, name, credential = %id, "application credential deleted")
                }
                403 => {
                    tracing::warn!(user, name, credential = %id, "Keystone forbids deleting the application credential: it is left in place")
                }
                _ => return Err(Failure::Http(Box::new(resp)).into()),
            }
        }
        Ok(())
    }
}

#[async_trait]
impl ApplicationCredentials for KeystoneApplicationCredentials {
    async fn create(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> DriverResult<ApplicationCredential> {
        self.create_call(ctx, cluster, None)
            .await
            .map_err(CallError::into_driver)
    }

    async fn create_named(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        name: &str,
    ) -> DriverResult<ApplicationCredential> {
        self.create_call(ctx, cluster, Some(name))
            .await
            .map_err(CallError::into_driver)
    }

    async fn delete(&self, user_id: &str, name: &str) -> DriverResult<()> {
        if user_id.is_empty() || name.is_empty() {
            return Err(DriverError::permanent_message(
                "deleting an application credential needs its user and name",
            ));
        }
        // The service's own credentials: an admin context without a token.
        let admin = RequestContext {
            is_admin: true,
            ..RequestContext::default()
        };
        let conn = self
            .cloud
            .connect(&admin, Service::Identity)
            .await
            .map_err(CallError::into_driver)?;
        self.delete_named(&conn, user_id, name, true)
            .await
            .map_err(CallError::into_driver)
    }

    async fn delete_id(&self, user_id: &str, id: &str) -> DriverResult<()> {
        if user_id.is_empty() || id.is_empty() {
            return Err(DriverError::permanent_message(
                "deleting an application credential needs its user and id",
            ));
        }
        let admin = RequestContext {
            is_admin: true,
            ..RequestContext::default()
        };
        let result = async {
            let conn = self.cloud.connect(&admin, Service::Identity).await?;
            let url = join(&conn.base, &["users", user_id, "application_credentials", id]);
            let resp = self
                .cloud
                .send(&conn, Method::DELETE, &url, &[], None)
                .await?;
            match resp.status {
                200..=299 | 404 => {
                    tracing::info!(user = user_id, credential = %id, "application credential deleted");
                    Ok(())
                }
                _ => Err(CallError::from(Failure::Http(Box::new(resp)))),
            }
        }
        .await;
        result.map_err(CallError::into_driver)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn named(id: &str, name: &str) -> NamedResource {
        NamedResource {
            id: id.into(),
            name: name.into(),
        }
    }

    #[test]
    fn picks_as_magnum() {
        let nets = vec![named("1", "a"), named("2", "b"), named("3", "b")];
        assert_eq!(one_network(nets.clone(), "a", false).unwrap().id, "1");
        assert_eq!(one_network(nets.clone(), "2", false).unwrap().name, "b");
        let e = one_network(nets.clone(), "b", false).unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (
                409,
                "Multiple networks exist with same name 'b'. Please use the network ID instead."
            )
        );
        let e = one_network(nets.clone(), "x", true).unwrap_err();
        assert_eq!(e.message(), "Unable to find external network x.");
        let e = one_network(nets, "x", false).unwrap_err();
        assert_eq!(e.message(), "Unable to find fixed network x.");
        let e = one_subnet(vec![], "s").unwrap_err();
        assert_eq!(e.message(), "Unable to find fixed subnet s.");
        let e = pick_flavor(vec![], "m1.huge").unwrap_err();
        assert_eq!(e.message(), "Unable to find flavor m1.huge.");
    }

    #[tokio::test]
    async fn the_simulated_cloud_answers() {
        let c = SimulatedCloud::new();
        let ctx = RequestContext {
            project_id: Some("p1".into()),
            ..RequestContext::default()
        };
        assert_eq!(c.flavor(&ctx, "m1.small").await.unwrap().disk, 20);
        assert_eq!(c.flavor(&ctx, "3").await.unwrap().name, "m1.medium");
        let e = c.flavor(&ctx, "m1.huge").await.unwrap_err();
        assert!(!e.is_transient());
        assert_eq!(e.message(), "Unable to find flavor m1.huge.");
        let i = DriverCloud::image(&c, &ctx, "ubuntu-22.04").await.unwrap();
        assert_eq!(i.os_distro.as_deref(), Some("ubuntu"));
        let n = c.network(&ctx, "public", true).await.unwrap();
        assert_eq!(n.id, SimulatedCloud::PUBLIC_NETWORK.0);
        let e = c.network(&ctx, "private", true).await.unwrap_err();
        assert_eq!(e.message(), "Unable to find external network private.");
        assert_eq!(
            c.network(&ctx, "private", false).await.unwrap().id,
            SimulatedCloud::PRIVATE_NETWORK.0
        );
        assert!(!c.network(&ctx, "mine", false).await.unwrap().id.is_empty());
        assert_eq!(
            c.subnet(&ctx, "private-subnet").await.unwrap().id,
            SimulatedCloud::SUBNETS[0].0
        );
        assert_eq!(c.default_volume_type(&ctx).await.unwrap(), "__DEFAULT__");
        let a = c
            .ensure_server_group(&ctx, "kube-abc", "soft-anti-affinity")
            .await
            .unwrap();
        let b = c
            .ensure_server_group(&ctx, "kube-abc", "soft-anti-affinity")
            .await
            .unwrap();
        assert_eq!(a, b, "the same group each time");
        assert_ne!(
            a,
            c.ensure_server_group(&ctx, "kube-abc-w", "anti-affinity")
                .await
                .unwrap()
        );
        c.delete_server_group(&ctx, "kube-abc").await.unwrap();
    }
}
