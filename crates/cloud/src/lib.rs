//! OpenKeel's OpenStack look-ups: the [`Cloud`](openkeel_core::cloud::Cloud) trait twice, and
//! Magnum's attribute validators over it.
//!
//! * [`KeystoneCloud`] talks to the real services: it finds Glance, Nova, Neutron and Keystone
//!   in the Keystone v3 catalogue (the request's validated token body, else by validating the
//!   token, else with the `[keystone_auth]` service credentials for admin contexts) with each
//!   `[<service>_client] region_name` / `endpoint_type`, and makes the requests openstacksdk
//!   makes for Magnum, with the caller's token and a bound on every request. See
//!   [`keystone`] for the requests and their errors.
//! * [`SimulatedCloud`] is the embedded default's cloud: no OpenStack, a small built-in
//!   catalogue that lets valid requests through and keeps Magnum's error paths reachable (see
//!   [`simulated`] and `docs/simulator.md`).
//! * [`driver`] gives the Cluster API driver what it needs from the cloud
//!   (`openkeel_drivers::deps::DriverCloud` for both clouds, Keystone application
//!   credentials).
//! * [`validate`] holds the checks Magnum's API runs (`validate_image`, `validate_flavor`,
//!   `validate_flavor_root_volume_size`, `validate_keypair`, `validate_external_network`,
//!   `validate_fixed_network`, `validate_fixed_subnet`, `validate_project`, the driver-image
//!   part of `enforce_driver_supported`, and `validate_os_resources`), as free functions over
//!   `&dyn Cloud`, with Magnum's messages.
//!
//! * [`session`] (where a request's token and catalogue come from) and [`http`] (the bounded
//!   outbound client with keystoneauth's error texts) are shared by all of these and by
//!   `openkeel-auth`'s token validation.
//!
//! Settings are plain fields ([`CloudSettings`]) named after `magnum.conf` options; the
//! integrator fills them from the configuration. Tokens and passwords are never logged.

pub mod barbican;
pub mod catalog;
pub mod driver;
pub mod http;
pub mod keystone;
pub mod session;
pub mod settings;
pub mod simulated;
pub mod validate;

pub use barbican::BarbicanClient;
pub use driver::{ApplicationCredentialSettings, KeystoneApplicationCredentials};
pub use keystone::KeystoneCloud;
pub use settings::{ClientSettings, CloudSettings, KeystoneAuthSettings};
pub use simulated::SimulatedCloud;
