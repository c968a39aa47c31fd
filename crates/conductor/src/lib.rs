//! openkeel-conductor: Magnum's conductor — the RPC handlers and the periodic loops.
//!
//! [`Conductor`] runs each handler of `magnum/conductor/handlers/` to completion, step by step
//! as `magnum/conductor/handlers/*.py` do (status preconditions, default nodegroups, `save()` of changed
//! fields only, `*_FAILED` with `status_reason` = the error text), and implements
//! [`openkeel_rpc::ConductorApi`] with them; wrap it in [`openkeel_rpc::inprocess::InProcess`]
//! (or serve it over RabbitMQ) to get RPC cast/call semantics. [`periodic`] has the status
//! sync (with the deletion cascade and OpenKeel's operation timeouts) and the health poll.
//!
//! Wiring (all-in-one):
//!
//! ```text
//! let drivers = openkeel::wiring::driver_registry(&config);   // simulator and/or Cluster API
//! let conductor = Arc::new(Conductor::new(db, Arc::new(drivers), Arc::new(LogNotifier),
//!                                         ConductorSettings::default()));
//! let rpc = InProcess::new(conductor.clone(), rpc_response_timeout);   // the API's ConductorApi
//! let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
//! let status = periodic::spawn_periodic(conductor.clone(), Duration::from_secs(10), stop_rx.clone());
//! let health = periodic::spawn_health_periodic(conductor, Duration::from_secs(60), stop_rx);
//! ```
//!
//! Seams left for other issues: certificates ([`certificates::ClusterCertificates`]; without
//! one the cluster's four cert refs stay NULL) and CADF notifications ([`notify::Notifier`];
//! [`notify::LogNotifier`] logs them).

pub mod certificates;
pub mod certs_x509;
mod handlers;
pub mod heartbeat;
mod indirection;
pub mod metrics;
pub mod notify;
pub mod ownership;
pub mod periodic;
pub mod rpc_server;
mod save;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use chrono::NaiveDateTime;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup, StringMap};
use openkeel_db::lock::HeldLock;
use openkeel_db::Database;
use openkeel_drivers::{DriverError, DriverRegistry, DriverResult};
use openkeel_rpc::{ConductorApi, Obj};

pub use certificates::{CertificateRefs, ClusterCertificates};
pub use heartbeat::spawn_heartbeat;
pub use notify::{Action, LogNotifier, Notifier, Outcome};
pub use periodic::{spawn_health_periodic, spawn_periodic, SyncReport};

/// Conductor tunables (OpenKeel's; Magnum has no equivalent for the timeouts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConductorSettings {
    /// Limit for `CREATE_IN_PROGRESS` when the cluster's `create_timeout` is 0 or unset
    /// (Magnum's `[cluster_heat] create_timeout` default: 60 minutes).
    pub default_create_timeout: Duration,
    /// Limit for every other `*_IN_PROGRESS` (update, resize, upgrade, delete, rollback,
    /// nodegroup operations), measured from when the operation started.
    pub operation_timeout: Duration,
    /// How many clusters one periodic round works on at once.
    pub sync_concurrency: usize,
    /// Bound on every driver call: the operations' (create, update, delete, ...) and the
    /// periodic loops' (`update_cluster_status`, health poll). A call that runs out is a
    /// transient driver error.
    pub driver_call_timeout: Duration,
    /// What `delete_cluster` may take beyond `driver_call_timeout`: the wait for the cluster's
    /// load balancers to go (`[cluster] pre_delete_lb_timeout`, Magnum's pre-delete).
    pub pre_delete_timeout: Duration,
    /// `[DEFAULT] host`: this conductor's `magnum_service` row, its name among the live
    /// conductors that share the periodic work ([`ownership`]).
    pub host: Option<String>,
    /// `[DEFAULT] service_down_time`: a conductor whose heartbeat is older is not live, and
    /// its clusters' periodic work moves to the others.
    pub service_down_time: Duration,
}

impl Default for ConductorSettings {
    fn default() -> Self {
        ConductorSettings {
            default_create_timeout: Duration::from_secs(60 * 60),
            operation_timeout: Duration::from_secs(60 * 60),
            sync_concurrency: 8,
            driver_call_timeout: Duration::from_secs(60),
            pre_delete_timeout: Duration::from_secs(60),
            host: None,
            service_down_time: Duration::from_secs(180),
        }
    }
}

/// The conductor: database, drivers, notifier, optional certificate manager, settings.
pub struct Conductor {
    db: Database,
    drivers: Arc<DriverRegistry>,
    notifier: Arc<dyn Notifier>,
    certificates: Option<Arc<dyn ClusterCertificates>>,
    settings: ConductorSettings,
    /// When each cluster's current non-create `*_IN_PROGRESS` operation started, by uuid.
    in_progress_since: Mutex<HashMap<String, (ClusterStatus, NaiveDateTime)>>,
    /// One lock per cluster: this conductor runs the operations on one cluster one at a time.
    cluster_locks: Mutex<HashMap<String, std::sync::Weak<tokio::sync::Mutex<()>>>>,
    /// The Prometheus metrics of this conductor ([`metrics`]).
    metrics: Arc<metrics::ConductorMetrics>,
}

impl std::fmt::Debug for Conductor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conductor")
            .field("drivers", &self.drivers)
            .field("certificates", &self.certificates.is_some())
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Conductor {
    pub fn new(
        db: Database,
        drivers: Arc<DriverRegistry>,
        notifier: Arc<dyn Notifier>,
        settings: ConductorSettings,
    ) -> Self {
        Conductor {
            db,
            drivers,
            notifier,
            certificates: None,
            settings,
            in_progress_since: Mutex::new(HashMap::new()),
            cluster_locks: Mutex::new(HashMap::new()),
            metrics: Arc::default(),
        }
    }

    /// This conductor's Prometheus metrics.
    pub fn metrics(&self) -> &Arc<metrics::ConductorMetrics> {
        &self.metrics
    }

    /// Wait for the lock of cluster `uuid`, held until [`ClusterLock::release`]. Magnum runs
    /// the casts of one cluster concurrently (its executor pool, and every conductor), so two
    /// nodegroup updates and a delete sent within milliseconds interleave their reads and
    /// writes and a late write can resurrect an operation's status; here they run one after
    /// the other. Within this process in arrival order (tokio's mutex is fair); across the
    /// conductors sharing a MariaDB database, by the server's named lock
    /// `openkeel-cluster-<uuid>` on a connection of its own, which a conductor that dies loses
    /// with its connection. Waiting for another process is bounded by
    /// [`Conductor::lock_wait`].
    async fn cluster_lock(&self, uuid: &str) -> Result<ClusterLock, MagnumError> {
        let local = self.cluster_mutex(uuid).lock_owned().await;
        let wait = self.lock_wait();
        // The database unreachable (restarting, failing over) when the operation arrives:
        // nothing has run yet, so the lock is asked again until it answers (at most `wait`)
        // instead of dropping an operation the API already answered 202 for.
        let deadline = tokio::time::Instant::now() + wait;
        let mut attempt: u32 = 0;
        let server = loop {
            match openkeel_db::lock::hold_lock(&self.db, &lock_name(uuid), wait, wait).await {
                Ok(held) => break held,
                Err(e) if e.is_connection_error() && tokio::time::Instant::now() < deadline => {
                    if attempt == 0 {
                        tracing::warn!(cluster = %uuid, error = %e, "the database is unreachable; the operation waits for it");
                    }
                    let pause = Duration::from_millis(250u64.saturating_mul(1 << attempt.min(4)));
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
                Err(e) => {
                    tracing::error!(cluster = %uuid, error = %e, "cannot take the cluster's lock; the operation is not run");
                    return Err(MagnumError::from(e));
                }
            }
        };
        Ok(ClusterLock {
            server: Some(server),
            _local: local,
        })
    }

    /// Run `op` (an operation handler on cluster `uuid`) under the cluster's lock.
    async fn serialized<T>(
        &self,
        uuid: &str,
        op: impl std::future::Future<Output = Result<T, MagnumError>>,
    ) -> Result<T, MagnumError> {
        let lock = self.cluster_lock(uuid).await?;
        tracing::debug!(cluster = %uuid, "operation started");
        let r = op.await;
        lock.release().await;
        tracing::debug!(cluster = %uuid, ok = r.is_ok(), "operation ended");
        r
    }

    /// The longest an operation waits for another conductor's operation on its cluster, and
    /// the longest a conductor whose host vanished keeps the lock: what one operation handler
    /// may take (its driver call, the pre-delete wait, the database
    /// writes and certificates around them).
    fn lock_wait(&self) -> Duration {
        self.settings.driver_call_timeout * 2
            + self.settings.pre_delete_timeout
            + Duration::from_secs(60)
    }

    /// The cross-process lock of cluster `uuid` if no conductor's operation holds it now (the
    /// status sync takes it only to write).
    async fn try_server_lock(&self, uuid: &str) -> Result<Option<HeldLock>, MagnumError> {
        let hold = self.lock_wait();
        Ok(openkeel_db::lock::try_hold_lock(&self.db, &lock_name(uuid), hold).await?)
    }

    fn cluster_mutex(&self, uuid: &str) -> Arc<tokio::sync::Mutex<()>> {
        {
            let mut locks = self
                .cluster_locks
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if locks.len() > 1024 {
                locks.retain(|_, w| w.strong_count() > 0);
            }
            match locks.get(uuid).and_then(std::sync::Weak::upgrade) {
                Some(l) => l,
                None => {
                    let l = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(uuid.to_string(), Arc::downgrade(&l));
                    l
                }
            }
        }
    }

    /// Run one driver call (`method` of the driver named `driver`) within
    /// [`ConductorSettings::driver_call_timeout`]: a driver that hangs (an unreachable API
    /// server, a cloud that never answers) gives a transient [`DriverError`] instead of
    /// holding the cluster's operation lock. Every driver call goes through here, so this is
    /// where driver calls are counted and timed ([`metrics`]).
    pub(crate) async fn bounded<T>(
        &self,
        driver: &str,
        method: &str,
        call: impl std::future::Future<Output = DriverResult<T>>,
    ) -> DriverResult<T> {
        self.bounded_by(driver, method, self.settings.driver_call_timeout, call)
            .await
    }

    /// [`Conductor::bounded`] with another limit.
    pub(crate) async fn bounded_by<T>(
        &self,
        driver: &str,
        method: &str,
        limit: Duration,
        call: impl std::future::Future<Output = DriverResult<T>>,
    ) -> DriverResult<T> {
        let started = std::time::Instant::now();
        let (result, timed_out) = match tokio::time::timeout(limit, call).await {
            Ok(r) => (r, false),
            Err(_) => {
                tracing::warn!(driver, method, ?limit, "driver call timed out");
                (Err(DriverError::timed_out(method, limit)), true)
            }
        };
        self.metrics
            .driver_call(driver, method, &result, timed_out, started.elapsed());
        result
    }

    /// This conductor's lock of cluster `uuid` if no operation holds it now (the status sync
    /// skips a cluster whose operation is running and looks again on its next tick).
    fn try_cluster_lock(&self, uuid: &str) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        self.cluster_mutex(uuid).try_lock_owned().ok()
    }

    /// Generate cluster certificates with `certificates` (without it the cert refs stay NULL).
    pub fn with_certificates(mut self, certificates: Arc<dyn ClusterCertificates>) -> Self {
        self.certificates = Some(certificates);
        self
    }

    pub fn db(&self) -> &Database {
        &self.db
    }

    pub fn drivers(&self) -> &DriverRegistry {
        &self.drivers
    }

    pub fn settings(&self) -> &ConductorSettings {
        &self.settings
    }

    fn since(&self) -> MutexGuard<'_, HashMap<String, (ClusterStatus, NaiveDateTime)>> {
        self.in_progress_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Remember that `cluster` entered `status` now (for the operation timeout).
    fn mark_started(&self, cluster: &Cluster, status: ClusterStatus) {
        if let Some(uuid) = cluster.uuid.clone() {
            self.since()
                .insert(uuid, (status, chrono::Utc::now().naive_utc()));
        }
    }
}

/// The server-side name of a cluster's lock (at most 64 characters: 17 + a 36-character uuid).
fn lock_name(uuid: &str) -> String {
    format!("openkeel-cluster-{uuid}")
}

/// A held cluster lock ([`Conductor::cluster_lock`]): the server's first, then this process's.
pub(crate) struct ClusterLock {
    server: Option<HeldLock>,
    _local: tokio::sync::OwnedMutexGuard<()>,
}

impl ClusterLock {
    /// Let the next operation on the cluster go (in any process).
    pub(crate) async fn release(mut self) {
        if let Some(s) = self.server.take() {
            s.release().await;
        }
    }
}

/// The admin context of the periodic tasks (`make_admin_context(all_tenants=True)`): admin,
/// all tenants, no user, project or token.
pub fn admin_context() -> RequestContext {
    RequestContext {
        is_admin: true,
        all_tenants: true,
        roles: Vec::new(),
        request_id: RequestContext::new_request_id(),
        ..RequestContext::default()
    }
}

/// The uuid of the cluster an operation is about.
fn uuid_of(cluster: &Obj<Cluster>) -> String {
    cluster.data.uuid.clone().unwrap_or_default()
}

#[async_trait]
impl ConductorApi for Conductor {
    async fn cluster_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_cluster_create(ctx, cluster, master_count, node_count, create_timeout);
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn cluster_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_cluster_update(
            ctx,
            cluster,
            node_count,
            health_status,
            health_status_reason,
            rollback,
        );
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn cluster_delete(&self, ctx: &RequestContext, uuid: String) -> Result<(), MagnumError> {
        self.serialized(&uuid, self.handle_cluster_delete(ctx, &uuid))
            .await
    }

    async fn cluster_resize(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_cluster_resize(ctx, cluster, node_count, nodes_to_remove, nodegroup);
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn cluster_upgrade(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        cluster_template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_cluster_upgrade(
            ctx,
            cluster,
            cluster_template,
            max_batch_size,
            nodegroup,
            rollback,
        );
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn nodegroup_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_nodegroup_create(ctx, cluster, nodegroup);
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn nodegroup_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_nodegroup_update(ctx, cluster, nodegroup);
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn nodegroup_delete(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_nodegroup_delete(ctx, cluster, nodegroup);
        self.serialized(&uuid, op).await
    }

    async fn sign_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        certificate: Obj<openkeel_core::objects::Certificate>,
    ) -> Result<openkeel_core::objects::Certificate, MagnumError> {
        self.handle_sign_certificate(ctx, &cluster.data, certificate)
            .await
    }

    async fn get_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        ca_cert_type: Option<String>,
    ) -> Result<openkeel_core::objects::Certificate, MagnumError> {
        self.handle_get_ca_certificate(ctx, &cluster.data, ca_cert_type.as_deref())
            .await
    }

    async fn rotate_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        let uuid = uuid_of(&cluster);
        let op = self.handle_rotate_ca_certificate(ctx, cluster);
        self.serialized(&uuid, op).await.map(drop)
    }

    async fn credential_rotate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        // A driver's rotation rewrites what create and upgrade write (the Cluster API driver's
        // credential Secrets): one operation of a cluster at a time here too.
        let _serial = self
            .cluster_lock(&cluster.data.uuid.clone().unwrap_or_default())
            .await;
        self.handle_credential_rotate(ctx, cluster).await
    }
}
