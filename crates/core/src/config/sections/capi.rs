//! The option groups of the Cluster API driver (magnum-cluster-api 0.38's
//! `magnum_cluster_api/conf.py`), which OpenKeel's native driver reads with the same names and
//! defaults, plus OpenKeel's own option for the management cluster's kubeconfig.
//!
//! magnum-cluster-api's `[proxy] haproxy_pid_path` belongs to its separate proxy daemon, which
//! OpenKeel does not have, so it is not declared here.

use super::prelude::*;

config_section! {
    /// Options for the Cluster API client
    CapiClientSection = "capi_client";
    from "magnum_cluster_api" {
        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");

        /// Optional CA cert file to use in SSL connections.
        ca_file: Option<String> = string_unset();

        /// Optional PEM-formatted certificate chain file.
        cert_file: Option<String> = string_unset();

        /// Optional PEM-formatted file that contains the private key.
        key_file: Option<String> = string_unset();

        /// If set, then the server's certificate will not be verified.
        insecure: bool = boolean(false);
    }
    from "openkeel" {
        /// The kubeconfig file of the Cluster API management cluster the Cluster API driver
        /// writes its objects to (namespace magnum-system). Empty means what
        /// magnum-cluster-api uses: the file named by the KUBECONFIG environment variable,
        /// else ~/.kube/config, else the in-cluster service account when the conductor runs
        /// in a pod.
        kubeconfig: String = string("");

        /// The context of the kubeconfig file to use. Empty means its current-context.
        kubeconfig_context: String = string("");

        /// The helm program that renders the addon charts the driver carries (Cilium,
        /// keystone-auth, the OpenStack cloud controller manager, Cinder CSI), as
        /// magnum-cluster-api runs it: a name looked up in PATH, or a path.
        helm_binary: String = string("helm");
    }
}

config_section! {
    /// Options for auto scaling
    AutoScalingSection = "auto_scaling";
    from "magnum_cluster_api" {
        /// Image repository for the cluster auto-scaler.
        image_repository: String = string("registry.k8s.io/autoscaling");
    }
}

config_section! {
    /// Options for the Manila client
    ManilaClientSection = "manila_client";
    from "magnum_cluster_api" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");

        /// Version of Manila API to use in manilaclient.
        api_version: String = string("3");

        /// Optional CA cert file to use in SSL connections.
        ca_file: Option<String> = string_unset();

        /// Optional PEM-formatted certificate chain file.
        cert_file: Option<String> = string_unset();

        /// Optional PEM-formatted file that contains the private key.
        key_file: Option<String> = string_unset();

        /// If set, then the server's certificate will not be verified.
        insecure: bool = boolean(false);
    }
}
