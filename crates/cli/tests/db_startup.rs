#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Start-up against a MariaDB that is not there yet, as oslo.db's `_test_connection` handles
//! it (`[database] max_retries`, `retry_interval`): the all-in-one server waits for a
//! database that comes up late, gives up after `max_retries` attempts, and never retries bad
//! credentials (even with `max_retries = -1`). The late database is the real test MariaDB
//! behind a TCP relay that starts listening only after a while.

use openkeel_tests::http;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// The URL with its `host:port` replaced.
fn with_address(url: &str, addr: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (creds, hostpath) = rest.rsplit_once('@').unwrap();
    let path = hostpath.split_once('/').map(|(_, p)| p).unwrap_or("");
    format!("{scheme}://{creds}@{addr}/{path}")
}

fn db_address(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let hostpath = rest.rsplit_once('@').unwrap().1;
    hostpath
        .split_once('/')
        .map(|(a, _)| a)
        .unwrap_or(hostpath)
        .to_string()
}

/// A port nothing listens on (bound, then released).
async fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

async fn start(conf: String) -> Result<openkeel::allinone::Running, String> {
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let f = dir.join("db.conf");
    std::fs::write(&f, conf).unwrap();
    let config = openkeel::allinone::load_config(&dir, &[f], &[]).expect("config");
    let opts = openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().expect("addr")),
        config,
        config_dirs: Vec::new(),
    };
    openkeel::allinone::start(opts)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_comes_up_late_is_waited_for() {
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = openkeel_db::Database::connect(mdb.url()).await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    db.close().await;
    let real = db_address(mdb.url());
    let port = closed_port().await;
    let conf = format!(
        "[database]\nconnection = {}\nmax_retries = 30\nretry_interval = 1\npool_timeout = 1\n",
        with_address(mdb.url(), &format!("127.0.0.1:{port}"))
    );
    // The relay to the real MariaDB starts listening 3 s from now.
    let relay = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let l = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        while let Ok((mut client, _)) = l.accept().await {
            let real = real.clone();
            tokio::spawn(async move {
                if let Ok(mut server) = TcpStream::connect(real).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    let t0 = Instant::now();
    let srv = tokio::time::timeout(Duration::from_secs(60), start(conf))
        .await
        .expect("start-up is bounded")
        .expect("the server starts once the database is there");
    assert!(
        t0.elapsed() >= Duration::from_secs(2),
        "it cannot have connected before the relay listened"
    );
    let addr: SocketAddr = srv.addr;
    let r = http(addr, "GET", "/v1/clusters", &[], None).await.unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    srv.stop().await.expect("stop");
    relay.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_fails_after_max_retries() {
    let port = closed_port().await;
    let conf = format!(
        "[database]\nconnection = mysql+pymysql://u:secret@127.0.0.1:{port}/magnum\n\
         max_retries = 2\nretry_interval = 1\npool_timeout = 1\n"
    );
    let e = tokio::time::timeout(Duration::from_secs(60), start(conf))
        .await
        .expect("start-up is bounded")
        .err()
        .expect("no database, no start");
    assert!(e.starts_with("database: "), "{e}");
    assert!(!e.contains("secret"), "the password is never shown: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_credentials_are_not_retried() {
    let Some(mdb) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let url = mdb.url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let hostpath = rest.rsplit_once('@').unwrap().1;
    let conf = format!(
        "[database]\nconnection = {scheme}://openkeel:wrong-password@{hostpath}\n\
         max_retries = -1\nretry_interval = 30\n"
    );
    let e = tokio::time::timeout(Duration::from_secs(20), start(conf))
        .await
        .expect("bad credentials end the start-up, with no retry")
        .err()
        .expect("refused");
    assert!(e.contains("1045") || e.contains("Access denied"), "{e}");
    assert!(!e.contains("wrong-password"), "{e}");
}
