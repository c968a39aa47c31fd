//! The Cluster API driver end to end (issue 12, §4 "End to end"): the real
//! python-openstackclient + python-magnumclient authenticate against the real Keystone and
//! drive the all-in-one server (`auth_strategy = keystone`, `enable_simulator_driver = false`,
//! `[capi_client] kubeconfig` = the rig's real kube-apiserver with the real Cluster API
//! manager), whose conductor runs the native `k8s_cluster_api_*` driver:
//!
//! template create (Ubuntu image) → cluster create → the objects in `magnum-system` → the
//! scripted CAPO/kubeadm stand-in (`openkeel_tests::capi_standin`) makes infrastructure,
//! control plane and workers ready → `CREATE_COMPLETE` with `api_address` → `openstack coe
//! cluster config` gives a kubeconfig whose CA is `tls.crt` of `<stack_id>-ca` → cluster
//! delete → the row, the cluster's objects and its Keystone application credential are gone.
//! And the 400s the API gives (no `kube_tag`, an unsupported network driver) with nothing
//! written.
//!
//! The server's configuration and the driver's dependencies (the real Keystone, the
//! x509keypair cert manager, the simulated cloud, `[drivers] default_driver =
//! k8s_cluster_api_ubuntu`) are `common/capi.rs`'s, shared with `gophercloud.rs`.
//!
//! `magnum-system` is shared with the rig's other tests: only objects named after, or labelled
//! with, this test's cluster are looked at. Skips outside CI when a service is missing; fails
//! under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/capi.rs"]
mod capi;
#[path = "common/coe.rs"]
mod coe;

use capi::{start, API_HOST, NS};
use coe::{Auth, Cli};

use kube::api::ListParams;
use kube::Client;
use openkeel_tests::capi_standin::CapiStandIn;
use openkeel_tests::kapi;
use serde_json::Value;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(180);

/// The objects of `kind` in `magnum-system` (empty when the namespace does not exist yet).
async fn list(client: &Client, api_version: &str, kind: &str, labels: &str) -> Vec<Value> {
    let api = kapi::dynamic_api(client, NS, api_version, kind).await;
    let lp = ListParams::default().labels(labels);
    kapi::retry_transient(&format!("list {kind}"), || api.list(&lp))
        .await
        .unwrap_or_else(|e| panic!("list {kind}: {e}"))
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).unwrap())
        .collect()
}

fn name_of(o: &Value) -> String {
    o["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The names of the objects of `kind` in `magnum-system` that belong to this cluster (named
/// after its stack_id or uuid, or labelled with either).
async fn ours(
    client: &Client,
    api_version: &str,
    kind: &str,
    stack_id: &str,
    uuid: &str,
) -> Vec<Value> {
    list(client, api_version, kind, "")
        .await
        .into_iter()
        .filter(|o| {
            let n = name_of(o);
            let labels = &o["metadata"]["labels"];
            n.contains(stack_id)
                || n.contains(uuid)
                || labels["cluster-uuid"] == uuid
                || labels["cluster.x-k8s.io/cluster-name"] == stack_id
        })
        .collect()
}

fn base64_decode(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("base64")
        .arg("-d")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("base64 (coreutils)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.trim().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "base64 -d of {text:?}");
    out.stdout
}

/// The application credentials of `user` named `name`, as the Keystone admin sees them.
async fn app_creds(ks: &openkeel_tests::Keystone, user: &str, name: &str) -> Vec<Value> {
    let r = ks
        .admin_request(
            "GET",
            &format!("/users/{user}/application_credentials?name={name}"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "list application credentials: {}", r.text());
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    v["application_credentials"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The application credentials of `user` that belong to cluster `uuid` (named `<uuid>`, or
/// `<uuid>-…` after a rotation), as the Keystone admin sees them.
async fn cluster_creds(ks: &openkeel_tests::Keystone, user: &str, uuid: &str) -> Vec<Value> {
    let r = ks
        .admin_request(
            "GET",
            &format!("/users/{user}/application_credentials"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "list application credentials: {}", r.text());
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    v["application_credentials"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| {
            openkeel_drivers::deps::is_cluster_credential(c["name"].as_str().unwrap_or(""), uuid)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_coe_cluster_api_end_to_end() {
    let t0 = Instant::now();
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let Some(openstack) = openkeel_tests::venv_bin("openstack") else {
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
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), &ks, &kubeconfig, &helm).await;
    let region = ks
        .register_container_infra(&format!("http://{}/v1", srv.addr))
        .await;
    let clouds = dir.path().join("clouds.yaml");
    std::fs::write(&clouds, ks.clouds_yaml_for(&region)).unwrap();
    let demo = Cli {
        openstack: openstack.clone(),
        endpoint: String::new(),
        auth: Auth::Cloud {
            clouds: clouds.clone(),
            cloud: "demo".into(),
        },
    };
    let demo_user = ks.user_id("demo");

    // The template: an Ubuntu image, the driver as Magnum resolves it.
    let t = demo
        .create_template(
            "k8s-capi",
            &["--network-driver", "calico", "--labels", "kube_tag=v1.30.4"],
        )
        .await;
    assert_eq!(t["cluster_distro"], "ubuntu", "{t}");
    let shown = demo
        .json(&["cluster", "template", "show", "k8s-capi"])
        .await;
    // python-magnumclient does not show `driver`: the row says which entry point serves it.
    let row = openkeel_db::cluster_template::get(
        &srv.db,
        &openkeel_db::Scope::admin_all_tenants(),
        shown["uuid"].as_str().unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(row.driver.as_deref(), Some("k8s_cluster_api_ubuntu"));

    // What magnum-cluster-api only finds in the conductor is a 400 from the API, and nothing
    // is written.
    demo.create_template("no-kube-tag", &["--network-driver", "calico"])
        .await;
    demo.create_template(
        "flannel",
        &[
            "--network-driver",
            "flannel",
            "--labels",
            "kube_tag=v1.30.4",
        ],
    )
    .await;
    for (tpl, why) in [
        (
            "no-kube-tag",
            "The kube_tag label is required by the Cluster API driver",
        ),
        ("flannel", "Unsupported network driver flannel"),
    ] {
        let err = demo
            .fails(&[
                "cluster",
                "create",
                &format!("bad-{tpl}"),
                "--cluster-template",
                tpl,
                "--node-count",
                "1",
            ])
            .await;
        assert!(
            err.contains("(HTTP 400)") && err.contains(why),
            "{tpl}: {err}"
        );
    }
    let clusters = demo.json(&["cluster", "list"]).await;
    assert_eq!(
        clusters,
        Value::Array(vec![]),
        "nothing written: {clusters}"
    );
    let t_rejects = t0.elapsed();

    // Cluster create → the objects in the management cluster.
    demo.ok(&[
        "cluster",
        "create",
        "c1",
        "--cluster-template",
        "k8s-capi",
        "--node-count",
        "1",
        "--master-count",
        "1",
    ])
    .await;
    let t_create = Instant::now();
    // The API shows `stack_id` only below microversion 1.13 (`cluster_id` from there on), and
    // python-magnumclient shows neither: it is read from the row.
    let uuid = demo.json(&["cluster", "show", "c1"]).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let stack_id = kapi::wait_for("the cluster's stack_id", WAIT, || async {
        let c = openkeel_db::cluster::get_by_uuid(
            &srv.db,
            &openkeel_db::Scope::admin_all_tenants(),
            &uuid,
        )
        .await
        .unwrap();
        assert!(
            !c.status.is_some_and(|s| s.as_str().ends_with("FAILED")),
            "{:?}: {:?}",
            c.status,
            c.status_reason
        );
        c.stack_id.filter(|s| !s.is_empty())
    })
    .await;
    let capi = kapi::wait_for("the CAPI Cluster", WAIT, || async {
        list(&client, "cluster.x-k8s.io/v1beta1", "Cluster", "")
            .await
            .into_iter()
            .find(|c| name_of(c) == stack_id)
    })
    .await;
    assert_eq!(
        capi["metadata"]["labels"]["cluster-uuid"],
        uuid.as_str(),
        "{capi:#}"
    );
    let crs: Vec<String> = list(
        &client,
        "addons.cluster.x-k8s.io/v1beta1",
        "ClusterResourceSet",
        "",
    )
    .await
    .iter()
    .map(name_of)
    .collect();
    assert!(crs.contains(&uuid), "{crs:?}");
    assert!(
        crs.contains(&format!("{stack_id}-cloud-provider")),
        "{crs:?}"
    );
    let secrets: Vec<Value> = list(&client, "v1", "Secret", "").await;
    let secret = |suffix: &str| {
        secrets
            .iter()
            .find(|s| name_of(s) == format!("{stack_id}-{suffix}"))
            .cloned()
            .unwrap_or_else(|| panic!("Secret {stack_id}-{suffix} missing"))
    };
    for s in ["cloud-config", "ca", "etcd", "proxy", "sa"] {
        secret(s);
    }
    let ca_secret = secret("ca");
    let ca_crt = base64_decode(ca_secret["data"]["tls.crt"].as_str().expect("tls.crt"));
    // The application credential of the cluster, made with the user's token.
    let creds = app_creds(&ks, &demo_user, &uuid).await;
    assert_eq!(creds.len(), 1, "{creds:?}");
    let c = demo.json(&["cluster", "show", "c1"]).await;
    assert_eq!(c["status"], "CREATE_IN_PROGRESS", "{c}");

    // While the control plane is provisioning, the real MachineSet controller holds the
    // workers back (`MachineSetReady` False, severity Error, `PreflightCheckFailed`): that is
    // waiting, not a failure, however long it lasts (with real servers: minutes, longer than
    // the driver's 60 s grace for Error conditions).
    let selector = format!("cluster.x-k8s.io/cluster-name={stack_id}");
    let preflight = kapi::wait_for("the workers' preflight check", WAIT, || async {
        list(
            &client,
            "cluster.x-k8s.io/v1beta1",
            "MachineDeployment",
            &selector,
        )
        .await
        .into_iter()
        .flat_map(|md| {
            md["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|c| c["reason"] == "PreflightCheckFailed" && c["severity"] == "Error")
    })
    .await;
    eprintln!("waiting out the grace period with {preflight}");
    tokio::time::sleep(Duration::from_secs(70)).await;
    let c = demo.json(&["cluster", "show", "c1"]).await;
    assert_eq!(c["status"], "CREATE_IN_PROGRESS", "{c}");

    // The stand-in plays CAPO and kubeadm: infrastructure, control plane, the workers.
    let standin = CapiStandIn::new(client.clone(), NS, &stack_id);
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready(API_HOST, 6443).await.ok()
    })
    .await;
    kapi::wait_for("the KubeadmControlPlane", WAIT, || async {
        standin.control_plane(None).await.ok()
    })
    .await;
    kapi::wait_for("a worker Machine", WAIT, || async {
        let done = standin.machines_ready(None).await;
        (!done.is_empty()).then_some(())
    })
    .await;
    let c = demo.wait_status("c1", "CREATE_COMPLETE").await;
    let t_created = t_create.elapsed();
    assert_eq!(c["api_address"], format!("https://{API_HOST}:6443"), "{c}");
    assert_eq!(c["coe_version"], "v1.30.4", "{c}");
    assert_eq!(c["uuid"], uuid.as_str());

    // cluster config: the kubeconfig's CA is the <stack_id>-ca Secret's certificate.
    let kube_dir = dir.path().join("kube");
    std::fs::create_dir_all(&kube_dir).unwrap();
    let cluster_config = || async {
        demo.ok(&[
            "cluster",
            "config",
            "c1",
            "--dir",
            kube_dir.to_str().unwrap(),
            "--force",
        ])
        .await;
        std::fs::read_to_string(kube_dir.join("config")).expect("kubeconfig written")
    };
    let kc = cluster_config().await;
    assert!(
        kc.contains(&format!("server: https://{API_HOST}:6443")),
        "{kc}"
    );
    let ca_data = kc
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data:"))
        .unwrap_or_else(|| panic!("no certificate-authority-data: {kc}"));
    let kube_ca = base64_decode(ca_data);
    assert_eq!(
        String::from_utf8_lossy(&kube_ca).trim(),
        String::from_utf8_lossy(&ca_crt).trim(),
        "the kubeconfig's CA is {stack_id}-ca's tls.crt"
    );

    // Credential rotation (API 1.12, `openstack coe credential rotate`): a new application
    // credential that authenticates, in CAPO's Secret and the addon Secrets, the old one gone
    // from Keystone, the cluster's status unchanged.
    {
        let secret_text = |secrets: &[Value], name: &str, key: &str| -> String {
            let s = secrets
                .iter()
                .find(|s| name_of(s) == name)
                .unwrap_or_else(|| panic!("Secret {name} missing"));
            let b64 = s["data"][key]
                .as_str()
                .unwrap_or_else(|| panic!("{name} has no {key}"));
            String::from_utf8(base64_decode(b64)).unwrap()
        };
        let field = |yaml: &str, key: &str| -> String {
            yaml.lines()
                .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
                .unwrap_or_else(|| panic!("no {key} in {}", yaml.len()))
                .trim()
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string()
        };
        let cloud_config = format!("{stack_id}-cloud-config");
        let secrets = list(&client, "v1", "Secret", "").await;
        let clouds = secret_text(&secrets, &cloud_config, "clouds.yaml");
        let old_id = field(&clouds, "application_credential_id");
        let before = demo.json(&["cluster", "show", "c1"]).await;
        let out = demo.ok(&["credential", "rotate", "c1"]).await;
        assert!(out.contains("Request to rotate credentials"), "{out}");
        let after = demo.json(&["cluster", "show", "c1"]).await;
        assert_eq!(
            (&after["status"], &after["status_reason"]),
            (&before["status"], &before["status_reason"]),
            "{after}"
        );
        let secrets = list(&client, "v1", "Secret", "").await;
        let clouds = secret_text(&secrets, &cloud_config, "clouds.yaml");
        let new_id = field(&clouds, "application_credential_id");
        let new_secret = field(&clouds, "application_credential_secret");
        assert_ne!(new_id, old_id);
        for addons in [uuid.clone(), format!("{stack_id}-cloud-provider")] {
            let conf = secret_text(&secrets, &addons, "cloud-config-secret.yaml");
            assert!(
                conf.contains(&format!("application-credential-id={new_id}"))
                    && !conf.contains(&old_id),
                "{addons} carries the new credential"
            );
        }
        // in Keystone: only the new one, named <uuid>-<suffix>, and it authenticates
        let creds = cluster_creds(&ks, &demo_user, &uuid).await;
        assert_eq!(creds.len(), 1, "{creds:?}");
        assert_eq!(creds[0]["id"], new_id.as_str(), "{creds:?}");
        assert!(
            creds[0]["name"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{uuid}-")),
            "{creds:?}"
        );
        let r = ks
            .admin_request(
                "GET",
                &format!("/users/{demo_user}/application_credentials/{old_id}"),
                None,
            )
            .await;
        assert_eq!(r.status, 404, "the old credential is gone: {}", r.text());
        let auth = serde_json::json!({"auth": {"identity": {"methods": ["application_credential"],
            "application_credential": {"id": new_id, "secret": new_secret}}}})
        .to_string();
        let path = format!(
            "/{}/auth/tokens?nocatalog",
            ks.url
                .trim_start_matches("http://")
                .split_once('/')
                .map(|(_, p)| p.trim_end_matches('/'))
                .unwrap_or("v3")
        );
        let r = openkeel_tests::http(
            ks.addr,
            "POST",
            &path,
            &[("Content-Type", "application/json")],
            Some(auth.as_bytes()),
        )
        .await
        .unwrap();
        assert_eq!(
            r.status,
            201,
            "the new credential authenticates: {}",
            r.text()
        );
    }

    // CA rotation (`openstack coe ca rotate`): Cluster API cannot rotate a cluster's CA
    // (kubernetes-sigs/cluster-api#7721), so the driver refuses, before anything is touched:
    // 400, and the cluster keeps its status (Magnum marks it UPDATE_FAILED), its CA (the
    // `<stack_id>-ca` Secret, `cluster config`'s CA) and its certificate rows.
    {
        let before = demo.json(&["cluster", "show", "c1"]).await;
        let out = demo.fails(&["ca", "rotate", "c1"]).await;
        assert!(out.contains("not supported"), "{out}");
        let after = demo.json(&["cluster", "show", "c1"]).await;
        assert_eq!(
            (&after["status"], &after["status_reason"]),
            (&before["status"], &before["status_reason"]),
            "{after}"
        );
        let secrets = list(&client, "v1", "Secret", "").await;
        let ca_now = secrets
            .iter()
            .find(|s| name_of(s) == format!("{stack_id}-ca"))
            .and_then(|s| s["data"]["tls.crt"].as_str())
            .map(base64_decode)
            .expect("the CA Secret");
        assert_eq!(ca_now, ca_crt, "{stack_id}-ca is unchanged");
        assert!(
            cluster_config().await.contains(ca_data),
            "cluster config still gives the cluster's CA"
        );
    }

    // Issue 13: the operations on a running cluster, through the CLI, each followed to its
    // final state while the stand-in plays the providers.
    let player = standin.clone().play();
    let md_replicas = |ng: &'static str| {
        let client = client.clone();
        let selector = format!("{selector},topology.cluster.x-k8s.io/deployment-name={ng}");
        async move {
            list(
                &client,
                "cluster.x-k8s.io/v1beta1",
                "MachineDeployment",
                &selector,
            )
            .await
            .first()
            .and_then(|md| md["spec"]["replicas"].as_i64())
        }
    };
    // resize of the workers, then PATCH node_count (the same resize, not UPDATE_FAILED)
    demo.ok(&["cluster", "resize", "c1", "2"]).await;
    let c = demo.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["node_count"], 2, "{c}");
    assert_eq!(md_replicas("default-worker").await, Some(2));
    demo.ok(&["cluster", "update", "c1", "replace", "node_count=1"])
        .await;
    let c = demo.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["node_count"], 1, "{c}");
    assert_eq!(md_replicas("default-worker").await, Some(1));
    // a nodegroup: add, resize, update, remove
    demo.ok(&["nodegroup", "create", "c1", "ng2", "--node-count", "1"])
        .await;
    demo.wait_status("c1", "UPDATE_COMPLETE").await;
    let ng = demo.json(&["nodegroup", "show", "c1", "ng2"]).await;
    assert_eq!(ng["status"], "CREATE_COMPLETE", "{ng}");
    assert_eq!(md_replicas("ng2").await, Some(1));
    // its count through a resize (node_count is not PATCHable on a nodegroup), its bounds
    // through an update
    demo.ok(&["cluster", "resize", "c1", "2", "--nodegroup", "ng2"])
        .await;
    demo.wait_status("c1", "UPDATE_COMPLETE").await;
    demo.ok(&[
        "nodegroup",
        "update",
        "c1",
        "ng2",
        "replace",
        "max_node_count=3",
    ])
    .await;
    demo.wait_status("c1", "UPDATE_COMPLETE").await;
    let ng = demo.json(&["nodegroup", "show", "c1", "ng2"]).await;
    assert_eq!(
        (&ng["status"], &ng["node_count"], &ng["max_node_count"]),
        (&"UPDATE_COMPLETE".into(), &2.into(), &3.into()),
        "{ng}"
    );
    assert_eq!(md_replicas("ng2").await, Some(2));
    demo.ok(&["nodegroup", "delete", "c1", "ng2"]).await;
    kapi::wait_for("ng2 gone", WAIT, || async {
        let out = demo.run(&["nodegroup", "show", "c1", "ng2"]).await;
        (!out.status.success()).then_some(())
    })
    .await;
    assert_eq!(md_replicas("ng2").await, None);
    let c = demo.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["status_reason"], Value::Null, "{c}");
    // upgrade: a minor-version skip is a 400 with nothing changed; the next minor is taken
    demo.create_template(
        "k8s-capi-132",
        &["--network-driver", "calico", "--labels", "kube_tag=v1.32.0"],
    )
    .await;
    demo.create_template(
        "k8s-capi-131",
        &["--network-driver", "calico", "--labels", "kube_tag=v1.31.1"],
    )
    .await;
    let err = demo
        .fails(&[
            "cluster",
            "upgrade",
            "c1",
            "k8s-capi-132",
            "--max-batch-size",
            "1",
        ])
        .await;
    assert!(
        err.contains("(HTTP 400)") && err.contains("one minor version at a time"),
        "{err}"
    );
    let c = demo.json(&["cluster", "show", "c1"]).await;
    assert_eq!(c["status"], "UPDATE_COMPLETE", "{c}");
    demo.ok(&[
        "cluster",
        "upgrade",
        "c1",
        "k8s-capi-131",
        "--max-batch-size",
        "1",
    ])
    .await;
    let c = demo.json(&["cluster", "show", "c1"]).await;
    assert_eq!(c["status"], "UPDATE_IN_PROGRESS", "{c}");
    let shown = demo
        .json(&["cluster", "template", "show", "k8s-capi-131"])
        .await;
    assert_eq!(c["cluster_template_id"], shown["uuid"], "{c}");
    kapi::wait_for("the control plane at v1.31.1", WAIT, || async {
        list(
            &client,
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
            &selector,
        )
        .await
        .into_iter()
        .next()
        .filter(|k| k["spec"]["version"] == "v1.31.1")
        .map(|_| ())
    })
    .await;
    // complete once the control plane and the workers run it (one at a time: batch 1)
    let c = demo.wait_status("c1", "UPDATE_COMPLETE").await;
    assert_eq!(c["coe_version"], "v1.31.1", "{c}");
    assert_eq!(c["status_reason"], Value::Null, "{c}");
    player.abort();

    // Delete: the row, the cluster's objects and the application credential are gone.
    let t_delete = Instant::now();
    demo.ok(&["cluster", "delete", "c1"]).await;
    let deadline = Instant::now() + WAIT;
    loop {
        let out = demo.run(&["cluster", "show", "c1"]).await;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("could not be found"), "{err}");
            break;
        }
        let v: Value = {
            let s = String::from_utf8_lossy(&out.stdout);
            serde_json::from_str(&s[s.find('{').unwrap_or(0)..]).unwrap_or(Value::Null)
        };
        assert!(
            !v["status"].as_str().unwrap_or_default().ends_with("FAILED"),
            "{v}"
        );
        assert!(Instant::now() < deadline, "c1 never went away");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let t_deleted = t_delete.elapsed();
    let clusters = demo.json(&["cluster", "list"]).await;
    assert_eq!(clusters, Value::Array(vec![]), "{clusters}");
    for (v, k) in [
        ("cluster.x-k8s.io/v1beta1", "Cluster"),
        ("addons.cluster.x-k8s.io/v1beta1", "ClusterResourceSet"),
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
        ),
        ("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
        ("cluster.x-k8s.io/v1beta1", "Machine"),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackCluster",
        ),
    ] {
        let left: Vec<String> = ours(&client, v, k, &stack_id, &uuid)
            .await
            .iter()
            .map(name_of)
            .collect();
        assert!(left.is_empty(), "{k} left: {left:?}");
    }
    // Secrets: the driver's are gone; what remains is owned by another object (the
    // stand-in's bootstrap data, which a real kube-controller-manager would garbage-collect;
    // the rig runs none).
    for s in ours(&client, "v1", "Secret", &stack_id, &uuid).await {
        assert!(
            s["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| !o.is_empty()),
            "Secret {} left: {s:#}",
            name_of(&s)
        );
    }
    let creds = cluster_creds(&ks, &demo_user, &uuid).await;
    assert!(creds.is_empty(), "application credential left: {creds:?}");

    for tpl in [
        "k8s-capi",
        "k8s-capi-131",
        "k8s-capi-132",
        "no-kube-tag",
        "flannel",
    ] {
        demo.ok(&["cluster", "template", "delete", tpl]).await;
    }
    ks.unregister_region(&region).await;
    srv.stop().await.unwrap();
    eprintln!(
        "timings: 400s {t_rejects:?}; create → CREATE_COMPLETE {t_created:?}; delete → gone {t_deleted:?}; total {:?}",
        t0.elapsed()
    );
}
