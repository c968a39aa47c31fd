//! `openkeel-db-manage`: create the Magnum schema, or recognise an existing Magnum database by
//! its Alembic revision.
//!
//! OpenKeel does not replay Magnum's 77 Alembic migrations: it knows the schema at head
//! ([`HEAD`]) only. An empty database gets that schema and `alembic_version` = head; a database
//! Magnum 23.0.0 already migrated to head is used as it is; a database at an older Magnum
//! revision must first be upgraded by Magnum's own `magnum-db-manage upgrade`.

use crate::backend::{Backend, Conn};
use crate::record::q;
use crate::{Database, DbError};

/// Magnum 23.0.0's Alembic head.
pub const HEAD: &str = "b3e1cf4a2d5e";

/// Magnum's 77 Alembic revisions, oldest first (`magnum/db/sqlalchemy/alembic/versions/`).
pub const REVISIONS: [&str; 77] = [
    "2581ebaf0cb2",
    "3bea56f25597",
    "5793cd26898d",
    "3a938526b35d",
    "35cff7c86221",
    "1afee1db6cd0",
    "2d1354bbf76e",
    "29affeaa2bc2",
    "2ace4006498",
    "456126c6c9e9",
    "4ea34a59a64c",
    "e772b2598d9",
    "2d8657c0cdc",
    "4956f03cabad",
    "592131657ca1",
    "3b6c4c42adb4",
    "2b5f24dd95de",
    "59e7664a8ba1",
    "156ceb17fb0a",
    "1c1ff5e56048",
    "53882537ac57",
    "14328d6a57e3",
    "421102d1f2d2",
    "6f21dc998bb",
    "966a99e70ff",
    "6f21dc920bb",
    "5518af8dbc21",
    "4e263f236334",
    "3be65537a94a",
    "1481f5b560dd",
    "1d045384b966",
    "27ad304554e2",
    "5ad410481b88",
    "2ae93c9c6191",
    "33ef79969018",
    "417917e778f5",
    "5977879072a7",
    "40f325033343",
    "adc3b7679ae",
    "57fbdf2327a2",
    "05d3e97de9ee",
    "bb42b7cad130",
    "5d4caa6e0a42",
    "ee92b41b8809",
    "049f81f6f584",
    "e647f5931da8",
    "ef08a5e057bd",
    "d072f58ab240",
    "a1136d335540",
    "085e601a39f6",
    "68ce16dfd341",
    "e0653b2d5271",
    "1f196a3dabae",
    "859fb45df249",
    "b1f612248cab",
    "fcb4efee8f8b",
    "fb03fdef8919",
    "720f640f43d1",
    "bc46ba6cf949",
    "aa0cc27839af",
    "a0e7c8450ab1",
    "52bcaf58fecb",
    "04c625aa95ba",
    "041d9a0f1159",
    "9a1539f1cd2c",
    "cbbc65a86986",
    "87e62e3c7abc",
    "ac92cbae311c",
    "461d798132c7",
    "47380964133d",
    "c04e925e65c2",
    "95096e2334ee",
    "f1d8b0ab8b8d",
    "7da8489d6a68",
    "c0f832afc4fd",
    "d7e6a4d39fe4",
    "b3e1cf4a2d5e",
];

/// The MySQL/MariaDB schema at [`HEAD`] (`migrations/mysql/`).
pub const MYSQL_SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../migrations/mysql/b3e1cf4a2d5e_magnum_schema.sql"
));

/// The SQLite schema at [`HEAD`] (`migrations/sqlite/`).
pub const SQLITE_SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../migrations/sqlite/b3e1cf4a2d5e_magnum_schema.sql"
));

/// The application tables at head (alphabetical, as `SHOW TABLES` lists them).
pub const TABLES: [&str; 7] = [
    "cluster",
    "cluster_template",
    "federation",
    "magnum_service",
    "nodegroup",
    "quotas",
    "x509keypair",
];

/// Tables of older Magnum revisions; their presence also marks a Magnum database.
const OLD_TABLES: [&str; 8] = [
    "bay",
    "baymodel",
    "baylock",
    "container",
    "node",
    "pod",
    "service",
    "replicationcontroller",
];

/// What [`upgrade`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeOutcome {
    /// The database was empty; the schema was created and stamped at [`HEAD`].
    Created,
    /// The database was already at [`HEAD`]; nothing was changed.
    AlreadyAtHead,
}

/// The revisions after `current` up to and including [`HEAD`]; `None` for an unknown revision.
pub fn missing_revisions(current: &str) -> Option<&'static [&'static str]> {
    REVISIONS
        .iter()
        .position(|r| *r == current)
        .map(|i| &REVISIONS[i + 1..])
}

/// Resolve a revision argument of `stamp`: `head`/`heads`, `base`, a full revision id or an
/// unambiguous prefix of one (as Alembic accepts). `Ok(None)` means `base`.
pub fn resolve_revision(rev: &str) -> Result<Option<&'static str>, DbError> {
    match rev {
        "head" | "heads" => return Ok(Some(HEAD)),
        "base" => return Ok(None),
        _ => {}
    }
    if let Some(r) = REVISIONS.iter().find(|r| **r == rev) {
        return Ok(Some(r));
    }
    let matches: Vec<&'static str> = if rev.len() >= 4 {
        REVISIONS
            .iter()
            .copied()
            .filter(|r| r.starts_with(rev))
            .collect()
    } else {
        Vec::new()
    };
    match matches.as_slice() {
        [one] => Ok(Some(one)),
        _ => Err(DbError::InvalidRevision(rev.to_string())),
    }
}

/// The statements of a schema script: comment lines dropped, split after lines ending in `;`.
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("--") {
            continue;
        }
        current.push_str(line);
        current.push('\n');
        if trimmed.ends_with(';') {
            let stmt = current.trim().trim_end_matches(';').trim().to_string();
            if !stmt.is_empty() {
                out.push(stmt);
            }
            current.clear();
        }
    }
    let rest = current.trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

fn schema_for(backend: Backend) -> &'static str {
    match backend {
        Backend::MySql => MYSQL_SCHEMA,
        Backend::Sqlite => SQLITE_SCHEMA,
    }
}

async fn table_names(conn: &mut Conn<'_>) -> Result<Vec<String>, DbError> {
    let sql = match conn.backend() {
        Backend::MySql => {
            "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE()"
        }
        Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table'",
    };
    let rows = conn.fetch_all(sql, &[]).await?;
    let mut names = Vec::with_capacity(rows.len());
    for r in rows {
        if let Some(n) = r.opt_string(0)? {
            names.push(n);
        }
    }
    Ok(names)
}

async fn read_versions(conn: &mut Conn<'_>) -> Result<Vec<String>, DbError> {
    let rows = conn
        .fetch_all(
            &format!("SELECT {} FROM {}", q("version_num"), q("alembic_version")),
            &[],
        )
        .await?;
    let mut out = Vec::new();
    for r in rows {
        if let Some(v) = r.opt_string(0)? {
            out.push(v);
        }
    }
    Ok(out)
}

/// The current revision: `None` when there is no `alembic_version` table or it is empty.
pub async fn version(db: &Database) -> Result<Option<String>, DbError> {
    let mut c = db.acquire().await?;
    let mut conn = c.conn();
    if !table_names(&mut conn)
        .await?
        .iter()
        .any(|t| t == "alembic_version")
    {
        return Ok(None);
    }
    let mut versions = read_versions(&mut conn).await?;
    match versions.len() {
        0 => Ok(None),
        1 => Ok(versions.pop()),
        _ => Err(DbError::SchemaState(format!(
            "alembic_version holds several revisions: {}",
            versions.join(", ")
        ))),
    }
}

/// Check that the database is at [`HEAD`] (for services at start-up): `Ok(())` at head,
/// `SchemaOutdated` / `UnknownRevision` / `SchemaState` otherwise.
pub async fn check_current(db: &Database) -> Result<(), DbError> {
    match version(db).await? {
        Some(v) if v == HEAD => Ok(()),
        Some(v) => Err(outdated_or_unknown(v)),
        None => Err(DbError::SchemaState(
            "the database has no Magnum schema; run `openkeel-db-manage upgrade`".into(),
        )),
    }
}

fn outdated_or_unknown(current: String) -> DbError {
    match missing_revisions(&current) {
        Some(missing) => DbError::SchemaOutdated {
            current,
            head: HEAD,
            missing: missing.to_vec(),
        },
        None => DbError::UnknownRevision(current),
    }
}

/// `upgrade`: create the schema in an empty database, or accept a database already at
/// [`HEAD`]. A database at an older Magnum revision is left untouched and reported with the
/// missing revisions ([`DbError::SchemaOutdated`]); an unknown revision or tables without a
/// revision are errors too.
pub async fn upgrade(db: &Database) -> Result<UpgradeOutcome, DbError> {
    let backend = db.backend();
    let mut tx = db.begin().await?;
    let result: Result<UpgradeOutcome, DbError> = async {
        let mut conn = tx.conn();
        let tables = table_names(&mut conn).await?;
        let has = |t: &str| tables.iter().any(|n| n == t);
        let magnum_tables: Vec<&str> = TABLES
            .iter()
            .chain(OLD_TABLES.iter())
            .copied()
            .filter(|t| has(t))
            .collect();
        let mut skip_version_table = false;
        if has("alembic_version") {
            let mut versions = read_versions(&mut conn).await?;
            match versions.len() {
                1 => {
                    let v = versions.pop().unwrap_or_default();
                    if v == HEAD {
                        return Ok(UpgradeOutcome::AlreadyAtHead);
                    }
                    return Err(outdated_or_unknown(v));
                }
                0 => skip_version_table = true,
                _ => {
                    return Err(DbError::SchemaState(format!(
                        "alembic_version holds several revisions: {}",
                        versions.join(", ")
                    )))
                }
            }
        }
        if !magnum_tables.is_empty() {
            return Err(DbError::SchemaState(format!(
                "the database has Magnum tables ({}) but no Alembic revision; stamp it with \
                 `openkeel-db-manage stamp <revision>` if you know its revision",
                magnum_tables.join(", ")
            )));
        }
        for stmt in statements(schema_for(backend)) {
            if skip_version_table && stmt.starts_with("CREATE TABLE `alembic_version`") {
                continue;
            }
            conn.execute_raw(&stmt).await?;
        }
        Ok(UpgradeOutcome::Created)
    }
    .await;
    // MySQL commits DDL implicitly; SQLite creates the schema atomically here.
    let outcome = tx.finish(result).await?;
    if outcome == UpgradeOutcome::Created {
        tracing::info!(revision = HEAD, "created the Magnum schema");
    }
    Ok(outcome)
}

/// `stamp <rev>`: record `rev` (a known revision, `head`, an unambiguous prefix, or `base`
/// to clear it) in `alembic_version` without touching anything else, creating the table when
/// missing. Returns the revision now recorded.
pub async fn stamp(db: &Database, rev: &str) -> Result<Option<&'static str>, DbError> {
    let target = resolve_revision(rev)?;
    let backend = db.backend();
    let mut tx = db.begin().await?;
    let result: Result<(), DbError> = async {
        let mut conn = tx.conn();
        let tables = table_names(&mut conn).await?;
        if !tables.iter().any(|t| t == "alembic_version") {
            let create = statements(schema_for(backend))
                .into_iter()
                .find(|s| s.starts_with("CREATE TABLE `alembic_version`"))
                .ok_or_else(|| DbError::SchemaState("no alembic_version DDL".into()))?;
            conn.execute_raw(&create).await?;
        }
        conn.execute(&format!("DELETE FROM {}", q("alembic_version")), &[])
            .await?;
        if let Some(t) = target {
            conn.execute(
                &format!(
                    "INSERT INTO {} ({}) VALUES (?)",
                    q("alembic_version"),
                    q("version_num")
                ),
                &[t.into()],
            )
            .await?;
        }
        Ok(())
    }
    .await;
    tx.finish(result).await?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions() {
        assert_eq!(REVISIONS.len(), 77);
        assert_eq!(REVISIONS[76], HEAD);
        let mut sorted = REVISIONS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 77);
        assert_eq!(missing_revisions(HEAD), Some(&[][..]));
        assert_eq!(
            missing_revisions("c0f832afc4fd"),
            Some(&["d7e6a4d39fe4", "b3e1cf4a2d5e"][..])
        );
        assert_eq!(missing_revisions("2581ebaf0cb2").map(<[_]>::len), Some(76));
        assert_eq!(missing_revisions("deadbeef"), None);
    }

    #[test]
    fn resolve() {
        assert_eq!(resolve_revision("head").ok(), Some(Some(HEAD)));
        assert_eq!(resolve_revision("base").ok(), Some(None));
        assert_eq!(
            resolve_revision("d7e6a4d39fe4").ok(),
            Some(Some("d7e6a4d39fe4"))
        );
        assert_eq!(resolve_revision("d7e6").ok(), Some(Some("d7e6a4d39fe4")));
        assert!(resolve_revision("nope").is_err());
        // Ambiguous prefix: 6f21dc998bb / 6f21dc920bb.
        assert!(resolve_revision("6f21dc").is_err());
    }

    #[test]
    fn schema_scripts() {
        for script in [MYSQL_SCHEMA, SQLITE_SCHEMA] {
            let stmts = statements(script);
            assert_eq!(stmts.len(), 9, "8 tables + the version row");
            assert!(stmts[0].starts_with("CREATE TABLE `alembic_version`"));
            assert!(stmts[8].starts_with("INSERT INTO `alembic_version`"));
            assert!(stmts[8].contains(HEAD));
        }
    }
}
