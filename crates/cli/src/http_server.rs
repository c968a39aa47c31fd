//! The API's HTTP/1.1 server: hyper's connection driver with the limits a public endpoint
//! needs, which `axum::serve` does not set (it gives hyper no timer, so a client that sends
//! its headers one byte a second, or a connection left open and idle, is kept for ever).
//!
//! * `[openkeel] api_header_read_timeout`: a request's headers must arrive within it,
//!   counted from when the connection is waiting for a request, so an idle kept-alive
//!   connection is closed after it too (hyper's header read timeout, with a timer).
//! * `[openkeel] api_max_header_size`: larger request headers are answered 431 and the
//!   connection closed (hyper).
//! * `[openkeel] api_max_connections`: connections served at once by one process; further
//!   connections wait in the listen backlog until one closes.
//!
//! The body limits (size, time) are the API's (`openkeel_api::ApiState`).

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

use crate::wiring::PeerAddr;

/// The connection limits of one API process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Time to receive a request's headers (and the longest a kept-alive connection may
    /// sit idle); `None` for no limit.
    pub header_read_timeout: Option<Duration>,
    /// Largest request head (request line and headers), bytes.
    pub max_header_size: usize,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Default for HttpLimits {
    /// The defaults of the `[openkeel] api_*` options.
    fn default() -> Self {
        HttpLimits {
            header_read_timeout: Some(Duration::from_secs(30)),
            max_header_size: 65_536,
            max_connections: 1024,
        }
    }
}

impl HttpLimits {
    /// The limits configured in `[openkeel]`.
    pub fn from_config(c: &openkeel_core::config::OpenkeelSection) -> Self {
        let positive = |v: i64| u64::try_from(v).ok().filter(|v| *v > 0);
        HttpLimits {
            header_read_timeout: positive(c.api_header_read_timeout).map(Duration::from_secs),
            max_header_size: usize::try_from(c.api_max_header_size).unwrap_or(65_536),
            max_connections: usize::try_from(c.api_max_connections)
                .unwrap_or(1024)
                .max(1),
        }
    }
}

/// Serve `app` on `listener` until `shutdown` completes; then stop accepting, let the
/// connections finish their requests in progress (hyper's graceful shutdown) for at most
/// `drain`, and return.
pub async fn serve<L>(
    mut listener: L,
    app: Router,
    limits: HttpLimits,
    shutdown: impl std::future::Future<Output = ()> + Send,
    drain: Duration,
) -> std::io::Result<()>
where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        // A free slot first: beyond the limit, connections wait in the kernel's backlog.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (io, remote) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // Reap the finished connections' tasks as we go.
        while connections.try_join_next().is_some() {}
        let service = app
            .clone()
            .map_request(move |req: http::Request<Incoming>| {
                let mut req = req.map(Body::new);
                req.extensions_mut().insert(ConnectInfo(PeerAddr(remote)));
                req
            });
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .max_buf_size(limits.max_header_size.max(8192))
                .max_header_size(limits.max_header_size);
            let conn =
                builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
            tokio::pin!(conn);
            let stopping = async move {
                loop {
                    let stopped = *stop.borrow_and_update();
                    if stopped || stop.changed().await.is_err() {
                        break;
                    }
                }
            };
            tokio::select! {
                r = conn.as_mut() => log_end(remote, r),
                () = stopping => {
                    conn.as_mut().graceful_shutdown();
                    log_end(remote, conn.await);
                }
            }
            drop(permit);
        });
    }
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(drain, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            left = connections.len(),
            "connections still open after the shutdown's wait; closed"
        );
        connections.shutdown().await;
    }
    Ok(())
}

fn log_end(remote: SocketAddr, result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        // A client that went away, a header timeout, a malformed or oversized request head.
        tracing::debug!(client = %remote, error = %e, "connection closed");
    }
}
