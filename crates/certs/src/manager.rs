//! The `x509keypair` cert manager (`magnum/common/cert_manager/x509keypair_cert_manager.py`) and Magnum's
//! `generate_certificates_to_cluster` / `delete_certificates_from_cluster` (`magnum/conductor/handlers/common/cert_manager.py`).

use openkeel_core::config::X509Section;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, X509KeyPair};
use openkeel_db::{x509keypair, Database, DbError, Scope};
use ring::rand::{SecureRandom, SystemRandom};

use std::sync::{Arc, OnceLock};
use tokio::sync::Semaphore;

use crate::x509::{
    ca_certificate_with_key, client_certificate_with_key, new_rsa_key, sign_csr, CaKey, NewKey,
};
use crate::CertError;

/// At most one RSA key generation per core at a time, process-wide. The semaphore is fair:
/// when many clusters are created at once, each create's keys come in the order the creates
/// asked for them, so the first creates finish first instead of all of them at the end.
fn keygen_permits() -> Arc<Semaphore> {
    static PERMITS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    PERMITS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            Arc::new(Semaphore::new(cores))
        })
        .clone()
}

/// `n` new RSA keys, generated at once (up to one per core, see [`keygen_permits`]).
async fn new_keys(settings: &X509Section, n: usize) -> Result<Vec<NewKey>, CertError> {
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (permits, settings) = (keygen_permits(), settings.clone());
            tokio::spawn(async move {
                let _permit = permits
                    .acquire_owned()
                    .await
                    .map_err(|_| CertError::Crypto("key generation stopped".to_string()))?;
                blocking(move || new_rsa_key(&settings)).await
            })
        })
        .collect();
    let mut keys = Vec::with_capacity(n);
    for h in handles {
        keys.push(
            h.await
                .map_err(|e| CertError::Crypto(format!("certificate task failed: {e}")))??,
        );
    }
    Ok(keys)
}

/// The backend `name` of the Magnum client certificate (ignored by `x509keypair`).
pub const CONDUCTOR_CLIENT_NAME: &str = "Magnum-Conductor";

/// `short_id.generate_id()`: 12 characters of `[a-z2-7]` from 60 random bits.
pub fn short_id() -> Result<String, CertError> {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut buf = [0u8; 8];
    SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| CertError::Crypto("no randomness".to_string()))?;
    let bits = u64::from_be_bytes(buf) >> 4;
    Ok((0..12)
        .rev()
        .map(|i| char::from(ALPHABET[usize::try_from((bits >> (i * 5)) & 31).unwrap_or(0)]))
        .collect())
}

/// `_get_issuer_name`: the cluster name, else its uuid.
pub fn issuer_name(cluster: &Cluster) -> String {
    cluster
        .name
        .clone()
        .or_else(|| cluster.uuid.clone())
        .unwrap_or_default()
}

/// A stored certificate (`cert_manager.Cert`).
#[derive(Clone, PartialEq, Eq)]
pub struct Cert {
    pub certificate: String,
    pub private_key: String,
    pub private_key_passphrase: Option<String>,
    pub intermediates: Option<String>,
}

impl std::fmt::Debug for Cert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cert")
            .field("certificate", &self.certificate)
            .field("intermediates", &self.intermediates)
            .finish_non_exhaustive()
    }
}

impl Cert {
    /// `get_decrypted_private_key`: unencrypted PKCS#8 PEM.
    pub fn decrypted_private_key(&self) -> Result<String, CertError> {
        crate::key::decrypt_key_pem(&self.private_key, self.private_key_passphrase.as_deref())
    }

    /// The key, decrypted, ready to sign.
    pub fn signing_key(&self) -> Result<CaKey, CertError> {
        CaKey::from_pem(&self.private_key, self.private_key_passphrase.as_deref())
    }
}

/// The four refs of a cluster's certificate set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterCertRefs {
    pub ca_cert_ref: String,
    pub magnum_cert_ref: String,
    pub etcd_ca_cert_ref: String,
    pub front_proxy_ca_cert_ref: String,
}

/// Where the certificates live (`[certificates] cert_manager_type`).
#[derive(Debug, Clone)]
enum Store {
    /// `x509keypair`: rows of the `x509keypair` table.
    X509KeyPair(Database),
    /// `local`: files `<ref>.crt`, `<ref>.key`, `<ref>.int`, `<ref>.pass` under
    /// `[certificates] storage_path`, as Magnum's `local_cert_manager` writes them.
    Local(std::path::PathBuf),
    /// `barbican`: a `certificate` container and its secrets in Barbican, as Magnum's
    /// `barbican_cert_manager` stores them (service credentials, see
    /// [`openkeel_cloud::barbican`]).
    Barbican(std::sync::Arc<openkeel_cloud::BarbicanClient>),
}

/// `magnum/common/cert_manager/x509keypair_cert_manager.py` (and `local_cert_manager.py`,
/// [`X509KeyPairCertManager::local`]) plus the conductor's certificate helpers over them.
#[derive(Debug, Clone)]
pub struct X509KeyPairCertManager {
    store: Store,
    settings: X509Section,
}

impl X509KeyPairCertManager {
    pub fn new(db: Database, settings: X509Section) -> Self {
        X509KeyPairCertManager {
            store: Store::X509KeyPair(db),
            settings,
        }
    }

    /// The `local` cert manager: files under `storage_path` (the directory is created if
    /// missing; permissions follow the process umask), in the layout of Magnum's
    /// `local_cert_manager`. Meant for tests and single-host setups: the files are only on
    /// the conductor's host. Refs that are not plain uuids are refused (no path traversal).
    pub fn local(storage_path: impl Into<std::path::PathBuf>, settings: X509Section) -> Self {
        X509KeyPairCertManager {
            store: Store::Local(storage_path.into()),
            settings,
        }
    }

    /// The `barbican` cert manager: each certificate is a Barbican `certificate` container
    /// (named after the issuer, or `Magnum-Conductor` for the client certificate) holding the
    /// text/plain secrets `Certificate`, `Private Key` and `Private Key Passphrase`; the
    /// stored ref is the container ref. All calls use the service credentials, whatever the
    /// request's project, as Magnum's.
    pub fn barbican(client: openkeel_cloud::BarbicanClient, settings: X509Section) -> Self {
        X509KeyPairCertManager {
            store: Store::Barbican(std::sync::Arc::new(client)),
            settings,
        }
    }

    pub fn settings(&self) -> &X509Section {
        &self.settings
    }

    /// `store_cert`: a new row (project and user from the context) or a new set of files;
    /// returns the ref (a uuid). For Barbican, see [`Self::store_cert_named`] (this one
    /// names the container `Magnum TLS Cert`, Magnum's default).
    pub async fn store_cert(
        &self,
        ctx: &RequestContext,
        certificate: &str,
        private_key: &str,
        private_key_passphrase: Option<&str>,
    ) -> Result<String, CertError> {
        self.store_cert_named(
            ctx,
            certificate,
            private_key,
            private_key_passphrase,
            "Magnum TLS Cert",
        )
        .await
    }

    /// `store_cert(..., name=...)`: `name` is the Barbican container's name (ignored by the
    /// other stores). Barbican: the secrets `Certificate`, `Private Key` and (when not
    /// empty) `Private Key Passphrase`, then the `certificate` container; the container ref
    /// is returned. If any step fails, the secrets already created are deleted (Magnum only
    /// does that for an error it never gets).
    pub async fn store_cert_named(
        &self,
        ctx: &RequestContext,
        certificate: &str,
        private_key: &str,
        private_key_passphrase: Option<&str>,
        name: &str,
    ) -> Result<String, CertError> {
        match &self.store {
            Store::Barbican(client) => {
                barbican_store(
                    client,
                    certificate,
                    private_key,
                    private_key_passphrase,
                    name,
                )
                .await
            }
            Store::X509KeyPair(db) => {
                let row = X509KeyPair {
                    certificate: Some(certificate.to_string()),
                    private_key: Some(private_key.to_string()),
                    private_key_passphrase: private_key_passphrase.map(str::to_string),
                    intermediates: None,
                    project_id: ctx.project_id.clone(),
                    user_id: ctx.user_id.clone(),
                    ..X509KeyPair::default()
                };
                let created = x509keypair::create(db, &row).await?;
                created
                    .uuid
                    .ok_or_else(|| CertError::Crypto("the stored key pair has no uuid".to_string()))
            }
            Store::Local(dir) => {
                let r = uuid::Uuid::new_v4().to_string();
                let base = dir.join(&r);
                let write = |ext: &str, text: &str| {
                    std::fs::write(base.with_extension(ext), text)
                        .map_err(|e| CertError::Storage(e.to_string()))
                };
                std::fs::create_dir_all(dir).map_err(|e| CertError::Storage(e.to_string()))?;
                write("crt", certificate)?;
                write("key", private_key)?;
                if let Some(p) = private_key_passphrase.filter(|p| !p.is_empty()) {
                    write("pass", p)?;
                }
                Ok(r)
            }
        }
    }

    /// `get_cert`: `X509KeyPair.get_by_uuid` (tenant-scoped by the context), or the files.
    pub async fn get_cert(&self, ctx: &RequestContext, cert_ref: &str) -> Result<Cert, CertError> {
        match &self.store {
            Store::Barbican(client) => barbican_get(client, cert_ref).await,
            Store::X509KeyPair(db) => {
                let row = x509keypair::get_by_uuid(db, &Scope::from(ctx), cert_ref).await?;
                Ok(Cert {
                    certificate: row.certificate.unwrap_or_default(),
                    private_key: row.private_key.unwrap_or_default(),
                    private_key_passphrase: row.private_key_passphrase,
                    intermediates: row.intermediates,
                })
            }
            Store::Local(dir) => {
                let base = local_base(dir, cert_ref)?;
                let read = |ext: &str| std::fs::read_to_string(base.with_extension(ext));
                let optional = |ext: &str| match read(ext) {
                    Ok(t) => Ok(Some(t)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(CertError::Storage(e.to_string())),
                };
                Ok(Cert {
                    certificate: read("crt").map_err(|_| {
                        CertError::Storage("Certificate could not be read.".to_string())
                    })?,
                    private_key: read("key").map_err(|_| {
                        CertError::Storage("Private Key could not be read.".to_string())
                    })?,
                    intermediates: optional("int")?,
                    private_key_passphrase: optional("pass")?,
                })
            }
        }
    }

    /// `delete_cert`: get (scoped) then destroy; for files, remove all four (missing ones
    /// are fine; a ref with no certificate file is `X509KeyPairNotFound`, as a missing row).
    pub async fn delete_cert(&self, ctx: &RequestContext, cert_ref: &str) -> Result<(), CertError> {
        match &self.store {
            Store::Barbican(client) => barbican_delete(client, cert_ref).await,
            Store::X509KeyPair(db) => {
                let row = x509keypair::get_by_uuid(db, &Scope::from(ctx), cert_ref).await?;
                let ident = row.uuid.unwrap_or_else(|| cert_ref.to_string());
                x509keypair::destroy(db, &ident).await?;
                Ok(())
            }
            Store::Local(dir) => {
                let base = local_base(dir, cert_ref)?;
                if !base.with_extension("crt").exists() {
                    return Err(CertError::Db(DbError::X509KeyPairNotFound(
                        cert_ref.to_string(),
                    )));
                }
                for ext in ["crt", "key", "int", "pass"] {
                    match std::fs::remove_file(base.with_extension(ext)) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(CertError::Storage(e.to_string())),
                    }
                }
                Ok(())
            }
        }
    }

    async fn store_ca(
        &self,
        ctx: &RequestContext,
        issuer: &str,
        key: NewKey,
    ) -> Result<(String, CaKey), CertError> {
        let pass = short_id()?;
        let (issuer_owned, settings) = (issuer.to_string(), self.settings.clone());
        let pass2 = pass.clone();
        let ca = blocking(move || ca_certificate_with_key(&issuer_owned, &pass2, key, &settings))
            .await?;
        let r = self
            .store_cert_named(ctx, &ca.certificate, &ca.private_key, Some(&pass), issuer)
            .await?;
        tracing::debug!(cert_ref = %r, "CA cert is created");
        let key = CaKey::from_pem(&ca.private_key, Some(&pass))?;
        Ok((r, key))
    }

    /// `generate_certificates_to_cluster`: the kubernetes, etcd and front-proxy CAs and the
    /// Magnum client certificate (CN=admin, O=system:masters, signed by the kubernetes CA), in
    /// that order, each stored at once. The four keys are generated first, at once (Magnum
    /// makes them one after the other; the certificates are the same). On error the ones
    /// already stored are deleted (Magnum leaves them behind).
    pub async fn generate_certificates_to_cluster(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<ClusterCertRefs, CertError> {
        let issuer = issuer_name(cluster);
        let mut stored: Vec<String> = Vec::new();
        let result = async {
            let mut keys = new_keys(&self.settings, 4).await?.into_iter();
            let mut next_key = || {
                keys.next()
                    .ok_or_else(|| CertError::Crypto("missing key".to_string()))
            };
            let (ca_ref, ca_key) = self.store_ca(ctx, &issuer, next_key()?).await?;
            stored.push(ca_ref.clone());
            let (etcd_ref, _) = self.store_ca(ctx, &issuer, next_key()?).await?;
            stored.push(etcd_ref.clone());
            let (fp_ref, _) = self.store_ca(ctx, &issuer, next_key()?).await?;
            stored.push(fp_ref.clone());
            let pass = short_id()?;
            let (i, p, s, key) = (
                issuer.clone(),
                pass.clone(),
                self.settings.clone(),
                next_key()?,
            );
            let client = blocking(move || {
                client_certificate_with_key(&i, "admin", "system:masters", &ca_key, &p, key, &s)
            })
            .await?;
            let magnum_ref = self
                .store_cert_named(
                    ctx,
                    &client.certificate,
                    &client.private_key,
                    Some(&pass),
                    CONDUCTOR_CLIENT_NAME,
                )
                .await?;
            tracing::debug!(cert_ref = %magnum_ref, "Magnum client cert is created");
            Ok(ClusterCertRefs {
                ca_cert_ref: ca_ref,
                magnum_cert_ref: magnum_ref,
                etcd_ca_cert_ref: etcd_ref,
                front_proxy_ca_cert_ref: fp_ref,
            })
        }
        .await;
        if result.is_err() {
            for r in &stored {
                if let Err(e) = self.delete_cert(ctx, r).await {
                    tracing::warn!(cert_ref = %r, error = %e, "cannot delete a partial certificate");
                }
            }
        }
        result
    }

    /// Delete all four certificates of the cluster (Magnum deletes only the kubernetes CA and
    /// the client certificate). Missing rows are skipped; the first other error is returned
    /// after trying all of them.
    pub async fn delete_certificates_from_cluster(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<(), CertError> {
        let mut first_err = None;
        for r in [
            &cluster.ca_cert_ref,
            &cluster.magnum_cert_ref,
            &cluster.etcd_ca_cert_ref,
            &cluster.front_proxy_ca_cert_ref,
        ]
        .into_iter()
        .flatten()
        {
            match self.delete_cert(ctx, r).await {
                Ok(()) => {}
                Err(CertError::Db(DbError::X509KeyPairNotFound(_)))
                | Err(CertError::NotFound(_)) => {}
                Err(e) => {
                    tracing::warn!(cert_ref = %r, error = %e, "cannot delete certificate");
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// `get_cluster_ca_certificate`'s ref choice: `etcd`, `front_proxy`/`front-proxy`, else
    /// the kubernetes CA.
    pub fn ca_ref_for<'a>(cluster: &'a Cluster, ca_cert_type: Option<&str>) -> Option<&'a str> {
        match ca_cert_type {
            Some("etcd") => cluster.etcd_ca_cert_ref.as_deref(),
            Some("front_proxy") | Some("front-proxy") => cluster.front_proxy_ca_cert_ref.as_deref(),
            _ => cluster.ca_cert_ref.as_deref(),
        }
    }

    /// `get_cluster_ca_certificate`: the CA of `ca_cert_type` (kubernetes when None).
    pub async fn get_cluster_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        ca_cert_type: Option<&str>,
    ) -> Result<Cert, CertError> {
        let r = Self::ca_ref_for(cluster, ca_cert_type)
            .ok_or_else(|| CertError::Db(DbError::X509KeyPairNotFound("None".to_string())))?;
        self.get_cert(ctx, r).await
    }

    /// `sign_node_certificate`: sign `csr` with the cluster's CA of `ca_cert_type`.
    pub async fn sign_node_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        csr: &str,
        ca_cert_type: Option<&str>,
    ) -> Result<String, CertError> {
        let ca = self
            .get_cluster_ca_certificate(ctx, cluster, ca_cert_type)
            .await?;
        let key = ca.signing_key()?;
        let (issuer, csr, settings) =
            (issuer_name(cluster), csr.to_string(), self.settings.clone());
        blocking(move || sign_csr(&csr, &issuer, &key, &settings)).await
    }
}

fn barbican_error(e: openkeel_cloud::barbican::BarbicanError) -> CertError {
    match e {
        openkeel_cloud::barbican::BarbicanError::NotFound(m) => CertError::NotFound(m),
        other => CertError::Barbican(other.to_string()),
    }
}

async fn barbican_store(
    client: &openkeel_cloud::BarbicanClient,
    certificate: &str,
    private_key: &str,
    private_key_passphrase: Option<&str>,
    name: &str,
) -> Result<String, CertError> {
    use openkeel_cloud::barbican::{ref_uuid, SecretRef};
    tracing::info!(name, "Storing certificate container in Barbican.");
    let mut created: Vec<String> = Vec::new();
    let result = async {
        let mut refs = Vec::new();
        let mut secrets = vec![
            ("certificate", "Certificate", certificate),
            ("private_key", "Private Key", private_key),
        ];
        if let Some(p) = private_key_passphrase.filter(|p| !p.is_empty()) {
            secrets.push(("private_key_passphrase", "Private Key Passphrase", p));
        }
        for (slot, secret_name, payload) in secrets {
            let r = client
                .create_secret(secret_name, payload)
                .await
                .map_err(barbican_error)?;
            created.push(r.clone());
            refs.push(SecretRef {
                name: slot.to_string(),
                secret_ref: r,
            });
        }
        client
            .create_container(name, &refs)
            .await
            .map_err(barbican_error)
    }
    .await;
    if result.is_err() {
        for r in &created {
            match client.delete_secret(ref_uuid(r)).await {
                Ok(()) => tracing::info!(secret_ref = %r, "Deleted secret during rollback."),
                Err(e) => tracing::warn!(secret_ref = %r, error = %e,
                    "Failed to delete secret during rollback."),
            }
        }
    }
    result
}

async fn barbican_get(
    client: &openkeel_cloud::BarbicanClient,
    cert_ref: &str,
) -> Result<Cert, CertError> {
    use openkeel_cloud::barbican::ref_uuid;
    tracing::info!(cert_ref, "Loading certificate container from Barbican.");
    let container = client
        .get_container(ref_uuid(cert_ref))
        .await
        .map_err(barbican_error)?;
    if container.kind.as_deref() != Some("certificate") {
        return Err(CertError::Barbican(
            "Retrieved Barbican Container is not of the correct type (certificate).".to_string(),
        ));
    }
    let payload = |name: &'static str| {
        let r = container.secret(name).map(|r| ref_uuid(r).to_string());
        async move {
            match r {
                Some(uuid) => client
                    .get_secret_payload(&uuid)
                    .await
                    .map(Some)
                    .map_err(barbican_error),
                None => Ok(None),
            }
        }
    };
    Ok(Cert {
        certificate: payload("certificate").await?.unwrap_or_default(),
        private_key: payload("private_key").await?.unwrap_or_default(),
        private_key_passphrase: payload("private_key_passphrase").await?,
        intermediates: payload("intermediates").await?,
    })
}

/// Magnum's recursive delete: the container's secrets (certificate, intermediates,
/// passphrase, private key), then the container.
async fn barbican_delete(
    client: &openkeel_cloud::BarbicanClient,
    cert_ref: &str,
) -> Result<(), CertError> {
    use openkeel_cloud::barbican::ref_uuid;
    tracing::info!(
        cert_ref,
        "Recursively deleting certificate container from Barbican."
    );
    let uuid = ref_uuid(cert_ref);
    let container = client.get_container(uuid).await.map_err(barbican_error)?;
    for slot in [
        "certificate",
        "intermediates",
        "private_key_passphrase",
        "private_key",
    ] {
        if let Some(r) = container.secret(slot) {
            client
                .delete_secret(ref_uuid(r))
                .await
                .map_err(barbican_error)?;
        }
    }
    client.delete_container(uuid).await.map_err(barbican_error)
}

/// `<storage_path>/<ref>` for a ref that is a plain uuid (never a path: a ref read from a
/// database row must not name files outside the storage directory).
fn local_base(dir: &std::path::Path, cert_ref: &str) -> Result<std::path::PathBuf, CertError> {
    if uuid::Uuid::parse_str(cert_ref).is_err() {
        return Err(CertError::Db(DbError::X509KeyPairNotFound(
            cert_ref.to_string(),
        )));
    }
    Ok(dir.join(cert_ref))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CertError> + Send + 'static,
) -> Result<T, CertError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CertError::Crypto(format!("certificate task failed: {e}")))?
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn a_cluster_gets_four_different_keys_generated_at_once() {
        let keys = new_keys(&X509Section::default(), 4).await.unwrap();
        assert_eq!(keys.len(), 4);
        let pems: std::collections::HashSet<String> = keys
            .into_iter()
            .map(|k| {
                crate::x509::ca_certificate_with_key(
                    "c",
                    "abcdefghijkl",
                    k,
                    &X509Section::default(),
                )
                .unwrap()
                .certificate
            })
            .collect();
        assert_eq!(pems.len(), 4);
    }

    #[test]
    fn short_ids_are_twelve_base32_characters() {
        for _ in 0..50 {
            let id = short_id().unwrap();
            assert_eq!(id.len(), 12);
            assert!(id
                .chars()
                .all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c)));
        }
    }
}
