//! Database errors at the API edge. `openkeel-db` names its errors after the Magnum
//! exceptions its SQLAlchemy twin raises (and converts them into [`MagnumError`] with the
//! class, status and message); this module turns them into [`ApiError`] in one place, logging
//! the ones that are server faults.

use crate::error::ApiError;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::DbError;

/// The Magnum exception for a database error: not-found and duplicate variants keep their
/// class (404 / 409), `InvalidParameterValue` (bad sort key, overwriting a uuid) is 400,
/// `ClusterTemplateReferenced` 400, `Conflict` (duplicate names) 409; everything else
/// (connection, decode, schema) is a 500 whose text is the database error.
pub fn to_magnum(e: DbError) -> MagnumError {
    let m = MagnumError::from(e);
    if m.kind() == ErrorKind::MagnumException {
        tracing::error!(error = %m, "database error");
    }
    m
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        ApiError::Handler(to_magnum(e))
    }
}
