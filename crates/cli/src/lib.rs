//! OpenKeel's process front ends: start-up (configuration, logging, signals) shared by the
//! binaries, and the all-in-one server (API + conductor in one process).

pub mod allinone;
pub mod logging;
pub mod table;

use std::path::PathBuf;

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
