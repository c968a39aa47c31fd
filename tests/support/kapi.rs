//! The real management-cluster API for the Cluster API driver's tests.
//!
//! `tests/services/kapi.sh` (started by `tests/run.sh`) runs etcd v3.7.0, kube-apiserver
//! v1.37.2 and the Cluster API core manager v1.13.6 (topology controller, admission and
//! conversion webhooks, all namespaces) on 127.0.0.1, with the CAPI core, addons, kubeadm
//! bootstrap, kubeadm control-plane and CAPO v0.13.0 CRDs installed, and exports
//! `OPENKEEL_TEST_KUBECONFIG`. CAPI's `v1beta1` (what magnum-cluster-api writes) and `v1beta2`
//! (storage) are both served, converted by Cluster API's own code. No kube-controller-manager
//! runs: a namespace never finishes deleting and nothing is garbage-collected, so every test
//! works in its own [`fresh_namespace`].
//!
//! [`kubeconfig`] skips outside CI and panics under `CI=true` when the rig is not there, like
//! every other service of [`crate::require`].

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;

/// The environment variable naming the rig's kubeconfig.
pub const KUBECONFIG_VAR: &str = "OPENKEEL_TEST_KUBECONFIG";

/// Label put on every namespace made by [`fresh_namespace`].
pub const NAMESPACE_LABEL: &str = "openkeel.test/kapi";

/// The kubeconfig of the running rig (context `openkeel-kapi`: a static admin token;
/// `openkeel-kapi-cert`: an admin client certificate), or `None` outside CI when it is not set
/// up. Panics under `CI=true` when it is missing.
pub fn kubeconfig() -> Option<PathBuf> {
    let path = crate::require(
        KUBECONFIG_VAR,
        "the Kubernetes API with Cluster API (tests/services/kapi.sh)",
    )?;
    let path = PathBuf::from(path);
    if !path.is_file() {
        let msg = format!(
            "{KUBECONFIG_VAR}={} does not exist: is tests/services/kapi.sh running?",
            path.display()
        );
        if crate::in_ci() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED (not in CI): {msg}");
        return None;
    }
    Some(path)
}

/// The environment variable naming the rig's helm program.
pub const HELM_VAR: &str = "OPENKEEL_TEST_HELM";

/// The helm program built by the rig (`tests/services/kapi.sh build-helm`), or `None` outside
/// CI when it is not set up. Panics under `CI=true` when it is missing.
pub fn helm() -> Option<PathBuf> {
    let path = PathBuf::from(crate::require(HELM_VAR, "helm (tests/services/kapi.sh)")?);
    if !path.is_file() {
        let msg = format!(
            "{HELM_VAR}={} does not exist: is tests/services/kapi.sh set up?",
            path.display()
        );
        if crate::in_ci() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED (not in CI): {msg}");
        return None;
    }
    Some(path)
}

/// A kube client for the rig from [`kubeconfig`] (its current context, or `context`), with a
/// 30 s connect and read timeout; `None` outside CI when the rig is not there.
pub async fn client_for(context: Option<&str>) -> Option<Client> {
    let path = kubeconfig()?;
    let kc = Kubeconfig::read_from(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let opts = KubeConfigOptions {
        context: context.map(str::to_string),
        ..KubeConfigOptions::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &opts)
        .await
        .unwrap_or_else(|e| panic!("bad kubeconfig {}: {e}", path.display()));
    config.connect_timeout = Some(Duration::from_secs(30));
    config.read_timeout = Some(Duration::from_secs(30));
    config.write_timeout = Some(Duration::from_secs(30));
    Some(Client::try_from(config).unwrap_or_else(|e| panic!("kube client: {e}")))
}

/// [`client_for`] with the kubeconfig's current context (the admin token).
pub async fn client() -> Option<Client> {
    client_for(None).await
}

/// Create a fresh namespace `okt-<prefix>-<random>` for one test and return its name. It is
/// never deleted (without a kube-controller-manager it would stay `Terminating`); the rig
/// starts from an empty etcd every time.
pub async fn fresh_namespace(client: &Client, prefix: &str) -> String {
    let prefix: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    let name = format!("okt-{}-{}", prefix.trim_matches('-'), &suffix[..10]);
    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {NAMESPACE_LABEL: "true"}},
    }))
    .unwrap_or_else(|e| panic!("namespace body: {e}"));
    let api: Api<Namespace> = Api::all(client.clone());
    let pp = PostParams::default();
    retry_transient(&format!("create namespace {name}"), || api.create(&pp, &ns))
        .await
        .unwrap_or_else(|e| panic!("cannot create namespace {name}: {e}"));
    name
}

/// True for errors worth retrying against a fresh API server: 429 (a new CRD's watch cache
/// answers "storage is (re)initializing"), 503, 504, and connection-level failures.
pub fn is_transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => matches!(s.code, 429 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Run `f` until it succeeds or fails with a non-[`is_transient`] error, for at most 60 s
/// (kube's client does not retry 429 by itself).
pub async fn retry_transient<T, F, Fut>(what: &str, mut f: F) -> kube::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = kube::Result<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut delay = Duration::from_millis(100);
    loop {
        match f().await {
            Err(e) if is_transient(&e) && Instant::now() < deadline => {
                eprintln!("{what}: transient error, retrying in {delay:?}: {e}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            r => return r,
        }
    }
}

/// Poll `f` every 250 ms until it returns `Some`, panicking with `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The [`ApiResource`] of `apiVersion` + `kind`, its plural found through the server's
/// discovery.
pub async fn resource(client: &Client, api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (ar, _caps) = retry_transient(&format!("discover {api_version} {kind}"), || {
        kube::discovery::pinned_kind(client, &gvk)
    })
    .await
    .unwrap_or_else(|e| panic!("{api_version} {kind} is not served: {e}"));
    ar
}

/// A namespaced dynamic API for `apiVersion` + `kind`.
pub async fn dynamic_api(
    client: &Client,
    namespace: &str,
    api_version: &str,
    kind: &str,
) -> Api<DynamicObject> {
    let ar = resource(client, api_version, kind).await;
    Api::namespaced_with(client.clone(), namespace, &ar)
}

/// Server-side apply every document of a (multi-document) YAML into `namespace` with field
/// manager `manager` (force), in order, retrying transient errors; returns what the server
/// answered.
pub async fn apply_yaml(
    client: &Client,
    namespace: &str,
    manager: &str,
    yaml: &str,
) -> Vec<DynamicObject> {
    use serde::Deserialize;
    let mut out = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(yaml) {
        let value = serde_json::Value::deserialize(doc)
            .unwrap_or_else(|e| panic!("bad YAML document: {e}"));
        if value.is_null() {
            continue;
        }
        out.push(apply_json(client, namespace, manager, value).await);
    }
    out
}

/// Server-side apply one object (JSON with `apiVersion`, `kind`, `metadata.name`) into
/// `namespace` with field manager `manager` (force), retrying transient errors.
pub async fn apply_json(
    client: &Client,
    namespace: &str,
    manager: &str,
    value: serde_json::Value,
) -> DynamicObject {
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = value["kind"].as_str().unwrap_or_default().to_string();
    let name = value["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !api_version.is_empty() && !kind.is_empty() && !name.is_empty(),
        "an object to apply needs apiVersion, kind and metadata.name: {value}"
    );
    let api = dynamic_api(client, namespace, &api_version, &kind).await;
    let params = PatchParams::apply(manager).force();
    let patch = Patch::Apply(&value);
    retry_transient(&format!("apply {kind} {name}"), || {
        api.patch(&name, &params, &patch)
    })
    .await
    .unwrap_or_else(|e| panic!("server-side apply of {api_version} {kind} {namespace}/{name}: {e}"))
}
