//! `MagnumService` (`magnum/objects/magnum_service.py`): its remotable methods.

use super::{db_err, list_value, no_instance_method, paging, single, CallArgs, Inst, Out};
use openkeel_core::objects::MagnumService;
use openkeel_db::{magnum_service, Database};
use openkeel_rpc::codec::VersionedObject;
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// `object_action` on a `MagnumService`.
pub(super) async fn instance(db: &Database, prim: &Value, method: &str) -> Out {
    let i = Inst::<MagnumService>::decode(prim)?;
    let id = || -> Result<i32, RemoteFailure> {
        i.need("id")?
            .parse()
            .map_err(|_| RemoteFailure::builtin("ValueError", "invalid id"))
    };
    match method {
        "create" => Ok(i.created(
            magnum_service::create(db, &i.obj.data)
                .await
                .map_err(db_err)?,
        )),
        "destroy" => {
            magnum_service::destroy(db, id()?).await.map_err(db_err)?;
            Ok(i.reset())
        }
        "save" => {
            magnum_service::update(db, id()?, &i.obj.data, &i.changes())
                .await
                .map_err(db_err)?;
            Ok(i.reset())
        }
        "report_state_up" => {
            // self.report_count += 1; self.save(): the saved changes are the incoming ones
            // plus report_count; last_seen_up is written by the DB layer but not read back
            // into the object.
            i.need("report_count")?;
            let id = id()?;
            let mut svc = i.obj.data.clone();
            svc.report_count = svc.report_count.saturating_add(1);
            let mut fields = i.changes();
            if !fields.contains(&"report_count") {
                fields.push("report_count");
            }
            magnum_service::update(db, id, &svc, &fields)
                .await
                .map_err(db_err)?;
            let mut after = i.before.clone();
            after.insert("report_count".into(), json!(svc.report_count));
            Ok(i.reply(&after, &BTreeSet::new()))
        }
        m => Err(no_instance_method(MagnumService::NAME, m)),
    }
}

/// `object_class_action_versions` on `MagnumService`; `None` for a classmethod it does not
/// have.
pub(super) async fn class(
    db: &Database,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get_by_host_and_binary" => get_by_host_and_binary(db, a, requested).await,
        "list" => list(db, a).await,
        _ => return None,
    })
}

/// `get_by_host_and_binary(host, binary)`: `None` when there is no such service.
async fn get_by_host_and_binary(db: &Database, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let host = a.text(0, "host")?;
    let binary = a.text(1, "binary")?;
    Ok(
        match magnum_service::get_by_host_and_binary(db, &host, &binary)
            .await
            .map_err(db_err)?
        {
            Some(s) => single(Obj::unchanged(s), requested),
            None => Value::Null,
        },
    )
}

async fn list(db: &Database, a: &CallArgs<'_>) -> Out {
    let p = paging::<MagnumService>(a, 0)?;
    Ok(list_value(
        magnum_service::list(db, None, &p.page())
            .await
            .map_err(db_err)?,
    ))
}
