//! Several `openkeel-conductor` processes on one MariaDB and one RabbitMQ topic: each
//! cluster's periodic work runs on exactly one live conductor per tick, a conductor killed
//! with SIGKILL loses its clusters to the others within `service_down_time` and a tick, and
//! takes its share back when it comes back (docs/architecture.md, "Several conductors").
//!
//! A conductor killed with SIGKILL in the middle of a create, a resize, a delete, an update of
//! `node_count` and an upgrade leaves each cluster in a state the others finish or fail, with no
//! row half written.
//!
//! Casts about one cluster sent by openkeel-api run in the order it sent them, whichever
//! conductor is listening: gophercloud's TestNodeGroupsCRUD sequence (three nodegroup PATCHes
//! and the DELETE within milliseconds) replayed 50 times always ends with the nodegroup gone.
//!
//! The conductors are the real binary, started three times with their own `[DEFAULT] host`;
//! what each one asks the simulator driver is read from its debug log
//! (`update_cluster_status cluster=<uuid>` per call, `periodic round task=sync_cluster_status`
//! at the start of each tick).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/api.rs"]
mod api;
#[path = "common/capi.rs"]
mod capi;
#[path = "common/split.rs"]
mod split;

use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const CLUSTERS: usize = 30;
/// `[DEFAULT] service_down_time` of the test (seconds).
const DOWN_TIME: u64 = 4;
/// The status sync's interval (`[openkeel] status_sync_interval`, seconds).
const TICK: u64 = 1;

struct Conductor {
    host: String,
    conf: PathBuf,
    log: PathBuf,
    child: Option<tokio::process::Child>,
}

impl Conductor {
    fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = openkeel_tests::helper(env!("CARGO_BIN_EXE_openkeel-conductor"))
            .arg("--config-file")
            .arg(&self.conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("openkeel-conductor");
        self.child = Some(child);
    }

    async fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.start_kill().unwrap(); // SIGKILL
            c.wait().await.unwrap();
        }
    }

    fn log_len(&self) -> usize {
        std::fs::metadata(&self.log).map_or(0, |m| m.len() as usize)
    }

    /// The log from byte `from` on.
    fn log_since(&self, from: usize) -> String {
        let all = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(all.get(from..).unwrap_or_default()).into_owned()
    }
}

/// The clusters each complete status tick in `log` asked the driver about: the text between
/// two `periodic round` lines of the status sync is one tick.
fn ticks(log: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in log.lines() {
        if line.contains("periodic round") && line.contains("sync_cluster_status") {
            if let Some(done) = current.take() {
                out.push(done);
            }
            current = Some(Vec::new());
        } else if line.contains("update_cluster_status cluster=") {
            if let Some(t) = current.as_mut() {
                let uuid = line
                    .split("cluster=")
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                    .unwrap();
                t.push(uuid.to_string());
            }
        }
    }
    out
}

/// Over the logs written since `marks`: every cluster of `all` was asked about by exactly one
/// of `live`, once in each of that conductor's complete ticks. Returns each conductor's share.
fn check_one_owner_per_tick(
    conductors: &[Conductor],
    live: &[usize],
    marks: &[usize],
    all: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut shares = BTreeMap::new();
    for &i in live {
        let c = &conductors[i];
        let ts = ticks(&c.log_since(marks[i]));
        assert!(ts.len() >= 2, "{}: fewer than two complete ticks", c.host);
        let first: BTreeSet<String> = ts[0].iter().cloned().collect();
        for (n, t) in ts.iter().enumerate() {
            let set: BTreeSet<String> = t.iter().cloned().collect();
            assert_eq!(
                set.len(),
                t.len(),
                "{} tick {n}: a cluster synced twice",
                c.host
            );
            assert_eq!(set, first, "{} tick {n}: its share changed", c.host);
        }
        for u in &first {
            if let Some(other) = owner.insert(u.clone(), c.host.clone()) {
                panic!("{u} synced by both {other} and {}", c.host);
            }
        }
        shares.insert(c.host.clone(), first);
    }
    let synced: BTreeSet<String> = owner.keys().cloned().collect();
    assert_eq!(&synced, all, "every cluster in progress is synced");
    shares
}

/// A conductor's configuration (`host`, debug logs, short `service_down_time` and tick) with
/// `sections` (whole sections, such as `[capi_client]`) appended.
fn conf_with(dir: &Path, db_url: &str, exchange: &str, host: &str, sections: &str) -> PathBuf {
    let mut text = split::service_conf_text(
        db_url,
        exchange,
        host,
        &format!("service_down_time = {DOWN_TIME}\nperiodic_interval_max = 1\ndebug = true\n"),
        &format!("status_sync_interval = {TICK}\n"),
    );
    text.push_str(sections);
    let path = dir.join(format!("{host}.conf"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `n` clusters `CREATE_IN_PROGRESS` for as long as the test runs, of a template naming
/// `driver` (`None`: the simulator, by the template's type).
async fn clusters_in_progress(
    db: &openkeel_db::Database,
    n: usize,
    driver: Option<&str>,
) -> BTreeSet<String> {
    let template = openkeel_db::cluster_template::create(
        db,
        &ClusterTemplate {
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            name: Some("k8s".into()),
            image_id: Some("ubuntu-jammy".into()),
            coe: Some("kubernetes".into()),
            server_type: Some("vm".into()),
            cluster_distro: Some("ubuntu".into()),
            project_id: Some("p".into()),
            user_id: Some("u".into()),
            driver: driver.map(str::to_string),
            ..ClusterTemplate::default()
        },
    )
    .await
    .unwrap();
    let mut out = BTreeSet::new();
    for i in 0..n {
        let uuid = uuid::Uuid::new_v4().to_string();
        // In progress for as long as the test runs: the simulator completes it after
        // `simulator_ticks` status ticks; the Cluster API driver finds no `Cluster` named
        // `kube-<i>` (too short to be a stack id it makes) and leaves it in progress.
        let labels = [("simulator_ticks".to_string(), "1000000".to_string())]
            .into_iter()
            .collect();
        openkeel_db::cluster::create(
            db,
            &Cluster {
                uuid: Some(uuid.clone()),
                name: Some(format!("c{i}")),
                project_id: Some("p".into()),
                user_id: Some("u".into()),
                cluster_template_id: template.uuid.clone(),
                status: Some(ClusterStatus::CreateInProgress),
                stack_id: Some(format!("kube-{i}")),
                create_timeout: Some(600),
                labels: Some(labels),
                ..Cluster::default()
            },
        )
        .await
        .unwrap();
        out.insert(uuid);
    }
    out
}

/// Wait until the conductors of `live` each report `want` live conductors in a status tick
/// logged after `marks`.
async fn wait_members(conductors: &[Conductor], live: &[usize], marks: &[usize], want: usize) {
    let deadline = Instant::now() + Duration::from_secs(DOWN_TIME * 3 + 10);
    'outer: loop {
        assert!(
            Instant::now() < deadline,
            "the conductors never saw {want} live conductors"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        for &i in live {
            let log = conductors[i].log_since(marks[i]);
            let needle = format!("conductors={want}");
            if !log.lines().any(|l| {
                l.contains("periodic round")
                    && l.contains("sync_cluster_status")
                    && l.contains(&needle)
            }) {
                continue 'outer;
            }
        }
        return;
    }
}

/// Wait until the conductors of `live` have each logged `n` complete status ticks after
/// `marks` (at least four tick intervals: a tick takes longer than its interval on a busy
/// machine or with a slow management cluster).
async fn wait_ticks(conductors: &[Conductor], live: &[usize], marks: &[usize], n: usize) {
    tokio::time::sleep(Duration::from_secs(TICK * 4)).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while live
        .iter()
        .any(|&i| ticks(&conductors[i].log_since(marks[i])).len() < n)
    {
        assert!(
            Instant::now() < deadline,
            "fewer than {n} status ticks in a minute"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn marks(conductors: &[Conductor]) -> Vec<usize> {
    conductors.iter().map(Conductor::log_len).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cluster_is_synced_by_one_live_conductor_and_a_killed_ones_move_on() {
    ownership(None, "").await;
}

/// The same with the native Cluster API driver, against the rig's real kube-apiserver: each
/// status call asks the management cluster about its cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_cluster_api_driver_each_cluster_is_synced_by_one_live_conductor() {
    let (Some(kubeconfig), Some(helm)) = (
        openkeel_tests::kapi::kubeconfig(),
        openkeel_tests::kapi::helm(),
    ) else {
        return;
    };
    let sections = format!(
        "[capi_client]\nkubeconfig = {}\nhelm_binary = {}\n",
        kubeconfig.display(),
        helm.display()
    );
    ownership(Some("k8s_cluster_api_ubuntu"), &sections).await;
}

/// Periodic ownership with three conductors whose clusters use `driver` (`None`: the
/// simulator), configured with `sections`.
async fn ownership(driver: Option<&str>, sections: &str) {
    let Some(_) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let all = clusters_in_progress(&db, CLUSTERS, driver).await;

    let dir = tempfile::tempdir().unwrap();
    let exchange = format!("okt-multi-{}", uuid::Uuid::new_v4().simple());
    let mut conductors: Vec<Conductor> = ["okt-c1", "okt-c2", "okt-c3"]
        .iter()
        .map(|host| Conductor {
            host: host.to_string(),
            conf: conf_with(dir.path(), mdb.url(), &exchange, host, sections),
            log: dir.path().join(format!("{host}.log")),
            child: None,
        })
        .collect();
    for c in &mut conductors {
        c.start();
    }

    // Three live conductors: every cluster on exactly one of them, on every tick.
    let m = marks(&conductors);
    wait_members(&conductors, &[0, 1, 2], &m, 3).await;
    let m = marks(&conductors);
    wait_ticks(&conductors, &[0, 1, 2], &m, 3).await;
    let shares = check_one_owner_per_tick(&conductors, &[0, 1, 2], &m, &all);
    for (host, share) in &shares {
        assert!(!share.is_empty(), "{host} has no share: {shares:?}");
    }
    let killed_share = shares["okt-c2"].clone();

    // kill -9 the second: its clusters are synced by the others within
    // service_down_time + one tick (+ one heartbeat interval, the resolution of the rows).
    let m = marks(&conductors);
    conductors[1].kill9().await;
    let killed_at = Instant::now();
    let limit = Duration::from_secs(DOWN_TIME + TICK + 1) + Duration::from_millis(1500);
    loop {
        let seen: BTreeSet<String> = [0, 2]
            .iter()
            .flat_map(|&i| ticks(&conductors[i].log_since(m[i])).into_iter().flatten())
            .collect();
        if killed_share.is_subset(&seen) {
            break;
        }
        assert!(
            killed_at.elapsed() < limit,
            "okt-c2's clusters were not taken over within {limit:?}: {:?} missing",
            killed_share.difference(&seen).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took_over = killed_at.elapsed();
    eprintln!(
        "okt-c2's {} clusters taken over after {took_over:?}",
        killed_share.len()
    );
    let m = marks(&conductors);
    wait_members(&conductors, &[0, 2], &m, 2).await;
    let m = marks(&conductors);
    wait_ticks(&conductors, &[0, 2], &m, 3).await;
    let two = check_one_owner_per_tick(&conductors, &[0, 2], &m, &all);
    // Only the dead conductor's clusters moved.
    for host in ["okt-c1", "okt-c3"] {
        assert!(shares[host].is_subset(&two[host]), "{host} lost clusters");
    }

    // It comes back: the work is shared by three again, and it has its old share.
    let m = marks(&conductors);
    conductors[1].start();
    wait_members(&conductors, &[0, 1, 2], &m, 3).await;
    let m = marks(&conductors);
    wait_ticks(&conductors, &[0, 1, 2], &m, 3).await;
    let again = check_one_owner_per_tick(&conductors, &[0, 1, 2], &m, &all);
    assert_eq!(again, shares, "the same shares as before the kill");
    // Each status call went to the driver the clusters use.
    let want = format!("driver=\"{}\"", driver.unwrap_or("simulator"));
    for c in &conductors {
        let log = c.log_since(0);
        let calls: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("update_cluster_status cluster="))
            .collect();
        assert!(!calls.is_empty(), "{}: no status calls", c.host);
        assert!(
            calls.iter().all(|l| l.contains(&want)),
            "{}: {want} expected: {:?}",
            c.host,
            calls.iter().find(|l| !l.contains(&want))
        );
    }

    for c in &mut conductors {
        c.kill9().await;
    }
}

/// The Cluster API driver for a [`fleet`]: the rig's real kube-apiserver with the real Cluster
/// API manager, the real Keystone (the API authenticates the test's requests, and the
/// conductors make each cluster's application credential with the caller's token, as in
/// `capi_e2e.rs`), the scripted CAPO/kubeadm stand-in playing the providers, and a proxy in
/// front of the kube-apiserver for the conductors, which can slow down every request
/// ([`SlowProxy`]) so that a conductor can be killed in the middle of a driver call.
struct ClusterApi {
    ks: openkeel_tests::Keystone,
    kubeconfig: PathBuf,
    helm: PathBuf,
    client: kube::Client,
}

impl ClusterApi {
    /// The rig's parts, or `None` outside CI when one is missing (panics in CI).
    async fn here() -> Option<ClusterApi> {
        let ks = openkeel_tests::keystone()?;
        let kubeconfig = openkeel_tests::kapi::kubeconfig()?;
        let helm = openkeel_tests::kapi::helm()?;
        let client = openkeel_tests::kapi::client().await?;
        Some(ClusterApi {
            ks,
            kubeconfig,
            helm,
            client,
        })
    }
}

/// A TCP proxy to the kube-apiserver (TLS passes through: the server's certificate names
/// 127.0.0.1) that holds each chunk the client sends for `delay` milliseconds: every request
/// of the conductors' driver to the management cluster then takes at least that long.
struct SlowProxy {
    kubeconfig: PathBuf,
    delay: std::sync::Arc<std::sync::atomic::AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl SlowProxy {
    /// A proxy for the cluster of `kubeconfig`, with a copy of that kubeconfig naming it in
    /// `dir`.
    async fn start(dir: &Path, kubeconfig: &Path) -> SlowProxy {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let text = std::fs::read_to_string(kubeconfig).unwrap();
        let upstream = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: https://"))
            .expect("a server: https://host:port line in the kubeconfig")
            .trim_matches('"')
            .trim_end_matches('/')
            .to_string();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local = listener.local_addr().unwrap();
        let path = dir.join("kubeconfig-via-proxy");
        std::fs::write(
            &path,
            text.replace(&format!("https://{upstream}"), &format!("https://{local}")),
        )
        .unwrap();
        let delay = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let held = delay.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let upstream = upstream.clone();
                let held = held.clone();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async move {
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            let n = match cr.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            let ms = held.load(std::sync::atomic::Ordering::Relaxed);
                            if ms > 0 {
                                tokio::time::sleep(Duration::from_millis(ms)).await;
                            }
                            if sw.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                        let _ = sw.shutdown().await;
                    };
                    let down = async move {
                        let _ = tokio::io::copy(&mut sr, &mut cw).await;
                        let _ = cw.shutdown().await;
                    };
                    tokio::join!(up, down);
                });
            }
        });
        SlowProxy {
            kubeconfig: path,
            delay,
            task,
        }
    }

    fn set_delay(&self, ms: u64) {
        self.delay.store(ms, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for SlowProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Three conductors, an openkeel-api in this process (`ordered_casts` as given), and
/// `clusters` clusters at CREATE_COMPLETE, of the simulator or (`capi`) of the Cluster API
/// driver, whose conductors reach the management cluster through `proxy`. The requests of
/// the test go to the returned [`api::Target`].
async fn fleet(
    dir: &Path,
    db_url: &str,
    ordered: bool,
    clusters: usize,
    capi: Option<(&ClusterApi, &SlowProxy)>,
) -> (Vec<Conductor>, openkeel::services::RunningApi, api::Target) {
    let exchange = format!("okt-multi-{}", uuid::Uuid::new_v4().simple());
    let sections = capi.map_or_else(String::new, |(c, proxy)| {
        capi::conf_text(&c.ks, &proxy.kubeconfig, &c.helm)
    });
    let mut conductors: Vec<Conductor> = ["okt-c1", "okt-c2", "okt-c3"]
        .iter()
        .map(|host| Conductor {
            host: host.to_string(),
            conf: conf_with(dir, db_url, &exchange, host, &sections),
            log: dir.join(format!("{host}.log")),
            child: None,
        })
        .collect();
    for c in &mut conductors {
        c.start();
    }
    let mut text = split::service_conf_text(
        db_url,
        &exchange,
        "okt-api",
        "",
        &format!("ordered_casts = {ordered}\n"),
    );
    text.push_str(&sections);
    let path = dir.join("api.conf");
    std::fs::write(&path, text).unwrap();
    let config =
        openkeel_core::config::Config::load_sequence(&[openkeel_core::config::ConfigSource::File(
            path,
        )])
        .unwrap();
    let api = openkeel::services::start_api(openkeel::services::ServiceOptions {
        config,
        config_dirs: Vec::new(),
        bind: Some("127.0.0.1:0".parse().unwrap()),
    })
    .await
    .expect("api");
    let addr = api.addr;
    let target = match capi {
        None => {
            split::create_template(addr, "k8s").await;
            api::Target::from(addr)
        }
        Some((c, _)) => {
            let target = api::Target {
                addr,
                token: Some(c.ks.token("demo").await),
            };
            let (s, t) = api::call(
                &target,
                "POST",
                "/v1/clustertemplates",
                Some(serde_json::json!({
                    "name": "k8s", "image_id": "ubuntu-jammy", "external_network_id": "public",
                    "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small",
                    "network_driver": "calico", "dns_nameserver": "8.8.8.8",
                    "labels": {"kube_tag": "v1.30.4"}})),
            )
            .await;
            assert_eq!(s, 201, "{t}");
            target
        }
    };
    // Casts are published mandatory: retried until a conductor has declared its queues.
    for i in 0..clusters {
        let (s, c) = api::call(
            &target,
            "POST",
            "/v1/clusters",
            Some(
                serde_json::json!({"name": format!("c{i}"), "cluster_template_id": "k8s",
                                    "node_count": 1}),
            ),
        )
        .await;
        assert_eq!(s, 202, "{c}");
    }
    for i in 0..clusters {
        api::wait_status(&target, &format!("c{i}"), "CREATE_COMPLETE").await;
    }
    (conductors, api, target)
}

/// A migrated MariaDB database of its own and a [`fleet`] on it (`clusters` complete
/// clusters), with what must live as long as the test: with the Cluster API driver, the
/// stand-in playing the providers for the fleet's clusters and the conductors' proxy.
struct Rig {
    _mdb: openkeel_tests::MysqlDatabase,
    db: openkeel_db::Database,
    _dir: tempfile::TempDir,
    conductors: Vec<Conductor>,
    api: openkeel::services::RunningApi,
    target: api::Target,
    capi: Option<(SlowProxy, tokio::task::JoinHandle<()>)>,
}

async fn rig(ordered: bool, clusters: usize) -> Rig {
    rig_with(ordered, clusters, None).await
}

async fn rig_with(ordered: bool, clusters: usize, capi: Option<&ClusterApi>) -> Rig {
    let mdb = openkeel_tests::fresh_mysql_database()
        .await
        .expect("MariaDB");
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let extra = match capi {
        None => None,
        Some(c) => {
            let proxy = SlowProxy::start(dir.path(), &c.kubeconfig).await;
            let db = db.clone();
            let player = openkeel_tests::capi_standin::CapiStandIn::play_every(
                c.client.clone(),
                capi::NS,
                capi::API_HOST,
                move || {
                    let db = db.clone();
                    async move { capi::stack_ids(&db).await }
                },
            );
            Some((proxy, player))
        }
    };
    let (conductors, api, target) = fleet(
        dir.path(),
        mdb.url(),
        ordered,
        clusters,
        capi.zip(extra.as_ref().map(|(p, _)| p)),
    )
    .await;
    Rig {
        _mdb: mdb,
        db,
        _dir: dir,
        conductors,
        api,
        target,
        capi: extra,
    }
}

impl Rig {
    /// Delete every cluster left and wait until they are gone (with the Cluster API driver,
    /// their objects leave the management cluster shared with the other tests), then stop
    /// the API, the conductors and the stand-in.
    async fn finish(mut self) {
        if self.capi.is_some() {
            let (s, l) = api::call(&self.target, "GET", "/v1/clusters", None).await;
            assert_eq!(s, 200, "{l}");
            let names: Vec<String> = l["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c["uuid"].as_str().map(str::to_string))
                .collect();
            for n in &names {
                let (s, d) =
                    api::call(&self.target, "DELETE", &format!("/v1/clusters/{n}"), None).await;
                assert!(s == 204 || s == 404, "delete {n}: {s} {d}");
            }
            for n in &names {
                api::wait_gone(&self.target, n).await;
            }
        }
        self.api.stop().await.unwrap();
        for c in &mut self.conductors {
            c.kill9().await;
        }
        if let Some((_, player)) = self.capi.take() {
            player.abort();
        }
    }
}

/// gophercloud's TestNodeGroupsCRUD on cluster `cluster`, `rounds` times: create a nodegroup,
/// wait for it, three PATCHes and the DELETE back to back, then wait for the 404. Returns the
/// rounds whose nodegroup was still there `patience` after its DELETE.
async fn replay(
    to: api::Target,
    cluster: String,
    rounds: usize,
    patience: Duration,
) -> Vec<String> {
    let mut stuck = Vec::new();
    for round in 0..rounds {
        let (s, n) = api::call(
            &to,
            "POST",
            &format!("/v1/clusters/{cluster}/nodegroups"),
            Some(serde_json::json!({"name": format!("ng-{round}"), "node_count": 2})),
        )
        .await;
        assert_eq!(s, 202, "{n}");
        let uuid = n["uuid"].as_str().unwrap().to_string();
        api::wait_ng(&to, &cluster, &uuid, Some("CREATE_COMPLETE")).await;
        let path = format!("/v1/clusters/{cluster}/nodegroups/{uuid}");
        for patch in [
            serde_json::json!([{"op": "replace", "path": "/min_node_count", "value": 2}]),
            serde_json::json!([{"op": "replace", "path": "/max_node_count", "value": 5}]),
            serde_json::json!([{"op": "replace", "path": "/min_node_count", "value": 1},
                               {"op": "replace", "path": "/max_node_count", "value": 3}]),
        ] {
            let (s, n) = api::call(&to, "PATCH", &path, Some(patch)).await;
            assert_eq!(s, 202, "{cluster} round {round}: {n}");
        }
        let (s, e) = api::call(&to, "DELETE", &path, None).await;
        assert_eq!(s, 204, "{cluster} round {round}: {e}");
        let deadline = Instant::now() + patience;
        loop {
            let (s, n) = api::call(&to, "GET", &path, None).await;
            if s == 404 {
                break;
            }
            if Instant::now() > deadline {
                stuck.push(format!("{cluster} round {round}: {}", n["status"]));
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        api::wait_status(&to, &cluster, "UPDATE_COMPLETE").await;
    }
    stuck
}

/// `rounds` replays on each of 5 clusters, the clusters at once, on the simulator or (`capi`)
/// the Cluster API driver.
async fn replay_everywhere(ordered: bool, capi: Option<&ClusterApi>, rounds: usize) -> Vec<String> {
    openkeel_tests::rabbit_url().expect("RabbitMQ");
    let rig = rig_with(ordered, 5, capi).await;
    // The Cluster API driver's nodegroup is gone once the management cluster has deleted its
    // MachineDeployment and Machines.
    let patience = Duration::from_secs(if capi.is_some() { 90 } else { 20 });
    let rounds: Vec<_> = (0..5)
        .map(|i| {
            tokio::spawn(replay(
                rig.target.clone(),
                format!("c{i}"),
                rounds,
                patience,
            ))
        })
        .collect();
    let mut stuck = Vec::new();
    for r in rounds {
        stuck.extend(r.await.unwrap());
    }
    // Three conductors were live throughout: each saw the three in its ticks. (Which one
    // runs a cluster's operations is RabbitMQ's choice of active consumer, which one syncs
    // it the ownership's: with 5 clusters a conductor may own none.)
    for c in &rig.conductors {
        let log = c.log_since(0);
        assert!(
            log.lines()
                .any(|l| l.contains("periodic round") && l.contains("conductors=3")),
            "{} never saw three live conductors",
            c.host
        );
    }
    rig.finish().await;
    stuck
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gophercloud_nodegroup_sequence_across_three_conductors_always_deletes_the_nodegroup() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let stuck = replay_everywhere(true, None, 10).await;
    assert!(stuck.is_empty(), "nodegroups left behind: {stuck:#?}");
}

/// The same sequence on clusters of the native Cluster API driver (the rig's real
/// kube-apiserver and Cluster API manager, Keystone, the CAPO/kubeadm stand-in): each
/// nodegroup is a MachineDeployment of the cluster's topology, the PATCHes change its
/// autoscaler bounds, and the DELETE takes it out of the topology.
///
/// A round takes about 45 s here (the providers' stand-in plays each new MachineDeployment
/// ready, the status ticks see it), so the suite replays 4 rounds on each of the 5 clusters
/// (20 replays, about 3 minutes); `OPENKEEL_TEST_CAPI_REPLAY_ROUNDS=10` replays the
/// simulator test's 50 (about 8 minutes; passed on 2026-12-07 in 458 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_cluster_api_the_nodegroup_sequence_across_three_conductors_deletes_the_nodegroup() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let Some(capi) = ClusterApi::here().await else {
        return;
    };
    let t0 = Instant::now();
    let rounds = std::env::var("OPENKEEL_TEST_CAPI_REPLAY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(4);
    let stuck = replay_everywhere(true, Some(&capi), rounds).await;
    eprintln!(
        "{} replays on the Cluster API driver: {:?}",
        5 * rounds,
        t0.elapsed()
    );
    assert!(stuck.is_empty(), "nodegroups left behind: {stuck:#?}");
}

/// The casts are shared out between the live conductors as the periodic work is: each of
/// the 16 ordered queues belongs to one of the three (`Membership::ordered_shards`), and a
/// conductor RabbitMQ makes the active consumer of a queue that is not its own hands it on
/// (`RpcServer::ordered_shards`). Without the hand-over, the first conductor to start runs
/// every operation. The first round of updates lets the hand-overs happen; in the second,
/// every cluster's update runs on the conductor its queue belongs to.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_ordered_queues_are_shared_out_between_the_live_conductors() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    const N: usize = 12;
    let Rig {
        _mdb,
        _dir,
        mut conductors,
        api,
        ..
    } = rig(true, N).await;
    let addr = api.addr;
    let all = [0, 1, 2];
    wait_members(&conductors, &all, &[0, 0, 0], 3).await;
    // and each has taken its share of the queues from the same view
    let deadline = Instant::now() + Duration::from_secs(30);
    while !conductors.iter().all(|c| {
        c.log_since(0).lines().any(|l| {
            l.contains("ordered queues this conductor keeps") && l.contains("conductors=3")
        })
    }) {
        assert!(
            Instant::now() < deadline,
            "a conductor never took its share of the ordered queues"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut uuids = Vec::new();
    for i in 0..N {
        let (s, c) = api::call(addr, "GET", &format!("/v1/clusters/c{i}"), None).await;
        assert_eq!(s, 200, "{c}");
        uuids.push(c["uuid"].as_str().unwrap().to_string());
    }
    let members = openkeel_conductor::ownership::Membership::new(
        Some(&conductors[0].host),
        conductors.iter().map(|c| Some(c.host.clone())),
    );
    let owner = |uuid: &str| {
        let shard = openkeel_rpc::oslo::ordered_shard_of(uuid);
        let host = members.owner(&format!("openkeel-ordered-shard-{shard}"));
        conductors.iter().position(|c| c.host == host).unwrap()
    };
    let mut ran_on = BTreeSet::new();
    for (round, count) in [(1, 2), (2, 3)] {
        let marks = marks(&conductors);
        for i in 0..N {
            let (s, c) = api::call(
                addr,
                "PATCH",
                &format!("/v1/clusters/c{i}"),
                Some(serde_json::json!([{"op": "replace", "path": "/node_count", "value": count}])),
            )
            .await;
            assert_eq!(s, 202, "{c}");
        }
        for i in 0..N {
            api::wait_status(addr, &format!("c{i}"), "UPDATE_COMPLETE").await;
        }
        if round == 2 {
            for uuid in &uuids {
                let ran = running(&conductors, &marks, uuid);
                assert_eq!(
                    ran,
                    vec![owner(uuid)],
                    "cluster {uuid} (shard {}) ran on {ran:?}",
                    openkeel_rpc::oslo::ordered_shard_of(uuid)
                );
                ran_on.insert(ran[0]);
            }
        }
    }
    assert!(
        ran_on.len() >= 2,
        "every update ran on one conductor: {ran_on:?}"
    );
    assert!(
        conductors
            .iter()
            .any(|c| c.log_since(0).contains("ordered queue handed over")),
        "no conductor handed a queue over"
    );
    api.stop().await.unwrap();
    for c in &mut conductors {
        c.kill9().await;
    }
}

/// The same with `[openkeel] ordered_casts = false` (the casts on the topic, as magnum-api
/// sends them): the check that the test above guards the ordering. Run by hand:
/// `cargo test -p openkeel --test multi_conductor -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "shows the failure the ordered queues prevent; run by hand"]
async fn without_ordered_casts_the_sequence_loses_nodegroups() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let stuck = replay_everywhere(false, None, 10).await;
    eprintln!(
        "{} of 50 replays left their nodegroup: {stuck:#?}",
        stuck.len()
    );
    assert!(
        !stuck.is_empty(),
        "every nodegroup was deleted without the ordering"
    );
}

/// Kill -9 the conductors running the operations on `operated` (started after `marks`; the
/// first `may_wait` of them may not have started yet, see below), 0.5 s after the others all
/// started, and check that none of those ended on a killed conductor. The ordered queues are
/// shared out between the three, so the operations may run on all of them: then the one
/// running the fewest is spared to finish the others'. Returns the killed conductors.
async fn kill_in_the_middle(
    conductors: &mut [Conductor],
    marks: &[usize],
    operated: &[&String],
    may_wait: usize,
) -> BTreeSet<usize> {
    let deadline = Instant::now() + Duration::from_secs(3);
    let runners = loop {
        let runners: Vec<Vec<usize>> = operated
            .iter()
            .map(|u| running(conductors, marks, u))
            .collect();
        if runners.iter().skip(may_wait).all(|r| !r.is_empty()) {
            break runners;
        }
        assert!(
            Instant::now() < deadline,
            "the operations did not all start: {runners:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut victims: BTreeSet<usize> = runners.iter().flatten().copied().collect();
    if victims.len() == conductors.len() {
        let spared = (0..conductors.len())
            .min_by_key(|i| runners.iter().filter(|r| r.contains(i)).count())
            .unwrap();
        victims.remove(&spared);
        eprintln!(
            "{} spared to finish the others' operations",
            conductors[spared].host
        );
    }
    assert!(!victims.is_empty(), "no conductor ran them: {runners:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    for &i in &victims {
        eprintln!(
            "killing {} in the middle of the operations",
            conductors[i].host
        );
        conductors[i].kill9().await;
    }
    // The kill came in the middle: none of them ended on the conductor that ran it.
    for u in &operated[may_wait..] {
        for &i in &victims {
            let ended = format!("operation ended cluster={u}");
            assert!(
                !conductors[i].log_since(marks[i]).contains(&ended),
                "{u} ended before the kill"
            );
        }
    }
    victims
}

/// The status of the cluster `uuid` in the database (`None`: gone).
async fn status_of(db: &openkeel_db::Database, uuid: &str) -> Option<ClusterStatus> {
    let scope = openkeel_db::Scope::admin_all_tenants();
    match openkeel_db::cluster::get_by_uuid(db, &scope, uuid).await {
        Ok(c) => c.status,
        Err(e) if e.is_not_found() => None,
        Err(e) => panic!("{e}"),
    }
}

/// The nodegroups of the cluster `uuid` in the database.
async fn nodegroups_of(
    db: &openkeel_db::Database,
    uuid: &str,
) -> Vec<openkeel_core::objects::NodeGroup> {
    openkeel_db::nodegroup::list(
        db,
        &openkeel_db::Scope::admin_all_tenants(),
        uuid,
        &openkeel_db::NodeGroupFilters::default(),
        &openkeel_db::Page::all(),
    )
    .await
    .unwrap()
}

/// No nodegroup of `ngs` is left in progress.
fn assert_none_in_progress<'a>(
    ngs: impl IntoIterator<Item = &'a openkeel_core::objects::NodeGroup>,
) {
    for n in ngs {
        assert!(
            !n.status.is_some_and(ClusterStatus::is_in_progress),
            "{} left {:?}",
            n.name,
            n.status
        );
    }
}

/// The `node_count` of the worker nodegroup of `ngs`.
fn worker_count(ngs: &[openkeel_core::objects::NodeGroup]) -> Option<i32> {
    ngs.iter()
        .find(|n| n.role.as_deref() == Some("worker"))
        .expect("a worker nodegroup")
        .node_count
}

/// The conductors whose log shows an operation on `uuid` started after `marks`.
fn running(conductors: &[Conductor], marks: &[usize], uuid: &str) -> Vec<usize> {
    let needle = format!("operation started cluster={uuid}");
    (0..conductors.len())
        .filter(|&i| conductors[i].log_since(marks[i]).contains(&needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_conductor_killed_during_any_operation_leaves_every_cluster_final() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let Rig {
        _mdb,
        db,
        _dir,
        mut conductors,
        api,
        ..
    } = rig(true, 0).await;
    let addr = api.addr;
    // Every driver operation on these clusters takes 4 s: long enough to be killed in.
    let slow = serde_json::json!({"simulator_call_seconds": "4"});
    let (s, t) = api::call(
        addr,
        "POST",
        "/v1/clustertemplates",
        Some(
            serde_json::json!({"name": "k8s-next", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small", "labels": {"kube_tag": "v1.31.1"}}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let names = ["resized", "deleted", "patched", "upgraded"];
    for name in names {
        let (s, c) = api::call(
            addr,
            "POST",
            "/v1/clusters",
            Some(
                serde_json::json!({"name": name, "cluster_template_id": "k8s",
                                    "node_count": 1, "labels": slow}),
            ),
        )
        .await;
        assert_eq!(s, 202, "{c}");
    }
    for name in names {
        api::wait_status(addr, name, "CREATE_COMPLETE").await;
    }
    let uuid_of = |v: &serde_json::Value| v["uuid"].as_str().unwrap().to_string();
    let resized = uuid_of(&api::call(addr, "GET", "/v1/clusters/resized", None).await.1);
    let deleted = uuid_of(&api::call(addr, "GET", "/v1/clusters/deleted", None).await.1);
    let patched = uuid_of(&api::call(addr, "GET", "/v1/clusters/patched", None).await.1);
    let upgraded = uuid_of(
        &api::call(addr, "GET", "/v1/clusters/upgraded", None)
            .await
            .1,
    );

    // The five operations at once; create_timeout 1 minute for the create.
    let m = marks(&conductors);
    let (s, c) = api::call(
        addr,
        "POST",
        "/v1/clusters",
        Some(
            serde_json::json!({"name": "created", "cluster_template_id": "k8s",
                                "node_count": 1, "labels": slow, "create_timeout": 1}),
        ),
    )
    .await;
    assert_eq!(s, 202, "{c}");
    let created = uuid_of(&c);
    let (s, r) = api::call(
        addr,
        "POST",
        &format!("/v1/clusters/{resized}/actions/resize"),
        Some(serde_json::json!({"node_count": 3})),
    )
    .await;
    assert_eq!(s, 202, "{r}");
    let (s, d) = api::call(addr, "DELETE", &format!("/v1/clusters/{deleted}"), None).await;
    assert_eq!(s, 204, "{d}");
    let (s, p) = api::call(
        addr,
        "PATCH",
        &format!("/v1/clusters/{patched}"),
        Some(serde_json::json!([{"op": "replace", "path": "/node_count", "value": 2}])),
    )
    .await;
    assert_eq!(s, 202, "{p}");
    // The upgrade is an RPC call (in Magnum too): its answer waits for the driver call.
    let path = format!("/v1/clusters/{upgraded}/actions/upgrade");
    let body = serde_json::json!({"cluster_template": "k8s-next", "max_batch_size": 1});
    let upgrade = tokio::spawn(async move { api::call(addr, "POST", &path, Some(body)).await });

    // Kill -9 whoever is running them, in the middle of their driver calls.
    // Every driver call takes 4 s: the conductors are killed 0.5 s after the last of the
    // four operations on existing clusters started, well before the first can end. (The
    // create generates its certificates first, so it may be killed before its driver call.)
    let operated = [&created, &resized, &deleted, &patched, &upgraded];
    kill_in_the_middle(&mut conductors, &m, &operated, 1).await;

    // Each cluster reaches a final state: the create fails on its create_timeout (its driver
    // call never returned), the resize and the delete are finished by the survivors' status
    // sync (the simulator infers the operation from the stored statuses), and so are the
    // update of node_count and the upgrade (their UPDATE_IN_PROGRESS is saved before the
    // driver call).
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (c, r, d, p, u) = (
            status_of(&db, &created).await,
            status_of(&db, &resized).await,
            status_of(&db, &deleted).await,
            status_of(&db, &patched).await,
            status_of(&db, &upgraded).await,
        );
        let done = matches!(
            c,
            Some(ClusterStatus::CreateFailed | ClusterStatus::CreateComplete)
        ) && r == Some(ClusterStatus::UpdateComplete)
            && d.is_none()
            && p == Some(ClusterStatus::UpdateComplete)
            && u == Some(ClusterStatus::UpdateComplete);
        if done {
            eprintln!(
                "final: created {c:?}, resized {r:?}, deleted gone, patched {p:?}, upgraded {u:?}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not final: created {c:?}, resized {r:?}, deleted {d:?}, patched {p:?}, upgraded {u:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // No row half written: the created cluster has both default nodegroups, no nodegroup is
    // left in progress, the resize reached its nodegroup, the deleted cluster left none.
    let c_ngs = nodegroups_of(&db, &created).await;
    let roles: BTreeSet<_> = c_ngs.iter().filter_map(|n| n.role.clone()).collect();
    assert_eq!(roles.len(), 2, "{c_ngs:?}");
    let r_ngs = nodegroups_of(&db, &resized).await;
    let p_ngs = nodegroups_of(&db, &patched).await;
    let u_ngs = nodegroups_of(&db, &upgraded).await;
    assert_none_in_progress(c_ngs.iter().chain(&r_ngs).chain(&p_ngs).chain(&u_ngs));
    assert_eq!(worker_count(&r_ngs), Some(3));
    assert_eq!(worker_count(&p_ngs), Some(2));
    assert!(
        nodegroups_of(&db, &deleted).await.is_empty(),
        "the deleted cluster's nodegroups remain"
    );

    // The upgrade's caller got an answer: the RPC call's timeout (the conductor running it
    // was killed), not a hung request.
    let (s, u) = upgrade.await.unwrap();
    eprintln!("upgrade answered {s}: {u}");

    api.stop().await.unwrap();
    for c in &mut conductors {
        c.kill9().await;
    }
}

/// A conductor killed with SIGKILL in the middle of a nodegroup delete: the cast goes to the
/// next conductor, which deletes the nodegroup. (The delete saves the cluster's
/// `UPDATE_IN_PROGRESS` before its driver call and the nodegroup's `DELETE_IN_PROGRESS` only
/// after it, as Magnum does: when the cast was acked on receipt, as oslo acks it, the status
/// sync then completed the cluster and the nodegroup stayed for good — a 204 never acted on,
/// as the conductor drill saw. OpenKeel's ordered casts are acked once handled.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_nodegroup_delete_whose_conductor_is_killed_is_carried_out_by_another() {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let Rig {
        _mdb,
        _dir,
        mut conductors,
        api,
        ..
    } = rig(true, 0).await;
    let addr = api.addr;
    // Every driver operation on this cluster takes 4 s: long enough to be killed in.
    let slow = serde_json::json!({"simulator_call_seconds": "4"});
    let (s, c) = api::call(
        addr,
        "POST",
        "/v1/clusters",
        Some(
            serde_json::json!({"name": "ngdel", "cluster_template_id": "k8s",
                                "node_count": 1, "labels": slow}),
        ),
    )
    .await;
    assert_eq!(s, 202, "{c}");
    let uuid = c["uuid"].as_str().unwrap().to_string();
    api::wait_status(addr, "ngdel", "CREATE_COMPLETE").await;
    let (s, n) = api::call(
        addr,
        "POST",
        "/v1/clusters/ngdel/nodegroups",
        Some(serde_json::json!({"name": "extra", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{n}");
    api::wait_ng(addr, "ngdel", "extra", Some("CREATE_COMPLETE")).await;
    api::wait_status(addr, "ngdel", "UPDATE_COMPLETE").await;

    let m = marks(&conductors);
    let (s, d) = api::call(addr, "DELETE", "/v1/clusters/ngdel/nodegroups/extra", None).await;
    assert_eq!(s, 204, "{d}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let victims = loop {
        let r = running(&conductors, &m, &uuid);
        if !r.is_empty() {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "the nodegroup delete never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    for &i in &victims {
        eprintln!("killing {} in the middle of the delete", conductors[i].host);
        conductors[i].kill9().await;
        let ended = format!("operation ended cluster={uuid}");
        assert!(
            !conductors[i].log_since(m[i]).contains(&ended),
            "the delete ended before the kill"
        );
    }
    // Another conductor takes the cast over and deletes the nodegroup.
    api::wait_ng(addr, "ngdel", "extra", None).await;
    api::wait_status(addr, "ngdel", "UPDATE_COMPLETE").await;

    api.stop().await.unwrap();
    for c in &mut conductors {
        c.kill9().await;
    }
}

/// With the native Cluster API driver (the rig's real kube-apiserver and Cluster API manager,
/// Keystone, the CAPO/kubeadm stand-in): conductors killed with SIGKILL during a create, a
/// resize and a delete. Every request of the conductors to the management cluster is held
/// for a second by their proxy while the operations run, so the kill comes in the middle of
/// the driver's calls. The casts, acked once handled, go to the survivor, which carries out
/// the resize and the delete again (server-side apply and deletes are idempotent); the
/// create, interrupted after its row was stored, ends complete or failed on its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_cluster_api_a_conductor_killed_during_a_create_a_resize_and_a_delete_leaves_every_cluster_final(
) {
    if openkeel_tests::rabbit_url().is_none() || openkeel_tests::mysql_admin_url().is_none() {
        return;
    }
    let Some(capi) = ClusterApi::here().await else {
        return;
    };
    let mut rig = rig_with(true, 2, Some(&capi)).await;
    let to = rig.target.clone();
    let row = |name: &str| {
        let db = rig.db.clone();
        let name = name.to_string();
        async move {
            openkeel_db::cluster::get_by_ident(&db, &openkeel_db::Scope::admin_all_tenants(), &name)
                .await
                .unwrap()
        }
    };
    let (c0, c1) = (row("c0").await, row("c1").await);
    let resized = c0.uuid.clone().unwrap();
    let deleted = c1.uuid.clone().unwrap();
    let (resized_stack, deleted_stack) = (c0.stack_id.unwrap(), c1.stack_id.unwrap());

    let proxy = &rig.capi.as_ref().unwrap().0;
    proxy.set_delay(1000);
    let m = marks(&rig.conductors);
    let (s, c) = api::call(
        &to,
        "POST",
        "/v1/clusters",
        Some(
            serde_json::json!({"name": "created", "cluster_template_id": "k8s",
                                "node_count": 1, "create_timeout": 1}),
        ),
    )
    .await;
    assert_eq!(s, 202, "{c}");
    let created = c["uuid"].as_str().unwrap().to_string();
    let (s, r) = api::call(
        &to,
        "POST",
        &format!("/v1/clusters/{resized}/actions/resize"),
        Some(serde_json::json!({"node_count": 2})),
    )
    .await;
    assert_eq!(s, 202, "{r}");
    let (s, d) = api::call(&to, "DELETE", &format!("/v1/clusters/{deleted}"), None).await;
    assert_eq!(s, 204, "{d}");
    // The create's certificates and application credential come before its first request to
    // the management cluster; the resize and the delete start with theirs.
    kill_in_the_middle(&mut rig.conductors, &m, &[&created, &resized, &deleted], 0).await;
    proxy.set_delay(0);

    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let (c, r, d) = (
            status_of(&rig.db, &created).await,
            status_of(&rig.db, &resized).await,
            status_of(&rig.db, &deleted).await,
        );
        let done = matches!(
            c,
            Some(ClusterStatus::CreateFailed | ClusterStatus::CreateComplete)
        ) && r == Some(ClusterStatus::UpdateComplete)
            && d.is_none();
        if done {
            eprintln!("final: created {c:?}, resized {r:?}, deleted gone");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not final: created {c:?}, resized {r:?}, deleted {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // No row half written: the created cluster has both default nodegroups, none is left in
    // progress, the resize reached its nodegroup, the deleted cluster left none.
    let c_ngs = nodegroups_of(&rig.db, &created).await;
    let roles: BTreeSet<_> = c_ngs.iter().filter_map(|n| n.role.clone()).collect();
    assert_eq!(roles.len(), 2, "{c_ngs:?}");
    let r_ngs = nodegroups_of(&rig.db, &resized).await;
    assert_none_in_progress(c_ngs.iter().chain(&r_ngs));
    assert_eq!(worker_count(&r_ngs), Some(2));
    assert!(
        nodegroups_of(&rig.db, &deleted).await.is_empty(),
        "the deleted cluster's nodegroups remain"
    );

    // The management cluster agrees: the resized cluster's workers are 2, the deleted
    // cluster's `Cluster` is gone.
    let mds = openkeel_tests::kapi::dynamic_api(
        &capi.client,
        capi::NS,
        "cluster.x-k8s.io/v1beta1",
        "MachineDeployment",
    )
    .await
    .list(
        &kube::api::ListParams::default()
            .labels(&format!("cluster.x-k8s.io/cluster-name={resized_stack}")),
    )
    .await
    .unwrap();
    let replicas: Vec<_> = mds
        .items
        .iter()
        .map(|md| md.data["spec"]["replicas"].clone())
        .collect();
    assert_eq!(replicas, vec![serde_json::json!(2)], "{resized_stack}");
    let clusters = openkeel_tests::kapi::dynamic_api(
        &capi.client,
        capi::NS,
        "cluster.x-k8s.io/v1beta1",
        "Cluster",
    )
    .await;
    assert!(
        clusters.get_opt(&deleted_stack).await.unwrap().is_none(),
        "the deleted cluster's Cluster {deleted_stack} remains"
    );
    rig.finish().await;
}
