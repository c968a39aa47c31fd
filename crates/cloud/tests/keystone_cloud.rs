//! `KeystoneCloud` against the stand-in cloud: catalogue look-up, token sources, the requests
//! made, every validator's answers, duplicates, paging, errors and timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_cloud::validate::*;
use openkeel_cloud::{ClientSettings, CloudSettings, KeystoneAuthSettings, KeystoneCloud};
use openkeel_core::cloud::Cloud;
use openkeel_core::context::RequestContext;
use openkeel_core::error::ErrorKind;
use openkeel_core::objects::StringMap;
use openkeel_tests::standin::{self, Delay, Fault, Image, Network, StandIn, StandInData, Subnet};
use serde_json::json;
use std::time::{Duration, Instant};

fn region_one() -> ClientSettings {
    ClientSettings {
        region_name: Some("RegionOne".into()),
        endpoint_type: "publicURL".into(),
    }
}

fn settings(s: &StandIn) -> CloudSettings {
    CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_type: Some("password".into()),
            auth_url: Some(s.keystone_url()),
            username: Some("magnum".into()),
            password: Some("magnum-svc".into()),
            user_domain_id: Some("default".into()),
            project_name: Some("service".into()),
            project_domain_id: Some("default".into()),
            ..Default::default()
        },
        glance_client: region_one(),
        nova_client: region_one(),
        neutron_client: region_one(),
        default_timeout: Duration::from_secs(5),
        ..Default::default()
    }
}

fn cloud(s: &StandIn) -> KeystoneCloud {
    KeystoneCloud::new(settings(s)).unwrap()
}

/// A user context as the API builds it behind keystonemiddleware: token plus token body.
fn user_ctx(s: &StandIn) -> (RequestContext, String) {
    let token = s.issue_token("demo-user", "demo-project");
    let ctx = RequestContext {
        user_id: Some("demo-user".into()),
        project_id: Some("demo-project".into()),
        auth_token: Some(token.clone()),
        auth_token_info: s.token_body(&token).map(std::sync::Arc::new),
        ..Default::default()
    };
    (ctx, token)
}

fn admin_ctx() -> RequestContext {
    RequestContext {
        is_admin: true,
        ..Default::default()
    }
}

async fn stand_in() -> StandIn {
    standin::start(StandInData::default()).await
}

#[tokio::test]
async fn token_body_catalogue_and_caller_token() {
    let s = stand_in().await;
    let c = cloud(&s);
    let (ctx, token) = user_ctx(&s);
    let img = c.find_image(&ctx, "ubuntu-jammy").await.unwrap();
    assert_eq!(img.name.as_deref(), Some("ubuntu-jammy"));
    assert_eq!(img.os_distro.as_deref(), Some("ubuntu"));
    assert_eq!(img.id, s.data().image_id("ubuntu-jammy"));

    let reqs = s.requests();
    // No Keystone call: the catalogue came with the context.
    assert!(reqs.iter().all(|r| r.service != "identity"), "{reqs:#?}");
    // openstacksdk's find: by id first (404), then by name.
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/image/v2/images/ubuntu-jammy");
    assert_eq!(reqs[0].status, 404);
    assert_eq!(reqs[1].path, "/image/v2/images");
    assert_eq!(
        reqs[1].query_pairs(),
        vec![("name".to_string(), "ubuntu-jammy".to_string())]
    );
    for r in &reqs {
        assert_eq!(r.header("x-auth-token"), Some(token.as_str()));
        assert_eq!(r.prefix, "", "public interface");
        assert_eq!(r.header("accept"), Some("application/json"));
    }

    // By id: one request.
    s.clear_requests();
    let id = s.data().image_id("fedora-coreos-40");
    let img = c.find_image(&ctx, &id).await.unwrap();
    assert_eq!(img.os_distro.as_deref(), Some("fedora-coreos"));
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test]
async fn token_without_body_is_validated_with_keystone() {
    let s = stand_in().await;
    let c = cloud(&s);
    let token = s.issue_token("u", "p");
    let ctx = RequestContext {
        auth_token: Some(token.clone()),
        ..Default::default()
    };
    assert_eq!(c.list_flavors(&ctx).await.unwrap().len(), 5);
    let reqs = s.requests();
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(reqs[0].path, "/identity/v3/auth/tokens");
    assert_eq!(reqs[0].header("x-subject-token"), Some(token.as_str()));
    assert_eq!(reqs[0].header("x-auth-token"), Some(token.as_str()));
    assert_eq!(reqs[1].path, "/compute/v2.1/flavors/detail");
    assert_eq!(reqs[1].query, "is_public=None");
    assert_eq!(reqs[1].header("x-auth-token"), Some(token.as_str()));

    // An unknown token: Keystone's 401 becomes Magnum's AuthorizationFailure.
    let ctx = RequestContext {
        auth_token: Some("bogus".into()),
        ..Default::default()
    };
    let e = c.keypair_exists(&ctx, "mykey").await.unwrap_err();
    assert_eq!(e.code(), 403);
    assert_eq!(
        e.message(),
        "nova connection failed. unexpected client error occurred: The request you have made requires authentication. (HTTP 401)"
    );
}

#[tokio::test]
async fn admin_context_uses_service_credentials_once() {
    let s = stand_in().await;
    let c = cloud(&s);
    let ctx = admin_ctx();
    assert!(c.keypair_exists(&ctx, "mykey").await.unwrap());
    assert!(!c.keypair_exists(&ctx, "nokey").await.unwrap());
    let reqs = s.requests();
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/identity/v3/auth/tokens");
    assert_eq!(
        reqs[0].body,
        Some(
            json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "magnum", "domain": {"id": "default"}, "password": "magnum-svc"}}},
            "scope": {"project": {"name": "service", "domain": {"id": "default"}}}}})
        )
    );
    // The cached service token serves both calls.
    assert_eq!(reqs.iter().filter(|r| r.service == "identity").count(), 1);
    let svc: Vec<_> = reqs.iter().filter(|r| r.service == "compute").collect();
    assert_eq!(svc.len(), 2);
    assert_eq!(svc[0].path, "/compute/v2.1/os-keypairs/mykey");
    assert!(svc[0]
        .header("x-auth-token")
        .unwrap()
        .starts_with("standin-"));
    assert_eq!(svc[0].header("x-auth-token"), svc[1].header("x-auth-token"));

    // A wrong service password.
    s.update(|d| d.password = Some("other".into()));
    let c = cloud(&s);
    let e = c.list_networks(&ctx).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthorizationFailure);
    assert_eq!(
        e.message(),
        "neutron connection failed. unexpected client error occurred: The request you have made requires authentication. (HTTP 401)"
    );
    // The project check is not wrapped by Magnum: a 500 with keystoneauth's text.
    let e = c.project_exists(&ctx, "p").await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert_eq!(
        e.message(),
        "The request you have made requires authentication. (HTTP 401)"
    );
}

#[tokio::test]
async fn no_token_no_admin_is_magnums_403() {
    let s = stand_in().await;
    let c = cloud(&s);
    let e = c
        .find_image(&RequestContext::default(), "ubuntu-jammy")
        .await
        .unwrap_err();
    assert_eq!(e.code(), 403);
    assert_eq!(
        e.message(),
        "keystone connection failed. reason Keystone API connection failed: no password or token found."
    );
    assert!(s.requests().is_empty());
}

#[tokio::test]
async fn endpoint_type_and_region_choose_the_endpoint() {
    let s = stand_in().await;
    let mut st = settings(&s);
    st.glance_client.endpoint_type = "internalURL".into();
    st.nova_client.endpoint_type = "admin".into();
    st.neutron_client.region_name = None;
    let c = KeystoneCloud::new(st).unwrap();
    let (ctx, _) = user_ctx(&s);
    c.find_image(&ctx, &s.data().image_id("ubuntu-jammy"))
        .await
        .unwrap();
    c.list_flavors(&ctx).await.unwrap();
    c.list_subnets(&ctx).await.unwrap();
    let prefixes: Vec<(String, String)> = s
        .requests()
        .into_iter()
        .map(|r| (r.service, r.prefix))
        .collect();
    assert_eq!(
        prefixes,
        vec![
            ("image".to_string(), "internal".to_string()),
            ("compute".to_string(), "admin".to_string()),
            ("network".to_string(), String::new()),
        ]
    );

    // Two regions: the configured one wins.
    s.update(|d| {
        d.catalog = Some(json!([
            {"type": "image", "id": "i", "name": "glance", "endpoints": [
                {"id": "1", "interface": "public", "region_id": "RegionOne", "region": "RegionOne", "url": "{base}/one/image"},
                {"id": "2", "interface": "public", "region_id": "RegionTwo", "region": "RegionTwo", "url": "{base}/two/image"}
            ]}
        ]))
    });
    let mut st = settings(&s);
    st.glance_client.region_name = Some("RegionTwo".into());
    let c = KeystoneCloud::new(st).unwrap();
    let (ctx, _) = user_ctx(&s);
    s.clear_requests();
    c.find_image(&ctx, "ubuntu-jammy").await.unwrap();
    assert!(s.requests().iter().all(|r| r.prefix == "two"));

    // A region without the service, and a service missing from the catalogue.
    let mut st = settings(&s);
    st.glance_client.region_name = Some("RegionThree".into());
    let c = KeystoneCloud::new(st).unwrap();
    let e = c.find_image(&ctx, "ubuntu-jammy").await.unwrap_err();
    assert_eq!(e.code(), 403);
    assert_eq!(
        e.message(),
        "glance connection failed. unexpected client error occurred: publicURL endpoint for image service in RegionThree region not found"
    );
    let e = c.list_flavors(&ctx).await.unwrap_err();
    assert_eq!(
        e.message(),
        "nova connection failed. unexpected client error occurred: publicURL endpoint for compute service in RegionOne region not found"
    );

    // A token body without a catalogue.
    let ctx = RequestContext {
        auth_token: Some("t".into()),
        auth_token_info: Some(std::sync::Arc::new(
            json!({"token": {"methods": ["password"]}}),
        )),
        ..Default::default()
    };
    let e = c.list_networks(&ctx).await.unwrap_err();
    assert_eq!(
        e.message(),
        "neutron connection failed. unexpected client error occurred: The service catalog is empty."
    );
}

#[tokio::test]
async fn image_validation_answers() {
    let s = standin::start(StandInData {
        faults: vec![
            Fault::new(
                "GET",
                "/v2/images?name=secret",
                403,
                json!({"message": "forbidden"}),
            ),
            Fault::new(
                "GET",
                "/v2/images?name=broken",
                500,
                json!({"message": "glance is down"}),
            ),
        ],
        ..Default::default()
    })
    .await;
    s.update(|d| {
        d.images.push(
            Image::new(
                "aaaaaaaa-0000-4000-8000-000000000001",
                "capi-image",
                Some("ubuntu"),
            )
            .with_property("magnum_driver", json!("k8s_capi_helm_v1")),
        )
    });
    let c = cloud(&s);
    let (ctx, _) = user_ctx(&s);

    let img = validate_image(&c, &ctx, Some("ubuntu-jammy"))
        .await
        .unwrap();
    assert_eq!(img.os_distro.as_deref(), Some("ubuntu"));

    let cases = [
        ("nope", 400, "Image nope could not be found."),
        (
            "dup-image",
            409,
            "Multiple images exist with same name 'dup-image'. Please use the image ID instead.",
        ),
        (
            "no-distro",
            400,
            "Image no-distro doesn't contain os_distro field.",
        ),
        ("secret", 403, "Not authorized for image secret."),
    ];
    for (image, code, msg) in cases {
        let e = validate_image(&c, &ctx, Some(image)).await.unwrap_err();
        assert_eq!((e.code(), e.message()), (code, msg), "{image}");
    }
    let e = validate_image(&c, &ctx, None).await.unwrap_err();
    assert_eq!(e.message(), "Image None doesn't contain os_distro field.");
    let e = validate_image(&c, &ctx, Some("broken")).await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(
        e.message()
            .starts_with("HttpException: 500: Server Error for url: http://")
            && e.message()
                .ends_with("/image/v2/images?name=broken, glance is down"),
        "{}",
        e.message()
    );
    // A duplicate name is found by its id.
    let dup = s.data().images[5].id.clone();
    assert_eq!(validate_image(&c, &ctx, Some(&dup)).await.unwrap().id, dup);

    // Driver selection (23.0.0's enforce_driver_supported): a duplicate is swallowed and
    // surfaces as the os_distro 400; not-found and forbidden are not swallowed.
    let e = driver_image(&c, &ctx, Some("dup-image"), None, None)
        .await
        .unwrap_err();
    assert_eq!(
        e.message(),
        "Image dup-image doesn't contain os_distro field."
    );
    let e = driver_image(&c, &ctx, Some("nope"), None, None)
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Image nope could not be found.");
    let e = driver_image(&c, &ctx, Some("secret"), None, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), 403);
    let d = driver_image(&c, &ctx, Some("capi-image"), None, None)
        .await
        .unwrap();
    assert_eq!(d.cluster_distro.as_deref(), Some("ubuntu"));
    assert_eq!(d.driver.as_deref(), Some("k8s_capi_helm_v1"));
    let d = driver_image(&c, &ctx, Some("dup-image"), Some("ubuntu"), None)
        .await
        .unwrap();
    assert_eq!(d.cluster_distro.as_deref(), Some("ubuntu"));
}

#[tokio::test]
async fn flavor_and_root_volume_answers() {
    let s = stand_in().await;
    let c = cloud(&s);
    let (ctx, _) = user_ctx(&s);
    validate_flavor(&c, &ctx, Some("m1.small")).await.unwrap();
    validate_flavor(&c, &ctx, Some("c1")).await.unwrap();
    validate_flavor(&c, &ctx, None).await.unwrap();
    let e = validate_flavor(&c, &ctx, Some("m1.nope"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (400, "Unable to find flavor m1.nope.")
    );

    validate_flavor_root_volume_size(&c, &ctx, None, Some("m1.small"), 0)
        .await
        .unwrap();
    let e = validate_flavor_root_volume_size(&c, &ctx, None, Some("ds4G"), 0)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (
            400,
            "Flavor with zero root volume size is not supported when boot_volume_size is zero."
        )
    );
    let e = validate_flavor_root_volume_size(&c, &ctx, None, None, 0)
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Unable to find flavor None.");
    let e = validate_flavor_root_volume_size(&c, &ctx, None, Some("Unset"), 0)
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Unable to find flavor Unset.");
    // A positive size (label or default) needs no flavor check, hence no Nova call.
    s.clear_requests();
    validate_flavor_root_volume_size(&c, &ctx, None, Some("ds4G"), 10)
        .await
        .unwrap();
    let mut labels = StringMap::new();
    labels.insert("boot_volume_size".into(), " 20 ".into());
    validate_flavor_root_volume_size(&c, &ctx, Some(&labels), None, 0)
        .await
        .unwrap();
    assert!(s.requests().is_empty());
    labels.insert("boot_volume_size".into(), "big".into());
    let e = validate_flavor_root_volume_size(&c, &ctx, Some(&labels), Some("m1.small"), 10)
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (500, "boot_volume_size must be an integer")
    );
    labels.insert("boot_volume_size".into(), "0".into());
    let e = validate_flavor_root_volume_size(&c, &ctx, Some(&labels), Some("ds4G"), 10)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::FlavorZeroRootVolumeNotSupported);
}

#[tokio::test]
async fn keypair_network_subnet_project_answers() {
    let s = stand_in().await;
    let c = cloud(&s);
    let (ctx, _) = user_ctx(&s);
    let d = s.data();

    validate_keypair(&c, &ctx, Some("mykey")).await.unwrap();
    validate_keypair(&c, &ctx, None).await.unwrap();
    let e = validate_keypair(&c, &ctx, Some("nokey")).await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (404, "Unable to find keypair nokey.")
    );

    validate_external_network(&c, &ctx, "public").await.unwrap();
    validate_external_network(&c, &ctx, &d.network_id("public"))
        .await
        .unwrap();
    let e = validate_external_network(&c, &ctx, "private")
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (400, "Unable to find external network private.")
    );
    let ext = s
        .requests()
        .into_iter()
        .rfind(|r| r.service == "network")
        .unwrap();
    assert_eq!(ext.service_path, "/v2.0/networks");
    assert_eq!(
        ext.query_pairs(),
        vec![("router:external".to_string(), "True".to_string())]
    );

    assert_eq!(
        validate_fixed_network(&c, &ctx, "private").await.unwrap(),
        d.network_id("private")
    );
    assert_eq!(
        validate_fixed_network(&c, &ctx, &d.network_id("shared-net"))
            .await
            .unwrap(),
        d.network_id("shared-net")
    );
    let e = validate_fixed_network(&c, &ctx, "nonet").await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (400, "Unable to find fixed network nonet.")
    );

    assert_eq!(
        validate_fixed_subnet(&c, &ctx, "private-subnet")
            .await
            .unwrap(),
        d.subnet_id("private-subnet")
    );
    let e = validate_fixed_subnet(&c, &ctx, "nosub").await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (400, "Unable to find fixed subnet nosub.")
    );

    validate_project(&c, &ctx, "any-project").await.unwrap();
    let e = validate_project(&c, &ctx, "nonexistent-42")
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (404, "The project_id nonexistent-42 could not be found.")
    );
    let p = s.requests().pop().unwrap();
    assert_eq!(p.path, "/identity/v3/projects/nonexistent-42");

    // Duplicates.
    s.update(|d| {
        d.networks.push(Network::new("dup-ext-2", "public", true));
        d.networks.push(Network::new("dup-net-2", "private", false));
        d.subnets.push(Subnet::new(
            "dup-sub-2",
            "private-subnet",
            "x",
            "10.1.0.0/24",
        ));
    });
    let e = validate_external_network(&c, &ctx, "public")
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (
            409,
            "Multiple external networks exist with same name 'public'. Please use the external network ID instead."
        )
    );
    let e = validate_fixed_network(&c, &ctx, "private")
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (
            409,
            "Multiple networks exist with same name 'private'. Please use the network ID instead."
        )
    );
    let e = validate_fixed_subnet(&c, &ctx, "private-subnet")
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (
            409,
            "Multiple subnets exist with same name 'private-subnet'. Please use the subnet ID instead."
        )
    );
    // The id still picks one.
    assert_eq!(
        validate_fixed_network(&c, &ctx, "dup-net-2").await.unwrap(),
        "dup-net-2"
    );
}

#[tokio::test]
async fn lists_follow_every_page() {
    let s = standin::start(StandInData {
        page_size: Some(1),
        ..Default::default()
    })
    .await;
    let c = cloud(&s);
    let (ctx, _) = user_ctx(&s);
    assert_eq!(c.list_flavors(&ctx).await.unwrap().len(), 5);
    assert_eq!(c.list_networks(&ctx).await.unwrap().len(), 3);
    assert_eq!(c.list_subnets(&ctx).await.unwrap().len(), 2);
    let e = validate_image(&c, &ctx, Some("dup-image"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), 409, "duplicates across pages");
    validate_flavor(&c, &ctx, Some("ds4G")).await.unwrap();
    let flavor_pages = s
        .requests()
        .iter()
        .filter(|r| r.service_path == "/v2.1/flavors/detail")
        .count();
    // 5 full pages + the empty one, for each of the two flavor listings.
    assert_eq!(flavor_pages, 12);
}

#[tokio::test]
async fn service_errors_are_500s_with_sdk_text() {
    let s = standin::start(StandInData {
        faults: vec![
            Fault::new(
                "GET",
                "/os-keypairs/boom",
                503,
                json!({"computeFault": {"code": 503, "message": "nova unavailable"}}),
            ),
            Fault::new("GET", "/v3/projects/forbidden", 403, json!({"error": {"code": 403, "message": "You are not authorized to perform the requested action: identity:get_project.", "title": "Forbidden"}})),
        ],
        ..Default::default()
    })
    .await;
    let c = cloud(&s);
    let (ctx, token) = user_ctx(&s);
    let e = validate_keypair(&c, &ctx, Some("boom")).await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(
        e.message()
            .starts_with("HttpException: 503: Server Error for url: ")
            && e.message()
                .ends_with("/compute/v2.1/os-keypairs/boom, nova unavailable"),
        "{}",
        e.message()
    );
    let e = validate_project(&c, &ctx, "forbidden").await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(e
        .message()
        .starts_with("ForbiddenException: 403: Client Error for url: "));

    // A revoked token: the services' 401 is an SDK error Magnum does not catch.
    s.revoke(&token);
    let e = validate_flavor(&c, &ctx, Some("m1.small"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(
        e.message()
            .starts_with("HttpException: 401: Client Error for url: ")
            && e.message()
                .ends_with("The request you have made requires authentication."),
        "{}",
        e.message()
    );
}

#[tokio::test]
async fn timeouts_and_unreachable_services_give_errors_not_hangs() {
    let s = standin::start(StandInData {
        delays: vec![
            Delay {
                path_contains: "/compute/".into(),
                delay: Duration::from_secs(30),
            },
            Delay {
                path_contains: "/identity/v3/auth/tokens".into(),
                delay: Duration::from_secs(30),
            },
        ],
        ..Default::default()
    })
    .await;
    let mut st = settings(&s);
    st.keystone_auth.timeout = Some(0.5);
    let c = KeystoneCloud::new(st).unwrap();
    let (ctx, _) = user_ctx(&s);

    let t0 = Instant::now();
    let e = c.list_flavors(&ctx).await.unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(e.code(), 500);
    assert!(
        e.message().starts_with("Request to http://") && e.message().ends_with(" timed out"),
        "{}",
        e.message()
    );

    // Keystone itself too slow while building the client: AuthorizationFailure.
    let t0 = Instant::now();
    let e = c.list_networks(&admin_ctx()).await.unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(e.code(), 403);
    assert!(
        e.message().starts_with(
            "neutron connection failed. unexpected client error occurred: Request to http://"
        ),
        "{}",
        e.message()
    );

    // Nothing listening at the catalogue's endpoint.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    s.update(|d| {
        d.catalog = Some(
            json!([{"type": "network", "id": "n", "name": "neutron", "endpoints": [
            {"id": "1", "interface": "public", "region_id": "RegionOne", "region": "RegionOne",
             "url": format!("http://{closed}/network")}]}]),
        )
    });
    let (ctx, _) = user_ctx(&s);
    let e = c.list_subnets(&ctx).await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(
        e.message().starts_with(&format!(
            "Unable to establish connection to http://{closed}/network/v2.0/subnets"
        )),
        "{}",
        e.message()
    );
}

#[tokio::test]
async fn os_resources_for_a_cluster() {
    let s = stand_in().await;
    let c = cloud(&s);
    let (ctx, _) = user_ctx(&s);
    let template = OsResources {
        image_id: Some("ubuntu-jammy"),
        flavor_id: Some("m1.small"),
        master_flavor_id: Some("m1.medium"),
        external_network_id: Some("public"),
        fixed_network: Some("private"),
        fixed_subnet: Some("private-subnet"),
    };
    validate_os_resources(&c, &ctx, &template, None)
        .await
        .unwrap();
    let cluster = OsResources {
        flavor_id: Some("m1.large"),
        ..Default::default()
    };
    validate_os_resources(&c, &ctx, &template, Some((&cluster, Some("mykey"))))
        .await
        .unwrap();
    let e = validate_os_resources(&c, &ctx, &template, Some((&cluster, Some("nokey"))))
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Unable to find keypair nokey.");
}
