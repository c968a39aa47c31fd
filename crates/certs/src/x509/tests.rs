#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use rcgen::{CertificateParams, ExtendedKeyUsagePurpose, KeyUsagePurpose, SanType};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::pem::parse_x509_pem;

fn settings() -> X509Section {
    X509Section::default()
}

fn parse(pem: &str) -> (Vec<u8>, ()) {
    let (_, p) = parse_x509_pem(pem.as_bytes()).unwrap();
    assert_eq!(p.label, "CERTIFICATE");
    (p.contents, ())
}

fn with_cert<R>(pem: &str, f: impl FnOnce(&X509Certificate<'_>) -> R) -> R {
    let (der, ()) = parse(pem);
    let (_, c) = X509Certificate::from_der(&der).unwrap();
    f(&c)
}

fn ext_summary(c: &X509Certificate<'_>) -> Vec<(String, bool)> {
    c.extensions()
        .iter()
        .map(|e| (e.oid.to_id_string(), e.critical))
        .collect()
}

fn expected_ski(c: &X509Certificate<'_>) -> Vec<u8> {
    let d = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        &c.public_key().subject_public_key.data,
    );
    d.as_ref().to_vec()
}

fn ski_of(c: &X509Certificate<'_>) -> Vec<u8> {
    c.extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(k) => Some(k.0.to_vec()),
            _ => None,
        })
        .unwrap()
}

fn check_validity(c: &X509Certificate<'_>, days: i64) {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let nb = c.validity().not_before.timestamp();
    let na = c.validity().not_after.timestamp();
    assert!((nb - (now - 86_400)).abs() < 120, "notBefore = now - 1 day");
    assert!(
        (na - (now + days * 86_400)).abs() < 120,
        "notAfter = now + term"
    );
}

/// One CA for the tests that only sign with it (RSA generation is slow in debug builds).
fn ca() -> (GeneratedCert, CaKey) {
    static CA: std::sync::OnceLock<GeneratedCert> = std::sync::OnceLock::new();
    let ca = CA
        .get_or_init(|| {
            generate_ca_certificate("k8s-cluster", "abcdefghijkl", &settings()).unwrap()
        })
        .clone();
    let key = CaKey::from_pem(&ca.private_key, Some("abcdefghijkl")).unwrap();
    (ca, key)
}

#[test]
fn ca_certificate_is_what_magnum_generates() {
    let (ca, _) = ca();
    assert!(!ca.certificate.ends_with('\n'));
    assert!(ca
        .private_key
        .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    with_cert(&ca.certificate, |c| {
        assert_eq!(c.version().0, 2, "v3");
        assert_eq!(c.subject().to_string(), "CN=k8s-cluster");
        assert_eq!(c.issuer().to_string(), "CN=k8s-cluster");
        assert_eq!(
            c.signature_algorithm.algorithm.to_id_string(),
            "1.2.840.113549.1.1.11",
            "sha256WithRSAEncryption"
        );
        match c.public_key().parsed().unwrap() {
            x509_parser::public_key::PublicKey::RSA(rsa) => {
                assert_eq!(rsa.key_size(), 2048);
                assert_eq!(rsa.exponent, &[0x01, 0x00, 0x01]);
            }
            other => panic!("not RSA: {other:?}"),
        }
        assert!(c.serial.bits() <= 128 && c.serial.bits() > 64);
        check_validity(c, 1825);
        assert_eq!(
            ext_summary(c),
            vec![
                ("2.5.29.19".to_string(), true),
                ("2.5.29.15".to_string(), true),
                ("2.5.29.14".to_string(), false),
            ]
        );
        let bc = c.basic_constraints().unwrap().unwrap().value;
        assert!(bc.ca);
        assert_eq!(bc.path_len_constraint, Some(0));
        let ku = c.key_usage().unwrap().unwrap().value;
        assert!(ku.key_cert_sign());
        assert_eq!(ku.flags, 1 << 5);
        assert_eq!(ski_of(c), expected_ski(c));
        c.verify_signature(None).unwrap();
    });
}

#[test]
fn client_certificate_is_signed_by_the_ca() {
    let (ca, key) = ca();
    let client = generate_client_certificate(
        "k8s-cluster",
        "admin",
        "system:masters",
        &key,
        "pw",
        &settings(),
    )
    .unwrap();
    assert!(CaKey::from_pem(&client.private_key, Some("pw")).is_ok());
    let (ca_der, ()) = parse(&ca.certificate);
    let (_, ca_c) = X509Certificate::from_der(&ca_der).unwrap();
    with_cert(&client.certificate, |c| {
        assert_eq!(c.subject().to_string(), "CN=admin, O=system:masters");
        assert_eq!(c.issuer().to_string(), "CN=k8s-cluster");
        check_validity(c, 1825);
        assert_eq!(
            ext_summary(c),
            vec![
                ("2.5.29.15".to_string(), true),
                ("2.5.29.37".to_string(), false),
                ("2.5.29.19".to_string(), true),
                ("2.5.29.14".to_string(), false),
            ]
        );
        let ku = c.key_usage().unwrap().unwrap().value;
        assert!(ku.digital_signature() && ku.key_encipherment());
        assert_eq!(ku.flags.count_ones(), 2);
        let eku = c.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth);
        assert!(!c.basic_constraints().unwrap().unwrap().value.ca);
        assert_eq!(ski_of(c), expected_ski(c));
        c.verify_signature(Some(ca_c.public_key())).unwrap();
    });
}

fn csr(params: &CertificateParams) -> String {
    let kp = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    params.serialize_request(&kp).unwrap().pem().unwrap()
}

fn node_params() -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name
        .push(DnType::CommonName, "system:node:n1");
    p.distinguished_name
        .push(DnType::OrganizationName, "system:nodes");
    p
}

#[test]
fn sign_filters_extensions_like_magnum() {
    let (ca, key) = ca();
    let mut p = node_params();
    p.subject_alt_names = vec![
        SanType::DnsName("n1.example".try_into().unwrap()),
        SanType::IpAddress("10.0.0.5".parse().unwrap()),
    ];
    p.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    // keyUsage digitalSignature, keyEncipherment, keyCertSign, cRLSign (non-critical).
    let mut ku = [false; 9];
    ku[0] = true;
    ku[2] = true;
    ku[5] = true;
    ku[6] = true;
    // basicConstraints CA:TRUE (non-critical), a CRL distribution point (not allowed).
    let bc = CustomExtension::from_oid_content(
        OID_BASIC_CONSTRAINTS,
        vec![0x30, 0x03, 0x01, 0x01, 0xff],
    );
    let crl = CustomExtension::from_oid_content(
        &[2, 5, 29, 31],
        vec![
            0x30, 0x1a, 0x30, 0x18, 0xa0, 0x16, 0xa0, 0x14, 0x86, 0x12, b'h', b't', b't', b'p',
            b':', b'/', b'/', b'c', b'r', b'l', b'.', b'e', b'x', b'/', b'c', b'a', b'.', b'c',
        ],
    );
    p.custom_extensions = vec![key_usage_ext(&ku, false), bc, crl];
    let pem = sign_csr(&csr(&p), "k8s-cluster", &key, &settings()).unwrap();
    let (ca_der, ()) = parse(&ca.certificate);
    let (_, ca_c) = X509Certificate::from_der(&ca_der).unwrap();
    with_cert(&pem, |c| {
        assert_eq!(c.subject().to_string(), "CN=system:node:n1, O=system:nodes");
        assert_eq!(c.issuer().to_string(), "CN=k8s-cluster");
        check_validity(c, 1825);
        let names: Vec<String> = ext_summary(c).into_iter().map(|(o, _)| o).collect();
        assert_eq!(
            names,
            [
                "2.5.29.17",
                "2.5.29.37",
                "2.5.29.15",
                "2.5.29.19",
                "2.5.29.14"
            ]
        );
        let san = c.subject_alternative_name().unwrap().unwrap().value;
        assert!(matches!(
            san.general_names[0],
            GeneralName::DNSName("n1.example")
        ));
        assert!(matches!(
            san.general_names[1],
            GeneralName::IPAddress([10, 0, 0, 5])
        ));
        let eku = c.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.server_auth && eku.client_auth);
        let ku = c.key_usage().unwrap().unwrap();
        assert!(!ku.critical);
        assert!(ku.value.digital_signature() && ku.value.key_encipherment());
        assert_eq!(ku.value.flags.count_ones(), 2);
        let bc = c.basic_constraints().unwrap().unwrap();
        assert!(!bc.critical && !bc.value.ca);
        assert_eq!(ski_of(c), expected_ski(c));
        c.verify_signature(Some(ca_c.public_key())).unwrap();
    });
}

#[test]
fn critical_disallowed_extensions_are_refused() {
    let (_, key) = ca();
    let mut crl = CustomExtension::from_oid_content(&[2, 5, 29, 31], vec![0x30, 0x00]);
    crl.set_criticality(true);
    let mut ku = [false; 9];
    ku[5] = true;
    let bc = critical(CustomExtension::from_oid_content(
        OID_BASIC_CONSTRAINTS,
        vec![0x30, 0x03, 0x01, 0x01, 0xff],
    ));
    for ext in [crl, key_usage_ext(&ku, true), bc] {
        let mut p = node_params();
        p.custom_extensions = vec![ext];
        let err = sign_csr(&csr(&p), "k8s-cluster", &key, &settings()).unwrap_err();
        assert!(matches!(err, CertError::Validation(_)), "{err}");
        let m = openkeel_core::error::MagnumError::from(err);
        assert_eq!(m.code(), 400);
        assert!(m
            .message()
            .starts_with("Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29."));
    }
}

#[test]
fn allow_ca_keeps_the_ca_bits() {
    let (_, key) = ca();
    let s = X509Section {
        allow_ca: true,
        allowed_key_usage: vec!["Certificate Sign".into(), "Digital Signature".into()],
        ..settings()
    };
    let mut ku = [false; 9];
    ku[0] = true;
    ku[5] = true;
    let bc = CustomExtension::from_oid_content(
        OID_BASIC_CONSTRAINTS,
        vec![0x30, 0x03, 0x01, 0x01, 0xff],
    );
    let mut p = node_params();
    p.custom_extensions = vec![key_usage_ext(&ku, true), bc];
    let pem = sign_csr(&csr(&p), "k8s-cluster", &key, &s).unwrap();
    with_cert(&pem, |c| {
        assert!(c.basic_constraints().unwrap().unwrap().value.ca);
        let ku = c.key_usage().unwrap().unwrap().value;
        assert!(ku.key_cert_sign() && ku.digital_signature());
    });
}

#[test]
fn a_csr_with_a_subject_key_identifier_is_signed() {
    let (_, key) = ca();
    let mut p = node_params();
    p.custom_extensions = vec![CustomExtension::from_oid_content(
        OID_SKI,
        vec![0x04, 0x03, 1, 2, 3],
    )];
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let pem = sign_csr(&csr(&p), "k8s-cluster", &key, &settings()).unwrap();
    with_cert(&pem, |c| {
        let skis = c
            .extensions()
            .iter()
            .filter(|e| e.oid.to_id_string() == "2.5.29.14")
            .count();
        assert_eq!(skis, 1);
        assert_eq!(ski_of(c), expected_ski(c));
    });
}

#[test]
fn term_of_validity_and_key_size_come_from_the_settings() {
    let s = X509Section {
        term_of_validity: 30,
        rsa_key_size: 3072,
        ..settings()
    };
    let ca = generate_ca_certificate("c", "p", &s).unwrap();
    with_cert(&ca.certificate, |c| {
        check_validity(c, 30);
        match c.public_key().parsed().unwrap() {
            x509_parser::public_key::PublicKey::RSA(rsa) => assert_eq!(rsa.key_size(), 3072),
            other => panic!("not RSA: {other:?}"),
        }
    });
    let key = CaKey::from_pem(&ca.private_key, Some("p")).unwrap();
    let pem = sign_csr(&csr(&node_params()), "c", &key, &s).unwrap();
    with_cert(&pem, |c| check_validity(c, 30));
}

#[test]
fn invalid_csr_and_long_names() {
    let (_, key) = ca();
    let err = sign_csr("not a csr", "k8s-cluster", &key, &settings()).unwrap_err();
    let m = openkeel_core::error::MagnumError::from(err);
    assert_eq!(m.code(), 400);
    assert_eq!(m.message(), "Received invalid csr b'not a csr'.");
    let long = "x".repeat(65);
    assert!(generate_ca_certificate(&long, "p", &settings()).is_err());
    assert!(sign_csr(&csr(&node_params()), &long, &key, &settings()).is_err());
    assert!(generate_ca_certificate(&"x".repeat(64), "p", &settings()).is_ok());
}

#[test]
fn key_usage_bit_strings_are_der() {
    let mut ku = [false; 9];
    ku[5] = true;
    assert_eq!(key_usage_der(&ku), [0x03, 0x02, 0x02, 0x04]);
    let mut ku = [false; 9];
    ku[0] = true;
    ku[2] = true;
    assert_eq!(key_usage_der(&ku), [0x03, 0x02, 0x05, 0xa0]);
    let mut ku = [false; 9];
    ku[4] = true;
    ku[8] = true;
    assert_eq!(key_usage_der(&ku), [0x03, 0x03, 0x07, 0x08, 0x80]);
}

#[test]
fn a_subject_with_two_organizations_keeps_both() {
    let (_, key) = ca();
    let mut p = node_params();
    p.distinguished_name
        .push(DnType::CustomDnType(vec![2, 5, 4, 10]), "extra-group");
    let pem = sign_csr(&csr(&p), "k8s-cluster", &key, &settings()).unwrap();
    with_cert(&pem, |c| {
        assert_eq!(
            c.subject().to_string(),
            "CN=system:node:n1, O=system:nodes, O=extra-group"
        );
    });
}

/// Found by fuzzing (fuzz/corpus/csr/crash-unencodable-oid): a CSR whose subject carries an
/// OID DER cannot encode made rcgen's writer panic while signing.
#[test]
fn a_csr_with_an_unencodable_oid_is_refused_without_panicking() {
    let pem = include_str!("../../../../fuzz/corpus/csr/crash-unencodable-oid");
    let ca = generate_ca_certificate("ca", "pw", &settings()).unwrap();
    let key = CaKey::from_pem(&ca.private_key, Some("pw")).unwrap();
    assert!(sign_csr(pem, "ca", &key, &settings()).is_err());
    assert!(!encodable_oid(&[3, 1]));
    assert!(!encodable_oid(&[1, 40]));
    assert!(!encodable_oid(&[2]));
    assert!(encodable_oid(&[2, 5, 4, 3]));
}

/// Found by fuzzing (fuzz/corpus/csr/crash-printable-question-mark): a CSR whose subject has a
/// PrintableString with `?` (valid ASN.1, and rcgen accepts it) made rcgen's DER writer
/// (yasna) panic while signing. The value is now written as a UTF8String, same characters.
#[test]
fn a_printable_string_with_a_question_mark_is_signed_without_panicking() {
    let pem = include_str!("../../../../fuzz/corpus/csr/crash-printable-question-mark");
    let ca = generate_ca_certificate("ca", "pw", &settings()).unwrap();
    let key = CaKey::from_pem(&ca.private_key, Some("pw")).unwrap();
    let signed = sign_csr(pem, "ca", &key, &settings()).unwrap();
    with_cert(&signed, |c| {
        let subject = c.subject().to_string();
        assert!(subject.contains("U?"), "{subject}");
    });
}
