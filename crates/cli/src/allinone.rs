//! The embedded default: API and conductor in one process, SQLite in a data directory, the
//! in-process RPC transport, noauth and the simulator driver. Same code paths as the
//! production processes; only the transport, database URL and driver differ.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("cannot create data directory {path}: {source}", path = .0.display(), source = .1)]
    DataDir(PathBuf, std::io::Error),
}

/// What the all-in-one server runs with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen (`[api] host` / `[api] port`, default 127.0.0.1:9511).
    pub bind: SocketAddr,
    /// Where the SQLite database and other state live.
    pub data_dir: PathBuf,
    pub api: openkeel_api::ApiState,
}

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    handle: JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stop accepting, finish in-flight requests, and wait.
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.handle
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// Wait until the server ends (it ends on SIGINT / SIGTERM when started by [`serve`]).
    pub async fn wait(self) -> std::io::Result<()> {
        self.handle
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// Start the server in the current runtime. Used by the `openkeel` binary and by tests
/// (which bind port 0).
pub async fn start(opts: Options) -> Result<Running, StartError> {
    let started = Instant::now();
    std::fs::create_dir_all(&opts.data_dir)
        .map_err(|e| StartError::DataDir(opts.data_dir.clone(), e))?;
    let listener = TcpListener::bind(opts.bind)
        .await
        .map_err(|e| StartError::Bind(opts.bind, e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| StartError::Bind(opts.bind, e))?;
    let app = openkeel_api::router(Arc::new(opts.api));
    let (tx, rx) = oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await
    });
    tracing::info!(%addr, data_dir = %opts.data_dir.display(), elapsed_ms = started.elapsed().as_millis() as u64, "openkeel all-in-one listening");
    Ok(Running {
        addr,
        shutdown: Some(tx),
        handle,
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

async fn shutdown_signal() {
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
