//! `POST /v1/clustertemplates` (`ClusterTemplatesController.post` in
//! `magnum/api/controllers/v1/cluster_template.py`): the body typed, the decorators' checks,
//! policy, the OpenStack look-ups, the row created.

use super::service::os_resources;
use super::types::{dict_get, opt_str, shown_of, type_body, OBJ_FIELDS};
use super::view::{assign, view};
use super::{cloud, db, default_driver, publish_check, RESOURCE};
use crate::error::ApiError;
use crate::query;
use crate::request::{context, enforce};
use crate::response::Reply;
use crate::validation::{self, coerce, ObjField};
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::HeaderName;
use openkeel_cloud::validate as cloudv;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::ClusterTemplate;
use openkeel_core::pyvalue::PyValue;
use openkeel_db::cluster_template as db_ct;

/// Query and body → context → the decorators' validation → policy → look-ups → insert →
/// 201 with `Location`.
pub(super) async fn post(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let raw = validation::body_arg(req, body, "cluster_template").await?;
    let mut ct = type_body(&raw)?;
    let ctx = context(state, req);
    let settings = &state.template_settings;

    // @validation.enforce_server_type()
    let coe = ct.attr("coe");
    let coe_s = shown_of(coe.as_ref());
    let server_type = ct.attr("server_type");
    validation::validate_server_type(coe_s, shown_of(server_type.as_ref()))?;
    // @validation.enforce_network_driver_types_create()
    let given = ct.attr("network_driver").filter(PyValue::truthy);
    let nd = validation::validate_network_driver(settings, coe_s, opt_str(given.as_ref()))?;
    if given.is_none() {
        ct.set("network_driver", PyValue::str(nd));
    }
    // @validation.enforce_volume_driver_types_create()
    let vd = ct.attr("volume_driver");
    validation::validate_volume_driver(coe_s, opt_str(vd.as_ref()))?;
    // @validation.enforce_volume_storage_size_create()
    validation::validate_volume_storage_size(
        &ct.attr("docker_volume_size").unwrap_or(PyValue::None),
        opt_str(ct.attr("docker_storage_driver").as_ref()),
    )?;
    // @validation.enforce_driver_supported()
    let cloud = cloud(state)?;
    let image_id = ct.attr("image_id");
    let chosen = cloudv::driver_image(
        cloud.as_ref(),
        &ctx,
        opt_str(image_id.as_ref()),
        opt_str(ct.attr("cluster_distro").as_ref()),
        opt_str(ct.attr("driver").as_ref()),
    )
    .await?;
    let driver_name = match chosen.driver {
        Some(d) => Some(d),
        None => default_driver(state).await?,
    };
    if let Some(d) = &driver_name {
        ct.set("driver", PyValue::str(d.clone()));
    }
    if let Some(d) = &state.drivers {
        d.supports(
            opt_str(server_type.as_ref()),
            chosen.cluster_distro.as_deref(),
            opt_str(coe.as_ref()),
            driver_name.as_deref(),
        )?;
    }

    // The handler body.
    enforce(state, &ctx, "clustertemplate:create", None)?;
    let mut d = ct.as_dict();
    cloudv::validate_os_resources(cloud.as_ref(), &ctx, &os_resources(&d), None).await?;
    let image =
        cloudv::validate_image(cloud.as_ref(), &ctx, opt_str(dict_get(&d, "image_id"))).await?;
    let distro = image.os_distro.clone();
    let put = |d: &mut Vec<(&'static str, PyValue)>, k: &'static str, v: PyValue| match d
        .iter_mut()
        .find(|(n, _)| *n == k)
    {
        Some(slot) => slot.1 = v,
        None => d.push((k, v)),
    };
    put(
        &mut d,
        "cluster_distro",
        distro.clone().map_or(PyValue::None, PyValue::str),
    );
    put(
        &mut d,
        "project_id",
        ctx.project_id.clone().map_or(PyValue::None, PyValue::str),
    );
    put(
        &mut d,
        "user_id",
        ctx.user_id.clone().map_or(PyValue::None, PyValue::str),
    );
    if dict_get(&d, "driver").is_none_or(PyValue::is_none) {
        let fallback = match image.magnum_driver() {
            Some(m) if !m.is_empty() => Some(m.to_string()),
            _ => default_driver(state).await?,
        };
        put(
            &mut d,
            "driver",
            fallback.map_or(PyValue::None, PyValue::str),
        );
    }
    let truthy = |k: &str| dict_get(&d, k).is_some_and(PyValue::truthy);
    if truthy("public") || truthy("hidden") {
        publish_check(state, &ctx)?;
    }
    if dict_get(&d, "labels").is_none() {
        put(&mut d, "labels", PyValue::Dict(Vec::new()));
    }
    let labels = dict_get(&d, "labels").cloned().unwrap_or(PyValue::None);
    if labels.is_none() {
        // Magnum: 500 `'NoneType' object has no attribute 'get'`.
        return Err(MagnumError::client_side("'NoneType' object has no attribute 'get'").into());
    }
    let boot = validation::boot_volume_labels(&labels);
    for key in ["flavor_id", "master_flavor_id"] {
        if let Some(f) = dict_get(&d, key) {
            cloudv::validate_flavor_root_volume_size(
                cloud.as_ref(),
                &ctx,
                Some(&boot),
                f.as_str(),
                settings.default_boot_volume_size,
            )
            .await
            .map_err(validation::client_error_for_bad_boot_volume)?;
        }
    }
    if matches!(
        dict_get(&d, "docker_storage_driver").and_then(PyValue::as_str),
        Some("devicemapper" | "overlay")
    ) {
        tracing::warn!("The devicemapper and overlay storage drivers are deprecated in favor of overlay2 in docker, and will be removed in a future release from docker. Users of the devicemapper and overlay storage drivers are recommended to migrate to a different storage driver, such as overlay2. overlay2 will be set as the default storage driver from Victoria cycle in Magnum.");
    }
    if opt_str(dict_get(&d, "coe")) == Some("kubernetes") && distro.as_deref() == Some("coreos") {
        // Magnum: 500 (the deprecation note it refers to does not exist).
        return Err(MagnumError::client_side(
            "'ClusterTemplatesController' object has no attribute '_coreos_deprecation_note'",
        )
        .into());
    }
    if !dict_get(&d, "name").is_some_and(PyValue::truthy) {
        put(
            &mut d,
            "name",
            PyValue::str(crate::resources::generate_name("template")),
        );
    }

    // objects.ClusterTemplate(context, **dict): coercion, then create().
    let mut row = ClusterTemplate::default();
    for (k, v) in &d {
        let field = OBJ_FIELDS
            .iter()
            .find(|(n, _)| n == k)
            .map_or(ObjField::String { nullable: true }, |(_, f)| *f);
        let v = coerce(field, k, v)?;
        assign(&mut row, k, &v)?;
    }
    let created = db_ct::create(db(state)?, &row).await?;
    let uuid = created.uuid.clone().unwrap_or_default();
    let mut reply = Reply::json(201, view(&created, &req.host_url));
    reply.headers.push((
        HeaderName::from_static("location"),
        crate::links::build_url(&req.host_url, RESOURCE, &uuid, false),
    ));
    Ok(reply)
}
