//! `openkeel-db-manage`: OpenKeel's name for [`openkeel::cmd::db_manage`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::db_manage::main("openkeel-db-manage")
}
