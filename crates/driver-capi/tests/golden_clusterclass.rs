#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Golden objects: the ClusterClass set OpenKeel writes (`openkeel_driver_capi::clusterclass`)
//! compared, object by object and field by field, with the one magnum-cluster-api 0.38.2
//! applies, produced by magnum-cluster-api's own code in the test venv
//! (`tests/python/capi_golden_clusterclass.py` runs its Rust extension's
//! `Driver.apply_cluster_class` against a recording stand-in of the Kubernetes API).
//!
//! Nothing of the oracle's output is checked in: OpenKeel builds its objects itself, and any
//! difference fails the test unless it is in [`KNOWN_DIFFERENCES`], each of which is listed
//! with its reason in docs/differences.md ("Cluster API driver"). There are none today.

use kube::core::{DynamicObject, Resource};
use openkeel_driver_capi::clusterclass;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// `(object kind, JSON pointer)` of the differences docs/differences.md lists and explains.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// What the oracle printed.
struct Oracle {
    cluster_class_name: String,
    requests: Vec<Value>,
    objects: Vec<Value>,
}

/// Runs the oracle in the test venv, or `None` (skipped) outside CI when there is no venv.
async fn oracle() -> Option<Oracle> {
    let python = openkeel_tests::venv_bin("python")?;
    let script = openkeel_tests::workspace_root()
        .join("tests")
        .join("python")
        .join("capi_golden_clusterclass.py");
    let venv = openkeel_tests::venv()?;
    let probe = tokio::process::Command::new(&python)
        .env("PYTHONPATH", openkeel_tests::capi_site(&venv))
        .args(["-c", "import magnum_cluster_api.magnum_cluster_api"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    if !probe.success() {
        let why = format!(
            "magnum-cluster-api is not installed in the test venv {} \
             (tests/python/requirements-capi.txt; tests/run.sh installs it)",
            python.display()
        );
        if openkeel_tests::in_ci() {
            panic!("{why}");
        }
        eprintln!("SKIPPED (not in CI): {why}");
        return None;
    }
    let child = tokio::process::Command::new(&python)
        .arg(&script)
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the oracle did not finish within 120 s")
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["package_version"], "0.38.2");
    Some(Oracle {
        cluster_class_name: doc["cluster_class_name"].as_str().unwrap().to_string(),
        requests: doc["requests"].as_array().unwrap().clone(),
        objects: doc["objects"].as_array().unwrap().clone(),
    })
}

/// Every difference between `ours` and `theirs`, as `(JSON pointer, ours, theirs)`.
fn diff(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<(String, String, String)>) {
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 160 {
            format!("{}…", s.chars().take(160).collect::<String>())
        } else {
            s
        }
    };
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match b.get(k) {
                    Some(vb) => diff(&p, va, vb, out),
                    None => out.push((p, short(va), "(absent)".into())),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push((p, "(absent)".into(), short(vb)));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}/{i}"), va, vb, out);
            }
        }
        _ if ours == theirs => {}
        _ => out.push((path.to_string(), short(ours), short(theirs))),
    }
}

fn describe(obj: &Value) -> String {
    format!(
        "{} {} {}",
        obj["apiVersion"].as_str().unwrap_or("?"),
        obj["kind"].as_str().unwrap_or("?"),
        obj["metadata"]["name"].as_str().unwrap_or("?")
    )
}

#[tokio::test]
async fn clusterclass_objects_match_magnum_cluster_api() {
    let Some(oracle) = oracle().await else {
        return;
    };
    let ours = clusterclass::objects();

    // the same name: OpenKeel reproduces exactly this release's ClusterClass
    assert_eq!(
        clusterclass::cluster_class_name(),
        oracle.cluster_class_name
    );

    // the same objects in the same order (magnum-cluster-api applies them one by one, GET
    // then POST when absent)
    let ours_ids: Vec<String> = ours.iter().map(describe).collect();
    let theirs_ids: Vec<String> = oracle.objects.iter().map(describe).collect();
    assert_eq!(ours_ids, theirs_ids);
    let methods: Vec<&str> = oracle
        .requests
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["GET", "POST"].repeat(ours.len()));
    // at the same URLs: a GET of the object, then a POST to its collection
    for (i, o) in ours.iter().enumerate() {
        let ar = clusterclass::api_resource(o).expect("an object of the set");
        let ns = o["metadata"]["namespace"].as_str();
        let collection = <DynamicObject as Resource>::url_path(&ar, ns);
        let name = o["metadata"]["name"].as_str().unwrap();
        let path = |r: &Value| {
            r["path"]
                .as_str()
                .unwrap()
                .trim_end_matches('?')
                .to_string()
        };
        assert_eq!(
            path(&oracle.requests[2 * i]),
            format!("{collection}/{name}")
        );
        assert_eq!(path(&oracle.requests[2 * i + 1]), collection);
    }

    let mut unexpected = Vec::new();
    let mut known_seen = Vec::new();
    for (o, t) in ours.iter().zip(&oracle.objects) {
        let kind = o["kind"].as_str().unwrap_or("?");
        let mut d = Vec::new();
        diff("", o, t, &mut d);
        for (path, mine, theirs) in d {
            if KNOWN_DIFFERENCES.contains(&(kind, path.as_str())) {
                known_seen.push((kind, path));
            } else {
                unexpected.push(format!(
                    "{kind} {path}\n    openkeel: {mine}\n    magnum-cluster-api: {theirs}"
                ));
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} difference(s) from magnum-cluster-api 0.38.2 (fix them or list them in \
         docs/differences.md and KNOWN_DIFFERENCES):\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    // a listed difference that no longer exists must leave the list (and the document)
    for (kind, path) in KNOWN_DIFFERENCES {
        assert!(
            known_seen.iter().any(|(k, p)| k == kind && p == path),
            "{kind} {path} is listed as a known difference but the objects agree there"
        );
    }
}

/// The ClusterClass's variables and patches one by one (a clearer failure than the whole
/// object's diff when one is added, dropped or moved).
#[tokio::test]
async fn variables_and_patches_match_one_by_one() {
    let Some(oracle) = oracle().await else {
        return;
    };
    let theirs = oracle
        .objects
        .iter()
        .find(|o| o["kind"] == "ClusterClass")
        .expect("the oracle applied no ClusterClass");
    let ours = clusterclass::objects().pop().unwrap();
    for list in ["variables", "patches"] {
        let names = |cc: &Value| -> Vec<String> {
            cc["spec"][list]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(names(&ours), names(theirs), "{list} (names, in order)");
        for (a, b) in ours["spec"][list]
            .as_array()
            .unwrap()
            .iter()
            .zip(theirs["spec"][list].as_array().unwrap())
        {
            assert_eq!(a, b, "{list}: {}", a["name"]);
        }
    }
    assert_eq!(
        theirs["spec"]["variables"].as_array().map(Vec::len),
        Some(39)
    );
}

#[test]
fn the_oracle_script_exists() {
    let script: PathBuf = openkeel_tests::workspace_root()
        .join("tests")
        .join("python")
        .join("capi_golden_clusterclass.py");
    assert!(script.is_file(), "{}", script.display());
}
