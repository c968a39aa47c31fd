//! OpenStack-Helm's magnum chart, rendered (`tests/openstack-helm/rendered`, made by
//! `tests/openstack-helm/render.sh` with `helm template` from the chart itself), starts
//! OpenKeel's programs under Magnum's names as the chart's pods run them:
//!
//! * the `magnum-db-sync` job: `/tmp/db-sync.sh` (`magnum-db-manage upgrade`) on a fresh
//!   MariaDB database;
//! * the conductor pod: its init container's `/tmp/magnum-conductor-init.sh` writes
//!   `/tmp/pod-shared/magnum.conf` (`[DEFAULT] host = $POD_NAME`), then
//!   `magnum-conductor --config-file /etc/magnum/magnum.conf --config-file
//!   /tmp/pod-shared/magnum.conf`: the second file's `host` is the one the conductor reports
//!   in `magnum_service`;
//! * the API pod: `uwsgi --ini /etc/magnum/magnum-api-uwsgi.ini` (`http-socket`, `stats` with
//!   `stats-http`, `wsgi-file`) with `magnum.conf` found at `/etc/magnum/magnum.conf` as
//!   Magnum's WSGI script finds it; the readiness probe (`GET /` on the API port) passes;
//! * `logging.conf` through `[DEFAULT] log_config_append`: OpenKeel's INFO lines (logger
//!   `magnum`) on stdout in oslo.log's format, nothing at DEBUG, no colour codes.
//!
//! The chart's ports (9511, 1717) are replaced by free ones and the `@PLACEHOLDERS@` of
//! `values-test.yaml` by the test's services. Needs root, MariaDB, RabbitMQ and the venv.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/container.rs"]
mod container;

use container::{free_port, url_parts, write, Container, Root};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> String {
    let path = openkeel_tests::workspace_root()
        .join("tests/openstack-helm/rendered")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A plain HTTP GET as the kubelet's probe sends it: (status, body); the head is kept in
/// `head` when given.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    http_get_head(port, path, true, "User-Agent: kube-probe/1.33").map(|(s, _, b)| (s, b))
}

/// With `close` false the request asks to keep the connection: only a server that closes it
/// (uWSGI's `add-header = Connection: close`) lets the read end before its 5 s timeout.
fn http_get_head(port: u16, path: &str, close: bool, extra: &str) -> Option<(u16, String, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n{}\r\n",
        if close {
            {
                "Connection: close\r\n"
            }
        } else {
            {
                ""
            }
        }
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split_whitespace().nth(1)?.parse().ok()?;
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    Some((status, head.to_ascii_lowercase(), body.to_string()))
}

fn install(root: &Root, path: &str, text: &str, mode: u32) {
    write(&root.dir.join(path.trim_start_matches('/')), text, mode);
}

#[test]
fn openstack_helm_pods_start() {
    if std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout != b"0\n")
        .unwrap_or(true)
    {
        assert!(
            !openkeel_tests::in_ci(),
            "the OpenStack-Helm test needs root (mount namespaces)"
        );
        eprintln!("SKIPPED (not in CI): needs root");
        return;
    }
    let Some(venv) = openkeel_tests::venv() else {
        return;
    };
    let Some(rabbit) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(keystone) = openkeel_tests::require("OPENKEEL_TEST_KEYSTONE_URL", "Keystone") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(openkeel_tests::fresh_mysql_database()) else {
        return;
    };
    let (db_host, db_port, db_user, db_pass) = url_parts(db.url());
    let (mq_host, mq_port, mq_user, mq_pass) = url_parts(&rabbit);
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (api_port, stats_port) = (free_port(), free_port());
    let substitute = |text: String| {
        text.replace(
            "@TRANSPORT_URL@",
            &format!("rabbit://{mq_user}:{mq_pass}@{mq_host}:{mq_port}//"),
        )
        .replace("@CONTROL_EXCHANGE@", &format!("okt_osh_{id}"))
        .replace("@CONDUCTOR_TOPIC@", &format!("okt-osh-{id}"))
        .replace(
            "@DATABASE_CONNECTION@",
            &format!(
                "mysql+pymysql://{db_user}:{db_pass}@{db_host}:{db_port}/{}",
                db.name()
            ),
        )
        .replace("@KEYSTONE_URL@", &keystone)
        .replace("@MEMCACHE_SECRET_KEY@", "not-used-by-the-test")
        .replace(":9511", &format!(":{api_port}"))
        .replace("port = 9511", &format!("port = {api_port}"))
        .replace(":1717", &format!(":{stats_port}"))
    };
    let conf = substitute(fixture("magnum.conf"));
    assert!(
        conf.contains("driver = messagingv2\ndriver = log\n"),
        "a multi-valued option as repeated keys"
    );
    let tmp = tempfile::Builder::new()
        .prefix("okt-osh-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let base = tmp.path();
    let logs = base.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    // The files the chart mounts (subPaths of the magnum-etc Secret and magnum-bin ConfigMap).
    let pod = |name: &str| {
        let root = Root::new(base, name, &venv);
        install(&root, "/etc/magnum/magnum.conf", &conf, 0o444);
        install(
            &root,
            "/etc/magnum/logging.conf",
            &fixture("logging.conf"),
            0o444,
        );
        install(
            &root,
            "/etc/magnum/policy.yaml",
            &fixture("policy.yaml"),
            0o444,
        );
        install(
            &root,
            "/etc/magnum/magnum-api-uwsgi.ini",
            &substitute(fixture("magnum-api-uwsgi.ini")),
            0o444,
        );
        install(&root, "/tmp/db-sync.sh", &fixture("db-sync.sh"), 0o555);
        install(
            &root,
            "/tmp/magnum-conductor-init.sh",
            &fixture("magnum-conductor-init.sh"),
            0o555,
        );
        std::fs::create_dir_all(root.dir.join("tmp/pod-shared")).unwrap();
        root
    };

    // The db-sync job.
    let job = pod("magnum-db-sync");
    let out = job
        .command(&[], &["/bin/bash", "-c", "/tmp/db-sync.sh"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "db-sync: {text}");
    assert!(text.contains("b3e1cf4a2d5e"), "{text}");

    // The conductor pod: init container, then the conductor with two --config-file.
    let croot = pod("magnum-conductor-0");
    let env = [("POD_NAME", "magnum-conductor-0")];
    let out = croot
        .command(&env, &["/tmp/magnum-conductor-init.sh"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "init: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut conductor = Container::start(
        &croot,
        "magnum-conductor",
        &env,
        &[
            "magnum-conductor",
            "--config-file",
            "/etc/magnum/magnum.conf",
            "--config-file",
            "/tmp/pod-shared/magnum.conf",
        ],
        &logs,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let host: String = loop {
        let row: Option<String> = rt.block_on(async {
            use sqlx::Connection;
            let mut c = sqlx::MySqlConnection::connect(db.url()).await.ok()?;
            sqlx::query_scalar(
                "SELECT host FROM magnum_service WHERE `binary` = 'magnum-conductor'",
            )
            .fetch_optional(&mut c)
            .await
            .ok()
            .flatten()
        });
        if let Some(h) = row {
            break h;
        }
        if let Some(st) = conductor.exited() {
            panic!("the conductor exited ({st}):\n{}", conductor.log());
        }
        assert!(
            Instant::now() < deadline,
            "no conductor heartbeat in 60 s:\n{}",
            conductor.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(
        host, "magnum-conductor-0",
        "the second --config-file's [DEFAULT] host"
    );

    // The API pod and its readiness probe.
    let aroot = pod("magnum-api");
    let mut api = Container::start(
        &aroot,
        "magnum-api",
        &[],
        &["uwsgi", "--ini", "/etc/magnum/magnum-api-uwsgi.ini"],
        &logs,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        if let Some((200, body)) = http_get(api_port, "/") {
            break body;
        }
        if let Some(st) = api.exited() {
            panic!("the API exited ({st}):\n{}", api.log());
        }
        assert!(
            Instant::now() < deadline,
            "readiness probe did not pass in 60 s:\n{}",
            api.log()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(body.contains("\"versions\""), "{body}");
    // The ini's add-header.
    let (_, head, _) = http_get_head(
        api_port,
        "/v1",
        false,
        "User-Agent: okt-test\r\nX-Forwarded-For: 203.0.113.9, 10.0.0.1",
    )
    .expect("the API closes the connection");
    assert!(head.contains("\r\nconnection: close"), "{head}");
    // uWSGI's stats server (stats-http): the requests served so far.
    let (status, stats) = http_get(stats_port, "/").expect("stats server");
    assert_eq!(status, 200);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert!(
        stats["workers"][0]["requests"].as_u64().unwrap() >= 1,
        "{stats}"
    );

    // logging.conf: stdout handler, logger magnum at INFO, oslo.log's ContextFormatter line.
    for c in [&conductor, &api] {
        let log = c.log();
        let line = log
            .lines()
            .find(|l| l.contains(" INFO magnum."))
            .unwrap_or_else(|| panic!("no INFO line of logger magnum.*:\n{log}"));
        let date = line.get(..23).unwrap_or_default();
        assert!(
            date.len() == 23 && date.as_bytes()[4] == b'-' && date.as_bytes()[19] == b'.',
            "not oslo.log's '%Y-%m-%d %H:%M:%S.mmm' date: {line}"
        );
        assert!(!log.contains(" DEBUG "), "DEBUG with level = INFO:\n{log}");
        assert!(!log.contains("\x1b["), "colour codes in a redirected log");
        assert!(
            !log.contains("magnum-secret") && !log.contains("not-used-by-the-test"),
            "a secret in the log"
        );
    }
    // uWSGI's request log (no logto in the chart: the pod's output): the kube-probe requests
    // are left out (route-user-agent ... donotlog:), the others name X-Forwarded-For's
    // address (log-x-forwarded-for).
    let api_log = api.log();
    assert!(
        api_log.contains("] 203.0.113.9 () {0 vars in 0 bytes}")
            && api_log.contains("GET /v1 => generated"),
        "{api_log}"
    );
    assert!(
        !api_log.contains("GET / => generated"),
        "a kube-probe request logged: {api_log}"
    );
    // Every option of the chart's ini applies or has OpenKeel's equivalent: no warning.
    assert!(!api_log.contains("have no effect"), "{api_log}");
    drop(api);
    drop(conductor);
}
