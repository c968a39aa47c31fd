#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use openkeel_core::objects::{ClusterHealthStatus, ClusterStatus};
use serde_json::json;

fn fixture(name: &str) -> Value {
    let text = match name {
        "cluster_create" => include_str!("fixtures/cluster_create.json"),
        "cluster_upgrade" => include_str!("fixtures/cluster_upgrade.json"),
        "cluster_upgrade_reply" => include_str!("fixtures/cluster_upgrade_reply.json"),
        "sign_certificate" => include_str!("fixtures/sign_certificate.json"),
        "sign_certificate_reply" => include_str!("fixtures/sign_certificate_reply.json"),
        "get_ca_certificate_reply" => include_str!("fixtures/get_ca_certificate_reply.json"),
        "object_action_ct_create" => include_str!("fixtures/object_action_ct_create.json"),
        "get_by_name_reply" => include_str!("fixtures/get_by_name_reply.json"),
        _ => panic!("no fixture {name}"),
    };
    serde_json::from_str(text).unwrap()
}

/// Decode, re-encode, and compare with the captured primitive (key order included;
/// `changes` compared as a set since Python's set order is arbitrary).
fn roundtrip<T: VersionedObject + std::fmt::Debug + PartialEq + Clone>(prim: &Value) -> Obj<T> {
    let obj: Obj<T> = decode(prim).unwrap();
    let again = encode(&obj);
    let mut a = prim.clone();
    let mut b = again.clone();
    let ca = a.as_object_mut().unwrap().remove("magnum_object.changes");
    let cb = b.as_object_mut().unwrap().remove("magnum_object.changes");
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let set = |c: Option<Value>| -> std::collections::BTreeSet<String> {
        c.map(|c| {
            c.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
    };
    assert_eq!(set(ca), set(cb));
    let back: Obj<T> = decode(&again).unwrap();
    assert_eq!(back, obj);
    obj
}

#[test]
fn cluster_create_fixture_new_object_only_changed_fields() {
    let f = fixture("cluster_create");
    let c: Obj<Cluster> = roundtrip(&f["args"]["cluster"]);
    assert_eq!(c.data.id, 0);
    assert_eq!(c.data.name.as_deref(), Some("k8s-smoke"));
    assert_eq!(c.data.labels.as_ref().unwrap()["kube_tag"], "v1.30.1");
    assert_eq!(c.data.floating_ip_enabled, Some(true));
    assert_eq!(c.data.master_lb_enabled, Some(false));
    assert_eq!(c.changes.len(), 18);
    assert!(c.changed("discovery_url"));
    assert!(!c.changed("status"));
}

#[test]
fn cluster_upgrade_fixture_all_three_objects() {
    let f = fixture("cluster_upgrade");
    let c: Obj<Cluster> = roundtrip(&f["args"]["cluster"]);
    assert_eq!(c.data.id, 1);
    assert_eq!(c.data.status, Some(ClusterStatus::UpdateComplete));
    assert_eq!(c.data.health_status, None);
    assert_eq!(c.data.health_status_reason, Some(Default::default()));
    assert_eq!(
        c.data.created_at.unwrap().to_string(),
        "2026-12-02 14:18:07"
    );
    assert!(c.changes.is_empty());
    let ct: Obj<ClusterTemplate> = roundtrip(&f["args"]["cluster_template"]);
    assert_eq!(ct.data.id, 2);
    assert_eq!(ct.data.coe.as_deref(), Some("kubernetes"));
    assert_eq!(ct.data.driver.as_deref(), Some("k8s_fake_v1"));
    assert_eq!(ct.data.updated_at, None);
    let ng: Obj<NodeGroup> = roundtrip(&f["args"]["nodegroup"]);
    assert_eq!(ng.data.name, "default-worker");
    assert_eq!(ng.data.node_count, Some(2));
    assert_eq!(ng.data.min_node_count, Some(0));
    assert_eq!(ng.data.node_taints, Some(vec![]));
    assert_eq!(ng.data.node_addresses, Some(vec![]));
}

#[test]
fn reply_fixtures() {
    let c: Obj<Cluster> = roundtrip(&fixture("cluster_upgrade_reply")["result"]);
    assert_eq!(c.data.id, 1);
    let c: Obj<Cluster> = roundtrip(&fixture("get_by_name_reply")["result"]);
    assert_eq!(c.data.name.as_deref(), Some("k8s-smoke"));
}

#[test]
fn certificate_fixtures_only_set_fields() {
    let f = fixture("sign_certificate");
    let _: Obj<Cluster> = roundtrip(&f["args"]["cluster"]);
    let cert: Obj<Certificate> = roundtrip(&f["args"]["certificate"]);
    assert!(cert.data.csr.is_some());
    assert_eq!(cert.data.pem, None);
    let signed: Obj<Certificate> = roundtrip(&fixture("sign_certificate_reply")["result"]);
    assert!(signed
        .data
        .pem
        .as_deref()
        .unwrap()
        .starts_with("-----BEGIN CERT"));
    let ca: Obj<Certificate> = roundtrip(&fixture("get_ca_certificate_reply")["result"]);
    assert_eq!(ca.data.csr, None);
    // csr is absent from the CA reply's data, not null
    assert!(encode(&ca)["magnum_object.data"].get("csr").is_none());
}

#[test]
fn cluster_template_new_object_fixture() {
    let f = fixture("object_action_ct_create");
    let ct: Obj<ClusterTemplate> = roundtrip(&f["args"]["objinst"]);
    assert_eq!(ct.data.id, 0);
    assert_eq!(ct.data.name.as_deref(), Some("k8s-ubuntu"));
}

fn prim(name: &str, version: &str, data: Value) -> Value {
    json!({
        "magnum_object.name": name,
        "magnum_object.namespace": "magnum",
        "magnum_object.version": version,
        "magnum_object.data": data,
    })
}

#[test]
fn every_object_roundtrips_from_db_shape() {
    let ms: MagnumService = serde_json::from_value(json!({
        "id": 3, "report_count": 7, "host": "h", "binary": "magnum-conductor",
        "disabled": false, "forced_down": false, "last_seen_up": "2026-12-02T14:00:00",
        "disabled_reason": null, "created_at": null, "updated_at": null
    }))
    .unwrap();
    let e = encode(&Obj::unchanged(ms.clone()));
    assert_eq!(e["magnum_object.version"], "1.0");
    assert_eq!(
        e["magnum_object.data"]["last_seen_up"],
        "2026-12-02T14:00:00Z"
    );
    let keys: Vec<&String> = e["magnum_object.data"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "host",
            "binary",
            "disabled",
            "disabled_reason",
            "last_seen_up",
            "forced_down",
            "report_count",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(decode::<MagnumService>(&e).unwrap().data, ms);

    let q = Quota {
        id: 1,
        project_id: Some("p".into()),
        resource: Some("Cluster".into()),
        hard_limit: 5,
        ..Default::default()
    };
    let e = encode(&Obj::unchanged(q.clone()));
    assert_eq!(decode::<Quota>(&e).unwrap().data, q);

    let fed = Federation {
        id: 2,
        uuid: Some("u".into()),
        member_ids: Some(vec!["a".into()]),
        properties: Some(
            [("dns-zone".to_string(), "x.".to_string())]
                .into_iter()
                .collect(),
        ),
        ..Default::default()
    };
    let e = encode(&Obj::unchanged(fed.clone()));
    assert_eq!(e["magnum_object.data"]["status"], Value::Null);
    assert_eq!(decode::<Federation>(&e).unwrap().data, fed);

    let kp = X509KeyPair {
        id: 4,
        certificate: Some("c".into()),
        ..Default::default()
    };
    let e = encode(&Obj::unchanged(kp.clone()));
    assert_eq!(e["magnum_object.version"], "1.2");
    assert_eq!(decode::<X509KeyPair>(&e).unwrap().data, kp);

    let st = Stats {
        clusters: 2,
        nodes: 5,
    };
    let e = encode(&Obj::new(st, ["clusters", "nodes"]));
    assert_eq!(
        e,
        json!({"magnum_object.name": "Stats", "magnum_object.namespace": "magnum",
               "magnum_object.version": "1.0",
               "magnum_object.data": {"clusters": 2, "nodes": 5},
               "magnum_object.changes": ["clusters", "nodes"]})
    );
    assert_eq!(decode::<Stats>(&e).unwrap().data, st);
}

#[test]
fn version_acceptance() {
    assert!(version_accepted("1.24", "1.24"));
    assert!(version_accepted("1.18", "1.24"));
    assert!(!version_accepted("1.25", "1.24"));
    assert!(!version_accepted("2.0", "1.24"));
    assert!(version_accepted("1.24.3", "1.24"));
    assert!(!version_accepted("1.25.0", "1.24"));
    assert!(!version_accepted("x", "1.24"));
    let e = decode::<Cluster>(&prim("Cluster", "1.25", json!({"id": 1}))).unwrap_err();
    assert_eq!(e.class, "IncompatibleObjectVersion");
    let e = decode::<Cluster>(&prim("Cluster", "2.0", json!({"id": 1}))).unwrap_err();
    assert_eq!(e.class, "IncompatibleObjectVersion");
    assert!(decode::<NodeGroup>(&prim("NodeGroup", "1.0", json!({"uuid": "u"}))).is_ok());
    let mut p = prim("Cluster", "1.24", json!({}));
    p["magnum_object.namespace"] = json!("nova");
    assert_eq!(
        decode::<Cluster>(&p).unwrap_err().class,
        "UnsupportedObjectError"
    );
    let p = prim("NodeGroup", "1.2", json!({}));
    assert_eq!(
        decode::<Cluster>(&p).unwrap_err().class,
        "UnsupportedObjectError"
    );
}

#[test]
fn unknown_keys_ignored_and_changes_intersected() {
    let mut p = prim(
        "Cluster",
        "1.24",
        json!({"id": 1, "trust_id": "gone-in-1.24", "name": "a", "cluster_template": {}}),
    );
    p["magnum_object.changes"] = json!(["name", "trust_id", "bogus"]);
    let c: Obj<Cluster> = decode(&p).unwrap();
    assert_eq!(c.data.name.as_deref(), Some("a"));
    assert_eq!(c.changes.iter().collect::<Vec<_>>(), ["name"]);
}

#[test]
fn null_rules() {
    // non-nullable with default -> the default
    let ng: Obj<NodeGroup> = decode(&prim(
        "NodeGroup",
        "1.2",
        json!({"id": 1, "uuid": "u", "min_node_count": null, "node_count": null, "is_default": null}),
    ))
    .unwrap();
    assert_eq!(ng.data.min_node_count, Some(0));
    assert_eq!(ng.data.node_count, Some(1));
    assert_eq!(ng.data.is_default, Some(false));
    let c: Obj<Cluster> = decode(&prim(
        "Cluster",
        "1.24",
        json!({"id": 1, "floating_ip_enabled": null, "master_lb_enabled": null}),
    ))
    .unwrap();
    assert_eq!(c.data.floating_ip_enabled, Some(true));
    assert_eq!(c.data.master_lb_enabled, Some(false));
    // nullable -> None
    let c: Obj<Cluster> =
        decode(&prim("Cluster", "1.24", json!({"id": 1, "labels": null}))).unwrap();
    assert_eq!(c.data.labels, None);
    // non-nullable without default -> error
    let e = decode::<MagnumService>(&prim(
        "MagnumService",
        "1.0",
        json!({"id": 1, "disabled": null}),
    ))
    .unwrap_err();
    assert_eq!(e.class, "ValueError");
    assert!(decode::<Cluster>(&prim("Cluster", "1.24", json!({"id": null}))).is_err());
    // encoding a DB NULL in a defaulted field writes the default
    let ng = NodeGroup {
        id: 1,
        min_node_count: None,
        ..Default::default()
    };
    assert_eq!(
        encode(&Obj::unchanged(ng))["magnum_object.data"]["min_node_count"],
        0
    );
}

#[test]
fn coercions() {
    let c: Obj<Cluster> = decode(&prim(
        "Cluster",
        "1.24",
        json!({"id": "1", "docker_volume_size": "10", "name": 5, "keypair": true,
               "health_status": "UNHEALTHY",
               "health_status_reason": {"n0.Ready": true, "count": 2, "s": "x"}}),
    ))
    .unwrap();
    assert_eq!(c.data.id, 1);
    assert_eq!(c.data.docker_volume_size, Some(10));
    assert_eq!(c.data.name.as_deref(), Some("5"));
    assert_eq!(c.data.keypair.as_deref(), Some("True"));
    assert_eq!(c.data.health_status, Some(ClusterHealthStatus::Unhealthy));
    let r = c.data.health_status_reason.unwrap();
    assert_eq!(r["n0.Ready"], "True");
    assert_eq!(r["count"], "2");
    assert!(decode::<Cluster>(&prim("Cluster", "1.24", json!({"id": "one"}))).is_err());
    assert!(decode::<Cluster>(&prim(
        "Cluster",
        "1.24",
        json!({"id": 1, "status": "BOGUS"})
    ))
    .is_err());
    assert!(decode::<Cluster>(&prim(
        "Cluster",
        "1.24",
        json!({"id": 1, "labels": {"a": [1]}})
    ))
    .is_err());
    let ng: Obj<NodeGroup> = decode(&prim(
        "NodeGroup",
        "1.2",
        json!({"id": 1, "uuid": "u", "node_addresses": ["10.0.0.1", 7],
               "node_taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
    ))
    .unwrap();
    assert_eq!(ng.data.node_addresses.unwrap(), ["10.0.0.1", "7"]);
    assert_eq!(ng.data.node_taints.unwrap()[0]["effect"], "NoSchedule");
    assert!(decode::<NodeGroup>(&prim("NodeGroup", "1.2", json!({"node_taints": ["x"]}))).is_err());
}
