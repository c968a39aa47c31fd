//! `openkeel-driver-manage`: OpenKeel's name for [`openkeel::cmd::driver_manage`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::driver_manage::main("openkeel-driver-manage")
}
