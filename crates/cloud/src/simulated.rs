//! [`SimulatedCloud`]: the embedded default's answers, without any OpenStack.
//!
//! A small built-in catalogue that lets every valid request through and keeps Magnum's error
//! paths reachable:
//!
//! * **images**: any name or id is found. `os_distro` comes from the name: `ubuntu*` →
//!   `ubuntu`, `fedora-coreos*` → `fedora-coreos`, `flatcar*` → `flatcar`, `rockylinux*` /
//!   `rocky*` → `rockylinux`; any other name has no `os_distro` (so the 400 `Image <i>
//!   doesn't contain os_distro field.` is reachable). The built-in images
//!   ([`SimulatedCloud::IMAGES`]) are also found by their fixed ids; another id is found as
//!   an image without a name, hence without `os_distro`.
//! * **flavors**: `m1.tiny` (1 vCPU, 512 MiB, 1 GiB disk), `m1.small` (1, 2048, 20),
//!   `m1.medium` (2, 4096, 40), `m1.large` (4, 8192, 80), `m1.xlarge` (8, 16384, 160), and the
//!   diskless `ds1G`, `ds2G`, `ds4G` (root disk 0, to reach `Flavor with zero root volume size
//!   is not supported when boot_volume_size is zero.`). Other flavors are not found.
//! * **keypairs**: every keypair exists except names starting with `missing`.
//! * **networks**: `public` (external) and `private`; any name or id is found as a fixed
//!   network, and any name or id as a fixed subnet (`private-subnet` and `public-subnet` are
//!   listed); only `public` is an external network.
//! * **projects**: every project exists.
//! * for the Cluster API driver (`openkeel_drivers::deps::DriverCloud`, in [`crate::driver`]):
//!   Cinder's default volume type is `__DEFAULT__`; every server group exists, with a stable
//!   id per project and name, and deleting one always succeeds.

use async_trait::async_trait;
use openkeel_core::cloud::{Cloud, Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;

/// The simulated cloud. Stateless; every method answers at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimulatedCloud;

/// One built-in image: (id, name).
type BuiltinImage = (&'static str, &'static str);

impl SimulatedCloud {
    /// The built-in images, found by name or by these ids.
    pub const IMAGES: &'static [BuiltinImage] = &[
        ("3f8b1c52-5b7e-4c1a-9d3e-000000000001", "ubuntu-22.04"),
        ("3f8b1c52-5b7e-4c1a-9d3e-000000000002", "fedora-coreos-40"),
        ("3f8b1c52-5b7e-4c1a-9d3e-000000000003", "flatcar-stable"),
        ("3f8b1c52-5b7e-4c1a-9d3e-000000000004", "rockylinux-9"),
    ];

    /// The built-in flavors: (id, name, vcpus, ram MiB, disk GiB).
    pub const FLAVORS: &'static [(&'static str, &'static str, i64, i64, i64)] = &[
        ("1", "m1.tiny", 1, 512, 1),
        ("2", "m1.small", 1, 2048, 20),
        ("3", "m1.medium", 2, 4096, 40),
        ("4", "m1.large", 4, 8192, 80),
        ("5", "m1.xlarge", 8, 16384, 160),
        ("d1", "ds1G", 1, 1024, 0),
        ("d2", "ds2G", 2, 2048, 0),
        ("d4", "ds4G", 4, 4096, 0),
    ];

    pub const PUBLIC_NETWORK: (&'static str, &'static str) =
        ("5e0a3f4c-1d2b-4e6f-8a9b-000000000001", "public");
    pub const PRIVATE_NETWORK: (&'static str, &'static str) =
        ("5e0a3f4c-1d2b-4e6f-8a9b-000000000002", "private");
    pub const SUBNETS: &'static [(&'static str, &'static str)] = &[
        ("7c4d2e1f-3a5b-4c6d-9e8f-000000000001", "private-subnet"),
        ("7c4d2e1f-3a5b-4c6d-9e8f-000000000002", "public-subnet"),
    ];

    /// Cinder's default volume type in the simulated cloud (Cinder's own default name).
    pub const DEFAULT_VOLUME_TYPE: &'static str = "__DEFAULT__";

    pub fn new() -> Self {
        SimulatedCloud
    }

    /// The id the simulated Nova gives the server group `name` of `project` (stable).
    pub fn server_group_id(project: &str, name: &str) -> String {
        Self::synthetic_id(b'g', &format!("{project}/{name}"))
    }

    /// The `os_distro` the simulated Glance gives an image of this name.
    pub fn os_distro_for(name: &str) -> Option<&'static str> {
        let n = name.to_ascii_lowercase();
        if n.starts_with("ubuntu") {
            Some("ubuntu")
        } else if n.starts_with("fedora-coreos") {
            Some("fedora-coreos")
        } else if n.starts_with("flatcar") {
            Some("flatcar")
        } else if n.starts_with("rockylinux") || n.starts_with("rocky") {
            Some("rockylinux")
        } else {
            None
        }
    }

    /// A stable id for a name that is not a built-in image.
    fn synthetic_id(prefix: u8, name: &str) -> String {
        // FNV-1a, 128-bit: the same name always gets the same id.
        let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
        for b in std::iter::once(prefix).chain(name.bytes()) {
            h ^= u128::from(b);
            h = h.wrapping_mul(0x0000000001000000000000000000013B);
        }
        // Version 8 ("custom"), RFC 4122 variant.
        h = (h & !(0xF << 76)) | (0x8 << 76);
        h = (h & !(0x3 << 62)) | (0x2 << 62);
        uuid::Uuid::from_u128(h).to_string()
    }

    fn looks_like_uuid(s: &str) -> bool {
        uuid::Uuid::try_parse(s).is_ok()
    }

    fn image(name_or_id: &str) -> Image {
        if let Some((id, name)) = Self::IMAGES
            .iter()
            .find(|(id, name)| *id == name_or_id || *name == name_or_id)
        {
            return Image {
                id: (*id).to_string(),
                name: Some((*name).to_string()),
                os_distro: Self::os_distro_for(name).map(str::to_string),
                properties: Default::default(),
            };
        }
        if Self::looks_like_uuid(name_or_id) {
            return Image {
                id: name_or_id.to_string(),
                name: None,
                os_distro: None,
                properties: Default::default(),
            };
        }
        Image {
            id: Self::synthetic_id(b'i', name_or_id),
            name: Some(name_or_id.to_string()),
            os_distro: Self::os_distro_for(name_or_id).map(str::to_string),
            properties: Default::default(),
        }
    }

    fn named(pair: (&str, &str)) -> NamedResource {
        NamedResource {
            id: pair.0.to_string(),
            name: pair.1.to_string(),
        }
    }

    /// A resource found by any name or id: the listed one when it matches, else one with
    /// that name (or that id, when it looks like one).
    fn any_named(listed: &[(&str, &str)], prefix: u8, name_or_id: &str) -> NamedResource {
        if let Some(p) = listed
            .iter()
            .find(|(id, name)| *id == name_or_id || *name == name_or_id)
        {
            return Self::named(*p);
        }
        if Self::looks_like_uuid(name_or_id) {
            NamedResource {
                id: name_or_id.to_string(),
                name: String::new(),
            }
        } else {
            NamedResource {
                id: Self::synthetic_id(prefix, name_or_id),
                name: name_or_id.to_string(),
            }
        }
    }
}

#[async_trait]
impl Cloud for SimulatedCloud {
    async fn find_image(
        &self,
        _ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Image, MagnumError> {
        Ok(Self::image(name_or_id))
    }

    async fn list_flavors(&self, _ctx: &RequestContext) -> Result<Vec<Flavor>, MagnumError> {
        Ok(Self::FLAVORS
            .iter()
            .map(|(id, name, vcpus, ram, disk)| Flavor {
                id: (*id).to_string(),
                name: (*name).to_string(),
                disk: *disk,
                vcpus: *vcpus,
                ram: *ram,
            })
            .collect())
    }

    async fn keypair_exists(&self, _ctx: &RequestContext, name: &str) -> Result<bool, MagnumError> {
        Ok(!name.starts_with("missing"))
    }

    async fn list_external_networks(
        &self,
        _ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![Self::named(Self::PUBLIC_NETWORK)])
    }

    async fn list_networks(
        &self,
        _ctx: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![
            Self::named(Self::PUBLIC_NETWORK),
            Self::named(Self::PRIVATE_NETWORK),
        ])
    }

    async fn list_subnets(&self, _ctx: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(Self::SUBNETS.iter().map(|p| Self::named(*p)).collect())
    }

    async fn networks_named(
        &self,
        _ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![Self::any_named(
            &[Self::PUBLIC_NETWORK, Self::PRIVATE_NETWORK],
            b'n',
            name_or_id,
        )])
    }

    async fn subnets_named(
        &self,
        _ctx: &RequestContext,
        name_or_id: &str,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![Self::any_named(Self::SUBNETS, b's', name_or_id)])
    }

    async fn project_exists(
        &self,
        _ctx: &RequestContext,
        _project_id: &str,
    ) -> Result<bool, MagnumError> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::*;
    use openkeel_core::error::ErrorKind;
    use openkeel_core::objects::StringMap;

    fn ctx() -> RequestContext {
        RequestContext::default()
    }

    #[tokio::test]
    async fn images_by_name_and_id() {
        let c = SimulatedCloud;
        let cx = ctx();
        for (name, distro) in [
            ("ubuntu-jammy", Some("ubuntu")),
            ("Ubuntu-24.04", Some("ubuntu")),
            ("fedora-coreos-40", Some("fedora-coreos")),
            ("flatcar-3815", Some("flatcar")),
            ("rockylinux-9", Some("rockylinux")),
            ("rocky-8", Some("rockylinux")),
            ("windows-2022", None),
            ("fedora-atomic", None),
        ] {
            let i = c.find_image(&cx, name).await.unwrap();
            assert_eq!(i.os_distro.as_deref(), distro, "{name}");
            assert_eq!(i.name.as_deref(), Some(name));
            assert_eq!(i, c.find_image(&cx, name).await.unwrap(), "stable id");
        }
        let (id, name) = SimulatedCloud::IMAGES[1];
        let i = c.find_image(&cx, id).await.unwrap();
        assert_eq!(
            (i.name.as_deref(), i.os_distro.as_deref()),
            (Some(name), Some("fedora-coreos"))
        );
        let unknown = "0b7f6a1e-0000-4000-8000-00000000abcd";
        let i = c.find_image(&cx, unknown).await.unwrap();
        assert_eq!((i.id.as_str(), i.os_distro), (unknown, None));
        assert!(uuid::Uuid::try_parse(&c.find_image(&cx, "x").await.unwrap().id).is_ok());
    }

    #[tokio::test]
    async fn validators_over_the_simulator() {
        let c = SimulatedCloud;
        let cx = ctx();
        let img = validate_image(&c, &cx, Some("ubuntu-22.04")).await.unwrap();
        assert_eq!(img.os_distro.as_deref(), Some("ubuntu"));
        let e = validate_image(&c, &cx, Some("windows-2022"))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (400, "Image windows-2022 doesn't contain os_distro field.")
        );
        let e = validate_image(&c, &cx, None).await.unwrap_err();
        assert_eq!(e.message(), "Image None doesn't contain os_distro field.");

        validate_flavor(&c, &cx, Some("m1.small")).await.unwrap();
        validate_flavor(&c, &cx, Some("4")).await.unwrap();
        validate_flavor(&c, &cx, None).await.unwrap();
        let e = validate_flavor(&c, &cx, Some("m1.huge")).await.unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (400, "Unable to find flavor m1.huge.")
        );

        validate_flavor_root_volume_size(&c, &cx, None, Some("m1.small"), 0)
            .await
            .unwrap();
        let e = validate_flavor_root_volume_size(&c, &cx, None, Some("ds4G"), 0)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::FlavorZeroRootVolumeNotSupported);
        let mut labels = StringMap::new();
        labels.insert("boot_volume_size".into(), "10".into());
        validate_flavor_root_volume_size(&c, &cx, Some(&labels), Some("ds4G"), 0)
            .await
            .unwrap();

        validate_keypair(&c, &cx, Some("anything")).await.unwrap();
        let e = validate_keypair(&c, &cx, Some("missing-key"))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), e.message()),
            (404, "Unable to find keypair missing-key.")
        );

        validate_external_network(&c, &cx, "public").await.unwrap();
        validate_external_network(&c, &cx, SimulatedCloud::PUBLIC_NETWORK.0)
            .await
            .unwrap();
        let e = validate_external_network(&c, &cx, "private")
            .await
            .unwrap_err();
        assert_eq!(e.message(), "Unable to find external network private.");

        let id = validate_fixed_network(&c, &cx, "private").await.unwrap();
        assert_eq!(id, SimulatedCloud::PRIVATE_NETWORK.0);
        let id = validate_fixed_network(&c, &cx, "my-net").await.unwrap();
        assert_eq!(id, validate_fixed_network(&c, &cx, "my-net").await.unwrap());
        let id = validate_fixed_subnet(&c, &cx, "private-subnet")
            .await
            .unwrap();
        assert_eq!(id, SimulatedCloud::SUBNETS[0].0);
        validate_fixed_subnet(&c, &cx, "whatever").await.unwrap();

        validate_project(&c, &cx, "any-project").await.unwrap();
    }

    #[tokio::test]
    async fn lists() {
        let c = SimulatedCloud::new();
        let cx = ctx();
        let flavors = c.list_flavors(&cx).await.unwrap();
        assert!(flavors
            .iter()
            .any(|f| f.name == "m1.xlarge" && f.disk == 160));
        assert_eq!(c.list_external_networks(&cx).await.unwrap().len(), 1);
        assert_eq!(c.list_networks(&cx).await.unwrap().len(), 2);
        assert_eq!(c.list_subnets(&cx).await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn driver_image_rules() {
        let c = SimulatedCloud;
        let cx = ctx();
        let d = driver_image(&c, &cx, Some("ubuntu-x"), None, None)
            .await
            .unwrap();
        assert_eq!(d.cluster_distro.as_deref(), Some("ubuntu"));
        assert_eq!(d.driver, None);
        let e = driver_image(&c, &cx, Some("windows"), None, None)
            .await
            .unwrap_err();
        assert_eq!(
            e.message(),
            "Image windows doesn't contain os_distro field."
        );
        let e = driver_image(&c, &cx, None, None, Some("k8s"))
            .await
            .unwrap_err();
        assert_eq!(e.message(), "Image None doesn't contain os_distro field.");
        // Both given: no look-up, nothing to check.
        let d = driver_image(&c, &cx, Some("windows"), Some("ubuntu"), Some("k8s"))
            .await
            .unwrap();
        assert_eq!(d.cluster_distro.as_deref(), Some("ubuntu"));
        // The image's distro wins over the body's when the look-up happens.
        let d = driver_image(&c, &cx, Some("flatcar-1"), Some("ubuntu"), None)
            .await
            .unwrap();
        assert_eq!(d.cluster_distro.as_deref(), Some("flatcar"));
    }

    #[tokio::test]
    async fn os_resources_pick_cluster_then_template() {
        let c = SimulatedCloud;
        let cx = ctx();
        let t = OsResources {
            image_id: Some("ubuntu"),
            flavor_id: Some("m1.small"),
            external_network_id: Some("public"),
            ..Default::default()
        };
        validate_os_resources(&c, &cx, &t, None).await.unwrap();
        let cl = OsResources {
            flavor_id: Some("m1.nope"),
            ..Default::default()
        };
        let e = validate_os_resources(&c, &cx, &t, Some((&cl, Some("k"))))
            .await
            .unwrap_err();
        assert_eq!(e.message(), "Unable to find flavor m1.nope.");
        let cl = OsResources {
            flavor_id: Some(""),
            ..Default::default()
        };
        let e = validate_os_resources(&c, &cx, &t, Some((&cl, Some("missing-k"))))
            .await
            .unwrap_err();
        assert_eq!(e.message(), "Unable to find keypair missing-k.");
    }
}
