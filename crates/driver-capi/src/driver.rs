//! The Cluster API driver: magnum-cluster-api's five entry points over one inner driver that
//! writes and reads the management cluster's objects (magnum-cluster-api's
//! `magnum_cluster_api/driver.py` and `resources.py`).
//!
//! * [`entry_points`] gives `k8s_cluster_api_{ubuntu,ubuntu_focal,debian,flatcar,rockylinux}`
//!   with their `(server_type, os, coe)` tuples, sharing one [`CapiDriver`].
//! * The management cluster's client is built on first use from `[capi_client] kubeconfig` /
//!   `kubeconfig_context`, so a conductor without a reachable management cluster still starts;
//!   an unusable kubeconfig is then a permanent error of each operation (and is tried again on
//!   the next one).
//! * `create_cluster` writes magnum-cluster-api's objects in its order and converges when run
//!   again: the `stack_id` is kept once chosen, every write is a server-side apply, and the
//!   application credential of an existing `<stack_id>-cloud-config` is reused.
//! * `update_cluster_status` fetches only what this tick needs (see [`crate::status`]) and
//!   derives the report with pure functions; the delete clean-up runs once the `Cluster` is
//!   gone.
//! * `delete_cluster` deletes the `Cluster` and the two ClusterResourceSets with their
//!   Secrets; anything already gone is fine.
//!
//! * resize, `PATCH node_count`, nodegroups, upgrade and the health monitor are in
//!   [`ops`](self::ops).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use openkeel_core::cloud::Flavor as CloudFlavor;
use openkeel_core::config::Config;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup};
use openkeel_drivers::deps::{ApplicationCredential, DriverCloud};
use openkeel_drivers::{
    Driver, DriverContext, DriverDeps, DriverError, DriverResult, HealthReport, ProvidedType,
    ScaleManager, StatusChange, StatusReport, Writes,
};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::addons::{self, AddonInputs, HelmRelease};
use crate::cluster::{self, Flavor, Image, Lookups, NodeGroupLookups, ResolvedFields};
use crate::clusterclass::{self, ClusterClassSet};
use crate::helm::HelmTemplate;
use crate::labels::Labels;
use crate::mgmt::{self, ClientSource, Mgmt};
use crate::secrets::{self, CertPair, CloudCredentials, ClusterCas};
use crate::status::{self, Action, Observed, CLUSTER_NAME_LABEL, CLUSTER_UUID_LABEL};
use crate::validate;

mod ops;
mod rotate;

/// magnum-cluster-api's entry points and the `os` of their `(vm, <os>, kubernetes)` tuple.
pub const ENTRY_POINTS: [(&str, &str); 5] = [
    ("k8s_cluster_api_ubuntu", "ubuntu"),
    ("k8s_cluster_api_ubuntu_focal", "ubuntu-focal"),
    ("k8s_cluster_api_debian", "debian"),
    ("k8s_cluster_api_flatcar", "flatcar"),
    ("k8s_cluster_api_rockylinux", "rockylinux"),
];

/// How many `kube-xxxxx` names are tried before giving up (each costs a GET).
const STACK_ID_ATTEMPTS: usize = 10;

/// The Nova server-group policy unless the `server_group_policies` label says otherwise.
const DEFAULT_SERVER_GROUP_POLICY: &str = "soft-anti-affinity";

/// Where the trusted roots are looked for when `[capi_client] ca_file` is unset
/// (magnum-cluster-api writes `certifi`'s bundle into `<stack_id>-cloud-config`).
const SYSTEM_CA_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// Renders a Helm chart of an addon (magnum-cluster-api runs `helm template`).
#[async_trait]
pub trait ChartRenderer: Send + Sync {
    async fn render(&self, release: &HelmRelease) -> DriverResult<String>;
}

/// The options the driver reads (magnum-cluster-api's `magnum_cluster_api/conf.py`), taken from the configuration once.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub client: ClientSource,
    /// `magnum-system` (tests use a namespace of their own).
    pub namespace: String,
    /// The bound on each request to the management cluster.
    pub request_timeout: Duration,
    /// How long a CAPI condition with severity `Error` must last to fail the operation.
    pub failure_grace: Duration,
    /// The version in the ClusterClass's name.
    pub cluster_class_version: String,
    /// `[capi_client] endpoint_type`, `insecure`, `ca_file`.
    pub endpoint_type: String,
    pub insecure: bool,
    pub ca_file: Option<String>,
    /// `[cinder_client] region_name`.
    pub region_name: Option<String>,
    /// `[drivers] verify_ca`, `openstack_ca_file`.
    pub verify_ca: bool,
    pub openstack_ca_file: String,
    /// `[kubernetes] keystone_auth_default_policy`.
    pub keystone_auth_default_policy: String,
    /// `[cinder] default_boot_volume_type`, `default_boot_volume_size`.
    pub default_boot_volume_type: String,
    pub default_boot_volume_size: i64,
    /// `[capi_client] helm_binary`.
    pub helm_binary: String,
    /// `[cluster] pre_delete_lb_timeout`: how long a delete waits for the cluster's Octavia
    /// load balancers to go.
    pub pre_delete_lb_timeout: Duration,
    /// `[auto_scaling] image_repository`: where the cluster autoscaler's image comes from.
    pub autoscaler_repository: String,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Settings {
            client: ClientSource {
                kubeconfig: config.capi_client.kubeconfig.clone(),
                context: config.capi_client.kubeconfig_context.clone(),
            },
            namespace: crate::NAMESPACE.to_string(),
            request_timeout: mgmt::DEFAULT_REQUEST_TIMEOUT,
            failure_grace: status::DEFAULT_FAILURE_GRACE,
            cluster_class_version: clusterclass::CLUSTER_CLASS_VERSION.to_string(),
            endpoint_type: config.capi_client.endpoint_type.clone(),
            insecure: config.capi_client.insecure,
            ca_file: config.capi_client.ca_file.clone(),
            region_name: config.cinder_client.region_name.clone(),
            verify_ca: config.drivers.verify_ca,
            openstack_ca_file: config.drivers.openstack_ca_file.clone(),
            keystone_auth_default_policy: config.kubernetes.keystone_auth_default_policy.clone(),
            default_boot_volume_type: config.cinder.default_boot_volume_type.clone(),
            default_boot_volume_size: config.cinder.default_boot_volume_size,
            helm_binary: config.capi_client.helm_binary.clone(),
            pre_delete_lb_timeout: Duration::from_secs(
                config.cluster.pre_delete_lb_timeout.max(0).unsigned_abs(),
            ),
            autoscaler_repository: config.auto_scaling.image_repository.clone(),
        }
    }
}

/// The driver behind the five entry points.
pub struct CapiDriver {
    settings: Settings,
    deps: DriverDeps,
    renderer: Arc<dyn ChartRenderer>,
    mgmt: OnceCell<Mgmt>,
}

impl std::fmt::Debug for CapiDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapiDriver")
            .field("settings", &self.settings)
            .field("deps", &self.deps)
            .finish()
    }
}

/// Entry-point names with their drivers, in registration order.
pub type EntryPoints = Vec<(String, Arc<dyn Driver>)>;

/// The entry points of magnum-cluster-api, named and typed as it registers them, sharing one
/// driver built from `config` and `deps`.
pub fn entry_points(config: &Config, deps: DriverDeps) -> Result<EntryPoints, MagnumError> {
    let settings = Settings::from_config(config);
    let helm = HelmTemplate::new(&settings.helm_binary, HELM_TIMEOUT);
    let inner = Arc::new(CapiDriver::new(settings, deps, Arc::new(helm)));
    Ok(entry_points_for(inner))
}

/// The bound on one `helm template` (Cilium's chart, the largest, renders in about 0.5 s).
pub const HELM_TIMEOUT: Duration = Duration::from_secs(60);

/// The five entry points over one driver.
pub fn entry_points_for(inner: Arc<CapiDriver>) -> EntryPoints {
    ENTRY_POINTS
        .iter()
        .map(|(name, os)| {
            let d: Arc<dyn Driver> = Arc::new(EntryPoint {
                name,
                os,
                inner: inner.clone(),
            });
            (name.to_string(), d)
        })
        .collect()
}

fn missing(what: &str) -> DriverError {
    DriverError::permanent_message(format!(
        "The Cluster API driver has no {what}: the conductor was built without it."
    ))
}

fn to_pair(p: &openkeel_drivers::deps::KeyPairPem) -> CertPair {
    CertPair {
        cert_pem: p.certificate.clone(),
        key_pem: p.private_key.clone(),
    }
}

fn to_flavor(f: CloudFlavor) -> Flavor {
    Flavor {
        id: f.id,
        name: f.name,
        ram: f.ram,
        vcpus: f.vcpus,
        disk: f.disk,
    }
}

/// The application credential written in an existing `<stack_id>-cloud-config`.
fn credential_of(secret: &Value) -> Option<ApplicationCredential> {
    let yaml = mgmt::secret_text(secret, "clouds.yaml")?;
    let doc: Value = serde_yaml::from_str(&yaml).ok()?;
    let cloud = &doc["clouds"]["default"];
    let auth = &cloud["auth"];
    Some(ApplicationCredential {
        id: auth["application_credential_id"].as_str()?.to_string(),
        secret: auth["application_credential_secret"].as_str()?.to_string(),
        auth_url: auth["auth_url"].as_str()?.to_string(),
        region_name: cloud["region_name"].as_str().map(str::to_string),
    })
}

async fn read_optional(path: &str) -> DriverResult<String> {
    if path.is_empty() {
        return Ok(String::new());
    }
    // small configuration files, read once per create
    std::fs::read_to_string(path)
        .map_err(|e| DriverError::permanent_message(format!("Cannot read {path}: {e}")))
}

impl CapiDriver {
    /// A driver that connects to the management cluster on first use and renders the addon
    /// charts with `renderer` ([`HelmTemplate`] in production).
    pub fn new(settings: Settings, deps: DriverDeps, renderer: Arc<dyn ChartRenderer>) -> Self {
        CapiDriver {
            settings,
            deps,
            renderer,
            mgmt: OnceCell::new(),
        }
    }

    /// A driver over an existing client (tests).
    pub fn with_mgmt(
        settings: Settings,
        deps: DriverDeps,
        renderer: Arc<dyn ChartRenderer>,
        mgmt: Mgmt,
    ) -> Self {
        CapiDriver {
            settings,
            deps,
            renderer,
            mgmt: OnceCell::new_with(Some(mgmt)),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The management cluster's client, built on first use.
    pub async fn mgmt(&self) -> DriverResult<&Mgmt> {
        self.mgmt
            .get_or_try_init(|| async {
                let client =
                    mgmt::build_client(&self.settings.client, self.settings.request_timeout)
                        .await?;
                Ok(Mgmt::new(
                    client,
                    &self.settings.namespace,
                    self.settings.request_timeout,
                ))
            })
            .await
    }

    fn cloud(&self) -> DriverResult<&Arc<dyn DriverCloud>> {
        self.deps
            .cloud
            .as_ref()
            .ok_or_else(|| missing("OpenStack cloud access"))
    }

    /// A free `kube-xxxxx` name: candidates are tried until no `Cluster` has it.
    async fn free_stack_id(&self, m: &Mgmt) -> DriverResult<String> {
        for _ in 0..STACK_ID_ATTEMPTS {
            let candidate = cluster::generate_stack_id();
            if m.get(mgmt::CLUSTER, &candidate).await?.is_none() {
                return Ok(candidate);
            }
        }
        Err(DriverError::transient(format!(
            "No free Cluster API cluster name after {STACK_ID_ATTEMPTS} attempts."
        )))
    }

    /// `create_cluster` (magnum-cluster-api's `magnum_cluster_api/driver.py`).
    pub async fn create(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        let m = self.mgmt().await?;
        let uuid = cluster.uuid.clone().unwrap_or_default();
        // 1. the stack_id, kept once chosen (a retried create reuses it)
        let stack_id = match cluster.stack_id.clone().filter(|s| !s.is_empty()) {
            Some(s) => s,
            None => {
                let s = self.free_stack_id(m).await?;
                cluster.stack_id = Some(s.clone());
                s
            }
        };
        tracing::info!(cluster = %uuid, stack_id = %stack_id, "creating the Cluster API cluster");
        // 2. the namespace and the ClusterClass set, unless the class is there (it is
        // written last, its content is fixed by its versioned name, and every apply of it
        // makes CAPI's webhook check every Cluster of the class: magnum-cluster-api's
        // apply-on-every-create slows down as clusters accumulate)
        let class = clusterclass::cluster_class_name_for(&self.settings.cluster_class_version);
        if m.get(mgmt::CLUSTER_CLASS, &class).await?.is_none() {
            for o in ClusterClassSet::for_version_in(
                &self.settings.cluster_class_version,
                &self.settings.namespace,
            )
            .into_objects()
            {
                m.apply(&o).await?;
            }
        }
        // 3. the two ClusterResourceSets
        for crs in addons::cluster_resource_sets(&uuid, &stack_id) {
            m.apply(&crs).await?;
        }
        // 4. the application credential (reused from an earlier attempt's Secret)
        let cloud_config_name = secrets::cloud_config_secret_name(&stack_id);
        let credential = match m
            .get(mgmt::SECRET, &cloud_config_name)
            .await?
            .as_ref()
            .and_then(credential_of)
        {
            Some(c) => c,
            None => {
                self.deps
                    .application_credentials
                    .as_ref()
                    .ok_or_else(|| missing("Keystone application credentials"))?
                    .create(ctx.request, cluster)
                    .await?
            }
        };
        // 5. <stack_id>-cloud-config
        self.write_cloud_config(m, cluster, &stack_id, &credential)
            .await?;
        // 6. the CA Secrets
        let cas = self
            .deps
            .certificates
            .as_ref()
            .ok_or_else(|| missing("certificate manager"))?
            .cluster_cas(ctx.request, cluster)
            .await?;
        let cas = ClusterCas {
            kubernetes: to_pair(&cas.kubernetes),
            etcd: to_pair(&cas.etcd),
            front_proxy: to_pair(&cas.front_proxy),
            service_account: to_pair(&cas.service_account),
        };
        for s in secrets::ca_secrets(&stack_id, &cas) {
            m.apply(&s).await?;
        }
        // 7. the addon Secrets
        let default_volume_type = self
            .write_addons(m, ctx, cluster, ctx.template, &credential)
            .await?;
        // 8. the Nova server groups, the look-ups and the Cluster
        let lookups = self
            .cluster_lookups(m, ctx, cluster, &stack_id, &default_volume_type)
            .await?;
        let object = cluster::cluster_object(cluster, ctx.template, ctx.nodegroups, &lookups)?;
        m.apply(&object).await?;
        tracing::info!(cluster = %uuid, stack_id = %stack_id, requests = m.request_count(), "Cluster API cluster written");
        Ok(Writes::none())
    }

    /// `<stack_id>-cloud-config`: CAPO's credentials (`clouds.yaml` and the CA bundle).
    async fn write_cloud_config(
        &self,
        m: &Mgmt,
        cluster: &Cluster,
        stack_id: &str,
        credential: &ApplicationCredential,
    ) -> DriverResult<()> {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let creds = CloudCredentials {
            application_credential_id: credential.id.clone(),
            application_credential_secret: credential.secret.clone(),
            auth_url: credential.auth_url.clone(),
            region_name: self.region_of(credential),
            endpoint_type: self.settings.endpoint_type.clone(),
            insecure: self.settings.insecure,
            cacert: self.cacert().await?,
        };
        m.apply(&secrets::cloud_config_secret(&uuid, stack_id, &creds))
            .await?;
        Ok(())
    }

    fn region_of(&self, credential: &ApplicationCredential) -> Option<String> {
        credential
            .region_name
            .clone()
            .or_else(|| self.settings.region_name.clone())
    }

    /// The two addon Secrets (`<uuid>` and `<stack_id>-cloud-provider`), rendered for
    /// `template` with `credential`. Returns Cinder's default volume type.
    async fn write_addons(
        &self,
        m: &Mgmt,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        template: &ClusterTemplate,
        credential: &ApplicationCredential,
    ) -> DriverResult<String> {
        let cloud = self.cloud()?;
        let default_volume_type = cloud.default_volume_type(ctx.request).await?;
        // the StorageClasses: only when Cinder CSI is on (the label) and in the catalogue
        let volume_types =
            if Labels::new(cluster.labels.as_ref()).bool_or("cinder_csi_enabled", true)? {
                cloud.volume_types(ctx.request).await?
            } else {
                None
            };
        let inputs = AddonInputs {
            public_auth_url: credential.auth_url.clone(),
            region_name: self.region_of(credential),
            application_credential_id: credential.id.clone(),
            application_credential_secret: credential.secret.clone(),
            verify_ca: self.settings.verify_ca,
            openstack_ca: read_optional(&self.settings.openstack_ca_file).await?,
            block_storage_in_catalog: volume_types.is_some(),
            volume_types: volume_types.unwrap_or_default(),
            default_volume_type: default_volume_type.clone(),
            keystone_auth_policy: self.keystone_auth_policy(cluster).await?,
        };
        let mut rendered = BTreeMap::new();
        let releases = addons::legacy_helm_releases(cluster, template, &inputs)?
            .into_iter()
            .chain(addons::cloud_provider_helm_releases(cluster, &inputs)?);
        for release in releases {
            let text = self.renderer.render(&release).await?;
            rendered.insert(release.key.to_string(), release.finish(&text)?);
        }
        m.apply(&addons::legacy_secret(
            cluster, template, &inputs, &rendered,
        )?)
        .await?;
        m.apply(&addons::cloud_provider_secret(cluster, &inputs, &rendered)?)
            .await?;
        Ok(default_volume_type)
    }

    /// The Nova server groups (`<stack_id>` for the control plane, `<stack_id>-<nodegroup>`
    /// per worker nodegroup, made when missing) and every look-up of the `Cluster`.
    async fn cluster_lookups(
        &self,
        m: &Mgmt,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        default_volume_type: &str,
    ) -> DriverResult<Lookups> {
        let cloud = self.cloud()?;
        let cp_policy = control_plane_policy(cluster);
        let control_plane_server_group = cloud
            .ensure_server_group(ctx.request, stack_id, &cp_policy)
            .await?;
        let mut lookups = self
            .lookups(
                ctx,
                cluster,
                default_volume_type,
                control_plane_server_group,
            )
            .await?;
        for ng in workers(ctx.nodegroups) {
            let id = self.worker_server_group(ctx, cluster, stack_id, ng).await?;
            if let Some(l) = lookups.nodegroups.get_mut(&ng.name) {
                l.server_group_id = id;
            }
        }
        lookups.resolved = self.resolved_fields(m, stack_id).await?;
        Ok(lookups)
    }

    /// The Nova server group `<stack_id>-<nodegroup>` (made when missing): its id.
    async fn worker_server_group(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        ng: &NodeGroup,
    ) -> DriverResult<String> {
        let policy = Labels::new(ng.labels.as_ref())
            .str_or("server_group_policies", &control_plane_policy(cluster));
        self.cloud()?
            .ensure_server_group(ctx.request, &format!("{stack_id}-{}", ng.name), &policy)
            .await
    }

    /// `cacert` of `<stack_id>-cloud-config`: `[capi_client] ca_file`, else the system's
    /// trusted roots.
    async fn cacert(&self) -> DriverResult<String> {
        if let Some(f) = self.settings.ca_file.as_deref().filter(|f| !f.is_empty()) {
            return read_optional(f).await;
        }
        for path in SYSTEM_CA_BUNDLES {
            if let Ok(text) = std::fs::read_to_string(path) {
                return Ok(text);
            }
        }
        Ok(String::new())
    }

    /// `get_keystone_auth_default_policy`: the configured file with `$PROJECT_ID` replaced,
    /// else None (the built-in policy).
    async fn keystone_auth_policy(&self, cluster: &Cluster) -> DriverResult<Option<Value>> {
        let path = &self.settings.keystone_auth_default_policy;
        if path.is_empty() {
            return Ok(None);
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(None);
        };
        let text = text.replace("$PROJECT_ID", cluster.project_id.as_deref().unwrap_or(""));
        serde_json::from_str(&text).map(Some).map_err(|e| {
            DriverError::permanent_message(format!(
                "[kubernetes] keystone_auth_default_policy {path} is not JSON: {e}"
            ))
        })
    }

    /// The OpenStack look-ups of the `Cluster` (flavors, images, networks, volume types).
    async fn lookups(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        default_volume_type: &str,
        control_plane_server_group_id: String,
    ) -> DriverResult<Lookups> {
        let cloud = self.cloud()?;
        let req = ctx.request;
        let mut flavors: HashMap<String, Flavor> = HashMap::new();
        let mut images: HashMap<String, Image> = HashMap::new();
        let master_image = master_image(ctx);
        let control_plane_flavor = flavor(
            cloud,
            req,
            &mut flavors,
            cluster.master_flavor_id.as_deref().unwrap_or(""),
        )
        .await?;
        let worker_flavor = flavor(
            cloud,
            req,
            &mut flavors,
            cluster.flavor_id.as_deref().unwrap_or(""),
        )
        .await?;
        let image = image_of(cloud, req, &mut images, &master_image).await?;
        let mut nodegroups = BTreeMap::new();
        for ng in workers(ctx.nodegroups) {
            let f = worker_flavor_of(cluster, ng);
            let i = ng.image_id.clone().unwrap_or_else(|| master_image.clone());
            nodegroups.insert(
                ng.name.clone(),
                NodeGroupLookups {
                    flavor: flavor(cloud, req, &mut flavors, &f).await?,
                    image: image_of(cloud, req, &mut images, &i).await?,
                    server_group_id: String::new(),
                },
            );
        }
        let external_network_id = match ctx.template.external_network_id.as_deref() {
            Some(n) if !n.is_empty() => cloud.network(req, n, true).await?.id,
            _ => String::new(),
        };
        let fixed_network_id = match cluster.fixed_network.as_deref() {
            Some(n) if !n.is_empty() => cloud.network(req, n, false).await?.id,
            _ => String::new(),
        };
        let fixed_subnet_id = match cluster.fixed_subnet.as_deref() {
            Some(n) if !n.is_empty() => cloud.subnet(req, n).await?.id,
            _ => String::new(),
        };
        let boot_type = if self.settings.default_boot_volume_type.is_empty() {
            default_volume_type.to_string()
        } else {
            self.settings.default_boot_volume_type.clone()
        };
        Ok(Lookups {
            cluster_class: clusterclass::cluster_class_name_for(
                &self.settings.cluster_class_version,
            ),
            control_plane_flavor,
            worker_flavor,
            image,
            default_volume_type: default_volume_type.to_string(),
            default_boot_volume_type: boot_type,
            default_boot_volume_size: self.settings.default_boot_volume_size,
            external_network_id,
            fixed_network_id,
            fixed_subnet_id,
            control_plane_server_group_id,
            nodegroups,
            resolved: ResolvedFields::default(),
        })
    }

    /// The immutable-field resolver: the live OpenStackCluster's values.
    async fn resolved_fields(&self, m: &Mgmt, stack_id: &str) -> DriverResult<ResolvedFields> {
        let list = m
            .list(
                mgmt::OPENSTACK_CLUSTER,
                &format!("{CLUSTER_NAME_LABEL}={stack_id}"),
                "",
            )
            .await?;
        match list.as_slice() {
            [] => Ok(ResolvedFields::default()),
            [osc] => {
                let lb = &osc["spec"]["apiServerLoadBalancer"];
                let s = |v: &Value| v.as_str().map(str::to_string);
                Ok(ResolvedFields {
                    lb_provider: s(&lb["provider"]),
                    lb_flavor: s(&lb["flavor"]),
                    lb_availability_zone: s(&lb["availabilityZone"]),
                    disable_api_server_floating_ip: osc["spec"]["disableAPIServerFloatingIP"]
                        .as_bool(),
                })
            }
            _ => Err(DriverError::permanent_message(format!(
                "Cluster {stack_id} has {} OpenStackClusters; expected one.",
                list.len()
            ))),
        }
    }

    /// `delete_cluster`: the ClusterResourceSets with their Secrets, then the
    /// `Cluster`; what is already gone is fine.
    pub async fn delete(&self, ctx: &DriverContext<'_>, cluster: &Cluster) -> DriverResult<Writes> {
        let Some(stack_id) = cluster.stack_id.clone().filter(|s| !s.is_empty()) else {
            return Ok(Writes::none());
        };
        // 1. the load balancers the cluster's cloud controller manager made (their ports
        // would keep CAPO from deleting the cluster's network)
        if let Some(uuid) = cluster.uuid.as_deref().filter(|u| !u.is_empty()) {
            self.cloud()?
                .delete_cluster_load_balancers(
                    ctx.request,
                    uuid,
                    self.settings.pre_delete_lb_timeout,
                )
                .await?;
        }
        let m = self.mgmt().await?;
        self.remove_autoscaler(m, cluster).await?;
        self.delete_addons(m, cluster, &stack_id).await?;
        m.delete(mgmt::CLUSTER, &stack_id).await?;
        Ok(Writes::none())
    }

    async fn delete_addons(&self, m: &Mgmt, cluster: &Cluster, stack_id: &str) -> DriverResult<()> {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let cloud_provider = format!("{stack_id}-cloud-provider");
        m.delete(mgmt::CLUSTER_RESOURCE_SET, &cloud_provider)
            .await?;
        m.delete(mgmt::SECRET, &cloud_provider).await?;
        if !uuid.is_empty() {
            m.delete(mgmt::CLUSTER_RESOURCE_SET, &uuid).await?;
            m.delete(mgmt::SECRET, &uuid).await?;
        }
        Ok(())
    }

    /// The clean-up once the `Cluster` is gone: the credential Secrets, the CA Secrets, the
    /// addons (again, in case the delete was interrupted), the application credential and the
    /// server groups.
    async fn clean_up(&self, ctx: &DriverContext<'_>, cluster: &Cluster) -> DriverResult<()> {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        if let Some(stack_id) = cluster.stack_id.clone().filter(|s| !s.is_empty()) {
            let m = self.mgmt().await?;
            m.delete(mgmt::SECRET, &secrets::cloud_config_secret_name(&stack_id))
                .await?;
            for suffix in ["ca", "etcd", "proxy", "sa"] {
                m.delete(mgmt::SECRET, &format!("{stack_id}-{suffix}"))
                    .await?;
            }
            self.delete_addons(m, cluster, &stack_id).await?;
            self.remove_autoscaler(m, cluster).await?;
            let cloud = self.cloud()?;
            cloud.delete_server_group(ctx.request, &stack_id).await?;
            for ng in ctx
                .nodegroups
                .iter()
                .filter(|ng| ng.role.as_deref() != Some("master"))
            {
                cloud
                    .delete_server_group(ctx.request, &format!("{stack_id}-{}", ng.name))
                    .await?;
            }
        }
        if !uuid.is_empty() {
            let user = cluster.user_id.clone().unwrap_or_default();
            self.deps
                .application_credentials
                .as_ref()
                .ok_or_else(|| missing("Keystone application credentials"))?
                .delete(&user, &uuid)
                .await?;
        }
        Ok(())
    }

    /// What this tick needs of the cluster's objects (fewer requests than magnum-cluster-api's).
    pub async fn observe(
        &self,
        cluster: &Cluster,
        nodegroups: &[NodeGroup],
        stack_id: &str,
    ) -> DriverResult<Observed> {
        let m = self.mgmt().await?;
        let _observing = m.observing();
        let mut obs = Observed {
            cluster: Self::capi_cluster(m, cluster, stack_id).await?,
            ..Observed::default()
        };
        let Some(capi) = obs.cluster.clone() else {
            return Ok(obs);
        };
        // Every list is batched with the other clusters' of this tick (`batch.rs`): this
        // cluster asks for all it needs, then waits with the others.
        let deleting = cluster.status == Some(ClusterStatus::DeleteInProgress);
        let detail = deleting || status::needs_detail(&capi, nodegroups);
        let events = deleting || !status::cluster_ready(&capi);
        let ask = |wanted: bool, kind| {
            wanted.then(|| m.list_labelled(kind, CLUSTER_NAME_LABEL, stack_id))
        };
        let asks = (
            ask(!deleting, mgmt::KUBEADM_CONTROL_PLANE),
            ask(!deleting, mgmt::MACHINE_DEPLOYMENT),
            ask(detail && !deleting, mgmt::MACHINE),
            ask(detail, mgmt::OPENSTACK_CLUSTER),
            ask(
                !deleting && status::needs_openstack_machines(nodegroups),
                mgmt::OPENSTACK_MACHINE,
            ),
            events.then(|| m.events_about("Cluster", stack_id)),
        );
        let waiting = m.waiting();
        let (
            control_planes,
            machine_deployments,
            machines,
            openstack_clusters,
            openstack_machines,
            cluster_events,
        ) = tokio::try_join!(
            answer(asks.0),
            answer(asks.1),
            answer(asks.2),
            answer(asks.3),
            answer(asks.4),
            answer(asks.5),
        )?;
        drop(waiting);
        obs.control_planes = control_planes;
        obs.machine_deployments = machine_deployments;
        obs.machines = machines;
        obs.openstack_clusters = openstack_clusters;
        obs.openstack_machines = openstack_machines;
        obs.cluster_events = cluster_events;
        if events {
            if let Some(name) = obs
                .openstack_clusters
                .first()
                .and_then(|o| o["metadata"]["name"].as_str())
            {
                let events = m.events_about("OpenStackCluster", name);
                let _waiting = m.waiting();
                obs.openstack_cluster_events = events.await?;
            }
        }
        Ok(obs)
    }

    /// The `Cluster` `stack_id`, read with the other clusters' of this tick: one batched LIST
    /// by the [`CLUSTER_UUID_LABEL`] the driver writes on it, matched by name; a GET only
    /// when the list has none of that name (a `Cluster` written without the label, or gone).
    /// Either way a fresh read, as the GET it replaces.
    async fn capi_cluster(
        m: &Mgmt,
        cluster: &Cluster,
        stack_id: &str,
    ) -> DriverResult<Option<Value>> {
        let uuid = cluster.uuid.as_deref().unwrap_or_default();
        let ask =
            (!uuid.is_empty()).then(|| m.list_labelled(mgmt::CLUSTER, CLUSTER_UUID_LABEL, uuid));
        let waiting = m.waiting();
        let listed = answer(ask).await?;
        drop(waiting);
        match listed
            .into_iter()
            .find(|o| o["metadata"]["name"].as_str() == Some(stack_id))
        {
            Some(found) => Ok(Some(found)),
            None => Ok(m.get(mgmt::CLUSTER, stack_id).await?),
        }
    }

    /// `update_cluster_status` (magnum-cluster-api's `magnum_cluster_api/driver.py`).
    pub async fn status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<StatusReport> {
        let complete = StatusReport {
            status: Some(StatusChange {
                status: ClusterStatus::DeleteComplete,
                reason: None,
            }),
            ..StatusReport::default()
        };
        let Some(stack_id) = cluster.stack_id.clone().filter(|s| !s.is_empty()) else {
            // nothing was ever written for this cluster
            if cluster.status == Some(ClusterStatus::DeleteInProgress) {
                self.clean_up(ctx, cluster).await?;
                return Ok(complete);
            }
            return Ok(StatusReport::unchanged());
        };
        if !matches!(
            cluster.status,
            Some(
                ClusterStatus::CreateInProgress
                    | ClusterStatus::UpdateInProgress
                    | ClusterStatus::DeleteInProgress
            )
        ) {
            return Ok(StatusReport::unchanged());
        }
        let obs = self.observe(cluster, ctx.nodegroups, &stack_id).await?;
        let failures = status::Failures::now(self.settings.failure_grace);
        let derived = status::derive(cluster, ctx.nodegroups, &obs, &failures)?;
        for action in &derived.actions {
            match action {
                Action::CleanUp => {
                    self.clean_up(ctx, cluster).await?;
                    return Ok(complete);
                }
                Action::DeleteServerGroup(name) => {
                    self.cloud()?.delete_server_group(ctx.request, name).await?;
                }
            }
        }
        // the autoscaler once the cluster is up (magnum-cluster-api: on every poll of a
        // ready, creating cluster; its API must answer first, F16)
        let completes = derived
            .report
            .status
            .as_ref()
            .is_some_and(|s| s.status == ClusterStatus::CreateComplete);
        if completes {
            self.install_autoscaler(self.mgmt().await?, cluster).await?;
        }
        Ok(derived.report)
    }
}

/// The answer of a batched list asked for, or nothing when it was not asked.
async fn answer(
    ask: Option<impl std::future::Future<Output = DriverResult<Vec<Value>>>>,
) -> DriverResult<Vec<Value>> {
    match ask {
        Some(list) => list.await,
        None => Ok(Vec::new()),
    }
}

/// The image of the control plane (the master nodegroup's, else the template's): also the
/// image of worker nodegroups without their own.
fn master_image(ctx: &DriverContext<'_>) -> String {
    ctx.nodegroups
        .iter()
        .find(|ng| ng.role.as_deref() == Some("master"))
        .and_then(|ng| ng.image_id.clone())
        .or_else(|| ctx.template.image_id.clone())
        .unwrap_or_default()
}

/// A worker nodegroup's flavor: its own, else the cluster's.
fn worker_flavor_of(cluster: &Cluster, ng: &NodeGroup) -> String {
    ng.flavor_id
        .clone()
        .or_else(|| cluster.flavor_id.clone())
        .unwrap_or_default()
}

/// The control plane's server-group policy: the cluster's `server_group_policies` label.
fn control_plane_policy(cluster: &Cluster) -> String {
    Labels::new(cluster.labels.as_ref())
        .str_or("server_group_policies", DEFAULT_SERVER_GROUP_POLICY)
}

/// The worker nodegroups that are (to be) machine deployments.
fn workers(nodegroups: &[NodeGroup]) -> impl Iterator<Item = &NodeGroup> {
    nodegroups.iter().filter(|ng| {
        ng.role.as_deref() != Some("master")
            && !ng.status.is_some_and(|s| s.as_str().starts_with("DELETE"))
    })
}

async fn flavor(
    cloud: &Arc<dyn DriverCloud>,
    req: &RequestContext,
    cache: &mut HashMap<String, Flavor>,
    name_or_id: &str,
) -> DriverResult<Flavor> {
    if let Some(f) = cache.get(name_or_id) {
        return Ok(f.clone());
    }
    let f = to_flavor(cloud.flavor(req, name_or_id).await?);
    cache.insert(name_or_id.to_string(), f.clone());
    Ok(f)
}

async fn image_of(
    cloud: &Arc<dyn DriverCloud>,
    req: &RequestContext,
    cache: &mut HashMap<String, Image>,
    name_or_id: &str,
) -> DriverResult<Image> {
    if let Some(i) = cache.get(name_or_id) {
        return Ok(i.clone());
    }
    let found = cloud.image(req, name_or_id).await?;
    let i = Image {
        id: found.id.clone(),
        hw_disk_bus: found
            .properties
            .get("hw_disk_bus")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    cache.insert(name_or_id.to_string(), i.clone());
    Ok(i)
}

/// One entry point: a name and an `os` over the shared driver.
pub struct EntryPoint {
    name: &'static str,
    os: &'static str,
    inner: Arc<CapiDriver>,
}

impl EntryPoint {
    pub fn inner(&self) -> &Arc<CapiDriver> {
        &self.inner
    }
}

#[async_trait]
impl Driver for EntryPoint {
    fn name(&self) -> &str {
        self.name
    }

    fn provides(&self) -> Vec<ProvidedType> {
        vec![ProvidedType::new("vm", self.os, "kubernetes")]
    }

    async fn create_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _create_timeout: i32,
    ) -> DriverResult<Writes> {
        self.inner.create(ctx, cluster).await
    }

    async fn update_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _scale_manager: Option<&dyn ScaleManager>,
        _rollback: bool,
    ) -> DriverResult<Writes> {
        self.inner.update(ctx, cluster).await
    }

    async fn upgrade_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        cluster_template: &ClusterTemplate,
        max_batch_size: i32,
        nodegroup: &mut NodeGroup,
        _rollback: bool,
    ) -> DriverResult<Writes> {
        let writes = self
            .inner
            .upgrade(ctx, cluster, cluster_template, max_batch_size, nodegroup)
            .await?;
        // the conductor saves the nodegroup it passed: with what the upgrade gave it
        if let Some(ng) = writes.nodegroups.iter().find(|n| n.uuid == nodegroup.uuid) {
            nodegroup.image_id = ng.image_id.clone();
            nodegroup.labels = ng.labels.clone();
        }
        Ok(writes)
    }

    async fn delete_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        self.inner.delete(ctx, cluster).await
    }

    async fn resize_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _resize_manager: Option<&dyn ScaleManager>,
        node_count: i32,
        nodes_to_remove: &[String],
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        nodegroup.node_count = Some(node_count);
        self.inner
            .resize(ctx, cluster, nodes_to_remove, nodegroup)
            .await
    }

    async fn create_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.inner.create_nodegroup(ctx, cluster, nodegroup).await
    }

    async fn update_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.inner.resize(ctx, cluster, &[], nodegroup).await
    }

    async fn delete_nodegroup(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.inner.delete_nodegroup(cluster, nodegroup).await
    }

    async fn poll_health_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<Option<HealthReport>> {
        self.inner.health(ctx, cluster).await
    }

    async fn rotate_credential(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        self.inner.rotate_credential(ctx, cluster).await
    }

    fn validate_master_resize(&self, node_count: i32) -> Result<(), MagnumError> {
        // magnum-cluster-api: an odd count of at least one
        self.validate_master_size(node_count)
    }

    fn validate_cluster_upgrade(
        &self,
        cluster: &Cluster,
        template: &ClusterTemplate,
    ) -> Result<(), MagnumError> {
        ops::check_upgrade(
            Labels::new(cluster.labels.as_ref()).get("kube_tag"),
            Labels::new(template.labels.as_ref()).get("kube_tag"),
        )
    }

    async fn update_cluster_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<StatusReport> {
        self.inner.status(ctx, cluster).await
    }

    fn validate_cluster_create(
        &self,
        cluster: &Cluster,
        template: &ClusterTemplate,
        master_count: i32,
    ) -> Result<(), MagnumError> {
        let ng = |name: &str, role: &str, count: i32| NodeGroup {
            name: name.into(),
            role: Some(role.into()),
            node_count: Some(count),
            labels: cluster.labels.clone(),
            ..NodeGroup::default()
        };
        validate::validate_create(
            cluster,
            template,
            &[
                ng("default-master", "master", master_count),
                ng("default-worker", "worker", 1),
            ],
        )
    }

    fn validate_nodegroup_create(
        &self,
        _cluster: &Cluster,
        nodegroup: &NodeGroup,
    ) -> Result<(), MagnumError> {
        validate::validate_nodegroup(nodegroup)
    }
}
