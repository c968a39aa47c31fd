//! `openkeel-conductor`: OpenKeel's name for [`openkeel::cmd::conductor`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::conductor::main("openkeel-conductor")
}
