//! openkeel-driver-capi: the native Cluster API driver (the five `k8s_cluster_api_*` entry
//! points of magnum-cluster-api), writing the management cluster's objects with kube-rs.

pub mod addons;
pub mod autoscaler;
mod batch;
mod calico_manifests;
pub mod cluster;
pub mod clusterclass;
pub mod driver;
pub mod helm;
pub mod labels;
pub mod mgmt;
pub mod secrets;
pub mod status;
pub mod topology;
pub mod validate;

pub use driver::{entry_points, CapiDriver};

/// The management cluster's namespace for every object of the driver (hard-coded in
/// magnum-cluster-api).
pub const NAMESPACE: &str = "magnum-system";
