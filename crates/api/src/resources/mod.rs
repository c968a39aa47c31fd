//! One module per Magnum resource: its routes, handlers and views.

pub mod certificates;
pub mod cluster_templates;
pub mod clusters;
pub mod federations;
pub mod mservices;
pub mod quotas;
pub mod stats;
