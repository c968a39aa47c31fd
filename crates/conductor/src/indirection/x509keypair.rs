//! `X509KeyPair` (`magnum/objects/x509keypair.py`): its remotable methods.

use super::{
    crud, db_err, filters_map, list_value, no_instance_method, opt_text, paging, single, CallArgs,
    Inst, Out,
};
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::X509KeyPair;
use openkeel_db::{x509keypair, Database, DbError, Scope, X509KeyPairFilters};
use openkeel_rpc::codec::VersionedObject;
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::Value;

super::stored_by_uuid!(X509KeyPair, x509keypair);

/// `object_action` on an `X509KeyPair`.
pub(super) async fn instance(
    db: &Database,
    ctx: &RequestContext,
    prim: &Value,
    method: &str,
) -> Out {
    let i = Inst::<X509KeyPair>::decode(prim)?;
    if method == "destroy" {
        // destroy_x509keypair raises X509KeyPairNotFound(<uuid>) positionally: the message
        // is the bare uuid
        let uuid = i.need("uuid")?;
        x509keypair::destroy(db, &uuid).await.map_err(|e| match e {
            DbError::X509KeyPairNotFound(_) => {
                RemoteFailure::from(MagnumError::with_message(e.kind(), uuid.clone()))
            }
            e => db_err(e),
        })?;
        return Ok(i.reset());
    }
    crud(db, &Scope::from(ctx), &i, method)
        .await?
        .ok_or_else(|| no_instance_method(X509KeyPair::NAME, method))
}

/// `object_class_action_versions` on `X509KeyPair`; `None` for a classmethod it does not
/// have.
pub(super) async fn class(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Option<Out> {
    Some(match method {
        "get" | "get_by_id" | "get_by_uuid" => get(db, scope, a, method, requested).await,
        "list" => list(db, scope, a).await,
        _ => return None,
    })
}

/// `get(x509keypair_id)`, `get_by_id(x509keypair_id)`, `get_by_uuid(uuid)`.
async fn get(
    db: &Database,
    scope: &Scope,
    a: &CallArgs<'_>,
    method: &str,
    requested: Option<&str>,
) -> Out {
    let r = match method {
        "get" => x509keypair::get(db, scope, &a.text(0, "x509keypair_id")?).await,
        "get_by_id" => {
            let id = a.id(0, "x509keypair_id", DbError::X509KeyPairNotFound)?;
            x509keypair::get_by_id(db, scope, id).await
        }
        _ => x509keypair::get_by_uuid(db, scope, &a.text(0, "uuid")?).await,
    };
    Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
}

async fn list(db: &Database, scope: &Scope, a: &CallArgs<'_>) -> Out {
    let p = paging::<X509KeyPair>(a, 0)?;
    let f = filters_map(a.get(4, "filters"))?;
    let f = X509KeyPairFilters {
        project_id: opt_text(&f, "project_id"),
        user_id: opt_text(&f, "user_id"),
    };
    Ok(list_value(
        x509keypair::list(db, scope, &f, &p.page())
            .await
            .map_err(db_err)?,
    ))
}
