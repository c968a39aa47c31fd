//! Reads of a SQLite file on the caller's own thread.
//!
//! sqlx runs each SQLite connection on a worker thread of its own: every statement, every row
//! and every checkout is a hand-off between that thread and the task that asked, and every
//! value of every row is copied out of SQLite before it crosses over. For the reads that
//! serve the API's shows and lists that was most of their CPU (docs/performance.md, "SQLite
//! reads on the caller's thread"). The connections here are opened on the same file by the
//! same SQLite library (one `libsqlite3-sys` for both), each used by one task at a time and
//! stepped where that task runs; a row's values are read where SQLite keeps them.
//!
//! Only reads go here: the connections are `query_only`, and writes stay on sqlx's pool. In
//! WAL mode a reader never waits for a writer, and it sees every transaction committed
//! before its statement (or its read transaction) began, as a pooled sqlx connection would.
//! A statement blocks the thread it runs on while SQLite works, as any CPU-bound step of a
//! request does (a show's statement takes microseconds, a page of 1,000 clusters a few
//! milliseconds); SQLite's rare `SQLITE_BUSY` for a WAL reader (another connection
//! recovering the WAL index) is waited out for at most the busy timeout, 30 s, as sqlx's
//! connections wait.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use crate::backend::Val;
use crate::DbError;

/// Idle connections kept for reuse; more may be open at once (one per concurrent read), and
/// those beyond this are closed when they are given back.
const IDLE_KEPT: usize = 4;

/// Prepared statements kept per connection (rusqlite's cache): the show, the list's few and
/// room for the others.
const STATEMENTS_KEPT: usize = 32;

/// The read connections of one SQLite file.
#[derive(Debug)]
pub(crate) struct Readers {
    path: std::path::PathBuf,
    busy_timeout: Duration,
    cache_size_kib: u32,
    /// The idle connections; `None` once closed ([`Readers::close`]).
    idle: Mutex<Option<Vec<Connection>>>,
}

impl Readers {
    pub(crate) fn new(
        path: std::path::PathBuf,
        busy_timeout: Duration,
        cache_size_kib: u32,
    ) -> Self {
        Readers {
            path,
            busy_timeout,
            cache_size_kib,
            idle: Mutex::new(Some(Vec::new())),
        }
    }

    /// A connection for one task: an idle one, or a new one; sqlx's `PoolClosed` once the
    /// database is closed.
    pub(crate) fn get(self: &Arc<Self>) -> Result<Reader, DbError> {
        let idle = match self.idle.lock() {
            Ok(mut idle) => match idle.as_mut() {
                Some(v) => v.pop(),
                None => return Err(DbError::Sqlx(sqlx::Error::PoolClosed)),
            },
            Err(_) => None,
        };
        let conn = match idle {
            Some(c) => c,
            None => self.open()?,
        };
        Ok(Reader {
            conn: Some(conn),
            readers: self.clone(),
        })
    }

    fn open(&self) -> Result<Connection, DbError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(sqlite_error)?;
        conn.busy_timeout(self.busy_timeout).map_err(sqlite_error)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        conn.execute_batch(&format!(
            "PRAGMA query_only = ON; PRAGMA cache_size = -{}",
            self.cache_size_kib
        ))
        .map_err(sqlite_error)?;
        Ok(conn)
    }

    fn give_back(&self, conn: Connection) {
        if let Ok(mut idle) = self.idle.lock() {
            if let Some(v) = idle.as_mut().filter(|v| v.len() < IDLE_KEPT) {
                v.push(conn);
            }
        }
    }

    /// Close the idle connections and refuse new checkouts (those checked out are closed when
    /// they are given back).
    pub(crate) fn close(&self) {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.take());
        drop(idle);
    }
}

/// A read connection checked out by one task; back to the idle ones when dropped (a read
/// transaction left open is rolled back first).
pub(crate) struct Reader {
    conn: Option<Connection>,
    readers: Arc<Readers>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").finish_non_exhaustive()
    }
}

impl Reader {
    pub(crate) fn conn(&mut self) -> Result<&mut Connection, DbError> {
        self.conn
            .as_mut()
            .ok_or_else(|| DbError::SchemaState("read connection already given back".into()))
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if !conn.is_autocommit() && conn.execute_batch("ROLLBACK").is_err() {
                return; // closed, not reused
            }
            self.readers.give_back(conn);
        }
    }
}

/// The values of one row, borrowed from SQLite while the statement stands on it, and the
/// statement's column names (to find a column by name: the decoders ask for the columns in
/// the order the statement lists them, so the search starts after the last one found).
#[derive(Debug)]
pub(crate) struct LiteRow<'r> {
    names: &'r ColumnNames,
    values: Vec<ValueRef<'r>>,
    next: std::cell::Cell<usize>,
}

/// A statement's column names in one buffer: two allocations per execution, not one per
/// column (a show's statement has about a hundred columns). Name `i` is
/// `text[bounds[i]..bounds[i + 1]]`.
#[derive(Debug, Clone)]
pub(crate) struct ColumnNames {
    text: String,
    bounds: Vec<usize>,
}

impl ColumnNames {
    fn of(stmt: &rusqlite::Statement<'_>) -> Self {
        let count = stmt.column_count();
        let mut names = ColumnNames {
            text: String::with_capacity(count * 16),
            bounds: Vec::with_capacity(count + 1),
        };
        names.bounds.push(0);
        for i in 0..count {
            // a name SQLite cannot give (out of memory) matches no column
            if let Ok(name) = stmt.column_name(i) {
                names.text.push_str(name);
            }
            names.bounds.push(names.text.len());
        }
        names
    }

    fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    fn get(&self, i: usize) -> &str {
        &self.text[self.bounds[i]..self.bounds[i + 1]]
    }

    /// The name of the column at `i`, if there is one.
    fn name(&self, i: usize) -> Option<&str> {
        (i < self.len()).then(|| self.get(i))
    }
}

impl<'r> LiteRow<'r> {
    pub(crate) fn index(&self, col: &str) -> Option<usize> {
        let n = self.names.len();
        let start = self.next.get().min(n);
        let found = (start..n)
            .chain(0..start)
            .find(|&i| self.names.get(i) == col)?;
        self.next.set(found + 1);
        Some(found)
    }

    pub(crate) fn value(&self, idx: usize) -> Option<ValueRef<'r>> {
        self.values.get(idx).copied()
    }

    /// The name of the column at `idx`.
    pub(crate) fn name(&self, idx: usize) -> Option<&'r str> {
        self.names.name(idx)
    }
}

/// An owned row of a read connection ([`crate::backend::Conn::fetch_all`]).
#[derive(Debug)]
pub(crate) struct OwnedRow {
    names: Arc<ColumnNames>,
    values: Vec<rusqlite::types::Value>,
}

impl OwnedRow {
    pub(crate) fn as_lite(&self) -> LiteRow<'_> {
        LiteRow {
            names: &self.names,
            values: self.values.iter().map(ValueRef::from).collect(),
            next: std::cell::Cell::new(0),
        }
    }

    /// The name of the column at `idx`.
    pub(crate) fn name(&self, idx: usize) -> Option<&str> {
        self.names.name(idx)
    }
}

fn bind(stmt: &mut rusqlite::Statement<'_>, args: &[Val]) -> Result<(), DbError> {
    for (i, a) in args.iter().enumerate() {
        let r = match a {
            Val::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null),
            Val::Int(v) => stmt.raw_bind_parameter(i + 1, *v),
            Val::Text(s) => stmt.raw_bind_parameter(i + 1, s.as_str()),
            Val::Bool(b) => stmt.raw_bind_parameter(i + 1, i64::from(*b)),
            // As sqlx writes a `NaiveDateTime` (`%F %T%.f`), truncated to seconds as every
            // bound datetime is.
            Val::DateTime(t) => stmt.raw_bind_parameter(
                i + 1,
                crate::backend::truncate_to_seconds(*t)
                    .format("%F %T%.f")
                    .to_string(),
            ),
        };
        r.map_err(sqlite_error)?;
    }
    Ok(())
}

/// Run `sql` with `args` on `conn` and hand each row to `f` as SQLite produces it.
pub(crate) fn for_each_row(
    conn: &Connection,
    sql: &str,
    args: &[Val],
    mut f: impl FnMut(LiteRow<'_>) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let mut stmt = conn.prepare_cached(sql).map_err(sqlite_error)?;
    bind(&mut stmt, args)?;
    let names = ColumnNames::of(&stmt);
    let width = names.len();
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(sqlite_error)? {
        let values = (0..width)
            .map(|i| row.get_ref(i))
            .collect::<Result<Vec<_>, _>>()
            .map_err(sqlite_error)?;
        f(LiteRow {
            names: &names,
            values,
            next: std::cell::Cell::new(0),
        })?;
    }
    Ok(())
}

/// The rows of `sql` with `args`, owned.
pub(crate) fn all_rows(
    conn: &Connection,
    sql: &str,
    args: &[Val],
) -> Result<Vec<OwnedRow>, DbError> {
    let mut out = Vec::new();
    let mut names: Option<Arc<ColumnNames>> = None;
    for_each_row(conn, sql, args, |r| {
        let names = names
            .get_or_insert_with(|| Arc::new(r.names.clone()))
            .clone();
        let values = r
            .values
            .iter()
            .map(|v| rusqlite::types::Value::try_from(*v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| sqlite_error(e.into()))?;
        out.push(OwnedRow { names, values });
        Ok(())
    })?;
    Ok(out)
}

/// Execute `sql` with `args`: (rows changed, last insert rowid). The connection is
/// `query_only`, so SQLite refuses anything that writes.
pub(crate) fn execute(conn: &Connection, sql: &str, args: &[Val]) -> Result<(u64, i64), DbError> {
    let mut stmt = conn.prepare_cached(sql).map_err(sqlite_error)?;
    bind(&mut stmt, args)?;
    let changed = stmt.raw_execute().map_err(sqlite_error)?;
    Ok((changed as u64, conn.last_insert_rowid()))
}

/// Run `sql` (several statements, no parameters).
pub(crate) fn execute_batch(conn: &Connection, sql: &str) -> Result<(), DbError> {
    conn.execute_batch(sql).map_err(sqlite_error)
}

/// Begin a deferred read transaction: one snapshot for several statements.
pub(crate) fn begin(conn: &Connection) -> Result<(), DbError> {
    conn.execute_batch("BEGIN").map_err(sqlite_error)
}

/// End the read transaction.
pub(crate) fn commit(conn: &Connection) -> Result<(), DbError> {
    conn.execute_batch("COMMIT").map_err(sqlite_error)
}

/// End the read transaction without keeping anything (a read has nothing to keep).
pub(crate) fn rollback(conn: &Connection) -> Result<(), DbError> {
    conn.execute_batch("ROLLBACK").map_err(sqlite_error)
}

/// SQLite's error as sqlx reports it (`DbError::Sqlx` of a database error whose code is the
/// extended result code), so that busy and locked errors are retried and reported as every
/// other database error.
fn sqlite_error(e: rusqlite::Error) -> DbError {
    let (code, message) = match &e {
        rusqlite::Error::SqliteFailure(f, msg) => (
            Some(f.extended_code),
            msg.clone().unwrap_or_else(|| f.to_string()),
        ),
        other => (None, other.to_string()),
    };
    DbError::Sqlx(sqlx::Error::Database(Box::new(ReadError { code, message })))
}

#[derive(Debug)]
struct ReadError {
    code: Option<i32>,
    message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(c) => write!(f, "(code: {c}) {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReadError {}

impl sqlx::error::DatabaseError for ReadError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.code.map(|c| c.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        sqlx::error::ErrorKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_are_found_by_name_in_any_order() -> Result<(), DbError> {
        let conn = Connection::open_in_memory().map_err(sqlite_error)?;
        for_each_row(
            &conn,
            r#"SELECT 1 AS "c.id", 2 AS "", 3 AS "n.id", 4 AS "c.name""#,
            &[],
            |row| {
                assert_eq!(row.names.len(), 4);
                let names: Vec<&str> = (0..4).map(|i| row.names.get(i)).collect();
                assert_eq!(names, ["c.id", "", "n.id", "c.name"]);
                assert_eq!(row.index("n.id"), Some(2));
                assert_eq!(row.index("c.id"), Some(0)); // wraps round
                assert_eq!(row.index("c.name"), Some(3));
                assert_eq!(row.index(""), Some(1));
                assert_eq!(row.index("t.id"), None);
                Ok(())
            },
        )
    }
}
