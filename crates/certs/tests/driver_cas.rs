//! The cluster's CAs for the Cluster API driver (`ClusterCaSource`) over the `x509keypair`
//! and `local` cert managers: the stored certificates, their keys decrypted, each key the
//! one of its certificate; missing refs and other projects' certificates are permanent
//! errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_certs::{rcgen, X509KeyPairCertManager};
use openkeel_core::config::X509Section;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use openkeel_db::Database;
use openkeel_drivers::deps::{ClusterCaSource, KeyPairPem};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

fn ctx(project: &str) -> RequestContext {
    RequestContext {
        project_id: Some(project.to_string()),
        user_id: Some("u1".to_string()),
        ..RequestContext::default()
    }
}

/// (subject CN text, is a CA, SPKI DER) of a PEM certificate.
fn cert_facts(pem: &str) -> (String, bool, Vec<u8>) {
    let (_, p) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    let (_, c) = X509Certificate::from_der(&p.contents).unwrap();
    (
        c.subject().to_string(),
        c.is_ca(),
        c.public_key().raw.to_vec(),
    )
}

fn check_pair(p: &KeyPairPem, ca: bool) {
    assert!(
        p.private_key.starts_with("-----BEGIN PRIVATE KEY-----"),
        "decrypted PKCS#8"
    );
    let key = rcgen::KeyPair::from_pem(&p.private_key).unwrap();
    let (_, is_ca, spki) = cert_facts(&p.certificate);
    assert_eq!(is_ca, ca);
    assert_eq!(
        rcgen::PublicKeyData::subject_public_key_info(&key),
        spki,
        "the key is the certificate's"
    );
    assert!(
        !format!("{p:?}").contains("PRIVATE KEY"),
        "Debug hides the key"
    );
}

async fn generated(m: &X509KeyPairCertManager) -> Cluster {
    let mut cluster = Cluster {
        uuid: Some("0b7a1f2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b".to_string()),
        name: Some("k8s".to_string()),
        project_id: Some("p1".to_string()),
        user_id: Some("u1".to_string()),
        ..Cluster::default()
    };
    let refs = m
        .generate_certificates_to_cluster(&ctx("p1"), &cluster)
        .await
        .unwrap();
    cluster.ca_cert_ref = Some(refs.ca_cert_ref);
    cluster.magnum_cert_ref = Some(refs.magnum_cert_ref);
    cluster.etcd_ca_cert_ref = Some(refs.etcd_ca_cert_ref);
    cluster.front_proxy_ca_cert_ref = Some(refs.front_proxy_ca_cert_ref);
    cluster
}

async fn check_manager(m: &X509KeyPairCertManager) {
    let cluster = generated(m).await;
    let cas = m.cluster_cas(&ctx("p1"), &cluster).await.unwrap();
    for (pair, r) in [
        (&cas.kubernetes, &cluster.ca_cert_ref),
        (&cas.etcd, &cluster.etcd_ca_cert_ref),
        (&cas.front_proxy, &cluster.front_proxy_ca_cert_ref),
        (&cas.service_account, &cluster.magnum_cert_ref),
    ] {
        let stored = m.get_cert(&ctx("p1"), r.as_deref().unwrap()).await.unwrap();
        assert_eq!(pair.certificate, stored.certificate);
        assert!(
            stored.private_key.contains("ENCRYPTED PRIVATE KEY"),
            "stored encrypted, as Magnum stores it"
        );
        check_pair(pair, !std::ptr::eq(pair, &cas.service_account));
    }
    // Four different key pairs.
    let keys = [
        &cas.kubernetes.private_key,
        &cas.etcd.private_key,
        &cas.front_proxy.private_key,
        &cas.service_account.private_key,
    ];
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            assert_ne!(a, b);
        }
    }

    // A missing ref: permanent, naming it.
    let mut missing = cluster.clone();
    missing.etcd_ca_cert_ref = None;
    let e = m.cluster_cas(&ctx("p1"), &missing).await.unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(e.message(), "The cluster has no etcd_ca_cert_ref.");
    // A ref that does not exist: permanent.
    let mut unknown = cluster.clone();
    unknown.magnum_cert_ref = Some("6a1e4b0c-0000-4000-8000-000000000000".into());
    let e = m.cluster_cas(&ctx("p1"), &unknown).await.unwrap_err();
    assert!(!e.is_transient(), "{e}");
    assert!(
        e.message()
            .starts_with("Cannot read the cluster's magnum_cert_ref: "),
        "{e}"
    );
}

#[tokio::test]
async fn x509keypair_cas_decrypted_and_tenant_scoped() {
    let db = Database::in_memory().await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let m = X509KeyPairCertManager::new(db, X509Section::default());
    check_manager(&m).await;
    // Another project's context does not see p1's certificates (the row look-up is
    // tenant-scoped, as Magnum's); the periodic task's admin context does.
    let cluster = generated(&m).await;
    let e = m.cluster_cas(&ctx("p2"), &cluster).await.unwrap_err();
    assert!(!e.is_transient());
    let admin = RequestContext {
        is_admin: true,
        all_tenants: true,
        ..RequestContext::default()
    };
    let cas = m.cluster_cas(&admin, &cluster).await.unwrap();
    check_pair(&cas.kubernetes, true);
}

#[tokio::test]
async fn local_cas_decrypted() {
    let dir = tempfile::tempdir().unwrap();
    let m = X509KeyPairCertManager::local(dir.path(), X509Section::default());
    check_manager(&m).await;
}
