//! The service heartbeat (`MagnumServicePeriodicTasks.update_magnum_service`,
//! `magnum/servicegroup/magnum_service_periodic.py`): the conductor's `magnum_service` row is created on the first round
//! (`{host, binary}`, report_count 0) and every round increments `report_count`, which
//! refreshes `last_seen_up`. magnum-api (and OpenKeel's `/v1/mservices`) shows the service
//! `up` while `last_seen_up` is within `[DEFAULT] service_down_time`. It runs whether or not
//! `[DEFAULT] periodic_enable` is set, as in Magnum.

use openkeel_core::error::MagnumError;
use openkeel_core::objects::MagnumService;
use openkeel_db::{magnum_service, Database};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The `binary` of the conductor's row.
pub const CONDUCTOR_BINARY: &str = "magnum-conductor";

/// One heartbeat: find (or create) the row of `(host, binary)` and report it up. `host`
/// `None` is `[DEFAULT] host` unset: the row's host is NULL, as Magnum writes it.
pub async fn report_state(
    db: &Database,
    host: Option<&str>,
    binary: &str,
) -> Result<MagnumService, MagnumError> {
    let existing = match host {
        Some(h) => magnum_service::get_by_host_and_binary(db, h, binary).await?,
        None => magnum_service::list(db, None, &Default::default())
            .await?
            .into_iter()
            .find(|s| s.host.is_none() && s.binary.as_deref() == Some(binary)),
    };
    let row = match existing {
        Some(s) => s,
        None => {
            let new = MagnumService {
                host: host.map(str::to_string),
                binary: Some(binary.to_string()),
                report_count: 0,
                ..MagnumService::default()
            };
            magnum_service::create(db, &new).await?
        }
    };
    Ok(magnum_service::report_state_up(db, &row).await?)
}

/// Run [`report_state`] at once and then every `interval` (Magnum: 60 s) until `shutdown`.
/// A failed round (database away) is logged and retried on the next tick.
pub fn spawn_heartbeat(
    db: Database,
    host: Option<String>,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if *shutdown.borrow() {
                break;
            }
            tokio::select! {
                _ = tick.tick() => {}
                changed = shutdown.changed() => {
                    // a dropped sender is a shutdown too
                    if changed.is_err() || *shutdown.borrow() {
                        break;
                    }
                    continue;
                }
            }
            match report_state(&db, host.as_deref(), CONDUCTOR_BINARY).await {
                Ok(s) => tracing::debug!(
                    task = "update_magnum_service",
                    report_count = s.report_count,
                    "service state reported"
                ),
                Err(e) => tracing::error!(
                    task = "update_magnum_service",
                    error = %e,
                    "could not report the service state"
                ),
            }
        }
    })
}
