//! Object indirection on the conductor side (`oslo_versionedobjects/base.py`'s indirection API, Magnum's
//! `magnum/conductor/handlers/indirection_api.py`): the remotable instance methods
//! (`object_action`), the classmethods not served in `rpc_server.rs`
//! (`object_class_action_versions`) and `object_backport_versions`.
//!
//! `object_action` follows the handler exactly: the incoming object is decoded, the method
//! runs against the database, and the reply is `[updates, result]` where `updates` holds, for
//! every field that is set afterwards, its primitive when it was unset before or changed, plus
//! `obj_what_changed` (the object's changed-field set after the method).

// RemoteFailure is the failure reply as oslo.messaging carries it; these are cold paths.
#![allow(clippy::result_large_err)]

use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{
    Cluster, ClusterStatus, ClusterTemplate, Federation, FederationStatus, MagnumService,
    NodeGroup, Quota, X509KeyPair,
};
use openkeel_core::pyvalue::json_str;
use openkeel_db::{
    cluster, cluster_template, federation, magnum_service, nodegroup, quota, x509keypair,
    ClusterFilters, Database, DbError, FederationFilters, NodeGroupFilters, Page, QuotaFilters,
    Scope, X509KeyPairFilters,
};
use openkeel_rpc::codec::{self, CodecError, Kind, VersionedObject};
use openkeel_rpc::transport::{Args, RemoteFailure};
use openkeel_rpc::Obj;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

type Out = Result<Value, RemoteFailure>;

/// A DB error as the conductor's reply carries it: Magnum's exception class, except the
/// sort direction that oslo.db refuses with a builtin `ValueError`.
pub(crate) fn db_err(e: DbError) -> RemoteFailure {
    match e {
        DbError::InvalidSortDir(_) => RemoteFailure::builtin("ValueError", e.to_string()),
        e => RemoteFailure::from(MagnumError::from(e)),
    }
}

/// A decoding failure as OVO raises it (`ValueError` is a builtin, the others live in
/// `oslo_versionedobjects.exception`).
pub(crate) fn codec_failure(e: CodecError) -> RemoteFailure {
    if e.class == "ValueError" {
        return RemoteFailure::builtin("ValueError", e.message);
    }
    let mut f = RemoteFailure::builtin(e.class, e.message);
    f.module = "oslo_versionedobjects.exception".into();
    f
}

/// `getattr(objinst, method)` on an instance.
fn no_instance_method(objname: &str, method: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "AttributeError",
        format!("'{objname}' object has no attribute '{method}'"),
    )
}

/// `getattr(cls, method)` on a class.
pub(crate) fn attribute_error(objname: &str, method: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "AttributeError",
        format!("type object '{objname}' has no attribute '{method}'"),
    )
}

/// The incoming object of an `object_action`: its decoded value, which fields were set
/// (present in `magnum_object.data`), and their normalized primitives before the call.
struct Inst<T> {
    obj: Obj<T>,
    before: Map<String, Value>,
}

impl<T: VersionedObject + Clone> Inst<T> {
    fn decode(prim: &Value) -> Result<Self, RemoteFailure> {
        let obj: Obj<T> = codec::decode(prim).map_err(codec_failure)?;
        let data = prim.get("magnum_object.data").and_then(Value::as_object);
        let set: BTreeSet<String> = T::fields()
            .iter()
            .filter(|f| data.is_some_and(|d| d.contains_key(f.name)))
            .map(|f| f.name.to_string())
            .collect();
        // encode with every set field marked changed, so that a new object (no id) keeps
        // its set fields; then keep exactly the set ones
        let all = codec::encode(&Obj {
            data: obj.data.clone(),
            changes: set.clone(),
        });
        let mut before = Map::new();
        if let Some(d) = all.get("magnum_object.data").and_then(Value::as_object) {
            for f in T::fields() {
                if let Some(v) = d.get(f.name).filter(|_| set.contains(f.name)) {
                    before.insert(f.name.to_string(), v.clone());
                }
            }
        }
        Ok(Inst { obj, before })
    }

    /// A set string attribute the method reads (an unset one cannot be lazy-loaded:
    /// OVO's base `obj_load_attr`).
    fn need(&self, field: &str) -> Result<String, RemoteFailure> {
        match self.before.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(_) => Ok("None".into()),
            None => Err(RemoteFailure::builtin(
                "NotImplementedError",
                format!("Cannot load '{field}' in the base class"),
            )),
        }
    }

    fn changes(&self) -> Vec<&str> {
        self.obj.changes.iter().map(String::as_str).collect()
    }

    /// `[updates, null]` for the state `after` with `changed` as `obj_what_changed`.
    fn reply(&self, after: &Map<String, Value>, changed: &BTreeSet<String>) -> Value {
        let mut updates = Map::new();
        for f in T::fields() {
            if let Some(v) = after.get(f.name) {
                if self.before.get(f.name) != Some(v) {
                    updates.insert(f.name.to_string(), v.clone());
                }
            }
        }
        let what: Vec<Value> = T::fields()
            .iter()
            .filter(|f| changed.contains(f.name))
            .map(|f| Value::String(f.name.to_string()))
            .collect();
        updates.insert("obj_what_changed".into(), Value::Array(what));
        json!([Value::Object(updates), null])
    }

    /// After `save` / `destroy` / `delete`: values kept, changes reset.
    fn reset(&self) -> Value {
        self.reply(&self.before, &BTreeSet::new())
    }

    /// After `create`: every field loaded from the new row (`_from_db_object`), changes reset.
    ///
    /// Magnum's `create_*` returns the SQLAlchemy instance it inserted, not a re-read row: a
    /// JSON-encoded column (`labels`, `node_addresses`, ...) left unset or None is stored as
    /// `{}` / `[]` (`JsonEncodedType.process_bind_param`) but the object still reads None.
    fn created(&self, row: T) -> Value {
        let mut after = self.before.clone();
        for (k, v) in data_of(row) {
            after.insert(k, v);
        }
        for f in T::fields() {
            let json_column = matches!(
                f.kind,
                Kind::DictOfStrings | Kind::ListOfStrings | Kind::ListOfDicts
            );
            if json_column && self.before.get(f.name).is_none_or(Value::is_null) {
                after.insert(f.name.to_string(), Value::Null);
            }
        }
        self.reply(&after, &BTreeSet::new())
    }

    /// After `refresh`: each set field that differs from the row is assigned (so it becomes
    /// changed); the incoming changes are kept.
    fn refreshed(&self, row: T) -> Value {
        let current = data_of(row);
        let mut after = self.before.clone();
        let mut changed = self.obj.changes.clone();
        for (k, v) in self.before.iter() {
            let cur = current.get(k).cloned().unwrap_or(Value::Null);
            if &cur != v {
                after.insert(k.clone(), cur);
                changed.insert(k.clone());
            }
        }
        self.reply(&after, &changed)
    }
}

/// A nested object primitive as OVO re-serializes it (its incoming version, its set fields,
/// its changes), and whether it has changes.
fn reserialize<T: VersionedObject + Clone>(prim: &Value) -> Result<(Value, bool), RemoteFailure> {
    let i = Inst::<T>::decode(prim)?;
    let version = prim
        .get("magnum_object.version")
        .and_then(Value::as_str)
        .unwrap_or(T::VERSION)
        .to_string();
    let mut out = Map::new();
    out.insert("magnum_object.name".into(), T::NAME.into());
    out.insert("magnum_object.namespace".into(), codec::NAMESPACE.into());
    out.insert("magnum_object.version".into(), version.into());
    let changes: Vec<Value> = i
        .obj
        .changes
        .iter()
        .filter(|c| i.before.contains_key(c.as_str()))
        .map(|c| Value::String(c.clone()))
        .collect();
    let changed = !changes.is_empty();
    out.insert("magnum_object.data".into(), Value::Object(i.before));
    if changed {
        out.insert("magnum_object.changes".into(), Value::Array(changes));
    }
    Ok((Value::Object(out), changed))
}

/// `updates["cluster_template"]` of a Cluster reply (before `obj_what_changed`, which gains
/// the field when `changed`).
fn put_nested(reply: &mut Value, ct: Value, changed: bool) {
    if let Some(u) = reply.get_mut(0).and_then(Value::as_object_mut) {
        let what = u.remove("obj_what_changed");
        u.insert("cluster_template".into(), ct);
        let mut what = match what {
            Some(Value::Array(w)) => w,
            _ => Vec::new(),
        };
        if changed {
            what.push(json!("cluster_template"));
        }
        u.insert("obj_what_changed".into(), Value::Array(what));
    }
}

/// The field primitives of an object loaded from the database.
fn data_of<T: VersionedObject>(row: T) -> Map<String, Value> {
    match codec::encode(&Obj::unchanged(row)) {
        Value::Object(mut m) => match m.remove("magnum_object.data") {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// `object_action(objinst, objmethod, args, kwargs)`.
pub(crate) async fn object_action(db: &Database, ctx: &RequestContext, args: &Args) -> Out {
    let prim = args.get("objinst").cloned().unwrap_or(Value::Null);
    let objname = prim
        .get("magnum_object.name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let method = args.get("objmethod").and_then(Value::as_str).unwrap_or("");
    let scope = Scope::from(ctx);
    match objname.as_str() {
        "Cluster" => {
            let i = Inst::<Cluster>::decode(&prim)?;
            let nested = prim
                .get("magnum_object.data")
                .and_then(|d| d.get("cluster_template"));
            let mut reply = match method {
                "create" => Ok(i.created(cluster::create(db, &i.obj.data).await.map_err(db_err)?)),
                "destroy" => {
                    cluster::destroy(db, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "save" => {
                    let uuid = i.need("uuid")?;
                    cluster::update(db, &uuid, &i.obj.data, &i.changes())
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "refresh" => {
                    let row = cluster::get_by_uuid(db, &scope, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    let ct_id = row.cluster_template_id.clone().unwrap_or_default();
                    let mut reply = i.refreshed(row);
                    if nested.is_some() {
                        // `self.cluster_template != current.cluster_template`: the current
                        // object lazy-loads its template (ClusterTemplate.get_by_uuid), and
                        // OVO objects compare by identity, so it is always assigned
                        let ct = cluster_template::get_by_uuid(db, &scope, &ct_id)
                            .await
                            .map_err(db_err)?;
                        put_nested(&mut reply, codec::encode(&Obj::unchanged(ct)), true);
                    }
                    return Ok(reply);
                }
                m => Err(no_instance_method(&objname, m)),
            }?;
            // obj_clone() deep-copies the nested template, and OVO objects compare by
            // identity: a set `cluster_template` is always reported (re-serialized at the
            // version it came with; changed while it has changes of its own)
            if let Some(n) = nested {
                let (ct, changed) = reserialize::<ClusterTemplate>(n)?;
                put_nested(&mut reply, ct, changed);
            }
            Ok(reply)
        }
        "ClusterTemplate" => {
            let i = Inst::<ClusterTemplate>::decode(&prim)?;
            match method {
                "create" => Ok(i.created(
                    cluster_template::create(db, &i.obj.data)
                        .await
                        .map_err(db_err)?,
                )),
                "destroy" => {
                    cluster_template::destroy(db, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "save" => {
                    let uuid = i.need("uuid")?;
                    cluster_template::update(db, &uuid, &i.obj.data, &i.changes())
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "refresh" => {
                    let row = cluster_template::get_by_uuid(db, &scope, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.refreshed(row))
                }
                m => Err(no_instance_method(&objname, m)),
            }
        }
        "NodeGroup" => {
            let i = Inst::<NodeGroup>::decode(&prim)?;
            match method {
                "create" => {
                    Ok(i.created(nodegroup::create(db, &i.obj.data).await.map_err(db_err)?))
                }
                "destroy" => {
                    nodegroup::destroy(db, &i.need("cluster_id")?, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "save" => {
                    let (cid, uuid) = (i.need("cluster_id")?, i.need("uuid")?);
                    nodegroup::update(db, &cid, &uuid, &i.obj.data, &i.changes())
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "refresh" => {
                    let (cid, uuid) = (i.need("cluster_id")?, i.need("uuid")?);
                    let row = nodegroup::get_by_uuid(db, &scope, &cid, &uuid)
                        .await
                        .map_err(db_err)?;
                    Ok(i.refreshed(row))
                }
                m => Err(no_instance_method(&objname, m)),
            }
        }
        "X509KeyPair" => {
            let i = Inst::<X509KeyPair>::decode(&prim)?;
            match method {
                "create" => {
                    Ok(i.created(x509keypair::create(db, &i.obj.data).await.map_err(db_err)?))
                }
                "destroy" => {
                    // destroy_x509keypair raises X509KeyPairNotFound(<uuid>) positionally:
                    // the message is the bare uuid
                    let uuid = i.need("uuid")?;
                    x509keypair::destroy(db, &uuid).await.map_err(|e| match e {
                        DbError::X509KeyPairNotFound(_) => {
                            RemoteFailure::from(MagnumError::with_message(e.kind(), uuid.clone()))
                        }
                        e => db_err(e),
                    })?;
                    Ok(i.reset())
                }
                "save" => {
                    let uuid = i.need("uuid")?;
                    x509keypair::update(db, &uuid, &i.obj.data, &i.changes())
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "refresh" => {
                    let row = x509keypair::get_by_uuid(db, &scope, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.refreshed(row))
                }
                m => Err(no_instance_method(&objname, m)),
            }
        }
        "Federation" => {
            let i = Inst::<Federation>::decode(&prim)?;
            match method {
                "create" => {
                    Ok(i.created(federation::create(db, &i.obj.data).await.map_err(db_err)?))
                }
                "destroy" => {
                    federation::destroy(db, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "save" => {
                    let uuid = i.need("uuid")?;
                    federation::update(db, &uuid, &i.obj.data, &i.changes())
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                "refresh" => {
                    let row = federation::get_by_uuid(db, &scope, &i.need("uuid")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.refreshed(row))
                }
                m => Err(no_instance_method(&objname, m)),
            }
        }
        "MagnumService" => {
            let i = Inst::<MagnumService>::decode(&prim)?;
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
                    // self.report_count += 1; self.save(): the saved changes are the
                    // incoming ones plus report_count; last_seen_up is written by the DB
                    // layer but not read back into the object.
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
                m => Err(no_instance_method(&objname, m)),
            }
        }
        "Quota" => {
            let i = Inst::<Quota>::decode(&prim)?;
            match method {
                "create" => Ok(i.created(quota::create(db, &i.obj.data).await.map_err(db_err)?)),
                "delete" => {
                    quota::delete(db, &i.need("project_id")?, &i.need("resource")?)
                        .await
                        .map_err(db_err)?;
                    Ok(i.reset())
                }
                m => Err(no_instance_method(&objname, m)),
            }
        }
        _ => {
            // what obj_from_primitive raises for a class it does not know
            let p: Result<Obj<Cluster>, _> = codec::decode(&prim);
            match p {
                Err(e) => Err(codec_failure(e)),
                Ok(_) => Err(no_instance_method(&objname, method)),
            }
        }
    }
}

/// `object_backport_versions(objinst, object_versions)`: the object re-serialized at
/// `object_versions[name]` (no Magnum object overrides `obj_make_compatible`, so this
/// relabels the version and keeps the set fields and changes).
pub(crate) fn backport(args: &Args) -> Out {
    let prim = args.get("objinst").cloned().unwrap_or(Value::Null);
    let name = prim
        .get("magnum_object.name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match name.as_str() {
        "Cluster" => {
            let mut out = backport_as::<Cluster>(&prim, args)?;
            // the nested template goes to its manifest version (ObjectField child)
            if let Some(n) = prim
                .get("magnum_object.data")
                .and_then(|d| d.get("cluster_template"))
            {
                let (mut ct, _) = reserialize::<ClusterTemplate>(n)?;
                if let Some(v) = args
                    .get("object_versions")
                    .and_then(|v| v.get(ClusterTemplate::NAME))
                    .and_then(Value::as_str)
                {
                    if !target_ok(v, ClusterTemplate::VERSION) {
                        let mut f = RemoteFailure::builtin(
                            "InvalidTargetVersion",
                            format!("Invalid target version {v}"),
                        );
                        f.module = "oslo_versionedobjects.exception".into();
                        return Err(f);
                    }
                    ct["magnum_object.version"] = json!(v);
                }
                if let Some(d) = out
                    .get_mut("magnum_object.data")
                    .and_then(Value::as_object_mut)
                {
                    d.insert("cluster_template".into(), ct);
                }
            }
            Ok(out)
        }
        "ClusterTemplate" => backport_as::<ClusterTemplate>(&prim, args),
        "NodeGroup" => backport_as::<NodeGroup>(&prim, args),
        "X509KeyPair" => backport_as::<X509KeyPair>(&prim, args),
        "Federation" => backport_as::<Federation>(&prim, args),
        "MagnumService" => backport_as::<MagnumService>(&prim, args),
        "Quota" => backport_as::<Quota>(&prim, args),
        "Certificate" => backport_as::<openkeel_core::objects::Certificate>(&prim, args),
        "Stats" => backport_as::<openkeel_core::objects::Stats>(&prim, args),
        _ => match codec::decode::<Cluster>(&prim) {
            Err(e) => Err(codec_failure(e)),
            Ok(_) => Err(RemoteFailure::builtin("KeyError", format!("'{name}'"))),
        },
    }
}

fn backport_as<T: VersionedObject + Clone>(prim: &Value, args: &Args) -> Out {
    let i = Inst::<T>::decode(prim)?;
    let target = match args
        .get("object_versions")
        .and_then(|v| v.get(T::NAME))
        .and_then(Value::as_str)
    {
        Some(t) => t.to_string(),
        None => return Err(RemoteFailure::builtin("KeyError", format!("'{}'", T::NAME))),
    };
    if !target_ok(&target, T::VERSION) {
        let mut f = RemoteFailure::builtin(
            "InvalidTargetVersion",
            format!("Invalid target version {target}"),
        );
        f.module = "oslo_versionedobjects.exception".into();
        return Err(f);
    }
    let mut out = Map::new();
    out.insert("magnum_object.name".into(), T::NAME.into());
    out.insert("magnum_object.namespace".into(), codec::NAMESPACE.into());
    out.insert("magnum_object.version".into(), target.into());
    let changes: Vec<Value> = i
        .obj
        .changes
        .iter()
        .filter(|c| i.before.contains_key(c.as_str()))
        .map(|c| Value::String(c.clone()))
        .collect();
    out.insert("magnum_object.data".into(), Value::Object(i.before));
    if !changes.is_empty() {
        out.insert("magnum_object.changes".into(), Value::Array(changes));
    }
    Ok(Value::Object(out))
}

/// `obj_to_primitive` refuses a target newer than the class (`InvalidTargetVersion`).
fn target_ok(target: &str, local: &str) -> bool {
    let parse = |v: &str| -> Option<Vec<u64>> { v.split('.').map(|p| p.parse().ok()).collect() };
    match (parse(target), parse(local)) {
        (Some(t), Some(l)) => t <= l,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// classmethods

/// Positional-or-keyword arguments of a classmethod call.
pub(crate) struct CallArgs<'a> {
    pos: &'a [Value],
    kwargs: Option<&'a Map<String, Value>>,
    /// `Cls.method`, for Python's TypeError text.
    qualname: String,
}

impl<'a> CallArgs<'a> {
    pub(crate) fn new(args: &'a Args, objname: &str, objmethod: &str) -> Self {
        static EMPTY: Vec<Value> = Vec::new();
        let pos = match args.get("args") {
            Some(Value::Array(a)) => a.as_slice(),
            _ => EMPTY.as_slice(),
        };
        CallArgs {
            pos,
            kwargs: args.get("kwargs").and_then(Value::as_object),
            qualname: format!("{objname}.{objmethod}"),
        }
    }

    pub(crate) fn get(&self, i: usize, name: &str) -> Option<Value> {
        self.pos
            .get(i)
            .cloned()
            .or_else(|| self.kwargs.and_then(|k| k.get(name)).cloned())
    }

    /// A required argument (Python's TypeError when missing).
    fn req(&self, i: usize, name: &str) -> Result<Value, RemoteFailure> {
        self.get(i, name).ok_or_else(|| {
            RemoteFailure::builtin(
                "TypeError",
                format!(
                    "{}() missing 1 required positional argument: '{name}'",
                    self.qualname
                ),
            )
        })
    }

    /// `str(arg)`: Python's, so a dict argument reads `{'a': 1}` in a `NotFound` message.
    pub(crate) fn text(&self, i: usize, name: &str) -> Result<String, RemoteFailure> {
        Ok(json_str(&self.req(i, name)?))
    }

    /// An integer id; a value that is not one matches no row (the DB compares it with the
    /// integer column), so the object's NotFound, built by `not_found` from its text.
    fn id(
        &self,
        i: usize,
        name: &str,
        not_found: impl Fn(String) -> DbError,
    ) -> Result<i64, RemoteFailure> {
        let v = self.req(i, name)?;
        int_arg(&v, name).map_err(|_| db_err(not_found(json_str(&v))))
    }
}

fn int_arg(v: &Value, what: &str) -> Result<i64, RemoteFailure> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| RemoteFailure::builtin("ValueError", format!("invalid {what}"))),
        Value::String(s) => s.trim().parse().map_err(|_| {
            RemoteFailure::builtin(
                "ValueError",
                format!("invalid literal for int() with base 10: '{s}'"),
            )
        }),
        _ => Err(RemoteFailure::builtin(
            "TypeError",
            format!("invalid {what}"),
        )),
    }
}

/// `limit, marker, sort_key, sort_dir` from positional index `first` on; the marker is an
/// object primitive.
pub(crate) struct Paging<T> {
    pub limit: Option<u64>,
    pub marker: Option<T>,
    pub key: Option<String>,
    pub dir: Option<String>,
}

impl<T> Paging<T> {
    pub(crate) fn page(&self) -> Page<'_, T> {
        Page {
            limit: self.limit,
            marker: self.marker.as_ref(),
            sort_key: self.key.as_deref(),
            sort_dir: self.dir.as_deref(),
        }
    }
}

pub(crate) fn paging<T: VersionedObject>(
    a: &CallArgs<'_>,
    first: usize,
) -> Result<Paging<T>, RemoteFailure> {
    let limit = a.get(first, "limit").and_then(|v| v.as_u64());
    let marker = match a.get(first + 1, "marker") {
        None | Some(Value::Null) => None,
        Some(m) => Some(codec::decode::<T>(&m).map_err(codec_failure)?.data),
    };
    let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_string));
    Ok(Paging {
        limit,
        marker,
        key: text(a.get(first + 2, "sort_key")),
        dir: text(a.get(first + 3, "sort_dir")),
    })
}

fn filters_map(v: Option<Value>) -> Result<Map<String, Value>, RemoteFailure> {
    match v {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(RemoteFailure::builtin(
            "TypeError",
            "filters must be a dict",
        )),
    }
}

fn opt_text(f: &Map<String, Value>, k: &str) -> Option<String> {
    f.get(k).map(json_str)
}

fn statuses<S: serde::de::DeserializeOwned>(v: Option<&Value>) -> Option<Vec<S>> {
    let v = v?;
    let items: Vec<Value> = match v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    // a status Magnum does not know matches no row; it is dropped here (the IN list then
    // lacks it, with the same result)
    Some(
        items
            .into_iter()
            .filter_map(|s| serde_json::from_value(s).ok())
            .collect(),
    )
}

/// `_add_clusters_filters`: unknown keys are ignored as in Magnum. `node_addresses` is in
/// Magnum's list but is no longer a column, so Magnum fails on it; so does this.
pub(crate) fn cluster_filters(v: Option<Value>) -> Result<ClusterFilters, RemoteFailure> {
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

/// `_add_nodegoup_filters` (unknown keys ignored).
pub(crate) fn nodegroup_filters(v: Option<Value>) -> Result<NodeGroupFilters, RemoteFailure> {
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

fn federation_filters(v: Option<Value>) -> Result<FederationFilters, RemoteFailure> {
    let f = filters_map(v)?;
    Ok(FederationFilters {
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
    })
}

fn x509_filters(v: Option<Value>) -> Result<X509KeyPairFilters, RemoteFailure> {
    let f = filters_map(v)?;
    Ok(X509KeyPairFilters {
        project_id: opt_text(&f, "project_id"),
        user_id: opt_text(&f, "user_id"),
    })
}

fn quota_filters(v: Option<Value>) -> Result<QuotaFilters, RemoteFailure> {
    let f = filters_map(v)?;
    Ok(QuotaFilters {
        resource: opt_text(&f, "resource"),
        project_id: opt_text(&f, "project_id"),
    })
}

/// A list result: every object at the conductor's current version.
pub(crate) fn list_value<T: VersionedObject>(items: Vec<T>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|o| codec::encode(&Obj::unchanged(o)))
            .collect(),
    )
}

/// A single object at the caller's requested version (relabelled: no Magnum object
/// overrides `obj_make_compatible`: `magnum/objects/*.py`).
pub(crate) fn single<T: VersionedObject>(obj: Obj<T>, requested: Option<&str>) -> Value {
    let mut v = codec::encode(&obj);
    if let (Some(r), Some(m)) = (requested, v.as_object_mut()) {
        if codec::version_accepted(r, T::VERSION) {
            m.insert("magnum_object.version".into(), Value::String(r.to_string()));
        }
    }
    v
}

/// A typed object built from a dict of field values (`values` of `update_nodegroup`,
/// `quota` of `update_quota`) laid over `base`; returns it with the keys that are fields.
fn overlay<T: VersionedObject>(
    base: Option<T>,
    values: &Map<String, Value>,
) -> Result<(T, Vec<&'static str>), RemoteFailure> {
    let mut prim = match base {
        Some(b) => codec::encode(&Obj::unchanged(b)),
        None => json!({"magnum_object.name": T::NAME, "magnum_object.namespace": codec::NAMESPACE,
                       "magnum_object.version": T::VERSION, "magnum_object.data": {}}),
    };
    let mut fields = Vec::new();
    if let Some(d) = prim
        .get_mut("magnum_object.data")
        .and_then(Value::as_object_mut)
    {
        for f in T::fields() {
            if let Some(v) = values.get(f.name) {
                d.insert(f.name.to_string(), v.clone());
                fields.push(f.name);
            }
        }
    }
    let obj: Obj<T> = codec::decode(&prim).map_err(codec_failure)?;
    Ok((obj.data, fields))
}

/// The remotable classmethods of Magnum's objects (`magnum/objects/*.py`) not served in
/// `rpc_server.rs`. `None` for an unknown
/// (objname, objmethod).
pub(crate) async fn class_action(
    db: &Database,
    ctx: &RequestContext,
    objname: &str,
    objmethod: &str,
    args: &Args,
    requested: Option<&str>,
) -> Option<Out> {
    if !CLASS_METHODS.contains(&(objname, objmethod)) {
        return None;
    }
    let a = CallArgs::new(args, objname, objmethod);
    let scope = Scope::from(ctx);
    let m = objmethod;
    let r: Out = async {
        match (objname, objmethod) {
            ("Cluster", "get_by_id") => {
                let id = a.id(0, "cluster_id", DbError::ClusterNotFound)?;
                let c = cluster::get_by_id(db, &scope, id).await.map_err(db_err)?;
                Ok(single(Obj::unchanged(c), requested))
            }
            ("Cluster", "get_count_all") => {
                let f = cluster_filters(a.get(0, "filters"))?;
                Ok(json!(cluster::count(db, &scope, &f)
                    .await
                    .map_err(db_err)?))
            }
            ("Cluster", "list") => {
                let p = paging::<Cluster>(&a, 0)?;
                let f = cluster_filters(a.get(4, "filters"))?;
                Ok(list_value(
                    cluster::list(db, &scope, &f, &p.page())
                        .await
                        .map_err(db_err)?,
                ))
            }
            ("Cluster", "get_stats") => {
                // Magnum passes project_id as the DB layer's context and no project_id,
                // so the stats always cover every project: a (clusters, nodes) tuple.
                let st = cluster::stats(db, None).await.map_err(db_err)?;
                Ok(json!([st.clusters, st.nodes]))
            }
            ("ClusterTemplate", "get_by_id") => {
                let id = a.id(0, "cluster_template_id", DbError::ClusterTemplateNotFound)?;
                let t = cluster_template::get_by_id(db, &scope, id)
                    .await
                    .map_err(db_err)?;
                Ok(single(Obj::unchanged(t), requested))
            }
            ("NodeGroup", "get_by_id" | "get_by_uuid" | "get_by_name") => {
                let cid = a.text(0, "cluster")?;
                let r = match m {
                    "get_by_id" => {
                        let id = a.id(1, "id_", DbError::NodeGroupNotFound)?;
                        nodegroup::get_by_id(db, &scope, &cid, id).await
                    }
                    "get_by_uuid" => {
                        nodegroup::get_by_uuid(db, &scope, &cid, &a.text(1, "uuid")?).await
                    }
                    _ => nodegroup::get_by_name(db, &scope, &cid, &a.text(1, "name")?).await,
                };
                Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
            }
            ("NodeGroup", "get_count_all") => {
                let cid = a.text(0, "cluster_id")?;
                Ok(json!(nodegroup::count(db, &scope, &cid)
                    .await
                    .map_err(db_err)?))
            }
            ("NodeGroup", "list") => {
                let cid = a.text(0, "cluster_id")?;
                let p = paging::<NodeGroup>(&a, 1)?;
                let f = nodegroup_filters(a.get(5, "filters"))?;
                Ok(list_value(
                    nodegroup::list(db, &scope, &cid, &f, &p.page())
                        .await
                        .map_err(db_err)?,
                ))
            }
            ("NodeGroup", "update_nodegroup") => {
                let cid = a.text(0, "cluster_id")?;
                let ngid = a.text(1, "nodegroup_id")?;
                let values = match a.req(2, "values")? {
                    Value::Object(v) => v,
                    _ => return Err(RemoteFailure::builtin("TypeError", "values must be a dict")),
                };
                let current = nodegroup::get(db, &scope, &cid, &ngid)
                    .await
                    .map_err(db_err)?;
                let uuid = current.uuid.clone();
                let (ng, fields) = overlay::<NodeGroup>(Some(current), &values)?;
                let row = nodegroup::update(db, &cid, &uuid, &ng, &fields)
                    .await
                    .map_err(db_err)?;
                Ok(single(Obj::unchanged(row), requested))
            }
            ("MagnumService", "get_by_host_and_binary") => {
                let host = a.text(0, "host")?;
                let binary = a.text(1, "binary")?;
                match magnum_service::get_by_host_and_binary(db, &host, &binary)
                    .await
                    .map_err(db_err)?
                {
                    Some(s) => Ok(single(Obj::unchanged(s), requested)),
                    None => Ok(Value::Null),
                }
            }
            ("MagnumService", "list") => {
                let p = paging::<MagnumService>(&a, 0)?;
                Ok(list_value(
                    magnum_service::list(db, None, &p.page())
                        .await
                        .map_err(db_err)?,
                ))
            }
            ("Quota", "get_quota_by_project_id_resource") => {
                let p = a.text(0, "project_id")?;
                let r = a.text(1, "resource")?;
                let q = quota::get_by_project_id_resource(db, &p, &r)
                    .await
                    .map_err(db_err)?;
                Ok(single(Obj::unchanged(q), requested))
            }
            ("Quota", "get_by_id") => {
                let id = a.id(0, "quota_id", |q| DbError::QuotaNotFound {
                    msg: format!("quota id {q} ."),
                })?;
                let q = quota::get_by_id(db, id).await.map_err(db_err)?;
                Ok(single(Obj::unchanged(q), requested))
            }
            ("Quota", "list") => {
                let p = paging::<Quota>(&a, 0)?;
                let f = quota_filters(a.get(4, "filters"))?;
                Ok(list_value(
                    quota::list(db, &f, &p.page()).await.map_err(db_err)?,
                ))
            }
            ("Quota", "quota_get_all_by_project_id") => {
                // Magnum's classmethod calls dbapi.get_quota_by_project_id, which does not
                // exist: it always fails with this AttributeError. Reproduced as is.
                Err(RemoteFailure::builtin(
                    "AttributeError",
                    "'Connection' object has no attribute 'get_quota_by_project_id'",
                ))
            }
            ("Quota", "update_quota") => {
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
            ("X509KeyPair", "get" | "get_by_id" | "get_by_uuid") => {
                let r = match m {
                    "get" => x509keypair::get(db, &scope, &a.text(0, "x509keypair_id")?).await,
                    "get_by_id" => {
                        let id = a.id(0, "x509keypair_id", DbError::X509KeyPairNotFound)?;
                        x509keypair::get_by_id(db, &scope, id).await
                    }
                    _ => x509keypair::get_by_uuid(db, &scope, &a.text(0, "uuid")?).await,
                };
                Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
            }
            ("X509KeyPair", "list") => {
                let p = paging::<X509KeyPair>(&a, 0)?;
                let f = x509_filters(a.get(4, "filters"))?;
                Ok(list_value(
                    x509keypair::list(db, &scope, &f, &p.page())
                        .await
                        .map_err(db_err)?,
                ))
            }
            ("Federation", "get" | "get_by_id" | "get_by_uuid" | "get_by_name") => {
                let r = match m {
                    "get" => federation::get(db, &scope, &a.text(0, "federation_id")?).await,
                    "get_by_id" => {
                        let id = a.id(0, "federation_id", DbError::FederationNotFound)?;
                        federation::get_by_id(db, &scope, id).await
                    }
                    "get_by_uuid" => federation::get_by_uuid(db, &scope, &a.text(0, "uuid")?).await,
                    _ => federation::get_by_name(db, &scope, &a.text(0, "name")?).await,
                };
                Ok(single(Obj::unchanged(r.map_err(db_err)?), requested))
            }
            ("Federation", "get_count_all") => {
                // Magnum's classmethod calls dbapi.get_federation_count_all, which does not
                // exist: it always fails with this AttributeError. Reproduced as is.
                Err(RemoteFailure::builtin(
                    "AttributeError",
                    "'Connection' object has no attribute 'get_federation_count_all'",
                ))
            }
            ("Federation", "list") => {
                let p = paging::<Federation>(&a, 0)?;
                let f = federation_filters(a.get(4, "filters"))?;
                Ok(list_value(
                    federation::list(db, &scope, &f, &p.page())
                        .await
                        .map_err(db_err)?,
                ))
            }
            (o, m) => Err(attribute_error(o, m)),
        }
    }
    .await;
    Some(r)
}

/// The (object, classmethod) pairs [`class_action`] serves.
const CLASS_METHODS: &[(&str, &str)] = &[
    ("Cluster", "get_by_id"),
    ("Cluster", "get_count_all"),
    ("Cluster", "list"),
    ("Cluster", "get_stats"),
    ("ClusterTemplate", "get_by_id"),
    ("NodeGroup", "get_by_id"),
    ("NodeGroup", "get_by_uuid"),
    ("NodeGroup", "get_by_name"),
    ("NodeGroup", "get_count_all"),
    ("NodeGroup", "list"),
    ("NodeGroup", "update_nodegroup"),
    ("MagnumService", "get_by_host_and_binary"),
    ("MagnumService", "list"),
    ("Quota", "get_quota_by_project_id_resource"),
    ("Quota", "get_by_id"),
    ("Quota", "list"),
    ("Quota", "quota_get_all_by_project_id"),
    ("Quota", "update_quota"),
    ("X509KeyPair", "get"),
    ("X509KeyPair", "get_by_id"),
    ("X509KeyPair", "get_by_uuid"),
    ("X509KeyPair", "list"),
    ("Federation", "get"),
    ("Federation", "get_by_id"),
    ("Federation", "get_by_uuid"),
    ("Federation", "get_by_name"),
    ("Federation", "get_count_all"),
    ("Federation", "list"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments print as Python's `str()` (`NotFound` messages, filter values), not as JSON:
    /// CPython 3.11 `str({'a': [1, None]})` is `{'a': [1, None]}`, `str(1e16)` is `1e+16`.
    #[test]
    fn text_arguments_are_python_str() {
        let mut args = Args::new();
        args.insert(
            "args".into(),
            json!([{"a": [1, null], "b": true}, 1e16, "plain", null, 2.5]),
        );
        let a = CallArgs::new(&args, "Cluster", "get_by_uuid");
        let text = |i: usize| a.text(i, "x").unwrap_or_default();
        assert_eq!(text(0), "{'a': [1, None], 'b': True}");
        assert_eq!(text(1), "1e+16");
        assert_eq!(text(2), "plain");
        assert_eq!(text(3), "None");
        assert_eq!(text(4), "2.5");
        let f = json!({"name": {"k": "v"}, "x": false});
        let f = f.as_object().cloned().unwrap_or_default();
        assert_eq!(opt_text(&f, "name").as_deref(), Some("{'k': 'v'}"));
        assert_eq!(opt_text(&f, "x").as_deref(), Some("False"));
    }
}
