//! The embedded default: API and conductor in one process, SQLite in a data directory, the
//! in-process RPC transport, noauth and the simulator driver. Same code paths as the
//! production processes; only the transport, database URL and driver differ.
//!
//! The embedded defaults are an ordinary configuration layer: [`embedded_defaults`] is written
//! to `<data_dir>/openkeel-embedded.conf` and read first, so every `--config-file` given on the
//! command line overrides it with oslo.config's rules, and the effective defaults can be read
//! in that file. Unlike the production binaries, the all-in-one server does not search
//! `/etc/magnum` for configuration: it only reads what it is given.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openkeel_core::config::{Config, ConfigSource};
use openkeel_db::Database;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::wiring::{
    api_state, auth_mode, build_conductor, open_database, policy, serve_api, shutdown_signal,
    spawn_conductor_loops, StartError,
};

/// The embedded default configuration for a data directory.
pub fn embedded_defaults(data_dir: &Path) -> String {
    format!(
        "# Written by `openkeel` at start-up: the embedded default. Options given in\n\
         # --config-file / --config-dir files override these.\n\
         [DEFAULT]\n\
         host = openkeel\n\
         state_path = {dir}\n\
         \n\
         [database]\n\
         connection = sqlite:///{dir}/openkeel.sqlite\n\
         \n\
         [certificates]\n\
         cert_manager_type = x509keypair\n\
         \n\
         [openkeel]\n\
         auth_strategy = noauth\n\
         rpc_transport = inprocess\n\
         enable_simulator_driver = true\n\
         simulated_cloud = true\n\
         data_dir = {dir}\n",
        dir = data_dir.display()
    )
}

/// Load the all-in-one configuration: the embedded defaults, then the given files and
/// directories in command-line order.
pub fn load_config(
    data_dir: &Path,
    files: &[PathBuf],
    dirs: &[PathBuf],
) -> Result<Config, StartError> {
    std::fs::create_dir_all(data_dir)
        .map_err(|e| StartError::DataDir(data_dir.to_path_buf(), e))?;
    let base = data_dir.join("openkeel-embedded.conf");
    std::fs::write(&base, embedded_defaults(data_dir))
        .map_err(|e| StartError::DataDir(base.clone(), e))?;
    let mut seq = vec![ConfigSource::File(base)];
    seq.extend(files.iter().cloned().map(ConfigSource::File));
    seq.extend(dirs.iter().cloned().map(ConfigSource::Dir));
    Ok(Config::load_sequence(&seq)?)
}

/// What the all-in-one server runs with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen; `None` = `[api] host` / `[api] port`.
    pub bind: Option<SocketAddr>,
    pub config: Config,
    /// Directories where relative paths (policy files) are looked up: the `--config-dir`s and
    /// the directories of the `--config-file`s.
    pub config_dirs: Vec<PathBuf>,
}

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    pub db: Database,
    /// Where the API's and the conductor's metrics are served (`[openkeel]
    /// api_metrics_listen`, else `conductor_metrics_listen`), if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    metrics: Option<crate::metrics::MetricsServer>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: JoinHandle<std::io::Result<()>>,
    stop_loops: tokio::sync::watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
}

impl Running {
    /// Stop accepting, finish in-flight requests, and wait.
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let served = self
            .handle
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        let _ = self.stop_loops.send(true);
        for l in self.loops {
            let _ = l.await;
        }
        if let Some(m) = self.metrics.take() {
            m.stop().await;
        }
        served
    }
}

/// Start the server in the current runtime. Used by the `openkeel` binary and by tests
/// (which bind port 0).
pub async fn start(opts: Options) -> Result<Running, StartError> {
    let started = Instant::now();
    let config = &opts.config;
    let auth = auth_mode(config)?;
    if config.openkeel.rpc_transport != "inprocess" {
        return Err(StartError::Unsupported(format!(
            "[openkeel] rpc_transport = {} is not available in the all-in-one server; it runs API and conductor in one process (inprocess)",
            config.openkeel.rpc_transport
        )));
    }
    let db = open_database(config).await?;
    let enforcer = policy(config, &opts.config_dirs)?;
    let rpc_timeout = Duration::from_secs(config.default.rpc_response_timeout.max(1) as u64);

    // The conductor half: drivers, handlers, the in-process transport, the periodic loops.
    let (conductor, drivers) =
        build_conductor(config, &db, Arc::new(openkeel_conductor::LogNotifier))?;
    let conductor = Arc::new(conductor);
    let rpc = Arc::new(openkeel_rpc::inprocess::InProcess::new(
        conductor.clone(),
        rpc_timeout,
    ));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let loops = spawn_conductor_loops(config, &conductor, &stop_rx);

    let conductor_api: Arc<dyn openkeel_rpc::ConductorApi> = rpc;
    let state = api_state(config, &db, enforcer, auth, conductor_api, drivers)?;
    // One metrics listener for both halves (docs/operating.md).
    let metrics = match crate::metrics::listen_address(&[
        (
            "api_metrics_listen",
            config.openkeel.api_metrics_listen.as_deref(),
        ),
        (
            "conductor_metrics_listen",
            config.openkeel.conductor_metrics_listen.as_deref(),
        ),
    ])? {
        Some(at) => Some(
            crate::metrics::serve(
                "openkeel",
                at,
                vec![
                    state.metrics.clone(),
                    Arc::new(openkeel_conductor::metrics::ConductorCollector::new(
                        &conductor,
                    )),
                ],
            )
            .await?,
        ),
        None => None,
    };
    let (addr, tx, handle) = serve_api(state, config, opts.bind).await?;
    tracing::info!(
        %addr,
        database = %openkeel_db::redact_url(&config.database.connection),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "openkeel all-in-one listening"
    );
    Ok(Running {
        addr,
        db,
        metrics_addr: metrics.as_ref().map(|m| m.addr),
        metrics,
        shutdown: Some(tx),
        handle,
        stop_loops: stop_tx,
        loops,
    })
}

/// Start, then run until SIGINT or SIGTERM.
pub async fn serve(opts: Options) -> Result<(), Box<dyn std::error::Error>> {
    let running = start(opts).await?;
    shutdown_signal().await;
    tracing::info!("shutting down");
    running.stop().await?;
    Ok(())
}
