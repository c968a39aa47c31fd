//! Entry point of the PATCH fuzz target (`fuzz/fuzz_targets/patch.rs`) and of its stable
//! replay (`crates/api/tests/fuzz_corpus.rs`); see `openkeel_core::fuzzing`.

use crate::patch::apply_jsonpatch;
use crate::resources::cluster_templates::{self, PATCH_TYPE};
use crate::resources::clusters::types::cluster as ct;
use crate::resources::clusters::{view, wsme};
use openkeel_core::objects::{Cluster, ClusterTemplate, StringMap};
use serde_json::Value;

/// A PATCH body (`[{"op": …, "path": …, "value": …}]`) as the cluster and cluster-template
/// `PATCH` handlers read it: typed as `[PatchType]`, applied to the resource's document with
/// Magnum's JSON-Patch dialect, then (clusters) the patched document coerced and typed.
pub fn patch(data: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let labels: StringMap = [("kube_tag", "v1.30.1"), ("a", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Ok(mut ops) = ct::PATCH.parse(&body) {
        let cluster = Cluster {
            uuid: Some("f16a9c3e-aa81-46f2-a5ce-d06aa1b70f50".into()),
            name: Some("k8s".into()),
            labels: Some(labels.clone()),
            ..Default::default()
        };
        let doc = view::cluster_doc(&cluster, &[]);
        if let Ok(mut patched) = apply_jsonpatch(&doc, &mut ops) {
            wsme::coerce_nested(&ops, &mut patched, &["labels", "health_status_reason"]);
            let _ = wsme::construct(&patched, ct::FIELDS);
        }
    }
    if let Ok(mut ops) = PATCH_TYPE.parse(&body) {
        let template = ClusterTemplate {
            uuid: Some("9007dd8e-3beb-4a7b-b406-7fd481cf1515".into()),
            name: Some("k8s-template".into()),
            labels: Some(labels),
            ..Default::default()
        };
        let doc = cluster_templates::doc_of(&template);
        if let Ok(patched) = apply_jsonpatch(&doc, &mut ops) {
            let _ = patched.repr();
        }
    }
}
