//! The `cluster` table (`magnum/db/sqlalchemy/api.py` cluster functions).

use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup, Stats};

use crate::backend::{retry_on_deadlock, utcnow, Val};
use crate::ident::{identity_filter, Ident};
use crate::record::{self, q, record, Page, Record, Where};
use crate::rows::{check_update_fields, fetch_by_id_on, insert_and_fetch, update_tx};
use crate::{nodegroup, Database, DbError, Scope};

record!(Cluster, "cluster", [
    created_at: opt_datetime,
    updated_at: opt_datetime,
    id: int,
    uuid: opt_string,
    name: opt_string,
    cluster_template_id: opt_string,
    api_address: opt_string,
    stack_id: opt_string,
    project_id: opt_string,
    user_id: opt_string,
    status: opt_enum,
    discovery_url: opt_string,
    status_reason: opt_string,
    ca_cert_ref: opt_string,
    magnum_cert_ref: opt_string,
    create_timeout: opt_int,
    coe_version: opt_string,
    container_version: opt_string,
    keypair: opt_string,
    docker_volume_size: opt_int,
    labels: opt_dict,
    master_flavor_id: opt_string,
    flavor_id: opt_string,
    health_status: opt_enum,
    health_status_reason: opt_dict,
    fixed_network: opt_string,
    fixed_subnet: opt_string,
    floating_ip_enabled: opt_bool,
    master_lb_enabled: opt_bool,
    etcd_ca_cert_ref: opt_string,
    front_proxy_ca_cert_ref: opt_string,
]);

/// The filters of `_add_clusters_filters`: equality on the given columns, `status` IN list,
/// and `node_count` / `master_count` = the sum of the cluster's non-master / master
/// nodegroups' `node_count`.
///
/// (Magnum also lists `node_addresses`, which is no longer a `cluster` column: filtering on it
/// fails in Magnum, so it is not offered.)
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterFilters {
    pub cluster_template_id: Option<String>,
    pub name: Option<String>,
    pub stack_id: Option<String>,
    pub api_address: Option<String>,
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub status: Option<Vec<ClusterStatus>>,
    pub node_count: Option<i64>,
    pub master_count: Option<i64>,
}

impl ClusterFilters {
    /// Clusters in any of `statuses`.
    pub fn status(statuses: &[ClusterStatus]) -> Self {
        ClusterFilters {
            status: Some(statuses.to_vec()),
            ..Self::default()
        }
    }

    fn apply(&self, w: &mut Where) {
        for (col, v) in [
            ("cluster_template_id", &self.cluster_template_id),
            ("name", &self.name),
            ("stack_id", &self.stack_id),
            ("api_address", &self.api_address),
            ("project_id", &self.project_id),
            ("user_id", &self.user_id),
        ] {
            if let Some(v) = v {
                w.eq(col, v.as_str());
            }
        }
        if let Some(statuses) = &self.status {
            w.in_list(
                "status",
                statuses.iter().map(|s| Val::from(s.as_str())).collect(),
            );
        }
        for (count, master) in [(self.node_count, false), (self.master_count, true)] {
            if let Some(n) = count {
                let role = if master { "= 'master'" } else { "!= 'master'" };
                w.raw(
                    format!(
                        "{uuid} IN (SELECT {cid} FROM {ng} WHERE {role_col} {role} GROUP BY {cid} HAVING SUM({nc}) = ?)",
                        uuid = q("uuid"),
                        cid = q("cluster_id"),
                        ng = q("nodegroup"),
                        role_col = q("role"),
                        nc = q("node_count"),
                    ),
                    vec![Val::Int(n)],
                );
            }
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
) -> Result<Cluster, DbError> {
    let mut c = db.acquire().await?;
    let rows = record::select_where::<Cluster>(&mut c.conn(), &w, false).await?;
    record::one(
        rows,
        || DbError::ClusterNotFound(ident.to_string()),
        || multiple(ident, by_name),
    )
}

/// The `Conflict` of a look-up that found several clusters.
fn multiple(ident: &str, by_name: bool) -> DbError {
    if by_name {
        DbError::Conflict(
            "Multiple clusters exist with same name. Please use the cluster uuid instead.".into(),
        )
    } else {
        DbError::Conflict(format!("Multiple clusters match {ident}"))
    }
}

/// `Cluster.get`: by id when `ident` is integer-like, by uuid when UUID-like, else
/// `InvalidIdentity`.
pub async fn get(db: &Database, scope: &Scope, ident: &str) -> Result<Cluster, DbError> {
    match Ident::parse(ident) {
        Some(Ident::Id(_)) | Some(Ident::Uuid(_)) => {
            let mut w = scoped(scope);
            identity_filter(&mut w, ident)?;
            fetch_one(db, w, ident, false).await
        }
        None => Err(DbError::InvalidIdentity(ident.to_string())),
    }
}

/// `get_cluster_by_id`.
pub async fn get_by_id(db: &Database, scope: &Scope, id: i64) -> Result<Cluster, DbError> {
    let mut w = scoped(scope);
    w.eq("id", id);
    fetch_one(db, w, &id.to_string(), false).await
}

/// `get_cluster_by_uuid`.
pub async fn get_by_uuid(db: &Database, scope: &Scope, uuid: &str) -> Result<Cluster, DbError> {
    let mut w = scoped(scope);
    w.eq("uuid", uuid);
    fetch_one(db, w, uuid, false).await
}

/// The filter of `api_utils.get_resource('Cluster', ident)` on the cluster table aliased
/// `alias` (none: `""`): by uuid when `ident` is UUID-like, else by name; whether it is by
/// name.
fn by_ident(scope: &Scope, ident: &str, alias: &'static str) -> (Where, bool) {
    let by_name = !crate::ident::is_uuid_like(ident);
    let mut w = Where::on(alias);
    scope.tenant_filter(&mut w);
    w.eq(if by_name { "name" } else { "uuid" }, ident);
    (w, by_name)
}

/// `api_utils.get_resource('Cluster', ident)`: [`get_by_uuid`] when `ident` is UUID-like,
/// else [`get_by_name`].
pub async fn get_by_ident(db: &Database, scope: &Scope, ident: &str) -> Result<Cluster, DbError> {
    let (w, by_name) = by_ident(scope, ident, "");
    fetch_one(db, w, ident, by_name).await
}

/// The columns of a cluster's nodegroups its full view reads (besides `id`): its node and
/// master counts and addresses, and the `faults` of a failed cluster. The other 15 are
/// not selected by [`get_with_relations`]: on MariaDB they were a quarter of a show's
/// result columns, each described again on the wire at every execution.
pub const VIEWED_NODEGROUP_COLUMNS: &[&str] = &[
    "name",
    "node_addresses",
    "node_count",
    "role",
    "is_default",
    "status",
    "status_reason",
];

/// A cluster with what its full view reads, found as [`get_by_ident`] finds it.
pub struct ClusterWithRelations {
    pub cluster: Cluster,
    /// Its nodegroups, as `nodegroup::list` with no filter gives them (id order), with only
    /// `id` and the [`VIEWED_NODEGROUP_COLUMNS`] read (the other fields at their defaults).
    pub nodegroups: Result<Vec<NodeGroup>, DbError>,
    /// What the view reads of its template, found as `cluster_template::get_by_uuid` finds
    /// it.
    pub template: Result<TemplateLabels, DbError>,
}

/// A cluster's template as a cluster's full view reads it: its labels (for
/// `labels_overridden`, `labels_added` and `labels_skipped`). Only these columns are
/// selected: on MariaDB every column of a result costs its definition on the wire at every
/// execution, and the template's other 44 were two fifths of a show's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateLabels {
    pub uuid: String,
    pub labels: Option<openkeel_core::objects::StringMap>,
}

/// The statement of [`get_with_relations`] up to its conditions, and its three tables'
/// columns, built once.
struct ShowQuery {
    /// `SELECT <c's, n's and t's columns> FROM cluster AS c LEFT JOIN nodegroup AS n ON `.
    head: String,
    /// ` LEFT JOIN cluster_template AS t ON `.
    template_join: String,
    cluster: record::Joined<Cluster>,
    nodegroup: record::Joined<NodeGroup>,
    template: record::Joined<ClusterTemplate>,
}

fn show_query() -> &'static ShowQuery {
    static QUERY: std::sync::OnceLock<ShowQuery> = std::sync::OnceLock::new();
    QUERY.get_or_init(|| {
        // in the select list's order
        let cluster = record::Joined::<Cluster>::new("c");
        let nodegroup =
            record::Joined::<NodeGroup>::only("n", VIEWED_NODEGROUP_COLUMNS).after(&cluster);
        let template =
            record::Joined::<ClusterTemplate>::only("t", &["uuid", "labels"]).after(&nodegroup);
        ShowQuery {
            head: format!(
                "SELECT {}, {}, {} FROM {} AS c LEFT JOIN {} AS n ON ",
                cluster.select,
                nodegroup.select,
                template.select,
                q(Cluster::TABLE),
                q(NodeGroup::TABLE),
            ),
            template_join: format!(" LEFT JOIN {} AS t ON ", q(ClusterTemplate::TABLE)),
            cluster,
            nodegroup,
            template,
        }
    })
}

/// The cluster `ident` and its nodegroups and template in one statement: the cluster as
/// [`get_by_ident`] finds it, left-joined to its nodegroups with `nodegroup::list`'s
/// scoping and to its template with `cluster_template::get_by_uuid`'s visibility, each in its
/// join's `ON` (so that a cluster without visible nodegroups or template still comes back).
/// The statement has no `ORDER BY` (on MariaDB, sorting the join cost a temporary table and
/// more than the three statements it replaces): the nodegroups are put in id order here.
/// The nodegroups' and template's results are left for the caller to look at in Magnum's
/// order (after its policy check on the cluster).
pub async fn get_with_relations(
    db: &Database,
    scope: &Scope,
    ident: &str,
) -> Result<ClusterWithRelations, DbError> {
    let query = show_query();
    let (cw, by_name) = by_ident(scope, ident, "c");
    let mut nw = Where::on("n");
    nw.raw(
        [nw.col("cluster_id"), " = ".into(), cw.col("uuid")].concat(),
        Vec::new(),
    );
    scope.nodegroup_filter(&mut nw);
    let mut tw = Where::on("t");
    tw.raw(
        [tw.col("uuid"), " = ".into(), cw.col("cluster_template_id")].concat(),
        Vec::new(),
    );
    crate::cluster_template::visible(&mut tw, scope, &Default::default());
    let (n_on, n_args) = nw.into_expr();
    let (t_on, t_args) = tw.into_expr();
    let sql = [
        query.head.as_str(),
        &n_on,
        &query.template_join,
        &t_on,
        &cw.sql(),
    ]
    .concat();
    let mut args = n_args;
    args.extend(t_args);
    args.extend_from_slice(cw.args());

    // A read connection lost since its last use (MariaDB restarted, the network cut it):
    // once more on a new one, a read can be repeated.
    let ShowRows {
        cluster,
        several,
        template,
        nodegroups,
    } = match read_show(db, query, &sql, &args).await {
        Err(e) if e.is_lost_connection() => {
            tracing::info!(error = %e, "read connection lost; reading again on a new one");
            read_show(db, query, &sql, &args).await
        }
        r => r,
    }?;
    let cluster = match cluster {
        None => return Err(DbError::ClusterNotFound(ident.to_string())),
        Some(_) if several => return Err(multiple(ident, by_name)),
        Some(c) => c,
    };
    let nodegroups = nodegroups.map(|mut list| {
        list.sort_unstable_by_key(|n| n.id);
        list
    });
    let template = template.and_then(|t| {
        t.ok_or_else(|| {
            DbError::ClusterTemplateNotFound(
                cluster.cluster_template_id.clone().unwrap_or_default(),
            )
        })
    });
    Ok(ClusterWithRelations {
        cluster,
        nodegroups,
        template,
    })
}

/// What [`get_with_relations`]'s statement returned, before its checks.
struct ShowRows {
    cluster: Option<Cluster>,
    /// Rows of more than one cluster (several visible ones have the name).
    several: bool,
    template: Result<Option<TemplateLabels>, DbError>,
    nodegroups: Result<Vec<NodeGroup>, DbError>,
}

/// Run the show's statement on a read connection. One row per visible nodegroup of the
/// cluster (one with the nodegroup's columns NULL when it has none), each with the cluster's
/// and the template's columns (NULL when the template is gone or not visible; `uuid` is
/// unique, so there is at most one). Rows of several clusters when several visible ones
/// have the name.
async fn read_show(
    db: &Database,
    query: &ShowQuery,
    sql: &str,
    args: &[Val],
) -> Result<ShowRows, DbError> {
    let mut out = ShowRows {
        cluster: None,
        several: false,
        template: Ok(None),
        nodegroups: Ok(Vec::new()),
    };
    let mut c = db.acquire_read().await?;
    c.conn()
        .fetch_each(sql, args, |row| {
            match &out.cluster {
                None => {
                    query.cluster.check(row)?;
                    query.nodegroup.check(row)?;
                    query.template.check(row)?;
                    out.cluster = query.cluster.decode(row)?;
                    out.template = query.template.decode(row).map(|t| {
                        t.map(|t| TemplateLabels {
                            uuid: t.uuid.unwrap_or_default(),
                            labels: t.labels,
                        })
                    });
                }
                Some(first) => {
                    if query.cluster.id(row)? != Some(first.id) {
                        out.several = true;
                        return Ok(());
                    }
                }
            }
            if let Ok(list) = &mut out.nodegroups {
                match query.nodegroup.decode(row) {
                    Ok(Some(n)) => list.push(n),
                    Ok(None) => {}
                    Err(e) => out.nodegroups = Err(e),
                }
            }
            Ok(())
        })
        .await?;
    Ok(out)
}

/// `get_cluster_by_name`: `Conflict` when several visible clusters have that name.
pub async fn get_by_name(db: &Database, scope: &Scope, name: &str) -> Result<Cluster, DbError> {
    let mut w = scoped(scope);
    w.eq("name", name);
    fetch_one(db, w, name, true).await
}

/// `get_cluster_list`.
pub async fn list(
    db: &Database,
    scope: &Scope,
    filters: &ClusterFilters,
    page: &Page<'_, Cluster>,
) -> Result<Vec<Cluster>, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    record::select_page(&mut c.conn(), w, page).await
}

/// [`list`] plus each cluster's nodegroups (what Magnum's `cluster.nodegroups` returns:
/// `NodeGroup.list(context, cluster.uuid)` with nodegroup scoping, in id order), in exactly
/// two queries.
pub async fn list_with_nodegroups(
    db: &Database,
    scope: &Scope,
    filters: &ClusterFilters,
    page: &Page<'_, Cluster>,
) -> Result<Vec<(Cluster, Vec<NodeGroup>)>, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    let mut conn = c.conn();
    let clusters = record::select_page(&mut conn, w, page).await?;
    let uuids: Vec<&str> = clusters.iter().filter_map(|c| c.uuid.as_deref()).collect();
    let mut groups = nodegroup::for_clusters_on(&mut conn, scope, &uuids).await?;
    Ok(clusters
        .into_iter()
        .map(|c| {
            let ngs = c
                .uuid
                .as_deref()
                .and_then(|u| groups.remove(u))
                .unwrap_or_default();
            (c, ngs)
        })
        .collect())
}

/// [`list_with_nodegroups`] for the API's cluster lists: the nodegroups carry only
/// `cluster_id`, `role`, `node_count`, `node_addresses` and `is_default` (what the list views
/// read: node and master counts and addresses). Same two statements.
pub async fn list_with_node_summaries(
    db: &Database,
    scope: &Scope,
    filters: &ClusterFilters,
    page: &Page<'_, Cluster>,
) -> Result<Vec<(Cluster, Vec<NodeGroup>)>, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    let mut conn = c.conn();
    let clusters = record::select_page(&mut conn, w, page).await?;
    let uuids: Vec<&str> = clusters.iter().filter_map(|c| c.uuid.as_deref()).collect();
    let mut groups = nodegroup::summaries_for_clusters_on(&mut conn, scope, &uuids).await?;
    Ok(clusters
        .into_iter()
        .map(|c| {
            let ngs = c
                .uuid
                .as_deref()
                .and_then(|u| groups.remove(u))
                .unwrap_or_default();
            (c, ngs)
        })
        .collect())
}

/// A page of clusters read for rendering, one row at a time: the page's keys, its
/// nodegroup summaries (as [`list_with_node_summaries`]) and its templates' labels are read
/// first, then [`ClusterPageReader::for_each`] streams the clusters themselves, so that a
/// page of decoded clusters never exists at once (docs/performance.md, memory). All reads
/// run in one read transaction on one connection: one consistent snapshot, and no second
/// connection (an in-memory SQLite database has only one).
pub struct ClusterPageReader {
    tx: crate::backend::Tx,
    sql: String,
    args: Vec<Val>,
    keys: usize,
    groups: std::collections::HashMap<String, Vec<nodegroup::NodeSummary>>,
    templates: Vec<(String, Option<openkeel_core::objects::StringMap>)>,
}

/// Open a [`ClusterPageReader`] on the page `page` of the clusters visible in `scope`
/// matching `filters`. Each distinct template of the page is looked up with the caller's
/// visibility (Magnum's template prefetch): an invisible one fails the whole list with
/// `ClusterTemplateNotFound`, as in Magnum.
pub async fn read_page(
    db: &Database,
    scope: &Scope,
    filters: &ClusterFilters,
    page: &Page<'_, Cluster>,
) -> Result<ClusterPageReader, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let p = record::paginate(page, "")?;
    if let Some((cond, args)) = p.marker {
        w.raw(cond, args);
    }
    let where_sql = w.sql();
    let args = w.args().to_vec();
    let mut tx = db.begin_read().await?;
    let result = async {
        let mut conn = tx.conn();
        let key_sql = format!(
            "SELECT {}, {} FROM {}{}{}",
            q("uuid"),
            q("cluster_template_id"),
            q(Cluster::TABLE),
            where_sql,
            p.tail
        );
        let mut uuids: Vec<String> = Vec::new();
        let mut template_ids: Vec<String> = Vec::new();
        conn.fetch_each(&key_sql, &args, |r| {
            if let Some(u) = r.opt_string(0)? {
                uuids.push(u);
            }
            if let Some(t) = r.opt_string(1)?.filter(|t| !t.is_empty()) {
                if !template_ids.contains(&t) {
                    template_ids.push(t);
                }
            }
            Ok(())
        })
        .await?;
        let keys = uuids.len();
        let refs: Vec<&str> = uuids.iter().map(String::as_str).collect();
        let groups = nodegroup::compact_summaries_for_clusters_on(&mut conn, scope, &refs).await?;
        drop(refs);
        drop(uuids);
        let mut templates = Vec::with_capacity(template_ids.len());
        for tid in template_ids {
            let mut tw = crate::cluster_template::visible_to(scope);
            tw.eq("uuid", tid.as_str());
            let rows = record::select_where::<ClusterTemplate>(&mut conn, &tw, false).await?;
            let t = record::one(
                rows,
                || DbError::ClusterTemplateNotFound(tid.clone()),
                || DbError::Conflict(format!("Multiple ClusterTemplates match {tid}")),
            )?;
            templates.push((tid, t.labels));
        }
        Ok::<_, DbError>((keys, groups, templates))
    }
    .await;
    match result {
        Ok((keys, groups, templates)) => Ok(ClusterPageReader {
            tx,
            sql: format!("{}{}{}", record::select_all::<Cluster>(), where_sql, p.tail),
            args,
            keys,
            groups,
            templates,
        }),
        Err(e) => {
            let _ = tx.rollback().await;
            Err(e)
        }
    }
}

impl ClusterPageReader {
    /// How many clusters the page has.
    pub fn len(&self) -> usize {
        self.keys
    }

    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    /// The labels of the page's templates, by template uuid.
    pub fn template_labels(&self, uuid: &str) -> Option<&openkeel_core::objects::StringMap> {
        self.templates
            .iter()
            .find(|(t, _)| t == uuid)
            .and_then(|(_, l)| l.as_ref())
    }

    /// Stream the page: `f(cluster, its nodegroups, its template's labels)` for each cluster
    /// in page order, as its row arrives.
    pub async fn for_each(
        self,
        mut f: impl FnMut(
            Cluster,
            Vec<NodeGroup>,
            Option<&openkeel_core::objects::StringMap>,
        ) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        let ClusterPageReader {
            mut tx,
            sql,
            args,
            keys,
            mut groups,
            templates,
        } = self;
        if keys == 0 {
            return tx.finish(Ok(())).await;
        }
        let result = {
            let mut conn = tx.conn();
            let mut decode = record::rows_of::<Cluster>();
            conn.fetch_each(&sql, &args, |r| {
                let c = decode(r)?;
                let ngs = c
                    .uuid
                    .as_deref()
                    .and_then(|u| {
                        let summaries = groups.remove(u)?;
                        Some(
                            summaries
                                .into_iter()
                                .map(|s| s.into_nodegroup(u))
                                .collect::<Vec<_>>(),
                        )
                    })
                    .unwrap_or_default();
                let labels = c.cluster_template_id.as_deref().and_then(|tid| {
                    templates
                        .iter()
                        .find(|(t, _)| t == tid)
                        .and_then(|(_, l)| l.as_ref())
                });
                f(c, ngs, labels)
            })
            .await
        };
        tx.finish(result).await
    }
}

/// `get_cluster_count_all`: visible clusters matching `filters`.
pub async fn count(db: &Database, scope: &Scope, filters: &ClusterFilters) -> Result<i64, DbError> {
    let mut w = scoped(scope);
    filters.apply(&mut w);
    let mut c = db.acquire().await?;
    record::count_where::<Cluster>(&mut c.conn(), &w).await
}

/// The number of `scope`'s clusters and how many of them are among `uuids`, from one
/// statement (so both of one snapshot: a row inserted meanwhile is in both or in neither).
pub async fn count_among(
    db: &Database,
    scope: &Scope,
    uuids: &[String],
) -> Result<(i64, i64), DbError> {
    let w = scoped(scope);
    let mut args: Vec<Val> = Vec::with_capacity(uuids.len() + w.args().len());
    let among = if uuids.is_empty() {
        "0".to_string()
    } else {
        args.extend(uuids.iter().map(|u| Val::from(u.as_str())));
        let marks = vec!["?"; uuids.len()].join(", ");
        let sum = format!(
            "SUM(CASE WHEN {} IN ({marks}) THEN 1 ELSE 0 END)",
            q("uuid")
        );
        match db.backend() {
            crate::Backend::MySql => format!("CAST({sum} AS SIGNED)"),
            crate::Backend::Sqlite => sum,
        }
    };
    args.extend(w.args().iter().cloned());
    let sql = format!("SELECT COUNT(*), {among} FROM {}{}", q("cluster"), w.sql());
    let mut c = db.acquire().await?;
    let rows = c.conn().fetch_all(&sql, &args).await?;
    let row = rows.first();
    let count = row
        .map(|r| r.opt_i64(0))
        .transpose()?
        .flatten()
        .unwrap_or(0);
    let found = row
        .map(|r| r.opt_i64(1))
        .transpose()?
        .flatten()
        .unwrap_or(0);
    Ok((count, found))
}

/// `get_cluster_stats`: the number of clusters and the sum of all nodegroups' `node_count`
/// (masters included, 0 when there are none), of `project_id` when given (and not empty),
/// else of everything. Not scoped by the caller (the API checks policy first).
pub async fn stats(db: &Database, project_id: Option<&str>) -> Result<Stats, DbError> {
    let mut w = Where::new();
    if let Some(p) = project_id.filter(|p| !p.is_empty()) {
        w.eq("project_id", p);
    }
    let mut c = db.acquire().await?;
    let mut conn = c.conn();
    let clusters = record::count_where::<Cluster>(&mut conn, &w).await?;
    let sum = match conn.backend() {
        crate::Backend::MySql => "CAST(SUM(`node_count`) AS SIGNED)",
        crate::Backend::Sqlite => "SUM(`node_count`)",
    };
    let sql = format!("SELECT {sum} FROM {}{}", q("nodegroup"), w.sql());
    let rows = conn.fetch_all(&sql, w.args()).await?;
    let nodes = rows
        .first()
        .map(|r| r.opt_i64(0))
        .transpose()?
        .flatten()
        .unwrap_or(0);
    Ok(Stats { clusters, nodes })
}

/// The number of clusters of each status, in every project (`NULL`: a row without status):
/// one `GROUP BY` statement, for the conductor's metrics.
pub async fn count_by_status(db: &Database) -> Result<Vec<(Option<String>, i64)>, DbError> {
    let mut c = db.acquire().await?;
    let mut conn = c.conn();
    let status = q("status");
    let sql = format!(
        "SELECT {status}, COUNT(*) FROM {} GROUP BY {status}",
        q("cluster")
    );
    let rows = conn.fetch_all(&sql, &[]).await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push((r.opt_string(0)?, r.opt_i64(1)?.unwrap_or(0)));
    }
    Ok(out)
}

/// `create_cluster`: generates a uuid when none is given, fills Magnum's ORM defaults
/// (`floating_ip_enabled` true, `master_lb_enabled` false, `created_at` now) and returns the
/// stored row. A duplicate uuid → `ClusterAlreadyExists`.
pub async fn create(db: &Database, cluster: &Cluster) -> Result<Cluster, DbError> {
    let c = with_defaults(cluster);
    retry_on_deadlock!(insert_and_fetch(db, &c)).map_err(|e| already_exists(e, &c))
}

fn with_defaults(cluster: &Cluster) -> Cluster {
    let mut c = cluster.clone();
    if c.uuid.as_deref().is_none_or(str::is_empty) {
        c.uuid = Some(uuid::Uuid::new_v4().to_string());
    }
    c.floating_ip_enabled.get_or_insert(true);
    c.master_lb_enabled.get_or_insert(false);
    if c.created_at.is_none() {
        c.created_at = Some(utcnow());
    }
    c
}

/// [`create`] with the cluster's first nodegroups ([`nodegroup::create`]'s defaults, their
/// `cluster_id` set to the cluster's uuid) in one transaction: a process that dies meanwhile
/// leaves the cluster with all its nodegroups or nothing.
///
/// The cluster's template is read for update in the same transaction, as
/// [`crate::cluster_template::destroy`] reads it before counting the clusters that use it: a
/// template deleted while a create naming it was on its way to the conductor is
/// `ClusterTemplateNotFound` here (nothing written), and a template delete that comes second
/// sees the new cluster and is `ClusterTemplateReferenced`. Magnum checks neither, and stores
/// a cluster whose template is gone.
pub async fn create_with_nodegroups(
    db: &Database,
    cluster: &Cluster,
    nodegroups: &[NodeGroup],
) -> Result<Cluster, DbError> {
    let c = with_defaults(cluster);
    let ngs: Vec<NodeGroup> = nodegroups
        .iter()
        .map(|n| {
            let mut n = nodegroup::with_defaults(n);
            n.cluster_id = c.uuid.clone().unwrap_or_default();
            n
        })
        .collect();
    retry_on_deadlock!(async {
        let mut tx = db.begin().await?;
        let r: Result<_, DbError> = async {
            let mut conn = tx.conn();
            let tid = c.cluster_template_id.clone().unwrap_or_default();
            let mut w = Where::new();
            w.eq("uuid", tid.as_str());
            if record::select_where::<ClusterTemplate>(&mut conn, &w, true)
                .await?
                .is_empty()
            {
                return Err(DbError::ClusterTemplateNotFound(tid));
            }
            let id = record::insert(&mut conn, &c).await?;
            let stored = fetch_by_id_on::<Cluster>(&mut conn, id).await?;
            for n in &ngs {
                record::insert(&mut conn, n).await?;
            }
            Ok(stored)
        }
        .await;
        tx.finish(r).await
    })
    .map_err(|e| already_exists(e, &c))
}

fn already_exists(e: DbError, c: &Cluster) -> DbError {
    if crate::backend::is_duplicate(&e) {
        DbError::ClusterAlreadyExists {
            uuid: c.uuid.clone().unwrap_or_default(),
        }
    } else {
        e
    }
}

/// `destroy_cluster` (by id or uuid, not scoped): deletes the row only, as Magnum's DB API.
/// Use [`destroy_with_nodegroups`] for the conductor's deletion of a cluster.
pub async fn destroy(db: &Database, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(destroy_tx(db, &w, ident, false))
}

/// Delete a cluster and its nodegroups in one transaction (what the conductor does when a
/// cluster reaches `DELETE_COMPLETE`: its nodegroups, then the row).
pub async fn destroy_with_nodegroups(db: &Database, ident: &str) -> Result<(), DbError> {
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(destroy_tx(db, &w, ident, true))
}

async fn destroy_tx(db: &Database, w: &Where, ident: &str, cascade: bool) -> Result<(), DbError> {
    let mut tx = db.begin().await?;
    let r: Result<(), DbError> = async {
        let mut conn = tx.conn();
        let rows = record::select_where::<Cluster>(&mut conn, w, true).await?;
        let cluster = rows
            .into_iter()
            .next()
            .ok_or_else(|| DbError::ClusterNotFound(ident.to_string()))?;
        if cascade {
            let mut nw = Where::new();
            nw.eq("cluster_id", Val::from(cluster.uuid.clone()));
            record::delete_where::<NodeGroup>(&mut conn, &nw).await?;
        }
        record::delete_where::<Cluster>(&mut conn, w).await?;
        Ok(())
    }
    .await;
    tx.finish(r).await
}

/// `update_cluster`: write `fields` of `values` to the cluster `ident` (id or uuid, not
/// scoped) and return the updated row. Changing `uuid` (or `id`) is refused with
/// `InvalidParameterValue`; `updated_at` is set when a value changes.
pub async fn update(
    db: &Database,
    ident: &str,
    values: &Cluster,
    fields: &[&str],
) -> Result<Cluster, DbError> {
    let fields = check_update_fields::<Cluster>(fields, "Cluster")?;
    let mut w = Where::new();
    identity_filter(&mut w, ident)?;
    retry_on_deadlock!(update_tx(db, &w, values, &fields, || {
        DbError::ClusterNotFound(ident.to_string())
    }))
}

/// The fields whose values differ between `old` and `new`, for [`update`]
/// (what an object's change tracking would report after the assignments).
pub fn changed_fields(old: &Cluster, new: &Cluster) -> Vec<&'static str> {
    record::changed_columns(old, new)
}
