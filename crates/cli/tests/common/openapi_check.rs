//! Answers checked against `docs/openapi.json` (`tests/python/openapi_check.py`, the test
//! venv's Python): recorded exchanges, and a recording proxy that puts any suite's traffic
//! (the real clients' included) in front of the checker.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use openkeel_tests::RawResponse;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// `docs/openapi.json`.
pub fn document_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json")
}

/// Run `openapi_check.py ARGS...`: whether it passed and what it printed; `None` without
/// the test venv.
pub fn run(args: &[&str]) -> Option<(bool, String)> {
    let python = openkeel_tests::venv_bin("python")?;
    let script = openkeel_tests::workspace_root().join("tests/python/openapi_check.py");
    let out = openkeel_tests::helper_blocking(&python)
        .arg(&script)
        .args(args)
        .output()
        .expect("run openapi_check.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), text))
}

/// One exchange as the checker reads it.
pub fn exchange(method: &str, path: &str, r: &RawResponse) -> Value {
    json!({
        "method": method,
        "path": path,
        "status": r.status,
        "headers": r
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<serde_json::Map<String, Value>>(),
        "body": r.text(),
    })
}

/// Check `exchanges` against the document: the checker's report (`{"problems", "covered"}`),
/// panicking with its problems when an answer does not match. `None` without the venv.
pub fn assert_exchanges_match(exchanges: &[Value], dir: &Path) -> Option<Value> {
    let file = dir.join("exchanges.json");
    std::fs::write(&file, serde_json::to_vec(exchanges).unwrap()).unwrap();
    let doc = document_path();
    let (ok, text) = run(&["exchanges", doc.to_str().unwrap(), file.to_str().unwrap()])?;
    assert!(ok, "answers that do not match docs/openapi.json:\n{text}");
    Some(serde_json::from_str(&text).expect("the checker's report"))
}

/// A recording HTTP proxy in front of `upstream`: every request is forwarded as it came (one
/// connection each) and every answer passed back unchanged and recorded as an [`exchange`].
pub struct Recording {
    pub addr: SocketAddr,
    pub exchanges: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Recording {
    pub async fn start(upstream: SocketAddr) -> Recording {
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .fallback(forward)
            .with_state((upstream, exchanges.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Recording {
            addr,
            exchanges,
            task,
        }
    }

    pub fn taken(&self) -> Vec<Value> {
        self.exchanges.lock().unwrap().clone()
    }

    /// At least `min` exchanges were recorded, and every answer matches the document
    /// ([`assert_exchanges_match`]); says how many did, for `what`.
    pub fn assert_all_match(&self, min: usize, dir: &Path, what: &str) {
        let exchanges = self.taken();
        assert!(
            exchanges.len() >= min,
            "{} exchanges recorded",
            exchanges.len()
        );
        if let Some(report) = assert_exchanges_match(&exchanges, dir) {
            eprintln!(
                "{} answers to {what} match docs/openapi.json ({} operations)",
                exchanges.len(),
                report["covered"].as_array().map_or(0, Vec::len)
            );
        }
    }
}

type Upstream = (SocketAddr, Arc<Mutex<Vec<Value>>>);

async fn forward(State((upstream, exchanges)): State<Upstream>, req: Request) -> Response {
    let method = req.method().as_str().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".to_string());
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "host" | "connection" | "content-length"))
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = axum::body::to_bytes(req.into_body(), 64 << 20)
        .await
        .expect("request body");
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let has_body = !body.is_empty() || matches!(method.as_str(), "POST" | "PATCH" | "PUT");
    let r = openkeel_tests::http(upstream, &method, &path, &h, has_body.then_some(&body[..]))
        .await
        .expect("the upstream answers");
    exchanges.lock().unwrap().push(exchange(&method, &path, &r));
    let mut out = Response::builder().status(r.status);
    for (k, v) in &r.headers {
        if !matches!(
            k.as_str(),
            "connection" | "content-length" | "transfer-encoding"
        ) {
            out = out.header(k.as_str(), v.as_str());
        }
    }
    out.body(Body::from(r.body)).expect("a response")
}
