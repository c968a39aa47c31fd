//! The `openstack coe` flow of the clusters issue with real Keystone password auth: the
//! python-openstackclient + python-magnumclient of the test venv authenticate against the
//! real Keystone 30.0.0 with a `clouds.yaml`, find OpenKeel in the catalogue (a region of this
//! test's own), and drive the all-in-one server with `auth_strategy = keystone`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;

use coe::{Auth, Cli};

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

async fn start(dir: &Path, ks: &openkeel_tests::Keystone) -> openkeel::allinone::Running {
    let conf = dir.join("test.conf");
    std::fs::write(
        &conf,
        format!(
            "[openkeel]\nauth_strategy = keystone\nstatus_sync_interval = 1\n\n[keystone_authtoken]\nwww_authenticate_uri = {url}\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n",
            url = ks.url,
            pw = ks.password("magnum"),
        ),
    )
    .unwrap();
    let config = openkeel::allinone::load_config(dir, &[conf], &[]).unwrap();
    openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_coe_with_keystone_password_auth() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &ks).await;
    let region = ks
        .register_container_infra(&format!("http://{}/v1", srv.addr))
        .await;
    let clouds = dir.path().join("clouds.yaml");
    std::fs::write(&clouds, ks.clouds_yaml_for(&region)).unwrap();
    let cli = |cloud: &str| Cli {
        openstack: openstack.clone(),
        endpoint: String::new(),
        auth: Auth::Cloud {
            clouds: clouds.clone(),
            cloud: cloud.into(),
        },
    };
    let demo = cli("demo");
    let alt = cli("alt");
    let reader = cli("demo-reader");
    let admin = cli("admin");

    let t = demo
        .create_template("k8s", &["--labels", "kube_tag=v1.30.4"])
        .await;
    assert_eq!(t["project_id"], ks.project_id("demo").as_str());
    let list = demo.json(&["cluster", "template", "list"]).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    demo.ok(&[
        "cluster",
        "template",
        "update",
        "k8s",
        "replace",
        "docker_volume_size=5",
    ])
    .await;
    // Another project does not see it; the reader of demo does, but cannot change it.
    assert_eq!(
        alt.json(&["cluster", "template", "list"]).await,
        Value::Array(vec![])
    );
    let err = alt.fails(&["cluster", "template", "show", "k8s"]).await;
    assert!(err.contains("could not be found"), "{err}");
    reader.ok(&["cluster", "template", "show", "k8s"]).await;
    let err = reader
        .fails(&[
            "cluster",
            "template",
            "update",
            "k8s",
            "replace",
            "docker_volume_size=6",
        ])
        .await;
    assert!(
        err.contains("Policy doesn't allow clustertemplate:update"),
        "{err}"
    );

    // A cluster through its life.
    demo.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s",
        "--node-count",
        "1",
    ])
    .await;
    let c = demo.wait_status("c1", "CREATE_COMPLETE").await;
    assert_eq!(c["project_id"], ks.project_id("demo").as_str());
    let ngs = demo.json(&["nodegroup", "list", "c1"]).await;
    assert_eq!(ngs.as_array().map(Vec::len), Some(2), "{ngs}");
    demo.ok(&["cluster", "resize", "c1", "2"]).await;
    let c = demo.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["node_count"], 2);
    let err = alt.fails(&["cluster", "show", "c1"]).await;
    assert!(err.contains("could not be found"), "{err}");
    let err = reader.fails(&["cluster", "delete", "c1"]).await;
    assert!(err.contains("Policy doesn't allow cluster:delete"), "{err}");
    // The admin sees every project's clusters; services are admin-only.
    let all = admin.json(&["cluster", "list"]).await;
    assert!(
        all.as_array().unwrap().iter().any(|c| c["name"] == "c1"),
        "{all}"
    );
    admin.ok(&["service", "list"]).await;
    let err = demo.fails(&["service", "list"]).await;
    assert!(
        err.contains("Policy doesn't allow magnum-service:get_all"),
        "{err}"
    );
    let demo_project = ks.project_id("demo");
    let stats = demo.ok(&["stats", "list", &demo_project]).await;
    assert!(stats.contains("clusters"), "{stats}");
    let err = alt.fails(&["stats", "list", &demo_project]).await;
    assert!(err.contains("Not authorized"), "{err}");

    demo.ok(&["cluster", "delete", "c1"]).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = demo.run(&["cluster", "show", "c1"]).await;
        if !out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "c1 never went away");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    demo.ok(&["cluster", "template", "delete", "k8s"]).await;

    // A wrong password never reaches OpenKeel: Keystone refuses it.
    std::fs::write(
        &clouds,
        ks.clouds_yaml_for(&region)
            .replace(&ks.password("alt"), "wrong"),
    )
    .unwrap();
    let err = alt.fails(&["cluster", "list"]).await;
    assert!(err.contains("401") || err.contains("authenticate"), "{err}");

    ks.unregister_region(&region).await;
    srv.stop().await.unwrap();
}
