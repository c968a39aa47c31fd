//! Policy files: YAML (or JSON, which YAML reads) mapping rule names to rules, read as
//! `oslo_policy.policy.parse_file_contents` does with `yaml.safe_load`.
//!
//! Values are kept as Python would see them ([`PyValue`], `openkeel_core::pyvalue`) because
//! oslo.policy hands non-string values to its legacy list-of-lists parser, where their
//! truthiness and iterability decide the outcome. Duplicate keys keep the last value, as PyYAML
//! does.
//!
//! Known difference: serde_yaml resolves plain scalars by YAML 1.2, PyYAML by YAML 1.1, so an
//! unquoted `yes`/`no`/`on`/`off` or a sexagesimal `1:30` is a string here and a bool or int
//! in Python. Quoted values (the normal way to write a rule) are read identically.

use openkeel_core::pyvalue::PyValue;

/// `parse_file_contents`: the document's `(name, value)` pairs in file order. A falsy
/// document (empty, `null`, `{}`, `[]`) has no rules; any other non-mapping is an error.
/// Non-string keys are returned as their `repr` in `skipped` (no rule name can reach them).
pub(crate) fn parse_document(text: &str) -> Result<ParsedDocument, String> {
    let value: PyValue = if text.trim().is_empty() {
        PyValue::None
    } else {
        serde_yaml::from_str(text).map_err(|e| e.to_string())?
    };
    if !value.truthy() {
        return Ok(ParsedDocument::default());
    }
    let PyValue::Dict(entries) = value else {
        return Err(format!(
            "AttributeError: '{}' object has no attribute 'items'",
            value.type_name()
        ));
    };
    let mut doc = ParsedDocument::default();
    for (k, v) in entries {
        match k {
            PyValue::Str(name) => doc.rules.push((name, v)),
            other => doc.skipped.push(other.repr()),
        }
    }
    Ok(doc)
}

#[derive(Debug, Default)]
pub(crate) struct ParsedDocument {
    pub(crate) rules: Vec<(String, PyValue)>,
    pub(crate) skipped: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_documents() {
        let d = parse_document("\"a\": \"role:x\"\nb: rule:a\nc:\nd: [[\"role:y\"]]\n")
            .map(|d| d.rules);
        assert_eq!(
            d,
            Ok(vec![
                ("a".into(), PyValue::Str("role:x".into())),
                ("b".into(), PyValue::Str("rule:a".into())),
                ("c".into(), PyValue::None),
                (
                    "d".into(),
                    PyValue::List(vec![PyValue::List(vec![PyValue::Str("role:y".into())])])
                ),
            ])
        );
        let j = parse_document("{\"a\": \"@\", \"b\": [], \"a\": \"!\"}").map(|d| d.rules);
        assert_eq!(
            j,
            Ok(vec![
                ("a".into(), PyValue::Str("!".into())),
                ("b".into(), PyValue::List(vec![])),
            ])
        );
    }

    #[test]
    fn falsy_and_invalid_documents() {
        for t in ["", "   \n", "null", "{}", "[]", "~", "0", "false"] {
            assert!(parse_document(t).is_ok_and(|d| d.rules.is_empty()), "{t:?}");
        }
        assert!(parse_document("[1]").is_err());
        assert!(parse_document("just a string").is_err());
        assert!(parse_document("a: [").is_err());
        let d = parse_document("1: role:a\nx: y").ok();
        assert_eq!(
            d.as_ref().map(|d| d.skipped.clone()),
            Some(vec!["1".to_string()])
        );
        // Keys compare with Python `==`: PyYAML 6 reads `1: a`, `true: b`, `1.0: c` as
        // `{1: 'c'}` (one key, its first spelling, the last value).
        let d = parse_document("1: a\ntrue: b\n1.0: c\nx: y").ok();
        assert_eq!(
            d.as_ref().map(|d| d.skipped.clone()),
            Some(vec!["1".to_string()])
        );
    }
}
