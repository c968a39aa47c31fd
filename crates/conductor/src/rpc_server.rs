//! [`ConductorDispatcher`]: the conductor's [`Dispatcher`] for the RPC server on the
//! `magnum-conductor` topic (the endpoints `magnum/cmd/conductor.py` registers): decodes each request's arguments with the
//! `magnum_object.*` codec, calls the handlers (`ConductorApi`) and encodes the result.
//!
//! * the 12 business methods go to the handlers (`openkeel_rpc::remote::serve`);
//! * `ping_conductor` answers `true`; the federation methods raise `NotImplementedError`;
//! * object indirection (`magnum/conductor/handlers/indirection_api.py`), with a database ([`ConductorDispatcher::with_database`]):
//!   `object_class_action_versions` for every remotable classmethod (the most used read paths
//!   here, the rest in `crate::indirection`), `object_action` and
//!   `object_backport_versions` (`crate::indirection`); without a database they answer
//!   `NotImplementedError` naming the object method, never a fake success;
//! * anything else is oslo.messaging's `NoSuchMethod`.

use crate::indirection::{self, list_value, paging, single, CallArgs};
use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Stats;
use openkeel_db::{cluster, cluster_template, nodegroup, ClusterTemplateFilters, Database, Scope};
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
    metrics: Option<Arc<crate::metrics::ConductorMetrics>>,
}

impl ConductorDispatcher {
    pub fn new(handlers: Arc<dyn ConductorApi>) -> Self {
        ConductorDispatcher {
            handlers,
            db: None,
            metrics: None,
        }
    }

    /// Count every message handled in `metrics` (by method and outcome).
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::ConductorMetrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Also serve object indirection's read paths from `db`.
    pub fn with_database(mut self, db: Database) -> Self {
        self.db = Some(db);
        self
    }

    /// `object_class_action_versions`; `None` for a classmethod not served.
    async fn class_action(
        &self,
        ctx: &RequestContext,
        args: &Args,
    ) -> Option<Result<Value, RemoteFailure>> {
        let db = self.db.as_ref()?;
        let objname = args.get("objname")?.as_str()?;
        let objmethod = args.get("objmethod")?.as_str()?;
        let requested = args
            .get("object_versions")
            .and_then(|v| v.get(objname))
            .and_then(Value::as_str)
            .map(str::to_string);
        // obj_class_from_name(objname, object_versions[objname]) comes first
        if let Some(f) = class_lookup(objname, requested.as_deref()) {
            return Some(Err(f));
        }
        let a = CallArgs::new(args, objname, objmethod);
        let scope = Scope::from(ctx);
        let out: Result<Value, RemoteFailure> = match (objname, objmethod) {
            ("Cluster", m @ ("get" | "get_by_uuid" | "get_by_name")) => {
                let id = match a.text(0, if m == "get" { "cluster_id" } else { &m[7..] }) {
                    Ok(id) => id,
                    Err(f) => return Some(Err(f)),
                };
                let r = match m {
                    "get" => cluster::get(db, &scope, &id).await,
                    "get_by_uuid" => cluster::get_by_uuid(db, &scope, &id).await,
                    _ => cluster::get_by_name(db, &scope, &id).await,
                };
                r.map_err(indirection::db_err)
                    .map(|c| single(Obj::unchanged(c), requested.as_deref()))
            }
            ("ClusterTemplate", m @ ("get" | "get_by_uuid" | "get_by_name")) => {
                let id = match a.text(
                    0,
                    if m == "get" {
                        "cluster_template_id"
                    } else {
                        &m[7..]
                    },
                ) {
                    Ok(id) => id,
                    Err(f) => return Some(Err(f)),
                };
                let r = match m {
                    "get" => cluster_template::get(db, &scope, &id).await,
                    "get_by_uuid" => cluster_template::get_by_uuid(db, &scope, &id).await,
                    _ => cluster_template::get_by_name(db, &scope, &id).await,
                };
                r.map_err(indirection::db_err)
                    .map(|c| single(Obj::unchanged(c), requested.as_deref()))
            }
            ("NodeGroup", "get") => {
                let (cid, ngid) = match (a.text(0, "cluster_id"), a.text(1, "nodegroup_id")) {
                    (Ok(c), Ok(n)) => (c, n),
                    (Err(f), _) | (_, Err(f)) => return Some(Err(f)),
                };
                nodegroup::get(db, &scope, &cid, &ngid)
                    .await
                    .map_err(indirection::db_err)
                    .map(|n| single(Obj::unchanged(n), requested.as_deref()))
            }
            ("ClusterTemplate", "list") => {
                let p = match paging::<openkeel_core::objects::ClusterTemplate>(&a, 0) {
                    Ok(p) => p,
                    Err(f) => return Some(Err(f)),
                };
                cluster_template::list(db, &scope, &ClusterTemplateFilters::default(), &p.page())
                    .await
                    .map_err(indirection::db_err)
                    .map(list_value)
            }
            ("Stats", "get_cluster_stats") => {
                let project = a.get(0, "project_id");
                let project = project.as_ref().and_then(Value::as_str);
                cluster::stats(db, project)
                    .await
                    .map_err(indirection::db_err)
                    .map(|st: Stats| {
                        single(Obj::new(st, ["clusters", "nodes"]), requested.as_deref())
                    })
            }
            _ => {
                // getattr(cls, objmethod) fails for a method the class does not have
                let served = indirection::class_action(
                    db,
                    ctx,
                    objname,
                    objmethod,
                    args,
                    requested.as_deref(),
                )
                .await;
                return match served {
                    Some(r) => Some(r),
                    None => Some(Err(indirection::attribute_error(objname, objmethod))),
                };
            }
        };
        Some(out)
    }
}

/// OVO's class lookup for `(objname, version)`: an unknown class is `UnsupportedObjectError`,
/// a version this conductor cannot serve is `IncompatibleObjectVersion`.
fn class_lookup(objname: &str, requested: Option<&str>) -> Option<RemoteFailure> {
    use openkeel_core::objects as o;
    let local = match objname {
        "Cluster" => <o::Cluster as VersionedObject>::VERSION,
        "ClusterTemplate" => <o::ClusterTemplate as VersionedObject>::VERSION,
        "NodeGroup" => <o::NodeGroup as VersionedObject>::VERSION,
        "X509KeyPair" => <o::X509KeyPair as VersionedObject>::VERSION,
        "MagnumService" => <o::MagnumService as VersionedObject>::VERSION,
        "Quota" => <o::Quota as VersionedObject>::VERSION,
        "Federation" => <o::Federation as VersionedObject>::VERSION,
        "Certificate" => <o::Certificate as VersionedObject>::VERSION,
        "Stats" => <o::Stats as VersionedObject>::VERSION,
        _ => {
            let mut f = RemoteFailure::builtin(
                "UnsupportedObjectError",
                format!("Unsupported object type {objname}"),
            );
            f.module = "oslo_versionedobjects.exception".into();
            return Some(f);
        }
    };
    let Some(r) = requested else {
        return Some(RemoteFailure::builtin("KeyError", format!("'{objname}'")));
    };
    if codec::version_accepted(r, local) {
        return None;
    }
    let mut f = RemoteFailure::builtin(
        "IncompatibleObjectVersion",
        format!("Version {r} of {objname} is not supported, supported version is {local}"),
    );
    f.module = "oslo_versionedobjects.exception".into();
    Some(f)
}

const INDIRECTION: &[&str] = &[
    "object_class_action_versions",
    "object_action",
    "object_backport_versions",
];

/// The cluster a cluster or nodegroup cast is about (its uuid): the casts of one cluster start
/// in arrival order, one after the other (`openkeel_rpc::sequencer`).
fn cast_order_key(method: &str, args: &Args) -> Option<String> {
    if method == "cluster_delete" {
        return args.get("uuid").and_then(Value::as_str).map(str::to_string);
    }
    if !(method.starts_with("cluster_") || method.starts_with("nodegroup_")) {
        return None;
    }
    args.get("cluster")
        .and_then(|c| c.get("magnum_object.data"))
        .and_then(|d| d.get("uuid"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[async_trait]
impl Dispatcher for ConductorDispatcher {
    fn order_key(&self, method: &str, args: &Args) -> Option<String> {
        cast_order_key(method, args)
    }

    async fn dispatch(
        &self,
        ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        let result = self.dispatch_uncounted(ctx, method, args).await;
        if let Some(m) = &self.metrics {
            m.rpc_message(method, result.as_ref().err().map(|f| f.class.as_str()));
        }
        result
    }
}

impl ConductorDispatcher {
    /// [`Dispatcher::dispatch`] before it is counted in the metrics.
    async fn dispatch_uncounted(
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
        if let Some(db) = &self.db {
            if method == "object_action" {
                return indirection::object_action(db, &ctx, &args).await;
            }
            if method == "object_backport_versions" {
                return indirection::backport(&args);
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

#[cfg(test)]
mod order_tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Args {
        match v {
            Value::Object(m) => m,
            _ => Args::new(),
        }
    }

    #[test]
    fn casts_are_ordered_by_their_cluster() {
        let cluster = json!({"magnum_object.name": "Cluster",
                             "magnum_object.data": {"uuid": "c-1", "name": "k"}});
        let with_cluster = args(json!({"cluster": cluster, "nodegroup": {}}));
        for m in [
            "nodegroup_update",
            "nodegroup_delete",
            "cluster_update",
            "cluster_resize",
        ] {
            assert_eq!(
                cast_order_key(m, &with_cluster).as_deref(),
                Some("c-1"),
                "{m}"
            );
        }
        let delete = args(json!({"uuid": "c-2"}));
        assert_eq!(
            cast_order_key("cluster_delete", &delete).as_deref(),
            Some("c-2")
        );
        assert_eq!(cast_order_key("object_action", &with_cluster), None);
        assert_eq!(cast_order_key("nodegroup_update", &Args::new()), None);
    }
}
