//! gophercloud v2's own containerinfra acceptance tests
//! (`internal/acceptance/openstack/containerinfra/v1`, the module from the Go module proxy)
//! against the all-in-one server with real Keystone auth, twice: with the simulator driver
//! (`gophercloud_containerinfra_acceptance`) and with the native Cluster API driver on the
//! test rig (`gophercloud_containerinfra_acceptance_on_cluster_api`, whose doc says what
//! differs).
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

#[path = "common/capi.rs"]
mod capi;
#[path = "common/openapi_check.rs"]
mod openapi_check;

use openkeel_tests::capi_standin::CapiStandIn;
use openkeel_tests::kapi;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const GOPHERCLOUD: &str = "github.com/gophercloud/gophercloud/v2@v2.14.0";
/// The containerinfra acceptance tests' package.
const PKG: &str = "internal/acceptance/openstack/containerinfra/v1";

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

/// A replacement in gophercloud's copy: the file (in the containerinfra package), the text,
/// what replaces it. Each must be found, so a moved line fails the test instead of silently
/// running unpatched.
type Patch = (&'static str, &'static str, &'static str);

/// Upstream's skip of the two tests that deploy a cluster, removed (see the module's doc).
const SKIP: &str = "\tt.Skip(\"Failure to deploy cluster in CI\")\n";
const UNSKIP: [Patch; 2] = [
    ("clusters_test.go", SKIP, ""),
    ("nodegroups_test.go", SKIP, ""),
];

/// The module from the Go module proxy, copied into `work` with `patches` applied; returns
/// the copy's root.
async fn gophercloud(go: &Path, home: &Path, work: &Path, patches: &[Patch]) -> PathBuf {
    let mut cmd = tokio::process::Command::new(go);
    cmd.args(["mod", "download", "-json", GOPHERCLOUD]);
    go_env(&mut cmd, home);
    let out = cmd.output().await.expect("go mod download");
    assert!(
        out.status.success(),
        "go mod download {GOPHERCLOUD}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let module = PathBuf::from(info["Dir"].as_str().unwrap());
    let src = work.join("gophercloud");
    copy_dir(&module, &src);
    let pkg = src.join(PKG);
    for (file, from, to) in patches {
        let path = pkg.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(from),
            "{file}: gophercloud's {from:?} moved; the patch no longer applies"
        );
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
    src
}

/// Run the containerinfra acceptance tests of `src` against the API in `region` of the test
/// Keystone (the simulated cloud's image, flavors, network and keypair: docs/simulator.md);
/// returns whether `go test` succeeded and its output.
async fn acceptance(
    go: &Path,
    home: &Path,
    src: &Path,
    ks: &openkeel_tests::Keystone,
    region: &str,
    timeout: &str,
) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(go);
    cmd.current_dir(src)
        .args([
            "test",
            "-count=1",
            "-v",
            "-timeout",
            timeout,
            "-tags",
            "containerinfra",
            &format!("./{PKG}/"),
        ])
        .env("OS_AUTH_URL", &ks.url)
        .env("OS_USERNAME", "admin")
        .env("OS_PASSWORD", ks.password("admin"))
        .env("OS_PROJECT_NAME", "admin")
        .env("OS_DOMAIN_NAME", "Default")
        .env("OS_REGION_NAME", region)
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
    go_env(&mut cmd, home);
    let out = cmd.output().await.expect("go test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Four tests passed, `TestCertificatesCRUD` skipped.
fn assert_passed(success: bool, text: &str) {
    assert!(success, "gophercloud acceptance tests failed:\n{text}");
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

fn go_home() -> PathBuf {
    let home = PathBuf::from(
        std::env::var("OPENKEEL_TEST_HOME").unwrap_or_else(|_| "/var/tmp/openkeel-test".into()),
    )
    .join("go");
    std::fs::create_dir_all(&home).unwrap();
    home
}

fn log_server() {
    // the server's log lines are shown with a failure
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_test_writer()
        .try_init();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gophercloud_containerinfra_acceptance() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let Some(go) = go() else {
        return;
    };
    log_server();
    let home = go_home();
    let work = tempfile::tempdir().unwrap();
    let src = gophercloud(&go, &home, work.path(), &UNSKIP).await;

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
    // gophercloud's traffic goes through a recording proxy: every answer it got must match
    // docs/openapi.json too.
    let rec = openapi_check::Recording::start(srv.addr).await;
    let region = ks
        .register_container_infra(&format!("http://{}/v1", rec.addr))
        .await;

    let (success, text) = acceptance(&go, &home, &src, &ks, &region, "6m").await;
    // ... and keystonemiddleware's 401 for a request without a token, and with a bad one
    for token in [None, Some("not-a-token")] {
        let h: Vec<(&str, &str)> = token.map(|t| ("X-Auth-Token", t)).into_iter().collect();
        let r = openkeel_tests::http(rec.addr, "GET", "/v1/clusters", &h, None)
            .await
            .unwrap();
        assert_eq!(r.status, 401, "{}", r.text());
    }
    ks.unregister_region(&region).await;
    srv.stop().await.unwrap();
    assert_passed(success, &text);
    rec.assert_all_match(20, dir.path(), "gophercloud's acceptance tests");
}

/// The same acceptance tests once more against the all-in-one with the native Cluster API
/// driver on the test rig's management cluster (`common/capi.rs`, as `capi_e2e.rs`), while
/// the scripted CAPO/kubeadm stand-in plays every cluster the server creates
/// (`CapiStandIn::play_every`, the clusters' stack ids from the server's database, so the
/// rig's other tests' clusters in `magnum-system` are left alone): creates, the resize of
/// `PATCH node_count`, the nodegroup create, its three `PATCH`es and its delete, and the
/// deletes are the driver's real operations on the Cluster API objects.
///
/// Two more patches to gophercloud's copy, each because the driver refuses, with a 400, what
/// gophercloud's test code sends, and nothing outside the test code can change it:
/// * `CreateClusterTemplateCOE` creates its templates with the labels `{"test": "test"}`
///   hard-coded (asserted equal to the created template's), and its clusters with labels
///   `{}` (so the template's); no environment variable of `clients` or `tools` reaches
///   them, and Magnum has no configuration default for a label. The Cluster API driver needs
///   `kube_tag` (the Kubernetes version; magnum-cluster-api has no default either), so the
///   patch adds `kube_tag: v1.30.4` to that map; the test's own assertion on it stands.
/// * `testNodeGroupCreate` names its nodegroup `tools.RandomString("test-ng-", 8)`, from
///   `[0-9A-Za-z]`: upper case almost always (1 − (36/62)^8 ≈ 99%), and the driver, as
///   magnum-cluster-api's `validate_nodegroup_name`, refuses a name that is not a lowercase
///   RFC 1123 subdomain (a nodegroup is a MachineDeployment of that name). The patch
///   lowercases the random name; the test's own assertion on it stands.
///
/// The network driver needs no patch: the template has none, so it gets `[cluster_template]
/// kubernetes_default_network_driver`, which `common/capi.rs` sets to calico as a Cluster
/// API deployment does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gophercloud_containerinfra_acceptance_on_cluster_api() {
    let t0 = std::time::Instant::now();
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let Some(go) = go() else {
        return;
    };
    let Some(kubeconfig) = kapi::kubeconfig() else {
        return;
    };
    let Some(client) = kapi::client().await else {
        return;
    };
    let Some(helm) = kapi::helm() else {
        return;
    };
    log_server();
    let home = go_home();
    let work = tempfile::tempdir().unwrap();
    let patches: Vec<Patch> = UNSKIP
        .into_iter()
        .chain([
            (
                "containerinfra.go",
                "\t\t\"test\": \"test\",\n",
                "\t\t\"test\": \"test\",\n\t\t\"kube_tag\": \"v1.30.4\",\n",
            ),
            (
                "nodegroups_test.go",
                "\t\"net/http\"\n",
                "\t\"net/http\"\n\t\"strings\"\n",
            ),
            (
                "nodegroups_test.go",
                "name := tools.RandomString(\"test-ng-\", 8)",
                "name := strings.ToLower(tools.RandomString(\"test-ng-\", 8))",
            ),
        ])
        .collect();
    let src = gophercloud(&go, &home, work.path(), &patches).await;

    let dir = tempfile::tempdir().unwrap();
    let srv = capi::start(dir.path(), &ks, &kubeconfig, &helm).await;
    let region = ks
        .register_container_infra(&format!("http://{}/v1", srv.addr))
        .await;
    // every stack id the player was given: the clusters of the run
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let player = {
        let (db, seen) = (srv.db.clone(), seen.clone());
        CapiStandIn::play_every(client.clone(), capi::NS, capi::API_HOST, move || {
            let (db, seen) = (db.clone(), seen.clone());
            async move {
                let ids = capi::stack_ids(&db).await;
                seen.lock().unwrap().extend(ids.iter().cloned());
                ids
            }
        })
    };

    let (success, text) = acceptance(&go, &home, &src, &ks, &region, "20m").await;
    player.abort();
    ks.unregister_region(&region).await;
    srv.stop().await.unwrap();
    eprintln!(
        "gophercloud on the Cluster API driver: {:?} ({})",
        t0.elapsed(),
        text.lines()
            .filter(|l| l.starts_with("--- "))
            .collect::<Vec<_>>()
            .join("; ")
    );
    assert_passed(success, &text);
    // The clusters were the driver's (one each for TestClustersCRUD and TestNodeGroupsCRUD),
    // and their Cluster API objects went with them.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let api = kapi::dynamic_api(&client, capi::NS, "cluster.x-k8s.io/v1beta1", "Cluster").await;
    let left: Vec<String> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| seen.contains(n))
        .collect();
    assert!(left.is_empty(), "CAPI Clusters left: {left:?}");
}
