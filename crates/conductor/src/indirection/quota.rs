//! `Quota` (`magnum/objects/quota.py`): its remotable methods.

use super::{
    db_err, filters_map, list_value, no_instance_method, opt_text, overlay, paging, single,
    CallArgs, Inst, Out,
};
use openkeel_core::objects::Quota;
use openkeel_db::{quota, Database, DbError, QuotaFilters};
use openkeel_rpc::codec::VersionedObject;
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::Value;

/// `object_action` on a `Quota`.
pub(super) async fn instance(db: &Database, prim: &Value, method: &str) -> Out {
    let i = Inst::<Quota>::decode(prim)?;
    match method {
        "create" => Ok(i.created(quota::create(db, &i.obj.data).await.map_err(db_err)?)),
        "delete" => {
            quota::delete(db, &i.need("project_id")?, &i.need("resource")?)
                .await
                .map_err(db_err)?;
            Ok(i.reset())
        }
        m => Err(no_instance_method(Quota::NAME, m)),
    }
}

/// `object_class_action_versions` on `Quota`; `None` for a classmethod it does not have.
pub(super) async fn class(
    db: &Database,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get_quota_by_project_id_resource" => get_by_project_resource(db, a, requested).await,
        "get_by_id" => get_by_id(db, a, requested).await,
        "list" => list(db, a).await,
        // Magnum's classmethod calls dbapi.get_quota_by_project_id, which does not exist:
        // it always fails with this AttributeError. Reproduced as is.
        "quota_get_all_by_project_id" => Err(RemoteFailure::builtin(
            "AttributeError",
            "'Connection' object has no attribute 'get_quota_by_project_id'",
        )),
        "update_quota" => update_quota(db, a, requested).await,
        _ => return None,
    })
}

async fn get_by_project_resource(db: &Database, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let p = a.text(0, "project_id")?;
    let r = a.text(1, "resource")?;
    let q = quota::get_by_project_id_resource(db, &p, &r)
        .await
        .map_err(db_err)?;
    Ok(single(Obj::unchanged(q), requested))
}

async fn get_by_id(db: &Database, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let id = a.id(0, "quota_id", |q| DbError::QuotaNotFound {
        msg: format!("quota id {q} ."),
    })?;
    let q = quota::get_by_id(db, id).await.map_err(db_err)?;
    Ok(single(Obj::unchanged(q), requested))
}

async fn list(db: &Database, a: &CallArgs<'_>) -> Out {
    let p = paging::<Quota>(a, 0)?;
    let f = filters_map(a.get(4, "filters"))?;
    let f = QuotaFilters {
        resource: opt_text(&f, "resource"),
        project_id: opt_text(&f, "project_id"),
    };
    Ok(list_value(
        quota::list(db, &f, &p.page()).await.map_err(db_err)?,
    ))
}

/// `update_quota(project_id, quota)`: `quota` is a dict that names its `resource`.
async fn update_quota(db: &Database, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let p = a.text(0, "project_id")?;
    let values = match a.req(1, "quota")? {
        Value::Object(v) => v,
        _ => return Err(RemoteFailure::builtin("TypeError", "quota must be a dict")),
    };
    if !values.contains_key("resource") {
        return Err(RemoteFailure::builtin("KeyError", "'resource'"));
    }
    let (q, fields) = overlay::<Quota>(None, &values)?;
    let row = quota::update(db, &p, &q, &fields).await.map_err(db_err)?;
    Ok(single(Obj::unchanged(row), requested))
}
