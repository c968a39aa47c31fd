//! `openkeel-driver-manage`: Magnum's `magnum-driver-manage` for OpenKeel.
//!
//! `openkeel-driver-manage list-drivers [-d|--details] [-p|--paths] [-f table|value|json] [--noindent]` lists
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
    Json,
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
        /// whether to disable indenting the JSON
        #[arg(long)]
        noindent: bool,
    },
}

/// cliff's JSON formatter: `json.dumps([{column: value}], indent=2)` (or without indent).
fn json_list(headers: &[&str], rows: &[Vec<String>], indent: bool) -> String {
    let objects: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            for (h, v) in headers.iter().zip(r) {
                m.insert((*h).to_string(), serde_json::Value::from(v.as_str()));
            }
            serde_json::Value::Object(m)
        })
        .collect();
    if !indent {
        return openkeel_core::pyjson::dumps(&serde_json::Value::Array(objects));
    }
    if objects.is_empty() {
        return "[]".to_string();
    }
    // json.dumps(indent=2): one key per line, ", " becomes ",\n", keys as json.dumps writes them
    let mut out = String::from("[\n");
    for (i, o) in objects.iter().enumerate() {
        out.push_str("  {\n");
        let fields: Vec<String> = o
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        format!(
                            "    {}: {}",
                            openkeel_core::pyjson::dumps(&serde_json::Value::from(k.as_str())),
                            openkeel_core::pyjson::dumps(v)
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push_str(&fields.join(",\n"));
        out.push_str("\n  }");
        if i + 1 < objects.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push(']');
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::ListDrivers {
        details,
        paths,
        format,
        noindent,
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
        Format::Json => println!("{}", json_list(&headers, &rows, !noindent)),
    }
    ExitCode::SUCCESS
}
