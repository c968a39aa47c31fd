//! `[database] connection` URLs: SQLAlchemy's syntax (what `magnum.conf` holds) → sqlx's.

use crate::DbError;

/// The URL of an in-memory SQLite database in sqlx syntax.
pub const SQLITE_MEMORY: &str = "sqlite::memory:";

/// The components of a SQLAlchemy URL, parsed as `sqlalchemy.engine.url._parse_url` does.
#[derive(Debug, Default, PartialEq)]
struct SaUrl {
    scheme: String,
    username: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<String>,
    database: Option<String>,
    query: Vec<(String, String)>,
}

fn parse_sqlalchemy(url: &str) -> Result<SaUrl, DbError> {
    let bad = || DbError::InvalidUrl(crate::url::redact(url));
    let (scheme, mut rest) = url.split_once("://").ok_or_else(bad)?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '+')
    {
        return Err(bad());
    }
    let mut out = SaUrl {
        scheme: scheme.to_ascii_lowercase(),
        ..SaUrl::default()
    };
    // (?:(?P<username>[^:/]*)(?::(?P<password>[^@]*))?@)?
    let user_end = rest.find([':', '/']).unwrap_or(rest.len());
    let with_password = rest[user_end..]
        .strip_prefix(':')
        .and_then(|after_colon| after_colon.find('@').map(|at| (after_colon, at)));
    if let Some((after_colon, at)) = with_password {
        out.username = Some(unquote(&rest[..user_end]));
        out.password = Some(unquote(&after_colon[..at]));
        rest = &after_colon[at + 1..];
    } else if let Some(at) = rest[..user_end].rfind('@') {
        // `user@host`: the regex backtracks to the last '@' before any ':' or '/'.
        out.username = Some(unquote(&rest[..at]));
        rest = &rest[at + 1..];
    }
    // host: \[ipv6\] or [^/:\?]+ ; then (?::(?P<port>[^/\?]*))?
    if let Some(v6) = rest.strip_prefix('[') {
        let close = v6.find(']').ok_or_else(bad)?;
        out.host = Some(format!("[{}]", &v6[..close]));
        rest = &v6[close + 1..];
    } else {
        let end = rest.find(['/', ':', '?']).unwrap_or(rest.len());
        if end > 0 {
            out.host = Some(unquote(&rest[..end]));
        }
        rest = &rest[end..];
    }
    if let Some(p) = rest.strip_prefix(':') {
        let end = p.find(['/', '?']).unwrap_or(p.len());
        out.port = Some(p[..end].to_string());
        rest = &p[end..];
    }
    // (?:/(?P<database>[^\?]*))?(?:\?(?P<query>.*))?
    if let Some(d) = rest.strip_prefix('/') {
        let end = d.find('?').unwrap_or(d.len());
        out.database = Some(d[..end].to_string());
        rest = &d[end..];
    }
    if let Some(q) = rest.strip_prefix('?') {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            out.query.push((unquote_plus(k), unquote_plus(v)));
        }
    } else if !rest.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// Convert a SQLAlchemy database URL, as `[database] connection` holds it, to an sqlx URL.
///
/// * `mysql://`, `mysql+pymysql://`, `mysql+mysqldb://`, `mariadb+…://` → `mysql://…` with
///   `charset=utf8` added when absent (as oslo.db does); `ssl_ca`, `ssl_cert`, `ssl_key`,
///   `unix_socket` become sqlx's `ssl-ca`, `ssl-cert`, `ssl-key`, `socket`; other driver
///   options are dropped.
/// * `sqlite://` and `sqlite:///:memory:` → in-memory; `sqlite:///relative.db`,
///   `sqlite:////absolute.db` → that file, created when missing.
/// * URLs already in sqlx syntax (`sqlite::memory:`, `sqlite:file.db`) are returned unchanged.
pub fn sqlx_url(sqlalchemy_url: &str) -> Result<String, DbError> {
    let url = sqlalchemy_url.trim();
    if url == SQLITE_MEMORY {
        return Ok(url.to_string());
    }
    if let Some(rest) = url.strip_prefix("sqlite:") {
        if !rest.starts_with("//") {
            return Ok(url.to_string());
        }
    }
    let sa = parse_sqlalchemy(url)?;
    let (dialect, _driver) = sa.scheme.split_once('+').unwrap_or((&sa.scheme, ""));
    match dialect {
        "mysql" | "mariadb" => {
            let mut out = String::from("mysql://");
            if let Some(u) = &sa.username {
                out.push_str(&quote(u));
                if let Some(p) = &sa.password {
                    out.push(':');
                    out.push_str(&quote(p));
                }
                out.push('@');
            }
            out.push_str(sa.host.as_deref().unwrap_or("localhost"));
            if let Some(p) = sa.port.as_deref().filter(|p| !p.is_empty()) {
                if !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DbError::InvalidUrl(redact(url)));
                }
                out.push(':');
                out.push_str(p);
            }
            if let Some(db) = sa.database.as_deref().filter(|d| !d.is_empty()) {
                out.push('/');
                out.push_str(&quote(&unquote(db)));
            }
            let mut params: Vec<(&str, &str)> = Vec::new();
            let mut has_charset = false;
            for (k, v) in &sa.query {
                let key = match k.as_str() {
                    "charset" => {
                        has_charset = true;
                        "charset"
                    }
                    "ssl_ca" => "ssl-ca",
                    "ssl_cert" => "ssl-cert",
                    "ssl_key" => "ssl-key",
                    "unix_socket" => "socket",
                    _ => continue,
                };
                params.push((key, v));
            }
            if !has_charset {
                params.push(("charset", "utf8"));
            }
            for (i, (k, v)) in params.iter().enumerate() {
                out.push(if i == 0 { '?' } else { '&' });
                out.push_str(k);
                out.push('=');
                out.push_str(&quote(v));
            }
            Ok(out)
        }
        "sqlite" => match sa.database.as_deref() {
            None | Some("") | Some(":memory:") => Ok(SQLITE_MEMORY.to_string()),
            Some(path) => Ok(format!("sqlite://{}?mode=rwc", quote_path(path))),
        },
        _ => Err(DbError::InvalidUrl(format!(
            "unsupported database dialect {dialect:?} in {}",
            redact(url)
        ))),
    }
}

/// The URL with its password replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let user_end = rest.find([':', '/']).unwrap_or(rest.len());
        if let Some(after_colon) = rest[user_end..].strip_prefix(':') {
            if let Some(at) = after_colon.find('@') {
                return format!(
                    "{scheme}://{}:***@{}",
                    &rest[..user_end],
                    &after_colon[at + 1..]
                );
            }
        }
    }
    url.to_string()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn unquote_bytes(s: &str, plus: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn unquote(s: &str) -> String {
    unquote_bytes(s, false)
}

fn unquote_plus(s: &str) -> String {
    unquote_bytes(s, true)
}

/// Percent-encode everything but RFC 3986 unreserved characters.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encode what sqlx's SQLite URL parsing would misread in a file path.
fn quote_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(u: &str) -> String {
        sqlx_url(u).unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn mysql_urls() {
        assert_eq!(
            conv("mysql+pymysql://magnum:secret@db.example:3306/magnum?charset=utf8"),
            "mysql://magnum:secret@db.example:3306/magnum?charset=utf8"
        );
        assert_eq!(
            conv("mysql://magnum:secret@10.0.0.5/magnum"),
            "mysql://magnum:secret@10.0.0.5/magnum?charset=utf8"
        );
        assert_eq!(
            conv("mysql+pymysql://u:p%40ss/w#rd@h/db?charset=utf8mb4&plugin=x&ssl_ca=/etc/ca.pem"),
            "mysql://u:p%40ss%2Fw%23rd@h/db?charset=utf8mb4&ssl-ca=%2Fetc%2Fca.pem"
        );
        assert_eq!(
            conv("mysql+pymysql://root@/magnum?unix_socket=/run/mysqld/mysqld.sock"),
            "mysql://root@localhost/magnum?socket=%2Frun%2Fmysqld%2Fmysqld.sock&charset=utf8"
        );
        assert_eq!(
            conv("mariadb+pymysql://u:p@[::1]:3307/m"),
            "mysql://u:p@[::1]:3307/m?charset=utf8"
        );
        assert_eq!(
            conv("mysql://u@h:3306/db"),
            "mysql://u@h:3306/db?charset=utf8"
        );
        assert!(sqlx_url("postgresql://u:p@h/db").is_err());
        assert!(sqlx_url("not a url").is_err());
    }

    #[test]
    fn sqlite_urls() {
        assert_eq!(conv("sqlite://"), SQLITE_MEMORY);
        assert_eq!(conv("sqlite:///:memory:"), SQLITE_MEMORY);
        assert_eq!(conv("sqlite::memory:"), SQLITE_MEMORY);
        assert_eq!(
            conv("sqlite:///magnum.sqlite"),
            "sqlite://magnum.sqlite?mode=rwc"
        );
        assert_eq!(
            conv("sqlite:////var/lib/magnum/magnum.sqlite"),
            "sqlite:///var/lib/magnum/magnum.sqlite?mode=rwc"
        );
        assert_eq!(conv("sqlite:data.db"), "sqlite:data.db");
    }

    #[test]
    fn redaction() {
        assert_eq!(
            redact("mysql+pymysql://magnum:secret@h/db"),
            "mysql+pymysql://magnum:***@h/db"
        );
        assert_eq!(redact("sqlite://"), "sqlite://");
    }
}
