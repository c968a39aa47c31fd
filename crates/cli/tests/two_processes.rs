//! Production shape: `openkeel-api` and `openkeel-conductor` as separate services on MariaDB,
//! talking over a real RabbitMQ with oslo.messaging's wire format; the real
//! python-openstackclient + python-magnumclient drive the whole `openstack coe` flow through
//! them. Each test gets its own control exchange and conductor topic (queue names are global
//! in a vhost), so tests never see each other's messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;
#[path = "common/split.rs"]
mod split;

use coe::Cli;
use openkeel::services::{self, ServiceOptions};
use split::{service_config, service_config_with};

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
    // CADF notifications on a topic of this test's own.
    let topic = format!("{exchange}-notifications");
    let config = service_config_with(
        dir.path(),
        mdb.url(),
        &exchange,
        &format!("[oslo_messaging_notifications]\ndriver = messagingv2\ntopics = {topic}\n"),
    );
    let (conductor, api) = split::start_both(config).await;

    let cli = Cli {
        openstack,
        endpoint: format!("http://{}/v1", api.addr),
        auth: coe::Auth::None,
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

    // The conductor sent Magnum's notifications: create pending (cast) and success (sync),
    // update, delete, each in the 2.0 envelope with a CADF payload.
    let events = drain_notifications(&format!("{topic}.info")).await;
    for (event, outcome) in [
        ("magnum.cluster.create", "pending"),
        ("magnum.cluster.create", "success"),
        ("magnum.cluster.update", "pending"),
        ("magnum.cluster.update", "success"),
        ("magnum.cluster.delete", "pending"),
    ] {
        let n = events
            .iter()
            .find(|m| m["event_type"] == event && m["payload"]["outcome"] == outcome)
            .unwrap_or_else(|| panic!("no {event} {outcome} notification in {events:?}"));
        assert_eq!(n["priority"], "INFO");
        assert_eq!(n["publisher_id"], "container-infra.okt-conductor");
        assert_eq!(
            n["payload"]["typeURI"],
            "http://schemas.dmtf.org/cloud/audit/1.0/event"
        );
        assert_eq!(n["payload"]["target"]["name"], "c1");
        assert_eq!(n["_context_auth_token"], serde_json::Value::Null);
    }

    api.stop().await.unwrap();
    conductor.stop().await;
}

/// Every message waiting in `queue`, unwrapped from the oslo envelope.
async fn drain_notifications(queue: &str) -> Vec<serde_json::Value> {
    use lapin::options::{BasicGetOptions, QueueDeleteOptions};
    let url = openkeel_tests::rabbit_url().unwrap();
    let conn = lapin::Connection::connect(&url, lapin::ConnectionProperties::default())
        .await
        .unwrap();
    let ch = conn.create_channel().await.unwrap();
    let mut out = Vec::new();
    while let Some(m) = ch
        .basic_get(queue.into(), BasicGetOptions { no_ack: true })
        .await
        .unwrap()
    {
        let outer: serde_json::Value = serde_json::from_slice(&m.delivery.data).unwrap();
        assert_eq!(outer["oslo.version"], "2.0");
        let inner = outer["oslo.message"].as_str().unwrap();
        out.push(serde_json::from_str(inner).unwrap());
    }
    let _ = ch
        .queue_delete(queue.into(), QueueDeleteOptions::default())
        .await;
    out
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
    split::create_template(api.addr, "t").await;
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

/// A conductor that goes away mid-operation (here: before its status loop ever ran) leaves
/// the cluster in `CREATE_IN_PROGRESS`; the next conductor's status loop finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_conductor_finishes_what_a_dead_one_left_in_progress() {
    let Some(_) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exchange = format!("okt-restart-{}", std::process::id());
    let no_loops = service_config_with(
        dir.path(),
        mdb.url(),
        &exchange,
        "[DEFAULT]\nperiodic_enable = false\n",
    );
    let (first, api) = split::start_both(no_loops).await;
    let post = |path: &'static str, body: &'static [u8]| {
        let addr = api.addr;
        async move {
            openkeel_tests::http(
                addr,
                "POST",
                path,
                &[
                    ("Content-Type", "application/json"),
                    ("OpenStack-API-Version", "container-infra latest"),
                ],
                Some(body),
            )
            .await
            .unwrap()
        }
    };
    split::create_template(api.addr, "t").await;
    let c = post(
        "/v1/clusters",
        br#"{"name": "c", "cluster_template_id": "t", "node_count": 1}"#,
    )
    .await;
    assert_eq!(c.status, 202, "{}", c.text());
    let uuid = serde_json::from_str::<serde_json::Value>(&c.text()).unwrap()["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let status = |db: openkeel_db::Database, uuid: String| async move {
        openkeel_db::cluster::get_by_uuid(&db, &openkeel_db::Scope::admin_all_tenants(), &uuid)
            .await
            .ok()
            .and_then(|c| c.status)
            .map(|s| s.as_str().to_string())
    };
    // The first conductor takes the create (its insert may come after the API's bounded
    // wait on a loaded machine) and then dies.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let mut s = None;
    while std::time::Instant::now() < deadline {
        s = status(db.clone(), uuid.clone()).await;
        if s.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(s.as_deref(), Some("CREATE_IN_PROGRESS"));
    first.stop().await;

    // A new conductor with its status loop brings the cluster to CREATE_COMPLETE.
    let with_loops = service_config(dir.path(), mdb.url(), &exchange);
    let second = services::start_conductor(ServiceOptions {
        config: with_loops,
        config_dirs: Vec::new(),
        bind: None,
    })
    .await
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = status(db.clone(), uuid.clone()).await;
        if s.as_deref() == Some("CREATE_COMPLETE") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "cluster stuck in {s:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    api.stop().await.unwrap();
    second.stop().await;
}

/// The certificate RPCs (`get_ca_certificate`, `sign_certificate`, `rotate_ca_certificate`:
/// calls) over RabbitMQ: `openstack coe ca show / sign / rotate` and `cluster config` through
/// `openkeel-api` + `openkeel-conductor`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_over_rabbitmq() {
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
    let exchange = format!("okt-ca-{}", std::process::id());
    let config = service_config(dir.path(), mdb.url(), &exchange);
    let (conductor, api) = split::start_both(config).await;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{}/v1", api.addr),
        auth: coe::Auth::None,
    };
    coe::ca_flow(&cli, dir.path()).await;
    api.stop().await.unwrap();
    conductor.stop().await;
}
