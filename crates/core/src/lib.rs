//! OpenKeel core: domain types, the error catalogue, the request context and the
//! `magnum.conf` configuration model shared by every other crate.

pub mod cloud;
pub mod config;
pub mod context;
pub mod error;
pub mod fuzzing;
pub mod metrics;
pub mod objects;
pub mod pyjson;
pub mod pyvalue;
