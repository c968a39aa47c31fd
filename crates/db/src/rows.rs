//! The row helpers every table module shares: insert and read back, read a row by id inside a
//! transaction, Magnum's refusals of `update_*` fields, and the select-for-update / write /
//! read-back transaction of an update.

use crate::backend::{Conn, Val};
use crate::record::{self, Record, Where};
use crate::{Database, DbError};

/// Insert `record` and return the stored row (with its `id`, defaults and timestamps), in one
/// transaction.
pub(crate) async fn insert_and_fetch<T: Record>(db: &Database, record: &T) -> Result<T, DbError> {
    let mut tx = db.begin().await?;
    let r: Result<_, DbError> = async {
        Ok({
            let mut conn = tx.conn();
            let id = record::insert(&mut conn, record).await?;
            fetch_by_id_on::<T>(&mut conn, id).await?
        })
    }
    .await;
    tx.finish(r).await
}

/// The row of `T` whose `id` is `id`, on `conn` (inside the caller's transaction).
pub(crate) async fn fetch_by_id_on<T: Record>(conn: &mut Conn<'_>, id: i64) -> Result<T, DbError> {
    let mut w = Where::new();
    w.eq("id", id);
    record::select_where::<T>(conn, &w, false)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| DbError::SchemaState(format!("row {id} of {} vanished", T::TABLE)))
}

/// The refusals of Magnum's `update_*`: no `uuid` ("Cannot overwrite UUID for an existing
/// <Kind>."), and no `id`.
pub(crate) fn check_update_fields<T: Record>(
    fields: &[&str],
    kind: &str,
) -> Result<Vec<&'static str>, DbError> {
    if fields.contains(&"uuid") {
        return Err(DbError::InvalidParameterValue(format!(
            "Cannot overwrite UUID for an existing {kind}."
        )));
    }
    check_no_id::<T>(fields, kind)
}

/// Magnum's refusal of `id` among the fields of an `update_*`.
pub(crate) fn check_no_id<T: Record>(
    fields: &[&str],
    kind: &str,
) -> Result<Vec<&'static str>, DbError> {
    if fields.contains(&"id") {
        return Err(DbError::InvalidParameterValue(format!(
            "Cannot overwrite ID for an existing {kind}."
        )));
    }
    record::check_fields::<T>(fields)
}

/// Select the single row matching `w` for update, write `fields`, return the new row.
pub(crate) async fn update_tx<T: Record>(
    db: &Database,
    w: &Where,
    values: &T,
    fields: &[&'static str],
    not_found: impl Fn() -> DbError,
) -> Result<T, DbError> {
    let mut tx = db.begin().await?;
    let r: Result<_, DbError> = async {
        Ok({
            let mut conn = tx.conn();
            let current = record::select_where::<T>(&mut conn, w, true)
                .await?
                .into_iter()
                .next()
                .ok_or_else(&not_found)?;
            if record::update_row(&mut conn, &current, values, fields).await? {
                let id = match current.get("id") {
                    Some(Val::Int(id)) => id,
                    _ => 0,
                };
                fetch_by_id_on::<T>(&mut conn, id).await?
            } else {
                current
            }
        })
    }
    .await;
    tx.finish(r).await
}
