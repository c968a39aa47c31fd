//! The API's Glance / Nova / Neutron look-ups through the Keystone catalogue, end to end: the
//! all-in-one server with `[openkeel] simulated_cloud = false` and `[keystone_auth]` pointing at
//! the stand-in cloud (`tests/standin`: Keystone, Glance, Nova and Neutron cannot run here).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::{http, standin};

const V: (&str, &str) = ("OpenStack-API-Version", "container-infra latest");
const JSON: (&str, &str) = ("Content-Type", "application/json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_create_validates_through_the_catalogue() {
    let cloud = standin::start(standin::StandInData::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("cloud.conf");
    std::fs::write(
        &conf,
        format!(
            "[openkeel]\nsimulated_cloud = false\n\n[keystone_auth]\nauth_url = {}\nusername = magnum\npassword = secret\nproject_name = service\nuser_domain_id = default\nproject_domain_id = default\n",
            cloud.keystone_url()
        ),
    )
    .expect("conf");
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).expect("config");
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .expect("start");
    let addr = srv.addr;

    // The dev-mode identity is an admin: Magnum uses the service credentials then.
    let body = br#"{"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes", "external_network_id": "public", "flavor_id": "m1.small"}"#;
    let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
        .await
        .expect("POST");
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(
        r.text().contains(r#""cluster_distro": "ubuntu""#),
        "{}",
        r.text()
    );
    assert!(
        !cloud.requests_to("image").is_empty(),
        "Glance was not asked"
    );
    assert!(
        !cloud.requests_to("network").is_empty(),
        "Neutron was not asked"
    );
    assert!(
        !cloud.requests_to("compute").is_empty(),
        "Nova was not asked"
    );

    let body = br#"{"name": "bad", "image_id": "nope", "coe": "kubernetes", "external_network_id": "public"}"#;
    let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
        .await
        .expect("POST");
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text()
            .contains(r#""detail": "Image nope could not be found.""#),
        "{}",
        r.text()
    );

    let body = br#"{"name": "bad", "image_id": "no-distro", "coe": "kubernetes", "external_network_id": "public"}"#;
    let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
        .await
        .expect("POST");
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text().contains("doesn't contain os_distro field"),
        "{}",
        r.text()
    );

    let body = br#"{"name": "bad", "image_id": "ubuntu-jammy", "coe": "kubernetes", "external_network_id": "nonet"}"#;
    let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
        .await
        .expect("POST");
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(
        r.text().contains("Unable to find external network nonet."),
        "{}",
        r.text()
    );

    srv.stop().await.expect("stop");
}
