//! `magnum.conf` loading with oslo.config's rules and one typed struct per section.
//!
//! Operators' existing `magnum.conf` files are read unchanged:
//!
//! * the INI dialect of oslo's iniparser (`#`/`;` whole-line comments,
//!   continuation lines, matching quotes removed, case-insensitive section names except
//!   `DEFAULT`, unknown sections and keys ignored);
//! * files in order, later files winning: [`ConfigSources`] (`--config-file`, `--config-dir`
//!   with its `*.conf` files sorted) or oslo's default search
//!   ([`ConfigSources::discover_default`]);
//! * multi-valued options collect every occurrence across all files, list options split on
//!   commas, booleans take oslo's spellings, values are checked against choices and bounds;
//! * `$option`, `${option}` and `${group.option}` interpolation, `$$` for a literal `$`;
//! * deprecated option names and groups are still read, as oslo does.
//!
//! Every option is declared once, in the tables under `sections/`: the same declaration gives
//! the struct field, the default, the parsing and validation, and the [`sample`] file
//! (`etc/openkeel.conf.sample`, written by `openkeel-config-generator`).
//!
//! Differences from oslo.config, all deliberate:
//! * every known option is validated when loading, not when first read, and all errors are
//!   reported together;
//! * an empty value for an integer or float option that has a default gives the default
//!   (oslo gives `None`); options without a default are `Option` fields and get `None`;
//! * `${DEFAULT.option}` is accepted (oslo has no group object for `DEFAULT`);
//! * a UTF-8 byte-order mark at the start of a file is ignored.

mod error;
mod ini;
pub(crate) mod resolve;
mod sample;
mod sections;
mod sources;
pub mod spec;
pub(crate) mod value;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use error::{ConfigError, Location};
pub use sample::sample;
pub use sections::*;
pub use sources::{ConfigSource, ConfigSources};
pub use spec::{DefaultValue, DeprecatedName, OptKind, OptSpec, SectionSpec};

use resolve::Resolver;

/// The file name used for errors in text given to [`Config::from_ini_str`].
const STRING_SOURCE: &str = "<string>";

macro_rules! config_root {
    ($( $field:ident : $ty:ident = $group:literal ),* $(,)?) => {
        /// The whole configuration: one field per section, named after the section
        /// (`default` for `[DEFAULT]`).
        #[derive(Debug, Clone, PartialEq)]
        pub struct Config {
            $(
                #[doc = concat!("The `[", $group, "]` section.")]
                pub $field: $ty,
            )*
        }

        /// Every section's table, in declaration order.
        pub(crate) static SECTIONS: &[&SectionSpec] = &[ $( &$ty::SPEC ),* ];

        impl Config {
            fn resolve(resolver: &mut Resolver<'_>) -> Config {
                Config {
                    $( $field: $ty::resolve(resolver), )*
                }
            }
        }

        #[cfg(test)]
        pub(crate) const ROOT_GROUPS: &[(&str, &str)] = &[ $( ($group, $ty::GROUP) ),* ];
    };
}

config_root! {
    default: DefaultSection = "DEFAULT",
    api: ApiSection = "api",
    conductor: ConductorSection = "conductor",
    database: DatabaseSection = "database",
    certificates: CertificatesSection = "certificates",
    x509: X509Section = "x509",
    cluster: ClusterSection = "cluster",
    cluster_template: ClusterTemplateSection = "cluster_template",
    drivers: DriversSection = "drivers",
    kubernetes: KubernetesSection = "kubernetes",
    quotas: QuotasSection = "quotas",
    keystone_auth: KeystoneAuthSection = "keystone_auth",
    glance_client: GlanceClientSection = "glance_client",
    nova_client: NovaClientSection = "nova_client",
    neutron_client: NeutronClientSection = "neutron_client",
    barbican_client: BarbicanClientSection = "barbican_client",
    cinder: CinderSection = "cinder",
    cinder_client: CinderClientSection = "cinder_client",
    octavia_client: OctaviaClientSection = "octavia_client",
    magnum_client: MagnumClientSection = "magnum_client",
    docker: DockerSection = "docker",
    docker_registry: DockerRegistrySection = "docker_registry",
    profiler: ProfilerSection = "profiler",
    keystone_authtoken: KeystoneAuthtokenSection = "keystone_authtoken",
    oslo_messaging_rabbit: OsloMessagingRabbitSection = "oslo_messaging_rabbit",
    oslo_messaging_notifications: OsloMessagingNotificationsSection = "oslo_messaging_notifications",
    oslo_messaging_kafka: OsloMessagingKafkaSection = "oslo_messaging_kafka",
    oslo_policy: OsloPolicySection = "oslo_policy",
    oslo_concurrency: OsloConcurrencySection = "oslo_concurrency",
    oslo_reports: OsloReportsSection = "oslo_reports",
    oslo_versionedobjects: OsloVersionedobjectsSection = "oslo_versionedobjects",
    cors: CorsSection = "cors",
    oslo_middleware: OsloMiddlewareSection = "oslo_middleware",
    capi_client: CapiClientSection = "capi_client",
    auto_scaling: AutoScalingSection = "auto_scaling",
    manila_client: ManilaClientSection = "manila_client",
    openkeel: OpenkeelSection = "openkeel",
}

impl Config {
    /// Reads `sources` (files, then directories; see [`ConfigSources`]) with oslo.config's
    /// rules.
    pub fn load(sources: &ConfigSources) -> Result<Config, ConfigError> {
        Self::load_sequence(&sources.sequence())
    }

    /// Reads files and directories in exactly the given order (later wins), as oslo reads
    /// its `--config-file` and `--config-dir` arguments; see [`ConfigSource::command_line`].
    pub fn load_sequence(sources: &[ConfigSource]) -> Result<Config, ConfigError> {
        let layers = sources::read_all(sources)?;
        Self::from_layers(&layers)
    }

    /// Reads one configuration given as text (tests, the embedded all-in-one default).
    /// Parse errors name the file `<string>`.
    pub fn from_ini_str(text: &str) -> Result<Config, ConfigError> {
        Self::from_ini_strs(&[text])
    }

    /// Reads several configurations given as text, as if they were files read in order.
    pub fn from_ini_strs(texts: &[&str]) -> Result<Config, ConfigError> {
        let layers = texts
            .iter()
            .map(|text| ini::parse(Path::new(STRING_SOURCE), text))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_layers(&layers)
    }

    fn from_layers(layers: &[ini::ParsedFile]) -> Result<Config, ConfigError> {
        let mut resolver = Resolver::new(layers);
        let config = Config::resolve(&mut resolver);
        match ConfigError::combine(resolver.into_errors()) {
            Some(err) => Err(err),
            None => Ok(config),
        }
    }

    /// Every section's option table, in declaration order (`[DEFAULT]` first).
    pub fn sections() -> &'static [&'static SectionSpec] {
        SECTIONS
    }
}

impl Default for Config {
    /// Every option at its default (interpolated: `state_path` is `$pybasedir`'s value, and
    /// so on).
    fn default() -> Self {
        // Errors here could only come from the tables themselves; the unit tests check that
        // the defaults load without any.
        Config::resolve(&mut Resolver::new(&[]))
    }
}
