//! Unit tests of the ClusterClass set: names, references, the patches against the variables,
//! and the patches applied offline to the base templates (what CAPI's topology controller
//! does with them, minus the Go templates).

use super::patches::{patches, OpValue, Patch, Target};
use super::variables::{variable, VarType, VARIABLES};
use super::*;
use std::collections::BTreeSet;

#[test]
fn the_name_is_magnum_dash_version_and_a_valid_object_name() {
    assert_eq!(cluster_class_name(), "magnum-v0.38.2");
    assert_eq!(cluster_class_name_for("v1.2.3"), "magnum-v1.2.3");
    // RFC 1123 subdomain, as Kubernetes requires of these names
    let name = cluster_class_name();
    assert!(name.len() <= 253);
    assert!(name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'));
    assert!(name.starts_with(|c: char| c.is_ascii_alphanumeric()));
    assert!(name.ends_with(|c: char| c.is_ascii_alphanumeric()));
}

#[test]
fn objects_come_in_apply_order_with_their_api_versions() {
    let objs = objects();
    let kinds: Vec<(String, String)> = objs
        .iter()
        .map(|o| {
            (
                o["apiVersion"].as_str().unwrap_or_default().to_string(),
                o["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want = [
        ("v1", "Namespace"),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackClusterTemplate",
        ),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackMachineTemplate",
        ),
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlaneTemplate",
        ),
        (
            "bootstrap.cluster.x-k8s.io/v1beta1",
            "KubeadmConfigTemplate",
        ),
        ("cluster.x-k8s.io/v1beta1", "ClusterClass"),
    ];
    assert_eq!(
        kinds,
        want.iter()
            .map(|(a, k)| (a.to_string(), k.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(objs[0]["metadata"], json!({"name": "magnum-system"}));
    for o in &objs[1..] {
        assert_eq!(
            o["metadata"],
            json!({"name": "magnum-v0.38.2", "namespace": "magnum-system"})
        );
    }
}

#[test]
fn every_object_has_its_api_resource() {
    for o in objects() {
        let Some(ar) = api_resource(&o) else {
            panic!("{o}")
        };
        assert_eq!(ar.api_version, o["apiVersion"]);
        assert_eq!(ar.kind, o["kind"]);
        assert_eq!(
            ar.plural,
            format!("{}s", ar.kind.to_lowercase()).replace("sss", "sses")
        );
    }
    let ns = api_resource(&namespace());
    assert_eq!(
        ns.map(|r| (r.group, r.version)),
        Some((String::new(), "v1".into()))
    );
    assert!(api_resource(&json!({"apiVersion": "v1", "kind": "Secret"})).is_none());
}

#[test]
fn the_class_refers_to_its_four_templates() {
    let set = ClusterClassSet::for_version("vX");
    let spec = &set.cluster_class["spec"];
    let r = |t: &Value| {
        json!({
            "apiVersion": t["apiVersion"], "kind": t["kind"],
            "name": "magnum-vX", "namespace": "magnum-system",
        })
    };
    assert_eq!(
        spec["infrastructure"]["ref"],
        r(&set.openstack_cluster_template)
    );
    assert_eq!(
        spec["controlPlane"]["ref"],
        r(&set.kubeadm_control_plane_template)
    );
    assert_eq!(
        spec["controlPlane"]["machineInfrastructure"]["ref"],
        r(&set.openstack_machine_template)
    );
    let md = &spec["workers"]["machineDeployments"][0];
    assert_eq!(md["class"], "default-worker");
    assert_eq!(
        md["template"]["bootstrap"]["ref"],
        r(&set.kubeadm_config_template)
    );
    assert_eq!(
        md["template"]["infrastructure"]["ref"],
        r(&set.openstack_machine_template)
    );
    assert_eq!(spec["variables"].as_array().map(Vec::len), Some(39));
    assert_eq!(spec["patches"].as_array().map(Vec::len), Some(30));
    for part in [&spec["controlPlane"], md] {
        assert_eq!(part["nodeVolumeDetachTimeout"], "5m0s");
        assert_eq!(part["machineHealthCheck"]["maxUnhealthy"], "80%");
    }
}

#[test]
fn patch_order_is_pinned() {
    let names: Vec<&str> = patches().iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "keystoneAuth",
            "sshKeyName",
            "images",
            "admissionControlList",
            "openidConnect",
            "TLSCipherSuites",
            "disableAPIServerFloatingIP",
            "apiServerFloatingIP",
            "containerdConfig",
            "systemdProxyConfig",
            "aptProxyConfig",
            "flatcar",
            "imageRepository",
            "serverGroupId",
            "bootVolume",
            "newNetworkConfig",
            "existingFixedNetworkIdConfig",
            "existingFixedSubnetIdConfig",
            "addEmptyLists",
            "etcdVolume",
            "dockerVolume",
            "etcdAndDockerVolumeForControlPlane",
            "onlyDockerVolumeForControlPlane",
            "flavors",
            "clusterIdentityRefName",
            "auditLog",
            "controlPlaneAvailabilityZones",
            "apiServerLoadBalancer",
            "externalNetworkId",
            "cloudProvider",
        ]
    );
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len());
}

/// The variables a Go template refers to (`.name` or `.name.field` inside `{{ }}`), without
/// CAPI's `.builtin` ones.
fn template_variables(template: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for action in template.split("{{").skip(1) {
        let action = action.split("}}").next().unwrap_or_default();
        let mut rest = action;
        while let Some(i) = rest.find('.') {
            rest = &rest[i + 1..];
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // a number's decimal point ("0.0") or the range element ("{{ . }}")
            let after_digit = action.len() > rest.len() + 1
                && action.as_bytes()[action.len() - rest.len() - 2].is_ascii_digit();
            if !ident.is_empty() && !after_digit && ident != "builtin" {
                out.insert(ident.clone());
            }
            // skip the rest of a dotted path (`.openidConnect.issuerUrl`, `.builtin.cluster`)
            let skip = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            rest = &rest[skip..];
        }
    }
    out
}

/// Every variable a patch reads, from `enabledIf`, `valueFrom.variable` and templates.
fn patch_variables(p: &Patch) -> BTreeSet<String> {
    let mut out = p.enabled_if.map(template_variables).unwrap_or_default();
    for d in &p.definitions {
        for op in &d.ops {
            match &op.value {
                OpValue::Variable(v) => {
                    out.insert(v.split('.').next().unwrap_or_default().to_string());
                }
                OpValue::Template(t) => out.extend(template_variables(t)),
                OpValue::Value(_) => {}
            }
        }
    }
    out
}

#[test]
fn template_variable_scan_works() {
    assert_eq!(
        template_variables("{{ if gt .bootVolume.size 0.0 }}true{{end}}"),
        ["bootVolume".to_string()].into()
    );
    assert_eq!(
        template_variables("- {{ .builtin.cluster.name }}\n{{- range .dnsNameservers }} {{ . }}"),
        ["dnsNameservers".to_string()].into()
    );
}

#[test]
fn patches_read_only_class_variables_and_every_variable_is_read() {
    let mut used = BTreeSet::new();
    for p in patches() {
        for v in patch_variables(&p) {
            assert!(
                variable(&v).is_some(),
                "patch {} reads an undeclared variable {v}",
                p.name
            );
            used.insert(v);
        }
    }
    let declared: BTreeSet<String> = VARIABLES.iter().map(|v| v.name.to_string()).collect();
    assert_eq!(used, declared, "a variable no patch reads");
}

#[test]
fn variable_value_paths_name_fields_of_object_variables() {
    for p in patches() {
        for d in &p.definitions {
            for op in &d.ops {
                if let OpValue::Variable(path) = &op.value {
                    let mut parts = path.split('.');
                    let root = parts.next().and_then(variable);
                    let Some(root) = root else {
                        panic!("{}: {path}", p.name)
                    };
                    if let Some(field) = parts.next() {
                        let VarType::Object(props) = root.ty else {
                            panic!("{}: {path} reads a field of a scalar", p.name)
                        };
                        assert!(props.iter().any(|f| f.name == field), "{path}");
                    }
                }
            }
        }
    }
}

#[test]
fn selectors_name_the_class_templates() {
    for p in patches() {
        assert!(!p.definitions.is_empty(), "{}", p.name);
        for d in &p.definitions {
            let sel = d.target.selector();
            let (api_version, kind) = d.target.template();
            assert_eq!(sel["apiVersion"], api_version);
            assert_eq!(sel["kind"], kind);
            let mr = &sel["matchResources"];
            assert_eq!(mr["controlPlane"] == json!(true), d.target.control_plane());
            assert_eq!(
                mr["machineDeploymentClass"] == json!({"names": ["default-worker"]}),
                d.target.worker()
            );
            for op in &d.ops {
                assert!(op.path.starts_with("/spec/template/spec/"), "{}", op.path);
                assert!(op.op == "add" || op.op == "replace");
                // the KubeadmControlPlaneTemplate's bootstrap config sits under kubeadmConfigSpec
                assert_eq!(
                    op.path
                        .starts_with("/spec/template/spec/kubeadmConfigSpec/"),
                    d.target == Target::ControlPlane,
                    "{} {}",
                    p.name,
                    op.path
                );
            }
        }
    }
}

// ---- the patches applied to the base templates, offline -----------------------------------

#[derive(Debug)]
struct PatchError(String);

fn tokens(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// RFC 6902 `add` / `replace`, as CAPI's topology controller applies them.
fn apply_op(doc: &mut Value, op: &str, path: &str, value: Value) -> Result<(), PatchError> {
    let toks = tokens(path);
    let Some((last, parents)) = toks.split_last() else {
        return Err(PatchError("empty path".into()));
    };
    let mut cur = doc;
    for t in parents {
        cur = match cur {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| PatchError(format!("{op} {path}: no {t}")))?;
    }
    match (cur, op) {
        (Value::Object(m), "add") => {
            m.insert(last.clone(), value);
        }
        (Value::Object(m), "replace") => {
            let slot = m
                .get_mut(last)
                .ok_or_else(|| PatchError(format!("replace {path}: missing")))?;
            *slot = value;
        }
        (Value::Array(a), "add") if last == "-" => a.push(value),
        (Value::Array(a), "add") => {
            let i = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i <= a.len())
                .ok_or_else(|| PatchError(format!("add {path}: bad index")))?;
            a.insert(i, value);
        }
        _ => return Err(PatchError(format!("{op} {path}: not a container"))),
    }
    Ok(())
}

/// A value of the variable's type for `valueFrom.variable` (templates render to a marker).
fn sample(path: &str) -> Value {
    let mut parts = path.split('.');
    let ty = parts.next().and_then(variable).map(|v| v.ty);
    let ty = match (ty, parts.next()) {
        (Some(VarType::Object(props)), Some(field)) => {
            props.iter().find(|p| p.name == field).map(|p| p.ty)
        }
        (ty, _) => ty,
    };
    match ty {
        Some(VarType::Boolean) => json!(true),
        Some(VarType::Integer) => json!(10),
        Some(VarType::StringList) => json!(["az1"]),
        Some(VarType::Object(_)) => json!({"enabled": true}),
        _ => json!(format!("<{path}>")),
    }
}

/// The templates each target's copy starts from: (target predicate, template).
struct Rendered {
    kcpt: Value,
    kct: Value,
    osct: Value,
    osmt_cp: Value,
    osmt_worker: Value,
}

fn render(enabled: impl Fn(&Patch) -> bool) -> Result<Rendered, PatchError> {
    let set = ClusterClassSet::for_version("vT");
    let mut r = Rendered {
        kcpt: set.kubeadm_control_plane_template,
        kct: set.kubeadm_config_template,
        osct: set.openstack_cluster_template,
        osmt_cp: set.openstack_machine_template.clone(),
        osmt_worker: set.openstack_machine_template,
    };
    for p in patches().iter().filter(|p| enabled(p)) {
        for d in &p.definitions {
            let docs: Vec<&mut Value> = match d.target {
                Target::ControlPlane => vec![&mut r.kcpt],
                Target::WorkerBootstrap => vec![&mut r.kct],
                Target::InfrastructureCluster => vec![&mut r.osct],
                Target::Machines => vec![&mut r.osmt_cp, &mut r.osmt_worker],
                Target::ControlPlaneMachines => vec![&mut r.osmt_cp],
                Target::WorkerMachines => vec![&mut r.osmt_worker],
            };
            for doc in docs {
                for op in &d.ops {
                    let value = match &op.value {
                        OpValue::Value(v) => v.clone(),
                        OpValue::Variable(v) => sample(v),
                        OpValue::Template(_) => json!(format!("<template of {}>", p.name)),
                    };
                    apply_op(doc, op.op, &op.path, value)
                        .map_err(|e| PatchError(format!("{}: {}", p.name, e.0)))?;
                }
            }
        }
    }
    Ok(r)
}

#[test]
fn every_patch_applies_to_the_base_templates_in_order() {
    let r = match render(|_| true) {
        Ok(r) => r,
        Err(e) => panic!("{}", e.0),
    };
    let spec = |v: &Value| v["spec"]["template"]["spec"].clone();
    assert_eq!(spec(&r.osmt_cp)["flavor"], "<controlPlaneFlavor>");
    assert_eq!(spec(&r.osmt_worker)["flavor"], "<flavor>");
    assert_eq!(
        spec(&r.osmt_cp)["identityRef"]["name"],
        "<clusterIdentityRefName>"
    );
    assert_eq!(
        spec(&r.osct)["identityRef"]["name"],
        "<clusterIdentityRefName>"
    );
    // the etcd volume only on the control plane, the docker volume on both
    let devices = |v: &Value| spec(v)["additionalBlockDevices"].as_array().map(Vec::len);
    assert_eq!(devices(&r.osmt_cp), Some(2));
    assert_eq!(devices(&r.osmt_worker), Some(1));
    // flatcar comes after containerdConfig and sets the worker's pre-kubeadm commands
    let kct = spec(&r.kct);
    assert_eq!(kct["format"], "ignition");
    assert_eq!(kct["preKubeadmCommands"].as_array().map(Vec::len), Some(1));
    let kcs = &spec(&r.kcpt)["kubeadmConfigSpec"];
    assert_eq!(kcs["format"], "ignition");
    assert_eq!(
        kcs["clusterConfiguration"]["apiServer"]["extraArgs"]["cloud-provider"],
        "external"
    );
    assert_eq!(
        kcs["clusterConfiguration"]["apiServer"]["extraVolumes"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[test]
fn the_volume_patches_need_add_empty_lists_first() {
    // without it, appending to diskSetup/partitions fails: order and presence matter
    let err = render(|p| p.name != "addEmptyLists").err();
    assert!(
        err.as_ref()
            .is_some_and(|e| e.0.starts_with("etcdVolume: ")),
        "{err:?}"
    );
    // with the default variables of a cluster without extra volumes and not on Flatcar
    let plain = [
        "keystoneAuth",
        "addEmptyLists",
        "etcdVolume",
        "dockerVolume",
        "etcdAndDockerVolumeForControlPlane",
        "onlyDockerVolumeForControlPlane",
        "flatcar",
        "existingFixedNetworkIdConfig",
        "existingFixedSubnetIdConfig",
    ];
    let r = match render(|p| !plain.contains(&p.name)) {
        Ok(r) => r,
        Err(e) => panic!("{}", e.0),
    };
    let kct = &r.kct["spec"]["template"]["spec"];
    assert_eq!(
        kct["preKubeadmCommands"],
        json!(["systemctl daemon-reload", "systemctl restart containerd"])
    );
    assert_eq!(kct["format"], Value::Null);
    assert!(r.osmt_cp["spec"]["template"]["spec"]["additionalBlockDevices"].is_null());
}
