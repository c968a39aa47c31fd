//! The database crate's error type. Variants are named after the Magnum exceptions the
//! SQLAlchemy backend raises (`magnum/db/sqlalchemy/api.py`), and their `Display` is Magnum's
//! message; [`From<DbError> for MagnumError`](openkeel_core::error::MagnumError) converts them
//! at the crate edge.

use openkeel_core::error::{ErrorKind, MagnumError};

/// Everything the data layer and `db-manage` can fail with.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    // ---- not found (the identifier as the caller gave it) ----
    #[error("Cluster {0} could not be found.")]
    ClusterNotFound(String),
    #[error("ClusterTemplate {0} could not be found.")]
    ClusterTemplateNotFound(String),
    #[error("Nodegroup {0} could not be found.")]
    NodeGroupNotFound(String),
    #[error("A key pair {0} could not be found.")]
    X509KeyPairNotFound(String),
    #[error("A magnum service {0} could not be found.")]
    MagnumServiceNotFound(String),
    /// `msg` is `project_id <p> resource <r>.` or `quota id <n> .`, as Magnum formats it.
    #[error("Quota could not be found: {msg}")]
    QuotaNotFound { msg: String },
    #[error("Federation {0} could not be found.")]
    FederationNotFound(String),

    // ---- duplicates on create ----
    #[error("A cluster with UUID {uuid} already exists.")]
    ClusterAlreadyExists { uuid: String },
    #[error("A ClusterTemplate with UUID {uuid} already exists.")]
    ClusterTemplateAlreadyExists { uuid: String },
    /// Raised with the nodegroup's `cluster_id` value (a cluster uuid at the DB layer).
    #[error("A node group with name {name} already exists in the cluster {cluster_id}.")]
    NodeGroupAlreadyExists { cluster_id: String, name: String },
    #[error("A key pair with UUID {uuid} already exists.")]
    X509KeyPairAlreadyExists { uuid: String },
    #[error("Quota for project {project_id} already exists for resource {resource}.")]
    QuotaAlreadyExists {
        project_id: String,
        resource: String,
    },
    #[error("A federation with UUID {uuid} already exists.")]
    FederationAlreadyExists { uuid: String },

    // ---- other Magnum exceptions ----
    /// `Conflict` with a custom message, e.g. several rows with the same name:
    /// "Multiple clusters exist with same name. Please use the cluster uuid instead."
    #[error("{0}")]
    Conflict(String),
    /// `ClusterTemplateReferenced`: destroy, or an update other than name / public / hidden /
    /// tags, of a template used by a cluster.
    #[error("ClusterTemplate {0} is referenced by one or multiple clusters.")]
    ClusterTemplateReferenced(String),
    /// `InvalidParameterValue` (bad sort key, overwriting a uuid, unknown field, ...).
    #[error("{0}")]
    InvalidParameterValue(String),
    /// `InvalidIdentity`: neither an integer nor a UUID.
    #[error("Expected an uuid or int but received {0}.")]
    InvalidIdentity(String),
    /// oslo.db's `ValueError` for a sort direction other than asc/desc[-nullsfirst|-nullslast].
    #[error("Unknown sort direction, must be one of: asc-nullsfirst, asc-nullslast, desc-nullsfirst, desc-nullslast")]
    InvalidSortDir(String),

    // ---- data and schema ----
    /// A row holds a value Magnum's object layer could not load either (bad JSON, an unknown
    /// status, a NULL in a NOT NULL field).
    #[error("invalid value in {table}.{column}: {reason}")]
    Decode {
        table: &'static str,
        column: String,
        reason: String,
    },
    /// The connection URL is not one OpenKeel understands.
    #[error("invalid database connection URL: {0}")]
    InvalidUrl(String),
    /// The database is at an older Magnum revision: run Magnum's own
    /// `magnum-db-manage upgrade` first.
    #[error("the database is at Alembic revision {current}, older than the head {head}; {} revision(s) missing: {}. Upgrade it with Magnum 23.0.0's `magnum-db-manage upgrade` first", missing.len(), missing.join(", "))]
    SchemaOutdated {
        current: String,
        head: &'static str,
        missing: Vec<&'static str>,
    },
    /// `alembic_version` holds a revision that is not one of Magnum's 77.
    #[error("the database is at an unknown Alembic revision {0:?}; OpenKeel knows Magnum's revisions up to b3e1cf4a2d5e")]
    UnknownRevision(String),
    /// A revision given to `stamp` is not known.
    #[error("can't locate revision identified by {0:?}")]
    InvalidRevision(String),
    /// The schema is neither empty nor recognisable (tables without `alembic_version`,
    /// several version rows, ...).
    #[error("unexpected database state: {0}")]
    SchemaState(String),

    /// Any other database error.
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
}

impl DbError {
    /// The Magnum exception class this error corresponds to.
    pub fn kind(&self) -> ErrorKind {
        match self {
            DbError::ClusterNotFound(_) => ErrorKind::ClusterNotFound,
            DbError::ClusterTemplateNotFound(_) => ErrorKind::ClusterTemplateNotFound,
            DbError::NodeGroupNotFound(_) => ErrorKind::NodeGroupNotFound,
            DbError::X509KeyPairNotFound(_) => ErrorKind::X509KeyPairNotFound,
            DbError::MagnumServiceNotFound(_) => ErrorKind::MagnumServiceNotFound,
            DbError::QuotaNotFound { .. } => ErrorKind::QuotaNotFound,
            DbError::FederationNotFound(_) => ErrorKind::FederationNotFound,
            DbError::ClusterAlreadyExists { .. } => ErrorKind::ClusterAlreadyExists,
            DbError::ClusterTemplateAlreadyExists { .. } => ErrorKind::ClusterTemplateAlreadyExists,
            DbError::NodeGroupAlreadyExists { .. } => ErrorKind::NodeGroupAlreadyExists,
            DbError::X509KeyPairAlreadyExists { .. } => ErrorKind::X509KeyPairAlreadyExists,
            DbError::QuotaAlreadyExists { .. } => ErrorKind::QuotaAlreadyExists,
            DbError::FederationAlreadyExists { .. } => ErrorKind::FederationAlreadyExists,
            DbError::Conflict(_) => ErrorKind::Conflict,
            DbError::ClusterTemplateReferenced(_) => ErrorKind::ClusterTemplateReferenced,
            DbError::InvalidParameterValue(_) => ErrorKind::InvalidParameterValue,
            DbError::InvalidIdentity(_) => ErrorKind::InvalidIdentity,
            DbError::InvalidSortDir(_)
            | DbError::Decode { .. }
            | DbError::InvalidUrl(_)
            | DbError::SchemaOutdated { .. }
            | DbError::UnknownRevision(_)
            | DbError::InvalidRevision(_)
            | DbError::SchemaState(_)
            | DbError::Sqlx(_) => ErrorKind::MagnumException,
        }
    }

    /// True when an established connection turned out to be gone: an I/O error on it (reset,
    /// closed, broken pipe), or MySQL's 1053 and 1927 (a server shutting down, the session
    /// killed), 2006 or 2013. A read may be tried again on another connection.
    pub fn is_lost_connection(&self) -> bool {
        matches!(self, DbError::Sqlx(sqlx::Error::Io(_)))
            || self.has_mysql_code(&["1053", "1927", "2006", "2013"])
    }

    /// True for a server error whose MySQL code is one of `codes`.
    fn has_mysql_code(&self, codes: &[&str]) -> bool {
        match self {
            DbError::Sqlx(sqlx::Error::Database(e)) => {
                e.code().is_some_and(|c| codes.contains(&c.as_ref()))
            }
            _ => false,
        }
    }

    /// True when the database could not be reached (oslo.db's `DBConnectionError`): the
    /// server refused or dropped the connection, did not answer in time, or a MySQL error
    /// 2002 / 2003 / 2006 / 2013 / 1047. Bad credentials, a bad URL or a bad schema are not.
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            DbError::Sqlx(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut)
        ) || self.has_mysql_code(&["2002", "2003", "2006", "2013", "1047"])
    }

    /// True for the `*NotFound` variants.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            DbError::ClusterNotFound(_)
                | DbError::ClusterTemplateNotFound(_)
                | DbError::NodeGroupNotFound(_)
                | DbError::X509KeyPairNotFound(_)
                | DbError::MagnumServiceNotFound(_)
                | DbError::QuotaNotFound { .. }
                | DbError::FederationNotFound(_)
        )
    }
}

impl From<DbError> for MagnumError {
    /// Magnum's exception with Magnum's message and the keyword arguments Magnum raises it
    /// with (named by the class's message template), which travel in RPC failure replies.
    fn from(e: DbError) -> Self {
        let kind = e.kind();
        let names = MagnumError::template_names(kind);
        let first = |v: &String| -> Vec<(String, String)> {
            names
                .first()
                .map(|n| vec![((*n).to_string(), v.clone())])
                .unwrap_or_default()
        };
        let kwargs = match &e {
            DbError::ClusterNotFound(v)
            | DbError::ClusterTemplateNotFound(v)
            | DbError::NodeGroupNotFound(v)
            | DbError::X509KeyPairNotFound(v)
            | DbError::MagnumServiceNotFound(v)
            | DbError::FederationNotFound(v)
            | DbError::ClusterTemplateReferenced(v)
            | DbError::InvalidIdentity(v) => first(v),
            DbError::QuotaNotFound { msg } => vec![("msg".to_string(), msg.clone())],
            DbError::ClusterAlreadyExists { uuid }
            | DbError::ClusterTemplateAlreadyExists { uuid }
            | DbError::X509KeyPairAlreadyExists { uuid }
            | DbError::FederationAlreadyExists { uuid } => {
                vec![("uuid".to_string(), uuid.clone())]
            }
            DbError::NodeGroupAlreadyExists { cluster_id, name } => vec![
                ("cluster_id".to_string(), cluster_id.clone()),
                ("name".to_string(), name.clone()),
            ],
            DbError::QuotaAlreadyExists {
                project_id,
                resource,
            } => vec![
                ("project_id".to_string(), project_id.clone()),
                ("resource".to_string(), resource.clone()),
            ],
            _ => Vec::new(),
        };
        MagnumError::with_message(kind, e.to_string()).with_kwargs(kwargs)
    }
}
