//! `/v1/clusters` routes (`magnum/api/controllers/v1/cluster.py`): list, detail, show,
//! create, PATCH, delete — and the routing of the two sub-controllers under a cluster,
//! `actions` ([`actions`]) and `nodegroups` ([`nodegroups`]).
//!
//! One file per operation: [`list`], [`show`], [`create`], [`update`], [`delete`]; what they
//! share that is not HTTP (template defaults, the object cast, the PATCH delta) is in
//! [`service`]. Each handler reads top to bottom as Magnum's: WSME typing of the query and the
//! body, then context → policy → look-ups → validation → RPC → view. As in Magnum, the API
//! never writes a cluster or nodegroup row: creates, updates and deletes are conductor casts
//! (upgrade is a call).

pub mod actions;
pub mod common;
mod create;
mod delete;
mod list;
pub mod nodegroups;
mod service;
mod show;
pub mod types;
mod update;
pub mod view;
pub mod wsme;

pub use create::PendingCreates;
pub use update::PATCH_ARGS;

use crate::error::ApiError;
use crate::microversion::Version;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use common::{database, db};
use http::Method;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterTemplate, NodeGroup};
use openkeel_db::{cluster, cluster_template, nodegroup, Page, Scope};
use serde_json::Value;

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
            insert_wait: create::INSERT_WAIT,
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
/// Each operation's future is boxed, so that this one stays small (see [`crate::routes::v1`]).
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    let m = &req.method;
    // pecan's `_find_sub_controllers` comes first: `get_one` takes `*args`, so a segment
    // naming a sub-controller anywhere in the path routes to it, the segments before it being
    // its routing arguments; with other than one (the cluster) its handlers cannot take them.
    if let Some(i) = rest
        .iter()
        .position(|s| matches!(*s, "nodegroups" | "actions"))
        .filter(|i| *i != 1)
    {
        return Err(if rest[i] == "nodegroups" {
            nodegroups::beyond_arguments(req)
        } else {
            actions::beyond_arguments(req, &rest[i + 1..])
        });
    }
    match rest {
        [] => match *m {
            Method::GET => Box::pin(list::list(state, req, false)).await,
            Method::POST => Box::pin(create::create(state, req, body)).await,
            Method::DELETE => Err(missing_path_argument(req, "cluster_ident")),
            Method::PATCH => {
                query::parse_args(req, &[])?;
                let _ = Box::pin(update::patch_body(state, req, body)).await?;
                Err(missing_argument("cluster_ident"))
            }
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        ["detail"] if *m == Method::GET => Box::pin(list::list(state, req, true)).await,
        [ident] => match *m {
            Method::GET => Box::pin(show::get_one(state, req, ident)).await,
            Method::PATCH => Box::pin(update::update(state, req, body, ident)).await,
            Method::DELETE => Box::pin(delete::delete(state, req, ident)).await,
            Method::POST => Err(positional_body_error("cluster", "Cluster", ident)),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [ident, "detail"] if *m == Method::GET => list::detail_of_one(state, req, ident),
        [ident, "actions", tail @ ..] => {
            Box::pin(actions::route(state, req, body, ident, tail)).await
        }
        [ident, "nodegroups", tail @ ..] => {
            Box::pin(nodegroups::route(state, req, body, ident, tail)).await
        }
        _ => Err(ApiError::beyond_arguments(m, ALLOW)),
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
    match query::parse_args(req, &[]) {
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
    cluster::get_by_ident(database(state)?, &Scope::from(ctx), ident)
        .await
        .map_err(db)
}

/// [`get_cluster`] with the cluster's nodegroups and template read on the same database
/// connection (what a full view needs); their look-ups' errors are for the caller to map,
/// after its policy check, as [`cluster_nodegroups`] and [`cluster_template_of`] map them.
pub(crate) async fn get_cluster_with_relations(
    state: &ApiState,
    ctx: &RequestContext,
    ident: &str,
) -> Result<cluster::ClusterWithRelations, ApiError> {
    cluster::get_with_relations(database(state)?, &Scope::from(ctx), ident)
        .await
        .map_err(db)
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
        // Magnum: IndexError, a 500; a client-side 400 with the same text here (a cluster
        // whose create failed before its nodegroups existed has none).
        .ok_or_else(|| MagnumError::client_side("list index out of range").into())
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
