//! `/v1/federations` (`magnum/api/controllers/v1/federation.py`): the six routes, pecan's
//! routing answers around them, Magnum's join/unjoin rewriting of `member_ids` patches, and
//! the federation's wire shape.
//!
//! Magnum's conductor implements no federation operation (`NotImplementedError`), so in
//! Magnum a created federation never exists. OpenKeel's conductor has no federation methods
//! either (`ConductorApi`), and a federation is only metadata (a host cluster, members and
//! properties): the API writes the row itself and the operation is complete at once —
//! create stores `CREATE_COMPLETE`, PATCH writes the changed `member_ids` / `properties` with
//! `UPDATE_COMPLETE`, DELETE removes the row (`docs/differences.md`).

use crate::error::ApiError;
use crate::pagination::{self, ListParams, LIST_ARGS};
use crate::patch::{self, OpKind, PatchOp, PatchType};
use crate::query::{self, ArgSpec, ArgType};
use crate::request::{context, enforce, enforce_on};
use crate::response::Reply;
use crate::validation::{
    self, fromjson, invalid_input, str_ty, typecheck, Attr, AttrType, FromJsonError,
};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::Method;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Federation, FederationStatus, StringMap};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{
    cluster as db_cluster, federation as db_fed, Database, FederationFilters, Page, Scope,
};
use serde_json::{Map, Value};

/// The methods pecan lists in `Allow` for every federation path.
const ALLOW: &str = "DELETE, GET, PATCH, POST";
/// The collection name in URLs and bodies.
const RESOURCE: &str = "federations";

/// Route a request under `/v1/federations`; `rest` are the segments after the collection.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    let m = &req.method;
    match rest {
        [] => match *m {
            Method::GET => get_all(state, req, None, false).await,
            Method::POST => post(state, req, body).await,
            Method::DELETE | Method::PATCH => Err(crate::resources::clusters::missing_path_argument(req, "federation_ident")),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        ["detail"] if *m == Method::GET => get_all(state, req, None, true).await,
        [ident] => match *m {
            Method::GET => get_one(state, req, ident).await,
            Method::PATCH => patch(state, req, body, ident, None).await,
            Method::DELETE => delete(state, req, ident).await,
            Method::POST => Err(invalid_input(
                "federation",
                ident,
                "unable to convert to Federation. Error: Federation.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [marker, "detail"] if *m == Method::GET => get_all(state, req, Some(marker), true).await,
        // `PATCH /{ident}/{rollback}`: pecan passes the second segment as `rollback`.
        [ident, second] => match *m {
            Method::PATCH => patch(state, req, body, ident, Some(second)).await,
            Method::GET | Method::DELETE | Method::POST => Err(ApiError::not_found()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::beyond_arguments(m, ALLOW)),
    }
}

// ---------------------------------------------------------------------------------------
// Fields and view
// ---------------------------------------------------------------------------------------

/// `wtypes.Enum(text, *FederationStatus.ALL)`'s message list, as the reference printed it.
const STATUS_SHOWN: &str = "UPDATE_IN_PROGRESS, UPDATE_COMPLETE, DELETE_COMPLETE, CREATE_COMPLETE, DELETE_IN_PROGRESS, DELETE_FAILED, CREATE_IN_PROGRESS, UPDATE_FAILED, CREATE_FAILED";

const STATUS_VALUES: [&str; 9] = [
    "CREATE_IN_PROGRESS",
    "CREATE_FAILED",
    "CREATE_COMPLETE",
    "UPDATE_IN_PROGRESS",
    "UPDATE_FAILED",
    "UPDATE_COMPLETE",
    "DELETE_IN_PROGRESS",
    "DELETE_FAILED",
    "DELETE_COMPLETE",
];

/// `name`'s pattern.
const NAME_PATTERN: &str = "^[a-zA-Z][a-zA-Z0-9_.-]*$";

/// The API type's scalar attributes in declaration order (`member_ids`, a `[text]`, is typed
/// by [`type_member_ids`] at its place, between `hostcluster_id` and `status`).
pub const API_ATTRS: [Attr; 9] = [
    Attr::new("uuid", AttrType::Uuid),
    Attr::new("name", str_ty(1, 242)),
    Attr::new("hostcluster_id", AttrType::Text),
    Attr::new("member_ids", AttrType::Text),
    Attr::new(
        "status",
        AttrType::Enum {
            values: &STATUS_VALUES,
            shown: STATUS_SHOWN,
        },
    ),
    Attr::new("status_reason", AttrType::Text),
    Attr::new("properties", AttrType::StrDict),
    Attr::new("links", AttrType::Links).readonly(),
    Attr::new("created_at", AttrType::DateTime).readonly(),
];

/// Every attribute name of the API type (the base's `updated_at` too).
fn is_api_attr(name: &str) -> bool {
    name == "updated_at" || API_ATTRS.iter().any(|a| a.name == name)
}

/// The patch type: only the common internal paths; nothing is mandatory.
const PATCH_TYPE: PatchType = PatchType {
    extra_internal: &[],
    non_removable: &[],
};

/// What a PATCH may change (`federation_update_allowed_properties`).
const UPDATE_ALLOWED: [&str; 2] = ["member_ids", "properties"];

/// A federation as the API shows it: the full representation, or (lists) the summary of
/// `uuid`, `name`, `hostcluster_id`, `member_ids`, `status`, `properties` and the links.
pub fn view(f: &Federation, host_url: &str, expand: bool) -> Value {
    let opt = |v: Option<&str>| v.map_or(Value::Null, |s| Value::String(s.to_string()));
    let time = |t: Option<&chrono::NaiveDateTime>| {
        t.map_or(Value::Null, |d| {
            Value::String(crate::resources::cluster_templates::isoformat(d))
        })
    };
    let mut m = Map::new();
    m.insert("uuid".into(), opt(f.uuid.as_deref()));
    m.insert("name".into(), opt(f.name.as_deref()));
    m.insert("hostcluster_id".into(), opt(f.hostcluster_id.as_deref()));
    m.insert(
        "member_ids".into(),
        f.member_ids.as_ref().map_or(Value::Null, |l| {
            Value::Array(l.iter().cloned().map(Value::String).collect())
        }),
    );
    m.insert("status".into(), opt(f.status.map(FederationStatus::as_str)));
    if expand {
        m.insert("status_reason".into(), opt(f.status_reason.as_deref()));
    }
    m.insert(
        "properties".into(),
        f.properties.as_ref().map_or(Value::Null, |p| {
            Value::Object(
                p.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        }),
    );
    m.insert(
        "links".into(),
        crate::links::self_and_bookmark(host_url, RESOURCE, f.uuid.as_deref().unwrap_or("None")),
    );
    if expand {
        m.insert("created_at".into(), time(f.created_at.as_ref()));
        m.insert("updated_at".into(), time(f.updated_at.as_ref()));
    }
    Value::Object(m)
}

/// `federation.as_dict()`: the object's fields in declaration order.
fn doc_of(f: &Federation) -> PyValue {
    let s = |v: &Option<String>| v.clone().map_or(PyValue::None, PyValue::str);
    let dt =
        |v: &Option<chrono::NaiveDateTime>| v.as_ref().map_or(PyValue::None, PyValue::datetime_utc);
    PyValue::Dict(
        [
            ("id", PyValue::Int(i128::from(f.id))),
            ("uuid", s(&f.uuid)),
            ("name", s(&f.name)),
            ("project_id", s(&f.project_id)),
            ("hostcluster_id", s(&f.hostcluster_id)),
            (
                "member_ids",
                f.member_ids.as_ref().map_or(PyValue::None, |l| {
                    PyValue::List(l.iter().cloned().map(PyValue::str).collect())
                }),
            ),
            (
                "status",
                f.status.map_or(PyValue::None, |s| PyValue::str(s.as_str())),
            ),
            ("status_reason", s(&f.status_reason)),
            ("properties", properties_value(f.properties.as_ref())),
            ("created_at", dt(&f.created_at)),
            ("updated_at", dt(&f.updated_at)),
        ]
        .into_iter()
        .map(|(k, v)| (PyValue::str(k), v))
        .collect(),
    )
}

fn properties_value(p: Option<&StringMap>) -> PyValue {
    p.map_or(PyValue::None, |p| {
        PyValue::Dict(
            p.iter()
                .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
                .collect(),
        )
    })
}

// ---------------------------------------------------------------------------------------
// Typing (WSME) and coercion (the versioned object)
// ---------------------------------------------------------------------------------------

/// The typed attributes of a `Federation` built from a dict: name → value, in declaration
/// order; attributes not given are absent (Unset).
#[derive(Debug, Clone, Default, PartialEq)]
struct Typed(Vec<(&'static str, PyValue)>);

impl Typed {
    fn get(&self, name: &str) -> Option<&PyValue> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The value, `None` for Unset (as `_update_changed_fields` reads it).
    fn value(&self, name: &str) -> PyValue {
        self.get(name).cloned().unwrap_or(PyValue::None)
    }
}

/// `[text]` typing of `member_ids`: a list whose elements are strings (or `None`).
fn type_member_ids(
    v: &PyValue,
    whole: &dyn Fn() -> String,
    argname: &str,
) -> Result<PyValue, MagnumError> {
    let items = match v {
        PyValue::None => return Ok(PyValue::None),
        PyValue::List(items) => items,
        other => {
            return Err(invalid_input(
                argname,
                &whole(),
                &format!("Value not a valid list: {}", other.py_str()),
            ))
        }
    };
    if let Some(bad) = items
        .iter()
        .find(|i| !matches!(i, PyValue::Str(_) | PyValue::None))
    {
        return Err(invalid_input(
            "member_ids",
            &v.py_str(),
            &format!(
                "Wrong type. Expected '<class 'str'>', got '{}'",
                bad.class_repr()
            ),
        ));
    }
    Ok(v.clone())
}

/// Python's `re.match('^[a-zA-Z][a-zA-Z0-9_.-]*$', name)` (`$` also before a final newline).
fn name_matches(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Type one attribute value as the `wsattr` setter does (after `fromjson` for bodies).
fn type_attr(a: &Attr, v: &PyValue) -> Result<PyValue, MagnumError> {
    let v = typecheck(a, v)?;
    if a.name == "name" {
        if let PyValue::Str(s) = &v {
            if !name_matches(s) {
                return Err(invalid_input(
                    "name",
                    s,
                    &format!("Value should match the pattern {NAME_PATTERN}"),
                ));
            }
        }
    }
    Ok(v)
}

/// The POST body as WSME types the `federation` argument.
fn type_body(body: &Value) -> Result<Typed, MagnumError> {
    let obj = match body {
        Value::Object(o) => o,
        // Magnum: 500 (`'list' object has no attribute 'keys'`); OpenKeel: 400, same text.
        other => {
            return Err(MagnumError::client_side(format!(
                "'{}' object has no attribute 'keys'",
                PyValue::from_json(other).type_name()
            )))
        }
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !is_api_attr(k))
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
                "Unknown {word} for argument federation: {}",
                unknown.join(", ")
            ),
        ));
    }
    let whole = || PyValue::from_json(body).py_str();
    let mut out = Typed::default();
    let updated_at = Attr::new("updated_at", AttrType::DateTime).readonly();
    for a in API_ATTRS.iter().chain(std::iter::once(&updated_at)) {
        let Some(raw) = obj.get(a.name) else {
            continue;
        };
        let v = PyValue::from_json(raw);
        if a.name == "member_ids" {
            out.0
                .push((a.name, type_member_ids(&v, &whole, "federation")?));
            continue;
        }
        let v = match fromjson(a.ty, &v) {
            Ok(v) => v,
            Err(FromJsonError::Value(msg)) => {
                return Err(invalid_input("federation", &whole(), &msg))
            }
            Err(FromJsonError::Other(msg)) => return Err(MagnumError::client_side(msg)),
        };
        if a.readonly {
            return Err(invalid_input(
                a.name,
                &v.py_str(),
                "Cannot set read only field.",
            ));
        }
        out.0.push((a.name, type_attr(a, &v)?));
    }
    Ok(out)
}

/// `Federation(**patched_dict)`: the API type built from a patched `as_dict()` (fields the
/// API does not expose are skipped; values are typed by the setters, not `fromjson`).
fn construct(d: &PyValue) -> Result<Typed, MagnumError> {
    let mut out = Typed::default();
    let updated_at = Attr::new("updated_at", AttrType::DateTime);
    for a in API_ATTRS.iter().chain(std::iter::once(&updated_at)) {
        if a.name == "links" {
            continue;
        }
        let Some(v) = d.get(a.name) else {
            continue;
        };
        let v = if a.name == "member_ids" {
            type_member_ids(v, &|| v.py_str(), "member_ids")?
        } else {
            type_attr(a, v)?
        };
        out.0.push((a.name, v));
    }
    Ok(out)
}

/// `ListOfStringsField(nullable=True)` coercion.
fn coerce_members(v: &PyValue) -> Result<Option<Vec<String>>, MagnumError> {
    match v {
        PyValue::None => Ok(None),
        PyValue::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                PyValue::Str(s) => Ok(s.clone()),
                // Magnum: 500 from the object; OpenKeel: 400, same text.
                PyValue::None => Err(MagnumError::client_side(format!(
                    "Field `member_ids[{i}]' cannot be None"
                ))),
                other => Ok(other.py_str()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(MagnumError::client_side(format!(
            "A list is required in field member_ids, not a {}",
            other.type_name()
        ))),
    }
}

/// `DictOfStringsField(nullable=True)` coercion.
fn coerce_properties(v: &PyValue) -> Result<Option<StringMap>, MagnumError> {
    let c = validation::coerce(validation::ObjField::DictOfStrings, "properties", v)?;
    Ok(validation::string_map(&c))
}

fn opt_string(v: &PyValue) -> Option<String> {
    match v {
        PyValue::None => None,
        PyValue::Str(s) => Some(s.clone()),
        other => Some(other.py_str()),
    }
}

// ---------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------

async fn get_all(
    state: &ApiState,
    req: &RequestInfo,
    positional_marker: Option<&str>,
    detail: bool,
) -> Result<Reply, ApiError> {
    // `/{x}/detail`: pecan passes `x` as the first positional argument (the marker).
    if let Some(m) = positional_marker {
        if !openkeel_db::ident::is_uuid_like(m) {
            return Err(invalid_input(
                "marker",
                m,
                &format!("unable to convert to uuid. Error: Expected a uuid but received {m}."),
            )
            .into());
        }
    }
    let args = query::parse_args(req, &LIST_ARGS)?;
    let ctx = context(state, req);
    let (rule, resource_url) = if detail {
        ("federation:detail", "federations/detail")
    } else {
        ("federation:get_all", RESOURCE)
    };
    enforce(state, &ctx, rule, None)?;
    if positional_marker.is_some() {
        // "/detail should only work against collections".
        return Err(MagnumError::new(ErrorKind::HTTPNotFound, &[]).into());
    }
    let list = ListParams::from_args(&args);
    let limit = pagination::validate_limit(list.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&list.sort_dir)?;
    let db = db(state)?;
    // No admin widening: every caller sees its own project's federations.
    let scope = Scope::from(&ctx);
    let marker = match &list.marker {
        Some(m) => Some(db_fed::get_by_uuid(db, &scope, m).await?),
        None => None,
    };
    let mut page = Page::all()
        .limit(limit)
        .sort(&list.sort_key, &list.sort_dir);
    if let Some(m) = &marker {
        page = page.marker(m);
    }
    let rows = db_fed::list(db, &scope, &FederationFilters::default(), &page).await?;
    let last = rows.last().and_then(|f| f.uuid.clone()).unwrap_or_default();
    let next = pagination::next_link(
        &req.host_url,
        resource_url,
        &list.next_args(),
        limit,
        rows.len(),
        &last,
    );
    let items = rows
        .iter()
        .map(|f| view(f, &req.host_url, detail))
        .collect();
    Ok(Reply::ok(pagination::collection(RESOURCE, items, next)))
}

/// `api_utils.get_resource('Federation', ident)`: by uuid when uuid-like, else by name.
async fn get_resource(db: &Database, scope: &Scope, ident: &str) -> Result<Federation, ApiError> {
    if openkeel_db::ident::is_uuid_like(ident) {
        Ok(db_fed::get_by_uuid(db, scope, ident).await?)
    } else {
        Ok(db_fed::get_by_name(db, scope, ident).await?)
    }
}

async fn get_one(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = context(state, req);
    let db = db(state)?;
    let f = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce_on(state, &ctx, "federation:get", &f)?;
    Ok(Reply::ok(view(&f, &req.host_url, true)))
}

async fn post(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "federation").await?;
    let typed = type_body(&raw)?;
    let ctx = context(state, req);
    enforce(state, &ctx, "federation:create", None)?;
    let db = db(state)?;
    let scope = Scope::from(&ctx);

    // attr_validator.validate_federation_hostcluster
    let hostcluster = match typed.value("hostcluster_id") {
        PyValue::None => {
            return Err(MagnumError::invalid_parameter(
                "No hostcluster specified. Please specify a hostcluster_id.",
            )
            .into())
        }
        v => v.py_str(),
    };
    if openkeel_db::ident::is_uuid_like(&hostcluster) {
        db_cluster::get_by_uuid(db, &scope, &hostcluster).await?;
    } else {
        db_cluster::get_by_name(db, &scope, &hostcluster).await?;
    }
    // attr_validator.validate_federation_properties
    let properties = typed.value("properties");
    if properties.is_none() {
        return Err(MagnumError::invalid_parameter(
            "Please specify a `properties` dict for the federation.",
        )
        .into());
    }
    if properties.get("dns-zone").is_none_or(PyValue::is_none) {
        return Err(MagnumError::invalid_parameter(
            "No DNS zone specified. Please specify a `dns-zone`.",
        )
        .into());
    }

    let name = match typed.value("name") {
        PyValue::Str(s) if !s.is_empty() => s,
        _ => crate::resources::generate_name("federation"),
    };
    let row = Federation {
        // The body's uuid is ignored: a fresh one, as Magnum's handler sets.
        uuid: Some(uuid::Uuid::new_v4().to_string()),
        name: Some(name),
        project_id: ctx.project_id.clone(),
        hostcluster_id: Some(hostcluster),
        member_ids: coerce_members(&typed.value("member_ids"))?,
        // Nothing remains to be done: the federation is complete when stored.
        status: Some(FederationStatus::CreateComplete),
        status_reason: opt_string(&typed.value("status_reason")),
        properties: coerce_properties(&properties)?,
        ..Default::default()
    };
    let created = db_fed::create(db, &row).await?;
    Ok(Reply::json(202, uuid_body(&created)))
}

fn uuid_body(f: &Federation) -> Value {
    let mut m = Map::new();
    m.insert(
        "uuid".into(),
        f.uuid.clone().map_or(Value::Null, Value::String),
    );
    Value::Object(m)
}

/// `patch`'s query argument.
pub const ROLLBACK_ARG: [ArgSpec; 1] = [ArgSpec {
    name: "rollback",
    ty: ArgType::Bool,
}];

async fn patch(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
    positional_rollback: Option<&str>,
) -> Result<Reply, ApiError> {
    if let Some(r) = positional_rollback {
        if query::bool_from_string(r).is_none() {
            return Err(invalid_input(
                "rollback",
                r,
                &format!(
                    "unable to convert to boolean. Error: {}",
                    query::unrecognized_bool(r)
                ),
            )
            .into());
        }
    }
    // `rollback` is accepted and has no effect (nothing is rolled back).
    query::parse_args(req, &ROLLBACK_ARG)?;
    let raw = validation::body_arg(req, body, "patch").await?;
    let mut ops = PATCH_TYPE.parse(&raw)?;
    let ctx = context(state, req);
    let db = db(state)?;
    let scope = Scope::from(&ctx);
    let mut current = get_resource(db, &scope, ident).await?;
    enforce_on(state, &ctx, "federation:update", &current)?;

    // Join / unjoin: only the first operation is looked at.
    let Some(first) = ops.first().cloned() else {
        // Magnum: 500 `list index out of range`; OpenKeel: 400, same text.
        return Err(MagnumError::client_side("list index out of range").into());
    };
    if first.path.as_deref() == Some("/member_ids") {
        if let Some(value) = first.value.clone().filter(|v| !v.is_none()) {
            match first.op {
                Some(OpKind::Add) => {
                    let members = join(db, &scope, &current, &value).await?;
                    ops[0] = PatchOp::new(OpKind::Replace, "/member_ids", Some(members));
                }
                Some(OpKind::Remove) => {
                    let members = unjoin(db, &scope, &current, &value).await?;
                    ops[0] = PatchOp::new(OpKind::Replace, "/member_ids", Some(members));
                }
                _ => {}
            }
        }
    }

    let old = doc_of(&current);
    let patched = patch::apply_jsonpatch(&old, &mut ops)?;
    let new = construct(&patched)?;
    // `_update_changed_fields`, then `validate_federation_properties(delta)`.
    let mut changed: Vec<&'static str> = Vec::new();
    for name in [
        "uuid",
        "name",
        "hostcluster_id",
        "member_ids",
        "status",
        "status_reason",
        "properties",
        "created_at",
        "updated_at",
    ] {
        let old_v = old.get(name).cloned().unwrap_or(PyValue::None);
        if !old_v.py_eq(&new.value(name)) {
            changed.push(name);
        }
    }
    let disallowed: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|c| !UPDATE_ALLOWED.contains(c))
        .collect();
    if !disallowed.is_empty() {
        return Err(MagnumError::invalid_parameter(format!(
            "cannot change federation property(ies) {}.",
            disallowed.join(", ")
        ))
        .into());
    }
    if changed.contains(&"member_ids") {
        current.member_ids = coerce_members(&new.value("member_ids"))?;
    }
    if changed.contains(&"properties") {
        current.properties = coerce_properties(&new.value("properties"))?;
    }
    current.status = Some(FederationStatus::UpdateComplete);
    let mut fields = changed;
    fields.push("status");
    let uuid = current.uuid.clone().unwrap_or_default();
    db_fed::update(db, &uuid, &current, &fields).await?;
    Ok(Reply::json(202, uuid_body(&current)))
}

/// The members as a Python list (`None` when the federation has none).
fn members_of(f: &Federation) -> Option<Vec<String>> {
    f.member_ids.clone()
}

/// Magnum's `member in federation.member_ids` on a `None` list.
fn not_iterable() -> ApiError {
    // Magnum: 500; OpenKeel: 400, same text.
    MagnumError::client_side("argument of type 'NoneType' is not iterable").into()
}

/// `_join_wrapper`: the cluster must exist (404) and not be a member yet (409).
async fn join(
    db: &Database,
    scope: &Scope,
    f: &Federation,
    value: &PyValue,
) -> Result<PyValue, ApiError> {
    let uuid = value.py_str();
    let c = db_cluster::get_by_uuid(db, scope, &uuid).await?;
    let Some(mut members) = members_of(f) else {
        return Err(not_iterable());
    };
    let is_member = matches!(value, PyValue::Str(s) if members.contains(s));
    if is_member {
        return Err(MagnumError::new(
            ErrorKind::MemberAlreadyExists,
            &[
                ("uuid", &uuid),
                (
                    "federation_name",
                    &f.name.clone().unwrap_or_else(|| "None".into()),
                ),
            ],
        )
        .into());
    }
    members.push(c.uuid.unwrap_or_default());
    Ok(PyValue::List(
        members.into_iter().map(PyValue::str).collect(),
    ))
}

/// `_unjoin_wrapper`: the cluster must exist and be a member (else 404).
async fn unjoin(
    db: &Database,
    scope: &Scope,
    f: &Federation,
    value: &PyValue,
) -> Result<PyValue, ApiError> {
    let uuid = value.py_str();
    db_cluster::get_by_uuid(db, scope, &uuid).await?;
    let Some(mut members) = members_of(f) else {
        return Err(not_iterable());
    };
    let pos = match value {
        PyValue::Str(s) => members.iter().position(|m| m == s),
        _ => None,
    };
    let Some(pos) = pos else {
        return Err(MagnumError::with_message(
            ErrorKind::HTTPNotFound,
            format!(
                "Cluster {uuid} is not a member of the federation {}.",
                f.name.as_deref().unwrap_or("None")
            ),
        )
        .into());
    };
    members.remove(pos);
    Ok(PyValue::List(
        members.into_iter().map(PyValue::str).collect(),
    ))
}

async fn delete(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = context(state, req);
    let db = db(state)?;
    let f = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce_on(state, &ctx, "federation:delete", &f)?;
    db_fed::destroy(db, f.uuid.as_deref().unwrap_or_default()).await?;
    Ok(Reply::empty(204))
}

fn db(state: &ApiState) -> Result<&Database, ApiError> {
    state
        .db
        .as_ref()
        .ok_or_else(|| MagnumError::internal("no database configured").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_pattern() {
        assert!(name_matches("fed-eu.1_x"));
        assert!(name_matches("a\n"));
        assert!(!name_matches("1bad"));
        assert!(!name_matches(""));
        assert!(!name_matches("a b"));
    }

    #[test]
    fn generated_names() {
        let n = crate::resources::generate_name("federation");
        assert!(n.ends_with("-federation"), "{n}");
        assert!(name_matches(&n));
    }
}
