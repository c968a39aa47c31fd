//! Production shape: `openkeel-api` and `openkeel-conductor` as separate services on MariaDB,
//! talking over a real RabbitMQ with oslo.messaging's wire format; the real
//! python-openstackclient + python-magnumclient drive the whole `openstack coe` flow through
//! them. Each test gets its own control exchange, so tests never see each other's messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;

use coe::Cli;
use openkeel::services::{self, ServiceOptions};
use std::path::Path;

/// A Magnum-style configuration for both services: MariaDB, RabbitMQ with a private control
/// exchange and conductor topic (oslo.messaging names the topic queue after the topic alone,
/// so tests on one broker must not share it), noauth, the simulator driver and the simulated
/// cloud.
pub fn service_config(dir: &Path, db_url: &str, exchange: &str) -> openkeel_core::config::Config {
    let rabbit =
        openkeel_tests::rabbit_url()
            .expect("RabbitMQ")
            .replacen("amqp://", "rabbit://", 1);
    let text = format!(
        "[DEFAULT]\n\
         transport_url = {rabbit}\n\
         control_exchange = {exchange}\n\
         rpc_response_timeout = 30\n\
         host = okt-conductor\n\
         [conductor]\n\
         topic = {exchange}-conductor\n\
         [database]\n\
         connection = {db_url}\n\
         [certificates]\n\
         cert_manager_type = x509keypair\n\
         [openkeel]\n\
         auth_strategy = noauth\n\
         rpc_transport = rabbit\n\
         enable_simulator_driver = true\n\
         simulated_cloud = true\n\
         status_sync_interval = 1\n"
    );
    let path = dir.join("magnum.conf");
    std::fs::write(&path, text).unwrap();
    openkeel_core::config::Config::load_sequence(&[openkeel_core::config::ConfigSource::File(path)])
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_coe_flow_through_openkeel_api_and_openkeel_conductor_over_rabbitmq() {
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
        return;
    };
    let Some(_) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let exchange = format!(
        "okt-{}",
        std::process::id() as u128 * 1_000_000
            + std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
                % 1_000_000
    );
    let config = service_config(dir.path(), mdb.url(), &exchange);
    let conductor = services::start_conductor(ServiceOptions {
        config: config.clone(),
        config_dirs: Vec::new(),
        bind: None,
    })
    .await
    .expect("conductor");
    let api = services::start_api(ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: Some("127.0.0.1:0".parse().unwrap()),
    })
    .await
    .expect("api");

    let cli = Cli {
        openstack,
        endpoint: format!("http://{}/v1", api.addr),
        token: None,
    };
    coe::coe_flow(&cli, &conductor.db).await;

    // The conductor's heartbeat is visible through the API (magnum_service rows).
    let services = cli.json(&["service", "list"]).await;
    let rows = services.as_array().unwrap();
    assert!(
        rows.iter()
            .any(|s| s["binary"] == "magnum-conductor" && s["state"] == "up"),
        "{services}"
    );

    api.stop().await.unwrap();
    conductor.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_answers_503_with_magnums_body_when_the_broker_is_unreachable() {
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let text = format!(
        "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:{port}/\nrpc_response_timeout = 2\n\
         [database]\nconnection = {}\n[openkeel]\nauth_strategy = noauth\nrpc_transport = rabbit\n\
         enable_simulator_driver = true\nsimulated_cloud = true\n",
        mdb.url()
    );
    let path = dir.path().join("magnum.conf");
    std::fs::write(&path, text).unwrap();
    let config =
        openkeel_core::config::Config::load_sequence(&[openkeel_core::config::ConfigSource::File(
            path,
        )])
        .unwrap();
    // The API starts without the broker (it connects lazily).
    let api = services::start_api(ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: Some("127.0.0.1:0".parse().unwrap()),
    })
    .await
    .expect("api");
    let t = openkeel_tests::http(
        api.addr,
        "POST",
        "/v1/clustertemplates",
        &[("Content-Type", "application/json")],
        Some(
            br#"{"name": "t", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small"}"#,
        ),
    )
    .await
    .unwrap();
    assert_eq!(t.status, 201, "{}", t.text());
    let r = openkeel_tests::http(
        api.addr,
        "POST",
        "/v1/clusters",
        &[("Content-Type", "application/json")],
        Some(br#"{"name": "c", "cluster_template_id": "t", "node_count": 1}"#),
    )
    .await
    .unwrap();
    assert_eq!(r.status, 503, "{}", r.text());
    let body: serde_json::Value = serde_json::from_str(&r.text()).unwrap();
    let e = &body["errors"][0];
    assert_eq!(e["status"], 503);
    assert_eq!(e["code"], "server");
    assert!(
        e["detail"]
            .as_str()
            .unwrap()
            .starts_with("The conductor cannot be reached"),
        "{body}"
    );
    assert!(r.header("x-openstack-request-id").is_some());
    api.stop().await.unwrap();
}
