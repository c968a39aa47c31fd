//! `openkeel`: the all-in-one server (the README's first command).

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel",
    version,
    about = "OpenKeel all-in-one: Magnum-compatible API and conductor in one process"
)]
struct Cli {
    #[command(flatten)]
    config: openkeel::ConfigArgs,
    /// Data directory for the embedded SQLite database and state.
    #[arg(long, env = "OPENKEEL_DATA_DIR", default_value = ".openkeel")]
    data_dir: PathBuf,
    /// Listen address (overrides [api] host / port).
    #[arg(long, env = "OPENKEEL_BIND", default_value = "127.0.0.1:9511")]
    bind: SocketAddr,
    /// Log format.
    #[arg(long, value_enum, default_value_t)]
    log_format: openkeel::logging::LogFormat,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    openkeel::logging::init(false, cli.log_format);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("openkeel: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let opts = openkeel::allinone::Options {
        bind: cli.bind,
        data_dir: cli.data_dir,
        api: openkeel_api::ApiState::default(),
    };
    match rt.block_on(openkeel::allinone::serve(opts)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "openkeel failed");
            eprintln!("openkeel: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
