//! The `federation` table.

use openkeel_core::objects::{Federation, FederationStatus, StringMap};

use crate::backend::{retry_on_deadlock, utcnow, Val};
use crate::ident::{identity_filter, Ident};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_update_fields, insert_and_fetch, update_tx};
use crate::{Database, DbError, Scope};

record!(Federation, "federation", [
    created_at: opt_datetime,
    updated_at: opt_datetime,
    id: int,
    project_id: opt_string,
    uuid: opt_string,
    name: opt_string,
    hostcluster_id: opt_string,
    member_ids: opt_list,
    status: opt_enum,
    status_reason: opt_string,
    properties: opt_dict,
]);

/// The filters of `_add_federation_filters`: equality on `name`, `project_id`,
/// `hostcluster_id`, `member_ids` and `properties` (JSON text equality, i.e. the exact
/// list / dict), `status` IN list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FederationFilters {
    pub name: Option<String>,
    pub project_id: Option<String>,
    pub hostcluster_id: Option<String>,
    pub member_ids: Option<Vec<String>>,
    pub properties: Option<StringMap>,
    pub status: Option<Vec<FederationStatus>>,
}

impl FederationFilters {
    fn apply(&self, w: &mut Where) {
        for (col, v) in [
            ("name", &self.name),
            ("project_id", &self.project_id),
            ("hostcluster_id", &self.hostcluster_id),
        ] {
            if let Some(v) = v {
                w.eq(col, v.as_str());
            }
        }
        if let Some(m) = &self.member_ids {
            w.eq("member_ids", crate::json::dumps_string_list(m));
        }
        if let Some(p) = &self.properties {
            w.eq("properties", crate::json::dumps_string_map(p));
        }
        if let Some(statuses) = &self.status {
            w.in_list(
                "status",
                statuses.iter().map(|s| Val::from(s.as_str())).collect(),
            );
        }
    }
}

fn scoped(scope: &Scope) -> Where {
    let mut w = Where::new();
    scope.tenant_filter(&mut w);
    w
}

async fn fetch_one(
    db: &Database,
    w: Where,
    ident: &str,
    by_name: bool,
) -> Result<Federation, DbError> {
    let mut c = db.acquire().await?;
    let rows = record::select_where::<Federation>(&mut c.conn(), &w, false).await?;
    record::one(
        rows,
        || DbError::FederationNotFound(ident.to_string()),
        || {
            if by_name {
                DbError::Conflict(
                    "Multiple federations exist with same name. Please use the federation uuid instead."
                        .into(),
                )
            } else {
                DbError::Conflict(format!("Multiple federations match {ident}"))
            }
        },
    )
}

/// `Federation.get`: by id or uuid, else `InvalidIdentity`.
pub async fn get(db: &Database, scope: &Scope, ident: &str) -> Result<Federation, DbError> {
    match Ident::parse(ident) {
        Some(_) => {
            let mut w = scoped(scope);
            identity_filter(&mut w, ident)?;
            fetch_one(db, w, ident, false).await
        }
        None => Err(DbError::InvalidIdentity(ident.to_string())),
    }
}

/// `get_federation_by_id`.
pub async fn get_by_id(db: &Database, scope: &Scope, id: i64) -> Result<Federation, DbError> {
    let mut w = scoped(scope);
    w.eq("id", id);
    fetch_one(db, w, &id.to_string(), false).await
}

/// `get_federation_by_uuid`.
pub async fn get_by_uuid(db: &Database, scope: &Scope, uuid: &str) -> Result<Federation, DbError> {
    let mut w = scoped(scope);
    w.eq("uuid", uuid);
    fetch_one(db, w, uuid, false).await
}

/// `get_federation_by_name`: `Conflict` when several visible federations share the name.
pub async fn get_by_name(db: &Database, scope: &Scope, name: &str) -> Result<Federation, DbError> {
    let mut w = scoped(scope);
    w.eq("name", name);
    fetch_one(db, w, name, true).await
}

/// `get_federation_list`.
pub async fn list(
    db: &Database,
    scope: &Scope,
    filters: &FederationFilters,
    page: &Page<'_, Federation>,
) -> Result<Vec<Federation>, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// Count of visible federations matching `filters`. (Magnum's `Federation.get_count_all`
/// calls a DB method that does not exist and fails; this is what it was meant to return.)
pub async fn count(
    db: &Database,
    scope: &Scope,
    filters: &FederationFilters,
) -> Result<i64, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    record::count_where::<Federation>(&mut c.conn(), &w).await
}

/// `create_federation`: generates a uuid when none is given; duplicate →
/// `FederationAlreadyExists`.
pub async fn create(db: &Database, federation: &Federation) -> Result<Federation, DbError> {
    let mut f = federation.clone();
    if f.uuid.as_deref().is_none_or(str::is_empty) {
        f.uuid = Some(uuid::Uuid::new_v4().to_string());
    }
    if f.created_at.is_none() {
        f.created_at = Some(utcnow());
    }
    retry_on_deadlock!(insert_and_fetch(db, &f)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::FederationAlreadyExists {
                uuid: f.uuid.clone().unwrap_or_default(),
            }
        } else {
            e
        }
    })
}

/// `destroy_federation` (by id or uuid, not scoped).
pub async fn destroy(db: &Database, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    let deleted = retry_on_deadlock!(async {
        let mut tx = db.begin().await?;
        let n = record::delete_where::<Federation>(&mut tx.conn(), &w).await;
        tx.finish(n).await
    })?;
    if deleted == 0 {
        return Err(DbError::FederationNotFound(ident.to_string()));
    }
    Ok(())
}

/// `update_federation` (by id or uuid, not scoped); changing `uuid` is refused.
pub async fn update(
    db: &Database,
    ident: &str,
    values: &Federation,
    fields: &[&str],
) -> Result<Federation, DbError> {
    let fields = check_update_fields::<Federation>(fields, "Federation")?;
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(update_tx(db, &w, values, &fields, || {
        DbError::FederationNotFound(ident.to_string())
    }))
}
