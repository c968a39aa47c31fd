//! The `cluster_template` table. Visibility: the caller's own templates (tenant filter)
//! plus every `public AND NOT hidden` template, plus `public AND hidden` ones for admins.

use openkeel_core::objects::{Cluster, ClusterTemplate, StringMap};

use crate::backend::{retry_on_deadlock, utcnow, Val};
use crate::ident::{identity_filter, Ident};
use crate::record::{self, record, Page, Where};
use crate::rows::{check_update_fields, insert_and_fetch};
use crate::{Database, DbError, Scope};

record!(ClusterTemplate, "cluster_template", [
    created_at: opt_datetime,
    updated_at: opt_datetime,
    id: int,
    uuid: opt_string,
    name: opt_string,
    flavor_id: opt_string,
    keypair_id: opt_string,
    image_id: opt_string,
    external_network_id: opt_string,
    dns_nameserver: opt_string,
    apiserver_port: opt_int,
    project_id: opt_string,
    user_id: opt_string,
    docker_volume_size: opt_int,
    fixed_network: opt_string,
    master_flavor_id: opt_string,
    cluster_distro: opt_string,
    coe: opt_string,
    http_proxy: opt_string,
    https_proxy: opt_string,
    no_proxy: opt_string,
    registry_enabled: opt_bool,
    network_driver: opt_string,
    labels: opt_dict,
    tls_disabled: opt_bool,
    public: opt_bool,
    server_type: opt_string,
    volume_driver: opt_string,
    insecure_registry: opt_string,
    docker_storage_driver: opt_string,
    master_lb_enabled: opt_bool,
    fixed_subnet: opt_string,
    floating_ip_enabled: opt_bool,
    hidden: opt_bool,
    tags: opt_string,
    driver: opt_string,
]);

/// The filters of `_add_cluster_template_filters` (equality; `labels` compares the JSON
/// text). As in Magnum they restrict only the caller's own templates: public templates are
/// unioned in unfiltered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterTemplateFilters {
    pub name: Option<String>,
    pub image_id: Option<String>,
    pub flavor_id: Option<String>,
    pub master_flavor_id: Option<String>,
    pub keypair_id: Option<String>,
    pub external_network_id: Option<String>,
    pub dns_nameserver: Option<String>,
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub labels: Option<StringMap>,
}

impl ClusterTemplateFilters {
    fn apply(&self, w: &mut Where) {
        for (col, v) in [
            ("name", &self.name),
            ("image_id", &self.image_id),
            ("flavor_id", &self.flavor_id),
            ("master_flavor_id", &self.master_flavor_id),
            ("keypair_id", &self.keypair_id),
            ("external_network_id", &self.external_network_id),
            ("dns_nameserver", &self.dns_nameserver),
            ("project_id", &self.project_id),
            ("user_id", &self.user_id),
        ] {
            if let Some(v) = v {
                w.eq(col, v.as_str());
            }
        }
        if let Some(l) = &self.labels {
            w.eq("labels", crate::json::dumps_string_map(l));
        }
    }
}

/// Add `(tenant AND filters) OR (public AND NOT hidden) [OR (public AND hidden) for admins]`
/// to `w` (on the columns of `w`'s table).
pub(crate) fn visible(w: &mut Where, scope: &Scope, filters: &ClusterTemplateFilters) {
    let mut own = w.same_table();
    scope.tenant_filter(&mut own);
    filters.apply(&mut own);
    let (own_sql, args) = own.into_expr();
    let (public, hidden) = (w.col("public"), w.col("hidden"));
    let mut clause = format!("({own_sql} OR ({public} = 1 AND {hidden} = 0)");
    if scope.is_admin {
        clause.push_str(&format!(" OR ({public} = 1 AND {hidden} = 1)"));
    }
    clause.push(')');
    w.raw(clause, args);
}

/// The templates visible in `scope` (no filter), for a look-up to narrow down.
pub(crate) fn visible_to(scope: &Scope) -> Where {
    let mut w = Where::new();
    visible(&mut w, scope, &ClusterTemplateFilters::default());
    w
}

async fn fetch_one(
    db: &Database,
    w: Where,
    ident: &str,
    by_name: bool,
) -> Result<ClusterTemplate, DbError> {
    let mut c = db.acquire().await?;
    let rows = record::select_where::<ClusterTemplate>(&mut c.conn(), &w, false).await?;
    record::one(
        rows,
        || DbError::ClusterTemplateNotFound(ident.to_string()),
        || {
            if by_name {
                DbError::Conflict(
                    "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead."
                        .into(),
                )
            } else {
                DbError::Conflict(format!("Multiple ClusterTemplates match {ident}"))
            }
        },
    )
}

/// `ClusterTemplate.get`: by id when integer-like, by uuid when UUID-like, else by name.
pub async fn get(db: &Database, scope: &Scope, ident: &str) -> Result<ClusterTemplate, DbError> {
    match Ident::parse(ident) {
        Some(Ident::Id(_)) | Some(Ident::Uuid(_)) => {
            let mut w = visible_to(scope);
            identity_filter(&mut w, ident)?;
            fetch_one(db, w, ident, false).await
        }
        None => get_by_name(db, scope, ident).await,
    }
}

/// `get_cluster_template_by_id`.
pub async fn get_by_id(db: &Database, scope: &Scope, id: i64) -> Result<ClusterTemplate, DbError> {
    let mut w = visible_to(scope);
    w.eq("id", id);
    fetch_one(db, w, &id.to_string(), false).await
}

/// `get_cluster_template_by_uuid`.
pub async fn get_by_uuid(
    db: &Database,
    scope: &Scope,
    uuid: &str,
) -> Result<ClusterTemplate, DbError> {
    let mut w = visible_to(scope);
    w.eq("uuid", uuid);
    fetch_one(db, w, uuid, false).await
}

/// The templates of `uuids` visible in `scope`, by uuid, in one query per 10,000 (the
/// conductor's periodic loops: the templates of every cluster of a tick at once). Missing
/// ones are absent from the map.
pub async fn list_by_uuids(
    db: &Database,
    scope: &Scope,
    uuids: &[&str],
) -> Result<std::collections::HashMap<String, ClusterTemplate>, DbError> {
    let mut out = std::collections::HashMap::new();
    let mut c = db.acquire().await?;
    for chunk in uuids.chunks(10_000) {
        let mut w = visible_to(scope);
        w.in_list("uuid", chunk.iter().map(|u| Val::from(*u)).collect());
        for t in record::select_where::<ClusterTemplate>(&mut c.conn(), &w, false).await? {
            if let Some(u) = t.uuid.clone() {
                out.insert(u, t);
            }
        }
    }
    Ok(out)
}

/// `get_cluster_template_by_name`: `Conflict` when several visible templates have the name.
pub async fn get_by_name(
    db: &Database,
    scope: &Scope,
    name: &str,
) -> Result<ClusterTemplate, DbError> {
    let mut w = visible_to(scope);
    w.eq("name", name);
    fetch_one(db, w, name, true).await
}

/// `get_cluster_template_list`.
pub async fn list(
    db: &Database,
    scope: &Scope,
    filters: &ClusterTemplateFilters,
    page: &Page<'_, ClusterTemplate>,
) -> Result<Vec<ClusterTemplate>, DbError> {
    let mut w = Where::new();
    visible(&mut w, scope, filters);
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// `create_cluster_template`: generates a uuid when none is given, fills Magnum's ORM
/// defaults (`registry_enabled`, `tls_disabled`, `public`, `master_lb_enabled`, `hidden`
/// false; `floating_ip_enabled` true; `created_at` now). Duplicate uuid →
/// `ClusterTemplateAlreadyExists`.
pub async fn create(db: &Database, template: &ClusterTemplate) -> Result<ClusterTemplate, DbError> {
    let mut t = template.clone();
    if t.uuid.as_deref().is_none_or(str::is_empty) {
        t.uuid = Some(uuid::Uuid::new_v4().to_string());
    }
    for b in [
        &mut t.registry_enabled,
        &mut t.tls_disabled,
        &mut t.public,
        &mut t.master_lb_enabled,
        &mut t.hidden,
    ] {
        b.get_or_insert(false);
    }
    t.floating_ip_enabled.get_or_insert(true);
    if t.created_at.is_none() {
        t.created_at = Some(utcnow());
    }
    retry_on_deadlock!(insert_and_fetch(db, &t)).map_err(|e| {
        if crate::backend::is_duplicate(&e) {
            DbError::ClusterTemplateAlreadyExists {
                uuid: t.uuid.clone().unwrap_or_default(),
            }
        } else {
            e
        }
    })
}

async fn is_referenced(
    conn: &mut crate::backend::Conn<'_>,
    uuid: &Option<String>,
) -> Result<bool, DbError> {
    let mut w = Where::new();
    w.eq("cluster_template_id", Val::from(uuid.clone()));
    Ok(record::count_where::<Cluster>(conn, &w).await? != 0)
}

/// `destroy_cluster_template` (by id or uuid, not scoped): `ClusterTemplateReferenced` while
/// any cluster uses it.
pub async fn destroy(db: &Database, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(destroy_tx(db, &w, ident))
}

async fn destroy_tx(db: &Database, w: &Where, ident: &str) -> Result<(), DbError> {
    let mut tx = db.begin().await?;
    let r: Result<(), DbError> = async {
        let mut conn = tx.conn();
        let t = record::select_where::<ClusterTemplate>(&mut conn, w, true)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| DbError::ClusterTemplateNotFound(ident.to_string()))?;
        if is_referenced(&mut conn, &t.uuid).await? {
            return Err(DbError::ClusterTemplateReferenced(ident.to_string()));
        }
        record::delete_where::<ClusterTemplate>(&mut conn, w).await?;
        Ok(())
    }
    .await;
    tx.finish(r).await
}

/// `_is_publishing_cluster_template`: exactly one field, which is `public` set to true,
/// `hidden`, or `tags` set to a value.
fn is_publishing(values: &ClusterTemplate, fields: &[&str]) -> bool {
    match fields {
        ["public"] => values.public == Some(true),
        ["hidden"] => true,
        ["tags"] => values.tags.is_some(),
        _ => false,
    }
}

/// `update_cluster_template`: write `fields` of `values` to the template `ident` (id or uuid,
/// not scoped). Changing `uuid` → `InvalidParameterValue`; while a cluster references the
/// template only a rename or a publishing change ([`is_publishing`]) is allowed, else
/// `ClusterTemplateReferenced`.
pub async fn update(
    db: &Database,
    ident: &str,
    values: &ClusterTemplate,
    fields: &[&str],
) -> Result<ClusterTemplate, DbError> {
    let fields = check_update_fields::<ClusterTemplate>(fields, "ClusterTemplate")?;
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(update_tx(db, &w, ident, values, &fields))
}

async fn update_tx(
    db: &Database,
    w: &Where,
    ident: &str,
    values: &ClusterTemplate,
    fields: &[&'static str],
) -> Result<ClusterTemplate, DbError> {
    let mut tx = db.begin().await?;
    let r: Result<_, DbError> = async {
        Ok({
            let mut conn = tx.conn();
            let current = record::select_where::<ClusterTemplate>(&mut conn, w, true)
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| DbError::ClusterTemplateNotFound(ident.to_string()))?;
            if is_referenced(&mut conn, &current.uuid).await?
                && !is_publishing(values, fields)
                && fields != ["name"]
            {
                return Err(DbError::ClusterTemplateReferenced(ident.to_string()));
            }
            if record::update_row(&mut conn, &current, values, fields).await? {
                crate::rows::fetch_by_id_on::<ClusterTemplate>(&mut conn, i64::from(current.id))
                    .await?
            } else {
                current
            }
        })
    }
    .await;
    tx.finish(r).await
}

/// The fields whose values differ between `old` and `new`, for [`update`].
pub fn changed_fields(old: &ClusterTemplate, new: &ClusterTemplate) -> Vec<&'static str> {
    record::changed_columns(old, new)
}
