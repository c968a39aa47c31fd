//! RSA private keys as Magnum writes them (`magnum/common/x509/operations.py`): PKCS#8, encrypted with the
//! passphrase using PBES2 (PBKDF2-HMAC-SHA256, 2048 iterations, 16-byte salt, AES-256-CBC) —
//! what `cryptography`'s `BestAvailableEncryption` produces — in an `ENCRYPTED PRIVATE KEY` PEM.
//!
//! `ring` (rcgen's provider) cannot generate RSA keys. `aws-lc-rs` generates them for the sizes
//! it offers (2048, 3072, 4096 and 8192 bits, which include Magnum's default 2048): AWS-LC's
//! BoringSSL-derived key generation is constant-time in the secret primes and about ten times
//! faster than the pure-Rust `rsa` crate, which now generates only the other sizes an operator
//! may configure in `[x509] rsa_key_size` (Magnum, through `cryptography`, takes any size from
//! 1024 bits). Only generation uses them; signing is done by `ring`, TLS by rustls with ring.

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use pkcs8::der::Decode;
use pkcs8::pkcs5::pbes2;
use pkcs8::{EncryptedPrivateKeyInfo, LineEnding, PrivateKeyInfo, SecretDocument};
use ring::rand::{SecureRandom, SystemRandom};
use rsa::pkcs8::EncodePrivateKey;

use crate::CertError;

/// PBKDF2 iteration count of `BestAvailableEncryption` (observed in Magnum's keys).
pub const PBKDF2_ITERATIONS: u32 = 2048;

/// `cryptography`'s minimum key size (`_verify_rsa_parameters`).
pub const MIN_RSA_BITS: usize = 1024;

/// The key sizes `aws-lc-rs` generates.
fn aws_lc_size(bits: usize) -> Option<aws_lc_rs::rsa::KeySize> {
    use aws_lc_rs::rsa::KeySize;
    match bits {
        2048 => Some(KeySize::Rsa2048),
        3072 => Some(KeySize::Rsa3072),
        4096 => Some(KeySize::Rsa4096),
        8192 => Some(KeySize::Rsa8192),
        _ => None,
    }
}

/// A new RSA key (e = 65537) as unencrypted PKCS#8 DER (`rsa.generate_private_key(65537,
/// bits)`: below 1024 bits `cryptography` raises `ValueError`).
pub fn generate_rsa_pkcs8(bits: usize) -> Result<SecretDocument, CertError> {
    if bits < MIN_RSA_BITS {
        return Err(CertError::Crypto(
            "key_size must be at least 1024-bits.".to_string(),
        ));
    }
    match aws_lc_size(bits) {
        Some(size) => {
            let key = aws_lc_rs::rsa::KeyPair::generate(size)
                .map_err(|_| CertError::Crypto("RSA key generation failed".to_string()))?;
            let der: Pkcs8V1Der<'static> = key
                .as_der()
                .map_err(|_| CertError::Crypto("PKCS#8 encoding failed".to_string()))?;
            SecretDocument::try_from(der.as_ref())
                .map_err(|e| CertError::Crypto(format!("PKCS#8 encoding failed: {e}")))
        }
        None => {
            let mut rng = rsa::rand_core::OsRng;
            let key = rsa::RsaPrivateKey::new(&mut rng, bits)
                .map_err(|e| CertError::Crypto(format!("RSA key generation failed: {e}")))?;
            key.to_pkcs8_der()
                .map_err(|e| CertError::Crypto(format!("PKCS#8 encoding failed: {e}")))
        }
    }
}

/// Python's `str.encode('latin-1')`.
pub(crate) fn latin1(s: &str) -> Result<Vec<u8>, CertError> {
    s.chars()
        .map(|c| {
            u8::try_from(u32::from(c)).map_err(|_| {
                CertError::Crypto("the passphrase is not latin-1 encodable".to_string())
            })
        })
        .collect()
}

/// PKCS#8 DER → `-----BEGIN ENCRYPTED PRIVATE KEY-----` PEM (PBES2 as Magnum writes it).
pub fn encrypt_private_key(pkcs8_der: &[u8], passphrase: &str) -> Result<String, CertError> {
    let info = PrivateKeyInfo::from_der(pkcs8_der)
        .map_err(|e| CertError::Crypto(format!("invalid PKCS#8 key: {e}")))?;
    let rng = SystemRandom::new();
    let mut salt = [0u8; 16];
    let mut iv = [0u8; 16];
    rng.fill(&mut salt)
        .and_then(|()| rng.fill(&mut iv))
        .map_err(|_| CertError::Crypto("no randomness".to_string()))?;
    let params = pbes2::Parameters::pbkdf2_sha256_aes256cbc(PBKDF2_ITERATIONS, &salt, &iv)
        .map_err(|e| CertError::Crypto(format!("PBES2 parameters: {e}")))?;
    let doc = info
        .encrypt_with_params(params, latin1(passphrase)?)
        .map_err(|e| CertError::Crypto(format!("key encryption failed: {e}")))?;
    Ok(doc
        .to_pem("ENCRYPTED PRIVATE KEY", LineEnding::LF)
        .map_err(|e| CertError::Crypto(format!("PEM encoding failed: {e}")))?
        .to_string())
}

/// `serialization.load_pem_private_key(pem, password)` for PKCS#8 keys: an
/// `ENCRYPTED PRIVATE KEY` needs the passphrase, a `PRIVATE KEY` must come without one.
/// Returns the unencrypted PKCS#8 DER.
pub fn decrypt_private_key(
    pem: &str,
    passphrase: Option<&str>,
) -> Result<SecretDocument, CertError> {
    let (label, doc) = SecretDocument::from_pem(pem.trim())
        .map_err(|e| CertError::Crypto(format!("cannot parse the private key PEM: {e}")))?;
    match (label, passphrase) {
        ("ENCRYPTED PRIVATE KEY", Some(pass)) => {
            let enc = EncryptedPrivateKeyInfo::from_der(doc.as_bytes())
                .map_err(|e| CertError::Crypto(format!("invalid encrypted key: {e}")))?;
            enc.decrypt(latin1(pass)?)
                .map_err(|_| CertError::Crypto("Bad decrypt. Incorrect password?".to_string()))
        }
        ("ENCRYPTED PRIVATE KEY", None) => Err(CertError::Crypto(
            "Password was not given but private key is encrypted".to_string(),
        )),
        ("PRIVATE KEY", None) => Ok(doc),
        ("PRIVATE KEY", Some(_)) => Err(CertError::Crypto(
            "Password was given but private key is not encrypted.".to_string(),
        )),
        (other, _) => Err(CertError::Crypto(format!(
            "unsupported private key PEM type {other:?} (PKCS#8 expected)"
        ))),
    }
}

/// Magnum's `decrypt_key`: the key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
pub fn decrypt_key_pem(pem: &str, passphrase: Option<&str>) -> Result<String, CertError> {
    let doc = decrypt_private_key(pem, passphrase)?;
    Ok(doc
        .to_pem("PRIVATE KEY", LineEnding::LF)
        .map_err(|e| CertError::Crypto(format!("PEM encoding failed: {e}")))?
        .to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The key's modulus size and public exponent, from its PKCS#8 DER.
    fn modulus_bits_and_exponent(der: &[u8]) -> (usize, Vec<u8>) {
        use rsa::pkcs8::DecodePrivateKey;
        use rsa::traits::PublicKeyParts;
        let key = rsa::RsaPrivateKey::from_pkcs8_der(der).unwrap();
        key.validate().unwrap();
        (key.n().bits(), key.e().to_bytes_be())
    }

    #[test]
    fn generated_keys_are_pkcs8_rsa_with_the_requested_size_and_e_65537() {
        for bits in [2048, 1024, 2056] {
            let der = generate_rsa_pkcs8(bits).unwrap();
            let info = PrivateKeyInfo::from_der(der.as_bytes()).unwrap();
            // rsaEncryption with NULL parameters, no public key field: what OpenSSL writes.
            assert_eq!(info.algorithm.oid.to_string(), "1.2.840.113549.1.1.1");
            assert_eq!(
                info.algorithm.parameters,
                Some(pkcs8::der::asn1::AnyRef::NULL)
            );
            assert!(info.public_key.is_none());
            assert_eq!(
                modulus_bits_and_exponent(der.as_bytes()),
                (bits, vec![1, 0, 1])
            );
        }
        let small = generate_rsa_pkcs8(1016).unwrap_err();
        assert_eq!(small.to_string(), "key_size must be at least 1024-bits.");
    }

    #[test]
    fn two_keys_differ() {
        let a = generate_rsa_pkcs8(2048).unwrap();
        let b = generate_rsa_pkcs8(2048).unwrap();
        assert_ne!(a.as_bytes(), b.as_bytes());
    }

    #[test]
    fn encrypt_then_decrypt_round_trips_with_magnum_parameters() {
        let der = generate_rsa_pkcs8(2048).unwrap();
        let pem = encrypt_private_key(der.as_bytes(), "6lhrp2pftqks").unwrap();
        assert!(pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"));
        let (_, doc) = SecretDocument::from_pem(&pem).unwrap();
        let enc = EncryptedPrivateKeyInfo::from_der(doc.as_bytes()).unwrap();
        let params = enc.encryption_algorithm.pbes2().unwrap();
        let kdf = params.kdf.pbkdf2().unwrap();
        assert_eq!(kdf.iteration_count, PBKDF2_ITERATIONS);
        assert_eq!(kdf.salt.len(), 16);
        assert_eq!(kdf.prf, pbes2::Pbkdf2Prf::HmacWithSha256);
        assert!(matches!(
            params.encryption,
            pbes2::EncryptionScheme::Aes256Cbc { .. }
        ));
        let back = decrypt_private_key(&pem, Some("6lhrp2pftqks")).unwrap();
        assert_eq!(back.as_bytes(), der.as_bytes());
        assert!(decrypt_private_key(&pem, Some("wrong")).is_err());
        assert!(decrypt_private_key(&pem, None).is_err());
        let plain = decrypt_key_pem(&pem, Some("6lhrp2pftqks")).unwrap();
        assert!(plain.starts_with("-----BEGIN PRIVATE KEY-----"));
    }
}
