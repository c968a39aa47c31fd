//! Object indirection on the conductor side (`oslo_versionedobjects/base.py`'s indirection API, Magnum's
//! `magnum/conductor/handlers/indirection_api.py`): the remotable instance methods
//! (`object_action`), the remotable classmethods (`object_class_action_versions`) and
//! `object_backport_versions`. [`Class`] names the object classes; each class's methods
//! live in the module of its name (`cluster.rs`, `nodegroup.rs`, ...), each with an
//! `instance` and a `class` function whose `match` on the method name is the class's list
//! of remotable methods (a name it does not match is Python's `AttributeError`).
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
    Certificate, Cluster, ClusterTemplate, Federation, MagnumService, NodeGroup, Quota, Stats,
    X509KeyPair,
};
use openkeel_core::pyvalue::json_str;
use openkeel_db::{Database, DbError, Page, Scope};
use openkeel_rpc::codec::{self, CodecError, Kind, VersionedObject};
use openkeel_rpc::transport::{Args, RemoteFailure};
use openkeel_rpc::Obj;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::future::Future;

mod cluster;
mod cluster_template;
mod federation;
mod magnum_service;
mod nodegroup;
mod quota;
mod x509keypair;

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

    /// The object's primitive as OVO serializes it at `version` (no Magnum object overrides
    /// `obj_make_compatible`): its set fields, and its changes among them; and whether it has
    /// changes.
    fn primitive_at(self, version: &str) -> (Value, bool) {
        let mut out = Map::new();
        out.insert("magnum_object.name".into(), T::NAME.into());
        out.insert("magnum_object.namespace".into(), codec::NAMESPACE.into());
        out.insert("magnum_object.version".into(), version.into());
        let changes: Vec<Value> = self
            .obj
            .changes
            .iter()
            .filter(|c| self.before.contains_key(c.as_str()))
            .map(|c| Value::String(c.clone()))
            .collect();
        let changed = !changes.is_empty();
        out.insert("magnum_object.data".into(), Value::Object(self.before));
        if changed {
            out.insert("magnum_object.changes".into(), Value::Array(changes));
        }
        (Value::Object(out), changed)
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

/// The row behind an object's remotable `create`, `destroy`, `save` and `refresh`: `KEY`
/// names the set fields that address it (an unset one is OVO's `NotImplementedError`).
trait Stored: VersionedObject + Clone + Send + Sync {
    const KEY: &'static [&'static str];
    fn insert<'a>(
        db: &'a Database,
        row: &'a Self,
    ) -> impl Future<Output = Result<Self, DbError>> + Send + 'a;
    fn remove<'a>(
        db: &'a Database,
        key: &'a [String],
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a;
    fn store<'a>(
        db: &'a Database,
        key: &'a [String],
        row: &'a Self,
        fields: &'a [&'a str],
    ) -> impl Future<Output = Result<(), DbError>> + Send + 'a;
    fn fetch<'a>(
        db: &'a Database,
        scope: &'a Scope,
        key: &'a [String],
    ) -> impl Future<Output = Result<Self, DbError>> + Send + 'a;
}

/// [`Stored`] for a table addressed by `uuid` through its module's `create`, `destroy`,
/// `update` and `get_by_uuid`.
macro_rules! stored_by_uuid {
    ($ty:ty, $table:ident) => {
        impl super::Stored for $ty {
            const KEY: &'static [&'static str] = &["uuid"];
            fn insert<'a>(
                db: &'a Database,
                row: &'a Self,
            ) -> impl std::future::Future<Output = Result<Self, DbError>> + Send + 'a {
                $table::create(db, row)
            }
            fn remove<'a>(
                db: &'a Database,
                key: &'a [String],
            ) -> impl std::future::Future<Output = Result<(), DbError>> + Send + 'a {
                $table::destroy(db, key.first().map_or("", String::as_str))
            }
            fn store<'a>(
                db: &'a Database,
                key: &'a [String],
                row: &'a Self,
                fields: &'a [&'a str],
            ) -> impl std::future::Future<Output = Result<(), DbError>> + Send + 'a {
                async move {
                    let uuid = key.first().map_or("", String::as_str);
                    $table::update(db, uuid, row, fields).await.map(|_| ())
                }
            }
            fn fetch<'a>(
                db: &'a Database,
                scope: &'a Scope,
                key: &'a [String],
            ) -> impl std::future::Future<Output = Result<Self, DbError>> + Send + 'a {
                $table::get_by_uuid(db, scope, key.first().map_or("", String::as_str))
            }
        }
    };
}
pub(crate) use stored_by_uuid;

/// `create`, `destroy`, `save` and `refresh` of a [`Stored`] object (`None` for another
/// method): the row written or read, the reply as OVO's handler makes it.
async fn crud<T: Stored>(
    db: &Database,
    scope: &Scope,
    i: &Inst<T>,
    method: &str,
) -> Result<Option<Value>, RemoteFailure> {
    let key =
        || -> Result<Vec<String>, RemoteFailure> { T::KEY.iter().map(|k| i.need(k)).collect() };
    Ok(Some(match method {
        "create" => i.created(T::insert(db, &i.obj.data).await.map_err(db_err)?),
        "destroy" => {
            T::remove(db, &key()?).await.map_err(db_err)?;
            i.reset()
        }
        "save" => {
            let key = key()?;
            T::store(db, &key, &i.obj.data, &i.changes())
                .await
                .map_err(db_err)?;
            i.reset()
        }
        "refresh" => i.refreshed(T::fetch(db, scope, &key()?).await.map_err(db_err)?),
        _ => return Ok(None),
    }))
}

/// `object_action` on an object whose remotable instance methods are exactly [`crud`]'s.
async fn stored_instance<T: Stored>(
    db: &Database,
    ctx: &RequestContext,
    prim: &Value,
    method: &str,
) -> Out {
    let i = Inst::<T>::decode(prim)?;
    crud(db, &Scope::from(ctx), &i, method)
        .await?
        .ok_or_else(|| no_instance_method(T::NAME, method))
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
    Ok(i.primitive_at(&version))
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

/// The Magnum object classes the conductor serves (`magnum/objects/__init__.py`); each has
/// its remotable methods in the module of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Cluster,
    ClusterTemplate,
    NodeGroup,
    X509KeyPair,
    MagnumService,
    Quota,
    Federation,
    Certificate,
    Stats,
}

impl Class {
    const ALL: [Class; 9] = [
        Class::Cluster,
        Class::ClusterTemplate,
        Class::NodeGroup,
        Class::X509KeyPair,
        Class::MagnumService,
        Class::Quota,
        Class::Federation,
        Class::Certificate,
        Class::Stats,
    ];

    /// OVO's `obj_class_from_name` by name alone.
    pub(crate) fn named(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The class's `magnum_object.name`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Cluster => Cluster::NAME,
            Class::ClusterTemplate => ClusterTemplate::NAME,
            Class::NodeGroup => NodeGroup::NAME,
            Class::X509KeyPair => X509KeyPair::NAME,
            Class::MagnumService => MagnumService::NAME,
            Class::Quota => Quota::NAME,
            Class::Federation => Federation::NAME,
            Class::Certificate => Certificate::NAME,
            Class::Stats => Stats::NAME,
        }
    }

    /// The version this conductor serves.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Class::Cluster => Cluster::VERSION,
            Class::ClusterTemplate => ClusterTemplate::VERSION,
            Class::NodeGroup => NodeGroup::VERSION,
            Class::X509KeyPair => X509KeyPair::VERSION,
            Class::MagnumService => MagnumService::VERSION,
            Class::Quota => Quota::VERSION,
            Class::Federation => Federation::VERSION,
            Class::Certificate => Certificate::VERSION,
            Class::Stats => Stats::VERSION,
        }
    }

    /// OVO's class lookup for `(objname, version)`: an unknown class is
    /// `UnsupportedObjectError`, a version this conductor cannot serve is
    /// `IncompatibleObjectVersion`.
    pub(crate) fn lookup(objname: &str, requested: Option<&str>) -> Result<Class, RemoteFailure> {
        let Some(class) = Class::named(objname) else {
            let mut f = RemoteFailure::builtin(
                "UnsupportedObjectError",
                format!("Unsupported object type {objname}"),
            );
            f.module = "oslo_versionedobjects.exception".into();
            return Err(f);
        };
        let Some(r) = requested else {
            return Err(RemoteFailure::builtin("KeyError", format!("'{objname}'")));
        };
        let local = class.version();
        if codec::version_accepted(r, local) {
            return Ok(class);
        }
        let mut f = RemoteFailure::builtin(
            "IncompatibleObjectVersion",
            format!("Version {r} of {objname} is not supported, supported version is {local}"),
        );
        f.module = "oslo_versionedobjects.exception".into();
        Err(f)
    }
}

/// `magnum_object.name` of an object primitive (`""` when absent).
fn name_of(prim: &Value) -> String {
    prim.get("magnum_object.name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `object_action(objinst, objmethod, args, kwargs)`.
pub(crate) async fn object_action(db: &Database, ctx: &RequestContext, args: &Args) -> Out {
    let prim = args.get("objinst").cloned().unwrap_or(Value::Null);
    let objname = name_of(&prim);
    let method = args.get("objmethod").and_then(Value::as_str).unwrap_or("");
    match Class::named(&objname) {
        Some(Class::Cluster) => cluster::instance(db, ctx, &prim, method).await,
        Some(Class::ClusterTemplate) => {
            stored_instance::<ClusterTemplate>(db, ctx, &prim, method).await
        }
        Some(Class::NodeGroup) => stored_instance::<NodeGroup>(db, ctx, &prim, method).await,
        Some(Class::X509KeyPair) => x509keypair::instance(db, ctx, &prim, method).await,
        Some(Class::Federation) => stored_instance::<Federation>(db, ctx, &prim, method).await,
        Some(Class::MagnumService) => magnum_service::instance(db, &prim, method).await,
        Some(Class::Quota) => quota::instance(db, &prim, method).await,
        Some(Class::Certificate | Class::Stats) | None => {
            // what obj_from_primitive raises for a class it does not know
            let p: Result<Obj<Cluster>, _> = codec::decode(&prim);
            match p {
                Err(e) => Err(codec_failure(e)),
                Ok(_) => Err(no_instance_method(&objname, method)),
            }
        }
    }
}

/// `object_class_action_versions` once the class was looked up ([`Class::lookup`]): `None`
/// for a classmethod the class does not have (`getattr(cls, objmethod)` fails).
pub(crate) async fn class_action(
    db: &Database,
    ctx: &RequestContext,
    class: Class,
    objmethod: &str,
    args: &Args,
    requested: Option<&str>,
) -> Option<Out> {
    let a = CallArgs::new(args, class.name(), objmethod);
    let scope = Scope::from(ctx);
    let (m, r) = (objmethod, requested);
    match class {
        Class::Cluster => cluster::class(db, &scope, &a, m, r).await,
        Class::ClusterTemplate => cluster_template::class(db, &scope, &a, m, r).await,
        Class::NodeGroup => nodegroup::class(db, &scope, &a, m, r).await,
        Class::X509KeyPair => x509keypair::class(db, &scope, &a, m, r).await,
        Class::Federation => federation::class(db, &scope, &a, m, r).await,
        Class::MagnumService => magnum_service::class(db, &a, m, r).await,
        Class::Quota => quota::class(db, &a, m, r).await,
        Class::Stats => match m {
            "get_cluster_stats" => Some(cluster_stats(db, &a, r).await),
            _ => None,
        },
        Class::Certificate => None,
    }
}

/// `Stats.get_cluster_stats(context, project_id=None)`.
async fn cluster_stats(db: &Database, a: &CallArgs<'_>, requested: Option<&str>) -> Out {
    let project = a.get(0, "project_id");
    let project = project.as_ref().and_then(Value::as_str);
    let st = openkeel_db::cluster::stats(db, project)
        .await
        .map_err(db_err)?;
    Ok(single(Obj::new(st, ["clusters", "nodes"]), requested))
}

/// `object_backport_versions(objinst, object_versions)`: the object re-serialized at
/// `object_versions[name]` (no Magnum object overrides `obj_make_compatible`, so this
/// relabels the version and keeps the set fields and changes).
pub(crate) fn backport(args: &Args) -> Out {
    let prim = args.get("objinst").cloned().unwrap_or(Value::Null);
    let name = name_of(&prim);
    match Class::named(&name) {
        Some(Class::Cluster) => backport_cluster(&prim, args),
        Some(Class::ClusterTemplate) => backport_as::<ClusterTemplate>(&prim, args),
        Some(Class::NodeGroup) => backport_as::<NodeGroup>(&prim, args),
        Some(Class::X509KeyPair) => backport_as::<X509KeyPair>(&prim, args),
        Some(Class::Federation) => backport_as::<Federation>(&prim, args),
        Some(Class::MagnumService) => backport_as::<MagnumService>(&prim, args),
        Some(Class::Quota) => backport_as::<Quota>(&prim, args),
        Some(Class::Certificate) => backport_as::<Certificate>(&prim, args),
        Some(Class::Stats) => backport_as::<Stats>(&prim, args),
        None => match codec::decode::<Cluster>(&prim) {
            Err(e) => Err(codec_failure(e)),
            Ok(_) => Err(RemoteFailure::builtin("KeyError", format!("'{name}'"))),
        },
    }
}

/// A `Cluster`'s backport: the nested template goes to its manifest version (ObjectField
/// child).
fn backport_cluster(prim: &Value, args: &Args) -> Out {
    let mut out = backport_as::<Cluster>(prim, args)?;
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
    Ok(i.primitive_at(&target).0)
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
