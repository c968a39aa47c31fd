//! `openkeel-policy-generator`: prints Magnum 23.0.0's default policy as a sample file, byte
//! for byte what `oslopolicy-sample-generator --namespace magnum` writes.
//!
//! `policy/policy.yaml.sample` is this program's output (a test keeps it current):
//! `cargo run -q --bin openkeel-policy-generator > policy/policy.yaml.sample`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Print the default policy (every rule commented out, with its description) as YAML.
#[derive(Debug, Parser)]
#[command(name = "openkeel-policy-generator", version, about)]
struct Args {
    /// Write the sample to this file instead of standard output.
    #[arg(long = "output-file", value_name = "PATH")]
    output_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let sample = openkeel_auth::sample_yaml();
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
            eprintln!("openkeel-policy-generator: {message}");
            ExitCode::FAILURE
        }
    }
}
