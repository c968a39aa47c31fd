//! Structured logging with `tracing`. `RUST_LOG` overrides the level; `[DEFAULT] debug`
//! turns on debug. Nothing logs tokens, private keys or CSR bodies: request spans carry only
//! the request id, method and path.

use tracing_subscriber::EnvFilter;

/// Log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Install the global subscriber (idempotent: a second call is ignored).
pub fn init(debug: bool, format: LogFormat) {
    let default = if debug {
        "debug,sqlx=info,hyper=info"
    } else {
        "info,sqlx=warn"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
