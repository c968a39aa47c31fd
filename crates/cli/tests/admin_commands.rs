#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `openkeel-status upgrade check` and `openkeel-driver-manage list-drivers` against the real
//! `magnum-status` and `magnum-driver-manage` 23.0.0 of the test venv: same stdout, same exit
//! code, for the same configuration. magnum-driver-manage lists the `magnum.drivers` entry
//! points installed in its Python environment, so the test installs (on PYTHONPATH) a
//! dist-info with one entry point named `simulator` providing the simulator's tuples.

use std::path::{Path, PathBuf};

struct Run {
    stdout: String,
    code: i32,
}

fn run(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = openkeel_tests::helper_blocking(program)
        .args(args)
        .envs(env.iter().copied())
        // keep both away from any magnum.conf of the machine
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn ours(name: &str) -> PathBuf {
    match name {
        "openkeel-status" => PathBuf::from(env!("CARGO_BIN_EXE_openkeel-status")),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_openkeel-driver-manage")),
    }
}

#[test]
fn upgrade_check_matches_magnum_status() {
    let Some(real) = openkeel_tests::venv_bin("magnum-status") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.conf");
    std::fs::write(&plain, "[DEFAULT]\n").unwrap();
    // a JSON policy file found beside the config file (oslo's find_file)
    std::fs::write(
        dir.path().join("policy.json"),
        "{\"cluster:create\": \"\"}\n",
    )
    .unwrap();
    let json_policy = dir.path().join("json-policy.conf");
    std::fs::write(&json_policy, "[oslo_policy]\npolicy_file = policy.json\n").unwrap();
    // a YAML policy file is fine
    std::fs::write(dir.path().join("policy.yaml"), "\"cluster:create\": \"\"\n").unwrap();
    let yaml_policy = dir.path().join("yaml-policy.conf");
    std::fs::write(&yaml_policy, "[oslo_policy]\npolicy_file = policy.yaml\n").unwrap();

    let mut failures_seen = 0;
    for conf in [&plain, &json_policy, &yaml_policy] {
        for extra in [&[][..], &["--json"][..]] {
            let c = conf.to_str().unwrap();
            let mut args = vec!["--config-file", c, "upgrade", "check"];
            args.extend_from_slice(extra);
            let want = run(&real, &args, &[]);
            let got = run(&ours("openkeel-status"), &args, &[]);
            assert_eq!(got.stdout, want.stdout, "stdout for {args:?}");
            assert_eq!(got.code, want.code, "exit code for {args:?}");
            if want.code == 2 {
                failures_seen += 1;
            }
        }
    }
    assert_eq!(
        failures_seen, 2,
        "the JSON policy file fails the check (table and --json)"
    );
}

#[test]
fn list_drivers_matches_magnum_driver_manage() {
    let Some(real) = openkeel_tests::venv_bin("magnum-driver-manage") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let dist = site.join("okfake_driver-1.0.dist-info");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("METADATA"),
        "Metadata-Version: 2.1\nName: okfake-driver\nVersion: 1.0\n",
    )
    .unwrap();
    // magnum-cluster-api's five entry points (names, classes' `provides`: its
    // `magnum_cluster_api/driver.py`), then the simulator, in OpenKeel's registration order.
    // Stand-ins: the real package cannot be loaded by magnum-driver-manage without its
    // runtime dependencies (heatclient, sherlock, kubernetes, ...), which the venv keeps out.
    let capi = [
        ("k8s_cluster_api_ubuntu", "Ubuntu", "ubuntu"),
        (
            "k8s_cluster_api_ubuntu_focal",
            "UbuntuFocal",
            "ubuntu-focal",
        ),
        ("k8s_cluster_api_debian", "Debian", "debian"),
        ("k8s_cluster_api_flatcar", "Flatcar", "flatcar"),
        ("k8s_cluster_api_rockylinux", "RockyLinux", "rockylinux"),
    ];
    let mut entry_points = "[magnum.drivers]\n".to_string();
    let mut module = String::new();
    for (name, class, os) in capi {
        entry_points += &format!("{name} = okfake_driver:{class}\n");
        module += &format!(
            "class {class}:\n    provides = [{{'server_type': 'vm', 'os': '{os}', 'coe': 'kubernetes'}}]\n"
        );
    }
    entry_points += "simulator = okfake_driver:Driver\n";
    std::fs::write(dist.join("entry_points.txt"), entry_points).unwrap();
    // The simulator's tuples (crates/drivers/src/simulator.rs `provides`).
    std::fs::write(
        site.join("okfake_driver.py"),
        module
            + "class Driver:\n    provides = [\n"
            + &["ubuntu", "ubuntu-focal", "debian", "flatcar", "rockylinux"]
                .iter()
                .map(|os| {
                    format!("        {{'server_type': 'vm', 'os': '{os}', 'coe': 'kubernetes'}},\n")
                })
                .collect::<String>()
            + "    ]\n",
    )
    .unwrap();
    let conf = dir.path().join("magnum.conf");
    std::fs::write(&conf, "[openkeel]\nenable_simulator_driver = true\n").unwrap();
    let disabled = dir.path().join("disabled.conf");
    std::fs::write(
        &disabled,
        "[openkeel]\nenable_simulator_driver = true\n[drivers]\ndisabled_drivers = simulator\n",
    )
    .unwrap();
    let pythonpath = site.to_str().unwrap().to_string();
    for conf in [&conf, &disabled] {
        for extra in [
            &[][..],
            &["-d"][..],
            &["-p"][..],
            &["--details", "--paths"][..],
            &["-f", "value"][..],
            &["-d", "-f", "value"][..],
            &["-d", "-p", "-f", "json"][..],
            &["-f", "json", "--noindent"][..],
            &["-f", "yaml"][..],
            &["-d", "-p", "-f", "yaml"][..],
            &["-f", "csv"][..],
            &["-d", "-p", "-f", "csv"][..],
            &["-d", "-f", "csv", "--quote", "minimal"][..],
            &["-d", "-f", "csv", "--quote", "all"][..],
            &["-f", "csv", "--quote", "none"][..],
        ] {
            let c = conf.to_str().unwrap();
            let mut args = vec!["--config-file", c, "list-drivers"];
            args.extend_from_slice(extra);
            // magnum-driver-manage takes no config arguments (it calls CONF([])): it reads
            // [drivers] disabled_drivers from oslo's default search, ~/magnum.conf included.
            let home = dir.path().join(format!(
                "home-{}",
                conf.file_stem().unwrap().to_str().unwrap()
            ));
            std::fs::create_dir_all(&home).unwrap();
            std::fs::copy(conf, home.join("magnum.conf")).unwrap();
            let h = home.to_str().unwrap();
            let real_args: Vec<&str> = args[2..].to_vec();
            let want = run(
                &real,
                &real_args,
                &[("PYTHONPATH", pythonpath.as_str()), ("HOME", h)],
            );
            let got = run(&ours("openkeel-driver-manage"), &args, &[]);
            assert_eq!(got.stdout, want.stdout, "stdout for {args:?}");
            assert_eq!(got.code, want.code, "exit code for {args:?}");
        }
    }
}
