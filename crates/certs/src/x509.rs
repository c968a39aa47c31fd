//! Magnum's `magnum/common/x509/operations.py` and `validator.py` (with the issuer naming of `magnum/conductor/handlers/common/cert_manager.py`):
//! the per-cluster CAs, the Magnum client certificate and the signing of node CSRs.
//!
//! Extensions are written as raw DER in Magnum's order (the CSR's order, then the subject key
//! identifier), so the certificates carry exactly what Magnum's carry.

use openkeel_core::config::X509Section;
use rcgen::{
    CustomExtension, DistinguishedName, DnType, DnValue, Issuer, KeyPair, PublicKeyData,
    SerialNumber, SubjectPublicKeyInfo,
};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::cri_attributes::ParsedCriAttribute;
use x509_parser::der_parser::asn1_rs::Tag;
use x509_parser::extensions::{ParsedExtension, X509Extension};
use x509_parser::prelude::FromDer;
use x509_parser::x509::X509Name;

use crate::key::{decrypt_private_key, encrypt_private_key, generate_rsa_pkcs8};
use crate::CertError;

const OID_SKI: &[u64] = &[2, 5, 29, 14];
const OID_KEY_USAGE: &[u64] = &[2, 5, 29, 15];
const OID_BASIC_CONSTRAINTS: &[u64] = &[2, 5, 29, 19];
const OID_EKU: &[u64] = &[2, 5, 29, 37];

/// The short names `cryptography` gives the extensions `[x509] allowed_extensions` may list.
const EXTENSION_NAMES: &[(&str, &str)] = &[
    ("2.5.29.35", "authorityKeyIdentifier"),
    ("2.5.29.14", "subjectKeyIdentifier"),
    ("1.3.6.1.5.5.7.1.1", "authorityInfoAccess"),
    ("2.5.29.19", "basicConstraints"),
    ("2.5.29.31", "cRLDistributionPoints"),
    ("2.5.29.32", "certificatePolicies"),
    ("2.5.29.37", "extendedKeyUsage"),
    ("1.3.6.1.5.5.7.48.1.5", "OCSPNoCheck"),
    ("2.5.29.54", "inhibitAnyPolicy"),
    ("2.5.29.15", "keyUsage"),
    ("2.5.29.30", "nameConstraints"),
    ("2.5.29.17", "subjectAltName"),
    ("2.5.29.18", "issuerAltName"),
    ("2.5.29.36", "policyConstraints"),
    ("2.5.29.46", "freshestCRL"),
    ("1.3.6.1.5.5.7.1.24", "TLSFeature"),
];

/// The key usages in the bit order of RFC 5280 with Magnum's names (`extensions.KeyUsages`).
pub const KEY_USAGES: [&str; 9] = [
    "Digital Signature",
    "Non Repudiation",
    "Key Encipherment",
    "Data Encipherment",
    "Key Agreement",
    "Certificate Sign",
    "CRL Sign",
    "Encipher Only",
    "Decipher Only",
];

/// A generated certificate and its encrypted private key (Magnum's `keypairs` dict).
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedCert {
    /// The certificate PEM without the trailing newline.
    pub certificate: String,
    /// The PKCS#8 `ENCRYPTED PRIVATE KEY` PEM.
    pub private_key: String,
}

impl std::fmt::Debug for GeneratedCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedCert")
            .field("certificate", &self.certificate)
            .field("private_key", &"<redacted>")
            .finish()
    }
}

/// An unencrypted CA key ready to sign (`_load_pem_private_key`).
pub struct CaKey(KeyPair);

impl std::fmt::Debug for CaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CaKey(<redacted>)")
    }
}

impl CaKey {
    /// Load an (encrypted) PKCS#8 PEM key with its passphrase.
    pub fn from_pem(pem: &str, passphrase: Option<&str>) -> Result<CaKey, CertError> {
        let der = decrypt_private_key(pem, passphrase)?;
        let kp = KeyPair::try_from(der.as_bytes())
            .map_err(|e| CertError::Crypto(format!("unsupported CA key: {e}")))?;
        Ok(CaKey(kp))
    }
}

fn crypto(e: rcgen::Error) -> CertError {
    CertError::Crypto(e.to_string())
}

fn oid_string(oid: &[u64]) -> String {
    oid.iter().map(u64::to_string).collect::<Vec<_>>().join(".")
}

/// `x509.SubjectKeyIdentifier.from_public_key`: SHA-1 of the subjectPublicKey bits.
fn ski_extension(subject_public_key: &[u8]) -> CustomExtension {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, subject_public_key);
    let mut content = vec![0x04, 20];
    content.extend_from_slice(digest.as_ref());
    CustomExtension::from_oid_content(OID_SKI, content)
}

fn critical(mut ext: CustomExtension) -> CustomExtension {
    ext.set_criticality(true);
    ext
}

/// DER BIT STRING of a KeyUsage (named bit list: trailing zero bits removed).
fn key_usage_der(bits: &[bool; 9]) -> Vec<u8> {
    let Some(highest) = bits.iter().rposition(|b| *b) else {
        return vec![0x03, 0x01, 0x00];
    };
    let nbytes = highest / 8 + 1;
    let mut bytes = vec![0u8; nbytes];
    for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
        bytes[i / 8] |= 0x80 >> (i % 8);
    }
    let unused = u8::try_from(nbytes * 8 - (highest + 1)).unwrap_or(0);
    let mut out = vec![0x03, u8::try_from(nbytes + 1).unwrap_or(0), unused];
    out.extend(bytes);
    out
}

fn key_usage_ext(bits: &[bool; 9], is_critical: bool) -> CustomExtension {
    let mut e = CustomExtension::from_oid_content(OID_KEY_USAGE, key_usage_der(bits));
    e.set_criticality(is_critical);
    e
}

/// `BasicConstraints(ca=False, path_length=None)`.
fn basic_constraints_no_ca(is_critical: bool) -> CustomExtension {
    let mut e = CustomExtension::from_oid_content(OID_BASIC_CONSTRAINTS, vec![0x30, 0x00]);
    e.set_criticality(is_critical);
    e
}

fn ca_extensions() -> Vec<CustomExtension> {
    // basicConstraints CA:TRUE, pathlen:0 (critical); keyUsage keyCertSign (critical).
    let bc = CustomExtension::from_oid_content(
        OID_BASIC_CONSTRAINTS,
        vec![0x30, 0x06, 0x01, 0x01, 0xff, 0x02, 0x01, 0x00],
    );
    let mut ku = [false; 9];
    ku[5] = true;
    vec![critical(bc), key_usage_ext(&ku, true)]
}

fn client_extensions() -> Vec<CustomExtension> {
    let mut ku = [false; 9];
    ku[0] = true;
    ku[2] = true;
    // extendedKeyUsage clientAuth (1.3.6.1.5.5.7.3.2), non-critical.
    let eku = CustomExtension::from_oid_content(
        OID_EKU,
        vec![
            0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02,
        ],
    );
    vec![key_usage_ext(&ku, true), eku, basic_constraints_no_ca(true)]
}

/// `x509.NameAttribute(OID_COMMON_NAME, name)`: 1 to 64 characters.
fn check_common_name(name: &str) -> Result<(), CertError> {
    let n = name.chars().count();
    if (1..=64).contains(&n) {
        Ok(())
    } else {
        Err(CertError::Crypto(format!(
            "Attribute's length must be >= 1 and <= 64, but it was {n}"
        )))
    }
}

fn cn(name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, DnValue::Utf8String(name.to_string()));
    dn
}

/// uuid4 as a positive integer (minimal big-endian bytes).
fn uuid_serial() -> SerialNumber {
    let u = uuid::Uuid::new_v4();
    let bytes = u.as_bytes();
    let start = bytes
        .iter()
        .position(|b| *b != 0)
        .unwrap_or(bytes.len() - 1);
    SerialNumber::from_slice(&bytes[start..])
}

/// The common body of `sign()`: subject, issuer CN, validity, serial, extensions + SKI.
fn build(
    subject: DistinguishedName,
    public_key: &impl PublicKeyData,
    mut extensions: Vec<CustomExtension>,
    issuer_name: &str,
    issuer_key: &KeyPair,
    settings: &X509Section,
) -> Result<String, CertError> {
    check_common_name(issuer_name)?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = subject;
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(settings.term_of_validity);
    params.serial_number = Some(uuid_serial());
    extensions.push(ski_extension(public_key.der_bytes()));
    params.custom_extensions = extensions;
    let mut issuer_params = rcgen::CertificateParams::default();
    issuer_params.distinguished_name = cn(issuer_name);
    let issuer = Issuer::new(issuer_params, issuer_key);
    let cert = params.signed_by(public_key, &issuer).map_err(crypto)?;
    Ok(cert.pem().trim_end().to_string())
}

/// A new RSA key (`[x509] rsa_key_size`, e = 65537) for one certificate, made ahead of the
/// certificate so that a cluster's four keys can be generated at once.
pub struct NewKey {
    kp: KeyPair,
    der: pkcs8::SecretDocument,
}

impl std::fmt::Debug for NewKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewKey(..)")
    }
}

/// Generate a [`NewKey`] (the expensive step of every certificate made here).
pub fn new_rsa_key(settings: &X509Section) -> Result<NewKey, CertError> {
    // A negative size fails like a small one (`cryptography`'s ValueError).
    let bits = usize::try_from(settings.rsa_key_size).unwrap_or(0);
    let der = generate_rsa_pkcs8(bits)?;
    let kp = KeyPair::try_from(der.as_bytes()).map_err(crypto)?;
    Ok(NewKey { kp, der })
}

/// `generate_ca_certificate(subject_name, encryption_password)`: a self-signed CA with
/// subject and issuer `CN=<subject_name>`.
pub fn generate_ca_certificate(
    subject_name: &str,
    passphrase: &str,
    settings: &X509Section,
) -> Result<GeneratedCert, CertError> {
    check_common_name(subject_name)?;
    ca_certificate_with_key(subject_name, passphrase, new_rsa_key(settings)?, settings)
}

/// [`generate_ca_certificate`] with a key generated beforehand.
pub fn ca_certificate_with_key(
    subject_name: &str,
    passphrase: &str,
    key: NewKey,
    settings: &X509Section,
) -> Result<GeneratedCert, CertError> {
    check_common_name(subject_name)?;
    let certificate = build(
        cn(subject_name),
        &key.kp,
        ca_extensions(),
        subject_name,
        &key.kp,
        settings,
    )?;
    Ok(GeneratedCert {
        certificate,
        private_key: encrypt_private_key(key.der.as_bytes(), passphrase)?,
    })
}

/// `generate_client_certificate(issuer_name, subject_name, organization_name, ca_key, …)`.
pub fn generate_client_certificate(
    issuer_name: &str,
    subject_name: &str,
    organization_name: &str,
    ca_key: &CaKey,
    passphrase: &str,
    settings: &X509Section,
) -> Result<GeneratedCert, CertError> {
    check_common_name(subject_name)?;
    client_certificate_with_key(
        issuer_name,
        subject_name,
        organization_name,
        ca_key,
        passphrase,
        new_rsa_key(settings)?,
        settings,
    )
}

/// [`generate_client_certificate`] with a key generated beforehand.
pub fn client_certificate_with_key(
    issuer_name: &str,
    subject_name: &str,
    organization_name: &str,
    ca_key: &CaKey,
    passphrase: &str,
    key: NewKey,
    settings: &X509Section,
) -> Result<GeneratedCert, CertError> {
    check_common_name(subject_name)?;
    let mut dn = cn(subject_name);
    if !organization_name.is_empty() {
        dn.push(
            DnType::OrganizationName,
            DnValue::Utf8String(organization_name.to_string()),
        );
    }
    let certificate = build(
        dn,
        &key.kp,
        client_extensions(),
        issuer_name,
        &ca_key.0,
        settings,
    )?;
    Ok(GeneratedCert {
        certificate,
        private_key: encrypt_private_key(key.der.as_bytes(), passphrase)?,
    })
}

/// Python's `repr(bytes)` of the CSR, as `InvalidCsr(csr=…)` shows it.
fn bytes_repr(s: &str) -> String {
    openkeel_core::pyvalue::repr_bytes(s.as_bytes())
}

fn subject_of(name: &X509Name<'_>) -> Result<DistinguishedName, CertError> {
    let mut dn = DistinguishedName::new();
    let mut seen: Vec<DnType> = Vec::new();
    for attr in name.iter_attributes() {
        let oid: Vec<u64> = attr
            .attr_type()
            .iter()
            .map(|it| it.collect())
            .filter(|oid: &Vec<u64>| encodable_oid(oid))
            .ok_or_else(|| CertError::Crypto("unsupported subject attribute type".to_string()))?;
        // rcgen keeps one value per `DnType` key; a second value of the same attribute (e.g. two
        // O= groups) goes under the equivalent `CustomDnType` key, which writes the same OID.
        let mut ty = DnType::from_oid(&oid);
        if seen.contains(&ty) {
            ty = DnType::CustomDnType(oid.clone());
            if seen.contains(&ty) {
                return Err(CertError::Crypto(format!(
                    "the CSR subject has more than two {} attributes: not supported",
                    oid_string(&oid)
                )));
            }
        }
        seen.push(ty.clone());
        let value = attr.attr_value();
        let text = attr
            .as_str()
            .map_err(|_| CertError::Crypto("unsupported subject attribute value".to_string()))?
            .to_string();
        let v = match value.tag() {
            // rcgen accepts `?` in a PrintableString (as X.680 does) but its DER writer
            // (yasna 0.6) panics on it (found by fuzzing): such a value is written as a
            // UTF8String with the same characters.
            Tag::PrintableString if !text.contains('?') => {
                rcgen::string::PrintableString::try_from(text.clone())
                    .map(DnValue::PrintableString)
                    .unwrap_or(DnValue::Utf8String(text))
            }
            Tag::Ia5String => rcgen::string::Ia5String::try_from(text.clone())
                .map(DnValue::Ia5String)
                .unwrap_or(DnValue::Utf8String(text)),
            _ => DnValue::Utf8String(text),
        };
        dn.push(ty, v);
    }
    Ok(dn)
}

fn extension_name(ext: &X509Extension<'_>) -> Option<&'static str> {
    let oid = ext.oid.to_id_string();
    EXTENSION_NAMES
        .iter()
        .find(|(o, _)| *o == oid)
        .map(|(_, n)| *n)
}

fn validation_error(ext: &X509Extension<'_>) -> CertError {
    CertError::Validation(format!(
        "<Extension(oid=<ObjectIdentifier(oid={}, name={})>, critical={})>",
        ext.oid.to_id_string(),
        extension_name(ext).unwrap_or("Unknown OID"),
        if ext.critical { "True" } else { "False" }
    ))
}

/// Whether DER can encode `oid` (at least two arcs, the first below 3, the second below 40
/// unless the first is 2): rcgen's writer panics on any other (found by fuzzing).
fn encodable_oid(oid: &[u64]) -> bool {
    match oid {
        [a, b, ..] => *a < 3 && (*a == 2 || *b < 40) && *b < u64::MAX - 80,
        _ => false,
    }
}

fn raw(ext: &X509Extension<'_>) -> Result<CustomExtension, CertError> {
    let oid: Vec<u64> = ext
        .oid
        .iter()
        .map(|it| it.collect())
        .filter(|oid: &Vec<u64>| encodable_oid(oid))
        .ok_or_else(|| CertError::Crypto("unsupported extension OID".to_string()))?;
    let mut e = CustomExtension::from_oid_content(&oid, ext.value.to_vec());
    e.set_criticality(ext.critical);
    Ok(e)
}

/// `validator.filter_extensions` (and, with `skip_validation`, all extensions unchanged).
/// The CSR's own subjectKeyIdentifier is always dropped: `sign()` appends one computed from
/// the public key (Magnum fails with `This extension has already been set.` here).
fn filter_extensions(
    exts: &[X509Extension<'_>],
    settings: &X509Section,
    skip_validation: bool,
) -> Result<Vec<CustomExtension>, CertError> {
    let mut allowed_usage: Vec<&str> = settings
        .allowed_key_usage
        .iter()
        .map(String::as_str)
        .collect();
    if !settings.allow_ca {
        allowed_usage.retain(|u| *u != "Certificate Sign" && *u != "CRL Sign");
    }
    let mut out = Vec::new();
    for ext in exts {
        if ext.oid.to_id_string() == "2.5.29.14" {
            if !skip_validation
                && !settings
                    .allowed_extensions
                    .iter()
                    .any(|a| a == "subjectKeyIdentifier")
                && ext.critical
            {
                return Err(validation_error(ext));
            }
            continue;
        }
        if skip_validation {
            out.push(raw(ext)?);
            continue;
        }
        let allowed =
            extension_name(ext).is_some_and(|n| settings.allowed_extensions.iter().any(|a| a == n));
        if !allowed {
            if ext.critical {
                return Err(validation_error(ext));
            }
            continue;
        }
        match ext.parsed_extension() {
            ParsedExtension::KeyUsage(ku) => {
                let requested = [
                    ku.digital_signature(),
                    ku.non_repudiation(),
                    ku.key_encipherment(),
                    ku.data_encipherment(),
                    ku.key_agreement(),
                    ku.key_cert_sign(),
                    ku.crl_sign(),
                    // cryptography raises reading these when key_agreement is false → False.
                    ku.key_agreement() && ku.encipher_only(),
                    ku.key_agreement() && ku.decipher_only(),
                ];
                let mut bits = [false; 9];
                for (i, want) in requested.iter().enumerate() {
                    if !*want {
                        continue;
                    }
                    if allowed_usage.contains(&KEY_USAGES[i]) {
                        bits[i] = true;
                    } else if ext.critical {
                        return Err(validation_error(ext));
                    }
                }
                if !bits[4] {
                    bits[7] = false;
                    bits[8] = false;
                }
                out.push(key_usage_ext(&bits, ext.critical));
            }
            ParsedExtension::BasicConstraints(bc) if bc.ca && !settings.allow_ca => {
                if ext.critical {
                    return Err(validation_error(ext));
                }
                out.push(basic_constraints_no_ca(false));
            }
            _ => out.push(raw(ext)?),
        }
    }
    Ok(out)
}

/// `sign(csr, issuer_name, ca_key, ca_key_password)` for a PEM CSR, with the validator
/// (`skip_validation=False`). Returns the certificate PEM without the trailing newline.
pub fn sign_csr(
    csr_pem: &str,
    issuer_name: &str,
    ca_key: &CaKey,
    settings: &X509Section,
) -> Result<String, CertError> {
    let invalid = || CertError::InvalidCsr(bytes_repr(csr_pem));
    let (_, pem) = x509_parser::pem::parse_x509_pem(csr_pem.as_bytes()).map_err(|_| invalid())?;
    if pem.label != "CERTIFICATE REQUEST" && pem.label != "NEW CERTIFICATE REQUEST" {
        return Err(invalid());
    }
    let (_, csr) = X509CertificationRequest::from_der(&pem.contents).map_err(|_| invalid())?;
    let info = &csr.certification_request_info;
    let subject = subject_of(&info.subject)?;
    let public_key = SubjectPublicKeyInfo::from_der(info.subject_pki.raw).map_err(crypto)?;
    let mut exts: Vec<X509Extension<'_>> = Vec::new();
    for attr in info.iter_attributes() {
        if let ParsedCriAttribute::ExtensionRequest(req) = attr.parsed_attribute() {
            exts.extend(req.extensions.iter().cloned());
        }
    }
    let extensions = filter_extensions(&exts, settings, false)?;
    build(
        subject,
        &public_key,
        extensions,
        issuer_name,
        &ca_key.0,
        settings,
    )
}

#[cfg(test)]
mod tests;
