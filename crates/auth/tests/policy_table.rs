//! OpenKeel's policy engine against decisions made by the real Python oslo.policy with Magnum
//! 23.0.0's default rules (`tests/python/gen_policy_table.py` wrote `tests/data/`).
//!
//! Each test reports every mismatch at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use openkeel_auth::policy::{
    default_rules, parse_rule, sample_yaml, Enforcer, EvalError, PolicyOptions,
};
use serde_json::Value;

const REGENERATE: &str = "regenerate with `/var/tmp/openkeel-policy-venv/bin/python tests/python/gen_policy_table.py` (see tests/python/README.md)";

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn table() -> Value {
    let path = data_dir().join("policy_decisions.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; {REGENERATE}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Decision code → what Python did: `true`, `false` or an exception name.
fn code_of(table: &Value, result: &Result<bool, EvalError>) -> char {
    let wanted = match result {
        Ok(b) => Value::Bool(*b),
        Err(e) => Value::String(e.python_name().to_string()),
    };
    table["codes"]
        .as_object()
        .and_then(|codes| codes.iter().find(|(_, v)| **v == wanted))
        .and_then(|(k, _)| k.chars().next())
        .unwrap_or('?')
}

fn report(what: &str, mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{} {what} mismatches against oslo.policy:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// Compare one row string ("TTF FFT ...": per credential, one code per target).
fn compare_row(
    mismatches: &mut Vec<String>,
    label: &str,
    expected: &str,
    creds: &[(&String, &Value)],
    targets: &[(&String, &Value)],
    mut eval: impl FnMut(&Value, &Value) -> char,
) {
    let groups: Vec<&str> = expected.split(' ').collect();
    if groups.len() != creds.len() {
        mismatches.push(format!(
            "{label}: row has {} groups, {} credentials",
            groups.len(),
            creds.len()
        ));
        return;
    }
    for ((cname, c), group) in creds.iter().zip(groups) {
        let want: Vec<char> = group.chars().collect();
        if want.len() != targets.len() {
            mismatches.push(format!(
                "{label}/{cname}: {} cells for {} targets",
                want.len(),
                targets.len()
            ));
            continue;
        }
        for ((tname, t), w) in targets.iter().zip(want) {
            let got = eval(t, c);
            if got != w {
                mismatches.push(format!(
                    "{label}: creds {cname}, target {tname}: oslo.policy {w}, openkeel {got}"
                ));
            }
        }
    }
}

#[test]
fn every_default_rule_and_override_decides_as_oslo_policy() {
    let table = table();
    let creds: Vec<(&String, &Value)> = table["credentials"].as_object().unwrap().iter().collect();
    let targets: Vec<(&String, &Value)> = table["targets"].as_object().unwrap().iter().collect();
    let mut mismatches = Vec::new();
    let mut cells = 0usize;
    for config in table["configs"].as_array().unwrap() {
        let name = config["name"].as_str().unwrap();
        let o = &config["options"];
        let options = PolicyOptions {
            policy_file: o["policy_file"].as_str().map(PathBuf::from),
            policy_dirs: o["policy_dirs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| PathBuf::from(d.as_str().unwrap()))
                .collect(),
            config_dirs: o["config_dir"]
                .as_str()
                .map(|d| vec![data_dir().join(d)])
                .unwrap_or_default(),
            enforce_new_defaults: o["enforce_new_defaults"].as_bool().unwrap(),
            enforce_scope: true,
        };
        let enforcer = Enforcer::with_default_rule(options, o["default_rule"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("config {name}: {e}"));

        // The effective rule set, rule by rule, in oslo.policy's canonical form.
        let effective: BTreeMap<String, String> = enforcer
            .rules()
            .into_iter()
            .map(|r| (r.name, r.check_str))
            .collect();
        let expected: BTreeMap<String, String> = config["effective"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        for (k, v) in &expected {
            match effective.get(k) {
                Some(mine) if mine == v => {}
                Some(mine) => mismatches.push(format!(
                    "{name}: rule {k}: oslo.policy {v:?}, openkeel {mine:?}"
                )),
                None => mismatches.push(format!("{name}: rule {k} missing")),
            }
        }
        for k in effective.keys().filter(|k| !expected.contains_key(*k)) {
            mismatches.push(format!("{name}: extra rule {k}"));
        }

        for (rule, row) in config["decisions"].as_object().unwrap() {
            let label = format!("{name}: {rule}");
            compare_row(
                &mut mismatches,
                &label,
                row.as_str().unwrap(),
                &creds,
                &targets,
                |t, c| {
                    cells += 1;
                    code_of(&table, &enforcer.try_enforce(rule, t, c))
                },
            );
        }
    }
    report("decision", &mismatches);
    assert!(cells > 30_000, "only {cells} decisions compared");
}

#[test]
fn expressions_evaluate_as_oslo_policy() {
    let table = table();
    let e = &table["expressions"];
    let creds: Vec<(&String, &Value)> = e["credentials"].as_object().unwrap().iter().collect();
    let targets: Vec<(&String, &Value)> = e["targets"].as_object().unwrap().iter().collect();
    let enforcer = Enforcer::new(PolicyOptions {
        policy_file: None,
        policy_dirs: vec![],
        ..PolicyOptions::default()
    })
    .unwrap();
    let mut mismatches = Vec::new();
    for (text, row) in e["decisions"].as_object().unwrap() {
        let check = parse_rule(text);
        compare_row(
            &mut mismatches,
            &format!("{text:?}"),
            row.as_str().unwrap(),
            &creds,
            &targets,
            |t, c| code_of(&table, &enforcer.try_enforce_check(&check, t, c)),
        );
    }
    report("expression", &mismatches);
}

#[test]
fn rules_parse_to_the_same_tree_as_oslo_policy() {
    let table = table();
    let mut mismatches = Vec::new();
    for (text, expected) in table["parse"].as_object().unwrap() {
        let got = parse_rule(text).to_string();
        if got != expected.as_str().unwrap() {
            mismatches.push(format!(
                "{text:?}: oslo.policy {expected}, openkeel {got:?}"
            ));
        }
    }
    report("parse", &mismatches);
}

#[test]
fn registered_defaults_match_magnum() {
    let table = table();
    let expected = table["defaults"].as_array().unwrap();
    let mine = default_rules();
    let mut mismatches = Vec::new();
    if expected.len() != mine.len() {
        mismatches.push(format!(
            "magnum registers {}, openkeel {}",
            expected.len(),
            mine.len()
        ));
    }
    for (i, (want, got)) in expected.iter().zip(mine).enumerate() {
        let ops: Vec<Value> = got
            .operations
            .iter()
            .map(|o| serde_json::json!({"path": o.path, "method": o.method}))
            .collect();
        let dep = got.deprecated_rule.map(|d| {
            serde_json::json!({
                "name": d.name, "check_str": d.check_str,
                "deprecated_reason": d.deprecated_reason, "deprecated_since": d.deprecated_since,
            })
        });
        let fields: [(&str, Value); 10] = [
            ("name", got.name.into()),
            ("check_str", got.check_str.into()),
            ("description", got.description.into()),
            ("operations", ops.into()),
            ("documented", got.documented.into()),
            ("scope_types", got.scope_types.map(|s| s.to_vec()).into()),
            ("deprecated_rule", dep.into()),
            ("deprecated_for_removal", got.deprecated_for_removal.into()),
            ("deprecated_reason", got.deprecated_reason.into()),
            ("deprecated_since", got.deprecated_since.into()),
        ];
        for (field, value) in fields {
            let w = &want[field];
            let equal = match (w, &value) {
                // Operation key order is irrelevant.
                (Value::Array(a), Value::Array(b)) if field == "operations" => {
                    a.len() == b.len()
                        && a.iter()
                            .zip(b)
                            .all(|(x, y)| x["path"] == y["path"] && x["method"] == y["method"])
                }
                _ => *w == value,
            };
            if !equal {
                mismatches.push(format!(
                    "rule #{i} {}: {field}: magnum {w}, openkeel {value}",
                    got.name
                ));
            }
        }
    }
    report("default rule", &mismatches);
}

#[test]
fn sample_matches_oslopolicy_sample_generator() {
    let path = data_dir().join("oslopolicy-sample-magnum.yaml");
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; {REGENERATE}", path.display()));
    let mine = sample_yaml();
    if mine != expected {
        let first = mine
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(mine.lines().count().min(expected.lines().count()));
        panic!(
            "sample differs from oslopolicy-sample-generator from line {}:\n openkeel: {:?}\n oslo:     {:?}",
            first + 1,
            mine.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}
