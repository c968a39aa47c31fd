//! [`ConductorDispatcher`]: the conductor's [`Dispatcher`] for the RPC server on the
//! `magnum-conductor` topic (rpc.md §10): decodes each request's arguments with the
//! `magnum_object.*` codec, calls the handlers (`ConductorApi`) and encodes the result.
//!
//! * the 12 business methods go to the handlers (`openkeel_rpc::remote::serve`);
//! * `ping_conductor` answers `true`; the federation methods raise `NotImplementedError`;
//! * the object-indirection methods (§11) are not served yet: they answer a failure
//!   (`NotImplementedError` naming the method), never a fake success;
//! * anything else is oslo.messaging's `NoSuchMethod`.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_rpc::remote::{no_such_method, serve};
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure};
use openkeel_rpc::ConductorApi;
use serde_json::Value;
use std::sync::Arc;

pub struct ConductorDispatcher {
    handlers: Arc<dyn ConductorApi>,
}

impl ConductorDispatcher {
    pub fn new(handlers: Arc<dyn ConductorApi>) -> Self {
        ConductorDispatcher { handlers }
    }
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
