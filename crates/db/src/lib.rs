//! openkeel-db: the Magnum database (MySQL/MariaDB or SQLite) behind one [`Database`] handle.
//!
//! * one module per table — [`cluster`], [`cluster_template`], [`nodegroup`],
//!   [`x509keypair`], [`magnum_service`], [`quota`], [`federation`] — offering the queries of
//!   Magnum's DB API (`magnum/db/sqlalchemy/api.py`) with the same filters, tenant scoping
//!   ([`Scope`]), pagination ([`Page`]: limit / marker / sort key / sort direction with oslo.db's
//!   semantics) and errors ([`DbError`], named after Magnum's exceptions);
//! * rows are the plain structs of [`openkeel_core::objects`]; JSON columns are written byte
//!   for byte as Python's `json.dumps` writes them ([`json`]);
//! * [`manage`]: `upgrade` / `version` / `stamp` over an empty database or one Magnum created;
//!   the schema scripts are embedded from `migrations/`.
//!
//! Writes follow Magnum's ORM conventions: `created_at` set on insert, `updated_at` when an
//! update changes a value, naive UTC whole seconds, Magnum's boolean defaults, `{}` / `[]` for
//! unset JSON columns. Every write is its own transaction and is retried on deadlock.

mod backend;
pub mod cluster;
pub mod cluster_template;
mod error;
pub mod federation;
pub mod ident;
pub mod json;
pub mod lock;
pub mod magnum_service;
pub mod manage;
mod mysql_reader;
pub mod nodegroup;
pub mod quota;
mod reader;
mod record;
mod rows;
mod scope;
mod url;
pub mod x509keypair;

pub use backend::{Backend, ConnectOptions, Database, Pool, SQLITE_CACHE_SIZE_KIB};
pub use cluster::ClusterFilters;
pub use cluster_template::ClusterTemplateFilters;
pub use error::DbError;
pub use federation::FederationFilters;
pub use nodegroup::NodeGroupFilters;
pub use quota::QuotaFilters;
pub use record::Page;
pub use scope::Scope;
pub use url::{redact as redact_url, sqlx_url, SQLITE_MEMORY};
pub use x509keypair::X509KeyPairFilters;
