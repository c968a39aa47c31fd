//! oslo.messaging's message bodies (`oslo_messaging/_drivers/common.py`, `amqpdriver.py`): the `oslo.version` 2.0 envelope, RPC
//! requests with the flattened `_context_*` keys, replies, and remote failures.
//!
//! Everything is written with [`openkeel_core::pyjson`], so the bytes are those
//! `jsonutils.dumps` produces: the inner message is itself a JSON *string* inside the envelope.

#![allow(clippy::result_large_err)]

use crate::transport::{Args, RemoteFailure};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyjson;
use serde_json::{Map, Value};

/// The envelope version oslo.messaging 18 writes.
pub const ENVELOPE_VERSION: &str = "2.0";

/// A fresh oslo id (`uuid.uuid4().hex`: 32 lower-case hex digits).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("message body is not JSON: {0}")]
    NotJson(String),
    #[error("UnsupportedRpcEnvelopeVersion: Envelope version {0} not supported")]
    UnsupportedEnvelope(String),
    #[error("malformed message: {0}")]
    Malformed(String),
}

/// Wrap a message in the 2.0 envelope: `{"oslo.version": "2.0", "oslo.message": "<json>"}`.
pub fn serialize_envelope(message: &Map<String, Value>) -> Vec<u8> {
    let inner = pyjson::dumps(&Value::Object(message.clone()));
    let mut env = Map::new();
    env.insert(
        "oslo.version".into(),
        Value::String(ENVELOPE_VERSION.into()),
    );
    env.insert("oslo.message".into(), Value::String(inner));
    pyjson::dumps(&Value::Object(env)).into_bytes()
}

/// Unwrap a body as oslo.messaging's `deserialize_msg` does: a dict with both envelope keys
/// is unwrapped (its version must be compatible with 2.0); anything else is used as-is.
pub fn deserialize_envelope(body: &[u8]) -> Result<Map<String, Value>, MessageError> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| MessageError::NotJson(e.to_string()))?;
    let Value::Object(mut outer) = v else {
        return Err(MessageError::Malformed(
            "the body is not a JSON object".into(),
        ));
    };
    if !(outer.contains_key("oslo.version") && outer.contains_key("oslo.message")) {
        return Ok(outer);
    }
    let version = match outer.get("oslo.version") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if !version_compatible(&version) {
        return Err(MessageError::UnsupportedEnvelope(version));
    }
    match outer.remove("oslo.message") {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(MessageError::Malformed(
                "oslo.message is not an object".into(),
            )),
            Err(e) => Err(MessageError::NotJson(e.to_string())),
        },
        _ => Err(MessageError::Malformed(
            "oslo.message is not a string".into(),
        )),
    }
}

/// oslo's `version_is_compatible("2.0", v)`: same major, minor not above ours.
fn version_compatible(v: &str) -> bool {
    let mut parts = v.split('.');
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().map_or(Some(0), |p| p.parse::<u32>().ok());
    matches!((major, minor), (Some(2), Some(0)))
}

/// What a request carries besides its method and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    pub msg_id: String,
    pub reply_q: String,
}

/// Build an RPC request as `oslo_messaging.rpc.client` + the AMQP driver do: `method`,
/// `args`, for calls `_msg_id` / `_reply_q` / `_timeout` (always null from Magnum), then
/// `_unique_id` and the context flattened into `_context_<key>` in `to_dict()` order.
pub fn request(
    ctx: &RequestContext,
    method: &str,
    args: Args,
    call: Option<&CallInfo>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("method".into(), Value::String(method.into()));
    m.insert("args".into(), Value::Object(args));
    if let Some(c) = call {
        m.insert("_msg_id".into(), Value::String(c.msg_id.clone()));
        m.insert("_reply_q".into(), Value::String(c.reply_q.clone()));
        m.insert("_timeout".into(), Value::Null);
    }
    m.insert("_unique_id".into(), Value::String(new_id()));
    for (k, v) in ctx.to_dict() {
        m.insert(format!("_context_{k}"), v);
    }
    m
}

/// A request as the server reads it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub args: Args,
    pub namespace: Option<String>,
    pub version: Option<String>,
    /// `Some` for calls.
    pub call: Option<CallInfo>,
    pub unique_id: Option<String>,
    /// The `_context_*` keys with the prefix removed.
    pub context: Map<String, Value>,
}

/// Split a request into its parts (oslo's `unpack_context` + the driver's `_msg_id` /
/// `_reply_q` / `_unique_id` handling).
pub fn parse_request(mut m: Map<String, Value>) -> Result<Request, MessageError> {
    let method = match m.remove("method") {
        Some(Value::String(s)) => s,
        _ => return Err(MessageError::Malformed("no method in the request".into())),
    };
    let args = match m.remove("args") {
        Some(Value::Object(a)) => a,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(MessageError::Malformed("args is not an object".into())),
    };
    let s = |v: Option<Value>| match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let namespace = s(m.remove("namespace"));
    let version = s(m.remove("version"));
    let msg_id = s(m.remove("_msg_id"));
    let reply_q = s(m.remove("_reply_q"));
    m.remove("_timeout");
    let unique_id = s(m.remove("_unique_id"));
    let call = match (msg_id, reply_q) {
        (Some(msg_id), Some(reply_q)) => Some(CallInfo { msg_id, reply_q }),
        _ => None,
    };
    let context = m
        .into_iter()
        .filter_map(|(k, v)| k.strip_prefix("_context_").map(|k| (k.to_string(), v)))
        .collect();
    Ok(Request {
        method,
        args,
        namespace,
        version,
        call,
        unique_id,
        context,
    })
}

/// Magnum's `RequestContext.from_dict(values)` (= `RequestContext(**values)`): the keys of its
/// constructor are taken, the rest (`user`, `project`, `domain`, `user_identity`, ...) dropped.
pub fn context_from_dict(d: &Map<String, Value>) -> RequestContext {
    let s = |k: &str| match d.get(k) {
        Some(Value::String(v)) => Some(v.clone()),
        _ => None,
    };
    let b = |k: &str| d.get(k).and_then(Value::as_bool).unwrap_or(false);
    let roles = match d.get("roles") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    RequestContext {
        user_id: s("user_id").or_else(|| s("user")),
        user_name: s("user_name"),
        project_id: s("project_id").or_else(|| s("project")),
        project_name: s("project_name"),
        domain_id: s("domain_id"),
        domain_name: s("domain_name"),
        user_domain_id: s("user_domain_id"),
        user_domain_name: s("user_domain_name"),
        project_domain_id: s("project_domain_id"),
        system_scope: s("system_scope"),
        auth_token: s("auth_token"),
        auth_url: s("auth_url"),
        auth_token_info: d
            .get("auth_token_info")
            .filter(|v| !v.is_null())
            .cloned()
            .map(std::sync::Arc::new),
        trust_id: s("trust_id"),
        password: s("password"),
        roles,
        is_admin: b("is_admin"),
        is_admin_project: d
            .get("is_admin_project")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        read_only: b("read_only"),
        show_deleted: b("show_deleted"),
        all_tenants: b("all_tenants"),
        request_id: s("request_id").unwrap_or_else(RequestContext::new_request_id),
        global_request_id: s("global_request_id"),
        resource_uuid: s("resource_uuid"),
        credentials_cache: Default::default(),
    }
}

/// A reply as `amqpdriver.py` sends it: `result`, `failure` (a JSON string or null),
/// `ending`, `_msg_id`, `_unique_id`.
pub fn reply(
    msg_id: &str,
    result: Result<Value, &RemoteFailure>,
    method: &str,
) -> Map<String, Value> {
    let mut m = Map::new();
    match result {
        Ok(v) => {
            m.insert("result".into(), v);
            m.insert("failure".into(), Value::Null);
        }
        Err(f) => {
            m.insert("result".into(), Value::Null);
            m.insert(
                "failure".into(),
                Value::String(pyjson::dumps(&failure_value(f, method))),
            );
        }
    }
    m.insert("ending".into(), Value::Bool(true));
    m.insert("_msg_id".into(), Value::String(msg_id.into()));
    m.insert("_unique_id".into(), Value::String(new_id()));
    m
}

/// `serialize_remote_exception`: `class`, `module`, `message`, `tb` (a list of lines),
/// `args` (`[message]`, as every Magnum exception has) and `kwargs`.
pub fn failure_value(f: &RemoteFailure, method: &str) -> Value {
    let qualified = if f.module == "builtins" {
        f.class.clone()
    } else {
        format!("{}.{}", f.module, f.class)
    };
    let tb = vec![
        Value::String("Traceback (most recent call last):\n".into()),
        Value::String(format!(
            "  File \"openkeel-conductor\", in {method}\n    (raised by openkeel-conductor, not Python)\n"
        )),
        Value::String(if f.message.is_empty() {
            format!("{qualified}\n")
        } else {
            format!("{qualified}: {}\n", f.message)
        }),
    ];
    let args = if f.message.is_empty() {
        Vec::new()
    } else {
        vec![Value::String(f.message.clone())]
    };
    let mut m = Map::new();
    m.insert("class".into(), Value::String(f.class.clone()));
    m.insert("module".into(), Value::String(f.module.clone()));
    m.insert("message".into(), Value::String(f.message.clone()));
    m.insert("tb".into(), Value::Array(tb));
    m.insert("args".into(), Value::Array(args));
    m.insert("kwargs".into(), Value::Object(f.kwargs.clone()));
    Value::Object(m)
}

/// A reply as the client reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub msg_id: String,
    pub unique_id: Option<String>,
    pub ending: bool,
    pub result: Result<Value, RemoteFailure>,
}

pub fn parse_reply(mut m: Map<String, Value>) -> Result<Reply, MessageError> {
    let msg_id = match m.remove("_msg_id") {
        Some(Value::String(s)) => s,
        _ => return Err(MessageError::Malformed("reply without _msg_id".into())),
    };
    let unique_id = match m.remove("_unique_id") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    // oslo.messaging < 2 replies carry no `ending`; treat them as final.
    let ending = m.get("ending").and_then(Value::as_bool).unwrap_or(true);
    let result = match m.remove("failure") {
        None | Some(Value::Null) => Ok(m.remove("result").unwrap_or(Value::Null)),
        Some(Value::String(s)) => Err(parse_failure(&s)),
        Some(Value::Object(o)) => Err(failure_from_map(&o)),
        Some(other) => Err(RemoteFailure::builtin("RemoteError", other.to_string())),
    };
    Ok(Reply {
        msg_id,
        unique_id,
        ending,
        result,
    })
}

/// `deserialize_remote_exception`'s input: the JSON text of a `failure`.
pub fn parse_failure(text: &str) -> RemoteFailure {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => failure_from_map(&o),
        _ => RemoteFailure {
            class: "RemoteError".into(),
            module: "oslo_messaging.exceptions".into(),
            message: text.to_string(),
            kwargs: Map::new(),
        },
    }
}

fn failure_from_map(o: &Map<String, Value>) -> RemoteFailure {
    let s = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    RemoteFailure {
        class: s("class"),
        module: s("module"),
        message: s("message"),
        kwargs: match o.get("kwargs") {
            Some(Value::Object(k)) => k.clone(),
            _ => Map::new(),
        },
    }
}

/// What magnum-api makes of a failure (`deserialize_remote_exception` in
/// `oslo_messaging/_drivers/common.py`, then `magnum/api/hooks.py`): a class of `magnum.common.exception`
/// (the only allowed module) becomes that exception with the conductor's message, so its
/// HTTP status is the class's; a Python builtin keeps its text and is a 500; anything else
/// is oslo's `RemoteError` ("Remote error: <class> <message>"), a 500 too.
pub fn failure_to_error(f: &RemoteFailure) -> MagnumError {
    let message = f.message.trim_end();
    if f.module == "magnum.common.exception" {
        if let Some(kind) = MagnumError::kind_by_class_name(&f.class) {
            return MagnumError::with_message(kind, message);
        }
    }
    if f.module == "builtins" || f.module == "exceptions" {
        return MagnumError::with_message(ErrorKind::MagnumException, message);
    }
    MagnumError::with_message(
        ErrorKind::MagnumException,
        format!("Remote error: {} {}", f.class, message),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> RequestContext {
        RequestContext {
            user_id: Some("noauth-admin".into()),
            project_id: Some("noauth-project".into()),
            user_domain_id: Some("default".into()),
            user_domain_name: Some("Default".into()),
            user_name: Some("admin".into()),
            project_name: Some("admin".into()),
            auth_token: Some("notused".into()),
            auth_url: Some("http://127.0.0.1:9599/identity/v3".into()),
            roles: vec!["admin".into(), "member".into(), "reader".into()],
            is_admin: true,
            is_admin_project: true,
            all_tenants: true,
            request_id: "req-a23f11ff-50ed-4622-bebb-9e3802af64ac".into(),
            ..Default::default()
        }
    }

    /// The `cluster_delete` cast magnum-api sends (`API.cluster_delete_async` in
    /// `magnum/conductor/api.py`), byte for byte (with its ids), as captured.
    #[test]
    fn a_cast_body_is_byte_identical_to_the_captured_frame() {
        let expected = include_str!("testdata/cluster_delete_cast.json").trim_end();
        let mut args = Map::new();
        args.insert("uuid".into(), json!("f16a9c3e-aa81-46f2-a5ce-d06aa1b70f50"));
        let mut m = request(&ctx(), "cluster_delete", args, None);
        m.insert(
            "_unique_id".into(),
            json!("c28f53c6db2a45e1ab651248aed5f2d8"),
        );
        let body = serialize_envelope(&m);
        assert_eq!(String::from_utf8_lossy(&body), expected);
        assert_eq!(body.len(), 1222);
    }

    #[test]
    fn a_captured_request_parses_and_its_context_round_trips() {
        let body = include_str!("testdata/cluster_delete_cast.json").trim_end();
        let m = deserialize_envelope(body.as_bytes()).unwrap();
        let r = parse_request(m).unwrap();
        assert_eq!(r.method, "cluster_delete");
        assert!(r.call.is_none());
        assert_eq!(
            r.unique_id.as_deref(),
            Some("c28f53c6db2a45e1ab651248aed5f2d8")
        );
        let c = context_from_dict(&r.context);
        assert_eq!(c.to_dict(), ctx().to_dict());
    }

    #[test]
    fn calls_carry_msg_id_reply_q_and_a_null_timeout_before_the_unique_id() {
        let call = CallInfo {
            msg_id: "m".into(),
            reply_q: "reply_x".into(),
        };
        let m = request(&ctx(), "get_ca_certificate", Map::new(), Some(&call));
        let keys: Vec<_> = m.keys().take(6).cloned().collect();
        assert_eq!(
            keys,
            [
                "method",
                "args",
                "_msg_id",
                "_reply_q",
                "_timeout",
                "_unique_id"
            ]
        );
        assert_eq!(m["_timeout"], Value::Null);
    }

    /// The failure reply of a refused upgrade (`cluster_upgrade` in
    /// `magnum/conductor/handlers/cluster_conductor.py`), as captured.
    #[test]
    fn a_captured_failure_reply_decodes_to_magnums_error() {
        let body = include_str!("testdata/notsupported_reply.json").trim_end();
        let r = parse_reply(deserialize_envelope(body.as_bytes()).unwrap()).unwrap();
        assert!(r.ending);
        assert_eq!(r.msg_id, "69cf750b951644829e68a76079dcbd01");
        let f = r.result.unwrap_err();
        assert_eq!(f.class, "NotSupported");
        let e = failure_to_error(&f);
        assert_eq!(e.code(), 400);
        assert_eq!(
            e.message(),
            "Upgrading a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported."
        );
    }

    #[test]
    fn our_failure_replies_have_the_keys_and_shapes_oslo_reads() {
        let f = RemoteFailure::magnum(&MagnumError::new(
            ErrorKind::ClusterNotFound,
            &[("cluster", &"nope")],
        ));
        let m = reply("abc", Err(&f), "cluster_delete");
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(
            keys,
            ["result", "failure", "ending", "_msg_id", "_unique_id"]
        );
        let Value::String(text) = &m["failure"] else {
            panic!("failure must be a JSON string")
        };
        let v: Value = serde_json::from_str(text).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["class", "module", "message", "tb", "args", "kwargs"]);
        assert_eq!(v["args"], json!(["Cluster nope could not be found."]));
        assert_eq!(v["kwargs"], json!({"cluster": "nope", "code": 404}));
        assert!(v["tb"].as_array().unwrap().iter().all(Value::is_string));
        // and it decodes back into the same error
        let back = parse_reply(m).unwrap().result.unwrap_err();
        assert_eq!(failure_to_error(&back).code(), 404);
    }

    #[test]
    fn envelopes_of_other_major_versions_are_refused_and_bare_bodies_accepted() {
        let e = deserialize_envelope(br#"{"oslo.version": "3.0", "oslo.message": "{}"}"#);
        assert!(matches!(e, Err(MessageError::UnsupportedEnvelope(_))));
        let e = deserialize_envelope(br#"{"oslo.version": "2.1", "oslo.message": "{}"}"#);
        assert!(matches!(e, Err(MessageError::UnsupportedEnvelope(_))));
        let bare = deserialize_envelope(br#"{"method": "x", "args": {}}"#).unwrap();
        assert_eq!(bare["method"], "x");
        assert!(deserialize_envelope(b"not json").is_err());
    }

    #[test]
    fn unknown_remote_classes_are_remote_errors() {
        let f = RemoteFailure {
            class: "NoSuchMethod".into(),
            module: "oslo_messaging.rpc.dispatcher".into(),
            message: "Endpoint does not support RPC method x".into(),
            kwargs: Map::new(),
        };
        let e = failure_to_error(&f);
        assert_eq!(e.code(), 500);
        assert_eq!(
            e.message(),
            "Remote error: NoSuchMethod Endpoint does not support RPC method x"
        );
    }
}
