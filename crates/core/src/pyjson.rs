//! JSON text exactly as Python's `json.dumps` writes it with default arguments: separators
//! `", "` and `": "`, `ensure_ascii=True` (`\uXXXX` escapes, surrogate pairs above the BMP),
//! Python's float repr (`pyvalue::float_repr`), keys in insertion order.
//!
//! Magnum's API bodies (WSME / pecan) and its JSON database columns are produced this way;
//! OpenKeel writes the same bytes.

use serde_json::Value;
use std::fmt::Write;

/// `json.dumps(value)`.
pub fn dumps(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value);
    out
}

/// Append `json.dumps(value)` to `out`.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else if let Some(f) = n.as_f64() {
                out.push_str(&dumps_float(f));
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

/// Append `json.dumps(dict)` for a JSON object to `out`.
pub fn write_object(out: &mut String, map: &serde_json::Map<String, Value>) {
    let mut o = ObjectWriter::new(out);
    for (k, v) in map {
        o.field(k, v);
    }
    o.finish();
}

/// `json.dumps(dict)` written one field at a time, for a dict that need not exist as a map
/// first (a view rendered straight into a body).
pub struct ObjectWriter<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> ObjectWriter<'a> {
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        ObjectWriter { out, empty: true }
    }

    /// A field whose value `write` appends to the text itself (as `json.dumps` would write it).
    pub fn field_with(&mut self, key: &str, write: impl FnOnce(&mut String)) {
        if !self.empty {
            self.out.push_str(", ");
        }
        self.empty = false;
        write_str(self.out, key);
        self.out.push_str(": ");
        write(self.out);
    }

    pub fn field(&mut self, key: &str, value: &Value) {
        self.field_with(key, |out| write_value(out, value));
    }

    pub fn finish(self) {
        self.out.push('}');
    }
}

/// Whether byte `b` is written as itself: printable ASCII but `"` and `\\`.
fn is_plain(b: u8) -> bool {
    (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\'
}

/// Whether all 8 bytes of `w` are plain ([`is_plain`]), tested together (SWAR): for each
/// byte, `x - n` borrows into its high bit, where `x` had none, exactly when `x < n`; a word
/// has such a byte if and only if the combined mask is non-zero (a borrow from a lower byte
/// only ever follows a byte that is itself below `n`).
fn all_plain(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let control = below(w, 0x20);
    let non_ascii = w & HIGH;
    let delete = below(w ^ (ONES * 0x7f), 1);
    let quote = below(w ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(w ^ (ONES * u64::from(b'\\')), 1);
    control | non_ascii | delete | quote | backslash == 0
}

/// Whether every byte of `bytes` is plain ([`is_plain`]), 8 at a time: the last few in a
/// word padded with a plain byte.
fn is_all_plain(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        if !all_plain(u64::from_le_bytes(word)) {
            return false;
        }
    }
    let rest = words.remainder();
    let mut word = [b' '; 8];
    word[..rest.len()].copy_from_slice(rest);
    all_plain(u64::from_le_bytes(word))
}

/// A JSON string literal with Python's `ensure_ascii=True` escaping. A string that is all
/// printable ASCII (most strings of every body: keys, names, ids) is copied whole; in
/// others, runs of such characters are found 8 bytes at a time and copied whole.
pub fn write_str(out: &mut String, s: &str) {
    if is_all_plain(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push('"');
    let bytes = s.as_bytes();
    let (mut i, mut plain_from) = (0, 0);
    while i < bytes.len() {
        while let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
        {
            if !all_plain(u64::from_le_bytes(word)) {
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        if is_plain(b) {
            i += 1;
            continue;
        }
        // `i` is on a character boundary: only whole characters are stepped over
        let Some(c) = s[i..].chars().next() else {
            break;
        };
        out.push_str(&s[plain_from..i]);
        i += c.len_utf8();
        plain_from = i;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// `json.dumps(f)`: Python's `repr(float)` ([`crate::pyvalue::float_repr`]), with
/// `Infinity`, `-Infinity` and `NaN` for the values JSON has no literal for.
pub fn dumps_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        crate::pyvalue::float_repr(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyvalue::float_repr;
    use serde_json::json;

    #[test]
    fn separators_and_order() {
        let v = json!({"b": 1, "a": [true, null, "x"]});
        assert_eq!(dumps(&v), r#"{"b": 1, "a": [true, null, "x"]}"#);
        assert_eq!(dumps(&json!({})), "{}");
        assert_eq!(dumps(&json!([])), "[]");
    }

    #[test]
    fn ensure_ascii() {
        assert_eq!(dumps(&json!("é")), r#""\u00e9""#);
        assert_eq!(dumps(&json!("😀")), r#""\ud83d\ude00""#);
        assert_eq!(dumps(&json!("a\"b\\\n\u{7f}")), r#""a\"b\\\n\u007f""#);
    }

    /// The run-copying `write_str` writes what escaping one character at a time writes.
    #[test]
    fn strings_escape_as_char_by_char() {
        fn reference(s: &str) -> String {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{08}' => out.push_str("\\b"),
                    '\u{0c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            let _ = write!(out, "\\u{unit:04x}");
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        // every character at every offset of the 8-byte words, among plain bytes, in
        // strings of every length up to three words (the last bytes are tested apart)
        let mut at_every_offset = Vec::new();
        for c in (0u8..128).map(char::from).chain(['é', '\u{80}', '😀']) {
            for len in 1..25 {
                for offset in 0..len {
                    let mut t = "a".repeat(offset);
                    t.push(c);
                    t.push_str(&"z".repeat(len - 1 - offset));
                    at_every_offset.push(t);
                }
            }
        }
        for t in &at_every_offset {
            let mut out = String::new();
            write_str(&mut out, t);
            assert_eq!(out, reference(t), "{t:?}");
        }
        let every_ascii: String = (0u8..128).map(char::from).collect();
        for s in [
            "",
            "plain",
            every_ascii.as_str(),
            "é at the start",
            "at the end é",
            "mixed \"quotes\" and \\ and \u{7f}\u{80}\u{ffff}\u{10000}😀 end",
            "\u{0}\u{1f}",
        ] {
            let mut out = String::new();
            write_str(&mut out, s);
            assert_eq!(out, reference(s), "{s:?}");
        }
    }

    /// The word test agrees with the byte test on every byte value in every position, next
    /// to every other byte value (borrows run from low bytes to high ones).
    #[test]
    fn a_word_is_plain_when_each_byte_is() {
        for b in 0..=255u8 {
            for next in 0..=255u8 {
                for at in 0..7 {
                    let mut word = [b'a'; 8];
                    word[at] = b;
                    word[at + 1] = next;
                    assert_eq!(
                        all_plain(u64::from_le_bytes(word)),
                        is_plain(b) && is_plain(next),
                        "{word:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn floats_like_python() {
        assert_eq!(dumps_float(f64::NAN), "NaN");
        assert_eq!(dumps_float(f64::INFINITY), "Infinity");
        assert_eq!(dumps_float(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(dumps(&json!(-0.0)), "-0.0");
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1.5e-5), "1.5e-05");
        assert_eq!(float_repr(123456.789), "123456.789");
        assert_eq!(float_repr(-2.5), "-2.5");
        assert_eq!(float_repr(0.0001), "0.0001");
    }
}
