//! `openkeel-api`: OpenKeel's name for [`openkeel::cmd::api`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::api::main("openkeel-api")
}
