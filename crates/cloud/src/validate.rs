//! The checks Magnum's API runs against OpenStack (`magnum/api/attr_validator.py`, and
//! `magnum/api/validation.py` for the driver image and the quota project), as free functions
//! over any [`Cloud`]. Messages and status codes are Magnum 23.0.0's (`magnum/api/attr_validator.py`, `magnum/api/validation.py`).

use openkeel_core::cloud::{Cloud, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::StringMap;

/// Python's `str(None)`, which Magnum's messages print for a missing value.
fn shown(v: Option<&str>) -> &str {
    v.unwrap_or("None")
}

/// `validate_image`: Glance `find_image`, then the image must carry `os_distro`.
///
/// * not found → 400 `Image <i> could not be found.`
/// * several with that name → 409 `Multiple images exist with same name '<i>'. Please use the
///   image ID instead.`
/// * forbidden → 403 `Not authorized for image <i>.`
/// * no (or an empty) `os_distro`, or no image at all (`None`) → 400 `Image <i> doesn't
///   contain os_distro field.`
pub async fn validate_image(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    image: Option<&str>,
) -> Result<Image, MagnumError> {
    let os_distro_missing = |i: Option<&str>| {
        MagnumError::new(ErrorKind::OSDistroFieldNotFound, &[("image_id", &shown(i))])
    };
    let Some(name_or_id) = image else {
        return Err(os_distro_missing(None));
    };
    let found = cloud.find_image(ctx, name_or_id).await?;
    if found.os_distro.as_deref().is_none_or(str::is_empty) {
        return Err(os_distro_missing(Some(name_or_id)));
    }
    Ok(found)
}

/// What [`driver_image`] resolved for driver selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverImage {
    /// The distro to select the driver with: the image's `os_distro` when the image was
    /// looked up, else the template's `cluster_distro`.
    pub cluster_distro: Option<String>,
    /// The template's `driver`, else the image's `magnum_driver` property (the caller falls
    /// back to the default driver when this is `None`).
    pub driver: Option<String>,
}

/// The image part of Magnum 23.0.0's `enforce_driver_supported` (template create): when the
/// template lacks `cluster_distro` or `driver`, look the image up; not found → 400
/// `ImageNotFound`, forbidden → 403 `ImageNotAuthorized`, any other failure (duplicates,
/// unreachable Glance, no image id) is swallowed; then, if no distro is known, 400
/// `Image <i> doesn't contain os_distro field.` — which is why a duplicate image name
/// surfaces as this 400 rather than a 409.
pub async fn driver_image(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    image_id: Option<&str>,
    cluster_distro: Option<&str>,
    driver: Option<&str>,
) -> Result<DriverImage, MagnumError> {
    let nonempty = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(str::to_string);
    let mut out = DriverImage {
        cluster_distro: nonempty(cluster_distro),
        driver: nonempty(driver),
    };
    if out.cluster_distro.is_some() && out.driver.is_some() {
        return Ok(out);
    }
    if let Some(id) = image_id {
        match cloud.find_image(ctx, id).await {
            Ok(image) => {
                out.cluster_distro = image.os_distro.clone().filter(|s| !s.is_empty());
                if out.driver.is_none() {
                    out.driver = image.magnum_driver().map(str::to_string);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ImageNotFound | ErrorKind::ImageNotAuthorized
                ) =>
            {
                return Err(e)
            }
            Err(e) => {
                tracing::debug!(error = %e, "image look-up for driver selection failed; ignored as Magnum does");
            }
        }
    }
    if out.cluster_distro.is_none() {
        return Err(MagnumError::new(
            ErrorKind::OSDistroFieldNotFound,
            &[("image_id", &shown(image_id))],
        ));
    }
    Ok(out)
}

fn flavor_not_found(flavor: Option<&str>) -> MagnumError {
    MagnumError::new(ErrorKind::FlavorNotFound, &[("flavor", &shown(flavor))])
}

/// `validate_flavor`: `None` is not checked; otherwise a Nova flavor must have that name or
/// id, else 400 `Unable to find flavor <f>.`
pub async fn validate_flavor(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    flavor: Option<&str>,
) -> Result<(), MagnumError> {
    let Some(f) = flavor else {
        return Ok(());
    };
    let flavors = cloud.list_flavors(ctx).await?;
    if flavors.iter().any(|x| x.name == f || x.id == f) {
        Ok(())
    } else {
        Err(flavor_not_found(Some(f)))
    }
}

/// oslo.utils `validate_integer` on `int(str(value))`, within `i64`: beyond it the value is
/// still "an integer" to Python, so it saturates at `±i64::MAX` (only its sign matters).
fn python_int(s: &str) -> Option<i64> {
    let max = i128::from(i64::MAX);
    openkeel_core::pyvalue::python_int(s).map(|v| i64::try_from(v.clamp(-max, max)).unwrap_or(0))
}

/// `validate_flavor_root_volume_size(flavor, labels.get('boot_volume_size',
/// [cinder]default_boot_volume_size))`:
///
/// * a `boot_volume_size` label that is not an integer → 500 `boot_volume_size must be an
///   integer`;
/// * a size > 0 → nothing to check;
/// * otherwise the flavor must exist (400 `Unable to find flavor <f>.`, `None` when unset; the
///   API passes `Unset` for a removed attribute) and have a root disk (400 `Flavor with zero
///   root volume size is not supported when boot_volume_size is zero.`).
pub async fn validate_flavor_root_volume_size(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    labels: Option<&StringMap>,
    flavor: Option<&str>,
    default_boot_volume_size: i64,
) -> Result<(), MagnumError> {
    let size = match labels.and_then(|l| l.get("boot_volume_size")) {
        Some(v) => python_int(v)
            .ok_or_else(|| MagnumError::internal("boot_volume_size must be an integer"))?,
        None => default_boot_volume_size,
    };
    if size > 0 {
        return Ok(());
    }
    let flavors = cloud.list_flavors(ctx).await?;
    let found = flavor.and_then(|f| flavors.iter().find(|x| x.name == f || x.id == f));
    let Some(found) = found else {
        return Err(flavor_not_found(flavor));
    };
    if found.disk == 0 && size == 0 {
        return Err(MagnumError::new(
            ErrorKind::FlavorZeroRootVolumeNotSupported,
            &[],
        ));
    }
    Ok(())
}

/// `validate_keypair`: `None` is not checked; a missing keypair → **404** `Unable to find
/// keypair <k>.`
pub async fn validate_keypair(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    keypair: Option<&str>,
) -> Result<(), MagnumError> {
    let Some(k) = keypair else {
        return Ok(());
    };
    if cloud.keypair_exists(ctx, k).await? {
        Ok(())
    } else {
        Err(MagnumError::new(
            ErrorKind::KeyPairNotFound,
            &[("keypair", &k)],
        ))
    }
}

/// Magnum's rule for a network given by name or id (`get_external_network_id`,
/// `get_fixed_network_id`): exactly one of `candidates` has that name or id. None → 400
/// `Unable to find external|fixed network <n>.`; several → 409 `Multiple [external ]networks
/// exist with same name '<n>'. Please use the [external ]network ID instead.`
pub fn one_network(
    candidates: Vec<NamedResource>,
    name_or_id: &str,
    external: bool,
) -> Result<NamedResource, MagnumError> {
    let mut found: Vec<NamedResource> = candidates
        .into_iter()
        .filter(|n| n.name == name_or_id || n.id == name_or_id)
        .collect();
    let (missing, what) = if external {
        (ErrorKind::ExternalNetworkNotFound, "external network")
    } else {
        (ErrorKind::FixedNetworkNotFound, "network")
    };
    match found.len() {
        0 => Err(MagnumError::new(missing, &[("network", &name_or_id)])),
        1 => Ok(found.remove(0)),
        _ => Err(MagnumError::with_message(
            ErrorKind::Conflict,
            format!(
                "Multiple {what}s exist with same name '{name_or_id}'. Please use the {what} ID instead."
            ),
        )),
    }
}

/// Magnum's rule for a subnet given by name or id (`get_fixed_subnet_id`): none → 400
/// `Unable to find fixed subnet <s>.`, several → 409 `Multiple subnets exist with same name
/// '<s>'. Please use the subnet ID instead.`
pub fn one_subnet(
    candidates: Vec<NamedResource>,
    name_or_id: &str,
) -> Result<NamedResource, MagnumError> {
    let mut found: Vec<NamedResource> = candidates
        .into_iter()
        .filter(|n| n.name == name_or_id || n.id == name_or_id)
        .collect();
    match found.len() {
        0 => Err(MagnumError::new(
            ErrorKind::FixedSubnetNotFound,
            &[("subnet", &name_or_id)],
        )),
        1 => Ok(found.remove(0)),
        _ => Err(MagnumError::with_message(
            ErrorKind::Conflict,
            format!(
                "Multiple subnets exist with same name '{name_or_id}'. Please use the subnet ID instead."
            ),
        )),
    }
}

/// `validate_external_network`: a `router:external` network with that name or id
/// ([`one_network`]).
pub async fn validate_external_network(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    network: &str,
) -> Result<(), MagnumError> {
    one_network(cloud.list_external_networks(ctx).await?, network, true).map(drop)
}

/// `validate_fixed_network`: the id of the one visible network with that name or id
/// ([`one_network`]).
pub async fn validate_fixed_network(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    network: &str,
) -> Result<String, MagnumError> {
    one_network(cloud.networks_named(ctx, network).await?, network, false).map(|n| n.id)
}

/// `validate_fixed_subnet`: the id of the one visible subnet with that name or id
/// ([`one_subnet`]).
pub async fn validate_fixed_subnet(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    subnet: &str,
) -> Result<String, MagnumError> {
    one_subnet(cloud.subnets_named(ctx, subnet).await?, subnet).map(|n| n.id)
}

/// `_validate_project_id` (quota create): Keystone must know the project, else 404
/// `The project_id <p> could not be found.`
pub async fn validate_project(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    project_id: &str,
) -> Result<(), MagnumError> {
    if cloud.project_exists(ctx, project_id).await? {
        Ok(())
    } else {
        Err(MagnumError::new(
            ErrorKind::ProjectNotFound,
            &[("name", &"project_id"), ("id", &project_id)],
        ))
    }
}

/// The OpenStack attributes `validate_os_resources` checks, as one template or cluster
/// carries them (`None` = the attribute is null / absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OsResources<'a> {
    pub image_id: Option<&'a str>,
    pub flavor_id: Option<&'a str>,
    pub master_flavor_id: Option<&'a str>,
    pub external_network_id: Option<&'a str>,
    pub fixed_network: Option<&'a str>,
    pub fixed_subnet: Option<&'a str>,
}

/// `validate_os_resources(context, cluster_template, cluster)`: for each attribute in Magnum's
/// order (image, flavor, master flavor, external network, fixed network, fixed subnet) the
/// cluster's value when it is present and non-empty, else the template's when not null; then,
/// for a cluster, its keypair. (No label validators are registered in 23.0.0.)
pub async fn validate_os_resources(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    template: &OsResources<'_>,
    cluster: Option<(&OsResources<'_>, Option<&str>)>,
) -> Result<(), MagnumError> {
    let pick = |t: Option<&str>, c: Option<&str>| -> Option<String> {
        match (cluster, c) {
            (Some(_), Some(v)) if !v.is_empty() => Some(v.to_string()),
            _ => t.map(str::to_string),
        }
    };
    let c = cluster.map(|(c, _)| *c).unwrap_or_default();
    if let Some(v) = pick(template.image_id, c.image_id) {
        validate_image(cloud, ctx, Some(&v)).await?;
    }
    if let Some(v) = pick(template.flavor_id, c.flavor_id) {
        validate_flavor(cloud, ctx, Some(&v)).await?;
    }
    if let Some(v) = pick(template.master_flavor_id, c.master_flavor_id) {
        validate_flavor(cloud, ctx, Some(&v)).await?;
    }
    if let Some(v) = pick(template.external_network_id, c.external_network_id) {
        validate_external_network(cloud, ctx, &v).await?;
    }
    if let Some(v) = pick(template.fixed_network, c.fixed_network) {
        validate_fixed_network(cloud, ctx, &v).await?;
    }
    if let Some(v) = pick(template.fixed_subnet, c.fixed_subnet) {
        validate_fixed_subnet(cloud, ctx, &v).await?;
    }
    if let Some((_, keypair)) = cluster {
        validate_keypair(cloud, ctx, keypair).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::python_int;

    #[test]
    fn python_int_rules() {
        assert_eq!(python_int("10"), Some(10));
        assert_eq!(python_int(" -3 "), Some(-3));
        assert_eq!(python_int("+0"), Some(0));
        assert_eq!(python_int("1_000"), Some(1000));
        assert_eq!(python_int("1__0"), None);
        assert_eq!(python_int("5.0"), None);
        assert_eq!(python_int("ten"), None);
        assert_eq!(python_int(""), None);
        assert_eq!(python_int("99999999999999999999"), Some(i64::MAX));
    }

    /// Beyond `i64` (and at `i64::MIN`, whose magnitude `i64` cannot hold) the value
    /// saturates at `±i64::MAX`, as the parser this crate had before the shared one.
    #[test]
    fn python_int_saturates_within_i64() {
        assert_eq!(python_int("-99999999999999999999"), Some(-i64::MAX));
        assert_eq!(python_int("-9223372036854775808"), Some(-i64::MAX));
        assert_eq!(python_int("-9223372036854775807"), Some(-i64::MAX));
        assert_eq!(python_int("9223372036854775807"), Some(i64::MAX));
        assert_eq!(python_int(&"9".repeat(60)), Some(i64::MAX));
        assert_eq!(python_int(&format!("-{}", "9".repeat(60))), Some(-i64::MAX));
    }
}
