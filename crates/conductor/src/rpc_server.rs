//! [`ConductorDispatcher`]: the conductor's [`Dispatcher`] for the RPC server on the
//! `magnum-conductor` topic (rpc.md §10): decodes each request's arguments with the
//! `magnum_object.*` codec, calls the handlers (`ConductorApi`) and encodes the result.
//!
//! * the 12 business methods go to the handlers (`openkeel_rpc::remote::serve`);
//! * `ping_conductor` answers `true`; the federation methods raise `NotImplementedError`;
//! * object indirection (§11): with a database ([`ConductorDispatcher::with_database`]),
//!   `object_class_action_versions` serves the read paths magnum-api uses most
//!   (Cluster / ClusterTemplate `get`, `get_by_uuid`, `get_by_name`, `list` (Cluster: no
//!   filters); NodeGroup `get`, `list` (filters `is_default`, `role`, `name`);
//!   MagnumService `list`; Stats `get_cluster_stats`); every other indirection call answers
//!   a failure (`NotImplementedError` naming the object method), never a fake success;
//! * anything else is oslo.messaging's `NoSuchMethod`.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::Stats;
use openkeel_db::{
    cluster, cluster_template, magnum_service, nodegroup, ClusterFilters, ClusterTemplateFilters,
    Database, NodeGroupFilters, Page, Scope,
};
use openkeel_rpc::codec::{self, VersionedObject};
use openkeel_rpc::remote::{no_such_method, serve};
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure};
use openkeel_rpc::ConductorApi;
use openkeel_rpc::Obj;
use serde_json::Value;
use std::sync::Arc;

pub struct ConductorDispatcher {
    handlers: Arc<dyn ConductorApi>,
    db: Option<Database>,
}

impl ConductorDispatcher {
    pub fn new(handlers: Arc<dyn ConductorApi>) -> Self {
        ConductorDispatcher { handlers, db: None }
    }

    /// Also serve object indirection's read paths from `db`.
    pub fn with_database(mut self, db: Database) -> Self {
        self.db = Some(db);
        self
    }

    /// `object_class_action_versions` for the supported classmethods; `None` otherwise.
    async fn class_action(
        &self,
        ctx: &RequestContext,
        args: &Args,
    ) -> Option<Result<Value, RemoteFailure>> {
        let db = self.db.as_ref()?;
        let objname = args.get("objname")?.as_str()?;
        let objmethod = args.get("objmethod")?.as_str()?;
        let empty = Vec::new();
        let pos = match args.get("args") {
            Some(Value::Array(a)) => a,
            _ => &empty,
        };
        let kwargs = args.get("kwargs").and_then(Value::as_object);
        let arg = |i: usize, name: &str| -> Option<Value> {
            pos.get(i)
                .cloned()
                .or_else(|| kwargs.and_then(|k| k.get(name)).cloned())
        };
        let requested = args
            .get("object_versions")
            .and_then(|v| v.get(objname))
            .and_then(Value::as_str)
            .map(str::to_string);
        let scope = Scope::from(ctx);
        let s = |v: Option<Value>| -> String {
            match v {
                Some(Value::String(s)) => s,
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            }
        };
        let out: Result<Value, MagnumError> = match (objname, objmethod) {
            ("Cluster", m @ ("get" | "get_by_uuid" | "get_by_name")) => {
                let id = s(arg(0, if m == "get" { "cluster_id" } else { &m[7..] }));
                let r = match m {
                    "get" => cluster::get(db, &scope, &id).await,
                    "get_by_uuid" => cluster::get_by_uuid(db, &scope, &id).await,
                    _ => cluster::get_by_name(db, &scope, &id).await,
                };
                r.map_err(MagnumError::from)
                    .map(|c| single(Obj::unchanged(c), requested.as_deref()))
            }
            ("ClusterTemplate", m @ ("get" | "get_by_uuid" | "get_by_name")) => {
                let id = s(arg(
                    0,
                    if m == "get" {
                        "cluster_template_id"
                    } else {
                        &m[7..]
                    },
                ));
                let r = match m {
                    "get" => cluster_template::get(db, &scope, &id).await,
                    "get_by_uuid" => cluster_template::get_by_uuid(db, &scope, &id).await,
                    _ => cluster_template::get_by_name(db, &scope, &id).await,
                };
                r.map_err(MagnumError::from)
                    .map(|c| single(Obj::unchanged(c), requested.as_deref()))
            }
            ("NodeGroup", "get") => {
                let cid = s(arg(0, "cluster_id"));
                let ngid = s(arg(1, "nodegroup_id"));
                nodegroup::get(db, &scope, &cid, &ngid)
                    .await
                    .map_err(MagnumError::from)
                    .map(|n| single(Obj::unchanged(n), requested.as_deref()))
            }
            ("Cluster", "list") => {
                if !no_filters(arg(4, "filters")) {
                    return Some(Err(unsupported("Cluster.list with filters")));
                }
                let (limit, marker, key, dir) = match paging(&arg, 0) {
                    Ok(p) => p,
                    Err(f) => return Some(Err(f)),
                };
                let page = make_page(limit, marker.as_ref(), key.as_deref(), dir.as_deref());
                cluster::list(db, &scope, &ClusterFilters::default(), &page)
                    .await
                    .map_err(MagnumError::from)
                    .map(list_value)
            }
            ("ClusterTemplate", "list") => {
                let (limit, marker, key, dir) = match paging(&arg, 0) {
                    Ok(p) => p,
                    Err(f) => return Some(Err(f)),
                };
                let page = make_page(limit, marker.as_ref(), key.as_deref(), dir.as_deref());
                cluster_template::list(db, &scope, &ClusterTemplateFilters::default(), &page)
                    .await
                    .map_err(MagnumError::from)
                    .map(list_value)
            }
            ("NodeGroup", "list") => {
                let cid = s(arg(0, "cluster_id"));
                let mut filters = NodeGroupFilters::default();
                if let Some(Value::Object(f)) = arg(6, "filters") {
                    for (k, v) in f {
                        match (k.as_str(), v) {
                            ("is_default", Value::Bool(b)) => filters.is_default = Some(b),
                            ("role", Value::String(r)) => filters.role = Some(r),
                            ("name", Value::String(n)) => filters.name = Some(n),
                            _ => {
                                return Some(Err(unsupported(&format!(
                                    "NodeGroup.list with filter {k}"
                                ))))
                            }
                        }
                    }
                } else if !no_filters(arg(6, "filters")) {
                    return Some(Err(unsupported("NodeGroup.list with these filters")));
                }
                let (limit, marker, key, dir) = match paging(&arg, 1) {
                    Ok(p) => p,
                    Err(f) => return Some(Err(f)),
                };
                let page = make_page(limit, marker.as_ref(), key.as_deref(), dir.as_deref());
                nodegroup::list(db, &scope, &cid, &filters, &page)
                    .await
                    .map_err(MagnumError::from)
                    .map(list_value)
            }
            ("MagnumService", "list") => magnum_service::list(db, None, &Page::all())
                .await
                .map_err(MagnumError::from)
                .map(|l| {
                    Value::Array(
                        l.into_iter()
                            .map(|m| codec::encode(&Obj::unchanged(m)))
                            .collect(),
                    )
                }),
            ("Stats", "get_cluster_stats") => {
                let project = arg(0, "project_id");
                let project = project.as_ref().and_then(Value::as_str);
                cluster::stats(db, project)
                    .await
                    .map_err(MagnumError::from)
                    .map(|st: Stats| {
                        single(Obj::new(st, ["clusters", "nodes"]), requested.as_deref())
                    })
            }
            _ => return None,
        };
        Some(out.map_err(RemoteFailure::from))
    }
}

fn unsupported(what: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "NotImplementedError",
        format!("OpenKeel's conductor does not serve object_class_action_versions ({what}) yet"),
    )
}

fn no_filters(v: Option<Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    }
}

type Paging<T> = (Option<u64>, Option<T>, Option<String>, Option<String>);

/// `limit, marker, sort_key, sort_dir` from positional index `first` on; the marker is an
/// object primitive (magnum-api sends the marker object).
#[allow(clippy::result_large_err)]
fn paging<T: VersionedObject>(
    arg: &dyn Fn(usize, &str) -> Option<Value>,
    first: usize,
) -> Result<Paging<T>, RemoteFailure> {
    let limit = arg(first, "limit").and_then(|v| v.as_u64());
    let marker = match arg(first + 1, "marker") {
        None | Some(Value::Null) => None,
        Some(m) => Some(
            codec::decode::<T>(&m)
                .map_err(|e| RemoteFailure::builtin("ValueError", e.to_string()))?
                .data,
        ),
    };
    let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_string));
    Ok((
        limit,
        marker,
        text(arg(first + 2, "sort_key")),
        text(arg(first + 3, "sort_dir")),
    ))
}

fn make_page<'a, T>(
    limit: Option<u64>,
    marker: Option<&'a T>,
    key: Option<&'a str>,
    dir: Option<&'a str>,
) -> Page<'a, T> {
    Page {
        limit,
        marker,
        sort_key: key,
        sort_dir: dir,
    }
}

/// A list result: every object at the conductor's current version.
fn list_value<T: VersionedObject>(items: Vec<T>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|o| codec::encode(&Obj::unchanged(o)))
            .collect(),
    )
}

/// A single object at the caller's requested version (relabelled: no Magnum object
/// overrides `obj_make_compatible`, rpc.md §12.4).
fn single<T: VersionedObject>(obj: Obj<T>, requested: Option<&str>) -> Value {
    let mut v = codec::encode(&obj);
    if let (Some(r), Some(m)) = (requested, v.as_object_mut()) {
        if codec::version_accepted(r, T::VERSION) {
            m.insert("magnum_object.version".into(), Value::String(r.to_string()));
        }
    }
    v
}

const INDIRECTION: &[&str] = &[
    "object_class_action_versions",
    "object_action",
    "object_backport_versions",
];

#[async_trait]
impl Dispatcher for ConductorDispatcher {
    async fn dispatch(
        &self,
        ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        if let Some(r) = serve(self.handlers.as_ref(), &ctx, method, &args).await {
            return r;
        }
        if method == "object_class_action_versions" {
            if let Some(r) = self.class_action(&ctx, &args).await {
                return r;
            }
        }
        if INDIRECTION.contains(&method) {
            let what = match (
                args.get("objname").and_then(Value::as_str),
                args.get("objinst")
                    .and_then(|o| o.get("magnum_object.name"))
                    .and_then(Value::as_str),
                args.get("objmethod").and_then(Value::as_str),
            ) {
                (Some(n), _, Some(m)) | (None, Some(n), Some(m)) => format!(" ({n}.{m})"),
                _ => String::new(),
            };
            return Err(RemoteFailure::builtin(
                "NotImplementedError",
                format!("OpenKeel's conductor does not serve {method}{what} yet"),
            ));
        }
        Err(no_such_method(method))
    }
}
