//! RSA private keys as Magnum writes them (conductor.md §7.2): PKCS#8, encrypted with the
//! passphrase using PBES2 (PBKDF2-HMAC-SHA256, 2048 iterations, 16-byte salt, AES-256-CBC) —
//! what `cryptography`'s `BestAvailableEncryption` produces — in an `ENCRYPTED PRIVATE KEY` PEM.
//!
//! `ring` (rcgen's provider) cannot generate RSA keys, so the pure-Rust `rsa` crate generates
//! them; only generation uses it (signing is done by `ring`).

use pkcs8::der::Decode;
use pkcs8::pkcs5::pbes2;
use pkcs8::{EncryptedPrivateKeyInfo, LineEnding, PrivateKeyInfo, SecretDocument};
use ring::rand::{SecureRandom, SystemRandom};
use rsa::pkcs8::EncodePrivateKey;

use crate::CertError;

/// PBKDF2 iteration count of `BestAvailableEncryption` (observed in Magnum's keys).
pub const PBKDF2_ITERATIONS: u32 = 2048;

/// A new RSA key (e = 65537) as unencrypted PKCS#8 DER.
pub fn generate_rsa_pkcs8(bits: usize) -> Result<SecretDocument, CertError> {
    let mut rng = rsa::rand_core::OsRng;
    let key = rsa::RsaPrivateKey::new(&mut rng, bits)
        .map_err(|e| CertError::Crypto(format!("RSA key generation failed: {e}")))?;
    key.to_pkcs8_der()
        .map_err(|e| CertError::Crypto(format!("PKCS#8 encoding failed: {e}")))
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
