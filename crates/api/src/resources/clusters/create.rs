//! `POST /v1/clusters` (`ClustersController.post` / `_post` in
//! `magnum/api/controllers/v1/cluster.py`): the decorators' checks of the template and the
//! driver, policy, the quota under a per-project lock, the template's defaults
//! ([`service::apply_template_defaults`]), the OpenStack look-ups, then a `cluster_create`
//! cast of [`service::new_cluster`].

use super::common::{self, conductor, database, db, FlavorRef};
use super::types::cluster as ct;
use super::{read_json, service, wsme};
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_cloud::validate::{self as cloud_validate, OsResources};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::ClusterTemplate;
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster, cluster_template, Scope};
use serde_json::json;
use service::{as_i32, int_of, text};
use wsme::Fields;

/// Query and body → context → the decorators' validation → policy → quota → defaults and
/// look-ups → cast → 202 (policy after the decorators, as Magnum).
pub(super) async fn create(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let value = read_json(req, body, "cluster").await?;
    let fields = wsme::from_json("cluster", &value, ct::ATTRS)?;
    let mut ctx = request::context(state, req);
    let result = create_cluster(state, req, &mut ctx, fields).await;
    if req.version.at_least(10) {
        return result;
    }
    // 1.1–1.9 (`ct_not_found_to_bad_request`): an unknown template is a 400.
    result.map_err(|e| match e {
        ApiError::Handler(m) if m.kind() == ErrorKind::ClusterTemplateNotFound => {
            ApiError::Handler(m.with_code(400))
        }
        other => other,
    })
}

/// `ClusterTemplate.get(context, ident)`.
async fn load_template(
    state: &ApiState,
    ctx: &RequestContext,
    ident: Option<&str>,
) -> Result<ClusterTemplate, ApiError> {
    let Some(ident) = ident else {
        return Err(MagnumError::new(
            ErrorKind::ClusterTemplateNotFound,
            &[("clustertemplate", &"None")],
        )
        .into());
    };
    cluster_template::get(database(state)?, &Scope::from(ctx), ident)
        .await
        .map_err(db)
}

/// `enforce_cluster_master_size_supported`: the template's driver's `validate_master_size`
/// (the base driver's rule without a catalogue).
fn enforce_master_size(
    state: &ApiState,
    template: &ClusterTemplate,
    master_count: Option<&PyValue>,
) -> Result<(), ApiError> {
    let as_i64 = |v: &PyValue| match v {
        PyValue::Int(n) => i64::try_from(*n).ok(),
        _ => None,
    };
    match (master_count.and_then(as_i64), &state.drivers) {
        (Some(n), Some(drivers)) => Ok(drivers.validate_master_size(
            template.server_type.as_deref(),
            template.cluster_distro.as_deref(),
            template.coe.as_deref(),
            n,
        )?),
        _ => validate_master_size(master_count),
    }
}

/// The base driver's `validate_master_size`: an odd count of at least 1.
fn validate_master_size(master_count: Option<&PyValue>) -> Result<(), ApiError> {
    match master_count {
        Some(PyValue::Int(n)) if *n >= 1 && n % 2 == 1 => Ok(()),
        // Magnum: `None % 2` is a 500 for an explicit null; docs/differences.md.
        other => Err(MagnumError::new(
            ErrorKind::MasterNGSizeInvalid,
            &[(
                "requested_size",
                &other.map_or_else(|| "None".to_string(), PyValue::py_str),
            )],
        )
        .into()),
    }
}

/// The checks of `_post`'s decorators (`enforce_cluster_type_supported`,
/// `enforce_driver_supported`'s volume rule, `enforce_cluster_master_size_supported`) and the
/// zero node count below 1.10.
fn decorator_checks(
    state: &ApiState,
    req: &RequestInfo,
    c: &Fields,
    template: &ClusterTemplate,
) -> Result<(), ApiError> {
    // `enforce_cluster_type_supported`: `get_driver(server_type, cluster_distro, coe)`.
    if let Some(drivers) = &state.drivers {
        drivers.supports(
            template.server_type.as_deref(),
            template.cluster_distro.as_deref(),
            template.coe.as_deref(),
            None,
        )?;
    }
    let volume_size = int_of(c.get("docker_volume_size"))
        .filter(|v| *v != 0)
        .or_else(|| template.docker_volume_size.map(i64::from));
    if template.docker_storage_driver.as_deref() == Some("devicemapper")
        && volume_size.is_none_or(|v| v < 3)
    {
        return Err(MagnumError::invalid_parameter(format!(
            "docker volume size {} GB is not valid, expecting minimum value 3GB for devicemapper storage driver.",
            volume_size.map_or_else(|| "None".to_string(), |v| v.to_string())
        ))
        .into());
    }
    enforce_master_size(state, template, c.getattr(&ct::MASTER_COUNT).as_ref())?;
    if !req.version.at_least(10) && int_of(c.getattr(&ct::NODE_COUNT).as_ref()) == Some(0) {
        return Err(MagnumError::new(ErrorKind::ZeroNodeCountNotSupported, &[]).into());
    }
    Ok(())
}

async fn create_cluster(
    state: &ApiState,
    req: &RequestInfo,
    ctx: &mut RequestContext,
    c: Fields,
) -> Result<Reply, ApiError> {
    // validate (Magnum's decorators, before the policy): the template, the driver's checks
    let template = load_template(state, ctx, text(&c, "cluster_template_id").as_deref()).await?;
    decorator_checks(state, req, &c, &template)?;
    // policy (`_post`)
    request::enforce(state, ctx, "cluster:create", None)?;
    // Magnum counts the project's clusters and then casts: concurrent creates all pass the
    // count before any is inserted and the quota is exceeded. Here the count and the cast
    // happen under one lock per project, and the count includes this process's creates that
    // were cast but not inserted yet ([`PendingCreates`]; docs/differences.md). The lock is
    // not held while the conductor inserts, so creates do not queue behind the conductor.
    let project = ctx.project_id.clone().unwrap_or_default();
    let lock = openkeel_db::lock::named_lock(
        database(state)?,
        &format!("openkeel-cluster-quota-{project}"),
        QUOTA_LOCK_TIMEOUT,
    )
    .await
    .map_err(|e| match e {
        // other creates of the project hold it, waiting on the broker: a 503, to be retried
        openkeel_db::DbError::Conflict(_) => ApiError::from(MagnumError::new(
            ErrorKind::ServiceUnavailable,
            &[(
                "msg",
                &"Too many cluster creates of this project are waiting for the conductor; try again.",
            )],
        )),
        other => db(other),
    })?;
    let node_count = c.getattr(&ct::NODE_COUNT);
    let result = quota_checked_create(state, ctx, c, &template, node_count).await;
    if let Ok((_, uuid)) = &result {
        state.pending_creates.add(&project, uuid);
    }
    lock.release().await;
    // the answer waits (bounded) for the conductor's insert, without the lock: a GET right
    // after the 202 finds the cluster
    if let Ok((_, uuid)) = &result {
        if wait_for_insert(state, ctx, uuid).await {
            state
                .pending_creates
                .forget(&project, std::slice::from_ref(uuid));
        }
    }
    result.map(|(reply, _)| reply)
}

/// Wait (bounded by [`ClusterSettings::insert_wait`]) until the conductor has inserted
/// `uuid`; whether it has. The conductor inserts first thing in `cluster_create`, so this is
/// normally a few milliseconds.
async fn wait_for_insert(state: &ApiState, ctx: &RequestContext, uuid: &str) -> bool {
    let Ok(dbh) = database(state) else {
        return false;
    };
    let scope = Scope::from(ctx);
    let deadline = tokio::time::Instant::now() + state.clusters.insert_wait;
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        if cluster::get_by_uuid(dbh, &scope, uuid).await.is_ok() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                cluster = uuid,
                "the conductor has not inserted the new cluster yet; answering without it"
            );
            return false;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    }
}

/// How long a create waits for another create of the same project to finish its count and
/// cast.
const QUOTA_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a cast create whose row the conductor has not inserted yet still counts against
/// its project's quota (the default of [`ClusterSettings::insert_wait`]).
pub(super) const INSERT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The creates this API process cast whose rows the conductor may not have inserted yet, per
/// project. The next create of the project counts them with the project's clusters (those
/// found in the database meanwhile are dropped, so nothing counts twice), which keeps the
/// quota exact without holding the project's lock until the conductor has inserted. An entry
/// older than [`ClusterSettings::insert_wait`] no longer counts (a conductor that never
/// inserts must not hold the quota).
#[derive(Debug, Default)]
pub struct PendingCreates(
    std::sync::Mutex<std::collections::HashMap<String, Vec<(String, std::time::Instant)>>>,
);

impl PendingCreates {
    fn add(&self, project: &str, uuid: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.entry(project.to_string())
                .or_default()
                .push((uuid.to_string(), std::time::Instant::now()));
        }
    }

    /// The project's entries younger than `max_age` (older ones are dropped).
    fn of(&self, project: &str, max_age: std::time::Duration) -> Vec<String> {
        let Ok(mut m) = self.0.lock() else {
            return Vec::new();
        };
        let Some(list) = m.get_mut(project) else {
            return Vec::new();
        };
        list.retain(|(_, at)| at.elapsed() < max_age);
        let out = list.iter().map(|(u, _)| u.clone()).collect();
        if list.is_empty() {
            m.remove(project);
        }
        out
    }

    /// Drop `uuids` (now in the database) from the project's entries.
    fn forget(&self, project: &str, uuids: &[String]) {
        if let Ok(mut m) = self.0.lock() {
            if let Some(list) = m.get_mut(project) {
                list.retain(|(u, _)| !uuids.contains(u));
                if list.is_empty() {
                    m.remove(project);
                }
            }
        }
    }
}

/// The part of `_post` from the quota check to the cast.
async fn quota_checked_create(
    state: &ApiState,
    ctx: &mut RequestContext,
    mut c: Fields,
    template: &ClusterTemplate,
    node_count: Option<PyValue>,
) -> Result<(Reply, String), ApiError> {
    check_quota(state, ctx).await?;
    if template.hidden == Some(true) && !ctx.is_admin {
        return Err(MagnumError::new(ErrorKind::NotAuthorized, &[]).into());
    }
    let labels = service::apply_template_defaults(&mut c, template);
    let labels_map = wsme::string_map("labels", &labels)?;

    // Root volume, OpenStack resources, keypair, master count.
    let cloud = common::cloud(state)?;
    let bvs = state.template_settings.default_boot_volume_size;
    for attr in ["flavor_id", "master_flavor_id"] {
        let f = text(&c, attr);
        let r = f.as_deref().map_or(FlavorRef::Null, FlavorRef::Name);
        common::check_root_volume(cloud, ctx, Some(&labels_map), r, bvs).await?;
    }
    let (flavor, master_flavor) = (text(&c, "flavor_id"), text(&c, "master_flavor_id"));
    let (fixed_net, fixed_subnet) = (text(&c, "fixed_network"), text(&c, "fixed_subnet"));
    let keypair = text(&c, "keypair");
    let cluster_res = OsResources {
        image_id: None,
        flavor_id: flavor.as_deref(),
        master_flavor_id: master_flavor.as_deref(),
        external_network_id: None,
        fixed_network: fixed_net.as_deref(),
        fixed_subnet: fixed_subnet.as_deref(),
    };
    let template_res = OsResources {
        image_id: template.image_id.as_deref(),
        flavor_id: template.flavor_id.as_deref(),
        master_flavor_id: template.master_flavor_id.as_deref(),
        external_network_id: template.external_network_id.as_deref(),
        fixed_network: template.fixed_network.as_deref(),
        fixed_subnet: template.fixed_subnet.as_deref(),
    };
    cloud_validate::validate_os_resources(
        cloud,
        ctx,
        &template_res,
        Some((&cluster_res, keypair.as_deref())),
    )
    .await?;
    let master_count = int_of(c.getattr(&ct::MASTER_COUNT).as_ref()).unwrap_or(1);
    let master_lb = c.get("master_lb_enabled").is_some_and(PyValue::truthy);
    if master_count > 1 && !master_lb {
        return Err(MagnumError::invalid_parameter(
            "master_count must be 1 when master_lb_enabled is False",
        )
        .into());
    }

    // The object sent to the conductor, with exactly the fields Magnum sets.
    let (obj, create_timeout) = service::new_cluster(ctx, &c)?;
    // OpenKeel: the driver refuses now what it would only find out in the conductor.
    if let Some(drivers) = &state.drivers {
        drivers.validate_cluster_create(template, &obj.data, master_count)?;
    }
    let uuid = obj.data.uuid.clone().unwrap_or_default();
    // A null node_count is coerced to the nodegroup default (1) by the conductor's objects.
    let node_count = as_i32(node_count.as_ref()).unwrap_or(1);
    let master_count = i32::try_from(master_count).unwrap_or(1);
    conductor(state)?
        .cluster_create(ctx, obj, master_count, node_count, create_timeout)
        .await?;
    Ok((Reply::json(202, json!({ "uuid": uuid })), uuid))
}

/// `_check_cluster_quota_limit`.
async fn check_quota(state: &ApiState, ctx: &RequestContext) -> Result<(), ApiError> {
    let dbh = database(state)?;
    let project = ctx.project_id.clone().unwrap_or_default();
    let limit = match openkeel_db::quota::get_by_project_id_resource(dbh, &project, "Cluster").await
    {
        Ok(q) => i64::from(q.hard_limit),
        Err(openkeel_db::DbError::QuotaNotFound { .. }) => state.clusters.max_clusters_per_project,
        Err(e) => return Err(db(e)),
    };
    // the project's clusters and this process's creates the conductor has not inserted yet,
    // of one snapshot (a create inserted meanwhile counts once)
    let pending = state
        .pending_creates
        .of(&project, state.clusters.insert_wait);
    let (count, inserted) = cluster::count_among(dbh, &Scope::from(ctx), &pending)
        .await
        .map_err(db)?;
    let in_flight = i64::try_from(pending.len())
        .unwrap_or(i64::MAX)
        .saturating_sub(inserted);
    if count.saturating_add(in_flight) >= limit {
        return Err(MagnumError::new(
            ErrorKind::ResourceLimitExceeded,
            &[(
                "msg",
                &format!(
                    "You have reached the maximum clusters per project, {limit}. You may delete a cluster to make room for a new one."
                ),
            )],
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_sizes() {
        assert!(validate_master_size(Some(&PyValue::Int(1))).is_ok());
        assert!(validate_master_size(Some(&PyValue::Int(3))).is_ok());
        match validate_master_size(Some(&PyValue::Int(2))) {
            Err(ApiError::Handler(e)) => assert_eq!(
                e.message(),
                "master nodegroup size of 2 is invalid, size cannot be an even number."
            ),
            other => panic!("{other:?}"),
        }
    }
}
