//! `[certificates] cert_manager_type = barbican` against the **real Barbican 23.0.0**
//! (`tests/services/barbican.sh`, `OPENKEEL_TEST_BARBICAN_URL`), found through the catalogue
//! of the Keystone stand-in (a real Keystone is not needed: the test Barbican runs its
//! `unauthenticated-context` pipeline, the project is the `X-Project-Id` OpenKeel sends).
//!
//! Cluster create stores the four certificates as Barbican `certificate` containers in
//! Magnum's layout, a CSR signed against the CA read back from Barbican passes
//! `openssl verify`, and the deletion after the cluster is gone removes every container and
//! secret.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::*;
use openkeel_certs::X509KeyPairCertManager;
use openkeel_cloud::{BarbicanClient, ClientSettings, CloudSettings, KeystoneAuthSettings};
use openkeel_conductor::certs_x509::X509KeyPairCertificates;
use openkeel_conductor::Conductor;
use openkeel_core::config::X509Section;
use openkeel_core::objects::{Certificate, Cluster, ClusterStatus};
use openkeel_db::Database;
use openkeel_rpc::Obj;
use openkeel_tests::standin::{self, StandIn, StandInData};
use serde_json::Value;

/// The project the stand-in gives the service token (`project_name = service`).
const SERVICE_PROJECT: &str = "service";

struct Rig {
    _keystone: StandIn,
    barbican: SocketAddr,
    manager: X509KeyPairCertManager,
}

async fn rig() -> Option<Rig> {
    let url = openkeel_tests::barbican_url()?;
    let barbican: SocketAddr = url
        .trim_start_matches("http://")
        .parse()
        .expect("OPENKEEL_TEST_BARBICAN_URL is http://127.0.0.1:<port>");
    let keystone = standin::start(StandInData {
        key_manager_url: Some(url.clone()),
        ..StandInData::default()
    })
    .await;
    let settings = CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_url: Some(keystone.keystone_url()),
            username: Some("magnum".into()),
            password: Some("secret".into()),
            user_domain_id: Some("default".into()),
            project_name: Some(SERVICE_PROJECT.into()),
            project_domain_id: Some("default".into()),
            ..KeystoneAuthSettings::default()
        },
        ..CloudSettings::default()
    };
    let client = BarbicanClient::new(
        settings,
        ClientSettings {
            region_name: Some("RegionOne".into()),
            endpoint_type: "internalURL".into(),
        },
    )
    .unwrap();
    Some(Rig {
        _keystone: keystone,
        barbican,
        manager: X509KeyPairCertManager::barbican(client, X509Section::default()),
    })
}

impl Rig {
    /// `GET <path>` on Barbican, as the service project.
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = openkeel_tests::http(
            self.barbican,
            "GET",
            path,
            &[
                ("X-Project-Id", SERVICE_PROJECT),
                ("Accept", "application/json"),
            ],
            None,
        )
        .await
        .unwrap();
        (
            r.status,
            serde_json::from_slice(&r.body).unwrap_or(Value::Null),
        )
    }

    async fn payload(&self, secret_ref: &str) -> String {
        let r = openkeel_tests::http(
            self.barbican,
            "GET",
            &format!("{}/payload", path_of(secret_ref)),
            &[("X-Project-Id", SERVICE_PROJECT), ("Accept", "text/plain")],
            None,
        )
        .await
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
        r.text()
    }
}

fn path_of(r: &str) -> String {
    let rest = r.trim_start_matches("http://");
    rest[rest.find('/').unwrap()..].to_string()
}

fn with_barbican(db: &Database, manager: X509KeyPairCertManager) -> Arc<Conductor> {
    let (c, _rec) = conductor(db);
    let c = Arc::try_unwrap(c).expect("sole owner");
    Arc::new(c.with_certificates(Arc::new(X509KeyPairCertificates::new(manager))))
}

fn refs(c: &Cluster) -> Vec<String> {
    [
        &c.ca_cert_ref,
        &c.magnum_cert_ref,
        &c.etcd_ca_cert_ref,
        &c.front_proxy_ca_cert_ref,
    ]
    .into_iter()
    .map(|r| r.clone().expect("cert ref set"))
    .collect()
}

fn openssl_verify(ca_pem: &str, leaf_pem: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let (ca, leaf) = (dir.path().join("ca.pem"), dir.path().join("leaf.pem"));
    std::fs::write(&ca, ca_pem).unwrap();
    std::fs::write(&leaf, leaf_pem).unwrap();
    let out = std::process::Command::new("openssl")
        .arg("verify")
        .arg("-CAfile")
        .arg(&ca)
        .arg(&leaf)
        .output()
        .expect("openssl is installed (Debian: openssl)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn cluster_certificates_live_in_barbican() {
    let Some(rig) = rig().await else { return };
    let db = Database::in_memory().await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let c = with_barbican(&db, rig.manager.clone());
    let t = template(&db, "t", "v1.30.4", "ubuntu").await;
    let name = format!("bc-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let uuid = ready(&c, &db, &t, &name, &[]).await;
    let cluster = cluster_row(&db, &uuid).await;
    let all = refs(&cluster);

    // Magnum's layout: the ref is the container ref; a `certificate` container named after
    // the issuer (the client certificate: Magnum-Conductor) with three text/plain secrets.
    let mut secret_refs = Vec::new();
    for (i, r) in all.iter().enumerate() {
        assert!(r.starts_with("http://127.0.0.1:"), "{r}");
        assert!(path_of(r).starts_with("/v1/containers/"), "{r}");
        let (status, body) = rig.get(&path_of(r)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["type"], "certificate");
        let want_name = if i == 1 { "Magnum-Conductor" } else { &name };
        assert_eq!(body["name"], want_name);
        let entries = body["secret_refs"].as_array().unwrap();
        let mut names: Vec<&str> = entries
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["certificate", "private_key", "private_key_passphrase"]
        );
        for e in entries {
            let sref = e["secret_ref"].as_str().unwrap().to_string();
            let (status, meta) = rig.get(&path_of(&sref)).await;
            assert_eq!(status, 200, "{meta}");
            let want = match e["name"].as_str().unwrap() {
                "certificate" => "Certificate",
                "private_key" => "Private Key",
                _ => "Private Key Passphrase",
            };
            assert_eq!(meta["name"], want);
            assert_eq!(meta["content_types"]["default"], "text/plain");
            let payload = rig.payload(&sref).await;
            match want {
                "Certificate" => assert!(payload.starts_with("-----BEGIN CERTIFICATE-----")),
                "Private Key" => {
                    assert!(payload.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
                }
                _ => assert_eq!(payload.len(), 12, "a short_id passphrase"),
            }
            secret_refs.push(sref);
        }
    }

    // The CA read back from Barbican signs a CSR; the result passes `openssl verify`
    // against that CA and fails against the etcd CA.
    use openkeel_certs::rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    let kp = KeyPair::generate_for(&openkeel_certs::rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "system:node:worker-0");
    dn.push(DnType::OrganizationName, "system:nodes");
    params.distinguished_name = dn;
    let csr = params.serialize_request(&kp).unwrap().pem().unwrap();
    let cert = Certificate {
        cluster_uuid: Some(uuid.clone()),
        csr: Some(csr),
        ..Certificate::default()
    };
    let signed = c
        .handle_sign_certificate(&ctx(), &cluster, Obj::new(cert, ["cluster_uuid", "csr"]))
        .await
        .unwrap()
        .pem
        .unwrap();
    let ca = c
        .handle_get_ca_certificate(&ctx(), &cluster, None)
        .await
        .unwrap()
        .pem
        .unwrap();
    let etcd = c
        .handle_get_ca_certificate(&ctx(), &cluster, Some("etcd"))
        .await
        .unwrap()
        .pem
        .unwrap();
    assert_ne!(ca, etcd);
    let ca_in_barbican = rig
        .payload(
            rig.get(&path_of(&all[0])).await.1["secret_refs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "certificate")
                .unwrap()["secret_ref"]
                .as_str()
                .unwrap(),
        )
        .await;
    assert_eq!(ca, ca_in_barbican, "the CA served is the one in Barbican");
    let (ok, text) = openssl_verify(&ca, &signed);
    assert!(ok, "openssl verify: {text}");
    let (ok, _) = openssl_verify(&etcd, &signed);
    assert!(!ok, "not signed by the etcd CA");

    // Delete: once the cluster is gone, every container and secret is removed.
    c.handle_cluster_delete(&ctx(), &uuid).await.unwrap();
    c.sync_cluster_status().await;
    assert!(get(&db, &uuid).await.is_none());
    for r in all.iter().chain(secret_refs.iter()) {
        let (status, body) = rig.get(&path_of(r)).await;
        assert_eq!(status, 404, "{r} still in Barbican: {body}");
    }
}

/// A ref Barbican does not know: reading fails (a 500 from the API, as Magnum's
/// openstacksdk `NotFoundException`), deleting it is not an error.
#[tokio::test]
async fn unknown_refs() {
    let Some(rig) = rig().await else { return };
    let ctx = ctx();
    let missing = format!(
        "http://{}/v1/containers/{}",
        rig.barbican,
        uuid::Uuid::new_v4()
    );
    let e = rig.manager.get_cert(&ctx, &missing).await.unwrap_err();
    assert!(e.to_string().contains("404"), "{e}");
    let e: openkeel_core::error::MagnumError = e.into();
    assert_eq!(e.code(), 500);
    let cluster = Cluster {
        ca_cert_ref: Some(missing.clone()),
        ..Cluster::default()
    };
    rig.manager
        .delete_certificates_from_cluster(&ctx, &cluster)
        .await
        .unwrap();
    // A passphrase-less certificate has no passphrase secret; get returns None for it.
    let r = rig
        .manager
        .store_cert_named(&ctx, "CERT", "KEY", None, "plain")
        .await
        .unwrap();
    let got = rig.manager.get_cert(&ctx, &r).await.unwrap();
    assert_eq!(got.certificate, "CERT");
    assert_eq!(got.private_key, "KEY");
    assert_eq!(got.private_key_passphrase, None);
    rig.manager.delete_cert(&ctx, &r).await.unwrap();
    assert_eq!(rig.get(&path_of(&r)).await.0, 404);
    let _ = ClusterStatus::CreateComplete;
}

/// Run Magnum 23.0.0's own barbican cert manager (`tests/python/magnum_barbican_cert.py`,
/// the test venv's `magnum`) against the same Barbican and stand-in Keystone.
fn magnum(conf: &std::path::Path, args: &[&str]) -> Value {
    let python = openkeel_tests::venv_bin("python").expect("the test venv");
    let script = openkeel_tests::workspace_root().join("tests/python/magnum_barbican_cert.py");
    // bounded: coreutils' timeout ends a hung client
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg(python)
        .arg(script)
        .arg(conf)
        .arg(SERVICE_PROJECT)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "magnum's barbican cert manager failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Stored-format compatibility both ways: a certificate Magnum's `barbican_cert_manager`
/// stored is read (and deleted) by OpenKeel, and one OpenKeel stored is read by Magnum's
/// code, which also decrypts its key with its passphrase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn magnum_and_openkeel_read_each_others_certificates() {
    let Some(rig) = rig().await else { return };
    if openkeel_tests::venv().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("magnum.conf");
    std::fs::write(
        &conf,
        format!(
            "[keystone_auth]\nauth_type = password\nauth_url = {}\nusername = magnum\n\
             password = secret\nuser_domain_id = default\nproject_name = {SERVICE_PROJECT}\n\
             project_domain_id = default\n\n[barbican_client]\nregion_name = RegionOne\n\
             endpoint_type = internalURL\n",
            rig._keystone.keystone_url()
        ),
    )
    .unwrap();
    let ctx = ctx();
    let ca =
        openkeel_certs::generate_ca_certificate("compat", "abcdefghijkl", &X509Section::default())
            .unwrap();
    let (cert_file, key_file) = (dir.path().join("ca.crt"), dir.path().join("ca.key"));
    std::fs::write(&cert_file, &ca.certificate).unwrap();
    std::fs::write(&key_file, &ca.private_key).unwrap();

    // Magnum stores, OpenKeel reads and signs with it, then deletes it.
    let conf2 = conf.clone();
    let (c, k) = (cert_file.clone(), key_file.clone());
    let stored = tokio::task::spawn_blocking(move || {
        magnum(
            &conf2,
            &[
                "store",
                c.to_str().unwrap(),
                k.to_str().unwrap(),
                "abcdefghijkl",
                "compat",
            ],
        )
    })
    .await
    .unwrap();
    let r = stored["ref"].as_str().unwrap().to_string();
    assert!(path_of(&r).starts_with("/v1/containers/"), "{r}");
    let got = rig.manager.get_cert(&ctx, &r).await.unwrap();
    // Barbican keeps a text/plain payload without its trailing newline, whoever stored it.
    assert_eq!(got.certificate, ca.certificate.trim_end());
    assert_eq!(got.private_key, ca.private_key.trim_end());
    assert_eq!(got.private_key_passphrase.as_deref(), Some("abcdefghijkl"));
    assert_eq!(got.intermediates, None);
    got.signing_key()
        .expect("the key decrypts with its passphrase");
    let secrets: Vec<String> = rig.get(&path_of(&r)).await.1["secret_refs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["secret_ref"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(secrets.len(), 3);
    rig.manager.delete_cert(&ctx, &r).await.unwrap();
    for x in secrets.iter().chain([&r]) {
        assert_eq!(rig.get(&path_of(x)).await.0, 404, "{x}");
    }

    // OpenKeel stores, Magnum reads (and decrypts the key), then deletes it.
    let r = rig
        .manager
        .store_cert_named(
            &ctx,
            &ca.certificate,
            &ca.private_key,
            Some("abcdefghijkl"),
            "compat",
        )
        .await
        .unwrap();
    let (conf2, r2) = (conf.clone(), r.clone());
    let read = tokio::task::spawn_blocking(move || magnum(&conf2, &["get", &r2]))
        .await
        .unwrap();
    assert_eq!(read["certificate"], ca.certificate.trim_end());
    assert_eq!(read["private_key"], ca.private_key.trim_end());
    assert_eq!(read["private_key_passphrase"], "abcdefghijkl");
    assert_eq!(read["intermediates"], Value::Null);
    assert!(read["decrypted_private_key"]
        .as_str()
        .unwrap()
        .starts_with("-----BEGIN PRIVATE KEY-----"));
    let (conf2, r2) = (conf.clone(), r.clone());
    tokio::task::spawn_blocking(move || magnum(&conf2, &["delete", &r2]))
        .await
        .unwrap();
    assert_eq!(rig.get(&path_of(&r)).await.0, 404);
}
