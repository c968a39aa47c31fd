//! Policy files: YAML (or JSON, which YAML reads) mapping rule names to rules, read as
//! `oslo_policy.policy.parse_file_contents` does with `yaml.safe_load`.
//!
//! Values are kept as Python would see them ([`PyValue`]) because oslo.policy hands non-string
//! values to its legacy list-of-lists parser, where their truthiness and iterability decide
//! the outcome. Duplicate keys keep the last value, as PyYAML does.
//!
//! Known difference: serde_yaml resolves plain scalars by YAML 1.2, PyYAML by YAML 1.1, so an
//! unquoted `yes`/`no`/`on`/`off` or a sexagesimal `1:30` is a string here and a bool or int
//! in Python. Quoted values (the normal way to write a rule) are read identically.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::pyval;

/// A value of a parsed policy document, as a Python object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyValue {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<PyValue>),
    /// Insertion-ordered, unique keys.
    Dict(Vec<(PyValue, PyValue)>),
}

impl PyValue {
    pub(crate) fn truthy(&self) -> bool {
        match self {
            PyValue::None => false,
            PyValue::Bool(b) => *b,
            PyValue::Int(i) => *i != 0,
            PyValue::Float(f) => *f != 0.0,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::List(l) => !l.is_empty(),
            PyValue::Dict(d) => !d.is_empty(),
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Dict(_) => "dict",
        }
    }

    /// `iter(value)`: list items, dict keys, str characters; `TypeError` otherwise.
    pub(crate) fn iterate(&self) -> Result<Vec<PyValue>, String> {
        match self {
            PyValue::List(l) => Ok(l.clone()),
            PyValue::Dict(d) => Ok(d.iter().map(|(k, _)| k.clone()).collect()),
            PyValue::Str(s) => Ok(s.chars().map(|c| PyValue::Str(c.to_string())).collect()),
            other => Err(format!(
                "TypeError: '{}' object is not iterable",
                other.type_name()
            )),
        }
    }

    pub(crate) fn repr(&self) -> String {
        match self {
            PyValue::None => "None".into(),
            PyValue::Bool(true) => "True".into(),
            PyValue::Bool(false) => "False".into(),
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => pyval::float_repr(*f),
            PyValue::Str(s) => pyval::repr_str(s),
            PyValue::List(l) => format!(
                "[{}]",
                l.iter().map(PyValue::repr).collect::<Vec<_>>().join(", ")
            ),
            PyValue::Dict(d) => format!(
                "{{{}}}",
                d.iter()
                    .map(|(k, v)| format!("{}: {}", k.repr(), v.repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

struct PyValueVisitor;

impl<'de> Visitor<'de> for PyValueVisitor {
    type Value = PyValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<PyValue, E> {
        Ok(PyValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<PyValue, E> {
        Ok(PyValue::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<PyValue, E> {
        Ok(PyValue::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<PyValue, E> {
        Ok(PyValue::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<PyValue, E> {
        Ok(PyValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PyValue, E> {
        Ok(PyValue::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<PyValue, E> {
        Ok(PyValue::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<PyValue, E> {
        Ok(PyValue::None)
    }
    fn visit_none<E: de::Error>(self) -> Result<PyValue, E> {
        Ok(PyValue::None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<PyValue, D::Error> {
        PyValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PyValue, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<PyValue>()? {
            out.push(v);
        }
        Ok(PyValue::List(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PyValue, A::Error> {
        let mut out: Vec<(PyValue, PyValue)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<PyValue, PyValue>()? {
            match out.iter_mut().find(|(ek, _)| *ek == k) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Ok(PyValue::Dict(out))
    }
}

impl<'de> Deserialize<'de> for PyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PyValueVisitor)
    }
}

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
    }
}
