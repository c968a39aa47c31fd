//! Concurrent cluster creates in one project, with and without a quota, through the real
//! magnum-api 23.0.0 + magnum-conductor and through openkeel-api + openkeel-conductor
//! (release binaries), on the same machine, test MariaDB and RabbitMQ (`bench/quota_creates.sh`
//! runs it; `docs/performance.md`, "Concurrent creates under a quota"). A benchmark, not a
//! test.
//!
//! ```text
//! quota_creates_bench <openkeel bin dir> <creates> <limit> <rounds>
//! ```
//!
//! For each round, implementation (the order alternating) and case (`[quotas]
//! max_clusters_per_project` = 1000, then = `<limit>`): a fresh database (OpenKeel's
//! `upgrade`, the schema of Magnum's alembic head), a stand-in cloud (Keystone tokens,
//! Glance, Nova, Neutron: `tests/support/standin.rs`), one `magnum.conf` both sides read
//! (`tests/support/magnum.rs`: Magnum's conductor runs the record-only driver of
//! `tests/python/interop`, OpenKeel's the simulator), both services started afresh; one
//! cluster template; then `<creates>` `POST /v1/clusters` sent at once. Printed per run (one
//! JSON line): the answers by status, the answer latencies, the batch's wall time, how long
//! until every accepted create had its row, the clusters in the database at the end (exact
//! means the limit when there is one), the CPU of the API's and of the conductor's process
//! trees from the first request until the rows are in, and when the conductor was idle again
//! (every create's certificates made and its driver called) with its CPU until then.

use openkeel_tests::magnum::{consumers, MagnumSetup, PyService};
use openkeel_tests::standin::{self, StandInData};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn usage() -> ! {
    eprintln!("usage: quota_creates_bench <openkeel bin dir> <creates> <limit> <rounds>");
    std::process::exit(2)
}

/// CPU seconds (user + system) of `pid` and every process below it.
fn tree_cpu(pid: u32) -> f64 {
    let tick = 100.0; // USER_HZ on Linux
    let mut stats = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            // the fields after the command name (which may hold spaces) in parentheses
            let Some(rest) = s.rfind(')').map(|i| &s[i + 2..]) else {
                continue;
            };
            let f: Vec<&str> = rest.split(' ').collect();
            let ppid = f.get(1).and_then(|x| x.parse::<u32>().ok()).unwrap_or(0);
            let cpu = f.get(11).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0)
                + f.get(12).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
            stats.push((p, ppid, cpu));
        }
    }
    let mut tree = vec![pid];
    let mut total = 0.0;
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        for (p, pp, cpu) in &stats {
            if *p == parent {
                total += cpu;
            }
            if *pp == parent && !tree.contains(p) {
                tree.push(*p);
            }
        }
        i += 1;
    }
    total / tick
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

/// One of the two implementations, running.
enum Services {
    Magnum {
        api: PyService,
        conductor: PyService,
    },
    OpenKeel {
        api: Child,
        conductor: Child,
    },
}

impl Services {
    fn pids(&self) -> (u32, u32) {
        match self {
            Services::Magnum { api, conductor } => (api.pid(), conductor.pid()),
            Services::OpenKeel { api, conductor } => (api.id(), conductor.id()),
        }
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        if let Services::OpenKeel { api, conductor } = self {
            for c in [api, conductor] {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

fn spawn(bin: &Path, name: &str, conf: &Path, dir: &Path) -> Result<Child, Error> {
    let log = std::fs::File::create(dir.join(format!("{name}.log")))?;
    Ok(Command::new(bin.join(name))
        .args(["--config-file", &conf.display().to_string()])
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?)
}

async fn start(
    which: &str,
    setup: &MagnumSetup,
    venv: &Path,
    bin: &Path,
) -> Result<Services, Error> {
    if which == "magnum" {
        let conductor = setup.start_conductor(venv).await;
        let api = setup.start_api(venv).await;
        return Ok(Services::Magnum { api, conductor });
    }
    let conductor = spawn(bin, "openkeel-conductor", &setup.conf_path(), &setup.dir)?;
    let api = spawn(bin, "openkeel-api", &setup.conf_path(), &setup.dir)?;
    let s = Services::OpenKeel { api, conductor };
    let addr = SocketAddr::from(([127, 0, 0, 1], setup.api_port));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let up = openkeel_tests::http(addr, "GET", "/", &[], None)
            .await
            .is_ok_and(|r| r.status == 200);
        if up && consumers(&setup.transport_url, &setup.topic).await > 0 {
            return Ok(s);
        }
        if Instant::now() > deadline {
            return Err(format!("OpenKeel did not start; see {}", setup.dir.display()).into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn request(
    addr: SocketAddr,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<(u16, Value), Error> {
    let b = body.map(|b| b.to_string());
    let r = openkeel_tests::http(
        addr,
        method,
        path,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("X-Auth-Token", token),
            ("OpenStack-API-Version", "container-infra latest"),
        ],
        b.as_deref().map(str::as_bytes),
    )
    .await?;
    let v = serde_json::from_str(&r.text()).unwrap_or(Value::Null);
    Ok((r.status, v))
}

async fn cluster_rows(db: &openkeel_db::Database) -> Result<i64, Error> {
    let openkeel_db::Pool::MySql(pool) = db.pool() else {
        return Err("not MariaDB".into());
    };
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM cluster")
        .fetch_one(pool)
        .await?)
}

#[allow(clippy::too_many_lines)]
async fn run(
    which: &str,
    limit: Option<i64>,
    creates: usize,
    round: usize,
    venv: &Path,
    bin: &Path,
    amqp: &str,
) -> Result<Value, Error> {
    let mdb = openkeel_tests::fresh_mysql_database()
        .await
        .ok_or("no test MariaDB (tests/services/start.sh)")?;
    let db = openkeel_db::Database::connect(mdb.url()).await?;
    openkeel_db::manage::upgrade(&db).await?;
    let cloud = standin::start(StandInData::default()).await;
    let dir = tempfile::tempdir()?;
    let setup = MagnumSetup::new(dir.path(), mdb.url(), amqp, &cloud.keystone_url());
    let conf = setup.write();
    let mut text = std::fs::read_to_string(&conf)?;
    text.push_str(&format!(
        "\n[quotas]\nmax_clusters_per_project = {}\n",
        limit.unwrap_or(1000)
    ));
    std::fs::write(&conf, text)?;
    let token = cloud.issue_token("bench-user", "bench-project");
    let services = start(which, &setup, venv, bin).await?;
    let addr = SocketAddr::from(([127, 0, 0, 1], setup.api_port));
    let (s, v) = request(
        addr,
        &token,
        "POST",
        "/v1/clustertemplates",
        Some(json!({
            "name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
            "external_network_id": "public", "flavor_id": "m1.small",
            "master_flavor_id": "m1.small",
        })),
    )
    .await?;
    if s != 201 {
        return Err(format!("{which}: template create answered {s}: {v}").into());
    }
    let (api_pid, conductor_pid) = services.pids();
    let (api0, cond0) = (tree_cpu(api_pid), tree_cpu(conductor_pid));
    let t0 = Instant::now();
    let tasks: Vec<_> = (0..creates)
        .map(|i| {
            let token = token.clone();
            tokio::spawn(async move {
                let t = Instant::now();
                let r = request(
                    addr,
                    &token,
                    "POST",
                    "/v1/clusters",
                    Some(
                        json!({"name": format!("c{i}"), "cluster_template_id": "k8s",
                                "node_count": 1, "master_count": 1}),
                    ),
                )
                .await;
                (r, t.elapsed().as_secs_f64() * 1000.0)
            })
        })
        .collect();
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut latencies = Vec::new();
    let mut accepted = 0i64;
    let mut sample_refusal = Value::Null;
    for t in tasks {
        let (r, ms) = t.await?;
        let s = match r {
            Ok((s, v)) => {
                if s == 202 {
                    accepted += 1;
                } else if sample_refusal.is_null() {
                    sample_refusal = v;
                }
                s.to_string()
            }
            Err(e) => format!("error: {e}"),
        };
        *statuses.entry(s).or_default() += 1;
        latencies.push(ms);
    }
    let batch_ms = t0.elapsed().as_secs_f64() * 1000.0;
    // every accepted create has its row (Magnum's conductor inserts after the 202), bounded
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut rows = cluster_rows(&db).await?;
    while rows < accepted && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        rows = cluster_rows(&db).await?;
    }
    let rows_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let (api1, cond1) = (tree_cpu(api_pid), tree_cpu(conductor_pid));
    // the conductor idle again (under 20 ms of CPU in a second): every create's certificates
    // and driver call done, bounded
    let mut last = cond1;
    let mut idle_ms = rows_ms;
    for _ in 0..240 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = tree_cpu(conductor_pid);
        if now - last < 0.01 {
            break;
        }
        idle_ms = t0.elapsed().as_secs_f64() * 1000.0;
        last = now;
    }
    let cond_idle = tree_cpu(conductor_pid);
    let rows_later = cluster_rows(&db).await?;
    drop(services);
    latencies.sort_by(|a, b| a.total_cmp(b));
    Ok(json!({
        "impl": which,
        "round": round,
        "limit": limit,
        "creates": creates,
        "answers": statuses,
        "refusal": sample_refusal,
        "latency_ms": {
            "p50": percentile(&latencies, 0.5),
            "p90": percentile(&latencies, 0.9),
            "max": percentile(&latencies, 1.0),
        },
        "batch_ms": batch_ms,
        "rows_in_ms": rows_ms,
        "rows": rows_later,
        "exact": limit.map(|l| rows_later == l),
        "api_cpu_ms": (api1 - api0) * 1000.0,
        "conductor_cpu_ms": (cond1 - cond0) * 1000.0,
        "conductor_idle_ms": idle_ms,
        "conductor_cpu_until_idle_ms": (cond_idle - cond0) * 1000.0,
        "dir": dir.keep().display().to_string(),
    }))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let a: Vec<String> = std::env::args().collect();
    let (Some(bin), Some(creates), Some(limit), Some(rounds)) = (
        a.get(1).map(PathBuf::from),
        a.get(2).and_then(|s| s.parse::<usize>().ok()),
        a.get(3).and_then(|s| s.parse::<i64>().ok()),
        a.get(4).and_then(|s| s.parse::<usize>().ok()),
    ) else {
        usage()
    };
    let venv = openkeel_tests::venv().ok_or("no test venv (tests/services/start.sh)")?;
    let amqp = openkeel_tests::rabbit_url().ok_or("no test RabbitMQ (tests/services/start.sh)")?;
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            ["magnum", "openkeel"]
        } else {
            ["openkeel", "magnum"]
        };
        for which in order {
            for l in [None, Some(limit)] {
                let line = run(which, l, creates, round, &venv, &bin, &amqp).await?;
                println!("{line}");
            }
        }
    }
    Ok(())
}
