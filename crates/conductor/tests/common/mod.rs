//! Shared fixtures: every test body runs on SQLite (always) and MariaDB (when
//! `OPENKEEL_TEST_MYSQL_URL` is set; required in CI).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use openkeel_conductor::{Action, Conductor, ConductorSettings, Notifier, Outcome};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup, StringMap};
use openkeel_db::{
    cluster, cluster_template, manage, nodegroup, Database, NodeGroupFilters, Page, Scope,
};
use openkeel_drivers::{DriverRegistry, DriverSettings};
use openkeel_rpc::Obj;
use openkeel_tests::MysqlDatabase;

pub const PROJECT: &str = "5f1b7f1f9d8e4c56a1b2c3d4e5f60718";
pub const USER: &str = "0c2b5a1e7e6f4d3c9b8a7f6e5d4c3b2a";

/// A migrated database of one backend.
pub struct TestDb {
    pub db: Database,
    pub name: &'static str,
    pub guard: Option<MysqlDatabase>,
}

/// SQLite in memory, plus a fresh MariaDB database when available; schema at head.
pub async fn backends() -> Vec<TestDb> {
    let mut out = vec![TestDb {
        db: Database::in_memory().await.expect("sqlite in memory"),
        name: "sqlite",
        guard: None,
    }];
    if let Some(guard) = openkeel_tests::fresh_mysql_database().await {
        let db = Database::connect(guard.url())
            .await
            .expect("connect to the test MariaDB");
        out.push(TestDb {
            db,
            name: "mariadb",
            guard: Some(guard),
        });
    }
    for t in &out {
        manage::upgrade(&t.db).await.expect("upgrade");
    }
    out
}

/// Run `$body` (using `$db: &Database`) on every backend.
#[macro_export]
macro_rules! on_every_backend {
    (|$db:ident| $body:block) => {{
        for t in common::backends().await {
            let $db: &openkeel_db::Database = &t.db;
            eprintln!("-- backend {}", t.name);
            $body
        }
    }};
}

/// Records every notification.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<(Action, Outcome, Option<ClusterStatus>)>>,
}

impl Recorder {
    pub fn take(&self) -> Vec<(Action, Outcome)> {
        let mut e = self.events.lock().unwrap();
        e.drain(..).map(|(a, o, _)| (a, o)).collect()
    }
}

#[async_trait]
impl Notifier for Recorder {
    async fn notify_cluster_operation(
        &self,
        _ctx: &RequestContext,
        action: Action,
        outcome: Outcome,
        cluster: &Cluster,
    ) {
        self.events
            .lock()
            .unwrap()
            .push((action, outcome, cluster.status));
    }
}

/// Short timeouts for tests.
pub fn settings() -> ConductorSettings {
    ConductorSettings {
        driver_call_timeout: Duration::from_secs(10),
        ..ConductorSettings::default()
    }
}

/// A conductor with the simulator driver.
pub fn conductor(db: &Database) -> (Arc<Conductor>, Arc<Recorder>) {
    conductor_with(db, settings(), true)
}

pub fn conductor_with(
    db: &Database,
    settings: ConductorSettings,
    simulator: bool,
) -> (Arc<Conductor>, Arc<Recorder>) {
    let rec = Arc::new(Recorder::default());
    let drivers = DriverRegistry::builtin(DriverSettings::default(), simulator);
    let c = Conductor::new(db.clone(), Arc::new(drivers), rec.clone(), settings);
    (Arc::new(c), rec)
}

pub fn ctx() -> RequestContext {
    RequestContext {
        project_id: Some(PROJECT.into()),
        user_id: Some(USER.into()),
        roles: vec!["member".into(), "reader".into()],
        request_id: RequestContext::new_request_id(),
        ..RequestContext::default()
    }
}

pub fn labels(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A template as the API stores it.
pub async fn template(db: &Database, name: &str, kube_tag: &str, distro: &str) -> ClusterTemplate {
    cluster_template::create(
        db,
        &ClusterTemplate {
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            name: Some(name.into()),
            image_id: Some(format!("image-{name}")),
            flavor_id: Some("m1.small".into()),
            master_flavor_id: Some("m1.medium".into()),
            keypair_id: Some("mykey".into()),
            external_network_id: Some("public".into()),
            docker_volume_size: Some(10),
            coe: Some("kubernetes".into()),
            server_type: Some("vm".into()),
            cluster_distro: Some(distro.into()),
            network_driver: Some("calico".into()),
            labels: Some(labels(&[("kube_tag", kube_tag)])),
            project_id: Some(PROJECT.into()),
            user_id: Some(USER.into()),
            ..ClusterTemplate::default()
        },
    )
    .await
    .expect("template")
}

/// The cluster object the API casts with `cluster_create` (the fields it sets, marked changed).
pub fn new_cluster(template: &ClusterTemplate, name: &str, extra: &[(&str, &str)]) -> Obj<Cluster> {
    let mut l = template.labels.clone().unwrap_or_default();
    for (k, v) in extra {
        l.insert(k.to_string(), v.to_string());
    }
    Obj::new(
        Cluster {
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            name: Some(name.into()),
            project_id: Some(PROJECT.into()),
            user_id: Some(USER.into()),
            cluster_template_id: template.uuid.clone(),
            keypair: Some("mykey".into()),
            docker_volume_size: Some(10),
            labels: Some(l),
            master_flavor_id: Some("m1.medium".into()),
            flavor_id: Some("m1.small".into()),
            create_timeout: Some(60),
            fixed_network: None,
            fixed_subnet: None,
            floating_ip_enabled: Some(true),
            master_lb_enabled: Some(false),
            ..Cluster::default()
        },
        [
            "uuid",
            "name",
            "project_id",
            "user_id",
            "cluster_template_id",
            "keypair",
            "docker_volume_size",
            "labels",
            "master_flavor_id",
            "flavor_id",
            "create_timeout",
            "coe_version",
            "container_version",
            "fixed_network",
            "fixed_subnet",
            "floating_ip_enabled",
            "master_lb_enabled",
        ],
    )
}

/// Create a cluster (1 master, `nodes` workers) through the handler; returns its uuid.
pub async fn create(
    c: &Conductor,
    template: &ClusterTemplate,
    name: &str,
    nodes: i32,
    extra: &[(&str, &str)],
) -> String {
    let obj = new_cluster(template, name, extra);
    let uuid = obj.data.uuid.clone().unwrap();
    c.handle_cluster_create(&ctx(), obj, 1, nodes, 60)
        .await
        .expect("cluster_create");
    uuid
}

pub async fn get(db: &Database, uuid: &str) -> Option<Cluster> {
    match cluster::get_by_uuid(db, &Scope::admin_all_tenants(), uuid).await {
        Ok(c) => Some(c),
        Err(e) if e.is_not_found() => None,
        Err(e) => panic!("get cluster: {e}"),
    }
}

pub async fn cluster_row(db: &Database, uuid: &str) -> Cluster {
    get(db, uuid).await.expect("cluster row")
}

pub async fn ngs(db: &Database, uuid: &str) -> Vec<NodeGroup> {
    nodegroup::list(
        db,
        &Scope::admin_all_tenants(),
        uuid,
        &NodeGroupFilters::default(),
        &Page::all(),
    )
    .await
    .expect("nodegroups")
}

pub async fn ng_named(db: &Database, uuid: &str, name: &str) -> NodeGroup {
    ngs(db, uuid)
        .await
        .into_iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no nodegroup {name}"))
}

/// The object the API would send: the row as read, nothing changed.
pub async fn obj(db: &Database, uuid: &str) -> Obj<Cluster> {
    Obj::unchanged(cluster_row(db, uuid).await)
}

/// A cluster brought to CREATE_COMPLETE.
pub async fn ready(
    c: &Arc<Conductor>,
    db: &Database,
    template: &ClusterTemplate,
    name: &str,
    extra: &[(&str, &str)],
) -> String {
    let uuid = create(c, template, name, 2, extra).await;
    c.sync_cluster_status().await;
    assert_eq!(
        cluster_row(db, &uuid).await.status,
        Some(ClusterStatus::CreateComplete)
    );
    uuid
}

pub fn status(c: &Cluster) -> ClusterStatus {
    c.status.expect("status")
}
