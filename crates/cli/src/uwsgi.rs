//! `uwsgi`: OpenKeel's API started by the uWSGI configurations that kolla-ansible
//! (`uwsgi /etc/magnum/magnum-api-uwsgi.ini`) and OpenStack-Helm
//! (`uwsgi --ini /etc/magnum/magnum-api-uwsgi.ini`) write for magnum-api, unchanged.
//!
//! It reads the `[uwsgi]` section of the ini (and `--key value` options on the command line,
//! as uWSGI does) and applies what has a meaning for OpenKeel's API:
//!
//! * `http`, `http-socket` (repeatable): plain HTTP listeners (`ip:port`, `:port`,
//!   `[v6]:port`, `host:port`); `https` / `https-socket` = `addr,cert,key[,...]`: HTTPS with
//!   rustls;
//! * `processes` (`workers`) × `threads`: the number of runtime worker threads (OpenKeel
//!   serves every request of the process asynchronously; there are no forked workers);
//! * `logto` (opened before the privileges are dropped) / `logto2` (after), with
//!   `logfile-chmod`: uWSGI's own log; stdout and stderr are redirected to it, as uWSGI does;
//! * `uid` / `gid` (names or numbers): the ids the process runs as once its sockets are bound;
//! * `stats` (with `stats-http`): uWSGI's stats server (a JSON document per connection);
//! * a request log on stderr in uWSGI's format (`route-user-agent = <regex> donotlog:`,
//!   `log-x-forwarded-for`, `disable-logging`);
//! * `module` / `wsgi-file` / `wsgi`: must name Magnum's API (`magnum.wsgi.api:application`,
//!   `magnum-api-wsgi`, ...): OpenKeel serves that application only;
//! * `pyargv`: the application's arguments; Magnum's WSGI application parses them as
//!   oslo.config arguments (`--config-file`, `--config-dir`); without them the configuration
//!   is oslo.config's default search for `magnum.conf` (and `uwsgi.conf`, the program's name)
//!   in `~/.magnum`, `~`, `/etc/magnum`, `/etc`, as `magnum.wsgi.api` does;
//! * `add-header = Name: value`: a header on every response (kolla's and OpenStack-Helm's
//!   `Connection: close`);
//! * `chdir`, `env = NAME=VALUE`, `pidfile` / `pidfile2`, `ini` (another file).
//!
//! Options that describe uWSGI's own process model and that OpenKeel's behaviour already
//! matches (`master`, `die-on-term`, `lazy-apps`, `enable-threads`, `plugins`, ...) are
//! accepted silently; any other option is accepted and named in one warning at start-up.

use crate::wiring::ApiListener;
use openkeel_core::config::Config;
use std::collections::BTreeSet;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Options with the same effect in OpenKeel as in uWSGI, or none needed: accepted silently.
const EQUIVALENT: &[&str] = &[
    "master",
    "die-on-term",
    "enable-threads",
    "lazy-apps",
    "lazy",
    "thunder-lock",
    "plugins",
    "plugin",
    "plugins-dir",
    "exit-on-reload",
    "hook-master-start",
    "http-auto-chunked",
    "http-chunked-input",
    "http-raw-body",
    "procname-prefix-spaced",
    "procname-prefix",
    "worker-reload-mercy",
    "vacuum",
    "need-app",
    "stats-http",
    "logfile-chmod",
    "logfile-chown",
    "single-interpreter",
    "py-autoreload",
    "callable",
];

/// One listener of the ini.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenSpec {
    /// The option it came from (`http`, `http-socket`, `https`, ...).
    pub option: String,
    /// The address as written.
    pub address: String,
    /// Certificate and key for HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// What the ini asks for, ready to apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub listeners: Vec<ListenSpec>,
    pub processes: usize,
    pub threads: usize,
    pub logto: Option<PathBuf>,
    pub logto2: Option<PathBuf>,
    pub logfile_chmod: Option<u32>,
    pub uid: Option<String>,
    pub gid: Option<String>,
    pub stats: Option<String>,
    pub stats_http: bool,
    pub app: Option<String>,
    pub pyargv: Vec<String>,
    pub chdir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub pidfile: Option<PathBuf>,
    pub pidfile2: Option<PathBuf>,
    /// `add-header = Name: value`, on every response.
    pub add_headers: Vec<(String, String)>,
    /// `route-user-agent = <regex> donotlog:`: requests from these user agents are not in
    /// the request log (kube-probe's in OpenStack-Helm).
    pub donotlog_user_agents: Vec<String>,
    /// `log-x-forwarded-for`: the request log names `X-Forwarded-For`'s address.
    pub log_x_forwarded_for: bool,
    /// `disable-logging`: no request log.
    pub disable_logging: bool,
    /// `buffer-size`: the largest request head uWSGI reads, bytes → `[openkeel]
    /// api_max_header_size`.
    pub buffer_size: Option<usize>,
    /// `limit-post` (non-zero): the largest request body, bytes → `[openkeel]
    /// api_max_body_size`.
    pub limit_post: Option<usize>,
    /// `socket-timeout`: seconds a read from a client may wait → `[openkeel]
    /// api_header_read_timeout` (the time to receive a request's head, and the longest a
    /// kept-alive connection stays idle).
    pub socket_timeout: Option<usize>,
    /// Options accepted but not applied (named in one warning).
    pub ignored: BTreeSet<String>,
}

impl Plan {
    /// The ini's own limits (`buffer-size`, `limit-post`, `socket-timeout`) in place of the
    /// `[openkeel] api_*` options they correspond to, each kept within that option's bounds:
    /// the ini configures the listener, as it configures uWSGI's.
    pub fn apply_limits(&self, c: &mut openkeel_core::config::OpenkeelSection) {
        let within = |v: usize, lo: i64, hi: i64| i64::try_from(v).unwrap_or(hi).clamp(lo, hi);
        if let Some(v) = self.buffer_size {
            c.api_max_header_size = within(v, 1024, 1_048_576);
        }
        if let Some(v) = self.limit_post {
            c.api_max_body_size = within(v, 1024, 1_073_741_824);
        }
        if let Some(v) = self.socket_timeout {
            c.api_header_read_timeout = within(v, 1, 3600);
        }
    }

    /// The runtime's worker threads: `processes` × `threads`, at least 1, at most 64.
    pub fn worker_threads(&self) -> usize {
        (self.processes.max(1) * self.threads.max(1)).clamp(1, 64)
    }
}

/// The `key = value` pairs of the `section` of a uWSGI ini file, in order (uWSGI's rules:
/// `;` and `#` start comment lines, keys may repeat, a `key` without `=` is `true`).
pub fn parse_ini(text: &str, section: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(name.trim().to_string());
            continue;
        }
        if current.as_deref() != Some(section) {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => out.push((k.trim().to_string(), v.trim().to_string())),
            None => out.push((line.to_string(), "true".to_string())),
        }
    }
    out
}

/// Read an ini file (`path[:section]`, section `uwsgi` by default) and the files its `ini`
/// options name.
fn read_ini(spec: &str, depth: usize, out: &mut Vec<(String, String)>) -> Result<(), String> {
    if depth > 8 {
        return Err(format!("{spec}: too many nested ini files"));
    }
    let (path, section) = match spec.rsplit_once(':') {
        Some((p, s)) if !s.is_empty() && !s.contains('/') => (p, s),
        _ => (spec, "uwsgi"),
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    for (k, v) in parse_ini(&text, section) {
        if k == "ini" {
            read_ini(&v, depth + 1, out)?;
        } else {
            out.push((k, v));
        }
    }
    Ok(())
}

/// The options of a uWSGI command line, in order: `FILE.ini` (a lone argument) and
/// `--ini FILE` read the file; `--key value`, `--key=value` and `--flag` are options.
pub fn options_from_args(args: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if let Some(opt) = arg.strip_prefix("--") {
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => match args.get(i) {
                    Some(next) if !next.starts_with("--") => {
                        i += 1;
                        (opt.to_string(), next.clone())
                    }
                    _ => (opt.to_string(), "true".to_string()),
                },
            };
            if key == "ini" {
                read_ini(&value, 0, &mut out)?;
            } else {
                out.push((key, value));
            }
        } else if arg.ends_with(".ini") || arg.contains(".ini:") {
            read_ini(arg, 0, &mut out)?;
        } else {
            return Err(format!(
                "unsupported argument {arg:?}: give an ini file (uwsgi FILE.ini, uwsgi --ini FILE) or --option value"
            ));
        }
    }
    Ok(out)
}

fn is_true(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "on" | "y" | "t"
    )
}

/// Does the WSGI application named by `module` / `wsgi-file` / `wsgi` mean Magnum's API?
fn is_magnum_app(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    let module = name.split(':').next().unwrap_or(name);
    matches!(
        module,
        "magnum.wsgi.api" | "magnum.api.app" | "magnum.api.wsgi" | "magnum.wsgi"
    ) || base == "magnum-api-wsgi"
        || base == "magnum-api"
        || name.ends_with("magnum/wsgi/api.py")
        || name.ends_with("magnum/api/app.py")
}

/// Turn the options into a plan; errors are options OpenKeel cannot honour safely.
pub fn plan(options: &[(String, String)]) -> Result<Plan, String> {
    let mut plan = Plan {
        processes: 1,
        threads: 1,
        ..Plan::default()
    };
    let number = |k: &str, v: &str| -> Result<usize, String> {
        v.parse::<usize>()
            .map_err(|_| format!("{k} = {v}: not a number"))
    };
    for (key, value) in options {
        let key = key.replace('_', "-");
        match key.as_str() {
            "http" | "http-socket" | "http11-socket" => plan.listeners.push(ListenSpec {
                option: key.clone(),
                address: value.clone(),
                tls: None,
            }),
            "https" | "https-socket" => {
                let mut parts = value.split(',').map(str::trim);
                let address = parts.next().unwrap_or_default().to_string();
                let (Some(cert), Some(key_file)) = (parts.next(), parts.next()) else {
                    return Err(format!("{key} = {value}: expected address,certificate,key"));
                };
                if parts.next().is_some() {
                    plan.ignored.insert(format!("{key} (ciphers / client CA)"));
                }
                plan.listeners.push(ListenSpec {
                    option: key.clone(),
                    address,
                    tls: Some((PathBuf::from(cert), PathBuf::from(key_file))),
                });
            }
            "processes" | "workers" | "p" => plan.processes = number(&key, value)?,
            "threads" => plan.threads = number(&key, value)?,
            "logto" => plan.logto = Some(PathBuf::from(value)),
            "logto2" => plan.logto2 = Some(PathBuf::from(value)),
            "logfile-chmod" => {
                plan.logfile_chmod = Some(
                    u32::from_str_radix(value, 8)
                        .map_err(|_| format!("logfile-chmod = {value}: not an octal mode"))?,
                )
            }
            "uid" => plan.uid = Some(value.clone()),
            "gid" => plan.gid = Some(value.clone()),
            "stats" | "stats-server" => plan.stats = Some(value.clone()),
            "module" | "wsgi-file" | "wsgi" | "file" => {
                if !is_magnum_app(value) {
                    return Err(format!(
                        "{key} = {value}: OpenKeel serves Magnum's API only (magnum.wsgi.api:application)"
                    ));
                }
                plan.app = Some(value.clone());
            }
            "pyargv" => plan.pyargv = value.split_whitespace().map(str::to_string).collect(),
            "chdir" | "chdir2" => plan.chdir = Some(PathBuf::from(value)),
            "env" => match value.split_once('=') {
                Some((k, v)) => plan.env.push((k.to_string(), v.to_string())),
                None => {
                    plan.ignored.insert(format!("env = {value}"));
                }
            },
            "add-header" => match value.split_once(':') {
                Some((n, v)) => plan
                    .add_headers
                    .push((n.trim().to_string(), v.trim().to_string())),
                None => return Err(format!("add-header = {value}: expected Name: value")),
            },
            "route-user-agent" => match value.rsplit_once(char::is_whitespace) {
                Some((re, "donotlog:")) if regex::Regex::new(re.trim()).is_ok() => {
                    plan.donotlog_user_agents.push(re.trim().to_string())
                }
                _ => {
                    plan.ignored.insert(format!("route-user-agent = {value}"));
                }
            },
            "log-x-forwarded-for" => plan.log_x_forwarded_for = is_true(value),
            "disable-logging" => plan.disable_logging = is_true(value),
            "pidfile" => plan.pidfile = Some(PathBuf::from(value)),
            "buffer-size" | "b" => plan.buffer_size = Some(number(&key, value)?),
            "limit-post" => plan.limit_post = Some(number(&key, value)?).filter(|v| *v > 0),
            "socket-timeout" | "z" => {
                plan.socket_timeout = Some(number(&key, value)?).filter(|v| *v > 0)
            }
            "pidfile2" => plan.pidfile2 = Some(PathBuf::from(value)),
            k if EQUIVALENT.contains(&k) => {
                if k == "stats-http" {
                    plan.stats_http = is_true(value);
                }
            }
            other => {
                plan.ignored.insert(other.to_string());
            }
        }
    }
    if plan.listeners.is_empty() {
        return Err(
            "no HTTP listener: set http, https or http-socket (the uwsgi protocol of `socket` is not served)"
                .into(),
        );
    }
    Ok(plan)
}

/// `ip:port`, `:port` (every IPv4 address), `[v6]:port` or `host:port`.
pub fn resolve(address: &str) -> Result<SocketAddr, String> {
    if address.starts_with('/') || address.starts_with('@') || !address.contains(':') {
        return Err(format!(
            "{address}: UNIX and abstract sockets are not supported; give ip:port"
        ));
    }
    let full = match address.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => address.to_string(),
    };
    full.to_socket_addrs()
        .map_err(|e| format!("{address}: {e}"))?
        .next()
        .ok_or_else(|| format!("{address}: no address"))
}

/// A user or group given by name (looked up in `file`, `/etc/passwd` or `/etc/group`) or
/// number; for a user, also its primary group.
fn lookup_id(file: &str, name: &str) -> Result<(u32, Option<u32>), String> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok((n, None));
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    for line in text.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        if fields.first() == Some(&name) && fields.len() >= 3 {
            let id = fields[2]
                .parse::<u32>()
                .map_err(|_| format!("{file}: bad id for {name}"))?;
            let group = fields.get(3).and_then(|g| g.parse::<u32>().ok());
            return Ok((id, group));
        }
    }
    Err(format!("{name}: no such entry in {file}"))
}

/// Drop to `gid` / `uid` (the whole process: called before any thread is started, and
/// threads inherit the ids of the thread that creates them).
fn drop_privileges(uid: Option<&str>, gid: Option<&str>) -> Result<(), String> {
    use rustix::process::{Gid, Uid};
    let user = uid
        .map(|u| lookup_id("/etc/passwd", u).map_err(|e| format!("uid: {e}")))
        .transpose()?;
    let group = match gid {
        Some(g) => Some(
            lookup_id("/etc/group", g)
                .map_err(|e| format!("gid: {e}"))?
                .0,
        ),
        None => user.and_then(|(_, primary)| primary),
    };
    if let Some(g) = group {
        if rustix::process::getgid().as_raw() != g || rustix::process::getegid().as_raw() != g {
            let g = Gid::from_raw(g);
            rustix::thread::set_thread_groups(&[g])
                .map_err(|e| format!("cannot set the groups: {e}"))?;
            rustix::thread::set_thread_res_gid(g, g, g)
                .map_err(|e| format!("cannot set gid {}: {e}", g.as_raw()))?;
        }
    }
    if let Some((u, _)) = user {
        if group.is_none() && rustix::process::geteuid().is_root() && u != 0 {
            // No group to switch to: at least leave root's supplementary groups behind.
            rustix::thread::set_thread_groups(&[])
                .map_err(|e| format!("cannot clear the groups: {e}"))?;
        }
        if rustix::process::getuid().as_raw() != u || rustix::process::geteuid().as_raw() != u {
            let u = Uid::from_raw(u);
            rustix::thread::set_thread_res_uid(u, u, u)
                .map_err(|e| format!("cannot set uid {}: {e}", u.as_raw()))?;
        }
    }
    Ok(())
}

/// Open (append, create) a log file and make it the process's stdout and stderr.
fn redirect_output(path: &Path, chmod: Option<u32>) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if let Some(mode) = chmod {
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot chmod {}: {e}", path.display()))?;
    }
    rustix::stdio::dup2_stdout(&file).map_err(|e| format!("{}: {e}", path.display()))?;
    rustix::stdio::dup2_stderr(&file).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

fn write_pidfile(path: &Path) -> Result<(), String> {
    std::fs::write(path, format!("{}\n", std::process::id()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// uWSGI's stats document (the fields monitoring tools read), with the requests served.
fn stats_document(plan: &Plan, addrs: &[SocketAddr], requests: u64, started: u64) -> String {
    let pid = std::process::id();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let sockets: Vec<serde_json::Value> = addrs
        .iter()
        .zip(&plan.listeners)
        .map(|(a, l)| {
            serde_json::json!({
                "name": a.to_string(), "proto": if l.tls.is_some() { "https" } else { "http" },
                "queue": 0, "max_queue": 0, "shared": 0, "can_offload": 0,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "version": concat!("openkeel-", env!("CARGO_PKG_VERSION")),
        "listen_queue": 0,
        "listen_queue_errors": 0,
        "signal_queue": 0,
        "load": 0,
        "pid": pid,
        "uid": rustix::process::getuid().as_raw(),
        "gid": rustix::process::getgid().as_raw(),
        "cwd": cwd,
        "locks": [],
        "sockets": sockets,
        "workers": [{
            "id": 1, "pid": pid, "accepting": 1, "requests": requests,
            "delta_requests": 0, "exceptions": 0, "harakiri_count": 0, "signals": 0,
            "signal_queue": 0, "status": "idle", "rss": 0, "vsz": 0, "running_time": 0,
            "last_spawn": started, "respawn_count": 1, "tx": 0, "avg_rt": 0,
            "apps": [], "cores": [],
        }],
    });
    doc.to_string()
}

async fn serve_stats(
    listener: tokio::net::TcpListener,
    plan: Arc<Plan>,
    addrs: Vec<SocketAddr>,
    requests: Arc<AtomicU64>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    loop {
        let Ok((mut conn, _)) = listener.accept().await else {
            continue;
        };
        let body = stats_document(&plan, &addrs, requests.load(Ordering::Relaxed), started);
        let http = plan.stats_http;
        tokio::spawn(async move {
            if http {
                // Read the whole request head (bounded: 8 KiB, 5 s), then answer whatever it
                // asked; closing with part of it unread would reset the connection.
                let mut head = Vec::with_capacity(512);
                let read_head = async {
                    let mut buf = [0u8; 1024];
                    while head.len() < 8192 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                };
                let _ = tokio::time::timeout(std::time::Duration::from_secs(5), read_head).await;
                let head = format!(
                    "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
            }
            let _ = conn.write_all(body.as_bytes()).await;
            let _ = conn.shutdown().await;
        });
    }
}

/// uWSGI's request log: one line per request on stderr (the `logto` / `logto2` file), in
/// uWSGI's default format.
#[derive(Debug)]
pub struct AccessLog {
    pub skip_user_agents: Vec<regex::Regex>,
    pub x_forwarded_for: bool,
    pub requests: Arc<AtomicU64>,
}

/// The request-log middleware (`axum::middleware::from_fn_with_state`).
pub async fn access_log(
    axum::extract::State(log): axum::extract::State<Arc<AccessLog>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use std::io::Write as _;
    let started = std::time::Instant::now();
    let user_agent = req
        .headers()
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let skip = log.skip_user_agents.iter().any(|r| r.is_match(&user_agent));
    let forwarded = log
        .x_forwarded_for
        .then(|| {
            req.headers()
                .get("x-forwarded-for")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .map(|v| v.trim().to_string())
        })
        .flatten();
    let peer = req
        .extensions()
        .get::<axum::extract::ConnectInfo<crate::wiring::PeerAddr>>()
        .map(|c| c.0 .0.ip().to_string());
    let addr = forwarded.or(peer).unwrap_or_else(|| "-".to_string());
    let method = req.method().clone();
    // The URI as sent (path and query); never a header, so never a token.
    let uri = req.uri().to_string();
    let version = format!("{:?}", req.version());
    let resp = next.run(req).await;
    if skip {
        return resp;
    }
    let n = log.requests.load(Ordering::Relaxed);
    let size = resp
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("0")
        .to_string();
    let headers = resp.headers().len();
    let line = format!(
        "[pid: {}|app: 0|req: {n}/{n}] {addr} () {{0 vars in 0 bytes}} [{}] {method} {uri} => generated {size} bytes in {} msecs ({version} {}) {headers} headers in 0 bytes (1 switches on core 0)\n",
        std::process::id(),
        chrono::Local::now().format("%a %b %e %H:%M:%S %Y"),
        started.elapsed().as_millis(),
        resp.status().as_u16(),
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    resp
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("uwsgi: {message}");
    ExitCode::FAILURE
}

/// The `uwsgi` program.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: uwsgi FILE.ini | uwsgi --ini FILE[:section] [--option value ...]\n\n\
             OpenKeel's entry point for the uWSGI configurations kolla-ansible and OpenStack-Helm\n\
             write for magnum-api: serves OpenKeel's Magnum API as that configuration says."
        );
        return if args.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    if args.iter().any(|a| a == "--version") {
        println!("openkeel-{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let plan = match options_from_args(&args).and_then(|o| plan(&o)) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    for (k, v) in &plan.env {
        std::env::set_var(k, v);
    }
    if let Some(dir) = &plan.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            return fail(format!("chdir {}: {e}", dir.display()));
        }
    }
    // The application's own arguments, as Magnum's WSGI module parses sys.argv.
    let mut argv = vec!["uwsgi".to_string()];
    argv.extend(plan.pyargv.iter().cloned());
    let app_args = match <crate::ConfigArgsCli as clap::Parser>::try_parse_from(&argv) {
        Ok(a) => a.config,
        Err(e) => return fail(format!("pyargv: {e}")),
    };
    let sources = app_args.sources("uwsgi");
    let mut config = match Config::load(&sources) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    app_args.apply_overrides(&mut config);
    plan.apply_limits(&mut config.openkeel);
    // Under uWSGI the scheme of the links comes from the listener (WSGI's `url_scheme`), not
    // from `[api] enabled_ssl`; the certificate is the ini's, never `[api] ssl_cert_file`.
    config.api.enabled_ssl = plan.listeners.iter().all(|l| l.tls.is_some());
    if let Some(path) = &plan.logto {
        if let Err(e) = redirect_output(path, plan.logfile_chmod) {
            return fail(e);
        }
    }
    if let Some(path) = &plan.pidfile {
        if let Err(e) = write_pidfile(path) {
            return fail(e);
        }
    }
    let mut listeners = Vec::new();
    let mut addrs = Vec::new();
    for spec in &plan.listeners {
        let addr = match resolve(&spec.address) {
            Ok(a) => a,
            Err(e) => return fail(format!("{} = {e}", spec.option)),
        };
        let tcp = match std::net::TcpListener::bind(addr) {
            Ok(l) => l,
            Err(e) => return fail(format!("cannot listen on {addr} ({}): {e}", spec.option)),
        };
        addrs.push(tcp.local_addr().unwrap_or(addr));
        listeners.push((spec.clone(), tcp));
    }
    let stats = match &plan.stats {
        Some(address) => match resolve(address)
            .and_then(|a| std::net::TcpListener::bind(a).map_err(|e| format!("{a}: {e}")))
        {
            Ok(l) => Some(l),
            Err(e) => return fail(format!("stats = {e}")),
        },
        None => None,
    };
    if let Err(e) = drop_privileges(plan.uid.as_deref(), plan.gid.as_deref()) {
        return fail(e);
    }
    if let Some(path) = &plan.logto2 {
        if let Err(e) = redirect_output(path, plan.logfile_chmod) {
            return fail(e);
        }
    }
    if let Some(path) = &plan.pidfile2 {
        if let Err(e) = write_pidfile(path) {
            return fail(e);
        }
    }
    // TLS material is read after the privileges are dropped, as uWSGI's HTTPS router does
    // (kolla installs the key readable by the service user).
    let mut api_listeners = Vec::new();
    for (spec, tcp) in listeners {
        match &spec.tls {
            None => api_listeners.push(ApiListener::Http(tcp)),
            Some((cert, key)) => match crate::tls::server_config(cert, key) {
                Ok(tls) => api_listeners.push(ApiListener::Https(tcp, tls)),
                Err(e) => return fail(format!("{}: {e}", spec.option)),
            },
        }
    }
    let _log_guard = match crate::logging::init_config(&config, "magnum-api", None) {
        Ok(g) => g,
        Err(e) => return fail(e),
    };
    if !plan.ignored.is_empty() {
        tracing::warn!(
            options = %plan.ignored.iter().cloned().collect::<Vec<_>>().join(", "),
            "uwsgi: these options have no effect on OpenKeel's API and are ignored"
        );
    }
    tracing::info!(
        listeners = %addrs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        worker_threads = plan.worker_threads(),
        app = plan.app.as_deref().unwrap_or("magnum.wsgi.api:application"),
        config_files = %sources.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
        "uwsgi: serving OpenKeel's Magnum API"
    );
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.worker_threads())
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    let opts = crate::services::ServiceOptions {
        config,
        config_dirs: app_args.lookup_dirs(),
        bind: None,
    };
    let mut add_headers = Vec::new();
    for (name, value) in &plan.add_headers {
        match (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => add_headers.push((n, v)),
            _ => return fail(format!("add-header = {name}: {value}: not a valid header")),
        }
    }
    let plan = Arc::new(plan);
    let result: Result<(), Box<dyn std::error::Error>> = rt.block_on(async move {
        let requests = Arc::new(AtomicU64::new(0));
        if let Some(stats) = stats {
            stats.set_nonblocking(true)?;
            let stats = tokio::net::TcpListener::from_std(stats)?;
            tokio::spawn(serve_stats(stats, plan.clone(), addrs, requests.clone()));
        }
        let access_log = (!plan.disable_logging).then(|| {
            Arc::new(AccessLog {
                skip_user_agents: plan
                    .donotlog_user_agents
                    .iter()
                    .filter_map(|r| regex::Regex::new(r).ok())
                    .collect(),
                x_forwarded_for: plan.log_x_forwarded_for,
                requests: requests.clone(),
            })
        });
        let extras = crate::wiring::ServeExtras {
            requests: Some(requests.clone()),
            add_headers,
            access_log,
            limits: crate::http_server::HttpLimits::from_config(&opts.config.openkeel),
        };
        let running = crate::services::start_api_on(opts, api_listeners, extras).await?;
        crate::wiring::shutdown_signal().await;
        tracing::info!("shutting down");
        running.stop().await?;
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "uwsgi failed");
            fail(e)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn opts(text: &str) -> Vec<(String, String)> {
        parse_ini(text, "uwsgi")
    }

    #[test]
    fn size_and_time_options_become_the_listener_limits() {
        let p = plan(&opts(
            "[uwsgi]\nhttp = :9511\nbuffer-size = 65535\nsocket-timeout = 30\nlimit-post = 0\n",
        ))
        .unwrap();
        assert_eq!(
            (p.buffer_size, p.socket_timeout, p.limit_post),
            (Some(65535), Some(30), None)
        );
        assert!(p.ignored.is_empty(), "{:?}", p.ignored);
        let mut c = openkeel_core::config::OpenkeelSection {
            api_max_body_size: 1234,
            ..Default::default()
        };
        p.apply_limits(&mut c);
        assert_eq!(
            (
                c.api_max_header_size,
                c.api_header_read_timeout,
                c.api_max_body_size
            ),
            (65535, 30, 1234)
        );
        // Out of the options' bounds: clamped to them.
        let p = plan(&opts(
            "[uwsgi]\nhttp = :9511\nbuffer-size = 10\nlimit-post = 9999999999999\n",
        ))
        .unwrap();
        p.apply_limits(&mut c);
        assert_eq!(
            (c.api_max_header_size, c.api_max_body_size),
            (1024, 1_073_741_824)
        );
        assert!(plan(&opts("[uwsgi]\nhttp = :9511\nbuffer-size = big\n")).is_err());
    }

    #[test]
    fn kolla_ini_with_tls() {
        let ini = "[uwsgi]\nadd-header = Connection: close\nbuffer-size = 65535\ndie-on-term = true\n\
                   https = 10.0.0.5:9511,/etc/magnum/certs/magnum-cert.pem,/etc/magnum/certs/magnum-key.pem\n\
                   logto2 = /var/log/kolla/magnum/magnum-api-uwsgi.log\nlogfile-chmod = 644\nmaster = true\n\
                   module = magnum.wsgi.api:application\nplugins = python3\nprocesses = 5\nuid = magnum\n\
                   static-map = /static=/var/lib/kolla/venv/lib/python3/site-packages/static\n";
        let p = plan(&opts(ini)).unwrap();
        assert_eq!(p.listeners.len(), 1);
        assert_eq!(p.listeners[0].address, "10.0.0.5:9511");
        assert_eq!(
            p.listeners[0].tls,
            Some((
                PathBuf::from("/etc/magnum/certs/magnum-cert.pem"),
                PathBuf::from("/etc/magnum/certs/magnum-key.pem")
            ))
        );
        assert_eq!(p.processes, 5);
        assert_eq!(p.worker_threads(), 5);
        assert_eq!(p.logfile_chmod, Some(0o644));
        assert_eq!(p.uid.as_deref(), Some("magnum"));
        assert_eq!(
            p.ignored.iter().cloned().collect::<Vec<_>>(),
            ["static-map"]
        );
        assert_eq!(
            p.add_headers,
            [("Connection".to_string(), "close".to_string())]
        );
    }

    #[test]
    fn helm_ini_and_command_line() {
        let ini = "[uwsgi]\nhttp-socket = 0.0.0.0:9511\nprocesses = 1\nstats = 0.0.0.0:1717\nstats-http = true\n\
                   wsgi-file = /var/lib/openstack/bin/magnum-api-wsgi\nroute-user-agent = ^kube-probe.* donotlog:\n";
        let p = plan(&opts(ini)).unwrap();
        assert_eq!(p.listeners[0].option, "http-socket");
        assert_eq!(p.donotlog_user_agents, ["^kube-probe.*"]);
        assert!(p.ignored.is_empty(), "{:?}", p.ignored);
        assert!(p.stats_http);
        assert_eq!(p.stats.as_deref(), Some("0.0.0.0:1717"));
        let o = options_from_args(&["--http".into(), ":9511".into(), "--master".into()]).unwrap();
        assert_eq!(
            o,
            [
                ("http".to_string(), ":9511".to_string()),
                ("master".to_string(), "true".to_string())
            ]
        );
    }

    #[test]
    fn refusals() {
        assert!(plan(&opts("[uwsgi]\nsocket = 127.0.0.1:9000\n")).is_err());
        assert!(plan(&opts(
            "[uwsgi]\nhttp = :1\nmodule = keystone.wsgi.api:application\n"
        ))
        .is_err());
        assert!(plan(&opts("[uwsgi]\nhttps = :1,cert-only\n")).is_err());
        assert!(resolve("/run/magnum.sock").is_err());
        assert_eq!(resolve(":9511").unwrap().to_string(), "0.0.0.0:9511");
        assert_eq!(resolve("[::1]:9511").unwrap().to_string(), "[::1]:9511");
        // Only the [uwsgi] section counts.
        assert!(plan(&opts("[other]\nhttp = :1\n")).is_err());
    }
}
