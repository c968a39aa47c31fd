#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The all-in-one server with `[certificates] cert_manager_type = barbican`, end to end over
//! HTTP, against the real Barbican 23.0.0 (`OPENKEEL_TEST_BARBICAN_URL`) found in the
//! catalogue of the Keystone stand-in (`[keystone_auth]` service credentials,
//! `[barbican_client]`): a cluster create stores its certificates in Barbican, the CA
//! served by `GET /v1/certificates` is the one in Barbican, a CSR is signed, and the
//! cluster delete removes the containers.

#[path = "common/api.rs"]
mod api;

use api::call_at;
use openkeel_tests::http;
use openkeel_tests::standin::{self, StandInData};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allinone_with_the_barbican_cert_manager() {
    let Some(url) = openkeel_tests::barbican_url() else {
        return;
    };
    let barbican: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let keystone = standin::start(StandInData {
        key_manager_url: Some(url.clone()),
        ..StandInData::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("test.conf");
    std::fs::write(
        &conf,
        format!(
            "[certificates]\ncert_manager_type = barbican\n\n[openkeel]\nstatus_sync_interval = 1\n\n\
             [keystone_auth]\nauth_type = password\nauth_url = {}\nusername = magnum\n\
             password = secret\nuser_domain_id = default\nproject_name = service\n\
             project_domain_id = default\n\n[barbican_client]\nendpoint_type = internalURL\n",
            keystone.keystone_url()
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
    let addr = srv.addr;

    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clustertemplates",
        "1.1",
        Some(
            json!({"name": "k8s", "image_id": "ubuntu-jammy", "coe": "kubernetes",
                    "external_network_id": "public", "flavor_id": "m1.small",
                    "master_flavor_id": "m1.small"}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let (s, t) = call_at(
        addr,
        "POST",
        "/v1/clusters",
        "1.1",
        Some(json!({"name": "bar1", "cluster_template_id": "k8s", "node_count": 1})),
    )
    .await;
    assert_eq!(s, 202, "{t}");
    let uuid = t["uuid"].as_str().unwrap().to_string();
    let mut status = Value::Null;
    for _ in 0..400 {
        let (_, c) = call_at(addr, "GET", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
        status = c["status"].clone();
        if status == "CREATE_COMPLETE" || status == "CREATE_FAILED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "CREATE_COMPLETE");

    // The cluster row points at four Barbican containers.
    let row =
        openkeel_db::cluster::get_by_uuid(&srv.db, &openkeel_db::Scope::admin_all_tenants(), &uuid)
            .await
            .unwrap();
    let refs: Vec<String> = [
        row.ca_cert_ref,
        row.magnum_cert_ref,
        row.etcd_ca_cert_ref,
        row.front_proxy_ca_cert_ref,
    ]
    .into_iter()
    .map(Option::unwrap)
    .collect();
    let path = |r: &str| {
        let rest = r.trim_start_matches("http://");
        rest[rest.find('/').unwrap()..].to_string()
    };
    let get = |p: String, accept: &'static str| async move {
        let r = http(
            barbican,
            "GET",
            &p,
            &[("X-Project-Id", "service"), ("Accept", accept)],
            None,
        )
        .await
        .unwrap();
        (r.status, r.text())
    };
    for r in &refs {
        assert!(r.starts_with(&format!("{url}/v1/containers/")), "{r}");
        assert_eq!(get(path(r), "application/json").await.0, 200);
    }

    // GET /v1/certificates: the kubernetes CA, as stored in Barbican.
    let (s, c) = call_at(
        addr,
        "GET",
        &format!("/v1/certificates/{uuid}"),
        "1.1",
        None,
    )
    .await;
    assert_eq!(s, 200, "{c}");
    let container: Value =
        serde_json::from_str(&get(path(&refs[0]), "application/json").await.1).unwrap();
    let cert_ref = container["secret_refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "certificate")
        .unwrap()["secret_ref"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, stored) = get(format!("{}/payload", path(&cert_ref)), "text/plain").await;
    assert_eq!(s, 200);
    assert_eq!(c["pem"].as_str().unwrap().trim_end(), stored.trim_end());

    // POST /v1/certificates: signed with the CA key read from Barbican.
    use openkeel_certs::rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    let kp = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "system:node:w0");
    params.distinguished_name = dn;
    let csr = params.serialize_request(&kp).unwrap().pem().unwrap();
    let (s, r) = call_at(
        addr,
        "POST",
        "/v1/certificates",
        "1.1",
        Some(json!({"cluster_uuid": uuid, "csr": csr})),
    )
    .await;
    assert_eq!(s, 201, "{r}");
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("ca.pem"), c["pem"].as_str().unwrap()).unwrap();
    std::fs::write(d.path().join("leaf.pem"), r["pem"].as_str().unwrap()).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["verify", "-CAfile"])
        .arg(d.path().join("ca.pem"))
        .arg(d.path().join("leaf.pem"))
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // DELETE: the containers go with the cluster.
    let (s, _) = call_at(addr, "DELETE", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
    assert_eq!(s, 204);
    for _ in 0..400 {
        let (s, _) = call_at(addr, "GET", &format!("/v1/clusters/{uuid}"), "1.1", None).await;
        if s == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for r in &refs {
        assert_eq!(get(path(r), "application/json").await.0, 404, "{r}");
    }
    srv.stop().await.unwrap();
}
