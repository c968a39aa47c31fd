//! OpenKeel's process front ends: start-up (configuration, logging, signals) shared by the
//! binaries, and the all-in-one server (API + conductor in one process).

pub mod allinone;
pub mod cmd;
pub mod http_server;
pub mod logging;
pub mod metrics;
pub mod services;
pub mod table;
pub mod tls;
pub mod uwsgi;
pub mod wiring;

use std::path::PathBuf;

/// Parse the command line of `T` as program `prog` (`openkeel-api` or its Magnum name
/// `magnum-api`: the same code under both names, so usage and error messages name the program
/// that was run).
pub fn parse_args<T: clap::Parser>(prog: &'static str) -> T {
    let mut cmd = T::command().name(prog).bin_name(prog);
    let matches = cmd.get_matches_mut();
    T::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd).exit())
}

/// oslo.config's command-line options, shared by every binary.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigArgs {
    /// A configuration file (repeatable; later files win). Defaults to oslo.config's search
    /// for `magnum.conf` when neither this nor --config-dir is given.
    #[arg(long = "config-file", value_name = "PATH")]
    pub config_file: Vec<PathBuf>,
    /// A directory whose `*.conf` files are read in sorted order (repeatable).
    #[arg(long = "config-dir", value_name = "DIR")]
    pub config_dir: Vec<PathBuf>,
    /// oslo.log's command-line options (they override the configuration files, as
    /// oslo.config's command line does): `[DEFAULT] debug`.
    #[arg(short = 'd', long = "debug")]
    pub debug: bool,
    /// `[DEFAULT] debug = false`.
    #[arg(long = "nodebug", hide = true)]
    pub nodebug: bool,
    /// `[DEFAULT] log_file`.
    #[arg(long = "log-file", visible_alias = "logfile", value_name = "PATH")]
    pub log_file: Option<String>,
    /// `[DEFAULT] log_dir`.
    #[arg(long = "log-dir", visible_alias = "logdir", value_name = "DIR")]
    pub log_dir: Option<String>,
    /// `[DEFAULT] log_config_append` (a Python logging INI).
    #[arg(
        long = "log-config-append",
        visible_alias = "log-config",
        value_name = "PATH"
    )]
    pub log_config_append: Option<String>,
    /// `[DEFAULT] log_date_format`.
    #[arg(long = "log-date-format", value_name = "FORMAT")]
    pub log_date_format: Option<String>,
    /// `[DEFAULT] use_json`.
    #[arg(long = "use-json")]
    pub use_json: bool,
    /// `[DEFAULT] use_json = false`.
    #[arg(long = "nouse-json", hide = true)]
    pub nouse_json: bool,
    /// `[DEFAULT] use_stderr`.
    #[arg(long = "use-stderr")]
    pub use_stderr: bool,
    /// `[DEFAULT] use_stderr = false`.
    #[arg(long = "nouse-stderr", hide = true)]
    pub nouse_stderr: bool,
}

impl ConfigArgs {
    /// Apply oslo.log's command-line options over the configuration files' values.
    pub fn apply_overrides(&self, config: &mut openkeel_core::config::Config) {
        let flag = |on: bool, off: bool, current: bool| {
            if off {
                false
            } else {
                on || current
            }
        };
        let d = &mut config.default;
        d.debug = flag(self.debug, self.nodebug, d.debug);
        d.use_json = flag(self.use_json, self.nouse_json, d.use_json);
        d.use_stderr = flag(self.use_stderr, self.nouse_stderr, d.use_stderr);
        if let Some(v) = &self.log_file {
            d.log_file = Some(v.clone());
        }
        if let Some(v) = &self.log_dir {
            d.log_dir = Some(v.clone());
        }
        if let Some(v) = &self.log_config_append {
            d.log_config_append = Some(v.clone());
        }
        if let Some(v) = &self.log_date_format {
            d.log_date_format = v.clone();
        }
    }
}

/// [`ConfigArgs`] alone, as a parser (the `uwsgi` entry point's `pyargv`).
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "uwsgi")]
pub struct ConfigArgsCli {
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl ConfigArgs {
    /// Where relative paths named in the configuration are looked up (oslo.config's
    /// `find_file`): the `--config-dir`s, then the directories of the `--config-file`s, last
    /// file first.
    pub fn lookup_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.config_dir.clone();
        for f in self.config_file.iter().rev() {
            if let Some(p) = f.parent() {
                dirs.push(p.to_path_buf());
            }
        }
        dirs
    }
}

impl ConfigArgs {
    /// The configuration sources: the given files and directories, or oslo.config's default
    /// search for `magnum.conf` and `<prog>.conf` (`~/.magnum`, `~/`, `/etc/magnum`, `/etc`)
    /// when none is given.
    pub fn sources(&self, prog: &str) -> openkeel_core::config::ConfigSources {
        if self.config_file.is_empty() && self.config_dir.is_empty() {
            openkeel_core::config::ConfigSources::discover("magnum", Some(prog))
        } else {
            openkeel_core::config::ConfigSources {
                files: self.config_file.clone(),
                dirs: self.config_dir.clone(),
            }
        }
    }
}

/// The worker threads of a service's runtime for its `workers` option (`[api] workers`,
/// `[conductor] workers`: Magnum's process counts): unset or 0 leaves one per CPU, as Magnum's
/// `processutils.get_worker_count()` default; at most 64.
pub fn worker_threads(workers: Option<i64>) -> Option<usize> {
    workers
        .filter(|n| *n > 0)
        .map(|n| usize::try_from(n.min(64)).unwrap_or(64))
}

/// A service's runtime with [`worker_threads`] threads.
pub fn runtime(workers: Option<i64>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.enable_all();
    if let Some(n) = worker_threads(workers) {
        b.worker_threads(n);
    }
    b.build()
}

/// Load the configuration of `prog`, set up logging and the runtime, and run `body` to its
/// end; the exit code says whether it failed (the error is logged and printed).
pub fn run_service<F, Fut>(
    prog: &str,
    args: &ConfigArgs,
    log_format: Option<logging::LogFormat>,
    workers: impl FnOnce(&openkeel_core::config::Config) -> Option<i64>,
    body: F,
) -> std::process::ExitCode
where
    F: FnOnce(services::ServiceOptions) -> Fut,
    Fut: std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>,
{
    let mut config = match openkeel_core::config::Config::load(&args.sources(prog)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    args.apply_overrides(&mut config);
    let _log_guard = match logging::init_config(&config, prog, log_format) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let rt = match runtime(workers(&config)) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{prog}: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let opts = services::ServiceOptions {
        config,
        config_dirs: args.lookup_dirs(),
        bind: None,
    };
    match rt.block_on(body(opts)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "{prog} failed");
            eprintln!("{prog}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `[api] workers` / `[conductor] workers` set the runtime's worker threads; unset, 0 or
    /// negative leave tokio's default (one per CPU), as Magnum falls back to the CPU count.
    #[test]
    fn the_workers_option_sets_the_worker_threads() {
        assert_eq!(worker_threads(None), None);
        assert_eq!(worker_threads(Some(0)), None);
        assert_eq!(worker_threads(Some(-3)), None);
        assert_eq!(worker_threads(Some(1)), Some(1));
        assert_eq!(worker_threads(Some(1000)), Some(64));
        for n in [1, 3] {
            let rt = runtime(Some(n)).unwrap();
            assert_eq!(rt.metrics().num_workers(), n as usize);
        }
    }
}
