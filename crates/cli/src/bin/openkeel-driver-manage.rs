//! `openkeel-driver-manage`: Magnum's `magnum-driver-manage` for OpenKeel.
//!
//! `openkeel-driver-manage list-drivers [-d|--details] [-p|--paths] [-f table|value]` lists
//! the drivers this build provides and the configuration enables (`[drivers]
//! disabled_drivers` removes one, as it removes an entry point from Magnum's list; the
//! simulator appears only with `[openkeel] enable_simulator_driver = true`), one row per
//! driver, or one per provided (server_type, os, coe) with `--details`; `--paths` adds
//! "Template Path", which is `n/a` for every driver that has no Heat template (all of
//! OpenKeel's). Output and exit codes are cliff's, as magnum-driver-manage prints them.

use clap::{Parser, Subcommand, ValueEnum};
use openkeel_core::config::{Config, ConfigSource};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel-driver-manage",
    version,
    about = "Magnum Driver Manager"
)]
struct Cli {
    #[command(flatten)]
    config: openkeel::ConfigArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Value,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List templates
    ListDrivers {
        /// display the cluster types provided by each template
        #[arg(short, long)]
        details: bool,
        /// display the path to each template file
        #[arg(short, long)]
        paths: bool,
        /// the output format, defaults to table
        #[arg(short = 'f', long, value_enum, default_value = "table")]
        format: Format,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::ListDrivers {
        details,
        paths,
        format,
    } = cli.command;
    let sources =
        ConfigSource::command_line("magnum", &cli.config.config_file, &cli.config.config_dir);
    let config = match Config::load_sequence(&sources) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("openkeel-driver-manage: {e}");
            return ExitCode::FAILURE;
        }
    };
    let registry = openkeel_drivers::DriverRegistry::builtin(
        openkeel::allinone::driver_settings(&config),
        config.openkeel.enable_simulator_driver,
    );
    let mut headers = vec!["Name"];
    if details {
        headers.extend(["Server_Type", "OS", "COE"]);
    }
    if paths {
        headers.push("Template Path");
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (name, driver) in registry.enabled() {
        let types = if details {
            driver.provides().into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        for t in types {
            let mut row = vec![name.to_string()];
            if let Some(t) = t {
                row.extend([t.server_type, t.os, t.coe]);
            }
            if paths {
                row.push("n/a".to_string());
            }
            rows.push(row);
        }
    }
    match format {
        Format::Table if rows.is_empty() => println!(),
        Format::Table => println!("{}", openkeel::table::render(&headers, &rows, false)),
        Format::Value => {
            for r in rows {
                println!("{}", r.join(" "));
            }
        }
    }
    ExitCode::SUCCESS
}
