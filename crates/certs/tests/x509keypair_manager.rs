//! The `x509keypair` cert manager against SQLite.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_certs::{CertError, X509KeyPairCertManager};
use openkeel_core::config::X509Section;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use openkeel_db::{x509keypair, Database, DbError, Scope};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

async fn db() -> Database {
    let db = Database::in_memory().await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    db
}

fn ctx(project: &str) -> RequestContext {
    RequestContext {
        project_id: Some(project.to_string()),
        user_id: Some("u1".to_string()),
        ..RequestContext::default()
    }
}

fn subject_and_issuer(pem: &str) -> (String, String) {
    let (_, p) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    let (_, c) = X509Certificate::from_der(&p.contents).unwrap();
    (c.subject().to_string(), c.issuer().to_string())
}

#[tokio::test]
async fn store_get_delete_are_tenant_scoped() {
    let db = db().await;
    let m = X509KeyPairCertManager::new(db.clone(), X509Section::default());
    let r = m
        .store_cert(&ctx("p1"), "CERT", "KEY", Some("pass"))
        .await
        .unwrap();
    let row = x509keypair::get_by_uuid(&db, &Scope::admin_all_tenants(), &r)
        .await
        .unwrap();
    assert_eq!(row.project_id.as_deref(), Some("p1"));
    assert_eq!(row.user_id.as_deref(), Some("u1"));
    assert_eq!(row.private_key_passphrase.as_deref(), Some("pass"));
    assert_eq!(row.intermediates, None);
    let cert = m.get_cert(&ctx("p1"), &r).await.unwrap();
    assert_eq!(cert.certificate, "CERT");
    assert!(matches!(
        m.get_cert(&ctx("p2"), &r).await,
        Err(CertError::Db(DbError::X509KeyPairNotFound(_)))
    ));
    m.delete_cert(&ctx("p1"), &r).await.unwrap();
    assert!(m.get_cert(&ctx("p1"), &r).await.is_err());
}

#[tokio::test]
async fn cluster_certificates_are_generated_signed_and_all_deleted() {
    let db = db().await;
    let m = X509KeyPairCertManager::new(db.clone(), X509Section::default());
    let c = ctx("p1");
    let mut cluster = Cluster {
        uuid: Some("5d12f6fd-a196-4bf0-ae4c-1f639a523a52".to_string()),
        name: None,
        ..Cluster::default()
    };
    let refs = m
        .generate_certificates_to_cluster(&c, &cluster)
        .await
        .unwrap();
    let all = [
        &refs.ca_cert_ref,
        &refs.etcd_ca_cert_ref,
        &refs.front_proxy_ca_cert_ref,
        &refs.magnum_cert_ref,
    ];
    let uuid = cluster.uuid.clone().unwrap();
    for r in &all[..3] {
        let cert = m.get_cert(&c, r).await.unwrap();
        assert_eq!(
            subject_and_issuer(&cert.certificate),
            (format!("CN={uuid}"), format!("CN={uuid}"))
        );
        assert!(cert
            .private_key
            .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
        let pass = cert.private_key_passphrase.clone().unwrap();
        assert_eq!(pass.len(), 12);
        assert!(cert
            .decrypted_private_key()
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----"));
    }
    let client = m.get_cert(&c, &refs.magnum_cert_ref).await.unwrap();
    assert_eq!(
        subject_and_issuer(&client.certificate),
        (
            "CN=admin, O=system:masters".to_string(),
            format!("CN={uuid}")
        )
    );

    cluster.ca_cert_ref = Some(refs.ca_cert_ref.clone());
    cluster.magnum_cert_ref = Some(refs.magnum_cert_ref.clone());
    cluster.etcd_ca_cert_ref = Some(refs.etcd_ca_cert_ref.clone());
    cluster.front_proxy_ca_cert_ref = Some(refs.front_proxy_ca_cert_ref.clone());

    // Sign with the etcd CA; it verifies against that CA only.
    let kp = rcgen::KeyPair::generate().unwrap();
    let csr = rcgen::CertificateParams::new(vec!["etcd-0".to_string()])
        .unwrap()
        .serialize_request(&kp)
        .unwrap()
        .pem()
        .unwrap();
    let signed = m
        .sign_node_certificate(&c, &cluster, &csr, Some("etcd"))
        .await
        .unwrap();
    let etcd = m
        .get_cluster_ca_certificate(&c, &cluster, Some("etcd"))
        .await
        .unwrap();
    let k8s = m
        .get_cluster_ca_certificate(&c, &cluster, None)
        .await
        .unwrap();
    let (_, sp) = x509_parser::pem::parse_x509_pem(signed.as_bytes()).unwrap();
    let (_, leaf) = X509Certificate::from_der(&sp.contents).unwrap();
    let (_, ep) = x509_parser::pem::parse_x509_pem(etcd.certificate.as_bytes()).unwrap();
    let (_, etcd_c) = X509Certificate::from_der(&ep.contents).unwrap();
    let (_, kpem) = x509_parser::pem::parse_x509_pem(k8s.certificate.as_bytes()).unwrap();
    let (_, k8s_c) = X509Certificate::from_der(&kpem.contents).unwrap();
    leaf.verify_signature(Some(etcd_c.public_key())).unwrap();
    assert!(leaf.verify_signature(Some(k8s_c.public_key())).is_err());

    m.delete_certificates_from_cluster(&c, &cluster)
        .await
        .unwrap();
    for r in all {
        assert!(
            x509keypair::get_by_uuid(&db, &Scope::admin_all_tenants(), r)
                .await
                .is_err()
        );
    }
    // Deleting again is not an error (the rows are gone).
    m.delete_certificates_from_cluster(&c, &cluster)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_failed_generation_leaves_no_rows() {
    let db = db().await;
    let m = X509KeyPairCertManager::new(db.clone(), X509Section::default());
    let cluster = Cluster {
        uuid: Some("5d12f6fd-a196-4bf0-ae4c-1f639a523a53".to_string()),
        name: Some("n".repeat(65)),
        ..Cluster::default()
    };
    assert!(m
        .generate_certificates_to_cluster(&ctx("p1"), &cluster)
        .await
        .is_err());
    let rows = x509keypair::list(
        &db,
        &Scope::admin_all_tenants(),
        &Default::default(),
        &Default::default(),
    )
    .await
    .unwrap();
    assert!(rows.is_empty());
}
