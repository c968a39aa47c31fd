//! `NodeGroup` (`magnum/objects/nodegroup.py`): its remotable methods.

use super::{
    db_err, filters_map, int_arg, list_value, opt_text, overlay, paging, single, statuses,
    CallArgs, Out,
};
use openkeel_core::objects::{ClusterStatus, NodeGroup};
use openkeel_db::{nodegroup, Database, DbError, NodeGroupFilters, Scope};
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::{json, Value};
use std::future::Future;

/// A nodegroup's row is addressed by its cluster and its uuid.
impl super::Stored for NodeGroup {
    const KEY: &'static [&'static str] = &["cluster_id", "uuid"];
    fn insert<'a>(
        db: &'a Database,
        row: &'a Self,
    ) -> impl Future<Output = Result<Self, DbError>> + Send + 'a {
        nodegroup::create(db, row)
    }
    fn remove<'a>(
        db: &'a Database,
        key: &'a [String],
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a {
        let (cid, uuid) = key_of(key);
        nodegroup::destroy(db, cid, uuid)
    }
    fn store<'a>(
        db: &'a Database,
        key: &'a [String],
        row: &'a Self,
        fields: &'a [&'a str],
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a {
        let (cid, uuid) = key_of(key);
        async move {
            nodegroup::update(db, cid, uuid, row, fields)
                .await
                .map(|_| ())
        }
    }
    fn fetch<'a>(
        db: &'a Database,
        scope: &'a Scope,
        key: &'a [String],
    ) -> impl Future<Output = Result<Self, DbError>> + Send + 'a {
        let (cid, uuid) = key_of(key);
        nodegroup::get_by_uuid(db, scope, cid, uuid)
    }
}

/// `(cluster_id, uuid)` of a [`super::Stored::KEY`] value.
fn key_of(key: &[String]) -> (&str, &str) {
    match key {
        [cid, uuid, ..] => (cid, uuid),
        _ => ("", ""),
    }
}

/// `object_class_action_versions` on `NodeGroup`; `None` for a classmethod it does not have.
pub(super) async fn class(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get" => get(db, scope, a, requested).await,
        "get_by_id" | "get_by_uuid" | "get_by_name" => {
            get_by(db, scope, a, method, requested).await
        }
        "get_count_all" => count(db, scope, a).await,
        "list" => list(db, scope, a).await,
        "update_nodegroup" => update_nodegroup(db, scope, a, requested).await,
        _ => return None,
    })
}

/// `get(cluster_id, nodegroup_id)`.
async fn get(db: &Database, scope: &Scope, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let cid = a.text(0, "cluster_id")?;
    let ngid = a.text(1, "nodegroup_id")?;
    let n = nodegroup::get(db, scope, &cid, &ngid)
        .await
        .map_err(db_err)?;
    Ok(single(Obj::unchanged(n), requested))
}

/// `get_by_id(cluster, id_)`, `get_by_uuid(cluster, uuid)`, `get_by_name(cluster, name)`.
async fn get_by(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Out {
    let cid = a.text(0, "cluster")?;
    let r = match method {
        "get_by_id" => {
            let id = a.id(1, "id_", DbError::NodeGroupNotFound)?;
            nodegroup::get_by_id(db, scope, &cid, id).await
        }
        "get_by_uuid" => nodegroup::get_by_uuid(db, scope, &cid, &a.text(1, "uuid")?).await,
        _ => nodegroup::get_by_name(db, scope, &cid, &a.text(1, "name")?).await,
    };
    Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
}

async fn count(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let cid = a.text(0, "cluster_id")?;
    Ok(json!(nodegroup::count(db, scope, &cid)
        .await
        .map_err(db_err)?))
}

async fn list(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let cid = a.text(0, "cluster_id")?;
    let p = paging::<NodeGroup>(a, 1)?;
    let f = filters(a.get(5, "filters"))?;
    Ok(list_value(
        nodegroup::list(db, scope, &cid, &f, &p.page())
            .await
            .map_err(db_err)?,
    ))
}

/// `update_nodegroup(cluster_id, nodegroup_id, values)`.
async fn update_nodegroup(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    requested: Option<&str>,
) -> Out {
    let cid = a.text(0, "cluster_id")?;
    let ngid = a.text(1, "nodegroup_id")?;
    let values = match a.req(2, "values")? {
        Value::Object(v) => v,
        _ => return Err(RemoteFailure::builtin("TypeError", "values must be a dict")),
    };
    let current = nodegroup::get(db, scope, &cid, &ngid)
        .await
        .map_err(db_err)?;
    let uuid = current.uuid.clone();
    let (ng, fields) = overlay::<NodeGroup>(Some(current), &values)?;
    let row = nodegroup::update(db, &cid, &uuid, &ng, &fields)
        .await
        .map_err(db_err)?;
    Ok(single(Obj::unchanged(row), requested))
}

/// `_add_nodegoup_filters` (unknown keys ignored).
fn filters(v: Option<Value>) -> Result<NodeGroupFilters, RemoteFailure> {
    let f = filters_map(v)?;
    Ok(NodeGroupFilters {
        name: opt_text(&f, "name"),
        node_count: f
            .get("node_count")
            .map(|v| int_arg(v, "node_count").map(|n| n as i32))
            .transpose()?,
        node_addresses: f
            .get("node_addresses")
            .map(|v| serde_json::from_value(v.clone()).unwrap_or_default()),
        role: opt_text(&f, "role"),
        is_default: f.get("is_default").map(|v| match v {
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_i64() != Some(0),
            Value::String(s) => !s.is_empty(),
            _ => false,
        }),
        status: statuses::<ClusterStatus>(f.get("status")),
    })
}
