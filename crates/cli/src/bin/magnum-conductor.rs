//! `magnum-conductor`: Magnum's name for [`openkeel::cmd::conductor`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::conductor::main("magnum-conductor")
}
