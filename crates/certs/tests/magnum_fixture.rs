//! Interoperability with a CA created by the real Magnum 23.0.0 (one `x509keypair` row of the
//! reference rig, kubernetes CA of cluster `xi-3-cluster`, in `tests/data/magnum-ca.*`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use openkeel_certs::{generate_ca_certificate, key, sign_csr, CaKey};
use openkeel_core::config::X509Section;
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

fn magnum_ca() -> (String, String, String) {
    (
        read("magnum-ca.crt"),
        read("magnum-ca.key"),
        read("magnum-ca.passphrase").trim().to_string(),
    )
}

fn der_of(pem: &str) -> Vec<u8> {
    let (_, p) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    p.contents
}

fn node_csr() -> String {
    let kp = KeyPair::generate().unwrap();
    let mut p = CertificateParams::default();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name
        .push(DnType::CommonName, "system:node:xi-3-node-0");
    p.distinguished_name
        .push(DnType::OrganizationName, "system:nodes");
    p.subject_alt_names = vec![SanType::DnsName("xi-3-node-0".try_into().unwrap())];
    p.serialize_request(&kp).unwrap().pem().unwrap()
}

fn openssl_available() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn magnum_ca_key_decrypts_and_signs_a_csr_that_verifies() {
    let (cert, private_key, pass) = magnum_ca();
    assert!(private_key.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    let plain = key::decrypt_key_pem(&private_key, Some(&pass)).unwrap();
    assert!(plain.starts_with("-----BEGIN PRIVATE KEY-----"));
    assert!(key::decrypt_private_key(&private_key, Some("wrongwrongxx")).is_err());

    let ca_key = CaKey::from_pem(&private_key, Some(&pass)).unwrap();
    let signed = sign_csr(
        &node_csr(),
        "xi-3-cluster",
        &ca_key,
        &X509Section::default(),
    )
    .unwrap();

    let ca_der = der_of(&cert);
    let (_, ca) = X509Certificate::from_der(&ca_der).unwrap();
    let leaf_der = der_of(&signed);
    let (_, leaf) = X509Certificate::from_der(&leaf_der).unwrap();
    assert_eq!(leaf.issuer(), ca.subject());
    assert_eq!(
        leaf.subject().to_string(),
        "CN=system:node:xi-3-node-0, O=system:nodes"
    );
    leaf.verify_signature(Some(ca.public_key())).unwrap();

    if openssl_available() {
        let dir = std::env::temp_dir().join(format!("openkeel-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.crt"), format!("{cert}\n")).unwrap();
        std::fs::write(dir.join("leaf.crt"), format!("{signed}\n")).unwrap();
        let out = Command::new("openssl")
            .arg("verify")
            .arg("-CAfile")
            .arg(dir.join("ca.crt"))
            .arg(dir.join("leaf.crt"))
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            out.status.success(),
            "openssl verify: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Our CA carries the same extensions (order, criticality, values) as Magnum's; only the
/// subject key identifier differs (another key).
#[test]
fn our_ca_has_magnum_extensions() {
    let (cert, _, _) = magnum_ca();
    let ours =
        generate_ca_certificate("xi-3-cluster", "hrkhdbb2e6jp", &X509Section::default()).unwrap();
    let theirs_der = der_of(&cert);
    let ours_der = der_of(&ours.certificate);
    let (_, theirs) = X509Certificate::from_der(&theirs_der).unwrap();
    let (_, mine) = X509Certificate::from_der(&ours_der).unwrap();
    let summary = |c: &X509Certificate<'_>| -> Vec<(String, bool, Vec<u8>)> {
        c.extensions()
            .iter()
            .map(|e| {
                let v = if e.oid.to_id_string() == "2.5.29.14" {
                    Vec::new()
                } else {
                    e.value.to_vec()
                };
                (e.oid.to_id_string(), e.critical, v)
            })
            .collect()
    };
    assert_eq!(summary(&mine), summary(&theirs));
    assert_eq!(mine.subject(), theirs.subject());
    assert_eq!(mine.issuer(), theirs.issuer());
    assert_eq!(mine.version(), theirs.version());
    assert_eq!(
        mine.signature_algorithm.algorithm,
        theirs.signature_algorithm.algorithm
    );
    assert_eq!(
        mine.public_key().algorithm.algorithm,
        theirs.public_key().algorithm.algorithm
    );
}

/// What real Magnum's loader (cryptography over OpenSSL) gets from our encrypted key.
#[test]
fn openssl_reads_our_encrypted_key() {
    if !openssl_available() {
        return;
    }
    let ours = generate_ca_certificate("c", "abcdefgh2345", &X509Section::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("openkeel-certs-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.pem"), &ours.private_key).unwrap();
    let out = Command::new("openssl")
        .args(["pkey", "-noout", "-passin", "pass:abcdefgh2345", "-in"])
        .arg(dir.join("k.pem"))
        .output()
        .unwrap();
    let parse = Command::new("openssl")
        .args(["asn1parse", "-in"])
        .arg(dir.join("k.pem"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&parse.stdout);
    for want in ["PBES2", "PBKDF2", "hmacWithSHA256", "aes-256-cbc", ":0800"] {
        assert!(text.contains(want), "{want} missing");
    }
}
