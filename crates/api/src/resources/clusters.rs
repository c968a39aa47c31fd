//! `/v1/clusters` routes (`magnum/api/controllers/v1/cluster.py`): list, detail, show,
//! create, PATCH, delete — and the routing of the two sub-controllers under a cluster,
//! `actions` ([`actions`]) and `nodegroups` ([`nodegroups`]).
//!
//! Each handler reads top to bottom as Magnum's: WSME typing of the query and the body, then
//! context → policy → look-ups → validation → RPC → view. As in Magnum, the API never writes a
//! cluster or nodegroup row: creates, updates and deletes are conductor casts (upgrade is a
//! call).

pub mod actions;
pub mod common;
pub mod nodegroups;
pub mod types;
pub mod view;
pub mod wsme;

use crate::error::ApiError;
use crate::microversion::Version;
use crate::pagination::{self, ArgSpec, ArgType};
use crate::patch;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use common::{conductor, database, db, FlavorRef};
use http::Method;
use openkeel_cloud::validate::{self as cloud_validate, OsResources};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster, cluster_template, nodegroup, Page, Scope};
use openkeel_rpc::Obj;
use serde_json::{json, Value};
use types::cluster as ct;
use wsme::Fields;

/// The configuration only the cluster routes read (`[cinder] default_boot_volume_size` and
/// `[api] max_limit` come from `ApiState::template_settings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// `[quotas] max_clusters_per_project`.
    pub max_clusters_per_project: i64,
    /// How long a create the conductor has not inserted yet still counts against its
    /// project's quota (10 s; tests whose conductor records casts without inserting use
    /// zero).
    pub insert_wait: std::time::Duration,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            max_clusters_per_project: 20,
            insert_wait: INSERT_WAIT,
        }
    }
}

impl ClusterSettings {
    /// The settings of a loaded configuration.
    pub fn from_config(c: &openkeel_core::config::Config) -> Self {
        ClusterSettings {
            max_clusters_per_project: c.quotas.max_clusters_per_project,
            ..ClusterSettings::default()
        }
    }
}

const ALLOW: &str = "DELETE, GET, PATCH, POST";

/// Route a request under `/v1/clusters`; `rest` are the segments after the collection name.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    let m = &req.method;
    match rest {
        [] => match *m {
            Method::GET => list(state, req, false).await,
            Method::POST => create(state, req, body).await,
            Method::DELETE => Err(missing_path_argument(req, "cluster_ident")),
            Method::PATCH => {
                pagination::parse_args(req, &[])?;
                let _ = patch_body(state, req, body).await?;
                Err(missing_argument("cluster_ident"))
            }
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        ["detail"] if *m == Method::GET => list(state, req, true).await,
        [ident] => match *m {
            Method::GET => get_one(state, req, ident).await,
            Method::PATCH => update(state, req, body, ident).await,
            Method::DELETE => delete(state, req, ident).await,
            Method::POST => Err(positional_body_error("cluster", "Cluster", ident)),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [ident, "detail"] if *m == Method::GET => detail_of_one(state, req, ident),
        [ident, "actions", tail @ ..] => actions::route(state, req, body, ident, tail).await,
        [ident, "nodegroups", tail @ ..] => nodegroups::route(state, req, body, ident, tail).await,
        _ => Err(ApiError::not_found()),
    }
}

// ---- shared helpers (also used by actions and nodegroups) ----

/// WSME `MissingArgument`.
pub(crate) fn missing_argument(name: &str) -> ApiError {
    MagnumError::new(ErrorKind::MissingArgument, &[("argname", &name)]).into()
}

/// A handler reached without its path argument: WSME refuses unknown query parameters
/// (`?_method=...` too) before it finds the argument missing.
pub(crate) fn missing_path_argument(req: &RequestInfo, name: &str) -> ApiError {
    match pagination::parse_args(req, &[]) {
        Err(e) => e,
        Ok(_) => missing_argument(name),
    }
}

/// A POST to a member path: pecan passes the path segment as the body argument.
pub(crate) fn positional_body_error(arg: &str, class: &str, ident: &str) -> ApiError {
    wsme::invalid_input(
        arg,
        ident,
        &format!(
            "unable to convert to {class}. Error: {class}.__init__() takes 1 positional argument but 2 were given"
        ),
    )
    .into()
}

/// The 406 of a handler that does not exist at the requested version (raised while routing).
pub(crate) fn not_at_version(v: Version, api: &str) -> ApiError {
    ApiError::not_acceptable(format!(
        "Version {v} was requested but the requested API {api} is not supported for this version."
    ))
}

/// Read the body argument `arg`: none → `Missing argument`; then WSME's content-type and JSON
/// rules.
pub(crate) async fn read_json(req: &RequestInfo, body: Body, arg: &str) -> Result<Value, ApiError> {
    let bytes = crate::read_body(body).await?;
    if bytes.is_empty() {
        return Err(missing_argument(arg));
    }
    let form = req.header("content-type").is_some_and(|ct| {
        ct.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("application/x-www-form-urlencoded")
    });
    if form {
        // webob parses a form body into the request parameters, which WSME then refuses.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let probe = RequestInfo {
            method: req.method.clone(),
            segments: Vec::new(),
            query: Some(text),
            headers: http::HeaderMap::new(),
            host_url: String::new(),
            request_id: String::new(),
            version: req.version,
            token_info: None,
            positional: Vec::new(),
        };
        let keys: Vec<String> = request::query_pairs(&probe)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        return Err(
            MagnumError::new(ErrorKind::UnknownArgument, &[("argname", &keys.join(", "))]).into(),
        );
    }
    request::json_value_body(req, Body::from(bytes)).await
}

/// `api_utils.get_resource('Cluster', ident)`: by uuid when UUID-like, else by name, with the
/// context's scoping.
pub(crate) async fn get_cluster(
    state: &ApiState,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Cluster, ApiError> {
    let dbh = database(state)?;
    let scope = Scope::from(ctx);
    let r = if openkeel_db::ident::is_uuid_like(ident) {
        cluster::get_by_uuid(dbh, &scope, ident).await
    } else {
        cluster::get_by_name(dbh, &scope, ident).await
    };
    r.map_err(db)
}

/// `cluster.nodegroups`: the cluster's nodegroups in id order (nodegroup scoping).
pub(crate) async fn cluster_nodegroups(
    state: &ApiState,
    ctx: &RequestContext,
    cluster: &Cluster,
) -> Result<Vec<NodeGroup>, ApiError> {
    let uuid = cluster.uuid.clone().unwrap_or_default();
    nodegroup::list(
        database(state)?,
        &Scope::from(ctx),
        &uuid,
        &openkeel_db::NodeGroupFilters::default(),
        &Page::all(),
    )
    .await
    .map_err(db)
}

/// `cluster.default_ng_worker`: the first default nodegroup whose role is not `master`.
pub(crate) fn default_worker(ngs: &[NodeGroup]) -> Result<&NodeGroup, ApiError> {
    ngs.iter()
        .find(|ng| ng.is_default == Some(true) && !view::is_master(ng))
        .ok_or_else(|| MagnumError::internal("list index out of range").into())
}

/// `cluster.cluster_template` (lazy-loaded by uuid with the caller's scoping).
pub(crate) async fn cluster_template_of(
    state: &ApiState,
    ctx: &RequestContext,
    cluster: &Cluster,
) -> Result<ClusterTemplate, ApiError> {
    let id = cluster.cluster_template_id.clone().unwrap_or_default();
    cluster_template::get_by_uuid(database(state)?, &Scope::from(ctx), &id)
        .await
        .map_err(db)
}

/// The policy target of an object (`cluster.as_dict()`).
pub(crate) fn target<T: serde::Serialize>(obj: &T) -> Value {
    serde_json::to_value(obj).unwrap_or(Value::Null)
}

// ---- GET /v1/clusters, /v1/clusters/detail ----

async fn list(state: &ApiState, req: &RequestInfo, detail: bool) -> Result<Reply, ApiError> {
    let args = pagination::parse_args(req, &pagination::LIST_ARGS)?;
    let params = pagination::ListParams::from_args(&args);
    let mut ctx = request::context(state, req);
    let (rule, all) = if detail {
        ("cluster:detail", "cluster:detail_all_projects")
    } else {
        ("cluster:get_all", "cluster:get_all_all_projects")
    };
    request::enforce(state, &ctx, rule, None)?;
    if ctx.is_admin {
        request::enforce(state, &ctx, all, None)?;
        ctx.all_tenants = true;
    }
    let limit = pagination::validate_limit(params.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&params.sort_dir)?;
    let dbh = database(state)?;
    // the semaphore is never closed: a failure could only mean running unbounded
    let _permit = state.list_permits.acquire().await.ok();
    let scope = Scope::from(&ctx);
    let marker = match &params.marker {
        Some(m) => Some(cluster::get_by_uuid(dbh, &scope, m).await.map_err(db)?),
        None => None,
    };
    let page = Page {
        limit: Some(limit),
        marker: marker.as_ref(),
        sort_key: Some(&params.sort_key),
        sort_dir: Some(&params.sort_dir),
    };
    // The page's keys, nodegroup summaries and templates first (a template the caller
    // cannot see fails the whole list, as Magnum's prefetch does, for summaries too), then
    // each cluster is rendered into the body as its row arrives: the page never exists as
    // decoded rows nor as one JSON tree (docs/performance.md, memory).
    let reader = cluster::read_page(dbh, &scope, &Default::default(), &page)
        .await
        .map_err(db)?;
    let per_item = if detail { 1_200 } else { 700 };
    let mut body = pagination::CollectionWriter::new("clusters", reader.len() * per_item);
    let mut last = String::new();
    reader
        .for_each(|c, ngs, labels| {
            let item = if detail {
                view::cluster_full(&c, &ngs, labels, req.version, &req.host_url, None)
            } else {
                view::cluster_summary(&c, &ngs, req.version, &req.host_url)
            };
            body.push(&item);
            last = c.uuid.unwrap_or_default();
            Ok(())
        })
        .await
        .map_err(db)?;
    let url = if detail {
        "clusters/detail"
    } else {
        "clusters"
    };
    let next = pagination::next_link(
        &req.host_url,
        url,
        &params.next_args(),
        limit,
        body.len(),
        &last,
    );
    Ok(Reply::ok_rendered(body.finish(next)))
}

/// `GET /v1/clusters/{id}/detail`: `detail` with the path segment as its `marker`, refused
/// after the policy check with the unformatted `HTTPNotFound` text.
fn detail_of_one(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    if !openkeel_db::ident::is_uuid_like(ident) {
        return Err(wsme::invalid_input(
            "marker",
            ident,
            &format!("unable to convert to uuid. Error: Expected a uuid but received {ident}."),
        )
        .into());
    }
    let specs: Vec<ArgSpec> = pagination::LIST_ARGS
        .iter()
        .copied()
        .filter(|s| s.name != "marker")
        .collect();
    pagination::parse_args(req, &specs)?;
    let ctx = request::context(state, req);
    request::enforce(state, &ctx, "cluster:detail", None)?;
    Err(MagnumError::new(ErrorKind::HTTPNotFound, &[]).into())
}

// ---- GET /v1/clusters/{id} ----

async fn get_one(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    if ctx.is_admin {
        request::enforce(state, &ctx, "cluster:get_one_all_projects", None)?;
        ctx.all_tenants = true;
    }
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce(state, &ctx, "cluster:get", Some(&target(&c)))?;
    let ngs = cluster_nodegroups(state, &ctx, &c).await?;
    let template = cluster_template_of(state, &ctx, &c).await?;
    let failed = c
        .status
        .is_some_and(|s| types::FAILED_STATUSES.contains(&s.as_str()));
    let faults = failed.then(|| view::faults(&ngs));
    Ok(Reply::ok(view::cluster_full(
        &c,
        &ngs,
        template.labels.as_ref(),
        req.version,
        &req.host_url,
        faults,
    )))
}

// ---- POST /v1/clusters ----

async fn create(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
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

fn text(f: &Fields, name: &str) -> Option<String> {
    match f.get(name) {
        Some(PyValue::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

fn int_of(v: Option<&PyValue>) -> Option<i64> {
    match v {
        Some(PyValue::Int(i)) => i64::try_from(*i).ok(),
        Some(PyValue::Bool(b)) => Some(i64::from(*b)),
        _ => None,
    }
}

fn as_i32(v: Option<&PyValue>) -> Option<i32> {
    int_of(v).and_then(|i| i32::try_from(i).ok())
}

fn opt_str(v: &Option<String>) -> PyValue {
    v.clone().map_or(PyValue::None, PyValue::Str)
}

fn labels_py(m: Option<&StringMap>) -> PyValue {
    PyValue::Dict(
        m.map(|m| {
            m.iter()
                .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
                .collect()
        })
        .unwrap_or_default(),
    )
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

async fn create_cluster(
    state: &ApiState,
    req: &RequestInfo,
    ctx: &mut RequestContext,
    c: Fields,
) -> Result<Reply, ApiError> {
    // Decorators: the template (uuid, name or id), the driver's checks.
    let template = load_template(state, ctx, text(&c, "cluster_template_id").as_deref()).await?;
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
    enforce_master_size(state, &template, c.getattr(&ct::MASTER_COUNT).as_ref())?;
    let node_count = c.getattr(&ct::NODE_COUNT);
    if !req.version.at_least(10) && int_of(node_count.as_ref()) == Some(0) {
        return Err(MagnumError::new(ErrorKind::ZeroNodeCountNotSupported, &[]).into());
    }

    // _post
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
const INSERT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

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
    c.set("cluster_template_id", opt_str(&template.uuid));
    if c.getattr(&ct::KEYPAIR).is_none_or(|k| k.is_none()) {
        c.set("keypair", opt_str(&template.keypair_id));
    }
    let template_labels = labels_py(template.labels.as_ref());
    let labels = match c.get("labels") {
        Some(l) if l.truthy() => {
            if c.getattr(&ct::MERGE_LABELS).is_some_and(|m| m.truthy()) {
                let mut merged = template_labels.clone();
                if let PyValue::Dict(items) = l {
                    for (k, v) in items {
                        merged.set(&k.py_str(), v.clone());
                    }
                }
                merged
            } else {
                l.clone()
            }
        }
        _ => template_labels,
    };
    c.set("labels", labels.clone());
    if !c.is_set("floating_ip_enabled") {
        c.set(
            "floating_ip_enabled",
            PyValue::Bool(template.floating_ip_enabled.unwrap_or(true)),
        );
    }
    if !c.is_set("master_lb_enabled") {
        c.set(
            "master_lb_enabled",
            PyValue::Bool(template.master_lb_enabled.unwrap_or(false)),
        );
    }
    let from_template = [
        (
            "docker_volume_size",
            template
                .docker_volume_size
                .map_or(PyValue::None, |v| PyValue::Int(i128::from(v))),
        ),
        ("master_flavor_id", opt_str(&template.master_flavor_id)),
        ("flavor_id", opt_str(&template.flavor_id)),
        ("fixed_network", opt_str(&template.fixed_network)),
        ("fixed_subnet", opt_str(&template.fixed_subnet)),
    ];
    for (name, tv) in from_template {
        if !c.get(name).is_some_and(PyValue::truthy) {
            c.set(name, tv);
        }
    }
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
    let (obj, create_timeout) = new_cluster(ctx, &c)?;
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

/// `NameGenerator().generate() + '-cluster'`.
fn generate_name() -> String {
    const LETTERS: [&str; 24] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi",
        "chi", "psi", "omega",
    ];
    let r = uuid::Uuid::new_v4();
    let b = r.as_bytes();
    let letter = LETTERS[usize::from(b[0]) % LETTERS.len()];
    let number = usize::from(b[1]) % 24 + 1;
    format!("{letter}-{number}-cluster")
}

/// `objects.Cluster(context, **cluster_dict)` + a new uuid: the cluster as cast to
/// `cluster_create`, with its changed fields, and the `create_timeout` argument.
fn new_cluster(ctx: &RequestContext, c: &Fields) -> Result<(Obj<Cluster>, i32), ApiError> {
    let mut cl = Cluster::default();
    let mut changes: Vec<&str> = Vec::new();
    let s = |name: &str| text(c, name);
    // Attributes of the API type that are object fields, as `as_dict()` gives them.
    for attr in ct::FIELDS {
        let name = attr.name;
        if matches!(
            name,
            "node_count" | "master_count" | "node_addresses" | "master_addresses"
        ) {
            continue;
        }
        let Some(v) = c.getattr(attr) else { continue };
        changes.push(name);
        match name {
            "uuid" => {}
            "name" => cl.name = s(name),
            "cluster_template_id" => cl.cluster_template_id = s(name),
            "keypair" => cl.keypair = s(name),
            "docker_volume_size" => cl.docker_volume_size = as_i32(Some(&v)),
            "labels" => cl.labels = Some(wsme::string_map("labels", &v)?),
            "master_flavor_id" => cl.master_flavor_id = s(name),
            "flavor_id" => cl.flavor_id = s(name),
            "status" => cl.status = s(name).and_then(|x| x.parse().ok()),
            "status_reason" => cl.status_reason = s(name),
            "health_status" => cl.health_status = s(name).and_then(|x| x.parse().ok()),
            "health_status_reason" => {
                cl.health_status_reason = match &v {
                    PyValue::None => None,
                    other => Some(wsme::string_map("health_status_reason", other)?),
                }
            }
            "create_timeout" => cl.create_timeout = as_i32(Some(&v)),
            "discovery_url" => cl.discovery_url = s(name),
            "fixed_network" => cl.fixed_network = s(name),
            "fixed_subnet" => cl.fixed_subnet = s(name),
            // A null boolean takes the object's default.
            "floating_ip_enabled" => cl.floating_ip_enabled = Some(v.truthy() || v.is_none()),
            "master_lb_enabled" => cl.master_lb_enabled = Some(v.truthy()),
            _ => {}
        }
    }
    cl.uuid = Some(uuid::Uuid::new_v4().to_string());
    cl.project_id = ctx.project_id.clone();
    cl.user_id = ctx.user_id.clone();
    if cl.name.as_deref().is_none_or(str::is_empty) {
        cl.name = Some(generate_name());
    }
    cl.coe_version = None;
    cl.container_version = None;
    for extra in [
        "uuid",
        "project_id",
        "user_id",
        "name",
        "coe_version",
        "container_version",
    ] {
        if !changes.contains(&extra) {
            changes.push(extra);
        }
    }
    let timeout = cl.create_timeout.unwrap_or(60);
    Ok((Obj::new(cl, changes), timeout))
}

// ---- PATCH /v1/clusters/{id} ----

/// The PATCH query argument (from 1.3).
pub const PATCH_ARGS: [ArgSpec; 1] = [ArgSpec {
    name: "rollback",
    ty: ArgType::Bool,
}];

/// The PATCH query (`rollback` from 1.3) and body (`[ClusterPatchType]`).
async fn patch_body(
    _state: &ApiState,
    req: &RequestInfo,
    body: Body,
) -> Result<(bool, Vec<patch::PatchOp>), ApiError> {
    let rollback = if req.version.at_least(3) {
        let args = pagination::parse_args(req, &PATCH_ARGS)?;
        args.bool("rollback").unwrap_or(false)
    } else {
        pagination::parse_args(req, &[])?;
        false
    };
    // Magnum (1.3+): a missing body is a 500 (`'NoneType' object is not iterable`).
    let value = read_json(req, body, "patch").await?;
    let ops = ct::PATCH.parse(&value)?;
    Ok((rollback, ops))
}

async fn update(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    let (rollback, mut ops) = patch_body(state, req, body).await?;
    let mut ctx = request::context(state, req);
    if ctx.is_admin {
        request::enforce(state, &ctx, "cluster:update_all_projects", None)?;
        ctx.all_tenants = true;
    }
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce(state, &ctx, "cluster:update", Some(&target(&c)))?;
    request::enforce(state, &ctx, "cluster:update_health_status", None)?;
    let ngs = cluster_nodegroups(state, &ctx, &c).await?;
    let doc = view::cluster_doc(&c, &ngs);
    let mut patched = patch::apply_jsonpatch(&doc, &mut ops)?;
    wsme::coerce_nested(&ops, &mut patched, &["labels", "health_status_reason"]);
    let new = wsme::construct(&patched, ct::FIELDS)?;

    // What differs between the stored cluster and the patched one (`getattr` both sides).
    let delta: Vec<&str> = ct::FIELDS
        .iter()
        .filter(|attr| {
            let old = doc.get(attr.name);
            let new_v = new.getattr(attr);
            match (old, new_v.as_ref()) {
                (Some(o), Some(n)) => !o.py_eq(n),
                (None, None) => false,
                _ => true,
            }
        })
        .map(|a| a.name)
        .collect();

    // Root volume of the patched flavors (labels that are not a dict: Magnum 500s; the
    // property check below refuses the change instead).
    if let Some(PyValue::Dict(items)) = new.get("labels") {
        let labels: StringMap = items
            .iter()
            .map(|(k, v)| (k.py_str(), v.py_str()))
            .collect();
        let cloud = common::cloud(state)?;
        for attr in [&ct::FLAVOR_ID, &ct::MASTER_FLAVOR_ID] {
            let v = new.getattr(attr);
            let r = match &v {
                None => FlavorRef::Unset,
                Some(PyValue::Str(s)) => FlavorRef::Name(s),
                Some(_) => FlavorRef::Null,
            };
            common::check_root_volume(
                cloud,
                &ctx,
                Some(&labels),
                r,
                state.template_settings.default_boot_volume_size,
            )
            .await?;
        }
    }
    let disallowed: Vec<&str> = delta
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "node_count" | "health_status" | "health_status_reason"))
        .collect();
    if !disallowed.is_empty() {
        return Err(MagnumError::invalid_parameter(format!(
            "cannot change cluster property(ies) {}.",
            disallowed.join(", ")
        ))
        .into());
    }

    let mut node_count = view::ng_node_count(default_worker(&ngs)?);
    for op in ops.iter() {
        if op.path.as_deref() == Some("/node_count") {
            node_count = match &op.value {
                Some(v) if v.truthy() => int_of(Some(v)).unwrap_or(0),
                _ => int_of(new.getattr(&ct::NODE_COUNT).as_ref()).unwrap_or(1),
            };
        }
    }
    if !req.version.at_least(10) && node_count == 0 {
        return Err(MagnumError::new(ErrorKind::ZeroNodeCountNotSupported, &[]).into());
    }
    let health_status = match new.getattr(&ct::HEALTH_STATUS) {
        Some(PyValue::Str(s)) => Some(s),
        _ => None,
    };
    let health_status_reason = match new.getattr(&ct::HEALTH_STATUS_REASON) {
        Some(v @ PyValue::Dict(_)) => Some(wsme::string_map("health_status_reason", &v)?),
        _ => None,
    };
    let uuid = c.uuid.clone().unwrap_or_default();
    conductor(state)?
        .cluster_update(
            &ctx,
            Obj::unchanged(c),
            i32::try_from(node_count).unwrap_or(i32::MAX),
            health_status,
            health_status_reason,
            rollback,
        )
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}

// ---- DELETE /v1/clusters/{id} ----

async fn delete(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    if ctx.is_admin {
        request::enforce(state, &ctx, "cluster:delete_all_projects", None)?;
        ctx.all_tenants = true;
    }
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce(state, &ctx, "cluster:delete", Some(&target(&c)))?;
    conductor(state)?
        .cluster_delete(&ctx, c.uuid.clone().unwrap_or_default())
        .await?;
    Ok(Reply::empty(204))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names() {
        for _ in 0..50 {
            let n = generate_name();
            assert!(n.ends_with("-cluster"), "{n}");
            assert!(wsme::cluster_name_matches(&n), "{n}");
        }
    }

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
