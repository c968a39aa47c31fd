//! openkeel-rpc: how the API reaches the conductor.
//!
//! [`ConductorApi`] is the conductor's RPC surface as Magnum's `magnum/conductor/api.py`
//! (`API`) exposes it to magnum-api: the same methods, arguments and cast/call semantics.
//! Two transports implement it:
//!
//! * [`inprocess::InProcess`] (the embedded default): casts run the handler on a spawned task
//!   and return at once, calls await it with the `rpc_response_timeout` bound;
//! * the RabbitMQ transport (oslo.messaging frames), which encodes the same arguments as
//!   versioned objects and is served on the other side by the same handlers.
//!
//! Objects travel as [`Obj`]: the data plus the names of the fields the sender changed, as
//! oslo.versionedobjects' `obj_what_changed()` does, so that the conductor writes exactly
//! what Magnum's conductor writes (`save()` persists changed fields only).

pub mod codec;
pub mod fuzzing;
pub mod inprocess;
pub mod oslo;
pub mod remote;
pub mod sequencer;
pub mod transport;

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Certificate, Cluster, ClusterTemplate, NodeGroup, StringMap};
use std::collections::BTreeSet;

/// A versioned object on the wire: its fields and which of them were changed by the sender.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Obj<T> {
    pub data: T,
    pub changes: BTreeSet<String>,
}

impl<T> Obj<T> {
    /// An object whose listed fields are marked changed.
    pub fn new(data: T, changes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Obj {
            data,
            changes: changes.into_iter().map(Into::into).collect(),
        }
    }

    /// An object loaded from the database, nothing changed.
    pub fn unchanged(data: T) -> Self {
        Obj {
            data,
            changes: BTreeSet::new(),
        }
    }

    /// Mark a field changed.
    pub fn touch(&mut self, field: &str) {
        self.changes.insert(field.to_string());
    }

    pub fn changed(&self, field: &str) -> bool {
        self.changes.contains(field)
    }
}

/// The conductor methods magnum-api uses (`magnum/conductor/api.py`). Casts return once the
/// message is handed to the transport; calls return the handler's result or its error
/// (remote Magnum exceptions keep their class, status and message).
#[async_trait]
pub trait ConductorApi: Send + Sync + 'static {
    /// cast `cluster_create`.
    async fn cluster_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<(), MagnumError>;

    /// cast `cluster_update` (Magnum's `cluster_update_async`).
    async fn cluster_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<(), MagnumError>;

    /// cast `cluster_delete` (by uuid).
    async fn cluster_delete(&self, ctx: &RequestContext, uuid: String) -> Result<(), MagnumError>;

    /// cast `cluster_resize`.
    async fn cluster_resize(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError>;

    /// call `cluster_upgrade`: the API waits and reports the conductor's error.
    async fn cluster_upgrade(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        cluster_template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        rollback: bool,
    ) -> Result<(), MagnumError>;

    /// cast `nodegroup_create`.
    async fn nodegroup_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError>;

    /// cast `nodegroup_update`.
    async fn nodegroup_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError>;

    /// cast `nodegroup_delete`.
    async fn nodegroup_delete(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError>;

    /// call `sign_certificate`: sign `certificate.csr` with the cluster's CA
    /// (`certificate.ca_cert_type`); the result carries `pem`.
    async fn sign_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        certificate: Obj<Certificate>,
    ) -> Result<Certificate, MagnumError>;

    /// call `get_ca_certificate`: the CA of `ca_cert_type` (`None` = kubernetes) as `pem`.
    async fn get_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        ca_cert_type: Option<String>,
    ) -> Result<Certificate, MagnumError>;

    /// call `rotate_ca_certificate`.
    async fn rotate_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError>;

    /// call `credential_rotate` (microversion 1.12).
    async fn credential_rotate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError>;
}
