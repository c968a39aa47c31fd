//! `GET /` and `GET /v1`: the version documents (`magnum/api/controllers/root.py`,
//! `magnum/api/controllers/v1/__init__.py V1`).

use crate::microversion::{MAX, MIN};
use serde_json::{json, Map, Value};

/// `{"href": ..., "rel": ...}` as Magnum's `Link.make_link` builds it (`bookmark` links omit
/// the `v1` prefix and rely on the root controller's prefix rewrite).
pub fn link(rel: &str, host_url: &str, resource: &str, args: &str, bookmark: bool) -> Value {
    let prefix = if bookmark { "" } else { "/v1" };
    json!({"href": format!("{host_url}{prefix}/{resource}/{args}"), "rel": rel})
}

/// The root document.
pub fn root(host_url: &str) -> Value {
    json!({
        "name": "OpenStack Magnum API",
        "description": "Magnum is an OpenStack project which aims to provide container cluster management.",
        "versions": [{
            "id": "v1",
            "links": [{"href": format!("{host_url}/v1/"), "rel": "self"}],
            "status": "CURRENT",
            "max_version": MAX.to_string(),
            "min_version": MIN.to_string(),
        }],
    })
}

/// The collections the v1 document links to with `self` / `bookmark` links, in its order
/// (then `nodegroups` and `credentials`, linked in their own way).
pub const V1_RESOURCES: [&str; 7] = [
    "clustertemplates",
    "clusters",
    "quotas",
    "certificates",
    "mservices",
    "stats",
    "federations",
];

/// The v1 document.
pub fn v1(host_url: &str) -> Value {
    let mut doc = Map::new();
    doc.insert("id".into(), json!("v1"));
    doc.insert(
        "media_types".into(),
        json!([{"base": "application/json", "type": "application/vnd.openstack.magnum.v1+json"}]),
    );
    doc.insert(
        "links".into(),
        json!([
            {"href": format!("{host_url}/v1/"), "rel": "self"},
            {"href": "http://docs.openstack.org/developer/magnum/dev/api-spec-v1.html", "rel": "describedby", "type": "text/html"},
        ]),
    );
    for resource in V1_RESOURCES {
        doc.insert(
            resource.into(),
            json!([
                link("self", host_url, resource, "", false),
                link("bookmark", host_url, resource, "", true)
            ]),
        );
    }
    doc.insert(
        "nodegroups".into(),
        json!([
            {"href": format!("{host_url}/v1/clusters/{{cluster_id}}/nodegroups"), "rel": "self"},
            {"href": format!("{host_url}/clusters/{{cluster_id}}/nodegroups"), "rel": "bookmark"},
        ]),
    );
    doc.insert(
        "credentials".into(),
        json!([
            link("self", host_url, "credentials", "", false),
            link("bookmark", host_url, "credentials", "", true)
        ]),
    );
    Value::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::pyjson::dumps;

    #[test]
    fn root_document_is_byte_identical() {
        assert_eq!(
            dumps(&root("http://127.0.0.1:9611")),
            r#"{"name": "OpenStack Magnum API", "description": "Magnum is an OpenStack project which aims to provide container cluster management.", "versions": [{"id": "v1", "links": [{"href": "http://127.0.0.1:9611/v1/", "rel": "self"}], "status": "CURRENT", "max_version": "1.14", "min_version": "1.1"}]}"#
        );
    }

    #[test]
    fn v1_document_is_byte_identical() {
        // Captured from magnum-api 23.0.0 (`curl http://127.0.0.1:9611/v1`).
        let expected = include_str!("../tests/data/v1-document.json");
        assert_eq!(
            dumps(&v1("http://127.0.0.1:9611")),
            expected.trim_end_matches('\n')
        );
    }
}
