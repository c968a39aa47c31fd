//! `openkeel`: the all-in-one server (the README's first command).

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel",
    version,
    about = "OpenKeel all-in-one: Magnum-compatible API and conductor in one process (SQLite, in-process RPC, noauth, simulator driver by default)"
)]
struct Cli {
    #[command(flatten)]
    config: openkeel::ConfigArgs,
    /// Data directory for the embedded SQLite database and state.
    #[arg(long, env = "OPENKEEL_DATA_DIR", default_value = ".openkeel")]
    data_dir: PathBuf,
    /// Listen address (default: [api] host and port, 127.0.0.1:9511).
    #[arg(long, env = "OPENKEEL_BIND")]
    bind: Option<SocketAddr>,
    /// Log format (default: `[DEFAULT] use_json`).
    #[arg(long, value_enum)]
    log_format: Option<openkeel::logging::LogFormat>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let data_dir = match std::path::absolute(&cli.data_dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("openkeel: data directory {}: {e}", cli.data_dir.display());
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut config = match openkeel::allinone::load_config(
        &data_dir,
        &cli.config.config_file,
        &cli.config.config_dir,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("openkeel: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    cli.config.apply_overrides(&mut config);
    let _log_guard = match openkeel::logging::init_config(&config, "openkeel", cli.log_format) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("openkeel: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // the API is the busy part of the all-in-one: its `[api] workers`
    let rt = match openkeel::runtime(config.api.workers) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("openkeel: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let opts = openkeel::allinone::Options {
        bind: cli.bind,
        config,
        config_dirs: cli.config.lookup_dirs(),
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
