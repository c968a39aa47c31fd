//! Test support shared by OpenKeel's integration and end-to-end tests.
//!
//! The README's test command (`tests/run.sh`) installs and starts the real services the
//! tests need and tells the tests where they are through environment variables:
//!
//! | variable | what |
//! |---|---|
//! | `OPENKEEL_TEST_MYSQL_URL` | admin URL of a running MariaDB, e.g. `mysql://root:pw@127.0.0.1:13306` (no database part) |
//! | `OPENKEEL_TEST_RABBIT_URL` | `amqp://user:pass@127.0.0.1:15672/%2f` of a running RabbitMQ |
//! | `OPENKEEL_TEST_VENV` | a Python venv with the test helpers (python-magnumclient, python-openstackclient, oslo.policy, ...) |
//!
//! When a variable is missing a test calls [`require`], which skips with a message on a
//! developer's machine but **panics when `CI=true`**: in CI a missing service is a failure,
//! never a silent skip.

use std::path::PathBuf;

/// True when running under CI (`CI=true`, as most CI systems and `.ci/run` set it).
pub fn in_ci() -> bool {
    std::env::var("CI")
        .map(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
        .unwrap_or(false)
}

/// Look up the service named by `var`. Returns `None` (after printing why) when it is missing
/// outside CI, and panics when it is missing in CI.
pub fn require(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Some(v),
        _ => {
            if in_ci() {
                panic!("{what} is required in CI but {var} is not set: run the tests with tests/run.sh");
            }
            eprintln!("SKIPPED (not in CI): {what} not available, {var} is not set; tests/run.sh sets it up");
            None
        }
    }
}

/// Admin URL of the test MariaDB (no database part), or `None` outside CI when it is missing.
pub fn mysql_admin_url() -> Option<String> {
    require("OPENKEEL_TEST_MYSQL_URL", "MariaDB").map(|u| u.trim_end_matches('/').to_string())
}

/// URL of the test RabbitMQ, or `None` outside CI when it is missing.
pub fn rabbit_url() -> Option<String> {
    require("OPENKEEL_TEST_RABBIT_URL", "RabbitMQ")
}

/// The Python venv with the test helpers, or `None` outside CI when it is missing.
pub fn venv() -> Option<PathBuf> {
    require("OPENKEEL_TEST_VENV", "the Python test venv").map(PathBuf::from)
}

/// A program inside the test venv's `bin/`.
pub fn venv_bin(name: &str) -> Option<PathBuf> {
    venv().map(|v| v.join("bin").join(name))
}

/// A fresh, empty MariaDB database for one test. Dropped when the guard is dropped
/// (best effort, on a separate runtime so it works from inside and outside async tests).
pub struct MysqlDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl MysqlDatabase {
    /// The `mysql://…/<name>` URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for MysqlDatabase {
    fn drop(&mut self) {
        if std::env::var("OPENKEEL_TEST_KEEP_DB").is_ok() {
            return;
        }
        let admin = self.admin_url.clone();
        let name = self.name.clone();
        // Run on a fresh thread with its own runtime: Drop may run inside a tokio runtime.
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                rt.block_on(async move {
                    use sqlx::Connection;
                    if let Ok(mut c) = sqlx::MySqlConnection::connect(&admin).await {
                        let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                            "DROP DATABASE IF EXISTS `{name}`"
                        )))
                        .execute(&mut c)
                        .await;
                    }
                });
            }
        })
        .join();
    }
}

/// Create a fresh empty MariaDB database (default charset utf8mb4, as the spec's observed
/// Magnum setup) and return its guard; `None` outside CI when MariaDB is not available.
pub async fn fresh_mysql_database() -> Option<MysqlDatabase> {
    use sqlx::Connection;
    let admin_url = mysql_admin_url()?;
    let name = format!("okt_{}", uuid::Uuid::new_v4().simple());
    let mut c = sqlx::MySqlConnection::connect(&admin_url)
        .await
        .unwrap_or_else(|e| {
            panic!("cannot connect to the test MariaDB at OPENKEEL_TEST_MYSQL_URL: {e}")
        });
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE `{name}` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    )))
    .execute(&mut c)
    .await
    .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
    let url = format!("{admin_url}/{name}");
    Some(MysqlDatabase {
        admin_url,
        name,
        url,
    })
}

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}
