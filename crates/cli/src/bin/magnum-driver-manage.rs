//! `magnum-driver-manage`: Magnum's name for [`openkeel::cmd::driver_manage`].

fn main() -> std::process::ExitCode {
    openkeel::cmd::driver_manage::main("magnum-driver-manage")
}
