//! Interoperability with the **real** Python Magnum 23.0.0 (the test venv's `magnum-api` and
//! `magnum-conductor`, with oslo.messaging) on the test MariaDB and RabbitMQ, both ways:
//!
//! 1. `openkeel-api` in front of the real `magnum-conductor`;
//! 2. the real `magnum-api` in front of `openkeel-conductor`;
//! 3. the frames each API implementation publishes for the same operations, compared field
//!    for field (envelope, key order, AMQP properties, context keys, object primitives).
//!
//! The Python services load OpenKeel's own record-only cluster driver and noauth paste filter
//! (`tests/python/interop`); Keystone, Glance, Nova and Neutron are the stand-in cloud
//! (`tests/standin`). Every test has its own database, control exchange and conductor topic.
//! The Python processes are stopped (process group) when a test ends, also on panic, and
//! their logs are printed when it fails. See docs/testing.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;

use coe::{Cli, Expect};
use openkeel::services::{self, ServiceOptions};
use openkeel_core::config::{Config, ConfigSource};
use openkeel_tests::magnum::{consumers, MagnumSetup};
use openkeel_tests::standin::{self, StandInData};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What every interop test needs; `None` (skip) outside CI when something is missing.
struct Env {
    venv: PathBuf,
    openstack: PathBuf,
    amqp: String,
    mdb: openkeel_tests::MysqlDatabase,
    db: openkeel_db::Database,
}

async fn env() -> Option<Env> {
    // OpenKeel's side logs into the test output (shown when a test fails); RUST_LOG overrides.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,lapin=warn")),
        )
        .with_test_writer()
        .try_init();
    let venv = openkeel_tests::venv()?;
    let openstack = venv.join("bin").join("openstack");
    for program in ["magnum-api", "magnum-conductor", "openstack"] {
        let p = venv.join("bin").join(program);
        if !p.exists() {
            assert!(
                !openkeel_tests::in_ci(),
                "CI=true: {} is missing from the test venv",
                p.display()
            );
            eprintln!("SKIPPED (not in CI): {} is missing", p.display());
            return None;
        }
    }
    let amqp = openkeel_tests::rabbit_url()?;
    let mdb = openkeel_tests::fresh_mysql_database().await?;
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    // The schema Magnum's alembic head b3e1cf4a2d5e describes (openkeel-db-manage upgrade).
    openkeel_db::manage::upgrade(&db).await.unwrap();
    Some(Env {
        venv,
        openstack,
        amqp,
        mdb,
        db,
    })
}

/// Prints the requests the stand-in cloud received when the test fails.
struct CloudLog<'a>(&'a standin::StandIn);

impl Drop for CloudLog<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("----- stand-in cloud requests -----");
            for r in self.0.requests() {
                eprintln!(
                    "{} {}{}{} -> {}",
                    r.method,
                    r.path,
                    if r.query.is_empty() { "" } else { "?" },
                    r.query,
                    r.status
                );
            }
        }
    }
}

fn load(setup: &MagnumSetup) -> Config {
    Config::load_sequence(&[ConfigSource::File(setup.conf_path())]).unwrap()
}

fn options(config: Config, bind: bool) -> ServiceOptions {
    ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: bind.then(|| "127.0.0.1:0".parse().unwrap()),
    }
}

/// The driver methods the flow makes the conductor call, in the order of `coe_flow`.
const FLOW_DRIVER_CALLS: &[&str] = &[
    "create_cluster",
    "update_cluster",
    "resize_cluster",
    "upgrade_cluster",
    "create_nodegroup",
    "update_nodegroup",
    "delete_nodegroup",
    "delete_cluster",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openkeel_api_in_front_of_the_real_magnum_conductor() {
    let Some(env) = env().await else { return };
    let cloud = standin::start(StandInData::default()).await;
    let _cloud_log = CloudLog(&cloud);
    let dir = tempfile::tempdir().unwrap();
    let setup = MagnumSetup::new(dir.path(), env.mdb.url(), &env.amqp, &cloud.keystone_url());
    setup.write();
    let conductor = setup.start_conductor(&env.venv).await;

    // openkeel-api reads the same magnum.conf.
    let api = services::start_api(options(load(&setup), true))
        .await
        .expect("openkeel-api");
    let cli = Cli {
        openstack: env.openstack.clone(),
        endpoint: format!("http://{}/v1", api.addr),
        auth: coe::Auth::None,
    };
    coe::coe_flow_expecting(&cli, &env.db, Expect::MAGNUM).await;

    // The real conductor drove the Python record-only driver for every step of the flow.
    let calls: Vec<String> = setup
        .recorded_calls()
        .iter()
        .filter_map(|c| c["method"].as_str().map(str::to_string))
        .filter(|m| m != "update_cluster_status")
        .collect();
    assert_eq!(calls, FLOW_DRIVER_CALLS, "{calls:?}");
    // Its heartbeat row is what openkeel-api shows.
    let services = cli.json(&["service", "list"]).await;
    assert!(
        services
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["binary"] == "magnum-conductor"
                && s["host"] == setup.host.as_str()
                && s["state"] == "up"),
        "{services}"
    );
    // Magnum 23.0.0's conductor needs nothing from Keystone for this flow (no Heat, no
    // trusts): the stand-in saw no request. If that changes, this names the calls.
    let keystone: Vec<String> = cloud
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(keystone.is_empty(), "{keystone:?}");

    api.stop().await.unwrap();
    drop(conductor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_magnum_api_in_front_of_openkeel_conductor() {
    let Some(env) = env().await else { return };
    let cloud = standin::start(StandInData::default()).await;
    let _cloud_log = CloudLog(&cloud);
    // The CLI sends a token the stand-in issued; magnum-api uses it for Glance / Nova / Neutron.
    let token = cloud.issue_token("okt-admin", "okt-project");
    let dir = tempfile::tempdir().unwrap();
    let setup = MagnumSetup::new(dir.path(), env.mdb.url(), &env.amqp, &cloud.keystone_url());
    setup.write();

    let conductor = services::start_conductor(options(load(&setup), false))
        .await
        .expect("openkeel-conductor");
    wait_consumed(&setup).await;
    let api = setup.start_api(&env.venv).await;
    let cli = Cli {
        openstack: env.openstack.clone(),
        endpoint: setup.api_url(),
        auth: coe::Auth::Token(token),
    };
    coe::coe_flow_expecting(&cli, &conductor.db, Expect::OPENKEEL).await;

    // openkeel-conductor's heartbeat, through the real API's MagnumService.list indirection.
    let services = cli.json(&["service", "list"]).await;
    assert!(
        services
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["binary"] == "magnum-conductor" && s["state"] == "up"),
        "{services}"
    );
    // magnum-api looked the template's image, flavors and network up in the stand-in.
    let looked_up: Vec<String> = cloud.requests().iter().map(|r| r.service.clone()).collect();
    for service in ["identity", "image", "compute", "network"] {
        assert!(
            looked_up.iter().any(|s| s == service),
            "magnum-api never called {service}: {looked_up:?}"
        );
    }
    drop(api);
    conductor.stop().await;
}

/// Field-by-field description of one published frame, for comparison between implementations:
/// the AMQP properties, the envelope's keys, the message's keys in order, the context keys, and
/// the args with every object primitive reduced to its name, version, namespace and field
/// names (values such as uuids and timestamps differ between two runs by nature).
fn shape(m: &openkeel_tests::tap::Tapped) -> Value {
    fn reduce(v: &Value) -> Value {
        match v {
            Value::Object(o) if o.contains_key("magnum_object.name") => {
                let mut out = serde_json::Map::new();
                for (k, v) in o {
                    let reduced = match k.as_str() {
                        "magnum_object.data" => Value::Array(
                            v.as_object()
                                .map(|d| d.keys().map(|k| Value::String(k.clone())).collect())
                                .unwrap_or_default(),
                        ),
                        "magnum_object.changes" => {
                            let mut c: Vec<Value> = v.as_array().cloned().unwrap_or_default();
                            c.sort_by_key(|x| x.to_string());
                            Value::Array(c)
                        }
                        _ => v.clone(),
                    };
                    out.insert(k.clone(), reduced);
                }
                Value::Object(out)
            }
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), reduce(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(reduce).collect()),
            Value::String(_) => Value::String("<string>".into()),
            other => other.clone(),
        }
    }
    let msg = m.message();
    let keys: Vec<String> = msg
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    serde_json::json!({
        "routing_key_is_topic": !m.routing_key.contains('.'),
        "content_type": m.content_type,
        "content_encoding": m.content_encoding,
        "delivery_mode": m.delivery_mode,
        "priority": m.priority,
        "expiration": m.expiration,
        "headers": m.headers.as_ref().map(|h| h.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>()),
        "envelope_keys": m.envelope().as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()),
        "oslo.version": m.envelope()["oslo.version"],
        "message_keys": keys,
        "method": msg["method"],
        "version": msg["version"],
        "namespace": msg.get("namespace"),
        "args": reduce(&msg["args"]),
        // the request context: which values are strings, null, booleans, lists
        "context": Value::Object(
            msg.as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(k, _)| k.starts_with("_context_"))
                        .map(|(k, v)| (k.clone(), reduce(v)))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        "_timeout": msg.get("_timeout"),
        "_msg_id_len": msg.get("_msg_id").and_then(Value::as_str).map(str::len),
        "_reply_q_prefix": msg.get("_reply_q").and_then(Value::as_str).map(|q| q.split('_').next().unwrap_or_default().to_string()),
        "_unique_id_len": msg.get("_unique_id").and_then(Value::as_str).map(str::len),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openkeel_api_publishes_the_frames_magnum_api_publishes() {
    let Some(env) = env().await else { return };
    let cloud = standin::start(StandInData::default()).await;
    let _cloud_log = CloudLog(&cloud);
    let token = cloud.issue_token("okt-admin", "okt-project");
    let dir = tempfile::tempdir().unwrap();
    let setup = MagnumSetup::new(dir.path(), env.mdb.url(), &env.amqp, &cloud.keystone_url());
    setup.write();
    // Both APIs in front of the real conductor; the tap sees every request to its topic.
    let tap =
        openkeel_tests::tap::Tap::start(&setup.transport_url, &setup.exchange, &[&setup.topic])
            .await;
    let conductor = setup.start_conductor(&env.venv).await;
    let python_api = setup.start_api(&env.venv).await;
    let rust_api = services::start_api(options(load(&setup), true))
        .await
        .expect("openkeel-api");
    let python = Cli {
        openstack: env.openstack.clone(),
        endpoint: setup.api_url(),
        auth: coe::Auth::Token(token),
    };
    let rust = Cli {
        openstack: env.openstack.clone(),
        endpoint: format!("http://{}/v1", rust_api.addr),
        auth: coe::Auth::None,
    };

    // The same operations through each API; the frames each publishes are taken apart.
    let mut frames: Vec<(String, Value)> = Vec::new();
    for (side, cli) in [("magnum-api", &python), ("openkeel-api", &rust)] {
        let before = tap.messages().len();
        let template = format!("t-{side}");
        let cluster = format!("c-{side}");
        cli.create_template(&template, &[]).await;
        cli.ok(&[
            "cluster",
            "create",
            &cluster,
            "--cluster-template",
            &template,
            "--node-count",
            "1",
        ])
        .await;
        cli.wait_status(&cluster, "CREATE_COMPLETE").await;
        // a call with a reply: the cluster's CA
        cli.ok(&["ca", "show", &cluster]).await;
        let new: Vec<_> = tap.messages().into_iter().skip(before).collect();
        for method in ["cluster_create", "get_ca_certificate"] {
            let m = new
                .iter()
                .find(|m| m.method().as_deref() == Some(method))
                .unwrap_or_else(|| {
                    panic!(
                        "{side} published no {method}; it published {:?}",
                        new.iter().map(|m| m.method()).collect::<Vec<_>>()
                    )
                });
            frames.push((format!("{side} {method}"), shape(m)));
        }
    }
    let (python_frames, rust_frames) = frames.split_at(2);
    for ((pn, p), (rn, r)) in python_frames.iter().zip(rust_frames) {
        assert_eq!(
            r,
            p,
            "{rn} differs from {pn}:\nopenkeel: {}\nmagnum:   {}",
            serde_json::to_string_pretty(r).unwrap(),
            serde_json::to_string_pretty(p).unwrap()
        );
    }

    // The replies: magnum-api's own get_ca_certificate call, replayed byte for byte (fresh
    // ids, our reply queue) to the real conductor and to openkeel-conductor on the same
    // database; both must answer with the same frame.
    let call = tap
        .messages()
        .into_iter()
        .find(|m| m.method().as_deref() == Some("get_ca_certificate"))
        .unwrap();
    let mut okc = setup.clone();
    okc.dir = dir.path().join("openkeel-conductor");
    okc.topic = openkeel_tests::magnum::unique("okt-conductor");
    std::fs::create_dir_all(&okc.dir).unwrap();
    okc.write();
    let rust_conductor = services::start_conductor(options(load(&okc), false))
        .await
        .expect("openkeel-conductor");
    wait_consumed(&okc).await;
    let mut replies = Vec::new();
    for topic in [&setup.topic, &okc.topic] {
        let r = openkeel_tests::tap::replay_call(
            &setup.transport_url,
            &setup.exchange,
            topic,
            &call,
            Duration::from_secs(30),
        )
        .await;
        replies.push(r);
    }
    let magnum: Vec<Value> = replies[0].iter().map(reply_shape).collect();
    let openkeel: Vec<Value> = replies[1].iter().map(reply_shape).collect();
    assert!(
        magnum[0]["message"]["result"]["magnum_object.data"]["pem"]
            .as_str()
            .is_some_and(|p| p.starts_with("-----BEGIN CERTIFICATE-----")),
        "{magnum:?}"
    );
    assert_eq!(
        openkeel,
        magnum,
        "openkeel-conductor's reply differs from magnum-conductor's:\nopenkeel: {}\nmagnum:   {}",
        serde_json::to_string_pretty(&openkeel).unwrap(),
        serde_json::to_string_pretty(&magnum).unwrap()
    );

    rust_conductor.stop().await;
    tap.close().await;
    rust_api.stop().await.unwrap();
    drop(python_api);
    drop(conductor);
}

/// A reply frame for comparison: its properties, envelope and whole message, with the random
/// ids reduced to their length, `magnum_object.changes` sorted and a failure's Python
/// traceback (`tb`, file paths of the process that raised) left out.
fn reply_shape(r: &openkeel_tests::tap::RawReply) -> Value {
    let mut m = r.message();
    // Python serializes obj_what_changed(), a set: its order is arbitrary
    sort_changes(&mut m);
    if let Some(o) = m.as_object_mut() {
        // the ids are the caller's (checked in replay_call) or random
        for k in ["_msg_id", "_unique_id"] {
            if let Some(v) = o.get_mut(k) {
                *v = Value::String(format!("<{} chars>", v.as_str().map_or(0, str::len)));
            }
        }
        if let Some(f) = o.get_mut("failure") {
            if let Some(mut failure) = f
                .as_str()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
            {
                if let Some(fo) = failure.as_object_mut() {
                    fo.remove("tb");
                }
                *f = failure;
            }
        }
    }
    serde_json::json!({
        "exchange": r.exchange,
        "routing_key_is_reply_q": r.routing_key.starts_with("reply_"),
        "content_type": r.content_type,
        "content_encoding": r.content_encoding,
        "delivery_mode": r.delivery_mode,
        "priority": r.priority,
        "expiration": r.expiration,
        "envelope_keys": r.envelope().as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()),
        "oslo.version": r.envelope()["oslo.version"],
        "message": m,
    })
}

/// Sort every `magnum_object.changes` list (a Python set on the wire).
fn sort_changes(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "magnum_object.changes" {
                    if let Value::Array(a) = x {
                        a.sort_by_key(|c| c.to_string());
                    }
                } else {
                    sort_changes(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(sort_changes),
        _ => {}
    }
}

/// Wait (bounded) until a conductor consumes the setup's topic queue.
async fn wait_consumed(setup: &MagnumSetup) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while consumers(&setup.transport_url, &setup.topic).await == 0 {
        assert!(
            Instant::now() < deadline,
            "no conductor consumed {} within 30 s",
            setup.topic
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// Every object read magnum-api makes in this flow is answered exactly as magnum-conductor
// answers it, failures included (class, module, message, args and the exception's kwargs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openkeel_conductor_answers_magnum_apis_object_reads_as_magnum_conductor() {
    let Some(env) = env().await else { return };
    let cloud = standin::start(StandInData::default()).await;
    let _cloud_log = CloudLog(&cloud);
    let token = cloud.issue_token("okt-admin", "okt-project");
    let dir = tempfile::tempdir().unwrap();
    let setup = MagnumSetup::new(dir.path(), env.mdb.url(), &env.amqp, &cloud.keystone_url());
    setup.write();
    let tap =
        openkeel_tests::tap::Tap::start(&setup.transport_url, &setup.exchange, &[&setup.topic])
            .await;
    // The real Magnum pair makes the state and the calls.
    let conductor = setup.start_conductor(&env.venv).await;
    let api = setup.start_api(&env.venv).await;
    let cli = Cli {
        openstack: env.openstack.clone(),
        endpoint: setup.api_url(),
        auth: coe::Auth::Token(token),
    };
    cli.create_template("k8s", &["--labels", "kube_tag=v1.30.4"])
        .await;
    cli.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s",
        "--node-count",
        "1",
    ])
    .await;
    cli.wait_status("c1", "CREATE_COMPLETE").await;
    for args in [
        &["cluster", "list"][..],
        &["cluster", "template", "list"][..],
        &["cluster", "template", "show", "k8s"][..],
        &["nodegroup", "list", "c1"][..],
        &["nodegroup", "show", "c1", "default-worker"][..],
        &["service", "list"][..],
    ] {
        cli.json(args).await;
    }
    cli.ok(&["stats", "list", "okt-project"]).await;

    // openkeel-conductor on its own topic, same database and exchange.
    let mut okc = setup.clone();
    okc.dir = dir.path().join("openkeel-conductor");
    okc.topic = openkeel_tests::magnum::unique("okt-conductor");
    std::fs::create_dir_all(&okc.dir).unwrap();
    okc.write();
    let rust_conductor = services::start_conductor(options(load(&okc), false))
        .await
        .expect("openkeel-conductor");
    wait_consumed(&okc).await;

    // Every distinct object read magnum-api made, replayed to both conductors.
    let mut seen = std::collections::BTreeSet::new();
    let mut diffs = Vec::new();
    for call in tap.messages() {
        let m = call.message();
        if m["method"] != "object_class_action_versions" {
            continue;
        }
        let key = (
            m["args"]["objname"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            m["args"]["objmethod"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        if !seen.insert(key.clone()) {
            continue;
        }
        let mut answers = Vec::new();
        for topic in [&setup.topic, &okc.topic] {
            let r = openkeel_tests::tap::replay_call(
                &setup.transport_url,
                &setup.exchange,
                topic,
                &call,
                Duration::from_secs(30),
            )
            .await;
            answers.push(r.iter().map(reply_shape).collect::<Vec<_>>());
        }
        if answers[0] != answers[1] {
            diffs.push(format!(
                "{}.{}:\nopenkeel: {}\nmagnum:   {}",
                key.0,
                key.1,
                serde_json::to_string(&answers[1]).unwrap(),
                serde_json::to_string(&answers[0]).unwrap()
            ));
        }
    }
    // A failure reply: magnum-api's Cluster.get_by_name read for a cluster that does not
    // exist; both must answer ClusterNotFound with the same failure (class, module, message,
    // args, kwargs).
    let read = tap
        .messages()
        .into_iter()
        .find(|m| {
            let msg = m.message();
            msg["method"] == "object_class_action_versions"
                && msg["args"]["objname"] == "Cluster"
                && msg["args"]["objmethod"] == "get_by_name"
        })
        .expect("magnum-api read a cluster by name");
    let mut missing = read.message();
    missing["args"]["args"] = serde_json::json!(["no-such-cluster"]);
    let mut failures = Vec::new();
    for topic in [&setup.topic, &okc.topic] {
        let r = openkeel_tests::tap::send_call(
            &setup.transport_url,
            &setup.exchange,
            topic,
            missing.clone(),
            read.expiration.as_deref(),
            Duration::from_secs(30),
        )
        .await;
        failures.push(r.iter().map(reply_shape).collect::<Vec<_>>());
    }
    assert_eq!(
        failures[0][0]["message"]["failure"]["class"], "ClusterNotFound",
        "{failures:?}"
    );
    if failures[1] != failures[0] {
        diffs.push(format!(
            "Cluster.get_by_name of a missing cluster:\nopenkeel: {}\nmagnum:   {}",
            serde_json::to_string(&failures[1]).unwrap(),
            serde_json::to_string(&failures[0]).unwrap()
        ));
    }
    eprintln!("object reads replayed: {seen:?}");
    assert!(seen.len() >= 5, "too few object reads seen: {seen:?}");
    assert!(
        diffs.is_empty(),
        "openkeel-conductor's replies differ from magnum-conductor's for {} of {} object reads:\n{}",
        diffs.len(),
        seen.len(),
        diffs.join("\n")
    );

    rust_conductor.stop().await;
    tap.close().await;
    drop(api);
    drop(conductor);
}
