//! The groups Magnum defines under `magnum/conf/` (apart from the OpenStack client groups).

use super::prelude::*;

config_section! {
    /// Options for the Magnum API service.
    ApiSection = "api";
    from "magnum.conf" {
        /// The port for the Magnum API server.
        port: u16 = port(9511);

        /// The listen IP for the Magnum API server.
        host: String = ip_address("127.0.0.1");

        /// The maximum number of items returned in a single response from a collection
        /// resource.
        max_limit: i64 = integer(1000);

        /// Configuration file for WSGI definition of API.
        api_paste_config: String = string("api-paste.ini");

        /// This option allows setting path to the SSL certificate of API server.
        ssl_cert_file: Option<String> = string_unset();

        /// This option specifies the path to the file where SSL private key of API server is
        /// stored when SSL is in effect.
        ssl_key_file: Option<String> = string_unset();

        /// Enable SSL Magnum API service
        enabled_ssl: bool = boolean(false);

        /// The maximum number of magnum-api processes to fork and run. Default to number of
        /// CPUs on the host.
        workers: Option<i64> = integer_unset();
    }
}

config_section! {
    /// Options for the Magnum conductor service.
    ConductorSection = "conductor";
    from "magnum.conf" {
        /// The queue to add conductor tasks to.
        topic: String = string("magnum-conductor");

        /// Number of magnum-conductor processes to fork and run. Default to number of CPUs on
        /// the host.
        workers: Option<i64> = integer_unset();
    }
}

config_section! {
    /// Certificate manager options.
    CertificatesSection = "certificates";
    from "magnum.conf" {
        /// Certificate Manager plugin.
        cert_manager_type: String = string("barbican");

        /// Absolute path of the certificate storage directory.
        storage_path: String = string("/var/lib/magnum/certificates/");
    }
}

config_section! {
    /// Options for the X.509 certificates Magnum signs.
    X509Section = "x509";
    from "magnum.conf" {
        /// Certificate can get the CA flag in x509 extensions.
        allow_ca: bool = boolean(false);

        /// List of allowed x509 extensions. Available values: "authorityKeyIdentifier",
        /// "subjectKeyIdentifier", "authorityInfoAccess", "basicConstraints",
        /// "cRLDistributionPoints", "certificatePolicies", "extendedKeyUsage", "OCSPNoCheck",
        /// "inhibitAnyPolicy", "keyUsage", "nameConstraints", "subjectAltName", "issuerAltName"
        allowed_extensions: Vec<String> = list(&[
            "keyUsage",
            "extendedKeyUsage",
            "subjectAltName",
            "basicConstraints",
            "subjectKeyIdentifier",
        ])
            .choices(&[
                "authorityKeyIdentifier",
                "subjectKeyIdentifier",
                "authorityInfoAccess",
                "basicConstraints",
                "cRLDistributionPoints",
                "certificatePolicies",
                "extendedKeyUsage",
                "OCSPNoCheck",
                "inhibitAnyPolicy",
                "keyUsage",
                "nameConstraints",
                "subjectAltName",
                "issuerAltName",
            ]);

        /// List of allowed x509 key usage. Available values: "Digital Signature", "Non
        /// Repudiation", "Key Encipherment", "Data Encipherment", "Key Agreement", "Certificate
        /// Sign", "CRL Sign", "Encipher Only", "Decipher Only"
        allowed_key_usage: Vec<String> = list(&["Digital Signature", "Key Encipherment", "Non Repudiation"])
            .choices(&[
                "Digital Signature",
                "Non Repudiation",
                "Key Encipherment",
                "Data Encipherment",
                "Key Agreement",
                "Certificate Sign",
                "CRL Sign",
                "Encipher Only",
                "Decipher Only",
            ]);

        /// Number of days for which a certificate is valid.
        term_of_validity: i64 = integer(1825);

        /// Size of generated private key.
        rsa_key_size: i64 = integer(2048);
    }
}

config_section! {
    /// Cluster options.
    ClusterSection = "cluster";
    from "magnum.conf" {
        /// Url for etcd public discovery endpoint.
        etcd_discovery_service_endpoint_format: String = string("https://discovery.etcd.io/new?size=%(size)d")
            .deprecated(&[dep_group("bay")]);

        /// Affinity policy for server group of cluster nodes. Possible values include
        /// "affinity", "anti-affinity", "soft-affinity" and "soft-anti-affinity".
        nodes_affinity_policy: String = string("soft-anti-affinity");

        /// Explicitly specify the temporary directory to hold cached TLS certs.
        temp_cache_dir: String = string("/var/lib/magnum/certificate-cache");

        /// The timeout in seconds to wait for the load balancers to be deleted.
        pre_delete_lb_timeout: i64 = integer(60);
    }
}

config_section! {
    /// Cluster template options.
    ClusterTemplateSection = "cluster_template";
    from "magnum.conf" {
        /// Allowed network drivers for kubernetes.
        kubernetes_allowed_network_drivers: Vec<String> = list(&["flannel", "calico"]);

        /// Default network driver for kubernetes cluster-templates.
        kubernetes_default_network_driver: String = string("flannel");
    }
}

config_section! {
    /// Cluster driver options.
    DriversSection = "drivers";
    from "magnum.conf" {
        /// Indicates whether the cluster nodes validate the Certificate Authority when making
        /// requests to the OpenStack APIs (Keystone, Magnum, Heat). If you have self-signed
        /// certificates for the OpenStack APIs or you have your own Certificate Authority and
        /// you have not installed the Certificate Authority to all nodes, you may need to
        /// disable CA validation by setting this flag to False.
        verify_ca: bool = boolean(true);

        /// Path to the OpenStack CA-bundle file to pass and install in all cluster nodes.
        openstack_ca_file: String = string("");

        /// Disabled driver entry points. If empty, then all available drivers are enabled.
        disabled_drivers: Vec<String> = list(&[]);

        /// List of beta drivers to enable. Beta drivers are not intended for production.
        enabled_beta_drivers: Vec<String> = list(&[]);

        /// Default driver to use for cluster templates when no driver is specified by the user
        /// or image metadata. If not set, defaults to the first alphabetically sorted available
        /// driver.
        default_driver: Option<String> = string_unset();
    }
}

config_section! {
    /// Options for Kubernetes clusters.
    KubernetesSection = "kubernetes";
    from "magnum.conf" {
        /// Explicitly specify the path to the file defined default Keystone auth policy for
        /// Kubernetes cluster when the Keystone auth is enabled. Vendors can put their specific
        /// default policy here
        keystone_auth_default_policy: String = string("/etc/magnum/keystone_auth_default_policy.json");

        /// An URL of the manifest file will be installed after the Kubernetes cluster created.
        /// For exmaple, this could be a file including the vendor specific storage class.
        post_install_manifest_url: String = string("");

        /// The default polling interval for Kubernetes cluster health. If this number is
        /// negative the periodic task will be disabled.
        health_polling_interval: i64 = integer(60);
    }
}

config_section! {
    /// Quota options.
    QuotasSection = "quotas";
    from "magnum.conf" {
        /// Max number of clusters allowed per project. Admin can override this default quota
        /// for a project by setting explicit limit in quotas DB table (using /quotas REST API
        /// endpoint).
        max_clusters_per_project: i64 = integer(20);
    }
}

config_section! {
    /// Cinder volume options for cluster nodes.
    CinderSection = "cinder";
    from "magnum.conf" {
        /// The default docker volume_type to use for volumes used for docker storage. To use
        /// the cinder volumes for docker storage, you need to select a default value.
        /// Otherwise, Magnum will select random one from Cinder volume type list.
        default_docker_volume_type: String = string("");

        /// The default etcd volume_type to use for volumes used for etcd storage. To use the
        /// cinder volumes for etcd storage, you need to select a default value. Otherwise,
        /// Magnum will select random one from Cinder volume type list.
        default_etcd_volume_type: String = string("");

        /// The default boot volume_type to use for volumes used for VM of COE. To use the
        /// cinder volumes for VM of COE, you need to select a default value. Otherwise, Magnum
        /// will select random one from Cinder volume type list.
        default_boot_volume_type: String = string("");

        /// The default volume size to use for volumes used for VM of COE.
        default_boot_volume_size: i64 = integer(0);
    }
}

config_section! {
    /// Docker client options (kept for out-of-tree drivers).
    DockerSection = "docker";
    from "magnum.conf" {
        /// Docker remote api version. Override it according to specific docker api version in
        /// your environment.
        docker_remote_api_version: String = string("1.21");

        /// Default timeout in seconds for docker client operations.
        default_timeout: i64 = integer(60);

        /// If set, ignore any SSL validation issues
        api_insecure: bool = boolean(false);

        /// Location of CA certificates file for securing docker api requests (tlscacert).
        ca_file: Option<String> = string_unset();

        /// Location of TLS certificate file for securing docker api requests (tlscert).
        cert_file: Option<String> = string_unset();

        /// Location of TLS private key file for securing docker api requests (tlskey).
        key_file: Option<String> = string_unset();
    }
}

config_section! {
    /// Docker registry options (kept for out-of-tree drivers).
    DockerRegistrySection = "docker_registry";
    from "magnum.conf" {
        /// Region name of Swift
        swift_region: Option<String> = string_unset();

        /// Name of the container in Swift which docker registry stores images in
        swift_registry_container: String = string("docker_registry");
    }
}

config_section! {
    /// OSProfiler options.
    ProfilerSection = "profiler";
    from "magnum.conf" {
        /// Enable the profiling for all services on this node.
        enabled: bool = boolean(false).deprecated(&[dep("profiler_enabled")]);

        /// Enable SQL requests profiling in services.
        trace_sqlalchemy: bool = boolean(false);

        /// Enable python requests package profiling.
        trace_requests: bool = boolean(false);

        /// Secret key(s) to use for encrypting context data for performance profiling.
        hmac_keys: String = string("SECRET_KEY").secret();

        /// Connection string for a notifier backend.
        connection_string: String = string("messaging://");

        /// Document type for notification indexing in elasticsearch.
        es_doc_type: String = string("notification");

        /// This parameter is a time value parameter (for example: es_scroll_time=2m),
        /// indicating for how long the nodes that participate in the search will maintain
        /// relevant resources in order to continue and support it.
        es_scroll_time: String = string("2m");

        /// Elasticsearch splits large requests in batches. This parameter defines maximum size
        /// of each batch (for example: es_scroll_size=10000).
        es_scroll_size: i64 = integer(10000);

        /// Redissentinel provides a timeout option on the connections. This parameter defines
        /// that timeout (for example: socket_timeout=0.1).
        socket_timeout: f64 = float(0.1);

        /// Redissentinel uses a service name to identify a master redis service. This parameter
        /// defines the name (for example: ``sentinal_service_name=mymaster``).
        sentinel_service_name: String = string("mymaster");

        /// Enable filter traces that contain error/exception to a separated place.
        filter_error_trace: bool = boolean(false);
    }
}
