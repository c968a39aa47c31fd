//! `policy/policy.yaml.sample` is exactly what `openkeel-policy-generator` prints.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn policy_generator_prints_the_checked_in_sample() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_openkeel-policy-generator"))
        .output()
        .expect("run openkeel-policy-generator");
    assert!(out.status.success());
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy/policy.yaml.sample");
    let on_disk = std::fs::read(&path).expect("policy/policy.yaml.sample");
    assert!(
        out.stdout == on_disk,
        "policy/policy.yaml.sample is stale: cargo run -q --bin openkeel-policy-generator > policy/policy.yaml.sample"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.yaml");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_openkeel-policy-generator"))
        .arg("--output-file")
        .arg(&file)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read(&file).unwrap(), on_disk);
}
