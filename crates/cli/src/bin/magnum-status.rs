//! `magnum-status`: Magnum's name for [`openkeel::cmd::status`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::status::main("magnum-status")
}
