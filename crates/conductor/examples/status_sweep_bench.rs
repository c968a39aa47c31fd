//! The status sweep at scale (issue 14's benchmark; `bench/status-sweep.sh` runs it): N
//! clusters `CREATE_IN_PROGRESS` (two nodegroups each) on a fresh MariaDB database, the
//! simulator driver keeping them in progress, then T status ticks with one conductor and T
//! with three. Each conductor is a process of its own (this program again, as `member`), with
//! its own connection pool and `magnum_service` row; the three tick at once, on a schedule the
//! parent gives them, and share the clusters by ownership. Prints, per run, one JSON line: per
//! conductor and tick, the wall time, the CPU time of its process over the tick, the SQL
//! statements it sent (`Database::statement_count`) and the clusters it synced; and each
//! process's resident memory. A benchmark, not a test: nothing is asserted.
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

/// The time between two ticks of the members (a tick of 10,000 clusters takes a quarter of a
/// second; the conductor's interval is 10 s).
const TICK_EVERY: Duration = Duration::from_secs(2);

/// One conductor in this process, `host` of `members` live ones: `ticks` status ticks (after a
/// warm-up tick), the first at `start_ms` (milliseconds since the Unix epoch) and then every
/// [`TICK_EVERY`]. Prints one JSON object: its ticks and its resident memory.
async fn member(url: &str, host: &str, members: usize, ticks: usize, start_ms: u64) {
    let db = Database::connect(url).await.unwrap();
    report_state(&db, Some(host), CONDUCTOR_BINARY)
        .await
        .unwrap();
    // every member's heartbeat is there before the first tick reads the live set
    loop {
        let live = openkeel_db::magnum_service::list(&db, None, &openkeel_db::Page::all())
            .await
            .unwrap()
            .iter()
            .filter(|s| s.binary.as_deref() == Some(CONDUCTOR_BINARY))
            .count();
        if live >= members {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let drivers = DriverRegistry::builtin(DriverSettings::default(), true);
    let settings = ConductorSettings {
        host: Some(host.to_string()),
        ..ConductorSettings::default()
    };
    let c = Arc::new(Conductor::new(
        db,
        Arc::new(drivers),
        Arc::new(LogNotifier),
        settings,
    ));
    let start = std::time::UNIX_EPOCH + Duration::from_millis(start_ms);
    let mut rows = Vec::new();
    // The first tick is a warm-up (the simulator learns the clusters).
    for tick in 0..=ticks {
        let at = start + TICK_EVERY * tick as u32;
        if let Ok(wait) = at.duration_since(std::time::SystemTime::now()) {
            tokio::time::sleep(wait).await;
        }
        let before = c.db().statement_count();
        let cpu0 = cpu();
        let t = Instant::now();
        let r = c.sync_cluster_status().await;
        let wall = t.elapsed();
        let cpu_ms = (cpu() - cpu0).as_millis() as u64;
        if tick == 0 {
            continue;
        }
        rows.push(json!({
            "tick": tick,
            "conductor": host,
            "wall_ms": wall.as_millis() as u64,
            "cpu_ms": cpu_ms,
            "statements": c.db().statement_count() - before,
            "synced": r.checked,
            "others": r.others,
            "changed": r.changed,
            "errors": r.errors,
        }));
    }
    let (rss, hwm) = memory();
    println!(
        "{}",
        json!({"conductor": host, "ticks": rows, "rss_mib": rss, "peak_rss_mib": hwm})
    );
}

/// `conductors` member processes on the database `url`, `ticks` ticks at once; their outputs.
/// The hosts are `bench-c0`, `bench-c1`, ...: the one-conductor run's `bench-c0` is the first
/// of the three (its `magnum_service` row is still live), so the three see exactly three.
async fn run(url: &str, conductors: usize, ticks: usize) -> serde_json::Value {
    // far enough ahead for every member to connect and heartbeat
    let start_ms = (std::time::SystemTime::now() + Duration::from_secs(5))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..conductors)
        .map(|i| {
            tokio::process::Command::new(&exe)
                .arg("member")
                .arg(format!("bench-c{i}"))
                .arg(conductors.to_string())
                .arg(ticks.to_string())
                .arg(start_ms.to_string())
                .env("STATUS_SWEEP_DB", url)
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("a member process")
        })
        .collect();
    let mut members = Vec::new();
    for child in children {
        let out = child.wait_with_output().await.unwrap();
        assert!(out.status.success(), "a member failed: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        for t in v["ticks"].as_array().into_iter().flatten() {
            eprintln!(
                "{conductors} conductor(s), {} tick {}: {} ms wall, {} ms CPU, {} statements, {} synced",
                t["conductor"], t["tick"], t["wall_ms"], t["cpu_ms"], t["statements"], t["synced"]
            );
        }
        members.push(v);
    }
    json!({"conductors": conductors, "members": members})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("member") {
        let url = std::env::var("STATUS_SWEEP_DB").expect("STATUS_SWEEP_DB");
        let num = |i: usize| -> usize { argv[i].parse().expect("a number") };
        let start_ms: u64 = argv[5].parse().expect("a start time");
        member(&url, &argv[2], num(3), num(4), start_ms).await;
        return;
    }
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
