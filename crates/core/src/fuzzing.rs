//! Entry points of the fuzz targets (`fuzz/fuzz_targets/`, run with `cargo +nightly fuzz`) and of
//! their stable replay (`crates/api/tests/fuzz_corpus.rs`): each takes the raw bytes an outside
//! party controls and drives one parser the way OpenKeel reads that input. Errors are expected
//! results; only a panic, a hang or an unbounded allocation is a finding.

use crate::config::Config;
use crate::pyvalue::{literal_eval, PyValue};

/// `ast.literal_eval` of a text (label values, PATCH values, policy `@`-literals): the value
/// is rendered back with `repr`, `str` and as JSON, as the API does with what it accepted.
pub fn pyvalue(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = literal_eval(text) {
        let _ = v.repr();
        let _ = v.py_str();
        let _ = v.to_json();
        let _ = PyValue::from_json(&v.to_json().unwrap_or_default()).truthy();
    }
}

/// A `magnum.conf` text read as a configuration file: the INI reader, then every option of
/// every registered section converted to its type.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = Config::from_ini_str(&text);
}
