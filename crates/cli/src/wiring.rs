//! How every binary builds its parts from the loaded configuration: the database, the cert
//! manager and the driver registry with their dependencies, the conductor and its loops, the
//! cloud, policy and authentication settings, the API's state and listeners, the signal
//! handling. `openkeel-api`, `openkeel-conductor`, the Magnum-named commands and the
//! all-in-one server ([`crate::allinone`]) all call these, so the processes differ only in
//! which parts they start.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use openkeel_core::config::{Config, ConfigError};
use openkeel_db::Database;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("cannot use data directory {path}: {source}", path = .0.display(), source = .1)]
    DataDir(PathBuf, std::io::Error),
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("database: {0}")]
    Database(#[from] openkeel_db::DbError),
    #[error("policy: {0}")]
    Policy(#[from] openkeel_auth::PolicyError),
    #[error("{0}")]
    Unsupported(String),
}

/// Open the database named by `[database] connection`. The embedded SQLite database is
/// created and migrated on the spot; any other database must already be at Magnum's head
/// (`openkeel-db-manage upgrade`), as Magnum's services expect.
pub async fn open_database(config: &Config) -> Result<Database, StartError> {
    let url = config.database.connection.as_str();
    let db = connect_with_retries(config).await?;
    if url.starts_with("sqlite") {
        openkeel_db::manage::upgrade(&db).await?;
    } else {
        openkeel_db::manage::check_current(&db).await?;
    }
    Ok(db)
}

/// The first connection, retried as oslo.db's `_test_connection` retries it: up to
/// `[database] max_retries` attempts (-1: no limit), `retry_interval` seconds apart, while
/// the database cannot be reached; any other error (credentials, URL) fails at once.
async fn connect_with_retries(config: &Config) -> Result<Database, StartError> {
    let url = config.database.connection.as_str();
    let options = connect_options(config);
    let max = config.database.max_retries;
    let pause = Duration::from_secs(config.database.retry_interval.max(0) as u64);
    let mut attempt: i64 = 0;
    loop {
        attempt += 1;
        match Database::connect_opts(url, &options).await {
            Ok(db) => return Ok(db),
            Err(e) if e.is_connection_error() && (max < 0 || attempt < max) => {
                tracing::warn!(
                    database = %openkeel_db::redact_url(url),
                    error = %e,
                    attempts_left = if max < 0 { -1 } else { max - attempt },
                    "SQL connection failed; retrying in {}s",
                    pause.as_secs()
                );
                tokio::time::sleep(pause).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The pool as oslo.db builds it from `[database]`: SQLAlchemy's `QueuePool` holds
/// `max_pool_size` connections (0: no limit) and opens up to `max_overflow` more under load
/// (negative: no limit), waiting `pool_timeout` seconds (default 30) for one; connections
/// older than `connection_recycle_time` are replaced; `mysql_sql_mode` is set on each MySQL
/// session (empty: the server's mode). "No limit" is taken as 1,000 connections. SQLite
/// files get `max_pool_size` connections only (at most 16): every SQLite connection has its
/// own page cache, and writers are serialised by the file lock anyway.
pub fn connect_options(config: &Config) -> openkeel_db::ConnectOptions {
    const NO_LIMIT: i64 = 1000;
    let d = &config.database;
    let size = if d.max_pool_size <= 0 {
        NO_LIMIT
    } else {
        d.max_pool_size.min(NO_LIMIT)
    };
    let overflow = if d.max_overflow < 0 {
        NO_LIMIT
    } else {
        d.max_overflow.min(NO_LIMIT)
    };
    let max = if d.connection.starts_with("sqlite") {
        size.min(16)
    } else {
        (size + overflow).min(NO_LIMIT)
    };
    openkeel_db::ConnectOptions {
        max_connections: max.max(1) as u32,
        mysql_sql_mode: Some(d.mysql_sql_mode.clone()),
        recycle_time: (d.connection_recycle_time > 0)
            .then(|| Duration::from_secs(d.connection_recycle_time as u64)),
        acquire_timeout: Duration::from_secs(d.pool_timeout.unwrap_or(30).clamp(1, 3600) as u64),
    }
}

/// The `[drivers]` options the driver selection reads.
pub fn driver_settings(config: &Config) -> openkeel_drivers::DriverSettings {
    openkeel_drivers::DriverSettings {
        disabled_drivers: config.drivers.disabled_drivers.clone(),
        enabled_beta_drivers: config.drivers.enabled_beta_drivers.clone(),
        default_driver: config.drivers.default_driver.clone(),
    }
}

/// The cert manager of `[certificates] cert_manager_type`: `x509keypair` (rows of the Magnum
/// database: `None` without one), `local` (files under `storage_path`) or `barbican`.
pub fn cert_manager(
    config: &Config,
    db: Option<&Database>,
) -> Result<Option<openkeel_certs::manager::X509KeyPairCertManager>, StartError> {
    use openkeel_certs::manager::X509KeyPairCertManager;
    match config.certificates.cert_manager_type.as_str() {
        "x509keypair" => Ok(db.map(|db| X509KeyPairCertManager::new(db.clone(), config.x509.clone()))),
        "local" => Ok(Some(X509KeyPairCertManager::local(
            &config.certificates.storage_path,
            config.x509.clone(),
        ))),
        "barbican" => {
            let client = openkeel_cloud::BarbicanClient::new(
                cloud_settings(config),
                openkeel_cloud::ClientSettings {
                    region_name: config.barbican_client.region_name.clone(),
                    endpoint_type: config.barbican_client.endpoint_type.clone(),
                },
            )
            .map_err(|e| StartError::Unsupported(format!("Barbican client: {e}")))?;
            Ok(Some(X509KeyPairCertManager::barbican(client, config.x509.clone())))
        }
        other => Err(StartError::Unsupported(format!(
            "[certificates] cert_manager_type = {other} is not available in this build; use x509keypair, local or barbican"
        ))),
    }
}

/// What a driver is given when the registry is built (`openkeel_drivers::DriverDeps`):
///
/// * `certificates`: the cert manager of `[certificates]` (for `x509keypair` only when a
///   database is given: `openkeel-driver-manage` has none);
/// * `cloud`: the simulated cloud with `[openkeel] simulated_cloud`, else the services of the
///   Keystone catalogue (`[keystone_auth]`, `[glance_client]`, `[nova_client]`,
///   `[neutron_client]`, `[cinder_client]`);
/// * `application_credentials`: Keystone (`[capi_client] endpoint_type`, `[cinder_client]
///   region_name`) whenever an auth URL is configured (`[keystone_auth] auth_url` or
///   `[keystone_authtoken] www_authenticate_uri`), the simulated cloud or not.
pub fn driver_deps(
    config: &Config,
    db: Option<&Database>,
) -> Result<openkeel_drivers::DriverDeps, StartError> {
    let certificates = cert_manager(config, db)?
        .map(|m| Arc::new(m) as Arc<dyn openkeel_drivers::deps::ClusterCaSource>);
    let settings = cloud_settings(config);
    let keystone = if settings.auth_url().is_some() || !config.openkeel.simulated_cloud {
        Some(Arc::new(
            openkeel_cloud::KeystoneCloud::new(settings)
                .map_err(|e| StartError::Unsupported(format!("OpenStack clients: {e}")))?,
        ))
    } else {
        None
    };
    let cloud: Option<Arc<dyn openkeel_drivers::deps::DriverCloud>> =
        match (config.openkeel.simulated_cloud, &keystone) {
            (true, _) => Some(Arc::new(openkeel_cloud::SimulatedCloud::new())),
            (false, Some(k)) => Some(k.clone()),
            (false, None) => None,
        };
    let application_credentials = keystone
        .filter(|k| k.settings().auth_url().is_some())
        .map(|k| {
            Arc::new(openkeel_cloud::KeystoneApplicationCredentials::new(
                k,
                openkeel_cloud::ApplicationCredentialSettings {
                    endpoint_type: config.capi_client.endpoint_type.clone(),
                    region_name: config.cinder_client.region_name.clone(),
                },
            )) as Arc<dyn openkeel_drivers::deps::ApplicationCredentials>
        });
    Ok(openkeel_drivers::DriverDeps {
        certificates,
        application_credentials,
        cloud,
    })
}

/// The driver registry built from the configuration, each driver given its
/// [`driver_deps`]: what the conductor runs, what the API validates templates against and
/// what `openkeel-driver-manage` lists (all three call this). `[drivers]` selects among the
/// entry points; the simulator is registered last, when `[openkeel] enable_simulator_driver`
/// is set, so that it serves the tuples it shares with real drivers (a later entry point
/// providing a tuple replaces an earlier one, as in Magnum's `get_drivers`).
pub fn driver_registry(
    config: &Config,
    db: Option<&Database>,
) -> Result<Arc<openkeel_drivers::DriverRegistry>, StartError> {
    let deps = driver_deps(config, db)?;
    tracing::debug!(?deps, "driver dependencies");
    let mut settings = driver_settings(config);
    // With the simulator (development, the embedded default) and no [drivers]
    // default_driver, a template that names no driver gets the simulator, not the
    // alphabetically first entry point (k8s_cluster_api_debian), as Magnum would pick.
    let sim = openkeel_drivers::simulator::NAME;
    if config.openkeel.enable_simulator_driver
        && settings.default_driver.as_deref().is_none_or(str::is_empty)
        && !settings.disabled_drivers.iter().any(|d| d == sim)
    {
        settings.default_driver = Some(sim.to_string());
    }
    let mut registry = openkeel_drivers::DriverRegistry::new(settings);

    // The Cluster API driver's five `k8s_cluster_api_*` entry points (magnum-cluster-api's),
    // before the simulator.
    let capi = openkeel_driver_capi::entry_points(config, deps.clone())
        .map_err(|e| StartError::Unsupported(format!("the Cluster API driver: {}", e.message())))?;
    for (name, driver) in capi {
        registry.register_as(name, driver);
    }

    if config.openkeel.enable_simulator_driver {
        registry.register(Arc::new(openkeel_drivers::simulator::SimulatorDriver::new()));
    }
    Ok(Arc::new(registry))
}

/// The conductor's tunables from `[openkeel]` (and `[cluster] pre_delete_lb_timeout`).
pub fn conductor_settings(config: &Config) -> openkeel_conductor::ConductorSettings {
    let secs = |v: i64| std::time::Duration::from_secs(v.unsigned_abs());
    openkeel_conductor::ConductorSettings {
        driver_call_timeout: secs(config.openkeel.driver_call_timeout),
        operation_timeout: secs(config.openkeel.operation_timeout),
        pre_delete_timeout: secs(config.cluster.pre_delete_lb_timeout),
        host: config.default.host.clone(),
        service_down_time: secs(config.default.service_down_time),
        ..openkeel_conductor::ConductorSettings::default()
    }
}

/// keystoneauth's password plugin options, declared alike by `[keystone_auth]` (the
/// service's own credentials) and `[keystone_authtoken]` (the token validator's), as the
/// clients' settings; the two sections differ only in `auth_type`'s type and the timeout.
macro_rules! password_plugin {
    ($k:expr, $auth_type:expr, $timeout:expr) => {
        openkeel_cloud::KeystoneAuthSettings {
            auth_type: $auth_type,
            auth_url: $k.auth_url.clone(),
            user_id: $k.user_id.clone(),
            username: $k.username.clone(),
            user_domain_id: $k.user_domain_id.clone(),
            user_domain_name: $k.user_domain_name.clone(),
            password: $k.password.clone(),
            project_id: $k.project_id.clone(),
            project_name: $k.project_name.clone(),
            project_domain_id: $k.project_domain_id.clone(),
            project_domain_name: $k.project_domain_name.clone(),
            domain_id: $k.domain_id.clone(),
            domain_name: $k.domain_name.clone(),
            system_scope: $k.system_scope.clone(),
            trust_id: $k.trust_id.clone(),
            default_domain_id: $k.default_domain_id.clone(),
            default_domain_name: $k.default_domain_name.clone(),
            cafile: $k.cafile.clone(),
            certfile: $k.certfile.clone(),
            keyfile: $k.keyfile.clone(),
            insecure: $k.insecure,
            timeout: $timeout,
        }
    };
}

/// The OpenStack clients' settings: `[keystone_auth]`, `[keystone_authtoken]
/// www_authenticate_uri`, `[glance_client]`, `[nova_client]`, `[neutron_client]`,
/// `[cinder_client]`.
pub fn cloud_settings(config: &Config) -> openkeel_cloud::CloudSettings {
    let k = &config.keystone_auth;
    let client = |region: &Option<String>, endpoint_type: &str| openkeel_cloud::ClientSettings {
        region_name: region.clone(),
        endpoint_type: endpoint_type.to_string(),
    };
    openkeel_cloud::CloudSettings {
        keystone_auth: password_plugin!(k, Some(k.auth_type.clone()), k.timeout),
        www_authenticate_uri: config.keystone_authtoken.www_authenticate_uri.clone(),
        glance_client: client(
            &config.glance_client.region_name,
            &config.glance_client.endpoint_type,
        ),
        nova_client: client(
            &config.nova_client.region_name,
            &config.nova_client.endpoint_type,
        ),
        neutron_client: client(
            &config.neutron_client.region_name,
            &config.neutron_client.endpoint_type,
        ),
        cinder_client: client(
            &config.cinder_client.region_name,
            &config.cinder_client.endpoint_type,
        ),
        octavia_client: client(
            &config.octavia_client.region_name,
            &config.octavia_client.endpoint_type,
        ),
        ..openkeel_cloud::CloudSettings::default()
    }
}

/// The API's settings from the configuration.
pub fn template_settings(config: &Config) -> openkeel_api::validation::TemplateSettings {
    openkeel_api::validation::TemplateSettings {
        kubernetes_allowed_network_drivers: config
            .cluster_template
            .kubernetes_allowed_network_drivers
            .clone(),
        kubernetes_default_network_driver: config
            .cluster_template
            .kubernetes_default_network_driver
            .clone(),
        default_boot_volume_size: config.cinder.default_boot_volume_size,
        max_limit: config.api.max_limit.max(1) as u64,
    }
}

/// The policy enforcer from `[oslo_policy]`.
pub fn policy(
    config: &Config,
    config_dirs: &[PathBuf],
) -> Result<openkeel_auth::Enforcer, StartError> {
    let p = &config.oslo_policy;
    let options = openkeel_auth::PolicyOptions {
        policy_file: Some(PathBuf::from(&p.policy_file)),
        policy_dirs: p.policy_dirs.iter().map(PathBuf::from).collect(),
        config_dirs: config_dirs.to_vec(),
        enforce_new_defaults: p.enforce_new_defaults,
        // oslo.policy 6 (Magnum 23.0.0's) always checks scope; the option no longer exists.
        enforce_scope: true,
    };
    Ok(openkeel_auth::Enforcer::with_default_rule(
        options,
        &p.policy_default_rule,
    )?)
}

/// `[keystone_authtoken]` as the token validator's settings (keystonemiddleware's options and
/// its password plugin's).
pub fn authtoken_settings(config: &Config) -> openkeel_auth::authtoken::AuthTokenSettings {
    let k = &config.keystone_authtoken;
    openkeel_auth::authtoken::AuthTokenSettings {
        www_authenticate_uri: k.www_authenticate_uri.clone(),
        interface: k.interface.clone(),
        region_name: k.region_name.clone(),
        include_service_catalog: k.include_service_catalog,
        token_cache_time: k.token_cache_time,
        cache_size: openkeel_auth::authtoken::DEFAULT_CACHE_SIZE,
        service_token_roles: k.service_token_roles.clone(),
        service_token_roles_required: k.service_token_roles_required,
        enforce_token_bind: k.enforce_token_bind.clone(),
        service_type: k.service_type.clone(),
        credentials: openkeel_cloud::CloudSettings {
            keystone_auth: password_plugin!(
                k,
                k.auth_type.clone(),
                k.http_connect_timeout.filter(|t| *t > 0).map(|t| t as f64)
            ),
            www_authenticate_uri: k.www_authenticate_uri.clone(),
            ..openkeel_cloud::CloudSettings::default()
        },
    }
}

/// How the API establishes identities, from `[openkeel] auth_strategy`: `noauth` (identity
/// headers trusted) or `keystone` (keystonemiddleware's auth_token with `[keystone_authtoken]`).
/// Shared by the all-in-one server and `openkeel-api`.
pub fn auth_mode(config: &Config) -> Result<openkeel_api::request::AuthMode, StartError> {
    match config.openkeel.auth_strategy.as_str() {
        "noauth" => Ok(openkeel_api::request::AuthMode::NoAuth),
        "keystone" => {
            let k = &config.keystone_authtoken;
            if k.delay_auth_decision {
                return Err(StartError::Unsupported(
                    "[keystone_authtoken] delay_auth_decision = true is not supported: Magnum's API has no use for unauthenticated requests".to_string(),
                ));
            }
            if k.auth_section.as_deref().is_some_and(|s| !s.is_empty()) {
                return Err(StartError::Unsupported(
                    "[keystone_authtoken] auth_section is not supported: put the password plugin options (auth_url, username, password, project_name, ...) in [keystone_authtoken] itself".to_string(),
                ));
            }
            if k.memcached_servers.as_ref().is_some_and(|m| !m.is_empty()) {
                tracing::warn!("[keystone_authtoken] memcached_servers is set: OpenKeel caches validated tokens in process (token_cache_time) and does not use memcached");
            }
            let validator = openkeel_auth::authtoken::AuthToken::new(authtoken_settings(config))
                .map_err(StartError::Unsupported)?;
            Ok(openkeel_api::request::AuthMode::Keystone(Arc::new(
                validator,
            )))
        }
        other => Err(StartError::Unsupported(format!(
            "[openkeel] auth_strategy = {other} is not valid; use noauth or keystone"
        ))),
    }
}

/// The conductor: the driver registry of `[drivers]` (with the simulator when enabled), the
/// handlers over `db`, and the cert manager of `[certificates] cert_manager_type`.
pub fn build_conductor(
    config: &Config,
    db: &Database,
    notifier: Arc<dyn openkeel_conductor::Notifier>,
) -> Result<
    (
        openkeel_conductor::Conductor,
        Arc<openkeel_drivers::DriverRegistry>,
    ),
    StartError,
> {
    let drivers = driver_registry(config, Some(db))?;
    let conductor = openkeel_conductor::Conductor::new(
        db.clone(),
        drivers.clone(),
        notifier,
        conductor_settings(config),
    );
    let conductor = match cert_manager(config, Some(db))? {
        Some(manager) => conductor.with_certificates(Arc::new(
            openkeel_conductor::certs_x509::X509KeyPairCertificates::new(manager),
        )),
        None => conductor,
    };
    Ok((conductor, drivers))
}

/// The conductor's background loops: the `magnum_service` heartbeat (always, as in Magnum)
/// and, with `[DEFAULT] periodic_enable`, the status and health syncs.
pub fn spawn_conductor_loops(
    config: &Config,
    conductor: &Arc<openkeel_conductor::Conductor>,
    stop_rx: &tokio::sync::watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let mut loops = Vec::new();
    // The service heartbeat runs whatever periodic_enable says, as in Magnum.
    loops.push(openkeel_conductor::spawn_heartbeat(
        conductor.db().clone(),
        config.default.host.clone(),
        Duration::from_secs(config.default.periodic_interval_max.max(1) as u64),
        stop_rx.clone(),
    ));
    if config.default.periodic_enable {
        let interval = Duration::from_secs(config.openkeel.status_sync_interval.max(1) as u64);
        loops.push(openkeel_conductor::spawn_periodic(
            conductor.clone(),
            interval,
            stop_rx.clone(),
        ));
        loops.push(openkeel_conductor::spawn_health_periodic(
            conductor.clone(),
            Duration::from_secs(60),
            stop_rx.clone(),
        ));
    }
    loops
}

/// The API's state: the cloud for validation (simulated or the Keystone catalogue's), the
/// policy, the database, and the conductor through whatever transport the caller chose.
pub fn api_state(
    config: &Config,
    db: &Database,
    enforcer: openkeel_auth::Enforcer,
    auth: openkeel_api::request::AuthMode,
    conductor: Arc<dyn openkeel_rpc::ConductorApi>,
    drivers: Arc<openkeel_drivers::DriverRegistry>,
) -> Result<openkeel_api::ApiState, StartError> {
    // The embedded default has no OpenStack cloud: the simulated one answers the look-ups.
    let cloud: Arc<dyn openkeel_core::cloud::Cloud> = if config.openkeel.simulated_cloud {
        Arc::new(openkeel_cloud::SimulatedCloud::new())
    } else {
        Arc::new(
            openkeel_cloud::KeystoneCloud::new(cloud_settings(config))
                .map_err(|e| StartError::Unsupported(format!("OpenStack clients: {e}")))?,
        )
    };
    Ok(openkeel_api::ApiState {
        enable_proxy_headers_parsing: config.oslo_middleware.enable_proxy_headers_parsing,
        tls: config.api.enabled_ssl,
        auth,
        auth_url: config.keystone_authtoken.www_authenticate_uri.clone(),
        policy: Some(Arc::new(enforcer)),
        db: Some(db.clone()),
        conductor: Some(conductor),
        cloud: Some(cloud),
        drivers: Some(drivers.clone()),
        template_settings: template_settings(config),
        clusters: openkeel_api::resources::clusters::ClusterSettings::from_config(config),
        service_down_time: config.default.service_down_time.max(0) as u64,
        list_permits: openkeel_api::list_permits(
            usize::try_from(config.openkeel.list_concurrency).unwrap_or(0),
        ),
        pending_creates: Default::default(),
        body_limits: openkeel_api::body::BodyLimits {
            max_bytes: usize::try_from(config.openkeel.api_max_body_size).unwrap_or(4 << 20),
            read_timeout: Duration::from_secs(config.openkeel.api_body_read_timeout.unsigned_abs()),
        },
        metrics: Default::default(),
    })
}

/// A socket the API serves, bound beforehand (the `uwsgi` entry point binds its `http` /
/// `https` / `http-socket` addresses before it drops privileges).
pub enum ApiListener {
    /// Plain HTTP.
    Http(std::net::TcpListener),
    /// HTTPS with this server configuration.
    Https(std::net::TcpListener, Arc<rustls::ServerConfig>),
}

impl ApiListener {
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            ApiListener::Http(l) | ApiListener::Https(l, _) => l.local_addr(),
        }
    }
}

/// What the `uwsgi` entry point adds around the API.
#[derive(Debug, Clone, Default)]
pub struct ServeExtras {
    /// Counts the requests (uWSGI's stats server reports them).
    pub requests: Option<Arc<std::sync::atomic::AtomicU64>>,
    /// Headers added to every response (uWSGI's `add-header`).
    pub add_headers: Vec<(axum::http::HeaderName, axum::http::HeaderValue)>,
    /// uWSGI's request log lines on stderr.
    pub access_log: Option<Arc<crate::uwsgi::AccessLog>>,
    /// The connection limits (`[openkeel] api_*`).
    pub limits: crate::http_server::HttpLimits,
}

/// The client's address, for uWSGI's request log.
#[derive(Debug, Clone, Copy)]
pub struct PeerAddr(pub SocketAddr);

/// How long a stopping API lets its connections finish the requests in progress.
const DRAIN: Duration = Duration::from_secs(30);

/// Serve the API on every listener until the sender is used (or dropped); the handle ends
/// when every listener has stopped, with the first error.
pub fn serve_api_listeners(
    state: openkeel_api::ApiState,
    listeners: Vec<ApiListener>,
    extras: ServeExtras,
) -> Result<(oneshot::Sender<()>, JoinHandle<std::io::Result<()>>), StartError> {
    let mut app = openkeel_api::router(Arc::new(state));
    if !extras.add_headers.is_empty() {
        let headers = Arc::new(extras.add_headers);
        app = app.layer(tower::util::MapResponseLayer::new(
            move |mut resp: axum::response::Response| {
                for (name, value) in headers.iter() {
                    resp.headers_mut().append(name.clone(), value.clone());
                }
                resp
            },
        ));
    }
    if let Some(log) = extras.access_log {
        app = app.layer(axum::middleware::from_fn_with_state(
            log,
            crate::uwsgi::access_log,
        ));
    }
    if let Some(counter) = extras.requests {
        // uWSGI's per-worker request count, for its stats server.
        app = app.layer(tower::util::MapRequestLayer::new(
            move |req: axum::extract::Request| {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                req
            },
        ));
    }
    let (tx, rx) = oneshot::channel::<()>();
    let (stop_all, _) = tokio::sync::broadcast::channel::<()>(1);
    let mut servers = tokio::task::JoinSet::new();
    for listener in listeners {
        let addr = listener
            .local_addr()
            .map_err(|e| StartError::Unsupported(format!("listener: {e}")))?;
        let mut stop = stop_all.subscribe();
        let shutdown = async move {
            let _ = stop.recv().await;
        };
        let app = app.clone();
        match listener {
            ApiListener::Http(l) => {
                l.set_nonblocking(true)
                    .map_err(|e| StartError::Bind(addr, e))?;
                let l = TcpListener::from_std(l).map_err(|e| StartError::Bind(addr, e))?;
                servers.spawn(crate::http_server::serve(
                    l,
                    app,
                    extras.limits,
                    shutdown,
                    DRAIN,
                ));
            }
            ApiListener::Https(l, config) => {
                l.set_nonblocking(true)
                    .map_err(|e| StartError::Bind(addr, e))?;
                let l = TcpListener::from_std(l).map_err(|e| StartError::Bind(addr, e))?;
                let l = crate::tls::TlsListener::new(l, config)
                    .map_err(|e| StartError::Bind(addr, e))?;
                servers.spawn(crate::http_server::serve(
                    l,
                    app,
                    extras.limits,
                    shutdown,
                    DRAIN,
                ));
            }
        }
    }
    let handle = tokio::spawn(async move {
        let _ = rx.await;
        let _ = stop_all.send(());
        let mut result = Ok(());
        while let Some(done) = servers.join_next().await {
            let done = done.unwrap_or_else(|e| Err(std::io::Error::other(e)));
            if result.is_ok() {
                result = done;
            }
        }
        result
    });
    Ok((tx, handle))
}

/// Bind `[api] host:port` (or `bind`) and serve the API until the returned sender fires.
pub async fn serve_api(
    state: openkeel_api::ApiState,
    config: &Config,
    bind: Option<SocketAddr>,
) -> Result<
    (
        SocketAddr,
        oneshot::Sender<()>,
        JoinHandle<std::io::Result<()>>,
    ),
    StartError,
> {
    let bind = match bind {
        Some(b) => b,
        None => {
            let ip: std::net::IpAddr = config.api.host.parse().map_err(|_| {
                StartError::Unsupported(format!(
                    "[api] host = {} is not an IP address",
                    config.api.host
                ))
            })?;
            SocketAddr::new(ip, config.api.port)
        }
    };
    // `[api] enabled_ssl`: HTTPS with `ssl_cert_file` / `ssl_key_file`, as magnum-api's
    // `_get_ssl_configs` (its messages for a file that does not exist).
    let tls = if config.api.enabled_ssl {
        let cert = config
            .api
            .ssl_cert_file
            .as_deref()
            .filter(|c| !c.is_empty());
        let key = config.api.ssl_key_file.as_deref().filter(|k| !k.is_empty());
        for (what, file) in [("cert_file", cert), ("key_file", key)] {
            if let Some(f) = file.filter(|f| !Path::new(f).exists()) {
                return Err(StartError::Unsupported(format!(
                    "Unable to find {what} : {f}"
                )));
            }
        }
        let (Some(cert), Some(key)) = (cert, key.or(cert)) else {
            return Err(StartError::Unsupported(
                "[api] enabled_ssl = true needs [api] ssl_cert_file (and ssl_key_file)".into(),
            ));
        };
        Some(
            crate::tls::server_config(Path::new(cert), Path::new(key))
                .map_err(|e| StartError::Unsupported(format!("[api] {e}")))?,
        )
    } else {
        None
    };
    let listener = std::net::TcpListener::bind(bind).map_err(|e| StartError::Bind(bind, e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| StartError::Bind(bind, e))?;
    let listener = match tls {
        Some(tls) => ApiListener::Https(listener, tls),
        None => ApiListener::Http(listener),
    };
    let extras = ServeExtras {
        limits: crate::http_server::HttpLimits::from_config(&config.openkeel),
        ..ServeExtras::default()
    };
    let (tx, handle) = serve_api_listeners(state, vec![listener], extras)?;
    Ok((addr, tx, handle))
}

/// Wait for SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::allinone::embedded_defaults;
    use openkeel_core::config::ConfigSource;

    fn config(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("magnum.conf");
        std::fs::write(&file, text).unwrap();
        Config::load_sequence(&[ConfigSource::File(file)]).unwrap()
    }

    #[test]
    fn the_pool_is_sized_as_oslo_db_sizes_it() {
        let mysql = "[database]\nconnection = mysql+pymysql://u:p@db/magnum\n";
        let o = connect_options(&config(mysql));
        assert_eq!(o.max_connections, 55, "max_pool_size 5 + max_overflow 50");
        assert_eq!(o.mysql_sql_mode.as_deref(), Some("TRADITIONAL"));
        assert_eq!(o.recycle_time, Some(Duration::from_secs(3600)));
        assert_eq!(o.acquire_timeout, Duration::from_secs(30));

        let o = connect_options(&config(&format!(
            "{mysql}max_pool_size = 10\nmax_overflow = 0\npool_timeout = 5\n\
             mysql_sql_mode =\nconnection_recycle_time = -1\n"
        )));
        assert_eq!(o.max_connections, 10);
        assert_eq!(
            o.mysql_sql_mode.as_deref(),
            Some(""),
            "the server's own mode"
        );
        assert_eq!(o.recycle_time, None);
        assert_eq!(o.acquire_timeout, Duration::from_secs(5));

        let o = connect_options(&config(&format!("{mysql}max_pool_size = 0\n")));
        assert_eq!(o.max_connections, 1000, "0 is no limit");
        let o = connect_options(&config(&format!("{mysql}max_overflow = -1\n")));
        assert_eq!(o.max_connections, 1000, "a negative overflow is no limit");

        let sqlite = "[database]\nconnection = sqlite:////var/lib/openkeel/openkeel.sqlite\n";
        assert_eq!(connect_options(&config(sqlite)).max_connections, 5);
        let o = connect_options(&config(&format!("{sqlite}max_pool_size = 0\n")));
        assert_eq!(o.max_connections, 16);
    }

    #[tokio::test]
    async fn driver_deps_follow_the_configuration() {
        // The embedded default: the simulated cloud, no Keystone; x509keypair needs the DB.
        let dir = tempfile::tempdir().unwrap();
        let embedded = config(&embedded_defaults(dir.path()));
        let deps = driver_deps(&embedded, None).unwrap();
        assert!(deps.certificates.is_none() && deps.application_credentials.is_none());
        let cloud = deps.cloud.unwrap();
        let ctx = openkeel_core::context::RequestContext::default();
        assert_eq!(
            cloud.default_volume_type(&ctx).await.unwrap(),
            "__DEFAULT__"
        );
        let db = Database::in_memory().await.unwrap();
        assert!(driver_deps(&embedded, Some(&db))
            .unwrap()
            .certificates
            .is_some());

        // Keystone and the catalogue's services, the local cert manager.
        let real = config(&format!(
            "[certificates]\ncert_manager_type = local\nstorage_path = {}\n\
             [keystone_auth]\nauth_url = http://127.0.0.1:9/v3\n\
             [cinder_client]\nregion_name = RegionOne\n",
            dir.path().display()
        ));
        let deps = driver_deps(&real, None).unwrap();
        assert!(deps.certificates.is_some());
        assert!(deps.application_credentials.is_some());
        let e = deps
            .cloud
            .unwrap()
            .default_volume_type(&ctx)
            .await
            .unwrap_err();
        assert!(e.message().contains("no password or token found"), "{e}");

        let bad = config("[certificates]\ncert_manager_type = vault\n");
        assert!(driver_deps(&bad, None).is_err());
        assert!(driver_registry(&bad, None).is_err());
    }

    /// The API's options come from the configuration: `[oslo_middleware]
    /// enable_proxy_headers_parsing` (oslo.middleware's default False) and `[openkeel]
    /// list_concurrency` (0: the cores, at least 2).
    #[tokio::test]
    async fn the_api_state_takes_its_options_from_the_configuration() {
        let db = Database::in_memory().await.unwrap();
        let state = |text: &str| {
            let c = config(&format!("[openkeel]\nsimulated_cloud = true\n{text}"));
            let drivers = driver_registry(&c, None).unwrap();
            let conductor = Arc::new(openkeel_conductor::Conductor::new(
                db.clone(),
                drivers.clone(),
                Arc::new(openkeel_conductor::notify::LogNotifier),
                openkeel_conductor::ConductorSettings::default(),
            ));
            let enforcer =
                openkeel_auth::Enforcer::new(openkeel_auth::PolicyOptions::default()).unwrap();
            api_state(
                &c,
                &db,
                enforcer,
                openkeel_api::request::AuthMode::NoAuth,
                conductor,
                drivers,
            )
            .unwrap()
        };
        let defaults = state("");
        assert!(!defaults.enable_proxy_headers_parsing);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        assert_eq!(defaults.list_permits.available_permits(), cores.max(2));

        let set =
            state("list_concurrency = 3\n[oslo_middleware]\nenable_proxy_headers_parsing = true\n");
        assert!(set.enable_proxy_headers_parsing);
        assert_eq!(set.list_permits.available_permits(), 3);
    }

    #[test]
    fn the_registry_ends_with_the_simulator() {
        let dir = tempfile::tempdir().unwrap();
        let embedded = config(&embedded_defaults(dir.path()));
        let capi = [
            "k8s_cluster_api_ubuntu",
            "k8s_cluster_api_ubuntu_focal",
            "k8s_cluster_api_debian",
            "k8s_cluster_api_flatcar",
            "k8s_cluster_api_rockylinux",
        ];
        let r = driver_registry(&embedded, None).unwrap();
        let mut want = capi.to_vec();
        want.push("simulator");
        assert_eq!(r.registered_names(), want);
        // The simulator serves the shared tuples and is the default driver.
        assert_eq!(
            r.get_default_driver().unwrap().as_deref(),
            Some("simulator")
        );
        let off = config("[openkeel]\nenable_simulator_driver = false\n");
        let r = driver_registry(&off, None).unwrap();
        assert_eq!(r.registered_names(), capi.to_vec());
        // Magnum's rule: the alphabetically first entry point.
        assert_eq!(
            r.get_default_driver().unwrap().as_deref(),
            Some("k8s_cluster_api_debian")
        );
        let disabled = config(
            "[openkeel]\nenable_simulator_driver = true\n[drivers]\ndisabled_drivers = simulator\n",
        );
        let r = driver_registry(&disabled, None).unwrap();
        assert_eq!(
            r.get_default_driver().unwrap().as_deref(),
            Some("k8s_cluster_api_debian")
        );
    }
}
