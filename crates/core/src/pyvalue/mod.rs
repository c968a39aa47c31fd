//! Python values as Magnum's Python code sees them: one object model, `repr()` / `str()`
//! exactly as CPython 3.11 prints them, and `ast.literal_eval`.
//!
//! Every part of OpenKeel that has to print or read a Python value goes through here:
//!
//! * the API: Magnum's PATCH dialect turns a string value for `/labels`,
//!   `/health_status_reason`, `/node_labels` and `/node_taints` into a Python object with
//!   `ast.literal_eval`, and many error messages embed Python's `repr()` / `str()` of request
//!   values (WSME's `Invalid input for field/attribute x. Value: '<str(v)>'`, `Couldn't apply
//!   patch '<repr(patch)>'`, jsonpointer's `member 'k' not found in <repr(dict)>`);
//! * the policy engine (`openkeel-auth`): the values of a policy file as `yaml.safe_load` gives
//!   them, `str()` of credentials and targets in generic checks, `ast.literal_eval` of a check's
//!   kind (its `%` formatting stays in `openkeel-auth`);
//! * the conductor's object indirection: `str()` of RPC arguments in Magnum's `NotFound`
//!   messages.
//!
//! This module provides:
//!
//! * [`PyValue`]: the Python object model those code paths work on (what `json.loads`,
//!   `yaml.safe_load` and `ast.literal_eval` can produce), with [`PyValue::repr`],
//!   [`PyValue::py_str`], Python equality ([`PyValue::py_eq`]), truthiness, iteration and
//!   `type()` names; [`json_str`] / [`json_repr`] for a JSON value as `json.loads` returns it;
//! * [`literal_eval`]: CPython 3.11's `ast.literal_eval` of a string — the same accepted
//!   literals, the same values, and the same error texts for the common mistakes
//!   (`'{' was never closed`, `unterminated string literal`, `malformed node or string on line
//!   1: <ast.Name object at 0x…>`, ...). The memory address in `malformed node` messages is a
//!   fixed fake value;
//! * [`repr_str`], [`float_repr`]: Python's `repr()` of a string (with CPython's own
//!   `str.isprintable()` table, generated from Python 3.11) and of a float; `pyjson` writes
//!   floats with the same digits;
//! * [`python_int`]: Python's `int()` of decimal text, the one integer parser of every crate.

mod int;
mod literal;
mod unprintable;

pub use int::python_int;
pub use literal::{literal_eval, literal_eval_value, LiteralError, LiteralErrorKind};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// A Python object of the kinds `json.loads`, `yaml.safe_load` and `ast.literal_eval` produce.
#[derive(Debug, Clone)]
pub enum PyValue {
    None,
    Bool(bool),
    /// `int` (OpenKeel bounds it to 128 bits; `literal_eval` of a larger one is
    /// [`LiteralErrorKind::Unsupported`]).
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
    List(Vec<PyValue>),
    Tuple(Vec<PyValue>),
    /// A `set`, in insertion order (Python's iteration order for small ints/strings differs;
    /// only `repr` is affected).
    Set(Vec<PyValue>),
    /// A `dict`, in insertion order, keys unique under Python equality.
    Dict(Vec<(PyValue, PyValue)>),
    /// Any other object (e.g. a `datetime.datetime` in an object's `as_dict()`): its
    /// qualified class name (`datetime.datetime`) and its `repr()`.
    Opaque {
        class: String,
        repr: String,
    },
}

impl PartialEq for PyValue {
    fn eq(&self, other: &Self) -> bool {
        self.py_eq(other)
    }
}

impl PyValue {
    /// A `str`.
    pub fn str(s: impl Into<String>) -> PyValue {
        PyValue::Str(s.into())
    }

    /// `json.loads` of a JSON value: objects become dicts with `str` keys, integers `int`,
    /// other numbers `float`.
    pub fn from_json(v: &Value) -> PyValue {
        match v {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    PyValue::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    PyValue::Int(i128::from(u))
                } else {
                    PyValue::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => PyValue::Str(s.clone()),
            Value::Array(a) => PyValue::List(a.iter().map(PyValue::from_json).collect()),
            Value::Object(m) => PyValue::Dict(
                m.iter()
                    .map(|(k, v)| (PyValue::Str(k.clone()), PyValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The JSON form (`json.dumps` of the value): tuples become arrays; `None` when the value
    /// has no JSON form (sets, bytes, complex numbers, non-`str` dict keys other than
    /// numbers/bools/None, which `json.dumps` would stringify — those are stringified too).
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            PyValue::None => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(i) => {
                if let Ok(v) = i64::try_from(*i) {
                    Value::from(v)
                } else if let Ok(v) = u64::try_from(*i) {
                    Value::from(v)
                } else {
                    return None;
                }
            }
            PyValue::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number)?,
            PyValue::Str(s) => Value::String(s.clone()),
            PyValue::List(items) | PyValue::Tuple(items) => {
                Value::Array(items.iter().map(PyValue::to_json).collect::<Option<_>>()?)
            }
            PyValue::Dict(items) => {
                let mut m = serde_json::Map::new();
                for (k, v) in items {
                    let key = match k {
                        PyValue::Str(s) => s.clone(),
                        PyValue::None => "null".into(),
                        PyValue::Bool(true) => "true".into(),
                        PyValue::Bool(false) => "false".into(),
                        PyValue::Int(_) | PyValue::Float(_) => k.repr(),
                        _ => return None,
                    };
                    m.insert(key, v.to_json()?);
                }
                Value::Object(m)
            }
            PyValue::Complex(..)
            | PyValue::Bytes(_)
            | PyValue::Ellipsis
            | PyValue::Set(_)
            | PyValue::Opaque { .. } => return None,
        })
    }

    /// `type(v).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Complex(..) => "complex",
            PyValue::Str(_) => "str",
            PyValue::Bytes(_) => "bytes",
            PyValue::Ellipsis => "ellipsis",
            PyValue::List(_) => "list",
            PyValue::Tuple(_) => "tuple",
            PyValue::Set(_) => "set",
            PyValue::Dict(_) => "dict",
            PyValue::Opaque { class, .. } => {
                let c: &str = class;
                match c.rsplit_once('.') {
                    Some((_, "datetime")) => "datetime",
                    _ => "object",
                }
            }
        }
    }

    /// `str(type(v))`, e.g. `<class 'int'>`, `<class 'datetime.datetime'>`.
    pub fn class_repr(&self) -> String {
        match self {
            PyValue::Opaque { class, .. } => format!("<class '{class}'>"),
            _ => format!("<class '{}'>", self.type_name()),
        }
    }

    /// A timezone-aware UTC `datetime.datetime` as Magnum's objects hold `created_at`.
    pub fn datetime_utc(dt: &chrono::NaiveDateTime) -> PyValue {
        use chrono::{Datelike, Timelike};
        let mut r = format!(
            "datetime.datetime({}, {}, {}, {}, {}",
            dt.year(),
            dt.month(),
            dt.day(),
            dt.hour(),
            dt.minute()
        );
        let us = dt.nanosecond() / 1000;
        if dt.second() != 0 || us != 0 {
            r.push_str(&format!(", {}", dt.second()));
        }
        if us != 0 {
            r.push_str(&format!(", {us}"));
        }
        r.push_str(", tzinfo=datetime.timezone.utc)");
        PyValue::Opaque {
            class: "datetime.datetime".into(),
            repr: r,
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, PyValue::None)
    }

    /// `bool(v)`.
    pub fn truthy(&self) -> bool {
        match self {
            PyValue::None => false,
            PyValue::Bool(b) => *b,
            PyValue::Int(i) => *i != 0,
            PyValue::Float(f) => *f != 0.0,
            PyValue::Complex(r, i) => *r != 0.0 || *i != 0.0,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::Bytes(b) => !b.is_empty(),
            PyValue::Ellipsis => true,
            PyValue::List(v) | PyValue::Tuple(v) | PyValue::Set(v) => !v.is_empty(),
            PyValue::Dict(v) => !v.is_empty(),
            PyValue::Opaque { .. } => true,
        }
    }

    /// The string, for a `str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items, for a `dict`.
    pub fn as_dict(&self) -> Option<&[(PyValue, PyValue)]> {
        match self {
            PyValue::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// `d.get(key)` for a dict with a `str` key.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        self.as_dict()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// `d[key] = value` for a dict with a `str` key (keeps the position of an existing key).
    pub fn set(&mut self, key: &str, value: PyValue) {
        if let PyValue::Dict(items) = self {
            if let Some(slot) = items.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
                slot.1 = value;
            } else {
                items.push((PyValue::Str(key.to_string()), value));
            }
        }
    }

    /// Numeric view for equality: (real, imag) when the value is a number (bool included).
    fn numeric(&self) -> Option<(f64, f64, Option<i128>)> {
        match self {
            PyValue::Bool(b) => Some((f64::from(u8::from(*b)), 0.0, Some(i128::from(*b)))),
            PyValue::Int(i) => Some((*i as f64, 0.0, Some(*i))),
            PyValue::Float(f) => Some((*f, 0.0, None)),
            PyValue::Complex(r, i) => Some((*r, *i, None)),
            _ => None,
        }
    }

    /// Python `==`.
    pub fn py_eq(&self, other: &PyValue) -> bool {
        if let (Some(a), Some(b)) = (self.numeric(), other.numeric()) {
            return match (a.2, b.2) {
                (Some(x), Some(y)) => x == y,
                _ => a.0 == b.0 && a.1 == b.1,
            };
        }
        match (self, other) {
            (PyValue::None, PyValue::None) | (PyValue::Ellipsis, PyValue::Ellipsis) => true,
            (PyValue::Opaque { repr: a, .. }, PyValue::Opaque { repr: b, .. }) => a == b,
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            (PyValue::Bytes(a), PyValue::Bytes(b)) => a == b,
            (PyValue::List(a), PyValue::List(b)) | (PyValue::Tuple(a), PyValue::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y))
            }
            (PyValue::Set(a), PyValue::Set(b)) => {
                a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| x.py_eq(y)))
            }
            (PyValue::Dict(a), PyValue::Dict(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(k2, _)| k.py_eq(k2))
                            .is_some_and(|(_, v2)| v.py_eq(v2))
                    })
            }
            _ => false,
        }
    }

    /// Whether `hash(v)` works (lists, dicts and sets, also nested in tuples, do not).
    pub fn hashable(&self) -> Result<(), &'static str> {
        match self {
            PyValue::List(_) => Err("list"),
            PyValue::Dict(_) => Err("dict"),
            PyValue::Set(_) => Err("set"),
            PyValue::Tuple(items) => items.iter().try_for_each(PyValue::hashable),
            _ => Ok(()),
        }
    }

    /// `iter(v)` drained into a list: the items of a list, tuple or set, a dict's keys, a
    /// string's characters, a bytes object's ints; otherwise the text of Python's
    /// `TypeError: 'int' object is not iterable`.
    pub fn iterate(&self) -> Result<Vec<PyValue>, String> {
        match self {
            PyValue::List(v) | PyValue::Tuple(v) | PyValue::Set(v) => Ok(v.clone()),
            PyValue::Dict(d) => Ok(d.iter().map(|(k, _)| k.clone()).collect()),
            PyValue::Str(s) => Ok(s.chars().map(|c| PyValue::Str(c.to_string())).collect()),
            PyValue::Bytes(b) => Ok(b.iter().map(|x| PyValue::Int(i128::from(*x))).collect()),
            other => Err(format!(
                "TypeError: '{}' object is not iterable",
                other.type_name()
            )),
        }
    }

    /// `repr(v)`.
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    /// `str(v)`: the string itself for `str`, else `repr(v)`.
    pub fn py_str(&self) -> String {
        match self {
            PyValue::Str(s) => s.clone(),
            _ => self.repr(),
        }
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(true) => out.push_str("True"),
            PyValue::Bool(false) => out.push_str("False"),
            PyValue::Int(i) => out.push_str(&i.to_string()),
            PyValue::Float(f) => out.push_str(&float_repr(*f)),
            PyValue::Complex(re, im) => out.push_str(&complex_repr(*re, *im)),
            PyValue::Str(s) => out.push_str(&repr_str(s)),
            PyValue::Bytes(b) => out.push_str(&repr_bytes(b)),
            PyValue::Ellipsis => out.push_str("Ellipsis"),
            PyValue::Opaque { repr, .. } => out.push_str(repr),
            PyValue::List(items) => {
                out.push('[');
                write_items(out, items);
                out.push(']');
            }
            PyValue::Tuple(items) => {
                out.push('(');
                write_items(out, items);
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            PyValue::Set(items) => {
                if items.is_empty() {
                    out.push_str("set()");
                } else {
                    out.push('{');
                    write_items(out, items);
                    out.push('}');
                }
            }
            PyValue::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_repr(out);
                    out.push_str(": ");
                    v.write_repr(out);
                }
                out.push('}');
            }
        }
    }
}

impl fmt::Display for PyValue {
    /// Python's `str()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.py_str())
    }
}

fn write_items(out: &mut String, items: &[PyValue]) {
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        v.write_repr(out);
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, fixed notation when the
/// decimal exponent is in `-4..16` (`0.0001`, `1000000000000000.0`), otherwise `1e-05`,
/// `1e+16`; `.0` on integral values; `inf`, `-inf`, `nan`, `-0.0`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `{:e}` gives the shortest round-trip digits in scientific form: "-1.5e-7", "1e16", "0e0".
    let sci = format!("{f:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let mut m = String::with_capacity(digits.len() + 1);
        m.push_str(&digits[..1]);
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.unsigned_abs());
    }
    let point = exp + 1; // where the decimal point falls within `digits`
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// A float component of a complex repr: `repr` without a trailing `.0`.
fn complex_part(f: f64) -> String {
    let r = float_repr(f);
    match r.strip_suffix(".0") {
        Some(s) => s.to_string(),
        None => r,
    }
}

/// Python's `repr(complex(re, im))`: `1j`, `(1+2j)`, `(-0-1j)`, `infj`.
pub fn complex_repr(re: f64, im: f64) -> String {
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", complex_part(im));
    }
    let im_s = complex_part(im);
    let sign = if im_s.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im_s}j)", complex_part(re))
}

/// Python 3's `str.isprintable()` for one character: false for the categories Cc, Cf, Cs,
/// Co, Cn, Zl, Zp and for Zs other than the space, by CPython 3.11's own Unicode 14.0 table.
pub fn is_printable(c: char) -> bool {
    let u = u32::from(c);
    let table = unprintable::UNPRINTABLE;
    // The last range starting at or before `u`.
    let i = table.partition_point(|&(first, _)| first <= u);
    !(i > 0 && u <= table[i - 1].1)
}

/// Python's `repr(str)`: single quotes unless the text contains `'` and no `"`.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let u = c as u32;
                if u <= 0xFF {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u <= 0xFFFF {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Python's `repr(bytes)`.
pub fn repr_bytes(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::from("b");
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// `str(json.loads(text))` for the JSON value `v`: the string itself, otherwise its `repr()`
/// (`{'a': [1, None]}`, not JSON).
pub fn json_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => PyValue::from_json(other).repr(),
    }
}

/// `repr(json.loads(text))` for the JSON value `v`.
pub fn json_repr(v: &Value) -> String {
    match v {
        Value::String(s) => repr_str(s),
        other => PyValue::from_json(other).repr(),
    }
}

/// What `yaml.safe_load` (or `json.loads`) makes of a document: mappings become dicts in
/// document order, a repeated key keeping its first position and its last value (Python dict
/// assignment, keys compared with Python `==`), sequences lists, integers `int`, other numbers
/// `float`.
impl<'de> Deserialize<'de> for PyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PyValueVisitor)
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
            match out.iter_mut().find(|(ek, _)| ek.py_eq(&k)) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Ok(PyValue::Dict(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs() {
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a\"b'c"), "'a\"b\\'c'");
        assert_eq!(repr_str("tab\there\u{7}"), "'tab\\there\\x07'");
        assert_eq!(repr_str("\u{2028}é"), "'\\u2028é'");
        let v =
            PyValue::from_json(&serde_json::json!({"a": [1, 2.5, true, null], "b": {"c": "d"}}));
        assert_eq!(v.repr(), "{'a': [1, 2.5, True, None], 'b': {'c': 'd'}}");
        assert_eq!(v.py_str(), v.repr());
        assert_eq!(PyValue::str("x").py_str(), "x");
        assert_eq!(PyValue::Tuple(vec![]).repr(), "()");
        assert_eq!(PyValue::Complex(-0.0, 1.0).repr(), "(-0+1j)");
        assert_eq!(PyValue::Float(1e16).repr(), "1e+16");
        assert_eq!(PyValue::Int(3).class_repr(), "<class 'int'>");
    }

    #[test]
    fn equality_and_json() {
        assert!(PyValue::Int(1).py_eq(&PyValue::Bool(true)));
        assert!(PyValue::Float(1.0).py_eq(&PyValue::Int(1)));
        assert!(!PyValue::str("1").py_eq(&PyValue::Int(1)));
        let j = serde_json::json!({"k": "v", "n": [1, "x"]});
        assert_eq!(PyValue::from_json(&j).to_json(), Some(j));
        assert_eq!(PyValue::Set(vec![]).to_json(), None);
    }

    /// Every case checked with CPython 3.11.7: `python3 -c 'print(repr(...))'`.
    #[test]
    fn str_repr_like_cpython() {
        for (s, want) in [
            // Control characters, DEL and the C1 controls: `\xHH`; `\t \n \r` by name.
            ("\x00\x01\x1f", r"'\x00\x01\x1f'"),
            ("\x7f", r"'\x7f'"),
            ("\u{80}\u{9f}\u{a0}\u{ad}", r"'\x80\x9f\xa0\xad'"),
            ("\t\n\r", r"'\t\n\r'"),
            ("\x0b\x0c", r"'\x0b\x0c'"),
            ("\\", r"'\\'"),
            (" ", "' '"),
            // Printable non-ASCII stays as it is, combining marks and U+FFFD included.
            ("é€😀", "'é€😀'"),
            ("\u{300}", "'\u{300}'"),
            ("\u{fffd}", "'\u{fffd}'"),
            // Separators (Zl, Zp, Zs), format characters (Cf), private use (Co), unassigned (Cn).
            ("\u{2028}\u{2029}", r"'\u2028\u2029'"),
            ("\u{ad}", r"'\xad'"),
            ("\u{200b}\u{200e}", r"'\u200b\u200e'"),
            ("\u{3000}\u{1680}", r"'\u3000\u1680'"),
            ("\u{feff}", r"'\ufeff'"),
            ("\u{61c}", r"'\u061c'"),
            ("\u{70f}", r"'\u070f'"),
            ("\u{180e}", r"'\u180e'"),
            ("\u{e000}", r"'\ue000'"),
            ("\u{378}", r"'\u0378'"),
            ("\u{2065}", r"'\u2065'"),
            ("\u{d7ff}", r"'\ud7ff'"),
            ("\u{e0001}", r"'\U000e0001'"),
            ("\u{f0000}", r"'\U000f0000'"),
            ("\u{10ffff}", r"'\U0010ffff'"),
            // Quotes: single unless the text has a single quote and no double quote.
            ("it's", "\"it's\""),
            ("say \"hi\"", "'say \"hi\"'"),
            ("both ' and \"", r#"'both \' and "'"#),
        ] {
            assert_eq!(repr_str(s), want, "{s:?}");
            assert_eq!(PyValue::str(s).repr(), want, "{s:?}");
            assert_eq!(json_repr(&json!(s)), want, "{s:?}");
            assert_eq!(PyValue::str(s).py_str(), s);
        }
    }

    #[test]
    fn printable_table() {
        assert!(is_printable(' '));
        assert!(is_printable('~'));
        assert!(is_printable('\u{a1}'));
        assert!(!is_printable('\u{a0}'));
        assert!(!is_printable('\u{10ffff}'));
        assert!(!is_printable('\u{0}'));
        assert!(is_printable('\u{1f600}'));
        // Sorted and disjoint, as the binary search needs.
        let t = unprintable::UNPRINTABLE;
        assert!(t.windows(2).all(|w| w[0].1 < w[1].0 && w[0].0 <= w[0].1));
    }

    /// `repr(float)` with CPython 3.11's answers.
    #[test]
    fn float_repr_like_cpython() {
        for (f, want) in [
            (1e16, "1e+16"),
            (1.5, "1.5"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (1e-05, "1e-05"),
            (0.00001, "1e-05"),
            (0.0001, "0.0001"),
            (1e15, "1000000000000000.0"),
            (100000.0, "100000.0"),
            (100.0, "100.0"),
            (123456789012345.6, "123456789012345.6"),
            (1.5e-7, "1.5e-07"),
            (1.25e-7, "1.25e-07"),
            (1.5e16, "1.5e+16"),
            (2.5e300, "2.5e+300"),
            (1e100, "1e+100"),
            (1e22, "1e+22"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (123456.789, "123456.789"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
            assert_eq!(PyValue::Float(f).repr(), want, "{f}");
        }
        assert_eq!(complex_repr(0.0, 1.0), "1j");
        assert_eq!(complex_repr(1.0, 2.0), "(1+2j)");
        assert_eq!(complex_repr(-0.0, -1.0), "(-0-1j)");
        assert_eq!(complex_repr(0.0, f64::INFINITY), "infj");
    }

    #[test]
    fn scalars_and_containers_like_cpython() {
        assert_eq!(
            PyValue::Int(100_000_000_000_000_000_000).repr(),
            "100000000000000000000"
        );
        assert_eq!(PyValue::Int(-5).repr(), "-5");
        assert_eq!(PyValue::Bool(true).repr(), "True");
        assert_eq!(PyValue::Bool(false).py_str(), "False");
        assert_eq!(PyValue::None.py_str(), "None");
        let nested = PyValue::Dict(vec![
            (
                PyValue::str("a"),
                PyValue::List(vec![
                    PyValue::Int(1),
                    PyValue::Tuple(vec![PyValue::Int(2)]),
                    PyValue::Tuple(vec![]),
                    PyValue::Tuple(vec![PyValue::Int(1), PyValue::Int(2)]),
                ]),
            ),
            (
                PyValue::str("b"),
                PyValue::Dict(vec![
                    (PyValue::str("c"), PyValue::None),
                    (PyValue::Int(1), PyValue::Float(1.5)),
                ]),
            ),
            (PyValue::str("it's"), PyValue::Bool(true)),
        ]);
        let want = r#"{'a': [1, (2,), (), (1, 2)], 'b': {'c': None, 1: 1.5}, "it's": True}"#;
        assert_eq!(nested.repr(), want);
        assert_eq!(nested.py_str(), want);
        assert_eq!(repr_bytes(b"a'\x00\x7f\x80\\"), r#"b"a'\x00\x7f\x80\\""#);
        assert_eq!(repr_bytes(b"\"'"), r#"b'"\''"#);
    }

    /// `str()` of a dict is Python's, not JSON (the conductor's `NotFound` messages).
    #[test]
    fn str_of_json_values_like_cpython() {
        assert_eq!(
            json_str(&json!({"a": 1, "b": "x", "c": [null, 1.0]})),
            "{'a': 1, 'b': 'x', 'c': [None, 1.0]}"
        );
        assert_eq!(json_str(&json!(null)), "None");
        assert_eq!(json_str(&json!(true)), "True");
        assert_eq!(json_str(&json!(12)), "12");
        assert_eq!(json_str(&json!(-3)), "-3");
        assert_eq!(json_str(&json!(1.0)), "1.0");
        assert_eq!(json_str(&json!(1e16)), "1e+16");
        assert_eq!(json_str(&json!("x'y")), "x'y");
        assert_eq!(
            json_str(&json!({"a": [1, "b", null], "c'": {"d": false}})),
            "{'a': [1, 'b', None], \"c'\": {'d': False}}"
        );
        assert_eq!(repr_str("a'b\"c\n\u{1}é"), "'a\\'b\"c\\n\\x01é'");
        assert_eq!(json_repr(&json!("p1")), "'p1'");
    }

    #[test]
    fn yaml_values_and_iteration() {
        let v: PyValue = serde_json::from_str(r#"{"a": [1, 2.5, null], "b": "x", "a": true}"#)
            .unwrap_or(PyValue::None);
        assert_eq!(v.repr(), "{'a': True, 'b': 'x'}");
        assert_eq!(
            v.iterate().map(|k| PyValue::List(k).repr()),
            Ok("['a', 'b']".into())
        );
        assert_eq!(
            PyValue::str("ab")
                .iterate()
                .map(|k| PyValue::List(k).repr()),
            Ok("['a', 'b']".into())
        );
        assert_eq!(
            PyValue::Int(1).iterate().map(|_| ()),
            Err("TypeError: 'int' object is not iterable".into())
        );
    }
}
