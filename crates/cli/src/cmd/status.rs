//! `openkeel-status`: Magnum's `magnum-status` (oslo.upgradecheck) for OpenKeel.
//!
//! `openkeel-status upgrade check [--json]` runs Magnum 23.0.0's one check, "Policy File JSON
//! to YAML Migration" (`oslo_upgradecheck.common_checks.check_policy_json`: a failure when
//! `[oslo_policy] policy_file`, found as oslo.config finds files, holds JSON), prints the
//! same table or JSON and exits as magnum-status does: 0 success, 1 warning, 2 failure,
//! 255 when the checks themselves could not run (e.g. an unreadable configuration).

use clap::{Parser, Subcommand};
use openkeel_core::config::{Config, ConfigSources};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel-status",
    version,
    about = "Upgrade checks (as magnum-status)"
)]
struct Cli {
    #[command(flatten)]
    config: crate::ConfigArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// `upgrade check`: run the upgrade checks.
    Upgrade {
        /// Must be `check`.
        #[arg(value_parser = ["check"])]
        check: String,
        /// Output the results in JSON format.
        #[arg(long)]
        json: bool,
    },
}

/// oslo.upgradecheck's `Code` (its `Warning` = 1 is not produced by Magnum's only check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Code {
    Success = 0,
    Failure = 2,
}

impl Code {
    fn label(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Failure => "Failure",
        }
    }
}

/// `check_policy_json`'s message, as `_get_details` wraps it (textwrap, 60 columns,
/// subsequent indent of two spaces); `crates/cli/tests/admin_commands.rs` compares the whole
/// output with the real magnum-status.
const POLICY_JSON_DETAILS: &str = "Your policy file is JSON-formatted which is deprecated. You\n  need to switch to YAML-formatted file. Use the\n  ``oslopolicy-convert-json-to-yaml`` tool to convert the\n  existing JSON-formatted files to YAML in a backwards-\n  compatible manner: https://docs.openstack.org/oslo.policy/\n  latest/cli/oslopolicy-convert-json-to-yaml.html.";

const POLICY_JSON_MESSAGE: &str = "Your policy file is JSON-formatted which is deprecated. You need to switch to YAML-formatted file. Use the ``oslopolicy-convert-json-to-yaml`` tool to convert the existing JSON-formatted files to YAML in a backwards-compatible manner: https://docs.openstack.org/oslo.policy/latest/cli/oslopolicy-convert-json-to-yaml.html.";

struct Check {
    name: &'static str,
    code: Code,
    /// (raw message for --json, wrapped for the table)
    details: Option<(&'static str, &'static str)>,
}

fn policy_json_check(sources: &ConfigSources, config: &Config) -> Result<Check, String> {
    let mut check = Check {
        name: "Policy File JSON to YAML Migration",
        code: Code::Success,
        details: None,
    };
    let file = &config.oslo_policy.policy_file;
    let path = if std::path::Path::new(file).is_absolute() {
        Some(std::path::PathBuf::from(file)).filter(|p| p.exists())
    } else {
        sources.find_file("magnum", file)
    };
    if let Some(p) = path {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        // fileutils.is_json: json.loads succeeds
        if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
            check.code = Code::Failure;
            check.details = Some((POLICY_JSON_MESSAGE, POLICY_JSON_DETAILS));
        }
    }
    Ok(check)
}

pub fn main(prog: &'static str) -> ExitCode {
    let cli: Cli = crate::parse_args(prog);
    let Command::Upgrade { json, .. } = cli.command;
    let sources = if cli.config.config_file.is_empty() && cli.config.config_dir.is_empty() {
        ConfigSources::discover_default("magnum")
    } else {
        ConfigSources {
            files: cli.config.config_file.clone(),
            dirs: cli.config.config_dir.clone(),
        }
    };
    let checks = Config::load(&sources)
        .map_err(|e| e.to_string())
        .and_then(|config| Ok(vec![policy_json_check(&sources, &config)?]));
    let checks = match checks {
        Ok(c) => c,
        Err(e) => {
            println!("Error:\n{e}");
            return ExitCode::from(255);
        }
    };
    let worst = checks.iter().map(|c| c.code).max().unwrap_or(Code::Success);
    if json {
        let doc = serde_json::json!({
            "name": "Upgrade Check Results",
            "checks": checks.iter().map(|c| serde_json::json!({
                "check": c.name,
                "result": c.code as u8,
                "details": c.details.map(|d| d.0),
            })).collect::<Vec<_>>(),
        });
        println!("{}", openkeel_core::pyjson::dumps(&doc));
    } else {
        let rows: Vec<Vec<String>> = checks
            .iter()
            .map(|c| {
                vec![format!(
                    "Check: {}\nResult: {}\nDetails: {}",
                    c.name,
                    c.code.label(),
                    c.details.map_or("None", |d| d.1)
                )]
            })
            .collect();
        println!(
            "{}",
            crate::table::render(&["Upgrade Check Results"], &rows, true)
        );
    }
    ExitCode::from(worst as u8)
}
