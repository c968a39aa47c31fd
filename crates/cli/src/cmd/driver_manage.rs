//! `openkeel-driver-manage`: Magnum's `magnum-driver-manage` for OpenKeel.
//!
//! `openkeel-driver-manage list-drivers [-d|--details] [-p|--paths]
//! [-f table|value|json|yaml|csv] [--noindent] [--quote all|minimal|none|nonnumeric]` lists
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
    config: crate::ConfigArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Csv,
    Json,
    Table,
    Value,
    Yaml,
}

/// cliff's CSV formatter `--quote` (Python's `csv.QUOTE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Quote {
    All,
    Minimal,
    None,
    Nonnumeric,
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
        /// when to include quotes, defaults to nonnumeric
        #[arg(long = "quote", value_enum, default_value = "nonnumeric")]
        quote: Quote,
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

/// cliff's CSV formatter: `csv.writer(quoting=..., lineterminator=os.linesep,
/// escapechar='\\')`, the header row then the rows. Every value here is a string, so
/// `nonnumeric` quotes everything as `all` does.
fn csv(headers: &[&str], rows: &[Vec<String>], quote: Quote) -> String {
    let field = |v: &str, only: bool| -> String {
        let special = |c: char| matches!(c, ',' | '"' | '\r' | '\n' | '\\');
        match quote {
            Quote::All | Quote::Nonnumeric => format!("\"{}\"", v.replace('"', "\"\"")),
            Quote::Minimal if v.chars().any(special) || (only && v.is_empty()) => {
                format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\"\""))
            }
            Quote::Minimal => v.to_string(),
            Quote::None => v
                .chars()
                .flat_map(|c| if special(c) { vec!['\\', c] } else { vec![c] })
                .collect(),
        }
    };
    let line = |cells: Vec<&str>| {
        let only = cells.len() == 1;
        cells
            .into_iter()
            .map(|c| field(c, only))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = vec![line(headers.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// A scalar as PyYAML's `safe_dump` writes it: plain when that reads back as the same
/// string, else single-quoted.
fn yaml_scalar(v: &str) -> String {
    let reserved = [
        "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n",
    ];
    let plain = !reserved.contains(&v.to_ascii_lowercase().as_str())
        && v.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '))
        && !v.ends_with(' ')
        && v.parse::<f64>().is_err();
    if plain {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "''"))
    }
}

/// cliff's YAML formatter: `yaml.safe_dump([{column: value}], default_flow_style=False)`
/// (keys sorted, block style; `[]` when empty).
fn yaml_list(headers: &[&str], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return "[]".to_string();
    }
    let mut out = Vec::new();
    for r in rows {
        let mut pairs: Vec<(&str, &str)> = headers
            .iter()
            .copied()
            .zip(r.iter().map(String::as_str))
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        for (i, (k, v)) in pairs.into_iter().enumerate() {
            let lead = if i == 0 { "- " } else { "  " };
            out.push(format!("{lead}{}: {}", yaml_scalar(k), yaml_scalar(v)));
        }
    }
    out.join("\n")
}

pub fn main(prog: &'static str) -> ExitCode {
    let cli: Cli = crate::parse_args(prog);
    let Command::ListDrivers {
        details,
        paths,
        format,
        noindent,
        quote,
    } = cli.command;
    let sources =
        ConfigSource::command_line("magnum", &cli.config.config_file, &cli.config.config_dir);
    let config = match Config::load_sequence(&sources) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The registry the conductor and the API build (no database: listing needs none).
    let registry = match crate::wiring::driver_registry(&config, None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return ExitCode::FAILURE;
        }
    };
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
        Format::Table => println!("{}", crate::table::render(&headers, &rows, false)),
        Format::Value => {
            for r in rows {
                println!("{}", r.join(" "));
            }
        }
        Format::Json => println!("{}", json_list(&headers, &rows, !noindent)),
        Format::Yaml => println!("{}", yaml_list(&headers, &rows)),
        Format::Csv => println!("{}", csv(&headers, &rows, quote)),
    }
    ExitCode::SUCCESS
}
