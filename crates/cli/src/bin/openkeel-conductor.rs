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
    config: openkeel::ConfigArgs,
    /// Log format.
    #[arg(long, value_enum, default_value_t)]
    log_format: openkeel::logging::LogFormat,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    openkeel::run_service(
        "openkeel-conductor",
        &cli.config,
        cli.log_format,
        |opts| async move {
            let running = openkeel::services::start_conductor(opts).await?;
            openkeel::allinone::shutdown_signal().await;
            tracing::info!("shutting down");
            running.stop().await;
            Ok(())
        },
    )
}
