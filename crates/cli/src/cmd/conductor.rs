//! `openkeel-conductor`: the conductor (as magnum-conductor): RPC server on `[conductor]
//! topic`, cluster operations through the drivers, certificates, periodic loops.

use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel-conductor",
    version,
    about = "OpenKeel conductor: serves Magnum's conductor RPC over RabbitMQ (for openkeel-api or magnum-api) and runs the periodic loops"
)]
struct Cli {
    #[command(flatten)]
    config: crate::ConfigArgs,
    /// Log format (default: `[DEFAULT] use_json`).
    #[arg(long, value_enum)]
    log_format: Option<crate::logging::LogFormat>,
}

pub fn main(prog: &'static str) -> std::process::ExitCode {
    let cli: Cli = crate::parse_args(prog);
    crate::run_service(
        prog,
        &cli.config,
        cli.log_format,
        |c| c.conductor.workers,
        |opts| async move {
            let running = crate::services::start_conductor(opts).await?;
            crate::wiring::shutdown_signal().await;
            tracing::info!("shutting down");
            running.stop().await;
            Ok(())
        },
    )
}
