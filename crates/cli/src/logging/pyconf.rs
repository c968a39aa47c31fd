//! The Python logging INI of `log_config_append` (`logging.config.fileConfig`), as
//! OpenStack-Helm's `logging.conf` and operators' own files write it.
//!
//! Read: `[loggers] keys`, `[handlers] keys`, `[formatters] keys`; each `logger_<key>`
//! (`level`, `handlers`, `qualname`, `propagate`), each `handler_<key>` (`class`, `args`,
//! `level`, `formatter`) and each `formatter_<key>` (`format`, `datefmt`, `class`). Handler
//! classes: `StreamHandler` (`sys.stdout` / `sys.stderr`), `NullHandler`, `FileHandler`,
//! `handlers.WatchedFileHandler`, `handlers.RotatingFileHandler`,
//! `handlers.TimedRotatingFileHandler` (a file appended to and reopened after rotation; the
//! rotation itself is left to logrotate); other classes (syslog, fluent, ...) log nothing
//! and are named in a warning. Formatter classes: `oslo_log.formatters.ContextFormatter`
//! (oslo.log's line), `JSONFormatter` / `FluentFormatter` (JSON lines), otherwise the
//! `format` string.
//!
//! Python logger names and OpenKeel's `tracing` targets: OpenKeel's own crates are
//! `magnum.<crate>` (`openkeel_api::dispatch` is `magnum.api.dispatch`), `sqlx` is
//! `sqlalchemy`, `lapin` is `amqp`, `hyper` / `axum` / `h2` / `tower` are
//! `eventlet.wsgi.server`, `kube*` is `kubernetes`, `reqwest` is `urllib3`; any other
//! target is its own name with dots. A record goes to the handlers of its logger and of its
//! ancestors up to the root (while `propagate` is on), if its level is at least the
//! logger's effective level and the handler's level, as in Python.

use super::LineFormat;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
    Null,
    File(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Handler {
    pub target: Target,
    pub format: LineFormat,
    pub level: u32,
}

#[derive(Debug, Clone)]
pub struct Logger {
    pub qualname: String,
    /// `None` = NOTSET (the parent's level applies).
    pub level: Option<u32>,
    pub handlers: Vec<String>,
    pub propagate: bool,
}

#[derive(Debug, Clone)]
pub struct PyLogConfig {
    pub handlers: Vec<(String, Handler)>,
    /// Configured loggers other than the root.
    pub loggers: Vec<Logger>,
    pub root: Logger,
    /// What could not be honoured (logged once logging is up).
    pub warnings: Vec<String>,
}

/// configparser's sections (keys lower-cased, values raw, continuation lines joined).
fn sections(text: &str) -> Result<HashMap<String, HashMap<String, String>>, String> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    let mut last_key: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            if let (Some(s), Some(k)) = (&current, &last_key) {
                if let Some(v) = out.get_mut(s).and_then(|sec| sec.get_mut(k)) {
                    v.push('\n');
                    v.push_str(trimmed);
                    continue;
                }
            }
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            last_key = None;
            continue;
        }
        let Some(section) = &current else {
            return Err(format!("line {}: option outside a section", n + 1));
        };
        let (k, v) = match (trimmed.find('='), trimmed.find(':')) {
            (Some(e), Some(c)) if c < e => trimmed.split_at(c),
            (Some(e), _) => trimmed.split_at(e),
            (None, Some(c)) => trimmed.split_at(c),
            (None, None) => (trimmed, "="),
        };
        let key = k.trim().to_ascii_lowercase();
        let value = v[1..].trim().to_string();
        if let Some(sec) = out.get_mut(section) {
            sec.insert(key.clone(), value);
        }
        last_key = Some(key);
    }
    Ok(out)
}

fn keys(value: Option<&String>) -> Vec<String> {
    value
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// A Python level name or number; NOTSET is `None`.
fn level(value: &str) -> Result<Option<u32>, String> {
    let n = match value.trim().to_ascii_uppercase().as_str() {
        "NOTSET" | "" => return Ok(None),
        "DEBUG" => 10,
        "INFO" => 20,
        "WARNING" | "WARN" => 30,
        "ERROR" => 40,
        "CRITICAL" | "FATAL" => 50,
        other => other
            .parse::<u32>()
            .map_err(|_| format!("unknown level {value:?}"))?,
    };
    Ok(if n == 0 { None } else { Some(n) })
}

/// The first string literal of a Python argument tuple (`('/var/log/x.log', 'a')`).
fn first_string(args: &str) -> Option<String> {
    let start = args.find(['\'', '"'])?;
    let quote = args[start..].chars().next()?;
    let rest = &args[start + 1..];
    let end = rest.find(quote)?;
    Some(rest[..end].to_string())
}

/// Parse a logging INI.
pub fn parse(text: &str) -> Result<PyLogConfig, String> {
    let secs = sections(text)?;
    let get = |s: &str| secs.get(s);
    let mut warnings = Vec::new();
    let mut formatters: HashMap<String, LineFormat> = HashMap::new();
    for key in keys(get("formatters").and_then(|s| s.get("keys"))) {
        let sec = get(&format!("formatter_{key}"))
            .ok_or_else(|| format!("no section [formatter_{key}]"))?;
        let class = sec.get("class").map(String::as_str).unwrap_or("");
        let datefmt = sec.get("datefmt").cloned();
        let f = if class.ends_with("JSONFormatter") || class.ends_with("FluentFormatter") {
            LineFormat::Json
        } else if class.ends_with("ContextFormatter") {
            LineFormat::Oslo {
                date_format: datefmt.unwrap_or_else(|| "%Y-%m-%d %H:%M:%S".into()),
            }
        } else {
            LineFormat::Python {
                format: sec
                    .get("format")
                    .cloned()
                    .unwrap_or_else(|| "%(message)s".into()),
                date_format: datefmt.unwrap_or_else(|| "%Y-%m-%d %H:%M:%S".into()),
            }
        };
        formatters.insert(key, f);
    }
    let mut handlers = Vec::new();
    for key in keys(get("handlers").and_then(|s| s.get("keys"))) {
        let sec =
            get(&format!("handler_{key}")).ok_or_else(|| format!("no section [handler_{key}]"))?;
        let class = sec.get("class").map(String::as_str).unwrap_or("");
        let args = sec.get("args").map(String::as_str).unwrap_or("()");
        let short = class.rsplit('.').next().unwrap_or(class);
        let target = match short {
            "StreamHandler" if args.contains("sys.stdout") => Target::Stdout,
            "StreamHandler" => Target::Stderr,
            "NullHandler" => Target::Null,
            "FileHandler"
            | "WatchedFileHandler"
            | "RotatingFileHandler"
            | "TimedRotatingFileHandler" => match first_string(args) {
                Some(p) => Target::File(PathBuf::from(p)),
                None => return Err(format!("[handler_{key}] args {args}: no file name")),
            },
            _ => {
                warnings.push(format!(
                    "[handler_{key}] class {class} is not supported by OpenKeel; it logs nothing"
                ));
                Target::Null
            }
        };
        let format = match sec.get("formatter").filter(|f| !f.is_empty()) {
            Some(f) => formatters
                .get(f)
                .cloned()
                .ok_or_else(|| format!("[handler_{key}] formatter {f} is not in [formatters]"))?,
            None => LineFormat::Python {
                format: "%(message)s".into(),
                date_format: "%Y-%m-%d %H:%M:%S".into(),
            },
        };
        let level = level(sec.get("level").map(String::as_str).unwrap_or(""))
            .map_err(|e| format!("[handler_{key}] {e}"))?
            .unwrap_or(0);
        handlers.push((
            key,
            Handler {
                target,
                format,
                level,
            },
        ));
    }
    let mut loggers = Vec::new();
    let mut root = None;
    for key in keys(get("loggers").and_then(|s| s.get("keys"))) {
        let sec =
            get(&format!("logger_{key}")).ok_or_else(|| format!("no section [logger_{key}]"))?;
        let lvl = level(sec.get("level").map(String::as_str).unwrap_or(""))
            .map_err(|e| format!("[logger_{key}] {e}"))?;
        let hs = keys(sec.get("handlers"));
        for h in &hs {
            if !handlers.iter().any(|(k, _)| k == h) {
                return Err(format!("[logger_{key}] handler {h} is not in [handlers]"));
            }
        }
        let logger = Logger {
            qualname: sec.get("qualname").cloned().unwrap_or_default(),
            level: lvl,
            handlers: hs,
            propagate: sec
                .get("propagate")
                .map(|p| p.trim() != "0")
                .unwrap_or(true),
        };
        if key == "root" {
            root = Some(Logger {
                // The root's NOTSET means "everything"; its default is WARNING.
                level: if sec.contains_key("level") {
                    lvl.or(Some(0))
                } else {
                    Some(30)
                },
                ..logger
            });
        } else {
            loggers.push(logger);
        }
    }
    let root = root.ok_or("no [logger_root] in [loggers] keys")?;
    Ok(PyLogConfig {
        handlers,
        loggers,
        root,
        warnings,
    })
}

/// The Python logger name of a `tracing` target.
pub fn python_name(target: &str) -> String {
    let mut parts = target.split("::");
    let first = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let base = match first {
        "openkeel" => "magnum.cmd".to_string(),
        f if f.starts_with("openkeel_") => format!("magnum.{}", &f["openkeel_".len()..]),
        "sqlx" | "sqlx_core" | "sqlx_mysql" | "sqlx_sqlite" => "sqlalchemy".to_string(),
        "lapin" | "amq_protocol" => "amqp".to_string(),
        "hyper" | "hyper_util" | "axum" | "h2" | "tower" | "tower_http" => {
            "eventlet.wsgi.server".to_string()
        }
        f if f.starts_with("kube") => "kubernetes".to_string(),
        "reqwest" => "urllib3".to_string(),
        other => other.to_string(),
    };
    if rest.is_empty() || !base.starts_with("magnum") {
        base
    } else {
        format!("{base}.{}", rest.join("."))
    }
}

impl PyLogConfig {
    /// The configured loggers a record of `name` passes through, most specific first, the
    /// root last.
    fn chain(&self, name: &str) -> Vec<&Logger> {
        let mut matching: Vec<&Logger> = self
            .loggers
            .iter()
            .filter(|l| {
                !l.qualname.is_empty()
                    && (name == l.qualname
                        || name
                            .strip_prefix(l.qualname.as_str())
                            .is_some_and(|r| r.starts_with('.')))
            })
            .collect();
        matching.sort_by_key(|l| std::cmp::Reverse(l.qualname.len()));
        matching.push(&self.root);
        matching
    }

    /// Does handler `handler` write a record of `target` at Python level `level`?
    pub fn handler_gets(&self, handler: &str, target: &str, level: u32) -> bool {
        let name = python_name(target);
        let chain = self.chain(&name);
        let effective = chain.iter().find_map(|l| l.level).unwrap_or(0);
        if level < effective {
            return false;
        }
        let Some((_, h)) = self.handlers.iter().find(|(k, _)| k == handler) else {
            return false;
        };
        if level < h.level {
            return false;
        }
        for logger in chain {
            if logger.handlers.iter().any(|k| k == handler) {
                return true;
            }
            if !logger.propagate {
                break;
            }
        }
        false
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// OpenStack-Helm's magnum `logging.conf` as helm-toolkit renders it (sections sorted).
    const HELM: &str = "[formatter_context]\nclass = oslo_log.formatters.ContextFormatter\ndatefmt = %Y-%m-%d %H:%M:%S\n\
[formatter_default]\ndatefmt = %Y-%m-%d %H:%M:%S\nformat = %(message)s\n[formatters]\nkeys = context,default\n\
[handler_null]\nargs = ()\nclass = logging.NullHandler\nformatter = default\n\
[handler_stderr]\nargs = (sys.stderr,)\nclass = StreamHandler\nformatter = context\n\
[handler_stdout]\nargs = (sys.stdout,)\nclass = StreamHandler\nformatter = context\n\
[handlers]\nkeys = stdout,stderr,null\n\
[logger_amqp]\nhandlers = stderr\nlevel = WARNING\nqualname = amqp\n\
[logger_magnum]\nhandlers = stdout\nlevel = INFO\nqualname = magnum\n\
[logger_root]\nhandlers = null\nlevel = WARNING\n[loggers]\nkeys = root,magnum\n";

    #[test]
    fn helm_logging_conf() {
        let c = parse(HELM).unwrap();
        assert_eq!(c.handlers.len(), 3);
        assert_eq!(c.loggers.len(), 1, "logger_amqp is not in [loggers] keys");
        // OpenKeel's own INFO goes to stdout, not DEBUG; nothing reaches stderr.
        assert!(c.handler_gets("stdout", "openkeel_api::dispatch", 20));
        assert!(!c.handler_gets("stdout", "openkeel_api::dispatch", 10));
        assert!(!c.handler_gets("stderr", "openkeel_api::dispatch", 40));
        // Library records go to the root: WARNING and up, to the null handler.
        assert!(!c.handler_gets("stdout", "sqlx::query", 30));
        assert!(c.handler_gets("null", "sqlx::query", 30));
        assert!(!c.handler_gets("null", "sqlx::query", 20));
        assert!(matches!(c.handlers[0].1.format, LineFormat::Oslo { .. }));
    }

    #[test]
    fn file_handlers_and_names() {
        let text = "[loggers]\nkeys=root\n[handlers]\nkeys=f\n[formatters]\nkeys=\n\
                    [logger_root]\nlevel=DEBUG\nhandlers=f\n\
                    [handler_f]\nclass=handlers.WatchedFileHandler\nargs=('/var/log/magnum/magnum.log', 'a')\nlevel=INFO\n";
        let c = parse(text).unwrap();
        assert_eq!(
            c.handlers[0].1.target,
            Target::File(PathBuf::from("/var/log/magnum/magnum.log"))
        );
        assert!(!c.handler_gets("f", "openkeel", 10));
        assert!(c.handler_gets("f", "openkeel", 20));
        assert_eq!(python_name("openkeel_api::dispatch"), "magnum.api.dispatch");
        assert_eq!(python_name("sqlx::query"), "sqlalchemy");
        assert!(parse("[loggers]\nkeys=root\n[logger_root]\nhandlers=nope\n").is_err());
    }
}
