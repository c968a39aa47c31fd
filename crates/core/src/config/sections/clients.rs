//! The OpenStack client groups: region and endpoint type for each service Magnum calls.

use super::prelude::*;

config_section! {
    /// Options for the Glance (image) client.
    GlanceClientSection = "glance_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}

config_section! {
    /// Options for the Nova (compute) client.
    NovaClientSection = "nova_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}

config_section! {
    /// Options for the Neutron (network) client.
    NeutronClientSection = "neutron_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}

config_section! {
    /// Options for the Barbican (key manager) client.
    BarbicanClientSection = "barbican_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}

config_section! {
    /// Options for the Cinder (block storage) client.
    CinderClientSection = "cinder_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}

config_section! {
    /// Options for the Octavia (load balancer) client.
    OctaviaClientSection = "octavia_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

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
}

config_section! {
    /// Options for the Magnum client.
    MagnumClientSection = "magnum_client";
    from "magnum.conf" {
        /// Region in Identity service catalog to use for communication with the OpenStack
        /// service.
        region_name: Option<String> = string_unset();

        /// Type of endpoint in Identity service catalog to use for communication with the
        /// OpenStack service.
        endpoint_type: String = string("publicURL");
    }
}
