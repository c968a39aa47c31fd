//! gophercloud v2's own containerinfra acceptance tests
//! (`internal/acceptance/openstack/containerinfra/v1`, the module from the Go module proxy)
//! against the all-in-one server with real Keystone auth and the simulator driver.
//!
//! gophercloud skips three of its five tests upstream: `TestClustersCRUD` and
//! `TestNodeGroupsCRUD` ("Failure to deploy cluster in CI": its CI cannot build a Kubernetes
//! cluster) and `TestCertificatesCRUD` ("Test must be rewritten to drop hardcoded cluster
//! ID"). The simulator deploys clusters, so this test removes that skip from
//! `TestClustersCRUD` and `TestNodeGroupsCRUD` in a copy of the module and runs them too.
//! `TestNodeGroupsCRUD` sends three `PATCH`es and a `DELETE` within milliseconds: it passes
//! because the conductor runs one operation per cluster at a time (Magnum's interleaves them
//! and the delete never completes; docs/differences.md). Still skipped:
//! `TestCertificatesCRUD`, which signs a CSR for a cluster id hard-coded in gophercloud, which
//! cannot exist here.
//!
//! Needs Go ≥ 1.25 (gophercloud v2.14's go.mod), found as `$OPENKEEL_TEST_GO`, `go` on the
//! PATH or `/usr/local/go/bin/go`; modules and build cache live under
//! `$OPENKEEL_TEST_HOME/go`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

const GOPHERCLOUD: &str = "github.com/gophercloud/gophercloud/v2@v2.14.0";

fn go() -> Option<PathBuf> {
    let candidates = [
        std::env::var("OPENKEEL_TEST_GO").ok().map(PathBuf::from),
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("go"))
                .find(|g| g.is_file())
        }),
        Some(PathBuf::from("/usr/local/go/bin/go")),
    ];
    let found = candidates.into_iter().flatten().find(|g| g.is_file());
    if found.is_none() {
        if openkeel_tests::in_ci() {
            panic!(
                "Go is required in CI for the gophercloud acceptance tests (set OPENKEEL_TEST_GO)"
            );
        }
        eprintln!("SKIPPED (not in CI): no Go toolchain");
    }
    found
}

fn go_env(cmd: &mut tokio::process::Command, home: &Path) {
    cmd.env("GOPATH", home)
        .env("GOMODCACHE", home.join("mod"))
        .env("GOCACHE", home.join("cache"))
        .env("GOFLAGS", "-mod=mod")
        // Debian's Go defaults to GOTOOLCHAIN=local; gophercloud v2.14 needs Go 1.25, which
        // an older go fetches from the Go module proxy (golang.org/toolchain)
        .env(
            "GOTOOLCHAIN",
            std::env::var("GOTOOLCHAIN").unwrap_or_else(|_| "auto".to_string()),
        )
        .env("HOME", home);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
            let mut perm = std::fs::metadata(&dest).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&dest, perm).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gophercloud_containerinfra_acceptance() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let Some(go) = go() else {
        return;
    };
    // the server's log lines are shown with a failure
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_test_writer()
        .try_init();
    let home = PathBuf::from(
        std::env::var("OPENKEEL_TEST_HOME").unwrap_or_else(|_| "/var/tmp/openkeel-test".into()),
    )
    .join("go");
    std::fs::create_dir_all(&home).unwrap();

    // The module, from the Go module proxy.
    let mut cmd = tokio::process::Command::new(&go);
    cmd.args(["mod", "download", "-json", GOPHERCLOUD]);
    go_env(&mut cmd, &home);
    let out = cmd.output().await.expect("go mod download");
    assert!(
        out.status.success(),
        "go mod download {GOPHERCLOUD}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let module = PathBuf::from(info["Dir"].as_str().unwrap());

    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("gophercloud");
    copy_dir(&module, &src);
    let pkg = src.join("internal/acceptance/openstack/containerinfra/v1");
    let test = pkg.join("clusters_test.go");
    let text = std::fs::read_to_string(&test).unwrap();
    let skip = "\tt.Skip(\"Failure to deploy cluster in CI\")\n";
    assert!(
        text.contains(skip),
        "clusters_test.go: gophercloud's skip line moved"
    );
    std::fs::write(&test, text.replace(skip, "")).unwrap();
    let ng_test = pkg.join("nodegroups_test.go");
    let ng_text = std::fs::read_to_string(&ng_test).unwrap();
    assert!(
        ng_text.contains(skip),
        "nodegroups_test.go: gophercloud's skip line moved"
    );
    std::fs::write(&ng_test, ng_text.replace(skip, "")).unwrap();

    // OpenKeel with Keystone auth, found in the catalogue of a region of its own.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("test.conf");
    std::fs::write(
        &conf,
        format!(
            "[openkeel]\nauth_strategy = keystone\nstatus_sync_interval = 1\n\n[keystone_authtoken]\nwww_authenticate_uri = {url}\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n",
            url = ks.url,
            pw = ks.password("magnum"),
        ),
    )
    .unwrap();
    let config = openkeel::allinone::load_config(dir.path(), &[conf], &[]).unwrap();
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap();
    let region = ks
        .register_container_infra(&format!("http://{}/v1", srv.addr))
        .await;

    let mut cmd = tokio::process::Command::new(&go);
    cmd.current_dir(&src)
        .args([
            "test",
            "-count=1",
            "-v",
            "-timeout",
            "6m",
            "-tags",
            "containerinfra",
            "./internal/acceptance/openstack/containerinfra/v1/",
        ])
        .env("OS_AUTH_URL", &ks.url)
        .env("OS_USERNAME", "admin")
        .env("OS_PASSWORD", ks.password("admin"))
        .env("OS_PROJECT_NAME", "admin")
        .env("OS_DOMAIN_NAME", "Default")
        .env("OS_REGION_NAME", &region)
        // the simulated cloud's image, flavors, network and keypairs (docs/simulator.md)
        .env("OS_IMAGE_ID", "ubuntu-jammy")
        .env("OS_MAGNUM_IMAGE_ID", "ubuntu-jammy")
        .env("OS_FLAVOR_ID", "m1.small")
        .env("OS_FLAVOR_ID_RESIZE", "m1.medium")
        .env("OS_MAGNUM_KEYPAIR", "default")
        .env("OS_POOL_NAME", "public")
        .env("OS_EXTGW_ID", "public")
        .env("OS_NETWORK_NAME", "private")
        // clients.SkipRelease compares with the branch under test: Magnum 23.0.0 is 2026.2
        .env("OS_BRANCH", "stable/2026.2");
    go_env(&mut cmd, &home);
    let out = cmd.output().await.expect("go test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    ks.unregister_region(&region).await;
    srv.stop().await.unwrap();
    assert!(
        out.status.success(),
        "gophercloud acceptance tests failed:\n{text}"
    );
    for t in [
        "TestClusterTemplatesCRUD",
        "TestQuotasCRUD",
        "TestClustersCRUD",
        "TestNodeGroupsCRUD",
    ] {
        assert!(
            text.contains(&format!("--- PASS: {t} ")),
            "{t} did not pass:\n{text}"
        );
    }
    assert!(text.contains("--- SKIP: TestCertificatesCRUD"), "{text}");
}
