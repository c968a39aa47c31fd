//! [`RemoteConductor`]: [`ConductorApi`] over an [`RpcCaller`], encoding each method's keyword
//! arguments exactly as magnum-api's `magnum/conductor/api.py` sends them.
//!
//! [`serve`] is the reverse: the conductor side's decoding of the same arguments.

// RemoteFailure is the transport's failure type; boxing it would only move the cost.
#![allow(clippy::result_large_err)]

use crate::codec::{self, VersionedObject};
use crate::transport::{Args, RpcCaller};
use crate::{ConductorApi, Obj};
use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Certificate, Cluster, ClusterTemplate, NodeGroup, StringMap};
use serde_json::Value;

/// The API side of the conductor topic.
pub struct RemoteConductor<C: RpcCaller> {
    caller: C,
}

impl<C: RpcCaller> RemoteConductor<C> {
    pub fn new(caller: C) -> Self {
        RemoteConductor { caller }
    }

    pub fn caller(&self) -> &C {
        &self.caller
    }
}

fn obj<T: VersionedObject>(o: &Obj<T>) -> Value {
    codec::encode(o)
}

fn args(pairs: Vec<(&str, Value)>) -> Args {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// The key that orders the casts about a cluster: its uuid.
fn key_of(cluster: &Obj<Cluster>) -> String {
    cluster.data.uuid.clone().unwrap_or_default()
}

fn decode_certificate(v: &Value) -> Result<Certificate, MagnumError> {
    codec::decode::<Certificate>(v)
        .map(|o| o.data)
        .map_err(|e| MagnumError::internal(e.to_string()))
}

#[async_trait]
impl<C: RpcCaller> ConductorApi for RemoteConductor<C> {
    async fn cluster_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("master_count", master_count.into()),
            ("node_count", node_count.into()),
            ("create_timeout", create_timeout.into()),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "cluster_create", a)
            .await
    }

    async fn cluster_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        let reason = match health_status_reason {
            Some(m) => Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect()),
            None => Value::Null,
        };
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("node_count", node_count.into()),
            (
                "health_status",
                health_status.map_or(Value::Null, Value::String),
            ),
            ("health_status_reason", reason),
            ("rollback", rollback.into()),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "cluster_update", a)
            .await
    }

    async fn cluster_delete(&self, ctx: &RequestContext, uuid: String) -> Result<(), MagnumError> {
        let key = uuid.clone();
        let a = args(vec![("uuid", uuid.into())]);
        self.caller
            .cast_ordered(ctx, &key, "cluster_delete", a)
            .await
    }

    async fn cluster_resize(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("node_count", node_count.into()),
            ("nodes_to_remove", nodes_to_remove.into()),
            ("nodegroup", obj(&nodegroup)),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "cluster_resize", a)
            .await
    }

    /// A call; magnum-api does not send the client's `rollback` (`API.cluster_upgrade` in
    /// `magnum/conductor/api.py`).
    async fn cluster_upgrade(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        cluster_template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        _rollback: bool,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("cluster_template", obj(&cluster_template)),
            ("max_batch_size", max_batch_size.into()),
            ("nodegroup", obj(&nodegroup)),
        ]);
        self.caller.call(ctx, "cluster_upgrade", a).await.map(drop)
    }

    async fn nodegroup_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("nodegroup", obj(&nodegroup)),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "nodegroup_create", a)
            .await
    }

    async fn nodegroup_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("nodegroup", obj(&nodegroup)),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "nodegroup_update", a)
            .await
    }

    async fn nodegroup_delete(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("nodegroup", obj(&nodegroup)),
        ]);
        self.caller
            .cast_ordered(ctx, &key_of(&cluster), "nodegroup_delete", a)
            .await
    }

    async fn sign_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        certificate: Obj<Certificate>,
    ) -> Result<Certificate, MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            ("certificate", obj(&certificate)),
        ]);
        let r = self.caller.call(ctx, "sign_certificate", a).await?;
        decode_certificate(&r)
    }

    async fn get_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        ca_cert_type: Option<String>,
    ) -> Result<Certificate, MagnumError> {
        let a = args(vec![
            ("cluster", obj(&cluster)),
            (
                "ca_cert_type",
                ca_cert_type.map_or(Value::Null, Value::String),
            ),
        ]);
        let r = self.caller.call(ctx, "get_ca_certificate", a).await?;
        decode_certificate(&r)
    }

    async fn rotate_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![("cluster", obj(&cluster))]);
        self.caller
            .call(ctx, "rotate_ca_certificate", a)
            .await
            .map(drop)
    }

    async fn credential_rotate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        let a = args(vec![("cluster", obj(&cluster))]);
        self.caller
            .call(ctx, "credential_rotate", a)
            .await
            .map(drop)
    }
}

// ---------------------------------------------------------------------------------------
// The server half: decode the arguments magnum-api sends and call a `ConductorApi`.

use crate::transport::RemoteFailure;

/// The 19 methods the conductor serves (the handlers `magnum/cmd/conductor.py` registers),
/// indirection ones included.
pub const METHODS: &[&str] = &[
    "cluster_create",
    "cluster_update",
    "cluster_delete",
    "cluster_resize",
    "cluster_upgrade",
    "nodegroup_create",
    "nodegroup_update",
    "nodegroup_delete",
    "sign_certificate",
    "get_ca_certificate",
    "rotate_ca_certificate",
    "credential_rotate",
    "object_class_action_versions",
    "object_action",
    "object_backport_versions",
    "ping_conductor",
    "federation_create",
    "federation_update",
    "federation_delete",
];

/// oslo.messaging's `NoSuchMethod` for a method no endpoint has.
pub fn no_such_method(method: &str) -> RemoteFailure {
    RemoteFailure {
        class: "NoSuchMethod".into(),
        module: "oslo_messaging.rpc.dispatcher".into(),
        message: format!("Endpoint does not support RPC method {method}"),
        kwargs: Default::default(),
    }
}

fn codec_failure(e: codec::CodecError) -> RemoteFailure {
    let module = match e.class {
        "ValueError" => "builtins",
        _ => "oslo_versionedobjects.exception",
    };
    RemoteFailure {
        class: e.class.into(),
        module: module.into(),
        message: e.message,
        kwargs: Default::default(),
    }
}

fn missing(method: &str, name: &str) -> RemoteFailure {
    RemoteFailure::builtin(
        "TypeError",
        format!("{method}() missing 1 required positional argument: '{name}'"),
    )
}

fn arg<'a>(method: &str, a: &'a Args, name: &str) -> Result<&'a Value, RemoteFailure> {
    a.get(name).ok_or_else(|| missing(method, name))
}

fn arg_obj<T: VersionedObject>(
    method: &str,
    a: &Args,
    name: &str,
) -> Result<Obj<T>, RemoteFailure> {
    codec::decode(arg(method, a, name)?).map_err(codec_failure)
}

fn arg_int(method: &str, a: &Args, name: &str) -> Result<i32, RemoteFailure> {
    let v = arg(method, a, name)?;
    v.as_i64()
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| {
            RemoteFailure::builtin("TypeError", format!("{name} must be an int, not {v}"))
        })
}

fn arg_opt_str(method: &str, a: &Args, name: &str) -> Result<Option<String>, RemoteFailure> {
    match arg(method, a, name)? {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        v => Ok(Some(v.to_string())),
    }
}

fn arg_bool(a: &Args, name: &str) -> bool {
    a.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// Decode `args` of one of the 12 business methods (and `ping_conductor`, the federation
/// methods), call `api`, and encode the result as magnum-conductor does. `None` when the
/// method is not one of these (the caller answers indirection or [`no_such_method`]).
pub async fn serve(
    api: &dyn ConductorApi,
    ctx: &RequestContext,
    method: &str,
    a: &Args,
) -> Option<Result<Value, RemoteFailure>> {
    let m = method;
    let r: Result<Value, RemoteFailure> = async {
        match m {
            "cluster_create" => {
                api.cluster_create(
                    ctx,
                    arg_obj(m, a, "cluster")?,
                    arg_int(m, a, "master_count")?,
                    arg_int(m, a, "node_count")?,
                    arg_int(m, a, "create_timeout")?,
                )
                .await?;
            }
            "cluster_update" => {
                let reason = match a.get("health_status_reason") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(o)) => Some(
                        o.iter()
                            .map(|(k, v)| {
                                let s = match v {
                                    Value::String(s) => s.clone(),
                                    Value::Bool(true) => "True".into(),
                                    Value::Bool(false) => "False".into(),
                                    other => other.to_string(),
                                };
                                (k.clone(), s)
                            })
                            .collect(),
                    ),
                    Some(v) => {
                        return Err(RemoteFailure::builtin(
                            "TypeError",
                            format!("health_status_reason must be a dict, not {v}"),
                        ))
                    }
                };
                api.cluster_update(
                    ctx,
                    arg_obj(m, a, "cluster")?,
                    arg_int(m, a, "node_count")?,
                    a.get("health_status")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    reason,
                    arg_bool(a, "rollback"),
                )
                .await?;
            }
            "cluster_delete" => {
                let uuid = arg_opt_str(m, a, "uuid")?.unwrap_or_default();
                api.cluster_delete(ctx, uuid).await?;
            }
            "cluster_resize" => {
                let nodes: Vec<String> = match a.get("nodes_to_remove") {
                    Some(Value::Array(v)) => v
                        .iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                api.cluster_resize(
                    ctx,
                    arg_obj(m, a, "cluster")?,
                    arg_int(m, a, "node_count")?,
                    nodes,
                    arg_obj(m, a, "nodegroup")?,
                )
                .await?;
            }
            "cluster_upgrade" => {
                api.cluster_upgrade(
                    ctx,
                    arg_obj(m, a, "cluster")?,
                    arg_obj(m, a, "cluster_template")?,
                    arg_int(m, a, "max_batch_size")?,
                    arg_obj(m, a, "nodegroup")?,
                    arg_bool(a, "rollback"),
                )
                .await?;
            }
            "nodegroup_create" | "nodegroup_update" | "nodegroup_delete" => {
                let c = arg_obj(m, a, "cluster")?;
                let ng = arg_obj(m, a, "nodegroup")?;
                match m {
                    "nodegroup_create" => api.nodegroup_create(ctx, c, ng).await?,
                    "nodegroup_update" => api.nodegroup_update(ctx, c, ng).await?,
                    _ => api.nodegroup_delete(ctx, c, ng).await?,
                }
            }
            "sign_certificate" => {
                let cert = api
                    .sign_certificate(
                        ctx,
                        arg_obj(m, a, "cluster")?,
                        arg_obj(m, a, "certificate")?,
                    )
                    .await?;
                return Ok(codec::encode(&certificate_result(cert)));
            }
            "get_ca_certificate" => {
                let ty = match a.get("ca_cert_type") {
                    None | Some(Value::Null) => None,
                    Some(_) => arg_opt_str(m, a, "ca_cert_type")?,
                };
                let cert = api
                    .get_ca_certificate(ctx, arg_obj(m, a, "cluster")?, ty)
                    .await?;
                return Ok(codec::encode(&certificate_result(cert)));
            }
            "rotate_ca_certificate" => {
                api.rotate_ca_certificate(ctx, arg_obj(m, a, "cluster")?)
                    .await?;
            }
            "credential_rotate" => {
                api.credential_rotate(ctx, arg_obj(m, a, "cluster")?)
                    .await?;
            }
            "ping_conductor" => return Ok(Value::Bool(true)),
            "federation_create" | "federation_update" | "federation_delete" => {
                return Err(RemoteFailure::builtin("NotImplementedError", ""));
            }
            _ => return Err(no_such_method(m)),
        }
        Ok(Value::Null)
    }
    .await;
    match r {
        Err(f) if f.class == "NoSuchMethod" && METHODS.contains(&method) => None,
        Err(f) if f.class == "NoSuchMethod" => Some(Err(f)),
        other => Some(other),
    }
}

/// A Certificate as the conductor returns it: every field given a value is set and changed
/// (Magnum builds it with `Certificate.from_object_cluster` and sets `pem`).
fn certificate_result(cert: Certificate) -> Obj<Certificate> {
    let mut changes = Vec::new();
    for (name, v) in [
        ("project_id", &cert.project_id),
        ("user_id", &cert.user_id),
        ("cluster_uuid", &cert.cluster_uuid),
        ("csr", &cert.csr),
        ("pem", &cert.pem),
        ("ca_cert_type", &cert.ca_cert_type),
    ] {
        if v.is_some() {
            changes.push(name);
        }
    }
    Obj::new(cert, changes)
}
