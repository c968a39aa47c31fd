//! Changes to a live `Cluster`'s topology (`magnum_cluster_api/resources.py`): pure functions over the
//! object as read from the management cluster, each saying whether it changed anything, so
//! that an operation that asks for what is already there writes nothing.
//!
//! * the control plane's `replicas` (a control-plane resize);
//! * an existing `machineDeployments[]` entry refreshed from a freshly built one in
//!   magnum-cluster-api's "existing" mode (`mutate_machine_deployment`): only
//!   `metadata.labels`, `metadata.annotations` (the autoscaler's), `replicas`,
//!   `nodeVolumeDetachTimeout` and an empty `failureDomain` change; the entry's overrides
//!   (flavor, image, ...) stay, as they only change through an upgrade;
//! * an entry added (a new nodegroup) or removed (a nodegroup deleted);
//! * the Machines to mark for deletion for `nodes_to_remove`.

use serde_json::{Map, Value};

use crate::status::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL};

/// The annotation that makes CAPI remove a Machine first when its set shrinks.
pub const DELETE_MACHINE_ANNOTATION: &str = "cluster.x-k8s.io/delete-machine";
/// The label CAPI puts on a control plane's Machines.
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";

fn machine_deployments(cluster: &mut Value) -> &mut Vec<Value> {
    let workers = &mut cluster["spec"]["topology"]["workers"];
    if !workers["machineDeployments"].is_array() {
        workers["machineDeployments"] = Value::Array(Vec::new());
    }
    match workers["machineDeployments"].as_array_mut() {
        Some(list) => list,
        None => unreachable!("set to an array above"),
    }
}

/// The topology entry of a nodegroup.
pub fn entry<'a>(cluster: &'a Value, name: &str) -> Option<&'a Value> {
    cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array()?
        .iter()
        .find(|md| md["name"].as_str() == Some(name))
}

/// `spec.topology.controlPlane.replicas = n`.
pub fn set_control_plane_replicas(cluster: &mut Value, n: i64) -> bool {
    let cp = &mut cluster["spec"]["topology"]["controlPlane"];
    if cp["replicas"].as_i64() == Some(n) {
        return false;
    }
    cp["replicas"] = Value::from(n);
    true
}

/// Refresh the entry named like `fresh` in "existing" mode. `None`: there is no such entry.
pub fn refresh_entry(cluster: &mut Value, fresh: &Value) -> Option<bool> {
    let name = fresh["name"].as_str()?;
    let entry = machine_deployments(cluster)
        .iter_mut()
        .find(|md| md["name"].as_str() == Some(name))?;
    let before = entry.clone();
    let Some(e) = entry.as_object_mut() else {
        return Some(false);
    };
    let meta = e
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    meta["labels"] = fresh["metadata"]["labels"].clone();
    meta["annotations"] = fresh["metadata"]["annotations"].clone();
    match fresh.get("replicas") {
        Some(r) => {
            e.insert("replicas".into(), r.clone());
        }
        // with the autoscaler the replicas are its to set
        None => {
            e.remove("replicas");
        }
    }
    e.insert(
        "nodeVolumeDetachTimeout".into(),
        fresh["nodeVolumeDetachTimeout"].clone(),
    );
    // an empty failure domain is no longer valid (CAPI >= 1.10): the label's, else none
    if e.get("failureDomain").and_then(Value::as_str) == Some("") {
        match fresh.get("failureDomain") {
            Some(fd) => {
                e.insert("failureDomain".into(), fd.clone());
            }
            None => {
                e.remove("failureDomain");
            }
        }
    }
    Some(*entry != before)
}

/// Add `fresh` as a new entry; an entry of the same name (an earlier attempt) is replaced.
pub fn put_entry(cluster: &mut Value, fresh: Value) -> bool {
    let name = fresh["name"].as_str().map(str::to_string);
    let list = machine_deployments(cluster);
    match list
        .iter_mut()
        .find(|md| md["name"].as_str() == name.as_deref())
    {
        Some(existing) if *existing == fresh => false,
        Some(existing) => {
            *existing = fresh;
            true
        }
        None => {
            list.push(fresh);
            true
        }
    }
}

/// Remove the entry `name`; `false` when there is none.
pub fn remove_entry(cluster: &mut Value, name: &str) -> bool {
    let list = machine_deployments(cluster);
    let before = list.len();
    list.retain(|md| md["name"].as_str() != Some(name));
    list.len() != before
}

/// The label selector of a nodegroup's Machines: the control plane's for the master
/// nodegroup, the topology deployment's otherwise.
pub fn machine_selector(stack_id: &str, nodegroup: &str, master: bool) -> String {
    if master {
        format!("{CLUSTER_NAME_LABEL}={stack_id},{CONTROL_PLANE_LABEL}")
    } else {
        format!("{CLUSTER_NAME_LABEL}={stack_id},{DEPLOYMENT_NAME_LABEL}={nodegroup}")
    }
}

/// The Machines (names) that `nodes_to_remove` names: by the Nova server id at the end of
/// `spec.providerID` (magnum-cluster-api's rule), or by the node's or the Machine's name
/// (what `openstack coe cluster resize --nodes-to-remove` users also pass).
pub fn machines_to_remove(machines: &[Value], nodes_to_remove: &[String]) -> Vec<String> {
    machines
        .iter()
        .filter(|m| {
            let server = m["spec"]["providerID"]
                .as_str()
                .and_then(|p| p.rsplit('/').next())
                .filter(|s| !s.is_empty());
            let node = m["status"]["nodeRef"]["name"].as_str();
            let name = m["metadata"]["name"].as_str();
            nodes_to_remove.iter().any(|n| {
                Some(n.as_str()) == server || Some(n.as_str()) == node || Some(n.as_str()) == name
            })
        })
        .filter_map(|m| m["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live() -> Value {
        json!({"spec": {"topology": {
            "controlPlane": {"replicas": 3},
            "workers": {"machineDeployments": [
                {"name": "default-worker", "class": "default-worker", "replicas": 1,
                 "failureDomain": "",
                 "metadata": {"labels": {"a": ""}, "annotations": {}},
                 "nodeVolumeDetachTimeout": "300s",
                 "variables": {"overrides": [{"name": "flavor", "value": "m1.small"}]}},
            ]},
        }}})
    }

    #[test]
    fn the_control_plane_changes_only_when_asked_for_another_count() {
        let mut c = live();
        assert!(!set_control_plane_replicas(&mut c, 3));
        assert!(set_control_plane_replicas(&mut c, 5));
        assert_eq!(c["spec"]["topology"]["controlPlane"]["replicas"], 5);
    }

    #[test]
    fn an_entry_is_refreshed_in_existing_mode() {
        let mut c = live();
        let fresh = json!({"name": "default-worker", "replicas": 4,
            "failureDomain": "az1",
            "metadata": {"labels": {"b": ""}, "annotations": {}},
            "nodeVolumeDetachTimeout": "300s",
            "variables": {"overrides": [{"name": "flavor", "value": "m1.large"}]}});
        assert_eq!(refresh_entry(&mut c, &fresh), Some(true));
        let e = entry(&c, "default-worker").unwrap();
        assert_eq!(e["replicas"], 4);
        assert_eq!(e["metadata"]["labels"], json!({"b": ""}));
        assert_eq!(e["failureDomain"], "az1");
        // the overrides only change through an upgrade
        assert_eq!(e["variables"]["overrides"][0]["value"], "m1.small");
        assert_eq!(refresh_entry(&mut c, &fresh), Some(false));
        // autoscaling: no replicas
        let mut auto = fresh.clone();
        auto.as_object_mut().unwrap().remove("replicas");
        assert_eq!(refresh_entry(&mut c, &auto), Some(true));
        assert!(entry(&c, "default-worker")
            .unwrap()
            .get("replicas")
            .is_none());
        assert_eq!(refresh_entry(&mut c, &json!({"name": "other"})), None);
    }

    #[test]
    fn entries_are_added_once_and_removed() {
        let mut c = live();
        let ng = json!({"name": "ng2", "replicas": 2});
        assert!(put_entry(&mut c, ng.clone()));
        assert!(!put_entry(&mut c, ng));
        assert!(put_entry(&mut c, json!({"name": "ng2", "replicas": 3})));
        assert_eq!(
            c["spec"]["topology"]["workers"]["machineDeployments"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert!(remove_entry(&mut c, "ng2"));
        assert!(!remove_entry(&mut c, "ng2"));
        let mut empty = json!({"spec": {"topology": {}}});
        assert!(put_entry(&mut empty, json!({"name": "x"})));
        assert!(entry(&empty, "x").is_some());
    }

    #[test]
    fn machines_are_found_by_server_node_or_machine_name() {
        let ms = vec![
            json!({"metadata": {"name": "m-a"}, "spec": {"providerID": "openstack:///RegionOne/1111"},
                   "status": {"nodeRef": {"name": "node-a"}}}),
            json!({"metadata": {"name": "m-b"}, "spec": {"providerID": "openstack:///2222"}}),
            json!({"metadata": {"name": "m-c"}, "spec": {}}),
        ];
        assert_eq!(machines_to_remove(&ms, &["1111".into()]), vec!["m-a"]);
        assert_eq!(machines_to_remove(&ms, &["node-a".into()]), vec!["m-a"]);
        assert_eq!(
            machines_to_remove(&ms, &["2222".into(), "m-c".into()]),
            vec!["m-b", "m-c"]
        );
        assert!(machines_to_remove(&ms, &["".into()]).is_empty());
        assert_eq!(
            machine_selector("kube-x", "ng", false),
            "cluster.x-k8s.io/cluster-name=kube-x,topology.cluster.x-k8s.io/deployment-name=ng"
        );
    }
}
