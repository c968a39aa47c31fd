//! `Federation` (`magnum/objects/federation.py`): its remotable methods.

use super::{db_err, filters_map, list_value, opt_text, paging, single, statuses, CallArgs, Out};
use openkeel_core::objects::{Federation, FederationStatus};
use openkeel_db::{federation, Database, DbError, FederationFilters, Scope};
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;

super::stored_by_uuid!(Federation, federation);

/// `object_class_action_versions` on `Federation`; `None` for a classmethod it does not have.
pub(super) async fn class(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get" | "get_by_id" | "get_by_uuid" | "get_by_name" => {
            get(db, scope, a, method, requested).await
        }
        // Magnum's classmethod calls dbapi.get_federation_count_all, which does not exist:
        // it always fails with this AttributeError. Reproduced as is.
        "get_count_all" => Err(RemoteFailure::builtin(
            "AttributeError",
            "'Connection' object has no attribute 'get_federation_count_all'",
        )),
        "list" => list(db, scope, a).await,
        _ => return None,
    })
}

/// `get(federation_id)`, `get_by_id(federation_id)`, `get_by_uuid(uuid)`, `get_by_name(name)`.
async fn get(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Out {
    let r = match method {
        "get" => federation::get(db, scope, &a.text(0, "federation_id")?).await,
        "get_by_id" => {
            let id = a.id(0, "federation_id", DbError::FederationNotFound)?;
            federation::get_by_id(db, scope, id).await
        }
        "get_by_uuid" => federation::get_by_uuid(db, scope, &a.text(0, "uuid")?).await,
        _ => federation::get_by_name(db, scope, &a.text(0, "name")?).await,
    };
    Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
}

async fn list(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let p = paging::<Federation>(a, 0)?;
    let f = filters_map(a.get(4, "filters"))?;
    let f = FederationFilters {
        name: opt_text(&f, "name"),
        project_id: opt_text(&f, "project_id"),
        hostcluster_id: opt_text(&f, "hostcluster_id"),
        member_ids: f
            .get("member_ids")
            .map(|v| serde_json::from_value(v.clone()).unwrap_or_default()),
        properties: f
            .get("properties")
            .map(|v| serde_json::from_value(v.clone()).unwrap_or_default()),
        status: statuses::<FederationStatus>(f.get("status")),
    };
    Ok(list_value(
        federation::list(db, scope, &f, &p.page())
            .await
            .map_err(db_err)?,
    ))
}
