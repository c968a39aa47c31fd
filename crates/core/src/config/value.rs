//! Option values: oslo.config's type conversions (`oslo_config/types.py`), the Python `str()`
//! rendering used when a value is interpolated into another, and the projection of a value
//! onto a struct field's Rust type.

use std::fmt;
use std::net::IpAddr;

use super::spec::{DefaultValue, OptKind, OptSpec};
use crate::pyvalue::{float_repr, repr_str};

/// A converted option value. `None` inside a variant is oslo's `None` (no default, or an
/// empty integer/float value).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(Option<String>),
    Bool(Option<bool>),
    Int(Option<i64>),
    Float(Option<f64>),
    /// List and multi-valued options.
    List(Option<Vec<String>>),
}

impl Value {
    /// The value a default stands for (strings already interpolated by the caller).
    pub(crate) fn from_default(kind: OptKind, default: &DefaultValue) -> Value {
        match (kind, default) {
            (OptKind::Bool, DefaultValue::Bool(b)) => Value::Bool(Some(*b)),
            (OptKind::Bool, _) => Value::Bool(None),
            (OptKind::Int | OptKind::Port, DefaultValue::Int(i)) => Value::Int(Some(*i)),
            (OptKind::Int | OptKind::Port, _) => Value::Int(None),
            (OptKind::Float, DefaultValue::Float(f)) => Value::Float(Some(*f)),
            (OptKind::Float, DefaultValue::Int(i)) => Value::Float(Some(*i as f64)),
            (OptKind::Float, _) => Value::Float(None),
            (OptKind::List | OptKind::Multi, DefaultValue::List(items)) => {
                Value::List(Some(items.iter().map(|s| (*s).to_owned()).collect()))
            }
            (OptKind::Multi, _) => Value::List(Some(Vec::new())),
            (OptKind::List, _) => Value::List(None),
            (_, DefaultValue::Str(s)) => Value::Str(Some((*s).to_owned())),
            (_, _) => Value::Str(None),
        }
    }

    /// Whether this is oslo's `None`.
    pub(crate) fn is_none(&self) -> bool {
        matches!(
            self,
            Value::Str(None)
                | Value::Bool(None)
                | Value::Int(None)
                | Value::Float(None)
                | Value::List(None)
        )
    }

    /// Python's `str()` of the value, which is what `$name` expands to (`None` → empty).
    pub(crate) fn render(&self) -> String {
        match self {
            Value::Str(v) => v.clone().unwrap_or_default(),
            Value::Bool(v) => v
                .map(|b| if b { "True" } else { "False" }.to_owned())
                .unwrap_or_default(),
            Value::Int(v) => v.map(|i| i.to_string()).unwrap_or_default(),
            Value::Float(v) => v.map(float_repr).unwrap_or_default(),
            Value::List(v) => v
                .as_ref()
                .map(|items| {
                    let inner: Vec<String> = items.iter().map(|s| repr_str(s)).collect();
                    format!("[{}]", inner.join(", "))
                })
                .unwrap_or_default(),
        }
    }
}

/// Converts one raw (already interpolated) value with the option's oslo type. Multi-valued
/// options convert each occurrence with [`convert_item`] instead.
pub(crate) fn convert(spec: &OptSpec, raw: &str) -> Result<Value, String> {
    match spec.kind {
        OptKind::String => convert_string(spec, raw).map(|s| Value::Str(Some(s))),
        OptKind::Multi => convert_string(spec, raw).map(|s| Value::List(Some(vec![s]))),
        OptKind::Bool => convert_bool(raw).map(|b| Value::Bool(Some(b))),
        OptKind::Int | OptKind::Port => convert_int(spec, raw).map(Value::Int),
        OptKind::Float => convert_float(spec, raw).map(Value::Float),
        OptKind::IpAddress => convert_ip(raw).map(|s| Value::Str(Some(s))),
        OptKind::HostAddress => convert_host_address(raw).map(|s| Value::Str(Some(s))),
        OptKind::List => convert_list(spec, raw).map(|items| Value::List(Some(items))),
    }
}

/// Converts one occurrence of a multi-valued option (`types.MultiString`).
pub(crate) fn convert_item(spec: &OptSpec, raw: &str) -> Result<String, String> {
    convert_string(spec, raw)
}

/// `types.String`: the value unchanged, checked against `choices`.
fn convert_string(spec: &OptSpec, raw: &str) -> Result<String, String> {
    check_choice(spec, raw)?;
    Ok(raw.to_owned())
}

fn check_choice(spec: &OptSpec, value: &str) -> Result<(), String> {
    if spec.choices.is_empty() {
        return Ok(());
    }
    let found = if spec.ignore_case {
        let lower = value.to_lowercase();
        spec.choices.iter().any(|c| c.to_lowercase() == lower)
    } else {
        spec.choices.contains(&value)
    };
    if found {
        Ok(())
    } else {
        Err(format!(
            "Valid values are [{}], but found {}",
            spec.choices.join(", "),
            repr_str(value)
        ))
    }
}

/// oslo's boolean spellings, case-insensitive.
pub(crate) fn convert_bool(raw: &str) -> Result<bool, String> {
    match raw.to_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(format!("Unexpected boolean value {}", repr_str(raw))),
    }
}

/// Removes the underscores Python allows between digits (`1_000`), rejecting any other use.
fn strip_digit_underscores(s: &str) -> Option<String> {
    if !s.contains('_') {
        return Some(s.to_owned());
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let before = i.checked_sub(1).and_then(|j| chars.get(j));
            let after = chars.get(i + 1);
            if !(before.is_some_and(char::is_ascii_digit)
                && after.is_some_and(char::is_ascii_digit))
            {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// `types.Integer` / `types.Port`: Python `int()`; blank is `None`; `min`/`max` checked.
fn convert_int(spec: &OptSpec, raw: &str) -> Result<Option<i64>, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let invalid = || format!("invalid literal for int() with base 10: {}", repr_str(raw));
    // A value beyond `i64` is refused with the same text.
    let value = crate::pyvalue::python_int(s)
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(invalid)?;
    check_range(spec, value as f64, || value.to_string())?;
    Ok(Some(value))
}

/// `types.Float`: Python `float()`; blank is `None`; `min`/`max` checked.
fn convert_float(spec: &OptSpec, raw: &str) -> Result<Option<f64>, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let invalid = || format!("could not convert string to float: {}", repr_str(raw));
    let text = strip_digit_underscores(s).ok_or_else(invalid)?;
    let value: f64 = text.parse().map_err(|_| invalid())?;
    check_range(spec, value, || float_repr(value))?;
    Ok(Some(value))
}

fn check_range(spec: &OptSpec, value: f64, show: impl Fn() -> String) -> Result<(), String> {
    let bound = |b: f64| {
        if spec.kind.is_integer() {
            format!("{}", b as i64)
        } else {
            python_general(b)
        }
    };
    if let Some(min) = spec.min {
        if value < min {
            return Err(format!(
                "Should be greater than or equal to {} (found {})",
                bound(min),
                show()
            ));
        }
    }
    if let Some(max) = spec.max {
        if value > max {
            return Err(format!(
                "Should be less than or equal to {} (found {})",
                bound(max),
                show()
            ));
        }
    }
    Ok(())
}

/// `types.IPAddress`: IPv4 or IPv6, as `inet_pton` accepts them.
fn convert_ip(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("IP address cannot be an empty string".to_owned());
    }
    if raw.parse::<IpAddr>().is_ok() {
        Ok(raw.to_owned())
    } else {
        Err(format!("{raw} is not IPv4 or IPv6 address"))
    }
}

/// `types.Hostname`: RFC 1123 labels, a non-numeric top-level label; a trailing dot is dropped.
fn convert_hostname(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("Cannot have an empty hostname".to_owned());
    }
    if raw.chars().count() > 253 {
        return Err(format!("hostname is greater than 253 characters: {raw}"));
    }
    let value = raw.strip_suffix('.').unwrap_or(raw);
    let labels: Vec<&str> = value.split('.').collect();
    let tld = labels.last().copied().unwrap_or_default();
    if !tld.chars().any(|c| c.is_ascii_alphabetic() || c == '-') {
        return Err(format!(
            "{value} contains no non-numeric characters in the top-level domain part of the host name and is invalid"
        ));
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if labels.iter().all(|l| label_ok(l)) {
        Ok(value.to_owned())
    } else {
        Err(format!("{value} is an invalid hostname"))
    }
}

/// `types.HostAddress`: an IP address, else a host name.
fn convert_host_address(raw: &str) -> Result<String, String> {
    convert_ip(raw)
        .or_else(|_| convert_hostname(raw))
        .map_err(|_| format!("{raw} is not a valid host address"))
}

/// `types.List` of `types.String`: strip, drop one run of trailing commas, split on commas,
/// strip each item; when an item fails its choices, join it with the next one (oslo's way of
/// allowing commas inside items) until it passes.
fn convert_list(spec: &OptSpec, raw: &str) -> Result<Vec<String>, String> {
    let s = raw.trim().trim_end_matches(',');
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts: std::collections::VecDeque<&str> = s.split(',').collect();
    let mut result = Vec::new();
    while let Some(first) = parts.pop_front() {
        let mut item = first.to_owned();
        let mut first_error: Option<String> = None;
        loop {
            let candidate = item.trim();
            match check_choice(spec, candidate) {
                Ok(()) => {
                    result.push(candidate.to_owned());
                    break;
                }
                Err(e) => {
                    let error = first_error.get_or_insert(e).clone();
                    match parts.pop_front() {
                        Some(next) => {
                            item.push(',');
                            item.push_str(next);
                        }
                        None => return Err(error),
                    }
                }
            }
        }
    }
    Ok(result)
}

/// Python's `'%g'` of a bound, as oslo's range messages print it.
fn python_general(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{}", f as i64)
    } else {
        float_repr(f)
    }
}

/// The Rust type of a section field: built from a converted [`Value`].
pub(crate) trait FieldValue: Sized + Default {
    /// The field for `value`, or `None` if the table gives the field a type its option's
    /// kind cannot produce (a table error, reported by the loader).
    fn from_value(value: Value) -> Option<Self>;

    /// Whether the value is set, for masking secrets in `Debug`.
    fn is_set(&self) -> bool;
}

impl FieldValue for String {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Str(Some(s)) => Some(s),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl FieldValue for Option<String> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl FieldValue for bool {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Bool(Some(b)) => Some(b),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        true
    }
}

impl FieldValue for i64 {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Int(Some(i)) => Some(i),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        true
    }
}

impl FieldValue for Option<i64> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl FieldValue for u16 {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Int(Some(i)) => u16::try_from(i).ok(),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        true
    }
}

impl FieldValue for Option<u16> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Int(Some(i)) => u16::try_from(i).ok().map(Some),
            Value::Int(None) => Some(None),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl FieldValue for f64 {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Float(Some(f)) => Some(f),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        true
    }
}

impl FieldValue for Option<f64> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Float(f) => Some(f),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl FieldValue for Vec<String> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::List(Some(items)) => Some(items),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl FieldValue for Option<Vec<String>> {
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::List(items) => Some(items),
            _ => None,
        }
    }
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

/// `Debug` of a secret field: `"****"` when set, the value itself (`None`, `""`) otherwise.
pub(crate) struct Masked<'a, T>(pub(crate) &'a T);

impl<T: FieldValue + fmt::Debug> fmt::Debug for Masked<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_set() {
            f.write_str("\"****\"")
        } else {
            fmt::Debug::fmt(self.0, f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::spec::{boolean, float, integer, list, port, string};

    #[test]
    fn booleans_accept_oslo_spellings_case_insensitively() {
        for t in ["true", "TRUE", "True", "1", "yes", "YES", "on", "On"] {
            assert_eq!(convert_bool(t), Ok(true), "{t}");
        }
        for f in ["false", "FALSE", "0", "no", "No", "off", "OFF"] {
            assert_eq!(convert_bool(f), Ok(false), "{f}");
        }
        for bad in ["", "maybe", "2", "y", "t", "enabled", " true"] {
            let err = convert_bool(bad).err().unwrap_or_default();
            assert!(err.starts_with("Unexpected boolean value"), "{bad}: {err}");
        }
    }

    #[test]
    fn integers_follow_python_int() {
        let spec = integer(4);
        assert_eq!(convert_int(&spec, " 12 "), Ok(Some(12)));
        assert_eq!(convert_int(&spec, "+5"), Ok(Some(5)));
        assert_eq!(convert_int(&spec, "-5"), Ok(Some(-5)));
        assert_eq!(convert_int(&spec, "010"), Ok(Some(10)));
        assert_eq!(convert_int(&spec, "1_000"), Ok(Some(1000)));
        assert_eq!(convert_int(&spec, ""), Ok(None));
        assert_eq!(convert_int(&spec, "   "), Ok(None));
        for bad in ["1.5", "0x10", "ten", "1__0", "_1", "1_"] {
            assert!(convert_int(&spec, bad).is_err(), "{bad}");
        }
    }

    /// Options hold an `i64`: a larger value (an integer to Python) is refused as invalid.
    #[test]
    fn integers_beyond_i64_are_invalid() {
        let spec = integer(4);
        assert_eq!(
            convert_int(&spec, "-9223372036854775808"),
            Ok(Some(i64::MIN))
        );
        assert_eq!(
            convert_int(&spec, "9223372036854775808"),
            Err("invalid literal for int() with base 10: '9223372036854775808'".into())
        );
    }

    #[test]
    fn integer_bounds() {
        let spec = integer(30).min(1).max(100);
        assert_eq!(convert_int(&spec, "1"), Ok(Some(1)));
        assert_eq!(convert_int(&spec, "100"), Ok(Some(100)));
        let low = convert_int(&spec, "0").err().unwrap_or_default();
        assert!(
            low.starts_with("Should be greater than or equal to 1"),
            "{low}"
        );
        let high = convert_int(&spec, "101").err().unwrap_or_default();
        assert!(
            high.starts_with("Should be less than or equal to 100"),
            "{high}"
        );
        let p = port(9511);
        assert!(convert_int(&p, "65535").is_ok());
        assert!(convert_int(&p, "65536").is_err());
        assert!(convert_int(&p, "-1").is_err());
    }

    #[test]
    fn floats_follow_python_float() {
        let spec = float(1.0).min_float(0.0).max_float(4.5);
        assert_eq!(convert_float(&spec, "2"), Ok(Some(2.0)));
        assert_eq!(convert_float(&spec, " .5 "), Ok(Some(0.5)));
        assert_eq!(convert_float(&spec, ""), Ok(None));
        assert!(convert_float(&spec, "4.6").is_err());
        assert!(convert_float(&spec, "-0.1").is_err());
        assert!(convert_float(&spec, "abc").is_err());
        assert_eq!(convert_float(&float(0.0), "1e3"), Ok(Some(1000.0)));
    }

    #[test]
    fn python_float_rendering() {
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(2.5), "2.5");
        assert_eq!(float_repr(1e20), "1e+20");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(-3.0), "-3.0");
        assert_eq!(float_repr(f64::INFINITY), "inf");
    }

    #[test]
    fn python_repr_quoting() {
        assert_eq!(repr_str("abc"), "'abc'");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a\"b'c"), "'a\"b\\'c'");
        assert_eq!(repr_str("a\nb\\"), "'a\\nb\\\\'");
    }

    #[test]
    fn lists_split_strip_and_keep_empty_inner_items() {
        let spec = list(&[]);
        assert_eq!(
            convert_list(&spec, "a,b , c"),
            Ok(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            convert_list(&spec, ", a , b,,c,"),
            Ok(vec![
                "".into(),
                "a".into(),
                "b".into(),
                "".into(),
                "c".into()
            ])
        );
        assert_eq!(convert_list(&spec, ""), Ok(Vec::new()));
        assert_eq!(convert_list(&spec, " ,,, "), Ok(Vec::new()));
        assert_eq!(
            convert_list(&spec, "a,\nb"),
            Ok(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            convert_list(&spec, "'a',b"),
            Ok(vec!["'a'".into(), "b".into()])
        );
    }

    #[test]
    fn list_item_choices_join_items_containing_commas() {
        let spec = list(&[]).choices(&["Digital Signature", "a,b", "c"]);
        assert_eq!(
            convert_list(&spec, "Digital Signature, a,b ,c"),
            Ok(vec!["Digital Signature".into(), "a,b".into(), "c".into()])
        );
        let err = convert_list(&spec, "c,bogus").err().unwrap_or_default();
        assert!(err.contains("but found 'bogus'"), "{err}");
    }

    #[test]
    fn string_choices() {
        let spec = string("a").choices(&["interval", "size", "none"]);
        assert!(convert_string(&spec, "size").is_ok());
        assert!(convert_string(&spec, "SIZE").is_err());
        let err = convert_string(&spec, "x").err().unwrap_or_default();
        assert_eq!(
            err,
            "Valid values are [interval, size, none], but found 'x'"
        );
        let ci = spec.ignore_case();
        assert_eq!(convert_string(&ci, "SIZE"), Ok("SIZE".to_owned()));
    }

    #[test]
    fn ip_and_host_addresses() {
        assert_eq!(convert_ip("127.0.0.1"), Ok("127.0.0.1".to_owned()));
        assert!(convert_ip("::1").is_ok());
        assert!(convert_ip("").is_err());
        assert!(convert_ip("localhost").is_err());
        assert!(convert_ip("1.2.3").is_err());
        assert_eq!(
            convert_host_address("Foo.example.com."),
            Ok("Foo.example.com".to_owned())
        );
        assert_eq!(convert_host_address("node-1"), Ok("node-1".to_owned()));
        assert_eq!(convert_host_address("10.0.0.1"), Ok("10.0.0.1".to_owned()));
        for bad in ["1.2.3", "a_b", "-a.com", "a..b", ""] {
            assert!(convert_host_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn render_is_python_str() {
        assert_eq!(Value::Bool(Some(true)).render(), "True");
        assert_eq!(Value::Int(Some(7)).render(), "7");
        assert_eq!(Value::Float(Some(1.0)).render(), "1.0");
        assert_eq!(Value::Str(None).render(), "");
        assert_eq!(
            Value::List(Some(vec!["a".into(), "b".into()])).render(),
            "['a', 'b']"
        );
        assert_eq!(
            Value::from_default(boolean(true).kind, &boolean(true).default),
            Value::Bool(Some(true))
        );
    }
}
