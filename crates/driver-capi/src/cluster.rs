//! The `Cluster <stack_id>` object (`cluster.x-k8s.io/v1beta1`) that magnum-cluster-api
//! builds in `magnum_cluster_api/resources.py` (`Cluster.get_object`,
//! `mutate_machine_deployment`), and the `stack_id` it is named after.
//!
//! Pure functions: what comes from OpenStack (flavors, images, networks, server groups, the
//! Cinder default type) and from the immutable-field resolver is given as [`Lookups`].

use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, ClusterTemplate, NodeGroup};
use serde_json::{json, Map, Value};

use crate::labels::Labels;
use crate::status::CLUSTER_UUID_LABEL;
use crate::NAMESPACE;

/// `CALICO_TAG` (`magnum_cluster_api/resources.py`).
pub const DEFAULT_CALICO_TAG: &str = "v3.32.1";
/// `DEFAULT_POD_CIDR`.
pub const DEFAULT_POD_CIDR: &str = "10.100.0.0/16";
/// `CLUSTER_CLASS_NODE_VOLUME_DETACH_TIMEOUT`.
pub const NODE_VOLUME_DETACH_TIMEOUT: &str = "300s";
pub const AUTOSCALE_ANNOTATION_MIN: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
pub const AUTOSCALE_ANNOTATION_MAX: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
/// `AVAILABLE_OPERATING_SYSTEMS`, matched as prefixes of the template's `cluster_distro`.
pub const OPERATING_SYSTEMS: &[&str] = &["ubuntu", "debian", "flatcar", "rockylinux"];
/// `images.PAUSE`.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.9";

const API_SERVER_TLS_CIPHER_SUITES: &str = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305";
const KUBELET_TLS_CIPHER_SUITES: &str = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305";

/// The alphabet of `generate_cluster_api_name`: `string.ascii_lowercase + string.digits`.
const STACK_ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A candidate `stack_id`: `kube-` and 5 random characters from `[a-z0-9]`
/// (`shortuuid.ShortUUID(alphabet).random(length=5)`). The caller retries while a `Cluster` of
/// that name exists, as magnum-cluster-api does.
pub fn generate_stack_id() -> String {
    let mut out = String::from("kube-");
    let mut pool: Vec<u8> = Vec::new();
    while out.len() < 10 {
        if pool.is_empty() {
            pool = uuid::Uuid::new_v4().as_bytes().to_vec();
        }
        let b = pool.pop().unwrap_or(0);
        // rejection sampling keeps the choice uniform over 36 symbols
        if usize::from(b) < 252 {
            out.push(char::from(STACK_ID_ALPHABET[usize::from(b) % 36]));
        }
    }
    out
}

/// A Nova flavor as the driver needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    /// MiB
    pub ram: i64,
    pub vcpus: i64,
    /// GiB
    pub disk: i64,
}

/// A Glance image: its id and the `hw_disk_bus` property.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Image {
    pub id: String,
    pub hw_disk_bus: Option<String>,
}

/// What the look-ups of one worker nodegroup gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeGroupLookups {
    pub flavor: Flavor,
    pub image: Image,
    /// The Nova server group `<stack_id>-<nodegroup>`.
    pub server_group_id: String,
}

/// Values from a live `OpenStackCluster` (the immutable-field resolver); all `None`
/// for a new cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolvedFields {
    pub lb_provider: Option<String>,
    pub lb_flavor: Option<String>,
    pub lb_availability_zone: Option<String>,
    pub disable_api_server_floating_ip: Option<bool>,
}

/// Everything the `Cluster` needs from OpenStack and configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lookups {
    /// `CLUSTER_CLASS_NAME`, e.g. `magnum-v0.38.2`.
    pub cluster_class: String,
    pub control_plane_flavor: Flavor,
    pub worker_flavor: Flavor,
    /// The master nodegroup's image.
    pub image: Image,
    /// The Cinder default volume type's name.
    pub default_volume_type: String,
    /// `[cinder] default_boot_volume_type`, else the Cinder default type.
    pub default_boot_volume_type: String,
    /// `[cinder] default_boot_volume_size`.
    pub default_boot_volume_size: i64,
    pub external_network_id: String,
    /// "" when the cluster has no fixed network.
    pub fixed_network_id: String,
    pub fixed_subnet_id: String,
    /// The Nova server group `<stack_id>`.
    pub control_plane_server_group_id: String,
    /// Per worker nodegroup, by name.
    pub nodegroups: std::collections::BTreeMap<String, NodeGroupLookups>,
    pub resolved: ResolvedFields,
}

fn var(name: &str, value: Value) -> Value {
    json!({"name": name, "value": value})
}

/// `Cluster.labels`: `cluster-uuid`, plus `cni: calico-<tag>` for Calico.
pub fn cluster_labels(cluster: &Cluster, template: &ClusterTemplate) -> Map<String, Value> {
    let labels = Labels::new(cluster.labels.as_ref());
    let mut m = Map::new();
    m.insert(
        CLUSTER_UUID_LABEL.into(),
        json!(cluster.uuid.clone().unwrap_or_default()),
    );
    if template.network_driver.as_deref() == Some("calico") {
        m.insert(
            "cni".into(),
            json!(format!(
                "calico-{}",
                labels.str_or("calico_tag", DEFAULT_CALICO_TAG)
            )),
        );
    }
    m
}

/// `get_operating_system`: the first OS the template's `cluster_distro` starts with.
pub fn operating_system(template: &ClusterTemplate) -> Option<&'static str> {
    let distro = template.cluster_distro.as_deref().unwrap_or("");
    OPERATING_SYSTEMS
        .iter()
        .copied()
        .find(|os| distro.starts_with(os))
}

/// `image_utils.get_image` for the images the Cluster object names (the sandbox image).
pub fn mirrored_image(name: &str, repository: &str) -> String {
    crate::addons::get_image(name, repository)
}

/// `generate_containerd_config`.
pub fn containerd_config(labels: &Labels<'_>) -> String {
    let sandbox = mirrored_image(PAUSE_IMAGE, &labels.str_or("container_infra_prefix", ""));
    format!(
        "# Use config version 2 to enable new configuration fields.\n\
         # Config file is parsed as version 1 by default.\n\
         version = 2\n\
         \n\
         imports = [\"/etc/containerd/conf.d/*.toml\"]\n\
         \n\
         [plugins]\n\
         [plugins.\"io.containerd.grpc.v1.cri\"]\n    sandbox_image = \"{sandbox}\"\n\
         [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n    runtime_type = \"io.containerd.runc.v2\"\n\
         [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n    SystemdCgroup = true\n"
    )
}

/// Python's `str()` of an optional template field (`None` prints as `None`).
fn py_str(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "None".into())
}

/// `generate_systemd_proxy_config`.
pub fn systemd_proxy_config(t: &ClusterTemplate) -> String {
    if t.http_proxy.is_none() && t.https_proxy.is_none() {
        return String::new();
    }
    let (h, s, n) = (
        py_str(&t.http_proxy),
        py_str(&t.https_proxy),
        py_str(&t.no_proxy),
    );
    format!(
        "[Service]\nEnvironment=\"http_proxy={h}\"\nEnvironment=\"HTTP_PROXY={h}\"\n\
         Environment=\"https_proxy={s}\"\nEnvironment=\"HTTPS_PROXY={s}\"\n\
         Environment=\"no_proxy={n}\"\nEnvironment=\"NO_PROXY={n}\"\n"
    )
}

/// `generate_apt_proxy_config`.
pub fn apt_proxy_config(t: &ClusterTemplate) -> String {
    if t.http_proxy.is_none() && t.https_proxy.is_none() {
        return String::new();
    }
    format!(
        "Acquire::http::Proxy \"{}\";\nAcquire::https::Proxy \"{}\";\n",
        py_str(&t.http_proxy),
        py_str(&t.https_proxy)
    )
}

/// `generate_api_cert_san_list`.
pub fn api_cert_san_list(labels: &Labels<'_>) -> String {
    labels
        .str_or("api_server_cert_sans", "")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| format!("- {s}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The control plane's replica count: the master nodegroups' node counts.
/// `dnsNameservers`: the template's `dns_nameserver` split on `,` (magnum-cluster-api); none
/// for a template without one, which `validate::validate_create` refuses (docs/differences.md).
pub fn dns_nameservers(template: &ClusterTemplate) -> Vec<&str> {
    template
        .dns_nameserver
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.split(',').collect())
        .unwrap_or_default()
}

pub fn master_count(nodegroups: &[NodeGroup]) -> i64 {
    nodegroups
        .iter()
        .filter(|ng| ng.role.as_deref() == Some("master"))
        .map(|ng| i64::from(ng.node_count.unwrap_or(0)))
        .sum()
}

/// `get_node_group_max_node_count`.
fn max_node_count(ng: &NodeGroup) -> Result<i64, MagnumError> {
    match ng.max_node_count {
        Some(n) => Ok(i64::from(n)),
        None => Labels::new(ng.labels.as_ref()).int_or(
            "max_node_count",
            i64::from(ng.min_node_count.unwrap_or(0)) + 1,
        ),
    }
}

/// A new `spec.topology.workers.machineDeployments[]` entry (`mutate_machine_deployment`
/// without an existing entry).
pub fn machine_deployment(
    cluster: &Cluster,
    ng: &NodeGroup,
    look: &Lookups,
) -> Result<Value, MagnumError> {
    let cl = Labels::new(cluster.labels.as_ref());
    let nl = Labels::new(ng.labels.as_ref());
    let role = ng.role.clone().unwrap_or_default();
    let default = NodeGroupLookups::default();
    let res = look.nodegroups.get(&ng.name).unwrap_or(&default);
    let auto_scaling = cl.bool_or("auto_scaling_enabled", false)?;
    let mut md = Map::new();
    let mut annotations = Map::new();
    if auto_scaling {
        let mut boot = nl.int_or("boot_volume_size", look.default_boot_volume_size)?;
        if boot == 0 {
            boot = res.flavor.disk;
        }
        annotations.insert(
            AUTOSCALE_ANNOTATION_MIN.into(),
            json!(ng.min_node_count.unwrap_or(0).to_string()),
        );
        annotations.insert(
            AUTOSCALE_ANNOTATION_MAX.into(),
            json!(max_node_count(ng)?.to_string()),
        );
        annotations.insert(
            "capacity.cluster-autoscaler.kubernetes.io/memory".into(),
            json!(format!("{}G", (res.flavor.ram + 1023).div_euclid(1024))),
        );
        annotations.insert(
            "capacity.cluster-autoscaler.kubernetes.io/cpu".into(),
            json!(res.flavor.vcpus.to_string()),
        );
        annotations.insert(
            "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk".into(),
            json!(boot.to_string()),
        );
        annotations.insert(
            "capacity.cluster-autoscaler.kubernetes.io/labels".into(),
            json!(format!(
                "node-role.kubernetes.io/{role}=,node.cluster.x-k8s.io/nodegroup={}",
                ng.name
            )),
        );
    }
    md.insert(
        "metadata".into(),
        json!({
            "annotations": annotations,
            "labels": {
                format!("node-role.kubernetes.io/{role}"): "",
                "node.cluster.x-k8s.io/nodegroup": ng.name,
            },
        }),
    );
    if !auto_scaling {
        md.insert("replicas".into(), json!(ng.node_count.unwrap_or(0)));
    }
    md.insert(
        "nodeVolumeDetachTimeout".into(),
        json!(NODE_VOLUME_DETACH_TIMEOUT),
    );
    md.insert("class".into(), json!("default-worker"));
    md.insert("name".into(), json!(ng.name));
    md.insert(
        "machineHealthCheck".into(),
        json!({"enable": cl.bool_or("auto_healing_enabled", true)?}),
    );
    let diff_fd = nl.bool_or("different_failure_domain", false)?
        || cl.bool_or("different_failure_domain", false)?;
    md.insert(
        "variables".into(),
        json!({"overrides": [
            var("bootVolume", json!({
                "size": nl.int_or("boot_volume_size", look.default_boot_volume_size)?,
                "type": nl.str_or("boot_volume_type", &look.default_boot_volume_type),
            })),
            var("flavor", json!(res.flavor.name)),
            var("imageRepository", json!(nl.str_or("container_infra_prefix", ""))),
            var("imageUUID", json!(res.image.id)),
            var("hardwareDiskBus", json!(res.image.hw_disk_bus.clone().unwrap_or_default())),
            var("serverGroupId", json!(res.server_group_id)),
            var("isServerGroupDiffFailureDomain", json!(diff_fd)),
        ]}),
    );
    if let Some(az) = nl.get("availability_zone").filter(|az| !az.is_empty()) {
        md.insert("failureDomain".into(), json!(az));
    }
    Ok(Value::Object(md))
}

/// The 39 topology variables, in magnum-cluster-api's order.
pub fn variables(
    cluster: &Cluster,
    template: &ClusterTemplate,
    look: &Lookups,
) -> Result<Vec<Value>, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let stack_id = cluster.stack_id.clone().unwrap_or_default();
    let fip_disabled = !l.bool_or("master_lb_floating_ip_enabled", true)?;
    let r = &look.resolved;
    let mut lb = Map::new();
    lb.insert(
        "enabled".into(),
        json!(cluster.master_lb_enabled.unwrap_or(false)),
    );
    // the resolver: the live OpenStackCluster's value, else the label
    for (key, live, label) in [
        ("provider", &r.lb_provider, "octavia_provider"),
        ("flavor", &r.lb_flavor, "api_server_lb_flavor"),
        (
            "availabilityZone",
            &r.lb_availability_zone,
            "api_server_lb_availability_zone",
        ),
    ] {
        if let Some(v) = live.clone().or_else(|| l.get(label).map(str::to_string)) {
            lb.insert(key.into(), json!(v));
        }
    }
    let etcd_size = l.int_or("etcd_volume_size", 0)?;
    let b64 = |s: String| json!(crate::secrets::base64(s.as_bytes()));
    Ok(vec![
        var("apiServerLoadBalancer", Value::Object(lb)),
        var(
            "apiServerTLSCipherSuites",
            json!(l.str_or("api_server_tls_cipher_suites", API_SERVER_TLS_CIPHER_SUITES)),
        ),
        var(
            "apiServerFloatingIP",
            json!(l.str_or("api_server_floating_ip", "")),
        ),
        var(
            "openidConnect",
            json!({
                "clientId": l.str_or("oidc_client_id", ""),
                "groupsClaim": l.str_or("oidc_groups_claim", ""),
                "groupsPrefix": l.str_or("oidc_groups_prefix", ""),
                "issuerUrl": l.str_or("oidc_issuer_url", ""),
                "usernameClaim": l.str_or("oidc_username_claim", "sub"),
                "usernamePrefix": l.str_or("oidc_username_prefix", "-"),
            }),
        ),
        var(
            "auditLog",
            json!({
                "enabled": l.bool_or("audit_log_enabled", false)?,
                "maxAge": l.str_or("audit_log_max_age", "30"),
                "maxBackup": l.str_or("audit_log_max_backup", "10"),
                "maxSize": l.str_or("audit_log_max_size", "100"),
            }),
        ),
        var(
            "bootVolume",
            json!({
                "size": l.int_or("boot_volume_size", look.default_boot_volume_size)?,
                "type": l.str_or("boot_volume_type", &look.default_boot_volume_type),
            }),
        ),
        var(
            "bootVolumeAvailabilityZone",
            json!(l.str_or(
                "boot_volume_availability_zone",
                &l.str_or("availability_zone", "")
            )),
        ),
        var(
            "clusterIdentityRefName",
            json!(crate::secrets::cloud_config_secret_name(&stack_id)),
        ),
        var("systemdProxyConfig", b64(systemd_proxy_config(template))),
        var("aptProxyConfig", b64(apt_proxy_config(template))),
        var("containerdConfig", b64(containerd_config(&l))),
        var("controlPlaneFlavor", json!(look.control_plane_flavor.name)),
        var(
            "disableAPIServerFloatingIP",
            json!(r.disable_api_server_floating_ip.unwrap_or(fip_disabled)),
        ),
        var(
            "disableAPIServerFloatingIPManaged",
            json!(r.disable_api_server_floating_ip.is_some() || fip_disabled),
        ),
        var("dnsNameservers", json!(dns_nameservers(template))),
        var("externalNetworkId", json!(look.external_network_id)),
        var("fixedNetworkId", json!(look.fixed_network_id)),
        var("fixedSubnetId", json!(look.fixed_subnet_id)),
        var("flavor", json!(look.worker_flavor.name)),
        var(
            "imageRepository",
            json!(l.str_or("container_infra_prefix", "")),
        ),
        var("imageUUID", json!(look.image.id)),
        var(
            "kubeletTLSCipherSuites",
            json!(l.str_or("kubelet_tls_cipher_suites", KUBELET_TLS_CIPHER_SUITES)),
        ),
        var("apiServerSANs", json!(api_cert_san_list(&l))),
        var(
            "nodeCidr",
            json!(l.str_or("fixed_subnet_cidr", "10.0.0.0/24")),
        ),
        var(
            "sshKeyName",
            json!(cluster.keypair.clone().unwrap_or_default()),
        ),
        var("operatingSystem", json!(operating_system(template))),
        var(
            "hardwareDiskBus",
            json!(look.image.hw_disk_bus.clone().unwrap_or_default()),
        ),
        var(
            "enableDockerVolume",
            json!(cluster.docker_volume_size.is_some()),
        ),
        var(
            "dockerVolumeSize",
            json!(cluster.docker_volume_size.unwrap_or(0)),
        ),
        var(
            "dockerVolumeType",
            json!(l.str_or("docker_volume_type", &look.default_volume_type)),
        ),
        var("enableEtcdVolume", json!(etcd_size > 0)),
        var("etcdVolumeSize", json!(etcd_size)),
        var(
            "etcdVolumeType",
            json!(l.str_or("etcd_volume_type", &look.default_volume_type)),
        ),
        var("availabilityZone", json!(l.str_or("availability_zone", ""))),
        var(
            "enableKeystoneAuth",
            json!(l.bool_or("keystone_auth_enabled", true)?),
        ),
        var(
            "controlPlaneAvailabilityZones",
            json!(l
                .str_or("control_plane_availability_zones", "")
                .split(',')
                .collect::<Vec<_>>()),
        ),
        var("serverGroupId", json!(look.control_plane_server_group_id)),
        var(
            "isServerGroupDiffFailureDomain",
            json!(l.bool_or("different_failure_domain", false)?),
        ),
        var(
            "admissionControlList",
            json!(
                match l.get("admission_control_list").filter(|s| !s.is_empty()) {
                    Some(extra) => format!("NodeRestriction,{extra}"),
                    None => "NodeRestriction".to_string(),
                }
            ),
        ),
    ])
}

/// The `Cluster <stack_id>` object as magnum-cluster-api applies it at create (and rebuilds
/// at upgrade). Nodegroups with role `master` or a status starting with `DELETE` are not
/// machine deployments.
pub fn cluster_object(
    cluster: &Cluster,
    template: &ClusterTemplate,
    nodegroups: &[NodeGroup],
    look: &Lookups,
) -> Result<Value, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let pod_cidr = match template.network_driver.as_deref() {
        Some("calico") => l.str_or("calico_ipv4pool", DEFAULT_POD_CIDR),
        Some("cilium") => l.str_or("cilium_ipv4pool", DEFAULT_POD_CIDR),
        _ => DEFAULT_POD_CIDR.to_string(),
    };
    let mut mds = Vec::new();
    for ng in nodegroups {
        let deleting = ng
            .status
            .map(|s| s.as_str().starts_with("DELETE"))
            .unwrap_or(false);
        if ng.role.as_deref() == Some("master") || deleting {
            continue;
        }
        mds.push(machine_deployment(cluster, ng, look)?);
    }
    Ok(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {
            "name": cluster.stack_id.clone().unwrap_or_default(),
            "namespace": NAMESPACE,
            "labels": cluster_labels(cluster, template),
        },
        "spec": {
            "clusterNetwork": {
                "serviceDomain": l.str_or("dns_cluster_domain", "cluster.local"),
                "pods": {"cidrBlocks": [pod_cidr]},
                "services": {"cidrBlocks": [l.str_or("service_cluster_ip_range", "10.254.0.0/16")]},
            },
            "topology": {
                "class": look.cluster_class,
                // validated at create (validate.rs): present
                "version": l.str_or("kube_tag", ""),
                "controlPlane": {
                    "metadata": {"labels": {"node-role.kubernetes.io/master": ""}},
                    "replicas": master_count(nodegroups),
                    "machineHealthCheck": {"enable": l.bool_or("auto_healing_enabled", true)?},
                },
                "workers": {"machineDeployments": mds},
                "variables": variables(cluster, template, look)?,
            },
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_ids_look_like_magnum_cluster_apis() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let id = generate_stack_id();
            assert_eq!(id.len(), 10, "{id}");
            assert!(id.starts_with("kube-"));
            assert!(id[5..]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
            seen.insert(id);
        }
        assert!(seen.len() > 190);
    }

    #[test]
    fn dns_nameservers_split_the_templates_and_none_without_one() {
        let t = |dns: Option<&str>| ClusterTemplate {
            dns_nameserver: dns.map(str::to_string),
            ..Default::default()
        };
        assert_eq!(dns_nameservers(&t(Some("8.8.8.8"))), vec!["8.8.8.8"]);
        assert_eq!(
            dns_nameservers(&t(Some("1.1.1.1,8.8.8.8"))),
            vec!["1.1.1.1", "8.8.8.8"]
        );
        assert!(dns_nameservers(&t(None)).is_empty());
        assert!(dns_nameservers(&t(Some(""))).is_empty());
    }

    #[test]
    fn proxy_configs_print_none_like_python() {
        let t = ClusterTemplate {
            http_proxy: Some("http://p:3128".into()),
            ..Default::default()
        };
        assert!(systemd_proxy_config(&t).contains("Environment=\"https_proxy=None\"\n"));
        assert_eq!(
            apt_proxy_config(&t),
            "Acquire::http::Proxy \"http://p:3128\";\nAcquire::https::Proxy \"None\";\n"
        );
        assert_eq!(apt_proxy_config(&ClusterTemplate::default()), "");
    }
}
