//! `openkeel-db-manage`: Magnum's `magnum-db-manage` for OpenKeel.
//!
//! * `upgrade` — on an empty database create Magnum 23.0.0's schema and record Alembic
//!   revision `b3e1cf4a2d5e`; on a database already at that revision do nothing; on an older
//!   Magnum revision name the missing revisions and stop without touching anything.
//! * `version` — print `Current DB revision is <rev>` (`None` without a revision).
//! * `stamp <rev>` — record a known Magnum revision (or `head` / `base`) without migrating.
//!
//! The database is `[database] connection` of the configuration (`--config-file`,
//! `--config-dir`, or oslo.config's default search for `magnum.conf`), or `--database-url`.

use clap::{Parser, Subcommand};
use openkeel_core::config::{Config, ConfigSource};
use openkeel_db::manage::{self, UpgradeOutcome, HEAD};
use openkeel_db::Database;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "openkeel-db-manage",
    version,
    about = "Create or check the Magnum database schema (Magnum 23.0.0, Alembic head b3e1cf4a2d5e)"
)]
struct Cli {
    #[command(flatten)]
    config: crate::ConfigArgs,
    /// Database URL (SQLAlchemy syntax, e.g. mysql+pymysql://u:p@host/magnum?charset=utf8 or
    /// sqlite:///path); overrides [database] connection.
    #[arg(long, env = "OPENKEEL_DATABASE_URL", value_name = "URL")]
    database_url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create the schema in an empty database, or check that it is at the head revision.
    Upgrade {
        /// Target revision; only the head (b3e1cf4a2d5e, `head`) is supported.
        #[arg(long, default_value = "head")]
        revision: String,
    },
    /// Print the current revision.
    Version,
    /// Record a revision in alembic_version without migrating.
    Stamp {
        /// A Magnum revision id (or unambiguous prefix), `head` or `base`.
        revision: String,
    },
}

pub fn main(prog: &'static str) -> ExitCode {
    let cli: Cli = crate::parse_args(prog);
    let (url, debug) = match &cli.database_url {
        Some(u) => (u.clone(), false),
        None => {
            let sources = ConfigSource::command_line(
                "magnum",
                &cli.config.config_file,
                &cli.config.config_dir,
            );
            match Config::load_sequence(&sources) {
                Ok(mut c) => {
                    cli.config.apply_overrides(&mut c);
                    (c.database.connection.clone(), c.default.debug)
                }
                Err(e) => {
                    eprintln!("{prog}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    crate::logging::init(debug, crate::logging::LogFormat::Text);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{prog}: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(&url, cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{prog}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, command: Command) -> Result<(), String> {
    if let Command::Upgrade { revision } = &command {
        match manage::resolve_revision(revision) {
            Ok(Some(r)) if r == HEAD => {}
            Ok(_) => {
                return Err(format!(
                    "upgrading to {revision} is not supported: OpenKeel knows the schema at {HEAD} only"
                ))
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let db = Database::connect_with(url, 1)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", openkeel_db::redact_url(url)))?;
    let result = match command {
        Command::Upgrade { .. } => manage::upgrade(&db).await.map(|outcome| match outcome {
            UpgradeOutcome::Created => println!("Created the Magnum schema at revision {HEAD}"),
            UpgradeOutcome::AlreadyAtHead => {
                println!("The database is at revision {HEAD} (head); nothing to do")
            }
        }),
        Command::Version => manage::version(&db)
            .await
            .map(|v| println!("Current DB revision is {}", v.as_deref().unwrap_or("None"))),
        Command::Stamp { revision } => manage::stamp(&db, &revision).await.map(|r| {
            println!("Stamped revision {}", r.unwrap_or("base"));
        }),
    };
    db.close().await;
    result.map_err(|e| e.to_string())
}
