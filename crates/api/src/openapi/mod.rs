//! The OpenAPI 3.1 document of Magnum's API, generated from the code: the route catalogue
//! ([`catalogue::ROUTES`]) and the body schemas built from the handlers' attribute lists
//! ([`schemas`]). `openkeel-openapi-generator` prints [`to_json`]; `docs/openapi.json` is its
//! output, kept current by `crates/cli/tests/openapi.rs`.

pub mod catalogue;
pub mod schemas;

use crate::microversion::{self, MAX};
use crate::query::{ArgSpec, ArgType};
use catalogue::{Errors, Route, Versions, ROUTES, TAGS};
use serde_json::{json, Map, Value};

/// The service name of the version headers (`container-infra`).
const SERVICE: &str = microversion::SERVICE_NAME;

/// The document, in a fixed key order.
pub fn document() -> Value {
    let mut paths = Map::new();
    for r in ROUTES.iter() {
        let item = paths
            .entry(r.path.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(item) = item {
            item.insert(r.method.to_ascii_lowercase(), operation(r));
        }
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "OpenStack Magnum API (container-infra) as OpenKeel serves it",
            "version": format!("{MAX}"),
            "summary": "Magnum 23.0.0's REST API, microversions 1.1 to 1.14.",
            "description": format!(
                "Generated from OpenKeel's code by `openkeel-openapi-generator` \
                 (`crates/api/src/openapi`); do not edit by hand.\n\n\
                 Every `/v1/...` path is also served without the `/v1` prefix, and a trailing \
                 slash is accepted. `{header}: {SERVICE} <version>` (or `latest`) selects the \
                 microversion ({min} when absent); an operation's range is its \
                 `x-openstack-microversion`, outside which it answers 406. A path no operation \
                 has is answered 404, a method a path does not take 405 (with `Allow`), both \
                 with `#/components/responses/Error`. Bodies are JSON as Python's \
                 `json.dumps` writes it.",
                header = microversion::HEADER,
                min = microversion::MIN,
            ),
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        // a Keystone token, or none with the embedded default's noauth
        "security": [{"keystone": []}, {}],
        "tags": TAGS.iter().map(|(n, d)| json!({"name": n, "description": d})).collect::<Vec<_>>(),
        "paths": paths,
        "components": components(),
    })
}

/// The document as `docs/openapi.json` holds it: pretty-printed JSON and a final newline.
pub fn to_json() -> String {
    let mut s = serde_json::to_string_pretty(&document()).unwrap_or_default();
    s.push('\n');
    s
}

fn header_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/headers/{name}") })
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The parameter schema of a query argument's WSME type.
fn arg_schema(a: &ArgSpec) -> Value {
    match a.ty {
        ArgType::Uuid => json!({"type": "string", "format": "uuid"}),
        ArgType::Int => json!({"type": "integer"}),
        ArgType::Text => json!({"type": "string"}),
        ArgType::Bool => json!({"type": "boolean"}),
    }
}

fn arg_description(name: &str) -> &'static str {
    match name {
        "marker" => "The last item of the previous page.",
        "limit" => "The page size (at most `[api] max_limit`; must be positive).",
        "sort_key" => "The attribute to sort by (default `id`).",
        "sort_dir" => "`asc` (default) or `desc`.",
        "all_tenants" => "An admin's list of every project's quotas.",
        "role" => "Only the nodegroups of this role.",
        "ca_cert_type" => "`etcd`, `front_proxy` / `front-proxy`, else the Kubernetes CA.",
        "project_id" => "The project whose counts to show (an admin's choice).",
        "type" => "The kind of stats: `cluster` (the default and the only one).",
        "rollback" => "Accepted and ignored.",
        _ => "",
    }
}

fn path_description(name: &str) -> &'static str {
    match name {
        "clustertemplate_ident" => "The cluster template's uuid or name.",
        "cluster_ident" => "The cluster's uuid or name.",
        "nodegroup_ident" => "The nodegroup's uuid, name or id.",
        "federation_ident" => "The federation's uuid or name.",
        "project_id" => "The project's id.",
        "resource" => "The resource (`Cluster`).",
        _ => "",
    }
}

fn operation(r: &Route) -> Value {
    let mut op = Map::new();
    op.insert("operationId".into(), json!(r.operation_id));
    op.insert("summary".into(), json!(r.summary));
    if !r.description.is_empty() {
        op.insert("description".into(), json!(r.description));
    }
    op.insert("tags".into(), json!([r.tag]));
    let negotiated = match r.versions {
        Versions::NotNegotiated => false,
        Versions::Since(minor) => {
            op.insert(
                "x-openstack-microversion".into(),
                json!({"min": format!("1.{minor}"), "max": format!("{MAX}")}),
            );
            true
        }
    };
    let mut params: Vec<Value> = Vec::new();
    for p in r.path_params() {
        params.push(json!({
            "name": p,
            "in": "path",
            "required": true,
            "description": path_description(p),
            "schema": {"type": "string"},
        }));
    }
    for a in r.query {
        params.push(json!({
            "name": a.name,
            "in": "query",
            "required": false,
            "description": arg_description(a.name),
            "schema": arg_schema(a),
        }));
    }
    if negotiated {
        params.push(json!({"$ref": "#/components/parameters/OpenStack-API-Version"}));
    }
    op.insert("parameters".into(), Value::Array(params));
    if let Some(body) = r.request {
        op.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": {"application/json": {"schema": schema_ref(body)}},
            }),
        );
    }
    let mut responses = Map::new();
    responses.insert(r.status.to_string(), success(r, negotiated));
    for status in r.errors.statuses() {
        let name = match status {
            401 => "Unauthorized",
            503 => "ServiceUnavailable",
            _ => "Error",
        };
        responses.insert(
            status.to_string(),
            json!({ "$ref": format!("#/components/responses/{name}") }),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    if r.errors == Errors::Public {
        // `/` and `/v1` are keystonemiddleware's public routes.
        op.insert("security".into(), json!([]));
    }
    Value::Object(op)
}

fn success(r: &Route, negotiated: bool) -> Value {
    let mut headers = Map::new();
    headers.insert(
        "X-OpenStack-Request-Id".into(),
        header_ref("X-OpenStack-Request-Id"),
    );
    if negotiated {
        for h in VERSION_HEADERS {
            headers.insert(h.into(), header_ref(h));
        }
    }
    if r.status == 201 && r.path == "/v1/clustertemplates" {
        headers.insert(
            "Location".into(),
            json!({"description": "The new template's URL.", "required": true, "schema": {"type": "string", "format": "uri"}}),
        );
    }
    let mut resp = Map::new();
    resp.insert(
        "description".into(),
        json!(match r.status {
            200 => "OK",
            201 => "Created",
            202 => "Accepted",
            204 => "No Content (no body, no `Content-Type`)",
            _ => "Success",
        }),
    );
    resp.insert("headers".into(), Value::Object(headers));
    if let Some(schema) = r.response {
        resp.insert(
            "content".into(),
            json!({"application/json": {"schema": schema_ref(schema)}}),
        );
    }
    Value::Object(resp)
}

/// The version headers of every `/v1` answer but routing errors.
const VERSION_HEADERS: [&str; 3] = [
    "OpenStack-API-Version",
    "OpenStack-API-Minimum-Version",
    "OpenStack-API-Maximum-Version",
];

fn components() -> Value {
    let version_header = |d: &str, example: String| json!({"description": d, "required": true, "schema": {"type": "string"}, "example": example});
    let error_headers = json!({
        "X-OpenStack-Request-Id": header_ref("X-OpenStack-Request-Id"),
        "OpenStack-API-Version": {"$ref": "#/components/headers/OpenStack-API-Version-Optional"},
    });
    json!({
        "schemas": schemas::all(),
        "parameters": {
            "OpenStack-API-Version": {
                "name": microversion::HEADER,
                "in": "header",
                "required": false,
                "description": format!("`{SERVICE} <major>.<minor>` or `{SERVICE} latest`; {} when absent.", microversion::MIN),
                "schema": {"type": "string"},
                "example": format!("{SERVICE} latest"),
            },
        },
        "headers": {
            "OpenStack-API-Version": version_header("The microversion that served the request.", format!("{SERVICE} {MAX}")),
            "OpenStack-API-Version-Optional": {
                "description": "The microversion, on errors raised by a handler or by the range check (not on routing errors).",
                "required": false,
                "schema": {"type": "string"},
            },
            "OpenStack-API-Minimum-Version": version_header("The oldest microversion supported.", format!("{SERVICE} {}", microversion::MIN)),
            "OpenStack-API-Maximum-Version": version_header("The newest microversion supported.", format!("{SERVICE} {MAX}")),
            "X-OpenStack-Request-Id": {
                "description": "`req-<uuid4>`, new for every request.",
                "required": true,
                "schema": {"type": "string", "pattern": "^req-[0-9a-f-]{36}$"},
            },
        },
        "responses": {
            "Error": {
                "description": "Magnum's error envelope.",
                "headers": error_headers,
                "content": {"application/json": {"schema": schema_ref("ErrorEnvelope")}},
            },
            "Unauthorized": {
                "description": "keystonemiddleware refused the token (`auth_strategy = keystone`).",
                "headers": {
                    "X-OpenStack-Request-Id": header_ref("X-OpenStack-Request-Id"),
                    "WWW-Authenticate": {"required": true, "schema": {"type": "string"}},
                },
                "content": {"application/json": {"schema": schema_ref("KeystoneUnauthorized")}},
            },
            "ServiceUnavailable": {
                "description": "Keystone cannot validate tokens (keystonemiddleware's answer), or a service Magnum needs is unavailable (the envelope).",
                "headers": error_headers,
                "content": {
                    "application/json": {"schema": {"anyOf": [schema_ref("ErrorEnvelope"), schema_ref("KeystoneUnavailable")]}},
                    "text/plain": {"schema": {"type": "string"}},
                },
            },
        },
        "securitySchemes": {
            "keystone": {
                "type": "apiKey",
                "in": "header",
                "name": "X-Auth-Token",
                "description": "A Keystone token (`[openkeel] auth_strategy = keystone`); the embedded default takes none.",
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_eight_routes_each_once() {
        let mut seen = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for r in ROUTES.iter() {
            assert!(
                seen.insert((r.method, r.path)),
                "{} {} twice",
                r.method,
                r.path
            );
            assert!(ids.insert(r.operation_id), "{} twice", r.operation_id);
        }
        let doc = document();
        let ops: usize = doc["paths"]
            .as_object()
            .map(|p| p.values().filter_map(Value::as_object).map(Map::len).sum())
            .unwrap_or(0);
        assert_eq!(ops, 38);
    }

    #[test]
    fn every_schema_reference_resolves() {
        let doc = document();
        let text = doc.to_string();
        for part in text.split("\"$ref\":\"#/").skip(1) {
            let path = part.split('"').next().unwrap_or_default();
            let target = path
                .split('/')
                .try_fold(&doc, |v, k| v.get(k))
                .unwrap_or(&Value::Null);
            assert!(!target.is_null(), "#/{path} does not resolve");
        }
    }

    /// The views print exactly the schemas' properties: no key the schema lacks, every key it
    /// requires (for the shapes the views produce from stored objects).
    #[test]
    fn views_print_the_schemas_properties() {
        use crate::microversion::Version;
        use crate::resources::clusters::view;
        use crate::resources::{
            certificates, cluster_templates, federations, mservices, quotas, stats,
        };
        use openkeel_core::objects::{
            Certificate, Cluster, ClusterStatus, ClusterTemplate, Federation, MagnumService,
            NodeGroup, Quota, Stats,
        };
        let schemas = schemas::all();
        let agree = |name: &str, v: &Value| {
            let s = &schemas[name];
            let props = s["properties"].as_object().expect("properties");
            let keys = v.as_object().expect("an object");
            for k in keys.keys() {
                assert!(
                    props.contains_key(k),
                    "{name}: the view prints {k}, the schema lacks it"
                );
            }
            for r in s["required"].as_array().expect("required") {
                let r = r.as_str().unwrap_or_default();
                assert!(
                    keys.contains_key(r),
                    "{name}: the schema requires {r}, the view omits it"
                );
            }
        };
        let host = "http://h";
        let c = Cluster {
            uuid: Some("5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into()),
            status: Some(ClusterStatus::CreateFailed),
            ..Cluster::default()
        };
        let ng = NodeGroup::default();
        for minor in [1, 12, 13, 14] {
            let v = Version::new(1, minor);
            agree(
                "ClusterSummary",
                &view::cluster_summary(&c, std::slice::from_ref(&ng), v, host),
            );
            agree(
                "Cluster",
                &view::cluster_full(&c, std::slice::from_ref(&ng), None, v, host, None),
            );
            let failed = view::cluster_full(&c, &[], None, v, host, Some(view::faults(&[])));
            agree("Cluster", &failed);
            assert!(failed.get("faults").is_some());
        }
        agree("NodeGroup", &view::ng_full_row(&ng, None, host));
        agree("NodeGroup", &view::ng_full(&Map::new(), None, host));
        agree("NodeGroupSummary", &view::ng_summary(&ng));
        agree(
            "ClusterTemplate",
            &cluster_templates::view(&ClusterTemplate::default(), host),
        );
        agree("Quota", &quotas::view(&Quota::default()));
        agree("Stats", &stats::view(&Stats::default()));
        agree(
            "MagnumService",
            &mservices::view(&MagnumService::default(), true),
        );
        agree(
            "Federation",
            &federations::view(&Federation::default(), host, true),
        );
        agree(
            "FederationSummary",
            &federations::view(&Federation::default(), host, false),
        );
        let cert = Certificate {
            pem: Some("-----BEGIN CERTIFICATE-----".into()),
            ..Certificate::default()
        };
        agree("Certificate", &certificates::view(&cert, host));
    }
}
