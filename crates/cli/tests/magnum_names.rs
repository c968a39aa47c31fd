//! OpenKeel's programs under Magnum's names: `magnum-api`, `magnum-conductor`,
//! `magnum-db-manage`, `magnum-status` and `magnum-driver-manage` take Magnum's arguments
//! (`--config-file` repeated and merged in order, `--config-dir`), name themselves in usage
//! and errors, and print and exit as the `openkeel-*` programs do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

fn run(bin: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .args(args)
        .env("RUST_LOG", "warn")
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const PAIRS: [(&str, &str); 5] = [
    (
        env!("CARGO_BIN_EXE_magnum-api"),
        env!("CARGO_BIN_EXE_openkeel-api"),
    ),
    (
        env!("CARGO_BIN_EXE_magnum-conductor"),
        env!("CARGO_BIN_EXE_openkeel-conductor"),
    ),
    (
        env!("CARGO_BIN_EXE_magnum-db-manage"),
        env!("CARGO_BIN_EXE_openkeel-db-manage"),
    ),
    (
        env!("CARGO_BIN_EXE_magnum-status"),
        env!("CARGO_BIN_EXE_openkeel-status"),
    ),
    (
        env!("CARGO_BIN_EXE_magnum-driver-manage"),
        env!("CARGO_BIN_EXE_openkeel-driver-manage"),
    ),
];

fn name(bin: &str) -> &str {
    Path::new(bin).file_name().unwrap().to_str().unwrap()
}

#[test]
fn each_program_names_itself_and_takes_the_same_arguments() {
    for (magnum, openkeel) in PAIRS {
        let (rc, help, _) = run(magnum, &["--help"]);
        assert_eq!(rc, 0, "{magnum} --help");
        assert!(help.contains(&format!("Usage: {}", name(magnum))), "{help}");
        assert!(
            help.contains("--config-file") && help.contains("--config-dir"),
            "{help}"
        );
        let (_, ok_help, _) = run(openkeel, &["--help"]);
        assert_eq!(
            help.replace(&format!("Usage: {}", name(magnum)), "Usage: PROG"),
            ok_help.replace(&format!("Usage: {}", name(openkeel)), "Usage: PROG"),
            "{magnum} and {openkeel} take different arguments"
        );
        // A configuration file that does not exist: oslo.config's error, named by the program.
        let (rc, _, err) = run(
            magnum,
            &["--config-file", "/nonexistent/magnum.conf", "--help"],
        );
        assert_eq!(rc, 0, "--help wins: {err}");
    }
}

#[test]
fn db_manage_merges_config_files_in_order_and_reads_config_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = d.join("magnum.conf");
    let second = d.join("pod-shared.conf");
    // The first file names a database in a directory that does not exist; the second, as
    // OpenStack-Helm's /tmp/pod-shared/magnum.conf, overrides it.
    std::fs::write(
        &first,
        format!(
            "[DEFAULT]\ndebug = false\n[database]\nconnection = sqlite:///{}/missing/dir/x.sqlite\n",
            d.display()
        ),
    )
    .unwrap();
    std::fs::write(
        &second,
        format!(
            "[database]\nconnection = sqlite:///{}/m.sqlite\n",
            d.display()
        ),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_magnum-db-manage");
    let (f, s) = (first.to_str().unwrap(), second.to_str().unwrap());
    let (rc, out, err) = run(bin, &["--config-file", f, "--config-file", s, "upgrade"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("b3e1cf4a2d5e"), "{out}");
    let (rc, out, _) = run(bin, &["--config-file", f, "--config-file", s, "version"]);
    assert_eq!((rc, out.trim()), (0, "Current DB revision is b3e1cf4a2d5e"));
    // The other order: the first file's database wins and cannot be opened.
    let (rc, _, err) = run(bin, &["--config-file", s, "--config-file", f, "version"]);
    assert_ne!(rc, 0);
    assert!(err.starts_with("magnum-db-manage: "), "{err}");
    // --config-dir: its *.conf files after the --config-file ones.
    let confd = d.join("magnum.conf.d");
    std::fs::create_dir(&confd).unwrap();
    std::fs::copy(&second, confd.join("10-db.conf")).unwrap();
    let (rc, out, err) = run(
        bin,
        &[
            "--config-file",
            f,
            "--config-dir",
            confd.to_str().unwrap(),
            "version",
        ],
    );
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("b3e1cf4a2d5e"), "{out}");
}

#[test]
fn status_and_driver_manage_print_and_exit_as_the_openkeel_programs() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("magnum.conf");
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, "{}").unwrap();
    std::fs::write(
        &conf,
        format!("[oslo_policy]\npolicy_file = {}\n", policy.display()),
    )
    .unwrap();
    let c = conf.to_str().unwrap();
    for args in [
        vec!["--config-file", c, "upgrade", "check"],
        vec!["--config-file", c, "upgrade", "check", "--json"],
    ] {
        let a = run(env!("CARGO_BIN_EXE_magnum-status"), &args);
        let b = run(env!("CARGO_BIN_EXE_openkeel-status"), &args);
        assert_eq!(a, b);
        assert_eq!(a.0, 2, "a JSON policy file is a failure: {}", a.1);
    }
    let args = ["--config-file", c, "list-drivers", "--details"];
    let a = run(env!("CARGO_BIN_EXE_magnum-driver-manage"), &args);
    let b = run(env!("CARGO_BIN_EXE_openkeel-driver-manage"), &args);
    assert_eq!(a, b);
    assert_eq!(a.0, 0, "{}", a.2);
}

#[test]
fn oslo_log_command_line_options_override_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("magnum.conf");
    // A database that cannot be opened: the conductor logs its failure and exits.
    std::fs::write(
        &conf,
        format!(
            "[DEFAULT]\nlog_file = {}/from-file.log\n[database]\nconnection = sqlite:///{}/missing/x.sqlite\nmax_retries = 0\n",
            dir.path().display(),
            dir.path().display()
        ),
    )
    .unwrap();
    let log = dir.path().join("from-cli.log");
    let (rc, out, err) = run(
        env!("CARGO_BIN_EXE_magnum-conductor"),
        &[
            "--config-file",
            conf.to_str().unwrap(),
            "--log-file",
            log.to_str().unwrap(),
            "--use-json",
        ],
    );
    assert_ne!(rc, 0, "{out}{err}");
    assert!(err.starts_with("magnum-conductor: "), "{err}");
    let text = std::fs::read_to_string(&log).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("\"ERROR\""))
        .unwrap_or_else(|| panic!("no ERROR line in {text}"));
    let doc: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(doc["levelname"], "ERROR");
    assert!(
        !dir.path().join("from-file.log").exists(),
        "--log-file wins"
    );
    assert!(!text.contains("\x1b["), "no colour codes in a file");
}

/// `magnum-api` (not under uWSGI) with `[api] enabled_ssl`: HTTPS with `ssl_cert_file` /
/// `ssl_key_file`, as magnum-api's `_get_ssl_configs`; a missing file is its error.
#[test]
fn magnum_api_serves_https_with_enabled_ssl() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=127.0.0.1"])
        .arg("-keyout")
        .arg(d.join("key.pem"))
        .arg("-out")
        .arg(d.join("cert.pem"))
        .stderr(Stdio::null())
        .status()
        .expect("openssl");
    assert!(st.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = d.join("magnum.conf");
    let write_conf = |cert: &str| {
        std::fs::write(
            &conf,
            format!(
                "[DEFAULT]\ntransport_url = rabbit://u:p@127.0.0.1:1//\n\
                 [database]\nconnection = sqlite:///{dir}/m.sqlite\n\
                 [openkeel]\nauth_strategy = noauth\n\
                 [api]\nhost = 127.0.0.1\nport = {port}\nenabled_ssl = true\n\
                 ssl_cert_file = {cert}\nssl_key_file = {dir}/key.pem\n",
                dir = d.display()
            ),
        )
        .unwrap();
    };
    write_conf(&format!("{}/cert.pem", d.display()));
    let c = conf.to_str().unwrap();
    let (rc, out, err) = run(
        env!("CARGO_BIN_EXE_magnum-db-manage"),
        &["--config-file", c, "upgrade"],
    );
    assert_eq!(rc, 0, "{out}{err}");
    let mut api = Command::new(env!("CARGO_BIN_EXE_magnum-api"))
        .args(["--config-file", c])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}/");
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        let out = Command::new("curl")
            .args(["-sSk", "--fail", &url])
            .output()
            .unwrap();
        if out.status.success() {
            break String::from_utf8_lossy(&out.stdout).into_owned();
        }
        if Instant::now() > deadline || api.try_wait().unwrap().is_some() {
            let _ = api.kill();
            panic!("no HTTPS answer: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // Plain HTTP on the same port gets no answer.
    let plain = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "3",
            &format!("http://127.0.0.1:{port}/"),
        ])
        .output()
        .unwrap();
    let _ = api.kill();
    let _ = api.wait();
    assert!(
        body.contains(&format!("\"https://127.0.0.1:{port}/v1/\"")),
        "{body}"
    );
    assert!(
        !plain.status.success(),
        "plain HTTP answered on the TLS port"
    );
    // A certificate file that does not exist: magnum-api's message.
    write_conf("/nonexistent/cert.pem");
    let (rc, _, err) = run(env!("CARGO_BIN_EXE_magnum-api"), &["--config-file", c]);
    assert_ne!(rc, 0);
    assert!(
        err.contains("Unable to find cert_file : /nonexistent/cert.pem"),
        "{err}"
    );
}
