//! `/v1/clustertemplates` (`magnum/api/controllers/v1/cluster_template.py`): the six routes,
//! their pecan routing quirks, and the template's wire shape.
//!
//! Every handler reads top to bottom as Magnum's does (decorators first, then the body):
//! context → policy / validation in Magnum's order → database → view ([`view`]).

use std::sync::Arc;

use crate::error::ApiError;
use crate::pagination::{self, ListParams, LIST_ARGS};
use crate::patch::{self, PatchType};
use crate::request::{context, enforce};
use crate::response::Reply;
use crate::validation::{
    self, coerce, fromjson, invalid_input, typecheck, Attr, AttrDefault, AttrType, FromJsonError,
    ObjField, Shown,
};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::{HeaderName, Method};
use openkeel_cloud::validate as cloudv;
use openkeel_core::cloud::Cloud;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::ClusterTemplate;
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster_template as db_ct, ClusterTemplateFilters, Database, Page, Scope};
use serde_json::{Map, Value};

/// The methods pecan lists in `Allow` for every template path.
const ALLOW: &str = "DELETE, GET, PATCH, POST";
/// The collection name in URLs.
const RESOURCE: &str = "clustertemplates";

/// Route a request under `/v1/clustertemplates`; `rest` are the segments after the collection
/// name. Reproduces pecan's dispatch of `ClusterTemplatesController` (including the odd 400s
/// it gives for `POST /{id}` and `PATCH /{id}/{x}`).
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
            Method::DELETE | Method::PATCH => Err(crate::resources::clusters::missing_path_argument(req, "cluster_template_ident")),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        ["detail"] if *m == Method::GET => get_all(state, req, None, true).await,
        [ident] => match *m {
            Method::GET => get_one(state, req, ident).await,
            Method::PATCH => patch(state, req, body, ident).await,
            Method::DELETE => delete(state, req, ident).await,
            Method::POST => Err(validation::invalid_input(
                "cluster_template",
                ident,
                "unable to convert to ClusterTemplate. Error: ClusterTemplate.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [marker, "detail"] if *m == Method::GET => get_all(state, req, Some(marker), true).await,
        [_, second] => match *m {
            Method::PATCH => Err(validation::invalid_input(
                "patch",
                second,
                "unable to convert to ArrayType. Error: Base.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            Method::GET | Method::DELETE | Method::POST => Err(ApiError::not_found()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::not_found()),
    }
}

// ---------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------

const STR255: AttrType = AttrType::Str { min: 1, max: 255 };
const S: ObjField = ObjField::String { nullable: true };
const I: ObjField = ObjField::Integer { nullable: true };

/// `fields.ClusterType.ALL`.
pub const COE_VALUES: [&str; 1] = ["kubernetes"];

/// The API type's attributes in declaration order (POST typing order and response order).
pub const API_ATTRS: [Attr; 36] = [
    Attr::new("uuid", AttrType::Uuid),
    Attr::new("name", STR255),
    Attr::new(
        "coe",
        AttrType::Enum {
            values: &COE_VALUES,
            shown: "kubernetes",
        },
    ),
    Attr::new("image_id", STR255).mandatory(),
    Attr::new("flavor_id", STR255),
    Attr::new("master_flavor_id", STR255),
    Attr::new("dns_nameserver", AttrType::Dns),
    Attr::new("keypair_id", STR255).default(AttrDefault::None),
    Attr::new("external_network_id", STR255),
    Attr::new("fixed_network", STR255),
    Attr::new("fixed_subnet", STR255),
    Attr::new("network_driver", STR255),
    Attr::new(
        "apiserver_port",
        AttrType::Int {
            min: Some(1024),
            max: Some(65535),
        },
    ),
    Attr::new(
        "docker_volume_size",
        AttrType::Int {
            min: Some(1),
            max: None,
        },
    ),
    Attr::new("cluster_distro", STR255),
    Attr::new("links", AttrType::Links).readonly(),
    Attr::new("http_proxy", STR255),
    Attr::new("https_proxy", STR255),
    Attr::new("no_proxy", STR255),
    Attr::new("volume_driver", STR255),
    Attr::new("registry_enabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("labels", AttrType::Labels),
    Attr::new("tls_disabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("public", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new(
        "server_type",
        AttrType::Enum {
            values: &["vm", "bm"],
            shown: "bm, vm",
        },
    )
    .default(AttrDefault::Str("vm")),
    Attr::new("insecure_registry", STR255),
    Attr::new("docker_storage_driver", STR255),
    Attr::new("master_lb_enabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("floating_ip_enabled", AttrType::Bool).default(AttrDefault::Bool(true)),
    Attr::new("project_id", AttrType::Text).readonly(),
    Attr::new("user_id", AttrType::Text).readonly(),
    Attr::new("hidden", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("tags", AttrType::Str { min: 0, max: 255 }),
    Attr::new("driver", STR255),
    Attr::new("created_at", AttrType::DateTime).readonly(),
    Attr::new("updated_at", AttrType::DateTime).readonly(),
];

/// `objects.ClusterTemplate.fields` in declaration order (then the base's timestamps):
/// the order of `as_dict()`, of object coercion and of the API constructor's validation.
pub const OBJ_FIELDS: [(&str, ObjField); 36] = [
    ("id", ObjField::Integer { nullable: false }),
    ("uuid", S),
    ("project_id", S),
    ("user_id", S),
    ("name", S),
    ("image_id", S),
    ("flavor_id", S),
    ("master_flavor_id", S),
    ("keypair_id", S),
    ("dns_nameserver", S),
    ("external_network_id", S),
    ("fixed_network", S),
    ("fixed_subnet", S),
    ("network_driver", S),
    ("volume_driver", S),
    ("apiserver_port", I),
    ("docker_volume_size", I),
    ("docker_storage_driver", S),
    ("cluster_distro", S),
    (
        "coe",
        ObjField::Enum {
            values: &COE_VALUES,
        },
    ),
    ("http_proxy", S),
    ("https_proxy", S),
    ("no_proxy", S),
    ("registry_enabled", ObjField::Boolean { default: false }),
    ("labels", ObjField::DictOfStrings),
    ("tls_disabled", ObjField::Boolean { default: false }),
    ("public", ObjField::Boolean { default: false }),
    ("server_type", S),
    ("insecure_registry", S),
    ("master_lb_enabled", ObjField::Boolean { default: false }),
    ("floating_ip_enabled", ObjField::Boolean { default: true }),
    ("hidden", ObjField::Boolean { default: false }),
    ("tags", S),
    ("driver", S),
    ("created_at", ObjField::DateTime),
    ("updated_at", ObjField::DateTime),
];

/// `ClusterTemplatePatchType`.
pub const PATCH_TYPE: PatchType = PatchType {
    extra_internal: &[],
    non_removable: &[
        "/network_driver",
        "/external_network_id",
        "/tls_disabled",
        "/public",
        "/server_type",
        "/coe",
        "/registry_enabled",
        "/cluster_distro",
        "/hidden",
        "/image_id",
    ],
};

fn api_attr(name: &str) -> Option<&'static Attr> {
    API_ATTRS.iter().find(|a| a.name == name)
}

/// A WSME `ClusterTemplate` instance: the attributes that were set.
#[derive(Debug, Clone, Default)]
struct ApiObj {
    vals: Vec<(&'static str, PyValue)>,
}

impl ApiObj {
    fn set(&mut self, name: &'static str, v: PyValue) {
        match self.vals.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v,
            None => self.vals.push((name, v)),
        }
    }

    /// `getattr(obj, name)`: the set value, else the declared default, else `None` (Unset).
    fn attr(&self, name: &str) -> Option<PyValue> {
        if let Some((_, v)) = self.vals.iter().find(|(n, _)| *n == name) {
            return Some(v.clone());
        }
        api_attr(name)
            .and_then(|a| a.default)
            .map(AttrDefault::value)
    }

    fn shown(&self, name: &str) -> String {
        self.attr(name)
            .map_or_else(|| "Unset".to_string(), |v| v.py_str())
    }

    /// `as_dict()`: every object field the API declares whose value is not Unset.
    fn as_dict(&self) -> Vec<(&'static str, PyValue)> {
        OBJ_FIELDS
            .iter()
            .filter(|(n, _)| api_attr(n).is_some())
            .filter_map(|(n, _)| self.attr(n).map(|v| (*n, v)))
            .collect()
    }
}

fn dict_get<'a>(d: &'a [(&'static str, PyValue)], name: &str) -> Option<&'a PyValue> {
    d.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

fn opt_str(v: Option<&PyValue>) -> Option<&str> {
    v.and_then(PyValue::as_str)
}

fn shown_of(v: Option<&PyValue>) -> Shown<'_> {
    match v {
        None => Shown::Unset,
        Some(PyValue::None) => Shown::None,
        Some(PyValue::Str(s)) => Shown::Value(s),
        // Non-strings cannot pass the attribute types; print like Python would if they did.
        Some(_) => Shown::None,
    }
}

// ---------------------------------------------------------------------------------------
// Rows, documents and views
// ---------------------------------------------------------------------------------------

/// Python's `datetime.isoformat()` of a naive UTC value made aware.
pub fn isoformat(dt: &chrono::NaiveDateTime) -> String {
    use chrono::Timelike;
    if dt.nanosecond() / 1000 == 0 {
        format!("{}+00:00", dt.format("%Y-%m-%dT%H:%M:%S"))
    } else {
        format!("{}+00:00", dt.format("%Y-%m-%dT%H:%M:%S%.6f"))
    }
}

fn s(v: &Option<String>) -> PyValue {
    v.as_ref()
        .map_or(PyValue::None, |x| PyValue::str(x.clone()))
}

fn i(v: Option<i32>) -> PyValue {
    v.map_or(PyValue::None, |x| PyValue::Int(i128::from(x)))
}

/// The object's `as_dict()` (what PATCH operates on): booleans read as their defaults when
/// NULL, as the object layer does.
pub fn doc_of(t: &ClusterTemplate) -> PyValue {
    let b = |v: Option<bool>, d: bool| PyValue::Bool(v.unwrap_or(d));
    let dt =
        |v: &Option<chrono::NaiveDateTime>| v.as_ref().map_or(PyValue::None, PyValue::datetime_utc);
    let labels = t.labels.as_ref().map_or(PyValue::None, |l| {
        PyValue::Dict(
            l.iter()
                .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
                .collect(),
        )
    });
    let items: Vec<(&str, PyValue)> = vec![
        ("id", PyValue::Int(i128::from(t.id))),
        ("uuid", s(&t.uuid)),
        ("project_id", s(&t.project_id)),
        ("user_id", s(&t.user_id)),
        ("name", s(&t.name)),
        ("image_id", s(&t.image_id)),
        ("flavor_id", s(&t.flavor_id)),
        ("master_flavor_id", s(&t.master_flavor_id)),
        ("keypair_id", s(&t.keypair_id)),
        ("dns_nameserver", s(&t.dns_nameserver)),
        ("external_network_id", s(&t.external_network_id)),
        ("fixed_network", s(&t.fixed_network)),
        ("fixed_subnet", s(&t.fixed_subnet)),
        ("network_driver", s(&t.network_driver)),
        ("volume_driver", s(&t.volume_driver)),
        ("apiserver_port", i(t.apiserver_port)),
        ("docker_volume_size", i(t.docker_volume_size)),
        ("docker_storage_driver", s(&t.docker_storage_driver)),
        ("cluster_distro", s(&t.cluster_distro)),
        ("coe", s(&t.coe)),
        ("http_proxy", s(&t.http_proxy)),
        ("https_proxy", s(&t.https_proxy)),
        ("no_proxy", s(&t.no_proxy)),
        ("registry_enabled", b(t.registry_enabled, false)),
        ("labels", labels),
        ("tls_disabled", b(t.tls_disabled, false)),
        ("public", b(t.public, false)),
        ("server_type", s(&t.server_type)),
        ("insecure_registry", s(&t.insecure_registry)),
        ("master_lb_enabled", b(t.master_lb_enabled, false)),
        ("floating_ip_enabled", b(t.floating_ip_enabled, true)),
        ("hidden", b(t.hidden, false)),
        ("tags", s(&t.tags)),
        ("driver", s(&t.driver)),
        ("created_at", dt(&t.created_at)),
        ("updated_at", dt(&t.updated_at)),
    ];
    PyValue::Dict(
        items
            .into_iter()
            .map(|(k, v)| (PyValue::str(k), v))
            .collect(),
    )
}

/// Write a coerced object value into the row.
fn assign(t: &mut ClusterTemplate, name: &str, v: &PyValue) -> Result<(), MagnumError> {
    let st = || v.as_str().map(str::to_string);
    let int = || -> Result<Option<i32>, MagnumError> {
        match v {
            PyValue::None => Ok(None),
            PyValue::Int(x) => i32::try_from(*x).map(Some).map_err(|_| {
                // MySQL's DataError (a 500 in Magnum).
                MagnumError::client_side(format!("Out of range value for column '{name}' at row 1"))
            }),
            _ => Ok(None),
        }
    };
    let bo = || match v {
        PyValue::Bool(b) => Some(*b),
        _ => None,
    };
    match name {
        "uuid" => t.uuid = st(),
        "project_id" => t.project_id = st(),
        "user_id" => t.user_id = st(),
        "name" => t.name = st(),
        "image_id" => t.image_id = st(),
        "flavor_id" => t.flavor_id = st(),
        "master_flavor_id" => t.master_flavor_id = st(),
        "keypair_id" => t.keypair_id = st(),
        "dns_nameserver" => t.dns_nameserver = st(),
        "external_network_id" => t.external_network_id = st(),
        "fixed_network" => t.fixed_network = st(),
        "fixed_subnet" => t.fixed_subnet = st(),
        "network_driver" => t.network_driver = st(),
        "volume_driver" => t.volume_driver = st(),
        "apiserver_port" => t.apiserver_port = int()?,
        "docker_volume_size" => t.docker_volume_size = int()?,
        "docker_storage_driver" => t.docker_storage_driver = st(),
        "cluster_distro" => t.cluster_distro = st(),
        "coe" => t.coe = st(),
        "http_proxy" => t.http_proxy = st(),
        "https_proxy" => t.https_proxy = st(),
        "no_proxy" => t.no_proxy = st(),
        "registry_enabled" => t.registry_enabled = bo(),
        "labels" => t.labels = validation::string_map(v),
        "tls_disabled" => t.tls_disabled = bo(),
        "public" => t.public = bo(),
        "server_type" => t.server_type = st(),
        "insecure_registry" => t.insecure_registry = st(),
        "master_lb_enabled" => t.master_lb_enabled = bo(),
        "floating_ip_enabled" => t.floating_ip_enabled = bo(),
        "hidden" => t.hidden = bo(),
        "tags" => t.tags = st(),
        "driver" => t.driver = st(),
        _ => {}
    }
    Ok(())
}

/// The template as the API returns it (`ClusterTemplate.convert_with_links`): every
/// attribute in declaration order, `links` after `cluster_distro`.
pub fn view(t: &ClusterTemplate, host_url: &str) -> Value {
    let mut m = Map::new();
    let doc = doc_of(t);
    for a in API_ATTRS.iter() {
        let v = match a.name {
            "links" => crate::links::self_and_bookmark(
                host_url,
                RESOURCE,
                t.uuid.as_deref().unwrap_or("None"),
            ),
            "created_at" => t
                .created_at
                .as_ref()
                .map_or(Value::Null, |d| Value::String(isoformat(d))),
            "updated_at" => t
                .updated_at
                .as_ref()
                .map_or(Value::Null, |d| Value::String(isoformat(d))),
            name => doc
                .get(name)
                .and_then(PyValue::to_json)
                .unwrap_or(Value::Null),
        };
        m.insert(a.name.to_string(), v);
    }
    Value::Object(m)
}

/// The policy target (`cluster_template.as_dict()`).
fn target(t: &ClusterTemplate) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

// ---------------------------------------------------------------------------------------
// Plumbing
// ---------------------------------------------------------------------------------------

fn db(state: &ApiState) -> Result<&Database, ApiError> {
    state
        .db
        .as_ref()
        .ok_or_else(|| MagnumError::internal("no database configured").into())
}

fn cloud(state: &ApiState) -> Result<&Arc<dyn Cloud>, ApiError> {
    state.cloud.as_ref().ok_or_else(|| {
        MagnumError::new(
            ErrorKind::AuthorizationFailure,
            &[
                ("client", &"glance"),
                ("message", &"reason: no OpenStack cloud is configured"),
            ],
        )
        .into()
    })
}

/// `api_utils.get_resource('ClusterTemplate', ident)`: by uuid when UUID-like, else by name.
async fn get_resource(
    db: &Database,
    scope: &Scope,
    ident: &str,
) -> Result<ClusterTemplate, ApiError> {
    if openkeel_db::ident::is_uuid_like(ident) {
        Ok(db_ct::get_by_uuid(db, scope, ident).await?)
    } else {
        Ok(db_ct::get_by_name(db, scope, ident).await?)
    }
}

/// Make the context see every project (`context.all_tenants = True`) after checking the
/// admin-only rule, as the handlers do for admins.
fn widen(state: &ApiState, ctx: &mut RequestContext, rule: &str) -> Result<(), ApiError> {
    if ctx.is_admin {
        enforce(state, ctx, rule, None)?;
        ctx.all_tenants = true;
    }
    Ok(())
}

fn publish_check(state: &ApiState, ctx: &RequestContext) -> Result<(), ApiError> {
    enforce(state, ctx, "clustertemplate:publish", None).map_err(|_| {
        ApiError::Handler(MagnumError::new(
            ErrorKind::ClusterTemplatePublishDenied,
            &[],
        ))
    })
}

async fn default_driver(state: &ApiState) -> Result<Option<String>, MagnumError> {
    match &state.drivers {
        Some(d) => d.default_driver(),
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------
// GET (list, detail, one)
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
    let args = pagination::parse_args(req, &LIST_ARGS)?;
    let mut ctx = context(state, req);
    let (rule, all_rule, resource_url) = if detail {
        (
            "clustertemplate:detail",
            "clustertemplate:detail_all_projects",
            "clustertemplates/detail",
        )
    } else {
        (
            "clustertemplate:get_all",
            "clustertemplate:get_all_all_projects",
            RESOURCE,
        )
    };
    enforce(state, &ctx, rule, None)?;
    if positional_marker.is_some() {
        // "/detail should only work against collections".
        return Err(MagnumError::new(ErrorKind::HTTPNotFound, &[]).into());
    }
    widen(state, &mut ctx, all_rule)?;
    let list = ListParams::from_args(&args);
    let limit = pagination::validate_limit(list.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&list.sort_dir)?;
    let db = db(state)?;
    let scope = Scope::from(&ctx);
    let marker = match &list.marker {
        Some(m) => Some(db_ct::get_by_uuid(db, &scope, m).await?),
        None => None,
    };
    let mut page = Page::all()
        .limit(limit)
        .sort(&list.sort_key, &list.sort_dir);
    if let Some(m) = &marker {
        page = page.marker(m);
    }
    let rows = db_ct::list(db, &scope, &ClusterTemplateFilters::default(), &page).await?;
    let last = rows.last().and_then(|t| t.uuid.clone()).unwrap_or_default();
    let next = pagination::next_link(
        &req.host_url,
        resource_url,
        &list.next_args(),
        limit,
        rows.len(),
        &last,
    );
    let items = rows.iter().map(|t| view(t, &req.host_url)).collect();
    Ok(Reply::ok(pagination::collection(RESOURCE, items, next)))
}

async fn get_one(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let mut ctx = context(state, req);
    widen(state, &mut ctx, "clustertemplate:get_one_all_projects")?;
    let t = get_resource(db(state)?, &Scope::from(&ctx), ident).await?;
    if t.hidden == Some(true) && !ctx.is_admin && t.project_id != ctx.project_id {
        return Err(MagnumError::new(
            ErrorKind::ClusterTemplateNotFound,
            &[("clustertemplate", &ident)],
        )
        .into());
    }
    if t.public != Some(true) {
        enforce(state, &ctx, "clustertemplate:get", Some(&target(&t)))?;
    }
    Ok(Reply::ok(view(&t, &req.host_url)))
}

// ---------------------------------------------------------------------------------------
// POST
// ---------------------------------------------------------------------------------------

/// WSME's `fromjson(ClusterTemplate, body)`.
fn type_body(body: &Value) -> Result<ApiObj, MagnumError> {
    let obj = match body {
        Value::Object(o) => o,
        // Magnum: 500s (`'NoneType' object has no attribute 'coe'`, `'list' object has no
        // attribute 'keys'`); OpenKeel: 400 with the same text.
        Value::Null => {
            return Err(MagnumError::client_side(
                "'NoneType' object has no attribute 'coe'",
            ))
        }
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
        .filter(|k| api_attr(k).is_none())
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
                "Unknown {word} for argument cluster_template: {}",
                unknown.join(", ")
            ),
        ));
    }
    let whole = || PyValue::from_json(body).py_str();
    let mut out = ApiObj::default();
    for a in API_ATTRS.iter() {
        match obj.get(a.name) {
            Some(raw) => {
                let v = PyValue::from_json(raw);
                let v = match fromjson(a.ty, &v) {
                    Ok(v) => v,
                    Err(FromJsonError::Value(msg)) => {
                        return Err(invalid_input("cluster_template", &whole(), &msg))
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
                let v = typecheck(a, &v)?;
                out.set(a.name, v);
            }
            None if a.mandatory => {
                return Err(invalid_input(a.name, "None", "Mandatory field missing."))
            }
            None => {}
        }
    }
    Ok(out)
}

/// Python's `random.choice(letters) + '-' + str(randint(1, 24)) + '-template'`.
fn generate_name() -> String {
    const LETTERS: [&str; 24] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi",
        "chi", "psi", "omega",
    ];
    let b = *uuid::Uuid::new_v4().as_bytes();
    let letter = LETTERS[usize::from(b[0]) % LETTERS.len()];
    let number = 1 + (usize::from(b[1]) % 24);
    format!("{letter}-{number}-template")
}

fn os_resources<'a>(d: &'a [(&'static str, PyValue)]) -> cloudv::OsResources<'a> {
    cloudv::OsResources {
        image_id: opt_str(dict_get(d, "image_id")),
        flavor_id: opt_str(dict_get(d, "flavor_id")),
        master_flavor_id: opt_str(dict_get(d, "master_flavor_id")),
        external_network_id: opt_str(dict_get(d, "external_network_id")),
        fixed_network: opt_str(dict_get(d, "fixed_network")),
        fixed_subnet: opt_str(dict_get(d, "fixed_subnet")),
    }
}

async fn post(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "cluster_template").await?;
    let mut ct = type_body(&raw)?;
    let ctx = context(state, req);
    let settings = &state.template_settings;

    // @validation.enforce_server_type()
    let coe = ct.attr("coe");
    let coe_s = shown_of(coe.as_ref());
    let server_type = ct.attr("server_type");
    validation::validate_server_type(coe_s, shown_of(server_type.as_ref()))?;
    // @validation.enforce_network_driver_types_create()
    let given = ct.attr("network_driver").filter(PyValue::truthy);
    let nd = validation::validate_network_driver(settings, coe_s, opt_str(given.as_ref()))?;
    if given.is_none() {
        ct.set("network_driver", PyValue::str(nd));
    }
    // @validation.enforce_volume_driver_types_create()
    let vd = ct.attr("volume_driver");
    validation::validate_volume_driver(coe_s, opt_str(vd.as_ref()))?;
    // @validation.enforce_volume_storage_size_create()
    validation::validate_volume_storage_size(
        &ct.attr("docker_volume_size").unwrap_or(PyValue::None),
        opt_str(ct.attr("docker_storage_driver").as_ref()),
    )?;
    // @validation.enforce_driver_supported()
    let cloud = cloud(state)?;
    let image_id = ct.attr("image_id");
    let chosen = cloudv::driver_image(
        cloud.as_ref(),
        &ctx,
        opt_str(image_id.as_ref()),
        opt_str(ct.attr("cluster_distro").as_ref()),
        opt_str(ct.attr("driver").as_ref()),
    )
    .await?;
    let driver_name = match chosen.driver {
        Some(d) => Some(d),
        None => default_driver(state).await?,
    };
    if let Some(d) = &driver_name {
        ct.set("driver", PyValue::str(d.clone()));
    }
    if let Some(d) = &state.drivers {
        d.supports(
            opt_str(server_type.as_ref()),
            chosen.cluster_distro.as_deref(),
            opt_str(coe.as_ref()),
            driver_name.as_deref(),
        )?;
    }

    // The handler body.
    enforce(state, &ctx, "clustertemplate:create", None)?;
    let mut d = ct.as_dict();
    cloudv::validate_os_resources(cloud.as_ref(), &ctx, &os_resources(&d), None).await?;
    let image =
        cloudv::validate_image(cloud.as_ref(), &ctx, opt_str(dict_get(&d, "image_id"))).await?;
    let distro = image.os_distro.clone();
    let put = |d: &mut Vec<(&'static str, PyValue)>, k: &'static str, v: PyValue| match d
        .iter_mut()
        .find(|(n, _)| *n == k)
    {
        Some(slot) => slot.1 = v,
        None => d.push((k, v)),
    };
    put(
        &mut d,
        "cluster_distro",
        distro.clone().map_or(PyValue::None, PyValue::str),
    );
    put(
        &mut d,
        "project_id",
        ctx.project_id.clone().map_or(PyValue::None, PyValue::str),
    );
    put(
        &mut d,
        "user_id",
        ctx.user_id.clone().map_or(PyValue::None, PyValue::str),
    );
    if dict_get(&d, "driver").is_none_or(PyValue::is_none) {
        let fallback = match image.magnum_driver() {
            Some(m) if !m.is_empty() => Some(m.to_string()),
            _ => default_driver(state).await?,
        };
        put(
            &mut d,
            "driver",
            fallback.map_or(PyValue::None, PyValue::str),
        );
    }
    let truthy = |k: &str| dict_get(&d, k).is_some_and(PyValue::truthy);
    if truthy("public") || truthy("hidden") {
        publish_check(state, &ctx)?;
    }
    if dict_get(&d, "labels").is_none() {
        put(&mut d, "labels", PyValue::Dict(Vec::new()));
    }
    let labels = dict_get(&d, "labels").cloned().unwrap_or(PyValue::None);
    if labels.is_none() {
        // Magnum: 500 `'NoneType' object has no attribute 'get'`.
        return Err(MagnumError::client_side("'NoneType' object has no attribute 'get'").into());
    }
    let boot = validation::boot_volume_labels(&labels);
    for key in ["flavor_id", "master_flavor_id"] {
        if let Some(f) = dict_get(&d, key) {
            cloudv::validate_flavor_root_volume_size(
                cloud.as_ref(),
                &ctx,
                Some(&boot),
                f.as_str(),
                settings.default_boot_volume_size,
            )
            .await
            .map_err(validation::client_error_for_bad_boot_volume)?;
        }
    }
    if matches!(
        dict_get(&d, "docker_storage_driver").and_then(PyValue::as_str),
        Some("devicemapper" | "overlay")
    ) {
        tracing::warn!("The devicemapper and overlay storage drivers are deprecated in favor of overlay2 in docker, and will be removed in a future release from docker. Users of the devicemapper and overlay storage drivers are recommended to migrate to a different storage driver, such as overlay2. overlay2 will be set as the default storage driver from Victoria cycle in Magnum.");
    }
    if opt_str(dict_get(&d, "coe")) == Some("kubernetes") && distro.as_deref() == Some("coreos") {
        // Magnum: 500 (the deprecation note it refers to does not exist).
        return Err(MagnumError::client_side(
            "'ClusterTemplatesController' object has no attribute '_coreos_deprecation_note'",
        )
        .into());
    }
    if !dict_get(&d, "name").is_some_and(PyValue::truthy) {
        put(&mut d, "name", PyValue::str(generate_name()));
    }

    // objects.ClusterTemplate(context, **dict): coercion, then create().
    let mut row = ClusterTemplate::default();
    for (k, v) in &d {
        let field = OBJ_FIELDS
            .iter()
            .find(|(n, _)| n == k)
            .map_or(ObjField::String { nullable: true }, |(_, f)| *f);
        let v = coerce(field, k, v)?;
        assign(&mut row, k, &v)?;
    }
    let created = db_ct::create(db(state)?, &row).await?;
    let uuid = created.uuid.clone().unwrap_or_default();
    let mut reply = Reply::json(201, view(&created, &req.host_url));
    reply.headers.push((
        HeaderName::from_static("location"),
        crate::links::build_url(&req.host_url, RESOURCE, &uuid, false),
    ));
    Ok(reply)
}

// ---------------------------------------------------------------------------------------
// PATCH
// ---------------------------------------------------------------------------------------

/// `objects.ClusterTemplate(context, **patched)`: coerce every key in the dict's order.
fn coerce_object(patched: &PyValue) -> Result<Vec<(String, PyValue)>, MagnumError> {
    let mut out = Vec::new();
    for (k, v) in patched.as_dict().unwrap_or_default() {
        let name = k.py_str();
        let field = OBJ_FIELDS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(ObjField::String { nullable: true }, |(_, f)| *f);
        let c = coerce(field, &name, v)?;
        out.push((name, c));
    }
    Ok(out)
}

/// `ClusterTemplate(**patched)`: the API constructor validates each object field it
/// declares, in the object's field order.
fn construct(patched: &PyValue) -> Result<ApiObj, MagnumError> {
    let mut out = ApiObj::default();
    for (name, _) in OBJ_FIELDS.iter() {
        let Some(a) = api_attr(name) else { continue };
        if let Some(v) = patched.get(name) {
            let v = typecheck(a, v)?;
            out.set(a.name, v);
        }
    }
    Ok(out)
}

async fn patch(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "patch").await?;
    let mut ops = PATCH_TYPE.parse(&raw)?;
    let mut ctx = context(state, req);
    let settings = &state.template_settings;
    let db = db(state)?;

    // The update decorators: the template as the caller normally sees it (no admin
    // widening yet), the patch applied, the object built, then the driver checks.
    let scoped = get_resource(db, &Scope::from(&ctx), ident).await?;
    let patched = patch::apply_jsonpatch(&doc_of(&scoped), &mut ops)?;
    let obj = coerce_object(&patched)?;
    let obj_get = |k: &str| obj.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let obj_coe = obj_get("coe");
    let nd = obj_get("network_driver")
        .filter(|v| v.truthy())
        .map(PyValue::py_str);
    validation::validate_network_driver(settings, shown_of(obj_coe), nd.as_deref())?;
    let raw_vd = patched
        .get("volume_driver")
        .filter(|v| v.truthy())
        .map(PyValue::py_str);
    let coe_shown = patched.get("coe").map(PyValue::py_str);
    let coe_raw = match (patched.get("coe"), &coe_shown) {
        (Some(PyValue::Str(s)), _) => Shown::Value(s),
        (Some(PyValue::None), _) => Shown::None,
        (Some(_), Some(s)) => Shown::Value(s),
        _ => Shown::Unset,
    };
    validation::validate_volume_driver(coe_raw, raw_vd.as_deref())?;

    // The handler.
    widen(state, &mut ctx, "clustertemplate:update_all_projects")?;
    let mut current = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce(
        state,
        &ctx,
        "clustertemplate:update",
        Some(&target(&current)),
    )?;
    let old_doc = doc_of(&current);
    let patched = patch::apply_jsonpatch(&old_doc, &mut ops)?;
    let new = construct(&patched)?;
    let new_dict = new.as_dict();
    let cloud = cloud(state)?;
    cloudv::validate_os_resources(cloud.as_ref(), &ctx, &os_resources(&new_dict), None).await?;
    let old_bool = |k: &str| old_doc.get(k).cloned().unwrap_or(PyValue::None);
    let new_bool = |k: &str| new.attr(k).unwrap_or(PyValue::None);
    if !old_bool("public").py_eq(&new_bool("public"))
        || !old_bool("hidden").py_eq(&new_bool("hidden"))
    {
        publish_check(state, &ctx)?;
    }
    // The root-volume check reads the *stored* labels.
    let boot = current
        .labels
        .as_ref()
        .and_then(|l| l.get("boot_volume_size").cloned())
        .map(|v| {
            let mut m = openkeel_core::objects::StringMap::new();
            m.insert("boot_volume_size".into(), v);
            m
        })
        .unwrap_or_default();
    for key in ["flavor_id", "master_flavor_id"] {
        let f = new.shown(key);
        let flavor = match new.attr(key) {
            Some(PyValue::None) => None,
            _ => Some(f.as_str()),
        };
        cloudv::validate_flavor_root_volume_size(
            cloud.as_ref(),
            &ctx,
            Some(&boot),
            flavor,
            settings.default_boot_volume_size,
        )
        .await
        .map_err(validation::client_error_for_bad_boot_volume)?;
    }

    // "Update only the fields that have changed".
    let mut changed: Vec<&'static str> = Vec::new();
    for (name, field) in OBJ_FIELDS.iter() {
        if api_attr(name).is_none() {
            continue;
        }
        let new_val = new.attr(name).unwrap_or(PyValue::None);
        let old_val = old_doc.get(name).cloned().unwrap_or(PyValue::None);
        if !old_val.py_eq(&new_val) {
            let c = coerce(*field, name, &new_val)?;
            assign(&mut current, name, &c)?;
            changed.push(name);
        }
    }
    if matches!(
        current.docker_storage_driver.as_deref(),
        Some("devicemapper" | "overlay")
    ) {
        tracing::warn!("The devicemapper and overlay storage drivers are deprecated in favor of overlay2 in docker.");
    }
    let uuid = current.uuid.clone().unwrap_or_default();
    if changed.contains(&"uuid") {
        return Err(MagnumError::invalid_parameter(
            "Cannot overwrite UUID for an existing ClusterTemplate.",
        )
        .into());
    }
    db_ct::update(db, &uuid, &current, &changed).await?;
    // The response is the in-memory object: `updated_at` is not refreshed.
    Ok(Reply::ok(view(&current, &req.host_url)))
}

// ---------------------------------------------------------------------------------------
// DELETE
// ---------------------------------------------------------------------------------------

async fn delete(state: &ApiState, req: &RequestInfo, ident: &str) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let mut ctx = context(state, req);
    widen(state, &mut ctx, "clustertemplate:delete_all_projects")?;
    let db = db(state)?;
    let t = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce(state, &ctx, "clustertemplate:delete", Some(&target(&t)))?;
    db_ct::destroy(db, t.uuid.as_deref().unwrap_or_default()).await?;
    Ok(Reply::empty(204))
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::pyjson::dumps;

    #[test]
    fn view_shape() {
        let t = ClusterTemplate {
            id: 1,
            uuid: Some("u".into()),
            name: Some("t".into()),
            coe: Some("kubernetes".into()),
            created_at: chrono::NaiveDate::from_ymd_opt(2026, 7, 17)
                .and_then(|d| d.and_hms_opt(6, 52, 54)),
            public: Some(false),
            ..Default::default()
        };
        let v = dumps(&view(&t, "http://h"));
        assert!(
            v.starts_with(r#"{"uuid": "u", "name": "t", "coe": "kubernetes", "image_id": null"#),
            "{v}"
        );
        assert!(v.contains(r#""cluster_distro": null, "links": [{"href": "http://h/v1/clustertemplates/u", "rel": "self"}, {"href": "http://h/clustertemplates/u", "rel": "bookmark"}], "http_proxy": null"#), "{v}");
        assert!(
            v.ends_with(
                r#""driver": null, "created_at": "2026-07-17T06:52:54+00:00", "updated_at": null}"#
            ),
            "{v}"
        );
        assert!(
            v.contains(r#""registry_enabled": false, "labels": null"#),
            "{v}"
        );
        assert!(v.contains(r#""floating_ip_enabled": true"#), "{v}");
    }

    #[test]
    fn body_typing() {
        let e = |b: Value| type_body(&b).unwrap_err().message().to_string();
        let base =
            serde_json::json!({"coe": "kubernetes", "image_id": "i", "apiserver_port": "abc"});
        assert_eq!(e(base), "Invalid input for field/attribute cluster_template. Value: '{'coe': 'kubernetes', 'image_id': 'i', 'apiserver_port': 'abc'}'. invalid literal for int() with base 10: 'abc'");
        assert_eq!(
            e(serde_json::json!({"coe": "kubernetes"})),
            "Invalid input for field/attribute image_id. Value: 'None'. Mandatory field missing."
        );
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "foo": 1})),
            "Unknown attribute for argument cluster_template: foo"
        );
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "project_id": "p"})),
            "Invalid input for field/attribute project_id. Value: 'p'. Cannot set read only field."
        );
        assert_eq!(e(serde_json::json!({"image_id": "i", "created_at": "2020-01-01T00:00:00"})), "Invalid input for field/attribute created_at. Value: '2020-01-01 00:00:00'. Cannot set read only field.");
        assert_eq!(e(serde_json::json!({"image_id": "i", "server_type": "xx"})), "Invalid input for field/attribute server_type. Value: 'xx'. Value should be one of: bm, vm");
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "uuid": 5})),
            "Expected a uuid but received 5."
        );
        let ok =
            type_body(&serde_json::json!({"image_id": "i", "apiserver_port": 5000.7})).unwrap();
        assert_eq!(ok.attr("apiserver_port"), Some(PyValue::Int(5000)));
        assert_eq!(ok.attr("server_type"), Some(PyValue::str("vm")));
        assert_eq!(ok.attr("flavor_id"), None);
    }

    #[test]
    fn generated_names() {
        let n = generate_name();
        assert!(n.ends_with("-template"));
        let num: u32 = n.split('-').nth(1).unwrap().parse().unwrap();
        assert!((1..=24).contains(&num));
    }
}
