//! The one harness of the API's HTTP-level tests (`tests/*.rs`): a real database (a
//! temporary SQLite file, and a fresh MariaDB database when `OPENKEEL_TEST_MYSQL_URL` is
//! set), a recording conductor, a fake cloud with the reference rig's stub data, Magnum's
//! default policy and a one-driver catalogue, driven through `openkeel_api::router`; the
//! callers' identities, the requests and their answers, `on_both!`, and the rows the
//! conductor would have written.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::body::Body;
use chrono::NaiveDate;
use http::Request;
use http_body_util::BodyExt;
use openkeel_api::validation::{DriverCatalog, TemplateSettings};
use openkeel_api::ApiState;
use openkeel_core::cloud::{Cloud, Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup, StringMap};
use openkeel_db::Database;
use openkeel_rpc::{ConductorApi, Obj};
use serde_json::Value;
use tower::ServiceExt;

// ---- fakes ----

/// The reference rig's stubcloud data; Keystone knows every project except those named
/// `nonexistent*`.
pub struct FakeCloud;

const IMAGES: &[(&str, &str, Option<&str>)] = &[
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0001",
        "ubuntu-jammy",
        Some("ubuntu"),
    ),
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0002",
        "fedora-coreos-40",
        Some("fedora-coreos"),
    ),
    ("5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0003", "no-distro", None),
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0004",
        "windows-2022",
        Some("windows"),
    ),
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0005",
        "dup-image",
        Some("ubuntu"),
    ),
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0006",
        "dup-image",
        Some("ubuntu"),
    ),
    (
        "5c1b4a0e-7f52-4a3e-9b7f-0a0d1a1e0007",
        "coreos-old",
        Some("coreos"),
    ),
];

#[async_trait]
impl Cloud for FakeCloud {
    async fn find_image(&self, _: &RequestContext, name_or_id: &str) -> Result<Image, MagnumError> {
        let found: Vec<_> = IMAGES
            .iter()
            .filter(|(id, name, _)| *id == name_or_id || *name == name_or_id)
            .collect();
        match found.as_slice() {
            [] => Err(MagnumError::new(ErrorKind::ImageNotFound, &[("image_id", &name_or_id)])),
            [(id, name, distro)] => Ok(Image {
                id: (*id).into(),
                name: Some((*name).into()),
                os_distro: distro.map(str::to_string),
                ..Default::default()
            }),
            _ => Err(MagnumError::with_message(
                ErrorKind::Conflict,
                format!("Multiple images exist with same name '{name_or_id}'. Please use the image ID instead."),
            )),
        }
    }

    async fn list_flavors(&self, _: &RequestContext) -> Result<Vec<Flavor>, MagnumError> {
        Ok([
            ("1", "m1.tiny", 1),
            ("2", "m1.small", 20),
            ("3", "m1.medium", 40),
            ("4", "m1.large", 80),
            ("c1", "ds4G", 0),
        ]
        .iter()
        .map(|(id, name, disk)| Flavor {
            id: (*id).into(),
            name: (*name).into(),
            disk: *disk,
            vcpus: 1,
            ram: 1024,
        })
        .collect())
    }

    async fn keypair_exists(&self, _: &RequestContext, name: &str) -> Result<bool, MagnumError> {
        Ok(name == "mykey" || name == "default")
    }

    async fn list_external_networks(
        &self,
        _: &RequestContext,
    ) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![NamedResource {
            id: "8f3f1b52-1b1e-4c1e-9a55-5e2a7d000001".into(),
            name: "public".into(),
        }])
    }

    async fn list_networks(&self, _: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![
            NamedResource {
                id: "8f3f1b52-1b1e-4c1e-9a55-5e2a7d000001".into(),
                name: "public".into(),
            },
            NamedResource {
                id: "8f3f1b52-1b1e-4c1e-9a55-5e2a7d000002".into(),
                name: "private".into(),
            },
            NamedResource {
                id: "8f3f1b52-1b1e-4c1e-9a55-5e2a7d000003".into(),
                name: "shared-net".into(),
            },
        ])
    }

    async fn list_subnets(&self, _: &RequestContext) -> Result<Vec<NamedResource>, MagnumError> {
        Ok(vec![
            NamedResource {
                id: "b0b5e2c4-2d6c-4f0a-8a63-3c1d9e000001".into(),
                name: "private-subnet".into(),
            },
            NamedResource {
                id: "b0b5e2c4-2d6c-4f0a-8a63-3c1d9e000002".into(),
                name: "public-subnet".into(),
            },
        ])
    }

    async fn project_exists(
        &self,
        _: &RequestContext,
        project_id: &str,
    ) -> Result<bool, MagnumError> {
        Ok(!project_id.starts_with("nonexistent"))
    }
}

/// One installed driver, `k8s_fake_v1`, providing (vm, ubuntu, kubernetes) — the reference
/// rig's driver set-up.
pub struct OneDriver;

impl DriverCatalog for OneDriver {
    fn supports(
        &self,
        st: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver: Option<&str>,
    ) -> Result<(), MagnumError> {
        if let Some(d) = driver {
            return if d == "k8s_fake_v1" {
                Ok(())
            } else {
                Err(MagnumError::new(
                    ErrorKind::ClusterDriverNotSupported,
                    &[("driver_name", &d)],
                ))
            };
        }
        if (st, os, coe) == (Some("vm"), Some("ubuntu"), Some("kubernetes")) {
            return Ok(());
        }
        let p = |v: Option<&str>| v.unwrap_or("None").to_string();
        Err(MagnumError::new(
            ErrorKind::ClusterTypeNotSupported,
            &[
                ("server_type", &p(st)),
                ("os", &p(os)),
                ("coe", &p(coe)),
                ("supported_cluster_types", &"(vm, ubuntu, kubernetes)"),
            ],
        ))
    }

    fn default_driver(&self) -> Result<Option<String>, MagnumError> {
        Ok(Some("k8s_fake_v1".into()))
    }
}

/// What the API sent to the conductor.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Cast {
    Create {
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    },
    Update {
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    },
    Delete(String),
    Resize {
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    },
    Upgrade {
        cluster: Obj<Cluster>,
        template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
    },
    NgCreate {
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    },
    NgUpdate {
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    },
    NgDelete {
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    },
}

/// A conductor that records every call; `upgrade_error` is what the upgrade call returns.
#[derive(Default)]
pub struct Recorder {
    pub casts: Mutex<Vec<Cast>>,
    pub upgrade_error: Mutex<Option<MagnumError>>,
}

impl Recorder {
    fn push(&self, c: Cast) {
        self.casts.lock().unwrap().push(c);
    }

    /// Take what was recorded since the last call.
    pub fn take(&self) -> Vec<Cast> {
        std::mem::take(&mut *self.casts.lock().unwrap())
    }
}

#[async_trait]
impl ConductorApi for Recorder {
    async fn cluster_create(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<(), MagnumError> {
        self.push(Cast::Create {
            cluster,
            master_count,
            node_count,
            create_timeout,
        });
        Ok(())
    }

    async fn cluster_update(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        self.push(Cast::Update {
            cluster,
            node_count,
            health_status,
            health_status_reason,
            rollback,
        });
        Ok(())
    }

    async fn cluster_delete(&self, _: &RequestContext, uuid: String) -> Result<(), MagnumError> {
        self.push(Cast::Delete(uuid));
        Ok(())
    }

    async fn cluster_resize(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(Cast::Resize {
            cluster,
            node_count,
            nodes_to_remove,
            nodegroup,
        });
        Ok(())
    }

    async fn cluster_upgrade(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        _rollback: bool,
    ) -> Result<(), MagnumError> {
        self.push(Cast::Upgrade {
            cluster,
            template,
            max_batch_size,
            nodegroup,
        });
        match self.upgrade_error.lock().unwrap().clone() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    async fn nodegroup_create(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(Cast::NgCreate { cluster, nodegroup });
        Ok(())
    }

    async fn nodegroup_update(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(Cast::NgUpdate { cluster, nodegroup });
        Ok(())
    }

    async fn nodegroup_delete(
        &self,
        _: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(Cast::NgDelete { cluster, nodegroup });
        Ok(())
    }

    async fn sign_certificate(
        &self,
        _: &RequestContext,
        _: Obj<Cluster>,
        _: Obj<openkeel_core::objects::Certificate>,
    ) -> Result<openkeel_core::objects::Certificate, MagnumError> {
        Err(MagnumError::internal("not recorded"))
    }
    async fn get_ca_certificate(
        &self,
        _: &RequestContext,
        _: Obj<Cluster>,
        _: Option<String>,
    ) -> Result<openkeel_core::objects::Certificate, MagnumError> {
        Err(MagnumError::internal("not recorded"))
    }
    async fn rotate_ca_certificate(
        &self,
        _: &RequestContext,
        _: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        Err(MagnumError::internal("not recorded"))
    }
    async fn credential_rotate(
        &self,
        _: &RequestContext,
        _: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        Err(MagnumError::internal("not recorded"))
    }
}

// ---- the API under test ----

pub struct Api {
    pub app: axum::Router,
    pub db: Database,
    pub conductor: Arc<Recorder>,
    _file: Option<SqliteFile>,
    _guard: Option<openkeel_tests::MysqlDatabase>,
}

/// A temporary SQLite database file, removed (with its journal files) on drop.
pub struct SqliteFile(std::path::PathBuf);

impl SqliteFile {
    /// A new, migrated database in a file named after `prefix`.
    pub async fn create(prefix: &str) -> (Database, SqliteFile) {
        let path =
            std::env::temp_dir().join(format!("{prefix}-{}.db", uuid::Uuid::new_v4().simple()));
        let file = SqliteFile(path);
        let url = format!("sqlite:///{}", file.0.display());
        let db = Database::connect(&url).await.expect("sqlite file");
        openkeel_db::manage::upgrade(&db).await.expect("schema");
        (db, file)
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A fresh, migrated MariaDB database, or `None` where there is none (which fails under
/// `CI=true`: `openkeel_tests::fresh_mysql_database`).
pub async fn mariadb_db() -> Option<(Database, openkeel_tests::MysqlDatabase)> {
    let guard = openkeel_tests::fresh_mysql_database().await?;
    let db = Database::connect(guard.url()).await.expect("mariadb");
    openkeel_db::manage::upgrade(&db).await.expect("schema");
    Some((db, guard))
}

/// Magnum's default policy.
pub fn default_policy() -> openkeel_auth::Enforcer {
    openkeel_auth::Enforcer::new(openkeel_auth::PolicyOptions {
        policy_file: None,
        policy_dirs: Vec::new(),
        ..Default::default()
    })
    .expect("policy")
}

fn state_for(db: Database, conductor: Arc<Recorder>, quota: i64) -> ApiState {
    ApiState {
        db: Some(db),
        cloud: Some(Arc::new(FakeCloud)),
        drivers: Some(Arc::new(OneDriver)),
        policy: Some(Arc::new(default_policy())),
        conductor: Some(conductor),
        template_settings: TemplateSettings::default(),
        clusters: openkeel_api::resources::clusters::ClusterSettings {
            max_clusters_per_project: quota,
            // the recorder never inserts: don't wait for it
            insert_wait: std::time::Duration::ZERO,
        },
        ..Default::default()
    }
}

fn build(
    db: Database,
    file: Option<SqliteFile>,
    guard: Option<openkeel_tests::MysqlDatabase>,
) -> Api {
    let conductor = Arc::new(Recorder::default());
    let state = state_for(db.clone(), conductor.clone(), 20);
    Api {
        app: openkeel_api::router(Arc::new(state)),
        db,
        conductor,
        _file: file,
        _guard: guard,
    }
}

pub async fn sqlite() -> Api {
    let (db, file) = SqliteFile::create("openkeel-api-tests").await;
    build(db, Some(file), None)
}

pub async fn mariadb() -> Option<Api> {
    let (db, guard) = mariadb_db().await?;
    Some(build(db, None, Some(guard)))
}

impl Api {
    /// The same database and conductor under the policy `rules` (a `policy.yaml` text) over
    /// Magnum's defaults, and the directory of the file (the rules are read again when it
    /// changes: keep it).
    pub fn with_policy(&self, rules: &str) -> (axum::Router, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(dir.path().join("policy.yaml"), rules).expect("policy.yaml");
        let policy = openkeel_auth::Enforcer::new(openkeel_auth::PolicyOptions {
            config_dirs: vec![dir.path().to_path_buf()],
            ..Default::default()
        })
        .expect("policy");
        let mut state = state_for(self.db.clone(), self.conductor.clone(), 20);
        state.policy = Some(Arc::new(policy));
        (openkeel_api::router(Arc::new(state)), dir)
    }

    /// The same database and conductor with another `[quotas] max_clusters_per_project`.
    pub fn with_quota(&self, quota: i64) -> axum::Router {
        openkeel_api::router(Arc::new(state_for(
            self.db.clone(),
            self.conductor.clone(),
            quota,
        )))
    }
}

/// Run each scenario (an `async fn(T)`) on SQLite, and on MariaDB when one is available:
/// `on_both!(a, b)` with this harness's [`Api`] (the test file declares `mod common`), or
/// `on_both!(using on_sqlite, on_mariadb; a, b)` with the file's own constructors
/// (`async fn() -> T` and `async fn() -> Option<T>`).
macro_rules! on_both {
    (using $sqlite:ident, $mariadb:ident; $($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $( #[tokio::test] async fn $name() { super::$name(super::$sqlite().await).await; } )*
        }
        mod mariadb_backend {
            $( #[tokio::test] async fn $name() { if let Some(api) = super::$mariadb().await { super::$name(api).await; } } )*
        }
    };
    ($($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $( #[tokio::test] async fn $name() { super::$name(super::common::sqlite().await).await; } )*
        }
        mod mariadb_backend {
            $( #[tokio::test] async fn $name() { if let Some(api) = super::common::mariadb().await { super::$name(api).await; } } )*
        }
    };
}

pub struct Resp {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, n: &str) -> Option<&str> {
        self.headers.get(n).and_then(|v| v.to_str().ok())
    }

    /// The `detail` of an error envelope.
    pub fn detail(&self) -> String {
        self.json()["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Status and detail, for compact assertions on errors.
    pub fn err(&self) -> (u16, String) {
        (self.status, self.detail())
    }
}

/// Who is calling.
#[derive(Clone, Copy, Debug)]
pub enum Who {
    /// No identity headers: noauth's default identity (an admin of `noauth-project`).
    Admin,
    /// An admin of `admin-project` (user `admin`).
    ProjectAdmin,
    /// A member of the named project (user `<project>-user`).
    Member(&'static str),
    /// A reader (no member role) of the named project.
    Reader(&'static str),
}

pub const HOST: &str = "magnum.example.com:9511";

/// The newest microversion, which the tests ask for unless they test another.
pub const LATEST: &str = "1.14";

pub async fn call_app(
    app: &axum::Router,
    who: Who,
    method: &str,
    path: &str,
    body: Option<&str>,
    version: Option<&str>,
) -> Resp {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("host", HOST);
    if let Some(v) = version {
        b = b.header("OpenStack-API-Version", format!("container-infra {v}"));
    }
    let identity = match who {
        Who::Admin => None,
        Who::ProjectAdmin => Some(("admin".to_string(), "admin-project", "admin,member,reader")),
        Who::Member(p) => Some((format!("{p}-user"), p, "member,reader")),
        Who::Reader(p) => Some((format!("{p}-user"), p, "reader")),
    };
    if let Some((user, project, roles)) = identity {
        b = b
            .header("X-User-Id", user)
            .header("X-Project-Id", project)
            .header("X-Roles", roles)
            .header("X-Auth-Token", "t");
    }
    let req = match body {
        Some(text) => b
            .header("content-type", "application/json")
            .body(Body::from(text.to_string())),
        None => b.body(Body::empty()),
    }
    .unwrap();
    send(app, req).await
}

/// Send `req` to `app` and read the whole answer.
pub async fn send(app: &axum::Router, req: Request<Body>) -> Resp {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    Resp {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

impl Api {
    pub async fn call(
        &self,
        who: Who,
        method: &str,
        path: &str,
        body: Option<&str>,
        version: &str,
    ) -> Resp {
        call_app(&self.app, who, method, path, body, Some(version)).await
    }

    /// `GET path` at the newest microversion.
    pub async fn get(&self, who: Who, path: &str) -> Resp {
        self.call(who, "GET", path, None, LATEST).await
    }

    /// `GET path` at `version`, as the admin of `admin-project`.
    pub async fn get_at(&self, path: &str, version: &str) -> Resp {
        self.call(Who::ProjectAdmin, "GET", path, None, version)
            .await
    }

    /// A request with the given `Content-Type` (or none) and body, as noauth's identity and
    /// without a microversion header.
    pub async fn raw(&self, method: &str, path: &str, ctype: Option<&str>, body: &str) -> Resp {
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header("host", HOST);
        if let Some(c) = ctype {
            b = b.header("content-type", c);
        }
        send(&self.app, b.body(Body::from(body.to_string())).unwrap()).await
    }
}

// ---- fixtures (what the conductor would have written) ----

pub const T_UUID: &str = "0562d357-8641-4759-8fed-8173f02c9633";
pub const C_UUID: &str = "746e779a-751a-456b-a3e9-c883d734946f";
pub const MASTER_UUID: &str = "1ed8542f-9bba-4572-8b0a-c6a0a79ed048";
pub const WORKER_UUID: &str = "4584caf9-de5f-4a31-b734-8821672fb1e8";

pub fn at(h: u32, m: u32, s: u32) -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 7, 17)
        .and_then(|d| d.and_hms_opt(h, m, s))
        .unwrap()
}

pub fn map(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// A template `k8s` of `admin-project` as the template API stores it.
pub fn template(uuid: &str, name: &str, project: &str) -> ClusterTemplate {
    ClusterTemplate {
        created_at: Some(at(6, 0, 0)),
        uuid: Some(uuid.into()),
        name: Some(name.into()),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.medium".into()),
        keypair_id: Some("mykey".into()),
        image_id: Some("ubuntu-jammy".into()),
        external_network_id: Some("public".into()),
        project_id: Some(project.into()),
        user_id: Some("admin".into()),
        cluster_distro: Some("ubuntu".into()),
        coe: Some("kubernetes".into()),
        server_type: Some("vm".into()),
        network_driver: Some("flannel".into()),
        labels: Some(map(&[("kube_tag", "v1.30.4"), ("boot_volume_size", "10")])),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(true),
        driver: Some("k8s_fake_v1".into()),
        ..Default::default()
    }
}

pub async fn add_template(db: &Database, t: &ClusterTemplate) -> ClusterTemplate {
    openkeel_db::cluster_template::create(db, t)
        .await
        .expect("template")
}

/// A `CREATE_COMPLETE` cluster `k8s-prod` of `admin-project` on template `T_UUID`.
pub fn cluster(uuid: &str, name: &str, project: &str) -> Cluster {
    Cluster {
        created_at: Some(at(6, 52, 54)),
        updated_at: Some(at(7, 1, 12)),
        uuid: Some(uuid.into()),
        name: Some(name.into()),
        cluster_template_id: Some(T_UUID.into()),
        api_address: Some("https://172.24.4.6:6443".into()),
        stack_id: Some("kube-9c6f1".into()),
        project_id: Some(project.into()),
        user_id: Some("admin".into()),
        status: Some(ClusterStatus::CreateComplete),
        create_timeout: Some(60),
        keypair: Some("mykey".into()),
        labels: Some(map(&[
            ("kube_tag", "v1.30.4"),
            ("boot_volume_size", "40"),
            ("auto_scaling_enabled", "true"),
        ])),
        master_flavor_id: Some("m1.medium".into()),
        flavor_id: Some("m1.large".into()),
        health_status_reason: Some(StringMap::new()),
        floating_ip_enabled: Some(true),
        master_lb_enabled: Some(true),
        ..Default::default()
    }
}

pub async fn add_cluster(db: &Database, c: &Cluster) -> Cluster {
    openkeel_db::cluster::create(db, c).await.expect("cluster")
}

pub fn nodegroup(uuid: &str, name: &str, cluster: &Cluster, role: &str, count: i32) -> NodeGroup {
    NodeGroup {
        created_at: Some(at(6, 52, 54)),
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: cluster.uuid.clone().unwrap_or_default(),
        project_id: cluster.project_id.clone().unwrap_or_default(),
        labels: cluster.labels.clone(),
        flavor_id: Some(
            if role == "master" {
                "m1.medium"
            } else {
                "m1.large"
            }
            .into(),
        ),
        image_id: Some("ubuntu-jammy".into()),
        node_addresses: Some(Vec::new()),
        node_count: Some(count),
        role: Some(role.into()),
        is_default: Some(true),
        stack_id: cluster.stack_id.clone(),
        status: Some(ClusterStatus::CreateComplete),
        node_labels: Some(StringMap::new()),
        node_taints: Some(Vec::new()),
        ..Default::default()
    }
}

pub async fn add_nodegroup(db: &Database, ng: &NodeGroup) -> NodeGroup {
    openkeel_db::nodegroup::create(db, ng)
        .await
        .expect("nodegroup")
}

/// Template `k8s`, cluster `k8s-prod` with a default master (1 node, 10.0.0.10) and a
/// default worker (3 nodes, 10.0.0.11–13), all in `admin-project`.
pub async fn seed(db: &Database) -> Cluster {
    add_template(db, &template(T_UUID, "k8s", "admin-project")).await;
    let c = add_cluster(db, &cluster(C_UUID, "k8s-prod", "admin-project")).await;
    let mut m = nodegroup(MASTER_UUID, "default-master", &c, "master", 1);
    m.node_addresses = Some(vec!["10.0.0.10".into()]);
    add_nodegroup(db, &m).await;
    let mut w = nodegroup(WORKER_UUID, "default-worker", &c, "worker", 3);
    w.node_addresses = Some(vec![
        "10.0.0.11".into(),
        "10.0.0.12".into(),
        "10.0.0.13".into(),
    ]);
    add_nodegroup(db, &w).await;
    c
}
