//! Entry point of the CSR fuzz target (`fuzz/fuzz_targets/csr.rs`) and of its stable replay
//! (`crates/api/tests/fuzz_corpus.rs`); see `openkeel_core::fuzzing`.

use crate::x509::{generate_ca_certificate, sign_csr, CaKey};
use openkeel_core::config::X509Section;
use std::sync::OnceLock;

const PASSPHRASE: &str = "fuzz-ca-passphrase";

/// The cluster CA every CSR is signed with (generated once per process).
fn ca() -> Option<&'static CaKey> {
    static CA: OnceLock<Option<CaKey>> = OnceLock::new();
    CA.get_or_init(|| {
        let generated =
            generate_ca_certificate("fuzz-ca", PASSPHRASE, &X509Section::default()).ok()?;
        CaKey::from_pem(&generated.private_key, Some(PASSPHRASE)).ok()
    })
    .as_ref()
}

/// A CSR as `POST /v1/certificates` hands it to the conductor: the PEM, the request, its
/// subject and requested extensions through Magnum's validator, then signed by a cluster CA.
pub fn csr(data: &[u8]) {
    let Ok(pem) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(ca) = ca() {
        let _ = sign_csr(pem, "fuzz-ca", ca, &X509Section::default());
    }
}
