//! Cluster templates, quotas, services, key pairs and federations on SQLite and MariaDB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use openkeel_core::objects::{
    Cluster, ClusterTemplate, Federation, FederationStatus, MagnumService, Quota, StringMap,
    X509KeyPair,
};
use openkeel_db::{
    cluster, cluster_template, federation, magnum_service, quota, x509keypair,
    ClusterTemplateFilters, DbError, FederationFilters, Page, QuotaFilters, Scope,
    X509KeyPairFilters,
};

fn tpl(name: &str, project: &str, public: bool, hidden: bool) -> ClusterTemplate {
    ClusterTemplate {
        name: Some(name.into()),
        project_id: Some(project.into()),
        user_id: Some("u".into()),
        coe: Some("kubernetes".into()),
        public: Some(public),
        hidden: Some(hidden),
        ..ClusterTemplate::default()
    }
}

fn names(list: &[ClusterTemplate]) -> Vec<String> {
    list.iter()
        .map(|t| t.name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn cluster_template_visibility_and_defaults() {
    on_every_backend!(|db, backend| {
        let own = cluster_template::create(
            db,
            &ClusterTemplate {
                public: None,
                hidden: None,
                ..tpl("own", "p1", false, false)
            },
        )
        .await
        .unwrap();
        assert_eq!(own.public, Some(false));
        assert_eq!(own.hidden, Some(false));
        assert_eq!(own.tls_disabled, Some(false));
        assert_eq!(own.registry_enabled, Some(false));
        assert_eq!(own.master_lb_enabled, Some(false));
        assert_eq!(own.floating_ip_enabled, Some(true));
        assert_eq!(own.labels, Some(StringMap::new()));
        // server_type has a server default but Magnum's ORM inserts NULL when unset.
        assert_eq!(own.server_type, None);
        cluster_template::create(db, &tpl("theirs", "p2", false, false))
            .await
            .unwrap();
        cluster_template::create(db, &tpl("public", "p2", true, false))
            .await
            .unwrap();
        let hidden = cluster_template::create(db, &tpl("hidden", "p2", true, true))
            .await
            .unwrap();

        let p1 = Scope::project("p1");
        let none = ClusterTemplateFilters::default();
        let l = cluster_template::list(db, &p1, &none, &Page::all())
            .await
            .unwrap();
        assert_eq!(names(&l), ["own", "public"], "{backend}");
        let admin = Scope {
            is_admin: true,
            ..p1.clone()
        };
        let l = cluster_template::list(db, &admin, &none, &Page::all())
            .await
            .unwrap();
        assert_eq!(names(&l), ["own", "public", "hidden"]);
        let all = Scope::admin_all_tenants();
        let l = cluster_template::list(db, &all, &none, &Page::all().sort("name", "asc"))
            .await
            .unwrap();
        assert_eq!(names(&l), ["hidden", "own", "public", "theirs"]);
        // Filters apply to the caller's own templates only; public ones are unioned in.
        let f = ClusterTemplateFilters {
            name: Some("nothing".into()),
            ..Default::default()
        };
        let l = cluster_template::list(db, &p1, &f, &Page::all())
            .await
            .unwrap();
        assert_eq!(names(&l), ["public"]);

        assert!(
            cluster_template::get_by_uuid(db, &p1, hidden.uuid.as_deref().unwrap())
                .await
                .is_err()
        );
        assert!(
            cluster_template::get_by_uuid(db, &admin, hidden.uuid.as_deref().unwrap())
                .await
                .is_ok()
        );
        assert_eq!(
            cluster_template::get(db, &p1, "public")
                .await
                .unwrap()
                .name
                .as_deref(),
            Some("public")
        );
        assert_eq!(
            cluster_template::get(db, &p1, &own.id.to_string())
                .await
                .unwrap(),
            own
        );
        let err = cluster_template::get(db, &p1, "theirs").await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "ClusterTemplate theirs could not be found."
        );
        cluster_template::create(db, &tpl("public", "p3", true, false))
            .await
            .unwrap();
        let err = cluster_template::get_by_name(db, &p1, "public")
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead."
        );
        let err = cluster_template::create(
            db,
            &ClusterTemplate {
                uuid: own.uuid.clone(),
                ..tpl("x", "p1", false, false)
            },
        )
        .await
        .unwrap_err();
        assert!(matches!(err, DbError::ClusterTemplateAlreadyExists { .. }));
    });
}

#[tokio::test]
async fn cluster_template_references() {
    on_every_backend!(|db, _backend| {
        let t = cluster_template::create(db, &tpl("t", "p1", false, false))
            .await
            .unwrap();
        let uuid = t.uuid.clone().unwrap();
        let c = cluster::create(
            db,
            &Cluster {
                cluster_template_id: Some(uuid.clone()),
                project_id: Some("p1".into()),
                ..Cluster::default()
            },
        )
        .await
        .unwrap();
        let err = cluster_template::destroy(db, &uuid).await.unwrap_err();
        assert!(matches!(err, DbError::ClusterTemplateReferenced(_)));
        assert_eq!(
            err.to_string(),
            format!("ClusterTemplate {uuid} is referenced by one or multiple clusters.")
        );
        // While referenced: rename, publish, hide, tag are allowed; anything else is not.
        let mut v = t.clone();
        v.name = Some("renamed".into());
        v.public = Some(true);
        v.hidden = Some(true);
        v.tags = Some("a,b".into());
        v.image_id = Some("img".into());
        for f in [&["name"][..], &["public"], &["hidden"], &["tags"]] {
            cluster_template::update(db, &uuid, &v, f).await.unwrap();
        }
        let mut unpublish = v.clone();
        unpublish.public = Some(false);
        assert!(matches!(
            cluster_template::update(db, &uuid, &unpublish, &["public"]).await,
            Err(DbError::ClusterTemplateReferenced(_))
        ));
        assert!(matches!(
            cluster_template::update(db, &uuid, &v, &["image_id"]).await,
            Err(DbError::ClusterTemplateReferenced(_))
        ));
        assert!(matches!(
            cluster_template::update(db, &uuid, &v, &["name", "public"]).await,
            Err(DbError::ClusterTemplateReferenced(_))
        ));
        assert_eq!(
            cluster_template::update(db, &uuid, &v, &["uuid"])
                .await
                .unwrap_err()
                .to_string(),
            "Cannot overwrite UUID for an existing ClusterTemplate."
        );
        let now = cluster_template::get_by_uuid(db, &Scope::admin_all_tenants(), &uuid)
            .await
            .unwrap();
        assert_eq!(now.name.as_deref(), Some("renamed"));
        assert_eq!(
            (now.public, now.hidden, now.tags.as_deref()),
            (Some(true), Some(true), Some("a,b"))
        );
        assert_eq!(now.image_id, None);
        // Unreferenced: free updates and destroy.
        cluster::destroy(db, c.uuid.as_deref().unwrap())
            .await
            .unwrap();
        cluster_template::update(db, &uuid, &v, &["image_id"])
            .await
            .unwrap();
        cluster_template::destroy(db, &uuid).await.unwrap();
        assert!(matches!(
            cluster_template::destroy(db, &uuid).await,
            Err(DbError::ClusterTemplateNotFound(_))
        ));
    });
}

#[tokio::test]
async fn quotas() {
    on_every_backend!(|db, _backend| {
        let q = quota::create(
            db,
            &Quota {
                project_id: Some("p1".into()),
                resource: Some("Cluster".into()),
                hard_limit: 5,
                ..Quota::default()
            },
        )
        .await
        .unwrap();
        assert!(q.created_at.is_some());
        let err = quota::create(db, &Quota { id: 0, ..q.clone() })
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Quota for project p1 already exists for resource Cluster."
        );
        quota::create(
            db,
            &Quota {
                project_id: Some("p2".into()),
                resource: Some("Cluster".into()),
                hard_limit: 1,
                ..Quota::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            quota::get_by_project_id_resource(db, "p1", "Cluster")
                .await
                .unwrap(),
            q
        );
        let err = quota::get_by_project_id_resource(db, "p3", "Cluster")
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Quota could not be found: project_id p3 resource Cluster."
        );
        let err = quota::get_by_id(db, 999).await.unwrap_err();
        assert_eq!(err.to_string(), "Quota could not be found: quota id 999 .");
        assert_eq!(quota::get_by_id(db, i64::from(q.id)).await.unwrap(), q);
        let l = quota::list(
            db,
            &QuotaFilters {
                project_id: Some("p2".into()),
                ..Default::default()
            },
            &Page::all(),
        )
        .await
        .unwrap();
        assert_eq!(l.len(), 1);
        let l = quota::list(
            db,
            &QuotaFilters::default(),
            &Page::all().sort("hard_limit", "desc"),
        )
        .await
        .unwrap();
        assert_eq!(l.iter().map(|q| q.hard_limit).collect::<Vec<_>>(), [5, 1]);
        assert_eq!(
            quota::get_all_by_project_id(db, "p1").await.unwrap().len(),
            1
        );
        let mut v = q.clone();
        v.hard_limit = 10;
        let u = quota::update(db, "p1", &v, &["hard_limit", "resource"])
            .await
            .unwrap();
        assert_eq!(u.hard_limit, 10);
        assert!(u.updated_at.is_some());
        assert!(matches!(
            quota::update(db, "p9", &v, &["hard_limit"]).await,
            Err(DbError::QuotaNotFound { .. })
        ));
        quota::delete(db, "p1", "Cluster").await.unwrap();
        assert!(matches!(
            quota::delete(db, "p1", "Cluster").await,
            Err(DbError::QuotaNotFound { .. })
        ));
        // The count the quota check uses: clusters visible to the caller's project.
        for p in ["p1", "p1", "p2"] {
            cluster::create(
                db,
                &Cluster {
                    project_id: Some(p.into()),
                    ..Cluster::default()
                },
            )
            .await
            .unwrap();
        }
        assert_eq!(
            cluster::count(db, &Scope::project("p1"), &Default::default())
                .await
                .unwrap(),
            2
        );
    });
}

#[tokio::test]
async fn magnum_services() {
    on_every_backend!(|db, _backend| {
        let s = magnum_service::create(
            db,
            &MagnumService {
                host: Some("h1".into()),
                binary: Some("magnum-conductor".into()),
                ..MagnumService::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            (s.report_count, s.disabled, s.forced_down),
            (0, Some(false), Some(false))
        );
        assert_eq!(s.last_seen_up, None);
        // A duplicate returns the existing row.
        let again = magnum_service::create(
            db,
            &MagnumService {
                host: Some("h1".into()),
                binary: Some("magnum-conductor".into()),
                report_count: 9,
                ..MagnumService::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(again, s);
        let up = magnum_service::report_state_up(db, &s).await.unwrap();
        assert_eq!(up.report_count, 1);
        assert!(up.last_seen_up.is_some());
        assert!(up.updated_at.is_some());
        assert_eq!(
            magnum_service::get_by_host_and_binary(db, "h1", "magnum-conductor")
                .await
                .unwrap(),
            Some(up.clone())
        );
        assert_eq!(
            magnum_service::get_by_host_and_binary(db, "h2", "magnum-conductor")
                .await
                .unwrap(),
            None
        );
        let mut d = up.clone();
        d.disabled = Some(true);
        d.disabled_reason = Some("maintenance".into());
        let d = magnum_service::update(db, up.id, &d, &["disabled", "disabled_reason"])
            .await
            .unwrap();
        assert_eq!(d.last_seen_up, up.last_seen_up, "no report_count change");
        magnum_service::create(
            db,
            &MagnumService {
                host: Some("h2".into()),
                binary: Some("magnum-conductor".into()),
                ..MagnumService::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            magnum_service::list(db, Some(true), &Page::all())
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            magnum_service::list(db, Some(false), &Page::all())
                .await
                .unwrap()
                .len(),
            2,
            "as Magnum: false does not filter"
        );
        magnum_service::destroy(db, up.id).await.unwrap();
        let err = magnum_service::destroy(db, up.id).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("A magnum service {} could not be found.", up.id)
        );
    });
}

#[tokio::test]
async fn x509keypairs() {
    on_every_backend!(|db, _backend| {
        let k = x509keypair::create(
            db,
            &X509KeyPair {
                certificate: Some(
                    "-----BEGIN CERTIFICATE-----\nMII...\n-----END CERTIFICATE-----\n".into(),
                ),
                private_key: Some("key".into()),
                project_id: Some("p1".into()),
                user_id: Some("u1".into()),
                ..X509KeyPair::default()
            },
        )
        .await
        .unwrap();
        let uuid = k.uuid.clone().unwrap();
        let p1 = Scope::project("p1");
        assert_eq!(x509keypair::get(db, &p1, &uuid).await.unwrap(), k);
        assert!(matches!(
            x509keypair::get(db, &Scope::project("p2"), &uuid).await,
            Err(DbError::X509KeyPairNotFound(_))
        ));
        assert!(matches!(
            x509keypair::get(db, &p1, "nope").await,
            Err(DbError::InvalidIdentity(_))
        ));
        let err = x509keypair::create(db, &k).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("A key pair with UUID {uuid} already exists.")
        );
        assert_eq!(
            x509keypair::list(
                db,
                &p1,
                &X509KeyPairFilters {
                    user_id: Some("u1".into()),
                    ..Default::default()
                },
                &Page::all()
            )
            .await
            .unwrap()
            .len(),
            1
        );
        let mut v = k.clone();
        v.intermediates = Some("chain".into());
        assert_eq!(
            x509keypair::update(db, &uuid, &v, &["intermediates"])
                .await
                .unwrap()
                .intermediates
                .as_deref(),
            Some("chain")
        );
        assert!(matches!(
            x509keypair::update(db, &uuid, &v, &["uuid"]).await,
            Err(DbError::InvalidParameterValue(_))
        ));
        x509keypair::destroy(db, &uuid).await.unwrap();
        let err = x509keypair::destroy(db, &uuid).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("A key pair {uuid} could not be found.")
        );
    });
}

#[tokio::test]
async fn federations() {
    on_every_backend!(|db, _backend| {
        let mut props = StringMap::new();
        props.insert("dns-zone".into(), "example.com.".into());
        let f = federation::create(
            db,
            &Federation {
                name: Some("fed".into()),
                project_id: Some("p1".into()),
                hostcluster_id: Some("host-uuid".into()),
                member_ids: Some(vec!["m1".into(), "m2".into()]),
                status: Some(FederationStatus::CreateInProgress),
                properties: Some(props.clone()),
                ..Federation::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            f.member_ids.as_deref(),
            Some(&["m1".to_string(), "m2".to_string()][..])
        );
        assert_eq!(
            common::raw_text(
                db,
                &format!("SELECT member_ids FROM federation WHERE id = {}", f.id)
            )
            .await
            .as_deref(),
            Some(r#"["m1", "m2"]"#)
        );
        let p1 = Scope::project("p1");
        let count = |flt: FederationFilters| {
            let p1 = p1.clone();
            async move {
                federation::list(db, &p1, &flt, &Page::all())
                    .await
                    .unwrap()
                    .len()
            }
        };
        assert_eq!(
            count(FederationFilters {
                member_ids: Some(vec!["m1".into(), "m2".into()]),
                ..Default::default()
            })
            .await,
            1
        );
        assert_eq!(
            count(FederationFilters {
                member_ids: Some(vec!["m1".into()]),
                ..Default::default()
            })
            .await,
            0
        );
        assert_eq!(
            count(FederationFilters {
                properties: Some(props.clone()),
                ..Default::default()
            })
            .await,
            1
        );
        assert_eq!(
            count(FederationFilters {
                status: Some(vec![FederationStatus::CreateFailed]),
                ..Default::default()
            })
            .await,
            0
        );
        assert_eq!(
            count(FederationFilters {
                hostcluster_id: Some("host-uuid".into()),
                ..Default::default()
            })
            .await,
            1
        );
        assert_eq!(
            federation::count(db, &p1, &FederationFilters::default())
                .await
                .unwrap(),
            1
        );
        federation::create(
            db,
            &Federation {
                name: Some("fed".into()),
                project_id: Some("p1".into()),
                ..Federation::default()
            },
        )
        .await
        .unwrap();
        let err = federation::get_by_name(db, &p1, "fed").await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "Multiple federations exist with same name. Please use the federation uuid instead."
        );
        let uuid = f.uuid.clone().unwrap();
        let mut v = f.clone();
        v.member_ids = Some(vec!["m1".into()]);
        let u = federation::update(db, &uuid, &v, &["member_ids"])
            .await
            .unwrap();
        assert_eq!(u.member_ids, Some(vec!["m1".to_string()]));
        federation::destroy(db, &uuid).await.unwrap();
        assert!(matches!(
            federation::get(db, &p1, &uuid).await,
            Err(DbError::FederationNotFound(_))
        ));
        assert!(matches!(
            federation::destroy(db, &uuid).await,
            Err(DbError::FederationNotFound(_))
        ));
    });
}

#[tokio::test]
async fn concurrent_writers() {
    on_every_backend!(|db, backend| {
        // Parallel creates and updates through one pool: no lost writes, no deadlock errors.
        let c = cluster::create(
            db,
            &Cluster {
                project_id: Some("p".into()),
                ..Cluster::default()
            },
        )
        .await
        .unwrap();
        let uuid = c.uuid.clone().unwrap();
        let mut tasks = Vec::new();
        for i in 0..20 {
            let db = db.clone();
            let uuid = uuid.clone();
            tasks.push(tokio::spawn(async move {
                let q = Quota {
                    project_id: Some(format!("p{i}")),
                    resource: Some("Cluster".into()),
                    hard_limit: i,
                    ..Quota::default()
                };
                quota::create(&db, &q).await.unwrap();
                let v = Cluster {
                    status_reason: Some(format!("r{i}")),
                    ..Cluster::default()
                };
                cluster::update(&db, &uuid, &v, &["status_reason"])
                    .await
                    .unwrap();
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(
            quota::list(db, &QuotaFilters::default(), &Page::all())
                .await
                .unwrap()
                .len(),
            20,
            "{backend}"
        );
    });
}

/// A name with characters outside the Basic Multilingual Plane matches no row. On MariaDB,
/// oslo.db's `utf8` session cannot represent them, and comparing them with a utf8mb4 column
/// (`federation`, `nodegroup` in a utf8mb4 database) is refused with "Illegal mix of
/// collations" (Magnum's 500); found by the HTTP fuzzer (`bench/http_fuzz.sh`).
#[tokio::test]
async fn names_outside_the_bmp_match_no_row() {
    on_every_backend!(|db, _backend| {
        let p1 = Scope::project("p1");
        let name = "\u{e9}\u{4e2d}\u{1f600}";
        let err = federation::get_by_name(db, &p1, name).await.unwrap_err();
        assert!(
            matches!(err, DbError::FederationNotFound(_)),
            "{_backend}: {err}"
        );
        let err = federation::get(db, &p1, name).await.unwrap_err();
        assert!(
            matches!(
                err,
                DbError::FederationNotFound(_) | DbError::InvalidIdentity(_)
            ),
            "{_backend}: {err}"
        );
        let err = openkeel_db::nodegroup::get(db, &p1, "c-uuid", name)
            .await
            .unwrap_err();
        assert!(
            matches!(err, DbError::NodeGroupNotFound(_)),
            "{_backend}: {err}"
        );
    });
}

/// Every pooled connection to a SQLite file keeps a small page cache
/// ([`openkeel_db::SQLITE_CACHE_SIZE_KIB`]), not SQLite's 2,000 KiB default, which a list of
/// 1,000 clusters filled on each connection (the all-in-one's memory under concurrent lists,
/// docs/performance.md).
#[tokio::test]
async fn sqlite_connections_keep_a_small_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:///{}", dir.path().join("magnum.db").display());
    let db = openkeel_db::Database::connect_with(&url, 3).await.unwrap();
    let openkeel_db::Pool::Sqlite(pool) = db.pool() else {
        panic!("a SQLite pool for {url}");
    };
    // Hold three connections at once: each one is configured, not only the first.
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut conn = pool.acquire().await.unwrap();
        let size: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        let want = -i64::from(openkeel_db::SQLITE_CACHE_SIZE_KIB);
        assert_eq!(
            size, want,
            "cache_size in KiB (negative) on each connection"
        );
        held.push(conn);
    }
}

/// A closed database answers no more reads, on every backend: on a SQLite file the show and
/// the list's read transaction run on read connections of their own
/// (`crates/db/src/reader.rs`), which close with the pool.
#[tokio::test]
async fn a_closed_database_refuses_reads_on_every_backend() {
    use openkeel_core::objects::Cluster;
    use openkeel_db::{cluster, ClusterFilters, Page, Scope};
    for t in common::backends().await {
        let db = &t.db;
        let c = cluster::create(
            db,
            &Cluster {
                name: Some("c".into()),
                project_id: Some("p1".into()),
                ..Cluster::default()
            },
        )
        .await
        .unwrap();
        let uuid = c.uuid.clone().unwrap();
        let scope = Scope::project("p1");
        cluster::get_with_relations(db, &scope, &uuid)
            .await
            .unwrap();
        db.close().await;
        let shown = cluster::get_with_relations(db, &scope, &uuid).await;
        assert!(
            matches!(
                shown,
                Err(openkeel_db::DbError::Sqlx(sqlx::Error::PoolClosed))
            ),
            "{}: {:?}",
            t.name,
            shown.map(|s| s.cluster.uuid)
        );
        let page = cluster::read_page(db, &scope, &ClusterFilters::default(), &Page::all()).await;
        assert!(
            matches!(
                page,
                Err(openkeel_db::DbError::Sqlx(sqlx::Error::PoolClosed))
            ),
            "{}: a page after close",
            t.name
        );
    }
}
