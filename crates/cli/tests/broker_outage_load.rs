//! Drill (issue 16): cluster creates under load while RabbitMQ is away. `openkeel-api` and
//! `openkeel-conductor` run apart on MariaDB and the test RabbitMQ (simulator driver, one
//! project with a raised quota); the broker's application is stopped (`rabbitmqctl stop_app`,
//! which closes every connection and forgets the non-durable queues, as a restart does) and
//! from that moment 100 creates are sent at 10 a second, while the broker stays away for 8 s
//! and is started again (the last 2 s of the load find it back).
//!
//! What must hold: every create is answered (no hung request); no 500 and no 409 (a create is
//! never refused for waiting behind another create of its project); a 503 only with Magnum's
//! body; and every create answered 202 reached the conductor: its row is in the database and
//! has not failed (no "202 and then nothing"). The figures (answers by status, latency, time until the last
//! cluster completed) are printed and recorded in `docs/reliability.md`.
//!
//! It stops the shared test broker: its own test binary, so that no other test uses the broker
//! meanwhile (cargo runs test binaries one at a time). Skips outside CI when a service is
//! missing; fails under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/split.rs"]
mod split;

use std::time::{Duration, Instant};

const CREATES: usize = 100;
const SPACING: Duration = Duration::from_millis(100);
const OUTAGE: Duration = Duration::from_secs(8);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_under_load_survive_a_broker_outage() {
    let Some(_) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    if let Err(e) = openkeel_tests::rabbitctl(&["-q", "status"]) {
        assert!(!openkeel_tests::in_ci(), "rabbitmqctl: {e}");
        eprintln!("SKIPPED (not in CI): {e}");
        return;
    }
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exchange = format!("okt-outage-{}", std::process::id());
    let config = split::service_config_with(
        dir.path(),
        mdb.url(),
        &exchange,
        "[quotas]\nmax_clusters_per_project = 1000\n",
    );
    let (conductor, api) = split::start_both(config).await;
    split::create_template(api.addr, "t").await;
    let json = [("Content-Type", "application/json")];

    // the outage, on a thread of its own: the load starts once the broker is down
    let t0 = Instant::now();
    let (down_tx, down_rx) = tokio::sync::oneshot::channel();
    let outage = std::thread::spawn(move || {
        let back = openkeel_tests::BrokerBack;
        openkeel_tests::rabbitctl(&["stop_app"]).expect("stop_app");
        let stopped = t0.elapsed();
        let _ = down_tx.send(());
        std::thread::sleep(OUTAGE);
        drop(back);
        (stopped, t0.elapsed())
    });
    down_rx.await.expect("the broker stopped");
    let load_start = t0.elapsed();

    // the load: one create every 100 ms, each answered within the client's bound
    let mut tasks = Vec::new();
    for i in 0..CREATES {
        let addr = api.addr;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(SPACING * u32::try_from(i).unwrap()).await;
            let body =
                format!(r#"{{"name": "c{i}", "cluster_template_id": "t", "node_count": 1}}"#);
            let sent = Instant::now();
            let r = tokio::time::timeout(
                Duration::from_secs(120),
                openkeel_tests::http(addr, "POST", "/v1/clusters", &json, Some(body.as_bytes())),
            )
            .await
            .expect("an answer within 120 s")
            .expect("HTTP");
            (r.status, r.text(), sent.elapsed())
        }));
    }
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    let (stopped, started) = outage.join().unwrap();

    let mut accepted = Vec::new();
    let mut unexpected = Vec::new();
    let mut by_status = std::collections::BTreeMap::<u16, usize>::new();
    for (status, text, _) in &answers {
        *by_status.entry(*status).or_default() += 1;
        match status {
            202 => {
                let v: serde_json::Value = serde_json::from_str(text).unwrap();
                accepted.push(v["uuid"].as_str().unwrap().to_string());
            }
            503 => {
                let v: serde_json::Value = serde_json::from_str(text).unwrap();
                assert_eq!(v["errors"][0]["status"], 503, "{text}");
                assert_eq!(v["errors"][0]["code"], "server", "{text}");
            }
            _ => unexpected.push(text.clone()),
        }
    }
    let mut latencies: Vec<Duration> = answers.iter().map(|a| a.2).collect();
    latencies.sort();
    eprintln!(
        "drill: broker stopped at {stopped:?}, started at {started:?}; load from {load_start:?}; \
         answers {by_status:?}; latency p50 {:?}, p90 {:?}, max {:?}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 9 / 10],
        latencies[latencies.len() - 1],
    );
    assert!(
        unexpected.is_empty(),
        "{} unexpected answers, e.g. {}",
        unexpected.len(),
        unexpected[0]
    );

    // every accepted create reached the conductor: its row exists (none lost) and has not
    // failed
    let deadline = Instant::now() + Duration::from_secs(90);
    let scope = openkeel_db::Scope::admin_all_tenants();
    loop {
        let (_, found) = openkeel_db::cluster::count_among(&db, &scope, &accepted)
            .await
            .unwrap();
        let found = usize::try_from(found).unwrap();
        if found == accepted.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {} accepted creates never reached the database",
            accepted.len() - found,
            accepted.len()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let all_in = t0.elapsed();
    for uuid in &accepted {
        let c = openkeel_db::cluster::get_by_uuid(&db, &scope, uuid)
            .await
            .unwrap();
        assert!(
            !c.status.is_some_and(|s| s.as_str().ends_with("FAILED")),
            "{uuid}: {:?} {:?}",
            c.status,
            c.status_reason
        );
    }
    eprintln!("drill: every accepted cluster in the database at {all_in:?}");
    assert_eq!(
        accepted.len() + by_status.get(&503).copied().unwrap_or(0),
        CREATES
    );

    api.stop().await.unwrap();
    conductor.stop().await;
}
