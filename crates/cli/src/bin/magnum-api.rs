//! `magnum-api`: Magnum's name for [`openkeel::cmd::api`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::api::main("magnum-api")
}
