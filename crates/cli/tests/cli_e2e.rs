//! End to end with the real clients: python-openstackclient + python-magnumclient (from the
//! test venv that `tests/run.sh` builds) drive the all-in-one server (SQLite, in-process RPC,
//! noauth, simulator driver) through the template, cluster and nodegroup flows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/coe.rs"]
mod coe;
#[path = "common/openapi_check.rs"]
mod openapi_check;

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
    // The real clients' traffic goes through a recording proxy: every answer they got must
    // match docs/openapi.json (issue 15: the document checked against the end-to-end flows).
    let rec = openapi_check::Recording::start(addr).await;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{}/v1", rec.addr),
        auth: coe::Auth::None,
    };

    coe::coe_flow(&cli, &srv.db).await;

    srv.stop().await.expect("stop");
    rec.assert_all_match(20, dir.path(), "the openstack coe flow");
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
    let rec = openapi_check::Recording::start(addr).await;
    let cli = Cli {
        openstack,
        endpoint: format!("http://{}/v1", rec.addr),
        auth: coe::Auth::None,
    };
    coe::ca_flow(&cli, dir.path()).await;
    srv.stop().await.expect("stop");
    let exchanges = rec.taken();
    assert!(!exchanges.is_empty());
    openapi_check::assert_exchanges_match(&exchanges, dir.path());
}
