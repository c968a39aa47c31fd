//! Test doubles for the driver's dependencies: the cluster's CAs, Keystone application
//! credentials and the OpenStack look-ups (in-memory, recording what was asked), a cluster
//! and its template as the conductor hands them over, and an in-memory Kubernetes API
//! (a tower service behind kube's client) for request-level tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use http_body_util::BodyExt;
use openkeel_core::cloud::{Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup, StringMap};
use openkeel_driver_capi::addons::HelmRelease;
use openkeel_driver_capi::driver::{ChartRenderer, Settings};
use openkeel_driver_capi::helm::HelmTemplate;
use openkeel_driver_capi::mgmt::ClientSource;
use openkeel_drivers::deps::{
    ApplicationCredential, ApplicationCredentials, ClusterCaSource, ClusterCas, DriverCloud,
    KeyPairPem,
};
use openkeel_drivers::{DriverDeps, DriverError, DriverResult};
use serde_json::{json, Value};

pub const UUID: &str = "8e1c4b6a-2f55-4a0e-9d0b-1c2d3e4f5a6b";

/// The id the fake cloud gives a named resource (a UUID, as Neutron's: CAPO's CRDs check).
pub fn id_of(name: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes()).to_string()
}

/// What the fake dependencies were asked, in order.
#[derive(Default)]
pub struct Calls(pub Mutex<Vec<String>>);

impl Calls {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

pub struct FakeCas(pub Arc<Calls>);

#[async_trait]
impl ClusterCaSource for FakeCas {
    async fn cluster_cas(&self, _: &RequestContext, c: &Cluster) -> DriverResult<ClusterCas> {
        self.0
            .push(format!("cas {}", c.uuid.as_deref().unwrap_or("")));
        let pair = |n: &str| KeyPairPem {
            certificate: format!("-----BEGIN CERTIFICATE-----\n{n}\n-----END CERTIFICATE-----\n"),
            private_key: format!("-----BEGIN PRIVATE KEY-----\n{n}\n-----END PRIVATE KEY-----\n"),
        };
        Ok(ClusterCas {
            kubernetes: pair("CA"),
            etcd: pair("ETCD"),
            front_proxy: pair("PROXY"),
            service_account: pair("SA"),
        })
    }
}

/// Application credentials in memory: name → id; `fail_delete` makes delete fail (403-like,
/// permanent) once.
#[derive(Default)]
pub struct FakeCreds {
    pub calls: Arc<Calls>,
    pub live: Mutex<BTreeMap<String, String>>,
    pub fail_create_transient: Mutex<bool>,
    pub fail_delete_id: Mutex<bool>,
}

#[async_trait]
impl ApplicationCredentials for FakeCreds {
    async fn create(&self, _: &RequestContext, c: &Cluster) -> DriverResult<ApplicationCredential> {
        let name = c.uuid.clone().unwrap_or_default();
        self.calls.push(format!("appcred create {name}"));
        if std::mem::take(&mut *self.fail_create_transient.lock().unwrap()) {
            return Err(DriverError::transient("Keystone is unreachable"));
        }
        let mut live = self.live.lock().unwrap();
        if live.contains_key(&name) {
            return Err(DriverError::permanent_message(format!(
                "Conflict: application credential {name} exists"
            )));
        }
        let id = format!("ac-{}", live.len() + 1);
        live.insert(name, id.clone());
        Ok(ApplicationCredential {
            id,
            secret: "s3cret".into(),
            auth_url: "https://keystone.example/v3".into(),
            region_name: Some("RegionOne".into()),
        })
    }

    async fn create_named(
        &self,
        _: &RequestContext,
        c: &Cluster,
        name: &str,
    ) -> DriverResult<ApplicationCredential> {
        self.calls.push(format!("appcred create {name}"));
        let mut live = self.live.lock().unwrap();
        if live.contains_key(name) {
            return Err(DriverError::permanent_message(format!(
                "Conflict: application credential {name} exists"
            )));
        }
        assert!(
            openkeel_drivers::deps::is_cluster_credential(name, c.uuid.as_deref().unwrap()),
            "{name}"
        );
        let id = format!("rot-{}-id", live.len() + 1 + self.calls.all().len());
        live.insert(name.to_string(), id.clone());
        Ok(ApplicationCredential {
            id,
            secret: format!("s3cret-{name}"),
            auth_url: "https://keystone.example/v3".into(),
            region_name: Some("RegionOne".into()),
        })
    }

    async fn delete(&self, user_id: &str, name: &str) -> DriverResult<()> {
        self.calls.push(format!("appcred delete {user_id} {name}"));
        self.live
            .lock()
            .unwrap()
            .retain(|n, _| !openkeel_drivers::deps::is_cluster_credential(n, name));
        Ok(())
    }

    async fn delete_id(&self, user_id: &str, id: &str) -> DriverResult<()> {
        self.calls.push(format!("appcred delete_id {user_id} {id}"));
        if std::mem::take(&mut *self.fail_delete_id.lock().unwrap()) {
            return Err(DriverError::permanent_message("Forbidden"));
        }
        self.live.lock().unwrap().retain(|_, i| i != id);
        Ok(())
    }
}

#[derive(Default)]
pub struct FakeCloud {
    pub calls: Arc<Calls>,
    pub server_groups: Mutex<BTreeMap<String, String>>,
}

#[async_trait]
impl DriverCloud for FakeCloud {
    async fn flavor(&self, _: &RequestContext, n: &str) -> DriverResult<Flavor> {
        self.calls.push(format!("flavor {n}"));
        if n == "missing" {
            return Err(DriverError::permanent_message(format!(
                "Unable to find flavor with name '{n}'"
            )));
        }
        Ok(Flavor {
            id: format!("{n}-id"),
            name: n.to_string(),
            disk: 40,
            vcpus: 2,
            ram: 4096,
        })
    }
    async fn image(&self, _: &RequestContext, n: &str) -> DriverResult<Image> {
        self.calls.push(format!("image {n}"));
        Ok(Image {
            id: "11111111-2222-3333-4444-555555555555".into(),
            name: Some(n.to_string()),
            os_distro: Some("ubuntu".into()),
            properties: serde_json::Map::new(),
        })
    }
    async fn network(
        &self,
        _: &RequestContext,
        n: &str,
        external: bool,
    ) -> DriverResult<NamedResource> {
        self.calls.push(format!("network {n} {external}"));
        Ok(NamedResource {
            id: id_of(n),
            name: n.to_string(),
        })
    }
    async fn subnet(&self, _: &RequestContext, n: &str) -> DriverResult<NamedResource> {
        self.calls.push(format!("subnet {n}"));
        Ok(NamedResource {
            id: id_of(n),
            name: n.to_string(),
        })
    }
    async fn default_volume_type(&self, _: &RequestContext) -> DriverResult<String> {
        self.calls.push("default_volume_type");
        Ok("ssd".into())
    }
    async fn delete_cluster_load_balancers(
        &self,
        _: &RequestContext,
        uuid: &str,
        timeout: Duration,
    ) -> DriverResult<()> {
        self.calls.push(format!(
            "delete load balancers {uuid} {}",
            timeout.as_secs()
        ));
        Ok(())
    }
    async fn volume_types(&self, _: &RequestContext) -> DriverResult<Option<Vec<String>>> {
        self.calls.push("volume_types");
        Ok(Some(vec![
            "__DEFAULT__".into(),
            "ssd".into(),
            "Bulk HDD".into(),
        ]))
    }
    async fn ensure_server_group(
        &self,
        _: &RequestContext,
        name: &str,
        policy: &str,
    ) -> DriverResult<String> {
        self.calls
            .push(format!("server group ensure {name} {policy}"));
        let mut sg = self.server_groups.lock().unwrap();
        Ok(sg
            .entry(name.to_string())
            .or_insert_with(|| id_of(name))
            .clone())
    }
    async fn delete_server_group(&self, _: &RequestContext, name: &str) -> DriverResult<()> {
        self.calls.push(format!("server group delete {name}"));
        self.server_groups.lock().unwrap().remove(name);
        Ok(())
    }
}

/// The fakes, sharing one call log.
pub struct Fakes {
    pub calls: Arc<Calls>,
    pub creds: Arc<FakeCreds>,
    pub cloud: Arc<FakeCloud>,
}

impl Fakes {
    pub fn new() -> Self {
        let calls = Arc::new(Calls::default());
        Fakes {
            creds: Arc::new(FakeCreds {
                calls: calls.clone(),
                ..Default::default()
            }),
            cloud: Arc::new(FakeCloud {
                calls: calls.clone(),
                ..Default::default()
            }),
            calls,
        }
    }

    pub fn deps(&self) -> DriverDeps {
        DriverDeps {
            certificates: Some(Arc::new(FakeCas(self.calls.clone()))),
            application_credentials: Some(self.creds.clone()),
            cloud: Some(self.cloud.clone()),
        }
    }
}

pub fn settings(namespace: &str) -> Settings {
    Settings {
        client: ClientSource::default(),
        namespace: namespace.to_string(),
        request_timeout: Duration::from_secs(10),
        failure_grace: Duration::from_secs(5),
        cluster_class_version: "v0.38.2".into(),
        endpoint_type: "publicURL".into(),
        insecure: false,
        ca_file: None,
        region_name: None,
        verify_ca: true,
        openstack_ca_file: String::new(),
        keystone_auth_default_policy: String::new(),
        default_boot_volume_type: String::new(),
        default_boot_volume_size: 0,
        helm_binary: "helm".into(),
        pre_delete_lb_timeout: Duration::from_secs(60),
        autoscaler_repository: "registry.k8s.io/autoscaling".into(),
    }
}

/// A stand-in for `helm template`, for tests that do not look at the addon manifests: one
/// YAML comment naming the chart. The real helm renders them in `driver_lifecycle.rs` and
/// `golden_cluster.rs`.
pub struct StandInCharts;

#[async_trait]
impl ChartRenderer for StandInCharts {
    async fn render(&self, release: &HelmRelease) -> DriverResult<String> {
        Ok(format!(
            "---\n# {} rendered by the test stand-in\n",
            release.chart
        ))
    }
}

pub fn stand_in_charts() -> Arc<dyn ChartRenderer> {
    Arc::new(StandInCharts)
}

/// The real helm of the test rig (`OPENKEEL_TEST_HELM`) over the driver's charts; `None`
/// outside CI when it is not set up.
pub fn real_helm() -> Option<Arc<dyn ChartRenderer>> {
    let helm = openkeel_tests::kapi::helm()?;
    Some(Arc::new(HelmTemplate::new(helm, Duration::from_secs(60))))
}

pub fn labels() -> StringMap {
    [("kube_tag", "v1.30.4")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn cluster(uuid: &str) -> Cluster {
    Cluster {
        uuid: Some(uuid.into()),
        name: Some("k8s".into()),
        project_id: Some("proj1".into()),
        user_id: Some("user1".into()),
        status: Some(ClusterStatus::CreateInProgress),
        keypair: Some("kp".into()),
        master_flavor_id: Some("m1.medium".into()),
        flavor_id: Some("m1.large".into()),
        master_lb_enabled: Some(true),
        labels: Some(labels()),
        ..Default::default()
    }
}

pub fn template() -> ClusterTemplate {
    ClusterTemplate {
        network_driver: Some("calico".into()),
        dns_nameserver: Some("8.8.8.8".into()),
        external_network_id: Some("public".into()),
        cluster_distro: Some("ubuntu".into()),
        image_id: Some("ubuntu-2204".into()),
        labels: Some(labels()),
        ..Default::default()
    }
}

pub fn nodegroups(cluster_uuid: &str) -> Vec<NodeGroup> {
    let ng = |uuid: &str, name: &str, role: &str, count: i32| NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: cluster_uuid.into(),
        role: Some(role.into()),
        node_count: Some(count),
        min_node_count: Some(1),
        image_id: Some("ubuntu-2204".into()),
        flavor_id: Some(
            if role == "master" {
                "m1.medium"
            } else {
                "m1.large"
            }
            .into(),
        ),
        is_default: Some(true),
        status: Some(ClusterStatus::CreateInProgress),
        labels: Some(labels()),
        ..Default::default()
    };
    vec![
        ng(&format!("{cluster_uuid}-m"), "default-master", "master", 1),
        ng(&format!("{cluster_uuid}-w"), "default-worker", "worker", 1),
    ]
}

// ---------------------------------------------------------------------------------------
// An in-memory Kubernetes API behind kube's client (request level, no schemas)
// ---------------------------------------------------------------------------------------

/// A fault the fake API injects: requests whose method and path contain the given strings
/// answer `code` (0: never answer).
#[derive(Clone, Debug)]
pub struct Fault {
    pub method: &'static str,
    pub path: String,
    pub code: u16,
    pub message: String,
    pub times: usize,
}

#[derive(Default)]
pub struct FakeApiState {
    /// collection path → name → object
    pub objects: BTreeMap<String, BTreeMap<String, Value>>,
    pub log: Vec<String>,
    pub faults: Vec<Fault>,
    pub version: u64,
    /// How long every answer takes (a real API server's round trip); none by default.
    pub latency: Duration,
}

#[derive(Clone, Default)]
pub struct FakeApi(pub Arc<Mutex<FakeApiState>>);

fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}

/// `(collection path, name)` of a request path.
fn split_path(path: &str) -> (String, Option<String>) {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let prefix = if segs.first() == Some(&"api") { 2 } else { 3 };
    let rest = &segs[prefix.min(segs.len())..];
    let join = |n: usize| format!("/{}", segs[..n].join("/"));
    if rest.first() == Some(&"namespaces") {
        match rest.len() {
            1 => (join(prefix + 1), None),
            2 => (join(prefix + 1), Some(rest[1].to_string())),
            3 => (join(prefix + 3), None),
            _ => (join(prefix + 3), Some(rest[3].to_string())),
        }
    } else {
        match rest.len() {
            0 | 1 => (join(segs.len()), None),
            _ => (join(prefix + 1), Some(rest[1].to_string())),
        }
    }
}

fn query_param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| {
            v.replace("%3D", "=")
                .replace("%2C", ",")
                .replace("%2F", "/")
                .replace("%28", "(")
                .replace("%29", ")")
                .replace("%20", " ")
                .replace('+', " ")
        })
    })
}

/// A label selector's requirements: split at the commas outside parentheses.
fn requirements(sel: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0usize);
    for (i, ch) in sel.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&sel[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&sel[start..]);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

fn matches_selector(o: &Value, labels: &Option<String>, fields: &Option<String>) -> bool {
    // equality (`k=v`) and set-based (`k in (a,b)`) requirements, as the API server's
    let ok_labels = labels.as_deref().is_none_or(|sel| {
        requirements(sel).iter().all(|req| {
            if let Some((k, set)) = req.split_once(" in ") {
                let set = set.trim().trim_start_matches('(').trim_end_matches(')');
                let have = o["metadata"]["labels"][k.trim()].as_str();
                set.split(',').any(|v| have == Some(v.trim()))
            } else {
                let (k, v) = req.split_once('=').unwrap_or((req, ""));
                o["metadata"]["labels"][k].as_str() == Some(v)
            }
        })
    });
    let ok_fields = fields.as_deref().is_none_or(|sel| {
        sel.split(',').filter(|s| !s.is_empty()).all(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let mut cur = o;
            for part in k.split('.') {
                cur = &cur[part];
            }
            cur.as_str() == Some(v)
        })
    });
    ok_labels && ok_fields
}

impl FakeApi {
    pub fn client(&self) -> kube::Client {
        let me = self.clone();
        let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let me = me.clone();
            async move {
                let (parts, body) = req.into_parts();
                let bytes = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let (code, out) = me.handle(
                    parts.method.as_str(),
                    parts.uri.path(),
                    parts.uri.query().unwrap_or(""),
                    &bytes,
                );
                if code == 0 {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                let latency = me.0.lock().unwrap().latency;
                if !latency.is_zero() {
                    tokio::time::sleep(latency).await;
                }
                let resp = http::Response::builder()
                    .status(code)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(serde_json::to_vec(&out).unwrap()))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(resp)
            }
        });
        kube::Client::new(svc, "default")
    }

    pub fn fault(&self, method: &'static str, path: &str, code: u16, message: &str, times: usize) {
        self.0.lock().unwrap().faults.push(Fault {
            method,
            path: path.to_string(),
            code,
            message: message.to_string(),
            times,
        });
    }

    pub fn log(&self) -> Vec<String> {
        self.0.lock().unwrap().log.clone()
    }

    pub fn clear_log(&self) {
        self.0.lock().unwrap().log.clear();
    }

    /// Every stored object's `<collection path>/<name>`.
    pub fn names(&self) -> Vec<String> {
        let st = self.0.lock().unwrap();
        st.objects
            .iter()
            .flat_map(|(c, m)| m.keys().map(move |n| format!("{c}/{n}")))
            .collect()
    }

    pub fn get(&self, collection: &str, name: &str) -> Option<Value> {
        self.0
            .lock()
            .unwrap()
            .objects
            .get(collection)
            .and_then(|m| m.get(name))
            .cloned()
    }

    pub fn put(&self, collection: &str, name: &str, object: Value) {
        self.0
            .lock()
            .unwrap()
            .objects
            .entry(collection.to_string())
            .or_default()
            .insert(name.to_string(), object);
    }

    pub fn remove(&self, collection: &str, name: &str) {
        if let Some(m) = self.0.lock().unwrap().objects.get_mut(collection) {
            m.remove(name);
        }
    }

    fn handle(&self, method: &str, path: &str, query: &str, body: &[u8]) -> (u16, Value) {
        let mut st = self.0.lock().unwrap();
        let entry = if query.contains("Selector") {
            format!(
                "{method} {path}?{}",
                query_param(query, "labelSelector")
                    .or(query_param(query, "fieldSelector"))
                    .unwrap_or_default()
            )
        } else {
            format!("{method} {path}")
        };
        st.log.push(entry);
        if let Some(i) = st
            .faults
            .iter()
            .position(|f| f.method == method && path.contains(&f.path) && f.times > 0)
        {
            st.faults[i].times -= 1;
            let f = st.faults[i].clone();
            return (f.code, status_body(f.code, "Injected", &f.message));
        }
        let (collection, name) = split_path(path);
        match (method, name) {
            ("GET", Some(n)) => match st.objects.get(&collection).and_then(|m| m.get(&n)) {
                Some(o) => (200, o.clone()),
                None => (
                    404,
                    status_body(404, "NotFound", &format!("\"{n}\" not found")),
                ),
            },
            ("GET", None) => {
                let labels = query_param(query, "labelSelector");
                let fields = query_param(query, "fieldSelector");
                let items: Vec<Value> = st
                    .objects
                    .get(&collection)
                    .map(|m| {
                        m.values()
                            .filter(|o| matches_selector(o, &labels, &fields))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    200,
                    json!({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items}),
                )
            }
            ("PATCH", Some(n)) => {
                st.version += 1;
                let mut o: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                o["metadata"]["resourceVersion"] = json!(st.version.to_string());
                st.objects
                    .entry(collection)
                    .or_default()
                    .insert(n, o.clone());
                (200, o)
            }
            ("DELETE", Some(n)) => match st.objects.get_mut(&collection).and_then(|m| m.remove(&n))
            {
                Some(o) => (200, o),
                None => (
                    404,
                    status_body(404, "NotFound", &format!("\"{n}\" not found")),
                ),
            },
            _ => (405, status_body(405, "MethodNotAllowed", method)),
        }
    }
}
