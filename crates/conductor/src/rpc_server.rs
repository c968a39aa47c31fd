//! [`ConductorDispatcher`]: the conductor's [`Dispatcher`] for the RPC server on the
//! `magnum-conductor` topic (the endpoints `magnum/cmd/conductor.py` registers): decodes each request's arguments with the
//! `magnum_object.*` codec, calls the handlers (`ConductorApi`) and encodes the result.
//!
//! * the 12 business methods go to the handlers (`openkeel_rpc::remote::serve`);
//! * `ping_conductor` answers `true`; the federation methods raise `NotImplementedError`;
//! * object indirection (`magnum/conductor/handlers/indirection_api.py`), with a database ([`ConductorDispatcher::with_database`]):
//!   `object_class_action_versions`, `object_action` and `object_backport_versions`
//!   (`crate::indirection`, one module per object class); without a database they answer
//!   `NotImplementedError` naming the object method, never a fake success;
//! * anything else is oslo.messaging's `NoSuchMethod`.

use crate::indirection;
use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_db::Database;
use openkeel_rpc::remote::{no_such_method, serve};
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure};
use openkeel_rpc::ConductorApi;
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

    /// `object_class_action_versions` (`None` without a database or without the call's
    /// names): OVO's class lookup first, then the class's classmethod
    /// (`crate::indirection`, one module per object).
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
            .and_then(Value::as_str);
        let class = match indirection::Class::lookup(objname, requested) {
            Ok(class) => class,
            Err(f) => return Some(Err(f)),
        };
        let served = indirection::class_action(db, ctx, class, objmethod, args, requested).await;
        // getattr(cls, objmethod) fails for a method the class does not have
        Some(match served {
            Some(r) => r,
            None => Err(indirection::attribute_error(objname, objmethod)),
        })
    }
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
