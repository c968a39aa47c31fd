//! The `magnum_service` table (service heartbeats).

use openkeel_core::objects::MagnumService;

use crate::backend::{retry_on_deadlock, utcnow, Val};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_no_id, fetch_by_id_on, insert_and_fetch};
use crate::{Database, DbError};

record!(MagnumService, "magnum_service", [
    created_at: opt_datetime,
    updated_at: opt_datetime,
    id: int,
    report_count: int,
    host: opt_string,
    binary: opt_string,
    disabled: opt_bool,
    disabled_reason: opt_string,
    last_seen_up: opt_datetime,
    forced_down: opt_bool,
]);

fn host_binary(host: &str, binary: &str) -> Where {
    let mut w = Where::new();
    w.eq("host", host).eq("binary", binary);
    w
}

/// `get_magnum_service_by_host_and_binary`: `None` when there is no such row.
pub async fn get_by_host_and_binary(
    db: &Database,
    host: &str,
    binary: &str,
) -> Result<Option<MagnumService>, DbError> {
    let mut c = db.acquire().await?;
    Ok(
        record::select_where::<MagnumService>(&mut c.conn(), &host_binary(host, binary), false)
            .await?
            .into_iter()
            .next(),
    )
}

/// `get_magnum_service_list`. As in Magnum, `disabled` filters only when it is `Some(true)`.
pub async fn list(
    db: &Database,
    disabled: Option<bool>,
    page: &Page<'_, MagnumService>,
) -> Result<Vec<MagnumService>, DbError> {
    let mut w = Where::new();
    if disabled == Some(true) {
        w.eq("disabled", true);
    }
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// `create_magnum_service`: `report_count` as given (0 by default), `disabled` and
/// `forced_down` default to false. When a row for (host, binary) already exists it is
/// returned instead (Magnum logs a warning and does the same).
pub async fn create(db: &Database, service: &MagnumService) -> Result<MagnumService, DbError> {
    let mut s = service.clone();
    s.disabled.get_or_insert(false);
    s.forced_down.get_or_insert(false);
    if s.created_at.is_none() {
        s.created_at = Some(utcnow());
    }
    match retry_on_deadlock!(insert_and_fetch(db, &s)) {
        Err(e) if crate::backend::is_duplicate(&e) => {
            let host = s.host.clone().unwrap_or_default();
            let binary = s.binary.clone().unwrap_or_default();
            tracing::warn!(
                "Magnum service with same host:{host} and binary:{binary} had been saved into DB"
            );
            let mut w = Where::new();
            w.eq("host", Val::from(s.host.clone()))
                .eq("binary", Val::from(s.binary.clone()));
            let mut c = db.acquire().await?;
            record::select_where::<MagnumService>(&mut c.conn(), &w, false)
                .await?
                .into_iter()
                .next()
                .ok_or(e)
        }
        other => other,
    }
}

/// `destroy_magnum_service` (by id).
pub async fn destroy(db: &Database, id: i32) -> Result<(), DbError> {
    let mut w = Where::new();
    w.eq("id", id);
    let deleted = retry_on_deadlock!(async {
        let mut tx = db.begin().await?;
        let n = record::delete_where::<MagnumService>(&mut tx.conn(), &w).await;
        tx.finish(n).await
    })?;
    if deleted != 1 {
        return Err(DbError::MagnumServiceNotFound(id.to_string()));
    }
    Ok(())
}

/// `update_magnum_service` (by id): when `report_count` is among `fields` and greater than
/// the stored one, `last_seen_up` is set to now.
pub async fn update(
    db: &Database,
    id: i32,
    values: &MagnumService,
    fields: &[&str],
) -> Result<MagnumService, DbError> {
    let fields = check_no_id::<MagnumService>(fields, "MagnumService")?;
    retry_on_deadlock!(update_tx(db, id, values, &fields))
}

async fn update_tx(
    db: &Database,
    id: i32,
    values: &MagnumService,
    fields: &[&'static str],
) -> Result<MagnumService, DbError> {
    let mut w = Where::new();
    w.eq("id", id);
    let mut tx = db.begin().await?;
    let r: Result<_, DbError> = async {
        Ok({
            let mut conn = tx.conn();
            let current = record::select_where::<MagnumService>(&mut conn, &w, true)
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| DbError::MagnumServiceNotFound(id.to_string()))?;
            let mut values = values.clone();
            let mut fields = fields.to_vec();
            if fields.contains(&"report_count") && values.report_count > current.report_count {
                values.last_seen_up = Some(utcnow());
                if !fields.contains(&"last_seen_up") {
                    fields.push("last_seen_up");
                }
            }
            if record::update_row(&mut conn, &current, &values, &fields).await? {
                fetch_by_id_on::<MagnumService>(&mut conn, i64::from(id)).await?
            } else {
                current
            }
        })
    }
    .await;
    tx.finish(r).await
}

/// `MagnumService.report_state_up`: increment `report_count` (which also refreshes
/// `last_seen_up`) and return the updated row.
pub async fn report_state_up(
    db: &Database,
    service: &MagnumService,
) -> Result<MagnumService, DbError> {
    let mut s = service.clone();
    s.report_count = s.report_count.saturating_add(1);
    update(db, service.id, &s, &["report_count"]).await
}
