//! The JSON Schemas (draft 2020-12, OpenAPI 3.1's dialect) of the API's bodies, built from
//! the attribute lists the handlers type request bodies with and the views print:
//! `cluster_templates::API_ATTRS`, `clusters::types::{cluster, nodegroup, actions}`,
//! `quotas::API_ATTRS`, `certificates::ATTRS`, `federations::API_ATTRS`,
//! `mservices::API_ATTRS`. An attribute added to one of those lists appears in the
//! document; the snapshot test then asks for the document to be regenerated.
//!
//! Two modes: a request schema has the attributes a client may send (read-only ones are
//! refused by WSME: `Cannot set read only field`), WSME's constraints (lengths, bounds,
//! patterns) and the mandatory ones as `required`; a response schema has every attribute
//! the view prints, types and enumerations without the input constraints (a row written by
//! Magnum itself need not satisfy them), the keys always printed as `required`, and no
//! other key (`additionalProperties: false`).

use crate::resources::clusters::types;
use crate::resources::{certificates, cluster_templates, federations, mservices, quotas};
use crate::validation::{Attr, AttrDefault, AttrType, CLUSTER_NAME_PATTERN};
use serde_json::{json, Map, Value};

/// The type of an attribute as the document shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Uuid,
    Str {
        min: usize,
        max: usize,
        pattern: Option<&'static str>,
    },
    Text,
    Enum(&'static [&'static str]),
    /// `types.dns_list`: comma-separated addresses.
    Dns,
    Int {
        min: Option<i64>,
        max: Option<i64>,
    },
    Bool,
    /// `DictType(text, MultiType(text, int, bool, float))`.
    Labels,
    /// `DictType(text, text)`.
    StrMap,
    TextList,
    DictList,
    Links,
    DateTime,
}

/// One attribute of a body.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub readonly: bool,
    pub mandatory: bool,
    pub default: Option<Value>,
    /// Shown in the document (microversion notes).
    pub description: Option<&'static str>,
}

impl Field {
    fn new(name: &'static str, kind: Kind) -> Field {
        Field {
            name,
            kind,
            readonly: false,
            mandatory: false,
            default: None,
            description: None,
        }
    }
}

impl From<&Attr> for Field {
    fn from(a: &Attr) -> Field {
        let kind = match a.ty {
            AttrType::Uuid => Kind::Uuid,
            AttrType::Str {
                min,
                max,
                name_pattern,
            } => Kind::Str {
                min,
                max,
                pattern: name_pattern.then_some(CLUSTER_NAME_PATTERN),
            },
            AttrType::Text => Kind::Text,
            AttrType::Enum { values, .. } => Kind::Enum(values),
            AttrType::Dns => Kind::Dns,
            AttrType::Int { min, max } => Kind::Int { min, max },
            AttrType::Bool => Kind::Bool,
            AttrType::Labels => Kind::Labels,
            AttrType::StrDict => Kind::StrMap,
            AttrType::TextList => Kind::TextList,
            AttrType::DictList => Kind::DictList,
            AttrType::Links => Kind::Links,
            AttrType::DateTime => Kind::DateTime,
        };
        Field {
            readonly: a.readonly,
            mandatory: a.mandatory,
            default: a.default.map(|d| match d {
                AttrDefault::None => Value::Null,
                AttrDefault::Bool(b) => Value::Bool(b),
                AttrDefault::Str(s) => Value::from(s),
                AttrDefault::Int(i) => Value::from(i),
                AttrDefault::EmptyList => Value::Array(Vec::new()),
            }),
            ..Field::new(a.name, kind)
        }
    }
}

/// A field of the cluster, nodegroup and action types (typed by `clusters::wsme`): their
/// integers are also bounded by the `int(11)` columns (`wsme::assign` refuses larger ones),
/// and a few carry microversion notes.
fn cluster_field(a: &Attr) -> Field {
    let mut f = Field::from(a);
    if let Kind::Int { max, .. } = &mut f.kind {
        *max = Some(max.map_or(i64::from(i32::MAX), |m| m.min(i64::from(i32::MAX))));
    }
    f.description = match a.name {
        "stack_id" => Some("Up to microversion 1.12 (named `cluster_id` from 1.13)."),
        "cluster_id" if a.ty == AttrType::Text => {
            Some("From microversion 1.13 (named `stack_id` before).")
        }
        "faults" => Some("Only in the `GET` of a cluster whose status is a `*_FAILED` one."),
        _ => None,
    };
    f
}

/// Whether a schema describes what a client sends or what the API answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Request,
    Response,
}

/// Which keys of a response object are always there.
#[derive(Debug, Clone, Copy)]
pub enum Required {
    All,
    AllBut(&'static [&'static str]),
    Only(&'static [&'static str]),
}

/// `"type": [t, "null"]`: WSME accepts and prints `null` for any attribute.
fn nullable(t: &str) -> Value {
    json!([t, "null"])
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The schema of one attribute.
pub fn field_schema(f: &Field, mode: Mode) -> Value {
    let request = mode == Mode::Request;
    let mut s = Map::new();
    match f.kind {
        Kind::Uuid => {
            s.insert("type".into(), nullable("string"));
            s.insert("format".into(), json!("uuid"));
        }
        Kind::Str { min, max, pattern } => {
            s.insert("type".into(), nullable("string"));
            if request {
                if min > 0 {
                    s.insert("minLength".into(), json!(min));
                }
                if max != usize::MAX {
                    s.insert("maxLength".into(), json!(max));
                }
                if let Some(p) = pattern {
                    s.insert("pattern".into(), json!(p));
                }
            }
        }
        Kind::Text | Kind::Dns => {
            s.insert("type".into(), nullable("string"));
        }
        Kind::Enum(values) => {
            let mut all: Vec<Value> = values.iter().map(|v| json!(v)).collect();
            all.push(Value::Null);
            s.insert("enum".into(), Value::Array(all));
        }
        Kind::Int { min, max } => {
            s.insert("type".into(), nullable("integer"));
            if request {
                if let Some(m) = min {
                    s.insert("minimum".into(), json!(m));
                }
                if let Some(m) = max {
                    s.insert("maximum".into(), json!(m));
                }
            }
        }
        Kind::Bool => {
            s.insert("type".into(), nullable("boolean"));
        }
        Kind::Labels => {
            s.insert("type".into(), nullable("object"));
            s.insert(
                "additionalProperties".into(),
                json!({"type": ["string", "integer", "boolean", "number", "null"]}),
            );
        }
        Kind::StrMap => {
            s.insert("type".into(), nullable("object"));
            s.insert(
                "additionalProperties".into(),
                json!({"type": ["string", "null"]}),
            );
        }
        Kind::TextList => {
            s.insert("type".into(), nullable("array"));
            s.insert("items".into(), json!({"type": ["string", "null"]}));
        }
        Kind::DictList => {
            s.insert("type".into(), nullable("array"));
            s.insert(
                "items".into(),
                json!({"type": ["object", "null"], "additionalProperties": {"type": ["string", "null"]}}),
            );
        }
        Kind::Links => {
            s.insert("type".into(), json!("array"));
            s.insert("items".into(), reference("Link"));
        }
        Kind::DateTime => {
            s.insert("type".into(), nullable("string"));
            s.insert("format".into(), json!("date-time"));
        }
    }
    if let Some(d) = &f.default {
        s.insert("default".into(), d.clone());
    }
    if let Some(d) = f.description {
        s.insert("description".into(), json!(d));
    }
    Value::Object(s)
}

/// An object of `fields`: a request body (writable attributes, mandatory ones required) or
/// a response (every attribute, `required` as given).
pub fn object(fields: &[Field], mode: Mode, required: Required) -> Value {
    let mut props = Map::new();
    let mut req: Vec<&str> = Vec::new();
    for f in fields {
        if mode == Mode::Request && f.readonly {
            continue;
        }
        props.insert(f.name.to_string(), field_schema(f, mode));
        let needed = match (mode, required) {
            (Mode::Request, _) => f.mandatory,
            (Mode::Response, Required::All) => true,
            (Mode::Response, Required::AllBut(but)) => !but.contains(&f.name),
            (Mode::Response, Required::Only(only)) => only.contains(&f.name),
        };
        if needed {
            req.push(f.name);
        }
    }
    json!({
        "type": "object",
        "properties": props,
        "required": req,
        "additionalProperties": false,
    })
}

fn fields<'a>(attrs: impl IntoIterator<Item = &'a Attr>) -> Vec<Field> {
    attrs.into_iter().map(Field::from).collect()
}

fn cluster_fields<'a>(attrs: impl IntoIterator<Item = &'a Attr>) -> Vec<Field> {
    attrs.into_iter().map(cluster_field).collect()
}

/// `{"<key>": [items], "next": "<url>"}` (`next` only when the page is full).
fn collection(key: &str, item: &str, next: bool) -> Value {
    let mut props = Map::new();
    props.insert(
        key.into(),
        json!({"type": "array", "items": reference(item)}),
    );
    if next {
        props.insert(
            "next".into(),
            json!({"type": "string", "format": "uri", "description": "The next page's URL, when the page is full."}),
        );
    }
    json!({"type": "object", "properties": props, "required": [key], "additionalProperties": false})
}

fn federation_fields() -> Vec<Field> {
    let mut out: Vec<Field> = fields(federations::API_ATTRS.iter());
    for f in &mut out {
        // `[wtypes.text]`, typed by its own function at its place.
        if f.name == "member_ids" {
            f.kind = Kind::TextList;
        }
    }
    // the base's `updated_at`, beside `created_at`
    out.push(Field {
        readonly: true,
        ..Field::new("updated_at", Kind::DateTime)
    });
    out
}

fn quota_fields() -> Vec<Field> {
    let mut out: Vec<Field> = fields(quotas::API_ATTRS.iter());
    for name in ["created_at", "updated_at"] {
        out.push(Field {
            readonly: true,
            ..Field::new(name, Kind::DateTime)
        });
    }
    out
}

fn certificate_fields() -> Vec<Field> {
    let mut out: Vec<Field> = fields(certificates::ATTRS.iter());
    out.insert(
        1,
        Field {
            readonly: true,
            ..Field::new("links", Kind::Links)
        },
    );
    out
}

/// Every schema of `components.schemas`, by name, in a fixed order.
pub fn all() -> Map<String, Value> {
    use Mode::{Request, Response};
    let mut s = Map::new();
    let mut put = |name: &str, v: Value| {
        s.insert(name.to_string(), v);
    };

    // -- common
    put(
        "Link",
        json!({
            "type": "object",
            "properties": {
                "href": {"type": "string"},
                "rel": {"type": "string"},
                "type": {"type": "string"},
            },
            "required": ["href", "rel"],
            "additionalProperties": false,
        }),
    );
    put(
        "JsonPatch",
        json!({
            "type": "array",
            "description": "Magnum's JSON Patch dialect: values are Python literals given as strings or JSON values.",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"enum": ["add", "replace", "remove"]},
                    "path": {"type": "string"},
                    "value": {},
                },
                "required": ["op", "path"],
                "additionalProperties": false,
            },
        }),
    );
    put(
        "UuidReply",
        json!({
            "type": "object",
            "description": "The 202 of an operation the conductor runs: the cluster's (or federation's) uuid.",
            "properties": {"uuid": {"type": ["string", "null"], "format": "uuid"}},
            "required": ["uuid"],
            "additionalProperties": false,
        }),
    );
    put("ErrorEnvelope", error_envelope());
    put("ErrorEntry", error_entry());
    put("MicroversionErrorEntry", microversion_error_entry());
    put(
        "KeystoneUnauthorized",
        json!({
            "type": "object",
            "description": "keystonemiddleware's 401 (outside Magnum's envelope).",
            "properties": {"error": {
                "type": "object",
                "properties": {
                    "code": {"type": "integer"},
                    "title": {"type": "string"},
                    "message": {"type": "string"},
                },
                "required": ["code", "title", "message"],
                "additionalProperties": false,
            }},
            "required": ["error"],
            "additionalProperties": false,
        }),
    );
    put(
        "KeystoneUnavailable",
        json!({
            "type": "object",
            "description": "keystonemiddleware's 503 when tokens cannot be validated.",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "title": {"type": "string"},
            },
            "required": ["code", "message", "title"],
            "additionalProperties": false,
        }),
    );

    // -- version documents
    put("RootDocument", root_document());
    put("V1Document", v1_document());

    // -- cluster templates
    let ct: Vec<Field> = fields(cluster_templates::API_ATTRS.iter());
    put("ClusterTemplate", object(&ct, Response, Required::All));
    put("ClusterTemplateCreate", object(&ct, Request, Required::All));
    put(
        "ClusterTemplateCollection",
        collection("clustertemplates", "ClusterTemplate", true),
    );

    // -- clusters
    let cluster: Vec<Field> = cluster_fields(types::cluster::ATTRS.iter());
    let version_named: &[&str] = &["stack_id", "cluster_id"];
    put(
        "Cluster",
        object(
            &cluster,
            Response,
            Required::AllBut(&["stack_id", "cluster_id", "faults"]),
        ),
    );
    put(
        "ClusterSummary",
        object(
            &cluster_fields(types::cluster::SUMMARY.iter().copied()),
            Response,
            Required::AllBut(version_named),
        ),
    );
    put("ClusterCreate", object(&cluster, Request, Required::All));
    put(
        "ClusterCollection",
        collection("clusters", "ClusterSummary", true),
    );
    put(
        "ClusterDetailCollection",
        collection("clusters", "Cluster", true),
    );
    put(
        "ClusterResize",
        object(
            &cluster_fields(types::actions::RESIZE.iter()),
            Request,
            Required::All,
        ),
    );
    let mut upgrade: Vec<Field> = cluster_fields(types::actions::UPGRADE.iter());
    for f in &mut upgrade {
        f.mandatory |= types::actions::UPGRADE_REFUSED_WITHOUT.contains(&f.name);
    }
    put("ClusterUpgrade", object(&upgrade, Request, Required::All));

    // -- nodegroups
    let ng: Vec<Field> = cluster_fields(types::nodegroup::ATTRS.iter());
    // what `view::ng_full` always prints: computed values and declared defaults
    put(
        "NodeGroup",
        object(
            &ng,
            Response,
            Required::Only(&[
                "name",
                "links",
                "node_count",
                "role",
                "min_node_count",
                "max_node_count",
                "merge_labels",
                "labels_overridden",
                "labels_added",
                "labels_skipped",
            ]),
        ),
    );
    put(
        "NodeGroupSummary",
        object(
            &cluster_fields(types::nodegroup::SUMMARY.iter().copied()),
            Response,
            Required::All,
        ),
    );
    put("NodeGroupCreate", object(&ng, Request, Required::All));
    put(
        "NodeGroupCollection",
        collection("nodegroups", "NodeGroupSummary", true),
    );

    // -- certificates
    let cert = certificate_fields();
    put(
        "Certificate",
        object(&cert, Response, Required::Only(&["cluster_uuid", "links"])),
    );
    put("CertificateCreate", object(&cert, Request, Required::All));

    // -- quotas
    let quota = quota_fields();
    put(
        "Quota",
        object(
            &quota,
            Response,
            Required::Only(&["hard_limit", "project_id", "resource"]),
        ),
    );
    put("QuotaBody", object(&quota, Request, Required::All));
    put("QuotaCollection", collection("quotas", "Quota", true));

    // -- stats, services
    put(
        "Stats",
        object(
            &[
                Field::new(
                    "clusters",
                    Kind::Int {
                        min: Some(0),
                        max: None,
                    },
                ),
                Field::new(
                    "nodes",
                    Kind::Int {
                        min: Some(0),
                        max: None,
                    },
                ),
            ],
            Response,
            Required::All,
        ),
    );
    put(
        "MagnumService",
        object(
            &fields(mservices::API_ATTRS.iter()),
            Response,
            Required::All,
        ),
    );
    put(
        "MagnumServiceCollection",
        collection("mservices", "MagnumService", false),
    );

    // -- federations
    let fed = federation_fields();
    put("Federation", object(&fed, Response, Required::All));
    put(
        "FederationSummary",
        object(
            &fed,
            Response,
            Required::Only(&[
                "uuid",
                "name",
                "hostcluster_id",
                "member_ids",
                "status",
                "properties",
                "links",
            ]),
        ),
    );
    put("FederationCreate", object(&fed, Request, Required::All));
    put(
        "FederationCollection",
        collection("federations", "FederationSummary", true),
    );
    put(
        "FederationDetailCollection",
        collection("federations", "Federation", true),
    );
    s
}

/// Magnum's error envelope (`magnum/api/middleware/parsable_error.py`): `{"errors": [...]}`, one entry (none for
/// a `HEAD`).
fn error_envelope() -> Value {
    json!({
        "type": "object",
        "description": "Magnum's error envelope. A HEAD request's error carries `{\"errors\": []}`.",
        "properties": {"errors": {
            "type": "array",
            "maxItems": 1,
            "items": {"anyOf": [reference("ErrorEntry"), reference("MicroversionErrorEntry")]},
        }},
        "required": ["errors"],
        "additionalProperties": false,
    })
}

fn error_entry() -> Value {
    json!({
        "type": "object",
        "description": "An error of a handler (`code` `client` / `server`, `title` the detail's first sentence) or of the routing (`code` empty; `title` the reason phrase and `detail` empty unless the client prefers JSON).",
        "properties": {
            "request_id": {"type": "string"},
            "code": {"enum": ["client", "server", ""]},
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "title": {"type": "string"},
            "detail": {"type": "string"},
            "links": {"type": "array", "maxItems": 0},
        },
        "required": ["request_id", "code", "status", "title", "detail", "links"],
        "additionalProperties": false,
    })
}

fn microversion_error_entry() -> Value {
    json!({
        "type": "object",
        "description": "A microversion outside the supported range (406). `description` only when the client prefers JSON.",
        "properties": {
            "code": {"const": "magnum.microversion-unsupported"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "max_version": {"type": "string"},
            "min_version": {"type": "string"},
            "links": {"type": "array", "items": reference("Link")},
        },
        "required": ["code", "title", "max_version", "min_version", "links"],
        "additionalProperties": false,
    })
}

fn root_document() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "versions": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "links": {"type": "array", "items": reference("Link")},
                    "status": {"type": "string"},
                    "max_version": {"type": "string"},
                    "min_version": {"type": "string"},
                },
                "required": ["id", "links", "status", "max_version", "min_version"],
                "additionalProperties": false,
            }},
        },
        "required": ["name", "description", "versions"],
        "additionalProperties": false,
    })
}

fn v1_document() -> Value {
    let links = json!({"type": "array", "items": reference("Link")});
    let mut props = Map::new();
    props.insert("id".into(), json!({"type": "string"}));
    props.insert(
        "media_types".into(),
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {"base": {"type": "string"}, "type": {"type": "string"}},
            "required": ["base", "type"],
            "additionalProperties": false,
        }}),
    );
    props.insert("links".into(), links.clone());
    let mut required = vec!["id", "media_types", "links"];
    for r in crate::versions::V1_RESOURCES
        .iter()
        .chain(&["nodegroups", "credentials"])
    {
        props.insert((*r).to_string(), links.clone());
        required.push(r);
    }
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}
