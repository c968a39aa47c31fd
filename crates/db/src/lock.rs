//! Named locks for check-then-act sequences that Magnum leaves racy (the cluster quota
//! check). On MariaDB / MySQL the lock is the server's `GET_LOCK`, so it holds across every
//! process using the database (several openkeel-api workers); on SQLite, whose users are a
//! single process, an in-process lock. Within one process both also serialize on a local
//! mutex, so waiters don't each hold a pooled connection.

use crate::backend::{Dedicated, Pooled, Val};
use crate::{Database, DbError};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

const STRIPES: usize = 64;

fn stripe(name: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Vec<Arc<Mutex<()>>>> = OnceLock::new();
    let locks = LOCKS.get_or_init(|| (0..STRIPES).map(|_| Arc::new(Mutex::new(()))).collect());
    // FNV-1a: stable and cheap; collisions only serialize unrelated names.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    locks[(h % STRIPES as u64) as usize].clone()
}

/// A held named lock. Release it with [`NamedLock::release`]; if it is dropped instead, the
/// server connection holding it is closed (which frees the lock) rather than returned to the
/// pool still holding it.
pub struct NamedLock {
    server: Option<(Pooled, String)>,
    _local: OwnedMutexGuard<()>,
}

/// Take the lock `name`, waiting at most `timeout`; a timeout is `Conflict`.
pub async fn named_lock(
    db: &Database,
    name: &str,
    timeout: Duration,
) -> Result<NamedLock, DbError> {
    let busy = || DbError::Conflict(format!("Timed out waiting for the lock {name}; try again."));
    let local = tokio::time::timeout(timeout, stripe(name).lock_owned())
        .await
        .map_err(|_| busy())?;
    if db.backend() == crate::Backend::Sqlite {
        return Ok(NamedLock {
            server: None,
            _local: local,
        });
    }
    // MariaDB lock names are at most 64 characters.
    let server_name: String = name.chars().take(64).collect();
    let mut c = db.acquire().await?;
    let secs = i64::try_from(timeout.as_secs().max(1)).unwrap_or(i64::MAX);
    let rows = c
        .conn()
        .fetch_all(
            "SELECT GET_LOCK(?, ?)",
            &[Val::from(server_name.as_str()), Val::from(secs)],
        )
        .await?;
    let got = rows.first().map(|r| r.opt_i64(0)).transpose()?.flatten();
    if got != Some(1) {
        return Err(busy());
    }
    Ok(NamedLock {
        server: Some((c, server_name)),
        _local: local,
    })
}

impl NamedLock {
    /// Release the lock (on MariaDB: `RELEASE_LOCK`, then the connection goes back to the pool).
    pub async fn release(mut self) {
        if let Some((mut c, name)) = self.server.take() {
            if let Err(e) = c
                .conn()
                .fetch_all("SELECT RELEASE_LOCK(?)", &[Val::from(name.as_str())])
                .await
            {
                tracing::warn!(lock = name, error = %e, "RELEASE_LOCK failed; closing the connection");
                c.detach();
            }
        }
    }
}

impl Drop for NamedLock {
    fn drop(&mut self) {
        if let Some((c, _)) = self.server.take() {
            c.detach();
        }
    }
}

/// A named lock held for as long as an operation runs, across every process using the
/// database: on MariaDB / MySQL `GET_LOCK` on a connection of its own, taken out of the pool
/// (so a long operation does not hold one of the pool's connections, and a process that
/// dies, however it dies, loses its locks with its connections); on SQLite, whose users are
/// a single process, nothing (the caller serializes within the process). Unlike
/// [`named_lock`] there is no process-wide stripe: the caller keeps its own per-name order.
pub struct HeldLock {
    server: Option<(Dedicated, String)>,
}

/// What one `GET_LOCK` statement may take beyond the wait it asks the server for.
const STATEMENT_MARGIN: Duration = Duration::from_secs(10);

async fn get_lock(
    db: &Database,
    name: &str,
    wait: Duration,
    hold: Duration,
) -> Result<Option<HeldLock>, DbError> {
    if db.backend() == crate::Backend::Sqlite {
        return Ok(Some(HeldLock { server: None }));
    }
    let server_name: String = name.chars().take(64).collect();
    let Some(mut c) = db.acquire().await?.into_dedicated() else {
        return Ok(Some(HeldLock { server: None }));
    };
    // Whole seconds, rounded up (GET_LOCK's unit); 0 is "try".
    let secs =
        i64::try_from(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).unwrap_or(i64::MAX);
    // The session is idle while the lock is held: if this process's host goes away without
    // closing the connection, the server ends the session (and frees the lock) after `hold`
    // rather than after its default `wait_timeout` (8 hours).
    let idle = i64::try_from(hold.as_secs().max(1)).unwrap_or(i64::MAX);
    let sql = format!("SET SESSION wait_timeout = {idle}");
    let set = async { c.conn().fetch_all(&sql, &[]).await };
    match tokio::time::timeout(STATEMENT_MARGIN, set).await {
        Ok(r) => {
            r?;
        }
        Err(_) => {
            return Err(DbError::Conflict(format!(
                "Timed out preparing the lock {name}; try again."
            )))
        }
    }
    let args = [Val::from(server_name.as_str()), Val::from(secs)];
    let statement = async { c.conn().fetch_all("SELECT GET_LOCK(?, ?)", &args).await };
    let rows = match tokio::time::timeout(wait + STATEMENT_MARGIN, statement).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(DbError::Conflict(format!(
                "Timed out waiting for the lock {name}; try again."
            )))
        }
    };
    let got = rows.first().map(|r| r.opt_i64(0)).transpose()?.flatten();
    if got != Some(1) {
        c.close().await;
        return Ok(None);
    }
    Ok(Some(HeldLock {
        server: Some((c, server_name)),
    }))
}

/// Take the lock `name`, waiting at most `wait` for its holder (in any process) to let go;
/// a timeout is `Conflict`. `hold` is the longest the caller keeps it: a process whose host
/// disappears loses it that long after (MariaDB's `wait_timeout` of the lock's session).
pub async fn hold_lock(
    db: &Database,
    name: &str,
    wait: Duration,
    hold: Duration,
) -> Result<HeldLock, DbError> {
    get_lock(db, name, wait, hold).await?.ok_or_else(|| {
        DbError::Conflict(format!("Timed out waiting for the lock {name}; try again."))
    })
}

/// Take the lock `name` if nobody holds it now (`hold` as for [`hold_lock`]).
pub async fn try_hold_lock(
    db: &Database,
    name: &str,
    hold: Duration,
) -> Result<Option<HeldLock>, DbError> {
    get_lock(db, name, Duration::ZERO, hold).await
}

impl HeldLock {
    /// Let go: the session is closed, which frees the lock at once (an explicit
    /// `RELEASE_LOCK` would cost a statement more and nothing else).
    pub async fn release(mut self) {
        if let Some((c, name)) = self.server.take() {
            if tokio::time::timeout(STATEMENT_MARGIN, c.close())
                .await
                .is_err()
            {
                tracing::warn!(lock = name, "closing the lock's connection timed out");
            }
        }
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        // Dropping the connection closes its socket; the server frees the lock when it sees
        // the session end.
        self.server.take();
    }
}
