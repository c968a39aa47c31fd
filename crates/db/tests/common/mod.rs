//! Shared helpers: every test body runs on SQLite in memory and in a file (always) and
//! MariaDB (when `OPENKEEL_TEST_MYSQL_URL` is set; required in CI). A SQLite file is read
//! through the read connections of `openkeel_db`'s `reader` module, stepped on the caller's
//! thread; SQLite in memory only through sqlx's pool.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use openkeel_db::{manage, Database};
use openkeel_tests::MysqlDatabase;

/// A migrated, empty database of one backend.
pub struct TestDb {
    pub db: Database,
    pub name: &'static str,
    pub guard: Option<MysqlDatabase>,
    pub dir: Option<tempfile::TempDir>,
}

/// Empty databases (no schema): SQLite in memory and in a file, plus a fresh MariaDB database
/// when available.
pub async fn empty_backends() -> Vec<TestDb> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite:///{}", dir.path().join("magnum.db").display());
    let mut out = vec![
        TestDb {
            db: Database::in_memory().await.expect("sqlite in memory"),
            name: "sqlite",
            guard: None,
            dir: None,
        },
        TestDb {
            db: Database::connect(&url).await.expect("sqlite file"),
            name: "sqlite-file",
            guard: None,
            dir: Some(dir),
        },
    ];
    if let Some(guard) = openkeel_tests::fresh_mysql_database().await {
        let db = Database::connect(guard.url())
            .await
            .expect("connect to the test MariaDB");
        out.push(TestDb {
            db,
            name: "mariadb",
            guard: Some(guard),
            dir: None,
        });
    }
    out
}

/// Databases with the Magnum schema at head.
pub async fn backends() -> Vec<TestDb> {
    let out = empty_backends().await;
    for t in &out {
        manage::upgrade(&t.db).await.expect("upgrade");
    }
    out
}

/// Run `$body` (an async block using `$db: &Database` and `$backend: &str`) on every backend.
#[macro_export]
macro_rules! on_every_backend {
    (|$db:ident, $backend:ident| $body:block) => {{
        for t in common::backends().await {
            let $db: &openkeel_db::Database = &t.db;
            let $backend: &str = t.name;
            eprintln!("-- backend {}", $backend);
            $body
            t.db.close().await;
        }
    }};
}

/// The first column of the first row of `sql`, as text (NULL → None).
pub async fn raw_text(db: &Database, sql: &str) -> Option<String> {
    use sqlx::Row;
    match db.pool() {
        openkeel_db::Pool::MySql(p) => sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(p)
            .await
            .expect("raw query")
            .try_get::<Option<String>, _>(0)
            .expect("text"),
        openkeel_db::Pool::Sqlite(p) => sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(p)
            .await
            .expect("raw query")
            .try_get::<Option<String>, _>(0)
            .expect("text"),
    }
}

/// Execute raw SQL.
pub async fn raw_exec(db: &Database, sql: &str) {
    match db.pool() {
        openkeel_db::Pool::MySql(p) => {
            sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
                .execute(p)
                .await
                .expect("raw exec");
        }
        openkeel_db::Pool::Sqlite(p) => {
            sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
                .execute(p)
                .await
                .expect("raw exec");
        }
    }
}
