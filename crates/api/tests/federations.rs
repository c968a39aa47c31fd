#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HTTP-level tests of the six federation routes (`/v1/federations`) against a real database
//! (SQLite, and MariaDB when `OPENKEEL_TEST_MYSQL_URL` is set) and Magnum's default policy.
//! Bodies and messages are the ones the real magnum-api 23.0.0 gives (checked against it
//! with a federation row inserted into its database, since Magnum itself never stores one).
//! Unlike Magnum, OpenKeel stores the federation it creates (`docs/differences.md`).

#[macro_use]
mod common;

use common::{Api, Resp, Who, LATEST};
use openkeel_core::objects::{Cluster, Federation, FederationStatus};
use openkeel_db::{Database, Scope};
use serde_json::Value;

const HOST: &str = "http://magnum.example.com:9511";

/// A cluster of `project` named `name`; returns its uuid.
async fn cluster(db: &Database, project: &str, name: &str) -> String {
    openkeel_db::cluster::create(
        db,
        &Cluster {
            name: Some(name.into()),
            project_id: Some(project.into()),
            user_id: Some(format!("{project}-user")),
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .uuid
    .unwrap()
}

/// The stored federation (unscoped).
async fn stored(db: &Database, uuid: &str) -> Federation {
    let scope = Scope {
        is_admin: true,
        all_tenants: true,
        ..Default::default()
    };
    openkeel_db::federation::get_by_uuid(db, &scope, uuid)
        .await
        .unwrap()
}

impl Api {
    async fn create_fed(&self, who: Who, body: &str) -> String {
        let r = self
            .call(who, "POST", "/v1/federations", Some(body), LATEST)
            .await;
        assert_eq!(r.status, 202, "{}", r.body);
        r.json()["uuid"].as_str().unwrap().to_string()
    }

    async fn patch_fed(&self, ident: &str, body: &str) -> Resp {
        self.call(
            Who::Admin,
            "PATCH",
            &format!("/v1/federations/{ident}"),
            Some(body),
            LATEST,
        )
        .await
    }
}

on_both!(
    federation_create_stores_a_complete_federation,
    federation_bodies_as_magnum,
    federation_create_errors,
    federation_join_and_unjoin,
    federation_patch_errors_and_properties,
    federation_delete,
    federation_list_pagination_and_errors,
    federation_routing_answers,
    federation_scoping_and_policies,
);

async fn federation_create_stores_a_complete_federation(api: Api) {
    let host = cluster(&api.db, "noauth-project", "host1").await;
    let body = format!(
        r#"{{"name": "fed-eu", "hostcluster_id": "{host}", "member_ids": ["{host}"], "properties": {{"dns-zone": "example.com."}}, "uuid": "4221a353-8368-475f-b7de-3429d3f724b3", "status": "CREATE_FAILED"}}"#
    );
    let r = api
        .call(Who::Admin, "POST", "/v1/federations", Some(&body), LATEST)
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let uuid = r.json()["uuid"].as_str().unwrap().to_string();
    assert_eq!(r.body, format!(r#"{{"uuid": "{uuid}"}}"#));
    // The body's uuid is ignored, as in Magnum.
    assert_ne!(uuid, "4221a353-8368-475f-b7de-3429d3f724b3");
    let f = stored(&api.db, &uuid).await;
    assert_eq!(f.name.as_deref(), Some("fed-eu"));
    assert_eq!(f.project_id.as_deref(), Some("noauth-project"));
    assert_eq!(f.hostcluster_id.as_deref(), Some(host.as_str()));
    assert_eq!(f.member_ids, Some(vec![host.clone()]));
    assert_eq!(f.status, Some(FederationStatus::CreateComplete));
    assert_eq!(
        f.properties.unwrap().get("dns-zone").map(String::as_str),
        Some("example.com.")
    );
    // Readable at once, by uuid and by name.
    assert_eq!(
        api.get(Who::Admin, &format!("/v1/federations/{uuid}"))
            .await
            .status,
        200
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations/fed-eu").await.status,
        200
    );

    // The host cluster may be named; a missing name is generated.
    let uuid2 = api
        .create_fed(
            Who::Admin,
            r#"{"hostcluster_id": "host1", "properties": {"dns-zone": "b."}}"#,
        )
        .await;
    let f = stored(&api.db, &uuid2).await;
    let name = f.name.unwrap();
    assert!(name.ends_with("-federation"), "{name}");
    // NULL is stored as `[]`, as Magnum's JSON-encoded column does.
    assert_eq!(f.member_ids, Some(vec![]));
    assert_eq!(f.hostcluster_id.as_deref(), Some("host1"));
}

async fn federation_bodies_as_magnum(api: Api) {
    let host = "746e779a-751a-456b-a3e9-c883d734946f";
    let uuid = "4221a353-8368-475f-b7de-3429d3f724b3";
    let created = chrono::NaiveDate::from_ymd_opt(2026, 12, 2)
        .unwrap()
        .and_hms_opt(10, 0, 0)
        .unwrap();
    // A row as the reference rig's database held it (status as Magnum would have written).
    openkeel_db::federation::create(
        &api.db,
        &Federation {
            created_at: Some(created),
            project_id: Some("noauth-project".into()),
            uuid: Some(uuid.into()),
            name: Some("okfed1".into()),
            hostcluster_id: Some(host.into()),
            member_ids: Some(vec![host.into()]),
            status: Some(FederationStatus::CreateInProgress),
            properties: Some(
                [("dns-zone".to_string(), "example.com.".to_string())]
                    .into_iter()
                    .collect(),
            ),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let links = format!(
        r#""links": [{{"href": "{HOST}/v1/federations/{uuid}", "rel": "self"}}, {{"href": "{HOST}/federations/{uuid}", "rel": "bookmark"}}]"#
    );
    let summary = format!(
        r#"{{"uuid": "{uuid}", "name": "okfed1", "hostcluster_id": "{host}", "member_ids": ["{host}"], "status": "CREATE_IN_PROGRESS", "properties": {{"dns-zone": "example.com."}}, {links}}}"#
    );
    let full = format!(
        r#"{{"uuid": "{uuid}", "name": "okfed1", "hostcluster_id": "{host}", "member_ids": ["{host}"], "status": "CREATE_IN_PROGRESS", "status_reason": null, "properties": {{"dns-zone": "example.com."}}, {links}, "created_at": "2026-12-02T10:00:00+00:00", "updated_at": null}}"#
    );
    let r = api.get(Who::Admin, "/v1/federations").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, format!(r#"{{"federations": [{summary}]}}"#));
    assert_eq!(
        api.get(Who::Admin, "/v1/federations/detail").await.body,
        format!(r#"{{"federations": [{full}]}}"#)
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations/okfed1").await.body,
        full
    );
    assert_eq!(
        api.get(Who::Admin, &format!("/v1/federations/{uuid}"))
            .await
            .body,
        full
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations?limit=1").await.body,
        format!(
            r#"{{"federations": [{summary}], "next": "{HOST}/v1/federations?sort_key=id&sort_dir=asc&limit=1&marker={uuid}"}}"#
        )
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations/detail?limit=1")
            .await
            .body,
        format!(
            r#"{{"federations": [{full}], "next": "{HOST}/v1/federations/detail?sort_key=id&sort_dir=asc&limit=1&marker={uuid}"}}"#
        )
    );
    assert_eq!(
        api.get(Who::Admin, &format!("/v1/federations?marker={uuid}"))
            .await
            .body,
        r#"{"federations": []}"#
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations?sort_key=member_ids")
            .await
            .body,
        format!(r#"{{"federations": [{summary}]}}"#)
    );
}

async fn federation_create_errors(api: Api) {
    cluster(&api.db, "noauth-project", "host1").await;
    let post = |b: &'static str| api.call(Who::Admin, "POST", "/v1/federations", Some(b), LATEST);
    let cases: [(&str, u16, &str); 17] = [
        ("{}", 400, "No hostcluster specified. Please specify a hostcluster_id."),
        (r#"{"hostcluster_id": null}"#, 400, "No hostcluster specified. Please specify a hostcluster_id."),
        (r#"{"hostcluster_id": "nope"}"#, 404, "Cluster nope could not be found."),
        (r#"{"name": "x", "properties": {"dns-zone": "a."}}"#, 400, "No hostcluster specified. Please specify a hostcluster_id."),
        (r#"{"hostcluster_id": "host1"}"#, 400, "Please specify a `properties` dict for the federation."),
        (r#"{"hostcluster_id": "host1", "properties": {"a": "b"}}"#, 400, "No DNS zone specified. Please specify a `dns-zone`."),
        (r#"{"foo": 1}"#, 400, "Unknown attribute for argument federation: foo"),
        (r#"{"project_id": "x"}"#, 400, "Unknown attribute for argument federation: project_id"),
        (r#"{"name": "1bad"}"#, 400, "Invalid input for field/attribute name. Value: '1bad'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"),
        (r#"{"name": ""}"#, 400, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"),
        (r#"{"status": "BAD"}"#, 400, "Invalid input for field/attribute status. Value: 'BAD'. Value should be one of: UPDATE_IN_PROGRESS, UPDATE_COMPLETE, DELETE_COMPLETE, CREATE_COMPLETE, DELETE_IN_PROGRESS, DELETE_FAILED, CREATE_IN_PROGRESS, UPDATE_FAILED, CREATE_FAILED"),
        (r#"{"member_ids": "x"}"#, 400, "Invalid input for field/attribute federation. Value: '{'member_ids': 'x'}'. Value not a valid list: x"),
        (r#"{"member_ids": [1]}"#, 400, "Invalid input for field/attribute member_ids. Value: '[1]'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'"),
        (r#"{"properties": {"a": 1}}"#, 400, "Invalid input for field/attribute properties. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'"),
        (r#"{"hostcluster_id": 5}"#, 400, "Invalid input for field/attribute hostcluster_id. Value: '5'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'"),
        (r#"{"links": []}"#, 400, "Invalid input for field/attribute links. Value: '[]'. Cannot set read only field."),
        (r#"{"uuid": "x"}"#, 400, "Expected a uuid but received x."),
    ];
    for (body, status, detail) in cases {
        assert_eq!(
            post(body).await.err(),
            (status, detail.to_string()),
            "{body}"
        );
    }
    assert_eq!(
        post(r#"{"properties": "x"}"#).await.err(),
        (400, "Invalid input for field/attribute federation. Value: '{'properties': 'x'}'. Value not a valid dict: x".into())
    );
    // Magnum: 500 with the same text.
    assert_eq!(
        post("[]").await.err(),
        (400, "'list' object has no attribute 'keys'".into())
    );
    let r = post(r#"{"hostcluster_id": "nope"}"#).await;
    assert_eq!(
        r.json()["errors"][0]["title"],
        "Cluster nope could not be found"
    );
    assert_eq!(
        api.get(Who::Admin, "/v1/federations").await.body,
        r#"{"federations": []}"#
    );
}

async fn federation_join_and_unjoin(api: Api) {
    let host = cluster(&api.db, "noauth-project", "host1").await;
    let other = cluster(&api.db, "noauth-project", "other").await;
    let fed = api
        .create_fed(
            Who::Admin,
            &format!(
                r#"{{"name": "fed1", "hostcluster_id": "{host}", "member_ids": ["{host}"], "properties": {{"dns-zone": "a."}}}}"#
            ),
        )
        .await;
    let join = format!(r#"[{{"op": "add", "path": "/member_ids", "value": "{other}"}}]"#);
    let r = api.patch_fed(&fed, &join).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body, format!(r#"{{"uuid": "{fed}"}}"#));
    let f = stored(&api.db, &fed).await;
    assert_eq!(f.member_ids, Some(vec![host.clone(), other.clone()]));
    assert_eq!(f.status, Some(FederationStatus::UpdateComplete));
    assert!(f.updated_at.is_some());

    assert_eq!(
        api.patch_fed(&fed, &join).await.err(),
        (
            409,
            format!("A cluster with UUID {other} is already a member of the federation fed1.")
        )
    );
    let missing = "746e779a-751a-456b-a3e9-c883d734946f";
    for op in ["add", "remove"] {
        let b = format!(r#"[{{"op": "{op}", "path": "/member_ids", "value": "{missing}"}}]"#);
        assert_eq!(
            api.patch_fed(&fed, &b).await.err(),
            (404, format!("Cluster {missing} could not be found.")),
            "{op}"
        );
    }
    // Unjoin by name of the federation.
    let unjoin = format!(r#"[{{"op": "remove", "path": "/member_ids", "value": "{host}"}}]"#);
    assert_eq!(api.patch_fed("fed1", &unjoin).await.status, 202);
    assert_eq!(
        stored(&api.db, &fed).await.member_ids,
        Some(vec![other.clone()])
    );
    assert_eq!(
        api.patch_fed(&fed, &unjoin).await.err(),
        (
            404,
            format!("Cluster {host} is not a member of the federation fed1.")
        )
    );
    // `remove` without a value is a plain JSON Patch removal.
    let r = api
        .patch_fed(&fed, r#"[{"op": "remove", "path": "/member_ids"}]"#)
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(stored(&api.db, &fed).await.member_ids, Some(vec![]));
}

async fn federation_patch_errors_and_properties(api: Api) {
    let host = cluster(&api.db, "noauth-project", "host1").await;
    let fed = api
        .create_fed(
            Who::Admin,
            &format!(r#"{{"name": "fed1", "hostcluster_id": "{host}", "properties": {{"dns-zone": "a."}}}}"#),
        )
        .await;
    let r = api
        .patch_fed(
            &fed,
            r#"[{"op": "add", "path": "/properties/foo", "value": "x"}]"#,
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let p = stored(&api.db, &fed).await.properties.unwrap();
    assert_eq!(p.get("foo").map(String::as_str), Some("x"));
    assert_eq!(p.get("dns-zone").map(String::as_str), Some("a."));

    let cases: [(&str, u16, &str); 8] = [
        (r#"[{"op": "replace", "path": "/name", "value": "n2"}]"#, 400, "cannot change federation property(ies) name."),
        (r#"[{"op": "replace", "path": "/status_reason", "value": "x"}]"#, 400, "cannot change federation property(ies) status_reason."),
        (r#"[{"op": "replace", "path": "/hostcluster_id", "value": "x"}]"#, 400, "cannot change federation property(ies) hostcluster_id."),
        (r#"[{"op": "replace", "path": "/properties", "value": "x"}]"#, 400, "Invalid input for field/attribute properties. Value: 'x'. Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class 'str'>'"),
        (r#"[{"op": "replace", "path": "/uuid", "value": "x"}]"#, 400, "'/uuid' is an internal attribute and can not be updated"),
        ("{}", 400, "Invalid input for field/attribute patch. Value: '{}'. Value not a valid list: {}"),
        // Magnum: 500 with the same text.
        ("[]", 400, "list index out of range"),
        (r#"[{"op": "add", "path": "/member_ids", "value": "x"}]"#, 404, "Cluster x could not be found."),
    ];
    for (body, status, detail) in cases {
        assert_eq!(
            api.patch_fed(&fed, body).await.err(),
            (status, detail.to_string()),
            "{body}"
        );
    }
    assert_eq!(
        api.patch_fed("nope", "[]").await.err(),
        (404, "Federation nope could not be found.".into())
    );
    // `rollback` is accepted (query or second segment), and typed.
    let ok = r#"[{"op": "add", "path": "/properties/bar", "value": "y"}]"#;
    assert_eq!(
        api.patch_fed(&format!("{fed}?rollback=true"), ok)
            .await
            .status,
        202
    );
    assert_eq!(api.patch_fed(&format!("{fed}/y"), ok).await.status, 202);
    assert_eq!(
        api.patch_fed("x/y", ok).await.err(),
        (404, "Federation x could not be found.".into())
    );
    let r = api.patch_fed(&format!("{fed}?rollback=maybe"), ok).await;
    assert_eq!(r.status, 400, "{}", r.body);
}

async fn federation_delete(api: Api) {
    let host = cluster(&api.db, "noauth-project", "host1").await;
    let fed = api
        .create_fed(
            Who::Admin,
            &format!(r#"{{"name": "fed1", "hostcluster_id": "{host}", "properties": {{"dns-zone": "a."}}}}"#),
        )
        .await;
    let r = api
        .call(Who::Admin, "DELETE", "/v1/federations/fed1", None, LATEST)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(r.header("content-type"), None);
    assert_eq!(
        api.get(Who::Admin, &format!("/v1/federations/{fed}"))
            .await
            .err(),
        (404, format!("Federation {fed} could not be found."))
    );
    assert_eq!(
        api.call(Who::Admin, "DELETE", "/v1/federations/nope", None, LATEST)
            .await
            .err(),
        (404, "Federation nope could not be found.".into())
    );
}

async fn federation_list_pagination_and_errors(api: Api) {
    let host = cluster(&api.db, "noauth-project", "host1").await;
    let mut uuids = Vec::new();
    for n in ["fa", "fb", "fc"] {
        let b = format!(
            r#"{{"name": "{n}", "hostcluster_id": "{host}", "properties": {{"dns-zone": "a."}}}}"#
        );
        uuids.push(api.create_fed(Who::Admin, &b).await);
    }
    let names = |v: Value| -> Vec<String> {
        v["federations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    let r = api.get(Who::Admin, "/v1/federations?limit=2").await;
    let j = r.json();
    assert_eq!(names(j.clone()), ["fa", "fb"]);
    assert_eq!(
        j["next"],
        format!(
            "{HOST}/v1/federations?sort_key=id&sort_dir=asc&limit=2&marker={}",
            uuids[1]
        )
    );
    let r = api
        .get(Who::Admin, &format!("/v1/federations?marker={}", uuids[1]))
        .await;
    assert_eq!(names(r.json()), ["fc"]);
    let r = api
        .get(Who::Admin, "/v1/federations?sort_key=name&sort_dir=desc")
        .await;
    assert_eq!(names(r.json()), ["fc", "fb", "fa"]);
    let cases: [(&str, u16, &str); 5] = [
        ("marker=x", 400, "Invalid input for field/attribute marker. Value: 'x'. unable to convert to uuid. Error: Expected a uuid but received x."),
        ("limit=0", 400, "Limit must be positive"),
        ("sort_key=foo", 400, "The sort_key value \"foo\" is an invalid field for sorting"),
        ("sort_dir=x", 400, "Invalid sort direction: x. Acceptable values are 'asc' or 'desc'"),
        ("foo=1", 400, "Unknown argument: \"foo\""),
    ];
    for (q, status, detail) in cases {
        let r = api.get(Who::Admin, &format!("/v1/federations?{q}")).await;
        assert_eq!(r.err(), (status, detail.to_string()), "{q}");
    }
    let r = api
        .get(
            Who::Admin,
            "/v1/federations?marker=746e779a-751a-456b-a3e9-c883d734946f",
        )
        .await;
    assert_eq!(
        r.err(),
        (
            404,
            "Federation 746e779a-751a-456b-a3e9-c883d734946f could not be found.".into()
        )
    );
}

async fn federation_routing_answers(api: Api) {
    let cases: [(&str, &str, u16, &str); 8] = [
        ("DELETE", "/v1/federations", 400, "Missing argument: \"federation_ident\""),
        ("PATCH", "/v1/federations", 400, "Missing argument: \"federation_ident\""),
        ("POST", "/v1/federations/x", 400, "Invalid input for field/attribute federation. Value: 'x'. unable to convert to Federation. Error: Federation.__init__() takes 1 positional argument but 2 were given"),
        ("GET", "/v1/federations/4221a353-8368-475f-b7de-3429d3f724b3/detail", 404, "The %(name)s resource %(id)s could not be found."),
        ("GET", "/v1/federations/okfed1/detail", 400, "Invalid input for field/attribute marker. Value: 'okfed1'. unable to convert to uuid. Error: Expected a uuid but received okfed1."),
        ("GET", "/v1/federations/x/y/z", 404, ""),
        ("GET", "/v1/federations/detail/x", 404, ""),
        ("DELETE", "/v1/federations/x/y", 404, ""),
    ];
    for (m, p, status, detail) in cases {
        let r = api.call(Who::Admin, m, p, None, LATEST).await;
        assert_eq!(r.err(), (status, detail.to_string()), "{m} {p}");
    }
    assert_eq!(
        api.call(Who::Admin, "POST", "/v1/federations/x/y", None, LATEST)
            .await
            .status,
        404
    );
    let r = api
        .call(Who::Admin, "PUT", "/v1/federations", None, LATEST)
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("DELETE, GET, PATCH, POST"));
    assert_eq!(
        api.get(Who::Admin, "/federations").await.body,
        r#"{"federations": []}"#
    );
}

async fn federation_scoping_and_policies(api: Api) {
    let admin_host = cluster(&api.db, "noauth-project", "host1").await;
    let p1_host = cluster(&api.db, "p1", "p1host").await;
    let admin_fed = api
        .create_fed(
            Who::Admin,
            &format!(r#"{{"name": "afed", "hostcluster_id": "{admin_host}", "properties": {{"dns-zone": "a."}}}}"#),
        )
        .await;
    // A member creates in its own project; another project's cluster is not found.
    let p1_fed = api
        .create_fed(
            Who::Member("p1"),
            &format!(r#"{{"name": "pfed", "hostcluster_id": "{p1_host}", "properties": {{"dns-zone": "a."}}}}"#),
        )
        .await;
    assert_eq!(
        stored(&api.db, &p1_fed).await.project_id.as_deref(),
        Some("p1")
    );
    let b = format!(r#"{{"hostcluster_id": "{admin_host}", "properties": {{"dns-zone": "a."}}}}"#);
    assert_eq!(
        api.call(
            Who::Member("p1"),
            "POST",
            "/v1/federations",
            Some(&b),
            LATEST
        )
        .await
        .err(),
        (404, format!("Cluster {admin_host} could not be found."))
    );
    // No admin widening: each caller sees its own project only.
    let r = api.get(Who::Admin, "/v1/federations").await;
    assert_eq!(r.json()["federations"].as_array().unwrap().len(), 1);
    assert_eq!(r.json()["federations"][0]["uuid"], admin_fed.as_str());
    assert_eq!(
        api.get(Who::Admin, &format!("/v1/federations/{p1_fed}"))
            .await
            .status,
        404
    );
    assert_eq!(
        api.get(Who::Member("p1"), &format!("/v1/federations/{admin_fed}"))
            .await
            .status,
        404
    );
    let r = api.get(Who::Reader("p1"), "/v1/federations/detail").await;
    assert_eq!(r.json()["federations"][0]["name"], "pfed");
    assert_eq!(
        api.get(Who::Reader("p1"), "/v1/federations/pfed")
            .await
            .status,
        200
    );
    // A reader may read but not change.
    let b = format!(r#"{{"hostcluster_id": "{p1_host}", "properties": {{"dns-zone": "a."}}}}"#);
    assert_eq!(
        api.call(
            Who::Reader("p1"),
            "POST",
            "/v1/federations",
            Some(&b),
            LATEST
        )
        .await
        .err(),
        (
            403,
            "Policy doesn't allow federation:create to be performed.".into()
        )
    );
    assert_eq!(
        api.call(
            Who::Reader("p1"),
            "PATCH",
            "/v1/federations/pfed",
            Some("[]"),
            LATEST
        )
        .await
        .err(),
        (
            403,
            "Policy doesn't allow federation:update to be performed.".into()
        )
    );
    assert_eq!(
        api.call(
            Who::Reader("p1"),
            "DELETE",
            "/v1/federations/pfed",
            None,
            LATEST
        )
        .await
        .err(),
        (
            403,
            "Policy doesn't allow federation:delete to be performed.".into()
        )
    );
    // A member of another project: not found before any policy check.
    assert_eq!(
        api.call(
            Who::Member("p2"),
            "DELETE",
            "/v1/federations/pfed",
            None,
            LATEST
        )
        .await
        .err(),
        (404, "Federation pfed could not be found.".into())
    );
    assert_eq!(
        api.call(
            Who::Member("p1"),
            "DELETE",
            "/v1/federations/pfed",
            None,
            LATEST
        )
        .await
        .status,
        204
    );
}
