//! Magnum's API types for clusters, nodegroups and the two actions
//! (`magnum/api/controllers/v1/cluster.py`, `nodegroup.py`, `cluster_actions.py`): their
//! attributes in declaration order, the objects' field orders, and the PATCH rules.

use super::wsme::{Attr, Default};
use crate::patch::PatchType;
use crate::validation::{int_min, str_ty, AttrType};

/// `ClusterStatus.ALL` (declaration order; Magnum prints a set, whose order varies).
pub const STATUSES: &[&str] = &[
    "CREATE_IN_PROGRESS",
    "CREATE_FAILED",
    "CREATE_COMPLETE",
    "UPDATE_IN_PROGRESS",
    "UPDATE_FAILED",
    "UPDATE_COMPLETE",
    "DELETE_IN_PROGRESS",
    "DELETE_FAILED",
    "DELETE_COMPLETE",
    "RESUME_COMPLETE",
    "RESUME_FAILED",
    "RESTORE_COMPLETE",
    "ROLLBACK_IN_PROGRESS",
    "ROLLBACK_FAILED",
    "ROLLBACK_COMPLETE",
    "SNAPSHOT_COMPLETE",
    "CHECK_COMPLETE",
    "ADOPT_COMPLETE",
];

/// How WSME lists [`STATUSES`] in its `Enum` message (a Python set, in the order the
/// reference 23.0.0 printed; the order depends on the interpreter's hash seed).
pub const STATUSES_SHOWN: &str = "UPDATE_IN_PROGRESS, UPDATE_COMPLETE, RESTORE_COMPLETE, DELETE_COMPLETE, RESUME_COMPLETE, ROLLBACK_FAILED, CREATE_COMPLETE, DELETE_IN_PROGRESS, ADOPT_COMPLETE, DELETE_FAILED, SNAPSHOT_COMPLETE, CREATE_IN_PROGRESS, UPDATE_FAILED, RESUME_FAILED, ROLLBACK_COMPLETE, CHECK_COMPLETE, CREATE_FAILED, ROLLBACK_IN_PROGRESS";

/// `ClusterHealthStatus.ALL`.
pub const HEALTH_STATUSES: &[&str] = &["HEALTHY", "UNHEALTHY", "UNKNOWN"];

/// How WSME lists [`HEALTH_STATUSES`] (see [`STATUSES_SHOWN`]).
pub const HEALTH_STATUSES_SHOWN: &str = "UNKNOWN, HEALTHY, UNHEALTHY";

/// `ClusterStatus.STATUS_FAILED` (what adds `faults` to `GET /v1/clusters/{id}`).
pub const FAILED_STATUSES: &[&str] = &[
    "CREATE_FAILED",
    "UPDATE_FAILED",
    "DELETE_FAILED",
    "ROLLBACK_FAILED",
    "RESUME_FAILED",
];

const CREATED_AT: Attr = Attr::new("created_at", AttrType::DateTime).readonly();
const UPDATED_AT: Attr = Attr::new("updated_at", AttrType::DateTime).readonly();

// The attributes Magnum's `Cluster` and `NodeGroup` WSME types both declare, alike.
pub const UUID: Attr = Attr::new("uuid", AttrType::Uuid);
pub const NODE_COUNT: Attr = Attr::new("node_count", int_min(0)).default(Default::Int(1));
pub const DOCKER_VOLUME_SIZE: Attr = Attr::new("docker_volume_size", int_min(1));
pub const LABELS: Attr = Attr::new("labels", AttrType::Labels);
pub const FLAVOR_ID: Attr = Attr::new("flavor_id", str_ty(1, 255));
pub const LINKS: Attr = Attr::new("links", AttrType::Links).readonly();
pub const STACK_ID: Attr = Attr::new("stack_id", AttrType::Text).readonly();
pub const STATUS: Attr = Attr::new(
    "status",
    AttrType::Enum {
        values: STATUSES,
        shown: STATUSES_SHOWN,
    },
);
pub const STATUS_REASON: Attr = Attr::new("status_reason", AttrType::Text);
pub const PROJECT_ID: Attr = Attr::new("project_id", AttrType::Text).readonly();
pub const NODE_ADDRESSES: Attr = Attr::new("node_addresses", AttrType::TextList).readonly();
pub const MERGE_LABELS: Attr =
    Attr::new("merge_labels", AttrType::Bool).default(Default::Bool(false));
pub const LABELS_OVERRIDDEN: Attr = Attr::new("labels_overridden", AttrType::Labels);
pub const LABELS_ADDED: Attr = Attr::new("labels_added", AttrType::Labels);
pub const LABELS_SKIPPED: Attr = Attr::new("labels_skipped", AttrType::Labels);

pub mod cluster {
    use super::*;
    pub use super::{
        DOCKER_VOLUME_SIZE, FLAVOR_ID, LABELS, LABELS_ADDED, LABELS_OVERRIDDEN, LABELS_SKIPPED,
        LINKS, MERGE_LABELS, NODE_ADDRESSES, NODE_COUNT, PROJECT_ID, STACK_ID, STATUS,
        STATUS_REASON, UUID,
    };

    pub const NAME: Attr = Attr::new(
        "name",
        AttrType::Str {
            min: 1,
            max: 242,
            name_pattern: true,
        },
    );
    pub const CLUSTER_TEMPLATE_ID: Attr =
        Attr::new("cluster_template_id", AttrType::Text).mandatory();
    pub const KEYPAIR: Attr = Attr::new("keypair", str_ty(1, 255)).default(Default::None);
    pub const MASTER_COUNT: Attr = Attr::new("master_count", int_min(1)).default(Default::Int(1));
    pub const MASTER_FLAVOR_ID: Attr = Attr::new("master_flavor_id", str_ty(1, 255));
    pub const CREATE_TIMEOUT: Attr =
        Attr::new("create_timeout", int_min(0)).default(Default::Int(60));
    pub const CLUSTER_ID: Attr = Attr::new("cluster_id", AttrType::Text).readonly();
    pub const HEALTH_STATUS: Attr = Attr::new(
        "health_status",
        AttrType::Enum {
            values: HEALTH_STATUSES,
            shown: HEALTH_STATUSES_SHOWN,
        },
    );
    pub const HEALTH_STATUS_REASON: Attr = Attr::new("health_status_reason", AttrType::StrDict);
    pub const DISCOVERY_URL: Attr = Attr::new("discovery_url", AttrType::Text);
    pub const API_ADDRESS: Attr = Attr::new("api_address", AttrType::Text).readonly();
    pub const COE_VERSION: Attr = Attr::new("coe_version", AttrType::Text).readonly();
    pub const CONTAINER_VERSION: Attr = Attr::new("container_version", AttrType::Text).readonly();
    pub const USER_ID: Attr = Attr::new("user_id", AttrType::Text).readonly();
    pub const MASTER_ADDRESSES: Attr = Attr::new("master_addresses", AttrType::TextList).readonly();
    pub const FAULTS: Attr = Attr::new("faults", AttrType::StrDict);
    pub const FIXED_NETWORK: Attr = Attr::new("fixed_network", str_ty(1, 255));
    pub const FIXED_SUBNET: Attr = Attr::new("fixed_subnet", str_ty(1, 255));
    pub const FLOATING_IP_ENABLED: Attr = Attr::new("floating_ip_enabled", AttrType::Bool);
    pub const MASTER_LB_ENABLED: Attr = Attr::new("master_lb_enabled", AttrType::Bool);

    /// `Cluster` in declaration order (then `APIBase`'s timestamps).
    pub const ATTRS: &[Attr] = &[
        UUID,
        NAME,
        CLUSTER_TEMPLATE_ID,
        KEYPAIR,
        NODE_COUNT,
        MASTER_COUNT,
        DOCKER_VOLUME_SIZE,
        LABELS,
        MASTER_FLAVOR_ID,
        FLAVOR_ID,
        CREATE_TIMEOUT,
        LINKS,
        STACK_ID,
        CLUSTER_ID,
        STATUS,
        STATUS_REASON,
        HEALTH_STATUS,
        HEALTH_STATUS_REASON,
        DISCOVERY_URL,
        API_ADDRESS,
        COE_VERSION,
        CONTAINER_VERSION,
        PROJECT_ID,
        USER_ID,
        NODE_ADDRESSES,
        MASTER_ADDRESSES,
        FAULTS,
        FIXED_NETWORK,
        FIXED_SUBNET,
        FLOATING_IP_ENABLED,
        MERGE_LABELS,
        LABELS_OVERRIDDEN,
        LABELS_ADDED,
        LABELS_SKIPPED,
        MASTER_LB_ENABLED,
        CREATED_AT,
        UPDATED_AT,
    ];

    /// A `GET /v1/clusters` item (`Cluster.convert_with_links(expand=False)`'s
    /// `unset_fields_except` list, and `merge_labels`' declared default), in declaration
    /// order: what [`super::super::view::cluster_summary`] prints.
    pub const SUMMARY: &[&Attr] = &[
        &UUID,
        &NAME,
        &CLUSTER_TEMPLATE_ID,
        &KEYPAIR,
        &NODE_COUNT,
        &MASTER_COUNT,
        &DOCKER_VOLUME_SIZE,
        &LABELS,
        &MASTER_FLAVOR_ID,
        &FLAVOR_ID,
        &CREATE_TIMEOUT,
        &LINKS,
        &STACK_ID,
        &CLUSTER_ID,
        &STATUS,
        &HEALTH_STATUS,
        &MERGE_LABELS,
    ];

    /// `Cluster.fields` of the API type: the object's fields it declares (object field
    /// order), then the nodegroup-derived ones (`Cluster.__init__`).
    pub const FIELDS: &[&Attr] = &[
        &UUID,
        &NAME,
        &PROJECT_ID,
        &USER_ID,
        &CLUSTER_TEMPLATE_ID,
        &KEYPAIR,
        &DOCKER_VOLUME_SIZE,
        &LABELS,
        &MASTER_FLAVOR_ID,
        &FLAVOR_ID,
        &STACK_ID,
        &STATUS,
        &STATUS_REASON,
        &HEALTH_STATUS,
        &HEALTH_STATUS_REASON,
        &CREATE_TIMEOUT,
        &API_ADDRESS,
        &DISCOVERY_URL,
        &COE_VERSION,
        &CONTAINER_VERSION,
        &FIXED_NETWORK,
        &FIXED_SUBNET,
        &FLOATING_IP_ENABLED,
        &MASTER_LB_ENABLED,
        &CREATED_AT,
        &UPDATED_AT,
        &NODE_COUNT,
        &MASTER_COUNT,
        &NODE_ADDRESSES,
        &MASTER_ADDRESSES,
    ];

    /// `ClusterPatchType`.
    pub const PATCH: PatchType = PatchType {
        extra_internal: &[
            "/api_address",
            "/node_addresses",
            "/master_addresses",
            "/stack_id",
            "/cluster_id",
            "/ca_cert_ref",
            "/magnum_cert_ref",
            "/etcd_ca_cert_ref",
            "/front_proxy_ca_cert_ref",
        ],
        non_removable: &["/cluster_template_id"],
    };
}

pub mod nodegroup {
    use super::*;
    pub use super::{
        DOCKER_VOLUME_SIZE, FLAVOR_ID, LABELS, LABELS_ADDED, LABELS_OVERRIDDEN, LABELS_SKIPPED,
        LINKS, MERGE_LABELS, NODE_ADDRESSES, NODE_COUNT, PROJECT_ID, STACK_ID, STATUS,
        STATUS_REASON, UUID,
    };

    pub const ID: Attr = Attr::new("id", int_min(1));
    pub const NAME: Attr = Attr::new("name", str_ty(1, 255)).default(Default::None);
    pub const CLUSTER_ID: Attr = Attr::new("cluster_id", AttrType::Uuid);
    pub const IMAGE_ID: Attr = Attr::new("image_id", str_ty(1, 255));
    pub const ROLE: Attr = Attr::new("role", str_ty(1, 255)).default(Default::Str("worker"));
    pub const MIN_NODE_COUNT: Attr =
        Attr::new("min_node_count", int_min(0)).default(Default::Int(0));
    pub const MAX_NODE_COUNT: Attr = Attr::new("max_node_count", int_min(0)).default(Default::None);
    pub const IS_DEFAULT: Attr = Attr::new("is_default", AttrType::Bool);
    pub const VERSION: Attr = Attr::new("version", AttrType::Text);
    pub const NODE_LABELS: Attr = Attr::new("node_labels", AttrType::StrDict);
    pub const NODE_TAINTS: Attr = Attr::new("node_taints", AttrType::DictList);

    /// `NodeGroup` in declaration order (then `APIBase`'s timestamps).
    pub const ATTRS: &[Attr] = &[
        ID,
        UUID,
        NAME,
        CLUSTER_ID,
        PROJECT_ID,
        DOCKER_VOLUME_SIZE,
        LABELS,
        LINKS,
        FLAVOR_ID,
        IMAGE_ID,
        NODE_ADDRESSES,
        NODE_COUNT,
        ROLE,
        MIN_NODE_COUNT,
        MAX_NODE_COUNT,
        IS_DEFAULT,
        STACK_ID,
        STATUS,
        STATUS_REASON,
        VERSION,
        MERGE_LABELS,
        LABELS_OVERRIDDEN,
        LABELS_ADDED,
        LABELS_SKIPPED,
        NODE_LABELS,
        NODE_TAINTS,
        CREATED_AT,
        UPDATED_AT,
    ];

    /// A `GET .../nodegroups` item (`NodeGroup.convert(expand=False)`'s
    /// `unset_fields_except`, and the declared defaults), in declaration order: what
    /// [`super::super::view::ng_summary`] prints.
    pub const SUMMARY: &[&Attr] = &[
        &UUID,
        &NAME,
        &FLAVOR_ID,
        &IMAGE_ID,
        &NODE_COUNT,
        &ROLE,
        &MIN_NODE_COUNT,
        &MAX_NODE_COUNT,
        &IS_DEFAULT,
        &STACK_ID,
        &STATUS,
        &MERGE_LABELS,
    ];

    /// `NodeGroup.fields` of the API type (the object's field order).
    pub const FIELDS: &[&Attr] = &[
        &ID,
        &UUID,
        &NAME,
        &CLUSTER_ID,
        &PROJECT_ID,
        &DOCKER_VOLUME_SIZE,
        &LABELS,
        &FLAVOR_ID,
        &IMAGE_ID,
        &NODE_ADDRESSES,
        &NODE_COUNT,
        &ROLE,
        &MAX_NODE_COUNT,
        &MIN_NODE_COUNT,
        &IS_DEFAULT,
        &STACK_ID,
        &STATUS,
        &STATUS_REASON,
        &VERSION,
        &NODE_LABELS,
        &NODE_TAINTS,
        &CREATED_AT,
        &UPDATED_AT,
    ];

    /// `NodeGroupPatchType`.
    pub const PATCH: PatchType = PatchType {
        extra_internal: &[
            "/name",
            "/cluster_id",
            "/project_id",
            "/docker_volume_size",
            "/labels",
            "/flavor_id",
            "/image_id",
            "/node_addresses",
            "/node_count",
            "/role",
            "/is_default",
            "/stack_id",
            "/status",
            "/status_reason",
            "/version",
        ],
        non_removable: &[],
    };
}

pub mod actions {
    use super::*;

    pub const NODE_COUNT: Attr = Attr::new("node_count", int_min(0)).mandatory();
    pub const NODES_TO_REMOVE: Attr =
        Attr::new("nodes_to_remove", AttrType::TextList).default(Default::EmptyList);
    pub const NODEGROUP: Attr = Attr::new("nodegroup", str_ty(1, 255));

    /// `ClusterResizeRequest`.
    pub const RESIZE: &[Attr] = &[
        NODE_COUNT,
        NODES_TO_REMOVE,
        NODEGROUP,
        CREATED_AT,
        UPDATED_AT,
    ];

    pub const MAX_BATCH_SIZE: Attr = Attr::new("max_batch_size", int_min(1));
    pub const CLUSTER_TEMPLATE: Attr = Attr::new("cluster_template", str_ty(1, 255));

    /// What the upgrade handler refuses with WSME's mandatory-field 400 when it is absent or
    /// `null` (Magnum fails later, with a 500; docs/differences.md): required in the
    /// document's `ClusterUpgrade`.
    pub const UPGRADE_REFUSED_WITHOUT: [&str; 2] = ["cluster_template", "max_batch_size"];

    /// `ClusterUpgradeRequest`.
    pub const UPGRADE: &[Attr] = &[
        MAX_BATCH_SIZE,
        NODEGROUP,
        CLUSTER_TEMPLATE,
        CREATED_AT,
        UPDATED_AT,
    ];
}
