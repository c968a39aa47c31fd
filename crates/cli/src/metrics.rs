//! The metrics listener: Prometheus' text format at `GET /metrics` on an address of its own
//! (`[openkeel] api_metrics_listen` / `conductor_metrics_listen`), plain HTTP, outside the
//! API's pipeline (no authentication, no request id, no policy). Each scrape encodes the
//! collectors it was given (the API's, the conductor's) and the process's own metrics.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use openkeel_core::metrics::{self, Collector};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::wiring::StartError;

/// A running metrics listener; stopped by [`MetricsServer::stop`] or when dropped.
pub struct MetricsServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

impl MetricsServer {
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            match h.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "metrics listener ended with an error"),
                Err(e) => tracing::warn!(error = %e, "metrics listener task failed"),
            }
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// `address:port` of a `*_metrics_listen` option (`option` names it in the error).
pub fn parse_listen(option: &str, value: &str) -> Result<SocketAddr, StartError> {
    value.trim().parse().map_err(|_| {
        StartError::Unsupported(format!(
            "[openkeel] {option} = {value} is not an address:port (e.g. 127.0.0.1:9611 or [::1]:9611)"
        ))
    })
}

/// The first of `options` (name, value) that is set, parsed.
pub fn listen_address(options: &[(&str, Option<&str>)]) -> Result<Option<SocketAddr>, StartError> {
    for (name, value) in options {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            return parse_listen(name, v).map(Some);
        }
    }
    Ok(None)
}

/// Bind `addr` and serve `collectors` (and the process metrics) at `GET /metrics` until
/// stopped. `what` names the process part in the log line.
pub async fn serve(
    what: &'static str,
    addr: SocketAddr,
    collectors: Vec<Arc<dyn Collector>>,
) -> Result<MetricsServer, StartError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind(addr, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| StartError::Bind(addr, e))?;
    let mut all = collectors;
    all.push(Arc::new(ProcessCollector));
    let app = axum::Router::new()
        .fallback(scrape)
        .with_state(Arc::new(all));
    let (tx, rx) = oneshot::channel::<()>();
    // The API's HTTP server and its default limits: a scraper that stalls is disconnected.
    let handle = tokio::spawn(crate::http_server::serve(
        listener,
        app,
        crate::http_server::HttpLimits::default(),
        async move {
            let _ = rx.await;
        },
        std::time::Duration::from_secs(5),
    ));
    tracing::info!(addr = %bound, what, "metrics listening on /metrics");
    Ok(MetricsServer {
        addr: bound,
        shutdown: Some(tx),
        handle: Some(handle),
    })
}

async fn scrape(
    State(collectors): State<Arc<Vec<Arc<dyn Collector>>>>,
    method: Method,
    uri: axum::http::Uri,
) -> Response {
    if uri.path() != "/metrics" {
        return (
            StatusCode::NOT_FOUND,
            "Not Found: the metrics are at /metrics\n",
        )
            .into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, HEAD")],
            "Method Not Allowed\n",
        )
            .into_response();
    }
    let mut out = String::with_capacity(16 * 1024);
    for c in collectors.iter() {
        c.collect(&mut out).await;
    }
    ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], out).into_response()
}

/// The standard process metrics Prometheus' client libraries export on Linux, the cheap ones:
/// read from `/proc/self` at scrape time (absent where there is no `/proc`).
struct ProcessCollector;

#[async_trait::async_trait]
impl Collector for ProcessCollector {
    async fn collect(&self, out: &mut String) {
        if let Some(rss) = resident_memory_bytes() {
            metrics::encode_gauge_family(
                out,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                &[],
                &[(Vec::new(), rss as f64)],
            );
        }
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            metrics::encode_gauge_family(
                out,
                "process_open_fds",
                "Number of open file descriptors.",
                &[],
                &[(Vec::new(), fds.count() as f64)],
            );
        }
    }
}

/// `VmRSS` of `/proc/self/status` (in kB there).
fn resident_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_are_checked() {
        assert_eq!(
            listen_address(&[("api_metrics_listen", Some("127.0.0.1:9611"))])
                .ok()
                .flatten(),
            Some("127.0.0.1:9611".parse().unwrap_or_else(|_| unreachable!()))
        );
        assert!(matches!(
            listen_address(&[("api_metrics_listen", None), ("conductor_metrics_listen", Some(" [::1]:0 "))]),
            Ok(Some(a)) if a.is_ipv6()
        ));
        assert!(matches!(
            listen_address(&[("a", None), ("b", Some(""))]),
            Ok(None)
        ));
        let err = listen_address(&[("api_metrics_listen", Some("localhost"))])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("[openkeel] api_metrics_listen = localhost"),
            "{err}"
        );
    }

    #[test]
    fn the_resident_memory_is_read_from_proc() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(resident_memory_bytes().is_some_and(|b| b > 0));
        }
    }
}
