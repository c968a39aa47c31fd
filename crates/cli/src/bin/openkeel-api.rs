//! `openkeel-api`: Magnum's REST API (as magnum-api), reaching the conductor over RabbitMQ.

use clap::Parser;
use std::net::SocketAddr;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel-api",
    version,
    about = "OpenKeel API: Magnum's REST API on [api] host:port, talking to openkeel-conductor (or magnum-conductor) over RabbitMQ"
)]
struct Cli {
    #[command(flatten)]
    config: openkeel::ConfigArgs,
    /// Listen address (default: [api] host and port).
    #[arg(long, env = "OPENKEEL_BIND")]
    bind: Option<SocketAddr>,
    /// Log format.
    #[arg(long, value_enum, default_value_t)]
    log_format: openkeel::logging::LogFormat,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    openkeel::run_service(
        "openkeel-api",
        &cli.config,
        cli.log_format,
        |opts| async move {
            let running = openkeel::services::start_api(openkeel::services::ServiceOptions {
                bind: cli.bind,
                ..opts
            })
            .await?;
            openkeel::allinone::shutdown_signal().await;
            tracing::info!("shutting down");
            running.stop().await?;
            Ok(())
        },
    )
}
