//! The certificate handlers (`magnum/conductor/handlers/ca_conductor.py`, `credential_conductor.py`) with the x509keypair cert manager, on
//! SQLite and MariaDB: CA retrieval, a bad CSR, CA rotation (new certificates kept only when
//! the driver accepts them; the old ones deleted then; a refusal leaves the old CA in place)
//! and credential rotation's status guard.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use openkeel_certs::X509KeyPairCertManager;
use openkeel_conductor::certs_x509::X509KeyPairCertificates;
use openkeel_conductor::Conductor;
use openkeel_core::config::X509Section;
use openkeel_core::error::ErrorKind;
use openkeel_core::objects::{Certificate, Cluster, ClusterStatus};
use openkeel_db::{x509keypair, Database, Scope};
use openkeel_rpc::Obj;

fn with_certs(db: &Database) -> Arc<Conductor> {
    let (c, _rec) = conductor(db);
    let c = Arc::try_unwrap(c).expect("sole owner");
    let manager = X509KeyPairCertManager::new(db.clone(), X509Section::default());
    Arc::new(c.with_certificates(Arc::new(X509KeyPairCertificates::new(manager))))
}

async fn keypair_uuids(db: &Database) -> Vec<String> {
    let mut v: Vec<String> = x509keypair::list(
        db,
        &Scope::admin_all_tenants(),
        &Default::default(),
        &Default::default(),
    )
    .await
    .unwrap()
    .into_iter()
    .filter_map(|k| k.uuid)
    .collect();
    v.sort();
    v
}

fn refs(c: &Cluster) -> Vec<Option<String>> {
    vec![
        c.ca_cert_ref.clone(),
        c.magnum_cert_ref.clone(),
        c.etcd_ca_cert_ref.clone(),
        c.front_proxy_ca_cert_ref.clone(),
    ]
}

async fn complete(db: &Database, uuid: &str) -> Cluster {
    let mut c = cluster_row(db, uuid).await;
    c.status = Some(ClusterStatus::CreateComplete);
    openkeel_db::cluster::update(db, uuid, &c, &["status"])
        .await
        .unwrap();
    cluster_row(db, uuid).await
}

#[tokio::test]
async fn ca_certificates_and_signing_errors() {
    on_every_backend!(|db| {
        let c = with_certs(db);
        let t = template(db, "t", "v1.30.4", "ubuntu").await;
        let uuid = create(&c, &t, "c1", 1, &[]).await;
        let cluster = cluster_row(db, &uuid).await;
        let k8s = c
            .handle_get_ca_certificate(&ctx(), &cluster, None)
            .await
            .unwrap();
        let etcd = c
            .handle_get_ca_certificate(&ctx(), &cluster, Some("etcd"))
            .await
            .unwrap();
        let fp = c
            .handle_get_ca_certificate(&ctx(), &cluster, Some("front-proxy"))
            .await
            .unwrap();
        assert_eq!(k8s.cluster_uuid.as_deref(), Some(uuid.as_str()));
        assert_eq!(k8s.project_id, cluster.project_id);
        for pem in [&k8s.pem, &etcd.pem, &fp.pem] {
            assert!(pem
                .as_deref()
                .unwrap()
                .starts_with("-----BEGIN CERTIFICATE-----"));
        }
        assert_ne!(k8s.pem, etcd.pem);
        assert_ne!(k8s.pem, fp.pem);
        // anything else is the kubernetes CA
        let other = c
            .handle_get_ca_certificate(&ctx(), &cluster, Some("kubernetes"))
            .await
            .unwrap();
        assert_eq!(other.pem, k8s.pem);

        let bad = Certificate {
            csr: Some("not a csr".into()),
            ..Certificate::default()
        };
        let e = c
            .handle_sign_certificate(&ctx(), &cluster, Obj::new(bad, ["csr"]))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidCsr);
        assert_eq!(e.code(), 400);
        assert_eq!(e.message(), "Received invalid csr b'not a csr'.");
    });
}

#[tokio::test]
async fn rotation_keeps_new_certificates_only_when_the_driver_accepts_them() {
    on_every_backend!(|db| {
        let c = with_certs(db);
        let t = template(db, "t", "v1.30.4", "ubuntu").await;

        // Refused by the driver: the old CA stays, the new rows are gone, UPDATE_FAILED.
        let refused = create(
            &c,
            &t,
            "refused",
            1,
            &[("simulator_raise_on", "rotate_ca_certificate")],
        )
        .await;
        let before = complete(db, &refused).await;
        let rows_before = keypair_uuids(db).await;
        let e = c
            .handle_rotate_ca_certificate(&ctx(), Obj::unchanged(before.clone()))
            .await
            .unwrap_err();
        assert!(e.message().contains("rotate_ca_certificate"), "{e}");
        let after = cluster_row(db, &refused).await;
        assert_eq!(refs(&after), refs(&before), "the cluster keeps its CA");
        assert_eq!(
            keypair_uuids(db).await,
            rows_before,
            "no certificate leaked"
        );
        assert_eq!(after.status, Some(ClusterStatus::UpdateFailed));

        // Accepted: new refs saved, the old four rows deleted, UPDATE_IN_PROGRESS.
        let ok = create(&c, &t, "ok", 1, &[]).await;
        let before = complete(db, &ok).await;
        let old: Vec<String> = refs(&before).into_iter().flatten().collect();
        assert_eq!(old.len(), 4);
        let total_before = keypair_uuids(db).await.len();
        c.handle_rotate_ca_certificate(&ctx(), Obj::unchanged(before.clone()))
            .await
            .unwrap();
        let after = cluster_row(db, &ok).await;
        assert_eq!(after.status, Some(ClusterStatus::UpdateInProgress));
        let new: Vec<String> = refs(&after).into_iter().flatten().collect();
        assert_eq!(new.len(), 4);
        for r in &new {
            assert!(!old.contains(r), "every certificate is new");
        }
        let rows = keypair_uuids(db).await;
        assert_eq!(
            rows.len(),
            total_before,
            "four new rows, four old rows deleted"
        );
        for r in &old {
            assert!(!rows.contains(r), "old certificate {r} deleted");
        }

        // Not in an updatable status: refused before anything is generated.
        let busy = cluster_row(db, &ok).await; // UPDATE_IN_PROGRESS
        let rows = keypair_uuids(db).await;
        let e = c
            .handle_rotate_ca_certificate(&ctx(), Obj::unchanged(busy))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
        assert_eq!(
            e.message(),
            "Updating a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported."
        );
        assert_eq!(keypair_uuids(db).await, rows);
    });
}

#[tokio::test]
async fn credential_rotation_status_guard() {
    on_every_backend!(|db| {
        let c = with_certs(db);
        let t = template(db, "t", "v1.30.4", "ubuntu").await;
        let uuid = create(&c, &t, "c1", 1, &[]).await;
        let creating = cluster_row(db, &uuid).await; // CREATE_IN_PROGRESS
        let e = c
            .handle_credential_rotate(&ctx(), Obj::unchanged(creating))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
        assert_eq!(
            e.message(),
            "magnum.conductor.handlers.credential_conductor when cluster status is \"CREATE_IN_PROGRESS\" is not supported."
        );
        let done = complete(db, &uuid).await;
        c.handle_credential_rotate(&ctx(), Obj::unchanged(done))
            .await
            .unwrap();
    });
}

/// `sign_certificate` with the cluster's CAs: the signed certificate chains to the CA of the
/// requested `ca_cert_type` (signature checked with x509-parser), its issuer is the CA's
/// subject, and it does not verify against another of the cluster's CAs.
#[tokio::test]
async fn signed_certificate_verifies_against_the_cluster_ca() {
    use openkeel_certs::rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    use openkeel_certs::x509_parser::pem::parse_x509_pem;

    fn der(pem: &str) -> Vec<u8> {
        parse_x509_pem(pem.as_bytes()).unwrap().1.contents
    }
    on_every_backend!(|db| {
        let c = with_certs(db);
        let t = template(db, "t", "v1.30.4", "ubuntu").await;
        let uuid = create(&c, &t, "c1", 1, &[]).await;
        let cluster = cluster_row(db, &uuid).await;

        let kp = KeyPair::generate_for(&openkeel_certs::rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "system:node:worker-0");
        dn.push(DnType::OrganizationName, "system:nodes");
        params.distinguished_name = dn;
        let csr = params.serialize_request(&kp).unwrap().pem().unwrap();

        for (ty, other) in [(None, Some("etcd")), (Some("etcd"), None)] {
            let cert = Certificate {
                cluster_uuid: Some(uuid.clone()),
                csr: Some(csr.clone()),
                ca_cert_type: ty.map(str::to_string),
                ..Certificate::default()
            };
            let signed = c
                .handle_sign_certificate(&ctx(), &cluster, Obj::new(cert, ["cluster_uuid", "csr"]))
                .await
                .unwrap();
            assert_eq!(signed.csr.as_deref(), Some(csr.as_str()));
            let pem = signed.pem.unwrap();
            let ca_pem = c
                .handle_get_ca_certificate(&ctx(), &cluster, ty)
                .await
                .unwrap()
                .pem
                .unwrap();
            let other_pem = c
                .handle_get_ca_certificate(&ctx(), &cluster, other)
                .await
                .unwrap()
                .pem
                .unwrap();
            let (leaf_der, ca_der, other_der) = (der(&pem), der(&ca_pem), der(&other_pem));
            let (_, leaf) = openkeel_certs::x509_parser::parse_x509_certificate(&leaf_der).unwrap();
            let (_, ca) = openkeel_certs::x509_parser::parse_x509_certificate(&ca_der).unwrap();
            let (_, wrong) =
                openkeel_certs::x509_parser::parse_x509_certificate(&other_der).unwrap();
            assert_eq!(leaf.issuer(), ca.subject());
            leaf.verify_signature(Some(ca.public_key()))
                .expect("signed by the cluster CA");
            assert!(leaf.verify_signature(Some(wrong.public_key())).is_err());
            assert_eq!(
                leaf.subject().to_string(),
                "CN=system:node:worker-0, O=system:nodes"
            );
            // Magnum adds no basicConstraints the CSR did not ask for; never a CA.
            assert!(leaf
                .basic_constraints()
                .unwrap()
                .is_none_or(|bc| !bc.value.ca));
        }
    });
}

/// A driver that implements neither rotation (the trait's defaults, as Magnum's heat driver
/// raising `NotImplementedError`).
struct NoRotation;

#[async_trait::async_trait]
impl openkeel_drivers::Driver for NoRotation {
    fn name(&self) -> &str {
        "no_rotation"
    }
    fn provides(&self) -> Vec<openkeel_drivers::ProvidedType> {
        vec![openkeel_drivers::ProvidedType::new(
            "vm",
            "norotation",
            "kubernetes",
        )]
    }
    async fn create_cluster(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: i32,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn update_cluster(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: Option<&dyn openkeel_drivers::ScaleManager>,
        _: bool,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn upgrade_cluster(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: &openkeel_core::objects::ClusterTemplate,
        _: i32,
        _: &mut openkeel_core::objects::NodeGroup,
        _: bool,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn delete_cluster(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn resize_cluster(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: Option<&dyn openkeel_drivers::ScaleManager>,
        _: i32,
        _: &[String],
        _: &mut openkeel_core::objects::NodeGroup,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn create_nodegroup(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: &mut openkeel_core::objects::NodeGroup,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn update_nodegroup(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: &mut openkeel_core::objects::NodeGroup,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
    async fn delete_nodegroup(
        &self,
        _: &openkeel_drivers::DriverContext<'_>,
        _: &mut Cluster,
        _: &mut openkeel_core::objects::NodeGroup,
    ) -> openkeel_drivers::DriverResult<openkeel_drivers::Writes> {
        Ok(openkeel_drivers::Writes::none())
    }
}

/// A driver without rotation: credential rotation is `NotSupported("Credential rotation is
/// not supported by driver.")` (credential_conductor.py); CA rotation is refused, the
/// cluster keeps its CA and no certificate row is left behind.
#[tokio::test]
async fn rotation_refused_by_a_driver_without_it() {
    on_every_backend!(|db| {
        let mut drivers = openkeel_drivers::DriverRegistry::new(Default::default());
        drivers.register(Arc::new(NoRotation));
        let manager = X509KeyPairCertManager::new(db.clone(), X509Section::default());
        let c = Conductor::new(
            db.clone(),
            Arc::new(drivers),
            Arc::new(openkeel_conductor::notify::LogNotifier),
            settings(),
        )
        .with_certificates(Arc::new(X509KeyPairCertificates::new(manager)));
        let t = template(db, "t", "v1.30.4", "norotation").await;
        let uuid = create(&c, &t, "c1", 1, &[]).await;
        let before = complete(db, &uuid).await;
        assert_eq!(refs(&before).iter().flatten().count(), 4);

        let e = c
            .handle_credential_rotate(&ctx(), Obj::unchanged(before.clone()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
        assert_eq!(e.code(), 400);
        assert_eq!(
            e.message(),
            "Credential rotation is not supported by driver."
        );

        let rows = keypair_uuids(db).await;
        let e = c
            .handle_rotate_ca_certificate(&ctx(), Obj::unchanged(before.clone()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
        let after = cluster_row(db, &uuid).await;
        assert_eq!(refs(&after), refs(&before), "the cluster keeps its CA");
        assert_eq!(keypair_uuids(db).await, rows, "no certificate leaked");
        // nothing happened to the cluster: no UPDATE_FAILED (Magnum's), its status stays
        assert_eq!(after.status, before.status);
        assert_eq!(after.status_reason, before.status_reason);
    });
}

/// `[certificates] cert_manager_type = local`: the same handlers over files in
/// `storage_path` (`<ref>.crt`, `.key`, `.pass`), all removed at delete.
#[tokio::test]
async fn the_local_cert_manager_stores_signs_and_deletes_files() {
    let db = Database::in_memory().await.unwrap();
    openkeel_db::manage::upgrade(&db).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("certificates");
    let (c, _rec) = conductor(&db);
    let c = Arc::try_unwrap(c).expect("sole owner");
    let manager = X509KeyPairCertManager::local(&store, X509Section::default());
    let c = c.with_certificates(Arc::new(X509KeyPairCertificates::new(manager)));
    let t = template(&db, "t", "v1.30.4", "ubuntu").await;
    let uuid = create(&c, &t, "c1", 1, &[]).await;
    let cluster = cluster_row(&db, &uuid).await;
    let files = |ext: &str| {
        std::fs::read_dir(&store)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == ext)
            })
            .count()
    };
    assert_eq!((files("crt"), files("key"), files("pass")), (4, 4, 4));
    for r in refs(&cluster).into_iter().flatten() {
        assert!(store.join(format!("{r}.crt")).exists(), "{r}");
    }
    let ca = c
        .handle_get_ca_certificate(&ctx(), &cluster, None)
        .await
        .unwrap();
    assert!(ca.pem.unwrap().starts_with("-----BEGIN CERTIFICATE-----"));
    // the CA's encrypted key is read back with its passphrase and signs
    let e = c
        .handle_sign_certificate(
            &ctx(),
            &cluster,
            Obj::new(
                Certificate {
                    csr: Some("not a csr".into()),
                    ..Certificate::default()
                },
                ["csr"],
            ),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidCsr);
    let work = dir.path().join("csr");
    std::fs::create_dir_all(&work).unwrap();
    let out = std::process::Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=node-1",
        ])
        .args(["-keyout", "k.pem", "-out", "r.csr"])
        .current_dir(&work)
        .output()
        .expect("openssl CLI");
    assert!(out.status.success());
    let csr = std::fs::read_to_string(work.join("r.csr")).unwrap();
    let signed = c
        .handle_sign_certificate(
            &ctx(),
            &cluster,
            Obj::new(
                Certificate {
                    csr: Some(csr),
                    ..Certificate::default()
                },
                ["csr"],
            ),
        )
        .await
        .unwrap();
    std::fs::write(work.join("signed.pem"), signed.pem.unwrap() + "\n").unwrap();
    std::fs::write(
        work.join("ca.pem"),
        c.handle_get_ca_certificate(&ctx(), &cluster, None)
            .await
            .unwrap()
            .pem
            .unwrap()
            + "\n",
    )
    .unwrap();
    let v = std::process::Command::new("openssl")
        .args(["verify", "-CAfile", "ca.pem", "signed.pem"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    // cluster delete → the status sync deletes the certificates with the rows
    let backend = X509KeyPairCertificates::new(X509KeyPairCertManager::local(
        &store,
        X509Section::default(),
    ));
    use openkeel_conductor::ClusterCertificates;
    backend.delete_certificates(&ctx(), &cluster).await.unwrap();
    assert_eq!((files("crt"), files("key"), files("pass")), (0, 0, 0));
}
