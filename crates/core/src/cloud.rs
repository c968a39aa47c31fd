//! The OpenStack look-ups Magnum's API makes while validating templates and clusters
//! (`magnum/api/attr_validator.py`): Glance images, Nova flavors and
//! keypairs, Neutron networks and subnets, Keystone projects.
//!
//! Implementations: the real services found through the Keystone catalogue (in
//! `openkeel-api`), and the embedded default's simulated cloud. Each method returns the
//! Magnum error the check gives (`ImageNotFound`, `FlavorNotFound`, `Conflict` for
//! duplicates, `AuthorizationFailure` when no client can be built, ...).

use crate::context::RequestContext;
use crate::error::MagnumError;
use async_trait::async_trait;

/// A Glance image as the validators see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Image {
    pub id: String,
    pub name: Option<String>,
    /// The `os_distro` property, if the image has one.
    pub os_distro: Option<String>,
    /// The image's other custom properties (openstacksdk's `Image.properties`: the top-level
    /// attributes outside Glance's image schema). Magnum's `enforce_driver_supported` reads
    /// `magnum_driver` from here.
    pub properties: serde_json::Map<String, serde_json::Value>,
}

impl Image {
    /// The `magnum_driver` custom property, when it is a string.
    pub fn magnum_driver(&self) -> Option<&str> {
        self.properties
            .get("magnum_driver")
            .and_then(|v| v.as_str())
    }
}

/// A Nova flavor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    /// Root disk in GiB.
    pub disk: i64,
    pub vcpus: i64,
    pub ram: i64,
}

/// A Neutron network or subnet: its id and name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NamedResource {
    pub id: String,
    pub name: String,
}

/// The look-ups, each made with the caller's context (token, or the service credentials for
/// admin contexts, as Magnum's `OpenStackClients`).
#[async_trait]
pub trait Cloud: Send + Sync + 'static {
    /// Glance `find_image(name_or_id, ignore_missing=False)`: by id, else by unique name.
    /// Not found → `ImageNotFound` (400); several by name → `Conflict` (409,
    /// `Multiple images exist with same name '<i>'. Please use the image ID instead.`);
    /// forbidden → `ImageNotAuthorized` (403).
    async fn find_image(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Image, MagnumError>;

    /// Nova flavors (the list, matched by name or id by the caller).
    async fn list_flavors(&self, ctx: &RequestContext) -> Result<Vec<Flavor>, MagnumError>;

    /// Nova `get_keypair(name)`: `KeyPairNotFound` (404) when absent.
    async fn keypair_exists(&self, ctx: &RequestContext, name: &str) -> Result<bool, MagnumError>;

    /// Neutron networks with `router:external=True`.
    async fn list_external_networks(
        &self,
        ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError>;

    /// All Neutron networks visible to the caller.
    async fn list_networks(&self, ctx: &RequestContext) -> Result<Vec<NamedResource>, MagnumError>;

    /// All Neutron subnets visible to the caller.
    async fn list_subnets(&self, ctx: &RequestContext) -> Result<Vec<NamedResource>, MagnumError>;

    /// The visible networks whose name or id is `name_or_id` (Magnum's `validate_fixed_network`
    /// matches the full list itself). The default filters [`Cloud::list_networks`]; a cloud
    /// without a real Neutron (the simulated one) may answer for any name.
    async fn networks_named(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(self
            .list_networks(ctx)
            .await?
            .into_iter()
            .filter(|n| n.name == name_or_id || n.id == name_or_id)
            .collect())
    }

    /// The visible subnets whose name or id is `name_or_id`; the default filters
    /// [`Cloud::list_subnets`].
    async fn subnets_named(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(self
            .list_subnets(ctx)
            .await?
            .into_iter()
            .filter(|n| n.name == name_or_id || n.id == name_or_id)
            .collect())
    }

    /// Keystone `get_project(id)`: false when Keystone answers 404.
    async fn project_exists(
        &self,
        ctx: &RequestContext,
        project_id: &str,
    ) -> Result<bool, MagnumError>;
}
