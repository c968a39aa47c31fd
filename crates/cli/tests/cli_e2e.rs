//! End to end with the real clients: python-openstackclient + python-magnumclient (from the
//! test venv that `tests/run.sh` builds) drive the all-in-one server (SQLite, in-process RPC,
//! noauth, simulator driver) through the template, cluster and nodegroup flows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;

use coe::Cli;
use std::net::SocketAddr;
use std::path::Path;

async fn start(dir: &Path) -> (openkeel::allinone::Running, SocketAddr) {
    let conf = dir.join("test.conf");
    std::fs::write(&conf, "[openkeel]\nstatus_sync_interval = 1\n").expect("conf");
    let config = openkeel::allinone::load_config(dir, &[conf], &[]).expect("config");
    let running = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .expect("start");
    let addr = running.addr;
    (running, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_coe_flow() {
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (srv, addr) = start(dir.path()).await;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{addr}/v1"),
        token: None,
    };

    coe::coe_flow(&cli, &srv.db).await;

    srv.stop().await.expect("stop");
}

fn openssl(args: &[&str], dir: &Path) -> std::process::Output {
    std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (the openssl CLI is needed by this test)")
}

/// `openstack coe ca show / ca sign / ca rotate` and `openstack coe cluster config` with the
/// real client: the kubeconfig's client certificate verifies against the cluster CA
/// (`openssl verify`), a CSR signed through `ca sign` too, and after `ca rotate` the CA is a
/// new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_coe_ca_and_cluster_config() {
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (srv, addr) = start(dir.path()).await;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{addr}/v1"),
        token: None,
    };
    cli.ok(&[
        "cluster",
        "template",
        "create",
        "k8s",
        "--image",
        "ubuntu-jammy",
        "--external-network",
        "public",
        "--coe",
        "kubernetes",
        "--flavor",
        "m1.small",
        "--master-flavor",
        "m1.small",
    ])
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

    // ca show: the kubernetes CA.
    let ca = cli.ok(&["ca", "show", "c1"]).await;
    assert!(ca.contains("-----BEGIN CERTIFICATE-----"), "{ca}");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("ca.pem"), ca.trim_end().to_string() + "\n").unwrap();

    // ca sign: a CSR made with openssl, signed by the cluster CA.
    let out = openssl(
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "node.key",
            "-out",
            "node.csr",
            "-subj",
            "/CN=node-1/O=system:nodes",
        ],
        &work,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let signed = cli
        .ok(&["ca", "sign", "c1", work.join("node.csr").to_str().unwrap()])
        .await;
    assert!(signed.contains("-----BEGIN CERTIFICATE-----"), "{signed}");
    std::fs::write(work.join("node.pem"), signed.trim_end().to_string() + "\n").unwrap();
    let v = openssl(&["verify", "-CAfile", "ca.pem", "node.pem"], &work);
    assert!(
        v.status.success(),
        "signed certificate does not verify: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // cluster config: kubeconfig + key.pem / cert.pem / ca.pem written by the client.
    let cfg = dir.path().join("kube");
    std::fs::create_dir_all(&cfg).unwrap();
    cli.ok(&[
        "cluster",
        "config",
        "c1",
        "--dir",
        cfg.to_str().unwrap(),
        "--force",
        "--output-certs",
        "--use-certificate",
    ])
    .await;
    let kubeconfig = std::fs::read_to_string(cfg.join("config")).expect("kubeconfig written");
    assert!(kubeconfig.contains("server:"), "{kubeconfig}");
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        assert!(cfg.join(f).exists(), "{f} written by cluster config");
    }
    let v = openssl(&["verify", "-CAfile", "ca.pem", "cert.pem"], &cfg);
    assert!(
        v.status.success(),
        "kubeconfig client certificate does not verify against the cluster CA: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // ca rotate: the simulator accepts it; the cluster gets a new CA.
    cli.ok(&["ca", "rotate", "c1"]).await;
    let c = cli.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["status"], "UPDATE_COMPLETE");
    let ca2 = cli.ok(&["ca", "show", "c1"]).await;
    assert!(ca2.contains("-----BEGIN CERTIFICATE-----"));
    assert_ne!(ca.trim(), ca2.trim(), "rotation gives a new CA");
    srv.stop().await.expect("stop");
}
