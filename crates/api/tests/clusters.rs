#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of the six cluster routes and the two cluster actions against a real
//! database (a temporary SQLite file; MariaDB too when `OPENKEEL_TEST_MYSQL_URL` is set), a
//! recording conductor, a fake cloud with the reference rig's stub data and Magnum's default
//! policy. Expected bodies and messages are what the real magnum-api 23.0.0 answers.

#[macro_use]
mod common;

use common::*;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::ClusterStatus;

on_both!(
    list_and_detail_per_microversion,
    list_pagination_and_errors,
    show_lookup_and_scoping,
    show_faults_and_invisible_template,
    create_sends_the_object_magnum_sends,
    create_defaults_from_the_template,
    create_version_gates,
    create_validation_errors,
    create_quota_and_policy,
    patch_sends_cluster_update,
    patch_dialect_errors,
    patch_version_gates,
    delete_route,
    resize_action,
    upgrade_action,
    routing_quirks,
    bad_input_is_400_not_500,
    policy_rules_read_the_fields_they_name,
);

fn summary_body(version_key: &str) -> String {
    format!(
        r#"{{"uuid": "{C_UUID}", "name": "k8s-prod", "cluster_template_id": "{T_UUID}", "keypair": "mykey", "node_count": 3, "master_count": 1, "docker_volume_size": null, "labels": {{"kube_tag": "v1.30.4", "boot_volume_size": "40", "auto_scaling_enabled": "true"}}, "master_flavor_id": "m1.medium", "flavor_id": "m1.large", "create_timeout": 60, "links": [{{"href": "http://{HOST}/v1/clusters/{C_UUID}", "rel": "self"}}, {{"href": "http://{HOST}/clusters/{C_UUID}", "rel": "bookmark"}}], "{version_key}": "kube-9c6f1", "status": "CREATE_COMPLETE", "health_status": null, "merge_labels": false}}"#
    )
}

fn full_body(version_key: &str, faults: &str) -> String {
    format!(
        r#"{{"uuid": "{C_UUID}", "name": "k8s-prod", "cluster_template_id": "{T_UUID}", "keypair": "mykey", "node_count": 3, "master_count": 1, "docker_volume_size": null, "labels": {{"kube_tag": "v1.30.4", "boot_volume_size": "40", "auto_scaling_enabled": "true"}}, "master_flavor_id": "m1.medium", "flavor_id": "m1.large", "create_timeout": 60, "links": [{{"href": "http://{HOST}/v1/clusters/{C_UUID}", "rel": "self"}}, {{"href": "http://{HOST}/clusters/{C_UUID}", "rel": "bookmark"}}], "{version_key}": "kube-9c6f1", "status": "CREATE_COMPLETE", "status_reason": null, "health_status": null, "health_status_reason": {{}}, "discovery_url": null, "api_address": "https://172.24.4.6:6443", "coe_version": null, "container_version": null, "project_id": "admin-project", "user_id": "admin", "node_addresses": ["10.0.0.11", "10.0.0.12", "10.0.0.13"], "master_addresses": ["10.0.0.10"], {faults}"fixed_network": null, "fixed_subnet": null, "floating_ip_enabled": true, "merge_labels": false, "labels_overridden": {{"boot_volume_size": "10"}}, "labels_added": {{"auto_scaling_enabled": "true"}}, "labels_skipped": {{}}, "master_lb_enabled": true, "created_at": "2026-07-17T06:52:54+00:00", "updated_at": "2026-07-17T07:01:12+00:00"}}"#
    )
}

async fn list_and_detail_per_microversion(api: Api) {
    seed(&api.db).await;
    for (v, key) in [
        ("1.1", "stack_id"),
        ("1.12", "stack_id"),
        ("1.13", "cluster_id"),
        ("1.14", "cluster_id"),
    ] {
        let r = api.get_at("/v1/clusters", v).await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("openstack-api-version"),
            Some(format!("container-infrastructure-management {v}").as_str())
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.body,
            format!(r#"{{"clusters": [{}]}}"#, summary_body(key))
        );

        let r = api.get_at("/v1/clusters/detail", v).await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.body,
            format!(r#"{{"clusters": [{}]}}"#, full_body(key, ""))
        );

        let r = api.get_at(&format!("/v1/clusters/{C_UUID}"), v).await;
        assert_eq!((r.status, r.body.clone()), (200, full_body(key, "")));
    }
    // Without a version header: 1.1. The unprefixed path is the same route.
    let r = call_app(&api.app, Who::ProjectAdmin, "GET", "/clusters", None, None).await;
    assert_eq!(
        r.header("openstack-api-version"),
        Some("container-infrastructure-management 1.1")
    );
    assert_eq!(
        r.body,
        format!(r#"{{"clusters": [{}]}}"#, summary_body("stack_id"))
    );
}

async fn list_pagination_and_errors(api: Api) {
    seed(&api.db).await;
    let second = "9d5e1ddc-1f0a-4c8e-bb1e-3a4b5c6d7e8f";
    let c2 = add_cluster(&api.db, &cluster(second, "alpha", "admin-project")).await;
    add_nodegroup(
        &api.db,
        &nodegroup(
            "4a3e3f9e-5b0e-4c55-9b9b-000000000001",
            "default-master",
            &c2,
            "master",
            1,
        ),
    )
    .await;
    add_nodegroup(
        &api.db,
        &nodegroup(
            "4a3e3f9e-5b0e-4c55-9b9b-000000000002",
            "default-worker",
            &c2,
            "worker",
            0,
        ),
    )
    .await;

    let r = api.get_at("/v1/clusters?limit=1", "1.14").await;
    let j = r.json();
    assert_eq!(j["clusters"].as_array().unwrap().len(), 1);
    assert_eq!(j["clusters"][0]["uuid"], C_UUID);
    assert_eq!(
        j["next"],
        format!("http://{HOST}/v1/clusters?sort_key=id&sort_dir=asc&limit=1&marker={C_UUID}")
    );
    let r = api
        .get_at(&format!("/v1/clusters?limit=1&marker={C_UUID}"), "1.14")
        .await;
    let j = r.json();
    assert_eq!(j["clusters"][0]["uuid"], second);
    assert_eq!(j["clusters"][0]["node_count"], 0);
    let r = api
        .get_at(
            "/v1/clusters/detail?sort_key=name&sort_dir=desc&limit=1",
            "1.14",
        )
        .await;
    let j = r.json();
    assert_eq!(j["clusters"][0]["name"], "k8s-prod");
    assert_eq!(
        j["next"],
        format!(
            "http://{HOST}/v1/clusters/detail?sort_key=name&sort_dir=desc&limit=1&marker={C_UUID}"
        )
    );
    // A page that is not full has no `next`.
    assert!(api
        .get_at("/v1/clusters?limit=5", "1.14")
        .await
        .json()
        .get("next")
        .is_none());

    for (q, status, detail) in [
        ("limit=0", 400, "Limit must be positive".to_string()),
        ("limit=abc", 400, "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'".into()),
        ("limit=1&limit=2", 400, "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'".into()),
        ("marker=abc", 400, "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.".into()),
        ("marker=bae24bf1-1ad5-4241-849f-47202a443f1e", 404, "Cluster bae24bf1-1ad5-4241-849f-47202a443f1e could not be found.".into()),
        ("sort_key=node_count", 400, "The sort_key value \"node_count\" is an invalid field for sorting".into()),
        ("sort_dir=x", 400, "Invalid sort direction: x. Acceptable values are 'asc' or 'desc'".into()),
        ("foo=1", 400, "Unknown argument: \"foo\"".into()),
    ] {
        let r = api.get_at(&format!("/v1/clusters?{q}"), "1.14").await;
        assert_eq!(r.err(), (status, detail), "{q}");
        assert_eq!(
            r.header("openstack-api-version"),
            Some("container-infrastructure-management 1.14")
        );
    }
}

async fn show_lookup_and_scoping(api: Api) {
    seed(&api.db).await;
    // By name.
    let r = api.get_at("/v1/clusters/k8s-prod", "1.14").await;
    assert_eq!(r.json()["uuid"], C_UUID);
    // Unknown.
    assert_eq!(
        api.get_at("/v1/clusters/nope", "1.14").await.err(),
        (404, "Cluster nope could not be found.".into())
    );
    // A member of the project sees it; a member of another project does not.
    let r = api
        .call(
            Who::Member("admin-project"),
            "GET",
            "/v1/clusters/k8s-prod",
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .call(
            Who::Member("other"),
            "GET",
            "/v1/clusters/k8s-prod",
            None,
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, "Cluster k8s-prod could not be found.".into())
    );
    let r = api
        .call(Who::Member("other"), "GET", "/v1/clusters", None, "1.14")
        .await;
    assert_eq!(r.body, r#"{"clusters": []}"#);
    // Two clusters with one name in the project: 409.
    add_cluster(
        &api.db,
        &cluster(
            "0f0f0f0f-1111-4222-8333-444455556666",
            "k8s-prod",
            "admin-project",
        ),
    )
    .await;
    assert_eq!(
        api.get_at("/v1/clusters/k8s-prod", "1.14").await.err(),
        (
            409,
            "Multiple clusters exist with same name. Please use the cluster uuid instead.".into()
        )
    );
    // No role at all: the policy refuses.
    let r = api
        .call(
            Who::Reader("admin-project"),
            "GET",
            &format!("/v1/clusters/{C_UUID}"),
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.status, 200);
}

async fn show_faults_and_invisible_template(api: Api) {
    let mut c = seed(&api.db).await;
    // A failed cluster shows the failed nodegroups' reasons.
    c.status = Some(ClusterStatus::CreateFailed);
    openkeel_db::cluster::update(&api.db, C_UUID, &c, &["status"])
        .await
        .unwrap();
    let mut w = openkeel_db::nodegroup::get_by_uuid(
        &api.db,
        &openkeel_db::Scope::admin_all_tenants(),
        C_UUID,
        WORKER_UUID,
    )
    .await
    .unwrap();
    w.status = Some(ClusterStatus::CreateFailed);
    w.status_reason = Some("boom".into());
    openkeel_db::nodegroup::update(
        &api.db,
        C_UUID,
        WORKER_UUID,
        &w,
        &["status", "status_reason"],
    )
    .await
    .unwrap();
    let r = api.get_at(&format!("/v1/clusters/{C_UUID}"), "1.14").await;
    let j = r.json();
    assert_eq!(j["status"], "CREATE_FAILED");
    assert_eq!(j["faults"], serde_json::json!({"default-worker": "boom"}));
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    let i = keys.iter().position(|k| *k == "faults").unwrap();
    assert_eq!(keys[i - 1], "master_addresses");
    assert_eq!(keys[i + 1], "fixed_network");
    // The detail list never shows faults.
    let r = api.get_at("/v1/clusters/detail", "1.14").await;
    assert!(r.json()["clusters"][0].get("faults").is_none());

    // A cluster of another project's template that is private: 404 on the template, for the
    // whole list (non-admin).
    let other_t = "7b7b7b7b-1111-4222-8333-444455556666";
    add_template(&api.db, &template(other_t, "theirs", "other")).await;
    let mut c2 = cluster("8c8c8c8c-1111-4222-8333-444455556666", "mine", "p2");
    c2.cluster_template_id = Some(other_t.into());
    add_cluster(&api.db, &c2).await;
    let r = api
        .call(Who::Member("p2"), "GET", "/v1/clusters", None, "1.14")
        .await;
    assert_eq!(
        r.err(),
        (
            404,
            format!("ClusterTemplate {other_t} could not be found.")
        )
    );
    let r = api
        .call(Who::Member("p2"), "GET", "/v1/clusters/mine", None, "1.14")
        .await;
    assert_eq!(
        r.err(),
        (
            404,
            format!("ClusterTemplate {other_t} could not be found.")
        )
    );
    // The literal detail of `/{id}/detail`, and the marker typing of a name there.
    assert_eq!(
        api.get_at(&format!("/v1/clusters/{C_UUID}/detail"), "1.14")
            .await
            .err(),
        (
            404,
            "The %(name)s resource %(id)s could not be found.".into()
        )
    );
    assert_eq!(
        api.get_at("/v1/clusters/k8s-prod/detail", "1.14").await.err(),
        (400, "Invalid input for field/attribute marker. Value: 'k8s-prod'. unable to convert to uuid. Error: Expected a uuid but received k8s-prod.".into())
    );
}

fn changes(o: &openkeel_rpc::Obj<openkeel_core::objects::Cluster>) -> Vec<&str> {
    o.changes.iter().map(String::as_str).collect()
}

async fn create_sends_the_object_magnum_sends(api: Api) {
    add_template(&api.db, &template(T_UUID, "k8s", "admin-project")).await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters",
            Some(r#"{"cluster_template_id": "k8s", "name": "k8s-prod", "node_count": 3, "labels": {"auto_scaling_enabled": "true", "n": 1, "t": true}, "merge_labels": true, "discovery_url": "http://d"}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202);
    let uuid = r.json()["uuid"].as_str().unwrap().to_string();
    assert_eq!(r.body, format!(r#"{{"uuid": "{uuid}"}}"#));
    let casts = api.conductor.take();
    let [Cast::Create {
        cluster,
        master_count,
        node_count,
        create_timeout,
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!((*master_count, *node_count, *create_timeout), (1, 3, 60));
    assert_eq!(
        changes(cluster),
        vec![
            "cluster_template_id",
            "coe_version",
            "container_version",
            "create_timeout",
            "discovery_url",
            "docker_volume_size",
            "fixed_network",
            "fixed_subnet",
            "flavor_id",
            "floating_ip_enabled",
            "keypair",
            "labels",
            "master_flavor_id",
            "master_lb_enabled",
            "name",
            "project_id",
            "user_id",
            "uuid",
        ]
    );
    let c = &cluster.data;
    assert_eq!(c.uuid.as_deref(), Some(uuid.as_str()));
    assert_eq!(c.cluster_template_id.as_deref(), Some(T_UUID));
    assert_eq!(c.name.as_deref(), Some("k8s-prod"));
    assert_eq!(c.keypair.as_deref(), Some("mykey"));
    assert_eq!(c.flavor_id.as_deref(), Some("m1.small"));
    assert_eq!(c.master_flavor_id.as_deref(), Some("m1.medium"));
    assert_eq!(c.project_id.as_deref(), Some("admin-project"));
    assert_eq!(c.user_id.as_deref(), Some("admin"));
    assert_eq!(c.discovery_url.as_deref(), Some("http://d"));
    assert_eq!(
        (c.floating_ip_enabled, c.master_lb_enabled),
        (Some(true), Some(true))
    );
    // Template labels, then the request's, values as Python's str().
    assert_eq!(
        c.labels,
        Some(map(&[
            ("kube_tag", "v1.30.4"),
            ("boot_volume_size", "10"),
            ("auto_scaling_enabled", "true"),
            ("n", "1"),
            ("t", "True"),
        ]))
    );
    // No row is written by the API.
    assert_eq!(
        openkeel_db::cluster::count(
            &api.db,
            &openkeel_db::Scope::admin_all_tenants(),
            &Default::default()
        )
        .await
        .unwrap(),
        0
    );
    // A body `uuid` is accepted and ignored; `status` reaches the conductor.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters",
            Some(&format!(r#"{{"cluster_template_id": "{T_UUID}", "uuid": "{C_UUID}", "status": "CREATE_COMPLETE", "master_count": 3, "create_timeout": 5}}"#)),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202);
    assert_ne!(r.json()["uuid"], C_UUID);
    let casts = api.conductor.take();
    let [Cast::Create {
        cluster,
        master_count,
        create_timeout,
        ..
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!((*master_count, *create_timeout), (3, 5));
    assert!(changes(cluster).contains(&"status"));
    // A generated name: `<greek letter>-<1..24>-cluster`.
    let name = cluster.data.name.clone().unwrap();
    assert!(name.ends_with("-cluster"), "{name}");
}

async fn create_defaults_from_the_template(api: Api) {
    add_template(&api.db, &template(T_UUID, "k8s", "admin-project")).await;
    // Labels given without merge_labels replace the template's; explicit flavors win; null
    // floating_ip_enabled takes the object default (true), master_lb_enabled false.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters",
            Some(r#"{"cluster_template_id": "k8s", "labels": {"a": "b"}, "flavor_id": "m1.large", "keypair": null, "floating_ip_enabled": null, "master_lb_enabled": false, "fixed_network": "private"}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let casts = api.conductor.take();
    let [Cast::Create { cluster, .. }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    let c = &cluster.data;
    assert_eq!(c.labels, Some(map(&[("a", "b")])));
    assert_eq!(c.flavor_id.as_deref(), Some("m1.large"));
    assert_eq!(c.keypair.as_deref(), Some("mykey"));
    assert_eq!(c.floating_ip_enabled, Some(true));
    assert_eq!(c.master_lb_enabled, Some(false));
    assert_eq!(c.fixed_network.as_deref(), Some("private"));
    // Empty labels take the template's.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters",
            Some(r#"{"cluster_template_id": "k8s", "labels": {}}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202);
    let casts = api.conductor.take();
    let [Cast::Create { cluster, .. }] = casts.as_slice() else {
        panic!("{casts:?}");
    };
    assert_eq!(
        cluster.data.labels,
        Some(map(&[("kube_tag", "v1.30.4"), ("boot_volume_size", "10")]))
    );
}

async fn create_version_gates(api: Api) {
    add_template(&api.db, &template(T_UUID, "k8s", "admin-project")).await;
    let post = |v: &'static str, body: &'static str| {
        let api = &api;
        async move {
            api.call(Who::ProjectAdmin, "POST", "/v1/clusters", Some(body), v)
                .await
        }
    };
    // Unknown template: 400 up to 1.9, 404 from 1.10.
    assert_eq!(
        post("1.9", r#"{"cluster_template_id": "nope"}"#)
            .await
            .err(),
        (400, "ClusterTemplate nope could not be found.".into())
    );
    assert_eq!(
        post("1.10", r#"{"cluster_template_id": "nope"}"#)
            .await
            .err(),
        (404, "ClusterTemplate nope could not be found.".into())
    );
    // node_count 0: refused up to 1.9, accepted from 1.10.
    assert_eq!(
        post("1.9", r#"{"cluster_template_id": "k8s", "node_count": 0}"#)
            .await
            .err(),
        (
            400,
            "Resizing a nodegroup to zero is not supported in the provided microversion.".into()
        )
    );
    let r = post("1.10", r#"{"cluster_template_id": "k8s", "node_count": 0}"#).await;
    assert_eq!(r.status, 202);
    let casts = api.conductor.take();
    assert!(matches!(
        casts.as_slice(),
        [Cast::Create { node_count: 0, .. }]
    ));
}

async fn create_validation_errors(api: Api) {
    add_template(&api.db, &template(T_UUID, "k8s", "admin-project")).await;
    let mut t = template(
        "3a3a3a3a-1111-4222-8333-444455556666",
        "dm",
        "admin-project",
    );
    t.docker_storage_driver = Some("devicemapper".into());
    add_template(&api.db, &t).await;
    let mut t = template(
        "4a4a4a4a-1111-4222-8333-444455556666",
        "nolb",
        "admin-project",
    );
    t.master_lb_enabled = Some(false);
    t.labels = Some(map(&[("boot_volume_size", "0")]));
    t.flavor_id = Some("ds4G".into());
    add_template(&api.db, &t).await;
    let mut t = template(
        "5a5a5a5a-1111-4222-8333-444455556666",
        "fcos",
        "admin-project",
    );
    t.cluster_distro = Some("fedora-coreos".into());
    add_template(&api.db, &t).await;
    for (body, status, detail) in [
        (r#"{"name": "x"}"#, 400, "Invalid input for field/attribute cluster_template_id. Value: 'None'. Mandatory field missing."),
        (r#"{"cluster_template_id": "k8s", "name": "1bad"}"#, 400, "Invalid input for field/attribute name. Value: '1bad'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"),
        (r#"{"cluster_template_id": "k8s", "node_count": "abc"}"#, 400, "Invalid input for field/attribute cluster. Value: '{'cluster_template_id': 'k8s', 'node_count': 'abc'}'. invalid literal for int() with base 10: 'abc'"),
        (r#"{"cluster_template_id": "k8s", "node_count": -1}"#, 400, "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0"),
        (r#"{"cluster_template_id": "k8s", "foo": 1, "bar": 2}"#, 400, "Unknown attributes for argument cluster: foo, bar"),
        (r#"{"cluster_template_id": "k8s", "links": []}"#, 400, "Invalid input for field/attribute links. Value: '[]'. Cannot set read only field."),
        (r#"{"cluster_template_id": "k8s", "labels": {"a": [1]}}"#, 400, "Invalid input for field/attribute labels. Value: '{'a': [1]}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'list'>'"),
        (r#"{"cluster_template_id": "k8s", "uuid": "abc"}"#, 400, "Expected a uuid but received abc."),
        (r#"{"cluster_template_id": "k8s", "master_count": 2}"#, 400, "master nodegroup size of 2 is invalid, size cannot be an even number."),
        (r#"{"cluster_template_id": "fcos"}"#, 400, "Cluster type (vm, fedora-coreos, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: (vm, ubuntu, kubernetes)."),
        (r#"{"cluster_template_id": "dm", "docker_volume_size": 2}"#, 400, "docker volume size 2 GB is not valid, expecting minimum value 3GB for devicemapper storage driver."),
        (r#"{"cluster_template_id": "k8s", "keypair": "nokey"}"#, 404, "Unable to find keypair nokey."),
        (r#"{"cluster_template_id": "k8s", "flavor_id": "m1.nope"}"#, 400, "Unable to find flavor m1.nope."),
        (r#"{"cluster_template_id": "k8s", "fixed_network": "nonet"}"#, 400, "Unable to find fixed network nonet."),
        (r#"{"cluster_template_id": "k8s", "fixed_subnet": "nosub"}"#, 400, "Unable to find fixed subnet nosub."),
        (r#"{"cluster_template_id": "k8s", "labels": {"boot_volume_size": "0"}, "merge_labels": true, "flavor_id": "ds4G"}"#, 400, "Flavor with zero root volume size is not supported when boot_volume_size is zero."),
        (r#"{"cluster_template_id": "k8s", "labels": {"boot_volume_size": "0"}, "flavor_id": "m1.nope"}"#, 400, "Unable to find flavor m1.nope."),
        (r#"{"cluster_template_id": "nolb"}"#, 400, "Flavor with zero root volume size is not supported when boot_volume_size is zero."),
        (r#"{"cluster_template_id": "nolb", "master_count": 3, "flavor_id": "m1.small"}"#, 400, "master_count must be 1 when master_lb_enabled is False"),
        (r#"{"cluster_template_id": "k8s", "health_status": "BAD"}"#, 400, "Invalid input for field/attribute health_status. Value: 'BAD'. Value should be one of: UNKNOWN, HEALTHY, UNHEALTHY"),
    ] {
        let r = api.call(Who::ProjectAdmin, "POST", "/v1/clusters", Some(body), "1.14").await;
        assert_eq!(r.err(), (status, detail.to_string()), "{body}");
    }
    assert!(api.conductor.take().is_empty());
    // Body plumbing.
    let r = call_app(
        &api.app,
        Who::ProjectAdmin,
        "POST",
        "/v1/clusters",
        None,
        Some("1.14"),
    )
    .await;
    assert_eq!(r.err(), (400, "Missing argument: \"cluster\"".into()));
}

async fn create_quota_and_policy(api: Api) {
    seed(&api.db).await;
    // One cluster exists in admin-project: a quota of 1 refuses the next one.
    let app = api.with_quota(1);
    let body = r#"{"cluster_template_id": "k8s"}"#;
    let r = call_app(
        &app,
        Who::ProjectAdmin,
        "POST",
        "/v1/clusters",
        Some(body),
        Some("1.14"),
    )
    .await;
    assert_eq!(
        r.err(),
        (403, "Resource limit exceeded: You have reached the maximum clusters per project, 1. You may delete a cluster to make room for a new one.".into())
    );
    // A stored quota wins over the configured default.
    openkeel_db::quota::create(
        &api.db,
        &openkeel_core::objects::Quota {
            project_id: Some("admin-project".into()),
            resource: Some("Cluster".into()),
            hard_limit: 5,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let r = call_app(
        &app,
        Who::ProjectAdmin,
        "POST",
        "/v1/clusters",
        Some(body),
        Some("1.14"),
    )
    .await;
    assert_eq!(r.status, 202);
    api.conductor.take();
    // A reader is refused by policy, but only after the template checks (404 first).
    let r = api
        .call(
            Who::Reader("admin-project"),
            "POST",
            "/v1/clusters",
            Some(r#"{"cluster_template_id": "nope"}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, "ClusterTemplate nope could not be found.".into())
    );
    let r = api
        .call(
            Who::Reader("admin-project"),
            "POST",
            "/v1/clusters",
            Some(body),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            403,
            "Policy doesn't allow cluster:create to be performed.".into()
        )
    );
    // Own hidden template: only admins may use it.
    let mut t = template("6a6a6a6a-1111-4222-8333-444455556666", "hidden", "p3");
    t.hidden = Some(true);
    add_template(&api.db, &t).await;
    let r = api
        .call(
            Who::Member("p3"),
            "POST",
            "/v1/clusters",
            Some(r#"{"cluster_template_id": "hidden"}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.err(), (403, "Not authorized.".into()));
    assert!(api.conductor.take().is_empty());
}

async fn patch_sends_cluster_update(api: Api) {
    let c = seed(&api.db).await;
    let path = "/v1/clusters/k8s-prod";
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            path,
            Some(r#"[{"op": "replace", "path": "/node_count", "value": 5}]"#),
            "1.14",
        )
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (202, format!(r#"{{"uuid": "{C_UUID}"}}"#))
    );
    let casts = api.conductor.take();
    let [Cast::Update {
        cluster,
        node_count,
        health_status,
        health_status_reason,
        rollback,
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data, c);
    assert!(cluster.changes.is_empty());
    assert_eq!(*node_count, 5);
    assert_eq!(health_status, &None);
    assert_eq!(health_status_reason, &Some(map(&[])));
    assert!(!rollback);

    // Health only: node_count is the default worker's (3), a literal dict for the reason,
    // rollback from the query.
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{path}?rollback=True"),
            Some(r#"[{"op": "replace", "path": "/health_status", "value": "HEALTHY"}, {"op": "replace", "path": "/health_status_reason", "value": "{'api': 'ok'}"}]"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let casts = api.conductor.take();
    let [Cast::Update {
        node_count,
        health_status,
        health_status_reason,
        rollback,
        ..
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!(*node_count, 3);
    assert_eq!(health_status.as_deref(), Some("HEALTHY"));
    assert_eq!(health_status_reason, &Some(map(&[("api", "ok")])));
    assert!(*rollback);

    // A value added into the stored dict is coerced to a string, as oslo's CoercedDict does.
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            path,
            Some(r#"[{"op": "add", "path": "/health_status_reason/n", "value": 7}]"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let casts = api.conductor.take();
    let [Cast::Update {
        health_status_reason,
        ..
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!(health_status_reason, &Some(map(&[("n", "7")])));

    // `remove /node_count` resizes to the declared default (1).
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            path,
            Some(r#"[{"op": "remove", "path": "/node_count"}]"#),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 202);
    assert!(matches!(
        api.conductor.take().as_slice(),
        [Cast::Update { node_count: 1, .. }]
    ));
}

async fn patch_dialect_errors(api: Api) {
    seed(&api.db).await;
    let path = "/v1/clusters/k8s-prod";
    for (body, status, detail) in [
        (r#"[{"op": "replace", "path": "/name", "value": "x"}]"#, 400, "cannot change cluster property(ies) name."),
        (r#"[{"op": "add", "path": "/labels/x", "value": "1"}]"#, 400, "cannot change cluster property(ies) labels."),
        (r#"[{"op": "replace", "path": "/labels", "value": "{'a': "}]"#, 400, "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': \"{'a': \"}]'. Reason: '{' was never closed (<unknown>, line 1)"),
        (r#"[{"op": "remove", "path": "/labels/nokey"}]"#, 400, "Couldn't apply patch '[{'path': '/labels/nokey', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'nokey'"),
        (r#"[{"op": "remove", "path": "/cluster_template_id"}]"#, 400, "'/cluster_template_id' is a mandatory attribute and can not be removed"),
        (r#"[{"op": "remove", "path": "/api_address"}]"#, 400, "'/api_address' is an internal attribute and can not be updated"),
        (r#"[{"op": "add", "path": "/foo", "value": "x"}]"#, 400, "Adding a new attribute /foo to the root of the resource is not allowed."),
        (r#"[{"op": "add", "path": "/name", "value": "x"}]"#, 400, "The attribute /name has existed, please use 'replace' operation instead."),
        (r#"[{"op": "replace", "path": "/node_count", "value": "5"}]"#, 400, "Invalid input for field/attribute node_count. Value: '5'. '<' not supported between instances of 'str' and 'int'"),
        (r#"[{"op": "replace", "path": "/node_count", "value": -1}]"#, 400, "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0"),
        // The setter's `DictType` texts (`MultiType.__str__` for labels), as `Cluster(**doc)` gives them.
        (r#"[{"op": "replace", "path": "/labels", "value": "5"}]"#, 400, "Invalid input for field/attribute labels. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class 'int'>'"),
        (r#"[{"op": "replace", "path": "/health_status_reason", "value": "5"}]"#, 400, "Invalid input for field/attribute health_status_reason. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class 'int'>'"),
        (r#"[{"op": "replace", "path": "/health_status_reason", "value": "{'a': 1}"}]"#, 400, "Invalid input for field/attribute health_status_reason. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'"),
        (r#"[{"op": "replace", "path": "/flavor_id", "value": 5}]"#, 400, "Invalid input for field/attribute flavor_id. Value: '5'. Value should be string"),
        (r#"[{"op": "remove", "path": "/docker_volume_size"}]"#, 400, "cannot change cluster property(ies) docker_volume_size."),
        (r#"[{"op": "replace", "path": "/labels", "value": "{'boot_volume_size': '0'}"}]"#, 400, "cannot change cluster property(ies) labels."),
        (r#"[{"op": "replace", "path": "/labels", "value": "{'boot_volume_size': '0'}"}, {"op": "replace", "path": "/flavor_id", "value": "ds4G"}]"#, 400, "Flavor with zero root volume size is not supported when boot_volume_size is zero."),
        (r#"[{"op": "replace", "path": "/merge_labels", "value": "x"}]"#, 400, "Couldn't apply patch '[{'path': '/merge_labels', 'op': 'replace', 'value': 'x'}]'. Reason: can't replace a non-existent object 'merge_labels'"),
        (r#"{}"#, 400, "Invalid input for field/attribute patch. Value: '{}'. Value not a valid list: {}"),
        (r#"[{"op": "test", "path": "/x"}]"#, 400, "Invalid input for field/attribute op. Value: 'test'. Value should be one of: remove, replace, add"),
        (r#"[{"op": "replace", "path": "/node_count"}]"#, 400, "'add' and 'replace' operations needs value"),
    ] {
        let r = api.call(Who::ProjectAdmin, "PATCH", path, Some(body), "1.14").await;
        assert_eq!(r.err(), (status, detail.to_string()), "{body}");
    }
    assert_eq!(
        api.call(
            Who::ProjectAdmin,
            "PATCH",
            "/v1/clusters/nope",
            Some("[]"),
            "1.14"
        )
        .await
        .err(),
        (404, "Cluster nope could not be found.".into())
    );
    let r = api
        .call(
            Who::Reader("admin-project"),
            "PATCH",
            path,
            Some("[]"),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            403,
            "Policy doesn't allow cluster:update to be performed.".into()
        )
    );
    assert!(api.conductor.take().is_empty());
}

async fn patch_version_gates(api: Api) {
    seed(&api.db).await;
    let path = "/v1/clusters/k8s-prod";
    let zero = r#"[{"op": "replace", "path": "/node_count", "value": 0}]"#;
    assert_eq!(
        api.call(Who::ProjectAdmin, "PATCH", path, Some(zero), "1.9")
            .await
            .err(),
        (
            400,
            "Resizing a nodegroup to zero is not supported in the provided microversion.".into()
        )
    );
    let r = api
        .call(Who::ProjectAdmin, "PATCH", path, Some(zero), "1.10")
        .await;
    assert_eq!(r.status, 202);
    assert!(matches!(
        api.conductor.take().as_slice(),
        [Cast::Update { node_count: 0, .. }]
    ));
    // `rollback` exists from 1.3.
    assert_eq!(
        api.call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{path}?rollback=1"),
            Some("[]"),
            "1.2"
        )
        .await
        .err(),
        (400, "Unknown argument: \"rollback\"".into())
    );
    let r = api
        .call(
            Who::ProjectAdmin,
            "PATCH",
            &format!("{path}?rollback=1"),
            Some("[]"),
            "1.3",
        )
        .await;
    assert_eq!(r.status, 202);
    assert!(matches!(
        api.conductor.take().as_slice(),
        [Cast::Update { rollback: true, .. }]
    ));
}

async fn delete_route(api: Api) {
    seed(&api.db).await;
    let r = api
        .call(
            Who::Reader("admin-project"),
            "DELETE",
            "/v1/clusters/k8s-prod",
            None,
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            403,
            "Policy doesn't allow cluster:delete to be performed.".into()
        )
    );
    let r = api
        .call(
            Who::ProjectAdmin,
            "DELETE",
            "/v1/clusters/k8s-prod",
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.body, "");
    assert_eq!(r.header("content-type"), None);
    assert!(matches!(api.conductor.take().as_slice(), [Cast::Delete(u)] if u == C_UUID));
    // Another project's member: not found.
    let r = api
        .call(
            Who::Member("other"),
            "DELETE",
            &format!("/v1/clusters/{C_UUID}"),
            None,
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, format!("Cluster {C_UUID} could not be found."))
    );
}

async fn resize_action(api: Api) {
    let c = seed(&api.db).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "bounded",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    extra.min_node_count = Some(1);
    extra.max_node_count = Some(4);
    add_nodegroup(&api.db, &extra).await;
    let path = "/v1/clusters/k8s-prod/actions/resize";
    // Below 1.7: no such handler (a routing 406 without version headers).
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            path,
            Some(r#"{"node_count": 2}"#),
            "1.6",
        )
        .await;
    assert_eq!(r.status, 406);
    assert_eq!(r.header("openstack-api-version"), None);
    // The default worker.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            path,
            Some(r#"{"node_count": 2, "nodes_to_remove": ["srv-1"]}"#),
            "1.7",
        )
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (202, format!(r#"{{"uuid": "{C_UUID}"}}"#))
    );
    let casts = api.conductor.take();
    let [Cast::Resize {
        cluster,
        node_count,
        nodes_to_remove,
        nodegroup,
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data.uuid.as_deref(), Some(C_UUID));
    assert_eq!(
        (*node_count, nodes_to_remove.clone()),
        (2, vec!["srv-1".to_string()])
    );
    assert_eq!(nodegroup.data.uuid, WORKER_UUID);
    assert!(nodegroup.changes.is_empty());
    for (v, body, status, detail) in [
        (
            "1.9",
            r#"{"node_count": 0}"#,
            400,
            "Resizing a nodegroup to zero is not supported in the provided microversion."
                .to_string(),
        ),
        (
            "1.14",
            r#"{"node_count": 5, "nodegroup": "bounded"}"#,
            400,
            "Resizing bounded outside the allowed range: min_node_count = 1, max_node_count = 4"
                .into(),
        ),
        (
            "1.14",
            r#"{"node_count": 0, "nodegroup": "bounded"}"#,
            400,
            "Resizing bounded outside the allowed range: min_node_count = 1, max_node_count = 4"
                .into(),
        ),
        (
            "1.14",
            r#"{"node_count": 3, "nodegroup": "default-master"}"#,
            400,
            "Resizing the master nodegroup is not supported by this driver.".into(),
        ),
        (
            "1.14",
            r#"{"node_count": 1, "nodegroup": "nope"}"#,
            404,
            "Nodegroup nope could not be found.".into(),
        ),
        (
            "1.14",
            r#"{}"#,
            400,
            "Invalid input for field/attribute node_count. Value: 'None'. Mandatory field missing."
                .into(),
        ),
        (
            "1.14",
            r#"{"node_count": 1, "foo": 1}"#,
            400,
            "Unknown attribute for argument cluster_resize_req: foo".into(),
        ),
    ] {
        let r = api
            .call(Who::ProjectAdmin, "POST", path, Some(body), v)
            .await;
        assert_eq!(r.err(), (status, detail), "{v} {body}");
    }
    // 0 nodes from 1.10.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            path,
            Some(r#"{"node_count": 0, "nodegroup": "default-worker"}"#),
            "1.10",
        )
        .await;
    assert_eq!(r.status, 202);
    assert!(matches!(
        api.conductor.take().as_slice(),
        [Cast::Resize { node_count: 0, .. }]
    ));
    // No admin widening: another project's admin... a member elsewhere gets 404.
    let r = api
        .call(
            Who::Member("other"),
            "POST",
            &format!("/v1/clusters/{C_UUID}/actions/resize"),
            Some(r#"{"node_count": 1}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (404, format!("Cluster {C_UUID} could not be found."))
    );
}

async fn upgrade_action(api: Api) {
    let c = seed(&api.db).await;
    let t2 = "2b2b2b2b-1111-4222-8333-444455556666";
    add_template(&api.db, &template(t2, "k8s-next", "admin-project")).await;
    let mut extra = nodegroup(
        "5e5e5e5e-1111-4222-8333-444455556666",
        "extra",
        &c,
        "worker",
        2,
    );
    extra.is_default = Some(false);
    add_nodegroup(&api.db, &extra).await;
    let path = "/v1/clusters/k8s-prod/actions/upgrade";
    let body = r#"{"cluster_template": "k8s-next", "max_batch_size": 2}"#;
    assert_eq!(
        api.call(Who::ProjectAdmin, "POST", path, Some(body), "1.7")
            .await
            .err(),
        (
            400,
            "Cluster upgrade is not supported in the provided microversion.".into()
        )
    );
    let r = api
        .call(Who::ProjectAdmin, "POST", path, Some(body), "1.8")
        .await;
    assert_eq!(
        (r.status, r.body.clone()),
        (202, format!(r#"{{"uuid": "{C_UUID}"}}"#))
    );
    let casts = api.conductor.take();
    let [Cast::Upgrade {
        cluster,
        template,
        max_batch_size,
        nodegroup,
    }] = casts.as_slice()
    else {
        panic!("{casts:?}");
    };
    assert_eq!(cluster.data.uuid.as_deref(), Some(C_UUID));
    assert_eq!(template.data.uuid.as_deref(), Some(t2));
    assert_eq!(*max_batch_size, 2);
    assert_eq!(nodegroup.data.name, "default-worker");
    // A non-default nodegroup may only follow the cluster's own template.
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            path,
            Some(r#"{"cluster_template": "k8s-next", "max_batch_size": 1, "nodegroup": "extra"}"#),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (409, "Cluster Template is not valid for upgrade: Nodegroup extra can be upgraded only to match cluster's template (k8s).".into())
    );
    // The conductor's refusal comes back (it is a call).
    *api.conductor.upgrade_error.lock().unwrap() = Some(MagnumError::with_message(
        ErrorKind::NotSupported,
        "Upgrading a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported.",
    ));
    let r = api
        .call(Who::ProjectAdmin, "POST", path, Some(body), "1.14")
        .await;
    assert_eq!(
        r.err(),
        (
            400,
            "Upgrading a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported.".into()
        )
    );
    *api.conductor.upgrade_error.lock().unwrap() = None;
    api.conductor.take();
    assert_eq!(
        api.call(
            Who::ProjectAdmin,
            "POST",
            path,
            Some(r#"{"cluster_template": "nope", "max_batch_size": 1}"#),
            "1.14"
        )
        .await
        .err(),
        (404, "ClusterTemplate nope could not be found.".into())
    );
    assert_eq!(
        api.call(Who::ProjectAdmin, "POST", path, Some(r#"{"cluster_template": "k8s", "max_batch_size": 0}"#), "1.14").await.err(),
        (400, "Invalid input for field/attribute max_batch_size. Value: '0'. Value should be greater or equal to 1".into())
    );
    assert!(api.conductor.take().is_empty());
}

async fn routing_quirks(api: Api) {
    seed(&api.db).await;
    let r = api
        .call(Who::ProjectAdmin, "DELETE", "/v1/clusters", None, "1.14")
        .await;
    assert_eq!(r.err(), (400, "Missing argument: \"cluster_ident\"".into()));
    let r = api
        .call(
            Who::ProjectAdmin,
            "PUT",
            "/v1/clusters/k8s-prod",
            Some("{}"),
            "1.14",
        )
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("DELETE, GET, PATCH, POST"));
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters/k8s-prod",
            Some("{}"),
            "1.14",
        )
        .await;
    assert_eq!(
        r.err(),
        (400, "Invalid input for field/attribute cluster. Value: 'k8s-prod'. unable to convert to Cluster. Error: Cluster.__init__() takes 1 positional argument but 2 were given".into())
    );
    for path in [
        "/v1/clusters/k8s-prod/actions",
        "/v1/clusters/k8s-prod/actions/resize",
    ] {
        let r = api.call(Who::ProjectAdmin, "GET", path, None, "1.14").await;
        assert_eq!(r.status, 405, "{path}");
        assert_eq!(r.header("allow"), Some(""));
    }
    let r = api
        .call(
            Who::ProjectAdmin,
            "GET",
            "/v1/clusters/k8s-prod/x",
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.status, 404);
}

/// Where Magnum answers 500 on bad input, OpenKeel answers 400 (docs/differences.md).
async fn bad_input_is_400_not_500(api: Api) {
    seed(&api.db).await;
    let cases = [
        ("POST", "/v1/clusters", Some("[1]"), "1.14", "Request must be a JSON dict"),
        ("POST", "/v1/clusters", Some(r#"{"cluster_template_id": "k8s", "node_count": [1]}"#), "1.14", "int() argument must be a string, a bytes-like object or a real number, not 'list'"),
        ("POST", "/v1/clusters", Some(r#"{"cluster_template_id": "k8s", "floating_ip_enabled": "maybe"}"#), "1.14", "Invalid input for field/attribute floating_ip_enabled. Value: 'maybe'. Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
        ("PATCH", "/v1/clusters/k8s-prod?rollback=maybe", Some("[]"), "1.3", "Invalid input for field/attribute rollback. Value: 'maybe'. unable to convert to boolean. Error: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
        ("PATCH", "/v1/clusters/k8s-prod", None, "1.14", "Missing argument: \"patch\""),
        ("PATCH", "/v1/clusters/k8s-prod", Some("[5]"), "1.14", "'int' object has no attribute 'keys'"),
        ("PATCH", "/v1/clusters/k8s-prod", Some(r#"[{"op": "remove", "path": "/labels"}]"#), "1.14", "cannot change cluster property(ies) labels."),
        ("PATCH", "/v1/clusters/k8s-prod", Some(r#"[{"op": "replace", "path": "/labels", "value": "{'boot_volume_size': 'x'}"}]"#), "1.14", "boot_volume_size must be an integer"),
        ("POST", "/v1/clusters/k8s-prod/actions/upgrade", Some(r#"{"max_batch_size": 1}"#), "1.14", "Invalid input for field/attribute cluster_template. Value: 'None'. Mandatory field missing."),
        ("POST", "/v1/clusters/k8s-prod/actions/upgrade", Some(r#"{"cluster_template": "k8s"}"#), "1.14", "Invalid input for field/attribute max_batch_size. Value: 'None'. Mandatory field missing."),
        ("POST", "/v1/clusters/k8s-prod/actions/resize", Some(r#"{"node_count": null}"#), "1.14", "Invalid input for field/attribute node_count. Value: 'None'. Mandatory field missing."),
        ("POST", "/v1/clusters", Some(r#"{"cluster_template_id": "k8s", "master_count": null}"#), "1.14", "master nodegroup size of None is invalid, size cannot be an even number."),
        ("POST", "/v1/clusters", Some(r#"{"cluster_template_id": "k8s", "labels": {"a": null}}"#), "1.14", "Field `labels[a]' cannot be None"),
        ("POST", "/v1/clusters", Some(r#"{"cluster_template_id": "k8s", "node_count": 99999999999}"#), "1.14", "Invalid input for field/attribute node_count. Value: '99999999999'. Value should be lower or equal to 2147483647"),
    ];
    for (m, path, body, v, detail) in cases {
        let r = api.call(Who::ProjectAdmin, m, path, body, v).await;
        assert_eq!(r.err(), (400, detail.to_string()), "{m} {path} {body:?}");
    }
    // A cluster without a default worker (a create that failed before its nodegroups were
    // made): Magnum's `default_ng_worker` raises IndexError, a 500; OpenKeel 400, same text.
    add_cluster(
        &api.db,
        &cluster(
            "6c6c6c6c-1111-4222-8333-444455556666",
            "bare",
            "admin-project",
        ),
    )
    .await;
    let r = api
        .call(
            Who::ProjectAdmin,
            "POST",
            "/v1/clusters/bare/actions/resize",
            Some(r#"{"node_count": 2}"#),
            "1.14",
        )
        .await;
    assert_eq!(r.err(), (400, "list index out of range".to_string()));
    assert!(api.conductor.take().is_empty());
}

/// The policy target of a cluster is its `as_dict()`: an operator's rule may substitute any of
/// its fields (`%(name)s` here), not only the `project_id` and `user_id` Magnum's defaults
/// read, and the API builds the target with the fields the rules in force name.
async fn policy_rules_read_the_fields_they_name(api: Api) {
    seed(&api.db).await;
    let other = "a1b2c3d4-0000-4000-8000-000000000001";
    add_cluster(&api.db, &cluster(other, "k8s-dev", "admin-project")).await;
    let (app, _policy_dir) = api.with_policy(
        "\"cluster:get\": \"'k8s-prod':%(name)s\"\n\"cluster:delete\": \"'%(user_id)s':%(name)s\"\n",
    );
    let who = Who::Member("admin-project");
    let get = |path: String| {
        call_app(
            &app,
            who,
            "GET",
            Box::leak(path.into_boxed_str()),
            None,
            Some(LATEST),
        )
    };
    let shown = get(format!("/v1/clusters/{C_UUID}")).await;
    assert_eq!(
        (shown.status, shown.json()["name"].clone()),
        (200, "k8s-prod".into())
    );
    assert_eq!(
        get(format!("/v1/clusters/{other}")).await.err(),
        (
            403,
            "Policy doesn't allow cluster:get to be performed.".into()
        )
    );
    // `%(user_id)s` formats the cluster's user (`admin`), not the name: refused
    let deleted = call_app(
        &app,
        who,
        "DELETE",
        &format!("/v1/clusters/{C_UUID}"),
        None,
        Some(LATEST),
    )
    .await;
    assert_eq!(deleted.status, 403, "{}", deleted.body);
}
