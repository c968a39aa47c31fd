//! Benchmark (not a test: `#[ignore]`, run by `bench/auth_overhead.sh`): what Keystone
//! authentication costs per request once the token cache is warm, against noauth.
//!
//! Two all-in-one servers in this process, one after the other: `noauth` (identity headers
//! trusted) and `auth_strategy = keystone` (the real test Keystone; the token validated once,
//! then served from the cache). Both answer `GET /v1/clusters/<uuid>` for the same kind of
//! cluster owned by the caller. Keep-alive connections, `BENCH_CONNECTIONS` (8) at once, for
//! `BENCH_SECONDS` (5) per round, `BENCH_ROUNDS` (3) alternating rounds; the best round of
//! each is compared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One keep-alive HTTP/1.1 connection; returns the status of each request.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    async fn get(&mut self, request: &[u8]) -> u16 {
        self.stream.write_all(request).await.unwrap();
        self.buf.clear();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .unwrap_or(0);
                while self.buf.len() < end + 4 + len {
                    let n = self.stream.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "connection closed");
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                return head[9..12].parse().unwrap();
            }
            let n = self.stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

struct Round {
    rps: f64,
    p50_us: u64,
    p99_us: u64,
}

async fn load(addr: SocketAddr, request: Vec<u8>, conns: u64, secs: u64) -> Round {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = Conn::open(addr).await;
            let mut lat = Vec::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                let status = c.get(&request).await;
                assert_eq!(status, 200);
                lat.push(t.elapsed().as_micros() as u64);
            }
            lat
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    Round {
        rps: all.len() as f64 / elapsed,
        p50_us: all[all.len() / 2],
        p99_us: all[all.len() * 99 / 100],
    }
}

async fn start(dir: &Path, conf: &str) -> openkeel::allinone::Running {
    let path = dir.join("bench.conf");
    std::fs::write(&path, conf).unwrap();
    let config = openkeel::allinone::load_config(dir, &[path], &[]).unwrap();
    openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap()
}

/// A template and a cluster owned by the caller; returns the cluster uuid.
async fn seed(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let mut h = headers.to_vec();
    h.push(("Content-Type", "application/json"));
    let t = openkeel_tests::http(addr, "POST", "/v1/clustertemplates", &h, Some(br#"{"name": "b", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small"}"#)).await.unwrap();
    assert_eq!(t.status, 201, "{}", t.text());
    let t: serde_json::Value = serde_json::from_slice(&t.body).unwrap();
    let body = format!(
        r#"{{"name": "b", "cluster_template_id": "{}"}}"#,
        t["uuid"].as_str().unwrap()
    );
    let c = openkeel_tests::http(addr, "POST", "/v1/clusters", &h, Some(body.as_bytes()))
        .await
        .unwrap();
    assert_eq!(c.status, 202, "{}", c.text());
    let c: serde_json::Value = serde_json::from_slice(&c.body).unwrap();
    c["uuid"].as_str().unwrap().to_string()
}

fn request(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut r = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("\r\n");
    r.into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: bench/auth_overhead.sh"]
async fn keystone_auth_overhead_with_warm_cache() {
    let ks = openkeel_tests::keystone().expect("the test Keystone (tests/services/start.sh)");
    let conns = env_num("BENCH_CONNECTIONS", 8);
    let secs = env_num("BENCH_SECONDS", 5);
    let rounds = env_num("BENCH_ROUNDS", 3);
    let token = ks.token("demo").await;
    let user_id = ks.user_id("demo");
    let project_id = ks.project_id("demo");

    let d1 = tempfile::tempdir().unwrap();
    let noauth = start(d1.path(), "[DEFAULT]\nperiodic_enable = false\n").await;
    let noauth_headers = [
        ("X-User-Id", user_id.as_str()),
        ("X-Project-Id", project_id.as_str()),
        ("X-Roles", "member,reader"),
        ("X-Auth-Token", token.as_str()),
    ];
    let c1 = seed(noauth.addr, &noauth_headers).await;
    let req_noauth = request(noauth.addr, &format!("/v1/clusters/{c1}"), &noauth_headers);

    let d2 = tempfile::tempdir().unwrap();
    let keystone = start(
        d2.path(),
        &format!(
            "[DEFAULT]\nperiodic_enable = false\n[openkeel]\nauth_strategy = keystone\n[keystone_authtoken]\nwww_authenticate_uri = {url}\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\ninclude_service_catalog = {cat}\n",
            url = ks.url,
            pw = ks.password("magnum"),
            cat = std::env::var("BENCH_INCLUDE_CATALOG").unwrap_or_else(|_| "true".into())
        ),
    )
    .await;
    let ks_headers = [("X-Auth-Token", token.as_str())];
    let c2 = seed(keystone.addr, &ks_headers).await;
    let req_keystone = request(keystone.addr, &format!("/v1/clusters/{c2}"), &ks_headers);

    // warm both (the Keystone one validates the token here, once)
    load(noauth.addr, req_noauth.clone(), 1, 1).await;
    load(keystone.addr, req_keystone.clone(), 1, 1).await;

    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..rounds {
        a.push(load(noauth.addr, req_noauth.clone(), conns, secs).await);
        b.push(load(keystone.addr, req_keystone.clone(), conns, secs).await);
    }
    let best = |v: &[Round]| -> usize {
        (0..v.len())
            .max_by(|x, y| v[*x].rps.total_cmp(&v[*y].rps))
            .unwrap()
    };
    let (ia, ib) = (best(&a), best(&b));
    println!("\n| server | req/s (best) | req/s (every round) | p50 µs | p99 µs |");
    println!("|---|---:|---|---:|---:|");
    for (name, v, i) in [("noauth", &a, ia), ("keystone, warm cache", &b, ib)] {
        let every: Vec<String> = v.iter().map(|r| format!("{:.0}", r.rps)).collect();
        println!(
            "| {name} | {:.0} | {} | {} | {} |",
            v[i].rps,
            every.join(", "),
            v[i].p50_us,
            v[i].p99_us
        );
    }
    let extra = (a[ia].rps / b[ib].rps - 1.0) * 100.0;
    println!(
        "\nextra cost of Keystone auth per request (best vs best): {extra:.1} % ({:.1} µs per request)",
        (1.0 / b[ib].rps - 1.0 / a[ia].rps) * 1e6 * conns as f64 / conns as f64
    );
    noauth.stop().await.unwrap();
    keystone.stop().await.unwrap();
}
