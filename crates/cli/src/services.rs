//! The production processes: `openkeel-api` and `openkeel-conductor`, which talk over
//! RabbitMQ with oslo.messaging's wire format (so either can be swapped with Magnum's
//! magnum-api / magnum-conductor on the same broker and database). They reuse the
//! all-in-one's building blocks; only the transport differs.

use crate::metrics::MetricsServer;
use crate::wiring::{self, StartError};
use openkeel_core::config::Config;
use openkeel_db::Database;
use openkeel_rpc::oslo::{self, RabbitSettings};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// What a service process runs with.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    pub config: Config,
    /// Where relative paths (policy files) are looked up.
    pub config_dirs: Vec<PathBuf>,
    /// The API's listen address; `None` = `[api] host` / `[api] port`.
    pub bind: Option<SocketAddr>,
}

fn rabbit(config: &Config, program: &str) -> Result<Arc<RabbitSettings>, StartError> {
    if config.openkeel.rpc_transport != "rabbit" {
        return Err(StartError::Unsupported(format!(
            "[openkeel] rpc_transport = {} cannot join two processes; {program} needs rabbit (the all-in-one `openkeel` runs inprocess)",
            config.openkeel.rpc_transport
        )));
    }
    RabbitSettings::from_config(config, program)
        .map(Arc::new)
        .map_err(|e| StartError::Unsupported(e.to_string()))
}

/// The conductor's notifier from `[oslo_messaging_notifications] driver`: `messagingv2` (or
/// `messaging`) sends Magnum's CADF notifications on the RPC transport, as Magnum does
/// (its `transport_url` option is ignored there too); anything else (`noop`, `log`, none)
/// only logs them.
fn notifier(
    config: &Config,
    settings: &Arc<RabbitSettings>,
    db: &Database,
) -> Arc<dyn openkeel_conductor::Notifier> {
    let drivers = &config.oslo_messaging_notifications.driver;
    let v2 = drivers.iter().any(|d| d == "messagingv2");
    if !v2 && !drivers.iter().any(|d| d == "messaging") {
        return Arc::new(openkeel_conductor::LogNotifier);
    }
    let host = config
        .default
        .host
        .clone()
        .unwrap_or_else(|| "localhost".to_string());
    let bus = oslo::notifier::AmqpNotifier::new(
        settings.clone(),
        config.oslo_messaging_notifications.topics.clone(),
        format!("container-infra.{host}"),
        v2,
    );
    Arc::new(openkeel_conductor::notify::BusNotifier::new(
        bus,
        db.clone(),
    ))
}

/// A running `openkeel-api`.
pub struct RunningApi {
    pub addr: SocketAddr,
    /// Where the metrics are served (`[openkeel] api_metrics_listen`), if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    metrics: Option<MetricsServer>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: JoinHandle<std::io::Result<()>>,
}

impl RunningApi {
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let served = self
            .handle
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        if let Some(m) = self.metrics.take() {
            m.stop().await;
        }
        served
    }
}

/// The metrics listener of `option` (`[openkeel] api_metrics_listen` / `conductor_metrics_listen`)
/// serving `collectors`, or none when the option is unset.
async fn metrics_listener(
    what: &'static str,
    option: &str,
    value: Option<&str>,
    collectors: Vec<Arc<dyn openkeel_core::metrics::Collector>>,
) -> Result<Option<MetricsServer>, StartError> {
    match crate::metrics::listen_address(&[(option, value)])? {
        Some(at) => Ok(Some(crate::metrics::serve(what, at, collectors).await?)),
        None => Ok(None),
    }
}

/// Start `openkeel-api`: the HTTP API, reading the database directly and reaching the
/// conductor over RabbitMQ (`[conductor] topic` on `[DEFAULT] control_exchange`).
pub async fn start_api(opts: ServiceOptions) -> Result<RunningApi, StartError> {
    start_api_with(opts, None, wiring::ServeExtras::default()).await
}

/// [`start_api`] on sockets bound beforehand (the `uwsgi` entry point's listeners) instead of
/// `[api] host` / `port`; `addr` is the first one's address.
pub async fn start_api_on(
    opts: ServiceOptions,
    listeners: Vec<wiring::ApiListener>,
    extras: wiring::ServeExtras,
) -> Result<RunningApi, StartError> {
    if listeners.is_empty() {
        return Err(StartError::Unsupported(
            "no listener to serve the API on".into(),
        ));
    }
    start_api_with(opts, Some(listeners), extras).await
}

async fn start_api_with(
    opts: ServiceOptions,
    listeners: Option<Vec<wiring::ApiListener>>,
    extras: wiring::ServeExtras,
) -> Result<RunningApi, StartError> {
    let started = Instant::now();
    let config = &opts.config;
    let auth = wiring::auth_mode(config)?;
    let settings = rabbit(config, "openkeel-api")?;
    let db = wiring::open_database(config).await?;
    let enforcer = wiring::policy(config, &opts.config_dirs)?;
    // The API validates templates against the drivers the conductor offers: the same
    // registry, built from the same configuration.
    let drivers = wiring::driver_registry(config, Some(&db))?;
    let caller = oslo::client::AmqpCaller::new(settings, config.conductor.topic.clone())
        .with_ordered_casts(config.openkeel.ordered_casts);
    let conductor: Arc<dyn openkeel_rpc::ConductorApi> =
        Arc::new(openkeel_rpc::remote::RemoteConductor::new(caller));
    let state = wiring::api_state(config, &db, enforcer, auth, conductor, drivers)?;
    let metrics = metrics_listener(
        "openkeel-api",
        "api_metrics_listen",
        config.openkeel.api_metrics_listen.as_deref(),
        vec![state.metrics.clone()],
    )
    .await?;
    let (addr, tx, handle) = match listeners {
        None => wiring::serve_api(state, config, opts.bind).await?,
        Some(listeners) => {
            let addr = listeners
                .first()
                .map(wiring::ApiListener::local_addr)
                .transpose()
                .map_err(|e| StartError::Unsupported(format!("listener: {e}")))?
                .ok_or_else(|| StartError::Unsupported("no listener".into()))?;
            let (tx, handle) = wiring::serve_api_listeners(state, listeners, extras)?;
            (addr, tx, handle)
        }
    };
    tracing::info!(
        %addr,
        database = %openkeel_db::redact_url(&config.database.connection),
        topic = %config.conductor.topic,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "openkeel-api listening"
    );
    Ok(RunningApi {
        addr,
        metrics_addr: metrics.as_ref().map(|m| m.addr),
        metrics,
        shutdown: Some(tx),
        handle,
    })
}

/// A running `openkeel-conductor`.
pub struct RunningConductor {
    pub db: Database,
    /// Where the metrics are served (`[openkeel] conductor_metrics_listen`), if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    metrics: Option<MetricsServer>,
    server: oslo::server::RpcServer,
    stop_loops: tokio::sync::watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
}

impl RunningConductor {
    /// The server name (`<topic>.<name>` is its own queue).
    pub fn server_name(&self) -> &str {
        self.server.server_name()
    }

    /// Stop consuming, let the requests in progress finish, stop the loops.
    pub async fn stop(self) {
        self.server.stop().await;
        let _ = self.stop_loops.send(true);
        for l in self.loops {
            let _ = l.await;
        }
        if let Some(m) = self.metrics {
            m.stop().await;
        }
    }
}

/// Start `openkeel-conductor`: the RPC server on `[conductor] topic`, the handlers, the
/// heartbeat and the periodic loops.
pub async fn start_conductor(opts: ServiceOptions) -> Result<RunningConductor, StartError> {
    let started = Instant::now();
    let config = &opts.config;
    let settings = rabbit(config, "openkeel-conductor")?;
    let db = wiring::open_database(config).await?;
    let notifier = notifier(config, &settings, &db);
    let (conductor, _drivers) = wiring::build_conductor(config, &db, notifier)?;
    let conductor = Arc::new(conductor);
    let metrics = metrics_listener(
        "openkeel-conductor",
        "conductor_metrics_listen",
        config.openkeel.conductor_metrics_listen.as_deref(),
        vec![Arc::new(
            openkeel_conductor::metrics::ConductorCollector::new(&conductor),
        )],
    )
    .await?;
    let dispatcher = openkeel_conductor::rpc_server::ConductorDispatcher::new(conductor.clone())
        .with_database(db.clone())
        .with_metrics(conductor.metrics().clone());
    // OpenKeel's ordered queues too: the casts about one cluster from openkeel-api.
    let server = oslo::server::RpcServer::start_with(
        settings,
        config.conductor.topic.clone(),
        oslo::server::generate_server_name(),
        Arc::new(dispatcher),
        true,
    );
    // Like oslo.messaging's server.start(): return once the topic queues exist, so that a
    // cast sent right after start-up is not dropped for want of a bound queue. A broker that
    // is down does not hold the conductor back: the server keeps retrying.
    let wait = Duration::from_secs(10);
    if !server.wait_listening(wait).await {
        tracing::warn!(
            topic = %config.conductor.topic,
            waited_s = wait.as_secs(),
            "the RPC server is not listening yet (broker unreachable?); it keeps retrying"
        );
    }
    let (stop_loops, stop_rx) = tokio::sync::watch::channel(false);
    let mut loops = wiring::spawn_conductor_loops(config, &conductor, &stop_rx);
    // The ordered queues are shared out between the live conductors as the periodic work is.
    let shards = server.ordered_shards();
    loops.push(openkeel_conductor::ownership::spawn_ordered_shards(
        db.clone(),
        config.default.host.clone(),
        Duration::from_secs(config.default.service_down_time.max(0) as u64),
        Duration::from_secs(config.default.periodic_interval_max.clamp(1, 10) as u64),
        move |mask| shards.keep(mask),
        stop_rx.clone(),
    ));
    tracing::info!(
        topic = %config.conductor.topic,
        server = %server.server_name(),
        database = %openkeel_db::redact_url(&config.database.connection),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "openkeel-conductor started"
    );
    Ok(RunningConductor {
        db,
        metrics_addr: metrics.as_ref().map(|m| m.addr),
        metrics,
        server,
        stop_loops,
        loops,
    })
}
