//! Clusters and nodegroups: Magnum's DB-API semantics on SQLite and MariaDB alike.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup, StringMap, Taint};
use openkeel_db::{cluster, nodegroup, ClusterFilters, DbError, NodeGroupFilters, Page, Scope};

fn cl(name: &str, project: &str) -> Cluster {
    Cluster {
        name: Some(name.into()),
        project_id: Some(project.into()),
        user_id: Some(format!("user-{project}")),
        ..Cluster::default()
    }
}

fn ng(cluster: &Cluster, name: &str, role: &str, count: i32) -> NodeGroup {
    NodeGroup {
        name: name.into(),
        cluster_id: cluster.uuid.clone().unwrap(),
        project_id: cluster.project_id.clone().unwrap(),
        role: Some(role.into()),
        node_count: Some(count),
        ..NodeGroup::default()
    }
}

fn names(list: &[Cluster]) -> Vec<String> {
    list.iter()
        .map(|c| c.name.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn create_get_and_defaults() {
    on_every_backend!(|db, backend| {
        let mut labels = StringMap::new();
        labels.insert("kube_tag".into(), "v1.30.1".into());
        labels.insert("min_node_count".into(), "1".into());
        labels.insert("ünï".into(), "😀".into());
        let c = cluster::create(
            db,
            &Cluster {
                labels: Some(labels.clone()),
                status: Some(ClusterStatus::CreateInProgress),
                ..cl("alpha", "p1")
            },
        )
        .await
        .unwrap();
        assert!(c.id > 0);
        let uuid = c.uuid.clone().unwrap();
        assert!(openkeel_db::ident::is_uuid_like(&uuid) && uuid == uuid.to_lowercase());
        assert_eq!(c.floating_ip_enabled, Some(true));
        assert_eq!(c.master_lb_enabled, Some(false));
        assert!(c.created_at.is_some());
        assert_eq!(c.created_at.unwrap().and_utc().timestamp_subsec_nanos(), 0);
        assert_eq!(c.updated_at, None);
        assert_eq!(c.labels.as_ref(), Some(&labels));
        // Unset JSON columns are written as {} (never NULL), set ones as json.dumps text.
        assert_eq!(c.health_status_reason, Some(StringMap::new()));
        let raw = common::raw_text(
            db,
            &format!("SELECT labels FROM cluster WHERE id = {}", c.id),
        )
        .await;
        assert_eq!(
            raw.as_deref(),
            Some(
                r#"{"kube_tag": "v1.30.1", "min_node_count": "1", "\u00fcn\u00ef": "\ud83d\ude00"}"#
            )
        );
        let raw = common::raw_text(
            db,
            &format!(
                "SELECT health_status_reason FROM cluster WHERE id = {}",
                c.id
            ),
        )
        .await;
        assert_eq!(raw.as_deref(), Some("{}"));

        let p1 = Scope::project("p1");
        assert_eq!(cluster::get_by_uuid(db, &p1, &uuid).await.unwrap(), c);
        assert_eq!(
            cluster::get_by_id(db, &p1, i64::from(c.id)).await.unwrap(),
            c
        );
        assert_eq!(cluster::get_by_name(db, &p1, "alpha").await.unwrap(), c);
        assert_eq!(cluster::get(db, &p1, &c.id.to_string()).await.unwrap(), c);
        assert_eq!(cluster::get(db, &p1, &uuid).await.unwrap(), c);
        assert!(matches!(
            cluster::get(db, &p1, "alpha").await,
            Err(DbError::InvalidIdentity(i)) if i == "alpha"
        ));
        // Uppercase uuids are UUID-like; the lookup is as given.
        let err = cluster::get_by_name(db, &p1, "nope").await.unwrap_err();
        assert_eq!(err.to_string(), "Cluster nope could not be found.");

        // Duplicate uuid.
        let dup = cluster::create(
            db,
            &Cluster {
                uuid: Some(uuid.clone()),
                ..cl("beta", "p1")
            },
        )
        .await
        .unwrap_err();
        assert!(
            matches!(dup, DbError::ClusterAlreadyExists { .. }),
            "{backend}: {dup:?}"
        );
        assert_eq!(
            dup.to_string(),
            format!("A cluster with UUID {uuid} already exists.")
        );

        // Same name twice → Conflict on get_by_name.
        cluster::create(db, &cl("alpha", "p1")).await.unwrap();
        let err = cluster::get_by_name(db, &p1, "alpha").await.unwrap_err();
        assert!(matches!(err, DbError::Conflict(_)));
        assert_eq!(
            err.to_string(),
            "Multiple clusters exist with same name. Please use the cluster uuid instead."
        );
        let me: openkeel_core::error::MagnumError = err.into();
        assert_eq!(me.code(), 409);
        assert_eq!(me.class_name(), "Conflict");
    });
}

#[tokio::test]
async fn tenant_scoping() {
    on_every_backend!(|db, _backend| {
        let c = cluster::create(db, &cl("mine", "p1")).await.unwrap();
        let uuid = c.uuid.clone().unwrap();
        let other = Scope::project("p2");
        assert!(matches!(
            cluster::get_by_uuid(db, &other, &uuid).await,
            Err(DbError::ClusterNotFound(u)) if u == uuid
        ));
        // Admin without all_tenants is still filtered by project.
        let admin = Scope {
            project_id: Some("p2".into()),
            is_admin: true,
            ..Scope::default()
        };
        assert!(cluster::get_by_uuid(db, &admin, &uuid).await.is_err());
        let all = Scope {
            all_tenants: true,
            ..admin.clone()
        };
        assert!(cluster::get_by_uuid(db, &all, &uuid).await.is_ok());
        // No project: filtered by user.
        let user_only = Scope {
            user_id: Some("user-p1".into()),
            ..Scope::default()
        };
        assert!(cluster::get_by_uuid(db, &user_only, &uuid).await.is_ok());
        let other_user = Scope {
            user_id: Some("someone".into()),
            ..Scope::default()
        };
        assert!(cluster::get_by_uuid(db, &other_user, &uuid).await.is_err());
        assert_eq!(
            cluster::count(db, &Scope::project("p1"), &ClusterFilters::default())
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            cluster::count(db, &other, &ClusterFilters::default())
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            cluster::count(db, &Scope::admin_all_tenants(), &ClusterFilters::default())
                .await
                .unwrap(),
            1
        );
    });
}

#[tokio::test]
async fn pagination_and_sorting() {
    on_every_backend!(|db, backend| {
        let scope = Scope::admin_all_tenants();
        // Names: c, a, e, b, d (ids in creation order); one without a name.
        let mut made = Vec::new();
        for n in ["c", "a", "e", "b", "d"] {
            made.push(cluster::create(db, &cl(n, "p1")).await.unwrap());
        }
        let unnamed = cluster::create(
            db,
            &Cluster {
                name: None,
                ..cl("", "p1")
            },
        )
        .await
        .unwrap();
        let f = ClusterFilters::default();

        let all = cluster::list(db, &scope, &f, &Page::all()).await.unwrap();
        assert_eq!(
            names(&all),
            ["c", "a", "e", "b", "d", ""],
            "{backend}: id order"
        );

        let by_name = cluster::list(db, &scope, &f, &Page::all().sort("name", "asc"))
            .await
            .unwrap();
        assert_eq!(
            names(&by_name),
            ["", "a", "b", "c", "d", "e"],
            "NULL sorts first"
        );
        let desc = cluster::list(db, &scope, &f, &Page::all().sort("name", "desc"))
            .await
            .unwrap();
        assert_eq!(names(&desc), ["e", "d", "c", "b", "a", ""]);
        let nl = cluster::list(db, &scope, &f, &Page::all().sort("name", "asc-nullslast"))
            .await
            .unwrap();
        assert_eq!(names(&nl), ["a", "b", "c", "d", "e", ""]);

        // Marker: the rows after it in the order; limit last.
        let b = &made[3];
        let page = cluster::list(
            db,
            &scope,
            &f,
            &Page::all().sort("name", "asc").marker(b).limit(2),
        )
        .await
        .unwrap();
        assert_eq!(names(&page), ["c", "d"]);
        let page = cluster::list(db, &scope, &f, &Page::all().sort("name", "desc").marker(b))
            .await
            .unwrap();
        assert_eq!(names(&page), ["a"], "desc: NULL names are not < 'b'");
        // Default sort (id) with a marker.
        let page = cluster::list(db, &scope, &f, &Page::all().marker(&made[1]).limit(3))
            .await
            .unwrap();
        assert_eq!(names(&page), ["e", "b", "d"]);
        // A marker whose sort value is NULL: only the id criterion applies.
        let page = cluster::list(
            db,
            &scope,
            &f,
            &Page::all().sort("name", "asc").marker(&unnamed),
        )
        .await
        .unwrap();
        assert!(page.is_empty(), "{:?}", names(&page));
        // Equal sort values continue by id.
        let dup_a = cluster::create(db, &cl("a", "p1")).await.unwrap();
        let page = cluster::list(
            db,
            &scope,
            &f,
            &Page::all().sort("name", "asc").marker(&made[1]).limit(2),
        )
        .await
        .unwrap();
        assert_eq!(page[0].id, dup_a.id);
        assert_eq!(names(&page), ["a", "b"]);
        // Limit 0.
        assert!(cluster::list(db, &scope, &f, &Page::all().limit(0))
            .await
            .unwrap()
            .is_empty());

        // Bad sort key / direction.
        let err = cluster::list(db, &scope, &f, &Page::all().sort("node_count", "asc"))
            .await
            .unwrap_err();
        assert!(matches!(err, DbError::InvalidParameterValue(_)));
        assert_eq!(
            err.to_string(),
            r#"The sort_key value "node_count" is an invalid field for sorting"#
        );
        let err = cluster::list(db, &scope, &f, &Page::all().sort("name", "up"))
            .await
            .unwrap_err();
        assert!(matches!(err, DbError::InvalidSortDir(_)));
        assert!(err
            .to_string()
            .starts_with("Unknown sort direction, must be one of: "));
        // Sort by a boolean and by a JSON column work.
        cluster::list(
            db,
            &scope,
            &f,
            &Page::all().sort("master_lb_enabled", "desc").marker(b),
        )
        .await
        .unwrap();
        cluster::list(db, &scope, &f, &Page::all().sort("labels", "asc").marker(b))
            .await
            .unwrap();
    });
}

#[tokio::test]
async fn filters_and_nodegroup_counts() {
    on_every_backend!(|db, _backend| {
        let scope = Scope::admin_all_tenants();
        let a = cluster::create(
            db,
            &Cluster {
                status: Some(ClusterStatus::CreateComplete),
                cluster_template_id: Some("tpl-1".into()),
                ..cl("a", "p1")
            },
        )
        .await
        .unwrap();
        let b = cluster::create(
            db,
            &Cluster {
                status: Some(ClusterStatus::UpdateFailed),
                ..cl("b", "p2")
            },
        )
        .await
        .unwrap();
        nodegroup::create(db, &ng(&a, "default-master", "master", 3))
            .await
            .unwrap();
        nodegroup::create(db, &ng(&a, "default-worker", "worker", 2))
            .await
            .unwrap();
        nodegroup::create(db, &ng(&a, "extra", "worker", 4))
            .await
            .unwrap();
        nodegroup::create(db, &ng(&b, "default-master", "master", 1))
            .await
            .unwrap();
        nodegroup::create(db, &ng(&b, "default-worker", "worker", 6))
            .await
            .unwrap();

        let list = |f: ClusterFilters| {
            let scope = scope.clone();
            async move { names(&cluster::list(db, &scope, &f, &Page::all()).await.unwrap()) }
        };
        assert_eq!(
            list(ClusterFilters::status(&[ClusterStatus::CreateComplete])).await,
            ["a"]
        );
        assert_eq!(
            list(ClusterFilters::status(&[
                ClusterStatus::CreateComplete,
                ClusterStatus::UpdateFailed
            ]))
            .await,
            ["a", "b"]
        );
        assert!(list(ClusterFilters::status(&[])).await.is_empty());
        assert_eq!(
            list(ClusterFilters {
                node_count: Some(6),
                ..Default::default()
            })
            .await,
            ["a", "b"]
        );
        assert_eq!(
            list(ClusterFilters {
                master_count: Some(3),
                ..Default::default()
            })
            .await,
            ["a"]
        );
        assert_eq!(
            list(ClusterFilters {
                node_count: Some(6),
                master_count: Some(1),
                ..Default::default()
            })
            .await,
            ["b"]
        );
        assert_eq!(
            list(ClusterFilters {
                cluster_template_id: Some("tpl-1".into()),
                ..Default::default()
            })
            .await,
            ["a"]
        );
        assert_eq!(
            list(ClusterFilters {
                project_id: Some("p2".into()),
                ..Default::default()
            })
            .await,
            ["b"]
        );
        assert_eq!(
            cluster::count(
                db,
                &scope,
                &ClusterFilters {
                    name: Some("b".into()),
                    ..Default::default()
                }
            )
            .await
            .unwrap(),
            1
        );

        // Stats: all nodegroups (masters included), per project.
        let s = cluster::stats(db, None).await.unwrap();
        assert_eq!((s.clusters, s.nodes), (2, 16));
        let s = cluster::stats(db, Some("p1")).await.unwrap();
        assert_eq!((s.clusters, s.nodes), (1, 9));
        let s = cluster::stats(db, Some("nobody")).await.unwrap();
        assert_eq!((s.clusters, s.nodes), (0, 0));
    });
}

#[tokio::test]
async fn list_with_nodegroups_in_two_queries() {
    on_every_backend!(|db, _backend| {
        let mut clusters = Vec::new();
        for i in 0..5 {
            let c = cluster::create(db, &cl(&format!("c{i}"), "p1"))
                .await
                .unwrap();
            for j in 0..i {
                nodegroup::create(db, &ng(&c, &format!("ng{j}"), "worker", j))
                    .await
                    .unwrap();
            }
            clusters.push(c);
        }
        // Another project's nodegroup inside p1's cluster is hidden from non-admins.
        let mut foreign = ng(&clusters[1], "foreign", "worker", 1);
        foreign.project_id = "p2".into();
        nodegroup::create(db, &foreign).await.unwrap();

        let before = db.statement_count();
        let listed = cluster::list_with_nodegroups(
            db,
            &Scope::project("p1"),
            &ClusterFilters::default(),
            &Page::all(),
        )
        .await
        .unwrap();
        assert_eq!(db.statement_count() - before, 2, "2 queries in total");
        assert_eq!(listed.len(), 5);
        for (i, (c, ngs)) in listed.iter().enumerate() {
            assert_eq!(c, &clusters[i]);
            let got: Vec<&str> = ngs.iter().map(|n| n.name.as_str()).collect();
            let want: Vec<String> = (0..i).map(|j| format!("ng{j}")).collect();
            assert_eq!(got, want, "cluster {i}");
            // Same as the per-cluster listing Magnum does.
            let single = nodegroup::list(
                db,
                &Scope::project("p1"),
                c.uuid.as_deref().unwrap(),
                &NodeGroupFilters::default(),
                &Page::all(),
            )
            .await
            .unwrap();
            assert_eq!(&single, ngs);
        }
        let admin = Scope {
            is_admin: true,
            ..Scope::project("p1")
        };
        let listed = cluster::list_with_nodegroups(
            db,
            &admin,
            &ClusterFilters::default(),
            &Page::all().limit(2),
        )
        .await
        .unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].1.len(), 2, "admins see the foreign nodegroup");
        // Empty result: one query only.
        let before = db.statement_count();
        let none = cluster::list_with_nodegroups(
            db,
            &Scope::project("zz"),
            &ClusterFilters::default(),
            &Page::all(),
        )
        .await
        .unwrap();
        assert!(none.is_empty());
        assert_eq!(db.statement_count() - before, 1);
    });
}

#[tokio::test]
async fn update_semantics() {
    on_every_backend!(|db, _backend| {
        let c = cluster::create(db, &cl("u", "p1")).await.unwrap();
        let uuid = c.uuid.clone().unwrap();
        // No change → no UPDATE, updated_at stays NULL.
        let same = cluster::update(db, &uuid, &c, &["name"]).await.unwrap();
        assert_eq!(same.updated_at, None);
        let mut new = c.clone();
        new.status = Some(ClusterStatus::CreateComplete);
        new.api_address = Some("https://1.2.3.4:6443".into());
        let fields = cluster::changed_fields(&c, &new);
        assert_eq!(fields, ["api_address", "status"]);
        let got = cluster::update(db, &c.id.to_string(), &new, &fields)
            .await
            .unwrap();
        assert_eq!(got.status, Some(ClusterStatus::CreateComplete));
        assert_eq!(got.api_address.as_deref(), Some("https://1.2.3.4:6443"));
        assert!(got.updated_at.is_some());
        assert_eq!(got.created_at, c.created_at);
        // Only the listed fields are written.
        let mut other = got.clone();
        other.name = Some("renamed".into());
        other.stack_id = Some("stack".into());
        let got2 = cluster::update(db, &uuid, &other, &["stack_id"])
            .await
            .unwrap();
        assert_eq!(got2.name.as_deref(), Some("u"));
        assert_eq!(got2.stack_id.as_deref(), Some("stack"));
        // uuid / id are refused, unknown fields too.
        let err = cluster::update(db, &uuid, &other, &["uuid"])
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Cannot overwrite UUID for an existing Cluster."
        );
        assert!(matches!(
            cluster::update(db, &uuid, &other, &["id"]).await,
            Err(DbError::InvalidParameterValue(_))
        ));
        assert!(matches!(
            cluster::update(db, &uuid, &other, &["node_count"]).await,
            Err(DbError::InvalidParameterValue(_))
        ));
        assert!(matches!(
            cluster::update(
                db,
                "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
                &other,
                &["name"]
            )
            .await,
            Err(DbError::ClusterNotFound(_))
        ));
        assert!(matches!(
            cluster::update(db, "some-name", &other, &["name"]).await,
            Err(DbError::InvalidIdentity(_))
        ));
        // Setting a JSON column to None writes {} (Magnum's bind processor).
        let mut h = got2.clone();
        h.health_status_reason = None;
        h.labels = Some(StringMap::from_iter([("a".to_string(), "1".to_string())]));
        let got3 = cluster::update(db, &uuid, &h, &["health_status_reason", "labels"])
            .await
            .unwrap();
        assert_eq!(got3.health_status_reason, Some(StringMap::new()));
        assert_eq!(got3.labels.unwrap().get("a").map(String::as_str), Some("1"));
    });
}

#[tokio::test]
async fn destroy_and_cascade() {
    on_every_backend!(|db, _backend| {
        let admin = Scope::admin_all_tenants();
        let a = cluster::create(db, &cl("a", "p1")).await.unwrap();
        let b = cluster::create(db, &cl("b", "p1")).await.unwrap();
        for c in [&a, &b] {
            nodegroup::create(db, &ng(c, "default-master", "master", 1))
                .await
                .unwrap();
            nodegroup::create(db, &ng(c, "default-worker", "worker", 1))
                .await
                .unwrap();
        }
        cluster::destroy_with_nodegroups(db, a.uuid.as_deref().unwrap())
            .await
            .unwrap();
        assert!(cluster::get_by_id(db, &admin, i64::from(a.id))
            .await
            .is_err());
        assert_eq!(
            nodegroup::count(db, &admin, a.uuid.as_deref().unwrap())
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            nodegroup::count(db, &admin, b.uuid.as_deref().unwrap())
                .await
                .unwrap(),
            2
        );
        // destroy: the row only (Magnum's destroy_cluster).
        cluster::destroy(db, &b.id.to_string()).await.unwrap();
        assert_eq!(
            nodegroup::count(db, &admin, b.uuid.as_deref().unwrap())
                .await
                .unwrap(),
            2
        );
        let err = cluster::destroy(db, &b.id.to_string()).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Cluster {} could not be found.", b.id)
        );
        assert!(matches!(
            cluster::destroy(db, "name").await,
            Err(DbError::InvalidIdentity(_))
        ));

        // A nodegroup of a cluster deleted meanwhile is refused, not left without its
        // cluster (the conductor's nodegroup_create after the cluster's delete completed).
        let err = nodegroup::create_in_cluster(db, &ng(&a, "late", "worker", 1))
            .await
            .unwrap_err();
        assert!(matches!(err, DbError::ClusterNotFound(_)), "{err}");
        assert_eq!(
            nodegroup::count(db, &admin, a.uuid.as_deref().unwrap())
                .await
                .unwrap(),
            0
        );
        let c = cluster::create(db, &cl("c", "p1")).await.unwrap();
        let made = nodegroup::create_in_cluster(db, &ng(&c, "extra", "worker", 1))
            .await
            .unwrap();
        assert_eq!(made.cluster_id, c.uuid.clone().unwrap());
    });
}

#[tokio::test]
async fn nodegroups() {
    on_every_backend!(|db, backend| {
        let c = cluster::create(db, &cl("c", "p1")).await.unwrap();
        let cid = c.uuid.clone().unwrap();
        let taints: Vec<Taint> =
            serde_json::from_str(r#"[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]"#)
                .unwrap();
        let master = nodegroup::create(
            db,
            &NodeGroup {
                is_default: Some(true),
                status: Some(ClusterStatus::CreateInProgress),
                ..ng(&c, "default-master", "master", 1)
            },
        )
        .await
        .unwrap();
        let worker = nodegroup::create(
            db,
            &NodeGroup {
                is_default: Some(true),
                node_taints: Some(taints.clone()),
                node_addresses: Some(vec!["10.0.0.5".into()]),
                ..ng(&c, "default-worker", "worker", 3)
            },
        )
        .await
        .unwrap();
        let extra = nodegroup::create(db, &ng(&c, "extra", "worker", 2))
            .await
            .unwrap();
        assert_eq!(extra.is_default, Some(false));
        assert_eq!(extra.node_addresses, Some(vec![]));
        assert_eq!(extra.node_labels, Some(StringMap::new()));
        assert_eq!(extra.node_taints, Some(vec![]));
        assert_eq!(
            common::raw_text(
                db,
                &format!("SELECT node_taints FROM nodegroup WHERE id = {}", worker.id)
            )
            .await
            .as_deref(),
            Some(r#"[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]"#)
        );
        assert_eq!(
            common::raw_text(
                db,
                &format!(
                    "SELECT node_addresses FROM nodegroup WHERE id = {}",
                    extra.id
                )
            )
            .await
            .as_deref(),
            Some("[]")
        );
        assert_eq!(worker.node_taints, Some(taints));

        // Duplicate (cluster_id, name).
        let err = nodegroup::create(db, &ng(&c, "extra", "worker", 1))
            .await
            .unwrap_err();
        assert!(
            matches!(err, DbError::NodeGroupAlreadyExists { .. }),
            "{backend}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("A node group with name extra already exists in the cluster {cid}.")
        );

        let p1 = Scope::project("p1");
        assert_eq!(nodegroup::get(db, &p1, &cid, "extra").await.unwrap(), extra);
        assert_eq!(
            nodegroup::get(db, &p1, &cid, &extra.id.to_string())
                .await
                .unwrap(),
            extra
        );
        assert_eq!(
            nodegroup::get(db, &p1, &cid, &extra.uuid).await.unwrap(),
            extra
        );
        assert!(matches!(
            nodegroup::get(db, &p1, "other-cluster", "extra").await,
            Err(DbError::NodeGroupNotFound(n)) if n == "extra"
        ));
        // Nodegroup scoping: another project needs admin (all_tenants not required).
        let p2 = Scope::project("p2");
        assert!(nodegroup::get_by_name(db, &p2, &cid, "extra")
            .await
            .is_err());
        let p2_admin = Scope {
            is_admin: true,
            ..p2.clone()
        };
        assert!(nodegroup::get_by_name(db, &p2_admin, &cid, "extra")
            .await
            .is_ok());

        // Filters.
        let list = |f: NodeGroupFilters| {
            let cid = cid.clone();
            async move {
                nodegroup::list(db, &Scope::project("p1"), &cid, &f, &Page::all())
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|n| n.name)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            list(NodeGroupFilters {
                is_default: Some(true),
                ..Default::default()
            })
            .await,
            ["default-master", "default-worker"]
        );
        assert_eq!(
            list(NodeGroupFilters {
                role: Some("master".into()),
                is_default: Some(true),
                ..Default::default()
            })
            .await,
            ["default-master"]
        );
        assert_eq!(
            list(NodeGroupFilters {
                node_count: Some(2),
                ..Default::default()
            })
            .await,
            ["extra"]
        );
        assert_eq!(
            list(NodeGroupFilters {
                node_addresses: Some(vec!["10.0.0.5".into()]),
                ..Default::default()
            })
            .await,
            ["default-worker"]
        );
        assert_eq!(
            list(NodeGroupFilters {
                status: Some(vec![ClusterStatus::CreateInProgress]),
                ..Default::default()
            })
            .await,
            ["default-master"]
        );
        let sorted = nodegroup::list(
            db,
            &p1,
            &cid,
            &NodeGroupFilters::default(),
            &Page::all().sort("node_count", "desc"),
        )
        .await
        .unwrap();
        assert_eq!(
            sorted.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
            ["default-worker", "extra", "default-master"]
        );
        assert_eq!(nodegroup::count(db, &p1, &cid).await.unwrap(), 3);

        // Update (scoped by cluster), destroy.
        let mut m = master.clone();
        m.node_count = Some(3);
        let m2 = nodegroup::update(db, &cid, &master.uuid, &m, &["node_count"])
            .await
            .unwrap();
        assert_eq!(m2.node_count, Some(3));
        assert!(m2.updated_at.is_some());
        assert!(matches!(
            nodegroup::update(db, "other", &master.uuid, &m, &["node_count"]).await,
            Err(DbError::NodeGroupNotFound(_))
        ));
        nodegroup::destroy(db, &cid, &extra.uuid).await.unwrap();
        assert!(matches!(
            nodegroup::destroy(db, &cid, &extra.uuid).await,
            Err(DbError::NodeGroupNotFound(_))
        ));
        assert_eq!(nodegroup::count(db, &p1, &cid).await.unwrap(), 2);
    });
}

#[tokio::test]
async fn rows_written_by_migrations_with_nulls_are_readable() {
    on_every_backend!(|db, _backend| {
        common::raw_exec(
            db,
            "INSERT INTO nodegroup (uuid, name, cluster_id, project_id, role, node_count, labels) \
             VALUES ('1a2b3c4d-0000-4000-8000-000000000001', 'legacy', 'c-uuid', 'p1', 'worker', 1, \
             '{\"flag\": true, \"n\": 2}')",
        )
        .await;
        let n = nodegroup::get_by_name(db, &Scope::project("p1"), "c-uuid", "legacy")
            .await
            .unwrap();
        assert_eq!(n.node_labels, None);
        assert_eq!(n.node_taints, None);
        assert_eq!(n.is_default, None);
        let labels = n.labels.unwrap();
        assert_eq!(labels.get("flag").map(String::as_str), Some("True"));
        assert_eq!(labels.get("n").map(String::as_str), Some("2"));
        // A bad status is a decode error, not a panic.
        common::raw_exec(
            db,
            "UPDATE nodegroup SET status = 'BOGUS' WHERE name = 'legacy'",
        )
        .await;
        assert!(matches!(
            nodegroup::get_by_name(db, &Scope::project("p1"), "c-uuid", "legacy").await,
            Err(DbError::Decode { .. })
        ));
    });
}

/// `read_page` (what the API's lists stream) gives, cluster by cluster, what
/// `list_with_node_summaries` returns, with each cluster's template labels, in a fixed number
/// of statements; a template the caller cannot see fails the whole page.
#[tokio::test]
async fn read_page_streams_the_page_with_summaries_and_template_labels() {
    use openkeel_core::objects::ClusterTemplate;
    on_every_backend!(|db, _backend| {
        let mut labels = StringMap::new();
        labels.insert("k".into(), "v".into());
        let t = openkeel_db::cluster_template::create(
            db,
            &ClusterTemplate {
                name: Some("t".into()),
                project_id: Some("p1".into()),
                labels: Some(labels.clone()),
                ..ClusterTemplate::default()
            },
        )
        .await
        .unwrap();
        let hidden = openkeel_db::cluster_template::create(
            db,
            &ClusterTemplate {
                name: Some("other".into()),
                project_id: Some("p2".into()),
                ..ClusterTemplate::default()
            },
        )
        .await
        .unwrap();
        for i in 0..6 {
            let mut c = cl(&format!("c{i}"), "p1");
            c.cluster_template_id = t.uuid.clone();
            let c = cluster::create(db, &c).await.unwrap();
            for j in 0..(i % 3) {
                let mut n = ng(
                    &c,
                    &format!("ng{j}"),
                    if j == 0 { "master" } else { "worker" },
                    j + 1,
                );
                n.node_addresses = Some(vec![format!("10.0.{i}.{j}")]);
                nodegroup::create(db, &n).await.unwrap();
            }
        }
        for (scope, page) in [
            (Scope::project("p1"), Page::all()),
            (Scope::project("p1"), Page::all().limit(4)),
            (Scope::project("nobody"), Page::all()),
        ] {
            let want =
                cluster::list_with_node_summaries(db, &scope, &ClusterFilters::default(), &page)
                    .await
                    .unwrap();
            let before = db.statement_count();
            let reader = cluster::read_page(db, &scope, &ClusterFilters::default(), &page)
                .await
                .unwrap();
            assert_eq!(reader.len(), want.len());
            let mut got = Vec::new();
            reader
                .for_each(|c, ngs, l| {
                    got.push((c, ngs, l.cloned()));
                    Ok(())
                })
                .await
                .unwrap();
            // BEGIN, keys, nodegroups, one per template, page, COMMIT; an empty page is
            // BEGIN, keys, COMMIT.
            let statements = if want.is_empty() { 3 } else { 6 };
            assert_eq!(db.statement_count() - before, statements);
            assert_eq!(got.len(), want.len());
            for ((c, ngs, l), (wc, wngs)) in got.iter().zip(&want) {
                assert_eq!(c, wc);
                assert_eq!(l.as_ref(), Some(&labels));
                let slim = |v: &[NodeGroup]| -> Vec<_> {
                    v.iter()
                        .map(|n| {
                            (
                                n.role.clone(),
                                n.node_count,
                                n.node_addresses.clone(),
                                n.is_default,
                            )
                        })
                        .collect()
                };
                assert_eq!(slim(ngs), slim(wngs));
            }
        }
        // A cluster on a template p1 cannot see fails p1's page, as Magnum's prefetch does.
        let mut c = cl("odd", "p1");
        c.cluster_template_id = hidden.uuid.clone();
        cluster::create(db, &c).await.unwrap();
        let err = cluster::read_page(
            db,
            &Scope::project("p1"),
            &ClusterFilters::default(),
            &Page::all(),
        )
        .await
        .err()
        .unwrap();
        assert!(
            matches!(err, DbError::ClusterTemplateNotFound(_)),
            "{err:?}"
        );
        // The connection went back to the pool with no transaction open: writes still work.
        cluster::create(db, &cl("after", "p1")).await.unwrap();
    });
}

/// A page that is read only in part (its reader dropped, as when the client goes away in the
/// middle of a list) ends its read transaction: the next list and show see what was written
/// since, on every backend. (On a SQLite file the reads run on connections kept for reuse; a
/// connection given back with its transaction open would keep its old snapshot.)
#[tokio::test]
async fn a_page_read_only_in_part_leaves_no_old_snapshot_behind() {
    on_every_backend!(|db, backend| {
        let scope = Scope::project("p1");
        let all = || Page::all();
        for i in 0..3 {
            cluster::create(db, &cl(&format!("c{i}"), "p1"))
                .await
                .unwrap();
        }
        for round in 0..6 {
            // Several pages begun and dropped at once: each takes a connection of its own
            // (SQLite in memory has only one).
            let mut open = Vec::new();
            for _ in 0..if backend == "sqlite" { 1 } else { 3 } {
                let reader = cluster::read_page(db, &scope, &ClusterFilters::default(), &all())
                    .await
                    .unwrap();
                assert_eq!(reader.len(), 3 + round, "{backend}");
                open.push(reader);
            }
            drop(open);
            let new = cluster::create(db, &cl(&format!("new{round}"), "p1"))
                .await
                .unwrap();
            let uuid = new.uuid.clone().unwrap();
            let shown = cluster::get_with_relations(db, &scope, &uuid)
                .await
                .unwrap();
            assert_eq!(
                shown.cluster.uuid.as_deref(),
                Some(uuid.as_str()),
                "{backend}"
            );
            let reader = cluster::read_page(db, &scope, &ClusterFilters::default(), &all())
                .await
                .unwrap();
            let mut seen = Vec::new();
            reader
                .for_each(|c, _, _| {
                    seen.push(c.uuid.unwrap_or_default());
                    Ok(())
                })
                .await
                .unwrap();
            assert!(
                seen.contains(&uuid),
                "{backend}: round {round} saw {seen:?}"
            );
        }
    });
}

#[tokio::test]
async fn clusters_are_counted_by_status_in_every_project() {
    on_every_backend!(|db, _backend| {
        assert!(cluster::count_by_status(db).await.unwrap().is_empty());
        for (name, project, status) in [
            ("a", "p1", Some(ClusterStatus::CreateComplete)),
            ("b", "p2", Some(ClusterStatus::CreateComplete)),
            ("c", "p1", Some(ClusterStatus::UpdateInProgress)),
            ("d", "p3", None),
        ] {
            cluster::create(
                db,
                &Cluster {
                    status,
                    ..cl(name, project)
                },
            )
            .await
            .unwrap();
        }
        let mut counts = cluster::count_by_status(db).await.unwrap();
        counts.sort();
        assert_eq!(
            counts,
            vec![
                (None, 1),
                (Some("CREATE_COMPLETE".to_string()), 2),
                (Some("UPDATE_IN_PROGRESS".to_string()), 1),
            ]
        );
    });
}

/// The create of a cluster with its nodegroups and the delete of its template, racing: either
/// the create comes first (and the delete is `ClusterTemplateReferenced`) or the delete does
/// (and the create is `ClusterTemplateNotFound`, nothing written) — never a stored cluster
/// whose template is gone (the HTTP fuzzer's stuck cluster, issue 16).
#[tokio::test]
async fn a_cluster_is_never_stored_with_a_deleted_template() {
    on_every_backend!(|db, backend| {
        let admin = Scope::admin_all_tenants();
        let mut both_won = 0;
        for i in 0..30 {
            let t = openkeel_db::cluster_template::create(
                db,
                &openkeel_core::objects::ClusterTemplate {
                    name: Some(format!("t{i}")),
                    project_id: Some("p1".into()),
                    coe: Some("kubernetes".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
            let tid = t.uuid.clone().unwrap();
            let mut c = cl(&format!("c{i}"), "p1");
            c.uuid = Some(uuid::Uuid::new_v4().to_string());
            c.cluster_template_id = Some(tid.clone());
            let ngs = [ng(&c, "default-master", "master", 1)];
            let (created, destroyed) = tokio::join!(
                cluster::create_with_nodegroups(db, &c, &ngs),
                openkeel_db::cluster_template::destroy(db, &tid),
            );
            match (&created, &destroyed) {
                (Ok(_), Err(DbError::ClusterTemplateReferenced(_))) => {}
                (Err(DbError::ClusterTemplateNotFound(_)), Ok(())) => {
                    let uuid = c.uuid.as_deref().unwrap();
                    assert!(cluster::get_by_uuid(db, &admin, uuid).await.is_err());
                    let left = nodegroup::list(
                        db,
                        &admin,
                        uuid,
                        &NodeGroupFilters::default(),
                        &Page::all(),
                    )
                    .await
                    .unwrap();
                    assert!(left.is_empty(), "{left:?}");
                }
                (Ok(_), Ok(())) => both_won += 1,
                other => panic!("{backend}: unexpected {other:?}"),
            }
        }
        assert_eq!(
            both_won, 0,
            "{backend}: clusters stored with a deleted template"
        );
        // With no template at all: nothing written.
        let mut c = cl("orphan", "p1");
        c.uuid = Some(uuid::Uuid::new_v4().to_string());
        c.cluster_template_id = Some(uuid::Uuid::new_v4().to_string());
        let e = cluster::create_with_nodegroups(db, &c, &[ng(&c, "m", "master", 1)])
            .await
            .unwrap_err();
        assert!(matches!(e, DbError::ClusterTemplateNotFound(_)), "{e:?}");
        assert!(cluster::get_by_uuid(db, &admin, c.uuid.as_deref().unwrap())
            .await
            .is_err());
    });
}

/// `get_with_relations` (the API's show) in one statement gives what the three separate
/// look-ups give: the cluster as `get_by_ident` finds it (or its error), its nodegroups as
/// `nodegroup::list` lists them (id order, nodegroup scoping), its template as
/// `cluster_template::get_by_uuid` finds it (or its error).
#[tokio::test]
async fn a_show_reads_the_cluster_its_nodegroups_and_template_in_one_statement() {
    use openkeel_core::objects::ClusterTemplate;
    use openkeel_db::cluster_template;
    on_every_backend!(|db, backend| {
        let template = |name: &str, project: &str, public: bool, hidden: bool| ClusterTemplate {
            name: Some(name.into()),
            labels: Some(StringMap::from([(
                "template".to_string(),
                name.to_string(),
            )])),
            project_id: Some(project.into()),
            user_id: Some(format!("user-{project}")),
            public: Some(public),
            hidden: Some(hidden),
            ..ClusterTemplate::default()
        };
        let t1 = cluster_template::create(db, &template("t1", "p1", false, false))
            .await
            .unwrap();
        let t2 = cluster_template::create(db, &template("t2", "p2", false, false))
            .await
            .unwrap();
        let public = cluster_template::create(db, &template("pub", "p3", true, false))
            .await
            .unwrap();
        let hidden = cluster_template::create(db, &template("hid", "p3", true, true))
            .await
            .unwrap();
        let gone = cluster_template::create(db, &template("gone", "p1", false, false))
            .await
            .unwrap();
        cluster_template::destroy(db, gone.uuid.as_deref().unwrap())
            .await
            .unwrap();

        let mut idents: Vec<String> = vec![
            "shared".into(),
            "twin".into(),
            "nope".into(),
            uuid::Uuid::new_v4().to_string(),
        ];
        let add = |name: &str, project: &str, t: &ClusterTemplate, ngs: &[&str]| {
            let mut c = cl(name, project);
            c.cluster_template_id = t.uuid.clone();
            let ngs: Vec<String> = ngs.iter().map(|n| n.to_string()).collect();
            async move {
                let c = cluster::create(db, &c).await.unwrap();
                for (i, n) in ngs.iter().enumerate() {
                    let role = if i == 0 { "master" } else { "worker" };
                    // every column the view reads set, and one it does not
                    let failed = i == 1;
                    let group = NodeGroup {
                        node_addresses: Some(vec![format!("10.0.0.{i}")]),
                        is_default: Some(i < 2),
                        status: Some(if failed {
                            ClusterStatus::UpdateFailed
                        } else {
                            ClusterStatus::CreateComplete
                        }),
                        status_reason: failed.then(|| format!("{n} failed")),
                        flavor_id: Some("m1.small".into()),
                        ..ng(&c, n, role, i as i32 + 1)
                    };
                    nodegroup::create(db, &group).await.unwrap();
                }
                c
            }
        };
        // Nodegroups created out of name order: an index on (cluster_id, name) would give
        // them in name order, not id order.
        let a = add("a", "p1", &t1, &["zeta", "alpha", "mid"]).await;
        let mut foreign = ng(&a, "beta", "worker", 2);
        foreign.project_id = "p2".into();
        nodegroup::create(db, &foreign).await.unwrap();
        let shared1 = add("shared", "p1", &public, &["s2", "s1"]).await;
        let shared2 = add("shared", "p2", &t2, &["x"]).await;
        let twin1 = add("twin", "p1", &t1, &["w"]).await;
        let twin2 = add("twin", "p1", &t1, &[]).await;
        let orphan = add("orphan", "p1", &gone, &["o2", "o1"]).await;
        let foreign_template = add("foreign-template", "p1", &t2, &["f"]).await;
        let bare = add("bare", "p2", &hidden, &[]).await;
        for c in [
            &a,
            &shared1,
            &shared2,
            &twin1,
            &twin2,
            &orphan,
            &foreign_template,
            &bare,
        ] {
            for ident in [c.uuid.clone().unwrap(), c.name.clone().unwrap()] {
                if !idents.contains(&ident) {
                    idents.push(ident);
                }
            }
        }

        let scopes = [
            ("admin all tenants", Scope::admin_all_tenants()),
            (
                "admin of p1",
                Scope {
                    is_admin: true,
                    ..Scope::project("p1")
                },
            ),
            ("p1", Scope::project("p1")),
            ("p2", Scope::project("p2")),
            (
                "user-p1 without project",
                Scope {
                    user_id: Some("user-p1".into()),
                    ..Scope::default()
                },
            ),
        ];
        let err = |e: &DbError| format!("{e:?}: {e}");
        let mut seen = std::collections::BTreeSet::new();
        for (scope_name, scope) in &scopes {
            for ident in &idents {
                let at = format!("{backend}, {scope_name}, {ident}");
                let before = db.statement_count();
                let got = cluster::get_with_relations(db, scope, ident).await;
                assert_eq!(db.statement_count() - before, 1, "{at}: one statement");
                let want = cluster::get_by_ident(db, scope, ident).await;
                let (got, want) = match (got, want) {
                    (Ok(got), Ok(want)) => (got, want),
                    (Err(g), Err(w)) => {
                        assert_eq!(err(&g), err(&w), "{at}");
                        seen.insert(format!("{scope_name}: {ident}: {}", err(&g)));
                        continue;
                    }
                    (got, want) => {
                        panic!("{at}: {:?} instead of {:?}", got.map(|g| g.cluster), want)
                    }
                };
                assert_eq!(got.cluster, want, "{at}");
                let cluster_uuid = want.uuid.as_deref().unwrap();
                let want_ngs = nodegroup::list(
                    db,
                    scope,
                    cluster_uuid,
                    &NodeGroupFilters::default(),
                    &Page::all(),
                )
                .await
                .unwrap();
                // only the viewed columns are read; each of them, and only them, as listed
                let viewed = |n: &NodeGroup| NodeGroup {
                    id: n.id,
                    name: n.name.clone(),
                    node_addresses: n.node_addresses.clone(),
                    node_count: n.node_count,
                    role: n.role.clone(),
                    is_default: n.is_default,
                    status: n.status,
                    status_reason: n.status_reason.clone(),
                    ..NodeGroup::default()
                };
                let want_ngs: Vec<NodeGroup> = want_ngs.iter().map(viewed).collect();
                assert_eq!(got.nodegroups.as_ref().unwrap(), &want_ngs, "{at}");
                let template_id = want.cluster_template_id.as_deref().unwrap_or_default();
                let want_template = cluster_template::get_by_uuid(db, scope, template_id).await;
                match (&got.template, &want_template) {
                    (Ok(g), Ok(w)) => {
                        assert_eq!(Some(&g.uuid), w.uuid.as_ref(), "{at}");
                        assert_eq!(g.labels, w.labels, "{at}");
                        assert!(g.labels.is_some(), "{at}: the labels are read");
                    }
                    (Err(g), Err(w)) => assert_eq!(err(g), err(w), "{at}"),
                    (g, w) => panic!("{at}: template {g:?} instead of {w:?}"),
                }
                let ng_names: Vec<&str> = want_ngs.iter().map(|n| n.name.as_str()).collect();
                // the same template or error as the comparison above
                let template_name = match &want_template {
                    Ok(t) => t.name.clone().unwrap_or_default(),
                    Err(e) => err(e),
                };
                seen.insert(format!(
                    "{scope_name}: {}: {ng_names:?} {template_name}",
                    want.name.unwrap_or_default()
                ));
            }
        }
        // The cases the comparison went through (so that it is not vacuous).
        let gone_err = format!(
            "ClusterTemplateNotFound({:?}): ClusterTemplate {} could not be found.",
            gone.uuid.as_deref().unwrap(),
            gone.uuid.as_deref().unwrap()
        );
        let t2_err = format!(
            "ClusterTemplateNotFound({:?}): ClusterTemplate {} could not be found.",
            t2.uuid.as_deref().unwrap(),
            t2.uuid.as_deref().unwrap()
        );
        let conflict = "Conflict(\"Multiple clusters exist with same name. Please use the \
                        cluster uuid instead.\"): Multiple clusters exist with same name. \
                        Please use the cluster uuid instead.";
        for case in [
            r#"admin all tenants: a: ["zeta", "alpha", "mid", "beta"] t1"#.to_string(),
            r#"p1: a: ["zeta", "alpha", "mid"] t1"#.into(),
            r#"admin of p1: a: ["zeta", "alpha", "mid", "beta"] t1"#.into(),
            r#"user-p1 without project: a: [] t1"#.into(),
            r#"p1: shared: ["s2", "s1"] pub"#.into(),
            format!("admin all tenants: shared: {conflict}"),
            format!("p1: twin: {conflict}"),
            format!("p1: orphan: [\"o2\", \"o1\"] {gone_err}"),
            format!("p1: foreign-template: [\"f\"] {t2_err}"),
            r#"admin all tenants: foreign-template: ["f"] t2"#.into(),
            r#"admin all tenants: bare: [] hid"#.into(),
            format!(
                "p2: bare: [] ClusterTemplateNotFound({:?}): ClusterTemplate {} could not be \
                 found.",
                hidden.uuid.as_deref().unwrap(),
                hidden.uuid.as_deref().unwrap()
            ),
            "p1: nope: ClusterNotFound(\"nope\"): Cluster nope could not be found.".into(),
        ] {
            assert!(seen.contains(&case), "{backend}: {case} not in {seen:#?}");
        }
    });
}
