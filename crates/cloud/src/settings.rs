//! The option values [`crate::KeystoneCloud`] needs, as plain fields named after Magnum's
//! `magnum.conf` options (`magnum/conf/`). The integrator fills them from the parsed
//! configuration; nothing here reads files.
//!
//! Magnum 23.0.0 has no TLS options of its own in `[glance_client]`, `[nova_client]` and
//! `[neutron_client]` (only `region_name` and `endpoint_type`): every outbound request goes
//! through the one keystoneauth session built from `[keystone_auth]`, so its `cafile`,
//! `certfile`, `keyfile`, `insecure` and `timeout` apply to Keystone, Glance, Nova and Neutron
//! alike. OpenKeel keeps that shape.

use std::fmt;
use std::time::Duration;

/// One `[<service>_client]` group: which catalogue endpoint to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// `region_name` (default unset: any region, the first matching endpoint wins).
    pub region_name: Option<String>,
    /// `endpoint_type` (default `publicURL`). `publicURL`/`public`, `internalURL`/`internal`,
    /// `adminURL`/`admin` are the same interface; an empty value matches any interface.
    pub endpoint_type: String,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            region_name: None,
            endpoint_type: "publicURL".to_string(),
        }
    }
}

/// `[keystone_auth]`: the service credentials (keystoneauth `password` plugin options) used for
/// admin contexts without a token, and the session options used for every request.
#[derive(Clone, Default, PartialEq)]
pub struct KeystoneAuthSettings {
    /// `auth_type`; unset means Magnum's effective default `password` (`v3password` is the
    /// same plugin). Other plugins are refused with an `AuthorizationFailure`.
    pub auth_type: Option<String>,
    /// `auth_url`; when unset `[keystone_authtoken] www_authenticate_uri` is used, as Magnum's
    /// `KeystoneClientV3.auth_url`.
    pub auth_url: Option<String>,
    pub user_id: Option<String>,
    pub username: Option<String>,
    pub user_domain_id: Option<String>,
    pub user_domain_name: Option<String>,
    /// Secret: never logged (see the `Debug` impl).
    pub password: Option<String>,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    pub project_domain_id: Option<String>,
    pub project_domain_name: Option<String>,
    pub domain_id: Option<String>,
    pub domain_name: Option<String>,
    pub system_scope: Option<String>,
    pub trust_id: Option<String>,
    pub default_domain_id: Option<String>,
    pub default_domain_name: Option<String>,
    /// `cafile`: PEM bundle of the CAs to trust instead of the built-in web roots.
    pub cafile: Option<String>,
    /// `certfile` / `keyfile`: PEM client certificate and key (both or neither).
    pub certfile: Option<String>,
    pub keyfile: Option<String>,
    /// `insecure`: do not verify server certificates.
    pub insecure: bool,
    /// `timeout` in seconds; unset means [`CloudSettings::default_timeout`] (Magnum has no
    /// bound then; OpenKeel always has one).
    pub timeout: Option<f64>,
}

impl fmt::Debug for KeystoneAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneAuthSettings")
            .field("auth_type", &self.auth_type)
            .field("auth_url", &self.auth_url)
            .field("user_id", &self.user_id)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("project_id", &self.project_id)
            .field("project_name", &self.project_name)
            .field("cafile", &self.cafile)
            .field("insecure", &self.insecure)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Everything [`crate::KeystoneCloud`] reads from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudSettings {
    /// `[keystone_auth]`.
    pub keystone_auth: KeystoneAuthSettings,
    /// `[keystone_authtoken] www_authenticate_uri`: the fallback auth URL.
    pub www_authenticate_uri: Option<String>,
    /// `[glance_client]`.
    pub glance_client: ClientSettings,
    /// `[nova_client]`.
    pub nova_client: ClientSettings,
    /// `[neutron_client]`.
    pub neutron_client: ClientSettings,
    /// `[cinder_client]` (the Cluster API driver's volume types; `block-storage` in the
    /// catalogue, or its aliases `volumev3` / `volume`).
    pub cinder_client: ClientSettings,
    /// `[octavia_client]` (the Cluster API driver's load balancers, removed before a
    /// cluster is deleted).
    pub octavia_client: ClientSettings,
    /// The identity endpoint for `get_project`. Magnum has no option for it: openstacksdk's
    /// defaults apply (interface `public`, any region), which is this field's default.
    pub identity_client: ClientSettings,
    /// The whole-request bound when `[keystone_auth] timeout` is unset (default 30 s).
    pub default_timeout: Duration,
    /// The TCP/TLS connect bound (default 10 s, never more than the request bound).
    pub connect_timeout: Duration,
}

impl Default for CloudSettings {
    fn default() -> Self {
        CloudSettings {
            keystone_auth: KeystoneAuthSettings::default(),
            www_authenticate_uri: None,
            glance_client: ClientSettings::default(),
            nova_client: ClientSettings::default(),
            neutron_client: ClientSettings::default(),
            cinder_client: ClientSettings::default(),
            octavia_client: ClientSettings::default(),
            identity_client: ClientSettings {
                region_name: None,
                endpoint_type: "public".to_string(),
            },
            default_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl CloudSettings {
    /// The auth URL Magnum would use: `[keystone_auth] auth_url`, else
    /// `[keystone_authtoken] www_authenticate_uri`.
    pub fn auth_url(&self) -> Option<&str> {
        self.keystone_auth
            .auth_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .or(self
                .www_authenticate_uri
                .as_deref()
                .filter(|u| !u.trim().is_empty()))
    }

    /// The per-request bound actually applied.
    pub fn request_timeout(&self) -> Duration {
        match self.keystone_auth.timeout {
            Some(t) if t > 0.0 => Duration::try_from_secs_f64(t).unwrap_or(self.default_timeout),
            _ => self.default_timeout,
        }
    }
}
