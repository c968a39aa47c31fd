//! Test support shared by OpenKeel's integration and end-to-end tests.
//!
//! The README's test command (`tests/run.sh`) installs and starts the real services the
//! tests need and tells the tests where they are through environment variables:
//!
//! | variable | what |
//! |---|---|
//! | `OPENKEEL_TEST_MYSQL_URL` | admin URL of a running MariaDB, e.g. `mysql://root:pw@127.0.0.1:13306` (no database part) |
//! | `OPENKEEL_TEST_RABBIT_URL` | `amqp://user:pass@127.0.0.1:15672/%2f` of a running RabbitMQ |
//! | `OPENKEEL_TEST_BARBICAN_URL` | `http://127.0.0.1:29311` of the real Barbican API (`tests/services/barbican.sh`, unauthenticated-context pipeline) |
//! | `OPENKEEL_TEST_VENV` | a Python venv with the test helpers (python-magnumclient, python-openstackclient, oslo.policy, ...) |
//!
//! When a variable is missing a test calls [`require`], which skips with a message on a
//! developer's machine but **panics when `CI=true`**: in CI a missing service is a failure,
//! never a silent skip.

pub mod standin;

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

/// URL of the test Barbican API (`tests/services/barbican.sh`), or `None` outside CI when it
/// is missing.
pub fn barbican_url() -> Option<String> {
    require("OPENKEEL_TEST_BARBICAN_URL", "Barbican").map(|u| u.trim_end_matches('/').to_string())
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

/// A raw HTTP/1.1 response, as the wire carried it.
#[derive(Debug, Clone)]
pub struct RawResponse {
    pub status: u16,
    /// Header names lower-cased, in wire order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    /// The first value of a header (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Send one HTTP/1.1 request with `Connection: close` and read the whole response. A tiny
/// client on purpose: the tests see exactly the bytes the server wrote.
pub async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> std::io::Result<RawResponse> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        req.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).await?;
    if let Some(b) = body {
        stream.write_all(b).await?;
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {status_line:?}")))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if method == "HEAD" {
        body.clear();
    }
    Ok(RawResponse {
        status,
        headers,
        body,
    })
}
