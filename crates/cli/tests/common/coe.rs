//! The `openstack coe` flow with the real python-openstackclient + python-magnumclient,
//! shared by the end-to-end tests of the all-in-one server and of the two-process
//! (RabbitMQ) deployments.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a status may take to arrive. Generous: a passing flow never waits for it, and on
/// a loaded 2-core machine several Python services (magnum-conductor syncs only every 10 s,
/// magnum-api serves one request at a time) can run side by side.
const WAIT: Duration = Duration::from_secs(180);

pub struct Cli {
    pub openstack: PathBuf,
    /// The API's `/v1` endpoint (`OS_ENDPOINT`); unused with [`Auth::Cloud`], where the
    /// catalogue gives it.
    pub endpoint: String,
    pub auth: Auth,
}

/// How the CLI authenticates.
pub enum Auth {
    /// keystoneauth's `none` plugin (the CLI sends `X-Auth-Token: notused`).
    None,
    /// The `admin_token` plugin sends this token (a stand-in cloud's, so the real magnum-api
    /// can reach Glance / Nova / Neutron with it).
    Token(String),
    /// A cloud of a `clouds.yaml` (a real Keystone user; the endpoint from its catalogue).
    Cloud { clouds: PathBuf, cloud: String },
}

/// Where the server side legitimately behaves differently in the flow (docs/differences.md).
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    /// `x509keypair` rows left after the cluster is deleted: OpenKeel deletes all four,
    /// Magnum's conductor leaves two (the etcd and front-proxy CAs).
    pub keypairs_after_delete: usize,
}

impl Expect {
    /// OpenKeel's conductor.
    pub const OPENKEEL: Expect = Expect {
        keypairs_after_delete: 0,
    };
    /// Magnum 23.0.0's conductor.
    pub const MAGNUM: Expect = Expect {
        keypairs_after_delete: 2,
    };
}

impl Cli {
    /// Run `openstack coe ...` and return stdout; panics with stderr on failure.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "openstack {} failed ({}):\nstdout: {}\nstderr: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run and expect failure; returns stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            !out.status.success(),
            "openstack {} unexpectedly succeeded",
            args.join(" ")
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    pub async fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-f", "json"]);
        let out = self.ok(&a).await;
        // Some commands print a line ("Request to create ... accepted") before the JSON.
        let start = out.find(['{', '[']).unwrap_or(0);
        let text = &out[start..];
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// `openstack coe cluster template create <name>` with the tests' usual image, network,
    /// COE and flavors, plus `extra` arguments (`--labels ...`); the template as JSON.
    pub async fn create_template(&self, name: &str, extra: &[&str]) -> Value {
        let mut args = vec![
            "cluster",
            "template",
            "create",
            name,
            "--image",
            "ubuntu-jammy",
            "--external-network",
            "public",
            "--coe",
            "kubernetes",
            "--flavor",
            "m1.small",
            "--master-flavor",
            "m1.small",
        ];
        args.extend_from_slice(extra);
        self.json(&args).await
    }

    pub async fn run(&self, args: &[&str]) -> std::process::Output {
        let mut full = vec!["coe"];
        full.extend_from_slice(args);
        let mut cmd = openkeel_tests::helper(&self.openstack);
        cmd.env_clear();
        match &self.auth {
            Auth::None => cmd
                .env("OS_AUTH_TYPE", "none")
                .env("OS_ENDPOINT", &self.endpoint),
            Auth::Token(token) => cmd
                .env("OS_AUTH_TYPE", "admin_token")
                .env("OS_TOKEN", token)
                .env("OS_ENDPOINT", &self.endpoint),
            Auth::Cloud { clouds, cloud } => cmd
                .env("OS_CLIENT_CONFIG_FILE", clouds)
                .env("OS_CLOUD", cloud),
        };
        cmd.args(&full)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::temp_dir())
            .env("PYTHONWARNINGS", "ignore")
            // `cluster config` prints the export line for the caller's shell
            .env("SHELL", "/bin/bash")
            .output()
            .await
            .expect("run openstack")
    }

    /// Poll `cluster show` until `status` is reached (or a FAILED status, which fails the test).
    pub async fn wait_status(&self, cluster: &str, want: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.json(&["cluster", "show", cluster]).await;
            let status = v["status"].as_str().unwrap_or_default().to_string();
            if status == want {
                return v;
            }
            assert!(
                !status.ends_with("FAILED"),
                "cluster {cluster} went {status}: {v}"
            );
            assert!(
                Instant::now() < deadline,
                "cluster {cluster} stuck in {status}, wanted {want}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    pub async fn wait_gone(&self, cluster: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.run(&["cluster", "show", cluster]).await;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("could not be found"), "{err}");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "cluster {cluster} never went away"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

pub async fn keypairs(db: &openkeel_db::Database) -> usize {
    openkeel_db::x509keypair::list(
        db,
        &openkeel_db::Scope::admin_all_tenants(),
        &openkeel_db::X509KeyPairFilters::default(),
        &openkeel_db::Page::all(),
    )
    .await
    .expect("x509keypair list")
    .len()
}

/// Templates create / list / show / update; cluster create → CREATE_COMPLETE, list, update,
/// resize, upgrade; nodegroups create / list / show / update / delete; the default nodegroup
/// refused; template delete refused while in use; cluster delete → gone; templates deleted.
/// `db` is the database the conductor writes (the four keypairs of the cluster are checked).
pub async fn coe_flow(cli: &Cli, db: &openkeel_db::Database) {
    coe_flow_expecting(cli, db, Expect::OPENKEEL).await
}

/// [`coe_flow`] with the conductor's legitimate differences spelled out.
pub async fn coe_flow_expecting(cli: &Cli, db: &openkeel_db::Database, expect: Expect) {
    // Templates.
    let t = cli
        .create_template("k8s", &["--labels", "kube_tag=v1.30.4"])
        .await;
    assert_eq!(t["name"], "k8s");
    assert_eq!(t["coe"], "kubernetes");
    cli.create_template("k8s-v2", &["--labels", "kube_tag=v1.31.1"])
        .await;
    let list = cli.json(&["cluster", "template", "list"]).await;
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    let shown = cli.json(&["cluster", "template", "show", "k8s"]).await;
    assert_eq!(shown["uuid"], t["uuid"]);
    let updated = cli
        .json(&[
            "cluster",
            "template",
            "update",
            "k8s",
            "replace",
            "docker_volume_size=20",
        ])
        .await;
    assert_eq!(updated["docker_volume_size"], 20);

    // Cluster create → CREATE_COMPLETE.
    cli.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s",
        "--node-count",
        "1",
    ])
    .await;
    let c = cli.wait_status("c1", "CREATE_COMPLETE").await;
    assert_eq!(c["node_count"], 1);
    assert_eq!(c["master_count"], 1);
    assert!(
        c["api_address"].as_str().is_some_and(|a| !a.is_empty()),
        "{c}"
    );
    assert_eq!(c["coe_version"], "v1.30.4");
    // The three CAs and the client certificate are stored (x509keypair cert manager).
    assert_eq!(keypairs(db).await, 4);
    let clusters = cli.json(&["cluster", "list"]).await;
    assert_eq!(clusters.as_array().map(Vec::len), Some(1));

    // Update, resize, upgrade.
    cli.ok(&["cluster", "update", "c1", "replace", "node_count=2"])
        .await;
    let c = cli.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["node_count"], 2);
    cli.ok(&["cluster", "resize", "c1", "3"]).await;
    let c = cli.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["node_count"], 3);
    cli.ok(&["cluster", "upgrade", "c1", "k8s-v2"]).await;
    let c = cli.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["coe_version"], "v1.31.1");

    // Nodegroups.
    cli.ok(&[
        "nodegroup",
        "create",
        "c1",
        "ng1",
        "--node-count",
        "1",
        "--role",
        "gpu",
    ])
    .await;
    let deadline = Instant::now() + WAIT;
    loop {
        let ng = cli.json(&["nodegroup", "show", "c1", "ng1"]).await;
        if ng["status"] == "CREATE_COMPLETE" {
            break;
        }
        assert!(Instant::now() < deadline, "nodegroup stuck: {ng}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let ngs = cli.json(&["nodegroup", "list", "c1"]).await;
    assert_eq!(ngs.as_array().map(Vec::len), Some(3), "{ngs}");
    cli.ok(&[
        "nodegroup",
        "update",
        "c1",
        "ng1",
        "replace",
        "max_node_count=5",
    ])
    .await;
    let deadline = Instant::now() + WAIT;
    loop {
        let ng = cli.json(&["nodegroup", "show", "c1", "ng1"]).await;
        if ng["status"] == "UPDATE_COMPLETE" {
            assert_eq!(ng["max_node_count"], 5);
            break;
        }
        assert!(Instant::now() < deadline, "nodegroup update stuck: {ng}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    cli.ok(&["nodegroup", "delete", "c1", "ng1"]).await;
    let deadline = Instant::now() + WAIT;
    loop {
        let ngs = cli.json(&["nodegroup", "list", "c1"]).await;
        if ngs.as_array().map(Vec::len) == Some(2) {
            break;
        }
        assert!(Instant::now() < deadline, "nodegroup never deleted: {ngs}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let err = cli
        .fails(&["nodegroup", "delete", "c1", "default-worker"])
        .await;
    assert!(
        err.contains("Deleting a default nodegroup is not supported"),
        "{err}"
    );

    // Template in use cannot be deleted; cluster delete → gone; then it can.
    // python-magnumclient reports a failed template delete on stdout and exits 0.
    let out = cli.ok(&["cluster", "template", "delete", "k8s-v2"]).await;
    assert!(
        out.contains("is referenced by one or multiple clusters"),
        "{out}"
    );
    cli.json(&["cluster", "template", "show", "k8s-v2"]).await;
    cli.ok(&["cluster", "delete", "c1"]).await;
    cli.wait_gone("c1").await;
    // All four are gone with the cluster (Magnum leaves two behind).
    assert_eq!(keypairs(db).await, expect.keypairs_after_delete);
    cli.ok(&["cluster", "template", "delete", "k8s"]).await;
    cli.ok(&["cluster", "template", "delete", "k8s-v2"]).await;
    let list = cli.json(&["cluster", "template", "list"]).await;
    assert_eq!(list.as_array().map(Vec::len), Some(0));
}

pub fn openssl(args: &[&str], dir: &Path) -> std::process::Output {
    std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (the openssl CLI is needed by this test)")
}

/// `openstack coe ca show / ca sign / ca rotate` and `openstack coe cluster config` on a new
/// cluster `c1` of a new template `k8s`: the kubeconfig's client certificate verifies against
/// the cluster CA (`openssl verify`), a CSR signed through `ca sign` too, and after
/// `ca rotate` the CA is a new one. `dir` is a scratch directory.
pub async fn ca_flow(cli: &Cli, dir: &Path) {
    cli.create_template("k8s", &[]).await;
    cli.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s",
        "--node-count",
        "1",
    ])
    .await;
    cli.wait_status("c1", "CREATE_COMPLETE").await;

    // ca show: the kubernetes CA.
    let ca = cli.ok(&["ca", "show", "c1"]).await;
    assert!(ca.contains("-----BEGIN CERTIFICATE-----"), "{ca}");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("ca.pem"), ca.trim_end().to_string() + "\n").unwrap();

    // ca sign: a CSR made with openssl, signed by the cluster CA.
    let out = openssl(
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "node.key",
            "-out",
            "node.csr",
            "-subj",
            "/CN=node-1/O=system:nodes",
        ],
        &work,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let signed = cli
        .ok(&["ca", "sign", "c1", work.join("node.csr").to_str().unwrap()])
        .await;
    assert!(signed.contains("-----BEGIN CERTIFICATE-----"), "{signed}");
    std::fs::write(work.join("node.pem"), signed.trim_end().to_string() + "\n").unwrap();
    let v = openssl(&["verify", "-CAfile", "ca.pem", "node.pem"], &work);
    assert!(
        v.status.success(),
        "signed certificate does not verify: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // cluster config: kubeconfig + key.pem / cert.pem / ca.pem written by the client.
    let cfg = dir.join("kube");
    std::fs::create_dir_all(&cfg).unwrap();
    cli.ok(&[
        "cluster",
        "config",
        "c1",
        "--dir",
        cfg.to_str().unwrap(),
        "--force",
        "--output-certs",
        "--use-certificate",
    ])
    .await;
    let kubeconfig = std::fs::read_to_string(cfg.join("config")).expect("kubeconfig written");
    assert!(kubeconfig.contains("server:"), "{kubeconfig}");
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        assert!(cfg.join(f).exists(), "{f} written by cluster config");
    }
    let v = openssl(&["verify", "-CAfile", "ca.pem", "cert.pem"], &cfg);
    assert!(
        v.status.success(),
        "kubeconfig client certificate does not verify against the cluster CA: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // ca rotate: the simulator accepts it; the cluster gets a new CA.
    cli.ok(&["ca", "rotate", "c1"]).await;
    let c = cli.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["status"], "UPDATE_COMPLETE");
    let ca2 = cli.ok(&["ca", "show", "c1"]).await;
    assert!(ca2.contains("-----BEGIN CERTIFICATE-----"));
    assert_ne!(ca.trim(), ca2.trim(), "rotation gives a new CA");
}
