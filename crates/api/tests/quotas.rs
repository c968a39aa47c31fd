#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of the five quota routes (`/v1/quotas`) against a real database (SQLite,
//! and MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set), a fake Keystone and Magnum's default
//! policy. Expected bodies and messages are the ones the real magnum-api 23.0.0 gives for the
//! same requests.

#[macro_use]
mod common;

use common::{Api, Who, LATEST};
use serde_json::Value;

fn ts(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

on_both!(
    quota_crud_bodies_as_magnum,
    quota_create_errors,
    quota_get_one_defaults_and_scoping,
    quota_list_scoping_pagination_and_errors,
    quota_patch_is_202_with_defaults,
    quota_delete_and_not_found,
    quota_routing_answers,
    quota_policies_refuse_members,
);

async fn quota_crud_bodies_as_magnum(api: Api) {
    let r = api
        .call(
            Who::Admin,
            "POST",
            "/v1/quotas",
            Some(r#"{"project_id": "okq-test1", "resource": "Cluster", "hard_limit": 3}"#),
            LATEST,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let created = ts(&r.json()["created_at"]);
    assert!(created.ends_with("+00:00"), "{created}");
    assert_eq!(
        r.body,
        format!(
            r#"{{"id": 1, "hard_limit": 3, "project_id": "okq-test1", "resource": "Cluster", "created_at": "{created}", "updated_at": null}}"#
        )
    );
    assert_eq!(r.header("location"), None);
    assert_eq!(r.header("content-type"), Some("application/json"));

    let r = api.get(Who::Admin, "/v1/quotas/okq-test1/Cluster").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        format!(
            r#"{{"id": 1, "hard_limit": 3, "project_id": "okq-test1", "resource": "Cluster", "created_at": "{created}", "updated_at": null}}"#
        )
    );
    let r = api.get(Who::Admin, "/v1/quotas?all_tenants=1").await;
    assert_eq!(
        r.body,
        format!(
            r#"{{"quotas": [{{"id": 1, "hard_limit": 3, "project_id": "okq-test1", "resource": "Cluster", "created_at": "{created}", "updated_at": null}}]}}"#
        )
    );
    // The admin's own project has none.
    assert_eq!(
        api.get(Who::Admin, "/v1/quotas").await.body,
        r#"{"quotas": []}"#
    );

    // A given id is honoured (not read-only in Magnum); hard_limit defaults to 1.
    let r = api
        .call(
            Who::Admin,
            "POST",
            "/v1/quotas",
            Some(r#"{"project_id": "okq2", "id": 5}"#),
            LATEST,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let j = r.json();
    assert_eq!(
        (j["id"].as_i64(), j["hard_limit"].as_i64()),
        (Some(5), Some(1))
    );
    assert_eq!(j["resource"], "Cluster");
    let q = openkeel_db::quota::get_by_project_id_resource(&api.db, "okq2", "Cluster")
        .await
        .unwrap();
    assert_eq!((q.id, q.hard_limit), (5, 1));
}

async fn quota_create_errors(api: Api) {
    let post = |b: &'static str| api.call(Who::Admin, "POST", "/v1/quotas", Some(b), LATEST);
    assert_eq!(
        post(r#"{"project_id": "nonexistent-x", "resource": "Cluster", "hard_limit": 3}"#)
            .await
            .err(),
        (
            404,
            "The project_id nonexistent-x could not be found.".into()
        )
    );
    let r = post(r#"{"project_id": "nonexistent-x"}"#).await;
    assert_eq!(
        r.json()["errors"][0]["title"],
        "The project_id nonexistent-x could not be found"
    );
    // Magnum: 500 from Keystone's `get_project(None)`; OpenKeel: the handler's 400.
    assert_eq!(
        post(r#"{"resource": "Cluster", "hard_limit": 3}"#)
            .await
            .err(),
        (400, "Must provide a valid project ID.".into())
    );
    assert_eq!(
        post(r#"{"project_id": "", "hard_limit": 3}"#).await.err(),
        (400, "Invalid input for field/attribute project_id. Value: ''. Value should have a minimum character requirement of 1".into())
    );
    assert_eq!(
        post(r#"{"project_id": "okq2", "resource": "Foo", "hard_limit": 3}"#)
            .await
            .err(),
        (400, "Invalid input for field/attribute resource. Value: 'Foo'. Value should be one of: Cluster".into())
    );
    assert_eq!(
        post(r#"{"project_id": "okq2", "hard_limit": -1}"#).await.err(),
        (400, "Invalid input for field/attribute hard_limit. Value: '-1'. Value should be greater or equal to 0".into())
    );
    assert_eq!(
        post(r#"{"project_id": "okq2", "foo": 1}"#).await.err(),
        (400, "Unknown attribute for argument quota: foo".into())
    );
    assert_eq!(
        post(r#"{"project_id": "okq2", "hard_limit": "x"}"#).await.err(),
        (400, "Invalid input for field/attribute quota. Value: '{'project_id': 'okq2', 'hard_limit': 'x'}'. invalid literal for int() with base 10: 'x'".into())
    );
    // Magnum: the database refuses it (500).
    assert_eq!(
        post(r#"{"project_id": "okq2", "hard_limit": 99999999999}"#).await.err(),
        (400, "Invalid input for field/attribute hard_limit. Value: '99999999999'. Value should be lower or equal to 2147483647".into())
    );
    // Magnum: 500 with the same text.
    assert_eq!(
        post("[]").await.err(),
        (400, "'list' object has no attribute 'keys'".into())
    );
    assert_eq!(
        post("").await.err(),
        (400, "Missing argument: \"quota\"".into())
    );
    assert_eq!(post(r#"{"project_id": "dup"}"#).await.status, 201);
    let r = post(r#"{"project_id": "dup", "hard_limit": 4}"#).await;
    assert_eq!(
        r.err(),
        (
            409,
            "Quota for project dup already exists for resource Cluster.".into()
        )
    );
}

async fn quota_get_one_defaults_and_scoping(api: Api) {
    // No stored quota: the configured default, `resource` always `Cluster`.
    let r = api.get(Who::Admin, "/v1/quotas/other/Foo").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        r#"{"hard_limit": 20, "project_id": "other", "resource": "Cluster"}"#
    );
    // `/{p}/detail` is `get_one(p, "detail")`.
    assert_eq!(
        api.get(Who::Admin, "/v1/quotas/p/detail").await.body,
        r#"{"hard_limit": 20, "project_id": "p", "resource": "Cluster"}"#
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/quotas/p/r?foo=1").await.err(),
        (400, "Unknown argument: \"foo\"".into())
    );
}

async fn quota_list_scoping_pagination_and_errors(api: Api) {
    for p in ["noauth-project", "pa", "pb"] {
        let b = format!(r#"{{"project_id": "{p}", "hard_limit": 2}}"#);
        let r = api
            .call(Who::Admin, "POST", "/v1/quotas", Some(&b), LATEST)
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = api.get(Who::Admin, "/v1/quotas").await;
    let ids: Vec<_> = r.json()["quotas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["project_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["noauth-project"]);
    let r = api
        .get(Who::Admin, "/v1/quotas?all_tenants=true&limit=2")
        .await;
    let j = r.json();
    assert_eq!(j["quotas"].as_array().unwrap().len(), 2);
    assert_eq!(
        j["next"],
        "http://magnum.example.com:9511/v1/quotas?sort_key=id&sort_dir=asc&limit=2&marker=2"
    );
    let r = api
        .get(Who::Admin, "/v1/quotas?all_tenants=true&marker=2")
        .await;
    let j = r.json();
    assert_eq!(j["quotas"].as_array().unwrap().len(), 1);
    assert_eq!(j["quotas"][0]["project_id"], "pb");
    let r = api
        .get(Who::Admin, "/v1/quotas?all_tenants=true&sort_dir=desc")
        .await;
    assert_eq!(r.json()["quotas"][0]["project_id"], "pb");

    let cases: [(&str, u16, &str); 6] = [
        ("marker=99", 404, "Quota could not be found: quota id 99 ."),
        ("marker=x", 400, "Invalid input for field/attribute marker. Value: 'x'. unable to convert to int. Error: invalid literal for int() with base 10: 'x'"),
        ("limit=0", 400, "Limit must be positive"),
        ("sort_key=foo", 400, "The sort_key value \"foo\" is an invalid field for sorting"),
        ("sort_dir=x", 400, "Invalid sort direction: x. Acceptable values are 'asc' or 'desc'"),
        ("foo=1", 400, "Unknown argument: \"foo\""),
    ];
    for (q, status, detail) in cases {
        let r = api.get(Who::Admin, &format!("/v1/quotas?{q}")).await;
        assert_eq!(r.err(), (status, detail.to_string()), "{q}");
    }
    // Magnum: 500 `__str__ returned non-string (type ValueError)`.
    let r = api.get(Who::Admin, "/v1/quotas?all_tenants=maybe").await;
    assert_eq!(
        r.err(),
        (400, "Invalid input for field/attribute all_tenants. Value: 'maybe'. unable to convert to boolean. Error: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'".into())
    );
    let r = api.get(Who::Admin, "/v1/quotas?marker=99").await;
    assert_eq!(
        r.json()["errors"][0]["title"],
        "Quota could not be found: quota id 99 "
    );
}

async fn quota_patch_is_202_with_defaults(api: Api) {
    let r = api
        .call(
            Who::Admin,
            "POST",
            "/v1/quotas",
            Some(r#"{"project_id": "okq3", "hard_limit": 7}"#),
            LATEST,
        )
        .await;
    let created = ts(&r.json()["created_at"]);
    let patch = |b: &'static str| {
        api.call(
            Who::Admin,
            "PATCH",
            "/v1/quotas/okq3/Cluster",
            Some(b),
            LATEST,
        )
    };
    // Path wins over the body's project_id.
    let r = patch(r#"{"hard_limit": 4, "project_id": "zz"}"#).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let updated = ts(&r.json()["updated_at"]);
    assert!(!updated.is_empty());
    assert_eq!(
        r.body,
        format!(
            r#"{{"id": 1, "hard_limit": 4, "project_id": "okq3", "resource": "Cluster", "created_at": "{created}", "updated_at": "{updated}"}}"#
        )
    );
    // An empty body writes the attribute default (1), as Magnum's `as_dict()` does.
    let r = patch("{}").await;
    assert_eq!(r.status, 202);
    assert_eq!(r.json()["hard_limit"], 1);
    assert_eq!(
        patch(r#"{"foo": 1}"#).await.err(),
        (400, "Unknown attribute for argument quotapatch: foo".into())
    );
    assert_eq!(
        patch(r#"{"resource": "Foo"}"#).await.err(),
        (400, "Invalid input for field/attribute resource. Value: 'Foo'. Value should be one of: Cluster".into())
    );
    assert_eq!(
        patch("[]").await.err(),
        (400, "'list' object has no attribute 'keys'".into())
    );
    // Magnum rewrites the row's id; OpenKeel refuses to.
    assert_eq!(
        patch(r#"{"id": 9}"#).await.err(),
        (400, "Cannot overwrite ID for an existing Quota.".into())
    );
    let r = api
        .call(
            Who::Admin,
            "PATCH",
            "/v1/quotas/nop/Cluster",
            Some(r#"{"hard_limit": 3}"#),
            LATEST,
        )
        .await;
    assert_eq!(
        r.err(),
        (
            404,
            "Quota could not be found: project_id nop resource Cluster.".into()
        )
    );
}

async fn quota_delete_and_not_found(api: Api) {
    let r = api
        .call(
            Who::Admin,
            "POST",
            "/v1/quotas",
            Some(r#"{"project_id": "okq4"}"#),
            LATEST,
        )
        .await;
    assert_eq!(r.status, 201);
    let r = api
        .call(
            Who::Admin,
            "DELETE",
            "/v1/quotas/okq4/Cluster",
            None,
            LATEST,
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.body, "");
    assert_eq!(r.header("content-type"), None);
    let r = api
        .call(
            Who::Admin,
            "DELETE",
            "/v1/quotas/okq4/Cluster",
            None,
            LATEST,
        )
        .await;
    assert_eq!(
        r.err(),
        (
            404,
            "Quota could not be found: project_id okq4 resource Cluster.".into()
        )
    );
}

async fn quota_routing_answers(api: Api) {
    let cases: [(&str, &str, u16, &str); 8] = [
        ("DELETE", "/v1/quotas", 400, "Missing argument: \"project_id\""),
        ("PATCH", "/v1/quotas", 400, "Missing argument: \"project_id\""),
        ("GET", "/v1/quotas/p", 400, "Missing argument: \"resource\""),
        ("GET", "/v1/quotas/detail", 400, "Missing argument: \"resource\""),
        ("DELETE", "/v1/quotas/p", 400, "Missing argument: \"resource\""),
        ("PATCH", "/v1/quotas/p", 400, "Missing argument: \"resource\""),
        ("POST", "/v1/quotas/p", 400, "Invalid input for field/attribute quota. Value: 'p'. unable to convert to Quota. Error: Quota.__init__() takes 1 positional argument but 2 were given"),
        ("GET", "/v1/quotas/a/b/c", 404, ""),
    ];
    for (m, p, status, detail) in cases {
        let r = api.call(Who::Admin, m, p, None, LATEST).await;
        assert_eq!(r.err(), (status, detail.to_string()), "{m} {p}");
    }
    assert_eq!(
        api.call(Who::Admin, "POST", "/v1/quotas/p/r", None, LATEST)
            .await
            .status,
        404
    );
    let r = api
        .call(Who::Admin, "PUT", "/v1/quotas", None, LATEST)
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("DELETE, GET, PATCH, POST"));
    // Unprefixed alias.
    assert_eq!(
        api.get(Who::Admin, "/quotas").await.body,
        r#"{"quotas": []}"#
    );
}

async fn quota_policies_refuse_members(api: Api) {
    let m = Who::Member("p1");
    // A project reader may read its own project's quota, not another's.
    let r = api.get(m, "/v1/quotas/p1/Cluster").await;
    assert_eq!(
        (r.status, r.body.as_str()),
        (
            200,
            r#"{"hard_limit": 20, "project_id": "p1", "resource": "Cluster"}"#
        )
    );
    assert_eq!(
        api.get(m, "/v1/quotas/p2/Cluster").await.err(),
        (403, "Not authorized.".into())
    );
    let cases: [(&str, &str, &str); 4] = [
        ("GET", "/v1/quotas", "quota:get_all"),
        ("PATCH", "/v1/quotas/p1/Cluster", "quota:update"),
        ("DELETE", "/v1/quotas/p1/Cluster", "quota:delete"),
        ("POST", "/v1/quotas", "quota:create"),
    ];
    for (method, path, rule) in cases {
        let body = (method != "GET" && method != "DELETE").then_some(r#"{"project_id": "p1"}"#);
        let r = api.call(m, method, path, body, LATEST).await;
        assert_eq!(
            r.err(),
            (403, format!("Policy doesn't allow {rule} to be performed.")),
            "{method} {path}"
        );
    }
    // The Keystone look-up runs before the policy check.
    let r = api
        .call(
            m,
            "POST",
            "/v1/quotas",
            Some(r#"{"project_id": "nonexistent-p"}"#),
            LATEST,
        )
        .await;
    assert_eq!(r.status, 404);
}
