//! The wire shapes of clusters and nodegroups (`magnum/api/controllers/v1/cluster.py`, `nodegroup.py`): WSME's
//! attribute order, declared defaults for unset attributes, the node counts and addresses
//! computed from nodegroups, `stack_id` → `cluster_id` at 1.13, the labels diff, links; and
//! the `as_dict()` documents a JSON Patch is applied to.

use super::types;
use super::wsme::Attr;
use crate::links::{self_and_bookmark, write_self_and_bookmark};
use crate::microversion::Version;
use crate::resources::cluster_templates::isoformat;
use chrono::NaiveDateTime;
use openkeel_core::objects::{Cluster, NodeGroup, StringMap};
use openkeel_core::pyvalue::PyValue;
use serde_json::{Map, Value};

/// A datetime as Magnum's API prints it (`isoformat()` of a UTC-aware value).
pub fn iso(dt: Option<NaiveDateTime>) -> Value {
    dt.map_or(Value::Null, |d| Value::from(isoformat(&d)))
}

fn opt<T: Into<Value> + Clone>(v: &Option<T>) -> Value {
    v.clone().map_or(Value::Null, Into::into)
}

fn map_of(m: &StringMap) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect(),
    )
}

fn opt_map(m: &Option<StringMap>) -> Value {
    m.as_ref().map_or(Value::Null, map_of)
}

/// The node counts and addresses Magnum's `Cluster` object computes from its nodegroups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub node_count: i64,
    pub master_count: i64,
    pub node_addresses: Vec<String>,
    pub master_addresses: Vec<String>,
}

/// A nodegroup's `node_count` as the object reads it (NULL → 1).
pub fn ng_node_count(ng: &NodeGroup) -> i64 {
    i64::from(ng.node_count.unwrap_or(1))
}

pub fn is_master(ng: &NodeGroup) -> bool {
    ng.role.as_deref() == Some("master")
}

pub fn counts(ngs: &[NodeGroup]) -> Counts {
    let mut c = Counts::default();
    for ng in ngs {
        let addrs = ng.node_addresses.clone().unwrap_or_default();
        if is_master(ng) {
            c.master_count += ng_node_count(ng);
            c.master_addresses.extend(addrs);
        } else {
            c.node_count += ng_node_count(ng);
            c.node_addresses.extend(addrs);
        }
    }
    c
}

/// `api_utils.get_labels_diff(parent, labels)`: (overridden, added, skipped).
pub fn labels_diff(
    parent: &Map<String, Value>,
    labels: &Map<String, Value>,
) -> (Value, Value, Value) {
    let skipped: Map<String, Value> = parent
        .iter()
        .filter(|(k, _)| !labels.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut overridden = Map::new();
    let mut added = Map::new();
    for (k, v) in labels {
        match parent.get(k) {
            Some(pv) if pv != v => {
                overridden.insert(k.clone(), pv.clone());
            }
            Some(_) => {}
            None => {
                added.insert(k.clone(), v.clone());
            }
        }
    }
    (
        Value::Object(overridden),
        Value::Object(added),
        Value::Object(skipped),
    )
}

/// A labels column as a JSON object (`NULL` → `{}` for the diff).
pub fn labels_obj(m: Option<&StringMap>) -> Map<String, Value> {
    match m {
        Some(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect(),
        None => Map::new(),
    }
}

fn status(c: &Cluster) -> Value {
    c.status.map_or(Value::Null, |s| Value::from(s.as_str()))
}

/// An attribute's value: a string column or the links borrowed from the cluster (written
/// into a body without a copy), or any other value.
enum Field<'a> {
    /// A string column; `null` when unset.
    Str(Option<&'a str>),
    /// The cluster's `self` and `bookmark` links.
    Links {
        host: &'a str,
        uuid: &'a str,
    },
    Value(Value),
}

impl Field<'_> {
    fn into_value(self) -> Value {
        match self {
            Field::Str(s) => s.map_or(Value::Null, Value::from),
            Field::Links { host, uuid } => self_and_bookmark(host, "clusters", uuid),
            Field::Value(v) => v,
        }
    }

    /// Append `json.dumps(self.into_value())` to `out`.
    fn write(&self, out: &mut String) {
        match self {
            Field::Str(Some(s)) => openkeel_core::pyjson::write_str(out, s),
            Field::Str(None) => out.push_str("null"),
            Field::Links { host, uuid } => write_self_and_bookmark(out, host, "clusters", uuid),
            Field::Value(v) => openkeel_core::pyjson::write_value(out, v),
        }
    }
}

/// The value of each attribute of one cluster, for [`cluster_summary`] and [`cluster_full`].
struct ClusterValues<'a> {
    c: &'a Cluster,
    n: Counts,
    host: &'a str,
    /// `labels_overridden`, `labels_added`, `labels_skipped` (full view only).
    diff: Option<[Value; 3]>,
    /// `faults` (only a failed cluster's `GET`).
    faults: Option<Value>,
}

impl<'a> ClusterValues<'a> {
    /// The value of attribute `name`; `None` when the attribute is not shown.
    fn get(&mut self, name: &str) -> Option<Field<'a>> {
        let c = self.c;
        let text = |v: &'a Option<String>| Field::Str(v.as_deref());
        let value = Field::Value;
        // each attribute is asked for once: its part of the diff is handed over, not copied
        let mut diff = |i: usize| {
            value(
                self.diff
                    .as_mut()
                    .map_or(Value::Null, |d| std::mem::take(&mut d[i])),
            )
        };
        Some(match name {
            "uuid" => text(&c.uuid),
            "name" => text(&c.name),
            "cluster_template_id" => text(&c.cluster_template_id),
            "keypair" => text(&c.keypair),
            "node_count" => value(Value::from(self.n.node_count)),
            "master_count" => value(Value::from(self.n.master_count)),
            "docker_volume_size" => value(opt(&c.docker_volume_size)),
            "labels" => value(opt_map(&c.labels)),
            "master_flavor_id" => text(&c.master_flavor_id),
            "flavor_id" => text(&c.flavor_id),
            "create_timeout" => value(opt(&c.create_timeout)),
            "links" => Field::Links {
                host: self.host,
                uuid: c.uuid.as_deref().unwrap_or_default(),
            },
            // the same column under its 1.13 name
            "stack_id" | "cluster_id" => text(&c.stack_id),
            "status" => value(status(c)),
            "status_reason" => text(&c.status_reason),
            "health_status" => value(
                c.health_status
                    .map_or(Value::Null, |s| Value::from(s.as_str())),
            ),
            "health_status_reason" => value(opt_map(&c.health_status_reason)),
            "discovery_url" => text(&c.discovery_url),
            "api_address" => text(&c.api_address),
            "coe_version" => text(&c.coe_version),
            "container_version" => text(&c.container_version),
            "project_id" => text(&c.project_id),
            "user_id" => text(&c.user_id),
            "node_addresses" => value(Value::from(self.n.node_addresses.clone())),
            "master_addresses" => value(Value::from(self.n.master_addresses.clone())),
            "faults" => value(self.faults.take()?),
            "fixed_network" => text(&c.fixed_network),
            "fixed_subnet" => text(&c.fixed_subnet),
            "floating_ip_enabled" => value(Value::Bool(c.floating_ip_enabled.unwrap_or(true))),
            "merge_labels" => value(Value::Bool(false)),
            "labels_overridden" => diff(0),
            "labels_added" => diff(1),
            "labels_skipped" => diff(2),
            "master_lb_enabled" => value(Value::Bool(c.master_lb_enabled.unwrap_or(false))),
            "created_at" => value(iso(c.created_at)),
            "updated_at" => value(iso(c.updated_at)),
            // An attribute declared without a value here prints as WSME prints an unset one.
            _ => value(Value::Null),
        })
    }
}

/// Each shown attribute of `attrs` (a list of `types::cluster`), name and value in their
/// order, to `emit`: `stack_id` up to 1.12, `cluster_id` from 1.13.
fn each_attr<'a, 'c>(
    attrs: impl IntoIterator<Item = &'a Attr>,
    version: Version,
    mut values: ClusterValues<'c>,
    mut emit: impl FnMut(&'static str, Field<'c>),
) {
    let hidden = if version.at_least(13) {
        "stack_id"
    } else {
        "cluster_id"
    };
    for a in attrs {
        if a.name == hidden {
            continue;
        }
        if let Some(v) = values.get(a.name) {
            emit(a.name, v);
        }
    }
}

/// [`each_attr`] as a JSON object.
fn render_cluster<'a>(
    attrs: impl IntoIterator<Item = &'a Attr>,
    version: Version,
    values: ClusterValues<'_>,
) -> Value {
    let attrs = attrs.into_iter();
    let mut m = Map::with_capacity(attrs.size_hint().0);
    each_attr(attrs, version, values, |k, v| {
        m.insert(k.to_string(), v.into_value());
    });
    Value::Object(m)
}

/// [`render_cluster`] written straight into `out` as `json.dumps` text (no map built).
fn write_cluster<'a>(
    out: &mut String,
    attrs: impl IntoIterator<Item = &'a Attr>,
    version: Version,
    values: ClusterValues<'_>,
) {
    let mut o = openkeel_core::pyjson::ObjectWriter::new(out);
    each_attr(attrs, version, values, |k, v| {
        o.field_with(k, |out| v.write(out))
    });
    o.finish();
}

/// `GET /v1/clusters` item: the attributes of [`types::cluster::SUMMARY`].
pub fn cluster_summary(c: &Cluster, ngs: &[NodeGroup], version: Version, host: &str) -> Value {
    render_cluster(
        types::cluster::SUMMARY.iter().copied(),
        version,
        summary_values(c, ngs, host),
    )
}

/// [`cluster_summary`] written into `out` as `json.dumps` text.
pub fn write_cluster_summary(
    out: &mut String,
    c: &Cluster,
    ngs: &[NodeGroup],
    version: Version,
    host: &str,
) {
    write_cluster(
        out,
        types::cluster::SUMMARY.iter().copied(),
        version,
        summary_values(c, ngs, host),
    );
}

fn summary_values<'a>(c: &'a Cluster, ngs: &[NodeGroup], host: &'a str) -> ClusterValues<'a> {
    ClusterValues {
        c,
        n: counts(ngs),
        host,
        diff: None,
        faults: None,
    }
}

/// `GET /v1/clusters/{id}` and `/detail` items (every attribute of
/// [`types::cluster::ATTRS`]); `faults` only for a failed cluster's GET.
pub fn cluster_full(
    c: &Cluster,
    ngs: &[NodeGroup],
    template_labels: Option<&StringMap>,
    version: Version,
    host: &str,
    faults: Option<Value>,
) -> Value {
    let values = full_values(c, ngs, template_labels, host, faults);
    render_cluster(types::cluster::ATTRS, version, values)
}

/// [`cluster_full`] written into `out` as `json.dumps` text (a show's body, a list's item).
pub fn write_cluster_full(
    out: &mut String,
    c: &Cluster,
    ngs: &[NodeGroup],
    template_labels: Option<&StringMap>,
    version: Version,
    host: &str,
    faults: Option<Value>,
) {
    let values = full_values(c, ngs, template_labels, host, faults);
    write_cluster(out, types::cluster::ATTRS, version, values);
}

fn full_values<'a>(
    c: &'a Cluster,
    ngs: &[NodeGroup],
    template_labels: Option<&StringMap>,
    host: &'a str,
    faults: Option<Value>,
) -> ClusterValues<'a> {
    ClusterValues {
        c,
        n: counts(ngs),
        host,
        diff: Some({
            let (overridden, added, skipped) =
                labels_diff(&labels_obj(template_labels), &labels_obj(c.labels.as_ref()));
            [overridden, added, skipped]
        }),
        faults,
    }
}

/// `_collect_fault_info`: nodegroup name → status_reason of the failed nodegroups.
pub fn faults(ngs: &[NodeGroup]) -> Value {
    Value::Object(
        ngs.iter()
            .filter(|ng| ng.status.is_some_and(|s| s.as_str().ends_with("FAILED")))
            .map(|ng| (ng.name.clone(), opt(&ng.status_reason)))
            .collect(),
    )
}

/// `cluster.as_dict()` (object field order, then the nodegroup-derived values): the
/// document a cluster PATCH is applied to.
pub fn cluster_doc(c: &Cluster, ngs: &[NodeGroup]) -> PyValue {
    let n = counts(ngs);
    let mut m = Map::new();
    m.insert("id".into(), Value::from(c.id));
    m.insert("uuid".into(), opt(&c.uuid));
    m.insert("name".into(), opt(&c.name));
    m.insert("project_id".into(), opt(&c.project_id));
    m.insert("user_id".into(), opt(&c.user_id));
    m.insert("cluster_template_id".into(), opt(&c.cluster_template_id));
    m.insert("keypair".into(), opt(&c.keypair));
    m.insert("docker_volume_size".into(), opt(&c.docker_volume_size));
    m.insert("labels".into(), opt_map(&c.labels));
    m.insert("master_flavor_id".into(), opt(&c.master_flavor_id));
    m.insert("flavor_id".into(), opt(&c.flavor_id));
    m.insert("stack_id".into(), opt(&c.stack_id));
    m.insert("status".into(), status(c));
    m.insert("status_reason".into(), opt(&c.status_reason));
    m.insert(
        "health_status".into(),
        c.health_status
            .map_or(Value::Null, |s| Value::from(s.as_str())),
    );
    m.insert(
        "health_status_reason".into(),
        opt_map(&c.health_status_reason),
    );
    m.insert("create_timeout".into(), opt(&c.create_timeout));
    m.insert("api_address".into(), opt(&c.api_address));
    m.insert("discovery_url".into(), opt(&c.discovery_url));
    m.insert("ca_cert_ref".into(), opt(&c.ca_cert_ref));
    m.insert("magnum_cert_ref".into(), opt(&c.magnum_cert_ref));
    m.insert("etcd_ca_cert_ref".into(), opt(&c.etcd_ca_cert_ref));
    m.insert(
        "front_proxy_ca_cert_ref".into(),
        opt(&c.front_proxy_ca_cert_ref),
    );
    m.insert("coe_version".into(), opt(&c.coe_version));
    m.insert("container_version".into(), opt(&c.container_version));
    m.insert("fixed_network".into(), opt(&c.fixed_network));
    m.insert("fixed_subnet".into(), opt(&c.fixed_subnet));
    m.insert(
        "floating_ip_enabled".into(),
        Value::Bool(c.floating_ip_enabled.unwrap_or(true)),
    );
    m.insert(
        "master_lb_enabled".into(),
        Value::Bool(c.master_lb_enabled.unwrap_or(false)),
    );
    let mut doc = PyValue::from_json(&Value::Object(m));
    doc.set("created_at", py_datetime(c.created_at));
    doc.set("updated_at", py_datetime(c.updated_at));
    doc.set("node_count", PyValue::Int(i128::from(n.node_count)));
    doc.set("master_count", PyValue::Int(i128::from(n.master_count)));
    doc.set(
        "node_addresses",
        PyValue::List(n.node_addresses.into_iter().map(PyValue::Str).collect()),
    );
    doc.set(
        "master_addresses",
        PyValue::List(n.master_addresses.into_iter().map(PyValue::Str).collect()),
    );
    doc
}

fn py_datetime(dt: Option<NaiveDateTime>) -> PyValue {
    dt.as_ref().map_or(PyValue::None, PyValue::datetime_utc)
}

/// A stored nodegroup as a JSON map in object field order (object defaults for the NULLs of
/// non-nullable fields; datetimes as the API prints them).
pub fn ng_map(ng: &NodeGroup) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(ng.id));
    m.insert("uuid".into(), Value::from(ng.uuid.clone()));
    m.insert("name".into(), Value::from(ng.name.clone()));
    m.insert("cluster_id".into(), Value::from(ng.cluster_id.clone()));
    m.insert("project_id".into(), Value::from(ng.project_id.clone()));
    m.insert("docker_volume_size".into(), opt(&ng.docker_volume_size));
    m.insert("labels".into(), opt_map(&ng.labels));
    m.insert("flavor_id".into(), opt(&ng.flavor_id));
    m.insert("image_id".into(), opt(&ng.image_id));
    m.insert("node_addresses".into(), opt(&ng.node_addresses));
    m.insert("node_count".into(), Value::from(ng_node_count(ng)));
    m.insert("role".into(), opt(&ng.role));
    m.insert("max_node_count".into(), opt(&ng.max_node_count));
    m.insert(
        "min_node_count".into(),
        Value::from(ng.min_node_count.unwrap_or(0)),
    );
    m.insert(
        "is_default".into(),
        Value::Bool(ng.is_default.unwrap_or(false)),
    );
    m.insert("stack_id".into(), opt(&ng.stack_id));
    m.insert(
        "status".into(),
        ng.status.map_or(Value::Null, |s| Value::from(s.as_str())),
    );
    m.insert("status_reason".into(), opt(&ng.status_reason));
    m.insert("version".into(), opt(&ng.version));
    m.insert("node_labels".into(), opt_map(&ng.node_labels));
    m.insert(
        "node_taints".into(),
        ng.node_taints.as_ref().map_or(Value::Null, |t| {
            Value::Array(t.iter().cloned().map(Value::Object).collect())
        }),
    );
    m.insert("created_at".into(), iso(ng.created_at));
    m.insert("updated_at".into(), iso(ng.updated_at));
    m
}

/// `nodegroup.as_dict()`: the document a nodegroup PATCH is applied to.
pub fn ng_doc(ng: &NodeGroup) -> PyValue {
    let mut doc = PyValue::from_json(&Value::Object(ng_map(ng)));
    doc.set("created_at", py_datetime(ng.created_at));
    doc.set("updated_at", py_datetime(ng.updated_at));
    doc
}

/// `NodeGroup.convert(obj)` (full): the attributes of [`types::nodegroup::ATTRS`] that are
/// set, else computed (links, the labels diff), else declared with a default. `set` holds the object's set fields (JSON, datetimes as
/// printed), `cluster_labels` the parent cluster's labels.
pub fn ng_full(set: &Map<String, Value>, cluster_labels: Option<&StringMap>, host: &str) -> Value {
    let cluster = set.get("cluster_id").and_then(Value::as_str).unwrap_or("");
    let uuid = set.get("uuid").and_then(Value::as_str).unwrap_or("");
    let mut extra = Map::new();
    extra.insert(
        "links".into(),
        self_and_bookmark(host, "clusters", &format!("{cluster}/nodegroups/{uuid}")),
    );
    let labels = match set.get("labels") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let (o, a, s) = labels_diff(&labels_obj(cluster_labels), &labels);
    extra.insert("labels_overridden".into(), o);
    extra.insert("labels_added".into(), a);
    extra.insert("labels_skipped".into(), s);
    let mut m = Map::new();
    for attr in types::nodegroup::ATTRS {
        let v = match set.get(attr.name) {
            Some(v) => Some(v.clone()),
            None => extra
                .remove(attr.name)
                .or_else(|| attr.default.and_then(|d| d.value().to_json())),
        };
        if let Some(v) = v {
            m.insert(attr.name.to_string(), v);
        }
    }
    Value::Object(m)
}

/// A stored nodegroup's full view (`GET .../nodegroups/{ng}`).
pub fn ng_full_row(ng: &NodeGroup, cluster_labels: Option<&StringMap>, host: &str) -> Value {
    ng_full(&ng_map(ng), cluster_labels, host)
}

/// `GET .../nodegroups` item: the attributes of [`types::nodegroup::SUMMARY`]; `min_node_count`
/// and `max_node_count` show their declared defaults (the summary is built from a fresh
/// `NodeGroup`, as Magnum's `convert` with `expand=False`).
pub fn ng_summary(ng: &NodeGroup) -> Value {
    let mut m = Map::new();
    for attr in types::nodegroup::SUMMARY {
        let v = match attr.name {
            "uuid" => Value::from(ng.uuid.clone()),
            "name" => Value::from(ng.name.clone()),
            "flavor_id" => opt(&ng.flavor_id),
            "image_id" => opt(&ng.image_id),
            "node_count" => Value::from(ng_node_count(ng)),
            "role" => opt(&ng.role),
            "is_default" => Value::Bool(ng.is_default.unwrap_or(false)),
            "stack_id" => opt(&ng.stack_id),
            "status" => ng.status.map_or(Value::Null, |s| Value::from(s.as_str())),
            _ => attr
                .default
                .and_then(|d| d.value().to_json())
                .unwrap_or(Value::Null),
        };
        m.insert(attr.name.to_string(), v);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use serde_json::json;

    #[test]
    fn datetimes() {
        let d = NaiveDate::from_ymd_opt(2026, 7, 17)
            .and_then(|d| d.and_hms_opt(6, 52, 54))
            .unwrap();
        assert_eq!(iso(Some(d)), json!("2026-07-17T06:52:54+00:00"));
        let d0 = NaiveDate::from_ymd_opt(2026, 7, 17)
            .and_then(|d| d.and_hms_micro_opt(6, 52, 0, 5))
            .unwrap();
        assert_eq!(iso(Some(d0)), json!("2026-07-17T06:52:00.000005+00:00"));
    }

    /// The body written straight as text is `json.dumps` of the rendered object, for a
    /// cluster with every attribute set (strings that need escaping among them) and one with
    /// none, at the microversions where the attributes change.
    #[test]
    fn written_clusters_are_the_dumped_ones() {
        use openkeel_core::objects::{ClusterStatus, NodeGroup};
        use openkeel_core::pyjson::dumps;
        let text = |s: &str| Some(s.to_string());
        let labels = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<StringMap>(),
            )
        };
        let full = Cluster {
            uuid: text("5d12f6fd-a196-4bf0-ae4c-1f639a523a52"),
            name: text("k8s \"prod\" é"),
            cluster_template_id: text("t-1"),
            keypair: text("kp"),
            docker_volume_size: Some(10),
            labels: labels(&[("a", "9"), ("c", "3")]),
            master_flavor_id: text("m1.large"),
            flavor_id: text("m1.small"),
            create_timeout: Some(60),
            stack_id: text("stack\\1"),
            status: Some(ClusterStatus::CreateFailed),
            status_reason: text("line\nbreak"),
            discovery_url: text("https://discovery.example/x"),
            api_address: text("https://10.0.0.5:6443"),
            coe_version: text("v1.31.1"),
            container_version: text("1.12.6"),
            project_id: text("p1"),
            user_id: text("u1"),
            fixed_network: text("net"),
            fixed_subnet: text("subnet"),
            floating_ip_enabled: Some(false),
            master_lb_enabled: Some(true),
            created_at: NaiveDate::from_ymd_opt(2026, 7, 17).and_then(|d| d.and_hms_opt(6, 52, 54)),
            ..Cluster::default()
        };
        let ngs = vec![NodeGroup {
            name: "default-worker".into(),
            role: text("worker"),
            node_count: Some(2),
            node_addresses: Some(vec!["10.0.0.7".into()]),
            status: Some(ClusterStatus::CreateFailed),
            status_reason: text("quota"),
            ..NodeGroup::default()
        }];
        let template = labels(&[("a", "1"), ("b", "2")]);
        for c in [&full, &Cluster::default()] {
            for v in [(1, 1), (1, 12), (1, 13), (1, 14)] {
                let version = Version::new(v.0, v.1);
                let host = "http://h:9511";
                let mut out = String::new();
                write_cluster_full(
                    &mut out,
                    c,
                    &ngs,
                    template.as_ref(),
                    version,
                    host,
                    Some(faults(&ngs)),
                );
                let rendered = cluster_full(
                    c,
                    &ngs,
                    template.as_ref(),
                    version,
                    host,
                    Some(faults(&ngs)),
                );
                assert_eq!(out, dumps(&rendered), "full, {v:?}");
                let mut out = String::new();
                write_cluster_summary(&mut out, c, &ngs, version, host);
                assert_eq!(
                    out,
                    dumps(&cluster_summary(c, &ngs, version, host)),
                    "summary, {v:?}"
                );
            }
        }
    }

    #[test]
    fn diff() {
        let parent = json!({"a": "1", "b": "2"});
        let labels = json!({"a": "9", "c": "3"});
        let (o, a, s) = labels_diff(parent.as_object().unwrap(), labels.as_object().unwrap());
        assert_eq!(o, json!({"a": "1"}));
        assert_eq!(a, json!({"c": "3"}));
        assert_eq!(s, json!({"b": "2"}));
    }
}
