//! `Cluster` (`magnum/objects/cluster.py`): its remotable methods.

use super::{
    crud, db_err, filters_map, int_arg, list_value, no_instance_method, opt_text, paging,
    put_nested, reserialize, single, statuses, CallArgs, Inst, Out,
};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate};
use openkeel_db::{cluster, cluster_template, ClusterFilters, Database, DbError, Scope};
use openkeel_rpc::codec::{self, VersionedObject};
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::{json, Value};

super::stored_by_uuid!(Cluster, cluster);

/// `object_action` on a `Cluster`.
pub(super) async fn instance(
    db: &Database,
    ctx: &RequestContext,
    prim: &Value,
    method: &str,
) -> Out {
    let i = Inst::<Cluster>::decode(prim)?;
    let scope = Scope::from(ctx);
    let nested = prim
        .get("magnum_object.data")
        .and_then(|d| d.get("cluster_template"));
    if method == "refresh" {
        let row = cluster::get_by_uuid(db, &scope, &i.need("uuid")?)
            .await
            .map_err(db_err)?;
        let ct_id = row.cluster_template_id.clone().unwrap_or_default();
        let mut reply = i.refreshed(row);
        if nested.is_some() {
            // `self.cluster_template != current.cluster_template`: the current object
            // lazy-loads its template (ClusterTemplate.get_by_uuid), and OVO objects compare
            // by identity, so it is always assigned
            let ct = cluster_template::get_by_uuid(db, &scope, &ct_id)
                .await
                .map_err(db_err)?;
            put_nested(&mut reply, codec::encode(&Obj::unchanged(ct)), true);
        }
        return Ok(reply);
    }
    let Some(mut reply) = crud(db, &scope, &i, method).await? else {
        return Err(no_instance_method(Cluster::NAME, method));
    };
    // obj_clone() deep-copies the nested template, and OVO objects compare by
    // identity: a set `cluster_template` is always reported (re-serialized at the
    // version it came with; changed while it has changes of its own)
    if let Some(n) = nested {
        let (ct, changed) = reserialize::<ClusterTemplate>(n)?;
        put_nested(&mut reply, ct, changed);
    }
    Ok(reply)
}

/// `object_class_action_versions` on `Cluster`; `None` for a classmethod it does not have.
pub(super) async fn class(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get" | "get_by_uuid" | "get_by_name" => get(db, scope, a, method, requested).await,
        "get_by_id" => get_by_id(db, scope, a, requested).await,
        "get_count_all" => count(db, scope, a).await,
        "list" => list(db, scope, a).await,
        "get_stats" => stats(db).await,
        _ => return None,
    })
}

/// `get(cluster_id)`, `get_by_uuid(uuid)`, `get_by_name(name)`.
async fn get(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Out {
    let id = a.text(
        0,
        if method == "get" {
            "cluster_id"
        } else {
            &method[7..]
        },
    )?;
    let r = match method {
        "get" => cluster::get(db, scope, &id).await,
        "get_by_uuid" => cluster::get_by_uuid(db, scope, &id).await,
        _ => cluster::get_by_name(db, scope, &id).await,
    };
    Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
}

async fn get_by_id(db: &Database, scope: &Scope, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let id = a.id(0, "cluster_id", DbError::ClusterNotFound)?;
    let c = cluster::get_by_id(db, scope, id).await.map_err(db_err)?;
    Ok(single(Obj::unchanged(c), requested))
}

async fn count(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let f = filters(a.get(0, "filters"))?;
    Ok(json!(cluster::count(db, scope, &f)
        .await
        .map_err(db_err)?))
}

async fn list(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let p = paging::<Cluster>(a, 0)?;
    let f = filters(a.get(4, "filters"))?;
    Ok(list_value(
        cluster::list(db, scope, &f, &p.page())
            .await
            .map_err(db_err)?,
    ))
}

/// Magnum passes project_id as the DB layer's context and no project_id, so the stats always
/// cover every project: a (clusters, nodes) tuple.
async fn stats(db: &Database) -> Out {
    let st = cluster::stats(db, None).await.map_err(db_err)?;
    Ok(json!([st.clusters, st.nodes]))
}

/// `_add_clusters_filters`: unknown keys are ignored as in Magnum. `node_addresses` is in
/// Magnum's list but is no longer a column, so Magnum fails on it; so does this.
fn filters(v: Option<Value>) -> Result<ClusterFilters, RemoteFailure> {
    let f = filters_map(v)?;
    if f.contains_key("node_addresses") {
        let mut e = RemoteFailure::builtin(
            "InvalidRequestError",
            "Entity namespace for \"cluster\" has no property \"node_addresses\"",
        );
        e.module = "sqlalchemy.exc".into();
        return Err(e);
    }
    let count = |k: &str| -> Result<Option<i64>, RemoteFailure> {
        f.get(k).map(|v| int_arg(v, k)).transpose()
    };
    Ok(ClusterFilters {
        cluster_template_id: opt_text(&f, "cluster_template_id"),
        name: opt_text(&f, "name"),
        stack_id: opt_text(&f, "stack_id"),
        api_address: opt_text(&f, "api_address"),
        project_id: opt_text(&f, "project_id"),
        user_id: opt_text(&f, "user_id"),
        status: statuses::<ClusterStatus>(f.get("status")),
        node_count: count("node_count")?,
        master_count: count("master_count")?,
    })
}
