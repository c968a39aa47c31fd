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
    config: crate::ConfigArgs,
    /// Listen address (default: [api] host and port).
    #[arg(long, env = "OPENKEEL_BIND")]
    bind: Option<SocketAddr>,
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
        |c| c.api.workers,
        |opts| async move {
            let running = crate::services::start_api(crate::services::ServiceOptions {
                bind: cli.bind,
                ..opts
            })
            .await?;
            crate::wiring::shutdown_signal().await;
            tracing::info!("shutting down");
            running.stop().await?;
            Ok(())
        },
    )
}
