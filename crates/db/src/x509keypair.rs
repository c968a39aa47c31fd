//! The `x509keypair` table (certificates stored by the `x509keypair` cert manager).

use openkeel_core::objects::X509KeyPair;

use crate::backend::{retry_on_deadlock, utcnow};
use crate::ident::{identity_filter, Ident};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_update_fields, insert_and_fetch, update_tx};
use crate::{Database, DbError, Scope};

record!(X509KeyPair, "x509keypair", [
    id: int,
    created_at: opt_datetime,
    updated_at: opt_datetime,
    uuid: opt_string,
    certificate: opt_string,
    private_key: opt_string,
    project_id: opt_string,
    user_id: opt_string,
    intermediates: opt_string,
    private_key_passphrase: opt_string,
]);

/// The filters of `_add_x509keypairs_filters`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct X509KeyPairFilters {
    pub project_id: Option<String>,
    pub user_id: Option<String>,
}

fn scoped(scope: &Scope) -> Where {
    let mut w = Where::new();
    scope.tenant_filter(&mut w);
    w
}

async fn fetch_one(db: &Database, w: Where, ident: &str) -> Result<X509KeyPair, DbError> {
    let mut c = db.acquire().await?;
    let rows = record::select_where::<X509KeyPair>(&mut c.conn(), &w, false).await?;
    record::one(
        rows,
        || DbError::X509KeyPairNotFound(ident.to_string()),
        || DbError::Conflict(format!("Multiple key pairs match {ident}")),
    )
}

/// `X509KeyPair.get`: by id or uuid, else `InvalidIdentity`.
pub async fn get(db: &Database, scope: &Scope, ident: &str) -> Result<X509KeyPair, DbError> {
    match Ident::parse(ident) {
        Some(_) => {
            let mut w = scoped(scope);
            identity_filter(&mut w, ident)?;
            fetch_one(db, w, ident).await
        }
        None => Err(DbError::InvalidIdentity(ident.to_string())),
    }
}

/// `get_x509keypair_by_id`.
pub async fn get_by_id(db: &Database, scope: &Scope, id: i64) -> Result<X509KeyPair, DbError> {
    let mut w = scoped(scope);
    w.eq("id", id);
    fetch_one(db, w, &id.to_string()).await
}

/// `get_x509keypair_by_uuid`.
pub async fn get_by_uuid(db: &Database, scope: &Scope, uuid: &str) -> Result<X509KeyPair, DbError> {
    let mut w = scoped(scope);
    w.eq("uuid", uuid);
    fetch_one(db, w, uuid).await
}

/// `get_x509keypair_list`.
pub async fn list(
    db: &Database,
    scope: &Scope,
    filters: &X509KeyPairFilters,
    page: &Page<'_, X509KeyPair>,
) -> Result<Vec<X509KeyPair>, DbError> {
    let mut w = scoped(scope);
    if let Some(p) = &filters.project_id {
        w.eq("project_id", p.as_str());
    }
    if let Some(u) = &filters.user_id {
        w.eq("user_id", u.as_str());
    }
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// `create_x509keypair`: generates a uuid when none is given; duplicate →
/// `X509KeyPairAlreadyExists`.
pub async fn create(db: &Database, keypair: &X509KeyPair) -> Result<X509KeyPair, DbError> {
    let mut k = keypair.clone();
    if k.uuid.as_deref().is_none_or(str::is_empty) {
        k.uuid = Some(uuid::Uuid::new_v4().to_string());
    }
    if k.created_at.is_none() {
        k.created_at = Some(utcnow());
    }
    retry_on_deadlock!(insert_and_fetch(db, &k)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::X509KeyPairAlreadyExists {
                uuid: k.uuid.clone().unwrap_or_default(),
            }
        } else {
            e
        }
    })
}

/// `destroy_x509keypair` (by id or uuid, not scoped).
pub async fn destroy(db: &Database, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    let deleted = retry_on_deadlock!(async {
        let mut tx = db.begin().await?;
        let n = record::delete_where::<X509KeyPair>(&mut tx.conn(), &w).await;
        tx.finish(n).await
    })?;
    if deleted != 1 {
        return Err(DbError::X509KeyPairNotFound(ident.to_string()));
    }
    Ok(())
}

/// `update_x509keypair` (by id or uuid, not scoped); changing `uuid` is refused.
pub async fn update(
    db: &Database,
    ident: &str,
    values: &X509KeyPair,
    fields: &[&str],
) -> Result<X509KeyPair, DbError> {
    let fields = check_update_fields::<X509KeyPair>(fields, "X509KeyPair")?;
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(update_tx(db, &w, values, &fields, || {
        DbError::X509KeyPairNotFound(ident.to_string())
    }))
}
