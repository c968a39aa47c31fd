//! The status sweep at scale (issue 14's benchmark; `bench/status-sweep.sh` runs it): N
//! clusters `CREATE_IN_PROGRESS` (two nodegroups each) on a fresh MariaDB database, the
//! simulator driver keeping them in progress, then T status ticks with one conductor and T
//! with three (three `Conductor`s in this process, each with its own connection pool and
//! `magnum_service` row, ticking at once as three processes would; the clusters are shared
//! by ownership). Prints, per run, one JSON line: per conductor and tick, the wall time,
//! the CPU time (the process's user + system over the tick, divided by the number of
//! conductors), the SQL statements sent (`Database::statement_count`) and the clusters it
//! synced; and the process's resident memory. A benchmark, not a test: nothing is asserted.
//!
//!   cargo run --release -p openkeel-conductor --example status_sweep_bench -- [N] [T]
//!
//! Needs OPENKEEL_TEST_MYSQL_URL (`eval "$(tests/services/env.sh)"`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use openkeel_conductor::heartbeat::{report_state, CONDUCTOR_BINARY};
use openkeel_conductor::{Conductor, ConductorSettings, LogNotifier};
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup};
use openkeel_db::Database;
use openkeel_drivers::{DriverRegistry, DriverSettings};
use serde_json::json;
use tokio::task::JoinSet;

/// User plus system CPU time of this process (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11..13].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    Duration::from_millis(ticks * 10)
}

/// `VmRSS` and `VmHWM` of this process, in MiB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (kib("VmRSS:") / 1024.0, kib("VmHWM:") / 1024.0)
}

async fn seed(db: &Database, n: usize) {
    let template = openkeel_db::cluster_template::create(
        db,
        &ClusterTemplate {
            name: Some("k8s".into()),
            image_id: Some("ubuntu-jammy".into()),
            coe: Some("kubernetes".into()),
            server_type: Some("vm".into()),
            cluster_distro: Some("ubuntu".into()),
            project_id: Some("p".into()),
            user_id: Some("u".into()),
            ..ClusterTemplate::default()
        },
    )
    .await
    .unwrap();
    let permits = Arc::new(tokio::sync::Semaphore::new(16));
    let mut set = JoinSet::new();
    for i in 0..n {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let db = db.clone();
        let template = template.uuid.clone();
        set.spawn(async move {
            let uuid = uuid::Uuid::new_v4().to_string();
            let labels = [("simulator_ticks".to_string(), "1000000".to_string())]
                .into_iter()
                .collect();
            openkeel_db::cluster::create(
                &db,
                &Cluster {
                    uuid: Some(uuid.clone()),
                    name: Some(format!("c{i}")),
                    project_id: Some("p".into()),
                    user_id: Some("u".into()),
                    cluster_template_id: template,
                    status: Some(ClusterStatus::CreateInProgress),
                    stack_id: Some(format!("kube-{i}")),
                    create_timeout: Some(600),
                    labels: Some(labels),
                    ..Cluster::default()
                },
            )
            .await
            .unwrap();
            for (role, count) in [("master", 1), ("worker", 2)] {
                openkeel_db::nodegroup::create(
                    &db,
                    &NodeGroup {
                        uuid: uuid::Uuid::new_v4().to_string(),
                        name: format!("default-{role}"),
                        cluster_id: uuid.clone(),
                        project_id: "p".into(),
                        role: Some(role.into()),
                        node_count: Some(count),
                        is_default: Some(true),
                        status: Some(ClusterStatus::CreateInProgress),
                        ..NodeGroup::default()
                    },
                )
                .await
                .unwrap();
            }
            drop(permit);
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
}

async fn run(url: &str, conductors: usize, ticks: usize) -> serde_json::Value {
    let mut cs = Vec::new();
    for i in 0..conductors {
        let db = Database::connect(url).await.unwrap();
        let host = format!("bench-c{i}");
        report_state(&db, Some(&host), CONDUCTOR_BINARY)
            .await
            .unwrap();
        let drivers = DriverRegistry::builtin(DriverSettings::default(), true);
        let settings = ConductorSettings {
            host: Some(host),
            ..ConductorSettings::default()
        };
        cs.push(Arc::new(Conductor::new(
            db,
            Arc::new(drivers),
            Arc::new(LogNotifier),
            settings,
        )));
    }
    let mut rows = Vec::new();
    // The first tick is a warm-up (the simulator learns the clusters).
    for tick in 0..=ticks {
        let before: Vec<u64> = cs.iter().map(|c| c.db().statement_count()).collect();
        let cpu0 = cpu();
        let started = Instant::now();
        let mut set = JoinSet::new();
        for (i, c) in cs.iter().enumerate() {
            let c = c.clone();
            set.spawn(async move {
                let t = Instant::now();
                let r = c.sync_cluster_status().await;
                (i, t.elapsed(), r)
            });
        }
        let mut per = Vec::new();
        while let Some(r) = set.join_next().await {
            per.push(r.unwrap());
        }
        let wall = started.elapsed();
        let cpu_per = (cpu() - cpu0) / conductors as u32;
        per.sort_by_key(|(i, _, _)| *i);
        if tick == 0 {
            continue;
        }
        for (i, elapsed, r) in per {
            let statements = cs[i].db().statement_count() - before[i];
            rows.push(json!({
                "tick": tick,
                "conductor": i,
                "wall_ms": elapsed.as_millis() as u64,
                "cpu_ms": cpu_per.as_millis() as u64,
                "statements": statements,
                "synced": r.checked,
                "others": r.others,
                "changed": r.changed,
                "errors": r.errors,
            }));
        }
        eprintln!(
            "{conductors} conductor(s), tick {tick}: {} ms wall, {} ms CPU per conductor",
            wall.as_millis(),
            cpu_per.as_millis()
        );
    }
    let (rss, hwm) = memory();
    json!({"conductors": conductors, "ticks": rows, "rss_mib": rss, "peak_rss_mib": hwm})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N T are numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(10_000);
    let ticks = args.get(1).copied().unwrap_or(3);
    let mdb = openkeel_tests::fresh_mysql_database()
        .await
        .expect("MariaDB (OPENKEEL_TEST_MYSQL_URL)");
    let db = Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let t = Instant::now();
    seed(&db, n).await;
    eprintln!("seeded {n} clusters in {:?}", t.elapsed());
    let (rss, _) = memory();
    eprintln!("resident after seeding: {rss:.0} MiB");
    for conductors in [1, 3] {
        let r = run(mdb.url(), conductors, ticks).await;
        println!("{}", json!({"clusters": n, "run": r}));
    }
}
