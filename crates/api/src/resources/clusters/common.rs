//! Plumbing shared by the cluster, action and nodegroup handlers: the cloud handle, the
//! root-volume check as the cluster routes call it, database errors.

use crate::error::ApiError;
use crate::ApiState;
use openkeel_cloud::validate;
use openkeel_core::cloud::Cloud;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::StringMap;

/// A database failure as Magnum reports it.
pub fn db(e: openkeel_db::DbError) -> ApiError {
    ApiError::Handler(crate::dberr::to_magnum(e))
}

/// The database handle.
pub fn database(state: &ApiState) -> Result<&openkeel_db::Database, ApiError> {
    state
        .db
        .as_ref()
        .ok_or_else(|| MagnumError::internal("no database is configured").into())
}

/// The conductor handle.
pub fn conductor(state: &ApiState) -> Result<&dyn openkeel_rpc::ConductorApi, ApiError> {
    state.conductor.as_deref().ok_or_else(|| {
        MagnumError::new(
            ErrorKind::ServiceUnavailable,
            &[("msg", &"The conductor is not reachable.")],
        )
        .into()
    })
}

/// The cloud handle (Magnum fails to build its clients without one: `AuthorizationFailure`).
pub fn cloud(state: &ApiState) -> Result<&dyn Cloud, ApiError> {
    state.cloud.as_deref().ok_or_else(|| {
        MagnumError::new(
            ErrorKind::AuthorizationFailure,
            &[
                ("client", &"nova"),
                ("message", &"reason: no OpenStack cloud is configured"),
            ],
        )
        .into()
    })
}

/// A flavor attribute as `validate_flavor_root_volume_size` receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlavorRef<'a> {
    Name(&'a str),
    /// `None`.
    Null,
    /// WSME's `Unset` (the attribute was removed by a PATCH).
    Unset,
}

/// `validate_flavor_root_volume_size(cli, flavor, labels.get('boot_volume_size',
/// [cinder]default_boot_volume_size))`. A non-integer label is a 400 here (Magnum: 500
/// `boot_volume_size must be an integer`, docs/differences.md).
pub async fn check_root_volume(
    cloud: &dyn Cloud,
    ctx: &RequestContext,
    labels: Option<&StringMap>,
    flavor: FlavorRef<'_>,
    default_boot_volume_size: i64,
) -> Result<(), ApiError> {
    if let Some(v) = labels.and_then(|l| l.get("boot_volume_size")) {
        if openkeel_core::pyvalue::python_int(v).is_none() {
            return Err(
                MagnumError::invalid_parameter("boot_volume_size must be an integer").into(),
            );
        }
    }
    let flavor = match flavor {
        FlavorRef::Name(f) => Some(f),
        FlavorRef::Null => None,
        FlavorRef::Unset => {
            let size = match labels.and_then(|l| l.get("boot_volume_size")) {
                Some(v) => openkeel_core::pyvalue::python_int(v).unwrap_or(0),
                None => i128::from(default_boot_volume_size),
            };
            if size > 0 {
                return Ok(());
            }
            return Err(
                MagnumError::new(ErrorKind::FlavorNotFound, &[("flavor", &"Unset")]).into(),
            );
        }
    };
    validate::validate_flavor_root_volume_size(cloud, ctx, labels, flavor, default_boot_volume_size)
        .await
        .map_err(ApiError::from)
}
