//! The ClusterClass's 30 patches (magnum-cluster-api's `src/features/*.rs`), in the order
//! magnum-cluster-api 0.38.2's ClusterClass lists them.
//!
//! Order is observable: CAPI applies the patches one after the other, so a patch appending to
//! a list needs an earlier one (or the base template) to have created it (`addEmptyLists`
//! before `etcdVolume`/`dockerVolume`), and of two patches setting the same field the later
//! one wins (`flatcar` after `containerdConfig` on the worker's `preKubeadmCommands`).
//! Upstream's order comes from the `inventory` crate and is unspecified; this one is the order
//! of the 0.38.2 wheel, pinned by the golden test.

use serde_json::{json, Value};

/// The machine deployment class every worker nodegroup uses.
pub const WORKER_CLASS: &str = "default-worker";

/// Which of the ClusterClass's templates a patch definition selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// the KubeadmControlPlaneTemplate (control plane)
    ControlPlane,
    /// the KubeadmConfigTemplate of `default-worker`
    WorkerBootstrap,
    /// the OpenStackClusterTemplate
    InfrastructureCluster,
    /// the OpenStackMachineTemplate of the control plane and of `default-worker`
    Machines,
    /// the OpenStackMachineTemplate of the control plane only
    ControlPlaneMachines,
    /// the OpenStackMachineTemplate of `default-worker` only
    WorkerMachines,
}

impl Target {
    /// `(apiVersion, kind)` of the template this target selects.
    pub fn template(self) -> (&'static str, &'static str) {
        match self {
            Target::ControlPlane => (
                "controlplane.cluster.x-k8s.io/v1beta1",
                "KubeadmControlPlaneTemplate",
            ),
            Target::WorkerBootstrap => (
                "bootstrap.cluster.x-k8s.io/v1beta1",
                "KubeadmConfigTemplate",
            ),
            Target::InfrastructureCluster => (
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "OpenStackClusterTemplate",
            ),
            Target::Machines | Target::ControlPlaneMachines | Target::WorkerMachines => (
                "infrastructure.cluster.x-k8s.io/v1beta1",
                "OpenStackMachineTemplate",
            ),
        }
    }

    /// Whether the definition applies to the control plane's / a worker's copy of a template.
    pub fn control_plane(self) -> bool {
        matches!(
            self,
            Target::ControlPlane | Target::Machines | Target::ControlPlaneMachines
        )
    }

    pub fn worker(self) -> bool {
        matches!(
            self,
            Target::WorkerBootstrap | Target::Machines | Target::WorkerMachines
        )
    }

    /// The definition's `selector`.
    pub fn selector(self) -> Value {
        let (api_version, kind) = self.template();
        let workers = json!({"names": [WORKER_CLASS]});
        let match_resources = match self {
            Target::ControlPlane | Target::ControlPlaneMachines => json!({"controlPlane": true}),
            Target::WorkerBootstrap | Target::WorkerMachines => {
                json!({"machineDeploymentClass": workers})
            }
            Target::InfrastructureCluster => json!({"infrastructureCluster": true}),
            Target::Machines => {
                json!({"controlPlane": true, "machineDeploymentClass": workers})
            }
        };
        json!({"apiVersion": api_version, "kind": kind, "matchResources": match_resources})
    }
}

/// One JSON patch operation of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// `add` or `replace`
    pub op: &'static str,
    /// a JSON pointer into the template object (`/spec/template/spec/...`)
    pub path: String,
    pub value: OpValue,
}

/// Where an operation's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum OpValue {
    /// a literal value
    Value(Value),
    /// `valueFrom.variable`: a variable, or a field of one (`auditLog.maxAge`)
    Variable(&'static str),
    /// `valueFrom.template`: a Go template over the variables whose output is read as YAML
    Template(String),
}

/// One patch definition: the templates it selects and its operations.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub target: Target,
    pub ops: Vec<Op>,
}

/// One entry of the ClusterClass's `spec.patches`.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    pub name: &'static str,
    /// a Go template that renders `true` when the patch applies; `None`: always
    pub enabled_if: Option<&'static str>,
    pub definitions: Vec<Definition>,
}

const SPEC: &str = "/spec/template/spec";

fn path(rest: &str) -> String {
    format!("{SPEC}/{rest}")
}

/// `kubeadmConfigSpec/...` of the KubeadmControlPlaneTemplate.
fn kcs(rest: &str) -> String {
    path(&format!("kubeadmConfigSpec/{rest}"))
}

/// `kubeadmConfigSpec/clusterConfiguration/apiServer/extraArgs/<arg>`.
fn api_server_arg(arg: &str) -> String {
    kcs(&format!("clusterConfiguration/apiServer/extraArgs/{arg}"))
}

fn add(path: String, value: Value) -> Op {
    Op {
        op: "add",
        path,
        value: OpValue::Value(value),
    }
}

fn add_var(path: String, variable: &'static str) -> Op {
    Op {
        op: "add",
        path,
        value: OpValue::Variable(variable),
    }
}

fn add_tpl(path: String, template: impl Into<String>) -> Op {
    Op {
        op: "add",
        path,
        value: OpValue::Template(template.into()),
    }
}

fn replace(path: String, value: Value) -> Op {
    Op {
        op: "replace",
        path,
        value: OpValue::Value(value),
    }
}

fn replace_var(path: String, variable: &'static str) -> Op {
    Op {
        op: "replace",
        path,
        value: OpValue::Variable(variable),
    }
}

fn def(target: Target, ops: Vec<Op>) -> Definition {
    Definition { target, ops }
}

fn patch(name: &'static str, enabled_if: Option<&'static str>, defs: Vec<Definition>) -> Patch {
    Patch {
        name,
        enabled_if,
        definitions: defs,
    }
}

/// A cloud-init file entry (as the YAML a template renders) with base64 content from a
/// variable.
fn file_from_variable(variable: &str, file: &str) -> String {
    format!(
        "content: '{{{{ .{variable} }}}}'\nencoding: base64\nowner: root:root\npath: {file}\npermissions: '0644'\n"
    )
}

/// The template of the `device` of a partition or file system on the `letter` disk (`b`:
/// second, `c`: third) on the image's disk bus.
fn disk(letter: char) -> String {
    format!(
        "device: '{{{{ if eq .hardwareDiskBus \"scsi\" }}}}/dev/sd{{{{ else }}}}/dev/vd{{{{end}}}}{letter}'\n"
    )
}

fn partition(letter: char) -> String {
    format!(
        "{}layout: true\noverwrite: false\ntableType: gpt\n",
        disk(letter)
    )
}

fn filesystem(letter: char, label: &str) -> String {
    format!(
        "{}extraOpts:\n- -F\n- -E\n- lazy_itable_init=1,lazy_journal_init=1\nfilesystem: ext4\nlabel: {label}\n",
        disk(letter)
    )
}

/// An additional Cinder volume of the machines (`etcd`, `docker`).
fn block_device(name: &str, size_var: &str, type_var: &str) -> String {
    format!(
        "name: {name}\nsizeGiB: {{{{ .{size_var} }}}}\nstorage:\n    type: Volume\n    volume:\n        type: \"{{{{ .{type_var} }}}}\"\n        {{{{- if .availabilityZone }}}}\n        availabilityZone:\n          name: \"{{{{ .availabilityZone }}}}\"\n        {{{{- end }}}}\n"
    )
}

/// `keystoneAuth`: kube-apiserver authenticates and authorizes through k8s-keystone-auth's
/// webhook, by kustomizing its static pod manifest after kubeadm wrote it.
fn keystone_auth() -> Patch {
    let kustomization = concat!(
        "resources:\n",
        "- kube-apiserver.yaml\n",
        "patches:\n",
        "- target:\n",
        "    group: ''\n",
        "    version: v1\n",
        "    kind: Pod\n",
        "    name: kube-apiserver\n",
        "  patch: |\n",
        "    - op: add\n",
        "      path: /spec/containers/0/command/-\n",
        "      value: --authentication-token-webhook-config-file=/etc/kubernetes/webhooks/webhookconfig.yaml\n",
        "    - op: add\n",
        "      path: /spec/containers/0/command/-\n",
        "      value: --authorization-webhook-config-file=/etc/kubernetes/webhooks/webhookconfig.yaml\n",
        "    - op: add\n",
        "      path: /spec/containers/0/command/-\n",
        "      value: --authorization-mode=Webhook\n",
    );
    let dir = "/etc/kubernetes/keystone-kustomization";
    patch(
        "keystoneAuth",
        Some("{{ if .enableKeystoneAuth }}true{{end}}"),
        vec![def(
            Target::ControlPlane,
            vec![
                add(
                    kcs("files/-"),
                    json!({
                        "path": format!("{dir}/kustomization.yml"),
                        "owner": "root:root",
                        "permissions": "0644",
                        "content": kustomization,
                    }),
                ),
                add(kcs("preKubeadmCommands/-"), json!(format!("mkdir -p {dir}"))),
                add(
                    kcs("postKubeadmCommands/-"),
                    json!(format!(
                        "test -f {dir}/kube-apiserver.yaml || cp /etc/kubernetes/manifests/kube-apiserver.yaml {dir}/kube-apiserver.yaml"
                    )),
                ),
                add(
                    kcs("postKubeadmCommands/-"),
                    json!(format!(
                        "kubectl kustomize {dir} -o /etc/kubernetes/manifests/kube-apiserver.yaml"
                    )),
                ),
            ],
        )],
    )
}

fn ssh_key_name() -> Patch {
    patch(
        "sshKeyName",
        None,
        vec![def(
            Target::Machines,
            vec![add_var(path("sshKeyName"), "sshKeyName")],
        )],
    )
}

fn images() -> Patch {
    patch(
        "images",
        None,
        vec![def(
            Target::Machines,
            vec![add_var(path("image/id"), "imageUUID")],
        )],
    )
}

fn admission_control_list() -> Patch {
    patch(
        "admissionControlList",
        Some("{{ if .admissionControlList }}true{{end}}"),
        vec![def(
            Target::ControlPlane,
            vec![add_var(
                api_server_arg("enable-admission-plugins"),
                "admissionControlList",
            )],
        )],
    )
}

fn openid_connect() -> Patch {
    let args = [
        ("oidc-issuer-url", "openidConnect.issuerUrl"),
        ("oidc-client-id", "openidConnect.clientId"),
        ("oidc-username-claim", "openidConnect.usernameClaim"),
        ("oidc-username-prefix", "openidConnect.usernamePrefix"),
        ("oidc-groups-claim", "openidConnect.groupsClaim"),
        ("oidc-groups-prefix", "openidConnect.groupsPrefix"),
    ];
    patch(
        "openidConnect",
        Some("{{ if .openidConnect.issuerUrl }}true{{end}}"),
        vec![def(
            Target::ControlPlane,
            args.iter()
                .map(|(arg, var)| add_var(api_server_arg(arg), var))
                .collect(),
        )],
    )
}

/// `TLSCipherSuites`: cipher suites of kube-apiserver and the kubelets, and the API server
/// certificate's SANs (the `Cluster`'s in-cluster names plus `apiServerSANs`, which is a
/// ready-made YAML list).
fn tls_cipher_suites() -> Patch {
    let cluster = "{{ .builtin.cluster.name }}";
    let ns = "{{ .builtin.cluster.namespace }}";
    // "# noqa: E501" is a YAML comment upstream's template carries (from its Python days)
    let sans = format!(
        "- {cluster}\n- {cluster}.{ns}\n- {cluster}.{ns}.svc\n- {cluster}.{ns}.svc.cluster.local # noqa: E501\n{{{{ .apiServerSANs }}}}"
    );
    patch(
        "TLSCipherSuites",
        None,
        vec![
            def(
                Target::ControlPlane,
                vec![
                    add_var(
                        api_server_arg("tls-cipher-suites"),
                        "apiServerTLSCipherSuites",
                    ),
                    add_var(
                        kcs(
                            "initConfiguration/nodeRegistration/kubeletExtraArgs/tls-cipher-suites",
                        ),
                        "kubeletTLSCipherSuites",
                    ),
                    add_var(
                        kcs(
                            "joinConfiguration/nodeRegistration/kubeletExtraArgs/tls-cipher-suites",
                        ),
                        "kubeletTLSCipherSuites",
                    ),
                    add_tpl(kcs("clusterConfiguration/apiServer/certSANs"), sans),
                ],
            ),
            def(
                Target::WorkerBootstrap,
                vec![add_var(
                    path("joinConfiguration/nodeRegistration/kubeletExtraArgs/tls-cipher-suites"),
                    "kubeletTLSCipherSuites",
                )],
            ),
        ],
    )
}

fn disable_api_server_floating_ip() -> Patch {
    patch(
        "disableAPIServerFloatingIP",
        Some("{{ if .disableAPIServerFloatingIPManaged }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_var(
                path("disableAPIServerFloatingIP"),
                "disableAPIServerFloatingIP",
            )],
        )],
    )
}

fn api_server_floating_ip() -> Patch {
    patch(
        "apiServerFloatingIP",
        Some("{{ if ne .apiServerFloatingIP \"\" }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_var(path("apiServerFloatingIP"), "apiServerFloatingIP")],
        )],
    )
}

/// `containerdConfig`: containerd's configuration file, then restart containerd before
/// kubeadm runs. On workers this *sets* `preKubeadmCommands` (the base template has none).
fn containerd_config() -> Patch {
    let file = file_from_variable("containerdConfig", "/etc/containerd/config.toml");
    patch(
        "containerdConfig",
        None,
        vec![
            def(
                Target::ControlPlane,
                vec![
                    add_tpl(kcs("files/-"), file.clone()),
                    add(
                        kcs("preKubeadmCommands/-"),
                        json!("systemctl daemon-reload && systemctl restart containerd"),
                    ),
                ],
            ),
            def(
                Target::WorkerBootstrap,
                vec![
                    add_tpl(path("files/-"), file),
                    add(
                        path("preKubeadmCommands"),
                        json!(["systemctl daemon-reload", "systemctl restart containerd"]),
                    ),
                ],
            ),
        ],
    )
}

fn systemd_proxy_config() -> Patch {
    let file = file_from_variable(
        "systemdProxyConfig",
        "/etc/systemd/system/containerd.service.d/proxy.conf",
    );
    patch(
        "systemdProxyConfig",
        Some("{{ if ne .systemdProxyConfig \"\" }}true{{end}}"),
        vec![
            def(
                Target::ControlPlane,
                vec![add_tpl(kcs("files/-"), file.clone())],
            ),
            def(
                Target::WorkerBootstrap,
                vec![add_tpl(path("files/-"), file)],
            ),
        ],
    )
}

fn apt_proxy_config() -> Patch {
    let file = file_from_variable("aptProxyConfig", "/etc/apt/apt.conf.d/90proxy");
    patch(
        "aptProxyConfig",
        Some("{{ if and (or (eq .operatingSystem \"ubuntu\") (eq .operatingSystem \"debian\")) (ne .aptProxyConfig \"\") }}true{{end}}"),
        vec![
            def(Target::ControlPlane, vec![add_tpl(kcs("files/-"), file.clone())]),
            def(Target::WorkerBootstrap, vec![add_tpl(path("files/-"), file)]),
        ],
    )
}

/// `flatcar`: Ignition instead of cloud-config; the node name is filled in at boot from
/// `hostname -s`, and containerd is restarted once. On workers this *sets*
/// `preKubeadmCommands`, after (and so instead of) `containerdConfig`'s.
fn flatcar() -> Patch {
    let node_name = "__REPLACE_NODE_NAME__";
    // one list entry holding two lines, as upstream has it
    let pre_kubeadm = format!(
        "bash -c \"sed -i 's/{node_name}/$(hostname -s)/g' /etc/kubeadm.yml\"\nbash -c \"test -f /tmp/containerd-bootstrap || (touch /tmp/containerd-bootstrap && systemctl daemon-reload && systemctl restart containerd)\"\n"
    );
    let ignition = json!({"containerLinuxConfig": {"additionalConfig": concat!(
        "ignition:\n",
        "  version: 3.5.0\n",
        "systemd:\n",
        "  units:\n",
        "  - contents: null\n",
        "    enabled: true\n",
        "    mask: null\n",
        "    name: coreos-metadata-sshkeys@.service\n",
        "  - contents: null\n",
        "    dropins:\n",
        "    - contents: |\n",
        "        [Unit]\n",
        "        Requires=containerd.service coreos-metadata.service\n",
        "        After=containerd.service coreos-metadata.service\n",
        "        [Service]\n",
        "        EnvironmentFile=/run/metadata/flatcar\n",
        "      name: 10-flatcar.conf\n",
        "    enabled: true\n",
        "    mask: null\n",
        "    name: kubeadm.service\n",
    )}});
    patch(
        "flatcar",
        Some("{{ if eq .operatingSystem \"flatcar\" }}true{{end}}"),
        vec![
            def(
                Target::ControlPlane,
                vec![
                    add(kcs("preKubeadmCommands/-"), json!(pre_kubeadm)),
                    replace(kcs("format"), json!("ignition")),
                    add(kcs("ignition"), ignition.clone()),
                    replace(
                        kcs("initConfiguration/nodeRegistration/name"),
                        json!(node_name),
                    ),
                    replace(
                        kcs("joinConfiguration/nodeRegistration/name"),
                        json!(node_name),
                    ),
                ],
            ),
            def(
                Target::WorkerBootstrap,
                vec![
                    add(path("preKubeadmCommands"), json!([pre_kubeadm])),
                    add(path("format"), json!("ignition")),
                    add(path("ignition"), ignition),
                    replace(
                        path("joinConfiguration/nodeRegistration/name"),
                        json!(node_name),
                    ),
                ],
            ),
        ],
    )
}

fn image_repository() -> Patch {
    patch(
        "imageRepository",
        Some("{{ if ne .imageRepository \"\" }}true{{end}}"),
        vec![
            def(
                Target::ControlPlane,
                vec![add_var(
                    kcs("clusterConfiguration/imageRepository"),
                    "imageRepository",
                )],
            ),
            def(
                Target::WorkerBootstrap,
                vec![add_tpl(
                    path("clusterConfiguration"),
                    "imageRepository: '{{ .imageRepository }}'\n",
                )],
            ),
        ],
    )
}

fn server_group_id() -> Patch {
    patch(
        "serverGroupId",
        None,
        vec![def(
            Target::Machines,
            vec![
                add_tpl(path("serverGroup"), "id: '{{ .serverGroupId }}'\n"),
                add_tpl(
                    path("schedulerHintAdditionalProperties"),
                    "- name: different_failure_domain\n  value:\n    type: Bool\n    bool: {{ .isServerGroupDiffFailureDomain }}",
                ),
            ],
        )],
    )
}

fn boot_volume() -> Patch {
    patch(
        "bootVolume",
        Some("{{ if gt .bootVolume.size 0.0 }}true{{end}}"),
        vec![def(
            Target::Machines,
            vec![add_tpl(
                path("rootVolume"),
                "type: {{ .bootVolume.type }}\nsizeGiB: {{ .bootVolume.size }}\n{{- if .bootVolumeAvailabilityZone }}\navailabilityZone:\n  name: \"{{ .bootVolumeAvailabilityZone }}\"\n{{- end }}\n",
            )],
        )],
    )
}

fn new_network_config() -> Patch {
    patch(
        "newNetworkConfig",
        Some("{{ if eq .fixedNetworkId \"\" }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_tpl(
                path("managedSubnets"),
                "- cidr: {{ .nodeCidr }}\n  dnsNameservers:\n  {{- range .dnsNameservers }}\n    - {{ . }}\n  {{- end }}\n",
            )],
        )],
    )
}

fn existing_fixed_network_id_config() -> Patch {
    patch(
        "existingFixedNetworkIdConfig",
        Some("{{ if ne .fixedNetworkId \"\" }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_tpl(path("network"), "id: '{{ .fixedNetworkId }}'\n")],
        )],
    )
}

fn existing_fixed_subnet_id_config() -> Patch {
    patch(
        "existingFixedSubnetIdConfig",
        Some("{{ if ne .fixedSubnetId \"\" }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_tpl(path("subnets"), "- id: '{{ .fixedSubnetId }}'\n")],
        )],
    )
}

/// `addEmptyLists`: the lists the volume patches append to.
fn add_empty_lists() -> Patch {
    let disk_setup = json!({"partitions": [], "filesystems": []});
    patch(
        "addEmptyLists",
        Some("{{ if or .enableEtcdVolume .enableDockerVolume }}true{{ end }}"),
        vec![
            def(
                Target::Machines,
                vec![add(path("additionalBlockDevices"), json!([]))],
            ),
            def(
                Target::ControlPlane,
                vec![
                    add(kcs("mounts"), json!([])),
                    add(kcs("diskSetup"), disk_setup.clone()),
                ],
            ),
            def(
                Target::WorkerBootstrap,
                vec![
                    add(path("mounts"), json!([])),
                    add(path("diskSetup"), disk_setup),
                ],
            ),
        ],
    )
}

/// `etcdVolume`: a Cinder volume for etcd on the control plane, partitioned, formatted and
/// mounted on `/var/lib/etcd`.
fn etcd_volume() -> Patch {
    patch(
        "etcdVolume",
        Some("{{ if .enableEtcdVolume }}true{{ end }}"),
        vec![
            def(
                Target::ControlPlaneMachines,
                vec![add_tpl(
                    path("additionalBlockDevices/-"),
                    block_device("etcd", "etcdVolumeSize", "etcdVolumeType"),
                )],
            ),
            def(
                Target::ControlPlane,
                vec![
                    add_tpl(kcs("diskSetup/partitions/-"), partition('b')),
                    add_tpl(kcs("diskSetup/filesystems/-"), filesystem('b', "etcd_disk")),
                    add(kcs("mounts/-"), json!(["LABEL=etcd_disk", "/var/lib/etcd"])),
                ],
            ),
        ],
    )
}

/// `dockerVolume`: a Cinder volume for containerd's data on every machine; the control
/// plane's partition and file system come from the two patches after it (second or third
/// disk, depending on the etcd volume).
fn docker_volume() -> Patch {
    let mount = json!(["LABEL=docker_disk", "/var/lib/containerd"]);
    patch(
        "dockerVolume",
        Some("{{ if .enableDockerVolume }}true{{ end }}"),
        vec![
            def(
                Target::Machines,
                vec![add_tpl(
                    path("additionalBlockDevices/-"),
                    block_device("docker", "dockerVolumeSize", "dockerVolumeType"),
                )],
            ),
            def(
                Target::ControlPlane,
                vec![add(kcs("mounts/-"), mount.clone())],
            ),
            def(
                Target::WorkerBootstrap,
                vec![
                    add(path("mounts/-"), mount),
                    add_tpl(path("diskSetup/partitions/-"), partition('b')),
                    add_tpl(
                        path("diskSetup/filesystems/-"),
                        filesystem('b', "docker_disk"),
                    ),
                ],
            ),
        ],
    )
}

fn docker_disk_for_control_plane(
    name: &'static str,
    enabled_if: &'static str,
    letter: char,
) -> Patch {
    patch(
        name,
        Some(enabled_if),
        vec![def(
            Target::ControlPlane,
            vec![
                add_tpl(kcs("diskSetup/partitions/-"), partition(letter)),
                add_tpl(
                    kcs("diskSetup/filesystems/-"),
                    filesystem(letter, "docker_disk"),
                ),
            ],
        )],
    )
}

fn flavors() -> Patch {
    patch(
        "flavors",
        None,
        vec![
            def(
                Target::ControlPlaneMachines,
                vec![add_var(path("flavor"), "controlPlaneFlavor")],
            ),
            def(
                Target::WorkerMachines,
                vec![add_var(path("flavor"), "flavor")],
            ),
        ],
    )
}

fn cluster_identity_ref_name() -> Patch {
    patch(
        "clusterIdentityRefName",
        None,
        vec![
            def(
                Target::Machines,
                vec![replace_var(
                    path("identityRef/name"),
                    "clusterIdentityRefName",
                )],
            ),
            def(
                Target::InfrastructureCluster,
                vec![add_var(path("identityRef/name"), "clusterIdentityRefName")],
            ),
        ],
    )
}

/// `auditLog`: kube-apiserver's audit log with the base template's policy file.
fn audit_log() -> Patch {
    let volume = |name: &str, host: &str, mount: &str| json!({"name": name, "hostPath": host, "mountPath": mount});
    patch(
        "auditLog",
        Some("{{ if .auditLog.enabled }}true{{end}}"),
        vec![def(
            Target::ControlPlane,
            vec![
                add(
                    api_server_arg("audit-log-path"),
                    json!("/var/log/audit/kube-apiserver-audit.log"),
                ),
                add_var(api_server_arg("audit-log-maxage"), "auditLog.maxAge"),
                add_var(api_server_arg("audit-log-maxbackup"), "auditLog.maxBackup"),
                add_var(api_server_arg("audit-log-maxsize"), "auditLog.maxSize"),
                add(
                    api_server_arg("audit-policy-file"),
                    json!("/etc/kubernetes/audit-policy/apiserver-audit-policy.yaml"),
                ),
                add(
                    kcs("clusterConfiguration/apiServer/extraVolumes/-"),
                    volume(
                        "audit-policy",
                        "/etc/kubernetes/audit-policy",
                        "/etc/kubernetes/audit-policy",
                    ),
                ),
                add(
                    kcs("clusterConfiguration/apiServer/extraVolumes/-"),
                    volume("audit-logs", "/var/log/kubernetes/audit", "/var/log/audit"),
                ),
            ],
        )],
    )
}

fn control_plane_availability_zones() -> Patch {
    patch(
        "controlPlaneAvailabilityZones",
        Some("{{ if ne (index .controlPlaneAvailabilityZones 0) \"\" }}true{{end}}"),
        vec![def(
            Target::InfrastructureCluster,
            vec![add_var(
                path("controlPlaneAvailabilityZones"),
                "controlPlaneAvailabilityZones",
            )],
        )],
    )
}

fn api_server_load_balancer() -> Patch {
    patch(
        "apiServerLoadBalancer",
        None,
        vec![def(
            Target::InfrastructureCluster,
            vec![add_var(
                path("apiServerLoadBalancer"),
                "apiServerLoadBalancer",
            )],
        )],
    )
}

fn external_network_id() -> Patch {
    patch(
        "externalNetworkId",
        None,
        vec![def(
            Target::InfrastructureCluster,
            vec![add_tpl(
                path("externalNetwork"),
                "id: '{{ .externalNetworkId }}'\n",
            )],
        )],
    )
}

/// `cloudProvider`: kube-apiserver's `--cloud-provider=external`, which Kubernetes 1.33
/// removed.
fn cloud_provider() -> Patch {
    patch(
        "cloudProvider",
        Some("{{ semverCompare \"<1.33.0\" .builtin.controlPlane.version }}"),
        vec![def(
            Target::ControlPlane,
            vec![add(api_server_arg("cloud-provider"), json!("external"))],
        )],
    )
}

/// The 30 patches, in order.
pub fn patches() -> Vec<Patch> {
    vec![
        keystone_auth(),
        ssh_key_name(),
        images(),
        admission_control_list(),
        openid_connect(),
        tls_cipher_suites(),
        disable_api_server_floating_ip(),
        api_server_floating_ip(),
        containerd_config(),
        systemd_proxy_config(),
        apt_proxy_config(),
        flatcar(),
        image_repository(),
        server_group_id(),
        boot_volume(),
        new_network_config(),
        existing_fixed_network_id_config(),
        existing_fixed_subnet_id_config(),
        add_empty_lists(),
        etcd_volume(),
        docker_volume(),
        docker_disk_for_control_plane(
            "etcdAndDockerVolumeForControlPlane",
            "{{ if and .enableEtcdVolume .enableDockerVolume }}true{{ end }}",
            'c',
        ),
        docker_disk_for_control_plane(
            "onlyDockerVolumeForControlPlane",
            "{{ if and .enableDockerVolume (not .enableEtcdVolume) }}true{{ end }}",
            'b',
        ),
        flavors(),
        cluster_identity_ref_name(),
        audit_log(),
        control_plane_availability_zones(),
        api_server_load_balancer(),
        external_network_id(),
        cloud_provider(),
    ]
}

impl Op {
    pub fn to_json(&self) -> Value {
        let mut op = json!({"op": self.op, "path": self.path});
        match &self.value {
            OpValue::Value(v) => op["value"] = v.clone(),
            OpValue::Variable(name) => op["valueFrom"] = json!({"variable": name}),
            OpValue::Template(t) => op["valueFrom"] = json!({"template": t}),
        }
        op
    }
}

impl Patch {
    /// The patch as an entry of the ClusterClass's `spec.patches` (v1beta1).
    pub fn to_json(&self) -> Value {
        let mut p = json!({
            "name": self.name,
            "definitions": self.definitions.iter().map(|d| json!({
                "selector": d.target.selector(),
                "jsonPatches": d.ops.iter().map(Op::to_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        if let Some(cond) = self.enabled_if {
            p["enabledIf"] = json!(cond);
        }
        p
    }
}

/// `spec.patches` of the ClusterClass.
pub fn patches_json() -> Value {
    Value::Array(patches().iter().map(Patch::to_json).collect())
}
