//! Credential rotation (`rotate_credential`, API microversion 1.12 `PATCH
//! /v1/credentials/{cluster}`): magnum-cluster-api does not implement it
//! (`magnum_cluster_api/driver.py`);
//! OpenKeel gives the cluster a new Keystone application credential.
//!
//! 1. The current credential is the one `<stack_id>-cloud-config` holds ([`credential_of`]).
//! 2. A new one is made with the caller's token, owned by the cluster's user as the first one
//!    (Keystone makes application credentials only for the token's own user, so the caller
//!    must be the cluster's owner), named `<uuid>-<8 hex digits>`: Keystone wants a user's
//!    credential names unique and the old one (named `<uuid>`, magnum-cluster-api's name, or a
//!    previous rotation's `<uuid>-…`) lives until the new one is in use.
//! 3. The new credential is written everywhere the old one is: the addon Secrets (`<uuid>` and
//!    `<stack_id>-cloud-provider`, whose `cloud-config-secret.yaml` carries the workload
//!    cluster's `cloud.conf`), then `<stack_id>-cloud-config` (CAPO's `clouds.yaml`), last,
//!    because that Secret is where the current credential is read from.
//! 4. "In use" means written to those Secrets: then the old credential is deleted by id.
//!
//! A failure after the new credential exists never leaves the cluster without a working one:
//! the Secrets that took the new credential are written back with the old one and the new one
//! is deleted; if they cannot be written back, both credentials are kept (both work) and the
//! error says so. Whatever an interrupted rotation leaves in Keystone is named `<uuid>-…` and
//! goes with the cluster (`ApplicationCredentials::delete`).

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::Cluster;
use openkeel_drivers::deps::{rotated_credential_name, ApplicationCredential};
use openkeel_drivers::{DriverContext, DriverError, DriverResult, Writes};
use serde_json::Value;

use super::{credential_of, missing, CapiDriver};
use crate::mgmt::{self, Mgmt};
use crate::secrets;

/// 8 random hex digits: the suffix of a rotation's credential name.
fn suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

/// Whether any value of `secret`'s `data` mentions `text` (an application credential id).
fn mentions(secret: &Value, text: &str) -> bool {
    secret["data"].as_object().is_some_and(|data| {
        data.keys()
            .filter_map(|k| mgmt::secret_text(secret, k))
            .any(|v| v.contains(text))
    })
}

impl CapiDriver {
    /// `rotate_credential`: see the module's documentation.
    pub async fn rotate_credential(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<Writes> {
        let uuid = cluster
            .uuid
            .clone()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| DriverError::permanent_message("The cluster has no uuid."))?;
        let stack_id = cluster
            .stack_id
            .clone()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                DriverError::permanent_message(format!(
                    "Cluster {uuid} has no Cluster API cluster: there is no credential to rotate."
                ))
            })?;
        let owner = cluster
            .user_id
            .clone()
            .or_else(|| ctx.request.user_id.clone())
            .unwrap_or_default();
        if let Some(caller) = ctx.request.user_id.as_deref().filter(|u| !u.is_empty()) {
            if !owner.is_empty() && caller != owner {
                return Err(DriverError::permanent(MagnumError::new(
                    ErrorKind::NotSupported,
                    &[(
                        "operation",
                        &format!(
                            "Rotating the application credential of cluster {uuid} by a user \
                             other than its owner ({owner}: Keystone makes application \
                             credentials only for the token's own user)"
                        ),
                    )],
                )));
            }
        }
        let creds = self
            .deps
            .application_credentials
            .as_ref()
            .ok_or_else(|| missing("Keystone application credentials"))?;
        let m = self.mgmt().await?;
        let cloud_config = secrets::cloud_config_secret_name(&stack_id);
        let old = m
            .get(mgmt::SECRET, &cloud_config)
            .await?
            .as_ref()
            .and_then(credential_of)
            .ok_or_else(|| {
                DriverError::permanent_message(format!(
                    "The credentials of Cluster {stack_id} ({cloud_config}) are missing."
                ))
            })?;
        let name = rotated_credential_name(&uuid, &suffix());
        let new = creds.create_named(ctx.request, cluster, &name).await?;
        tracing::info!(cluster = %uuid, stack_id = %stack_id, old = %old.id, new = %new.id, "rotating the application credential");
        if let Err(e) = self
            .write_credential(m, ctx, cluster, &stack_id, &new)
            .await
        {
            tracing::warn!(cluster = %uuid, error = %e, "writing the new application credential failed: going back to the old one");
            return Err(self
                .roll_back(m, ctx, cluster, &stack_id, &old, &new, &owner, e)
                .await);
        }
        // The new credential is in use: the old one goes.
        creds.delete_id(&owner, &old.id).await.map_err(|e| {
            let text = format!(
                "Cluster {uuid} now uses application credential {}; deleting the old one ({}) \
                 failed: {}",
                new.id,
                old.id,
                e.message()
            );
            if e.is_transient() {
                DriverError::transient(text)
            } else {
                DriverError::permanent_message(text)
            }
        })?;
        tracing::info!(cluster = %uuid, stack_id = %stack_id, credential = %new.id, "application credential rotated");
        Ok(Writes::none())
    }

    /// The Secrets that carry the credential: the addons', then `<stack_id>-cloud-config`.
    async fn write_credential(
        &self,
        m: &Mgmt,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        credential: &ApplicationCredential,
    ) -> DriverResult<()> {
        self.write_addons(m, ctx, cluster, ctx.template, credential)
            .await?;
        self.write_cloud_config(m, cluster, stack_id, credential)
            .await
    }

    /// The Secrets that (may) mention `credential`.
    async fn mentioning(
        &self,
        m: &Mgmt,
        cluster: &Cluster,
        stack_id: &str,
        credential: &ApplicationCredential,
    ) -> DriverResult<Vec<String>> {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let mut found = Vec::new();
        for name in [
            uuid,
            format!("{stack_id}-cloud-provider"),
            secrets::cloud_config_secret_name(stack_id),
        ] {
            if m.get(mgmt::SECRET, &name)
                .await?
                .is_some_and(|s| mentions(&s, &credential.id))
            {
                found.push(name);
            }
        }
        Ok(found)
    }

    /// After `error` writing `new`: the Secrets back to `old`, then `new` deleted; `error`
    /// with what was done.
    #[allow(clippy::too_many_arguments)]
    async fn roll_back(
        &self,
        m: &Mgmt,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        old: &ApplicationCredential,
        new: &ApplicationCredential,
        owner: &str,
        error: DriverError,
    ) -> DriverError {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let restored = async {
            if !self.mentioning(m, cluster, stack_id, new).await?.is_empty() {
                self.write_credential(m, ctx, cluster, stack_id, old)
                    .await?;
            }
            self.mentioning(m, cluster, stack_id, new).await
        }
        .await;
        let outcome = match restored {
            Ok(left) if left.is_empty() => match self.deps.application_credentials.as_ref() {
                Some(creds) => match creds.delete_id(owner, &new.id).await {
                    Ok(()) => "the cluster keeps its application credential".to_string(),
                    Err(e) => format!(
                        "the cluster keeps its application credential; the new one ({}) \
                             could not be deleted: {}",
                        new.id,
                        e.message()
                    ),
                },
                None => "the cluster keeps its application credential".to_string(),
            },
            Ok(left) => format!(
                "both application credentials are kept ({} still mention the new one, {})",
                left.join(", "),
                new.id
            ),
            Err(e) => format!(
                "both application credentials are kept (the Secrets could not be written back: \
                 {})",
                e.message()
            ),
        };
        tracing::warn!(cluster = %uuid, old = %old.id, new = %new.id, outcome = %outcome, "credential rotation failed");
        let text = format!(
            "Rotating the application credential failed: {}; {outcome}.",
            error.message()
        );
        if error.is_transient() {
            DriverError::transient(text)
        } else {
            DriverError::permanent_message(text)
        }
    }
}
