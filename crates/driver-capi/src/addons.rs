//! The addons magnum-cluster-api installs through two ClusterResourceSets
//! (`magnum_cluster_api/resources.py`): the legacy
//! `ClusterResourceSet <uuid>` (ApplyOnce: CNI, keystone-auth, `kube-system/cloud-config`)
//! and `ClusterResourceSet <stack_id>-cloud-provider` (Reconcile: OpenStack CCM, Cinder CSI
//! and its StorageClasses, `kube-system/cloud-config`), each with its Secret of manifests.
//!
//! Calico is a static manifest carried with the driver (`manifests/calico`). The other addons
//! are Helm charts that magnum-cluster-api renders with `helm template`; this module gives
//! the chart, release and values ([`HelmRelease`]) and takes their rendering as input.

use std::collections::BTreeMap;

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterTemplate};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::calico_manifests::CALICO_MANIFESTS;
use crate::cluster::DEFAULT_CALICO_TAG;
use crate::labels::Labels;
use crate::status::CLUSTER_UUID_LABEL;
use crate::NAMESPACE;

/// `image_utils.get_image`: an image's name in the `container_infra_prefix` mirror.
pub fn get_image(name: &str, repository: &str) -> String {
    if repository.is_empty() {
        return name.to_string();
    }
    let mut new = name.to_string();
    if name.starts_with("quay.io/calico") {
        new = name.replace("quay.io/calico/", &format!("{repository}/calico/"));
    }
    if let Some(component) = name.strip_prefix("quay.io/cilium/") {
        new = format!("{repository}/cilium-{component}");
    }
    for prefix in [
        "docker.io/k8scloudprovider",
        "registry.k8s.io/sig-storage",
        "registry.k8s.io/provider-os",
        "gcr.io/k8s-staging-sig-storage",
    ] {
        if name.starts_with(prefix) {
            new = name.replace(prefix, repository);
        }
    }
    if new.starts_with(&format!("{repository}/livenessprobe")) {
        return new.replace("livenessprobe", "csi-livenessprobe");
    }
    for prefix in ["registry.k8s.io/coredns", "registry.k8s.io/autoscaling"] {
        if new.starts_with(prefix) {
            return new.replace(prefix, repository);
        }
    }
    if new.starts_with("registry.k8s.io/etcd")
        || new.starts_with("registry.k8s.io/kube-")
        || new.starts_with("registry.k8s.io/pause")
    {
        return new.replace("registry.k8s.io", repository);
    }
    new
}

/// The Calico tags whose manifest the driver carries.
pub fn calico_tags() -> impl Iterator<Item = &'static str> {
    CALICO_MANIFESTS.iter().map(|(t, _)| *t)
}

/// The Calico manifest for `tag`, images rewritten for `repository`.
///
/// magnum-cluster-api (`image_utils.update_manifest_images`) parses the manifest and dumps it
/// again with PyYAML; here the text is kept and only the `image:` lines are rewritten, so
/// quoting that matters to YAML 1.1 readers (`"Off"` in Calico's CRDs) is never lost. The
/// documents are the same once parsed (the golden test compares them parsed).
pub fn calico_manifest(tag: &str, repository: &str) -> Result<String, MagnumError> {
    let text = CALICO_MANIFESTS
        .iter()
        .find(|(t, _)| *t == tag)
        .map(|(_, m)| *m)
        .ok_or_else(|| unsupported_calico(tag))?;
    if repository.is_empty() {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        out.push_str(&rewrite_image_line(line, repository));
    }
    Ok(out)
}

/// `image: <name>` (or `- image: <name>`, quoted or not) with the name mirrored.
fn rewrite_image_line(line: &str, repository: &str) -> String {
    let body = line.trim_end_matches(['\n', '\r']);
    let ending = &line[body.len()..];
    let indent = body.len() - body.trim_start().len();
    let rest = &body[indent..];
    let (dash, after) = match rest.strip_prefix("- ") {
        Some(a) => ("- ", a),
        None => ("", rest),
    };
    let Some(value) = after.strip_prefix("image:") else {
        return line.to_string();
    };
    let value = value.trim();
    let (quote, name) = if value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')))
    {
        (&value[..1], &value[1..value.len() - 1])
    } else {
        ("", value)
    };
    if name.is_empty() || name.contains(' ') {
        return line.to_string();
    }
    format!(
        "{}{dash}image: {quote}{}{quote}{ending}",
        &body[..indent],
        get_image(name, repository)
    )
}

pub(crate) fn unsupported_calico(tag: &str) -> MagnumError {
    let known: Vec<&str> = calico_tags().collect();
    MagnumError::with_message(
        ErrorKind::InvalidParameterValue,
        format!(
            "Unsupported calico_tag {tag}: the Cluster API driver ships Calico {}.",
            known.join(", ")
        ),
    )
}

/// A Helm chart magnum-cluster-api renders with `helm template` into an addon Secret key.
#[derive(Debug, Clone, PartialEq)]
pub struct HelmRelease {
    /// The Secret key the rendering goes to (`keystone-auth.yaml`, ...).
    pub key: &'static str,
    /// The chart directory in magnum-cluster-api's package (`charts/<chart>`).
    pub chart: &'static str,
    pub release: String,
    pub namespace: String,
    pub values: Value,
    /// What is done to `helm template`'s output before it goes into the Secret.
    pub post: PostRender,
}

/// The treatment of a chart's rendering.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum PostRender {
    /// Kept as `helm template` wrote it (magnum-cluster-api's Rust addons).
    #[default]
    Raw,
    /// magnum-cluster-api's Python `TemplateReleaseCommand` (keystone-auth): every document
    /// but ClusterRoles and ClusterRoleBindings gets the release's namespace, the images of
    /// workload containers move to the `container_infra_prefix` mirror (`repository`, empty
    /// for none), and the documents are written out again.
    Namespaced { repository: String },
}

impl HelmRelease {
    /// The Secret value for `rendered`, the output of `helm template` for this release.
    pub fn finish(&self, rendered: &str) -> Result<String, MagnumError> {
        let PostRender::Namespaced { repository } = &self.post else {
            return Ok(rendered.to_string());
        };
        let mut docs = Vec::new();
        for doc in serde_yaml::Deserializer::from_str(rendered) {
            let mut doc = Value::deserialize(doc).map_err(|e| {
                MagnumError::internal(format!(
                    "helm template of {} wrote YAML that does not parse: {e}",
                    self.chart
                ))
            })?;
            if doc.is_null() {
                continue;
            }
            yaml11_file_modes(&mut doc);
            let kind = doc["kind"].as_str().unwrap_or_default().to_string();
            if matches!(kind.as_str(), "DaemonSet" | "Deployment" | "StatefulSet")
                && !repository.is_empty()
            {
                let spec = &mut doc["spec"]["template"]["spec"];
                for list in ["initContainers", "containers"] {
                    if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
                        for c in containers {
                            if let Some(image) = c["image"].as_str() {
                                c["image"] = json!(get_image(image, repository));
                            }
                        }
                    }
                }
            }
            if !matches!(kind.as_str(), "ClusterRole" | "ClusterRoleBinding") {
                if let Some(meta) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("namespace".into(), json!(self.namespace));
                }
            }
            docs.push(yaml(&doc));
        }
        Ok(docs.join("---\n"))
    }
}

/// Charts write file modes as YAML 1.1 octals (`defaultMode: 0444`), which Kubernetes and
/// PyYAML read as numbers (292) and a YAML 1.2 reader as the string "0444"; before the
/// documents are written again, such strings under `defaultMode` and `mode` (always
/// integers in Kubernetes) become the numbers they mean.
fn yaml11_file_modes(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "defaultMode" || k == "mode" {
                    let octal = x
                        .as_str()
                        .and_then(|t| t.strip_prefix('0'))
                        .filter(|t| !t.is_empty() && t.bytes().all(|b| (b'0'..=b'7').contains(&b)))
                        .and_then(|t| i64::from_str_radix(t, 8).ok());
                    if let Some(n) = octal {
                        *x = json!(n);
                        continue;
                    }
                }
                yaml11_file_modes(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(yaml11_file_modes),
        _ => {}
    }
}

/// A chart's default values (`values.yaml`), as magnum-cluster-api reads them.
fn chart_defaults(chart: &str) -> Result<Value, MagnumError> {
    let text = crate::helm::chart_file(&format!("{chart}/values.yaml"))
        .ok_or_else(|| MagnumError::internal(format!("The driver carries no {chart} chart.")))?;
    serde_yaml::from_slice(text)
        .map_err(|e| MagnumError::internal(format!("The {chart} chart's values.yaml: {e}")))
}

/// An image's name without its registry host (`docker_image`'s `name`).
fn image_path(reference: &str) -> &str {
    match reference.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            rest
        }
        _ => reference,
    }
}

/// `ImageDetails::using_cluster`: the default image's repository in the mirror (`prefix`,
/// by the addon's `rename`), `tag`, and digests used only without a mirror.
fn image_details(
    defaults: &Value,
    tag: &str,
    prefix: Option<&str>,
    rename: fn(&str) -> String,
) -> Value {
    let repository = defaults["repository"].as_str().unwrap_or_default();
    let repository = match prefix {
        Some(p) => format!(
            "{}/{}",
            p.trim_end_matches('/'),
            rename(image_path(repository))
        ),
        None => repository.to_string(),
    };
    json!({"repository": repository, "tag": tag, "useDigest": prefix.is_none()})
}

/// The `container_infra_prefix` label as magnum-cluster-api's Rust side reads it (set, even
/// empty, is a mirror).
fn rust_prefix<'a>(labels: &Labels<'a>) -> Option<&'a str> {
    labels.get("container_infra_prefix")
}

/// magnum-cluster-api's default `cilium_tag` (the chart's version).
pub const DEFAULT_CILIUM_TAG: &str = "v1.15.3";

/// Cilium's values (`src/addons/cilium.rs`): every image at `cilium_tag`.
fn cilium_values(cluster: &Cluster) -> Result<Value, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let d = chart_defaults("cilium")?;
    let tag = l.str_or("cilium_tag", DEFAULT_CILIUM_TAG);
    let prefix = rust_prefix(&l);
    let rename = |name: &str| name.replace("cilium/", "cilium-");
    let img = |v: &Value| image_details(v, &tag, prefix, rename);
    let hubble_ui = l
        .str_or("cilium_hubble_ui_enabled", "false")
        .eq_ignore_ascii_case("true");
    let mut relay = json!({"image": img(&d["hubble"]["relay"]["image"])});
    let mut ui = json!({
        "backend": {"image": img(&d["hubble"]["ui"]["backend"]["image"])},
        "frontend": {"image": img(&d["hubble"]["ui"]["frontend"]["image"])},
    });
    if hubble_ui {
        relay["enabled"] = json!(true);
        ui["enabled"] = json!(true);
    }
    Ok(json!({
        "image": img(&d["image"]),
        "cni": {"chainingMode": "portmap"},
        "certgen": {"image": img(&d["certgen"]["image"])},
        "hubble": {"enabled": d["hubble"]["enabled"].as_bool().unwrap_or(true), "relay": relay, "ui": ui},
        "ipam": {"operator": {"clusterPoolIPv4PodCIDRList": [l.str_or("cilium_ipv4pool", crate::cluster::DEFAULT_POD_CIDR)]}},
        "k8s": {"serviceProxyName": "cilium"},
        "envoy": {"image": img(&d["envoy"]["image"])},
        "sessionAffinity": true,
        "etcd": {"image": img(&d["etcd"]["image"])},
        "operator": {"image": img(&d["operator"]["image"])},
        "nodeinit": {"image": img(&d["nodeinit"]["image"])},
        "preflight": {"image": img(&d["preflight"]["image"])},
        "clustermesh": {"apiserver": {"image": img(&d["clustermesh"]["apiserver"]["image"])}},
    }))
}

/// Cinder CSI's values (`src/addons/cinder_csi.rs`).
fn cinder_csi_values(cluster: &Cluster) -> Result<Value, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let d = chart_defaults("openstack-cinder-csi")?;
    let prefix = rust_prefix(&l);
    let rename = |name: &str| {
        let last = name.rsplit('/').next().unwrap_or(name);
        if last == "livenessprobe" {
            "csi-livenessprobe".to_string()
        } else {
            last.to_string()
        }
    };
    let component = |key: &str, label: &str, default: &str| json!({"image": image_details(&d["csi"][key]["image"], &l.str_or(label, default), prefix, rename)});
    let toleration = |key: &str| json!({"key": key, "effect": "NoSchedule"});
    Ok(json!({
        "csi": {
            "attacher": component("attacher", "csi_attacher_tag", "v4.7.0"),
            "provisioner": component("provisioner", "csi_provisioner_tag", "v5.1.0"),
            "snapshotter": component("snapshotter", "csi_snapshotter_tag", "v8.1.0"),
            "resizer": component("resizer", "csi_resizer_tag", "v1.12.0"),
            "livenessprobe": component("livenessprobe", "csi_liveness_probe_tag", "v2.14.0"),
            "nodeDriverRegistrar": component("nodeDriverRegistrar", "csi_node_driver_registrar_tag", "v2.12.0"),
            "plugin": {
                "image": image_details(&d["csi"]["plugin"]["image"], &l.str_or("cinder_csi_plugin_tag", "v1.32.0"), prefix, rename),
                "volumes": [],
                "volumeMounts": [
                    {"name": "cloud-config", "mountPath": "/etc/kubernetes", "readOnly": true},
                    {"name": "cloud-config", "mountPath": "/etc/config", "readOnly": true},
                ],
                "controllerPlugin": {"tolerations": [
                    toleration("node-role.kubernetes.io/master"),
                    toleration("node-role.kubernetes.io/control-plane"),
                ]},
            },
        },
        "secret": {"enabled": true, "name": "cloud-config"},
        "storageClass": {"enabled": false},
        "clusterID": cluster.uuid.clone().unwrap_or_default(),
    }))
}

/// What the addon Secrets need from the cloud and configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AddonInputs {
    /// The public identity endpoint (`osc.url_for("identity", "public")`).
    pub public_auth_url: String,
    pub region_name: Option<String>,
    pub application_credential_id: String,
    pub application_credential_secret: String,
    /// `[drivers] verify_ca`.
    pub verify_ca: bool,
    /// `[drivers] openstack_ca_file`'s contents ("" when unset).
    pub openstack_ca: String,
    /// Cinder volume type names, in Cinder's order, and the default one.
    pub volume_types: Vec<String>,
    pub default_volume_type: String,
    /// The catalogue has `volumev3` or `block-storage`.
    pub block_storage_in_catalog: bool,
    /// The keystone-auth policy (`[kubernetes] keystone_auth_default_policy` with
    /// `$PROJECT_ID` replaced), or None for the built-in one.
    pub keystone_auth_policy: Option<Value>,
}

/// `generate_cloud_controller_manager_config`: the `cloud.conf` of `kube-system/cloud-config`.
pub fn cloud_conf(cluster: &Cluster, inputs: &AddonInputs) -> Result<String, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let provider = l.str_or("octavia_provider", "amphorav2");
    let method = match (provider.as_str(), l.get("octavia_lb_algorithm")) {
        ("amphora" | "amphorav2", None) => "ROUND_ROBIN".to_string(),
        ("ovn", None) => "SOURCE_IP_PORT".to_string(),
        ("ovn", Some(m)) if m != "SOURCE_IP_PORT" => {
            return Err(invalid_lb_algorithm(m));
        }
        (_, m) => m.map(str::to_string).unwrap_or_else(|| "None".into()),
    };
    Ok(format!(
        "[Global]\nauth-url={}\nregion={}\napplication-credential-id={}\n\
         application-credential-secret={}\ntls-insecure={}\n{}\n[LoadBalancer]\n\
         lb-provider={provider}\nlb-method={method}\ncreate-monitor={}\n",
        inputs.public_auth_url,
        inputs.region_name.clone().unwrap_or_else(|| "None".into()),
        inputs.application_credential_id,
        inputs.application_credential_secret,
        if inputs.verify_ca { "false" } else { "true" },
        if inputs.openstack_ca.is_empty() {
            ""
        } else {
            "ca-file=/etc/config/ca.crt"
        },
        l.str_or("octavia_lb_healthcheck", "True"),
    ))
}

pub(crate) fn invalid_lb_algorithm(m: &str) -> MagnumError {
    MagnumError::with_message(
        ErrorKind::Invalid,
        format!("Invalid value for octavia_lb_algorithm: {m}."),
    )
}

fn yaml(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_default()
}

/// `cloud-config-secret.yaml`: the workload cluster's `kube-system/cloud-config` Secret.
pub fn cloud_config_manifest(
    cluster: &Cluster,
    inputs: &AddonInputs,
) -> Result<String, MagnumError> {
    Ok(yaml(&json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "cloud-config", "namespace": "kube-system"},
        "stringData": {"cloud.conf": cloud_conf(cluster, inputs)?, "ca.crt": inputs.openstack_ca},
    })))
}

/// `get_keystone_auth_default_policy`'s built-in policy.
pub fn default_keystone_auth_policy(project_id: &str) -> Value {
    json!([{
        "resource": {
            "verbs": ["list"],
            "resources": ["pods", "services", "deployments", "pvc"],
            "version": "*",
            "namespace": "default",
        },
        "match": [
            {"type": "role", "values": ["member"]},
            {"type": "project", "values": [project_id]},
        ],
    }])
}

/// The Helm releases of the legacy Secret (`keystone-auth.yaml`; Cilium's `cilium.yaml`).
pub fn legacy_helm_releases(
    cluster: &Cluster,
    template: &ClusterTemplate,
    inputs: &AddonInputs,
) -> Result<Vec<HelmRelease>, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let mut out = Vec::new();
    if template.network_driver.as_deref() == Some("cilium") {
        out.push(HelmRelease {
            key: "cilium.yaml",
            chart: "cilium",
            release: "cilium".into(),
            namespace: "kube-system".into(),
            values: cilium_values(cluster)?,
            post: PostRender::Raw,
        });
    }
    if l.bool_or("keystone_auth_enabled", true)? {
        let url = &inputs.public_auth_url;
        let auth_url = if url.ends_with("/v3") {
            url.clone()
        } else {
            format!("{url}/v3")
        };
        let policy = inputs.keystone_auth_policy.clone().unwrap_or_else(|| {
            default_keystone_auth_policy(cluster.project_id.as_deref().unwrap_or(""))
        });
        out.push(HelmRelease {
            key: "keystone-auth.yaml",
            chart: "k8s-keystone-auth",
            release: "k8s-keystone-auth".into(),
            namespace: "kube-system".into(),
            values: json!({"conf": {
                "auth_url": auth_url,
                "ca_cert": inputs.openstack_ca,
                "policy": policy,
            }}),
            post: PostRender::Namespaced {
                repository: l.str_or("container_infra_prefix", ""),
            },
        });
    }
    Ok(out)
}

/// `cloud_provider_tag` default: by the `kube_tag` minor (`src/magnum.rs`; the table was
/// read back from magnum-cluster-api 0.38.2 for minors 1.21 to 1.37).
pub fn cloud_provider_tag(labels: &Labels<'_>) -> String {
    if let Some(t) = labels.get("cloud_provider_tag") {
        return t.to_string();
    }
    let kube = labels.str_or("kube_tag", "");
    let minor = kube
        .trim_start_matches('v')
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok());
    let tag = match minor {
        Some(22) => "v1.22.2",
        Some(23) => "v1.23.4",
        Some(24) => "v1.24.6",
        Some(25) => "v1.25.6",
        Some(26) => "v1.26.4",
        Some(27) => "v1.27.3",
        Some(28) => "v1.28.3",
        Some(29) => "v1.29.1",
        Some(30) => "v1.30.3",
        Some(31) => "v1.31.4",
        Some(32) => "v1.32.1",
        Some(33) => "v1.33.1",
        Some(34) => "v1.34.1",
        _ => "v1.35.0",
    };
    tag.to_string()
}

/// The Helm releases of `<stack_id>-cloud-provider`: the CCM, and Cinder CSI when enabled.
pub fn cloud_provider_helm_releases(
    cluster: &Cluster,
    inputs: &AddonInputs,
) -> Result<Vec<HelmRelease>, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let repo = l.str_or("container_infra_prefix", "");
    let image = get_image(
        "registry.k8s.io/provider-os/openstack-cloud-controller-manager",
        &repo,
    );
    let mut out = vec![HelmRelease {
        key: "cloud-controller-manager.yaml",
        chart: "openstack-cloud-controller-manager",
        release: "openstack-ccm".into(),
        namespace: "kube-system".into(),
        values: json!({
            "image": {"repository": image, "tag": cloud_provider_tag(&l)},
            "secret": {"create": false},
            "extraVolumes": [
                {"hostPath": {"path": "/etc/kubernetes/pki", "type": "Directory"}, "name": "k8s-certs"},
                {"hostPath": {"path": "/etc/ssl/certs", "type": "DirectoryOrCreate"}, "name": "ca-certs"},
            ],
            "extraVolumeMounts": [
                {"mountPath": "/etc/kubernetes/pki", "name": "k8s-certs", "readOnly": true},
                {"mountPath": "/etc/ssl/certs", "name": "ca-certs", "readOnly": true},
            ],
            "cluster": {"name": cluster.uuid.clone().unwrap_or_default()},
        }),
        post: PostRender::Raw,
    }];
    if cinder_enabled(cluster, inputs)? {
        out.push(HelmRelease {
            key: "cinder-csi.yaml",
            chart: "openstack-cinder-csi",
            release: "cinder-csi".into(),
            namespace: "kube-system".into(),
            values: cinder_csi_values(cluster)?,
            post: PostRender::Raw,
        });
    }
    Ok(out)
}

fn cinder_enabled(cluster: &Cluster, inputs: &AddonInputs) -> Result<bool, MagnumError> {
    Ok(
        Labels::new(cluster.labels.as_ref()).bool_or("cinder_csi_enabled", true)?
            && inputs.block_storage_in_catalog,
    )
}

/// A volume type's name as part of a Secret key: as it is when Kubernetes accepts it
/// (`[-._a-zA-Z0-9]+`), as magnum-cluster-api writes it; else its RFC 1123 form (a type named
/// `Slow HDD` makes magnum-cluster-api's Secret invalid and the create fail).
pub fn secret_key_part(name: &str) -> String {
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
    {
        name.to_string()
    } else {
        convert_to_rfc1123(name)
    }
}

/// `convert_to_rfc1123`: runs of non-alphanumerics become `-`, lower-cased.
pub fn convert_to_rfc1123(input: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in input.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    out
}

fn resource_set_secret(name: &str, data: Map<String, Value>) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "addons.cluster.x-k8s.io/resource-set",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "stringData": data,
    })
}

fn take_rendered(
    rendered: &BTreeMap<String, String>,
    release: &HelmRelease,
) -> Result<Value, MagnumError> {
    rendered.get(release.key).map(|s| json!(s)).ok_or_else(|| {
        MagnumError::with_message(
            ErrorKind::Invalid,
            format!("the {} chart was not rendered", release.chart),
        )
    })
}

/// `Secret <uuid>` (`LegacyClusterResourcesSecret`). `rendered` holds the Helm renderings
/// of [`legacy_helm_releases`], by key.
pub fn legacy_secret(
    cluster: &Cluster,
    template: &ClusterTemplate,
    inputs: &AddonInputs,
    rendered: &BTreeMap<String, String>,
) -> Result<Value, MagnumError> {
    let l = Labels::new(cluster.labels.as_ref());
    let uuid = cluster.uuid.clone().unwrap_or_default();
    let mut data = Map::new();
    for release in legacy_helm_releases(cluster, template, inputs)? {
        if release.key == "cilium.yaml" {
            data.insert(release.key.into(), take_rendered(rendered, &release)?);
        }
    }
    data.insert(
        "cloud-config-secret.yaml".into(),
        json!(cloud_config_manifest(cluster, inputs)?),
    );
    if template.network_driver.as_deref() == Some("calico") {
        data.insert(
            "calico.yml".into(),
            json!(calico_manifest(
                &l.str_or("calico_tag", DEFAULT_CALICO_TAG),
                &l.str_or("container_infra_prefix", "")
            )?),
        );
    }
    for release in legacy_helm_releases(cluster, template, inputs)? {
        if release.key != "cilium.yaml" {
            data.insert(release.key.into(), take_rendered(rendered, &release)?);
        }
    }
    Ok(resource_set_secret(&uuid, data))
}

/// `Secret <stack_id>-cloud-provider` (`CloudProviderClusterResourcesSecret`).
pub fn cloud_provider_secret(
    cluster: &Cluster,
    inputs: &AddonInputs,
    rendered: &BTreeMap<String, String>,
) -> Result<Value, MagnumError> {
    let stack_id = cluster.stack_id.clone().unwrap_or_default();
    let releases = cloud_provider_helm_releases(cluster, inputs)?;
    let mut data = Map::new();
    if let Some(ccm) = releases.first() {
        data.insert(ccm.key.into(), take_rendered(rendered, ccm)?);
    }
    data.insert(
        "cloud-config-secret.yaml".into(),
        json!(cloud_config_manifest(cluster, inputs)?),
    );
    if let Some(csi) = releases.get(1) {
        data.insert(csi.key.into(), take_rendered(rendered, csi)?);
        for vt in inputs.volume_types.iter().filter(|v| *v != "__DEFAULT__") {
            let annotations = if *vt == inputs.default_volume_type {
                json!({"storageclass.kubernetes.io/is-default-class": "true"})
            } else {
                json!({})
            };
            data.insert(
                format!("storageclass-block-{}.yaml", secret_key_part(vt)),
                json!(yaml(&json!({
                    "allowVolumeExpansion": true,
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"annotations": annotations, "name": format!("block-{}", convert_to_rfc1123(vt))},
                    "parameters": {"type": vt},
                    "provisioner": "cinder.csi.openstack.org",
                    "reclaimPolicy": "Delete",
                    "volumeBindingMode": "Immediate",
                }))),
            );
        }
    }
    Ok(resource_set_secret(
        &format!("{stack_id}-cloud-provider"),
        data,
    ))
}

/// The two ClusterResourceSets (`src/magnum.rs`): `<uuid>` (no strategy: CAPI's
/// `ApplyOnce`) and `<stack_id>-cloud-provider` (`Reconcile`), both selecting the `Cluster`
/// by its `cluster-uuid` label.
pub fn cluster_resource_sets(cluster_uuid: &str, stack_id: &str) -> [Value; 2] {
    let selector = json!({"matchLabels": {CLUSTER_UUID_LABEL: cluster_uuid}});
    let cloud_provider = format!("{stack_id}-cloud-provider");
    [
        json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1beta1",
            "kind": "ClusterResourceSet",
            "metadata": {"name": cluster_uuid, "namespace": NAMESPACE},
            "spec": {
                "clusterSelector": selector,
                "resources": [{"kind": "Secret", "name": cluster_uuid}],
            },
        }),
        json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1beta1",
            "kind": "ClusterResourceSet",
            "metadata": {"name": cloud_provider, "namespace": NAMESPACE},
            "spec": {
                "clusterSelector": selector,
                "resources": [{"kind": "Secret", "name": cloud_provider}],
                "strategy": "Reconcile",
            },
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_python_rendering_sets_namespaces_mirrors_images_and_reads_yaml11_modes() {
        let release = HelmRelease {
            key: "keystone-auth.yaml",
            chart: "k8s-keystone-auth",
            release: "k8s-keystone-auth".into(),
            namespace: "kube-system".into(),
            values: json!({}),
            post: PostRender::Namespaced {
                repository: "mirror.example/k8s".into(),
            },
        };
        let rendered = "---\n# Source: a\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n\
            ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n\
            ---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\nspec:\n  template:\n    spec:\n\
            \x20     containers:\n      - image: registry.k8s.io/provider-os/k8s-keystone-auth:v1.31.0\n\
            \x20     volumes:\n      - secret:\n          defaultMode: 0444\n          items:\n          - mode: 0600\n\
            \x20           path: \"0644\"\n---\n";
        let out = release.finish(rendered).unwrap();
        let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&out)
            .map(|d| Value::deserialize(d).unwrap())
            .collect();
        assert_eq!(docs.len(), 3, "{out}");
        assert_eq!(docs[0]["metadata"]["namespace"], "kube-system");
        assert!(docs[1]["metadata"].get("namespace").is_none());
        let spec = &docs[2]["spec"]["template"]["spec"];
        assert_eq!(
            spec["containers"][0]["image"],
            "mirror.example/k8s/k8s-keystone-auth:v1.31.0"
        );
        assert_eq!(spec["volumes"][0]["secret"]["defaultMode"], 292);
        assert_eq!(spec["volumes"][0]["secret"]["items"][0]["mode"], 384);
        // only file modes are read as octals
        assert_eq!(spec["volumes"][0]["secret"]["items"][0]["path"], "0644");
        // the Rust-side charts are kept as helm wrote them
        let raw = HelmRelease {
            post: PostRender::Raw,
            ..release
        };
        assert_eq!(raw.finish(rendered).unwrap(), rendered);
    }

    #[test]
    fn mirror_rewrites_as_image_utils() {
        assert_eq!(
            get_image("quay.io/calico/node:v3", ""),
            "quay.io/calico/node:v3"
        );
        assert_eq!(
            get_image("quay.io/calico/node:v3", "m.io/x"),
            "m.io/x/calico/node:v3"
        );
        assert_eq!(
            get_image("quay.io/cilium/cilium:v1", "m.io"),
            "m.io/cilium-cilium:v1"
        );
        assert_eq!(
            get_image("registry.k8s.io/pause:3.9", "m.io"),
            "m.io/pause:3.9"
        );
        assert_eq!(
            get_image("registry.k8s.io/sig-storage/livenessprobe:v2", "m.io"),
            "m.io/csi-livenessprobe:v2"
        );
    }

    #[test]
    fn every_calico_manifest_parses_and_unknown_tags_are_refused() {
        assert_eq!(calico_tags().count(), 15);
        let m = calico_manifest("v3.32.1", "mirror.example").unwrap();
        assert!(m.contains("mirror.example/calico/"));
        assert!(!m.contains("quay.io/calico/"));
        assert_eq!(
            calico_manifest("v9.9.9", "").unwrap_err().kind(),
            ErrorKind::InvalidParameterValue
        );
    }

    #[test]
    fn rfc1123_names() {
        assert_eq!(convert_to_rfc1123("Slow HDD"), "slow-hdd");
        assert_eq!(convert_to_rfc1123("a__b"), "a-b");
    }
}
