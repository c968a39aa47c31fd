//! `/v1/quotas` (`magnum/api/controllers/v1/quota.py`): the five routes, pecan's routing
//! answers for the paths around them, and the quota's wire shape.
//!
//! Handlers read as Magnum's: context → (decorator) → policy → database → view ([`view`]).

use crate::error::ApiError;
use crate::pagination;
use crate::query::{self, ArgSpec, ArgType};
use crate::request::{context, enforce};
use crate::response::Reply;
use crate::validation::{
    self, fromjson, invalid_input, str_ty, typecheck, Attr, AttrType, FromJsonError,
};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::Method;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Quota, QuotaResource};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{quota as db_quota, Database, Page, QuotaFilters};
use serde_json::{Map, Value};

/// The methods pecan lists in `Allow` for every quota path.
const ALLOW: &str = "DELETE, GET, PATCH, POST";
/// The collection name in URLs and bodies.
const RESOURCE: &str = "quotas";

/// Route a request under `/v1/quotas`; `rest` are the segments after the collection name.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    let m = &req.method;
    match rest {
        [] => match *m {
            Method::GET => get_all(state, req).await,
            Method::POST => post(state, req, body).await,
            Method::PATCH | Method::DELETE => Err(crate::resources::clusters::missing_path_argument(req, "project_id")),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [ident] => match *m {
            // `/detail` is a declared custom action without a handler: `get_one("detail")`.
            Method::GET | Method::PATCH | Method::DELETE => Err(crate::resources::clusters::missing_path_argument(req, "resource")),
            Method::POST => Err(invalid_input(
                "quota",
                ident,
                "unable to convert to Quota. Error: Quota.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        // `/{p}/detail` is `get_one(p, "detail")` for pecan.
        [project_id, resource] => match *m {
            Method::GET => get_one(state, req, project_id, resource).await,
            Method::PATCH => patch(state, req, body, project_id, resource).await,
            Method::DELETE => delete(state, req, project_id, resource).await,
            Method::POST => Err(ApiError::not_found()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::beyond_arguments(m, ALLOW)),
    }
}

// ---------------------------------------------------------------------------------------
// Fields and view
// ---------------------------------------------------------------------------------------

/// The API type's attributes in declaration order (typing order and response order; the
/// base's `created_at` / `updated_at` follow in the view).
pub const API_ATTRS: [Attr; 4] = [
    Attr::new(
        "id",
        AttrType::Int {
            min: Some(1),
            max: None,
        },
    ),
    Attr::new(
        "hard_limit",
        AttrType::Int {
            min: Some(0),
            max: None,
        },
    ),
    Attr::new("project_id", str_ty(1, 255)),
    Attr::new(
        "resource",
        AttrType::Enum {
            values: QuotaResource::ALL,
            shown: "Cluster",
        },
    ),
];

/// A stored quota as the API shows it.
pub fn view(q: &Quota) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(q.id));
    m.insert("hard_limit".into(), Value::from(q.hard_limit));
    m.insert("project_id".into(), opt(q.project_id.as_deref()));
    m.insert("resource".into(), opt(q.resource.as_deref()));
    m.insert("created_at".into(), time(q.created_at.as_ref()));
    m.insert("updated_at".into(), time(q.updated_at.as_ref()));
    Value::Object(m)
}

fn opt(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.to_string()))
}

fn time(t: Option<&chrono::NaiveDateTime>) -> Value {
    t.map_or(Value::Null, |d| {
        Value::String(crate::resources::cluster_templates::isoformat(d))
    })
}

/// A typed quota body (`Quota` after WSME's `fromjson`): the attributes given, in
/// declaration order, with the `wsattr` defaults for the rest (`hard_limit` 1, `project_id`
/// None, `resource` `Cluster`) as `as_dict()` reports them.
#[derive(Debug, Clone, PartialEq)]
struct QuotaBody {
    id: Option<i32>,
    hard_limit: i32,
    project_id: Option<String>,
    resource: String,
}

fn type_body(body: &Value, argname: &str) -> Result<QuotaBody, MagnumError> {
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
        .filter(|k| !API_ATTRS.iter().any(|a| a.name == *k))
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
    let mut out = QuotaBody {
        id: None,
        hard_limit: 1,
        project_id: None,
        resource: QuotaResource::CLUSTER.to_string(),
    };
    for a in API_ATTRS.iter() {
        let Some(raw) = obj.get(a.name) else {
            continue;
        };
        let v = PyValue::from_json(raw);
        let v = match fromjson(a.ty, &v) {
            Ok(v) => v,
            Err(FromJsonError::Value(msg)) => return Err(invalid_input(argname, &whole(), &msg)),
            Err(FromJsonError::Other(msg)) => return Err(MagnumError::client_side(msg)),
        };
        let v = typecheck(a, &v)?;
        match (a.name, &v) {
            ("id", PyValue::Int(i)) => out.id = Some(to_i32(a.name, *i)?),
            ("hard_limit", PyValue::Int(i)) => out.hard_limit = to_i32(a.name, *i)?,
            ("project_id", PyValue::Str(s)) => out.project_id = Some(s.clone()),
            ("resource", PyValue::Str(s)) => out.resource = s.clone(),
            // `null`: the attribute keeps its default (None for `project_id`).
            ("project_id", PyValue::None) => out.project_id = None,
            _ => {}
        }
    }
    Ok(out)
}

/// The column is an `int(11)`; Magnum lets the database refuse larger values (500), OpenKeel
/// answers WSME's bound message (docs/differences.md).
fn to_i32(name: &str, i: i128) -> Result<i32, MagnumError> {
    i32::try_from(i).map_err(|_| {
        invalid_input(
            name,
            &i.to_string(),
            &format!("Value should be lower or equal to {}", i32::MAX),
        )
    })
}

// ---------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------

/// `get_all`'s query arguments (also the route catalogue's, `crate::openapi`).
pub const GET_ALL_ARGS: [ArgSpec; 5] = [
    ArgSpec {
        name: "marker",
        ty: ArgType::Int,
    },
    ArgSpec {
        name: "limit",
        ty: ArgType::Int,
    },
    ArgSpec {
        name: "sort_key",
        ty: ArgType::Text,
    },
    ArgSpec {
        name: "sort_dir",
        ty: ArgType::Text,
    },
    ArgSpec {
        name: "all_tenants",
        ty: ArgType::Bool,
    },
];

async fn get_all(state: &ApiState, req: &RequestInfo) -> Result<Reply, ApiError> {
    let args = query::parse_args(req, &GET_ALL_ARGS)?;
    let ctx = context(state, req);
    enforce(state, &ctx, "quota:get_all", None)?;
    let all_tenants = args.bool("all_tenants").unwrap_or(false);
    let mut filters = QuotaFilters::default();
    if !ctx.is_admin || !all_tenants {
        filters.project_id = ctx.project_id.clone();
    }
    let limit = pagination::validate_limit(args.int("limit"), state.template_settings.max_limit)?;
    let sort_key = args.text("sort_key").unwrap_or("id").to_string();
    let sort_dir = args.text("sort_dir").unwrap_or("asc").to_string();
    pagination::validate_sort_dir(&sort_dir)?;
    let db = db(state)?;
    let marker = match args.int("marker").filter(|m| *m != 0) {
        Some(m) => Some(db_quota::get_by_id(db, i64::try_from(m).unwrap_or(i64::MAX)).await?),
        None => None,
    };
    let mut page = Page::all().limit(limit).sort(&sort_key, &sort_dir);
    if let Some(m) = &marker {
        page = page.marker(m);
    }
    let rows = db_quota::list(db, &filters, &page).await?;
    let last = rows.last().map(|q| q.id.to_string()).unwrap_or_default();
    let next = pagination::next_link(
        &req.host_url,
        RESOURCE,
        &[("sort_key", &sort_key), ("sort_dir", &sort_dir)],
        limit,
        rows.len(),
        &last,
    );
    let items = rows.iter().map(view).collect();
    Ok(Reply::ok(pagination::collection(RESOURCE, items, next)))
}

async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    project_id: &str,
    resource: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = context(state, req);
    enforce(state, &ctx, "quota:get", None)?;
    if !ctx.is_admin && Some(project_id) != ctx.project_id.as_deref() {
        return Err(MagnumError::new(ErrorKind::NotAuthorized, &[]).into());
    }
    let db = db(state)?;
    match db_quota::get_by_project_id_resource(db, project_id, resource).await {
        Ok(q) => Ok(Reply::ok(view(&q))),
        Err(openkeel_db::DbError::QuotaNotFound { .. }) => {
            // No explicit quota: the default limit, with the attribute defaults.
            let mut m = Map::new();
            m.insert(
                "hard_limit".into(),
                Value::from(state.clusters.max_clusters_per_project),
            );
            m.insert("project_id".into(), Value::String(project_id.to_string()));
            m.insert(
                "resource".into(),
                Value::String(QuotaResource::CLUSTER.to_string()),
            );
            Ok(Reply::ok(Value::Object(m)))
        }
        Err(e) => Err(e.into()),
    }
}

async fn post(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "quota").await?;
    let q = type_body(&raw, "quota")?;
    let ctx = context(state, req);
    // @validation.enforce_valid_project_id_on_create(): Keystone `get_project`. Magnum asks
    // Keystone about `None` too and answers its 500; OpenKeel refuses it here with the
    // handler's own message (docs/differences.md).
    let Some(project_id) = q.project_id.clone().filter(|p| !p.is_empty()) else {
        return Err(invalid_project());
    };
    let cloud = state
        .cloud
        .as_ref()
        .ok_or_else(|| ApiError::from(MagnumError::internal("no cloud configured")))?;
    openkeel_cloud::validate::validate_project(cloud.as_ref(), &ctx, &project_id).await?;
    enforce(state, &ctx, "quota:create", None)?;
    let row = Quota {
        id: q.id.unwrap_or(0),
        created_at: None,
        updated_at: None,
        project_id: Some(project_id),
        resource: Some(q.resource),
        hard_limit: q.hard_limit,
    };
    let created = db_quota::create(db(state)?, &row).await?;
    Ok(Reply::json(201, view(&created)))
}

fn invalid_project() -> ApiError {
    MagnumError::invalid_parameter("Must provide a valid project ID.").into()
}

async fn patch(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    project_id: &str,
    resource: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "quotapatch").await?;
    let q = type_body(&raw, "quotapatch")?;
    let ctx = context(state, req);
    enforce(state, &ctx, "quota:update", None)?;
    // `project_id` / `resource` come from the path; `hard_limit` is the given value or the
    // attribute default (1), as Magnum's `as_dict()` gives it. A given `id` reaches the
    // database, which refuses to overwrite it (Magnum rewrites the row's id).
    let values = Quota {
        id: q.id.unwrap_or(0),
        created_at: None,
        updated_at: None,
        project_id: Some(project_id.to_string()),
        resource: Some(resource.to_string()),
        hard_limit: q.hard_limit,
    };
    let mut fields = vec!["hard_limit", "project_id", "resource"];
    if q.id.is_some() {
        fields.insert(0, "id");
    }
    let updated = db_quota::update(db(state)?, project_id, &values, &fields).await?;
    Ok(Reply::json(202, view(&updated)))
}

async fn delete(
    state: &ApiState,
    req: &RequestInfo,
    project_id: &str,
    resource: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = context(state, req);
    enforce(state, &ctx, "quota:delete", None)?;
    db_quota::delete(db(state)?, project_id, resource).await?;
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
    use serde_json::json;

    #[test]
    fn body_defaults_and_typing() {
        let b = type_body(&json!({"project_id": "p"}), "quota").unwrap();
        assert_eq!(b.hard_limit, 1);
        assert_eq!(b.resource, "Cluster");
        assert_eq!(b.id, None);
        let e = type_body(&json!({"foo": 1}), "quotapatch").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Unknown attribute for argument quotapatch: foo"
        );
        let e = type_body(&json!({"hard_limit": -1}), "quota").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid input for field/attribute hard_limit. Value: '-1'. Value should be greater or equal to 0"
        );
    }
}
