//! `ClusterTemplate` (`magnum/objects/cluster_template.py`): its remotable methods.

use super::{db_err, list_value, paging, single, CallArgs, Out};
use openkeel_core::objects::ClusterTemplate;
use openkeel_db::{cluster_template, ClusterTemplateFilters, Database, DbError, Scope};
use openkeel_rpc::Obj;

super::stored_by_uuid!(ClusterTemplate, cluster_template);

/// `object_class_action_versions` on `ClusterTemplate`; `None` for a classmethod it does not
/// have.
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
        "list" => list(db, scope, a).await,
        _ => return None,
    })
}

/// `get(cluster_template_id)`, `get_by_uuid(uuid)`, `get_by_name(name)`.
async fn get(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Out {
    let arg = if method == "get" {
        "cluster_template_id"
    } else {
        &method[7..]
    };
    let id = a.text(0, arg)?;
    let r = match method {
        "get" => cluster_template::get(db, scope, &id).await,
        "get_by_uuid" => cluster_template::get_by_uuid(db, scope, &id).await,
        _ => cluster_template::get_by_name(db, scope, &id).await,
    };
    Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
}

async fn get_by_id(db: &Database, scope: &Scope, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let id = a.id(0, "cluster_template_id", DbError::ClusterTemplateNotFound)?;
    let t = cluster_template::get_by_id(db, scope, id)
        .await
        .map_err(db_err)?;
    Ok(single(Obj::unchanged(t), requested))
}

/// `list(context, limit, marker, sort_key, sort_dir)`: no filters.
async fn list(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let p = paging::<ClusterTemplate>(a, 0)?;
    cluster_template::list(db, scope, &ClusterTemplateFilters::default(), &p.page())
        .await
        .map_err(db_err)
        .map(list_value)
}
