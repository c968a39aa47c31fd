//! openkeel-driver-capi: the native Cluster API driver (the five `k8s_cluster_api_*` entry
//! points of magnum-cluster-api), writing the management cluster's objects with kube-rs.

pub mod clusterclass;
