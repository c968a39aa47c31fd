//! The REAL Magnum 23.0.0 API-side code (`tests/python/magnum_rpc_peer.py client`: Magnum's
//! transport set-up, `MagnumObjectIndirectionAPI` as magnum-api installs it, Magnum's objects
//! and `conductor.api.API`) against `openkeel-conductor` over RabbitMQ: object reads through
//! the indirection RPCs, a Magnum exception coming back as Magnum's own class, a cast, and an
//! unknown method as oslo's RemoteError.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel::services::{self, ServiceOptions};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn magnums_api_side_code_works_against_openkeel_conductor() {
    let Some(amqp) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(python) = openkeel_tests::venv_bin("python") else {
        return;
    };
    let url = amqp.replacen("amqp://", "rabbit://", 1);
    let dir = tempfile::tempdir().unwrap();
    let id = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let (exchange, topic) = (format!("okt-{id}"), format!("okt-{id}-conductor"));
    let conf = dir.path().join("magnum.conf");
    std::fs::write(
        &conf,
        format!(
            "[DEFAULT]\ntransport_url = {url}\ncontrol_exchange = {exchange}\nhost = okt-conductor\n\
             [database]\nconnection = sqlite:///{}/openkeel.sqlite\n[conductor]\ntopic = {topic}\n\
             [certificates]\ncert_manager_type = x509keypair\n[openkeel]\nauth_strategy = noauth\nrpc_transport = rabbit\nenable_simulator_driver = true\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let config =
        openkeel_core::config::Config::load_sequence(&[openkeel_core::config::ConfigSource::File(
            conf,
        )])
        .unwrap();
    let conductor = services::start_conductor(ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: None,
    })
    .await
    .expect("conductor");

    let steps = run_client(&python, &url, &exchange, &topic, "indirection").await;
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}: {steps:?}"))
            .clone()
    };
    check_indirection(&step);

    // magnum-api's object writes: ClusterTemplate create / save / refresh / destroy, Quota
    // create / update / delete, through object_action, as the Python objects see them.
    let steps = run_client(&python, &url, &exchange, &topic, "objects").await;
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}: {steps:?}"))
            .clone()
    };
    for s in &steps {
        let name = s["step"].as_str().unwrap();
        if !["quota_missing", "ct_gone"].contains(&name) {
            assert_eq!(s["ok"], true, "{s}");
        }
    }
    let ct = step("ct_create")["result"]["magnum_object.data"].clone();
    assert_eq!(ct["id"], 1);
    assert_eq!(ct["name"], "k8s");
    // the DB defaults came back into Magnum's object
    assert_eq!(ct["public"], false);
    assert_eq!(ct["floating_ip_enabled"], true);
    assert!(ct["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        step("ct_changes_after_create")["result"],
        serde_json::json!([])
    );
    assert_eq!(step("ct_save")["result"], serde_json::json!([]));
    assert_eq!(step("ct_get_renamed")["result"], "k8s-renamed");
    assert_eq!(step("ct_get_by_id")["result"], ct["uuid"]);
    // refresh() copies what differs from the stored row and marks it changed: the name, and
    // updated_at when the second save fell in a later second than the first (DB precision).
    let r = step("ct_refresh")["result"].clone();
    assert_eq!(r["name"], "k8s-again");
    let changed = r["changed"].as_array().unwrap();
    assert!(changed.contains(&serde_json::json!("name")), "{r}");
    assert!(
        changed.iter().all(|c| c == "name" || c == "updated_at"),
        "{r}"
    );
    assert_eq!(step("quota_get")["result"], 3);
    let s = step("quota_missing");
    assert_eq!(
        (s["class"].as_str(), s["code"].as_i64()),
        (Some("QuotaNotFound_Remote"), Some(404))
    );
    assert_eq!(step("quota_update")["result"], 5);
    assert_eq!(step("quota_list")["result"], serde_json::json!([5]));
    assert_eq!(step("cluster_count")["result"], 0);
    let s = step("ct_gone");
    assert_eq!(s["class"], "ClusterTemplateNotFound_Remote", "{s}");
    conductor.stop().await;
}

async fn run_client(
    python: &std::path::Path,
    url: &str,
    exchange: &str,
    topic: &str,
    scenario: &str,
) -> Vec<Value> {
    let script = openkeel_tests::workspace_root().join("tests/python/magnum_rpc_peer.py");
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        openkeel_tests::helper(python)
            .arg(script)
            .args(["client", url, exchange, topic, scenario])
            .env("PYTHONWARNINGS", "ignore")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Magnum client finished")
    .expect("run the Magnum client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the Magnum client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn check_indirection(step: &dyn Fn(&str) -> Value) {
    // MagnumService.list through object_class_action_versions: the conductor's own row.
    let s = step("magnumservice_list");
    assert_eq!(s["ok"], true, "{s}");
    let services = s["result"].as_array().unwrap();
    assert!(
        services
            .iter()
            .any(|x| x["magnum_object.data"]["binary"] == "magnum-conductor"
                && x["magnum_object.data"]["host"] == "okt-conductor"),
        "{s}"
    );
    // A Magnum exception raised by OpenKeel is Magnum's class on the Python side.
    let s = step("cluster_get_missing");
    assert_eq!(s["ok"], false);
    assert_eq!(s["class"], "ClusterNotFound_Remote", "{s}");
    assert_eq!(s["code"], 404);
    assert_eq!(
        s["message"],
        "Cluster 11111111-2222-3333-4444-555555555555 could not be found."
    );
    let s = step("clustertemplate_list");
    assert_eq!(s["ok"], true, "{s}");
    assert_eq!(s["result"], serde_json::json!([]));
    let s = step("cluster_delete_cast");
    assert_eq!(s["ok"], true, "{s}");
    let s = step("unknown_method");
    assert_eq!(s["ok"], false);
    assert_eq!(s["class"], "RemoteError", "{s}");
    assert!(
        s["message"].as_str().unwrap().contains("NoSuchMethod"),
        "{s}"
    );
}
