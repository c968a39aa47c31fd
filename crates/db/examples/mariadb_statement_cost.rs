//! mariadbd's CPU per execution of prepared statements, one after the other on one
//! connection: what a statement's shape costs the database (docs/performance.md, "Lists and
//! shows, 2026-12-07 23:00 UTC").
//!
//!   cargo run --release -p openkeel-db --example mariadb_statement_cost -- \
//!       mysql://user:pass@host:port/db <mariadbd pid> <executions> bench/mariadb_show_shapes.tsv
//!
//! Each line of the file is `label<TAB>SQL`; every `?` but the last is bound to the project
//! of the database's first cluster, the last to its uuid (a database seeded by
//! `bench/seed.py`). Prints mariadbd's user + system CPU per execution (from
//! `/proc/<pid>/stat`, 10 ms ticks: use thousands of executions) after 200 unmeasured ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use sqlx::{Connection, Executor, MySqlConnection, Row};

fn mariadbd_cpu_ticks(pid: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (url, pid, n) = (&a[1], &a[2], a[3].parse::<usize>().unwrap());
    let mut c = MySqlConnection::connect(url).await.unwrap();
    let r = c
        .fetch_one("SELECT uuid, project_id FROM cluster ORDER BY id LIMIT 1")
        .await
        .unwrap();
    let (uuid, project): (String, String) = (r.get(0), r.get(1));
    let cols = std::fs::read_to_string(&a[4]).unwrap();
    for (label, sql) in cols.lines().filter_map(|l| l.split_once('\t')) {
        let marks = sql.matches('?').count();
        async fn run(
            c: &mut MySqlConnection,
            sql: &str,
            marks: usize,
            uuid: &str,
            project: &str,
        ) -> usize {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()));
            for i in 0..marks {
                q = q.bind(if i + 1 == marks {
                    uuid.to_string()
                } else {
                    project.to_string()
                });
            }
            q.fetch_all(c).await.unwrap().len()
        }
        let rows = run(&mut c, sql, marks, &uuid, &project).await;
        for _ in 0..200 {
            run(&mut c, sql, marks, &uuid, &project).await;
        }
        let t0 = mariadbd_cpu_ticks(pid);
        let w0 = std::time::Instant::now();
        for _ in 0..n {
            run(&mut c, sql, marks, &uuid, &project).await;
        }
        let t1 = mariadbd_cpu_ticks(pid);
        println!(
            "{label}: rows={rows} mariadbd_us/exec={:.1} wall_us/exec={:.1}",
            (t1 - t0) as f64 * 10_000.0 / n as f64,
            w0.elapsed().as_micros() as f64 / n as f64
        );
    }
}
