//! The two backends behind one small interface: SQL text with `?` placeholders (both MySQL
//! and SQLite use them), a few value kinds, and rows read by column name.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDateTime, Timelike};
use rusqlite::types::ValueRef;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions, MySqlRow};
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow};
use sqlx::{AssertSqlSafe, Executor, MySql, MySqlConnection, Row as _, Sqlite, SqliteConnection};

use crate::DbError;

/// Which database is behind a [`Database`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    MySql,
    Sqlite,
}

/// How to open a [`Database`]: the `[database]` options OpenKeel honours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    /// `max_pool_size` (at least 1).
    pub max_connections: u32,
    /// `mysql_sql_mode` (default `TRADITIONAL`); `None` or empty keeps the server's mode.
    pub mysql_sql_mode: Option<String>,
    /// `connection_recycle_time`: connections older than this are replaced (MySQL).
    pub recycle_time: Option<Duration>,
    /// `pool_timeout`: how long a request waits for a free connection (SQLAlchemy's 30 s).
    pub acquire_timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            max_connections: 5,
            mysql_sql_mode: Some("TRADITIONAL".into()),
            recycle_time: Some(Duration::from_secs(3600)),
            acquire_timeout: Duration::from_secs(30),
        }
    }
}

/// The sqlx pool behind a [`Database`], for callers that need raw SQL.
#[derive(Debug, Clone)]
pub enum Pool {
    MySql(sqlx::MySqlPool),
    Sqlite(sqlx::SqlitePool),
}

/// A connection pool to the Magnum database (MySQL/MariaDB or SQLite).
///
/// Cheap to clone (the pool and the statement counter are shared).
#[derive(Debug, Clone)]
pub struct Database {
    pool: Pool,
    statements: Arc<AtomicU64>,
    /// How long a checkout may wait in all (`pool_timeout`); MySQL checkouts are tried in
    /// slices of at most [`ACQUIRE_SLICE`] within it.
    acquire_timeout: Duration,
    /// SQLite file: the connections reads run on, on the caller's thread
    /// ([`crate::reader`]); `None` for MySQL and in-memory SQLite.
    readers: Option<Arc<crate::reader::Readers>>,
    /// MariaDB: the connections single-statement reads run on, without sqlx's pings
    /// ([`crate::mysql_reader`]); `None` for SQLite.
    mysql_readers: Option<Arc<crate::mysql_reader::MySqlReaders>>,
}

/// A MySQL checkout is tried for at most this long at a time, again and again until
/// `pool_timeout`. sqlx retries a refused connection with a back-off that doubles up to a
/// fifth of the checkout's timeout: with one 30 s checkout, requests that waited through a
/// 10 s MariaDB restart tried again only ~5 s after it was back (the MariaDB drill,
/// docs/reliability.md). With 5 s slices the back-off stays under a second, and a connection
/// still has up to 5 s to be made.
const ACQUIRE_SLICE: Duration = Duration::from_secs(5);

/// Each pooled SQLite connection's page cache, in KiB (`PRAGMA cache_size` takes a negative
/// number for KiB). SQLite's default is 2,000 KiB per connection, and a list of 1,000
/// clusters fills it: with the pool's connections busy under concurrent lists that was most
/// of the all-in-one's resident memory (docs/performance.md, "SQLite page cache"). The
/// operating system's page cache keeps the file's pages anyway; 256 KiB holds the indexes
/// and pages that a show or a page of a list reads.
pub const SQLITE_CACHE_SIZE_KIB: u32 = 256;

impl Database {
    /// Connect to `url`: a SQLAlchemy URL as `[database] connection` holds it (converted with
    /// [`crate::sqlx_url`]) or an sqlx URL.
    ///
    /// MySQL sessions get `sql_mode='TRADITIONAL'` and `charset=utf8` (unless the URL names
    /// another charset), as oslo.db sets them. SQLite files are created when missing and use
    /// WAL journaling; an in-memory SQLite database lives in a single, never-recycled
    /// connection.
    pub async fn connect(url: &str) -> Result<Database, DbError> {
        Self::connect_with(url, 10).await
    }

    /// [`Database::connect`] with an explicit pool size (`[database] max_pool_size`).
    pub async fn connect_with(url: &str, max_connections: u32) -> Result<Database, DbError> {
        Self::connect_opts(
            url,
            &ConnectOptions {
                max_connections,
                ..ConnectOptions::default()
            },
        )
        .await
    }

    /// [`Database::connect`] with the `[database]` options that apply ([`ConnectOptions`]).
    pub async fn connect_opts(url: &str, options: &ConnectOptions) -> Result<Database, DbError> {
        let sqlx_url = crate::sqlx_url(url)?;
        let max_connections = options.max_connections.max(1);
        let set_sql_mode = match options.mysql_sql_mode.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(mode) => {
                if !mode
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b',')
                {
                    return Err(DbError::InvalidParameterValue(format!(
                        "invalid [database] mysql_sql_mode {mode:?}"
                    )));
                }
                Some(format!("SET SESSION sql_mode = '{mode}'"))
            }
        };
        let mut readers = None;
        let mut mysql_readers = None;
        let pool = if sqlx_url.starts_with("mysql:") {
            let opts = MySqlConnectOptions::from_str(&sqlx_url)?
                .pipes_as_concat(false)
                .no_engine_substitution(false)
                .timezone(Some("+00:00".to_string()));
            mysql_readers = Some(Arc::new(crate::mysql_reader::MySqlReaders::new(
                opts.clone(),
                set_sql_mode.clone(),
                max_connections,
                options.recycle_time,
                options.acquire_timeout,
            )));
            let pool = MySqlPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(options.acquire_timeout.min(ACQUIRE_SLICE))
                .max_lifetime(options.recycle_time)
                .after_connect(move |conn, _meta| {
                    let set = set_sql_mode.clone();
                    Box::pin(async move {
                        if let Some(set) = set {
                            conn.execute(AssertSqlSafe(set)).await?;
                        }
                        Ok(())
                    })
                })
                .connect_with(opts)
                .await?;
            Pool::MySql(pool)
        } else if sqlx_url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(&sqlx_url)?
                .busy_timeout(Duration::from_secs(30))
                .foreign_keys(false);
            let in_memory =
                sqlx_url == crate::url::SQLITE_MEMORY || sqlx_url.contains("mode=memory");
            if !in_memory {
                readers = Some(Arc::new(crate::reader::Readers::new(
                    opts.get_filename().to_path_buf(),
                    Duration::from_secs(30),
                    SQLITE_CACHE_SIZE_KIB,
                )));
            }
            let pool = if in_memory {
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(opts)
                    .await?
            } else {
                SqlitePoolOptions::new()
                    .max_connections(max_connections)
                    .acquire_timeout(options.acquire_timeout)
                    // A file opened in this process cannot be lost the way a server
                    // connection can: no ping (a round trip to the connection's worker
                    // thread) on every checkout.
                    .test_before_acquire(false)
                    .connect_with(
                        opts.journal_mode(SqliteJournalMode::Wal)
                            .pragma("cache_size", format!("-{SQLITE_CACHE_SIZE_KIB}")),
                    )
                    .await?
            };
            Pool::Sqlite(pool)
        } else {
            return Err(DbError::InvalidUrl(crate::url::redact(url)));
        };
        let mut db = Database::from_pool(pool);
        db.acquire_timeout = options.acquire_timeout;
        db.readers = readers;
        db.mysql_readers = mysql_readers;
        Ok(db)
    }

    /// Wrap an existing pool (its sessions are used as they are configured).
    pub fn from_pool(pool: Pool) -> Database {
        Database {
            pool,
            statements: Arc::new(AtomicU64::new(0)),
            acquire_timeout: ConnectOptions::default().acquire_timeout,
            readers: None,
            mysql_readers: None,
        }
    }

    /// The underlying sqlx pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// How many SQL statements this handle (and its clones) has sent so far — for tests and
    /// diagnostics (e.g. to check that a listing costs a fixed number of queries).
    pub fn statement_count(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// A fresh, empty in-memory SQLite database (without schema; see
    /// [`crate::manage::upgrade`]).
    pub async fn in_memory() -> Result<Database, DbError> {
        Self::connect(crate::url::SQLITE_MEMORY).await
    }

    pub fn backend(&self) -> Backend {
        match self.pool {
            Pool::MySql(_) => Backend::MySql,
            Pool::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Close every connection of the pool.
    pub async fn close(&self) {
        if let Some(readers) = &self.readers {
            readers.close();
        }
        if let Some(readers) = &self.mysql_readers {
            readers.close().await;
        }
        match &self.pool {
            Pool::MySql(p) => p.close().await,
            Pool::Sqlite(p) => p.close().await,
        }
    }

    /// Run a MySQL checkout (`op`: an acquire or a `BEGIN`) again while it times out, until
    /// `pool_timeout` ([`ACQUIRE_SLICE`]).
    async fn in_slices<T, F, Fut>(&self, mut op: F) -> Result<T, sqlx::Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
    {
        let deadline = tokio::time::Instant::now() + self.acquire_timeout;
        loop {
            match op().await {
                Err(sqlx::Error::PoolTimedOut)
                    if tokio::time::Instant::now() + Duration::from_millis(10) < deadline => {}
                r => return r,
            }
        }
    }

    /// Check a connection out of the pool. sqlx's checkout futures are large (about 18 KB,
    /// MySQL's and SQLite's in one enum), so each is boxed: held inline it made every caller's
    /// future as large, copied at every level of a request's call chain, also on the
    /// paths that never wait for the pool (a SQLite file's reads).
    pub(crate) async fn acquire(&self) -> Result<Pooled, DbError> {
        let inner = match &self.pool {
            Pool::MySql(p) => PooledInner::MySql(Box::pin(self.in_slices(|| p.acquire())).await?),
            Pool::Sqlite(p) => PooledInner::Sqlite(Box::pin(p.acquire()).await?),
        };
        Ok(Pooled {
            inner,
            statements: self.statements.clone(),
        })
    }

    /// A connection for reads only: on a SQLite file one of [`crate::reader`]'s, stepped on
    /// the caller's thread; on MariaDB one of [`crate::mysql_reader`]'s (no pings);
    /// otherwise a pooled one, as [`Database::acquire`].
    pub(crate) async fn acquire_read(&self) -> Result<Pooled, DbError> {
        let inner = if let Some(readers) = &self.readers {
            PooledInner::Reader(readers.get()?)
        } else if let Some(readers) = &self.mysql_readers {
            PooledInner::MySqlRead(Box::pin(readers.get()).await?)
        } else {
            return self.acquire().await;
        };
        Ok(Pooled {
            inner,
            statements: self.statements.clone(),
        })
    }

    /// Begin a read transaction: one consistent snapshot for several reads (InnoDB's
    /// REPEATABLE READ view; a deferred `BEGIN` on SQLite, which takes no write lock).
    pub(crate) async fn begin_read(&self) -> Result<Tx, DbError> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        if let Some(readers) = &self.readers {
            let mut r = readers.get()?;
            crate::reader::begin(r.conn()?)?;
            return Ok(Tx {
                inner: TxInner::Reader(r),
                statements: self.statements.clone(),
            });
        }
        // Boxed as in `acquire`.
        let inner = match &self.pool {
            Pool::MySql(p) => TxInner::MySql(Box::pin(self.in_slices(|| p.begin())).await?),
            Pool::Sqlite(p) => TxInner::Sqlite(Box::pin(p.begin_with("BEGIN")).await?),
        };
        Ok(Tx {
            inner,
            statements: self.statements.clone(),
        })
    }

    /// Begin a write transaction (`BEGIN IMMEDIATE` on SQLite so that a read-then-write
    /// transaction cannot fail to upgrade its lock).
    pub(crate) async fn begin(&self) -> Result<Tx, DbError> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        // Boxed as in `acquire`.
        let inner = match &self.pool {
            Pool::MySql(p) => TxInner::MySql(Box::pin(self.in_slices(|| p.begin())).await?),
            Pool::Sqlite(p) => TxInner::Sqlite(Box::pin(p.begin_with("BEGIN IMMEDIATE")).await?),
        };
        Ok(Tx {
            inner,
            statements: self.statements.clone(),
        })
    }
}

/// A connection checked out of the pool.
pub(crate) struct Pooled {
    inner: PooledInner,
    statements: Arc<AtomicU64>,
}

enum PooledInner {
    MySql(PoolConnection<MySql>),
    Sqlite(PoolConnection<Sqlite>),
    Reader(crate::reader::Reader),
    MySqlRead(crate::mysql_reader::MySqlReader),
}

impl Pooled {
    /// Take the connection out of the pool and close it (whatever session state it holds,
    /// e.g. a named lock, goes with it).
    pub(crate) fn detach(self) {
        match self.inner {
            PooledInner::MySql(c) => drop(c.detach()),
            PooledInner::Sqlite(c) => drop(c.detach()),
            PooledInner::Reader(r) => drop(r),
            PooledInner::MySqlRead(mut r) => {
                // given back busy: closed, not reused
                if let Some((_, busy)) = r.parts() {
                    *busy = true;
                }
            }
        }
    }

    /// Take a MariaDB connection out of the pool for good: the pool may open another in its
    /// place, and the session (with the named locks it holds) lasts until the connection is
    /// closed or dropped. `None` on SQLite (the connection goes back to the pool).
    pub(crate) fn into_dedicated(self) -> Option<Dedicated> {
        match self.inner {
            PooledInner::MySql(c) => Some(Dedicated {
                conn: c.detach(),
                statements: self.statements,
            }),
            PooledInner::Sqlite(_) | PooledInner::Reader(_) | PooledInner::MySqlRead(_) => None,
        }
    }

    pub(crate) fn conn(&mut self) -> Conn<'_> {
        let mut busy = None;
        let kind = match &mut self.inner {
            PooledInner::MySql(c) => ConnKind::MySql(c),
            PooledInner::Sqlite(c) => ConnKind::Sqlite(c),
            PooledInner::Reader(r) => ConnKind::from_reader(r),
            PooledInner::MySqlRead(r) => match r.parts() {
                Some((c, b)) => {
                    busy = Some(b);
                    ConnKind::MySql(c)
                }
                None => ConnKind::Reader(Err("the read connection was given back".into())),
            },
        };
        Conn {
            kind,
            statements: &self.statements,
            busy,
        }
    }
}

/// An open transaction; rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx {
    inner: TxInner,
    statements: Arc<AtomicU64>,
}

enum TxInner {
    MySql(sqlx::Transaction<'static, MySql>),
    Sqlite(sqlx::Transaction<'static, Sqlite>),
    /// A read transaction of a SQLite file ([`Database::begin_read`]).
    Reader(crate::reader::Reader),
}

impl Tx {
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        let kind = match &mut self.inner {
            TxInner::MySql(t) => ConnKind::MySql(t),
            TxInner::Sqlite(t) => ConnKind::Sqlite(t),
            TxInner::Reader(r) => ConnKind::from_reader(r),
        };
        Conn {
            kind,
            statements: &self.statements,
            busy: None,
        }
    }

    pub(crate) async fn commit(self) -> Result<(), DbError> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        match self.inner {
            TxInner::MySql(t) => t.commit().await?,
            TxInner::Sqlite(t) => t.commit().await?,
            TxInner::Reader(mut r) => crate::reader::commit(r.conn()?)?,
        }
        Ok(())
    }

    pub(crate) async fn rollback(self) -> Result<(), DbError> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        match self.inner {
            TxInner::MySql(t) => t.rollback().await?,
            TxInner::Sqlite(t) => t.rollback().await?,
            TxInner::Reader(mut r) => crate::reader::rollback(r.conn()?)?,
        }
        Ok(())
    }

    /// Commit when `result` is `Ok`, roll back (right away, so that no lock outlives the
    /// call) when it is an error; returns `result`.
    pub(crate) async fn finish<T>(self, result: Result<T, DbError>) -> Result<T, DbError> {
        match result {
            Ok(v) => {
                self.commit().await?;
                Ok(v)
            }
            Err(e) => {
                if let Err(re) = self.rollback().await {
                    tracing::warn!(error = %re, "rollback failed");
                }
                Err(e)
            }
        }
    }
}

/// A value bound to a `?` placeholder.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Text(String),
    Bool(bool),
    DateTime(NaiveDateTime),
}

impl Val {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Self {
        Val::Text(s.to_string())
    }
}

impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::Text(s)
    }
}

impl From<i64> for Val {
    fn from(i: i64) -> Self {
        Val::Int(i)
    }
}

impl From<i32> for Val {
    fn from(i: i32) -> Self {
        Val::Int(i64::from(i))
    }
}

impl From<bool> for Val {
    fn from(b: bool) -> Self {
        Val::Bool(b)
    }
}

impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Self {
        v.map_or(Val::Null, Into::into)
    }
}

/// Magnum's `datetime` columns hold whole seconds (MariaDB truncates the fraction); do the
/// same before writing so that every backend stores and returns identical values.
pub(crate) fn truncate_to_seconds(t: NaiveDateTime) -> NaiveDateTime {
    t.with_nanosecond(0).unwrap_or(t)
}

/// Naive UTC now, whole seconds (`timeutils.utcnow()` as stored).
pub(crate) fn utcnow() -> NaiveDateTime {
    truncate_to_seconds(chrono::Utc::now().naive_utc())
}

/// A MariaDB connection of its own ([`Pooled::into_dedicated`]); dropping it closes it.
pub(crate) struct Dedicated {
    conn: MySqlConnection,
    statements: Arc<AtomicU64>,
}

impl Dedicated {
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        Conn {
            kind: ConnKind::MySql(&mut self.conn),
            statements: &self.statements,
            busy: None,
        }
    }

    /// Close the session (`COM_QUIT`): whatever it holds is freed at once.
    pub(crate) async fn close(self) {
        use sqlx::Connection as _;
        if let Err(e) = self.conn.close().await {
            tracing::debug!(error = %e, "closing a dedicated connection");
        }
    }
}

/// A borrowed connection of either backend.
pub(crate) struct Conn<'a> {
    kind: ConnKind<'a>,
    statements: &'a AtomicU64,
    /// A [`crate::mysql_reader`] connection's mark: set while a statement runs, so that a
    /// connection given back in the middle of one (a cancelled request) is not reused.
    busy: Option<&'a mut bool>,
}

enum ConnKind<'a> {
    MySql(&'a mut MySqlConnection),
    Sqlite(&'a mut SqliteConnection),
    /// A read connection of a SQLite file ([`crate::reader`]), or the error of a reader
    /// already given back (not reachable: a `Reader` holds its connection until dropped).
    Reader(Result<&'a mut rusqlite::Connection, String>),
}

impl<'a> ConnKind<'a> {
    fn from_reader(r: &'a mut crate::reader::Reader) -> Self {
        ConnKind::Reader(r.conn().map_err(|e| e.to_string()))
    }
}

macro_rules! bind_all {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Val::Null => q.bind(Option::<String>::None),
                Val::Int(i) => q.bind(*i),
                Val::Text(s) => q.bind(s.clone()),
                Val::Bool(b) => q.bind(*b),
                Val::DateTime(t) => q.bind(truncate_to_seconds(*t)),
            };
        }
        q
    }};
}

impl Conn<'_> {
    pub(crate) fn backend(&self) -> Backend {
        match self.kind {
            ConnKind::MySql(_) => Backend::MySql,
            ConnKind::Sqlite(_) | ConnKind::Reader(_) => Backend::Sqlite,
        }
    }

    pub(crate) async fn fetch_all(
        &mut self,
        sql: &str,
        args: &[Val],
    ) -> Result<Vec<Row<'static>>, DbError> {
        tracing::trace!(sql, "fetch");
        self.begin_statement();
        let rows = match &mut self.kind {
            ConnKind::MySql(c) => {
                match bind_all!(sqlx::query::<MySql>(AssertSqlSafe(sql.to_string())), args)
                    .fetch_all(&mut **c)
                    .await
                {
                    Ok(rows) => rows.into_iter().map(Row::MySql).collect(),
                    Err(e) if unrepresentable_argument(&e, args) => Vec::new(),
                    Err(e) => return Err(e.into()),
                }
            }
            ConnKind::Sqlite(c) => {
                bind_all!(sqlx::query::<Sqlite>(AssertSqlSafe(sql.to_string())), args)
                    .fetch_all(&mut **c)
                    .await?
                    .into_iter()
                    .map(Row::Sqlite)
                    .collect()
            }
            ConnKind::Reader(c) => crate::reader::all_rows(lite(c)?, sql, args)?
                .into_iter()
                .map(Row::Owned)
                .collect(),
        };
        self.end_statement();
        Ok(rows)
    }

    /// Rows decoded one by one as the server streams them (`f` per row), so that the raw rows
    /// of a large result never coexist with their decoded values.
    pub(crate) async fn fetch_map<T>(
        &mut self,
        sql: &str,
        args: &[Val],
        mut f: impl FnMut(&Row) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        use futures_util::TryStreamExt;
        tracing::trace!(sql, "fetch");
        self.begin_statement();
        let mut out = Vec::new();
        match &mut self.kind {
            ConnKind::MySql(c) => {
                let q = bind_all!(sqlx::query::<MySql>(AssertSqlSafe(sql.to_string())), args);
                let mut rows = q.fetch(&mut **c);
                loop {
                    let r = match rows.try_next().await {
                        Ok(Some(r)) => r,
                        Ok(None) => break,
                        Err(e) if unrepresentable_argument(&e, args) => break,
                        Err(e) => return Err(e.into()),
                    };
                    out.push(f(&Row::MySql(r))?);
                }
            }
            ConnKind::Sqlite(c) => {
                let q = bind_all!(sqlx::query::<Sqlite>(AssertSqlSafe(sql.to_string())), args);
                let mut rows = q.fetch(&mut **c);
                while let Some(r) = rows.try_next().await? {
                    out.push(f(&Row::Sqlite(r))?);
                }
            }
            ConnKind::Reader(c) => crate::reader::for_each_row(lite(c)?, sql, args, |r| {
                out.push(f(&Row::Lite(r))?);
                Ok(())
            })?,
        }
        self.end_statement();
        Ok(out)
    }

    /// Rows handed to `f` one by one as the server streams them; nothing is collected.
    pub(crate) async fn fetch_each(
        &mut self,
        sql: &str,
        args: &[Val],
        mut f: impl FnMut(&Row) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        use futures_util::TryStreamExt;
        tracing::trace!(sql, "fetch");
        self.begin_statement();
        match &mut self.kind {
            ConnKind::MySql(c) => {
                let q = bind_all!(sqlx::query::<MySql>(AssertSqlSafe(sql.to_string())), args);
                let mut rows = q.fetch(&mut **c);
                loop {
                    let r = match rows.try_next().await {
                        Ok(Some(r)) => r,
                        Ok(None) => break,
                        Err(e) if unrepresentable_argument(&e, args) => break,
                        Err(e) => return Err(e.into()),
                    };
                    f(&Row::MySql(r))?;
                }
            }
            ConnKind::Sqlite(c) => {
                let q = bind_all!(sqlx::query::<Sqlite>(AssertSqlSafe(sql.to_string())), args);
                let mut rows = q.fetch(&mut **c);
                while let Some(r) = rows.try_next().await? {
                    f(&Row::Sqlite(r))?;
                }
            }
            ConnKind::Reader(c) => {
                crate::reader::for_each_row(lite(c)?, sql, args, |r| f(&Row::Lite(r)))?
            }
        }
        self.end_statement();
        Ok(())
    }

    /// Execute a statement; returns (rows affected, last insert id).
    pub(crate) async fn execute(&mut self, sql: &str, args: &[Val]) -> Result<(u64, i64), DbError> {
        tracing::trace!(sql, "execute");
        self.begin_statement();
        let done = match &mut self.kind {
            ConnKind::MySql(c) => {
                let r = bind_all!(sqlx::query::<MySql>(AssertSqlSafe(sql.to_string())), args)
                    .execute(&mut **c)
                    .await?;
                (
                    r.rows_affected(),
                    i64::try_from(r.last_insert_id()).unwrap_or(i64::MAX),
                )
            }
            ConnKind::Sqlite(c) => {
                let r = bind_all!(sqlx::query::<Sqlite>(AssertSqlSafe(sql.to_string())), args)
                    .execute(&mut **c)
                    .await?;
                (r.rows_affected(), r.last_insert_rowid())
            }
            ConnKind::Reader(c) => crate::reader::execute(lite(c)?, sql, args)?,
        };
        self.end_statement();
        Ok(done)
    }

    /// Run SQL without parameters through the simple-query protocol (DDL).
    pub(crate) async fn execute_raw(&mut self, sql: &str) -> Result<(), DbError> {
        tracing::debug!(sql, "execute");
        self.begin_statement();
        match &mut self.kind {
            ConnKind::MySql(c) => {
                (&mut **c).execute(AssertSqlSafe(sql.to_string())).await?;
            }
            ConnKind::Sqlite(c) => {
                (&mut **c).execute(AssertSqlSafe(sql.to_string())).await?;
            }
            ConnKind::Reader(c) => crate::reader::execute_batch(lite(c)?, sql)?,
        }
        self.end_statement();
        Ok(())
    }

    /// A statement starts: counted, and a [`crate::mysql_reader`] connection marked busy
    /// until [`Conn::end_statement`] (an error returns before it: the mark stays set and
    /// the connection is closed, not reused).
    fn begin_statement(&mut self) {
        self.statements.fetch_add(1, Ordering::Relaxed);
        self.set_busy(true);
    }

    fn end_statement(&mut self) {
        self.set_busy(false);
    }

    fn set_busy(&mut self, busy: bool) {
        if let Some(b) = self.busy.as_deref_mut() {
            *b = busy;
        }
    }
}

fn lite<'c>(
    c: &'c Result<&mut rusqlite::Connection, String>,
) -> Result<&'c rusqlite::Connection, DbError> {
    match c {
        Ok(c) => Ok(c),
        Err(e) => Err(DbError::SchemaState(e.clone())),
    }
}

/// A result row of either backend: sqlx's, or one of a SQLite read connection
/// ([`crate::reader`]) borrowed from SQLite while its statement stands on it.
pub(crate) enum Row<'r> {
    MySql(MySqlRow),
    Sqlite(SqliteRow),
    Lite(crate::reader::LiteRow<'r>),
    Owned(crate::reader::OwnedRow),
}

macro_rules! get {
    ($self:ident, $ty:ty, $col:expr, $lite:expr) => {
        match $self {
            Row::MySql(r) => r.try_get::<$ty, _>($col),
            Row::Sqlite(r) => r.try_get::<$ty, _>($col),
            Row::Lite(r) => $lite($col, lite_value(r, $col)?),
            Row::Owned(r) => $lite($col, lite_value(&r.as_lite(), $col)?),
        }
    };
}

/// A column of a read connection's row, by index or name, as sqlx would look it up.
pub(crate) trait LiteIndex: std::fmt::Display + Copy {
    fn find(self, row: &crate::reader::LiteRow<'_>) -> Option<usize>;
}

/// A column of a result row of any backend: by name (looked up in the row's columns: a hash
/// of the name for every value on sqlx's rows), or by position ([`At`]).
pub(crate) trait ColIdx:
    LiteIndex + sqlx::ColumnIndex<MySqlRow> + sqlx::ColumnIndex<SqliteRow>
{
}

impl<I: LiteIndex + sqlx::ColumnIndex<MySqlRow> + sqlx::ColumnIndex<SqliteRow>> ColIdx for I {}

/// The column at `index` of a row whose select list the caller built (so knows where each
/// column is), named `name` in errors. Reading by position skips sqlx's look-up by name (a
/// hash of the name per value: 7 % of a list of 1,000 clusters' instructions on MariaDB).
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'n> {
    pub index: usize,
    pub name: &'n str,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl LiteIndex for At<'_> {
    fn find(self, _row: &crate::reader::LiteRow<'_>) -> Option<usize> {
        Some(self.index)
    }
}

impl sqlx::ColumnIndex<MySqlRow> for At<'_> {
    fn index(&self, row: &MySqlRow) -> Result<usize, sqlx::Error> {
        self.index.index(row)
    }
}

impl sqlx::ColumnIndex<SqliteRow> for At<'_> {
    fn index(&self, row: &SqliteRow) -> Result<usize, sqlx::Error> {
        self.index.index(row)
    }
}

impl LiteIndex for usize {
    fn find(self, _row: &crate::reader::LiteRow<'_>) -> Option<usize> {
        Some(self)
    }
}

impl LiteIndex for &str {
    fn find(self, row: &crate::reader::LiteRow<'_>) -> Option<usize> {
        row.index(self)
    }
}

/// The value of `col`; its name is formatted only for an error.
fn lite_value<'r>(
    row: &crate::reader::LiteRow<'r>,
    col: impl LiteIndex,
) -> Result<ValueRef<'r>, sqlx::Error> {
    col.find(row)
        .and_then(|i| row.value(i))
        .ok_or_else(|| sqlx::Error::ColumnNotFound(col.to_string()))
}

fn lite_decode_error(col: impl LiteIndex, source: sqlx::error::BoxDynError) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: col.to_string(),
        source,
    }
}

fn lite_mismatch(col: impl LiteIndex, want: &str, got: &ValueRef<'_>) -> sqlx::Error {
    lite_decode_error(
        col,
        format!(
            "mismatched types; Rust type `{want}` is not compatible with SQLite type `{:?}`",
            got.data_type()
        )
        .into(),
    )
}

fn lite_i64(col: impl LiteIndex, v: ValueRef<'_>) -> Result<Option<i64>, sqlx::Error> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(i) => Ok(Some(i)),
        other => Err(lite_mismatch(col, "i64", &other)),
    }
}

fn lite_i32(col: impl LiteIndex, v: ValueRef<'_>) -> Result<Option<i32>, sqlx::Error> {
    lite_i64(col, v)?
        .map(|i| i32::try_from(i).map_err(|e| lite_decode_error(col, e.into())))
        .transpose()
}

fn lite_bool(col: impl LiteIndex, v: ValueRef<'_>) -> Result<Option<bool>, sqlx::Error> {
    Ok(lite_i64(col, v)?.map(|i| i != 0))
}

fn lite_str<'v>(col: impl LiteIndex, v: ValueRef<'v>) -> Result<Option<&'v str>, sqlx::Error> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map(Some)
            .map_err(|e| lite_decode_error(col, e.into())),
        other => Err(lite_mismatch(col, "String", &other)),
    }
}

fn lite_string(col: impl LiteIndex, v: ValueRef<'_>) -> Result<Option<String>, sqlx::Error> {
    Ok(lite_str(col, v)?.map(str::to_owned))
}

fn lite_datetime(
    col: impl LiteIndex,
    v: ValueRef<'_>,
) -> Result<Option<NaiveDateTime>, sqlx::Error> {
    if let ValueRef::Integer(secs) = v {
        return Ok(chrono::DateTime::from_timestamp(secs, 0).map(|d| d.naive_utc()));
    }
    let Some(t) = lite_str(col, v)? else {
        return Ok(None);
    };
    parse_sqlite_datetime(t)
        .or_else(|| parse_sqlite_datetime_slowly(t))
        .map(Some)
        .ok_or_else(|| lite_decode_error(col, format!("not a datetime: {t:?}").into()))
}

/// The other texts sqlx's SQLite decoder takes for a datetime: RFC 3339, then its formats in
/// its order; an offset is dropped, keeping the wall time (its `naive_local`).
fn parse_sqlite_datetime_slowly(t: &str) -> Option<NaiveDateTime> {
    const FORMATS: [&str; 12] = [
        "%F %T%.f",
        "%F %R",
        "%F %RZ",
        "%F %R%:z",
        "%F %T%.fZ",
        "%F %T%.f%:z",
        "%FT%R",
        "%FT%RZ",
        "%FT%R%:z",
        "%FT%T%.f",
        "%FT%T%.fZ",
        "%FT%T%.f%:z",
    ];
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Some(dt.naive_local());
    }
    FORMATS.iter().find_map(|f| {
        chrono::DateTime::parse_from_str(t, f)
            .map(|dt| dt.naive_local())
            .ok()
            .or_else(|| NaiveDateTime::parse_from_str(t, f).ok())
    })
}

impl Row<'_> {
    pub(crate) fn opt_i32(&self, col: impl ColIdx) -> Result<Option<i32>, sqlx::Error> {
        get!(self, Option<i32>, col, lite_i32)
    }

    pub(crate) fn opt_i64(&self, col: impl ColIdx) -> Result<Option<i64>, sqlx::Error> {
        get!(self, Option<i64>, col, lite_i64)
    }

    pub(crate) fn opt_string(&self, col: impl ColIdx) -> Result<Option<String>, sqlx::Error> {
        get!(self, Option<String>, col, lite_string)
    }

    pub(crate) fn opt_bool(&self, col: impl ColIdx) -> Result<Option<bool>, sqlx::Error> {
        get!(self, Option<bool>, col, lite_bool)
    }

    /// The name of the column at `idx` (`None` past the last one).
    pub(crate) fn column_name(&self, idx: usize) -> Option<&str> {
        use sqlx::Column as _;
        match self {
            Row::MySql(r) => r.columns().get(idx).map(|c| c.name()),
            Row::Sqlite(r) => r.columns().get(idx).map(|c| c.name()),
            Row::Lite(r) => r.name(idx),
            Row::Owned(r) => r.name(idx),
        }
    }

    pub(crate) fn opt_datetime(
        &self,
        col: impl ColIdx,
    ) -> Result<Option<NaiveDateTime>, sqlx::Error> {
        match self {
            Row::MySql(r) => r.try_get::<Option<NaiveDateTime>, _>(col),
            // The text sqlx writes (`YYYY-MM-DD HH:MM:SS[.ffffff]`) parsed directly; anything
            // else through sqlx's decoder, which tries its formats one by one (a twentieth
            // of a cluster show's instructions went there).
            Row::Sqlite(r) => {
                let raw = r.try_get_raw(col)?;
                if sqlx::ValueRef::is_null(&raw) {
                    return Ok(None);
                }
                if let Ok(Some(t)) = r.try_get::<Option<&str>, _>(col) {
                    if let Some(dt) = parse_sqlite_datetime(t) {
                        return Ok(Some(dt));
                    }
                }
                r.try_get::<Option<NaiveDateTime>, _>(col)
            }
            Row::Lite(r) => lite_datetime(col, lite_value(r, col)?),
            Row::Owned(r) => lite_datetime(col, lite_value(&r.as_lite(), col)?),
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` with an optional `.` and 1 to 9 fraction digits, as sqlx writes a
/// `NaiveDateTime` into SQLite; `None` for anything else.
fn parse_sqlite_datetime(t: &str) -> Option<NaiveDateTime> {
    let b = t.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        b[from..to].iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let n = num(20, b.len())?;
            n * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    let date = chrono::NaiveDate::from_ymd_opt(num(0, 4)? as i32, num(5, 7)?, num(8, 10)?)?;
    let time =
        chrono::NaiveTime::from_hms_nano_opt(num(11, 13)?, num(14, 16)?, num(17, 19)?, nanos)?;
    Some(NaiveDateTime::new(date, time))
}

/// True when MySQL refused a statement with "Illegal mix of collations" (1267, 1270, 1271)
/// because an argument holds characters outside the Basic Multilingual Plane, which the
/// session's `utf8` (utf8mb3, as oslo.db connects) cannot represent, compared with a utf8mb4
/// column (the `nodegroup` and `federation` tables of a utf8mb4 database). No stored value can
/// equal such an argument through this session, so a read matches no row (Magnum answers 500
/// with the database error; docs/differences.md). A collation mix without such an argument (a
/// schema fault) stays an error.
fn unrepresentable_argument(e: &sqlx::Error, args: &[Val]) -> bool {
    let collation_mix = match e {
        sqlx::Error::Database(d) => d
            .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
            .is_some_and(|m| matches!(m.number(), 1267 | 1270 | 1271)),
        _ => false,
    };
    collation_mix
        && args
            .iter()
            .any(|a| matches!(a, Val::Text(s) if s.chars().any(|c| u32::from(c) > 0xFFFF)))
}

/// True when the error is a unique-key violation (MySQL 1062, SQLite `SQLITE_CONSTRAINT_UNIQUE`
/// / primary key).
pub(crate) fn is_duplicate(e: &DbError) -> bool {
    match e {
        DbError::Sqlx(sqlx::Error::Database(d)) => {
            matches!(d.kind(), sqlx::error::ErrorKind::UniqueViolation)
                || d.code().as_deref() == Some("23000") && d.message().contains("Duplicate entry")
        }
        _ => false,
    }
}

/// True for errors oslo.db's `retry_on_deadlock` retries (MySQL deadlock 1213 / SQLSTATE 40001;
/// SQLite busy or locked).
pub(crate) fn is_deadlock(e: &DbError) -> bool {
    match e {
        DbError::Sqlx(sqlx::Error::Database(d)) => {
            let code = d.code();
            let msg = d.message();
            code.as_deref() == Some("40001")
                || msg.contains("Deadlock found")
                || matches!(
                    code.as_deref(),
                    Some("5") | Some("6") | Some("517") | Some("262")
                )
                || msg.contains("database is locked")
        }
        _ => false,
    }
}

/// Retry a write operation on deadlock, as oslo.db's `retry_on_deadlock` (5 retries, the
/// interval doubling from 0.5 s).
macro_rules! retry_on_deadlock {
    ($body:expr) => {{
        let mut attempt = 0u32;
        loop {
            match $body.await {
                Err(e) if attempt < 5 && $crate::backend::is_deadlock(&e) => {
                    attempt += 1;
                    tracing::warn!(error = %e, attempt, "deadlock; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(500u64 << (attempt - 1)))
                        .await;
                }
                other => break other,
            }
        }
    }};
}
pub(crate) use retry_on_deadlock;

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path reads what sqlx writes exactly as sqlx's own decoder does, and leaves
    /// every other form to it.
    #[test]
    fn sqlite_datetimes_parse_as_sqlx_reads_them() {
        for t in [
            "2026-12-01 00:00:00",
            "2026-12-01 23:59:58.5",
            "2026-02-28 10:11:12.123456",
            "1999-01-31 01:02:03.123456789",
        ] {
            let want = NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f").ok();
            assert_eq!(parse_sqlite_datetime(t), want, "{t}");
            assert!(want.is_some(), "{t}");
        }
        for t in [
            "2026-12-01T00:00:00",
            "2026-12-01 00:00:00Z",
            "2026-12-01 00:00:00.",
            "2026-12-01 00:00:00.1234567890",
            "2026-13-01 00:00:00",
            "2026-12-01 24:00:00",
            "2026-12-01",
            "1764547200",
            "２026-12-01 00:00:00",
        ] {
            assert_eq!(parse_sqlite_datetime(t), None, "{t}");
        }
    }
}
