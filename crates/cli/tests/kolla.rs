//! kolla's real start path, with OpenKeel's programs in place of Magnum's.
//!
//! kolla-ansible 22.2.0's own magnum templates (`magnum.conf`, `config.json`, the uWSGI ini
//! of `service-uwsgi-config`) are rendered for a test inventory by
//! `tests/python/kolla_render.py`; each "container" is a scratch root (the host's `/usr`
//! bound in, its own `/etc`, `/var/lib/kolla/config_files`, `/var/log/kolla`) entered with
//! `unshare --pid --mount` + `chroot`, whose `/usr/local/bin` holds kolla 23.0.0's image
//! scripts (`kolla_start` = `start.sh`, `kolla_set_configs` = `set_configs.py`, the magnum
//! images' `extend_start.sh`, `healthcheck_curl`, `healthcheck_port`) and OpenKeel's programs
//! under Magnum's names. As kolla-ansible runs them:
//!
//! * the bootstrap container (`KOLLA_BOOTSTRAP`) runs `magnum-db-manage upgrade` on a fresh
//!   MariaDB database;
//! * the conductor container runs `magnum-conductor --config-file /etc/magnum/magnum.conf`
//!   and `healthcheck_port magnum-conductor <rabbit port>` passes;
//! * the API container runs `uwsgi /etc/magnum/magnum-api-uwsgi.ini` (plain HTTP, and HTTPS
//!   with `magnum_enable_tls_backend`), `healthcheck_curl <url>/healthcheck` passes, the API
//!   answers, it runs as the `magnum` user the ini names, and logs where kolla's files say.
//!
//! Needs root (mount namespaces), MariaDB, RabbitMQ, Keystone and the venv's `kolla-site`
//! (tests/python/requirements-kolla.txt); with `CI=true` a missing one fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![recursion_limit = "256"]

#[path = "common/container.rs"]
mod container;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use container::{copy, free_port, url_parts, write, Container, Root, MAGNUM_UID};

/// A scratch root as kolla's magnum image `name` (`bootstrap_magnum`, `magnum-api`,
/// `magnum-conductor`): kolla's image scripts where the images install them, and the
/// service's rendered configuration directory mounted at `/var/lib/kolla/config_files`.
fn kolla_root(base: &Path, name: &str, kolla: &Path, venv: &Path, config: &Path) -> Root {
    let root = Root::new(base, name, venv);
    // kolla's image scripts, where the images install them.
    let docker = kolla.join("kolla/docker");
    copy(
        &docker.join("base/start.sh"),
        &root.localbin.join("kolla_start"),
        0o755,
    );
    copy(
        &docker.join("base/set_configs.py"),
        &root.localbin.join("kolla_set_configs"),
        0o755,
    );
    copy(
        &docker.join("base/healthcheck_curl"),
        &root.localbin.join("healthcheck_curl"),
        0o755,
    );
    copy(
        &docker.join("base/healthcheck_port"),
        &root.localbin.join("healthcheck_port"),
        0o755,
    );
    copy(
        &docker.join("magnum/magnum-base/extend_start.sh"),
        &root.localbin.join("kolla_extend_start"),
        0o644,
    );
    let magnum_extend = if name.starts_with("magnum-api") || name.starts_with("bootstrap") {
        std::fs::read_to_string(docker.join("magnum/magnum-api/extend_start.sh")).unwrap()
    } else {
        String::new() // magnum-base touches an empty one; magnum-api's image replaces it
    };
    write(
        &root.localbin.join("kolla_magnum_extend_start"),
        &magnum_extend,
        0o644,
    );
    // The image's sudo rules let the service user run these as root; here everything
    // starts as root already. kolla_copy_cacerts / kolla_install_projects have nothing
    // to do without CA certificates or /dev-mode projects.
    write(
        &root.localbin.join("sudo"),
        "#!/bin/sh\n[ \"$1\" = -E ] && shift\nexec \"$@\"\n",
        0o755,
    );
    write(
        &root.localbin.join("kolla_copy_cacerts"),
        "#!/bin/sh\nexit 0\n",
        0o755,
    );
    write(
        &root.localbin.join("kolla_install_projects"),
        "#!/bin/sh\nexit 0\n",
        0o755,
    );
    // kolla-ansible mounts /etc/kolla/<service>/ at /var/lib/kolla/config_files/.
    for entry in std::fs::read_dir(config).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            root.dir
                .join("var/lib/kolla/config_files")
                .join(entry.file_name()),
        )
        .unwrap();
    }
    root
}

const KOLLA_ENV: [(&str, &str); 1] = [("KOLLA_CONFIG_STRATEGY", "COPY_ALWAYS")];

fn run_kolla(tls: bool) {
    if Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout != b"0\n")
        .unwrap_or(true)
    {
        assert!(
            !openkeel_tests::in_ci(),
            "the kolla test needs root (mount namespaces)"
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
    let kolla = venv.join("kolla-site");
    let roles = kolla.join("share/kolla-ansible/ansible/roles");
    if !roles.join("magnum/templates/magnum.conf.j2").exists()
        || !kolla.join("kolla/docker/base/set_configs.py").exists()
    {
        assert!(
            !openkeel_tests::in_ci(),
            "{} lacks kolla / kolla-ansible (tests/python/requirements-kolla.txt)",
            kolla.display()
        );
        eprintln!("SKIPPED (not in CI): no kolla-site in the venv");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(openkeel_tests::fresh_mysql_database()) else {
        return;
    };
    let (db_host, db_port, db_user, db_pass) = url_parts(db.url());
    let (mq_host, mq_port, mq_user, mq_pass) = url_parts(&rabbit);
    let keystone_base = keystone
        .trim_end_matches('/')
        .trim_end_matches("/v3")
        .to_string();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let api_port = free_port();
    let tmp = tempfile::Builder::new()
        .prefix("okt-kolla-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let base = tmp.path();
    // The inventory: one host, kolla-ansible's defaults for what the test does not need.
    let transport = format!("rabbit://{mq_user}:{mq_pass}@{mq_host}:{mq_port}//");
    let vars = serde_json::json!({
        "api_interface_address": "127.0.0.1",
        "magnum_api_listen_port": api_port, "magnum_api_port": api_port,
        "magnum_api_workers": 2, "magnum_conductor_workers": 2,
        "magnum_logging_debug": "False",
        "rpc_transport_url": transport, "notify_transport_url": transport,
        "magnum_database_user": db_user, "magnum_database_password": db_pass,
        "magnum_database_address": format!("{db_host}:{db_port}"), "magnum_database_name": db.name(),
        "magnum_database_enable_tls_internal": "no",
        "database_connection_recycle_time": 10, "database_max_pool_size": 1,
        "enable_cinder": "no", "enable_barbican": "no", "enable_osprofiler": "no",
        "openstack_region_name": "RegionOne", "openstack_cacert": "",
        "keystone_internal_url": keystone_base, "keystone_public_url": keystone_base,
        "default_user_domain_name": "Default", "default_project_domain_name": "Default",
        "magnum_keystone_user": "magnum", "magnum_keystone_password": "magnum-secret",
        "memcache_security_strategy": "ENCRYPT", "memcache_secret_key": "not-used-by-the-test",
        "groups": {"memcached": ["localhost"]}, "memcached_port": 11211,
        "magnum_trustee_domain_admin": "magnum_trustee_domain_admin", "magnum_trustee_domain": "magnum",
        "enable_cluster_user_trust": false,
        "magnum_enabled_notification_topics": [],
        "om_enable_rabbitmq_tls": "no", "om_enable_rabbitmq_stream_fanout": "no",
        "om_rabbitmq_qos_prefetch_count": 1,
        "container_config_directory": "/var/lib/kolla/config_files",
        "magnum_enable_tls_backend": if tls { "yes" } else { "no" },
        "kolla_copy_ca_into_containers": "no",
        "kolla_base_distro": "debian",
        // /etc/kolla/config/magnum.conf: a private exchange and topic, since queue names are
        // global in the test broker's vhost.
        "custom_magnum_conf": format!("[DEFAULT]\ncontrol_exchange = okt_kolla_{id}\n\n[conductor]\ntopic = okt-kolla-{id}\n"),
    });
    let vars_file = base.join("vars.json");
    std::fs::write(&vars_file, vars.to_string()).unwrap();
    let etc_kolla = base.join("etc-kolla");
    let out = openkeel_tests::helper_blocking(venv.join("bin/python"))
        .arg(openkeel_tests::workspace_root().join("tests/python/kolla_render.py"))
        .args([
            roles.as_os_str(),
            vars_file.as_os_str(),
            etc_kolla.as_os_str(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kolla_render.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ini = std::fs::read_to_string(etc_kolla.join("magnum-api/magnum-api-uwsgi.ini")).unwrap();
    if tls {
        assert!(
            ini.contains(&format!(
                "https = 127.0.0.1:{api_port},/etc/magnum/certs/magnum-cert.pem"
            )),
            "{ini}"
        );
        // kolla-ansible's copy-certs puts these into the service's config directory.
        let st = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=127.0.0.1",
            ])
            .arg("-keyout")
            .arg(etc_kolla.join("magnum-api/magnum-key.pem"))
            .arg("-out")
            .arg(etc_kolla.join("magnum-api/magnum-cert.pem"))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    } else {
        assert!(
            ini.contains(&format!("http = 127.0.0.1:{api_port}")),
            "{ini}"
        );
    }
    let logs = base.join("logs");
    std::fs::create_dir_all(&logs).unwrap();

    // 1. The bootstrap container: KOLLA_BOOTSTRAP makes magnum-api's extend_start run
    //    `magnum-db-manage upgrade` and exit.
    let boot = kolla_root(
        base,
        "bootstrap_magnum",
        &kolla,
        &venv,
        &etc_kolla.join("magnum-api"),
    );
    let out = boot
        .command(
            &[
                ("KOLLA_CONFIG_STRATEGY", "COPY_ALWAYS"),
                ("KOLLA_BOOTSTRAP", ""),
            ],
            &["/usr/local/bin/kolla_start"],
        )
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "bootstrap failed:\n{text}");
    assert!(text.contains("b3e1cf4a2d5e"), "{text}");
    let revision: String = rt.block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::MySqlConnection::connect(db.url()).await.unwrap();
        sqlx::query_scalar("SELECT version_num FROM alembic_version")
            .fetch_one(&mut c)
            .await
            .unwrap()
    });
    assert_eq!(revision, "b3e1cf4a2d5e");

    // 2. The conductor: `magnum-conductor --config-file /etc/magnum/magnum.conf`; kolla's
    //    healthcheck: the process has a connection to the broker's port.
    let croot = kolla_root(
        base,
        "magnum-conductor",
        &kolla,
        &venv,
        &etc_kolla.join("magnum-conductor"),
    );
    let mut conductor = Container::start(
        &croot,
        "magnum_conductor",
        &KOLLA_ENV,
        &["/usr/local/bin/kolla_start"],
        &logs,
    );
    let mq_port_s = mq_port.to_string();
    conductor.wait_for(
        "healthcheck_port magnum-conductor",
        &["healthcheck_port", "magnum-conductor", &mq_port_s],
        Duration::from_secs(60),
    );
    // The same check fails for a port nothing of the conductor's is connected to.
    let (ok, _) = conductor.exec(&["healthcheck_port", "magnum-conductor", "1"]);
    assert!(!ok, "healthcheck_port passed for port 1");
    assert!(
        conductor
            .log()
            .contains("Running command: 'magnum-conductor --config-file /etc/magnum/magnum.conf'"),
        "{}",
        conductor.log()
    );

    // 3. The API: `uwsgi /etc/magnum/magnum-api-uwsgi.ini`.
    let aroot = kolla_root(
        base,
        "magnum-api",
        &kolla,
        &venv,
        &etc_kolla.join("magnum-api"),
    );
    let mut api = Container::start(
        &aroot,
        "magnum_api",
        &KOLLA_ENV,
        &["/usr/local/bin/kolla_start"],
        &logs,
    );
    let scheme = if tls { "https" } else { "http" };
    let url = format!("{scheme}://127.0.0.1:{api_port}");
    let health = format!("{url}/healthcheck");
    api.wait_for(
        "healthcheck_curl",
        &["healthcheck_curl", &health],
        Duration::from_secs(60),
    );
    assert!(
        api.log()
            .contains("Running command: 'uwsgi /etc/magnum/magnum-api-uwsgi.ini'"),
        "{}",
        api.log()
    );
    let (ok, _) = api.exec(&[
        "healthcheck_curl",
        &format!("{scheme}://127.0.0.1:{}/healthcheck", free_port()),
    ]);
    assert!(!ok, "healthcheck_curl passed against a closed port");
    // The API answers: the version document (public, no token), from inside the container.
    let (ok, body) = api.exec(&["curl", "-sSk", "--fail", &format!("{url}/")]);
    assert!(ok, "{body}");
    assert!(body.contains("\"versions\""), "{body}");
    // Links carry the listener's scheme, as WSGI's url_scheme under uWSGI.
    assert!(body.contains(&format!("\"{url}/v1/\"")), "{body}");
    // ... and through RabbitMQ to the conductor: an authenticated call needs a token.
    let (_, body) = api.exec(&[
        "curl",
        "-sSk",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{url}/v1/clusters"),
    ]);
    assert_eq!(body.trim(), "401", "no token: keystonemiddleware's 401");
    // uwsgi dropped to the ini's uid = magnum.
    let pid = api.inner_pid().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid_line = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .unwrap()
        .to_string();
    assert!(
        uid_line
            .split_whitespace()
            .skip(1)
            .all(|u| u == MAGNUM_UID.to_string()),
        "{uid_line}"
    );
    // Logs where kolla's files put them: oslo.log's log_file and uWSGI's logto2.
    let app_log = std::fs::read_to_string(aroot.log_file("/var/log/kolla/magnum/magnum-api.log"))
        .unwrap_or_default();
    assert!(app_log.contains("INFO"), "magnum-api.log: {app_log}");
    assert!(
        !app_log.contains("\x1b["),
        "colour codes in a file: {app_log}"
    );
    assert!(!app_log.contains("magnum-secret"), "a password in the log");
    // uWSGI's request log (logto2): kolla's healthcheck requests, uWSGI's line format.
    let uwsgi_log =
        std::fs::read_to_string(aroot.log_file("/var/log/kolla/magnum/magnum-api-uwsgi.log"))
            .unwrap_or_default();
    assert!(
        uwsgi_log.contains("] 127.0.0.1 () {0 vars in 0 bytes}")
            && uwsgi_log.contains("GET /healthcheck => generated"),
        "magnum-api-uwsgi.log: {uwsgi_log}"
    );
    // kolla's ini has one option OpenKeel does not apply (static-map): one warning.
    assert_eq!(
        app_log.matches("have no effect on OpenKeel's API").count(),
        1,
        "{app_log}"
    );

    let cond_log =
        std::fs::read_to_string(croot.log_file("/var/log/kolla/magnum/magnum-conductor.log"))
            .unwrap_or_default();
    assert!(
        cond_log.contains("INFO"),
        "magnum-conductor.log: {cond_log}"
    );
    drop(api);
    drop(conductor);
}

#[test]
fn kolla_start_path_http() {
    run_kolla(false);
}

#[test]
fn kolla_start_path_tls_backend() {
    run_kolla(true);
}
