//! Create-time validation: what magnum-cluster-api only finds in the conductor (after it has
//! written the ClusterClass and the ClusterResourceSets), refused by the API
//! with a 400 and nothing written.

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterTemplate, NodeGroup};

use crate::addons;
use crate::cluster::{dns_nameservers, master_count, DEFAULT_CALICO_TAG};
use crate::labels::Labels;

/// The CNIs magnum-cluster-api supports (`validate_cluster`).
pub const SUPPORTED_NETWORK_DRIVERS: &[&str] = &["calico", "cilium"];

/// `validate_nodegroup_name`: a lowercase RFC 1123 subdomain (magnum-cluster-api's regular
/// expression `[a-z0-9]([-a-z0-9]*[a-z0-9])?(.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, whose `.`
/// matches any character; the dot is taken literally here, as Kubernetes does), at most
/// 253 characters.
pub fn is_rfc1123_subdomain(name: &str) -> bool {
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    name.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    })
}

/// `MachineInvalidName` (an `InvalidName`, 400).
pub fn validate_nodegroup_name(name: &str) -> Result<(), MagnumError> {
    if is_rfc1123_subdomain(name) {
        Ok(())
    } else {
        Err(MagnumError::with_message(
            ErrorKind::InvalidName,
            format!("Expected a lowercase RFC 1123 subdomain name, got {name}."),
        ))
    }
}

/// `kube_tag` must be present (magnum-cluster-api's Rust side has no default, issue #821) and
/// a Kubernetes version CAPI accepts (`v<major>.<minor>.<patch>`, optional pre-release).
pub fn validate_kube_tag(labels: &Labels<'_>) -> Result<(), MagnumError> {
    let tag = labels.get("kube_tag").unwrap_or("");
    if tag.is_empty() {
        return Err(MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            "The kube_tag label is required by the Cluster API driver (the Kubernetes \
             version of the cluster, e.g. v1.30.4).",
        ));
    }
    let core = tag
        .strip_prefix('v')
        .map(|v| v.split(['-', '+']).next().unwrap_or(""))
        .unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return Err(MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            format!("Invalid kube_tag {tag}: expected a Kubernetes version such as v1.30.4."),
        ));
    }
    Ok(())
}

/// Every label the driver parses as a boolean or an integer, parsed strictly.
const BOOL_LABELS: &[&str] = &[
    "audit_log_enabled",
    "master_lb_floating_ip_enabled",
    "keystone_auth_enabled",
    "auto_healing_enabled",
    "auto_scaling_enabled",
    "different_failure_domain",
    "cinder_csi_enabled",
    "manila_csi_enabled",
];
const INT_LABELS: &[&str] = &["boot_volume_size", "etcd_volume_size", "max_node_count"];

fn validate_typed_labels(labels: &Labels<'_>) -> Result<(), MagnumError> {
    for key in BOOL_LABELS {
        labels.bool_or(key, false)?;
    }
    for key in INT_LABELS {
        labels.int_or(key, 0)?;
    }
    Ok(())
}

/// What the driver can refuse about a new nodegroup: its name, its label values.
pub fn validate_nodegroup(nodegroup: &NodeGroup) -> Result<(), MagnumError> {
    validate_nodegroup_name(&nodegroup.name)?;
    validate_typed_labels(&Labels::new(nodegroup.labels.as_ref()))
}

/// Everything the Cluster API driver can refuse before anything is written: the template's
/// CNI and DNS servers, an odd master count, `kube_tag`, nodegroup names, label values, the
/// Calico version and the Octavia algorithm.
pub fn validate_create(
    cluster: &Cluster,
    template: &ClusterTemplate,
    nodegroups: &[NodeGroup],
) -> Result<(), MagnumError> {
    let driver = template.network_driver.as_deref().unwrap_or("");
    if !SUPPORTED_NETWORK_DRIVERS.contains(&driver) {
        return Err(MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            format!(
                "Unsupported network driver {}: the Cluster API driver supports calico and \
                 cilium.",
                if driver.is_empty() { "None" } else { driver }
            ),
        ));
    }
    // The ClusterClass requires `dnsNameservers` (an array of strings) for the subnet it
    // makes: magnum-cluster-api fails the create on the template's null `dns_nameserver`
    // (`None.split`), and no value this driver could write passes Cluster API's validation
    // (`[""]` and `[]` both come out invalid), which left the cluster in progress until its
    // timeout.
    if dns_nameservers(template).is_empty() {
        return Err(MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            "The cluster template's dns_nameserver is required by the Cluster API driver \
             (the DNS servers of the cluster's subnet, e.g. 8.8.8.8).",
        ));
    }
    let masters = master_count(nodegroups);
    if masters % 2 == 0 || masters < 1 {
        return Err(MagnumError::new(
            ErrorKind::MasterNGSizeInvalid,
            &[("requested_size", &masters)],
        ));
    }
    let labels = Labels::new(cluster.labels.as_ref());
    validate_kube_tag(&labels)?;
    validate_typed_labels(&labels)?;
    for ng in nodegroups {
        validate_nodegroup_name(&ng.name)?;
        validate_typed_labels(&Labels::new(ng.labels.as_ref()))?;
    }
    if driver == "calico" {
        let tag = labels.str_or("calico_tag", DEFAULT_CALICO_TAG);
        if !addons::calico_tags().any(|t| t == tag) {
            return Err(addons::unsupported_calico(&tag));
        }
    }
    if labels.str_or("octavia_provider", "amphorav2") == "ovn" {
        if let Some(m) = labels
            .get("octavia_lb_algorithm")
            .filter(|m| *m != "SOURCE_IP_PORT")
        {
            return Err(addons::invalid_lb_algorithm(m));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::objects::StringMap;

    fn ng(name: &str, role: &str, count: i32) -> NodeGroup {
        NodeGroup {
            name: name.into(),
            role: Some(role.into()),
            node_count: Some(count),
            ..Default::default()
        }
    }

    fn case(
        labels: &[(&str, &str)],
        cni: &str,
        masters: i32,
        worker: &str,
    ) -> Result<(), MagnumError> {
        let mut m = StringMap::new();
        for (k, v) in labels {
            m.insert((*k).into(), (*v).into());
        }
        let cluster = Cluster {
            labels: Some(m),
            ..Default::default()
        };
        let template = ClusterTemplate {
            network_driver: Some(cni.into()),
            dns_nameserver: Some("8.8.8.8".into()),
            ..Default::default()
        };
        validate_create(
            &cluster,
            &template,
            &[
                ng("default-master", "master", masters),
                ng(worker, "worker", 1),
            ],
        )
    }

    #[test]
    fn refuses_a_template_without_dns_servers() {
        let labels: StringMap = [("kube_tag".to_string(), "v1.30.4".to_string())]
            .into_iter()
            .collect();
        let cluster = Cluster {
            labels: Some(labels),
            ..Default::default()
        };
        let ngs = [
            ng("default-master", "master", 1),
            ng("default-worker", "worker", 1),
        ];
        for dns in [None, Some(""), Some("8.8.8.8")] {
            let template = ClusterTemplate {
                network_driver: Some("calico".into()),
                dns_nameserver: dns.map(str::to_string),
                ..Default::default()
            };
            let r = validate_create(&cluster, &template, &ngs);
            if dns == Some("8.8.8.8") {
                assert!(r.is_ok(), "{r:?}");
            } else {
                let e = r.unwrap_err();
                assert_eq!(e.code(), 400, "{dns:?}");
                assert!(e.to_string().contains("dns_nameserver is required"), "{e}");
            }
        }
    }

    #[test]
    fn refuses_what_magnum_cluster_api_finds_later() {
        let kt = [("kube_tag", "v1.30.4")];
        assert!(case(&kt, "calico", 3, "default-worker").is_ok());
        assert!(case(&kt, "cilium", 1, "ng-1.a").is_ok());

        let e = case(&[], "calico", 1, "w").unwrap_err();
        assert_eq!(
            (e.kind(), e.code()),
            (ErrorKind::InvalidParameterValue, 400)
        );
        assert!(e.message().contains("kube_tag"));
        assert!(case(&[("kube_tag", "1.30")], "calico", 1, "w").is_err());

        let e = case(&kt, "flannel", 1, "w").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameterValue);
        assert!(e.message().contains("flannel"));

        let e = case(&kt, "calico", 2, "w").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MasterNGSizeInvalid);
        assert_eq!(
            e.message(),
            "master nodegroup size of 2 is invalid, size cannot be an even number."
        );

        for bad in ["Workers", "w_1", "-w", "w-", "", "a..b"] {
            let e = case(&kt, "calico", 1, bad).unwrap_err();
            assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidName, 400), "{bad}");
        }

        let e = case(
            &[("kube_tag", "v1.30.4"), ("auto_scaling_enabled", "maybe")],
            "calico",
            1,
            "w",
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameterValue);
        assert!(case(
            &[("kube_tag", "v1.30.4"), ("calico_tag", "v3.0.0")],
            "calico",
            1,
            "w"
        )
        .is_err());
        assert!(case(
            &[
                ("kube_tag", "v1.30.4"),
                ("octavia_provider", "ovn"),
                ("octavia_lb_algorithm", "ROUND_ROBIN")
            ],
            "calico",
            1,
            "w"
        )
        .is_err());
    }
}
