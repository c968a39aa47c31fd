//! The seam between the oslo.messaging wire (`crate::oslo`, AMQP via lapin) and what travels
//! over it (`crate::codec`, `crate::remote`, and the conductor's dispatcher).
//!
//! * The API side holds an [`RpcCaller`]: it publishes a method name and its already-encoded
//!   keyword arguments (object primitives, plain JSON) as a cast or a call on the conductor
//!   topic, and for a call returns the `result` of the final reply or the decoded failure.
//! * The conductor side implements [`Dispatcher`]: the RPC server hands it each request's
//!   context, method and encoded arguments, and sends back what it returns (calls only).
//!
//! Nothing here knows about AMQP or about versioned objects; both halves can be tested alone.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use serde_json::{Map, Value};

/// Encoded keyword arguments of one RPC (`args` of the oslo message).
pub type Args = Map<String, Value>;

/// A failure as oslo.messaging carries it (`failure` of a reply, `serialize_remote_exception` in
/// `oslo_messaging/_drivers/common.py`).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteFailure {
    /// Exception class name, e.g. `ClusterNotFound`, `NotImplementedError`, `NoSuchMethod`.
    pub class: String,
    /// Defining module: `magnum.common.exception`, `builtins`, `oslo_messaging.rpc.dispatcher`.
    pub module: String,
    /// `str(exception)`.
    pub message: String,
    /// `exception.kwargs` (Magnum exceptions always carry `code`).
    pub kwargs: Map<String, Value>,
}

impl RemoteFailure {
    /// A Magnum exception (`magnum.common.exception.<class>`): kwargs are the ones it was
    /// raised with, then `code` (the class's status), as `MagnumException.__init__` sets them.
    pub fn magnum(e: &MagnumError) -> Self {
        let mut kwargs = Map::new();
        for (k, v) in e.kwargs() {
            if k != "code" {
                kwargs.insert(k.clone(), Value::String(v.clone()));
            }
        }
        kwargs.insert("code".into(), Value::from(e.kind().code()));
        RemoteFailure {
            class: e.class_name().to_string(),
            module: "magnum.common.exception".to_string(),
            message: e.message().to_string(),
            kwargs,
        }
    }

    /// A Python builtin exception (e.g. the federation handlers' `NotImplementedError`).
    pub fn builtin(class: &str, message: impl Into<String>) -> Self {
        RemoteFailure {
            class: class.to_string(),
            module: "builtins".to_string(),
            message: message.into(),
            kwargs: Map::new(),
        }
    }
}

impl From<MagnumError> for RemoteFailure {
    fn from(e: MagnumError) -> Self {
        RemoteFailure::magnum(&e)
    }
}

/// The client half of the conductor topic (`magnum.common.rpc_service.API`).
#[async_trait]
pub trait RpcCaller: Send + Sync + 'static {
    /// Publish a cast (no reply). Returns once the broker confirmed the message; an error
    /// (broker unreachable within the timeout) is `ServiceUnavailable`-like, never silent.
    async fn cast(&self, ctx: &RequestContext, method: &str, args: Args)
        -> Result<(), MagnumError>;

    /// A cast about one cluster (`key`: its uuid). A transport that can keep the casts of one
    /// key in the order they were sent across conductor processes does so (RabbitMQ: the
    /// key's ordered queue); the default is [`RpcCaller::cast`].
    async fn cast_ordered(
        &self,
        ctx: &RequestContext,
        key: &str,
        method: &str,
        args: Args,
    ) -> Result<(), MagnumError> {
        let _ = key;
        self.cast(ctx, method, args).await
    }

    /// Publish a call and wait for the final reply, bounded by `rpc_response_timeout`
    /// (`MessagingTimeout` on expiry). A failure reply is decoded into the `MagnumError`
    /// of the same class (status and message as magnum-api would answer).
    async fn call(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, MagnumError>;
}

/// The server half: what an RPC server calls for each request on the conductor topic.
#[async_trait]
pub trait Dispatcher: Send + Sync + 'static {
    /// Handle one request. `Ok` is the call's `result` (ignored for casts); `Err` becomes the
    /// reply's `failure` (and is logged for casts).
    async fn dispatch(
        &self,
        ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure>;

    /// For a cast: the key (a cluster uuid) whose casts must start in arrival order, one
    /// after the other ([`crate::sequencer`]). `None`: no ordering.
    fn order_key(&self, _method: &str, _args: &Args) -> Option<String> {
        None
    }
}
