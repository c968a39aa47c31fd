//! Logging as oslo.log sets it up from `magnum.conf`, with `tracing`.
//!
//! * `[DEFAULT] debug`: DEBUG instead of INFO; `RUST_LOG` overrides the level filter.
//! * `log_file` / `log_dir`: a file (`log_dir/log_file`; `log_dir/<program>.log` with only
//!   `log_dir`), appended to and reopened when it is moved or deleted (oslo.log's
//!   `WatchedFileHandler`, which logrotate relies on).
//! * `use_stderr`: also to stderr. With neither a file nor `use_stderr`, to stdout (oslo.log's
//!   fallback).
//! * `use_json`: one JSON object per line; otherwise oslo.log's line format
//!   (`<date>.<ms> <pid> <LEVEL> <name> [<request>] <message>`) with `log_date_format`.
//! * `log_config_append`: a Python logging INI (`logging.fileConfig`), as OpenStack-Helm
//!   writes it; when set the options above are ignored, as in oslo.log. See
//!   [`pyconf`] for what is read.
//!
//! ANSI colours only when the destination is a terminal. Nothing logs tokens, private keys
//! or CSR bodies: request spans carry only the request id, method and path.

pub mod pyconf;

use openkeel_core::config::Config;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Log format chosen on the command line (`--log-format`); `None` follows `use_json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum LogFormat {
    /// oslo.log's line format.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Install a simple global subscriber on stderr (the admin commands; idempotent).
pub fn init(debug: bool, format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter(debug)));
    let ansi = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

fn default_filter(debug: bool) -> &'static str {
    if debug {
        "debug,sqlx=info,hyper=info,lapin=info,h2=info,rustls=info,kube_client=info,tower=info"
    } else {
        "info,sqlx=warn,lapin=warn"
    }
}

/// Where a log line goes.
#[derive(Debug, Clone)]
pub enum Destination {
    Stdout,
    Stderr,
    File(Arc<WatchedFile>),
    Null,
}

impl Destination {
    fn is_terminal(&self) -> bool {
        match self {
            Destination::Stdout => std::io::stdout().is_terminal(),
            Destination::Stderr => std::io::stderr().is_terminal(),
            _ => false,
        }
    }

    fn write_line(&self, line: &[u8]) {
        let _ = match self {
            Destination::Stdout => std::io::stdout().lock().write_all(line),
            Destination::Stderr => std::io::stderr().lock().write_all(line),
            Destination::File(f) => f.write_line(line),
            Destination::Null => Ok(()),
        };
    }
}

/// A log file appended to, reopened when the path no longer names the open file (moved or
/// deleted by logrotate), as Python's `WatchedFileHandler`.
#[derive(Debug)]
pub struct WatchedFile {
    path: PathBuf,
    state: Mutex<Option<(std::fs::File, u64, u64)>>,
}

impl WatchedFile {
    pub fn open(path: &Path) -> Result<Self, String> {
        let f = WatchedFile {
            path: path.to_path_buf(),
            state: Mutex::new(None),
        };
        f.reopen()
            .map_err(|e| format!("cannot open log file {}: {e}", path.display()))?;
        Ok(f)
    }

    fn reopen(&self) -> std::io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let meta = file.metadata()?;
        if let Ok(mut state) = self.state.lock() {
            *state = Some((file, meta.dev(), meta.ino()));
        }
        Ok(())
    }

    fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let moved = {
            let state = self
                .state
                .lock()
                .map_err(|_| std::io::Error::other("log file lock poisoned"))?;
            match (&*state, std::fs::metadata(&self.path)) {
                (Some((_, dev, ino)), Ok(m)) => m.dev() != *dev || m.ino() != *ino,
                _ => true,
            }
        };
        if moved {
            self.reopen()?;
        }
        let mut state = self
            .state
            .lock()
            .map_err(|_| std::io::Error::other("log file lock poisoned"))?;
        match &mut *state {
            Some((file, _, _)) => file.write_all(line),
            None => Ok(()),
        }
    }
}

/// How a line is written.
#[derive(Debug, Clone)]
pub enum LineFormat {
    /// oslo.log's `ContextFormatter` (`logging_context_format_string` /
    /// `logging_default_format_string`) with this date format.
    Oslo { date_format: String },
    /// A Python `%`-style format string (`%(asctime)s`, `%(msecs)03d`, `%(process)d`,
    /// `%(levelname)s`, `%(name)s`, `%(message)s`, `%(thread)d`, `%(module)s`,
    /// `%(lineno)d`, `%(filename)s`, `%(pathname)s`).
    Python { format: String, date_format: String },
    /// One JSON object per line (oslo.log's `JSONFormatter`).
    Json,
}

/// Python logging's level numbers.
pub fn python_level(level: &tracing::Level) -> u32 {
    match *level {
        tracing::Level::ERROR => 40,
        tracing::Level::WARN => 30,
        tracing::Level::INFO => 20,
        tracing::Level::DEBUG | tracing::Level::TRACE => 10,
    }
}

fn level_name(level: &tracing::Level) -> &'static str {
    match *level {
        tracing::Level::ERROR => "ERROR",
        tracing::Level::WARN => "WARNING",
        tracing::Level::INFO => "INFO",
        tracing::Level::DEBUG | tracing::Level::TRACE => "DEBUG",
    }
}

/// Renders events as oslo.log / Python logging lines.
struct OsloEvents {
    format: LineFormat,
    ansi: bool,
}

/// Python's strftime for the formats operators use (chrono's `%`-codes are a superset of the
/// common ones); an invalid format falls back to oslo's default.
fn format_date(now: &chrono::DateTime<chrono::Local>, format: &str) -> String {
    let mut out = String::new();
    if write!(out, "{}", now.format(format)).is_err() {
        out.clear();
        let _ = write!(out, "{}", now.format("%Y-%m-%d %H:%M:%S"));
    }
    out
}

impl<S, N> FormatEvent<S, N> for OsloEvents
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let now = chrono::Local::now();
        let mut message = String::new();
        ctx.field_format()
            .format_fields(Writer::new(&mut message), event)?;
        // The request's span fields (request id, method, path), as oslo's
        // `[request_id user project ...]` context.
        let mut context = String::new();
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>() {
                    // Nested spans repeat the request id: each field set once.
                    if !fields.is_empty() && !context.contains(fields.as_str()) {
                        if !context.is_empty() {
                            context.push(' ');
                        }
                        context.push_str(fields);
                    }
                }
            }
        }
        let level = meta.level();
        let levelname = if self.ansi {
            let colour = match *level {
                tracing::Level::ERROR => "31",
                tracing::Level::WARN => "33",
                tracing::Level::INFO => "32",
                _ => "36",
            };
            format!("\x1b[{colour}m{}\x1b[0m", level_name(level))
        } else {
            level_name(level).to_string()
        };
        // Python logging's `%(name)s`: the logger name `log_config_append` files name
        // (`magnum.api.dispatch` for `openkeel_api::dispatch`; see `pyconf::python_name`).
        let name = pyconf::python_name(meta.target());
        match &self.format {
            LineFormat::Oslo { date_format } => {
                writeln!(
                    writer,
                    "{}.{:03} {} {} {} [{}] {}",
                    format_date(&now, date_format),
                    now.timestamp_subsec_millis(),
                    std::process::id(),
                    levelname,
                    name,
                    if context.is_empty() { "-" } else { &context },
                    message
                )
            }
            LineFormat::Python {
                format,
                date_format,
            } => {
                let line = python_format(format, |key, spec| match key {
                    "asctime" => Some(format_date(&now, date_format)),
                    "msecs" => Some(pad(now.timestamp_subsec_millis() as u64, spec)),
                    "process" => Some(pad(u64::from(std::process::id()), spec)),
                    "levelname" => Some(levelname.clone()),
                    "levelno" => Some(python_level(level).to_string()),
                    "name" => Some(name.clone()),
                    "message" => Some(if context.is_empty() {
                        message.clone()
                    } else {
                        format!("[{context}] {message}")
                    }),
                    "module" => Some(meta.module_path().unwrap_or("").to_string()),
                    "filename" | "pathname" => Some(meta.file().unwrap_or("").to_string()),
                    "lineno" => Some(meta.line().unwrap_or(0).to_string()),
                    "thread" | "threadName" => Some(format!("{:?}", std::thread::current().id())),
                    "funcName" => Some(String::new()),
                    _ => None,
                });
                writeln!(writer, "{line}")
            }
            LineFormat::Json => {
                let doc = serde_json::json!({
                    "message": message,
                    "asctime": format_date(&now, "%Y-%m-%d %H:%M:%S"),
                    "name": name,
                    "msg": message,
                    "levelname": level_name(level),
                    "levelno": python_level(level),
                    "pathname": meta.file(),
                    "lineno": meta.line(),
                    "module": meta.module_path(),
                    "process": std::process::id(),
                    "created": now.timestamp_millis() as f64 / 1000.0,
                    "context": context,
                });
                writeln!(writer, "{doc}")
            }
        }
    }
}

fn pad(value: u64, spec: &str) -> String {
    match spec.strip_prefix('0').and_then(|w| w.parse::<usize>().ok()) {
        Some(width) => format!("{value:0width$}"),
        None => value.to_string(),
    }
}

/// Python `%`-formatting of a log format string: `%(key)<spec><conversion>` and `%%`.
fn python_format(format: &str, value: impl Fn(&str, &str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = format;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('%') {
            out.push('%');
            rest = tail;
            continue;
        }
        let parsed = after.strip_prefix('(').and_then(|a| {
            let close = a.find(')')?;
            let key = &a[..close];
            let spec_and_conv = &a[close + 1..];
            let conv = spec_and_conv.find(|c: char| c.is_ascii_alphabetic())?;
            Some((key, &spec_and_conv[..conv], &spec_and_conv[conv + 1..]))
        });
        match parsed {
            Some((key, spec, tail)) => {
                out.push_str(&value(key, spec).unwrap_or_default());
                rest = tail;
            }
            None => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A writer for one destination, for `fmt::layer().with_writer`.
#[derive(Clone)]
struct DestWriter(Destination);

/// Buffers one formatted event and writes it as one line (so lines of concurrent threads do
/// not interleave, and a rotated file is noticed between lines).
struct LineBuffer {
    dest: Destination,
    buf: Vec<u8>,
}

impl Write for LineBuffer {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineBuffer {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            self.dest.write_line(&self.buf);
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for DestWriter {
    type Writer = LineBuffer;
    fn make_writer(&'a self) -> Self::Writer {
        LineBuffer {
            dest: self.0.clone(),
            buf: Vec::with_capacity(256),
        }
    }
}

/// Keeps what logging needs alive for the life of the process.
#[derive(Debug, Default)]
pub struct LogGuard;

type BoxedLayer = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

fn fmt_layer(dest: Destination, format: LineFormat) -> BoxedLayer {
    let ansi = dest.is_terminal() && !matches!(format, LineFormat::Json);
    tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .event_format(OsloEvents { format, ansi })
        .with_writer(DestWriter(dest))
        .boxed()
}

/// The log file of the options: `log_dir/log_file` (an absolute `log_file` wins, as
/// `os.path.join`), `log_file`, or `log_dir/<prog>.log`.
pub fn log_file_path(config: &Config, prog: &str) -> Option<PathBuf> {
    let file = config.default.log_file.as_deref().filter(|f| !f.is_empty());
    let dir = config.default.log_dir.as_deref().filter(|d| !d.is_empty());
    match (file, dir) {
        (Some(f), Some(d)) => Some(Path::new(d).join(f)),
        (Some(f), None) => Some(PathBuf::from(f)),
        (None, Some(d)) => Some(Path::new(d).join(format!("{prog}.log"))),
        (None, None) => None,
    }
}

/// Set up logging from the configuration as oslo.log's `setup(conf, 'magnum')` does, for
/// program `prog`. `format` (the `--log-format` option) overrides `use_json`. A second call
/// in the same process is ignored.
pub fn init_config(
    config: &Config,
    prog: &str,
    format: Option<LogFormat>,
) -> Result<LogGuard, String> {
    let mut warnings = Vec::new();
    let layers: Vec<BoxedLayer> = match config.default.log_config_append.as_deref() {
        Some(path) if !path.is_empty() => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("log_config_append {path}: {e}"))?;
            let conf =
                pyconf::parse(&text).map_err(|e| format!("log_config_append {path}: {e}"))?;
            warnings.extend(conf.warnings.iter().cloned());
            let conf = Arc::new(conf);
            let mut layers = Vec::new();
            for (name, handler) in &conf.handlers {
                let dest = match &handler.target {
                    pyconf::Target::Stdout => Destination::Stdout,
                    pyconf::Target::Stderr => Destination::Stderr,
                    pyconf::Target::Null => Destination::Null,
                    pyconf::Target::File(p) => Destination::File(Arc::new(WatchedFile::open(p)?)),
                };
                let conf = conf.clone();
                let name = name.clone();
                let filter = tracing_subscriber::filter::filter_fn(move |meta| {
                    conf.handler_gets(&name, meta.target(), python_level(meta.level()))
                });
                let layer = fmt_layer(dest, handler.format.clone()).with_filter(filter);
                // RUST_LOG, when set, narrows what the file lets through.
                match EnvFilter::try_from_default_env() {
                    Ok(env) => layers.push(layer.with_filter(env).boxed()),
                    Err(_) => layers.push(layer.boxed()),
                }
            }
            layers
        }
        _ => {
            let json = match format {
                Some(LogFormat::Json) => true,
                Some(LogFormat::Text) => false,
                None => config.default.use_json,
            };
            let line = if json {
                LineFormat::Json
            } else {
                LineFormat::Oslo {
                    date_format: config.default.log_date_format.clone(),
                }
            };
            let mut dests = Vec::new();
            if let Some(path) = log_file_path(config, prog) {
                dests.push(Destination::File(Arc::new(WatchedFile::open(&path)?)));
            }
            if config.default.use_stderr {
                dests.push(Destination::Stderr);
            }
            if dests.is_empty() {
                dests.push(Destination::Stdout);
            }
            let debug = config.default.debug;
            dests
                .into_iter()
                .map(|d| {
                    let filter = EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| EnvFilter::new(default_filter(debug)));
                    fmt_layer(d, line.clone()).with_filter(filter).boxed()
                })
                .collect()
        }
    };
    let _ = tracing_subscriber::registry().with(layers).try_init();
    for w in warnings {
        tracing::warn!("log_config_append: {w}");
    }
    Ok(LogGuard)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn python_format_strings() {
        let f = |k: &str, spec: &str| match k {
            "asctime" => Some("2026-01-01 00:00:00".to_string()),
            "msecs" => Some(pad(7, spec)),
            "message" => Some("hi".to_string()),
            _ => None,
        };
        assert_eq!(
            python_format("%(asctime)s.%(msecs)03d %(unknown)s%(message)s 100%%", f),
            "2026-01-01 00:00:00.007 hi 100%"
        );
    }

    #[test]
    fn log_file_path_as_oslo() {
        let c = Config::from_ini_str("[DEFAULT]\nlog_dir = /var/log/kolla/magnum\nlog_file = /var/log/kolla/magnum/magnum-api.log\n").unwrap();
        assert_eq!(
            log_file_path(&c, "x"),
            Some(PathBuf::from("/var/log/kolla/magnum/magnum-api.log"))
        );
        let c = Config::from_ini_str("[DEFAULT]\nlog_dir = /l\n").unwrap();
        assert_eq!(
            log_file_path(&c, "magnum-conductor"),
            Some(PathBuf::from("/l/magnum-conductor.log"))
        );
        let c = Config::from_ini_str("[DEFAULT]\nlog_dir = /l\nlog_file = a.log\n").unwrap();
        assert_eq!(log_file_path(&c, "x"), Some(PathBuf::from("/l/a.log")));
    }

    #[test]
    fn watched_file_reopens_after_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        let f = WatchedFile::open(&path).unwrap();
        f.write_line(b"one\n").unwrap();
        std::fs::rename(&path, dir.path().join("a.log.1")).unwrap();
        f.write_line(b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.log.1")).unwrap(),
            "one\n"
        );
    }
}
