//! Routing against the real Magnum: every (method, path, microversion) of a sweep over the
//! resources, unknown deeper paths and wrong prefixes is sent to OpenKeel's all-in-one and to
//! magnum-api 23.0.0's own WSGI application (`tests/python/magnum_routing_oracle.py`: pecan,
//! the controllers, the hooks and the error middleware from the test venv, in process, with
//! no database). Wherever Magnum answers without reaching a handler (its routing 404 / 405,
//! the microversion 406, WSME's argument errors), OpenKeel must answer the same status, the
//! same `Allow` and the same body. Requests Magnum routes to a handler need its database and
//! are compared by the resource tests instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/api.rs"]
mod api;

use serde_json::{json, Value};

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The sweep's paths: each collection, and under it one to three unknown segments, `detail`
/// with more segments, the nested nodegroups and actions, and wrong or missing prefixes.
fn paths() -> Vec<String> {
    let collections = [
        "clusters",
        "clustertemplates",
        "certificates",
        "quotas",
        "stats",
        "mservices",
        "federations",
        "credentials",
        "clusters/c1/nodegroups",
        "clusters/c1/actions",
        "clusters/c1/actions/resize",
        "clusters/c1/actions/upgrade",
    ];
    let tails = [
        "",
        "/a",
        "/a/b",
        "/a/b/c",
        "/detail",
        "/detail/x",
        "/detail/x/y",
    ];
    let mut out = Vec::new();
    for c in collections {
        for t in tails {
            out.push(format!("/v1/{c}{t}"));
        }
    }
    for p in [
        "/",
        "/v1",
        "/v1/",
        "/v1/x",
        "/v1/x/y",
        "/v2",
        "/v2/clusters",
        "/x/y",
        "/clusters",
        "/clusters/a/b",
        "/V1/clusters",
        "/v1/v1/clusters",
        "/v1/clusters/a/b/nodegroups",
    ] {
        out.push(p.to_string());
    }
    out
}

/// Magnum's answers to `requests`, from its own application in the test venv.
async fn oracle(requests: &[Value]) -> Vec<Value> {
    let python = openkeel_tests::venv_bin("python").expect("test venv");
    let script = openkeel_tests::workspace_root().join("tests/python/magnum_routing_oracle.py");
    let mut child = openkeel_tests::helper(python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(Value::from(requests.to_vec()).to_string().as_bytes())
            .await
            .unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "magnum_routing_oracle.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sorted_allow(v: Option<&str>) -> Option<Vec<String>> {
    v.map(|a| {
        let mut m: Vec<String> = a.split(',').map(|s| s.trim().to_string()).collect();
        m.sort();
        m
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_answers_are_magnums() {
    if openkeel_tests::venv().is_none() {
        assert!(
            !openkeel_tests::in_ci(),
            "CI=true: the test venv is required"
        );
        eprintln!("SKIP: no test venv (OPENKEEL_TEST_VENV)");
        return;
    }
    let (srv, addr) = api::server_with("").await;
    let mut requests = Vec::new();
    for path in paths() {
        for method in METHODS {
            for version in [
                None,
                Some("container-infra 1.1"),
                Some("container-infra 1.14"),
            ] {
                let mut headers = json!({
                    "Accept": "application/json",
                    "X-Roles": "admin,member,reader",
                    "X-Project-Id": "p1",
                    "X-User-Id": "u1",
                });
                if let Some(v) = version {
                    headers["OpenStack-API-Version"] = json!(v);
                }
                requests.push(json!({"method": method, "path": path, "headers": headers}));
            }
        }
    }
    let magnum = oracle(&requests).await;
    assert_eq!(magnum.len(), requests.len());
    let mut compared = 0;
    let mut differences = Vec::new();
    for (req, want) in requests.iter().zip(&magnum) {
        let Some(status) = want["status"].as_u64() else {
            continue; // reached a handler (it needed the database)
        };
        if status >= 500 {
            continue;
        }
        let method = req["method"].as_str().unwrap();
        let path = req["path"].as_str().unwrap();
        let headers: Vec<(String, String)> = req["headers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let got = openkeel_tests::http(addr, method, path, &h, None)
            .await
            .unwrap();
        let body: Value =
            serde_json::from_slice(&got.body).unwrap_or_else(|_| Value::String(got.text()));
        compared += 1;
        let same = u64::from(got.status) == status
            && sorted_allow(got.header("allow")) == sorted_allow(want["allow"].as_str())
            && body == want["body"];
        if !same {
            differences.push(format!(
                "{method} {path} [{}]: Magnum {status} Allow={} {}\n    OpenKeel {} Allow={} {}",
                req["headers"]["OpenStack-API-Version"]
                    .as_str()
                    .unwrap_or("-"),
                want["allow"],
                want["body"],
                got.status,
                got.header("allow").unwrap_or("null"),
                body
            ));
        }
    }
    drop(srv);
    assert!(compared > 500, "only {compared} routing answers compared");
    assert!(
        differences.is_empty(),
        "{} of {compared} routing answers differ from Magnum's:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
