//! `PATCH /v1/clustertemplates/{id}` (`ClusterTemplatesController.patch` in
//! `magnum/api/controllers/v1/cluster_template.py`): the update decorators on the caller's
//! view of the template, then policy, the patched object's checks and the changed fields
//! ([`service::apply_changes`]) written.

use super::service::{self, os_resources};
use super::types::{coerce_object, construct, shown_of, PATCH_TYPE};
use super::view::{doc_of, view};
use super::{cloud, db, get_resource, publish_check};
use crate::error::ApiError;
use crate::patch;
use crate::query;
use crate::request::{context, enforce_on, widen};
use crate::response::Reply;
use crate::validation::{self, Shown};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_cloud::validate as cloudv;
use openkeel_core::error::MagnumError;
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster_template as db_ct, Scope};

/// Query and body → context → the decorators' validation → policy (all projects, then the
/// template) → look-ups and checks → update → view of the in-memory object.
pub(super) async fn patch(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "patch").await?;
    let mut ops = PATCH_TYPE.parse(&raw)?;
    let mut ctx = context(state, req);
    let settings = &state.template_settings;
    let db = db(state)?;

    // The update decorators: the template as the caller normally sees it (no admin
    // widening yet), the patch applied, the object built, then the driver checks.
    let scoped = get_resource(db, &Scope::from(&ctx), ident).await?;
    let patched = patch::apply_jsonpatch(&doc_of(&scoped), &mut ops)?;
    let obj = coerce_object(&patched)?;
    let obj_get = |k: &str| obj.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let obj_coe = obj_get("coe");
    let nd = obj_get("network_driver")
        .filter(|v| v.truthy())
        .map(PyValue::py_str);
    validation::validate_network_driver(settings, shown_of(obj_coe), nd.as_deref())?;
    let raw_vd = patched
        .get("volume_driver")
        .filter(|v| v.truthy())
        .map(PyValue::py_str);
    let coe_shown = patched.get("coe").map(PyValue::py_str);
    let coe_raw = match (patched.get("coe"), &coe_shown) {
        (Some(PyValue::Str(s)), _) => Shown::Value(s),
        (Some(PyValue::None), _) => Shown::None,
        (Some(_), Some(s)) => Shown::Value(s),
        _ => Shown::Unset,
    };
    validation::validate_volume_driver(coe_raw, raw_vd.as_deref())?;

    // The handler.
    widen(state, &mut ctx, "clustertemplate:update_all_projects")?;
    let mut current = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce_on(state, &ctx, "clustertemplate:update", &current)?;
    let old_doc = doc_of(&current);
    let patched = patch::apply_jsonpatch(&old_doc, &mut ops)?;
    let new = construct(&patched)?;
    let new_dict = new.as_dict();
    let cloud = cloud(state)?;
    cloudv::validate_os_resources(cloud.as_ref(), &ctx, &os_resources(&new_dict), None).await?;
    let old_bool = |k: &str| old_doc.get(k).cloned().unwrap_or(PyValue::None);
    let new_bool = |k: &str| new.attr(k).unwrap_or(PyValue::None);
    if !old_bool("public").py_eq(&new_bool("public"))
        || !old_bool("hidden").py_eq(&new_bool("hidden"))
    {
        publish_check(state, &ctx)?;
    }
    // The root-volume check reads the *stored* labels.
    let boot = current
        .labels
        .as_ref()
        .and_then(|l| l.get("boot_volume_size").cloned())
        .map(|v| {
            let mut m = openkeel_core::objects::StringMap::new();
            m.insert("boot_volume_size".into(), v);
            m
        })
        .unwrap_or_default();
    for key in ["flavor_id", "master_flavor_id"] {
        let f = new.shown(key);
        let flavor = match new.attr(key) {
            Some(PyValue::None) => None,
            _ => Some(f.as_str()),
        };
        cloudv::validate_flavor_root_volume_size(
            cloud.as_ref(),
            &ctx,
            Some(&boot),
            flavor,
            settings.default_boot_volume_size,
        )
        .await
        .map_err(validation::client_error_for_bad_boot_volume)?;
    }

    // "Update only the fields that have changed".
    let changed = service::apply_changes(&mut current, &new, &old_doc)?;
    if matches!(
        current.docker_storage_driver.as_deref(),
        Some("devicemapper" | "overlay")
    ) {
        tracing::warn!("The devicemapper and overlay storage drivers are deprecated in favor of overlay2 in docker.");
    }
    let uuid = current.uuid.clone().unwrap_or_default();
    if changed.contains(&"uuid") {
        return Err(MagnumError::invalid_parameter(
            "Cannot overwrite UUID for an existing ClusterTemplate.",
        )
        .into());
    }
    db_ct::update(db, &uuid, &current, &changed).await?;
    // The response is the in-memory object: `updated_at` is not refreshed.
    Ok(Reply::ok(view(&current, &req.host_url)))
}
