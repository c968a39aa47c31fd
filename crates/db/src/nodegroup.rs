//! The `nodegroup` table. Every query is scoped to one cluster (`cluster_id` holds the
//! cluster's uuid) and, unless the caller is admin, to the caller's project.

use std::collections::HashMap;

use openkeel_core::objects::{ClusterStatus, NodeGroup};

use crate::backend::{retry_on_deadlock, utcnow, At, Conn, Val};
use crate::ident::{identity_filter, Ident};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_no_id, fetch_by_id_on, insert_and_fetch, update_tx};
use crate::{Database, DbError, Scope};

record!(NodeGroup, "nodegroup", [
    created_at: opt_datetime,
    updated_at: opt_datetime,
    id: int,
    uuid: string,
    name: string,
    cluster_id: string,
    project_id: string,
    docker_volume_size: opt_int,
    labels: opt_dict,
    flavor_id: opt_string,
    image_id: opt_string,
    node_addresses: opt_list,
    node_count: opt_int,
    max_node_count: opt_int,
    min_node_count: opt_int,
    role: opt_string,
    is_default: opt_bool,
    stack_id: opt_string,
    status: opt_enum,
    status_reason: opt_string,
    version: opt_string,
    node_labels: opt_dict,
    node_taints: opt_dict_list,
]);

/// The filters of `_add_nodegoup_filters`: equality on `name`, `node_count`,
/// `node_addresses` (the JSON text of the list), `role`, `is_default`; `status` IN list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeGroupFilters {
    pub name: Option<String>,
    pub node_count: Option<i32>,
    pub node_addresses: Option<Vec<String>>,
    pub role: Option<String>,
    pub is_default: Option<bool>,
    pub status: Option<Vec<ClusterStatus>>,
}

impl NodeGroupFilters {
    fn apply(&self, w: &mut Where) {
        if let Some(v) = &self.name {
            w.eq("name", v.as_str());
        }
        if let Some(v) = self.node_count {
            w.eq("node_count", v);
        }
        if let Some(v) = &self.node_addresses {
            w.eq("node_addresses", crate::json::dumps_string_list(v));
        }
        if let Some(v) = &self.role {
            w.eq("role", v.as_str());
        }
        if let Some(v) = self.is_default {
            w.eq("is_default", v);
        }
        if let Some(statuses) = &self.status {
            w.in_list(
                "status",
                statuses.iter().map(|s| Val::from(s.as_str())).collect(),
            );
        }
    }
}

fn scoped(scope: &Scope, cluster_id: &str) -> Where {
    let mut w = Where::new();
    scope.nodegroup_filter(&mut w);
    w.eq("cluster_id", cluster_id);
    w
}

async fn fetch_one(
    db: &Database,
    w: Where,
    ident: &str,
    by_name: bool,
) -> Result<NodeGroup, DbError> {
    let mut c = db.acquire().await?;
    let rows = record::select_where::<NodeGroup>(&mut c.conn(), &w, false).await?;
    record::one(
        rows,
        || DbError::NodeGroupNotFound(ident.to_string()),
        || {
            if by_name {
                DbError::Conflict(
                    "Multiple nodegroups exist with same name. Please use the nodegroup uuid instead."
                        .into(),
                )
            } else {
                DbError::Conflict(format!("Multiple nodegroups match {ident}"))
            }
        },
    )
}

/// `NodeGroup.get`: by id when integer-like, by uuid when UUID-like, else by name.
pub async fn get(
    db: &Database,
    scope: &Scope,
    cluster_id: &str,
    ident: &str,
) -> Result<NodeGroup, DbError> {
    match Ident::parse(ident) {
        Some(Ident::Id(_)) | Some(Ident::Uuid(_)) => {
            let mut w = scoped(scope, cluster_id);
            identity_filter(&mut w, ident)?;
            fetch_one(db, w, ident, false).await
        }
        None => get_by_name(db, scope, cluster_id, ident).await,
    }
}

/// `get_nodegroup_by_id`.
pub async fn get_by_id(
    db: &Database,
    scope: &Scope,
    cluster_id: &str,
    id: i64,
) -> Result<NodeGroup, DbError> {
    let mut w = scoped(scope, cluster_id);
    w.eq("id", id);
    fetch_one(db, w, &id.to_string(), false).await
}

/// `get_nodegroup_by_uuid`.
pub async fn get_by_uuid(
    db: &Database,
    scope: &Scope,
    cluster_id: &str,
    uuid: &str,
) -> Result<NodeGroup, DbError> {
    let mut w = scoped(scope, cluster_id);
    w.eq("uuid", uuid);
    fetch_one(db, w, uuid, false).await
}

/// `get_nodegroup_by_name`.
pub async fn get_by_name(
    db: &Database,
    scope: &Scope,
    cluster_id: &str,
    name: &str,
) -> Result<NodeGroup, DbError> {
    let mut w = scoped(scope, cluster_id);
    w.eq("name", name);
    fetch_one(db, w, name, true).await
}

/// `list_cluster_nodegroups`.
pub async fn list(
    db: &Database,
    scope: &Scope,
    cluster_id: &str,
    filters: &NodeGroupFilters,
    page: &Page<'_, NodeGroup>,
) -> Result<Vec<NodeGroup>, DbError> {
    let mut w = scoped(scope, cluster_id);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// The nodegroups of several clusters in one query, grouped by cluster uuid, each group in id
/// order (nodegroup scoping applies).
pub async fn list_for_clusters(
    db: &Database,
    scope: &Scope,
    cluster_uuids: &[&str],
) -> Result<HashMap<String, Vec<NodeGroup>>, DbError> {
    let mut c = db.acquire().await?;
    for_clusters_on(&mut c.conn(), scope, cluster_uuids).await
}

pub(crate) async fn for_clusters_on(
    conn: &mut Conn<'_>,
    scope: &Scope,
    cluster_uuids: &[&str],
) -> Result<HashMap<String, Vec<NodeGroup>>, DbError> {
    let mut out: HashMap<String, Vec<NodeGroup>> = HashMap::new();
    // SQLite accepts 32766 bound values per statement; stay well below.
    for chunk in cluster_uuids.chunks(10_000) {
        let mut w = Where::new();
        scope.nodegroup_filter(&mut w);
        w.in_list("cluster_id", chunk.iter().map(|u| Val::from(*u)).collect());
        for ng in record::select_where::<NodeGroup>(conn, &w, false).await? {
            out.entry(ng.cluster_id.clone()).or_default().push(ng);
        }
    }
    Ok(out)
}

/// [`for_clusters_on`] keeping only what a cluster list shows of each nodegroup:
/// `cluster_id`, `role`, `node_count` and `node_addresses` (every other field is left at its
/// default), so that a page of 1,000 clusters does not hold 2,000 full nodegroups.
pub(crate) async fn summaries_for_clusters_on(
    conn: &mut Conn<'_>,
    scope: &Scope,
    cluster_uuids: &[&str],
) -> Result<HashMap<String, Vec<NodeGroup>>, DbError> {
    let mut out: HashMap<String, Vec<NodeGroup>> = HashMap::new();
    for chunk in cluster_uuids.chunks(10_000) {
        let mut w = Where::new();
        scope.nodegroup_filter(&mut w);
        w.in_list("cluster_id", chunk.iter().map(|u| Val::from(*u)).collect());
        let slim = |ng: NodeGroup| NodeGroup {
            id: ng.id,
            cluster_id: ng.cluster_id,
            role: ng.role,
            node_count: ng.node_count,
            node_addresses: ng.node_addresses,
            is_default: ng.is_default,
            ..NodeGroup::default()
        };
        for ng in record::select_where_map::<NodeGroup, _>(conn, &w, slim).await? {
            out.entry(ng.cluster_id.clone()).or_default().push(ng);
        }
    }
    Ok(out)
}

/// What a cluster list needs of one nodegroup (its view's node and master counts and
/// addresses), a few dozen bytes instead of a whole [`NodeGroup`].
#[derive(Debug, Clone)]
pub(crate) struct NodeSummary {
    role: Option<String>,
    node_count: Option<i32>,
    node_addresses: Option<Vec<String>>,
    is_default: Option<bool>,
}

impl NodeSummary {
    /// A [`NodeGroup`] with the summary's fields (what [`summaries_for_clusters_on`] gives).
    pub(crate) fn into_nodegroup(self, cluster_id: &str) -> NodeGroup {
        NodeGroup {
            cluster_id: cluster_id.to_string(),
            role: self.role,
            node_count: self.node_count,
            node_addresses: self.node_addresses,
            is_default: self.is_default,
            ..NodeGroup::default()
        }
    }
}

/// [`summaries_for_clusters_on`] reading only the five columns the summaries hold, kept as
/// [`NodeSummary`]s (same scoping, same id order).
pub(crate) async fn compact_summaries_for_clusters_on(
    conn: &mut Conn<'_>,
    scope: &Scope,
    cluster_uuids: &[&str],
) -> Result<HashMap<String, Vec<NodeSummary>>, DbError> {
    const T: &str = "nodegroup";
    // selected in this order, read by position
    const COLUMNS: [&str; 5] = [
        "cluster_id",
        "role",
        "node_count",
        "node_addresses",
        "is_default",
    ];
    let at = |index: usize| At {
        index,
        name: COLUMNS[index],
    };
    let select: Vec<String> = COLUMNS.iter().map(|c| record::q(c)).collect();
    let mut out: HashMap<String, Vec<NodeSummary>> = HashMap::with_capacity(cluster_uuids.len());
    for chunk in cluster_uuids.chunks(10_000) {
        let mut w = Where::new();
        scope.nodegroup_filter(&mut w);
        w.in_list("cluster_id", chunk.iter().map(|u| Val::from(*u)).collect());
        let sql = format!(
            "SELECT {} FROM {}{} ORDER BY {}",
            select.join(", "),
            record::q(T),
            w.sql(),
            record::q("id"),
        );
        conn.fetch_each(&sql, w.args(), |r| {
            let cluster_id = record::kind::string::decode(T, r, at(0))?;
            let summary = NodeSummary {
                role: record::kind::opt_string::decode(T, r, at(1))?,
                node_count: record::kind::opt_int::decode(T, r, at(2))?,
                node_addresses: record::kind::opt_list::decode(T, r, at(3))?,
                is_default: record::kind::opt_bool::decode(T, r, at(4))?,
            };
            out.entry(cluster_id)
                .or_insert_with(|| Vec::with_capacity(2))
                .push(summary);
            Ok(())
        })
        .await?;
    }
    Ok(out)
}

/// `get_cluster_nodegroup_count`.
pub async fn count(db: &Database, scope: &Scope, cluster_id: &str) -> Result<i64, DbError> {
    let w = scoped(scope, cluster_id);
    let mut c = db.acquire().await?;
    record::count_where::<NodeGroup>(&mut c.conn(), &w).await
}

/// `create_nodegroup`: generates a uuid when empty, `is_default` defaults to false,
/// `created_at` to now. A duplicate uuid or (cluster_id, name) → `NodeGroupAlreadyExists`.
pub async fn create(db: &Database, nodegroup: &NodeGroup) -> Result<NodeGroup, DbError> {
    let ng = with_defaults(nodegroup);
    retry_on_deadlock!(insert_and_fetch(db, &ng)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::NodeGroupAlreadyExists {
                cluster_id: ng.cluster_id.clone(),
                name: ng.name.clone(),
            }
        } else {
            e
        }
    })
}

/// [`create`] for a nodegroup of a cluster that must still exist: the cluster's row is read
/// for update in the insert's transaction, so a cluster deleted meanwhile (its delete also
/// takes the row) refuses the insert with `ClusterNotFound` instead of leaving a nodegroup
/// without a cluster. The conductor's `nodegroup_create` uses it (the API checked the cluster,
/// but the cluster's delete may complete before the cast runs; found by the HTTP fuzzer).
pub async fn create_in_cluster(db: &Database, nodegroup: &NodeGroup) -> Result<NodeGroup, DbError> {
    let ng = with_defaults(nodegroup);
    retry_on_deadlock!(insert_under_cluster(db, &ng)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::NodeGroupAlreadyExists {
                cluster_id: ng.cluster_id.clone(),
                name: ng.name.clone(),
            }
        } else {
            e
        }
    })
}

async fn insert_under_cluster(db: &Database, ng: &NodeGroup) -> Result<NodeGroup, DbError> {
    let mut tx = db.begin().await?;
    let r: Result<NodeGroup, DbError> = async {
        let mut conn = tx.conn();
        let mut w = Where::new();
        w.eq("uuid", Val::from(ng.cluster_id.clone()));
        let clusters =
            record::select_where::<openkeel_core::objects::Cluster>(&mut conn, &w, true).await?;
        if clusters.is_empty() {
            return Err(DbError::ClusterNotFound(ng.cluster_id.clone()));
        }
        let id = record::insert(&mut conn, ng).await?;
        fetch_by_id_on::<NodeGroup>(&mut conn, id).await
    }
    .await;
    tx.finish(r).await
}

/// The row [`create`] inserts: a uuid when empty, `is_default` false and `created_at` now
/// unless given.
pub(crate) fn with_defaults(nodegroup: &NodeGroup) -> NodeGroup {
    let mut ng = nodegroup.clone();
    if ng.uuid.is_empty() {
        ng.uuid = uuid::Uuid::new_v4().to_string();
    }
    ng.is_default.get_or_insert(false);
    if ng.created_at.is_none() {
        ng.created_at = Some(utcnow());
    }
    ng
}

/// `destroy_nodegroup`: by id or uuid within `cluster_id` (not scoped by project).
pub async fn destroy(db: &Database, cluster_id: &str, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    w.eq("cluster_id", cluster_id);
    retry_on_deadlock!(destroy_tx(db, &w, ident))
}

async fn destroy_tx(db: &Database, w: &Where, ident: &str) -> Result<(), DbError> {
    let mut tx = db.begin().await?;
    let r: Result<(), DbError> = async {
        let mut conn = tx.conn();
        if record::select_where::<NodeGroup>(&mut conn, w, true)
            .await?
            .is_empty()
        {
            return Err(DbError::NodeGroupNotFound(ident.to_string()));
        }
        record::delete_where::<NodeGroup>(&mut conn, w).await?;
        Ok(())
    }
    .await;
    tx.finish(r).await
}

/// `update_nodegroup`: write `fields` of `values` to the nodegroup `ident` (id or uuid) of
/// `cluster_id` and return the updated row. (Magnum does not refuse a uuid change here;
/// an `id` change is refused.)
pub async fn update(
    db: &Database,
    cluster_id: &str,
    ident: &str,
    values: &NodeGroup,
    fields: &[&str],
) -> Result<NodeGroup, DbError> {
    let fields = check_no_id::<NodeGroup>(fields, "NodeGroup")?;
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    w.eq("cluster_id", cluster_id);
    retry_on_deadlock!(update_tx(db, &w, values, &fields, || {
        DbError::NodeGroupNotFound(ident.to_string())
    }))
    .map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::NodeGroupAlreadyExists {
                cluster_id: values.cluster_id.clone(),
                name: values.name.clone(),
            }
        } else {
            e
        }
    })
}

/// The fields whose values differ between `old` and `new`, for [`update`].
pub fn changed_fields(old: &NodeGroup, new: &NodeGroup) -> Vec<&'static str> {
    record::changed_columns(old, new)
}
