//! Driver selection: Magnum 23.0.0's `Driver.get_drivers` / `get_driver` /
//! `get_default_driver` (`magnum/drivers/common/driver.py`) over the drivers registered here
//! (Magnum's `magnum.drivers` entry points, in registration order).

use std::collections::BTreeMap;
use std::sync::Arc;

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::ClusterTemplate;

use crate::simulator::SimulatorDriver;
use crate::{Driver, ProvidedType};

/// The `[drivers]` options the selection reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverSettings {
    /// `[drivers] disabled_drivers`: entry points hidden from tuple lookup and defaults.
    pub disabled_drivers: Vec<String>,
    /// `[drivers] enabled_beta_drivers`.
    pub enabled_beta_drivers: Vec<String>,
    /// `[drivers] default_driver`.
    pub default_driver: Option<String>,
}

/// The registered drivers ("entry points") and the selection rules.
#[derive(Clone, Default)]
pub struct DriverRegistry {
    entries: Vec<(String, Arc<dyn Driver>)>,
    settings: DriverSettings,
}

impl std::fmt::Debug for DriverRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverRegistry")
            .field(
                "entries",
                &self.entries.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("settings", &self.settings)
            .finish()
    }
}

impl DriverRegistry {
    /// An empty registry (no driver loaded, like Magnum without out-of-tree drivers).
    pub fn new(settings: DriverSettings) -> Self {
        DriverRegistry {
            entries: Vec::new(),
            settings,
        }
    }

    /// The drivers built into OpenKeel. The simulator is registered (as `simulator`) only
    /// when `enable_simulator_driver` is true — the caller passes
    /// `[openkeel] enable_simulator_driver`.
    pub fn builtin(settings: DriverSettings, enable_simulator_driver: bool) -> Self {
        let mut r = DriverRegistry::new(settings);
        if enable_simulator_driver {
            r.register(Arc::new(SimulatorDriver::new()));
        }
        r
    }

    /// Register a driver under its own [`Driver::name`].
    pub fn register(&mut self, driver: Arc<dyn Driver>) -> &mut Self {
        let name = driver.name().to_string();
        self.register_as(name, driver)
    }

    /// Register a driver under an entry-point name of the caller's choice (e.g. the simulator
    /// standing in for `k8s_cluster_api_ubuntu`). A name registered twice keeps the later
    /// driver, in the earlier position.
    pub fn register_as(&mut self, name: impl Into<String>, driver: Arc<dyn Driver>) -> &mut Self {
        let name = name.into();
        if let Some(e) = self.entries.iter_mut().find(|(n, _)| *n == name) {
            e.1 = driver;
        } else {
            self.entries.push((name, driver));
        }
        self
    }

    pub fn settings(&self) -> &DriverSettings {
        &self.settings
    }

    /// All registered entry-point names, in registration order (disabled ones included).
    pub fn registered_names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// `load_entry_points`: the enabled entry points, in registration order.
    pub fn enabled(&self) -> impl Iterator<Item = (&str, &Arc<dyn Driver>)> {
        self.entries
            .iter()
            .filter(|(n, _)| !self.settings.disabled_drivers.contains(n))
            .map(|(n, d)| (n.as_str(), d))
    }

    /// `get_drivers`: tuple → (entry-point name, driver) over the enabled entry points; a later
    /// entry point providing the same tuple replaces the earlier one.
    pub fn definitions(&self) -> BTreeMap<ProvidedType, (&str, &Arc<dyn Driver>)> {
        let mut map = BTreeMap::new();
        for (name, driver) in self.enabled() {
            for t in driver.provides() {
                map.insert(t, (name, driver));
            }
        }
        map
    }

    /// The `supported_cluster_types` text of `ClusterTypeNotSupported`:
    /// `(vm, ubuntu, kubernetes), ...` sorted, or `none (no cluster drivers are loaded)`.
    pub fn supported_cluster_types(&self) -> String {
        let defs = self.definitions();
        if defs.is_empty() {
            return "none (no cluster drivers are loaded)".to_string();
        }
        defs.keys()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `get_driver(server_type, os, coe, driver_name)`.
    ///
    /// 1. A non-empty `driver_name` (the template's `driver` column) selects that entry point
    ///    by name — disabled or beta status is not checked, as stevedore's `DriverManager`
    ///    does not — or fails with `ClusterDriverNotSupported`.
    /// 2. Otherwise the tuple is looked up among the enabled drivers
    ///    (`ClusterTypeNotSupported` listing the loaded types when missing);
    /// 3. a beta driver not in `enabled_beta_drivers` → `ClusterTypeBetaNotEnabled`.
    pub fn get_driver(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver_name: Option<&str>,
    ) -> Result<Arc<dyn Driver>, MagnumError> {
        if let Some(name) = driver_name.filter(|n| !n.is_empty()) {
            return self
                .entries
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
                .ok_or_else(|| {
                    MagnumError::new(
                        ErrorKind::ClusterDriverNotSupported,
                        &[("driver_name", &name)],
                    )
                });
        }
        let py = |v: Option<&str>| v.unwrap_or("None").to_string();
        let (st, o, c) = (py(server_type), py(os), py(coe));
        let defs = self.definitions();
        let found = match (server_type, os, coe) {
            (Some(s), Some(o), Some(c)) => defs.get(&ProvidedType::new(s, o, c)),
            _ => None,
        };
        let Some((name, driver)) = found else {
            let supported = self.supported_cluster_types();
            return Err(MagnumError::new(
                ErrorKind::ClusterTypeNotSupported,
                &[
                    ("server_type", &st),
                    ("os", &o),
                    ("coe", &c),
                    ("supported_cluster_types", &supported),
                ],
            ));
        };
        if driver.beta() && !self.settings.enabled_beta_drivers.iter().any(|n| n == name) {
            tracing::info!(
                driver = name,
                "Driver {name} is beta and needs to be explicitly enabled with [drivers]/enabled_beta_drivers."
            );
            return Err(MagnumError::new(
                ErrorKind::ClusterTypeBetaNotEnabled,
                &[
                    ("server_type", &st),
                    ("os", &o),
                    ("coe", &c),
                    ("driver_name", name),
                ],
            ));
        }
        Ok((*driver).clone())
    }

    /// `get_driver(ct.server_type, ct.cluster_distro, ct.coe, ct.driver)`: the driver of a
    /// cluster whose template is `template` (`get_driver_for_cluster`).
    pub fn get_driver_for_template(
        &self,
        template: &ClusterTemplate,
    ) -> Result<Arc<dyn Driver>, MagnumError> {
        self.get_driver(
            template.server_type.as_deref(),
            template.cluster_distro.as_deref(),
            template.coe.as_deref(),
            template.driver.as_deref(),
        )
    }

    /// `get_default_driver()` (used by the API when a template names no driver):
    /// `[drivers] default_driver` when set and enabled (else `ClusterDriverNotSupported`),
    /// otherwise the alphabetically first enabled entry point, or `None`.
    pub fn get_default_driver(&self) -> Result<Option<String>, MagnumError> {
        if let Some(configured) = self
            .settings
            .default_driver
            .as_deref()
            .filter(|d| !d.is_empty())
        {
            if self.enabled().any(|(n, _)| n == configured) {
                return Ok(Some(configured.to_string()));
            }
            let mut available: Vec<&str> = self.enabled().map(|(n, _)| n).collect();
            available.sort_unstable();
            tracing::error!(
                "Configured [drivers] default_driver {configured:?} is not a registered driver. Available drivers: {available:?}"
            );
            return Err(MagnumError::new(
                ErrorKind::ClusterDriverNotSupported,
                &[("driver_name", &configured)],
            ));
        }
        let mut names: Vec<&str> = self.enabled().map(|(n, _)| n).collect();
        names.sort_unstable();
        match names.first() {
            Some(n) => Ok(Some((*n).to_string())),
            None => {
                tracing::warn!(
                    "No Magnum drivers are available and [drivers] default_driver is not configured."
                );
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DriverContext, DriverResult, ScaleManager, Writes};
    use async_trait::async_trait;
    use openkeel_core::objects::{Cluster, NodeGroup};

    struct Fake {
        name: &'static str,
        provides: Vec<ProvidedType>,
        beta: bool,
    }

    #[async_trait]
    impl Driver for Fake {
        fn name(&self) -> &str {
            self.name
        }
        fn provides(&self) -> Vec<ProvidedType> {
            self.provides.clone()
        }
        fn beta(&self) -> bool {
            self.beta
        }
        async fn create_cluster(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: i32,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn update_cluster(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: Option<&dyn ScaleManager>,
            _: bool,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn upgrade_cluster(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: &ClusterTemplate,
            _: i32,
            _: &mut NodeGroup,
            _: bool,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn delete_cluster(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn resize_cluster(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: Option<&dyn ScaleManager>,
            _: i32,
            _: &[String],
            _: &mut NodeGroup,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn create_nodegroup(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: &mut NodeGroup,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn update_nodegroup(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: &mut NodeGroup,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
        async fn delete_nodegroup(
            &self,
            _: &DriverContext<'_>,
            _: &mut Cluster,
            _: &mut NodeGroup,
        ) -> DriverResult<Writes> {
            Ok(Writes::none())
        }
    }

    fn fake(name: &'static str, os: &[&str], beta: bool) -> Arc<dyn Driver> {
        Arc::new(Fake {
            name,
            provides: os
                .iter()
                .map(|o| ProvidedType::new("vm", o, "kubernetes"))
                .collect(),
            beta,
        })
    }

    fn registry(settings: DriverSettings) -> DriverRegistry {
        let mut r = DriverRegistry::new(settings);
        r.register(fake("zeta", &["ubuntu", "debian"], false));
        r.register(fake("alpha", &["flatcar"], false));
        r.register(fake("beta_one", &["rockylinux"], true));
        r
    }

    #[test]
    fn tuple_lookup_and_not_supported_message() {
        let r = registry(DriverSettings::default());
        assert_eq!(
            r.get_driver(Some("vm"), Some("ubuntu"), Some("kubernetes"), None)
                .map(|d| d.name().to_string())
                .ok()
                .as_deref(),
            Some("zeta")
        );
        let e = r
            .get_driver(Some("bm"), Some("ubuntu"), Some("kubernetes"), None)
            .err()
            .map(|e| (e.kind(), e.message().to_string()));
        assert_eq!(
            e,
            Some((
                ErrorKind::ClusterTypeNotSupported,
                "Cluster type (bm, ubuntu, kubernetes) is not supported by any loaded cluster driver. \
                 Loaded drivers support: (vm, debian, kubernetes), (vm, flatcar, kubernetes), \
                 (vm, rockylinux, kubernetes), (vm, ubuntu, kubernetes)."
                    .to_string()
            ))
        );
        let e = r
            .get_driver(None, Some("ubuntu"), Some("kubernetes"), None)
            .err()
            .map(|e| e.message().to_string())
            .unwrap_or_default();
        assert!(e.starts_with("Cluster type (None, ubuntu, kubernetes) is not supported"));
    }

    #[test]
    fn no_drivers_loaded_message() {
        let r = DriverRegistry::new(DriverSettings::default());
        let e = r
            .get_driver(Some("vm"), Some("ubuntu"), Some("kubernetes"), None)
            .err()
            .map(|e| e.message().to_string())
            .unwrap_or_default();
        assert!(e.ends_with("Loaded drivers support: none (no cluster drivers are loaded)."));
        assert_eq!(r.get_default_driver().ok(), Some(None));
    }

    #[test]
    fn driver_name_wins_and_ignores_disabled() {
        let r = registry(DriverSettings {
            disabled_drivers: vec!["alpha".into()],
            ..DriverSettings::default()
        });
        // By name: found although disabled, and regardless of the tuple.
        let d = r.get_driver(Some("bm"), Some("x"), Some("y"), Some("alpha"));
        assert_eq!(
            d.map(|d| d.name().to_string()).ok().as_deref(),
            Some("alpha")
        );
        // By tuple: hidden.
        let e = r.get_driver(Some("vm"), Some("flatcar"), Some("kubernetes"), None);
        assert_eq!(
            e.err().map(|e| e.kind()),
            Some(ErrorKind::ClusterTypeNotSupported)
        );
        let e = r.get_driver(Some("vm"), Some("ubuntu"), Some("kubernetes"), Some("nope"));
        assert_eq!(
            e.err().map(|e| e.message().to_string()).as_deref(),
            Some("Cluster driver (nope) not supported.")
        );
        // An empty driver field falls back to the tuple.
        let d = r.get_driver(Some("vm"), Some("ubuntu"), Some("kubernetes"), Some(""));
        assert_eq!(
            d.map(|d| d.name().to_string()).ok().as_deref(),
            Some("zeta")
        );
    }

    #[test]
    fn beta_drivers_need_enabling() {
        let r = registry(DriverSettings::default());
        let e = r
            .get_driver(Some("vm"), Some("rockylinux"), Some("kubernetes"), None)
            .err();
        assert_eq!(
            e.map(|e| (e.kind(), e.message().to_string())),
            Some((
                ErrorKind::ClusterTypeBetaNotEnabled,
                "Cluster type (vm, rockylinux, kubernetes) is provided by the 'beta_one' driver, \
                 which is a beta driver and is not enabled. Add 'beta_one' to the \
                 [drivers]/enabled_beta_drivers configuration option to use it."
                    .to_string()
            ))
        );
        let r = registry(DriverSettings {
            enabled_beta_drivers: vec!["beta_one".into()],
            ..DriverSettings::default()
        });
        assert!(r
            .get_driver(Some("vm"), Some("rockylinux"), Some("kubernetes"), None)
            .is_ok());
    }

    #[test]
    fn later_entry_point_overrides_tuple() {
        let mut r = registry(DriverSettings::default());
        r.register(fake("omega", &["ubuntu"], false));
        let d = r.get_driver(Some("vm"), Some("ubuntu"), Some("kubernetes"), None);
        assert_eq!(
            d.map(|d| d.name().to_string()).ok().as_deref(),
            Some("omega")
        );
        let d = r.get_driver(Some("vm"), Some("debian"), Some("kubernetes"), None);
        assert_eq!(
            d.map(|d| d.name().to_string()).ok().as_deref(),
            Some("zeta")
        );
    }

    #[test]
    fn default_driver() {
        let r = registry(DriverSettings::default());
        assert_eq!(r.get_default_driver().ok(), Some(Some("alpha".to_string())));
        let r = registry(DriverSettings {
            disabled_drivers: vec!["alpha".into()],
            ..DriverSettings::default()
        });
        assert_eq!(
            r.get_default_driver().ok(),
            Some(Some("beta_one".to_string()))
        );
        let r = registry(DriverSettings {
            default_driver: Some("zeta".into()),
            ..DriverSettings::default()
        });
        assert_eq!(r.get_default_driver().ok(), Some(Some("zeta".to_string())));
        let r = registry(DriverSettings {
            default_driver: Some("gone".into()),
            ..DriverSettings::default()
        });
        assert_eq!(
            r.get_default_driver().err().map(|e| e.kind()),
            Some(ErrorKind::ClusterDriverNotSupported)
        );
    }

    #[test]
    fn simulator_is_off_unless_enabled() {
        let off = DriverRegistry::builtin(DriverSettings::default(), false);
        assert!(off.registered_names().is_empty());
        let on = DriverRegistry::builtin(DriverSettings::default(), true);
        assert_eq!(on.registered_names(), vec!["simulator"]);
        for os in ["ubuntu", "ubuntu-focal", "debian", "flatcar", "rockylinux"] {
            assert!(on
                .get_driver(Some("vm"), Some(os), Some("kubernetes"), None)
                .is_ok());
        }
    }
}
