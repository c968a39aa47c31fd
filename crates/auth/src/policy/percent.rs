//! Python's `%` operator with a mapping as oslo.policy uses it (`'%(project_id)s' % target`).
//!
//! It answers either the string or the Python exception the real code would raise
//! ([`EvalError`]); oslo.policy only catches `KeyError` (a missing target key), everything else
//! propagates out of `Enforcer.enforce`. `str()` / `repr()` of the values come from
//! `openkeel_core::pyvalue`.

use openkeel_core::pyvalue::{json_repr, json_str, PyValue};
use serde_json::Value;

use super::{EvalError, PyException};

/// Why `fmt % target` did not give a string.
#[derive(Debug)]
pub(crate) enum FormatFailure {
    /// `KeyError`: the one failure oslo.policy catches (the check is then false).
    KeyError,
    /// Anything else, propagated by oslo.policy.
    Error(EvalError),
}

fn type_error(message: impl Into<String>) -> FormatFailure {
    FormatFailure::Error(EvalError::python(PyException::TypeError, message))
}

fn value_error(message: impl Into<String>) -> FormatFailure {
    FormatFailure::Error(EvalError::python(PyException::ValueError, message))
}

/// The mapping key of a conversion whose `(` is at `open`, with nested parentheses as CPython
/// counts them, and the index after its `)`; `None` when it is not closed.
fn mapping_key(chars: &[char], open: usize) -> Option<(String, usize)> {
    let mut depth = 1;
    let mut i = open + 1;
    while i < chars.len() && depth > 0 {
        match chars[i] {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then(|| (chars[open + 1..i - 1].iter().collect(), i))
}

/// The mapping keys `fmt % target` looks up (`%(key)s` and the like, in order), or `None`
/// when it may read the target as a whole (an unnamed conversion such as `%s`) or is not a
/// format [`percent_format`] could complete (then the whole target is given, as before).
pub(crate) fn mapping_keys(fmt: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = fmt.chars().collect();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            i += 1;
            continue;
        }
        i += 1;
        let mut named = false;
        if chars.get(i) == Some(&'(') {
            let (key, after) = mapping_key(&chars, i)?;
            keys.push(key);
            i = after;
            named = true;
        }
        // flags, width, precision and length modifiers, as `percent_format` reads them
        while matches!(
            chars.get(i),
            Some('-' | '+' | ' ' | '#' | '0'..='9' | '.' | 'h' | 'l' | 'L')
        ) {
            i += 1;
        }
        match chars.get(i) {
            Some('%') => {}
            Some(_) if named => {}
            // an unnamed conversion formats the whole target; `*` or an incomplete format
            _ => return None,
        }
        i += 1;
    }
    Some(keys)
}

/// Python's `fmt % arg` where `arg` is the policy target.
///
/// Supported conversions: `%(key)s`, `%(key)r`, `%(key)a`, `%(key)d`/`i`/`u` (with flags, width
/// and precision), `%%`, and unnamed `%s` (which formats the whole mapping, as Python does).
/// Other conversion characters that Python accepts (`x`, `f`, `e`, ...) answer
/// [`EvalError::Unsupported`]; characters Python rejects answer its `ValueError`.
pub(crate) fn percent_format(fmt: &str, arg: &Value) -> Result<String, FormatFailure> {
    // PyMapping_Check: dicts and lists (anything with __getitem__), but not str.
    let is_mapping = matches!(arg, Value::Object(_) | Value::Array(_));
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::with_capacity(fmt.len());
    let mut i = 0;
    let mut unnamed_used = false;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        // Optional mapping key, with nested parentheses as CPython counts them.
        let mut value: Option<Value> = None;
        if chars.get(i) == Some(&'(') {
            if !is_mapping {
                return Err(type_error("format requires a mapping"));
            }
            let Some((key, after)) = mapping_key(&chars, i) else {
                return Err(value_error("incomplete format key"));
            };
            i = after;
            value = Some(match arg {
                Value::Object(map) => match map.get(&key) {
                    Some(v) => v.clone(),
                    None => return Err(FormatFailure::KeyError),
                },
                _ => {
                    return Err(type_error(
                        "list indices must be integers or slices, not str",
                    ))
                }
            });
        }
        // Flags.
        let mut left = false;
        let mut plus = false;
        let mut space = false;
        let mut zero = false;
        while let Some(&f) = chars.get(i) {
            match f {
                '-' => left = true,
                '+' => plus = true,
                ' ' => space = true,
                '#' => {}
                '0' => zero = true,
                _ => break,
            }
            i += 1;
        }
        // Width and precision.
        let mut width: usize = 0;
        if chars.get(i) == Some(&'*') {
            return Err(type_error("* wants int"));
        }
        while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
            width = width.saturating_mul(10).saturating_add(d as usize);
            i += 1;
        }
        let mut precision: Option<usize> = None;
        if chars.get(i) == Some(&'.') {
            i += 1;
            if chars.get(i) == Some(&'*') {
                return Err(type_error("* wants int"));
            }
            let mut p = 0usize;
            while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                p = p.saturating_mul(10).saturating_add(d as usize);
                i += 1;
            }
            precision = Some(p);
        }
        // Length modifiers are accepted and ignored.
        while matches!(chars.get(i), Some('h' | 'l' | 'L')) {
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            return Err(value_error("incomplete format"));
        };
        i += 1;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let v = match value {
            Some(v) => v,
            None => {
                if unnamed_used {
                    return Err(type_error("not enough arguments for format string"));
                }
                unnamed_used = true;
                arg.clone()
            }
        };
        let body = match conv {
            's' => json_str(&v),
            'r' | 'a' => json_repr(&v),
            'd' | 'i' | 'u' => {
                let digits = match &v {
                    Value::Bool(b) => (if *b { "1" } else { "0" }).to_string(),
                    Value::Number(n) => {
                        if let Some(x) = n.as_i64() {
                            x.to_string()
                        } else if let Some(x) = n.as_u64() {
                            x.to_string()
                        } else {
                            let f = n.as_f64().unwrap_or(0.0).trunc();
                            format!("{f:.0}")
                        }
                    }
                    other => {
                        return Err(type_error(format!(
                            "%{conv} format: a real number is required, not {}",
                            PyValue::from_json(other).type_name()
                        )))
                    }
                };
                let (neg, mag) = match digits.strip_prefix('-') {
                    Some(m) => (true, m.to_string()),
                    None => (false, digits),
                };
                let mag = match precision {
                    Some(p) if mag.len() < p => format!("{}{mag}", "0".repeat(p - mag.len())),
                    _ => mag,
                };
                let sign = if neg {
                    "-"
                } else if plus {
                    "+"
                } else if space {
                    " "
                } else {
                    ""
                };
                if zero && !left && width > sign.len() + mag.len() {
                    let pad = width - sign.len() - mag.len();
                    out.push_str(sign);
                    out.push_str(&"0".repeat(pad));
                    out.push_str(&mag);
                    continue;
                }
                format!("{sign}{mag}")
            }
            'x' | 'X' | 'o' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'c' => {
                return Err(FormatFailure::Error(EvalError::Unsupported(format!(
                    "format conversion %{conv} in {fmt:?}"
                ))))
            }
            other => {
                return Err(value_error(format!(
                    "unsupported format character '{other}' (0x{:x}) at index {}",
                    other as u32,
                    i - 1
                )))
            }
        };
        let body = match (conv, precision) {
            ('s' | 'r' | 'a', Some(p)) => body.chars().take(p).collect(),
            _ => body,
        };
        let len = body.chars().count();
        if width > len {
            let pad = " ".repeat(width - len);
            if left {
                out.push_str(&body);
                out.push_str(&pad);
            } else {
                out.push_str(&pad);
                out.push_str(&body);
            }
        } else {
            out.push_str(&body);
        }
    }
    if !is_mapping && !unnamed_used {
        return Err(type_error(
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mapping_keys_are_the_keys_a_format_reads() {
        assert_eq!(mapping_keys("plain"), Some(vec![]));
        assert_eq!(mapping_keys("100%%"), Some(vec![]));
        assert_eq!(
            mapping_keys("%(project_id)s:%(user_id)r-%(n)05d%(x(y))s"),
            Some(vec![
                "project_id".to_string(),
                "user_id".into(),
                "n".into(),
                "x(y)".into()
            ])
        );
        assert_eq!(mapping_keys("%(a)%"), Some(vec!["a".to_string()]));
        for whole in ["%s", "a %r", "%(a)s %s", "%5d", "%*d", "%(a", "%(a)", "%"] {
            assert_eq!(mapping_keys(whole), None, "{whole:?}");
        }
    }

    /// Formatting with only the keys [`mapping_keys`] names gives what the whole target gives,
    /// answer or error.
    #[test]
    fn a_target_of_the_mapping_keys_formats_as_the_whole_one() {
        let whole = json!({"project_id": "p1", "user_id": "u1", "n": 7, "none": null,
            "flag": true, "a.b": "dotted", "x(y)": "nested", "list": [1, "a"]});
        for fmt in [
            "plain",
            "100%%",
            "%(project_id)s",
            "%(project_id)s:%(user_id)s",
            "%(n)05d|%(n)-3d|%(n).3d",
            "%(none)r %(flag)s %(list)s",
            "%(a.b)s %(x(y))s",
            "%(missing)s",
            "%(project_id)q",
            "%(project_id)x",
            "%(n)-5-%(user_id)s",
            "%(project_id)s%(n)hd%%",
            "%(a)%",
        ] {
            let keys = mapping_keys(fmt).unwrap();
            let only: serde_json::Map<String, Value> = whole
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| keys.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let show = |r: Result<String, FormatFailure>| match r {
                Ok(s) => format!("ok {s}"),
                Err(FormatFailure::KeyError) => "KeyError".into(),
                Err(FormatFailure::Error(e)) => format!("error {e}"),
            };
            assert_eq!(
                show(percent_format(fmt, &Value::Object(only))),
                show(percent_format(fmt, &whole)),
                "{fmt:?}"
            );
        }
    }

    #[test]
    fn percent_format_with_a_mapping() {
        let t = json!({"project_id": "p1", "n": 7, "none": null, "flag": true, "a.b": "dotted"});
        let f = |s: &str| percent_format(s, &t);
        assert_eq!(f("%(project_id)s").ok(), Some("p1".into()));
        assert_eq!(
            f("x-%(n)s-%(none)s-%(flag)s").ok(),
            Some("x-7-None-True".into())
        );
        assert_eq!(f("%(a.b)s").ok(), Some("dotted".into()));
        assert_eq!(f("%(n)05d|%(n)-3d|").ok(), Some("00007|7  |".into()));
        assert_eq!(f("%(project_id)r").ok(), Some("'p1'".into()));
        assert_eq!(f("%(project_id).1s").ok(), Some("p".into()));
        assert_eq!(f("100%%").ok(), Some("100%".into()));
        assert_eq!(f("plain").ok(), Some("plain".into()));
        assert!(matches!(f("%(missing)s"), Err(FormatFailure::KeyError)));
        assert!(matches!(
            f("100%"),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::ValueError,
                ..
            }))
        ));
        assert!(matches!(
            f("%(project_id)d"),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::TypeError,
                ..
            }))
        ));
        assert!(matches!(
            f("%(project_id"),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::ValueError,
                ..
            }))
        ));
        assert!(matches!(
            f("%q"),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::ValueError,
                ..
            }))
        ));
        // An unnamed %s formats the mapping itself, a second one has no argument left.
        assert_eq!(
            percent_format("%s", &json!({"a": 1})).ok(),
            Some("{'a': 1}".into())
        );
        assert!(matches!(
            percent_format("%s%s", &json!({})),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::TypeError,
                ..
            }))
        ));
        // Non-mapping arguments.
        assert!(matches!(
            percent_format("%(a)s", &json!("x")),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::TypeError,
                ..
            }))
        ));
        assert!(matches!(
            percent_format("abc", &json!(null)),
            Err(FormatFailure::Error(EvalError::Python {
                exception: PyException::TypeError,
                ..
            }))
        ));
        assert_eq!(percent_format("abc", &json!([])).ok(), Some("abc".into()));
    }
}
