//! The service and admin commands, each one `main(prog)` run under two names: OpenKeel's
//! (`openkeel-api`, ...) and Magnum's (`magnum-api`, ...), so deployments that start
//! Magnum's programs (kolla-ansible, OpenStack-Helm, packaged systemd units) start OpenKeel's
//! unchanged. The binaries in `src/bin` are one-line wrappers.

pub mod api;
pub mod conductor;
pub mod db_manage;
pub mod driver_manage;
pub mod status;
