//! A cluster show on MariaDB: one statement and nothing else on the wire (no `COM_PING`
//! before or after it), on a connection that is replaced when the server has dropped it
//! (`crates/db/src/mysql_reader.rs`). MariaDB only (`OPENKEEL_TEST_MYSQL_URL`, required in
//! CI); without it the tests say so and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openkeel_core::objects::Cluster;
use openkeel_db::{cluster, manage, Database, Scope};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Commands the client sent, by MySQL command byte (the first byte of a packet with
/// sequence id 0).
#[derive(Default)]
struct Commands {
    ping: AtomicU64,
    execute: AtomicU64,
    other: AtomicU64,
}

/// A TCP proxy in front of MariaDB that reads the client's packets as they pass.
async fn counting_proxy(upstream: String) -> (String, Arc<Commands>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let commands = Arc::new(Commands::default());
    let counted = commands.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut sr, &mut cw).await;
            });
            let counted = counted.clone();
            tokio::spawn(async move {
                // client -> server, packet by packet: 3 bytes length, 1 byte sequence id
                let mut header = [0u8; 4];
                while cr.read_exact(&mut header).await.is_ok() {
                    let len = usize::from(header[0])
                        | usize::from(header[1]) << 8
                        | usize::from(header[2]) << 16;
                    let mut payload = vec![0u8; len];
                    if cr.read_exact(&mut payload).await.is_err() {
                        break;
                    }
                    if header[3] == 0 {
                        let counter = match payload.first() {
                            Some(0x0e) => &counted.ping,
                            Some(0x17) => &counted.execute,
                            _ => &counted.other,
                        };
                        counter.fetch_add(1, Ordering::SeqCst);
                    }
                    if sw.write_all(&header).await.is_err() || sw.write_all(&payload).await.is_err()
                    {
                        break;
                    }
                }
            });
        }
    });
    (addr, commands)
}

/// Where `url`'s `host:port` starts and ends.
fn authority(url: &str) -> (usize, usize) {
    let at = url.find('@').expect("a user in the URL") + 1;
    let end = url[at..].find('/').map_or(url.len(), |i| at + i);
    (at, end)
}

/// `url` with its `host:port` replaced by `addr`.
fn via(url: &str, addr: &str) -> String {
    let (at, end) = authority(url);
    format!("{}{addr}{}", &url[..at], &url[end..])
}

async fn one_cluster(db: &Database) -> String {
    manage::upgrade(db).await.unwrap();
    let c = cluster::create(
        db,
        &Cluster {
            name: Some("c".into()),
            project_id: Some("p1".into()),
            ..Cluster::default()
        },
    )
    .await
    .unwrap();
    c.uuid.unwrap()
}

#[tokio::test]
async fn a_show_on_mariadb_sends_its_statement_and_no_ping() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        eprintln!("no test MariaDB (OPENKEEL_TEST_MYSQL_URL): nothing to check");
        return;
    };
    let upstream = {
        let (at, end) = authority(guard.url());
        guard.url()[at..end].to_string()
    };
    let (addr, commands) = counting_proxy(upstream).await;
    let db = Database::connect(&via(guard.url(), &addr)).await.unwrap();
    let uuid = one_cluster(&db).await;
    let scope = Scope::project("p1");
    // the first show opens the read connection and prepares its statement
    cluster::get_with_relations(&db, &scope, &uuid)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (pings, executes) = (
        commands.ping.load(Ordering::SeqCst),
        commands.execute.load(Ordering::SeqCst),
    );
    for _ in 0..20 {
        let shown = cluster::get_with_relations(&db, &scope, &uuid)
            .await
            .unwrap();
        assert_eq!(shown.cluster.uuid.as_deref(), Some(uuid.as_str()));
    }
    // a connection given back is pinged by sqlx's pool in a task of its own: let it run
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pings = commands.ping.load(Ordering::SeqCst) - pings;
    let executes = commands.execute.load(Ordering::SeqCst) - executes;
    assert_eq!(
        (pings, executes),
        (0, 20),
        "(pings, statements executed) for 20 shows"
    );
    db.close().await;
}

/// A read connection the server dropped (here `KILL`ed, as a restart or `wait_timeout` would)
/// is found out on its next show, which is read again on a new connection: no error.
#[tokio::test]
async fn a_show_on_a_connection_the_server_dropped_is_read_again() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        eprintln!("no test MariaDB (OPENKEEL_TEST_MYSQL_URL): nothing to check");
        return;
    };
    let db = Database::connect(guard.url()).await.unwrap();
    let uuid = one_cluster(&db).await;
    let scope = Scope::project("p1");
    cluster::get_with_relations(&db, &scope, &uuid)
        .await
        .unwrap();

    let admin = Database::connect(guard.url()).await.unwrap();
    let openkeel_db::Pool::MySql(pool) = admin.pool() else {
        panic!("a MariaDB pool")
    };
    let mut killer = pool.acquire().await.unwrap();
    use sqlx::Row as _;
    let ids: Vec<i64> = sqlx::query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()",
    )
    .fetch_all(&mut *killer)
    .await
    .unwrap()
    .iter()
    .map(|r| r.get::<i64, _>(0))
    .collect();
    assert!(!ids.is_empty(), "the show's connection is open");
    for id in ids {
        // the admin pool's own idle connections go too; the killer is not among them
        let _ = sqlx::query(sqlx::AssertSqlSafe(format!("KILL {id}")))
            .execute(&mut *killer)
            .await;
    }
    drop(killer);
    // within the second after its last use: not pinged, so the show finds the connection
    // gone and reads again on a new one
    let shown = cluster::get_with_relations(&db, &scope, &uuid).await;
    assert_eq!(
        shown.map(|s| s.cluster.uuid).unwrap(),
        Some(uuid.clone()),
        "the show after its connection was killed"
    );
    cluster::get_with_relations(&db, &scope, &uuid)
        .await
        .unwrap();
    admin.close().await;
    db.close().await;
}
