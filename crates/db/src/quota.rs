//! The `quotas` table (no tenant filtering: the API checks policy and passes explicit
//! filters).

use openkeel_core::objects::Quota;

use crate::backend::{retry_on_deadlock, utcnow, Val};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_no_id, insert_and_fetch, update_tx};
use crate::{Database, DbError};

record!(Quota, "quotas", [
    id: int,
    created_at: opt_datetime,
    updated_at: opt_datetime,
    project_id: opt_string,
    resource: opt_string,
    hard_limit: int,
]);

/// The filters of `_add_quota_filters`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuotaFilters {
    pub resource: Option<String>,
    pub project_id: Option<String>,
}

fn not_found(project_id: &str, resource: &str) -> DbError {
    DbError::QuotaNotFound {
        msg: format!("project_id {project_id} resource {resource}."),
    }
}

fn project_resource(project_id: &str, resource: &str) -> Where {
    let mut w = Where::new();
    w.eq("project_id", project_id).eq("resource", resource);
    w
}

/// `create_quota`; duplicate (project_id, resource) → `QuotaAlreadyExists`.
pub async fn create(db: &Database, quota: &Quota) -> Result<Quota, DbError> {
    let mut q = quota.clone();
    if q.created_at.is_none() {
        q.created_at = Some(utcnow());
    }
    retry_on_deadlock!(insert_and_fetch(db, &q)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::QuotaAlreadyExists {
                project_id: q.project_id.clone().unwrap_or_else(|| "None".into()),
                resource: q.resource.clone().unwrap_or_else(|| "None".into()),
            }
        } else {
            e
        }
    })
}

/// `get_quota_list`.
pub async fn list(
    db: &Database,
    filters: &QuotaFilters,
    page: &Page<'_, Quota>,
) -> Result<Vec<Quota>, DbError> {
    let mut w = Where::new();
    if let Some(r) = &filters.resource {
        w.eq("resource", r.as_str());
    }
    if let Some(p) = &filters.project_id {
        w.eq("project_id", p.as_str());
    }
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// `get_quota_by_id`: `QuotaNotFound` "quota id <n> .".
pub async fn get_by_id(db: &Database, id: i64) -> Result<Quota, DbError> {
    let mut w = Where::new();
    w.eq("id", id);
    let mut c = db.acquire().await?;
    record::select_where::<Quota>(&mut c.conn(), &w, false)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| DbError::QuotaNotFound {
            msg: format!("quota id {id} ."),
        })
}

/// `get_quota_by_project_id_resource`: `QuotaNotFound` "project_id <p> resource <r>.".
pub async fn get_by_project_id_resource(
    db: &Database,
    project_id: &str,
    resource: &str,
) -> Result<Quota, DbError> {
    let mut c = db.acquire().await?;
    record::select_where::<Quota>(
        &mut c.conn(),
        &project_resource(project_id, resource),
        false,
    )
    .await?
    .into_iter()
    .next()
    .ok_or_else(|| not_found(project_id, resource))
}

/// `quota_get_all_by_project_id`: every quota of a project, in id order.
pub async fn get_all_by_project_id(db: &Database, project_id: &str) -> Result<Vec<Quota>, DbError> {
    let mut w = Where::new();
    w.eq("project_id", project_id);
    let mut c = db.acquire().await?;
    record::select_where::<Quota>(&mut c.conn(), &w, false).await
}

/// `update_quota(project_id, values)`: the row is selected by `project_id` and
/// `values.resource`; `fields` of `values` are written (normally `hard_limit`).
pub async fn update(
    db: &Database,
    project_id: &str,
    values: &Quota,
    fields: &[&str],
) -> Result<Quota, DbError> {
    let fields = check_no_id::<Quota>(fields, "Quota")?;
    let resource = values.resource.clone().unwrap_or_default();
    let mut w = Where::new();
    w.eq("project_id", project_id)
        .eq("resource", Val::from(values.resource.clone()));
    retry_on_deadlock!(update_tx(db, &w, values, &fields, || not_found(
        project_id, &resource
    )))
}

/// `delete_quota(project_id, resource)`.
pub async fn delete(db: &Database, project_id: &str, resource: &str) -> Result<(), DbError> {
    let w = project_resource(project_id, resource);
    let deleted = retry_on_deadlock!(async {
        let mut tx = db.begin().await?;
        let n = record::delete_where::<Quota>(&mut tx.conn(), &w).await;
        tx.finish(n).await
    })?;
    if deleted == 0 {
        return Err(not_found(project_id, resource));
    }
    Ok(())
}
