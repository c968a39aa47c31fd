//! Object persistence with Magnum's `save()` semantics: only the fields marked changed on the
//! object are written (the data layer skips values equal to the stored ones and bumps
//! `updated_at` when something changes).
//!
//! Objects are [`Obj`]s: the data plus the changed field names. The API's changes arrive with
//! the object; the handlers mark what they set with [`Obj::touch`]; what a driver changed is
//! found by comparing the object before and after the driver call ([`touch_cluster_diff`],
//! [`touch_nodegroup_diff`]).

use std::sync::OnceLock;

use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_db::{cluster, nodegroup, Database, Scope};
use openkeel_drivers::Writes;
use openkeel_rpc::Obj;

/// Field names of a domain struct (= its table's columns), from its serde form.
fn field_names<T: serde::Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

fn cluster_fields() -> &'static [String] {
    static F: OnceLock<Vec<String>> = OnceLock::new();
    F.get_or_init(field_names::<Cluster>)
}

fn nodegroup_fields() -> &'static [String] {
    static F: OnceLock<Vec<String>> = OnceLock::new();
    F.get_or_init(field_names::<NodeGroup>)
}

/// The changed fields that are columns and may be written (never `id`; never a cluster's
/// `uuid`, which Magnum refuses to overwrite). Unknown names (object-only fields such as a
/// cluster's computed `node_count`) are skipped.
fn writable<'a>(
    changes: &'a std::collections::BTreeSet<String>,
    fields: &[String],
    uuid_too: bool,
) -> Vec<&'a str> {
    changes
        .iter()
        .map(String::as_str)
        .filter(|f| *f != "id" && !(uuid_too && *f == "uuid"))
        .filter(|f| fields.iter().any(|c| c == f))
        .collect()
}

/// `cluster.save()`.
pub(crate) async fn save_cluster(db: &Database, c: &mut Obj<Cluster>) -> Result<(), MagnumError> {
    let fields = writable(&c.changes, cluster_fields(), true);
    if fields.is_empty() {
        return Ok(());
    }
    let uuid = c
        .data
        .uuid
        .clone()
        .ok_or_else(|| MagnumError::internal("cannot save a cluster without a uuid"))?;
    let row = cluster::update(db, &uuid, &c.data, &fields).await?;
    c.data.updated_at = row.updated_at;
    c.changes.clear();
    Ok(())
}

/// `nodegroup.save()`.
pub(crate) async fn save_nodegroup(
    db: &Database,
    ng: &mut Obj<NodeGroup>,
) -> Result<(), MagnumError> {
    let fields = writable(&ng.changes, nodegroup_fields(), false);
    if fields.is_empty() {
        return Ok(());
    }
    let row = nodegroup::update(db, &ng.data.cluster_id, &ng.data.uuid, &ng.data, &fields).await?;
    ng.data.updated_at = row.updated_at;
    ng.changes.clear();
    Ok(())
}

/// Mark the fields a driver changed.
pub(crate) fn touch_cluster_diff(c: &mut Obj<Cluster>, before: &Cluster) {
    for f in cluster::changed_fields(before, &c.data) {
        c.touch(f);
    }
}

/// Mark the fields a driver changed.
pub(crate) fn touch_nodegroup_diff(ng: &mut Obj<NodeGroup>, before: &NodeGroup) {
    for f in nodegroup::changed_fields(before, &ng.data) {
        ng.touch(f);
    }
}

/// Set `status` (marked changed).
pub(crate) fn set_cluster_status(c: &mut Obj<Cluster>, status: ClusterStatus) {
    c.data.status = Some(status);
    c.touch("status");
}

/// Set `status_reason` (marked changed).
pub(crate) fn set_cluster_reason(c: &mut Obj<Cluster>, reason: Option<String>) {
    c.data.status_reason = reason;
    c.touch("status_reason");
}

pub(crate) fn set_nodegroup_status(ng: &mut Obj<NodeGroup>, status: ClusterStatus) {
    ng.data.status = Some(status);
    ng.touch("status");
}

pub(crate) fn set_nodegroup_reason(ng: &mut Obj<NodeGroup>, reason: Option<String>) {
    ng.data.status_reason = reason;
    ng.touch("status_reason");
}

/// Columns never taken from a driver's copy of a row (the stored bookkeeping wins).
const BOOKKEEPING: &[&str] = &["id", "uuid", "created_at", "updated_at"];

/// Write the fields of `new` that differ from `old` (the row as read), except bookkeeping
/// columns. Returns whether anything was written.
pub(crate) async fn write_cluster_diff(
    db: &Database,
    old: &Cluster,
    new: &Cluster,
) -> Result<bool, MagnumError> {
    let fields: Vec<&str> = cluster::changed_fields(old, new)
        .into_iter()
        .filter(|f| !BOOKKEEPING.contains(f))
        .collect();
    if fields.is_empty() {
        return Ok(false);
    }
    let uuid = old
        .uuid
        .as_deref()
        .ok_or_else(|| MagnumError::internal("cannot save a cluster without a uuid"))?;
    cluster::update(db, uuid, new, &fields).await?;
    Ok(true)
}

/// Apply the nodegroup saves and deletions a driver asked for ([`Writes`]) within the cluster
/// `cluster_uuid`. A nodegroup that no longer exists is skipped.
pub(crate) async fn apply_writes(
    db: &Database,
    cluster_uuid: &str,
    writes: &Writes,
) -> Result<(), MagnumError> {
    let admin = Scope::admin_all_tenants();
    for ng in &writes.nodegroups {
        let current = match nodegroup::get_by_uuid(db, &admin, cluster_uuid, &ng.uuid).await {
            Ok(c) => c,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e.into()),
        };
        let fields: Vec<&str> = nodegroup::changed_fields(&current, ng)
            .into_iter()
            .filter(|f| !BOOKKEEPING.contains(f))
            .collect();
        if !fields.is_empty() {
            nodegroup::update(db, cluster_uuid, &ng.uuid, ng, &fields).await?;
        }
    }
    for uuid in &writes.destroy_nodegroups {
        match nodegroup::destroy(db, cluster_uuid, uuid).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_lists_match_the_tables() {
        assert!(cluster_fields()
            .iter()
            .any(|f| f == "front_proxy_ca_cert_ref"));
        assert!(cluster_fields().iter().any(|f| f == "status"));
        assert!(nodegroup_fields().iter().any(|f| f == "node_taints"));
        let changes: std::collections::BTreeSet<String> = ["id", "uuid", "status", "node_count"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // `node_count` is not a cluster column; `uuid`/`id` are never written.
        assert_eq!(writable(&changes, cluster_fields(), true), vec!["status"]);
        assert_eq!(
            writable(&changes, nodegroup_fields(), false),
            vec!["node_count", "status", "uuid"]
        );
    }
}
