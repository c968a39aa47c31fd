//! The bits of Python semantics that the oslo.policy language inherits, reproduced on JSON
//! values: `str()` / `repr()`, the `%` operator with a mapping (`'%(project_id)s' % target`)
//! and the subset of `ast.literal_eval` that can appear as the kind of a generic check.
//!
//! Every function answers either a value or the Python exception the real code would raise
//! ([`EvalError`]); oslo.policy only catches `KeyError` (a missing target key), everything else
//! propagates out of `Enforcer.enforce`.

use serde_json::{Map, Value};

use super::{EvalError, PyException};

/// The Python type name of a JSON value once `json.loads` has turned it into a Python object.
pub(crate) fn py_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python truthiness (`bool(value)`).
pub(crate) fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `str(value)`.
pub(crate) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `repr(value)`.
pub(crate) fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                float_repr(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => repr_str(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => repr_dict(map),
    }
}

fn repr_dict(map: &Map<String, Value>) -> String {
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{}: {}", repr_str(k), py_repr(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Characters `str.isprintable()` rejects (approximation of the Unicode categories Cc, Cf,
/// Zl, Zp, Zs other than space, Co and unassigned code points that matter in practice).
fn is_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{a0}' | '\u{ad}' | '\u{1680}' | '\u{2000}'..='\u{200f}' | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{206f}' | '\u{3000}' | '\u{feff}' | '\u{e000}'..='\u{f8ff}'
            | '\u{fff9}'..='\u{fffb}')
}

/// `repr(some_str)`: single quotes unless the text has a single quote and no double quote.
pub(crate) fn repr_str(s: &str) -> String {
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
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_unprintable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr(some_bytes)`.
fn repr_bytes(b: &[u8]) -> String {
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
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            c if !(0x20..0x7f).contains(&c) => out.push_str(&format!("\\x{c:02x}")),
            c => out.push(c as char),
        }
    }
    out.push(quote as char);
    out
}

/// `repr(some_float)`: the shortest round-tripping digits, fixed notation when the decimal
/// exponent is in `-4..16`, otherwise `d.ddde+XX`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-7", "1e16", "0e0".
    let sci = format!("{f:e}");
    let (neg, body) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci.as_str()),
    };
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-point) as usize));
            out.push_str(&digits);
        } else if point >= n {
            out.push_str(&digits);
            out.push_str(&"0".repeat((point - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

/// A float formatted as inside `repr(complex)`: no `.0` added to integral values.
fn complex_part(f: f64) -> String {
    let s = float_repr(f);
    match s.strip_suffix(".0") {
        Some(t) => t.to_string(),
        None => s,
    }
}

fn complex_repr(re: f64, im: f64) -> String {
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", complex_part(im));
    }
    let im_s = complex_part(im);
    let sign = if im_s.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im_s}j)", complex_part(re))
}

// ---------------------------------------------------------------------------------------------
// The `%` operator

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
            let mut depth = 1;
            let key_start = i + 1;
            i += 1;
            while i < chars.len() && depth > 0 {
                match chars[i] {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            if depth > 0 {
                return Err(value_error("incomplete format key"));
            }
            let key: String = chars[key_start..i - 1].iter().collect();
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
            's' => py_str(&v),
            'r' | 'a' => py_repr(&v),
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
                            py_type_name(other)
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

// ---------------------------------------------------------------------------------------------
// ast.literal_eval

/// A Python literal value as `ast.literal_eval` produces it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyLit {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
    Tuple(Vec<PyLit>),
    List(Vec<PyLit>),
    /// Only the empty set (`set()`) and one-element sets: the iteration order of larger sets
    /// depends on hashing, so those are refused as unsupported.
    Set(Vec<PyLit>),
    /// Only `{}`: a dict display needs `:`, which a check kind never contains.
    EmptyDict,
}

impl PyLit {
    /// `str(value)`.
    pub(crate) fn py_str(&self) -> String {
        match self {
            PyLit::Str(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    fn py_repr(&self) -> String {
        match self {
            PyLit::None => "None".into(),
            PyLit::Bool(true) => "True".into(),
            PyLit::Bool(false) => "False".into(),
            PyLit::Int(i) => i.to_string(),
            PyLit::Float(f) => float_repr(*f),
            PyLit::Complex(re, im) => complex_repr(*re, *im),
            PyLit::Str(s) => repr_str(s),
            PyLit::Bytes(b) => repr_bytes(b),
            PyLit::Ellipsis => "Ellipsis".into(),
            PyLit::Tuple(items) => {
                let parts: Vec<String> = items.iter().map(PyLit::py_repr).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            PyLit::List(items) => {
                let parts: Vec<String> = items.iter().map(PyLit::py_repr).collect();
                format!("[{}]", parts.join(", "))
            }
            PyLit::Set(items) => {
                if items.is_empty() {
                    "set()".into()
                } else {
                    let parts: Vec<String> = items.iter().map(PyLit::py_repr).collect();
                    format!("{{{}}}", parts.join(", "))
                }
            }
            PyLit::EmptyDict => "{}".into(),
        }
    }
}

/// What `ast.literal_eval(text)` does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LiteralEval {
    /// It returned this value.
    Value(PyLit),
    /// It raised `ValueError` (valid Python, but not a literal: a name, attribute, call...).
    /// oslo.policy catches this and treats the kind as a path into the credentials.
    NotLiteral,
}

fn syntax_error(message: impl Into<String>) -> EvalError {
    EvalError::python(PyException::SyntaxError, message)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Num(PyLit),
    /// A string literal; `None` value marks an f-string (a `JoinedStr`, never a literal).
    Str(Option<StrVal>),
    Op(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
enum StrVal {
    Text(String),
    Bytes(Vec<u8>),
}

const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "!=", "**", "//", ">>", "<<", "<=", ">=", "==", "->", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", "(", ")", "[", "]", "{", "}", ",", ".",
    ";", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "=", ":",
];

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    _src: &'a str,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer {
            chars: src.chars().collect(),
            pos: 0,
            depth: 0,
            _src: src,
        }
    }

    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn tokens(mut self) -> Result<Vec<Tok>, EvalError> {
        let mut out = Vec::new();
        loop {
            // Skip blanks, comments and (inside brackets or at the very end) newlines.
            while let Some(c) = self.peek(0) {
                if c == ' ' || c == '\t' || c == '\x0c' {
                    self.pos += 1;
                } else if c == '#' {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                } else if c == '\\' && matches!(self.peek(1), Some('\n')) {
                    self.pos += 2;
                } else if c == '\n' || c == '\r' {
                    if self.depth == 0 {
                        let rest: String = self.chars[self.pos..].iter().collect();
                        if rest.trim().is_empty() {
                            self.pos = self.chars.len();
                        } else {
                            return Err(syntax_error("invalid syntax"));
                        }
                    } else {
                        self.pos += 1;
                    }
                } else {
                    break;
                }
            }
            let Some(c) = self.peek(0) else {
                break;
            };
            if is_name_start(c) {
                let start = self.pos;
                while self.peek(0).is_some_and(is_name_char) {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                if matches!(self.peek(0), Some('\'' | '"')) && is_string_prefix(&word) {
                    out.push(self.string(&word)?);
                } else {
                    out.push(Tok::Name(word));
                }
            } else if c.is_ascii_digit()
                || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()))
            {
                out.push(self.number()?);
            } else if c == '\'' || c == '"' {
                out.push(self.string("")?);
            } else {
                let rest: String = self.chars[self.pos..].iter().take(3).collect();
                let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) else {
                    return Err(syntax_error(format!("invalid character '{c}'")));
                };
                match *op {
                    "(" | "[" | "{" => self.depth += 1,
                    ")" | "]" | "}" => {
                        if self.depth == 0 {
                            return Err(syntax_error(format!("unmatched '{op}'")));
                        }
                        self.depth -= 1;
                    }
                    _ => {}
                }
                self.pos += op.chars().count();
                out.push(Tok::Op(op));
            }
        }
        if self.depth > 0 {
            return Err(syntax_error("'(' was never closed"));
        }
        Ok(out)
    }

    fn digits(&mut self, radix: u32, out: &mut String) -> Result<(), EvalError> {
        // digit (_? digit)*
        let mut last_underscore = false;
        let mut any = false;
        while let Some(c) = self.peek(0) {
            if c.is_digit(radix) {
                out.push(c);
                last_underscore = false;
                any = true;
            } else if c == '_'
                && any
                && !last_underscore
                && self.peek(1).is_some_and(|d| d.is_digit(radix))
            {
                last_underscore = true;
            } else {
                break;
            }
            self.pos += 1;
        }
        if last_underscore {
            return Err(syntax_error("invalid decimal literal"));
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Tok, EvalError> {
        let c0 = self.peek(0);
        let c1 = self.peek(1).map(|c| c.to_ascii_lowercase());
        if c0 == Some('0') && matches!(c1, Some('x' | 'o' | 'b')) {
            let radix = match c1 {
                Some('x') => 16,
                Some('o') => 8,
                _ => 2,
            };
            self.pos += 2;
            if self.peek(0) == Some('_') {
                self.pos += 1;
            }
            let mut ds = String::new();
            self.digits(radix, &mut ds)?;
            if ds.is_empty() || self.peek(0).is_some_and(is_name_char) {
                return Err(syntax_error("invalid literal"));
            }
            let v = i128::from_str_radix(&ds, radix)
                .map_err(|_| EvalError::Unsupported(format!("integer literal too large: {ds}")))?;
            return Ok(Tok::Num(PyLit::Int(v)));
        }
        let mut int_part = String::new();
        self.digits(10, &mut int_part)?;
        let mut is_float = false;
        let mut frac = String::new();
        if self.peek(0) == Some('.') {
            is_float = true;
            self.pos += 1;
            if self.peek(0).is_some_and(|d| d.is_ascii_digit()) {
                self.digits(10, &mut frac)?;
            }
        }
        let mut exp = String::new();
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign_len = usize::from(matches!(self.peek(1), Some('+' | '-')));
            if self.peek(1 + sign_len).is_some_and(|d| d.is_ascii_digit()) {
                is_float = true;
                if sign_len == 1 {
                    exp.push(self.peek(1).unwrap_or('+'));
                }
                self.pos += 1 + sign_len;
                self.digits(10, &mut exp)?;
            }
        }
        let imaginary = matches!(self.peek(0), Some('j' | 'J'));
        if imaginary {
            self.pos += 1;
        }
        if self.peek(0).is_some_and(is_name_char) {
            return Err(syntax_error("invalid decimal literal"));
        }
        let text = format!(
            "{}{}{}{}",
            if int_part.is_empty() { "0" } else { &int_part },
            if is_float { "." } else { "" },
            if is_float && frac.is_empty() {
                "0"
            } else {
                &frac
            },
            if exp.is_empty() {
                String::new()
            } else {
                format!("e{exp}")
            }
        );
        if imaginary || is_float {
            let f: f64 = text
                .parse()
                .map_err(|_| syntax_error("invalid decimal literal"))?;
            return Ok(Tok::Num(if imaginary {
                PyLit::Complex(0.0, f)
            } else {
                PyLit::Float(f)
            }));
        }
        if int_part.len() > 1 && int_part.starts_with('0') && int_part.chars().any(|c| c != '0') {
            return Err(syntax_error(
                "leading zeros in decimal integer literals are not permitted",
            ));
        }
        let v: i128 = int_part.parse().map_err(|_| {
            EvalError::Unsupported(format!("integer literal too large: {int_part}"))
        })?;
        Ok(Tok::Num(PyLit::Int(v)))
    }

    fn string(&mut self, prefix: &str) -> Result<Tok, EvalError> {
        let p = prefix.to_ascii_lowercase();
        let raw = p.contains('r');
        let bytes = p.contains('b');
        let fstring = p.contains('f');
        let quote = self.peek(0).unwrap_or('\'');
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut body = String::new();
        loop {
            let Some(c) = self.peek(0) else {
                return Err(syntax_error("unterminated string literal"));
            };
            if c == quote
                && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote)))
            {
                self.pos += if triple { 3 } else { 1 };
                break;
            }
            if c == '\n' && !triple {
                return Err(syntax_error("unterminated string literal"));
            }
            if c == '\\' {
                let Some(n) = self.peek(1) else {
                    return Err(syntax_error("unterminated string literal"));
                };
                body.push(c);
                body.push(n);
                self.pos += 2;
                continue;
            }
            body.push(c);
            self.pos += 1;
        }
        if fstring {
            return Ok(Tok::Str(None));
        }
        if bytes && !body.is_ascii() {
            return Err(syntax_error(
                "bytes can only contain ASCII literal characters",
            ));
        }
        let text = if raw { body } else { unescape(&body, bytes)? };
        Ok(Tok::Str(Some(if bytes {
            StrVal::Bytes(text.chars().map(|c| c as u32 as u8).collect())
        } else {
            StrVal::Text(text)
        })))
    }
}

fn is_string_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
    )
}

/// Backslash escapes of a non-raw string (for bytes, each resulting char is one byte value).
fn unescape(body: &str, bytes: bool) -> Result<String, EvalError> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let hex = |s: &[char]| -> Option<u32> {
        let t: String = s.iter().collect();
        if t.chars().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(&t, 16).ok()
        } else {
            None
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&n) = chars.get(i + 1) else {
            out.push('\\');
            break;
        };
        i += 2;
        match n {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = n.to_digit(8).unwrap_or(0);
                let mut k = 0;
                while k < 2 && chars.get(i).is_some_and(|d| d.is_digit(8)) {
                    v = v * 8 + chars[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if bytes {
                    v &= 0xff;
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' if !(bytes && n != 'x') => {
                let len = match n {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let Some(v) = chars.get(i..i + len).and_then(hex) else {
                    return Err(syntax_error(format!(
                        "(unicode error) truncated \\{n} escape"
                    )));
                };
                let Some(ch) = char::from_u32(v) else {
                    return Err(syntax_error("(unicode error) illegal Unicode character"));
                };
                out.push(ch);
                i += len;
            }
            'N' if !bytes => {
                return Err(EvalError::Unsupported(
                    "\\N{...} escapes in a check kind".into(),
                ))
            }
            other => {
                // Unknown escapes are kept as written (with a DeprecationWarning in Python).
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// The expression tree, reduced to what `literal_eval` distinguishes.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Const(PyLit),
    Name(String),
    Tuple(Vec<Node>),
    List(Vec<Node>),
    Set(Vec<Node>),
    EmptyDict,
    /// `+x` (true) or `-x` (false).
    Unary(bool, Box<Node>),
    /// `a + b` (true) or `a - b` (false).
    AddSub(Box<Node>, bool, Box<Node>),
    Call {
        func: Box<Node>,
        plain_args: usize,
        other_args: usize,
    },
    /// Any other valid expression (attribute, subscript, comparison, bool op, ...).
    Other,
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(n)) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<(), EvalError> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(syntax_error("invalid syntax"))
        }
    }

    /// Does the next token start an expression?
    fn starts_expr(&self) -> bool {
        match self.peek() {
            Some(Tok::Name(n)) => {
                !KEYWORDS.contains(&n.as_str()) || matches!(n.as_str(), "not" | "lambda" | "await")
            }
            Some(Tok::Num(_) | Tok::Str(_)) => true,
            Some(Tok::Op(o)) => matches!(*o, "(" | "[" | "{" | "+" | "-" | "~" | "..."),
            None => false,
        }
    }

    /// testlist: test (',' test)* [','] → a tuple when there is a comma.
    fn testlist(&mut self) -> Result<Node, EvalError> {
        let first = self.test()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if !self.starts_expr() {
                break;
            }
            items.push(self.test()?);
        }
        Ok(Node::Tuple(items))
    }

    fn test(&mut self) -> Result<Node, EvalError> {
        let n = self.or_test()?;
        if self.eat_kw("if") {
            self.or_test()?;
            if !self.eat_kw("else") {
                return Err(syntax_error("expected 'else' after 'if' expression"));
            }
            self.test()?;
            return Ok(Node::Other);
        }
        Ok(n)
    }

    fn or_test(&mut self) -> Result<Node, EvalError> {
        let mut n = self.and_test()?;
        while self.eat_kw("or") {
            self.and_test()?;
            n = Node::Other;
        }
        Ok(n)
    }

    fn and_test(&mut self) -> Result<Node, EvalError> {
        let mut n = self.not_test()?;
        while self.eat_kw("and") {
            self.not_test()?;
            n = Node::Other;
        }
        Ok(n)
    }

    fn not_test(&mut self) -> Result<Node, EvalError> {
        if self.eat_kw("not") {
            self.not_test()?;
            return Ok(Node::Other);
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Node, EvalError> {
        let mut n = self.binary(0)?;
        loop {
            let is_cmp = ["<", ">", "==", ">=", "<=", "!="]
                .iter()
                .any(|o| self.is_op(o));
            if is_cmp {
                self.pos += 1;
            } else if self.eat_kw("in") {
            } else if self.eat_kw("is") {
                self.eat_kw("not");
            } else if self.is_kw("not")
                && matches!(self.toks.get(self.pos + 1), Some(Tok::Name(k)) if k == "in")
            {
                self.pos += 2;
            } else {
                break;
            }
            self.binary(0)?;
            n = Node::Other;
        }
        Ok(n)
    }

    /// Binary operators by precedence level: | ^ & (<< >>) (+ -) (* / // % @).
    fn binary(&mut self, level: usize) -> Result<Node, EvalError> {
        const LEVELS: &[&[&str]] = &[
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "//", "%", "@"],
        ];
        if level == LEVELS.len() {
            return self.factor();
        }
        let mut n = self.binary(level + 1)?;
        while let Some(op) = LEVELS[level].iter().find(|o| self.is_op(o)).copied() {
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            n = match op {
                "+" => Node::AddSub(Box::new(n), true, Box::new(rhs)),
                "-" => Node::AddSub(Box::new(n), false, Box::new(rhs)),
                _ => Node::Other,
            };
        }
        Ok(n)
    }

    fn factor(&mut self) -> Result<Node, EvalError> {
        if self.eat_op("+") {
            return Ok(Node::Unary(true, Box::new(self.factor()?)));
        }
        if self.eat_op("-") {
            return Ok(Node::Unary(false, Box::new(self.factor()?)));
        }
        if self.eat_op("~") {
            self.factor()?;
            return Ok(Node::Other);
        }
        self.power()
    }

    fn power(&mut self) -> Result<Node, EvalError> {
        if self.is_kw("await") {
            return Err(syntax_error("'await' outside function"));
        }
        let mut n = self.atom()?;
        loop {
            if self.eat_op(".") {
                match self.peek() {
                    Some(Tok::Name(name)) if !is_reserved(name) => self.pos += 1,
                    _ => return Err(syntax_error("invalid syntax")),
                }
                n = Node::Other;
            } else if self.eat_op("(") {
                let (plain_args, other_args) = self.arglist()?;
                self.expect_op(")")?;
                n = Node::Call {
                    func: Box::new(n),
                    plain_args,
                    other_args,
                };
            } else if self.eat_op("[") {
                if self.is_op("]") {
                    return Err(syntax_error("invalid syntax"));
                }
                self.testlist()?;
                self.expect_op("]")?;
                n = Node::Other;
            } else {
                break;
            }
        }
        if self.eat_op("**") {
            self.factor()?;
            n = Node::Other;
        }
        Ok(n)
    }

    fn arglist(&mut self) -> Result<(usize, usize), EvalError> {
        let mut plain = 0;
        let mut other = 0;
        while !self.is_op(")") {
            if self.eat_op("*") || self.eat_op("**") {
                self.test()?;
                other += 1;
            } else if matches!(self.peek(), Some(Tok::Name(n)) if !is_reserved(n))
                && matches!(self.toks.get(self.pos + 1), Some(Tok::Op("=")))
            {
                self.pos += 2;
                self.test()?;
                other += 1;
            } else {
                self.test()?;
                plain += 1;
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok((plain, other))
    }

    fn atom(&mut self) -> Result<Node, EvalError> {
        let Some(tok) = self.peek().cloned() else {
            return Err(syntax_error("invalid syntax"));
        };
        self.pos += 1;
        match tok {
            Tok::Num(v) => Ok(Node::Const(v)),
            Tok::Str(first) => {
                // Adjacent literals concatenate; an f-string anywhere makes a JoinedStr.
                let mut parts = vec![first];
                while let Some(Tok::Str(s)) = self.peek().cloned() {
                    parts.push(s);
                    self.pos += 1;
                }
                let any_bytes = parts.iter().any(|p| matches!(p, Some(StrVal::Bytes(_))));
                let any_text = parts.iter().any(|p| !matches!(p, Some(StrVal::Bytes(_))));
                if any_bytes && any_text {
                    return Err(syntax_error("cannot mix bytes and nonbytes literals"));
                }
                if parts.iter().any(Option::is_none) {
                    return Ok(Node::Other);
                }
                if any_bytes {
                    let mut b = Vec::new();
                    for p in parts.into_iter().flatten() {
                        if let StrVal::Bytes(x) = p {
                            b.extend(x);
                        }
                    }
                    Ok(Node::Const(PyLit::Bytes(b)))
                } else {
                    let mut s = String::new();
                    for p in parts.into_iter().flatten() {
                        if let StrVal::Text(x) = p {
                            s.push_str(&x);
                        }
                    }
                    Ok(Node::Const(PyLit::Str(s)))
                }
            }
            Tok::Name(n) => match n.as_str() {
                "True" => Ok(Node::Const(PyLit::Bool(true))),
                "False" => Ok(Node::Const(PyLit::Bool(false))),
                "None" => Ok(Node::Const(PyLit::None)),
                n if is_reserved(n) => Err(syntax_error("invalid syntax")),
                _ => Ok(Node::Name(n)),
            },
            Tok::Op("...") => Ok(Node::Const(PyLit::Ellipsis)),
            Tok::Op("(") => {
                let (items, comma) = self.elements(")")?;
                Ok(if items.len() == 1 && !comma {
                    items.into_iter().next().unwrap_or(Node::Other)
                } else {
                    Node::Tuple(items)
                })
            }
            Tok::Op("[") => Ok(Node::List(self.elements("]")?.0)),
            Tok::Op("{") => {
                let (items, _) = self.elements("}")?;
                Ok(if items.is_empty() {
                    Node::EmptyDict
                } else {
                    Node::Set(items)
                })
            }
            _ => Err(syntax_error("invalid syntax")),
        }
    }

    /// Comma-separated expressions up to `close` (consumed); also tells whether a comma was
    /// seen, which makes `(x,)` a tuple and `(x)` a parenthesised expression.
    fn elements(&mut self, close: &str) -> Result<(Vec<Node>, bool), EvalError> {
        let mut items = Vec::new();
        let mut comma = false;
        while !self.is_op(close) {
            items.push(self.test()?);
            if !self.eat_op(",") {
                break;
            }
            comma = true;
        }
        self.expect_op(close)?;
        Ok((items, comma))
    }
}

fn is_reserved(name: &str) -> bool {
    KEYWORDS.contains(&name) || matches!(name, "True" | "False" | "None")
}

fn convert(node: &Node) -> Option<PyLit> {
    fn num(node: &Node) -> Option<PyLit> {
        match node {
            Node::Const(v @ (PyLit::Int(_) | PyLit::Float(_) | PyLit::Complex(..))) => {
                Some(v.clone())
            }
            _ => None,
        }
    }
    fn signed(node: &Node) -> Option<PyLit> {
        match node {
            Node::Unary(plus, operand) => {
                let v = num(operand)?;
                Some(if *plus {
                    v
                } else {
                    match v {
                        PyLit::Int(i) => PyLit::Int(-i),
                        PyLit::Float(f) => PyLit::Float(-f),
                        PyLit::Complex(re, im) => PyLit::Complex(-re, -im),
                        other => other,
                    }
                })
            }
            other => num(other),
        }
    }
    match node {
        Node::Const(v) => Some(v.clone()),
        Node::Tuple(items) => Some(PyLit::Tuple(
            items.iter().map(convert).collect::<Option<_>>()?,
        )),
        Node::List(items) => Some(PyLit::List(
            items.iter().map(convert).collect::<Option<_>>()?,
        )),
        Node::Set(items) => Some(PyLit::Set(
            items.iter().map(convert).collect::<Option<_>>()?,
        )),
        Node::EmptyDict => Some(PyLit::EmptyDict),
        Node::Call {
            func,
            plain_args: 0,
            other_args: 0,
        } if matches!(func.as_ref(), Node::Name(n) if n == "set") => Some(PyLit::Set(Vec::new())),
        Node::AddSub(left, add, right) => {
            let l = signed(left)?;
            let r = num(right)?;
            let lf = match l {
                PyLit::Int(i) => i as f64,
                PyLit::Float(f) => f,
                _ => return None,
            };
            match r {
                PyLit::Complex(re, im) => Some(if *add {
                    PyLit::Complex(lf + re, im)
                } else {
                    PyLit::Complex(lf - re, -im)
                }),
                _ => None,
            }
        }
        other => signed(other),
    }
}

/// `ast.literal_eval(text)`.
pub(crate) fn literal_eval(text: &str) -> Result<LiteralEval, EvalError> {
    let text = text.trim_start_matches([' ', '\t']);
    let toks = Lexer::new(text).tokens()?;
    if toks.is_empty() {
        return Err(syntax_error("invalid syntax"));
    }
    let mut p = Parser { toks, pos: 0 };
    let node = p.testlist()?;
    if p.pos != p.toks.len() {
        return Err(syntax_error("invalid syntax"));
    }
    match convert(&node) {
        Some(PyLit::Set(items)) if items.len() > 1 => Err(EvalError::Unsupported(format!(
            "set literal {text:?} as a check kind (its str() order depends on hashing)"
        ))),
        Some(v) => Ok(LiteralEval::Value(v)),
        None => Ok(LiteralEval::NotLiteral),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lit(s: &str) -> String {
        match literal_eval(s) {
            Ok(LiteralEval::Value(v)) => v.py_str(),
            Ok(LiteralEval::NotLiteral) => "<ValueError>".into(),
            Err(EvalError::Python { exception, .. }) => format!("<{}>", exception.name()),
            Err(EvalError::Unsupported(_)) => "<unsupported>".into(),
            Err(e) => format!("<{e}>"),
        }
    }

    #[test]
    fn str_of_json_values_matches_python() {
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_str(&json!(12)), "12");
        assert_eq!(py_str(&json!(-3)), "-3");
        assert_eq!(py_str(&json!(1.0)), "1.0");
        assert_eq!(py_str(&json!("x'y")), "x'y");
        assert_eq!(
            py_str(&json!({"a": [1, "b", null], "c'": {"d": false}})),
            "{'a': [1, 'b', None], \"c'\": {'d': False}}"
        );
        assert_eq!(repr_str("a'b\"c\n\u{1}é"), "'a\\'b\"c\\n\\x01é'");
    }

    #[test]
    fn float_repr_matches_python() {
        for (f, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.5, "1.5"),
            (100000.0, "100000.0"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456789012345.6, "123456789012345.6"),
            (1e15, "1000000000000000.0"),
            (0.1, "0.1"),
            (2.5e300, "2.5e+300"),
        ] {
            assert_eq!(float_repr(f), s, "{f}");
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

    #[test]
    fn literal_eval_values() {
        assert_eq!(lit("True"), "True");
        assert_eq!(lit("None"), "None");
        assert_eq!(lit("'Member'"), "Member");
        assert_eq!(lit("\"a\"'b'"), "ab");
        assert_eq!(lit("'a\\tb'"), "a\tb");
        assert_eq!(lit("r'a\\tb'"), "a\\tb");
        assert_eq!(lit("b'x'"), "b'x'");
        assert_eq!(lit("1"), "1");
        assert_eq!(lit("-1"), "-1");
        assert_eq!(lit("+1"), "1");
        assert_eq!(lit("1_000"), "1000");
        assert_eq!(lit("0x1F"), "31");
        assert_eq!(lit("0o17"), "15");
        assert_eq!(lit("0b101"), "5");
        assert_eq!(lit("00"), "0");
        assert_eq!(lit("1.5"), "1.5");
        assert_eq!(lit("1."), "1.0");
        assert_eq!(lit(".5"), "0.5");
        assert_eq!(lit("1e3"), "1000.0");
        assert_eq!(lit("2j"), "2j");
        assert_eq!(lit("1+2j"), "(1+2j)");
        assert_eq!(lit("1-2.5j"), "(1-2.5j)");
        assert_eq!(lit("-1j"), "(-0-1j)");
        assert_eq!(lit("[1,'a']"), "[1, 'a']");
        assert_eq!(lit("[(1,2)]"), "[(1, 2)]");
        assert_eq!(lit("(1,)"), "(1,)");
        assert_eq!(lit("1,2"), "(1, 2)");
        assert_eq!(lit("()"), "()");
        assert_eq!(lit("{}"), "{}");
        assert_eq!(lit("set()"), "set()");
        assert_eq!(lit("{1}"), "{1}");
        assert_eq!(lit("..."), "Ellipsis");
        assert_eq!(lit("1#comment"), "1");
    }

    #[test]
    fn literal_eval_value_errors() {
        for s in [
            "is_admin",
            "project_id",
            "user.domain_id",
            "a-b",
            "magnum-service",
            "a-1",
            "1-1",
            "f(x)",
            "a[0]",
            "a==b",
            "--1",
            "-True",
            "a/b",
            "a(b)or(c)",
            "f'x'",
            "set(1)",
            "~1",
            "a**b",
            "match",
            "_",
            "x#y",
        ] {
            assert_eq!(lit(s), "<ValueError>", "{s}");
        }
    }

    #[test]
    fn literal_eval_syntax_errors() {
        for s in [
            "",
            "'abc",
            "1abc",
            "01",
            "a..b",
            ".a",
            "a.",
            "a.1",
            "class",
            "a.if",
            "foo-",
            "a!b",
            "$x",
            "a?",
            "a=1",
            "(",
            "a)",
            "[1",
            "1__0",
            "0x",
            "a;b",
            "@a",
            "not",
            "b'\u{e9}'",
            "b'a''c'",
            "await",
            "a[]",
        ] {
            assert_eq!(lit(s), "<SyntaxError>", "{s:?}");
        }
        assert_eq!(lit("{1,2}"), "<unsupported>");
    }
}
