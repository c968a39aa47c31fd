//! The all-in-one server with the native Cluster API driver on the test rig's management
//! cluster (the real kube-apiserver with the real Cluster API manager), shared by the tests
//! that drive it: `capi_e2e.rs` (python-openstackclient) and `gophercloud.rs` (gophercloud's
//! acceptance tests).
//!
//! The server: `auth_strategy = keystone`, `enable_simulator_driver = false`, `[capi_client]
//! kubeconfig` and `helm_binary` from the rig. The driver's dependencies: Keystone application
//! credentials from the real Keystone (`[keystone_auth]` = the `magnum` service user,
//! `[cinder_client] region_name` = the test Keystone's region), the certificates from the
//! x509keypair cert manager, and the **simulated cloud** for Glance / Nova / Neutron / Cinder
//! (the real ones cannot run here, and registering stand-in image / compute / network services
//! in the shared test Keystone would change every other test's catalogue). Templates resolve
//! to the driver as Magnum resolves them: neither client can name a driver and the simulated
//! Glance sets no `magnum_driver` property, so `[drivers] default_driver =
//! k8s_cluster_api_ubuntu`; and a template without `--network-driver` gets
//! `[cluster_template] kubernetes_default_network_driver = calico`, as a Cluster API
//! deployment configures Magnum (the Magnum default, flannel, is a CNI the driver refuses).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;

/// The management cluster's namespace of the driver, shared with the rig's other tests: a test
/// looks only at objects named after, or labelled with, its own clusters.
pub const NS: &str = "magnum-system";

/// The API endpoint host the stand-in gives every cluster (TEST-NET-1: never reached).
pub const API_HOST: &str = "192.0.2.77";

/// The test Keystone's region (`accounts.json`), a region the application credential may name.
pub fn keystone_region() -> String {
    let path = std::env::var("OPENKEEL_TEST_KEYSTONE_ACCOUNTS").expect("accounts");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["region"].as_str().unwrap_or("RegionOne").to_string()
}

/// The configuration of a server with the Cluster API driver (the sections described above),
/// to be read after any other file: its `[openkeel]` values override earlier ones.
pub fn conf_text(ks: &openkeel_tests::Keystone, kubeconfig: &Path, helm: &Path) -> String {
    format!(
        "[openkeel]\nauth_strategy = keystone\nstatus_sync_interval = 1\nenable_simulator_driver = false\n\n\
         [drivers]\ndefault_driver = k8s_cluster_api_ubuntu\n\n\
         [cluster_template]\nkubernetes_default_network_driver = calico\n\n\
         [capi_client]\nkubeconfig = {kc}\nhelm_binary = {helm}\n\n\
         [cinder_client]\nregion_name = {region}\n\n\
         [keystone_authtoken]\nwww_authenticate_uri = {url}\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n\n\
         [keystone_auth]\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n",
        kc = kubeconfig.display(),
        helm = helm.display(),
        region = keystone_region(),
        url = ks.url,
        pw = ks.password("magnum"),
    )
}

/// Start the all-in-one server with the Cluster API driver, its data and configuration in
/// `dir`.
pub async fn start(
    dir: &Path,
    ks: &openkeel_tests::Keystone,
    kubeconfig: &Path,
    helm: &Path,
) -> openkeel::allinone::Running {
    let conf = dir.join("capi.conf");
    std::fs::write(&conf, conf_text(ks, kubeconfig, helm)).unwrap();
    let config = openkeel::allinone::load_config(dir, &[conf], &[]).unwrap();
    openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: Vec::new(),
    })
    .await
    .unwrap()
}

/// The stack ids of the server's clusters (the names of their CAPI `Cluster`s), for
/// [`openkeel_tests::capi_standin::CapiStandIn::play_every`].
pub async fn stack_ids(db: &openkeel_db::Database) -> Vec<String> {
    openkeel_db::cluster::list(
        db,
        &openkeel_db::Scope::admin_all_tenants(),
        &Default::default(),
        &Default::default(),
    )
    .await
    .map(|cs| {
        cs.into_iter()
            .filter_map(|c| c.stack_id.filter(|s| !s.is_empty()))
            .collect()
    })
    .unwrap_or_default()
}
