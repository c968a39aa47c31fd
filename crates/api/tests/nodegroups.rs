#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of the five nodegroup routes (`/v1/clusters/{c}/nodegroups[/{ng}]`,
//! 1.9+) against a real database (a temporary SQLite file; MariaDB too when
//! `OPENKEEL_TEST_MYSQL_URL` is set), a recording conductor, a fake cloud and Magnum's default
//! policy. Expected bodies and messages are what the real magnum-api 23.0.0 answers.

#[macro_use]
mod common;

use common::*;
use openkeel_core::objects::{ClusterStatus, NodeGroup};

on_both!(
    nodegroups_need_1_9,
    list_summary_filters_and_pages,
    show_full_by_name_uuid_and_id,
    create_sends_the_new_nodegroup,
    create_checks,
    patch_min_max_labels_taints,
    patch_checks,
    delete_route,
    node_labels_and_taints_are_not_gated_at_1_14,
    bad_input_is_400_not_500,
);

const NG: &str = "/v1/clusters/k8s-prod/nodegroups";

async fn nodegroups_need_1_9(api: Api) {
    seed(&api.db).await;
    for (m, path) in [
        ("GET", NG.to_string()),
        ("GET", format!("{NG}/default-worker")),
        ("POST", NG.to_string()),
        ("DELETE", format!("{NG}/x")),
    ] {
        let r = call_app(&api.app, Who::ProjectAdmin, m, &path, None, Some("1.8")).await;
        assert_eq!(r.status, 406, "{m} {path}");
        assert_eq!(r.header("openstack-api-version"), None);
        assert_eq!(
            r.body,
            r#"{"errors": [{"request_id": "", "code": "", "status": 406, "title": "", "detail": "", "links": []}]}"#
        );
    }
    // Without a version header (1.1) too.
    let r = call_app(&api.app, Who::ProjectAdmin, "GET", NG, None, None).await;
    assert_eq!(r.status, 406);
}

async fn list_summary_filters_and_pages(api: Api) {
    let c = seed(&api.db).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "gpu",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    extra.min_node_count = Some(1);
    extra.max_node_count = Some(5);
    extra.stack_id = None;
    add_nodegroup(&api.db, &extra).await;

    let r = api.get_at(NG, "1.9").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        format!(
            r#"{{"nodegroups": [{{"uuid": "{MASTER_UUID}", "name": "default-master", "flavor_id": "m1.medium", "image_id": "ubuntu-jammy", "node_count": 1, "role": "master", "min_node_count": 0, "max_node_count": null, "is_default": true, "stack_id": "kube-9c6f1", "status": "CREATE_COMPLETE", "merge_labels": false}}, {{"uuid": "{WORKER_UUID}", "name": "default-worker", "flavor_id": "m1.large", "image_id": "ubuntu-jammy", "node_count": 3, "role": "worker", "min_node_count": 0, "max_node_count": null, "is_default": true, "stack_id": "kube-9c6f1", "status": "CREATE_COMPLETE", "merge_labels": false}}, {{"uuid": "5e5e5e5e-1111-4222-8333-444455556666", "name": "gpu", "flavor_id": "m1.large", "image_id": "ubuntu-jammy", "node_count": 2, "role": "worker", "min_node_count": 0, "max_node_count": null, "is_default": false, "stack_id": null, "status": "CREATE_COMPLETE", "merge_labels": false}}]}}"#
        )
    );
    // role filter (not carried into `next`).
    let r = api
        .get_at(&format!("{NG}?role=worker&limit=1"), "1.14")
        .await;
    let j = r.json();
    assert_eq!(j["nodegroups"].as_array().unwrap().len(), 1);
    assert_eq!(j["nodegroups"][0]["name"], "default-worker");
    assert_eq!(
        j["next"],
        format!("http://{HOST}/v1/clusters/{C_UUID}/nodegroups?sort_key=id&sort_dir=asc&limit=1&marker={WORKER_UUID}")
    );
    let r = api
        .get_at(&format!("{NG}?role=worker&marker={WORKER_UUID}"), "1.14")
        .await;
    assert_eq!(r.json()["nodegroups"][0]["name"], "gpu");
    for (q, status, detail) in [
        ("marker=abc", 400, "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.".to_string()),
        ("marker=bae24bf1-1ad5-4241-849f-47202a443f1e", 404, "Nodegroup bae24bf1-1ad5-4241-849f-47202a443f1e could not be found.".into()),
        ("limit=0", 400, "Limit must be positive".into()),
        ("sort_dir=up", 400, "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'".into()),
        ("sort_key=nope", 400, "The sort_key value \"nope\" is an invalid field for sorting".into()),
        ("foo=1", 400, "Unknown argument: \"foo\"".into()),
    ] {
        assert_eq!(api.get_at(&format!("{NG}?{q}"), "1.14").await.err(), (status, detail), "{q}");
    }
    assert_eq!(
        api.get_at("/v1/clusters/nope/nodegroups", "1.14")
            .await
            .err(),
        (404, "Cluster nope could not be found.".into())
    );
    // A member of another project: the cluster is not visible.
    let r = api
        .call(
            Who::Member("other"),
            "GET",
            &format!("/v1/clusters/{C_UUID}/nodegroups"),
            None,
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, format!("Cluster {C_UUID} could not be found."))
    );
}

async fn show_full_by_name_uuid_and_id(api: Api) {
    let c = seed(&api.db).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "gpu",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    extra.min_node_count = Some(1);
    extra.max_node_count = Some(5);
    extra.labels = Some(map(&[("kube_tag", "v1.30.4"), ("gpu", "true")]));
    extra.node_labels = Some(map(&[("accelerator", "nvidia")]));
    let mut taint = serde_json::Map::new();
    taint.insert("key".into(), "nvidia.com/gpu".into());
    taint.insert("value".into(), "present".into());
    taint.insert("effect".into(), "NoSchedule".into());
    extra.node_taints = Some(vec![taint]);
    extra.updated_at = Some(at(7, 31, 40));
    let stored = add_nodegroup(&api.db, &extra).await;
    let expected = format!(
        r#"{{"id": {id}, "uuid": "5e5e5e5e-1111-4222-8333-444455556666", "name": "gpu", "cluster_id": "{C_UUID}", "project_id": "admin-project", "docker_volume_size": null, "labels": {{"kube_tag": "v1.30.4", "gpu": "true"}}, "links": [{{"href": "http://{HOST}/v1/clusters/{C_UUID}/nodegroups/5e5e5e5e-1111-4222-8333-444455556666", "rel": "self"}}, {{"href": "http://{HOST}/clusters/{C_UUID}/nodegroups/5e5e5e5e-1111-4222-8333-444455556666", "rel": "bookmark"}}], "flavor_id": "m1.large", "image_id": "ubuntu-jammy", "node_addresses": [], "node_count": 2, "role": "worker", "min_node_count": 1, "max_node_count": 5, "is_default": false, "stack_id": "kube-9c6f1", "status": "CREATE_COMPLETE", "status_reason": null, "version": null, "merge_labels": false, "labels_overridden": {{}}, "labels_added": {{"gpu": "true"}}, "labels_skipped": {{"boot_volume_size": "40", "auto_scaling_enabled": "true"}}, "node_labels": {{"accelerator": "nvidia"}}, "node_taints": [{{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}}], "created_at": "2026-07-17T06:52:54+00:00", "updated_at": "2026-07-17T07:31:40+00:00"}}"#,
        id = stored.id
    );
    for ident in [
        "gpu".to_string(),
        "5e5e5e5e-1111-4222-8333-444455556666".to_string(),
        stored.id.to_string(),
    ] {
        let r = api.get_at(&format!("{NG}/{ident}"), "1.9").await;
        assert_eq!(
            (r.status, r.body.clone()),
            (200, expected.clone()),
            "{ident}"
        );
    }
    assert_eq!(
        api.get_at(&format!("{NG}/nope"), "1.14").await.err(),
        (404, "Nodegroup nope could not be found.".into())
    );
    // The path is percent-decoded before the look-ups (as WSGI's PATH_INFO).
    let r = api
        .get_at("/v1/clusters/k8s%2Dprod/nodegroups/gp%75", "1.9")
        .await;
    assert_eq!((r.status, r.body), (200, expected.clone()));
    assert_eq!(
        api.get_at(&format!("{NG}/%7Bng%7D"), "1.14").await.err(),
        (404, "Nodegroup {ng} could not be found.".into())
    );
    // A reader may read.
    let r = api
        .call(
            Who::Reader("admin-project"),
            "GET",
            &format!("{NG}/gpu"),
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.status, 200);
}

fn ng_changes(ng: &openkeel_rpc::Obj<NodeGroup>) -> Vec<&str> {
    ng.changes.iter().map(String::as_str).collect()
}

async fn create_sends_the_new_nodegroup(api: Api) {
    seed(&api.db).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            NG,
            Some(r#"{"name": "ng1", "node_count": 2, "labels": {"x": 1, "y": true}, "merge_labels": true, "node_labels": {"a": "b"}}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let uuid = r.json()["uuid"].as_str().unwrap().to_string();
    assert_eq!(
        r.body,
        format!(
            r#"{{"uuid": "{uuid}", "name": "ng1", "cluster_id": "{C_UUID}", "project_id": "admin-project", "labels": {{"kube_tag": "v1.30.4", "boot_volume_size": "40", "auto_scaling_enabled": "true", "x": "1", "y": "True"}}, "links": [{{"href": "http://{HOST}/v1/clusters/{C_UUID}/nodegroups/{uuid}", "rel": "self"}}, {{"href": "http://{HOST}/clusters/{C_UUID}/nodegroups/{uuid}", "rel": "bookmark"}}], "flavor_id": "m1.large", "image_id": "ubuntu-jammy", "node_count": 2, "role": "worker", "min_node_count": 0, "max_node_count": null, "merge_labels": false, "labels_overridden": {{}}, "labels_added": {{"x": "1", "y": "True"}}, "labels_skipped": {{}}, "node_labels": {{"a": "b"}}}}"#
        )
    );
    let casts = api.conductor.take();
    let [Cast::NgCreate { cluster, nodegroup }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data.uuid.as_deref(), Some(C_UUID));
    assert!(cluster.changes.is_empty());
    assert_eq!(
        ng_changes(nodegroup),
        vec![
            "cluster_id",
            "flavor_id",
            "image_id",
            "labels",
            "max_node_count",
            "min_node_count",
            "name",
            "node_count",
            "node_labels",
            "project_id",
            "role",
            "uuid",
        ]
    );
    let n = &nodegroup.data;
    assert_eq!(n.uuid, uuid);
    assert_eq!(
        (n.node_count, n.min_node_count, n.max_node_count),
        (Some(2), Some(0), None)
    );
    assert_eq!(n.role.as_deref(), Some("worker"));
    assert_eq!(n.node_labels, Some(map(&[("a", "b")])));
    // The row is the conductor's to write.
    assert!(openkeel_db::nodegroup::get_by_name(
        &api.db,
        &openkeel_db::Scope::admin_all_tenants(),
        C_UUID,
        "ng1"
    )
    .await
    .is_err());

    // Optional attributes are forwarded, `id` included; no labels → the cluster's.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            NG,
            Some(r#"{"name": "ng2", "id": 99, "is_default": false, "status": "CREATE_COMPLETE", "flavor_id": "m1.small", "image_id": "fedora-coreos-40", "docker_volume_size": 5, "node_taints": [{"key": "k", "effect": "NoSchedule"}], "min_node_count": 1, "max_node_count": 3}"#),
            "1.9",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let j = r.json();
    assert_eq!(j["id"], 99);
    assert_eq!(j["is_default"], false);
    assert_eq!(j["status"], "CREATE_COMPLETE");
    assert_eq!(j["labels_skipped"], serde_json::json!({}));
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "id");
    let casts = api.conductor.take();
    let [Cast::NgCreate { nodegroup, .. }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert_eq!(nodegroup.data.id, 99);
    assert!(ng_changes(nodegroup).contains(&"id"));
    assert!(ng_changes(nodegroup).contains(&"node_taints"));
}

async fn create_checks(api: Api) {
    let c = seed(&api.db).await;
    for (body, status, detail) in [
        (r#"{"name": "default-worker"}"#, 409, "A node group with name default-worker already exists in the cluster k8s-prod."),
        (r#"{"name": "m", "role": "master"}"#, 400, "Creating master nodegroups is currently not supported."),
        (r#"{"name": "m", "min_node_count": 3}"#, 409, "min_node_count for m is invalid (min_node_count (3) should be less or equal to node_count (1))."),
        (r#"{"name": "m", "max_node_count": 1, "min_node_count": 2}"#, 409, "max_node_count for m is invalid (min_node_count (2) should be less or equal to max_node_count (1))."),
        (r#"{"name": "m", "max_node_count": 1, "node_count": 2}"#, 409, "max_node_count for m is invalid (node_count (2) should be less or equal to max_node_count (1))."),
        (r#"{"name": "m", "role": "master", "node_labels": {"a": "b"}}"#, 409, "node_labels for m is invalid (node_labels may not be set on master nodegroups)."),
        (r#"{"name": "m", "node_labels": {"kubernetes.io/foo": "x"}}"#, 409, "node_labels for m is invalid (node label 'kubernetes.io/foo' is in a restricted Kubernetes namespace; the kubelet will refuse to start. Labels in the kubernetes.io/ and k8s.io/ namespaces must use one of the allowed prefixes (kubelet.kubernetes.io, node.kubernetes.io) or be one of the allowed labels (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, node.kubernetes.io/windows-build, topology.kubernetes.io/region, topology.kubernetes.io/zone).)."),
        (r#"{"name": "m", "node_taints": ["x"]}"#, 400, "Invalid input for field/attribute nodegroup. Value: '{'name': 'm', 'node_taints': ['x']}'. Value not a valid dict: x"),
        (r#"{"name": "m", "node_taints": [{"key": "k", "effect": "Bad"}]}"#, 409, "node_taints for m is invalid (node_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute)."),
        (r#"{"name": "m", "node_taints": [{"effect": "NoSchedule"}]}"#, 409, "node_taints for m is invalid (node_taints[0].key is required)."),
        (r#"{"name": "m", "node_taints": [{"key": "k", "effect": "NoSchedule", "zz": "1"}]}"#, 409, "node_taints for m is invalid (node_taints[0] contains unrecognised field(s) zz; allowed fields are key, value, effect)."),
        (r#"{"name": "m", "node_labels": {"a": 1}}"#, 400, "Invalid input for field/attribute node_labels. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'"),
        (r#"{"name": "m", "foo": 1}"#, 400, "Unknown attribute for argument nodegroup: foo"),
        (r#"{"name": "", "node_count": 1}"#, 400, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"),
        (r#"{"name": "m", "id": 0}"#, 400, "Invalid input for field/attribute id. Value: '0'. Value should be greater or equal to 1"),
        (r#"{"name": "m", "project_id": "x"}"#, 400, "Invalid input for field/attribute project_id. Value: 'x'. Cannot set read only field."),
        (r#"{"name": "m", "uuid": "x"}"#, 400, "Expected a uuid but received x."),
    ] {
        let r = api.call(Who::ProjectAdmin, "POST", NG, Some(body), "1.14").await;
        assert_eq!(r.err(), (status, detail.to_string()), "{body}");
    }
    // Root volume: a zero-disk flavor with boot_volume_size 0 on the cluster.
    let mut c2 = cluster(
        "9d5e1ddc-1f0a-4c8e-bb1e-3a4b5c6d7e8f",
        "small",
        "admin-project",
    );
    c2.labels = Some(map(&[("boot_volume_size", "0")]));
    add_cluster(&api.db, &c2).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters/small/nodegroups",
            Some(r#"{"name": "z", "flavor_id": "ds4G"}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            400,
            "Flavor with zero root volume size is not supported when boot_volume_size is zero."
                .into()
        )
    );
    // No api_address yet.
    let mut c3 = cluster(
        "7d5e1ddc-1f0a-4c8e-bb1e-3a4b5c6d7e8f",
        "fresh",
        "admin-project",
    );
    c3.api_address = None;
    c3.status = Some(ClusterStatus::CreateInProgress);
    add_cluster(&api.db, &c3).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters/fresh/nodegroups",
            Some(r#"{"name": "z"}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (409, "Cluster API address is not available yet".into())
    );
    // Policy: a reader may not create; the cluster is looked up after the policy.
    let r = api
        .call(
            Who::Reader("admin-project"),
            "POST",
            NG,
            Some(r#"{"name": "z"}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            403,
            "Policy doesn't allow nodegroup:create to be performed.".into()
        )
    );
    let _ = c;
    assert!(api.conductor.take().is_empty());
}

async fn patch_min_max_labels_taints(api: Api) {
    let c = seed(&api.db).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "gpu",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    add_nodegroup(&api.db, &extra).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{NG}/gpu"),
            Some(r#"[{"op": "replace", "path": "/max_node_count", "value": 5}, {"op": "replace", "path": "/min_node_count", "value": 1}, {"op": "add", "path": "/node_labels/c", "value": 3}, {"op": "replace", "path": "/node_taints", "value": "[{'key': 'k', 'value': 'v', 'effect': 'NoSchedule'}]"}]"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let j = r.json();
    assert_eq!(j["min_node_count"], 1);
    assert_eq!(j["max_node_count"], 5);
    // Added into the stored dict: coerced to a string (oslo's CoercedDict).
    assert_eq!(j["node_labels"], serde_json::json!({"c": "3"}));
    assert_eq!(
        j["node_taints"],
        serde_json::json!([{"key": "k", "value": "v", "effect": "NoSchedule"}])
    );
    assert_eq!(
        j["links"][0]["href"],
        format!(
            "http://{HOST}/v1/clusters/{C_UUID}/nodegroups/5e5e5e5e-1111-4222-8333-444455556666"
        )
    );
    assert_eq!(j["updated_at"], serde_json::Value::Null);
    let casts = api.conductor.take();
    let [Cast::NgUpdate { cluster, nodegroup }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data.uuid.as_deref(), Some(C_UUID));
    assert_eq!(
        ng_changes(nodegroup),
        vec![
            "max_node_count",
            "min_node_count",
            "node_labels",
            "node_taints"
        ]
    );
    assert_eq!(
        (nodegroup.data.min_node_count, nodegroup.data.max_node_count),
        (Some(1), Some(5))
    );
    // An empty patch changes nothing but is still cast.
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{NG}/gpu"),
            Some("[]"),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202);
    let casts = api.conductor.take();
    let [Cast::NgUpdate { nodegroup, .. }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert!(nodegroup.changes.is_empty());
    // After a wholesale replace the dict is a plain one: an int added to it is refused.
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{NG}/gpu"),
            Some(r#"[{"op": "replace", "path": "/node_labels", "value": "{'a': 'b'}"}, {"op": "add", "path": "/node_labels/c", "value": 3}]"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (400, "Invalid input for field/attribute node_labels. Value: '{'a': 'b', 'c': 3}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'".into())
    );
    // Removing min/max sets the declared defaults (0 / None): unchanged here.
    let r = api
        .call(Who::ProjectAdmin, "PATCH", &format!("{NG}/default-worker"), Some(r#"[{"op": "remove", "path": "/max_node_count"}, {"op": "remove", "path": "/min_node_count"}]"#), "1.14")
        .await;
    assert_eq!(r.status, 202);
    let casts = api.conductor.take();
    let [Cast::NgUpdate { nodegroup, .. }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert!(nodegroup.changes.is_empty());
}

async fn patch_checks(api: Api) {
    seed(&api.db).await;
    let w = format!("{NG}/default-worker");
    for (path, body, status, detail) in [
        (&w, r#"[{"op": "replace", "path": "/name", "value": "x"}]"#, 400, "'/name' is an internal attribute and can not be updated".to_string()),
        (&w, r#"[{"op": "replace", "path": "/node_count", "value": 3}]"#, 400, "'/node_count' is an internal attribute and can not be updated".into()),
        (&w, r#"[{"op": "replace", "path": "/min_node_count", "value": "abc"}]"#, 400, "Invalid input for field/attribute min_node_count. Value: 'abc'. '<' not supported between instances of 'str' and 'int'".into()),
        (&w, r#"[{"op": "replace", "path": "/min_node_count", "value": 5}]"#, 409, "min_node_count for default-worker is invalid (min_node_count (5) should be less or equal to node_count (3)).".into()),
        (&w, r#"[{"op": "replace", "path": "/max_node_count", "value": 2}]"#, 409, "max_node_count for default-worker is invalid (node_count (3) should be less or equal to max_node_count (2)).".into()),
        (&w, r#"[{"op": "replace", "path": "/merge_labels", "value": "x"}]"#, 400, "Couldn't apply patch '[{'path': '/merge_labels', 'op': 'replace', 'value': 'x'}]'. Reason: can't replace a non-existent object 'merge_labels'".into()),
        (&w, r#"[{"op": "replace", "path": "/node_taints", "value": "[{'key': 'k', 'effect': 'X'}]"}]"#, 409, "node_taints for default-worker is invalid (node_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute).".into()),
        (&w, r#"[{"op": "replace", "path": "/node_labels", "value": "5"}]"#, 400, "Invalid input for field/attribute node_labels. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class 'int'>'".into()),
        (&w, r#"[{"op": "replace", "path": "/node_taints", "value": "['x']"}]"#, 400, "Invalid input for field/attribute node_taints. Value: '['x']'. Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class 'str'>'".into()),
        (&format!("{NG}/default-master"), r#"[{"op": "replace", "path": "/node_labels", "value": "{'a': 'b'}"}]"#, 409, "node_labels for default-master is invalid (node_labels may not be set on master nodegroups).".into()),
        (&format!("{NG}/nope"), "[]", 404, "Nodegroup nope could not be found.".into()),
    ] {
        let r = api.call(Who::ProjectAdmin, "PATCH", path, Some(body), "1.14").await;
        assert_eq!(r.err(), (status, detail), "{path} {body}");
    }
    // The cluster is looked up before the policy check.
    let r = api
        .call(
            Who::Member("other"),
            "PATCH",
            &format!("/v1/clusters/{C_UUID}/nodegroups/default-worker"),
            Some("[]"),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, format!("Cluster {C_UUID} could not be found."))
    );
    let r = api
        .call(
            Who::Reader("admin-project"),
            "PATCH",
            &w,
            Some("[]"),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            403,
            "Policy doesn't allow nodegroup:update to be performed.".into()
        )
    );
    assert!(api.conductor.take().is_empty());
}

async fn delete_route(api: Api) {
    let c = seed(&api.db).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "gpu",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    add_nodegroup(&api.db, &extra).await;
    assert_eq!(
        api.call(
            Who::ProjectAdmin,
            "DELETE",
            &format!("{NG}/default-worker"),
            None,
            "1.14"
        )
        .await
        .err(),
        (400, "Deleting a default nodegroup is not supported.".into())
    );
    assert_eq!(
        api.call(
            Who::ProjectAdmin,
            "DELETE",
            &format!("{NG}/nope"),
            None,
            "1.14"
        )
        .await
        .err(),
        (404, "Nodegroup nope could not be found.".into())
    );
    let r = api
        .call(
            Who::ProjectAdmin,
            "DELETE",
            &format!("{NG}/gpu"),
            None,
            "1.14",
        )
        .await;
    assert_eq!((r.status, r.body.as_str()), (204, ""));
    let casts = api.conductor.take();
    let [Cast::NgDelete { cluster, nodegroup }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data.uuid.as_deref(), Some(C_UUID));
    assert_eq!(nodegroup.data.name, "gpu");
    // Routing around the collection.
    assert_eq!(
        api.call(Who::ProjectAdmin, "DELETE", NG, None, "1.14")
            .await
            .err(),
        (400, "Missing argument: \"nodegroup_id\"".into())
    );
    let r = api
        .call(Who::ProjectAdmin, "PUT", NG, Some("{}"), "1.14")
        .await;
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("DELETE, GET, PATCH, POST"))
    );
    assert_eq!(
        api.call(Who::ProjectAdmin, "POST", &format!("{NG}/x"), Some("{}"), "1.14").await.err(),
        (400, "Invalid input for field/attribute nodegroup. Value: 'x'. unable to convert to NodeGroup. Error: NodeGroup.__init__() takes 1 positional argument but 2 were given".into())
    );
    assert_eq!(api.get_at(&format!("{NG}/x/y"), "1.14").await.status, 404);
}

async fn node_labels_and_taints_are_not_gated_at_1_14(api: Api) {
    seed(&api.db).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            NG,
            Some(r#"{"name": "early", "node_labels": {"a": "b"}, "node_taints": [{"key": "k", "effect": "NoExecute"}]}"#),
            "1.9",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let j = r.json();
    assert_eq!(j["node_labels"], serde_json::json!({"a": "b"}));
    assert_eq!(
        j["node_taints"],
        serde_json::json!([{"key": "k", "effect": "NoExecute"}])
    );
    let r = api.get_at(&format!("{NG}/default-worker"), "1.9").await;
    assert_eq!(r.json()["node_taints"], serde_json::json!([]));
}

/// Where Magnum answers 500 on bad input, OpenKeel answers 400 (docs/differences.md).
async fn bad_input_is_400_not_500(api: Api) {
    seed(&api.db).await;
    let w = format!("{NG}/default-worker");
    for (m, path, body, detail) in [
        ("POST", NG.to_string(), Some(r#"{"node_count": 2}"#), "Field `name' cannot be None"),
        ("POST", NG.to_string(), Some(r#"{"name": "m2", "is_default": "maybe"}"#), "Invalid input for field/attribute is_default. Value: 'maybe'. Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
        ("PATCH", w.clone(), Some(r#"[{"op": "add", "path": "/node_taints/-", "value": "x"}]"#), "A dict is required in field node_taints[1], not a str"),
        ("PATCH", w.clone(), None, "Missing argument: \"patch\""),
    ] {
        let r = api.call(Who::ProjectAdmin, m, &path, body, "1.14").await;
        assert_eq!(r.err(), (400, detail.to_string()), "{m} {path} {body:?}");
    }
    assert!(api.conductor.take().is_empty());
}
