#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Nothing secret reaches a log line, even at TRACE (Magnum logs request bodies at DEBUG;
//! OpenKeel must not): the all-in-one server (real conductor, x509keypair cert manager,
//! simulator driver) runs a cluster create, a CA fetch, a CSR signing, a bad CSR, a CA
//! rotation, a credential rotation and a cluster delete with every target's TRACE output
//! captured; then no PEM block, no CSR or key body, and no private-key passphrase stored for
//! the cluster may appear in it.

#[path = "common/api.rs"]
mod api;

use api::call_at;
use openkeel_tests::http;
use serde_json::{json, Value};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

async fn wait_status(addr: SocketAddr, uuid: &str, want: &str) {
    let mut last = Value::Null;
    for _ in 0..400 {
        let (_, c) = call_at(addr, "GET", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
        if c["status"] == want {
            return;
        }
        last = c["status"].clone();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("cluster {uuid} never reached {want} (last: {last})");
}

/// The base64 lines of every PEM block in `pem` (each is long enough not to appear by
/// chance).
fn pem_lines(pem: &str) -> Vec<String> {
    pem.lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 40)
        .map(str::to_string)
        .collect()
}

async fn secrets(db: &openkeel_db::Database) -> Vec<String> {
    let rows = openkeel_db::x509keypair::list(
        db,
        &openkeel_db::Scope::admin_all_tenants(),
        &Default::default(),
        &Default::default(),
    )
    .await
    .unwrap();
    let mut out = Vec::new();
    for r in rows {
        if let Some(p) = r.private_key_passphrase {
            out.push(p);
        }
        if let Some(k) = r.private_key {
            out.extend(pem_lines(&k));
        }
    }
    out
}

/// The payloads (passphrases whole, PEM bodies line by line) of the Barbican containers the
/// cluster rows name, read as the service project.
async fn barbican_secrets(barbican: SocketAddr, db: &openkeel_db::Database) -> Vec<String> {
    let path = |r: &str| {
        let rest = r.trim_start_matches("http://");
        rest[rest.find('/').unwrap_or(0)..].to_string()
    };
    let get = |p: String, accept: &'static str| async move {
        http(
            barbican,
            "GET",
            &p,
            &[("X-Project-Id", "service"), ("Accept", accept)],
            None,
        )
        .await
        .unwrap()
        .text()
    };
    let clusters = openkeel_db::cluster::list(
        db,
        &openkeel_db::Scope::admin_all_tenants(),
        &Default::default(),
        &Default::default(),
    )
    .await
    .unwrap();
    let mut out = Vec::new();
    for c in clusters {
        for r in [
            c.ca_cert_ref,
            c.magnum_cert_ref,
            c.etcd_ca_cert_ref,
            c.front_proxy_ca_cert_ref,
        ]
        .into_iter()
        .flatten()
        {
            let container: Value =
                serde_json::from_str(&get(path(&r), "application/json").await).unwrap();
            for e in container["secret_refs"].as_array().unwrap() {
                let payload = get(
                    format!("{}/payload", path(e["secret_ref"].as_str().unwrap())),
                    "text/plain",
                )
                .await;
                match e["name"].as_str().unwrap() {
                    "private_key_passphrase" => out.push(payload),
                    "private_key" => out.extend(pem_lines(&payload)),
                    _ => {}
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_passphrase_or_csr_in_trace_logs() {
    let capture = Capture::default();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
        .with_writer(capture.clone())
        .with_ansi(false)
        .init();

    // x509keypair (the all-in-one default), then barbican against the real Barbican.
    let mut forbidden = flow("", None).await;
    let mut with_barbican = false;
    if let Some(url) = openkeel_tests::barbican_url() {
        let keystone = openkeel_tests::standin::start(openkeel_tests::standin::StandInData {
            key_manager_url: Some(url.clone()),
            ..Default::default()
        })
        .await;
        let conf = format!(
            "[certificates]\ncert_manager_type = barbican\n[keystone_auth]\nauth_type = password\n\
             auth_url = {}\nusername = magnum\npassword = secret\nuser_domain_id = default\n\
             project_name = service\nproject_domain_id = default\n",
            keystone.keystone_url()
        );
        let addr: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
        forbidden.extend(flow(&conf, Some(addr)).await);
        with_barbican = true;
    }

    let log = String::from_utf8_lossy(&capture.0.lock().unwrap()).into_owned();
    if with_barbican {
        assert!(
            log.contains("Storing certificate container in Barbican."),
            "the barbican flow was logged"
        );
    }
    assert!(
        log.lines().count() > 100,
        "TRACE output was captured ({} lines)",
        log.lines().count()
    );
    assert!(log.contains("DEBUG"), "DEBUG lines were captured");
    let leaks: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains("-----BEGIN")
                || l.contains("PRIVATE KEY")
                || forbidden.iter().any(|s| l.contains(s.as_str()))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "{} log line(s) carry a PEM block, key, CSR or passphrase, e.g.:\n{}",
        leaks.len(),
        leaks
            .iter()
            .take(5)
            .map(|l| l.chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Create, sign, a bad CSR, both rotations and delete on an all-in-one server with `extra`
/// configuration; returns the strings that must never be logged.
async fn flow(extra: &str, barbican: Option<SocketAddr>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("test.conf");
    std::fs::write(
        &conf,
        format!("[DEFAULT]\ndebug = true\n[openkeel]\nstatus_sync_interval = 1\n{extra}"),
    )
    .unwrap();
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).unwrap();
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap();
    let (addr, db) = (srv.addr, srv.db.clone());

    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clustertemplates",
        "1.1",
        Some(
            json!({"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small"}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clusters",
        "1.1",
        Some(json!({"name": "c1", "cluster_template_id": "k8s", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{t}");
    let uuid = t["uuid"].as_str().unwrap().to_string();
    wait_status(addr, &uuid, "CREATE_COMPLETE").await;
    let collect = |db: openkeel_db::Database| async move {
        match barbican {
            Some(b) => barbican_secrets(b, &db).await,
            None => secrets(&db).await,
        }
    };
    let mut secret = collect(db.clone()).await;
    assert!(
        secret.len() >= 8,
        "four certificates with keys and passphrases"
    );

    // Sign a CSR (its body is secret-adjacent: it must not be logged either).
    use openkeel_certs::rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    let kp = KeyPair::generate_for(&openkeel_certs::rcgen::PKCS_RSA_SHA256)
        .or_else(|_| KeyPair::generate())
        .unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "system:node:worker-0");
    params.distinguished_name = dn;
    let csr = params.serialize_request(&kp).unwrap().pem().unwrap();
    secret.extend(pem_lines(&csr));
    secret.extend(pem_lines(&kp.serialize_pem()));
    let (s, r) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": uuid, "csr": csr})),
    )
    .await;
    assert_eq!(s, 201, "{r}");
    let signed = r["pem"].as_str().unwrap().to_string();
    let (s, ca) = call_at(
        addr,
        "GET",
        &format!("/v1/certificates/{uuid}"),
        "1.1",
        None,
    )
    .await;
    assert_eq!(s, 200, "{ca}");

    // A CSR that does not parse (Magnum echoes it in the error answer; not in a log line).
    let broken = csr.replace("REQUEST-----\n", "REQUEST-----\n!!");
    let (s, _) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": uuid, "csr": broken})),
    )
    .await;
    assert_eq!(s, 400);

    // Rotations: new CAs, keys and passphrases.
    let (s, r) = call_at(
        addr,
        "PATCH",
        &format!("/v1/credentials/{uuid}"),
        "1.12",
        None,
    )
    .await;
    assert_eq!(s, 202, "{r}");
    // (the credential rotation leaves the status as it was)
    let (s, r) = call_at(
        addr,
        "PATCH",
        &format!("/v1/certificates/{uuid}"),
        "1.1",
        None,
    )
    .await;
    assert_eq!(s, 202, "{r}");
    wait_status(addr, &uuid, "UPDATE_COMPLETE").await;
    secret.extend(collect(db.clone()).await);

    let (s, _) = call_at(addr, "DELETE", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
    assert_eq!(s, 204);
    for _ in 0..400 {
        let (s, _) = call_at(addr, "GET", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
        if s == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    srv.stop().await.unwrap();
    secret.extend(pem_lines(&signed));
    secret.extend(pem_lines(ca["pem"].as_str().unwrap_or_default()));
    secret
}
