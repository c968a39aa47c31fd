//! The conductor's Prometheus metrics: RPC messages by method and outcome (recorded by
//! [`crate::rpc_server::ConductorDispatcher`]), driver calls by driver, operation and outcome
//! with their latency (recorded by `Conductor::bounded`, through which every driver call
//! goes), the status-sync sweep's duration (`Conductor::sync_cluster_status`), and the
//! clusters by status, counted by one `GROUP BY` statement at scrape time.

use std::time::Duration;

use openkeel_core::metrics::{self, Collector, CounterVec, HistogramVec};
use openkeel_core::objects::ClusterStatus;
use openkeel_db::Database;
use openkeel_drivers::DriverError;

/// How long a scrape waits for the clusters-by-status count before it leaves the family out.
pub const CLUSTER_COUNT_TIMEOUT: Duration = Duration::from_secs(5);

/// The conductor's metric families (one set per [`crate::Conductor`]).
#[derive(Debug)]
pub struct ConductorMetrics {
    pub rpc_messages: CounterVec,
    pub driver_calls: CounterVec,
    pub driver_duration: HistogramVec,
    pub status_sync_duration: HistogramVec,
}

impl Default for ConductorMetrics {
    fn default() -> Self {
        ConductorMetrics {
            rpc_messages: CounterVec::new(
                "openkeel_conductor_rpc_messages_total",
                "RPC messages (casts and calls) the conductor handled, by method and outcome (ok, or the failure's exception class).",
                &["method", "outcome"],
            ),
            driver_calls: CounterVec::new(
                "openkeel_conductor_driver_calls_total",
                "Driver calls, by driver, operation and outcome (ok, transient, permanent, timeout).",
                &["driver", "operation", "outcome"],
            ),
            driver_duration: HistogramVec::new(
                "openkeel_conductor_driver_call_duration_seconds",
                "Duration of driver calls, by driver and operation.",
                &["driver", "operation"],
                metrics::SLOW_BUCKETS,
            ),
            status_sync_duration: HistogramVec::new(
                "openkeel_conductor_status_sync_duration_seconds",
                "Duration of one status-sync sweep over the clusters in progress.",
                &[],
                metrics::SLOW_BUCKETS,
            ),
        }
    }
}

impl ConductorMetrics {
    /// One RPC message handled: `failure` is the exception class it was answered with.
    pub fn rpc_message(&self, method: &str, failure: Option<&str>) {
        // The method name is the sender's to choose: unknown ones are counted together.
        let method = openkeel_rpc::remote::METHODS
            .iter()
            .find(|m| **m == method)
            .copied()
            .unwrap_or("other");
        self.rpc_messages.inc(&[method, failure.unwrap_or("ok")]);
    }

    /// One driver call that ended (or ran out of time: `timed_out`) after `elapsed`.
    pub fn driver_call<T>(
        &self,
        driver: &str,
        operation: &str,
        result: &Result<T, DriverError>,
        timed_out: bool,
        elapsed: Duration,
    ) {
        let outcome = match result {
            _ if timed_out => "timeout",
            Ok(_) => "ok",
            Err(e) if e.is_transient() => "transient",
            Err(_) => "permanent",
        };
        self.driver_calls.inc(&[driver, operation, outcome]);
        self.driver_duration
            .observe(&[driver, operation], elapsed.as_secs_f64());
    }
}

/// The clusters-by-status family from the database, every known status present (0 when no
/// cluster has it), a cluster without status as `none`.
async fn clusters_by_status(db: &Database, out: &mut String) {
    let counted = tokio::time::timeout(
        CLUSTER_COUNT_TIMEOUT,
        openkeel_db::cluster::count_by_status(db),
    )
    .await;
    let rows = match counted {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: cannot count the clusters by status");
            return;
        }
        Err(_) => {
            tracing::warn!(
                timeout_s = CLUSTER_COUNT_TIMEOUT.as_secs(),
                "metrics: counting the clusters by status timed out"
            );
            return;
        }
    };
    let mut series: Vec<(Vec<String>, f64)> = ClusterStatus::ALL
        .iter()
        .map(|s| (vec![s.as_str().to_string()], 0.0))
        .collect();
    for (status, n) in rows {
        let status = status.unwrap_or_else(|| "none".to_string());
        match series.iter_mut().find(|(k, _)| k[0] == status) {
            Some((_, v)) => *v += n as f64,
            None => series.push((vec![status], n as f64)),
        }
    }
    metrics::encode_gauge_family(
        out,
        "openkeel_conductor_clusters",
        "Clusters in the database by status (the whole database: every conductor reports the same numbers).",
        &["status"],
        &series,
    );
}

/// What the metrics listener scrapes of one conductor.
pub struct ConductorCollector {
    metrics: std::sync::Arc<ConductorMetrics>,
    db: Database,
}

impl ConductorCollector {
    pub fn new(conductor: &crate::Conductor) -> Self {
        ConductorCollector {
            metrics: conductor.metrics().clone(),
            db: conductor.db().clone(),
        }
    }
}

#[async_trait::async_trait]
impl Collector for ConductorCollector {
    async fn collect(&self, out: &mut String) {
        let m = &self.metrics;
        m.rpc_messages.encode(out);
        m.driver_calls.encode(out);
        m.driver_duration.encode(out);
        m.status_sync_duration.encode(out);
        clusters_by_status(&self.db, out).await;
    }
}
