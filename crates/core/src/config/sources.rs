//! Which files are read, and in what order: `--config-file`, `--config-dir` and oslo.config's
//! default search (`find_config_files` / `find_config_dirs` in `oslo_config/cfg.py`).

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::ini::{self, ParsedFile};

/// The configuration files and directories to read.
///
/// [`super::Config::load`] reads every file of `files` in order, then every directory of
/// `dirs` in order (each directory's `*.conf` files sorted by name); a later file wins over an
/// earlier one. This is oslo.config's order when every `--config-file` comes before every
/// `--config-dir` on the command line, and its order for the default search. For other
/// interleavings, or to get oslo's defaulting rules from command-line arguments, use
/// [`ConfigSource::command_line`] with [`super::Config::load_sequence`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigSources {
    /// Files, as `--config-file` (repeatable; a missing file is an error).
    pub files: Vec<PathBuf>,
    /// Directories, as `--config-dir` (repeatable; a missing directory is an error).
    pub dirs: Vec<PathBuf>,
}

/// One step of the reading order: a file, or a directory's `*.conf` files in sorted order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// A file (`--config-file`).
    File(PathBuf),
    /// A directory (`--config-dir`).
    Dir(PathBuf),
}

impl ConfigSources {
    /// oslo's default search for `project` (`magnum`): the first of
    /// `~/.magnum/magnum.conf`, `~/magnum.conf`, `/etc/magnum/magnum.conf`,
    /// `/etc/magnum.conf` that exists (then `$SNAP_COMMON/etc/magnum/` and
    /// `$SNAP/etc/magnum/` when set), and the first existing `magnum.conf.d` directory in the
    /// same places (`/etc/magnum/magnum.conf.d` in a packaged install). Either may be absent.
    pub fn discover_default(project: &str) -> ConfigSources {
        Self::discover(project, None)
    }

    /// As [`ConfigSources::discover_default`], also looking for `<prog>.conf` and
    /// `<prog>.conf.d` (oslo searches for both the project's and the program's name, e.g.
    /// `magnum.conf` and `magnum-conductor.conf`).
    pub fn discover(project: &str, prog: Option<&str>) -> ConfigSources {
        discover_in(&search_dirs(project), project, prog)
    }

    /// The reading order: the files, then the directories.
    pub fn sequence(&self) -> Vec<ConfigSource> {
        self.files
            .iter()
            .cloned()
            .map(ConfigSource::File)
            .chain(self.dirs.iter().cloned().map(ConfigSource::Dir))
            .collect()
    }

    /// oslo's `ConfigOpts.find_file`: the first `name` found in the directories given, then
    /// beside the files (last file first), then in the default search directories.
    pub fn find_file(&self, project: &str, name: &str) -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.dirs.iter().map(|d| expand_user(d)).collect();
        for file in self.files.iter().rev() {
            if let Some(parent) = expand_user(file).parent() {
                dirs.push(parent.to_path_buf());
            }
        }
        dirs.extend(search_dirs(project));
        dirs.into_iter().map(|d| d.join(name)).find(|p| p.exists())
    }
}

impl ConfigSource {
    /// The reading order oslo.config uses for a command line whose `--config-file` arguments
    /// (`files`) all come before its `--config-dir` arguments (`dirs`):
    ///
    /// * without `--config-file`, the default files are read first;
    /// * without `--config-dir`, the default directories are read — before the command-line
    ///   files, since oslo reads the defaults before it processes the arguments;
    /// * then the command-line files and directories, in order.
    pub fn command_line(project: &str, files: &[PathBuf], dirs: &[PathBuf]) -> Vec<ConfigSource> {
        let defaults = ConfigSources::discover_default(project);
        Self::command_line_with(&defaults, files, dirs)
    }

    fn command_line_with(
        defaults: &ConfigSources,
        files: &[PathBuf],
        dirs: &[PathBuf],
    ) -> Vec<ConfigSource> {
        let mut order = Vec::new();
        if files.is_empty() {
            order.extend(defaults.files.iter().cloned().map(ConfigSource::File));
        }
        if dirs.is_empty() {
            order.extend(defaults.dirs.iter().cloned().map(ConfigSource::Dir));
        }
        order.extend(files.iter().cloned().map(ConfigSource::File));
        order.extend(dirs.iter().cloned().map(ConfigSource::Dir));
        order
    }
}

/// oslo's `_get_config_dirs(project)`.
fn search_dirs(project: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        dirs.push(home.join(format!(".{project}")));
        dirs.push(home);
    }
    dirs.push(Path::new("/etc").join(project));
    dirs.push(PathBuf::from("/etc"));
    for var in ["SNAP_COMMON", "SNAP"] {
        if let Some(base) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(PathBuf::from(base).join("etc").join(project));
        }
    }
    dirs
}

/// The first `<name><extension>` that exists in `dirs`, for the project then the program.
fn first_found(dirs: &[PathBuf], names: &[&str], extension: &str, want_dir: bool) -> Vec<PathBuf> {
    names
        .iter()
        .filter_map(|name| {
            dirs.iter()
                .map(|d| d.join(format!("{name}{extension}")))
                .find(|p| if want_dir { p.is_dir() } else { p.exists() })
        })
        .collect()
}

fn discover_in(dirs: &[PathBuf], project: &str, prog: Option<&str>) -> ConfigSources {
    let mut names = vec![project];
    if let Some(prog) = prog.filter(|p| !p.is_empty() && *p != project) {
        names.push(prog);
    }
    ConfigSources {
        files: first_found(dirs, &names, ".conf", false),
        dirs: first_found(dirs, &names, ".conf.d", true),
    }
}

/// `~` and `~/...` expanded with `$HOME`, as Python's `os.path.expanduser`.
fn expand_user(path: &Path) -> PathBuf {
    let Some(text) = path.to_str() else {
        return path.to_path_buf();
    };
    let rest = if text == "~" {
        Some("")
    } else {
        text.strip_prefix("~/")
    };
    match (rest, std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

/// The `*.conf` files of a directory (not hidden ones, as `glob` skips them), sorted.
fn dir_files(dir: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let io = |source| ConfigError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".conf") && !name.starts_with('.') {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Reads and parses every source, in order. Missing files are all reported together, as
/// oslo does; a missing directory or a syntax error stops at once.
pub(crate) fn read_all(sources: &[ConfigSource]) -> Result<Vec<ParsedFile>, ConfigError> {
    let mut layers = Vec::new();
    let mut missing = Vec::new();
    let mut read = |path: &Path, layers: &mut Vec<ParsedFile>| -> Result<(), ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                layers.push(ini::parse(path, &text)?);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(ConfigError::FileNotFound {
                    path: path.to_path_buf(),
                });
                Ok(())
            }
            Err(source) => Err(ConfigError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    };
    for source in sources {
        match source {
            ConfigSource::File(file) => read(&expand_user(file), &mut layers)?,
            ConfigSource::Dir(dir) => {
                let dir = expand_user(dir);
                if !dir.exists() {
                    return Err(ConfigError::DirNotFound { path: dir });
                }
                for file in dir_files(&dir)? {
                    read(&file, &mut layers)?;
                }
            }
        }
    }
    match ConfigError::combine(missing) {
        Some(err) => Err(err),
        None => Ok(layers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn discovery_takes_the_first_file_and_dir_found_in_search_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = ["home/.magnum", "home", "etc/magnum", "etc"]
            .iter()
            .map(|d| tmp.path().join(d))
            .collect();
        for d in &dirs {
            fs::create_dir_all(d).unwrap();
        }
        assert_eq!(discover_in(&dirs, "magnum", None), ConfigSources::default());

        fs::write(dirs[3].join("magnum.conf"), "").unwrap();
        fs::write(dirs[2].join("magnum.conf"), "").unwrap();
        fs::create_dir(dirs[2].join("magnum.conf.d")).unwrap();
        let found = discover_in(&dirs, "magnum", None);
        assert_eq!(found.files, vec![dirs[2].join("magnum.conf")]);
        assert_eq!(found.dirs, vec![dirs[2].join("magnum.conf.d")]);

        fs::write(dirs[1].join("magnum.conf"), "").unwrap();
        fs::write(dirs[3].join("magnum-conductor.conf"), "").unwrap();
        let found = discover_in(&dirs, "magnum", Some("magnum-conductor"));
        assert_eq!(
            found.files,
            vec![
                dirs[1].join("magnum.conf"),
                dirs[3].join("magnum-conductor.conf")
            ]
        );
    }

    #[test]
    fn default_search_dirs_follow_oslo() {
        let dirs = search_dirs("magnum");
        let tail: Vec<&Path> = dirs
            .iter()
            .map(PathBuf::as_path)
            .filter(|p| p.starts_with("/etc"))
            .collect();
        assert_eq!(tail[..2], [Path::new("/etc/magnum"), Path::new("/etc")]);
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            assert_eq!(dirs[0], PathBuf::from(&home).join(".magnum"));
            assert_eq!(dirs[1], PathBuf::from(&home));
        }
    }

    #[test]
    fn command_line_defaults_follow_oslo() {
        let defaults = ConfigSources {
            files: vec!["/etc/magnum/magnum.conf".into()],
            dirs: vec!["/etc/magnum/magnum.conf.d".into()],
        };
        let f = |p: &str| ConfigSource::File(p.into());
        let d = |p: &str| ConfigSource::Dir(p.into());
        assert_eq!(
            ConfigSource::command_line_with(&defaults, &[], &[]),
            [f("/etc/magnum/magnum.conf"), d("/etc/magnum/magnum.conf.d")]
        );
        // An explicit file replaces the default files; the default directory is still read,
        // and before the explicit file.
        assert_eq!(
            ConfigSource::command_line_with(&defaults, &["a.conf".into()], &[]),
            [d("/etc/magnum/magnum.conf.d"), f("a.conf")]
        );
        assert_eq!(
            ConfigSource::command_line_with(&defaults, &[], &["x.d".into()]),
            [f("/etc/magnum/magnum.conf"), d("x.d")]
        );
        assert_eq!(
            ConfigSource::command_line_with(
                &defaults,
                &["a.conf".into(), "b.conf".into()],
                &["x.d".into()]
            ),
            [f("a.conf"), f("b.conf"), d("x.d")]
        );
    }

    #[test]
    fn directories_read_sorted_conf_files_only() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "20-b.conf",
            "10-a.conf",
            "30-c.conf.disabled",
            ".hidden.conf",
            "README",
        ] {
            fs::write(tmp.path().join(name), "[DEFAULT]\n").unwrap();
        }
        let files = dir_files(tmp.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["10-a.conf", "20-b.conf"]);
    }

    #[test]
    fn missing_files_are_reported_together_and_missing_dirs_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a.conf");
        let b = tmp.path().join("b.conf");
        let err =
            read_all(&[ConfigSource::File(a.clone()), ConfigSource::File(b.clone())]).unwrap_err();
        let paths: Vec<PathBuf> = err
            .errors()
            .into_iter()
            .map(|e| match e {
                ConfigError::FileNotFound { path } => path.clone(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(paths, [a, b]);
        let err = read_all(&[ConfigSource::Dir(tmp.path().join("nope"))]).unwrap_err();
        assert!(matches!(err, ConfigError::DirNotFound { .. }), "{err:?}");
    }

    #[test]
    fn find_file_looks_in_dirs_then_beside_files() {
        let tmp = tempfile::tempdir().unwrap();
        let etc = tmp.path().join("etc");
        let dir = tmp.path().join("conf.d");
        fs::create_dir_all(&etc).unwrap();
        fs::create_dir_all(&dir).unwrap();
        fs::write(etc.join("policy.yaml"), "").unwrap();
        let sources = ConfigSources {
            files: vec![etc.join("magnum.conf")],
            dirs: vec![dir.clone()],
        };
        assert_eq!(
            sources.find_file("openkeel-test-none", "policy.yaml"),
            Some(etc.join("policy.yaml"))
        );
        fs::write(dir.join("policy.yaml"), "").unwrap();
        assert_eq!(
            sources.find_file("openkeel-test-none", "policy.yaml"),
            Some(dir.join("policy.yaml"))
        );
        assert_eq!(sources.find_file("openkeel-test-none", "absent.yaml"), None);
    }
}
