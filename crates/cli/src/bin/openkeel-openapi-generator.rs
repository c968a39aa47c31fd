//! `openkeel-openapi-generator`: prints the OpenAPI 3.1 document of Magnum's API as OpenKeel
//! serves it, generated from the code (`openkeel_api::openapi`: the route catalogue and the
//! schemas built from the handlers' attribute lists), as JSON in a fixed order.
//!
//! `docs/openapi.json` is this program's output (a test keeps it current):
//! `cargo run -q --bin openkeel-openapi-generator > docs/openapi.json`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Print the OpenAPI document of the API (JSON).
#[derive(Debug, Parser)]
#[command(name = "openkeel-openapi-generator", version, about)]
struct Args {
    /// Write the document to this file instead of standard output.
    #[arg(long = "output-file", value_name = "PATH")]
    output_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let document = openkeel_api::openapi::to_json();
    let result = match &args.output_file {
        Some(path) => std::fs::write(path, document.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(document.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| format!("standard output: {e}"))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("openkeel-openapi-generator: {message}");
            ExitCode::FAILURE
        }
    }
}
