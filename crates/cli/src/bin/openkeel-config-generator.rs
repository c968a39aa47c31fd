//! `openkeel-config-generator`: writes the sample configuration file (every option, commented
//! out, with its help, type and default), in the format of oslo-config-generator.
//!
//! `etc/openkeel.conf.sample` is this program's output:
//! `cargo run -q --bin openkeel-config-generator > etc/openkeel.conf.sample`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Print the OpenKeel (magnum.conf) sample configuration.
#[derive(Debug, Parser)]
#[command(name = "openkeel-config-generator", version, about)]
struct Args {
    /// Write the sample to this file instead of standard output.
    #[arg(long = "output-file", value_name = "PATH")]
    output_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let sample = openkeel_core::config::sample();
    let result = match &args.output_file {
        Some(path) => {
            std::fs::write(path, sample.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(sample.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| format!("standard output: {e}"))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("openkeel-config-generator: {message}");
            ExitCode::FAILURE
        }
    }
}
