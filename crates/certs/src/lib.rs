//! openkeel-certs: Magnum's certificate code (`magnum/common/x509/`,
//! `magnum/common/cert_manager/`, `magnum/conductor/handlers/common/cert_manager.py`).
//!
//! * [`x509`] — the per-cluster CAs, the Magnum client certificate and CSR signing with the
//!   validator (`magnum/common/x509/`), written with `rcgen` (ring) and parsed with
//!   `x509-parser`.
//! * [`key`] — RSA key generation (`aws-lc-rs`, since ring cannot generate RSA keys) and the
//!   PBES2-encrypted PKCS#8 PEM Magnum stores.
//! * [`manager`] — the `x509keypair`, `local` and `barbican` cert managers and
//!   `generate_certificates_to_cluster` / delete for a cluster.
//! * [`driver`] — a cluster's CAs and Magnum's client certificate for the Cluster API driver
//!   (`openkeel_drivers::deps::ClusterCaSource`), keys decrypted.

pub mod driver;
pub mod fuzzing;
pub mod key;
pub mod manager;
pub mod x509;

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::DbError;

pub use manager::{
    issuer_name, short_id, Cert, ClusterCertRefs, X509KeyPairCertManager, CONDUCTOR_CLIENT_NAME,
};
pub use x509::{
    ca_certificate_with_key, client_certificate_with_key, generate_ca_certificate,
    generate_client_certificate, new_rsa_key, sign_csr, CaKey, GeneratedCert, NewKey,
};
/// The crates this one builds on, for callers' tests (making CSRs, parsing what was signed).
#[doc(hidden)]
pub use {rcgen, x509_parser};

/// The errors of this crate. Messages never contain private keys or passphrases.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// `InvalidCsr(csr=…)`: the CSR is not a parsable PEM certificate request.
    #[error("Received invalid csr {0}.")]
    InvalidCsr(String),
    /// `CertificateValidationError(extension=…)`.
    #[error("Extension '{0}' not allowed")]
    Validation(String),
    /// A crypto-library failure (Magnum: a builtin exception, HTTP 500).
    #[error("{0}")]
    Crypto(String),
    #[error(transparent)]
    Db(#[from] DbError),
    /// `CertificateStorageException(msg=…)` (the local cert manager's file errors).
    #[error("Could not store certificate: {0}")]
    Storage(String),
    /// A Barbican call failed (openstacksdk's `HttpException` text; Magnum lets it through
    /// as a 500).
    #[error("{0}")]
    Barbican(String),
    /// The Barbican container or secret does not exist (openstacksdk's
    /// `NotFoundException`).
    #[error("{0}")]
    NotFound(String),
}

impl From<CertError> for MagnumError {
    fn from(e: CertError) -> MagnumError {
        match e {
            CertError::InvalidCsr(csr) => MagnumError::new(ErrorKind::InvalidCsr, &[("csr", &csr)]),
            CertError::Validation(ext) => MagnumError::new(
                ErrorKind::CertificateValidationError,
                &[("extension", &ext)],
            ),
            CertError::Db(e) => e.into(),
            CertError::Crypto(msg) | CertError::Barbican(msg) | CertError::NotFound(msg) => {
                MagnumError::internal(msg)
            }
            CertError::Storage(msg) => {
                MagnumError::new(ErrorKind::CertificateStorageException, &[("msg", &msg)])
            }
        }
    }
}
