//! `openkeel-db-manage` as operators run it: on SQLite and MariaDB, and on a database that
//! the real `magnum-db-manage` 23.0.0 (from the test venv) migrated.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_openkeel-db-manage");

fn run(url: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .arg("--database-url")
        .arg(url)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run openkeel-db-manage");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn lifecycle(url: &str) {
    let (rc, out) = run(url, &["version"]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("None"), "{out}");
    let (rc, out) = run(url, &["upgrade"]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("b3e1cf4a2d5e"), "{out}");
    let (rc, out) = run(url, &["version"]);
    assert_eq!(
        (rc, out.trim().ends_with("b3e1cf4a2d5e")),
        (0, true),
        "{out}"
    );
    // Idempotent.
    let (rc, out) = run(url, &["upgrade"]);
    assert_eq!(rc, 0, "{out}");
    // An older Magnum revision: named, refused, nothing touched.
    let (rc, out) = run(url, &["stamp", "c0f832afc4fd"]);
    assert_eq!(rc, 0, "{out}");
    let (rc, out) = run(url, &["upgrade"]);
    assert_ne!(rc, 0, "{out}");
    assert!(
        out.contains("2 revision(s) missing: d7e6a4d39fe4, b3e1cf4a2d5e"),
        "{out}"
    );
    let (_, out) = run(url, &["version"]);
    assert!(out.trim().ends_with("c0f832afc4fd"), "{out}");
    let (rc, out) = run(url, &["stamp", "not-a-revision"]);
    assert_ne!(rc, 0, "{out}");
}

#[test]
fn sqlite_lifecycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    lifecycle(&format!("sqlite:///{}/m.sqlite", dir.path().display()));
}

#[tokio::test]
async fn mariadb_lifecycle() {
    let Some(db) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let url = db.url().to_string();
    tokio::task::spawn_blocking(move || lifecycle(&url))
        .await
        .expect("join");
}

async fn show_create_tables(url: &str) -> Vec<(String, String)> {
    use sqlx::{Connection, Row};
    let mut c = sqlx::MySqlConnection::connect(url).await.expect("connect");
    let mut out = Vec::new();
    for t in [
        "alembic_version",
        "cluster",
        "cluster_template",
        "federation",
        "magnum_service",
        "nodegroup",
        "quotas",
        "x509keypair",
    ] {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SHOW CREATE TABLE `{t}`")))
            .fetch_one(&mut c)
            .await
            .expect(t);
        out.push((t.to_string(), row.get::<String, _>(1)));
    }
    out
}

/// The real Magnum 23.0.0 migrates a database; OpenKeel recognises it and changes nothing.
#[tokio::test]
async fn database_migrated_by_real_magnum_is_left_unchanged() {
    let Some(magnum_db_manage) = openkeel_tests::venv_bin("magnum-db-manage") else {
        return;
    };
    let Some(db) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    // mysql://user:pass@host:port/name → SQLAlchemy's PyMySQL URL.
    let sa_url = db.url().replacen("mysql://", "mysql+pymysql://", 1) + "?charset=utf8";
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("magnum.conf");
    std::fs::write(&conf, format!("[database]\nconnection = {sa_url}\n")).expect("conf");
    let out = openkeel_tests::helper_blocking(&magnum_db_manage)
        .arg("--config-file")
        .arg(&conf)
        .arg("upgrade")
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .expect("run magnum-db-manage");
    assert!(
        out.status.success(),
        "magnum-db-manage upgrade failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let before = show_create_tables(db.url()).await;
    let url = db.url().to_string();
    let (rc, text) = tokio::task::spawn_blocking(move || run(&url, &["version"]))
        .await
        .expect("join");
    assert_eq!(
        (rc, text.trim().ends_with("b3e1cf4a2d5e")),
        (0, true),
        "{text}"
    );
    let url = db.url().to_string();
    let (rc, text) = tokio::task::spawn_blocking(move || run(&url, &["upgrade"]))
        .await
        .expect("join");
    assert_eq!(rc, 0, "{text}");
    let after = show_create_tables(db.url()).await;
    assert_eq!(before, after);
    // And OpenKeel's own schema is the same as Magnum's, table by table.
    let Some(ours) = openkeel_tests::fresh_mysql_database().await else {
        return;
    };
    let url = ours.url().to_string();
    let (rc, text) = tokio::task::spawn_blocking(move || run(&url, &["upgrade"]))
        .await
        .expect("join");
    assert_eq!(rc, 0, "{text}");
    let mine = show_create_tables(ours.url()).await;
    for ((t, theirs), (_, m)) in before.iter().zip(mine.iter()) {
        assert_eq!(theirs, m, "table {t} differs from Magnum's");
    }
}
