//! What the template handlers do that is neither HTTP nor typing: the OpenStack resources a
//! template names, and the fields a PATCH changes (written into the row).

use super::types::{api_attr, dict_get, opt_str, ApiObj, OBJ_FIELDS};
use super::view::assign;
use crate::validation::coerce;
use openkeel_cloud::validate as cloudv;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::ClusterTemplate;
use openkeel_core::pyvalue::PyValue;

/// The template's OpenStack resources, for `validate_os_resources`.
pub(super) fn os_resources<'a>(d: &'a [(&'static str, PyValue)]) -> cloudv::OsResources<'a> {
    cloudv::OsResources {
        image_id: opt_str(dict_get(d, "image_id")),
        flavor_id: opt_str(dict_get(d, "flavor_id")),
        master_flavor_id: opt_str(dict_get(d, "master_flavor_id")),
        external_network_id: opt_str(dict_get(d, "external_network_id")),
        fixed_network: opt_str(dict_get(d, "fixed_network")),
        fixed_subnet: opt_str(dict_get(d, "fixed_subnet")),
    }
}

/// "Update only the fields that have changed": every object field the API declares whose
/// patched value differs from the stored document's, coerced and written into `current`;
/// the changed names, in the object's field order.
pub(super) fn apply_changes(
    current: &mut ClusterTemplate,
    new: &ApiObj,
    old_doc: &PyValue,
) -> Result<Vec<&'static str>, MagnumError> {
    let mut changed: Vec<&'static str> = Vec::new();
    for (name, field) in OBJ_FIELDS.iter() {
        if api_attr(name).is_none() {
            continue;
        }
        let new_val = new.attr(name).unwrap_or(PyValue::None);
        let old_val = old_doc.get(name).cloned().unwrap_or(PyValue::None);
        if !old_val.py_eq(&new_val) {
            let c = coerce(*field, name, &new_val)?;
            assign(current, name, &c)?;
            changed.push(name);
        }
    }
    Ok(changed)
}
