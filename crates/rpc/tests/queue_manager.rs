//! Queue declarations compared with the real oslo.messaging on the real broker, with
//! `[oslo_messaging_rabbit] use_queue_manager` on and off: the same RPC server (topic,
//! server name) and one call, first by oslo.messaging (`tests/python/oslo_queue_names.py`),
//! then by OpenKeel. The broker's own view (`rabbitmqctl list_queues name durable
//! auto_delete arguments`) must be the same, with the topic, hostname and random ids put
//! to one side: while they run, and after the server has stopped (oslo deletes a random
//! fanout queue at stop but keeps a queue manager's, whose name comes back on restart).
//! One test in its own binary: it reads the broker's queue list before and after, so no
//! other test of this binary may declare queues meanwhile (queues of other processes, not
//! named for the run's topic or host, are left out).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::server::RpcServer;
use openkeel_rpc::oslo::RabbitSettings;
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

const PROCESS: &str = "magnum-conductor";
const EXCHANGE: &str = "openkeel-qm-test";

struct Echo;

#[async_trait]
impl Dispatcher for Echo {
    async fn dispatch(
        &self,
        _ctx: RequestContext,
        _method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        Ok(Value::Object(args))
    }
}

/// Every queue of the test broker: `name<TAB>durable<TAB>auto_delete<TAB>arguments`.
fn queues() -> BTreeSet<String> {
    let script = openkeel_tests::workspace_root().join("tests/services/rabbitctl.sh");
    let out = Command::new(&script)
        .args([
            "-q",
            "list_queues",
            "name",
            "durable",
            "auto_delete",
            "arguments",
        ])
        .output()
        .expect("run tests/services/rabbitctl.sh");
    assert!(
        out.status.success(),
        "rabbitmqctl list_queues: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("name\t"))
        .map(str::to_string)
        .collect()
}

fn delete_queue(name: &str) {
    let script = openkeel_tests::workspace_root().join("tests/services/rabbitctl.sh");
    let _ = Command::new(&script)
        .args(["-q", "delete_queue", name])
        .output();
}

/// A queue line with the run's topic and hostname, and any 32-hex-digit id, made generic.
fn generic(line: &str, topic: &str, host: &str) -> String {
    let line = line.replace(topic, "<topic>").replace(host, "<host>");
    let mut out = String::new();
    let mut run = String::new();
    for c in line.chars() {
        if c.is_ascii_hexdigit() && c.is_ascii_lowercase() || c.is_ascii_digit() {
            run.push(c);
            continue;
        }
        out.push_str(if run.len() == 32 { "<id>" } else { &run });
        run.clear();
        out.push(c);
    }
    out.push_str(if run.len() == 32 { "<id>" } else { &run });
    out
}

/// The queues one run created, made generic, while it runs and after its server stopped.
struct Seen {
    running: BTreeSet<String>,
    stopped: BTreeSet<String>,
    names: Vec<String>,
}

/// The queues one side declared: new since `before`, and named for its topic or host, or a
/// reply queue (`reply_<id>`): other processes on the same broker (another checkout's
/// conductor, a drill) may declare queues meanwhile.
fn seen(
    before: &BTreeSet<String>,
    running: BTreeSet<String>,
    stopped: BTreeSet<String>,
    topic: &str,
    host: &str,
) -> Seen {
    let ours: BTreeSet<String> = running
        .difference(before)
        .filter(|l| {
            let name = l.split('\t').next().unwrap_or_default();
            name.contains(topic) || name.contains(host) || name.starts_with("reply_")
        })
        .cloned()
        .collect();
    let names = ours
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect();
    let stopped = stopped.intersection(&ours).cloned().collect();
    Seen {
        running: ours,
        stopped,
        names,
    }
}

async fn oslo(python: &Path, url: &str, topic: &str, host: &str, qm: bool) -> Seen {
    let locks = tempfile::tempdir().unwrap();
    let before = queues();
    // a process group of its own: oslo's queue manager reads /proc/<process group>/stat
    let mut child = openkeel_tests::helper(python)
        .arg(openkeel_tests::workspace_root().join("tests/python/oslo_queue_names.py"))
        .args([url, EXCHANGE, topic, "srv1", host, PROCESS])
        .arg(locks.path())
        .arg(if qm { "true" } else { "false" })
        .env("PYTHONWARNINGS", "ignore")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start tests/python/oslo_queue_names.py");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(90), lines.next_line()).await;
    assert!(
        matches!(&line, Ok(Ok(Some(l))) if l == "ready"),
        "oslo.messaging did not get ready: {line:?}"
    );
    let running = queues();
    drop(child.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    assert!(
        matches!(&status, Ok(Ok(s)) if s.success()),
        "oslo.messaging did not stop cleanly: {status:?}"
    );
    let stopped = queues();
    let _ = std::fs::remove_file(format!("/dev/shm/{host}_{PROCESS}_qmanager"));
    seen(&before, running, stopped, topic, host)
}

async fn openkeel(url: &str, topic: &str, host: &str, qm: bool) -> Seen {
    let mut s = RabbitSettings::for_url(url, PROCESS).unwrap();
    s.exchange = EXCHANGE.to_string();
    s.queue_manager = qm.then(|| (host.to_string(), PROCESS.to_string()));
    let s = Arc::new(s);
    let before = queues();
    let server = RpcServer::start(s.clone(), topic.to_string(), "srv1", Arc::new(Echo));
    assert!(server.wait_listening(Duration::from_secs(20)).await);
    let caller = AmqpCaller::new(s, topic.to_string());
    let ctx = RequestContext {
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    };
    let mut a = Args::new();
    a.insert("over".into(), json!("amqp"));
    assert_eq!(
        caller.call(&ctx, "echo", a.clone()).await.unwrap(),
        Value::Object(a)
    );
    let running = queues();
    server.stop().await;
    drop(caller);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stopped = queues();
    seen(&before, running, stopped, topic, host)
}

#[tokio::test]
async fn queue_declarations_match_oslo_messaging_with_and_without_the_queue_manager() {
    let Some(amqp) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(venv) = openkeel_tests::venv() else {
        return;
    };
    let python: PathBuf = venv.join("bin/python");
    let url = amqp.replacen("amqp://", "rabbit://", 1);
    let run = uuid::Uuid::new_v4().simple().to_string();
    for qm in [true, false] {
        let (py_topic, py_host) = (format!("okt-qm-py-{run}"), format!("okpy{}", &run[..8]));
        let (ok_topic, ok_host) = (format!("okt-qm-ok-{run}"), format!("okok{}", &run[..8]));
        let py = oslo(&python, &url, &py_topic, &py_host, qm).await;
        let ok = openkeel(&url, &ok_topic, &ok_host, qm).await;
        let g = |set: &BTreeSet<String>, topic: &str, host: &str| -> BTreeSet<String> {
            set.iter().map(|l| generic(l, topic, host)).collect()
        };
        let py_running = g(&py.running, &py_topic, &py_host);
        let ok_running = g(&ok.running, &ok_topic, &ok_host);
        assert_eq!(
            ok_running, py_running,
            "use_queue_manager={qm}: queues while running (OpenKeel left, oslo right)"
        );
        assert_eq!(
            g(&ok.stopped, &ok_topic, &ok_host),
            g(&py.stopped, &py_topic, &py_host),
            "use_queue_manager={qm}: queues left after the server stopped"
        );
        if qm {
            // The names themselves, as oslo's QManager numbers them: fanout 1, reply 2.
            let want: BTreeSet<String> = [
                "<topic>".to_string(),
                "<topic>.srv1".to_string(),
                "<topic>_fanout_<host>:magnum-conductor:1".to_string(),
                "reply_<host>:magnum-conductor:2".to_string(),
            ]
            .into();
            let names: BTreeSet<String> = ok_running
                .iter()
                .map(|l| l.split('\t').next().unwrap_or_default().to_string())
                .collect();
            assert_eq!(names, want);
        }
        for name in py.names.iter().chain(&ok.names) {
            delete_queue(name);
        }
    }
}

#[test]
fn generic_lines() {
    assert_eq!(
        generic(
            "reply_0123456789abcdef0123456789abcdef\tfalse\tfalse\t[{\"x-expires\",1800000}]",
            "t",
            "h"
        ),
        "reply_<id>\tfalse\tfalse\t[{\"x-expires\",1800000}]"
    );
    assert_eq!(
        generic("top_fanout_hh:magnum-conductor:1\tfalse", "top", "hh"),
        "<topic>_fanout_<host>:magnum-conductor:1\tfalse"
    );
}
