//! What the stand-in cloud knows: per-test data, with defaults like the magnum-ref rig's.

use serde_json::{Map, Value};
use std::time::Duration;

/// A Glance image. `properties` become top-level attributes of the image document, as Glance
/// v2 shows custom properties (`os_distro` is one of them).
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub id: String,
    pub name: String,
    pub os_distro: Option<String>,
    pub properties: Map<String, Value>,
}

impl Image {
    pub fn new(id: &str, name: &str, os_distro: Option<&str>) -> Self {
        Image {
            id: id.to_string(),
            name: name.to_string(),
            os_distro: os_distro.map(str::to_string),
            properties: Map::new(),
        }
    }

    /// Add a custom property (`magnum_driver`, `hw_disk_bus`, ...).
    pub fn with_property(mut self, key: &str, value: Value) -> Self {
        self.properties.insert(key.to_string(), value);
        self
    }
}

/// A Nova flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    pub ram: i64,
    pub vcpus: i64,
    pub disk: i64,
}

impl Flavor {
    pub fn new(id: &str, name: &str, ram: i64, vcpus: i64, disk: i64) -> Self {
        Flavor {
            id: id.to_string(),
            name: name.to_string(),
            ram,
            vcpus,
            disk,
        }
    }
}

/// A Nova keypair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keypair {
    pub name: String,
    pub fingerprint: String,
    pub public_key: String,
}

impl Keypair {
    pub fn new(name: &str) -> Self {
        Keypair {
            name: name.to_string(),
            fingerprint: "3c:0b:96:4b:3f:4f:0e:26:49:fb:52:32:4c:2a:0c:11".to_string(),
            public_key: format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStandInKey {name}"),
        }
    }
}

/// A Neutron network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    pub id: String,
    pub name: String,
    /// `router:external`.
    pub external: bool,
    pub shared: bool,
}

impl Network {
    pub fn new(id: &str, name: &str, external: bool) -> Self {
        Network {
            id: id.to_string(),
            name: name.to_string(),
            external,
            shared: false,
        }
    }
}

/// A Neutron subnet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subnet {
    pub id: String,
    pub name: String,
    pub network_id: String,
    pub cidr: String,
}

impl Subnet {
    pub fn new(id: &str, name: &str, network_id: &str, cidr: &str) -> Self {
        Subnet {
            id: id.to_string(),
            name: name.to_string(),
            network_id: network_id.to_string(),
            cidr: cidr.to_string(),
        }
    }
}

/// A Nova server group. `policy` is the one policy (`policies: [policy]` before
/// microversion 2.64).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerGroup {
    pub id: String,
    pub name: String,
    pub policy: String,
    pub project_id: String,
    pub user_id: String,
}

/// A Cinder volume type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeType {
    pub id: String,
    pub name: String,
}

impl VolumeType {
    pub fn new(id: &str, name: &str) -> Self {
        VolumeType {
            id: id.to_string(),
            name: name.to_string(),
        }
    }
}

/// An Octavia load balancer. `DELETE` (cascade) puts it in `PENDING_DELETE`; it is gone from
/// the list that follows, unless [`StandInData::lb_deletes_hang`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadBalancer {
    pub id: String,
    pub project_id: String,
    pub description: String,
    pub provisioning_status: String,
    pub vip_port_id: String,
}

impl LoadBalancer {
    pub fn new(id: &str, project_id: &str, description: &str, vip_port_id: &str) -> Self {
        LoadBalancer {
            id: id.to_string(),
            project_id: project_id.to_string(),
            description: description.to_string(),
            provisioning_status: "ACTIVE".to_string(),
            vip_port_id: vip_port_id.to_string(),
        }
    }
}

/// A Neutron floating IP (`GET /v2.0/floatingips?port_id=`, `DELETE /v2.0/floatingips/{id}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloatingIp {
    pub id: String,
    pub port_id: String,
    pub description: String,
}

/// Answer a matching request with this status and body instead of the normal answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// `GET`, `POST`, ... or `None` for any method.
    pub method: Option<String>,
    /// Matched against `<path>?<query>` as received (the query still percent-encoded).
    pub path_contains: String,
    pub status: u16,
    pub body: Value,
}

impl Fault {
    pub fn new(method: &str, path_contains: &str, status: u16, body: Value) -> Self {
        Fault {
            method: Some(method.to_string()),
            path_contains: path_contains.to_string(),
            status,
            body,
        }
    }
}

/// Wait this long before answering a matching request (to test client timeouts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delay {
    pub path_contains: String,
    pub delay: Duration,
}

/// Everything the stand-in answers from. [`StandInData::default`] is the magnum-ref rig's
/// data set.
#[derive(Debug, Clone, PartialEq)]
pub struct StandInData {
    /// Region of every default catalogue endpoint.
    pub region: String,
    pub images: Vec<Image>,
    pub flavors: Vec<Flavor>,
    pub keypairs: Vec<Keypair>,
    pub networks: Vec<Network>,
    pub subnets: Vec<Subnet>,
    /// Nova server groups (created and deleted through the API as well).
    pub server_groups: Vec<ServerGroup>,
    /// Cinder volume types.
    pub volume_types: Vec<VolumeType>,
    /// The name of Cinder's default volume type (`GET /v3/types/default`, microversion 3.62
    /// and later); `None`: Cinder answers 404.
    pub default_volume_type: Option<String>,
    /// Project ids Keystone does not know (ids starting with `nonexistent` are unknown too).
    pub missing_projects: Vec<String>,
    /// Page size of Glance, Nova and Neutron lists when the request gives no `limit`
    /// (`None`: Glance's default 25, Nova and Neutron unpaginated).
    pub page_size: Option<usize>,
    /// A replacement for the token catalogue; every `{base}` in its strings becomes the
    /// stand-in's base URL.
    pub catalog: Option<Value>,
    /// When set, password authentication succeeds only with this password.
    pub password: Option<String>,
    /// When true, any `X-Auth-Token` is accepted by the services (as stubcloud does);
    /// otherwise only tokens the stand-in issued.
    pub accept_any_token: bool,
    pub faults: Vec<Fault>,
    pub delays: Vec<Delay>,
    /// Where the `container-infra` catalogue entry points.
    pub magnum_url: String,
    /// Where a `key-manager` catalogue entry points (public, internal and admin alike):
    /// none when unset. Tests point it at the real Barbican (`OPENKEEL_TEST_BARBICAN_URL`).
    pub key_manager_url: Option<String>,
    /// Roles of issued tokens.
    pub roles: Vec<String>,
    /// Octavia's load balancers (the `load-balancer` service).
    pub load_balancers: Vec<LoadBalancer>,
    /// When true, deleted load balancers stay `PENDING_DELETE` for ever.
    pub lb_deletes_hang: bool,
    /// Neutron's floating IPs.
    pub floating_ips: Vec<FloatingIp>,
}

impl Default for StandInData {
    fn default() -> Self {
        let img = |n: u32| format!("5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e{n:04}");
        let net = |n: u32| format!("8f3f1b52-1b1e-4c1e-9a55-5e2a7d{n:06}");
        let sub = |n: u32| format!("b0b5e2c4-2d6c-4f0a-8a63-3c1d9e{n:06}");
        StandInData {
            region: "RegionOne".to_string(),
            images: vec![
                Image::new(&img(1), "ubuntu-jammy", Some("ubuntu")),
                Image::new(&img(2), "fedora-coreos-40", Some("fedora-coreos")),
                Image::new(&img(3), "no-distro", None),
                Image::new(&img(4), "windows-2022", Some("windows")),
                Image::new(&img(5), "dup-image", Some("ubuntu")),
                Image::new(&img(6), "dup-image", Some("ubuntu")),
            ],
            flavors: vec![
                Flavor::new("1", "m1.tiny", 512, 1, 1),
                Flavor::new("2", "m1.small", 2048, 1, 20),
                Flavor::new("3", "m1.medium", 4096, 2, 40),
                Flavor::new("4", "m1.large", 8192, 4, 80),
                Flavor::new("c1", "ds4G", 4096, 2, 0),
            ],
            keypairs: vec![Keypair::new("mykey"), Keypair::new("default")],
            networks: vec![
                Network::new(&net(1), "public", true),
                Network::new(&net(2), "private", false),
                Network {
                    shared: true,
                    ..Network::new(&net(3), "shared-net", false)
                },
            ],
            subnets: vec![
                Subnet::new(&sub(1), "private-subnet", &net(2), "10.0.0.0/24"),
                Subnet::new(&sub(2), "public-subnet", &net(1), "172.24.4.0/24"),
            ],
            server_groups: Vec::new(),
            volume_types: vec![
                VolumeType::new("9d3c1e0a-0b7e-4a5f-8c6d-000000000001", "__DEFAULT__"),
                VolumeType::new("9d3c1e0a-0b7e-4a5f-8c6d-000000000002", "ssd"),
            ],
            default_volume_type: Some("__DEFAULT__".to_string()),
            missing_projects: Vec::new(),
            page_size: None,
            catalog: None,
            password: None,
            accept_any_token: false,
            faults: Vec::new(),
            delays: Vec::new(),
            magnum_url: "http://127.0.0.1:9511/v1".to_string(),
            key_manager_url: None,
            roles: vec!["admin".into(), "member".into(), "reader".into()],
            load_balancers: Vec::new(),
            lb_deletes_hang: false,
            floating_ips: Vec::new(),
        }
    }
}

impl StandInData {
    /// The id of the first image with this name (panics when there is none: test data).
    pub fn image_id(&self, name: &str) -> String {
        self.images
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.id.clone())
            .unwrap_or_else(|| panic!("no stand-in image named {name}"))
    }

    /// The id of the first network with this name (panics when there is none: test data).
    pub fn network_id(&self, name: &str) -> String {
        self.networks
            .iter()
            .find(|n| n.name == name)
            .map(|n| n.id.clone())
            .unwrap_or_else(|| panic!("no stand-in network named {name}"))
    }

    /// The id of the first subnet with this name (panics when there is none: test data).
    pub fn subnet_id(&self, name: &str) -> String {
        self.subnets
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.id.clone())
            .unwrap_or_else(|| panic!("no stand-in subnet named {name}"))
    }
}
