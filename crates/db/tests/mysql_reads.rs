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
/// sequence id 0), and the column definitions the server sent.
#[derive(Default)]
struct Commands {
    ping: AtomicU64,
    execute: AtomicU64,
    other: AtomicU64,
    /// Server packets that are column definitions (their catalog, always `def`, first).
    definitions: AtomicU64,
}

/// Reads MySQL packets (3 bytes length, 1 byte sequence id, payload) from `from`, hands each
/// header and payload to `seen` and passes it on to `to`, until either side closes.
async fn relay_packets(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    seen: impl Fn(&[u8; 4], &[u8]),
) {
    let mut header = [0u8; 4];
    while from.read_exact(&mut header).await.is_ok() {
        let len =
            usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
        let mut payload = vec![0u8; len];
        if from.read_exact(&mut payload).await.is_err() {
            break;
        }
        seen(&header, &payload);
        if to.write_all(&header).await.is_err() || to.write_all(&payload).await.is_err() {
            break;
        }
    }
}

/// A TCP proxy in front of MariaDB that reads the packets of both sides as they pass.
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
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            let counted_server = counted.clone();
            tokio::spawn(relay_packets(sr, cw, move |_, payload| {
                if payload.starts_with(b"\x03def") {
                    counted_server.definitions.fetch_add(1, Ordering::SeqCst);
                }
            }));
            let counted = counted.clone();
            tokio::spawn(relay_packets(cr, sw, move |header, payload| {
                if header[3] == 0 {
                    let counter = match payload.first() {
                        Some(0x0e) => &counted.ping,
                        Some(0x17) => &counted.execute,
                        _ => &counted.other,
                    };
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            }));
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

/// A fresh MariaDB database with one cluster (its guard, the database reached through a
/// [`counting_proxy`], the proxy's counts, the cluster's uuid); `None` without a test MariaDB.
async fn one_cluster_through_a_proxy() -> Option<(
    openkeel_tests::MysqlDatabase,
    Database,
    Arc<Commands>,
    String,
)> {
    let guard = openkeel_tests::fresh_mysql_database().await?;
    let upstream = {
        let (at, end) = authority(guard.url());
        guard.url()[at..end].to_string()
    };
    let (addr, commands) = counting_proxy(upstream).await;
    let db = Database::connect(&via(guard.url(), &addr)).await.unwrap();
    let uuid = one_cluster(&db).await;
    Some((guard, db, commands, uuid))
}

/// Show the cluster `n` times on `db`, each answer checked (the one cluster of
/// [`one_cluster`]).
async fn show_times(db: &Database, scope: &Scope, uuid: &str, n: usize) {
    for _ in 0..n {
        let shown = cluster::get_with_relations(db, scope, uuid).await.unwrap();
        assert_eq!(shown.cluster.uuid.as_deref(), Some(uuid));
        assert_eq!(shown.cluster.name.as_deref(), Some("c"));
    }
}

#[tokio::test]
async fn a_show_on_mariadb_sends_its_statement_and_no_ping() {
    let Some((_guard, db, commands, uuid)) = one_cluster_through_a_proxy().await else {
        eprintln!("no test MariaDB (OPENKEEL_TEST_MYSQL_URL): nothing to check");
        return;
    };
    let scope = Scope::project("p1");
    // the first show opens the read connection and prepares its statement
    show_times(&db, &scope, &uuid, 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (pings, executes) = (
        commands.ping.load(Ordering::SeqCst),
        commands.execute.load(Ordering::SeqCst),
    );
    show_times(&db, &scope, &uuid, 20).await;
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

/// MariaDB (10.6 and later) sends a prepared statement's column definitions once, not at every
/// execution, when the client asks for it (`MARIADB_CLIENT_CACHE_METADATA`, asked by OpenKeel's
/// patched sqlx-mysql, `vendor/README.md`): a show's 42 result columns are not described again
/// at each show. When a column's definition changes, the server sends them again and the show
/// reads its row with the new ones.
#[tokio::test]
async fn mariadb_describes_a_shows_columns_once_until_they_change() {
    let Some((guard, db, commands, uuid)) = one_cluster_through_a_proxy().await else {
        eprintln!("no test MariaDB (OPENKEEL_TEST_MYSQL_URL): nothing to check");
        return;
    };
    let scope = Scope::project("p1");
    // the column definitions the server sends while the cluster is shown `n` times
    let described = |n| {
        let (db, scope, uuid, commands) = (&db, &scope, &uuid, &commands);
        async move {
            let before = commands.definitions.load(Ordering::SeqCst);
            show_times(db, scope, uuid, n).await;
            commands.definitions.load(Ordering::SeqCst) - before
        }
    };
    // the first show prepares its statement: its column definitions come then
    let first = described(1).await;
    assert!(
        first >= 42,
        "the statement's prepare describes its columns: {first}"
    );
    assert_eq!(
        described(20).await,
        0,
        "column definitions the server sent for 20 executions of the prepared show"
    );

    // a column of the show changes its definition (length): described again, then cached again
    let admin = Database::connect(guard.url()).await.unwrap();
    let openkeel_db::Pool::MySql(pool) = admin.pool() else {
        panic!("a MariaDB pool")
    };
    sqlx::query("ALTER TABLE cluster MODIFY name VARCHAR(300)")
        .execute(pool)
        .await
        .unwrap();
    let changed = described(1).await;
    assert!(
        changed >= 42,
        "the changed statement describes its columns again: {changed}"
    );
    assert_eq!(described(5).await, 0, "after the change, cached again");
    admin.close().await;
    db.close().await;
}

/// Counts the spans entered while it is the default subscriber.
struct CountEnters(Arc<AtomicU64>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CountEnters {
    fn on_enter(&self, _: &tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// sqlx wraps each result stream in the span current when it is made and enters that span at
/// every poll of the stream: at every row, twice (two streams, one in the other). OpenKeel's
/// patched sqlx-mysql does not (`vendor/README.md`): the request's span is entered once per
/// poll of the request, not once per row, and events inside still have it as their parent.
#[tokio::test]
async fn reading_rows_on_mariadb_does_not_enter_the_span_at_each_row() {
    use tracing::Instrument;
    use tracing_subscriber::layer::SubscriberExt;
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        eprintln!("no test MariaDB (OPENKEEL_TEST_MYSQL_URL): nothing to check");
        return;
    };
    let db = Database::connect(guard.url()).await.unwrap();
    manage::upgrade(&db).await.unwrap();
    for i in 0..60 {
        let c = Cluster {
            name: Some(format!("c{i}")),
            project_id: Some("p1".into()),
            ..Cluster::default()
        };
        cluster::create(&db, &c).await.unwrap();
    }
    let enters = Arc::new(AtomicU64::new(0));
    let subscriber = tracing_subscriber::registry().with(CountEnters(enters.clone()));
    let _default = tracing::subscriber::set_default(subscriber);
    let scope = Scope::project("p1");
    let listed = cluster::list(&db, &scope, &Default::default(), &openkeel_db::Page::all())
        .instrument(tracing::info_span!("request"))
        .await
        .unwrap();
    assert_eq!(listed.len(), 60);
    let enters = enters.load(Ordering::SeqCst);
    assert!(
        enters < 30,
        "spans entered while 60 rows were read: {enters} (sqlx's own: more than 120)"
    );
    db.close().await;
}
