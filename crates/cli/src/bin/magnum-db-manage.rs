//! `magnum-db-manage`: Magnum's name for [`openkeel::cmd::db_manage`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::db_manage::main("magnum-db-manage")
}
