//! The stand-in cloud answers in the real APIs' shapes (the parts OpenKeel relies on).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::http;
use openkeel_tests::standin::{self, Fault, StandInData};
use serde_json::{json, Value};

fn body(r: &openkeel_tests::RawResponse) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

async fn password_token(s: &standin::StandIn) -> (String, Value) {
    let req = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "magnum", "domain": {"id": "default"}, "password": "pw"}}},
        "scope": {"project": {"name": "service", "domain": {"id": "default"}}}}});
    let raw = req.to_string();
    let r = http(
        s.addr,
        "POST",
        "/identity/v3/auth/tokens",
        &[("Content-Type", "application/json")],
        Some(raw.as_bytes()),
    )
    .await
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.text());
    (r.header("x-subject-token").unwrap().to_string(), body(&r))
}

#[tokio::test]
async fn keystone_password_auth_and_validation() {
    let s = standin::start(StandInData::default()).await;
    let (token, b) = password_token(&s).await;
    assert!(token.starts_with("standin-"));
    let tok = &b["token"];
    assert_eq!(tok["methods"], json!(["password"]));
    assert_eq!(tok["project"]["name"], "service");
    assert_eq!(tok["user"]["name"], "magnum");
    let types: Vec<&str> = tok["catalog"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "identity",
            "image",
            "compute",
            "network",
            "block-storage",
            "load-balancer",
            "container-infra"
        ]
    );
    let image = &tok["catalog"][1]["endpoints"];
    assert_eq!(image.as_array().unwrap().len(), 3);
    assert_eq!(image[0]["interface"], "public");
    assert_eq!(image[0]["url"], format!("{}/image", s.base_url()));
    assert_eq!(image[1]["url"], format!("{}/internal/image", s.base_url()));

    // Validation with X-Subject-Token.
    let r = http(
        s.addr,
        "GET",
        "/identity/v3/auth/tokens",
        &[("X-Auth-Token", &token), ("X-Subject-Token", &token)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-subject-token"), Some(token.as_str()));
    assert_eq!(body(&r)["token"]["project"]["name"], "service");
    let r = http(
        s.addr,
        "GET",
        "/identity/v3/auth/tokens",
        &[("X-Auth-Token", &token), ("X-Subject-Token", "nope")],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 404);
    assert_eq!(body(&r)["error"]["message"], "Could not find token: nope.");
    let r = http(
        s.addr,
        "GET",
        "/identity/v3/auth/tokens",
        &[("X-Subject-Token", &token)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 401);

    // A wrong password when one is required.
    s.update(|d| d.password = Some("secret".into()));
    let raw = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": "u1", "password": "wrong"}}}}})
    .to_string();
    let r = http(
        s.addr,
        "POST",
        "/identity/v3/auth/tokens",
        &[],
        Some(raw.as_bytes()),
    )
    .await
    .unwrap();
    assert_eq!(r.status, 401);
    assert_eq!(
        body(&r)["error"]["message"],
        "The request you have made requires authentication."
    );

    // Projects.
    let r = http(
        s.addr,
        "GET",
        "/identity/v3/projects/p1",
        &[("X-Auth-Token", &token)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        (r.status, body(&r)["project"]["id"].clone()),
        (200, json!("p1"))
    );
    let r = http(
        s.addr,
        "GET",
        "/identity/v3/projects/nonexistent-1",
        &[("X-Auth-Token", &token)],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 404);
    assert_eq!(
        body(&r)["error"]["message"],
        "Could not find project: nonexistent-1."
    );

    // The token method without a scope: scoped to the user's default project, which the
    // stand-in takes from the presented token (keystoneauth's v3.Token as Magnum's API uses it).
    let t = s.issue_token("u9", "p9");
    let raw = json!({"auth": {"identity": {"methods": ["token"], "token": {"id": t}}}}).to_string();
    let r = http(
        s.addr,
        "POST",
        "/identity/v3/auth/tokens",
        &[],
        Some(raw.as_bytes()),
    )
    .await
    .unwrap();
    assert_eq!(r.status, 201);
    let b = body(&r);
    assert_eq!(b["token"]["user"]["id"], "u9");
    assert_eq!(b["token"]["project"]["id"], "p9");
    assert!(b["token"]["catalog"].is_array());

    let recorded = s.requests_to("identity");
    assert_eq!(recorded[0].method, "POST");
    assert_eq!(recorded[0].service_path, "/v3/auth/tokens");
    assert_eq!(recorded[0].status, 201);
    assert_eq!(
        recorded[0].body.as_ref().unwrap()["auth"]["identity"]["methods"],
        json!(["password"])
    );
}

#[tokio::test]
async fn glance_shapes() {
    let s = standin::start(StandInData::default()).await;
    let t = s.issue_token("u", "p");
    let h = [("X-Auth-Token", t.as_str())];
    let r = http(s.addr, "GET", "/image/v2/images?name=dup-image", &h, None)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let b = body(&r);
    assert_eq!(b["images"].as_array().unwrap().len(), 2);
    assert_eq!(b["schema"], "/v2/schemas/images");
    assert_eq!(b["images"][0]["os_distro"], "ubuntu");
    assert_eq!(b["images"][0]["status"], "active");

    let id = s.data().image_id("ubuntu-jammy");
    let r = http(s.addr, "GET", &format!("/image/v2/images/{id}"), &h, None)
        .await
        .unwrap();
    assert_eq!(
        (r.status, body(&r)["name"].clone()),
        (200, json!("ubuntu-jammy"))
    );
    let r = http(s.addr, "GET", "/image/v2/images/no-distro", &h, None)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.text().contains("No image found with ID no-distro"));
    let r = http(s.addr, "GET", "/image/v2/images?name=no-distro", &h, None)
        .await
        .unwrap();
    assert!(body(&r)["images"][0].get("os_distro").is_none());

    // Paging: a full page carries `next`.
    s.update(|d| d.page_size = Some(2));
    let r = http(s.addr, "GET", "/image/v2/images", &h, None)
        .await
        .unwrap();
    let b = body(&r);
    assert_eq!(b["images"].as_array().unwrap().len(), 2);
    let next = b["next"].as_str().unwrap().to_string();
    assert!(next.starts_with("/v2/images?marker="), "{next}");
    let r = http(s.addr, "GET", &format!("/image{next}"), &h, None)
        .await
        .unwrap();
    assert_eq!(body(&r)["images"].as_array().unwrap().len(), 2);

    // No token, or an unknown one: keystonemiddleware's 401.
    let r = http(
        s.addr,
        "GET",
        "/image/v2/images",
        &[("X-Auth-Token", "bogus")],
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 401);
    assert!(r
        .header("www-authenticate")
        .unwrap()
        .starts_with("Keystone uri="));
    // The version document needs no token.
    let r = http(s.addr, "GET", "/image", &[], None).await.unwrap();
    assert_eq!(r.status, 300);
}

#[tokio::test]
async fn nova_and_neutron_shapes() {
    let s = standin::start(StandInData::default()).await;
    let t = s.issue_token("u", "p");
    let h = [("X-Auth-Token", t.as_str())];
    let r = http(
        s.addr,
        "GET",
        "/compute/v2.1/flavors/detail?is_public=None",
        &h,
        None,
    )
    .await
    .unwrap();
    let b = body(&r);
    let names: Vec<&str> = b["flavors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["m1.tiny", "m1.small", "m1.medium", "m1.large", "ds4G"]
    );
    assert_eq!(b["flavors"][4]["disk"], 0);
    assert!(b.get("flavors_links").is_none());

    let r = http(s.addr, "GET", "/compute/v2.1/os-keypairs/mykey", &h, None)
        .await
        .unwrap();
    assert_eq!(
        (r.status, body(&r)["keypair"]["name"].clone()),
        (200, json!("mykey"))
    );
    let r = http(s.addr, "GET", "/compute/v2.1/os-keypairs/nokey", &h, None)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    assert_eq!(
        body(&r)["itemNotFound"]["message"],
        "Keypair nokey not found for user standin-user"
    );

    let r = http(
        s.addr,
        "GET",
        "/network/v2.0/networks?router%3Aexternal=True",
        &h,
        None,
    )
    .await
    .unwrap();
    let b = body(&r);
    assert_eq!(b["networks"].as_array().unwrap().len(), 1);
    assert_eq!(b["networks"][0]["name"], "public");
    assert_eq!(b["networks"][0]["router:external"], true);
    let r = http(s.addr, "GET", "/network/v2.0/networks", &h, None)
        .await
        .unwrap();
    assert_eq!(body(&r)["networks"].as_array().unwrap().len(), 3);
    let r = http(s.addr, "GET", "/network/v2.0/subnets", &h, None)
        .await
        .unwrap();
    let b = body(&r);
    assert_eq!(b["subnets"][0]["name"], "private-subnet");
    assert_eq!(
        b["subnets"][0]["network_id"],
        s.data().network_id("private")
    );

    s.update(|d| d.page_size = Some(2));
    let r = http(s.addr, "GET", "/network/v2.0/networks", &h, None)
        .await
        .unwrap();
    let next = body(&r)["networks_links"][0]["href"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(next.starts_with(&format!("{}/network/v2.0/networks?marker=", s.base_url())));

    let recorded = s.requests_to("network");
    assert_eq!(
        recorded[0].query_pairs(),
        vec![("router:external".to_string(), "True".to_string())]
    );
    assert_eq!(recorded[0].header("x-auth-token"), Some(t.as_str()));
}

#[tokio::test]
async fn faults_and_prefixes() {
    let s = standin::start(StandInData {
        faults: vec![Fault::new(
            "GET",
            "/v2/images?name=secret",
            403,
            json!({"message": "no"}),
        )],
        ..Default::default()
    })
    .await;
    let t = s.issue_token("u", "p");
    let h = [("X-Auth-Token", t.as_str())];
    let r = http(s.addr, "GET", "/image/v2/images?name=secret", &h, None)
        .await
        .unwrap();
    assert_eq!(r.status, 403);
    let r = http(
        s.addr,
        "GET",
        "/admin/compute/v2.1/flavors/detail",
        &h,
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200);
    let last = s.requests().pop().unwrap();
    assert_eq!(
        (last.prefix.as_str(), last.service.as_str()),
        ("admin", "compute")
    );
    assert!(s.token_body(&t).unwrap()["token"]["catalog"].is_array());
    s.revoke(&t);
    let r = http(s.addr, "GET", "/compute/v2.1/flavors/detail", &h, None)
        .await
        .unwrap();
    assert_eq!(r.status, 401);
}
