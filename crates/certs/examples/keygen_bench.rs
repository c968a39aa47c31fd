//! Key generation figures for `bench/keygen.sh` and `bench/create.sh` (a benchmark, not a
//! test): the time and CPU of one RSA key (`[x509] rsa_key_size`, default 2048); of one
//! cluster's certificate set made one certificate after the other as Magnum's
//! `generate_certificates_to_cluster` makes it (three CAs and the client certificate signed by
//! the first, each key encrypted as Magnum stores it), without storing it; and of the
//! conductor's own `generate_certificates_to_cluster` (the four keys at once, up to one per
//! core, on a multi-threaded tokio runtime as in the conductor), stored by the `local` cert
//! manager in a temporary directory (no database). Prints one JSON line.
//!
//!   cargo run --release -p openkeel-certs --example keygen_bench -- [KEYS] [SETS] [BITS]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_certs::key::generate_rsa_pkcs8;
use openkeel_certs::{
    generate_ca_certificate, generate_client_certificate, CaKey, X509KeyPairCertManager,
};
use openkeel_core::config::X509Section;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use std::time::{Duration, Instant};

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    cpu_of("/proc/thread-self/stat")
}

/// CPU time of the whole process (all its threads).
fn process_cpu() -> Duration {
    cpu_of("/proc/self/stat")
}

/// User + system CPU time from a `/proc/.../stat` file.
fn cpu_of(path: &str) -> Duration {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // utime and stime are fields 14 and 15; the command name (field 2) may hold spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    Duration::from_millis(f.iter().sum::<u64>() * 10) // USER_HZ = 100
}

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    serde_json::json!({
        "n": n,
        "median_ms": v[n / 2],
        "p90_ms": v[(n * 9 / 10).min(n - 1)],
        "min_ms": v[0],
        "max_ms": v[n - 1],
        "mean_ms": v.iter().sum::<f64>() / n as f64,
    })
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: KEYS SETS BITS"))
        .collect();
    let keys = args.first().copied().unwrap_or(40);
    let sets = args.get(1).copied().unwrap_or(10);
    let bits = args.get(2).copied().unwrap_or(2048);
    let settings = X509Section {
        rsa_key_size: bits as i64,
        ..X509Section::default()
    };

    let cpu0 = thread_cpu();
    let mut key_ms = Vec::new();
    for _ in 0..keys {
        let t = Instant::now();
        std::hint::black_box(generate_rsa_pkcs8(bits).unwrap());
        key_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let key_cpu = thread_cpu() - cpu0;

    let cpu0 = thread_cpu();
    let mut set_ms = Vec::new();
    for _ in 0..sets {
        let t = Instant::now();
        let issuer = "bench-cluster";
        let ca = generate_ca_certificate(issuer, "abcdefghijkl", &settings).unwrap();
        let ca_key = CaKey::from_pem(&ca.private_key, Some("abcdefghijkl")).unwrap();
        generate_ca_certificate(issuer, "abcdefghijkm", &settings).unwrap();
        generate_ca_certificate(issuer, "abcdefghijkn", &settings).unwrap();
        generate_client_certificate(
            issuer,
            "admin",
            "system:masters",
            &ca_key,
            "abcdefghijko",
            &settings,
        )
        .unwrap();
        set_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let set_cpu = thread_cpu() - cpu0;

    let dir = tempfile::tempdir().unwrap();
    let manager = X509KeyPairCertManager::local(dir.path(), settings.clone());
    let ctx = RequestContext::default();
    let cluster = Cluster {
        name: Some("bench-cluster".to_string()),
        ..Cluster::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let cpu0 = process_cpu();
    let mut conductor_ms = Vec::new();
    for _ in 0..sets {
        let t = Instant::now();
        rt.block_on(manager.generate_certificates_to_cluster(&ctx, &cluster))
            .unwrap();
        conductor_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let conductor_cpu = process_cpu() - cpu0;
    println!(
        "{}",
        serde_json::json!({
            "implementation": "openkeel",
            "bits": bits,
            "key": stats(key_ms),
            "key_cpu_ms_mean": key_cpu.as_secs_f64() * 1000.0 / keys as f64,
            "cluster_set": stats(set_ms),
            "cluster_set_cpu_ms_mean": set_cpu.as_secs_f64() * 1000.0 / sets as f64,
            "conductor_certs": stats(conductor_ms),
            "conductor_certs_cpu_ms_mean": conductor_cpu.as_secs_f64() * 1000.0 / sets as f64,
        })
    );
}
