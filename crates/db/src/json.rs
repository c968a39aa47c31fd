//! JSON in TEXT columns, byte for byte as Magnum writes it.
//!
//! Magnum's `JsonEncodedType` stores `oslo_serialization.jsonutils.dumps(value)`, i.e. Python's
//! `json.dumps` with its defaults: separators `", "` and `": "`, `ensure_ascii=True` (every
//! character outside printable ASCII escaped as `\uXXXX`, lower-case hex, surrogate pairs
//! above U+FFFF), keys in insertion order, floats as Python's `repr`. [`dumps`] reproduces that.
//!
//! Reading is lenient the way Magnum's object layer is: `DictOfStringsField` /
//! `ListOfStringsField` coerce numbers and booleans with Python's `str()` (`true` → `"True"`),
//! and reject nulls and nested containers.

use serde_json::Value;

use openkeel_core::objects::{StringMap, Taint};
use openkeel_core::pyjson::{write_object, write_str};
use openkeel_core::pyvalue::json_str;

/// Python's `json.dumps(value)` with default arguments (`openkeel_core::pyjson`).
pub use openkeel_core::pyjson::dumps;

/// `json.dumps` of a dict of strings.
pub fn dumps_string_map(map: &StringMap) -> String {
    let mut out = String::with_capacity(2 + map.len() * 16);
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(&mut out, k);
        out.push_str(": ");
        write_str(&mut out, v);
    }
    out.push('}');
    out
}

/// `json.dumps` of a list of strings.
pub fn dumps_string_list(list: &[String]) -> String {
    let mut out = String::with_capacity(2 + list.len() * 16);
    out.push('[');
    for (i, v) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_str(&mut out, v);
    }
    out.push(']');
    out
}

/// `json.dumps` of a list of dicts.
pub fn dumps_dict_list(list: &[Taint]) -> String {
    let mut out = String::from("[");
    for (i, v) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_object(&mut out, v);
    }
    out.push(']');
    out
}

/// Python's `str()` of a JSON scalar, as OVO's `StringField` coerces it; `None` for values it
/// rejects (null, arrays, objects).
fn python_str(v: &Value) -> Option<String> {
    match v {
        Value::Null | Value::Array(_) | Value::Object(_) => None,
        scalar => Some(json_str(scalar)),
    }
}

/// Parse a dict-of-strings column.
pub fn parse_string_map(text: &str) -> Result<StringMap, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match v {
        Value::Object(map) => map
            .into_iter()
            .map(|(k, v)| match python_str(&v) {
                Some(s) => Ok((k, s)),
                None => Err(format!("value of {k:?} is not a string: {v}")),
            })
            .collect(),
        other => Err(format!("expected a JSON object, found {other}")),
    }
}

/// Parse a list-of-strings column.
pub fn parse_string_list(text: &str) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match v {
        Value::Array(items) => items
            .iter()
            .map(|v| python_str(v).ok_or_else(|| format!("list item is not a string: {v}")))
            .collect(),
        other => Err(format!("expected a JSON array, found {other}")),
    }
}

/// Parse a list-of-dicts column (`node_taints`).
pub fn parse_dict_list(text: &str) -> Result<Vec<Taint>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match v {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::Object(m) => Ok(m),
                other => Err(format!("list item is not an object: {other}")),
            })
            .collect(),
        other => Err(format!("expected a JSON array, found {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_matches_python() {
        // Expected strings are Python 3 `json.dumps` outputs.
        assert_eq!(dumps(&json!({})), "{}");
        assert_eq!(dumps(&json!([])), "[]");
        assert_eq!(
            dumps(&json!({"kube_tag": "v1.30.1", "min_node_count": "1", "extra": "x"})),
            r#"{"kube_tag": "v1.30.1", "min_node_count": "1", "extra": "x"}"#
        );
        assert_eq!(
            dumps(&json!([{"key": "gpu", "value": "true", "effect": "NoSchedule"}])),
            r#"[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]"#
        );
        assert_eq!(
            dumps(&json!({"a": [1, 2.5, true, null], "b": {"c": -3}})),
            r#"{"a": [1, 2.5, true, null], "b": {"c": -3}}"#
        );
        // ensure_ascii: é, €, 😀 (surrogate pair), control characters, DEL.
        assert_eq!(
            dumps(&json!("é€😀\u{1}\u{7f}\"\\/\n\t")),
            r#""\u00e9\u20ac\ud83d\ude00\u0001\u007f\"\\/\n\t""#
        );
    }

    #[test]
    fn float_repr_matches_python() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (2.5, "2.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (-3.0, "-3.0"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(openkeel_core::pyjson::dumps_float(f), s, "{f}");
        }
    }

    #[test]
    fn typed_dumps_agree_with_generic() {
        let mut m = StringMap::new();
        m.insert("z".into(), "1".into());
        m.insert("a".into(), "ü".into());
        assert_eq!(dumps_string_map(&m), r#"{"z": "1", "a": "\u00fc"}"#);
        assert_eq!(
            dumps_string_list(&["10.0.0.1".into(), "10.0.0.2".into()]),
            r#"["10.0.0.1", "10.0.0.2"]"#
        );
    }

    #[test]
    fn lenient_parse() {
        let m = parse_string_map(r#"{"n0.Ready": true, "x": 1, "y": 1.5, "z": "s"}"#)
            .unwrap_or_default();
        assert_eq!(m.get("n0.Ready").map(String::as_str), Some("True"));
        assert_eq!(m.get("x").map(String::as_str), Some("1"));
        assert_eq!(m.get("y").map(String::as_str), Some("1.5"));
        assert_eq!(
            m.keys().cloned().collect::<Vec<_>>(),
            ["n0.Ready", "x", "y", "z"]
        );
        assert!(parse_string_map(r#"{"a": null}"#).is_err());
        assert!(parse_string_map("[]").is_err());
        assert!(parse_string_list(r#"["a", {"b": 1}]"#).is_err());
        assert_eq!(parse_dict_list("[]").map(|v| v.len()), Ok(0));
    }
}
