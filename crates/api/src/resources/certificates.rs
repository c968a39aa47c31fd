//! `/v1/certificates` (`magnum/api/controllers/v1/certificate.py`) and `/v1/credentials`
//! (`credential.py`): the cluster CA, CSR signing, CA rotation and credential rotation, each
//! an RPC call to the conductor (`magnum/conductor/api.py`).

use crate::error::ApiError;
use crate::links::self_and_bookmark;
use crate::query;
use crate::request::{self, context, enforce, enforce_on};
use crate::resources::clusters::common::{conductor, database, db};
use crate::resources::clusters::get_cluster;
use crate::response::Reply;
use crate::validation::{
    self, fromjson, invalid_input, str_ty, typecheck, Attr, AttrType, FromJsonError,
};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::Method;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Certificate, Cluster};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster_template, Scope};
use openkeel_rpc::Obj;
use serde_json::{json, Map, Value};

const ALLOW: &str = "GET, PATCH, POST";

/// Route a request under `/v1/certificates`.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    match (rest, &req.method) {
        // pecan's routing arguments (`POST /v2/certificates`) are the body argument.
        ([], &Method::POST) => match req.positional.as_slice() {
            [] => post(state, req, body).await,
            [arg] => Err(crate::resources::clusters::positional_body_error(
                "certificate",
                "Certificate",
                arg,
            )),
            _ => Err(ApiError::not_found()),
        },
        // `patch(cluster_ident)` without the path segment: from the query or the body.
        ([], &Method::PATCH) => rotate(state, req, body, None).await,
        ([], _) => Err(ApiError::method_not_allowed(ALLOW)),
        ([ident], &Method::GET) => get_one(state, req, ident).await,
        ([ident], &Method::PATCH) => rotate(state, req, body, Some(ident)).await,
        ([_], &Method::POST) => Err(ApiError::not_found()),
        ([_], _) => Err(ApiError::method_not_allowed(ALLOW)),
        _ => Err(ApiError::beyond_arguments(&req.method, ALLOW)),
    }
}

/// Route a request under `/v1/credentials` (microversion 1.12).
pub async fn route_credentials(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    // Below 1.12 `patch` is a versioned method that does not exist: pecan's look-up of it,
    // whatever the request's method and path, is Magnum's routing 406.
    if !req.version.at_least(12) {
        return Err(crate::resources::clusters::not_at_version(
            req.version,
            "patch",
        ));
    }
    match (rest, &req.method) {
        ([], &Method::PATCH) => credential_rotate(state, req, body, None).await,
        ([ident], &Method::PATCH) => credential_rotate(state, req, body, Some(ident)).await,
        ([_, _, ..], &Method::PATCH) => Err(ApiError::not_found()),
        _ => Err(ApiError::method_not_allowed("PATCH")),
    }
}

/// `Certificate.convert_with_links`: the set fields in the API type's order, `links` after
/// `cluster_uuid`.
pub fn view(c: &Certificate, host: &str) -> Value {
    let uuid = c.cluster_uuid.clone().unwrap_or_default();
    let mut m = Map::new();
    m.insert("cluster_uuid".into(), Value::from(uuid.clone()));
    m.insert(
        "links".into(),
        self_and_bookmark(host, "certificates", &uuid),
    );
    for (k, v) in [
        ("csr", &c.csr),
        ("pem", &c.pem),
        ("ca_cert_type", &c.ca_cert_type),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), Value::from(v.as_str()));
        }
    }
    Value::Object(m)
}

// ---- GET /v1/certificates/{cluster_ident}[?ca_cert_type=] ----

/// `get_one`'s query argument.
pub const GET_ARGS: [query::ArgSpec; 1] = [query::ArgSpec {
    name: "ca_cert_type",
    ty: query::ArgType::Text,
}];

async fn get_one(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    let args = query::parse_args(req, &GET_ARGS)?;
    let ca_cert_type = args.text("ca_cert_type").map(str::to_string);
    let ctx = context(state, req);
    let cluster = get_cluster(state, &ctx, ident).await?;
    enforce_on(state, &ctx, "certificate:get", &cluster)?;
    let cert = conductor(state)?
        .get_ca_certificate(&ctx, Obj::unchanged(cluster), ca_cert_type)
        .await?;
    Ok(Reply::ok(view(&cert, &req.host_url)))
}

// ---- POST /v1/certificates ----

/// The `Certificate` type's typed attributes (the body of `POST /v1/certificates`).
pub const ATTRS: [Attr; 4] = [
    Attr::new("cluster_uuid", AttrType::Text),
    Attr::new("csr", str_ty(1, usize::MAX)),
    Attr::new("pem", AttrType::Text),
    Attr::new("ca_cert_type", AttrType::Text),
];

async fn post(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "certificate").await?;
    let ctx = context(state, req);
    let fields = type_body(&raw)?;
    // The `cluster_uuid` setter resolves a uuid or a name while the body is parsed: an
    // unknown cluster is a 400 with the lookup's message.
    let ident = fields.get("cluster_uuid").cloned().flatten();
    let cluster = match ident {
        Some(i) => {
            let r =
                openkeel_db::cluster::get_by_ident(database(state)?, &Scope::from(&ctx), &i).await;
            r.map_err(|e| {
                let e = MagnumError::from(e);
                if e.code() == 404 {
                    MagnumError::invalid_parameter(e.message().to_string())
                } else {
                    e
                }
            })?
        }
        // Magnum: 500 from the DB layer; OpenKeel: 400 (docs/differences.md).
        None => {
            return Err(MagnumError::invalid_parameter("cluster_uuid is required").into());
        }
    };
    enforce_on(state, &ctx, "certificate:create", &cluster)?;
    let cert = Certificate {
        project_id: ctx.project_id.clone(),
        user_id: ctx.user_id.clone(),
        cluster_uuid: cluster.uuid.clone(),
        csr: fields.get("csr").cloned().flatten(),
        pem: None,
        ca_cert_type: fields.get("ca_cert_type").cloned().flatten(),
    };
    let mut changes = vec!["project_id", "user_id", "cluster_uuid"];
    if cert.csr.is_some() {
        changes.push("csr");
    }
    if cert.ca_cert_type.is_some() {
        changes.push("ca_cert_type");
    }
    let signed = conductor(state)?
        .sign_certificate(&ctx, Obj::unchanged(cluster), Obj::new(cert, changes))
        .await?;
    Ok(Reply::json(201, view(&signed, &req.host_url)))
}

/// Type the body as WSME types `Certificate`: unknown attributes, text fields, `csr` min 1.
fn type_body(
    body: &Value,
) -> Result<std::collections::HashMap<&'static str, Option<String>>, MagnumError> {
    let argname = "certificate";
    let Value::Object(obj) = body else {
        return Err(MagnumError::client_side(format!(
            "'{}' object has no attribute 'keys'",
            PyValue::from_json(body).type_name()
        )));
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !ATTRS.iter().any(|a| a.name == *k) && *k != "links")
        .collect();
    if !unknown.is_empty() {
        let word = if unknown.len() > 1 {
            "attributes"
        } else {
            "attribute"
        };
        return Err(MagnumError::with_message(
            ErrorKind::UnknownAttribute,
            format!(
                "Unknown {word} for argument {argname}: {}",
                unknown.join(", ")
            ),
        ));
    }
    let whole = || PyValue::from_json(body).py_str();
    let mut out = std::collections::HashMap::new();
    for a in ATTRS.iter() {
        let Some(raw) = obj.get(a.name) else { continue };
        let v = PyValue::from_json(raw);
        let v = match fromjson(a.ty, &v) {
            Ok(v) => v,
            Err(FromJsonError::Value(msg)) => return Err(invalid_input(argname, &whole(), &msg)),
            Err(FromJsonError::Other(msg)) => return Err(MagnumError::client_side(msg)),
        };
        let v = typecheck(a, &v)?;
        let text = match v {
            PyValue::None => None,
            PyValue::Str(s) => Some(s),
            other => Some(other.py_str()),
        };
        out.insert(a.name, text);
    }
    Ok(out)
}

// ---- PATCH /v1/certificates/{cluster_ident} ----

async fn rotate(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: Option<&str>,
) -> Result<Reply, ApiError> {
    let ident = cluster_ident_arg(req, body, ident).await?;
    let ctx = context(state, req);
    let cluster = get_cluster(state, &ctx, &ident).await?;
    enforce_on(state, &ctx, "certificate:rotate_ca", &cluster)?;
    let template = cluster_template::get_by_uuid(
        database(state)?,
        &Scope::from(&ctx),
        cluster.cluster_template_id.as_deref().unwrap_or_default(),
    )
    .await
    .map_err(db)?;
    if template.tls_disabled == Some(true) {
        return Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            "Rotating the CA certificate on a non-TLS cluster is not supported",
        )
        .into());
    }
    let uuid = cluster.uuid.clone().unwrap_or_default();
    conductor(state)?
        .rotate_ca_certificate(&ctx, Obj::unchanged(cluster))
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}

/// WSME's arguments of `patch(self, cluster_ident)` (CA rotation, credential rotation):
/// the path segment, overridden by a `cluster_ident` query parameter (the last one) or body
/// member. Any other query parameter, form field or JSON member is `Unknown argument`; a
/// body needs a JSON (or form) media type (`Unknown mimetype: <type>`, 415, also when the
/// header is missing), must parse (`Request is not in valid JSON format`) and be an object
/// (`Request must be a JSON dict`); `cluster_ident` from both the query and the body is
/// `Parameter cluster_ident was given several times`; none of the three is
/// `Missing argument: "cluster_ident"`.
async fn cluster_ident_arg(
    req: &RequestInfo,
    body: Body,
    ident: Option<&str>,
) -> Result<String, ApiError> {
    const ARG: &str = "cluster_ident";
    let unknown_argument = |names: &[String]| -> ApiError {
        MagnumError::new(
            ErrorKind::UnknownArgument,
            &[("argname", &names.join(", "))],
        )
        .into()
    };
    let split = |pairs: Vec<(String, String)>| {
        let mut value = None;
        let mut unknown: Vec<String> = Vec::new();
        for (k, v) in pairs {
            if k == ARG {
                value = Some(v);
            } else if !unknown.contains(&k) {
                unknown.push(k);
            }
        }
        (value, unknown)
    };
    let (from_query, unknown) = split(request::query_pairs(req));
    if !unknown.is_empty() {
        return Err(unknown_argument(&unknown));
    }
    let bytes = crate::read_body(body).await?;
    let from_body = if bytes.is_empty() {
        None
    } else {
        let mime = req
            .header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match mime.as_str() {
            "application/x-www-form-urlencoded" => {
                let (value, unknown) =
                    split(request::parse_query(&String::from_utf8_lossy(&bytes)));
                if !unknown.is_empty() {
                    return Err(unknown_argument(&unknown));
                }
                value
            }
            "application/json" | "application/javascript" | "text/javascript" => {
                let parsed: Value = serde_json::from_slice(&bytes)
                    .map_err(|_| MagnumError::client_side("Request is not in valid JSON format"))?;
                let Value::Object(members) = parsed else {
                    return Err(MagnumError::client_side("Request must be a JSON dict").into());
                };
                let unknown: Vec<String> = members.keys().filter(|k| *k != ARG).cloned().collect();
                if !unknown.is_empty() {
                    return Err(unknown_argument(&unknown));
                }
                // str() of what the JSON held: `Cluster 5` / `Cluster None could not be found.`
                members.get(ARG).map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => "None".to_string(),
                    Value::Bool(true) => "True".to_string(),
                    Value::Bool(false) => "False".to_string(),
                    other => other.to_string(),
                })
            }
            _ => {
                return Err(MagnumError::new(
                    ErrorKind::UnsupportedMediaType,
                    &[("mimetype", &mime)],
                )
                .into())
            }
        }
    };
    match (from_query, from_body) {
        (Some(_), Some(_)) => {
            Err(MagnumError::client_side("Parameter cluster_ident was given several times").into())
        }
        (Some(v), None) | (None, Some(v)) => Ok(v),
        (None, None) => ident
            .map(str::to_string)
            .ok_or_else(|| crate::resources::clusters::missing_argument(ARG)),
    }
}

// ---- PATCH /v1/credentials/{cluster_ident} (1.12) ----

async fn credential_rotate(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: Option<&str>,
) -> Result<Reply, ApiError> {
    let ident = cluster_ident_arg(req, body, ident).await?;
    let ctx = context(state, req);
    enforce(state, &ctx, "credential:rotate", None)?;
    let cluster: Cluster = get_cluster(state, &ctx, &ident).await?;
    let uuid = cluster.uuid.clone().unwrap_or_default();
    conductor(state)?
        .credential_rotate(&ctx, Obj::unchanged(cluster))
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}
