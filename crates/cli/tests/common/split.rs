//! The split services' configuration shared by the tests that run `openkeel-api` and
//! `openkeel-conductor` apart over the test RabbitMQ and MariaDB.
#![allow(dead_code)]

use std::path::Path;

/// A Magnum-style configuration for both services: MariaDB, RabbitMQ with a private control
/// exchange and conductor topic (oslo.messaging names the topic queue after the topic alone,
/// so tests on one broker must not share it), noauth, the simulator driver and the simulated
/// cloud.
pub fn service_config(dir: &Path, db_url: &str, exchange: &str) -> openkeel_core::config::Config {
    service_config_with(dir, db_url, exchange, "")
}

/// [`service_config`] with `extra` appended (after the `[openkeel]` section).
pub fn service_config_with(
    dir: &Path,
    db_url: &str,
    exchange: &str,
    extra: &str,
) -> openkeel_core::config::Config {
    let path = dir.join("magnum.conf");
    std::fs::write(
        &path,
        service_conf_text(db_url, exchange, "okt-conductor", "", extra),
    )
    .unwrap();
    openkeel_core::config::Config::load_sequence(&[openkeel_core::config::ConfigSource::File(path)])
        .unwrap()
}

/// The text of [`service_config`]: `[DEFAULT] host = {host}` followed by `default_extra`, and
/// `extra` at the end (several conductors of one test each need their own `host`).
pub fn service_conf_text(
    db_url: &str,
    exchange: &str,
    host: &str,
    default_extra: &str,
    extra: &str,
) -> String {
    let rabbit =
        openkeel_tests::rabbit_url()
            .expect("RabbitMQ")
            .replacen("amqp://", "rabbit://", 1);
    format!(
        "[DEFAULT]\n\
         transport_url = {rabbit}\n\
         control_exchange = {exchange}\n\
         rpc_response_timeout = 30\n\
         host = {host}\n\
         {default_extra}\
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
         status_sync_interval = 1\n\
         {extra}"
    )
}

/// `openkeel-conductor`, then `openkeel-api` on a free loopback port, both from `config`.
pub async fn start_both(
    config: openkeel_core::config::Config,
) -> (
    openkeel::services::RunningConductor,
    openkeel::services::RunningApi,
) {
    let conductor = openkeel::services::start_conductor(openkeel::services::ServiceOptions {
        config: config.clone(),
        config_dirs: Vec::new(),
        bind: None,
    })
    .await
    .expect("conductor");
    let api = openkeel::services::start_api(openkeel::services::ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: Some("127.0.0.1:0".parse().expect("address")),
    })
    .await
    .expect("api");
    (conductor, api)
}

/// Create the cluster template `name` of the simulated cloud (`ubuntu-jammy`, `public`,
/// `m1.small`) through the API at `addr`, as noauth's identity; it must answer 201.
pub async fn create_template(addr: std::net::SocketAddr, name: &str) {
    let body = serde_json::json!({
        "name": name, "image_id": "ubuntu-jammy", "external_network_id": "public",
        "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small",
    })
    .to_string();
    let r = openkeel_tests::http(
        addr,
        "POST",
        "/v1/clustertemplates",
        &[("Content-Type", "application/json")],
        Some(body.as_bytes()),
    )
    .await
    .expect("POST /v1/clustertemplates");
    assert_eq!(r.status, 201, "{}", r.text());
}
