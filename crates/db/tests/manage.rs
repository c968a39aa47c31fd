//! `db-manage` behaviour and the schema on both backends; on MariaDB the schema must equal
//! Magnum 23.0.0's migrated schema (`SHOW CREATE TABLE`, spec data in
//! `tests/data/schema-mariadb.sql`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use openkeel_core::objects::Cluster;
use openkeel_db::manage::{self, UpgradeOutcome, HEAD};
use openkeel_db::{cluster, Database, DbError, Page, Pool, Scope};
use sqlx::Row;

const SPEC_SCHEMA: &str = include_str!("data/schema-mariadb.sql");

/// The `SHOW CREATE TABLE` statements of the spec dump (part 2), by table name.
fn spec_show_create() -> Vec<(String, String)> {
    let part2 = SPEC_SCHEMA
        .split("Part 2: SHOW CREATE TABLE")
        .nth(1)
        .expect("part 2 of the dump");
    let mut out = Vec::new();
    let mut lines = part2.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("-- SHOW CREATE TABLE `") {
            let name = rest.trim_end_matches('`').to_string();
            let mut stmt = Vec::new();
            for l in lines.by_ref() {
                if l == ";" {
                    break;
                }
                stmt.push(l);
            }
            out.push((name, normalise(&stmt.join("\n"))));
        }
    }
    out
}

/// Drop the AUTO_INCREMENT=n table option (present only once rows exist).
fn normalise(stmt: &str) -> String {
    let re_free: String = stmt
        .split(' ')
        .filter(|w| !w.starts_with("AUTO_INCREMENT="))
        .collect::<Vec<_>>()
        .join(" ");
    re_free.trim().to_string()
}

async fn mysql_show_create(db: &Database, table: &str) -> String {
    let Pool::MySql(pool) = db.pool() else {
        panic!("not MySQL")
    };
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SHOW CREATE TABLE `{table}`")))
        .fetch_one(pool)
        .await
        .expect("show create table");
    normalise(&row.try_get::<String, _>(1).expect("statement"))
}

async fn table_dump(db: &Database) -> Vec<String> {
    // A cheap fingerprint of the schema and data: table names and row counts.
    let mut out = Vec::new();
    for t in manage::TABLES {
        let sql = format!("SELECT COUNT(*) FROM `{t}`");
        let n: i64 = match db.pool() {
            Pool::MySql(p) => sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_one(p)
                .await
                .expect("count")
                .get(0),
            Pool::Sqlite(p) => sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_one(p)
                .await
                .expect("count")
                .get(0),
        };
        out.push(format!("{t}={n}"));
    }
    out
}

#[tokio::test]
async fn schema_equals_magnum_on_mariadb() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let db = Database::connect(guard.url()).await.expect("connect");
    assert_eq!(
        manage::upgrade(&db).await.expect("upgrade"),
        UpgradeOutcome::Created
    );
    let spec = spec_show_create();
    assert_eq!(spec.len(), 8, "8 tables in the spec dump");
    let Pool::MySql(pool) = db.pool() else {
        panic!()
    };
    let mut tables: Vec<String> = sqlx::query("SHOW TABLES")
        .fetch_all(pool)
        .await
        .expect("show tables")
        .iter()
        .map(|r| r.try_get::<String, _>(0).expect("name"))
        .collect();
    tables.sort();
    let mut spec_names: Vec<String> = spec.iter().map(|(n, _)| n.clone()).collect();
    spec_names.sort();
    assert_eq!(tables, spec_names);
    for (table, expected) in &spec {
        let actual = mysql_show_create(&db, table).await;
        assert_eq!(&actual, expected, "SHOW CREATE TABLE `{table}` differs");
    }
    // The AUTO_INCREMENT normalisation also holds once rows exist.
    cluster::create(&db, &Cluster::default())
        .await
        .expect("create");
    let (_, expected) = spec.iter().find(|(n, _)| n == "cluster").expect("cluster");
    assert_eq!(&mysql_show_create(&db, "cluster").await, expected);
}

#[tokio::test]
async fn upgrade_creates_then_is_idempotent() {
    for t in common::empty_backends().await {
        let db = &t.db;
        assert_eq!(
            manage::version(db).await.expect("version"),
            None,
            "{}",
            t.name
        );
        assert_eq!(
            manage::upgrade(db).await.expect("upgrade"),
            UpgradeOutcome::Created
        );
        assert_eq!(
            manage::version(db).await.expect("version").as_deref(),
            Some(HEAD)
        );
        manage::check_current(db).await.expect("at head");
        let c = cluster::create(
            db,
            &Cluster {
                name: Some("keep".into()),
                ..Cluster::default()
            },
        )
        .await
        .expect("create");
        let before = table_dump(db).await;
        assert_eq!(
            manage::upgrade(db).await.expect("second upgrade"),
            UpgradeOutcome::AlreadyAtHead
        );
        assert_eq!(table_dump(db).await, before, "{}", t.name);
        let again = cluster::get_by_id(db, &Scope::admin_all_tenants(), i64::from(c.id))
            .await
            .expect("still there");
        assert_eq!(again, c);
    }
}

#[tokio::test]
async fn upgrade_refuses_an_older_magnum_revision() {
    for t in common::backends().await {
        let db = &t.db;
        cluster::create(
            db,
            &Cluster {
                name: Some("old".into()),
                ..Cluster::default()
            },
        )
        .await
        .expect("create");
        assert_eq!(
            manage::stamp(db, "c0f832afc4fd").await.expect("stamp"),
            Some("c0f832afc4fd")
        );
        let before = table_dump(db).await;
        let err = manage::upgrade(db).await.expect_err("must refuse");
        match &err {
            DbError::SchemaOutdated {
                current,
                missing,
                head,
            } => {
                assert_eq!(current, "c0f832afc4fd");
                assert_eq!(missing, &vec!["d7e6a4d39fe4", "b3e1cf4a2d5e"]);
                assert_eq!(*head, HEAD);
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("d7e6a4d39fe4, b3e1cf4a2d5e"), "{msg}");
        assert!(msg.contains("magnum-db-manage upgrade"), "{msg}");
        // Nothing changed: revision, tables, rows.
        assert_eq!(
            manage::version(db).await.expect("v").as_deref(),
            Some("c0f832afc4fd")
        );
        assert_eq!(table_dump(db).await, before);
        assert!(matches!(
            manage::check_current(db).await,
            Err(DbError::SchemaOutdated { .. })
        ));
        let listed = cluster::list(
            db,
            &Scope::admin_all_tenants(),
            &Default::default(),
            &Page::all(),
        )
        .await
        .expect("list");
        assert_eq!(listed.len(), 1, "{}", t.name);
        // The first revision: 76 missing.
        manage::stamp(db, "2581ebaf0cb2").await.expect("stamp");
        match manage::upgrade(db).await {
            Err(DbError::SchemaOutdated { missing, .. }) => assert_eq!(missing.len(), 76),
            other => panic!("unexpected {other:?}"),
        }
        // Back to head: accepted again.
        assert_eq!(manage::stamp(db, "head").await.expect("stamp"), Some(HEAD));
        assert_eq!(
            manage::upgrade(db).await.expect("ok"),
            UpgradeOutcome::AlreadyAtHead
        );
    }
}

#[tokio::test]
async fn unknown_revision_and_bad_states() {
    for t in common::backends().await {
        let db = &t.db;
        // An unknown revision in the table (written by something else).
        match db.pool() {
            Pool::MySql(p) => {
                sqlx::query("UPDATE alembic_version SET version_num = 'feedfacecafe'")
                    .execute(p)
                    .await
                    .expect("update");
            }
            Pool::Sqlite(p) => {
                sqlx::query("UPDATE alembic_version SET version_num = 'feedfacecafe'")
                    .execute(p)
                    .await
                    .expect("update");
            }
        }
        assert!(matches!(
            manage::upgrade(db).await,
            Err(DbError::UnknownRevision(r)) if r == "feedfacecafe"
        ));
        assert_eq!(
            manage::version(db).await.expect("v").as_deref(),
            Some("feedfacecafe")
        );
        // stamp validates its argument.
        assert!(matches!(
            manage::stamp(db, "feedfacecafe").await,
            Err(DbError::InvalidRevision(_))
        ));
        // base clears the revision: tables without revision are refused by upgrade.
        assert_eq!(manage::stamp(db, "base").await.expect("base"), None);
        assert_eq!(manage::version(db).await.expect("v"), None);
        assert!(matches!(
            manage::upgrade(db).await,
            Err(DbError::SchemaState(_))
        ));
        manage::stamp(db, "b3e1").await.expect("prefix");
        assert_eq!(manage::version(db).await.expect("v").as_deref(), Some(HEAD));
    }
}

#[tokio::test]
async fn stamp_creates_the_version_table() {
    for t in common::empty_backends().await {
        manage::stamp(&t.db, "d7e6a4d39fe4").await.expect("stamp");
        assert_eq!(
            manage::version(&t.db).await.expect("v").as_deref(),
            Some("d7e6a4d39fe4"),
            "{}",
            t.name
        );
    }
}

#[tokio::test]
async fn mysql_session_settings() {
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    // Accept the SQLAlchemy form of the URL, as magnum.conf holds it.
    let sa_url = guard.url().replacen("mysql://", "mysql+pymysql://", 1) + "?charset=utf8";
    let db = Database::connect(&sa_url).await.expect("connect");
    let Pool::MySql(pool) = db.pool() else {
        panic!()
    };
    let row = sqlx::query("SELECT @@SESSION.sql_mode, @@SESSION.character_set_client")
        .fetch_one(pool)
        .await
        .expect("select");
    let mode: String = row.get(0);
    let charset: String = row.get(1);
    assert!(mode.contains("TRADITIONAL"), "{mode}");
    assert!(charset.starts_with("utf8"), "{charset}");
    // TRADITIONAL: too long values are errors, not truncations.
    manage::upgrade(&db).await.expect("upgrade");
    let long = Cluster {
        status_reason: None,
        name: Some("x".repeat(300)),
        ..Cluster::default()
    };
    assert!(cluster::create(&db, &long).await.is_err());
    // mysql_sql_mode = "" keeps the server's mode.
    let db2 = Database::connect_opts(
        guard.url(),
        &openkeel_db::ConnectOptions {
            mysql_sql_mode: Some(String::new()),
            ..Default::default()
        },
    )
    .await
    .expect("connect");
    let Pool::MySql(pool2) = db2.pool() else {
        panic!()
    };
    let mode: String = sqlx::query("SELECT @@SESSION.sql_mode")
        .fetch_one(pool2)
        .await
        .expect("select")
        .get(0);
    assert!(!mode.contains("TRADITIONAL"), "{mode}");
    assert!(Database::connect_opts(
        guard.url(),
        &openkeel_db::ConnectOptions {
            mysql_sql_mode: Some("ANSI'; DROP".into()),
            ..Default::default()
        },
    )
    .await
    .is_err());
    db2.close().await;
    db.close().await;
}

/// A MariaDB that goes away (its port refuses connections, as while it restarts) and comes
/// back: a read that waited through the outage gets its connection within about a second of
/// the server's return, not after sqlx's back-off has grown to a fifth of `pool_timeout`
/// (~5 s after a 10 s outage in the MariaDB drill, docs/reliability.md; ~4 s here without
/// the checkout slices of `Database`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_waiting_through_a_mariadb_outage_proceeds_soon_after_it_ends() {
    use std::time::{Duration, Instant};
    let Some(guard) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let direct = Database::connect(guard.url()).await.expect("connect");
    manage::upgrade(&direct).await.expect("upgrade");
    let (head, rest) = guard.url().rsplit_once('@').unwrap();
    let (hostport, path) = rest.split_once('/').unwrap();
    let target = tokio::net::lookup_host(hostport)
        .await
        .unwrap()
        .next()
        .unwrap();
    // A proxy whose listening socket is closed during the outage: connections are refused.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = |listener: tokio::net::TcpListener| {
        tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                conns.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        })
    };
    let server = serve(listener);
    let db = Database::connect(&format!("{head}@{addr}/{path}"))
        .await
        .expect("connect through the proxy");
    openkeel_db::magnum_service::list(&db, None, &Page::all())
        .await
        .expect("a read before the outage");

    // The outage: the proxy's sockets (the pool's connections with them) and its port go.
    server.abort();
    let _ = server.await;
    let read = {
        let db = db.clone();
        tokio::spawn(
            async move { openkeel_db::magnum_service::list(&db, None, &Page::all()).await },
        )
    };
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(
        !read.is_finished(),
        "the read gave up during the outage: {:?}",
        read.await
    );

    // Back on the same port.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind(addr).unwrap();
    let _server = serve(socket.listen(128).unwrap());
    let back = Instant::now();
    read.await
        .unwrap()
        .expect("the read once the database is back");
    let took = back.elapsed();
    assert!(
        took < Duration::from_millis(2500),
        "the read went on {took:?} after the database was back"
    );
}
