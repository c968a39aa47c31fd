//! Entry points of the fuzz targets (`fuzz/fuzz_targets/`) and of their stable replay
//! (`crates/api/tests/fuzz_corpus.rs`); see `openkeel_core::fuzzing`.

use crate::policy::parse_file_bytes;
use crate::policy::parse_rule_with_warnings;
use std::path::Path;

/// A rule in the oslo.policy language (a policy file's value, a `rule:` reference's target).
pub fn policy_rule(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (check, _) = parse_rule_with_warnings(text);
    let _ = check.to_string();
}

/// A policy file (YAML or JSON) as the enforcer loads it: the document, then every rule parsed
/// (text in the policy language, or a list of lists), and each check rendered back.
pub fn policy_file(data: &[u8]) {
    if let Ok(rules) = parse_file_bytes(Path::new("policy.yaml"), data.to_vec()) {
        for (_, check) in rules {
            let _ = check.to_string();
        }
    }
}

/// A Keystone token validation body (`GET /v3/auth/tokens`) through keystonemiddleware's
/// checks and the identity headers built from it.
pub fn token_body(data: &[u8]) {
    crate::authtoken::fuzz_token_body(data);
}
