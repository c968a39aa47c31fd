//! The API's Glance / Nova / Neutron look-ups through the Keystone catalogue, end to end: the
//! all-in-one server with `[openkeel] simulated_cloud = false` and `[keystone_auth]` pointing at
//! the stand-in cloud (`tests/standin`: Keystone, Glance, Nova and Neutron cannot run here).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::{http, standin};

const V: (&str, &str) = ("OpenStack-API-Version", "container-infra latest");
const JSON: (&str, &str) = ("Content-Type", "application/json");

/// The all-in-one server with `[openkeel] simulated_cloud = false` and `[keystone_auth]`
/// pointing at `cloud`, plus `keystone_auth` (more options of that section).
async fn server_on(
    cloud: &standin::StandIn,
    keystone_auth: &str,
) -> (tempfile::TempDir, openkeel::allinone::Running) {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("cloud.conf");
    std::fs::write(
        &conf,
        format!(
            "[openkeel]\nsimulated_cloud = false\n\n[keystone_auth]\nauth_url = {}\nusername = magnum\npassword = secret\nproject_name = service\nuser_domain_id = default\nproject_domain_id = default\n{keystone_auth}",
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
    (dir, srv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_create_validates_through_the_catalogue() {
    let cloud = standin::start(standin::StandInData::default()).await;
    let (_dir, srv) = server_on(&cloud, "").await;
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

/// The slow-dependency drill's cloud half (issue 16, `docs/reliability.md`): Glance, Nova and
/// then Neutron answering only after an hour (as good as never) while a template is created.
/// The API answers within `[keystone_auth] timeout` with what keystoneauth's timeout gives in
/// Magnum (Magnum without a `timeout` would hang): Glance's failure is swallowed by the
/// driver look-up, whose 400 follows; Nova's and Neutron's are 500 with the timeout's message,
/// in Magnum's envelope. It answers 201 again as soon as the service does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_cloud_service_is_an_error_within_the_timeout_then_recovers() {
    use openkeel_tests::standin::Delay;
    use std::time::{Duration, Instant};

    let cloud = standin::start(standin::StandInData::default()).await;
    let (_dir, srv) = server_on(&cloud, "timeout = 2\n").await;
    let addr = srv.addr;
    let body = br#"{"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes", "external_network_id": "public", "flavor_id": "m1.small"}"#;

    for (stalled, status, detail) in [
        (
            "/image/",
            400,
            "Image ubuntu-jammy doesn't contain os_distro field.",
        ),
        ("/compute/", 500, " timed out"),
        ("/network/", 500, " timed out"),
    ] {
        cloud.update(|d| {
            d.delays = vec![Delay {
                path_contains: stalled.into(),
                delay: Duration::from_secs(3600),
            }]
        });
        let t0 = Instant::now();
        let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
            .await
            .expect("POST");
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(10), "{stalled}: {took:?}");
        assert_eq!(r.status, status, "{stalled}: {}", r.text());
        let v: serde_json::Value = serde_json::from_str(&r.text()).expect("Magnum's envelope");
        let e = &v["errors"][0];
        assert_eq!(e["status"], status, "{}", r.text());
        let text = e["detail"].as_str().unwrap_or_default();
        if status == 500 {
            assert!(
                text.starts_with("Request to http://")
                    && text.contains(stalled)
                    && text.ends_with(detail),
                "{stalled}: {}",
                r.text()
            );
        } else {
            assert_eq!(text, detail, "{stalled}: {}", r.text());
        }

        // The service answers again: so does the API, at once.
        cloud.update(|d| d.delays.clear());
        let r = http(addr, "POST", "/v1/clustertemplates", &[JSON, V], Some(body))
            .await
            .expect("POST");
        assert_eq!(r.status, 201, "{stalled}, after: {}", r.text());
    }
    srv.stop().await.expect("stop");
}
