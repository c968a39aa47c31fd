//! Tenant isolation with real Keystone tokens: every route × {admin, member of the owning
//! project, member of another project, reader of the owning project, no token}, against the
//! all-in-one server with `auth_strategy = keystone`.
//!
//! The expected decisions are not written by hand: every (rule, caller, target) is evaluated
//! by the real Magnum 23.0.0 policy (`tests/python/magnum_policy_oracle.py`: Magnum's own
//! `RequestContext` and `policy.enforce` on oslo.policy, in the test venv), and the caller's
//! roles are the ones Keystone put in the token. On top of the policy decision come the two
//! things around it: no token → 401 (keystonemiddleware's `auth_token`), and an object of
//! another project looked up with tenant scoping → 404 (admins see other projects'
//! objects only on the routes Magnum widens).
//!
//! A second test overrides rules through a policy file and checks that OpenKeel and Magnum's
//! policy (loading the same file) still agree, and that the file is re-read when it changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_tests::{http, Keystone, RawResponse};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const USERS: [&str; 4] = ["admin", "demo", "alt", "demo-reader"];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    /// The handler passes no target: the caller's own project and user.
    Default,
    /// The cluster's dict (`project_id`, `user_id` of demo).
    Cluster,
    /// The template's dict.
    Template,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Lookup {
    /// No object of another project is involved.
    None,
    /// An object of demo's project is loaded with tenant scoping; admins see it when the
    /// route is widened (`all_tenants`).
    Scoped { widened: bool },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fixture {
    /// Uses the shared cluster.
    Shared,
    /// Changes or deletes the cluster: a fresh one per caller that is let through.
    Fresh,
}

struct Route {
    method: &'static str,
    /// `{T}` template, `{T2}` upgrade template, `{C}` cluster, `{P}` demo's project id,
    /// `{U}` the caller's name.
    path: &'static str,
    rule: &'static str,
    target: Target,
    lookup: Lookup,
    fixture: Fixture,
    body: Option<&'static str>,
    /// The status of an object of another project: 404, except where Magnum looks the
    /// object up while reading the body (400 `Cluster … could not be found.`).
    hidden: u16,
}

const fn r(
    method: &'static str,
    path: &'static str,
    rule: &'static str,
    target: Target,
    lookup: Lookup,
) -> Route {
    Route {
        method,
        path,
        rule,
        target,
        lookup,
        fixture: Fixture::Shared,
        body: None,
        hidden: 404,
    }
}

const SCOPED: Lookup = Lookup::Scoped { widened: false };
const WIDENED: Lookup = Lookup::Scoped { widened: true };

fn routes() -> Vec<Route> {
    use Target::*;
    let with = |mut r: Route, body: &'static str| {
        r.body = Some(body);
        r
    };
    let fresh = |mut r: Route| {
        r.fixture = Fixture::Fresh;
        r
    };
    vec![
        r(
            "GET",
            "/v1/clustertemplates",
            "clustertemplate:get_all",
            Default,
            Lookup::None,
        ),
        r(
            "GET",
            "/v1/clustertemplates/detail",
            "clustertemplate:detail",
            Default,
            Lookup::None,
        ),
        r(
            "GET",
            "/v1/clustertemplates/{T}",
            "clustertemplate:get",
            Template,
            WIDENED,
        ),
        with(
            r(
                "POST",
                "/v1/clustertemplates",
                "clustertemplate:create",
                Default,
                Lookup::None,
            ),
            r#"{"name": "tpl-{U}", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small"}"#,
        ),
        with(
            r(
                "PATCH",
                "/v1/clustertemplates/{T}",
                "clustertemplate:update",
                Template,
                SCOPED,
            ),
            r#"[{"op": "replace", "path": "/docker_volume_size", "value": 7}]"#,
        ),
        // referenced by the shared cluster: a caller let through gets 400, nothing is deleted
        r(
            "DELETE",
            "/v1/clustertemplates/{T}",
            "clustertemplate:delete",
            Template,
            WIDENED,
        ),
        r(
            "GET",
            "/v1/clusters",
            "cluster:get_all",
            Default,
            Lookup::None,
        ),
        r(
            "GET",
            "/v1/clusters/detail",
            "cluster:detail",
            Default,
            Lookup::None,
        ),
        r("GET", "/v1/clusters/{C}", "cluster:get", Cluster, WIDENED),
        with(
            r("POST", "/v1/clusters", "cluster:create", Default, SCOPED),
            r#"{"name": "c-{U}", "cluster_template_id": "{T}", "master_count": 1, "node_count": 1}"#,
        ),
        fresh(with(
            r(
                "PATCH",
                "/v1/clusters/{C}",
                "cluster:update",
                Cluster,
                WIDENED,
            ),
            r#"[{"op": "replace", "path": "/node_count", "value": 2}]"#,
        )),
        fresh(with(
            r(
                "POST",
                "/v1/clusters/{C}/actions/resize",
                "cluster:resize",
                Cluster,
                SCOPED,
            ),
            r#"{"node_count": 2}"#,
        )),
        fresh(with(
            r(
                "POST",
                "/v1/clusters/{C}/actions/upgrade",
                "cluster:upgrade",
                Cluster,
                WIDENED,
            ),
            r#"{"cluster_template": "{T2}", "max_batch_size": 1}"#,
        )),
        fresh(r(
            "DELETE",
            "/v1/clusters/{C}",
            "cluster:delete",
            Cluster,
            WIDENED,
        )),
        r(
            "GET",
            "/v1/clusters/{C}/nodegroups",
            "nodegroup:get_all",
            Default,
            WIDENED,
        ),
        r(
            "GET",
            "/v1/clusters/{C}/nodegroups/default-worker",
            "nodegroup:get",
            Default,
            WIDENED,
        ),
        with(
            r(
                "POST",
                "/v1/clusters/{C}/nodegroups",
                "nodegroup:create",
                Default,
                SCOPED,
            ),
            r#"{"name": "ng-{U}", "node_count": 1}"#,
        ),
        with(
            r(
                "PATCH",
                "/v1/clusters/{C}/nodegroups/default-worker",
                "nodegroup:update",
                Default,
                SCOPED,
            ),
            r#"[{"op": "replace", "path": "/max_node_count", "value": 5}]"#,
        ),
        // a default nodegroup: a caller let through gets 400, nothing is deleted
        r(
            "DELETE",
            "/v1/clusters/{C}/nodegroups/default-worker",
            "nodegroup:delete",
            Default,
            SCOPED,
        ),
        r(
            "GET",
            "/v1/certificates/{C}",
            "certificate:get",
            Cluster,
            SCOPED,
        ),
        Route {
            hidden: 400,
            ..with(
                r(
                    "POST",
                    "/v1/certificates",
                    "certificate:create",
                    Cluster,
                    SCOPED,
                ),
                r#"{"cluster_uuid": "{C}", "csr": "not a CSR"}"#,
            )
        },
        r(
            "PATCH",
            "/v1/certificates/{C}",
            "certificate:rotate_ca",
            Cluster,
            SCOPED,
        ),
        r(
            "PATCH",
            "/v1/credentials/{C}",
            "credential:rotate",
            Default,
            SCOPED,
        ),
        r("GET", "/v1/quotas", "quota:get_all", Default, Lookup::None),
        with(
            r("POST", "/v1/quotas", "quota:create", Default, Lookup::None),
            r#"{"project_id": "{P}", "resource": "Cluster", "hard_limit": 50}"#,
        ),
        r("GET", "/v1/stats", "stats:get_all", Default, Lookup::None),
        r(
            "GET",
            "/v1/mservices",
            "magnum-service:get_all",
            Default,
            Lookup::None,
        ),
        r(
            "GET",
            "/v1/federations",
            "federation:get_all",
            Default,
            Lookup::None,
        ),
        r(
            "GET",
            "/v1/federations/detail",
            "federation:detail",
            Default,
            Lookup::None,
        ),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Unauthorized,
    Hidden,
    Denied,
    Allowed,
}

struct Caller {
    name: &'static str,
    token: String,
    user_id: String,
    project_id: String,
    /// Magnum's `RequestContext` keyword arguments for this caller.
    context: Value,
}

async fn caller(ks: &Keystone, name: &'static str) -> Caller {
    let (token, body) = ks.login(name, Some(&ks.project_of(name))).await;
    let t = &body["token"];
    let roles: Vec<Value> = t["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    let user_id = t["user"]["id"].as_str().unwrap().to_string();
    let project_id = t["project"]["id"].as_str().unwrap().to_string();
    let context = json!({
        "user_id": user_id, "user_name": name, "project_id": project_id,
        "project_name": t["project"]["name"], "user_domain_id": t["user"]["domain"]["id"],
        "user_domain_name": t["user"]["domain"]["name"], "roles": roles,
        "auth_token": "redacted",
    });
    Caller {
        name,
        token,
        user_id,
        project_id,
        context,
    }
}

/// Ask Magnum's policy (the real one, in the test venv) about every check.
async fn oracle(policy_file: Option<&Path>, checks: &[Value]) -> Vec<bool> {
    let python = openkeel_tests::venv_bin("python").expect("test venv");
    let script = openkeel_tests::workspace_root().join("tests/python/magnum_policy_oracle.py");
    let input = json!({"policy_file": policy_file, "checks": checks}).to_string();
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
        stdin.write_all(input.as_bytes()).await.unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "magnum_policy_oracle.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

struct Server {
    srv: Option<openkeel::allinone::Running>,
    addr: SocketAddr,
}

async fn start(dir: &Path, ks: &Keystone, extra: &str) -> Server {
    let conf = dir.join("test.conf");
    std::fs::write(
        &conf,
        format!(
            "[openkeel]\nauth_strategy = keystone\nstatus_sync_interval = 1\n\n[keystone_authtoken]\nwww_authenticate_uri = {url}\nauth_url = {url}\nauth_type = password\nusername = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n{extra}",
            url = ks.url,
            pw = ks.password("magnum"),
        ),
    )
    .unwrap();
    let config = openkeel::allinone::load_config(dir, &[conf], &[]).unwrap();
    let srv = openkeel::allinone::start(openkeel::allinone::Options {
        bind: Some("127.0.0.1:0".parse().unwrap()),
        config,
        config_dirs: vec![dir.to_path_buf()],
    })
    .await
    .unwrap();
    let addr = srv.addr;
    Server {
        srv: Some(srv),
        addr,
    }
}

async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> RawResponse {
    let mut h: Vec<(&str, &str)> = vec![("OpenStack-API-Version", "container-infra latest")];
    if let Some(t) = token {
        h.push(("X-Auth-Token", t));
    }
    if body.is_some() {
        h.push(("Content-Type", "application/json"));
    }
    http(addr, method, path, &h, body.map(str::as_bytes))
        .await
        .unwrap()
}

async fn ok_json(addr: SocketAddr, method: &str, path: &str, token: &str, body: &str) -> Value {
    let r = call(addr, method, path, Some(token), Some(body)).await;
    assert!(
        (200..300).contains(&r.status),
        "{method} {path}: {} {}",
        r.status,
        r.text()
    );
    serde_json::from_slice(&r.body).unwrap()
}

async fn wait_complete(addr: SocketAddr, token: &str, cluster: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = call(
            addr,
            "GET",
            &format!("/v1/clusters/{cluster}"),
            Some(token),
            None,
        )
        .await;
        let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let status = v["status"].as_str().unwrap_or_default();
        if status.ends_with("_COMPLETE") {
            return;
        }
        assert!(!status.ends_with("FAILED"), "cluster {cluster}: {v}");
        assert!(Instant::now() < deadline, "cluster {cluster} stuck: {v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

struct Fixtures {
    template: String,
    template2: String,
    cluster: String,
    fresh_count: usize,
}

async fn new_cluster(addr: SocketAddr, demo: &Caller, f: &mut Fixtures) -> String {
    f.fresh_count += 1;
    let body = format!(
        r#"{{"name": "fresh-{}", "cluster_template_id": "{}", "master_count": 1, "node_count": 1}}"#,
        f.fresh_count, f.template
    );
    let c = ok_json(addr, "POST", "/v1/clusters", &demo.token, &body).await;
    let uuid = c["uuid"].as_str().unwrap().to_string();
    wait_complete(addr, &demo.token, &uuid).await;
    uuid
}

async fn fixtures(addr: SocketAddr, demo: &Caller) -> Fixtures {
    let tpl = |name: &str, tag: &str| {
        format!(
            r#"{{"name": "{name}", "image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small", "labels": {{"kube_tag": "{tag}"}}}}"#
        )
    };
    let t = ok_json(
        addr,
        "POST",
        "/v1/clustertemplates",
        &demo.token,
        &tpl("demo-t", "v1.30.4"),
    )
    .await;
    let t2 = ok_json(
        addr,
        "POST",
        "/v1/clustertemplates",
        &demo.token,
        &tpl("demo-t2", "v1.31.1"),
    )
    .await;
    let mut f = Fixtures {
        template: t["uuid"].as_str().unwrap().to_string(),
        template2: t2["uuid"].as_str().unwrap().to_string(),
        cluster: String::new(),
        fresh_count: 0,
    };
    f.cluster = new_cluster(addr, demo, &mut f).await;
    f
}

fn target(kind: Target, owner: &Caller, caller: Option<&Caller>) -> Value {
    match kind {
        Target::Default => match caller {
            Some(c) => json!({"project_id": c.project_id, "user_id": c.user_id}),
            None => Value::Null,
        },
        Target::Cluster | Target::Template => {
            json!({"project_id": owner.project_id, "user_id": owner.user_id})
        }
    }
}

fn fill(s: &str, f: &Fixtures, cluster: &str, owner: &Caller, who: &str) -> String {
    s.replace("{T2}", &f.template2)
        .replace("{T}", &f.template)
        .replace("{C}", cluster)
        .replace("{P}", &owner.project_id)
        .replace("{U}", who)
}

/// Run the matrix; returns the failures.
async fn run_matrix(
    addr: SocketAddr,
    callers: &[Caller],
    policy_file: Option<&Path>,
    f: &mut Fixtures,
) -> Vec<String> {
    let demo = callers.iter().find(|c| c.name == "demo").unwrap();
    let routes = routes();
    // The decisions, all in one oracle call.
    let mut checks = Vec::new();
    for route in &routes {
        for c in callers {
            checks.push(json!({"rule": route.rule, "context": c.context,
                "target": target(route.target, demo, Some(c))}));
        }
    }
    let decisions = oracle(policy_file, &checks).await;
    let mut failures = Vec::new();
    let mut i = 0;
    for route in &routes {
        for c in callers.iter().map(Some).chain([None]) {
            let expect = match c {
                None => Expect::Unauthorized,
                Some(c) => {
                    let allowed_by_policy = decisions[i];
                    i += 1;
                    let is_admin = c.name == "admin";
                    let other_project = c.project_id != demo.project_id;
                    match route.lookup {
                        Lookup::Scoped { widened } if other_project && !(is_admin && widened) => {
                            Expect::Hidden
                        }
                        _ if allowed_by_policy => Expect::Allowed,
                        _ => Expect::Denied,
                    }
                }
            };
            let who = c.map(|c| c.name).unwrap_or("anonymous");
            let cluster = if route.fixture == Fixture::Fresh && expect == Expect::Allowed {
                new_cluster(addr, demo, f).await
            } else {
                f.cluster.clone()
            };
            let path = fill(route.path, f, &cluster, demo, who);
            let body = route.body.map(|b| fill(b, f, &cluster, demo, who));
            let resp = call(
                addr,
                route.method,
                &path,
                c.map(|c| c.token.as_str()),
                body.as_deref(),
            )
            .await;
            let ok = match expect {
                Expect::Unauthorized => resp.status == 401,
                Expect::Hidden => {
                    resp.status == route.hidden && resp.text().contains("could not be found")
                }
                Expect::Denied => {
                    resp.status == 403
                        && resp.text().contains(&format!(
                            "Policy doesn't allow {} to be performed.",
                            route.rule
                        ))
                }
                Expect::Allowed => ![401, 403, 404].contains(&resp.status) && resp.status < 500,
            };
            if !ok {
                failures.push(format!(
                    "{} {} as {who}: expected {expect:?}, got {} {}",
                    route.method,
                    route.path,
                    resp.status,
                    resp.text()
                ));
            }
        }
    }
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolation_matrix_with_magnum_default_policy() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    if openkeel_tests::venv().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), &ks, "").await;
    let mut callers = Vec::new();
    for u in USERS {
        callers.push(caller(&ks, u).await);
    }
    let demo = callers.iter().find(|c| c.name == "demo").unwrap();
    let mut f = fixtures(server.addr, demo).await;
    let failures = run_matrix(server.addr, &callers, None, &mut f).await;
    server.srv.take().unwrap().stop().await.unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cells differ:\n{}",
        failures.len(),
        routes().len() * (USERS.len() + 1),
        failures.join("\n")
    );
}

/// The overrides used by the policy-file test: readers may no longer list clusters,
/// members may not create templates, anyone in the project may list services.
const OVERRIDES: &str = "\"cluster:get_all\": \"rule:context_is_admin or (role:member and project_id:%(project_id)s)\"\n\"clustertemplate:create\": \"rule:context_is_admin\"\n\"magnum-service:get_all\": \"role:reader\"\n";

fn write(path: &PathBuf, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_file_overrides_with_real_tokens() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    if openkeel_tests::venv().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    // The fixtures are made under the defaults (the overrides forbid demo to create
    // templates), then the overrides are written: the running server picks them up.
    write(&policy, "# no overrides yet\n");
    // a relative policy_file is found in the configuration directories
    let mut server = start(
        dir.path(),
        &ks,
        "\n[oslo_policy]\npolicy_file = policy.yaml\n",
    )
    .await;
    let mut callers = Vec::new();
    for u in USERS {
        callers.push(caller(&ks, u).await);
    }
    let demo = callers.iter().find(|c| c.name == "demo").unwrap();
    let mut f = fixtures(server.addr, demo).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    write(&policy, OVERRIDES);
    // the API looks at the files' modification times at most every 100 ms
    tokio::time::sleep(Duration::from_millis(300)).await;
    let failures = run_matrix(server.addr, &callers, Some(&policy), &mut f).await;
    assert!(
        failures.is_empty(),
        "with the overrides:\n{}",
        failures.join("\n")
    );

    // Spot checks that the overrides bite (the oracle agreeing is not enough on its own).
    let by: HashMap<&str, &Caller> = callers.iter().map(|c| (c.name, c)).collect();
    let r = call(
        server.addr,
        "GET",
        "/v1/clusters",
        Some(&by["demo-reader"].token),
        None,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text());
    let r = call(
        server.addr,
        "GET",
        "/v1/mservices",
        Some(&by["alt"].token),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());

    // The file changes: the next request sees the new rules (oslo.policy reloads on mtime).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    write(&policy, "\"cluster:get_all\": \"!\"\n");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = call(
        server.addr,
        "GET",
        "/v1/clusters",
        Some(&by["admin"].token),
        None,
    )
    .await;
    assert_eq!(r.status, 403, "after the reload: {}", r.text());
    let r = call(
        server.addr,
        "GET",
        "/v1/mservices",
        Some(&by["alt"].token),
        None,
    )
    .await;
    assert_eq!(
        r.status,
        403,
        "the mservices override is gone: {}",
        r.text()
    );
    let r = call(
        server.addr,
        "GET",
        "/v1/clusters/detail",
        Some(&by["demo-reader"].token),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    server.srv.take().unwrap().stop().await.unwrap();
}
