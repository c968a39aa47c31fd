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
//! | `OPENKEEL_TEST_KEYSTONE_URL` / `_ACCOUNTS` / `_CLOUDS` | the test Keystone 30.0.0 (`…/v3`), its accounts file (users, passwords, project ids) and a `clouds.yaml` ([`keystone`]) |
//! | `OPENKEEL_TEST_KUBECONFIG` | kubeconfig of the real kube-apiserver with the Cluster API core manager and the CAPI/CAPO CRDs (`tests/services/kapi.sh`, [`kapi`]) |
//!
//! When a variable is missing a test calls [`require`], which skips with a message on a
//! developer's machine but **panics when `CI=true`**: in CI a missing service is a failure,
//! never a silent skip.

pub mod capi_standin;
pub mod kapi;
pub mod magnum;
pub mod standin;
pub mod tap;

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

/// The test RabbitMQ's AMQPS listener, which requires a client certificate:
/// (`amqp://…@localhost:<port>/%2f`, the directory with `ca.pem`, `client.pem` and
/// `client.key`), or `None` outside CI when it is missing.
pub fn rabbit_tls() -> Option<(String, PathBuf)> {
    let url = require("OPENKEEL_TEST_RABBIT_TLS_URL", "RabbitMQ over TLS")?;
    let dir = require(
        "OPENKEEL_TEST_RABBIT_TLS_DIR",
        "the test RabbitMQ's TLS files",
    )?;
    Some((url, PathBuf::from(dir)))
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

/// Where tests/run.sh installs magnum-cluster-api, the oracle of the Cluster API driver's
/// golden tests: beside the venv's site-packages, never in it, so that the real Magnum
/// services of the other tests do not load its drivers (tests/python/requirements-capi.txt).
/// Put it on `PYTHONPATH` of a probe; the golden scripts add it to `sys.path` themselves.
pub fn capi_site(venv: &std::path::Path) -> PathBuf {
    venv.join("capi-site")
}

/// A program inside the test venv's `bin/`.
pub fn venv_bin(name: &str) -> Option<PathBuf> {
    venv().map(|v| v.join("bin").join(name))
}

/// A command for a helper program the tests start (a Python helper, the `openstack` client,
/// Magnum's own services), in a process group of its own.
///
/// A test must not depend on how its runner was started: oslo.messaging's queue manager
/// (`[oslo_messaging_rabbit] use_queue_manager`) reads `/proc/<process group>/stat`
/// (`oslo_messaging/_drivers/amqpdriver.py`, `QManager.__init__`), and a helper that inherits
/// the runner's process group fails with `FileNotFoundError` when that group's leader has
/// exited (`.ci/run` started as a background job of a shell that has returned). A group of its
/// own makes the helper its own leader, whatever started the tests.
pub fn helper(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.process_group(0);
    cmd
}

/// [`helper`] for a blocking caller: a `std::process::Command` in a process group of its own.
pub fn helper_blocking(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(program);
    cmd.process_group(0);
    cmd
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

/// `rabbitmqctl <args>` against the test RabbitMQ node (`tests/services/rabbitctl.sh`), e.g.
/// `stop_app` / `start_app` to take the broker away and bring it back.
pub fn rabbitctl(args: &[&str]) -> Result<(), String> {
    let script = workspace_root().join("tests/services/rabbitctl.sh");
    let out = std::process::Command::new(&script)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "rabbitmqctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Starts the test broker's application again when dropped, however a test that stopped it
/// ends.
pub struct BrokerBack;

impl Drop for BrokerBack {
    fn drop(&mut self) {
        if let Err(e) = rabbitctl(&["start_app"]) {
            eprintln!("could not start the test broker again: {e}");
        }
    }
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

/// The test Keystone (`tests/services/keystone.sh`): its URL and the provisioned accounts.
#[derive(Debug, Clone)]
pub struct Keystone {
    /// `http://127.0.0.1:<port>/v3`.
    pub url: String,
    pub addr: std::net::SocketAddr,
    /// `clouds.yaml` with one cloud per user.
    pub clouds_yaml: Option<PathBuf>,
    accounts: serde_json::Value,
}

/// The test Keystone, or `None` outside CI when it is not running (panics in CI).
pub fn keystone() -> Option<Keystone> {
    let path = require("OPENKEEL_TEST_KEYSTONE_ACCOUNTS", "Keystone")?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("OPENKEEL_TEST_KEYSTONE_ACCOUNTS={path}: {e}"));
    let accounts: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let url = std::env::var("OPENKEEL_TEST_KEYSTONE_URL")
        .ok()
        .or_else(|| accounts["auth_url"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("{path}: no auth_url"));
    let hostport = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let addr = hostport
        .parse()
        .unwrap_or_else(|e| panic!("Keystone URL {url}: {e}"));
    Some(Keystone {
        url,
        addr,
        clouds_yaml: std::env::var("OPENKEEL_TEST_KEYSTONE_CLOUDS")
            .ok()
            .map(PathBuf::from),
        accounts,
    })
}

impl Keystone {
    fn user(&self, name: &str) -> &serde_json::Value {
        let u = &self.accounts["users"][name];
        assert!(u.is_object(), "no Keystone test user {name}");
        u
    }

    pub fn password(&self, user: &str) -> String {
        self.user(user)["password"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn user_id(&self, user: &str) -> String {
        self.user(user)["id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The project the user is a member of.
    pub fn project_of(&self, user: &str) -> String {
        self.user(user)["project"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn project_id(&self, project: &str) -> String {
        self.accounts["project_ids"][project]
            .as_str()
            .unwrap_or_else(|| panic!("no Keystone test project {project}"))
            .to_string()
    }

    /// Path part of the URL (`/v3`).
    fn path(&self, rest: &str) -> String {
        let base = self.url.trim_start_matches("http://");
        let p = base.find('/').map(|i| &base[i..]).unwrap_or("");
        format!("{}{rest}", p.trim_end_matches('/'))
    }

    /// A project-scoped token for `user` (password auth, scoped to the user's project).
    pub async fn token(&self, user: &str) -> String {
        self.token_scoped(user, Some(&self.project_of(user))).await
    }

    /// A token for `user`, scoped to `project` by name (or unscoped).
    pub async fn token_scoped(&self, user: &str, project: Option<&str>) -> String {
        self.login(user, project).await.0
    }

    /// A token for `user` and Keystone's token body (`{"token": {...}}`, without catalogue).
    pub async fn login(&self, user: &str, project: Option<&str>) -> (String, serde_json::Value) {
        let mut auth = serde_json::json!({"identity": {"methods": ["password"], "password": {
            "user": {"name": user, "domain": {"id": "default"}, "password": self.password(user)}}}});
        if let Some(p) = project {
            auth["scope"] =
                serde_json::json!({"project": {"name": p, "domain": {"id": "default"}}});
        }
        let body = serde_json::json!({ "auth": auth }).to_string();
        let resp = http(
            self.addr,
            "POST",
            &self.path("/auth/tokens?nocatalog"),
            &[("Content-Type", "application/json")],
            Some(body.as_bytes()),
        )
        .await
        .unwrap_or_else(|e| panic!("Keystone at {}: {e}", self.url));
        assert_eq!(resp.status, 201, "token for {user}: {}", resp.text());
        let token = resp
            .header("x-subject-token")
            .unwrap_or_else(|| panic!("no X-Subject-Token for {user}"))
            .to_string();
        let body = serde_json::from_slice(&resp.body).unwrap_or(serde_json::Value::Null);
        (token, body)
    }

    /// Revoke `token` (with an admin token).
    pub async fn revoke(&self, token: &str) {
        let admin = self.token("admin").await;
        let resp = http(
            self.addr,
            "DELETE",
            &self.path("/auth/tokens"),
            &[("X-Auth-Token", &admin), ("X-Subject-Token", token)],
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("Keystone at {}: {e}", self.url));
        assert_eq!(resp.status, 204, "revoke: {}", resp.text());
    }
}

impl Keystone {
    /// One request to Keystone with an admin token; `path` is below `/v3`.
    pub async fn admin_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> RawResponse {
        let admin = self.token("admin").await;
        let text = body.map(|b| b.to_string());
        let mut h = vec![("X-Auth-Token", admin.as_str())];
        if text.is_some() {
            h.push(("Content-Type", "application/json"));
        }
        http(
            self.addr,
            method,
            &self.path(path),
            &h,
            text.as_deref().map(str::as_bytes),
        )
        .await
        .unwrap_or_else(|e| panic!("Keystone at {}: {e}", self.url))
    }

    /// Register `url` as the `container-infra` endpoint (all three interfaces; and Keystone as
    /// its `identity`) of a new region of its own, so that a client configured with that region finds this test's
    /// server in the catalogue without disturbing other tests. Returns the region id.
    pub async fn register_container_infra(&self, url: &str) -> String {
        let region = format!("test-{}", uuid::Uuid::new_v4().simple());
        let r = self
            .admin_request(
                "POST",
                "/regions",
                Some(&serde_json::json!({"region": {"id": region}})),
            )
            .await;
        assert_eq!(r.status, 201, "create region: {}", r.text());
        let r = self
            .admin_request("GET", "/services?type=container-infra", None)
            .await;
        let services: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let service_id = services["services"][0]["id"]
            .as_str()
            .unwrap_or_else(|| {
                panic!(
                    "no container-infra service in the test Keystone: {}",
                    r.text()
                )
            })
            .to_string();
        let r = self
            .admin_request("GET", "/services?type=identity", None)
            .await;
        let services: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let identity_id = services["services"][0]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no identity service in the test Keystone: {}", r.text()))
            .to_string();
        // Keystone itself is listed in the region too, for clients that find the identity
        // service in their region's catalogue (gophercloud).
        for (service, endpoint) in [(&service_id, url), (&identity_id, self.url.as_str())] {
            for interface in ["public", "internal", "admin"] {
                let r = self
                    .admin_request(
                        "POST",
                        "/endpoints",
                        Some(&serde_json::json!({"endpoint": {"service_id": service,
                            "interface": interface, "url": endpoint, "region_id": region}})),
                    )
                    .await;
                assert_eq!(r.status, 201, "create endpoint: {}", r.text());
            }
        }
        region
    }

    /// Remove a region made by [`Keystone::register_container_infra`] and its endpoints.
    pub async fn unregister_region(&self, region: &str) {
        let r = self
            .admin_request("GET", &format!("/endpoints?region_id={region}"), None)
            .await;
        let eps: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        for ep in eps["endpoints"].as_array().cloned().unwrap_or_default() {
            if let Some(id) = ep["id"].as_str() {
                self.admin_request("DELETE", &format!("/endpoints/{id}"), None)
                    .await;
            }
        }
        self.admin_request("DELETE", &format!("/regions/{region}"), None)
            .await;
    }

    /// A `clouds.yaml` text with one cloud per user, all in `region`.
    pub fn clouds_yaml_for(&self, region: &str) -> String {
        let mut out = String::from("clouds:\n");
        if let Some(users) = self.accounts["users"].as_object() {
            for (name, u) in users {
                out.push_str(&format!(
                    "  {name}:\n    auth:\n      auth_url: {url}\n      username: {name}\n      password: {pw}\n      user_domain_name: Default\n      project_name: {project}\n      project_domain_name: Default\n    region_name: {region}\n    identity_api_version: 3\n",
                    url = self.url,
                    pw = u["password"].as_str().unwrap_or_default(),
                    project = u["project"].as_str().unwrap_or_default(),
                ));
            }
        }
        out
    }
}
