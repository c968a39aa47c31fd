#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of the six cluster-template routes against a real database (SQLite, and
//! MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set), a fake cloud with the reference rig's stub
//! data, Magnum's default policy, and a one-driver catalogue. Expected bodies and messages are
//! the ones the real magnum-api 23.0.0 gives for the same requests.

#[macro_use]
mod common;

use common::{Api, Resp, Who};
use openkeel_core::objects::Cluster;
use serde_json::Value;

/// The template routes' requests, at the newest microversion.
impl Api {
    async fn post(&self, who: Who, body: &str) -> Resp {
        self.call(who, "POST", "/v1/clustertemplates", Some(body), "1.14")
            .await
    }

    async fn patch(&self, who: Who, ident: &str, body: &str) -> Resp {
        self.call(
            who,
            "PATCH",
            &format!("/v1/clustertemplates/{ident}"),
            Some(body),
            "1.14",
        )
        .await
    }

    async fn delete(&self, who: Who, ident: &str) -> Resp {
        self.call(
            who,
            "DELETE",
            &format!("/v1/clustertemplates/{ident}"),
            None,
            "1.14",
        )
        .await
    }

    /// Create a template and return its JSON.
    async fn create(&self, who: Who, body: &str) -> Value {
        let r = self.post(who, body).await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.json()
    }
}

const BASE: &str = r#""coe": "kubernetes", "image_id": "ubuntu-jammy", "flavor_id": "m1.small", "external_network_id": "public""#;

fn body(extra: &str) -> String {
    if extra.is_empty() {
        format!("{{{BASE}}}")
    } else {
        format!("{{{BASE}, {extra}}}")
    }
}

on_both!(
    create_returns_201_with_location_and_full_body,
    create_defaults_and_coercions,
    create_typing_errors,
    create_validation_order_and_messages,
    create_os_resource_errors,
    create_publish_needs_admin_and_policy_runs_after_validation,
    list_detail_and_pagination,
    list_errors,
    visibility_and_scoping,
    get_by_name_and_duplicates,
    patch_dialect,
    patch_errors,
    patch_publish_and_policy,
    referenced_templates,
    delete_route,
    routing_quirks,
    microversions_do_not_change_templates,
);

// ---------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------

async fn create_returns_201_with_location_and_full_body(api: Api) {
    let r = api
        .post(
            Who::Admin,
            &body(r#""name": "t1", "labels": {"a": 1, "b": true, "c": 1.5}"#),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let v = r.json();
    let uuid = v["uuid"].as_str().unwrap().to_string();
    let created = v["created_at"].as_str().unwrap().to_string();
    assert!(
        created.ends_with("+00:00") && created.len() == 25,
        "{created}"
    );
    assert_eq!(
        r.header("location"),
        Some(format!("http://magnum.example.com:9511/v1/clustertemplates/{uuid}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.header("openstack-api-version"),
        Some("container-infrastructure-management 1.14")
    );
    let expected = format!(
        r#"{{"uuid": "{uuid}", "name": "t1", "coe": "kubernetes", "image_id": "ubuntu-jammy", "flavor_id": "m1.small", "master_flavor_id": null, "dns_nameserver": null, "keypair_id": null, "external_network_id": "public", "fixed_network": null, "fixed_subnet": null, "network_driver": "flannel", "apiserver_port": null, "docker_volume_size": null, "cluster_distro": "ubuntu", "links": [{{"href": "http://magnum.example.com:9511/v1/clustertemplates/{uuid}", "rel": "self"}}, {{"href": "http://magnum.example.com:9511/clustertemplates/{uuid}", "rel": "bookmark"}}], "http_proxy": null, "https_proxy": null, "no_proxy": null, "volume_driver": null, "registry_enabled": false, "labels": {{"a": "1", "b": "True", "c": "1.5"}}, "tls_disabled": false, "public": false, "server_type": "vm", "insecure_registry": null, "docker_storage_driver": null, "master_lb_enabled": false, "floating_ip_enabled": true, "project_id": "noauth-project", "user_id": "noauth-admin", "hidden": false, "tags": null, "driver": "k8s_fake_v1", "created_at": "{created}", "updated_at": null}}"#
    );
    assert_eq!(r.body, expected);
    // GET answers the same document.
    let g = api
        .get(Who::Admin, &format!("/v1/clustertemplates/{uuid}"))
        .await;
    assert_eq!(g.status, 200);
    assert_eq!(g.body, expected);
}

async fn create_defaults_and_coercions(api: Api) {
    // No name: a generated `<greek>-<n>-template`; string integers are converted.
    let v = api
        .create(Who::Admin, &body(r#""apiserver_port": "2000", "docker_volume_size": 5.7, "public": "YES", "tags": "", "dns_nameserver": "8.8.8.8, 1.1.1.1", "uuid": "0562d357-8641-4759-8fed-8173f02c9633""#))
        .await;
    let name = v["name"].as_str().unwrap();
    assert!(
        name.ends_with("-template") && name.split('-').count() == 3,
        "{name}"
    );
    assert_eq!(v["apiserver_port"], 2000);
    assert_eq!(v["docker_volume_size"], 5);
    assert_eq!(v["public"], true);
    assert_eq!(v["tags"], "");
    assert_eq!(v["uuid"], "0562d357-8641-4759-8fed-8173f02c9633");
    assert_eq!(v["dns_nameserver"], "8.8.8.8, 1.1.1.1");
    // A client uuid is honoured; a duplicate is 409.
    let r = api
        .post(
            Who::Admin,
            &body(r#""uuid": "0562d357-8641-4759-8fed-8173f02c9633""#),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.detail(),
        "A ClusterTemplate with UUID 0562d357-8641-4759-8fed-8173f02c9633 already exists."
    );
    // Beyond the integer column (a MariaDB DataError, 500, in Magnum).
    let r = api
        .post(Who::Admin, &body(r#""docker_volume_size": 99999999999"#))
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            400,
            "Out of range value for column 'docker_volume_size' at row 1"
        )
    );
    // Explicit driver, calico, cinder.
    let v = api
        .create(Who::Admin, &body(r#""driver": "k8s_fake_v1", "network_driver": "calico", "volume_driver": "cinder", "labels": {"boot_volume_size": "10"}, "flavor_id": "ds4G""#))
        .await;
    assert_eq!(v["network_driver"], "calico");
    assert_eq!(v["volume_driver"], "cinder");
    assert_eq!(v["labels"]["boot_volume_size"], "10");
}

async fn create_typing_errors(api: Api) {
    let cases: &[(&str, u16, &str)] = &[
        (r#""foo": 1"#, 400, "Unknown attribute for argument cluster_template: foo"),
        (r#""foo": 1, "bar": 2"#, 400, "Unknown attributes for argument cluster_template: foo, bar"),
        (r#""uuid": "xyz""#, 400, "Expected a uuid but received xyz."),
        (r#""name": """#, 400, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"),
        (r#""name": 5"#, 400, "Invalid input for field/attribute name. Value: '5'. Value should be string"),
        (r#""apiserver_port": "abc""#, 400, "Invalid input for field/attribute cluster_template. Value: '{'coe': 'kubernetes', 'image_id': 'ubuntu-jammy', 'flavor_id': 'm1.small', 'external_network_id': 'public', 'apiserver_port': 'abc'}'. invalid literal for int() with base 10: 'abc'"),
        (r#""apiserver_port": 80"#, 400, "Invalid input for field/attribute apiserver_port. Value: '80'. Value should be greater or equal to 1024"),
        (r#""apiserver_port": 5.5"#, 400, "Invalid input for field/attribute apiserver_port. Value: '5'. Value should be greater or equal to 1024"),
        (r#""apiserver_port": 70000"#, 400, "Invalid input for field/attribute apiserver_port. Value: '70000'. Value should be lower or equal to 65535"),
        (r#""docker_volume_size": 0"#, 400, "Invalid input for field/attribute docker_volume_size. Value: '0'. Value should be greater or equal to 1"),
        (r#""server_type": "xx""#, 400, "Invalid input for field/attribute server_type. Value: 'xx'. Value should be one of: bm, vm"),
        (r#""labels": [1]"#, 400, "Invalid input for field/attribute cluster_template. Value: '{'coe': 'kubernetes', 'image_id': 'ubuntu-jammy', 'flavor_id': 'm1.small', 'external_network_id': 'public', 'labels': [1]}'. Value not a valid dict: [1]"),
        (r#""labels": {"a": [1]}"#, 400, "Invalid input for field/attribute labels. Value: '{'a': [1]}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'list'>'"),
        (r#""dns_nameserver": "08.8.8.8""#, 400, "Expected a single dns address or comma separated dns list, but received 08.8.8.8."),
        (r#""dns_nameserver": """#, 400, "Expected a single dns address or comma separated dns list, but received ."),
        (r#""project_id": "p""#, 400, "Invalid input for field/attribute project_id. Value: 'p'. Cannot set read only field."),
        (r#""links": []"#, 400, "Invalid input for field/attribute links. Value: '[]'. Cannot set read only field."),
        (r#""links": "x""#, 400, "Invalid input for field/attribute cluster_template. Value: '{'coe': 'kubernetes', 'image_id': 'ubuntu-jammy', 'flavor_id': 'm1.small', 'external_network_id': 'public', 'links': 'x'}'. Value not a valid list: x"),
        (r#""created_at": "2020-01-01T00:00:00""#, 400, "Invalid input for field/attribute created_at. Value: '2020-01-01 00:00:00'. Cannot set read only field."),
        (r#""network_driver": """#, 400, "Invalid input for field/attribute network_driver. Value: ''. Value should have a minimum character requirement of 1"),
        // Magnum 500s on these; OpenKeel answers 400 with the same text (docs/differences.md).
        (r#""apiserver_port": [1]"#, 400, "int() argument must be a string, a bytes-like object or a real number, not 'list'"),
        (r#""labels": null"#, 400, "'NoneType' object has no attribute 'get'"),
        (r#""labels": {"d": null}"#, 400, "Field `labels[d]' cannot be None"),
        (r#""dns_nameserver": 5"#, 400, "'int' object has no attribute 'split'"),
        (r#""public": "maybe""#, 400, "Invalid input for field/attribute public. Value: 'maybe'. Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
    ];
    for (extra, status, detail) in cases {
        let r = api.post(Who::Admin, &body(extra)).await;
        assert_eq!(
            (r.status, r.detail().as_str()),
            (*status, *detail),
            "{extra}"
        );
    }
    let r = api.post(Who::Admin, r#"{"coe": "kubernetes"}"#).await;
    assert_eq!(
        r.detail(),
        "Invalid input for field/attribute image_id. Value: 'None'. Mandatory field missing."
    );
    // Body-level errors.
    let r = api
        .call(Who::Admin, "POST", "/v1/clustertemplates", None, "1.14")
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Missing argument: \"cluster_template\"")
    );
    let r = api.post(Who::Admin, " ").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Request is not in valid JSON format")
    );
    let r = api.post(Who::Admin, "[1]").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "'list' object has no attribute 'keys'")
    );
    let r = api.post(Who::Admin, "null").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "'NoneType' object has no attribute 'coe'")
    );
    // Media types: form parsing without a JSON type, 415 for others.
    let cases: &[(Option<&str>, &str, u16, &str)] = &[
        (None, r#"{"a":1}"#, 400, "Unknown argument: \"{\"a\":1}\""),
        (
            Some("application/x-www-form-urlencoded"),
            "a=1&b=2&a=3",
            400,
            "Unknown argument: \"a, b\"",
        ),
        (
            Some("application/x-www-form-urlencoded"),
            "",
            400,
            "Missing argument: \"cluster_template\"",
        ),
        (
            Some("text/plain"),
            r#"{"a":1}"#,
            415,
            "Unknown mimetype: text/plain",
        ),
        (
            Some("application/json; charset=utf-8"),
            r#"{"a":1}"#,
            400,
            "Unknown attribute for argument cluster_template: a",
        ),
        (
            Some("text/javascript"),
            r#"{"a":1}"#,
            400,
            "Unknown attribute for argument cluster_template: a",
        ),
    ];
    for (ctype, b, status, detail) in cases {
        let r = api.raw("POST", "/v1/clustertemplates", *ctype, b).await;
        assert_eq!(
            (r.status, r.detail().as_str()),
            (*status, *detail),
            "{ctype:?} {b}"
        );
    }
    let r = api.raw("PATCH", "/v1/clustertemplates/x", None, "[]").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Unknown argument: \"[]\"")
    );
    let r = api
        .raw(
            "PATCH",
            "/v1/clustertemplates/x",
            Some("application/json-patch+json"),
            "[]",
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (415, "Unknown mimetype: application/json-patch+json")
    );
    let full = r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Unknown attribute for argument cluster_template: foo", "detail": "Unknown attribute for argument cluster_template: foo", "links": []}]}"#;
    assert_eq!(api.post(Who::Admin, &body(r#""foo": 1"#)).await.body, full);
    // Nothing was created.
    let list = api.get(Who::Admin, "/v1/clustertemplates").await;
    assert_eq!(list.body, r#"{"clustertemplates": []}"#);
}

async fn create_validation_order_and_messages(api: Api) {
    let cases: &[(&str, &str)] = &[
        (r#"{"image_id": "ubuntu-jammy"}"#, "Requested COE type Unset is not supported."),
        (r#"{"image_id": "ubuntu-jammy", "coe": null}"#, "Requested COE type None is not supported."),
        (r#"{"image_id": "ubuntu-jammy", "coe": "kubernetes", "server_type": null}"#, "Server type None is not supported, expecting a vm/bm/unspecified server type."),
        // network before volume before storage size before the image.
        (r#"{"image_id": "nope", "coe": "kubernetes", "network_driver": "weave", "volume_driver": "rexray"}"#, "Network driver type weave is not supported, expecting a flannel/calico/cilium/unspecified network driver."),
        (r#"{"image_id": "nope", "coe": "kubernetes", "network_driver": "cilium"}"#, "Network driver type cilium is not allowed, expecting a flannel/calico/unspecified network driver. "),
        (r#"{"image_id": "nope", "coe": "kubernetes", "volume_driver": "rexray", "docker_storage_driver": "devicemapper"}"#, "Volume driver type rexray is not supported, expecting a cinder/unspecified volume driver."),
        (r#"{"image_id": "nope", "coe": "kubernetes", "docker_storage_driver": "devicemapper"}"#, "docker volume size None GB is not valid, expecting minimum value 3GB for devicemapper storage driver."),
        (r#"{"image_id": "nope", "coe": "kubernetes", "docker_storage_driver": "devicemapper", "docker_volume_size": 2}"#, "docker volume size 2 GB is not valid, expecting minimum value 3GB for devicemapper storage driver."),
        (r#"{"image_id": "nope", "coe": "kubernetes"}"#, "Image nope could not be found."),
        (r#"{"image_id": "no-distro", "coe": "kubernetes"}"#, "Image no-distro doesn't contain os_distro field."),
        (r#"{"image_id": null, "coe": "kubernetes"}"#, "Image None doesn't contain os_distro field."),
        // A duplicate name is swallowed by the driver check, then reported as os_distro.
        (r#"{"image_id": "dup-image", "coe": "kubernetes"}"#, "Image dup-image doesn't contain os_distro field."),
        (r#"{"image_id": "ubuntu-jammy", "coe": "kubernetes", "driver": "other"}"#, "Cluster driver (other) not supported."),
    ];
    for (b, detail) in cases {
        let r = api.post(Who::Admin, b).await;
        assert_eq!((r.status, r.detail().as_str()), (400, *detail), "{b}");
    }
    // The coreos image: a 500 in Magnum, 400 here.
    let r = api
        .post(
            Who::Admin,
            r#"{"image_id": "coreos-old", "coe": "kubernetes", "flavor_id": "m1.small"}"#,
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            400,
            "'ClusterTemplatesController' object has no attribute '_coreos_deprecation_note'"
        )
    );
}

async fn create_os_resource_errors(api: Api) {
    let cases: &[(&str, u16, &str)] = &[
        (
            r#""flavor_id": "m1.nope""#,
            400,
            "Unable to find flavor m1.nope.",
        ),
        (
            r#""master_flavor_id": "m1.nope""#,
            400,
            "Unable to find flavor m1.nope.",
        ),
        (
            r#""external_network_id": "nope""#,
            400,
            "Unable to find external network nope.",
        ),
        (
            r#""fixed_network": "nope""#,
            400,
            "Unable to find fixed network nope.",
        ),
        (
            r#""fixed_subnet": "nope""#,
            400,
            "Unable to find fixed subnet nope.",
        ),
        (
            r#""flavor_id": "ds4G""#,
            400,
            "Flavor with zero root volume size is not supported when boot_volume_size is zero.",
        ),
        (r#""flavor_id": null"#, 400, "Unable to find flavor None."),
        (
            r#""labels": {"boot_volume_size": "x"}"#,
            400,
            "boot_volume_size must be an integer",
        ),
        (
            r#""labels": {"boot_volume_size": true}"#,
            400,
            "boot_volume_size must be an integer",
        ),
    ];
    for (extra, status, detail) in cases {
        let r = api.post(Who::Admin, &format!(r#"{{"coe": "kubernetes", "image_id": "ubuntu-jammy", "flavor_id": "m1.small", {extra}}}"#)).await;
        assert_eq!(
            (r.status, r.detail().as_str()),
            (*status, *detail),
            "{extra}"
        );
    }
    // Without a flavor in the body the root-volume check does not run.
    let v = api.create(Who::Admin, r#"{"coe": "kubernetes", "image_id": "ubuntu-jammy", "fixed_network": "private", "fixed_subnet": "private-subnet"}"#).await;
    assert_eq!(v["flavor_id"], Value::Null);
    assert_eq!(v["fixed_network"], "private");
}

async fn create_publish_needs_admin_and_policy_runs_after_validation(api: Api) {
    let r = api
        .post(Who::Member("p1"), &body(r#""public": true"#))
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Not authorized to set public or hidden flag for cluster template."
        )
    );
    let r = api
        .post(Who::Member("p1"), &body(r#""hidden": true"#))
        .await;
    assert_eq!(r.status, 403);
    // A reader cannot create, but validation runs first.
    let r = api
        .post(
            Who::Reader("p1"),
            r#"{"coe": "kubernetes", "image_id": "nope"}"#,
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Image nope could not be found.")
    );
    let r = api.post(Who::Reader("p1"), &body("")).await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Policy doesn't allow clustertemplate:create to be performed."
        )
    );
    let v = api
        .create(Who::Member("p1"), &body(r#""name": "mine""#))
        .await;
    assert_eq!(v["project_id"], "p1");
    assert_eq!(v["user_id"], "p1-user");
}

async fn list_detail_and_pagination(api: Api) {
    let mut uuids = Vec::new();
    for n in ["a", "c", "b"] {
        uuids.push(
            api.create(Who::Admin, &body(&format!(r#""name": "{n}""#)))
                .await["uuid"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let all = api.get(Who::Admin, "/v1/clustertemplates").await;
    assert_eq!(all.status, 200);
    let v = all.json();
    assert_eq!(v["clustertemplates"].as_array().unwrap().len(), 3);
    assert!(v.get("next").is_none());
    assert!(all.body.starts_with(r#"{"clustertemplates": [{"uuid": ""#));
    // Templates are always returned in full, in both routes.
    let detail = api.get(Who::Admin, "/v1/clustertemplates/detail").await;
    assert_eq!(detail.body, all.body);

    let page = api
        .get(Who::Admin, "/v1/clustertemplates?limit=1")
        .await
        .json();
    assert_eq!(page["clustertemplates"][0]["uuid"], uuids[0].as_str());
    assert_eq!(page["next"], format!("http://magnum.example.com:9511/v1/clustertemplates?sort_key=id&sort_dir=asc&limit=1&marker={}", uuids[0]).as_str());
    let page2 = api
        .get(
            Who::Admin,
            &format!("/v1/clustertemplates?limit=1&marker={}", uuids[0]),
        )
        .await
        .json();
    assert_eq!(page2["clustertemplates"][0]["uuid"], uuids[1].as_str());

    let by_name = api
        .get(
            Who::Admin,
            "/v1/clustertemplates?sort_key=name&sort_dir=desc&limit=2",
        )
        .await
        .json();
    let names: Vec<_> = by_name["clustertemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["c", "b"]);
    assert_eq!(by_name["next"], format!("http://magnum.example.com:9511/v1/clustertemplates?sort_key=name&sort_dir=desc&limit=2&marker={}", uuids[2]).as_str());
    let d = api
        .get(Who::Admin, "/v1/clustertemplates/detail?limit=3")
        .await
        .json();
    assert_eq!(d["next"], format!("http://magnum.example.com:9511/v1/clustertemplates/detail?sort_key=id&sort_dir=asc&limit=3&marker={}", uuids[2]).as_str());
    // `limit` beyond max_limit is capped (no `next` for 3 rows).
    let big = api
        .get(
            Who::Admin,
            "/v1/clustertemplates?limit=99999999999999999999",
        )
        .await
        .json();
    assert!(big.get("next").is_none());
    let empty_key = api
        .get(Who::Admin, "/v1/clustertemplates?sort_key=&limit=1")
        .await
        .json();
    assert_eq!(empty_key["next"], format!("http://magnum.example.com:9511/v1/clustertemplates?sort_key=&sort_dir=asc&limit=1&marker={}", uuids[0]).as_str());
}

async fn list_errors(api: Api) {
    let cases: &[(&str, u16, &str)] = &[
        ("limit=abc", 400, "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'"),
        ("limit=1&limit=2", 400, "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'"),
        ("marker=xyz&limit=abc", 400, "Invalid input for field/attribute marker. Value: 'xyz'. unable to convert to uuid. Error: Expected a uuid but received xyz."),
        ("limit=0", 400, "Limit must be positive"),
        ("limit=-0&sort_dir=up", 400, "Limit must be positive"),
        ("sort_dir=up", 400, "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'"),
        ("sort_dir=asc-nullsfirst", 400, "Invalid sort direction: asc-nullsfirst. Acceptable values are 'asc' or 'desc'"),
        ("sort_key=foo", 400, "The sort_key value \"foo\" is an invalid field for sorting"),
        ("foo=1", 400, "Unknown argument: \"foo\""),
        ("foo=1&limit=abc", 400, "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'"),
        ("marker=064f549d-a2cb-4dce-9a68-7de7bad35b7b", 404, "ClusterTemplate 064f549d-a2cb-4dce-9a68-7de7bad35b7b could not be found."),
    ];
    for (q, status, detail) in cases {
        let r = api
            .get(Who::Admin, &format!("/v1/clustertemplates?{q}"))
            .await;
        assert_eq!((r.status, r.detail().as_str()), (*status, *detail), "{q}");
    }
    let r = api
        .get(Who::Admin, "/v1/clustertemplates?sort_dir=up")
        .await;
    assert_eq!(
        r.body,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Invalid sort direction: up", "detail": "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'", "links": []}]}"#
    );
    let r = api
        .get(Who::Member("p1"), "/v1/clustertemplates?limit=0")
        .await;
    assert_eq!(r.status, 400);
    let r = api
        .get(Who::Member("p1"), "/v1/clustertemplates?limit=1")
        .await;
    assert_eq!(r.body, r#"{"clustertemplates": []}"#);
}

async fn visibility_and_scoping(api: Api) {
    let private = api
        .create(Who::Member("p1"), &body(r#""name": "private1""#))
        .await;
    let public = api
        .create(Who::Admin, &body(r#""name": "pub", "public": true"#))
        .await;
    let hidden = api
        .create(
            Who::Admin,
            &body(r#""name": "hid", "public": true, "hidden": true"#),
        )
        .await;
    let own_hidden = api
        .create(Who::Admin, &body(r#""name": "ownhid", "hidden": true"#))
        .await;
    let names = |v: Value| -> Vec<String> {
        v["clustertemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    // p2 sees only the public, non-hidden template.
    assert_eq!(
        names(
            api.get(Who::Member("p2"), "/v1/clustertemplates")
                .await
                .json()
        ),
        ["pub"]
    );
    // p1 also sees its own.
    assert_eq!(
        names(
            api.get(Who::Member("p1"), "/v1/clustertemplates")
                .await
                .json()
        ),
        ["private1", "pub"]
    );
    // Admins see everything.
    assert_eq!(
        names(api.get(Who::Admin, "/v1/clustertemplates").await.json()),
        ["private1", "pub", "hid", "ownhid"]
    );

    let uuid = |v: &Value| v["uuid"].as_str().unwrap().to_string();
    let r = api
        .get(
            Who::Member("p2"),
            &format!("/v1/clustertemplates/{}", uuid(&private)),
        )
        .await;
    assert_eq!(
        (r.status, r.detail()),
        (
            404,
            format!("ClusterTemplate {} could not be found.", uuid(&private))
        )
    );
    let r = api
        .get(
            Who::Member("p2"),
            &format!("/v1/clustertemplates/{}", uuid(&hidden)),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = api
        .get(
            Who::Member("p2"),
            &format!("/v1/clustertemplates/{}", uuid(&own_hidden)),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = api
        .get(
            Who::Member("p2"),
            &format!("/v1/clustertemplates/{}", uuid(&public)),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .get(Who::Reader("p1"), "/v1/clustertemplates/private1")
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .get(
            Who::Admin,
            &format!("/v1/clustertemplates/{}", uuid(&private)),
        )
        .await;
    assert_eq!(r.status, 200);
    // A public template of another project cannot be changed or deleted by a member.
    let r = api
        .patch(
            Who::Member("p2"),
            "pub",
            r#"[{"op": "replace", "path": "/name", "value": "x"}]"#,
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Policy doesn't allow clustertemplate:update to be performed."
        )
    );
    let r = api.delete(Who::Member("p2"), "pub").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Policy doesn't allow clustertemplate:delete to be performed."
        )
    );
    // Admin PATCH of another project's private template: the decorators load it without
    // admin widening → 404 (Magnum's behaviour).
    let r = api
        .patch(
            Who::Admin,
            &uuid(&private),
            r#"[{"op": "replace", "path": "/name", "value": "x"}]"#,
        )
        .await;
    assert_eq!(r.status, 404);
    // Admin DELETE is widened.
    let r = api.delete(Who::Admin, &uuid(&private)).await;
    assert_eq!(r.status, 204);
}

async fn get_by_name_and_duplicates(api: Api) {
    api.create(Who::Admin, &body(r#""name": "same""#)).await;
    let r = api.get(Who::Admin, "/v1/clustertemplates/same").await;
    assert_eq!(r.status, 200);
    api.create(Who::Admin, &body(r#""name": "same""#)).await;
    let r = api.get(Who::Admin, "/v1/clustertemplates/same").await;
    assert_eq!((r.status, r.detail().as_str()), (409, "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead."));
    let r = api.delete(Who::Admin, "same").await;
    assert_eq!(r.status, 409);
    let r = api.get(Who::Admin, "/v1/clustertemplates/nope").await;
    assert_eq!(
        r.body,
        r#"{"errors": [{"request_id": "", "code": "client", "status": 404, "title": "ClusterTemplate nope could not be found", "detail": "ClusterTemplate nope could not be found.", "links": []}]}"#
    );
}

async fn patch_dialect(api: Api) {
    let v = api
        .create(
            Who::Admin,
            &body(r#""name": "t1", "labels": {"a": "1"}, "master_flavor_id": "m1.small""#),
        )
        .await;
    let u = v["uuid"].as_str().unwrap().to_string();
    // Add and remove label keys, replace a string, add a null attribute.
    let r = api
        .patch(Who::Admin, &u, r#"[{"op": "add", "path": "/labels/k", "value": 5}, {"op": "add", "path": "/labels/b", "value": true}, {"op": "remove", "path": "/labels/a"}, {"op": "add", "path": "/apiserver_port", "value": 2000}, {"op": "replace", "path": "/name", "value": "t2"}]"#)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = r.json();
    assert_eq!(p["labels"], serde_json::json!({"k": "5", "b": "True"}));
    assert_eq!(p["apiserver_port"], 2000);
    assert_eq!(p["name"], "t2");
    // The response is the in-memory object: `updated_at` is not refreshed...
    assert_eq!(p["updated_at"], Value::Null);
    // ...but the row was updated.
    let g = api
        .get(Who::Admin, &format!("/v1/clustertemplates/{u}"))
        .await
        .json();
    assert!(g["updated_at"].is_string());
    assert_eq!(g["labels"], serde_json::json!({"k": "5", "b": "True"}));
    // Replace labels with a Python literal.
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/labels", "value": "{'x': 'y', 'n': 1}"}]"#,
        )
        .await;
    assert_eq!(r.json()["labels"], serde_json::json!({"x": "y", "n": "1"}));
    // Removing labels answers null, the row holds {}.
    let r = api
        .patch(Who::Admin, &u, r#"[{"op": "remove", "path": "/labels"}]"#)
        .await;
    assert_eq!(r.json()["labels"], Value::Null);
    let g = api
        .get(Who::Admin, &format!("/v1/clustertemplates/{u}"))
        .await
        .json();
    assert!(
        g["labels"] == serde_json::json!({}) || g["labels"].is_null(),
        "{g}"
    );
    // An empty patch is accepted.
    let r = api.patch(Who::Admin, &u, "[]").await;
    assert_eq!(r.status, 200);
    // Public flag by an admin; boolean strings accepted.
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/public", "value": "yes"}]"#,
        )
        .await;
    assert_eq!(r.json()["public"], true);
    // By name.
    let r = api
        .patch(
            Who::Admin,
            "t2",
            r#"[{"op": "replace", "path": "/tags", "value": "a,b"}]"#,
        )
        .await;
    assert_eq!(r.json()["tags"], "a,b");
}

async fn patch_errors(api: Api) {
    let v = api
        .create(
            Who::Admin,
            &body(r#""name": "t1", "labels": {"a": "1"}, "master_flavor_id": "m1.small""#),
        )
        .await;
    let u = v["uuid"].as_str().unwrap().to_string();
    let cases: &[(&str, &str)] = &[
        (r#"{"a":1}"#, "Invalid input for field/attribute patch. Value: '{'a': 1}'. Value not a valid list: {'a': 1}"),
        (r#"[{"path":"/x"}]"#, "Invalid input for field/attribute op. Value: 'None'. Mandatory field missing."),
        (r#"[{"path":"x","op":"add"}]"#, "Invalid input for field/attribute path. Value: 'x'. Value should match the pattern ^(/[\\w-]+)+$"),
        (r#"[{"path":"/x","op":"test"}]"#, "Invalid input for field/attribute op. Value: 'test'. Value should be one of: remove, replace, add"),
        (r#"[{"path":"/x","op":"add","value":{"a":1}}]"#, "Invalid input for field/attribute value. Value: '{'a': 1}'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'dict'>'"),
        (r#"[{"path":"/x","op":"add","value":null}]"#, "'add' and 'replace' operations needs value"),
        (r#"[{"path":"/uuid","op":"remove"}]"#, "'/uuid' is an internal attribute and can not be updated"),
        (r#"[{"path":"/image_id","op":"remove"}]"#, "'/image_id' is a mandatory attribute and can not be removed"),
        (r#"[{"path":"/coe","op":"remove"}]"#, "'/coe' is a mandatory attribute and can not be removed"),
        (r#"[{"path":"/x","op":"add","value":"v"}]"#, "Adding a new attribute /x to the root of the resource is not allowed."),
        (r#"[{"path":"/name","op":"add","value":"v"}]"#, "The attribute /name has existed, please use 'replace' operation instead."),
        (r#"[{"path":"/labels","op":"replace","value":"{bad"}]"#, "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': '{bad'}]'. Reason: '{' was never closed (<unknown>, line 1)"),
        (r#"[{"path":"/labels/zz","op":"remove"}]"#, "Couldn't apply patch '[{'path': '/labels/zz', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'zz'"),
        (r#"[{"path":"/labels/zz/q","op":"remove"}]"#, "Couldn't apply patch '[{'path': '/labels/zz/q', 'op': 'remove'}]'. Reason: member 'zz' not found in {'a': '1'}"),
        (r#"[{"path":"/fixed_network/0","op":"remove"}]"#, "Couldn't apply patch '[{'path': '/fixed_network/0', 'op': 'remove'}]'. Reason: Document '<class 'NoneType'>' does not support indexing, must be mapping/sequence or support __getitem__"),
        (r#"[{"path":"/created_at/q","op":"remove"}]"#, "Couldn't apply patch '[{'path': '/created_at/q', 'op': 'remove'}]'. Reason: Document '<class 'datetime.datetime'>' does not support indexing, must be mapping/sequence or support __getitem__"),
        (r#"[{"path":"/labels","op":"replace","value":5}]"#, "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': 5}]'. Reason: malformed node or string: 5"),
        (r#"[{"path":"/labels/-","op":"replace","value":"x"}]"#, "Couldn't apply patch '[{'path': '/labels/-', 'op': 'replace', 'value': 'x'}]'. Reason: 'path' with '-' can't be applied to 'replace' operation"),
        (r#"[{"path":"/labels","op":"replace","value":"{\"k\": 1}"},{"path":"/labels/q/z","op":"add","value":"x"}]"#, "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': {'k': 1}}, {'path': '/labels/q/z', 'op': 'add', 'value': 'x'}]'. Reason: member 'q' not found in {'k': 1}"),
        (r#"[{"path":"/name","op":"replace","value":5}]"#, "Invalid input for field/attribute name. Value: '5'. Value should be string"),
        (r#"[{"path":"/name","op":"replace","value":""}]"#, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"),
        (r#"[{"path":"/apiserver_port","op":"replace","value":"2000"}]"#, "Invalid input for field/attribute apiserver_port. Value: '2000'. '<' not supported between instances of 'str' and 'int'"),
        (r#"[{"path":"/network_driver","op":"replace","value":"weave"}]"#, "Network driver type weave is not supported, expecting a flannel/calico/cilium/unspecified network driver."),
        (r#"[{"path":"/volume_driver","op":"replace","value":"rexray"}]"#, "Volume driver type rexray is not supported, expecting a cinder/unspecified volume driver."),
        (r#"[{"path":"/flavor_id","op":"replace","value":"m1.nope"}]"#, "Unable to find flavor m1.nope."),
        (r#"[{"path":"/flavor_id","op":"remove"}]"#, "Unable to find flavor Unset."),
        (r#"[{"path":"/external_network_id","op":"replace","value":"private"}]"#, "Unable to find external network private."),
        (r#"[{"path":"/image_id","op":"replace","value":"no-distro"}]"#, "Image no-distro doesn't contain os_distro field."),
        // Magnum 500s; 400 here with the same text.
        (r#"null"#, "'NoneType' object is not iterable"),
        (r#"["x"]"#, "'str' object has no attribute 'keys'"),
        (r#"[{"path":"/name/0","op":"remove"}]"#, "'str' object doesn't support item deletion"),
        (r#"[{"path":"/labels","op":"replace","value":"5"}]"#, "A dict is required in field labels, not a int"),
        (r#"[{"path":"/labels","op":"replace","value":"{1: 2}"}]"#, "Key 1 must be of type str not int"),
        (r#"[{"path":"/labels","op":"replace","value":"{\"a\": [1]}"}]"#, "A string is required in field labels[a], not a list"),
        (r#"[{"path":"/apiserver_port","op":"replace","value":"abc"}]"#, "invalid literal for int() with base 10: 'abc'"),
        (r#"[{"path":"/coe","op":"replace","value":"swarm"}]"#, "Field value swarm is invalid"),
        (r#"[{"path":"/public","op":"replace","value":"maybe"}]"#, "Invalid input for field/attribute public. Value: 'maybe'. Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
    ];
    for (b, detail) in cases {
        let r = api.patch(Who::Admin, &u, b).await;
        assert_eq!((r.status, r.detail().as_str()), (400, *detail), "{b}");
    }
    let r = api
        .call(
            Who::Admin,
            "PATCH",
            &format!("/v1/clustertemplates/{u}"),
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.detail(), "Missing argument: \"patch\"");
    let r = api.patch(Who::Admin, "nope", "[]").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (404, "ClusterTemplate nope could not be found.")
    );
    // Nothing above changed the template.
    let g = api
        .get(Who::Admin, &format!("/v1/clustertemplates/{u}"))
        .await
        .json();
    assert_eq!(g["updated_at"], Value::Null);
    // A template without a master flavor cannot be patched with the default boot volume size.
    let v = api.create(Who::Admin, &body(r#""name": "nomaster""#)).await;
    let r = api
        .patch(Who::Admin, v["uuid"].as_str().unwrap(), "[]")
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Unable to find flavor None.")
    );
}

async fn patch_publish_and_policy(api: Api) {
    let v = api
        .create(
            Who::Member("p1"),
            &body(r#""name": "m", "master_flavor_id": "m1.small""#),
        )
        .await;
    let u = v["uuid"].as_str().unwrap().to_string();
    let r = api
        .patch(
            Who::Member("p1"),
            &u,
            r#"[{"op": "replace", "path": "/public", "value": true}]"#,
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Not authorized to set public or hidden flag for cluster template."
        )
    );
    let r = api
        .patch(
            Who::Member("p1"),
            &u,
            r#"[{"op": "replace", "path": "/hidden", "value": 1}]"#,
        )
        .await;
    assert_eq!(r.status, 403);
    // Same value → no publish check.
    let r = api
        .patch(
            Who::Member("p1"),
            &u,
            r#"[{"op": "replace", "path": "/public", "value": "false"}]"#,
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .patch(
            Who::Reader("p1"),
            &u,
            r#"[{"op": "replace", "path": "/name", "value": "n"}]"#,
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Policy doesn't allow clustertemplate:update to be performed."
        )
    );
    let r = api
        .patch(
            Who::Member("p1"),
            &u,
            r#"[{"op": "replace", "path": "/name", "value": "n"}]"#,
        )
        .await;
    assert_eq!(r.json()["name"], "n");
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/public", "value": true}]"#,
        )
        .await;
    assert_eq!(
        r.status, 404,
        "admin PATCH is not widened by the decorators"
    );
}

async fn referenced_templates(api: Api) {
    let v = api
        .create(
            Who::Admin,
            &body(r#""name": "used", "master_flavor_id": "m1.small""#),
        )
        .await;
    let u = v["uuid"].as_str().unwrap().to_string();
    openkeel_db::cluster::create(
        &api.db,
        &Cluster {
            name: Some("c1".into()),
            cluster_template_id: Some(u.clone()),
            project_id: Some("noauth-project".into()),
            ..Default::default()
        },
    )
    .await
    .expect("cluster");
    let referenced = format!("ClusterTemplate {u} is referenced by one or multiple clusters.");
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/flavor_id", "value": "m1.medium"}]"#,
        )
        .await;
    assert_eq!((r.status, r.detail()), (400, referenced.clone()));
    let r = api
        .patch(
            Who::Admin,
            "used",
            r#"[{"op": "replace", "path": "/name", "value": "renamed"}]"#,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/public", "value": true}]"#,
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/public", "value": false}]"#,
        )
        .await;
    assert_eq!((r.status, r.detail()), (400, referenced.clone()));
    let r = api
        .patch(
            Who::Admin,
            &u,
            r#"[{"op": "replace", "path": "/tags", "value": "x"}]"#,
        )
        .await;
    assert_eq!(r.status, 200);
    // No change at all is refused too (the update's value set is empty).
    let r = api.patch(Who::Admin, &u, "[]").await;
    assert_eq!((r.status, r.detail()), (400, referenced.clone()));
    let r = api
        .patch(Who::Admin, &u, r#"[{"op": "remove", "path": "/tags"}]"#)
        .await;
    assert_eq!((r.status, r.detail()), (400, referenced.clone()));
    let r = api.delete(Who::Admin, "renamed").await;
    assert_eq!((r.status, r.detail()), (400, referenced));
}

async fn delete_route(api: Api) {
    let v = api
        .create(Who::Member("p1"), &body(r#""name": "gone""#))
        .await;
    let r = api.delete(Who::Reader("p1"), "gone").await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            403,
            "Policy doesn't allow clustertemplate:delete to be performed."
        )
    );
    let r = api.delete(Who::Member("p2"), "gone").await;
    assert_eq!(r.status, 404);
    let r = api.delete(Who::Member("p1"), "gone").await;
    assert_eq!(r.status, 204);
    assert_eq!(r.body, "");
    assert_eq!(r.header("content-type"), None);
    assert_eq!(r.header("content-length"), Some("0"));
    assert!(r.header("x-openstack-request-id").is_some());
    let r = api
        .get(
            Who::Admin,
            &format!("/v1/clustertemplates/{}", v["uuid"].as_str().unwrap()),
        )
        .await;
    assert_eq!(r.status, 404);
}

async fn routing_quirks(api: Api) {
    let r = api
        .call(Who::Admin, "PUT", "/v1/clustertemplates", None, "1.14")
        .await;
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("DELETE, GET, PATCH, POST"))
    );
    assert_eq!(
        r.body,
        r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "", "detail": "", "links": []}]}"#
    );
    let r = api
        .call(Who::Admin, "PUT", "/v1/clustertemplates/x", None, "1.14")
        .await;
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("DELETE, GET, PATCH, POST"))
    );
    let r = api
        .call(Who::Admin, "DELETE", "/v1/clustertemplates", None, "1.14")
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (400, "Missing argument: \"cluster_template_ident\"")
    );
    let r = api
        .call(
            Who::Admin,
            "POST",
            "/v1/clustertemplates/x",
            Some("{}"),
            "1.14",
        )
        .await;
    assert_eq!(r.detail(), "Invalid input for field/attribute cluster_template. Value: 'x'. unable to convert to ClusterTemplate. Error: ClusterTemplate.__init__() takes 1 positional argument but 2 were given");
    let r = api
        .call(
            Who::Admin,
            "PATCH",
            "/v1/clustertemplates/x/y",
            Some("[]"),
            "1.14",
        )
        .await;
    assert_eq!(r.detail(), "Invalid input for field/attribute patch. Value: 'y'. unable to convert to ArrayType. Error: Base.__init__() takes 1 positional argument but 2 were given");
    let r = api.get(Who::Admin, "/v1/clustertemplates/x/y").await;
    assert_eq!(r.status, 404);
    let r = api.get(Who::Admin, "/v1/clustertemplates/x/detail").await;
    assert_eq!(r.detail(), "Invalid input for field/attribute marker. Value: 'x'. unable to convert to uuid. Error: Expected a uuid but received x.");
    let r = api
        .get(
            Who::Admin,
            "/v1/clustertemplates/064f549d-a2cb-4dce-9a68-7de7bad35b7a/detail",
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (404, "The %(name)s resource %(id)s could not be found.")
    );
    let r = api.get(Who::Admin, "/clustertemplates").await;
    assert_eq!(r.status, 200);
    let r = api.get(Who::Admin, "/v1/clustertemplates/").await;
    assert_eq!(r.body, r#"{"clustertemplates": []}"#);
    let r = api
        .call(
            Who::Admin,
            "DELETE",
            "/v1/clustertemplates/detail",
            None,
            "1.14",
        )
        .await;
    assert_eq!(
        (r.status, r.detail().as_str()),
        (404, "ClusterTemplate detail could not be found.")
    );
    let r = api
        .call(
            Who::Admin,
            "GET",
            "/v1/clustertemplates/x?foo=1",
            None,
            "1.14",
        )
        .await;
    assert_eq!(r.detail(), "Unknown argument: \"foo\"");
}

async fn microversions_do_not_change_templates(api: Api) {
    let v = api.create(Who::Admin, &body(r#""name": "mv""#)).await;
    let path = format!("/v1/clustertemplates/{}", v["uuid"].as_str().unwrap());
    let old = api.call(Who::Admin, "GET", &path, None, "1.1").await;
    let new = api.call(Who::Admin, "GET", &path, None, "1.14").await;
    assert_eq!(old.body, new.body);
    assert_eq!(
        old.header("openstack-api-version"),
        Some("container-infrastructure-management 1.1")
    );
    let bad = api.call(Who::Admin, "GET", &path, None, "1.15").await;
    assert_eq!(bad.status, 406);
}
