//! oslo.versionedobjects' indirection on the conductor side (rpc.md §11,
//! `magnum/conductor/handlers/indirection_api.py`): the remotable instance methods
//! (`object_action`) and `object_backport_versions` that the Python magnum-api sends, executed
//! against the database as Magnum's objects execute them.
//!
//! `object_action` answers `[updates, result]`: `updates` holds every field that is set after
//! the method and was unset or different before (as `field.to_primitive`), plus
//! `obj_what_changed`; Magnum's exceptions travel with their own class (Magnum wraps them in
//! `ExpectedException`).

// RemoteFailure is the transport's failure type; boxing it would only move the cost.
#![allow(clippy::result_large_err)]

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterTemplate, Federation, MagnumService, NodeGroup, Quota, X509KeyPair,
};
use openkeel_db::{
    cluster, cluster_template, federation, magnum_service, nodegroup, quota, x509keypair, Database,
    Scope,
};
use openkeel_rpc::codec::{self, VersionedObject};
use openkeel_rpc::transport::RemoteFailure;
use openkeel_rpc::Obj;
use serde_json::{Map, Value};

fn db_err(e: openkeel_db::DbError) -> MagnumError {
    MagnumError::from(e)
}

fn s(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

/// What each persistent object does in its remotable methods (Magnum's `objects/*.py`).
#[async_trait]
pub(crate) trait Persist: VersionedObject + Clone + Send + Sync + 'static {
    /// `create()`: insert the changed fields; the object becomes the stored row.
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError>;
    /// `save()`: write the changed fields (no re-read).
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError>;
    /// `destroy()`.
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError>;
    /// The stored row `refresh()` compares with (looked up as Magnum does, with the caller's
    /// context where Magnum passes it).
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError>;
}

#[async_trait]
impl Persist for ClusterTemplate {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        cluster_template::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        cluster_template::update(db, &s(&obj.uuid), obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        cluster_template::destroy(db, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        cluster_template::get_by_uuid(db, scope, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
}

#[async_trait]
impl Persist for Cluster {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        cluster::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        cluster::update(db, &s(&obj.uuid), obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        cluster::destroy(db, &s(&obj.uuid)).await.map_err(db_err)
    }
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        cluster::get_by_uuid(db, scope, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
}

#[async_trait]
impl Persist for NodeGroup {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        nodegroup::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        nodegroup::update(db, &obj.cluster_id, &obj.uuid, obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        nodegroup::destroy(db, &obj.cluster_id, &obj.uuid)
            .await
            .map_err(db_err)
    }
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        nodegroup::get_by_uuid(db, scope, &obj.cluster_id, &obj.uuid)
            .await
            .map_err(db_err)
    }
}

#[async_trait]
impl Persist for X509KeyPair {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        x509keypair::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        x509keypair::update(db, &s(&obj.uuid), obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        x509keypair::destroy(db, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        x509keypair::get_by_uuid(db, scope, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
}

#[async_trait]
impl Persist for Federation {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        federation::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        federation::update(db, &s(&obj.uuid), obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        federation::destroy(db, &s(&obj.uuid)).await.map_err(db_err)
    }
    async fn current(db: &Database, scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        federation::get_by_uuid(db, scope, &s(&obj.uuid))
            .await
            .map_err(db_err)
    }
}

#[async_trait]
impl Persist for MagnumService {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        magnum_service::create(db, obj).await.map_err(db_err)
    }
    async fn save(db: &Database, obj: &Self, fields: &[&str]) -> Result<(), MagnumError> {
        magnum_service::update(db, obj.id, obj, fields)
            .await
            .map(|_| ())
            .map_err(db_err)
    }
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        magnum_service::destroy(db, obj.id).await.map_err(db_err)
    }
    async fn current(db: &Database, _scope: &Scope, obj: &Self) -> Result<Self, MagnumError> {
        // MagnumService has no refresh in Magnum; the row by host and binary is the closest.
        magnum_service::get_by_host_and_binary(db, &s(&obj.host), &s(&obj.binary))
            .await
            .map_err(db_err)?
            .ok_or_else(|| {
                MagnumError::with_message(ErrorKind::MagnumException, "service not found")
            })
    }
}

#[async_trait]
impl Persist for Quota {
    async fn create(db: &Database, obj: &Self) -> Result<Self, MagnumError> {
        quota::create(db, obj).await.map_err(db_err)
    }
    async fn save(_db: &Database, _obj: &Self, _fields: &[&str]) -> Result<(), MagnumError> {
        Err(attribute_error("Quota", "save"))
    }
    /// `Quota.delete()` (Magnum names it delete, not destroy).
    async fn destroy(db: &Database, obj: &Self) -> Result<(), MagnumError> {
        quota::delete(db, &s(&obj.project_id), &s(&obj.resource))
            .await
            .map_err(db_err)
    }
    async fn current(_db: &Database, _scope: &Scope, _obj: &Self) -> Result<Self, MagnumError> {
        Err(attribute_error("Quota", "refresh"))
    }
}

fn attribute_error(obj: &str, method: &str) -> MagnumError {
    MagnumError::with_message(
        ErrorKind::MagnumException,
        format!("'{obj}' object has no attribute '{method}'"),
    )
}

fn builtin_attribute_error(obj: &str, method: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "AttributeError",
        format!("'{obj}' object has no attribute '{method}'"),
    )
}

fn data_of(v: &Value) -> Map<String, Value> {
    v.get("magnum_object.data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Run `method` of the object in `prim` and build `[updates, result]`.
async fn act<T: Persist>(
    db: &Database,
    ctx: &RequestContext,
    prim: &Value,
    method: &str,
) -> Result<Value, RemoteFailure> {
    let before = data_of(prim);
    let mut obj: Obj<T> =
        codec::decode(prim).map_err(|e| RemoteFailure::builtin("ValueError", e.to_string()))?;
    let fields: Vec<String> = obj.changes.iter().cloned().collect();
    let field_refs: Vec<&str> = fields.iter().map(String::as_str).collect();
    let scope = Scope::from(ctx);
    let mut what_changed: Vec<String> = Vec::new();
    let is_quota = T::NAME == "Quota";
    let after: Option<Map<String, Value>> = match method {
        "create" => {
            let row = T::create(db, &obj.data).await?;
            Some(data_of(&codec::encode(&Obj::unchanged(row))))
        }
        // Quota's is called delete(); every other object's destroy().
        "delete" if is_quota => {
            T::destroy(db, &obj.data).await?;
            None
        }
        "destroy" if !is_quota => {
            T::destroy(db, &obj.data).await?;
            None
        }
        "save" if !is_quota => {
            if !field_refs.is_empty() {
                T::save(db, &obj.data, &field_refs).await?;
            }
            None
        }
        "refresh" if !is_quota => {
            let cur = data_of(&codec::encode(&Obj::unchanged(
                T::current(db, &scope, &obj.data).await?,
            )));
            let mut refreshed = Map::new();
            for (k, v) in &before {
                if let Some(c) = cur.get(k) {
                    if c != v {
                        refreshed.insert(k.clone(), c.clone());
                    }
                }
            }
            what_changed = obj.changes.iter().cloned().collect();
            for k in refreshed.keys() {
                if !what_changed.contains(k) {
                    what_changed.push(k.clone());
                }
            }
            let mut merged = before.clone();
            merged.extend(refreshed);
            Some(merged)
        }
        "report_state_up" if T::NAME == "MagnumService" => {
            // report_count += 1; save()
            let mut v = serde_json::to_value(&obj.data)
                .map_err(|e| RemoteFailure::builtin("ValueError", e.to_string()))?;
            let n = v.get("report_count").and_then(Value::as_i64).unwrap_or(0) + 1;
            v["report_count"] = Value::from(n);
            obj.data = serde_json::from_value(v)
                .map_err(|e| RemoteFailure::builtin("ValueError", e.to_string()))?;
            T::save(db, &obj.data, &["report_count"]).await?;
            let mut m = before.clone();
            m.insert("report_count".into(), Value::from(n));
            Some(m)
        }
        _ => return Err(builtin_attribute_error(T::NAME, method)),
    };
    let mut updates = Map::new();
    if let Some(after) = after {
        for (k, v) in after {
            if before.get(&k) != Some(&v) {
                updates.insert(k, v);
            }
        }
    }
    updates.insert(
        "obj_what_changed".into(),
        Value::Array(what_changed.into_iter().map(Value::String).collect()),
    );
    Ok(Value::Array(vec![Value::Object(updates), Value::Null]))
}

/// `object_action(objinst, objmethod, args, kwargs)`.
pub(crate) async fn object_action(
    db: &Database,
    ctx: &RequestContext,
    args: &Map<String, Value>,
) -> Result<Value, RemoteFailure> {
    let prim = args.get("objinst").ok_or_else(|| missing("objinst"))?;
    let method = args
        .get("objmethod")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("objmethod"))?;
    let name = prim
        .get("magnum_object.name")
        .and_then(Value::as_str)
        .unwrap_or("");
    match name {
        "ClusterTemplate" => act::<ClusterTemplate>(db, ctx, prim, method).await,
        "Cluster" => act::<Cluster>(db, ctx, prim, method).await,
        "NodeGroup" => act::<NodeGroup>(db, ctx, prim, method).await,
        "X509KeyPair" => act::<X509KeyPair>(db, ctx, prim, method).await,
        "Federation" => act::<Federation>(db, ctx, prim, method).await,
        "MagnumService" => act::<MagnumService>(db, ctx, prim, method).await,
        "Quota" => act::<Quota>(db, ctx, prim, method).await,
        other => Err(RemoteFailure {
            class: "UnsupportedObjectError".into(),
            module: "oslo_versionedobjects.exception".into(),
            message: format!("Unsupported object type {other}"),
            kwargs: Map::new(),
        }),
    }
}

fn missing(name: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "TypeError",
        format!("object_action() missing 1 required positional argument: '{name}'"),
    )
}

/// `object_backport_versions(objinst, object_versions)`: the object at the version the
/// caller knows (no Magnum object changes its fields between its versions' primitives beyond
/// relabelling, rpc.md §12.4).
pub(crate) fn backport(args: &Map<String, Value>) -> Result<Value, RemoteFailure> {
    let mut prim = args
        .get("objinst")
        .cloned()
        .ok_or_else(|| missing("objinst"))?;
    let name = prim
        .get("magnum_object.name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(v) = args
        .get("object_versions")
        .and_then(|m| m.get(&name))
        .and_then(Value::as_str)
    {
        if let Some(o) = prim.as_object_mut() {
            o.insert("magnum_object.version".into(), Value::String(v.to_string()));
            o.remove("magnum_object.changes");
        }
    }
    Ok(prim)
}
