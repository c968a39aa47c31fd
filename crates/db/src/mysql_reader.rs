//! MariaDB connections for single-statement reads, without sqlx's pings.
//!
//! sqlx's pool sends a `COM_PING` when it hands a connection out (`test_before_acquire`) and
//! another, always, when the connection comes back (to flush whatever a cancelled statement
//! left on it): a cluster show, one statement, cost three round trips to MariaDB, and the
//! two pings about a fifth of the server's and mariadbd's CPU per show
//! (docs/performance.md, "MariaDB show without pings").
//!
//! The connections here are kept apart from that pool and used one task at a time:
//!
//! * a connection goes back to the idle list only when every statement started on it
//!   finished ([`crate::backend::Conn`] marks it busy while one runs); one given back in the
//!   middle of a statement (its request was cancelled) is closed, not reused;
//! * a connection idle for longer than [`PING_AFTER_IDLE`] is pinged before it is handed
//!   out (a server restart, `wait_timeout` or a firewall may have dropped it meanwhile), one
//!   older than `connection_recycle_time` is replaced, and one unused for ten minutes is
//!   closed (as the pool's idle connections are);
//! * the caller of a read retries it once on a fresh connection when the one it was given
//!   turns out to be lost (`cluster::get_with_relations`), so a connection that died within
//!   the last second costs no request;
//! * opening a connection is retried with a short back-off until `pool_timeout`, as sqlx's
//!   checkout does, so that a read during a MariaDB restart waits for it instead of failing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::mysql::MySqlConnectOptions;
use sqlx::{AssertSqlSafe, ConnectOptions as _, Connection as _, Executor as _, MySqlConnection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::DbError;

/// A connection idle for longer than this is pinged before use.
pub(crate) const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// How long closing a connection given back in an unknown state may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Idle connections are closed after this long unused, as the pool's are (sqlx's default
/// `idle_timeout`, docs/configuration.md `max_pool_size`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The read connections of one MariaDB database.
pub(crate) struct MySqlReaders {
    options: MySqlConnectOptions,
    /// Run on each new connection (`SET SESSION sql_mode = ...`), as the pool's
    /// `after_connect` does.
    init: Option<String>,
    recycle: Option<Duration>,
    acquire_timeout: Duration,
    /// One permit per connection that may be open at once.
    slots: Arc<Semaphore>,
    /// The idle connections, the most recently used last; `None` once closed.
    idle: Mutex<Option<Vec<Idle>>>,
}

impl std::fmt::Debug for MySqlReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MySqlReaders")
            .field("available", &self.slots.available_permits())
            .finish_non_exhaustive()
    }
}

struct Idle {
    conn: MySqlConnection,
    created: Instant,
    since: Instant,
}

impl MySqlReaders {
    pub(crate) fn new(
        options: MySqlConnectOptions,
        init: Option<String>,
        max_connections: u32,
        recycle: Option<Duration>,
        acquire_timeout: Duration,
    ) -> Self {
        MySqlReaders {
            options,
            init,
            recycle,
            acquire_timeout,
            slots: Arc::new(Semaphore::new(max_connections.max(1) as usize)),
            idle: Mutex::new(Some(Vec::new())),
        }
    }

    fn pop_idle(&self) -> Result<Option<Idle>, DbError> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        match idle.as_mut() {
            Some(list) => Ok(list.pop()),
            None => Err(sqlx::Error::PoolClosed.into()),
        }
    }

    /// A connection for one task: an idle one (pinged when it idled long), or a new one.
    /// Waits at most `pool_timeout` in all (`PoolTimedOut` after that).
    pub(crate) async fn get(self: &Arc<Self>) -> Result<MySqlReader, DbError> {
        let deadline = Instant::now() + self.acquire_timeout;
        let permit =
            match tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await {
                Ok(Ok(p)) => p,
                Ok(Err(_)) => return Err(sqlx::Error::PoolClosed.into()),
                Err(_) => return Err(sqlx::Error::PoolTimedOut.into()),
            };
        while let Some(mut c) = self.pop_idle()? {
            if self.recycle.is_some_and(|r| c.created.elapsed() > r) {
                close_later(c.conn);
                continue;
            }
            if c.since.elapsed() > PING_AFTER_IDLE {
                match tokio::time::timeout_at(deadline, c.conn.ping()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        tracing::info!(error = %e, "ping on an idle read connection failed");
                        continue;
                    }
                    Err(_) => return Err(sqlx::Error::PoolTimedOut.into()),
                }
            }
            return Ok(self.lease(c.conn, c.created, permit));
        }
        let conn = self.open(deadline).await?;
        Ok(self.lease(conn, Instant::now(), permit))
    }

    fn lease(
        self: &Arc<Self>,
        conn: MySqlConnection,
        created: Instant,
        permit: OwnedSemaphorePermit,
    ) -> MySqlReader {
        MySqlReader {
            conn: Some(ReadConn {
                conn,
                created,
                busy: false,
            }),
            home: self.clone(),
            _permit: permit,
        }
    }

    /// Open a connection, trying again with a back-off (0.1 s doubling up to 1 s) until
    /// `deadline` while the server cannot be reached.
    async fn open(&self, deadline: Instant) -> Result<MySqlConnection, DbError> {
        let mut pause = Duration::from_millis(100);
        loop {
            let attempt = async {
                let mut conn = self.options.connect().await?;
                if let Some(init) = &self.init {
                    conn.execute(AssertSqlSafe(init.clone())).await?;
                }
                Ok::<_, sqlx::Error>(conn)
            };
            let err = match tokio::time::timeout_at(deadline, attempt).await {
                Ok(Ok(conn)) => return Ok(conn),
                Ok(Err(e)) => e,
                Err(_) => return Err(sqlx::Error::PoolTimedOut.into()),
            };
            let unreachable = DbError::from(err);
            if !unreachable.is_connection_error() {
                return Err(unreachable);
            }
            if Instant::now() + pause >= deadline {
                tracing::warn!(error = %unreachable, "no read connection to the database before pool_timeout");
                return Err(sqlx::Error::PoolTimedOut.into());
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Close the idle connections; later checkouts fail with `PoolClosed`, and connections
    /// given back are closed.
    pub(crate) async fn close(&self) {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        for c in idle {
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, c.conn.close()).await;
        }
    }

    /// Put a connection back on the idle list (the most recently used last, the next to be
    /// handed out), or close it when a statement may be unfinished on it; close the idle
    /// ones unused for [`IDLE_TIMEOUT`] (the first of the list: after a peak of load the
    /// connections it opened go away).
    fn give_back(&self, c: ReadConn) {
        let mut stale = Vec::new();
        let mut close = None;
        {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            match idle.as_mut() {
                Some(list) if !c.busy => {
                    let now = Instant::now();
                    let n = stale_count(list.iter().map(|i| i.since), now);
                    stale.extend(list.drain(..n));
                    list.push(Idle {
                        conn: c.conn,
                        created: c.created,
                        since: now,
                    });
                }
                _ => close = Some(c.conn),
            }
        }
        for conn in stale.into_iter().map(|i| i.conn).chain(close) {
            close_later(conn);
        }
    }
}

/// How many of the idle connections, given by when each was given back (oldest first, as
/// the idle list keeps them), have been unused for [`IDLE_TIMEOUT`] at `now`.
fn stale_count(since: impl Iterator<Item = Instant>, now: Instant) -> usize {
    since
        .take_while(|t| now.duration_since(*t) >= IDLE_TIMEOUT)
        .count()
}

/// Close a connection without waiting for it: `COM_QUIT` from a task when there is a
/// runtime (the server frees the session at once), else the socket is just dropped.
fn close_later(conn: MySqlConnection) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, conn.close()).await;
        });
    }
}

struct ReadConn {
    conn: MySqlConnection,
    created: Instant,
    /// A statement was started on it and has not finished: what it left on the connection
    /// is unknown, so it is closed instead of reused.
    busy: bool,
}

/// A read connection lent to one task; given back (or closed) when dropped.
pub(crate) struct MySqlReader {
    conn: Option<ReadConn>,
    home: Arc<MySqlReaders>,
    _permit: OwnedSemaphorePermit,
}

impl MySqlReader {
    /// The connection and its busy mark ([`crate::backend::Conn`] sets it while a statement
    /// runs); `None` only after it was given back, which happens when this is dropped.
    pub(crate) fn parts(&mut self) -> Option<(&mut MySqlConnection, &mut bool)> {
        self.conn.as_mut().map(|c| (&mut c.conn, &mut c.busy))
    }
}

impl Drop for MySqlReader {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.home.give_back(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_unused_for_ten_minutes_are_the_stale_ones() {
        let now = Instant::now() + Duration::from_secs(3600);
        let ago = |secs: u64| now - Duration::from_secs(secs);
        assert_eq!(stale_count([].into_iter(), now), 0);
        assert_eq!(stale_count([ago(5), ago(1)].into_iter(), now), 0);
        assert_eq!(
            stale_count([ago(900), ago(600), ago(599), ago(1)].into_iter(), now),
            2
        );
        assert_eq!(stale_count([ago(1200), ago(601)].into_iter(), now), 2);
    }
}
