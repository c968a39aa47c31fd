//! The management cluster's API as the driver uses it: a kube-rs client built from
//! `[capi_client] kubeconfig` / `kubeconfig_context`, a handful of verbs over JSON objects
//! (get, list by label, server-side apply, delete), each with its own timeout, and kube's
//! errors turned into the conductor's [`DriverError`]s:
//!
//! * **transient** (the status sync retries on its next tick): the API server cannot be
//!   reached, a request timed out, 409 Conflict, 429 (incl. a fresh CRD's "storage is
//!   (re)initializing"), any 5xx;
//! * **permanent** (the operation fails with the text): 422 Invalid (admission, schema), 403,
//!   other 4xx, an unusable kubeconfig.
//!
//! Every text names the verb and the object (`apply Cluster magnum-system/kube-ab12c: ...`).
//! Writes are server-side applies with one field manager, [`FIELD_MANAGER`], forced: the driver
//! owns what it writes, as magnum-cluster-api's create-or-replace does. Changes to a live
//! `Cluster` (resize, nodegroups, upgrade) are a read, a change and a PUT on the read's
//! `resourceVersion` ([`Mgmt::replace`]), so that nothing written in between is lost.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use openkeel_drivers::DriverError;
use serde_json::Value;

/// The field manager of every server-side apply of the driver.
pub const FIELD_MANAGER: &str = "openkeel";

/// The default bound on one request to the management cluster.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A kind of object the driver reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

impl Kind {
    const fn new(
        api_version: &'static str,
        kind: &'static str,
        plural: &'static str,
        namespaced: bool,
    ) -> Self {
        Kind {
            api_version,
            kind,
            plural,
            namespaced,
        }
    }

    pub fn api_resource(&self) -> ApiResource {
        let (group, version) = self
            .api_version
            .rsplit_once('/')
            .unwrap_or(("", self.api_version));
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, version, self.kind),
            self.plural,
        )
    }
}

pub const NAMESPACE: Kind = Kind::new("v1", "Namespace", "namespaces", false);
pub const SECRET: Kind = Kind::new("v1", "Secret", "secrets", true);
pub const EVENT: Kind = Kind::new("v1", "Event", "events", true);
pub const CLUSTER: Kind = Kind::new("cluster.x-k8s.io/v1beta1", "Cluster", "clusters", true);
pub const CLUSTER_CLASS: Kind = Kind::new(
    "cluster.x-k8s.io/v1beta1",
    "ClusterClass",
    "clusterclasses",
    true,
);
pub const MACHINE_DEPLOYMENT: Kind = Kind::new(
    "cluster.x-k8s.io/v1beta1",
    "MachineDeployment",
    "machinedeployments",
    true,
);
pub const MACHINE: Kind = Kind::new("cluster.x-k8s.io/v1beta1", "Machine", "machines", true);
pub const KUBEADM_CONTROL_PLANE: Kind = Kind::new(
    "controlplane.cluster.x-k8s.io/v1beta1",
    "KubeadmControlPlane",
    "kubeadmcontrolplanes",
    true,
);
pub const KUBEADM_CONTROL_PLANE_TEMPLATE: Kind = Kind::new(
    "controlplane.cluster.x-k8s.io/v1beta1",
    "KubeadmControlPlaneTemplate",
    "kubeadmcontrolplanetemplates",
    true,
);
pub const KUBEADM_CONFIG_TEMPLATE: Kind = Kind::new(
    "bootstrap.cluster.x-k8s.io/v1beta1",
    "KubeadmConfigTemplate",
    "kubeadmconfigtemplates",
    true,
);
pub const OPENSTACK_CLUSTER: Kind = Kind::new(
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackCluster",
    "openstackclusters",
    true,
);
pub const OPENSTACK_CLUSTER_TEMPLATE: Kind = Kind::new(
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackClusterTemplate",
    "openstackclustertemplates",
    true,
);
pub const OPENSTACK_MACHINE: Kind = Kind::new(
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackMachine",
    "openstackmachines",
    true,
);
pub const OPENSTACK_MACHINE_TEMPLATE: Kind = Kind::new(
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackMachineTemplate",
    "openstackmachinetemplates",
    true,
);
pub const CLUSTER_RESOURCE_SET: Kind = Kind::new(
    "addons.cluster.x-k8s.io/v1beta1",
    "ClusterResourceSet",
    "clusterresourcesets",
    true,
);

pub const SERVICE_ACCOUNT: Kind = Kind::new("v1", "ServiceAccount", "serviceaccounts", true);
pub const SERVICE: Kind = Kind::new("v1", "Service", "services", true);
pub const DEPLOYMENT: Kind = Kind::new("apps/v1", "Deployment", "deployments", true);
pub const POD_DISRUPTION_BUDGET: Kind = Kind::new(
    "policy/v1",
    "PodDisruptionBudget",
    "poddisruptionbudgets",
    true,
);
pub const ROLE: Kind = Kind::new("rbac.authorization.k8s.io/v1", "Role", "roles", true);
pub const ROLE_BINDING: Kind = Kind::new(
    "rbac.authorization.k8s.io/v1",
    "RoleBinding",
    "rolebindings",
    true,
);
pub const CLUSTER_ROLE: Kind = Kind::new(
    "rbac.authorization.k8s.io/v1",
    "ClusterRole",
    "clusterroles",
    false,
);
pub const CLUSTER_ROLE_BINDING: Kind = Kind::new(
    "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
    false,
);

/// The kinds of the cluster autoscaler's chart, in the order they are deleted.
pub const AUTOSCALER_KINDS: &[Kind] = &[
    DEPLOYMENT,
    SERVICE,
    POD_DISRUPTION_BUDGET,
    ROLE_BINDING,
    ROLE,
    CLUSTER_ROLE_BINDING,
    CLUSTER_ROLE,
    SERVICE_ACCOUNT,
];

/// Every kind the driver writes, for [`Kind::of`].
const WRITTEN: &[Kind] = &[
    SERVICE_ACCOUNT,
    SERVICE,
    DEPLOYMENT,
    POD_DISRUPTION_BUDGET,
    ROLE,
    ROLE_BINDING,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    NAMESPACE,
    SECRET,
    CLUSTER,
    CLUSTER_CLASS,
    KUBEADM_CONTROL_PLANE_TEMPLATE,
    KUBEADM_CONFIG_TEMPLATE,
    OPENSTACK_CLUSTER_TEMPLATE,
    OPENSTACK_MACHINE_TEMPLATE,
    CLUSTER_RESOURCE_SET,
];

impl Kind {
    /// The kind of an object the driver writes, from its `apiVersion` and `kind`.
    pub fn of(object: &Value) -> Option<Kind> {
        let api_version = object["apiVersion"].as_str()?;
        let kind = object["kind"].as_str()?;
        WRITTEN
            .iter()
            .copied()
            .find(|k| k.api_version == api_version && k.kind == kind)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind)
    }
}

/// Where the client comes from: `[capi_client] kubeconfig` and `kubeconfig_context`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSource {
    /// A kubeconfig file; empty: `KUBECONFIG`, `~/.kube/config`, then the in-cluster service
    /// account.
    pub kubeconfig: String,
    /// A context of that file; empty: its current context.
    pub context: String,
}

/// Build a kube client from `source`. Every failure is permanent (the configuration must be
/// fixed) and names the file.
pub async fn build_client(
    source: &ClientSource,
    request_timeout: Duration,
) -> Result<kube::Client, DriverError> {
    let options = KubeConfigOptions {
        context: (!source.context.is_empty()).then(|| source.context.clone()),
        ..KubeConfigOptions::default()
    };
    let mut config = if source.kubeconfig.is_empty() {
        if options.context.is_some() {
            kube::Config::from_kubeconfig(&options).await.map_err(|e| {
                DriverError::permanent_message(format!(
                    "Cannot use the management cluster's kubeconfig ([capi_client] \
                     kubeconfig unset: KUBECONFIG or ~/.kube/config), context {}: {e}",
                    source.context
                ))
            })?
        } else {
            kube::Config::infer().await.map_err(|e| {
                DriverError::permanent_message(format!(
                    "Cannot find the management cluster ([capi_client] kubeconfig unset, and \
                     neither KUBECONFIG, ~/.kube/config nor an in-cluster service account \
                     gave a configuration): {e}"
                ))
            })?
        }
    } else {
        let path = Path::new(&source.kubeconfig);
        let kc = Kubeconfig::read_from(path).map_err(|e| {
            DriverError::permanent_message(format!(
                "Cannot read the management cluster's kubeconfig {} ([capi_client] \
                 kubeconfig): {e}",
                path.display()
            ))
        })?;
        kube::Config::from_custom_kubeconfig(kc, &options)
            .await
            .map_err(|e| {
                DriverError::permanent_message(format!(
                    "Cannot use the management cluster's kubeconfig {} ([capi_client] \
                 kubeconfig{}): {e}",
                    path.display(),
                    if source.context.is_empty() {
                        String::new()
                    } else {
                        format!(", context {}", source.context)
                    }
                ))
            })?
    };
    config.connect_timeout = Some(request_timeout);
    config.read_timeout = Some(request_timeout);
    config.write_timeout = Some(request_timeout);
    config.reset_reader_on_write = true;
    // one attempt per request: the status sync is the retry (its next tick)
    config.default_retry = false;
    kube::Client::try_from(config).map_err(|e| {
        DriverError::permanent_message(format!(
            "Cannot build a client for the management cluster: {e}"
        ))
    })
}

/// The verbs the driver uses, over one client and one namespace, counting requests.
#[derive(Clone)]
pub struct Mgmt {
    client: kube::Client,
    namespace: String,
    request_timeout: Duration,
    requests: Arc<AtomicU64>,
    conflicts: Arc<AtomicU64>,
    /// Lists of many clusters' objects in one request ([`Mgmt::list_of_cluster`]).
    batches: Arc<crate::batch::Batches>,
}

impl fmt::Debug for Mgmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mgmt")
            .field("namespace", &self.namespace)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

/// What went wrong with one request, before it becomes a [`DriverError`].
fn classify(e: &kube::Error) -> (bool, String) {
    match e {
        kube::Error::Api(s) => {
            let transient = matches!(s.code, 409 | 429) || s.code >= 500;
            let reason = if s.reason.is_empty() {
                String::new()
            } else {
                format!("{} ", s.reason)
            };
            (
                transient,
                format!("{reason}(HTTP {}): {}", s.code, s.message),
            )
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            (true, format!("the management cluster is unreachable: {e}"))
        }
        _ => (false, e.to_string()),
    }
}

impl Mgmt {
    pub fn new(client: kube::Client, namespace: &str, request_timeout: Duration) -> Self {
        Mgmt {
            client,
            namespace: namespace.to_string(),
            request_timeout,
            requests: Arc::new(AtomicU64::new(0)),
            conflicts: Arc::new(AtomicU64::new(0)),
            batches: Arc::default(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Requests made so far (all verbs).
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// PUTs refused with 409 so far (someone wrote the object in between; the caller read it
    /// again and retried).
    pub fn conflict_count(&self) -> u64 {
        self.conflicts.load(Ordering::Relaxed)
    }

    fn api(&self, kind: Kind) -> Api<DynamicObject> {
        let ar = kind.api_resource();
        if kind.namespaced {
            Api::namespaced_with(self.client.clone(), &self.namespace, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        }
    }

    fn object_name(&self, kind: Kind, name: &str) -> String {
        if kind.namespaced {
            format!("{kind} {}/{name}", self.namespace)
        } else {
            format!("{kind} {name}")
        }
    }

    /// Run one request within the request timeout, counting it.
    async fn call<T>(
        &self,
        verb: &str,
        what: &str,
        fut: impl std::future::Future<Output = kube::Result<T>>,
    ) -> Result<kube::Result<T>, DriverError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        match tokio::time::timeout(self.request_timeout, fut).await {
            Ok(r) => Ok(r),
            Err(_) => Err(DriverError::transient(format!(
                "Kubernetes API: {verb} {what}: no answer within {} s",
                self.request_timeout.as_secs_f64()
            ))),
        }
    }

    fn error(verb: &str, what: &str, e: &kube::Error) -> DriverError {
        let (transient, text) = classify(e);
        let message = format!("Kubernetes API: {verb} {what}: {text}");
        if transient {
            DriverError::transient(message)
        } else {
            DriverError::permanent_message(message)
        }
    }

    /// GET; `None` when there is no such object.
    pub async fn get(&self, kind: Kind, name: &str) -> Result<Option<Value>, DriverError> {
        let what = self.object_name(kind, name);
        let api = self.api(kind);
        match self.call("get", &what, api.get_opt(name)).await? {
            Ok(Some(o)) => Ok(Some(to_value(o))),
            Ok(None) => Ok(None),
            Err(e) => Err(Self::error("get", &what, &e)),
        }
    }

    /// LIST with a label selector (`a=b,c=d`; empty: all) and a field selector (empty: none).
    pub async fn list(
        &self,
        kind: Kind,
        labels: &str,
        fields: &str,
    ) -> Result<Vec<Value>, DriverError> {
        let mut what = format!("{kind}s in {}", self.namespace);
        if !labels.is_empty() {
            what.push_str(&format!(" labelled {labels}"));
        }
        if !fields.is_empty() {
            what.push_str(&format!(" with {fields}"));
        }
        let mut lp = ListParams::default();
        if !labels.is_empty() {
            lp = lp.labels(labels);
        }
        if !fields.is_empty() {
            lp = lp.fields(fields);
        }
        let api = self.api(kind);
        match self.call("list", &what, api.list(&lp)).await? {
            Ok(list) => Ok(list.items.into_iter().map(to_value).collect()),
            // a kind whose CRD is not installed: nothing of it exists
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
            Err(e) => Err(Self::error("list", &what, &e)),
        }
    }

    /// The objects of `kind` labelled `label_key=name`, as [`Self::list`] with that selector
    /// answers, but batched (see `batch.rs`): the ask joins its batch when this is called,
    /// and the batch, one LIST with `label_key in (...)`, is sent once every status call in
    /// flight is waiting (or after [`crate::batch::MAX_WAIT`]). Ask for everything a call
    /// needs first, then mark it [`Self::waiting`], then await the answers.
    pub fn list_labelled(
        &self,
        kind: Kind,
        label_key: &'static str,
        name: &str,
    ) -> impl std::future::Future<Output = Result<Vec<Value>, DriverError>> + Send + 'static {
        let key = format!("{}/{} {label_key}", kind.api_version, kind.plural);
        self.batched(key, name, move |this, names| async move {
            let items = this
                .list(kind, &crate::batch::set_selector(label_key, &names), "")
                .await?;
            Ok(crate::batch::group_by(items, |o| {
                o["metadata"]["labels"][label_key].as_str()
            }))
        })
    }

    /// The Events about the `involved_kind` object `name`, batched as
    /// [`Self::list_labelled`]: alone, one LIST with the field selector on kind and name;
    /// with others, one LIST of the Events about objects of that kind, split by name.
    pub fn events_about(
        &self,
        involved_kind: &'static str,
        name: &str,
    ) -> impl std::future::Future<Output = Result<Vec<Value>, DriverError>> + Send + 'static {
        let key = format!("events about {involved_kind}");
        self.batched(key, name, move |this, names| async move {
            let fields = match names.as_slice() {
                [one] => format!("involvedObject.kind={involved_kind},involvedObject.name={one}"),
                _ => format!("involvedObject.kind={involved_kind}"),
            };
            let items = this.list(EVENT, "", &fields).await?;
            Ok(crate::batch::group_by(items, |o| {
                o["involvedObject"]["name"].as_str()
            }))
        })
    }

    /// A status call in flight, for the batches (see `batch.rs`), until dropped.
    pub(crate) fn observing(&self) -> crate::batch::Observing<'_> {
        self.batches.observing()
    }

    /// A status call waiting for its lists, for the batches, until dropped.
    pub(crate) fn waiting(&self) -> crate::batch::Waiting<'_> {
        self.batches.waiting()
    }

    /// Join the batch `key` with `name` now; the first ask of a batch waits until the batch
    /// settles ([`crate::batch::Batches::settle`]), then `fetch` answers every name asked
    /// meanwhile (in chunks), in a task of its own, so an ask that gives up does not cancel
    /// the others'. The future resolves to this ask's answer.
    fn batched<F, Fut>(
        &self,
        key: String,
        name: &str,
        fetch: F,
    ) -> impl std::future::Future<Output = Result<Vec<Value>, DriverError>> + Send + 'static
    where
        F: Fn(Mgmt, Vec<String>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<
                Output = Result<std::collections::BTreeMap<String, Vec<Value>>, DriverError>,
            > + Send,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.batches.join(&key, name, tx) {
            let this = self.clone();
            tokio::spawn(async move {
                this.batches.settle().await;
                let mut asks = this.batches.take(&key);
                for names in crate::batch::chunks(&asks) {
                    let found = fetch(this.clone(), names.clone()).await;
                    crate::batch::answer(&mut asks, &names, &found);
                }
            });
        }
        async move {
            rx.await.unwrap_or_else(|_| {
                Err(DriverError::transient(
                    "Kubernetes API: a batched list ended without an answer",
                ))
            })
        }
    }

    /// Server-side apply of `object` (its `apiVersion`, `kind` and `metadata.name`; the
    /// namespace is this client's), forced, with [`FIELD_MANAGER`]. A Secret's `stringData`
    /// is written as `data` (base64), so that a repeated apply is a no-op.
    pub async fn apply(&self, object: &Value) -> Result<Value, DriverError> {
        let kind = Kind::of(object).ok_or_else(|| {
            DriverError::permanent_message(format!(
                "the driver does not write {} {} objects",
                object["apiVersion"], object["kind"]
            ))
        })?;
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let what = self.object_name(kind, name);
        let mut body = object.clone();
        if kind.namespaced {
            body["metadata"]["namespace"] = Value::String(self.namespace.clone());
        }
        if kind == SECRET {
            fold_string_data(&mut body);
        }
        let api = self.api(kind);
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let patch = Patch::Apply(&body);
        match self
            .call("apply", &what, api.patch(name, &params, &patch))
            .await?
        {
            Ok(o) => Ok(to_value(o)),
            Err(e) => Err(Self::error("apply", &what, &e)),
        }
    }

    /// PUT of an object read with [`Mgmt::get`] and changed (optimistic concurrency on its
    /// `metadata.resourceVersion`). `Ok(None)`: someone wrote it in between (409); read it
    /// again and retry.
    pub async fn replace(&self, kind: Kind, object: &Value) -> Result<Option<Value>, DriverError> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let what = self.object_name(kind, name);
        let body: DynamicObject = serde_json::from_value(object.clone()).map_err(|e| {
            DriverError::permanent_message(format!("Kubernetes API: replace {what}: {e}"))
        })?;
        let api = self.api(kind);
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        match self
            .call("replace", &what, api.replace(name, &params, &body))
            .await?
        {
            Ok(o) => Ok(Some(to_value(o))),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                self.conflicts.fetch_add(1, Ordering::Relaxed);
                Ok(None)
            }
            Err(e) => Err(Self::error("replace", &what, &e)),
        }
    }

    /// A JSON merge patch of `metadata.annotations` (`None` values remove the key).
    pub async fn annotate(
        &self,
        kind: Kind,
        name: &str,
        annotations: &serde_json::Map<String, Value>,
    ) -> Result<(), DriverError> {
        let what = self.object_name(kind, name);
        let api = self.api(kind);
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PatchParams::default()
        };
        let body = serde_json::json!({"metadata": {"annotations": annotations}});
        match self
            .call(
                "patch",
                &what,
                api.patch(name, &params, &Patch::Merge(&body)),
            )
            .await?
        {
            Ok(_) => Ok(()),
            Err(e) => Err(Self::error("patch", &what, &e)),
        }
    }

    /// DELETE (background propagation); `false` when it was already gone.
    pub async fn delete(&self, kind: Kind, name: &str) -> Result<bool, DriverError> {
        let what = self.object_name(kind, name);
        let api = self.api(kind);
        let dp = DeleteParams::background();
        match self.call("delete", &what, api.delete(name, &dp)).await? {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(Self::error("delete", &what, &e)),
        }
    }
}

fn to_value(o: DynamicObject) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

/// A Secret's `stringData` moved into `data`, base64-encoded (what the API server does).
pub fn fold_string_data(secret: &mut Value) {
    let Some(Value::Object(string_data)) =
        secret.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return;
    };
    if !secret["data"].is_object() {
        secret["data"] = Value::Object(serde_json::Map::new());
    }
    for (k, v) in string_data {
        let text = v.as_str().unwrap_or_default();
        secret["data"][k] = Value::String(crate::secrets::base64(text.as_bytes()));
    }
}

/// The text of a Secret's `data` key (base64-decoded), if present and UTF-8.
pub fn secret_text(secret: &Value, key: &str) -> Option<String> {
    let b64 = secret["data"][key].as_str()?;
    String::from_utf8(base64_decode(b64)?).ok()
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_data_is_folded_and_read_back() {
        let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"},
            "stringData": {"a": "hello", "b": ""}});
        fold_string_data(&mut s);
        assert!(s.get("stringData").is_none());
        assert_eq!(s["data"]["a"], "aGVsbG8=");
        assert_eq!(secret_text(&s, "a").as_deref(), Some("hello"));
        assert_eq!(secret_text(&s, "b").as_deref(), Some(""));
        assert_eq!(secret_text(&s, "c"), None);
    }

    #[test]
    fn kinds_of_written_objects() {
        for o in crate::clusterclass::objects() {
            assert!(Kind::of(&o).is_some(), "{}", o["kind"]);
        }
        assert_eq!(
            Kind::of(&json!({"apiVersion": "v1", "kind": "Secret"})),
            Some(SECRET)
        );
        assert_eq!(Kind::of(&json!({"apiVersion": "v1", "kind": "Pod"})), None);
    }

    fn api_error(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("boom", reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn errors_are_classified() {
        for (code, transient) in [
            (409, true),
            (429, true),
            (500, true),
            (503, true),
            (504, true),
            (422, false),
            (403, false),
            (400, false),
            (401, false),
        ] {
            let e = Mgmt::error("apply", "Cluster ns/x", &api_error(code, "Reason"));
            assert_eq!(e.is_transient(), transient, "{code}");
            assert!(
                e.message().contains("apply Cluster ns/x"),
                "{}",
                e.message()
            );
            assert!(e.message().contains(&format!("HTTP {code}")));
        }
    }
}
