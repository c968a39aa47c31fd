//! Domain types: one plain struct per Magnum table / versioned object.
//!
//! Each struct holds exactly the columns of the table at Alembic head `b3e1cf4a2d5e`
//! (`magnum/db/sqlalchemy/models.py` and its Alembic migrations), with the Rust type matching the column: `Option` where the
//! column is nullable, `i32` for `int(11)`, `bool` for `tinyint(1)`, [`NaiveDateTime`] for
//! `datetime` (Magnum stores naive UTC without fractional seconds).
//!
//! JSON-in-TEXT columns (`JSONEncodedDict` / `JSONEncodedList` in `magnum/db/sqlalchemy/models.py`) are typed by what Magnum's object layer puts in them:
//! dicts of strings as [`StringMap`] (insertion-ordered, as Python dicts are, so a value read
//! and written back produces the same bytes), lists of strings as `Vec<String>`, and
//! `nodegroup.node_taints` as a list of JSON objects ([`Taint`]). `None` means SQL `NULL`
//! (rows created by migrations can have it); Magnum itself always writes `{}` / `[]`.
//!
//! These are plain data: the database crate reads and writes them, the RPC crate turns them
//! into versioned-object primitives, the API crate into resource views.
//!
//! [`NaiveDateTime`]: chrono::NaiveDateTime

mod certificate;
mod cluster;
mod cluster_template;
mod federation;
mod magnum_service;
mod nodegroup;
mod quota;
mod status;
mod x509keypair;

pub use certificate::Certificate;
pub use cluster::Cluster;
pub use cluster_template::ClusterTemplate;
pub use federation::Federation;
pub use magnum_service::MagnumService;
pub use nodegroup::{NodeGroup, NodeGroupRole};
pub use quota::{Quota, QuotaResource};
pub use status::{ClusterHealthStatus, ClusterStatus, ClusterType, FederationStatus, UnknownValue};
pub use x509keypair::X509KeyPair;

/// A JSON object of strings (`DictOfStringsField`), in insertion order.
pub type StringMap = indexmap::IndexMap<String, String>;

/// One node taint (`ListOfDictsField` element), typically `{"key", "value", "effect"}`;
/// values are arbitrary JSON, key order is kept.
pub type Taint = serde_json::Map<String, serde_json::Value>;

/// Cluster statistics (`magnum.objects.Stats`, not persisted): number of clusters and the sum
/// of the node counts of their nodegroups (masters included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub clusters: i64,
    pub nodes: i64,
}
