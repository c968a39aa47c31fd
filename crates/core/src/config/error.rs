//! Errors from reading configuration files and converting option values.

use std::fmt;
use std::path::PathBuf;

/// Where a value was read: the file (or `<string>` for [`super::Config::from_ini_str`]) and
/// the 1-based line of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file the value came from.
    pub path: PathBuf,
    /// The line of the assignment (1-based).
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// Renders ` (file:line)` for an optional location.
fn at(location: &Option<Location>) -> String {
    match location {
        Some(loc) => format!(" ({loc})"),
        None => String::new(),
    }
}

/// Every way loading configuration can fail.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not valid oslo INI (the messages are oslo's iniparser messages).
    #[error("failed to parse {}:{line}: {message}: {text:?}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong (`Unexpected continuation line`, `Empty section name`, ...).
        message: String,
        /// The offending line.
        text: String,
    },

    /// A file given with `--config-file` does not exist.
    #[error("failed to find config file {}", path.display())]
    FileNotFound {
        /// The missing file.
        path: PathBuf,
    },

    /// A directory given with `--config-dir` does not exist.
    #[error("failed to find config directory {}", path.display())]
    DirNotFound {
        /// The missing directory.
        path: PathBuf,
    },

    /// A file or directory could not be read.
    #[error("failed to read {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A value does not convert to the option's type or breaks its choices or bounds.
    #[error(
        "invalid value for option {option} in group [{group}]{}: {reason}",
        at(location)
    )]
    InvalidValue {
        /// The section (`DEFAULT`, `api`, ...).
        group: &'static str,
        /// The option name.
        option: &'static str,
        /// The value as read (after interpolation).
        value: String,
        /// What is wrong (oslo's message: `Unexpected boolean value 'maybe'`, ...).
        reason: String,
        /// Where the value was read.
        location: Option<Location>,
    },

    /// A `$name` / `${group.name}` reference cannot be expanded.
    #[error(
        "cannot interpolate ${reference} in option {option} in group [{group}]{}: {reason}",
        at(location)
    )]
    Interpolation {
        /// The section of the option holding the reference.
        group: &'static str,
        /// The option holding the reference.
        option: &'static str,
        /// The reference as written (`state_path`, `api.port`).
        reference: String,
        /// What is wrong (no such option, no such group, a cycle).
        reason: String,
        /// Where the value holding the reference was read (`None` for a default).
        location: Option<Location>,
    },

    /// The option table gives a field a Rust type its oslo type cannot produce (a bug in
    /// OpenKeel, caught by the unit tests).
    #[error("option {option} in group [{group}]: the table's field type does not match its kind")]
    Table {
        /// The section.
        group: &'static str,
        /// The option.
        option: &'static str,
    },

    /// More than one of the above, in section and option order.
    #[error("{} configuration errors:\n{}", .0.len(), list(.0))]
    Multiple(Vec<ConfigError>),
}

fn list(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl ConfigError {
    /// The single errors, flattening [`ConfigError::Multiple`].
    pub fn errors(&self) -> Vec<&ConfigError> {
        match self {
            ConfigError::Multiple(all) => all.iter().flat_map(ConfigError::errors).collect(),
            other => vec![other],
        }
    }

    /// One error for a non-empty list: the error itself, or [`ConfigError::Multiple`].
    pub(crate) fn combine(mut errors: Vec<ConfigError>) -> Option<ConfigError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(ConfigError::Multiple(errors)),
        }
    }
}
