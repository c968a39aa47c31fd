//! The real Python Magnum 23.0.0 services (`magnum-conductor`, `magnum-api`) of the test venv,
//! started as subprocesses for the interoperability tests, on the test MariaDB and RabbitMQ.
//!
//! * [`MagnumSetup`] renders a `magnum.conf` (and magnum-api's `api-paste.ini`) into a test's
//!   directory: database, `transport_url`, a private `control_exchange` and `[conductor]
//!   topic`, `[DEFAULT] host`, the x509keypair cert manager, Keystone at a stand-in cloud, and
//!   an `[openkeel]` section, so OpenKeel's services can read the **same file** (each side
//!   ignores the other's options).
//! * [`PyService`] is one Python service in its own process group: its output goes to a log
//!   file in the test directory, it is stopped (SIGTERM, then SIGKILL, the whole group: the
//!   conductor forks a worker) when dropped, also while a test panics, and then its log is
//!   printed.
//! * The record-only cluster driver and the noauth paste filter the services load are
//!   OpenKeel's own, in `tests/python/interop` (put on `PYTHONPATH`; its
//!   `openkeel_interop-1.0.dist-info` registers the driver's `magnum.drivers` entry point,
//!   named `simulator` like OpenKeel's simulator driver).
//!
//! Waits are bounded; a service that exits early fails the test with its log.

use crate::tap::admin_channel;
use lapin::options::QueueDeclareOptions;
use lapin::types::FieldTable;
use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where OpenKeel's Python test helpers live (`tests/python/interop`).
pub fn python_helpers_dir() -> PathBuf {
    crate::workspace_root()
        .join("tests")
        .join("python")
        .join("interop")
}

/// A free TCP port on 127.0.0.1 (bound and released; the caller binds it soon after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port on 127.0.0.1: {e}"))
}

/// A short unique name for per-test exchanges and topics.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// The settings one interoperability test shares between the Python and the Rust services.
#[derive(Debug, Clone)]
pub struct MagnumSetup {
    /// The test's directory (configs, logs, state, the driver's record file).
    pub dir: PathBuf,
    /// `mysql://user:pass@host:port/db` of the test database (OpenKeel's form).
    pub db_url: String,
    /// `rabbit://user:pass@host:port/vhost` of the test RabbitMQ.
    pub transport_url: String,
    /// `[DEFAULT] control_exchange` (private per test).
    pub exchange: String,
    /// `[conductor] topic` (private per test: oslo.messaging names the topic queue after the
    /// topic alone, whatever the exchange).
    pub topic: String,
    /// `[DEFAULT] host` of the Python services.
    pub host: String,
    /// Keystone v3 URL (a stand-in cloud's `/identity/v3`).
    pub keystone_url: String,
    /// magnum-api's port.
    pub api_port: u16,
    /// `[openkeel] simulated_cloud` for OpenKeel's services reading the same file.
    pub openkeel_simulated_cloud: bool,
}

impl MagnumSetup {
    /// A setup in `dir` for this database (`mysql://…/<db>`) and RabbitMQ (`amqp://…`).
    pub fn new(dir: &Path, db_url: &str, amqp_url: &str, keystone_url: &str) -> Self {
        MagnumSetup {
            dir: dir.to_path_buf(),
            db_url: db_url.to_string(),
            transport_url: amqp_url.replacen("amqp://", "rabbit://", 1),
            exchange: unique("okt-x"),
            topic: unique("okt-conductor"),
            host: "okt-magnum".to_string(),
            keystone_url: keystone_url.to_string(),
            api_port: free_port(),
            openkeel_simulated_cloud: true,
        }
    }

    /// The SQLAlchemy URL Magnum's oslo.db takes for the test database.
    pub fn sqlalchemy_url(&self) -> String {
        let rest = self
            .db_url
            .strip_prefix("mysql://")
            .unwrap_or_else(|| panic!("not a mysql:// URL: {}", self.db_url));
        format!("mysql+pymysql://{rest}?charset=utf8")
    }

    /// The record file of the Python record-only driver (one JSON line per driver call).
    pub fn record_file(&self) -> PathBuf {
        self.dir.join("driver-calls.jsonl")
    }

    /// The driver calls recorded so far.
    pub fn recorded_calls(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.record_file())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn conf_path(&self) -> PathBuf {
        self.dir.join("magnum.conf")
    }

    pub fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.api_port)
    }

    /// Write `magnum.conf` and `api-paste.ini`; returns the `magnum.conf` path.
    pub fn write(&self) -> PathBuf {
        let d = self.dir.display();
        for sub in ["state", "lock"] {
            std::fs::create_dir_all(self.dir.join(sub))
                .unwrap_or_else(|e| panic!("create {d}/{sub}: {e}"));
        }
        let keystone = &self.keystone_url;
        let conf = format!(
            "# Rendered by openkeel_tests::magnum for one interoperability test.\n\
             [DEFAULT]\n\
             host = {host}\n\
             transport_url = {transport}\n\
             control_exchange = {exchange}\n\
             rpc_response_timeout = 30\n\
             state_path = {d}/state\n\
             debug = {debug}\n\
             graceful_shutdown_timeout = 2\n\
             [api]\n\
             host = 127.0.0.1\n\
             port = {api_port}\n\
             api_paste_config = {d}/api-paste.ini\n\
             workers = 1\n\
             [conductor]\n\
             topic = {topic}\n\
             workers = 1\n\
             [database]\n\
             connection = {db}\n\
             [certificates]\n\
             cert_manager_type = x509keypair\n\
             [oslo_concurrency]\n\
             lock_path = {d}/lock\n\
             [keystone_auth]\n\
             auth_type = password\n\
             auth_url = {keystone}\n\
             username = magnum\n\
             password = magnum-service\n\
             project_name = service\n\
             user_domain_id = default\n\
             project_domain_id = default\n\
             [keystone_authtoken]\n\
             www_authenticate_uri = {keystone}\n\
             [glance_client]\n\
             region_name = RegionOne\n\
             [nova_client]\n\
             region_name = RegionOne\n\
             [neutron_client]\n\
             region_name = RegionOne\n\
             [cinder_client]\n\
             region_name = RegionOne\n\
             [openkeel]\n\
             auth_strategy = noauth\n\
             rpc_transport = rabbit\n\
             enable_simulator_driver = true\n\
             simulated_cloud = {sim}\n\
             status_sync_interval = 1\n",
            host = self.host,
            transport = self.transport_url,
            exchange = self.exchange,
            api_port = self.api_port,
            topic = self.topic,
            db = self.sqlalchemy_url(),
            sim = self.openkeel_simulated_cloud,
            // OPENKEEL_INTEROP_DEBUG=1: the Python services log at DEBUG (their HTTP requests too)
            debug = if std::env::var("OPENKEEL_INTEROP_DEBUG").is_ok_and(|v| v == "1") {
                "True"
            } else {
                "False"
            },
        );
        std::fs::write(self.conf_path(), conf).unwrap_or_else(|e| panic!("write magnum.conf: {e}"));
        // Magnum 23.0.0's pipeline with OpenKeel's noauth filter where authtoken stands.
        let paste = "[composite:main]\n\
             paste.composite_factory = magnum.api:root_app_factory\n\
             /: api\n\
             \n\
             [pipeline:api]\n\
             pipeline = cors http_proxy_to_wsgi request_id osprofiler noauth api_v1\n\
             \n\
             [app:api_v1]\n\
             paste.app_factory = magnum.api.app:app_factory\n\
             \n\
             [filter:osprofiler]\n\
             paste.filter_factory = magnum.common.profiler:WsgiMiddleware.factory\n\
             \n\
             [filter:request_id]\n\
             paste.filter_factory = oslo_middleware:RequestId.factory\n\
             \n\
             [filter:cors]\n\
             paste.filter_factory = oslo_middleware.cors:filter_factory\n\
             oslo_config_project = magnum\n\
             \n\
             [filter:http_proxy_to_wsgi]\n\
             paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory\n\
             oslo_config_project = magnum\n\
             \n\
             [filter:noauth]\n\
             paste.filter_factory = openkeel_interop.noauth:filter_factory\n\
             user_id = okt-admin\n\
             project_id = okt-project\n\
             roles = admin,member,reader\n";
        std::fs::write(self.dir.join("api-paste.ini"), paste)
            .unwrap_or_else(|e| panic!("write api-paste.ini: {e}"));
        self.conf_path()
    }

    /// The environment every Python service of this test runs with.
    fn python_env(&self) -> Vec<(String, String)> {
        vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), self.dir.display().to_string()),
            (
                "PYTHONPATH".into(),
                python_helpers_dir().display().to_string(),
            ),
            ("PYTHONWARNINGS".into(), "ignore".into()),
            (
                "OPENKEEL_INTEROP_RECORD".into(),
                self.record_file().display().to_string(),
            ),
        ]
    }

    /// Start Magnum's `magnum-conductor` (its `magnum.cmd.conductor:main`, through
    /// `openkeel_interop.run`, which also ends the service's process group when the test
    /// process dies) on this configuration and wait (bounded) until it consumes its topic
    /// queue.
    pub async fn start_conductor(&self, venv: &Path) -> PyService {
        let mut svc = PyService::spawn(
            "magnum-conductor",
            &venv.join("bin").join("python"),
            &[
                "-m",
                "openkeel_interop.run",
                "conductor",
                "--config-file",
                &self.conf_path().display().to_string(),
            ],
            &self.python_env(),
            &self.dir,
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if consumers(&self.transport_url, &self.topic).await > 0 {
                return svc;
            }
            svc.assert_running();
            assert!(
                Instant::now() < deadline,
                "magnum-conductor did not consume {} within 60 s:\n{}",
                self.topic,
                svc.log_tail(200)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Start the venv's `magnum-api` on this configuration and wait (bounded) until it answers.
    ///
    /// It runs Magnum's own `magnum.cmd.api:main` through `openkeel_interop.run`, which parses
    /// the configuration before `magnum.conductor.api` is imported: the console script binds
    /// `[conductor] topic` too early and would always send to `magnum-conductor`, where the
    /// conductors of other tests on the same broker listen.
    pub async fn start_api(&self, venv: &Path) -> PyService {
        let mut svc = PyService::spawn(
            "magnum-api",
            &venv.join("bin").join("python"),
            &[
                "-m",
                "openkeel_interop.run",
                "api",
                "--config-file",
                &self.conf_path().display().to_string(),
            ],
            &self.python_env(),
            &self.dir,
        );
        let addr: SocketAddr = SocketAddr::from(([127, 0, 0, 1], self.api_port));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = crate::http(addr, "GET", "/", &[], None).await {
                if r.status == 200 {
                    return svc;
                }
            }
            svc.assert_running();
            assert!(
                Instant::now() < deadline,
                "magnum-api did not answer on {addr} within 60 s:\n{}",
                svc.log_tail(200)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// How many consumers the queue has (0 when it does not exist yet).
pub async fn consumers(transport_url: &str, queue: &str) -> u32 {
    let Ok(ch) = admin_channel(transport_url).await else {
        return 0;
    };
    let q = ch
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await;
    let n = q.map(|q| q.consumer_count()).unwrap_or(0);
    ch.close().await;
    n
}

/// One Python service in its own process group, stopped when dropped.
pub struct PyService {
    pub name: String,
    child: Child,
    log: PathBuf,
}

impl PyService {
    /// Start `program args` in `dir` with exactly `env`, its own process group, output to
    /// `<dir>/<name>.log`.
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        dir: &Path,
    ) -> PyService {
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
        let err = out
            .try_clone()
            .unwrap_or_else(|e| panic!("dup {}: {e}", log.display()));
        let child = crate::helper_blocking(program)
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        PyService {
            name: name.to_string(),
            child,
            log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Panic (with the log) if the service has exited.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "{} exited early ({status}):\n{}",
                self.name,
                self.log_tail(200)
            );
        }
    }

    /// The last `lines` lines of the service's output.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// The whole output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal_group(&self, signal: &str) -> bool {
        // bash's kill builtin: signals the process group (no extra package, no unsafe code)
        Command::new("bash")
            .args([
                "-c",
                "kill -s \"$0\" -- \"-$1\" 2>/dev/null",
                signal,
                &self.child.id().to_string(),
            ])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    /// Stop the whole process group: SIGTERM, up to 10 s, then SIGKILL.
    pub fn stop(&mut self) {
        self.signal_group("TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let leader_gone = !matches!(self.child.try_wait(), Ok(None));
            // the group is gone when signal 0 cannot reach any member
            if leader_gone && !self.signal_group("0") {
                return;
            }
            if Instant::now() >= deadline {
                self.signal_group("KILL");
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for PyService {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!(
                "----- {} (pid {}) output, last 300 lines -----\n{}\n----- end of {} -----",
                self.name,
                self.child.id(),
                self.log_tail(300),
                self.name
            );
        }
    }
}
