//! CPython 3.11's `ast.literal_eval`: its tokenizer errors, its PEG parser's error messages and
//! which error wins, and the conversion of the expression tree to a value.

use super::PyValue;
use std::fmt;

/// Which Python exception `literal_eval` raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralErrorKind {
    /// `SyntaxError` (the text could not be parsed as an expression).
    Syntax,
    /// `ValueError` (`malformed node or string ...`).
    Value,
    /// `TypeError` (an unhashable dict key or set element). Magnum does not catch it (a 500);
    /// OpenKeel reports it like the others.
    Type,
    /// Valid Python that OpenKeel cannot represent: an integer beyond 128 bits, a
    /// `\N{...}` escape (no Unicode name table here). The message is a syntax error's, as
    /// OpenKeel answered before; callers that must not claim Python's behaviour (the policy
    /// engine) report it as unsupported.
    Unsupported,
}

/// A `literal_eval` failure; `Display` is Python's `str(exception)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralError {
    pub kind: LiteralErrorKind,
    pub message: String,
    /// The line a syntax error is reported at (0 otherwise).
    pub line: usize,
}

impl fmt::Display for LiteralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LiteralError {}

fn syntax(msg: impl fmt::Display, line: usize) -> LiteralError {
    at_line(LiteralErrorKind::Syntax, msg, line)
}

fn at_line(kind: LiteralErrorKind, msg: impl fmt::Display, line: usize) -> LiteralError {
    LiteralError {
        kind,
        message: format!("{msg} (<unknown>, line {line})"),
        line,
    }
}

/// The fake object address used in `<ast.X object at 0x…>`.
const FAKE_ADDRESS: &str = "0x7f0000000000";

/// `ast.literal_eval` of a non-string (an `int` or `bool` PATCH value):
/// `malformed node or string: <repr>`.
pub fn literal_eval_value(v: &PyValue) -> Result<PyValue, LiteralError> {
    match v {
        PyValue::Str(s) => literal_eval(s),
        PyValue::Dict(_) | PyValue::List(_) => Ok(v.clone()),
        other => Err(LiteralError {
            kind: LiteralErrorKind::Value,
            message: format!("malformed node or string: {}", other.repr()),
            line: 0,
        }),
    }
}

/// Inputs longer than this are parsed on a thread of their own with [`DEEP_STACK`] bytes of
/// stack: the recursive descent may go [`MAX_DEPTH`] levels deep, which overflows the 2 MiB
/// of a tokio worker thread (an unoptimised build needs more than that for the 200 brackets
/// CPython accepts), and a stack overflow aborts the whole process — one PATCH of a label
/// value with 199 brackets killed openkeel-api. Shorter inputs cannot nest deeply enough to
/// matter and stay on the caller's thread.
const SHORT_INPUT: usize = 32;

/// The stack of the thread that parses a long input (reserved, not committed, until used).
const DEEP_STACK: usize = 64 * 1024 * 1024;

/// CPython 3.11's `ast.literal_eval(src)`.
pub fn literal_eval(src: &str) -> Result<PyValue, LiteralError> {
    if src.len() <= SHORT_INPUT {
        return literal_eval_here(src);
    }
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("literal_eval".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, || literal_eval_here(src))
        {
            Ok(parser) => parser.join().unwrap_or_else(|_| {
                Err(LiteralError {
                    kind: LiteralErrorKind::Unsupported,
                    message: "the expression could not be evaluated".into(),
                    line: 0,
                })
            }),
            // No thread to be had: refuse rather than risk the caller's stack.
            Err(_) => Err(LiteralError {
                kind: LiteralErrorKind::Unsupported,
                message: "the expression could not be evaluated".into(),
                line: 0,
            }),
        }
    })
}

fn literal_eval_here(src: &str) -> Result<PyValue, LiteralError> {
    let src = src.trim_start_matches([' ', '\t']);
    let tokens = tokenize(src)?;
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        touched_unclosed: std::cell::Cell::new(None),
        touched_soft: std::cell::Cell::new(None),
        empty: src.is_empty(),
        depth: 0,
    };
    let err = match p.parse_eval() {
        // The `Expression` wrapper is one level above the expression.
        Ok(node) if node.depth() + 1 > MAX_DEPTH => return Err(too_deep(node.line())),
        Ok(node) => return convert(&node),
        Err(e) => e,
    };
    // Reading the end of input inside brackets, or a soft tokenizer error, raises at once in
    // CPython (before any error the parser would report later).
    if let Some((open, line)) = p.touched_unclosed.get() {
        return Err(syntax(format!("'{open}' was never closed"), line));
    }
    if let Some((msg, line)) = p.touched_soft.get() {
        return Err(syntax(msg, line));
    }
    // `_PyPegen_tokenize_full_source_to_check_for_errors`: a bracket left open on a line
    // before the error's line.
    let innermost = match p.toks.last().map(|t| &t.tok) {
        Some(Tok::Unclosed(open, line)) => Some((*open, *line)),
        Some(Tok::Soft(_, open)) => *open,
        _ => None,
    };
    if let Some((open, oline)) = innermost {
        if err.line > oline {
            return Err(syntax(format!("'{open}' was never closed"), oline));
        }
    }
    Err(err)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Int(i128),
    Float(f64),
    Imag(f64),
    /// One string literal: (is_bytes, is_fstring, value text or bytes)
    Str(StrLit),
    Op(&'static str),
    Newline,
    End,
    /// The end of input inside brackets (opening bracket, its line).
    Unclosed(char, usize),
    /// A tokenizer error CPython reports only when the parser reads that token (the
    /// innermost open bracket at that point, if any).
    Soft(&'static str, Option<(char, usize)>),
}

#[derive(Debug, Clone, PartialEq)]
enum StrLit {
    Text(String),
    Bytes(Vec<u8>),
    FString,
    /// A literal whose decoding fails: CPython raises this when the parser builds the
    /// string, so earlier parse errors and any tokenizer error win over it.
    Error(LiteralErrorKind, String),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

const OPS3: [&str; 6] = ["**=", "//=", ">>=", "<<=", "...", "!=="];
const OPS2: [&str; 20] = [
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "@=", "<>",
];
const OPS1: &str = "+-*/%@&|^~<>()[]{},:.;=!";

fn op_static(s: &str) -> &'static str {
    for o in OPS3.iter().chain(OPS2.iter()) {
        if *o == s {
            return o;
        }
    }
    match s {
        "+" => "+",
        "-" => "-",
        "*" => "*",
        "/" => "/",
        "%" => "%",
        "@" => "@",
        "&" => "&",
        "|" => "|",
        "^" => "^",
        "~" => "~",
        "<" => "<",
        ">" => ">",
        "(" => "(",
        ")" => ")",
        "[" => "[",
        "]" => "]",
        "{" => "{",
        "}" => "}",
        "," => ",",
        ":" => ":",
        "." => ".",
        ";" => ";",
        "=" => "=",
        _ => "!",
    }
}

fn closing_of(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

/// Python's keywords (which the tokenizer gives as `NAME` but the grammar treats apart).
fn is_keyword(n: &str) -> bool {
    matches!(
        n,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The tokenizer: Python's lexical rules for the subset of tokens an expression can hold,
/// with the tokenizer-level errors CPython reports (unbalanced brackets, unterminated strings,
/// bad number literals).
fn tokenize(src: &str) -> Result<Vec<Token>, LiteralError> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut line = 1;
    let mut out: Vec<Token> = Vec::new();
    let mut stack: Vec<(char, usize)> = Vec::new();
    let mut line_has_tokens = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\x0c' => {
                i += 1;
            }
            '\r' | '\n' => {
                if c == '\r' && chars.get(i + 1) == Some(&'\n') {
                    i += 1;
                }
                i += 1;
                if stack.is_empty() && line_has_tokens {
                    out.push(Token {
                        tok: Tok::Newline,
                        line,
                    });
                    line_has_tokens = false;
                }
                line += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' && chars[i] != '\r' {
                    i += 1;
                }
            }
            '\\' => match chars.get(i + 1) {
                Some('\n') => {
                    i += 2;
                    line += 1;
                }
                Some('\r') => {
                    i += 2;
                    if chars.get(i) == Some(&'\n') {
                        i += 1;
                    }
                    line += 1;
                }
                _ => {
                    // A "soft" tokenizer error: reported only when the parser reaches it.
                    out.push(Token {
                        tok: Tok::Soft(
                            "unexpected character after line continuation character",
                            stack.last().copied(),
                        ),
                        line,
                    });
                    return Ok(out);
                }
            },
            '(' | '[' | '{' => {
                // CPython's tokenizer: MAXLEVEL (200) brackets open at once.
                if stack.len() >= MAX_BRACKET_LEVEL {
                    return Err(syntax("too many nested parentheses", line));
                }
                stack.push((c, line));
                out.push(Token {
                    tok: Tok::Op(op_static(&c.to_string())),
                    line,
                });
                line_has_tokens = true;
                i += 1;
            }
            ')' | ']' | '}' => {
                match stack.pop() {
                    None => return Err(syntax(format!("unmatched '{c}'"), line)),
                    Some((open, oline)) if closing_of(open) != c => {
                        let msg = if oline == line {
                            format!(
                                "closing parenthesis '{c}' does not match opening parenthesis '{open}'"
                            )
                        } else {
                            format!("closing parenthesis '{c}' does not match opening parenthesis '{open}' on line {oline}")
                        };
                        return Err(syntax(msg, line));
                    }
                    Some(_) => {}
                }
                out.push(Token {
                    tok: Tok::Op(op_static(&c.to_string())),
                    line,
                });
                line_has_tokens = true;
                i += 1;
            }
            c if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let (tok, next) = lex_number(&chars, i, line)?;
                out.push(Token { tok, line });
                line_has_tokens = true;
                i = next;
            }
            c if is_ident_start(c) => {
                let start = i;
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let lower = word.to_ascii_lowercase();
                let is_prefix = matches!(
                    lower.as_str(),
                    "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
                );
                if is_prefix && matches!(chars.get(i), Some('\'') | Some('"')) {
                    let start_line = line;
                    let (lit, next, lines) = lex_string(&chars, i, &lower, line)?;
                    out.push(Token {
                        tok: Tok::Str(lit),
                        line: start_line,
                    });
                    line += lines;
                    i = next;
                } else {
                    out.push(Token {
                        tok: Tok::Name(word),
                        line,
                    });
                }
                line_has_tokens = true;
            }
            '\'' | '"' => {
                let start_line = line;
                let (lit, next, lines) = lex_string(&chars, i, "", line)?;
                out.push(Token {
                    tok: Tok::Str(lit),
                    line: start_line,
                });
                line += lines;
                i = next;
                line_has_tokens = true;
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let op = OPS3
                    .iter()
                    .find(|o| rest.starts_with(**o))
                    .or_else(|| OPS2.iter().find(|o| rest.starts_with(**o)))
                    .copied()
                    .or_else(|| OPS1.contains(c).then(|| op_static(&c.to_string())));
                match op {
                    Some(o) if o != "!" && o != "!==" => {
                        out.push(Token {
                            tok: Tok::Op(o),
                            line,
                        });
                        line_has_tokens = true;
                        i += o.chars().count();
                    }
                    _ => {
                        if c == '$' || c == '?' || c == '`' || c == '!' {
                            out.push(Token {
                                tok: Tok::Soft("invalid syntax", stack.last().copied()),
                                line,
                            });
                            return Ok(out);
                        }
                        return Err(syntax(
                            format!("invalid character '{c}' (U+{:04X})", c as u32),
                            line,
                        ));
                    }
                }
            }
        }
    }
    if let Some((open, oline)) = stack.last() {
        out.push(Token {
            tok: Tok::Unclosed(*open, *oline),
            line,
        });
        return Ok(out);
    }
    if line_has_tokens {
        out.push(Token {
            tok: Tok::Newline,
            line,
        });
    }
    out.push(Token {
        tok: Tok::End,
        line,
    });
    Ok(out)
}

fn lex_number(chars: &[char], start: usize, line: usize) -> Result<(Tok, usize), LiteralError> {
    let mut i = start;
    let word_end = |mut j: usize| {
        while j < chars.len() && (is_ident_char(chars[j]) || chars[j] == '.') {
            j += 1;
        }
        j
    };
    // Radix literals.
    if chars[i] == '0' {
        if let Some(r) = chars.get(i + 1).map(|c| c.to_ascii_lowercase()) {
            let (radix, name) = match r {
                'x' => (16, "hexadecimal"),
                'o' => (8, "octal"),
                'b' => (2, "binary"),
                _ => (0, ""),
            };
            if radix != 0 {
                i += 2;
                let mut digits = String::new();
                let mut last_us = true;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    let c = chars[i];
                    if c == '_' {
                        if last_us {
                            return Err(syntax(format!("invalid {name} literal"), line));
                        }
                        last_us = true;
                    } else if c.is_digit(radix) {
                        digits.push(c);
                        last_us = false;
                    } else if c.is_ascii_digit() {
                        return Err(syntax(
                            format!("invalid digit '{c}' in {name} literal"),
                            line,
                        ));
                    } else {
                        return Err(syntax(format!("invalid {name} literal"), line));
                    }
                    i += 1;
                }
                if digits.is_empty() || last_us {
                    return Err(syntax(format!("invalid {name} literal"), line));
                }
                let v = i128::from_str_radix(&digits, radix).map_err(|_| too_large(line))?;
                return Ok((Tok::Int(v), i));
            }
        }
    }
    // Decimal: digits [. digits] [e [+-] digits] [j]
    let mut text = String::new();
    let mut is_float = false;
    let digits = |i: &mut usize, text: &mut String| -> Result<bool, LiteralError> {
        let mut any = false;
        let mut last_us = false;
        while *i < chars.len() && (chars[*i].is_ascii_digit() || chars[*i] == '_') {
            if chars[*i] == '_' {
                if !any || last_us {
                    return Err(syntax("invalid decimal literal", line));
                }
                last_us = true;
            } else {
                text.push(chars[*i]);
                any = true;
                last_us = false;
            }
            *i += 1;
        }
        if last_us {
            return Err(syntax("invalid decimal literal", line));
        }
        Ok(any)
    };
    let int_part = digits(&mut i, &mut text)?;
    if chars.get(i) == Some(&'.') {
        is_float = true;
        text.push('.');
        i += 1;
        if chars.get(i) == Some(&'_') {
            return Err(syntax("invalid decimal literal", line));
        }
        digits(&mut i, &mut text)?;
    }
    if matches!(chars.get(i), Some('e') | Some('E')) {
        let save = i;
        let mut exp = String::from("e");
        i += 1;
        if matches!(chars.get(i), Some('+') | Some('-')) {
            exp.push(chars[i]);
            i += 1;
        }
        let mut d = String::new();
        if !digits(&mut i, &mut d)? {
            let _ = save;
            return Err(syntax("invalid decimal literal", line));
        }
        exp.push_str(&d);
        text.push_str(&exp);
        is_float = true;
    }
    let imag = matches!(chars.get(i), Some('j') | Some('J'));
    if imag {
        i += 1;
    }
    if i < chars.len() && is_ident_char(chars[i]) {
        let _ = word_end(i);
        return Err(syntax("invalid decimal literal", line));
    }
    if imag {
        let f: f64 = text.parse().unwrap_or(f64::INFINITY);
        return Ok((Tok::Imag(f), i));
    }
    if is_float {
        let f: f64 = text.parse().unwrap_or(f64::INFINITY);
        return Ok((Tok::Float(f), i));
    }
    let _ = int_part;
    if text.len() > 1 && text.starts_with('0') && text.chars().any(|c| c != '0') {
        return Err(syntax("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers", line));
    }
    let v: i128 = text.parse().map_err(|_| too_large(line))?;
    Ok((Tok::Int(v), i))
}

/// An integer literal beyond `i128` (Python has arbitrary precision).
fn too_large(line: usize) -> LiteralError {
    at_line(
        LiteralErrorKind::Unsupported,
        "integer literal too large",
        line,
    )
}

/// Lex one string literal starting at the quote `chars[start]`. Returns the literal, the
/// index after it and how many newlines it spans.
fn lex_string(
    chars: &[char],
    start: usize,
    prefix: &str,
    line: usize,
) -> Result<(StrLit, usize, usize), LiteralError> {
    let q = chars[start];
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    let raw = prefix.contains('r');
    let bytes = prefix.contains('b');
    let fstr = prefix.contains('f');
    let mut body: Vec<char> = Vec::new();
    let mut lines = 0;
    loop {
        let Some(&c) = chars.get(i) else {
            let what = if triple {
                "unterminated triple-quoted string literal"
            } else {
                "unterminated string literal"
            };
            return Err(syntax(
                format!("{what} (detected at line {})", line + lines),
                line,
            ));
        };
        if c == q {
            if !triple {
                i += 1;
                break;
            }
            if chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                i += 3;
                break;
            }
        }
        if (c == '\n' || c == '\r') && !triple {
            return Err(syntax(
                format!(
                    "unterminated string literal (detected at line {})",
                    line + lines
                ),
                line,
            ));
        }
        if c == '\n' {
            lines += 1;
        }
        if c == '\\' {
            if let Some(&n) = chars.get(i + 1) {
                body.push(c);
                body.push(n);
                if n == '\n' {
                    lines += 1;
                }
                i += 2;
                continue;
            }
        }
        body.push(c);
        i += 1;
    }
    if fstr {
        return Ok((StrLit::FString, i, lines));
    }
    if bytes {
        if body.iter().any(|c| !c.is_ascii()) {
            return Ok((
                StrLit::Error(
                    LiteralErrorKind::Syntax,
                    "bytes can only contain ASCII literal characters".into(),
                ),
                i,
                lines,
            ));
        }
        let v = if raw {
            body.iter().map(|c| *c as u8).collect()
        } else {
            unescape_bytes(&body)
        };
        return Ok((StrLit::Bytes(v), i, lines));
    }
    if raw {
        return Ok((StrLit::Text(body.iter().collect()), i, lines));
    }
    let _ = line;
    match unescape_text(&body) {
        Ok(text) => Ok((StrLit::Text(text), i, lines)),
        Err((kind, m)) => Ok((StrLit::Error(kind, m), i, lines)),
    }
}

fn unicode_error(pos: usize, end: usize, what: &str) -> String {
    format!(
        "(unicode error) 'unicodeescape' codec can't decode bytes in position {pos}-{end}: {what}"
    )
}

fn unescape_text(body: &[char]) -> Result<String, (LiteralErrorKind, String)> {
    let mut out = String::new();
    let mut i = 0;
    // Positions are byte offsets in the UTF-8 encoding of the literal's body.
    let byte_pos = |idx: usize| -> usize { body[..idx].iter().map(|c| c.len_utf8()).sum() };
    while i < body.len() {
        let c = body[i];
        if c != '\\' || i + 1 >= body.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = body[i + 1];
        match n {
            '\n' => i += 2,
            '\\' | '\'' | '"' => {
                out.push(n);
                i += 2;
            }
            'a' => {
                out.push('\x07');
                i += 2;
            }
            'b' => {
                out.push('\x08');
                i += 2;
            }
            'f' => {
                out.push('\x0c');
                i += 2;
            }
            'n' => {
                out.push('\n');
                i += 2;
            }
            'r' => {
                out.push('\r');
                i += 2;
            }
            't' => {
                out.push('\t');
                i += 2;
            }
            'v' => {
                out.push('\x0b');
                i += 2;
            }
            '0'..='7' => {
                let mut v = 0u32;
                let mut j = i + 1;
                while j < body.len() && j < i + 4 && body[j].is_digit(8) {
                    v = v * 8 + body[j].to_digit(8).unwrap_or(0);
                    j += 1;
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                i = j;
            }
            'x' | 'u' | 'U' => {
                let (len, what) = match n {
                    'x' => (2, "truncated \\xXX escape"),
                    'u' => (4, "truncated \\uXXXX escape"),
                    _ => (8, "truncated \\UXXXXXXXX escape"),
                };
                let hex: String = body[i + 2..body.len().min(i + 2 + len)].iter().collect();
                if hex.chars().count() < len || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                    let good = hex.chars().take_while(char::is_ascii_hexdigit).count();
                    let end = byte_pos(i) + 1 + good;
                    return Err((
                        LiteralErrorKind::Syntax,
                        unicode_error(byte_pos(i), end, what),
                    ));
                }
                let v = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                match char::from_u32(v) {
                    Some(ch) => out.push(ch),
                    None => {
                        return Err((
                            LiteralErrorKind::Syntax,
                            unicode_error(
                                byte_pos(i),
                                byte_pos(i) + 1 + len,
                                "illegal Unicode character",
                            ),
                        ))
                    }
                }
                i += 2 + len;
            }
            'N' => {
                let end = body[i..]
                    .iter()
                    .position(|c| *c == '}')
                    .map_or(body.len(), |p| i + p);
                // CPython decodes a known name; OpenKeel has no name table.
                return Err((
                    LiteralErrorKind::Unsupported,
                    unicode_error(
                        byte_pos(i),
                        byte_pos(end.min(body.len() - 1)),
                        "unknown Unicode character name",
                    ),
                ));
            }
            other => {
                out.push('\\');
                out.push(other);
                i += 2;
            }
        }
    }
    Ok(out)
}

fn unescape_bytes(body: &[char]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != '\\' || i + 1 >= body.len() {
            out.push(c as u8);
            i += 1;
            continue;
        }
        let n = body[i + 1];
        let simple = match n {
            '\\' => Some(b'\\'),
            '\'' => Some(b'\''),
            '"' => Some(b'"'),
            'a' => Some(7),
            'b' => Some(8),
            'f' => Some(12),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(11),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            i += 2;
        } else if n == '\n' {
            i += 2;
        } else if n.is_digit(8) {
            let mut v = 0u32;
            let mut j = i + 1;
            while j < body.len() && j < i + 4 && body[j].is_digit(8) {
                v = v * 8 + body[j].to_digit(8).unwrap_or(0);
                j += 1;
            }
            out.push((v & 0xFF) as u8);
            i = j;
        } else if n == 'x'
            && body.len() >= i + 4
            && body[i + 2].is_ascii_hexdigit()
            && body[i + 3].is_ascii_hexdigit()
        {
            let h: String = body[i + 2..i + 4].iter().collect();
            out.push(u8::from_str_radix(&h, 16).unwrap_or(0));
            i += 4;
        } else {
            out.push(b'\\');
            out.push(n as u8);
            i += 2;
        }
    }
    out
}

/// CPython's tokenizer limit on open brackets (`MAXLEVEL`).
const MAX_BRACKET_LEVEL: usize = 200;

/// The deepest expression tree accepted: CPython 3.11 stops building the AST at a depth of
/// three times the recursion limit (`RecursionError: maximum recursion depth exceeded during
/// ast construction`). The parser's own recursion (unary operators, `not`, `if`/`else`, `**`)
/// is bounded by the same figure.
const MAX_DEPTH: usize = 3000;

fn too_deep(line: usize) -> LiteralError {
    at_line(
        LiteralErrorKind::Unsupported,
        "maximum recursion depth exceeded during ast construction",
        line,
    )
}

/// The expression tree, reduced to what `literal_eval` distinguishes.
#[derive(Debug)]
enum Node {
    Constant(PyValue, usize),
    Name(String, usize),
    JoinedStr(usize),
    Tuple(Vec<Node>, usize),
    List(Vec<Node>, usize),
    Set(Vec<Node>, usize),
    /// Keys (`None` for `**x`) and values.
    Dict(Vec<Option<Node>>, Vec<Node>, usize),
    Call(Box<Node>, usize, bool),
    UnaryOp(&'static str, Box<Node>, usize),
    BinOp(Box<Node>, &'static str, Box<Node>, usize),
    /// Any other expression kind (its AST class name), which literal_eval rejects.
    Other(&'static str, usize),
}

impl Drop for Node {
    /// Iterative, so that a long operator chain (`1+1+1+…`, a left-deep tree as long as the
    /// input) is freed without recursing once per node.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        while let Some(mut node) = stack.pop() {
            node.take_children(&mut stack);
        }
    }
}

impl Node {
    /// Moves the sub-expressions out (leaving leaves behind) onto `out`.
    fn take_children(&mut self, out: &mut Vec<Node>) {
        let leaf = || Node::Other("", 0);
        match self {
            Node::Tuple(items, _) | Node::List(items, _) | Node::Set(items, _) => {
                out.append(items);
            }
            Node::Dict(keys, values, _) => {
                out.extend(keys.drain(..).flatten());
                out.append(values);
            }
            Node::Call(inner, _, _) | Node::UnaryOp(_, inner, _) => {
                out.push(std::mem::replace(inner.as_mut(), leaf()));
            }
            Node::BinOp(left, _, right, _) => {
                out.push(std::mem::replace(left.as_mut(), leaf()));
                out.push(std::mem::replace(right.as_mut(), leaf()));
            }
            Node::Constant(..) | Node::Name(..) | Node::JoinedStr(_) | Node::Other(..) => {}
        }
    }

    /// The depth of the tree (a single node is 1), computed without recursion.
    fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((node, d)) = stack.pop() {
            deepest = deepest.max(d);
            match node {
                Node::Tuple(items, _) | Node::List(items, _) | Node::Set(items, _) => {
                    stack.extend(items.iter().map(|n| (n, d + 1)));
                }
                Node::Dict(keys, values, _) => {
                    stack.extend(keys.iter().flatten().map(|n| (n, d + 1)));
                    stack.extend(values.iter().map(|n| (n, d + 1)));
                }
                Node::Call(inner, _, _) | Node::UnaryOp(_, inner, _) => {
                    stack.push((inner, d + 1));
                }
                Node::BinOp(left, _, right, _) => {
                    stack.push((left, d + 1));
                    stack.push((right, d + 1));
                }
                Node::Constant(..) | Node::Name(..) | Node::JoinedStr(_) | Node::Other(..) => {}
            }
        }
        deepest
    }

    fn line(&self) -> usize {
        match self {
            Node::Constant(_, l)
            | Node::Name(_, l)
            | Node::JoinedStr(l)
            | Node::Tuple(_, l)
            | Node::List(_, l)
            | Node::Set(_, l)
            | Node::Dict(_, _, l)
            | Node::Call(_, l, _)
            | Node::UnaryOp(_, _, l)
            | Node::BinOp(_, _, _, l)
            | Node::Other(_, l) => *l,
        }
    }

    fn class(&self) -> &'static str {
        match self {
            Node::Constant(..) => "Constant",
            Node::Name(..) => "Name",
            Node::JoinedStr(_) => "JoinedStr",
            Node::Tuple(..) => "Tuple",
            Node::List(..) => "List",
            Node::Set(..) => "Set",
            Node::Dict(..) => "Dict",
            Node::Call(..) => "Call",
            Node::UnaryOp(..) => "UnaryOp",
            Node::BinOp(..) => "BinOp",
            Node::Other(c, _) => c,
        }
    }
}

fn malformed(node: Option<&Node>) -> LiteralError {
    let message = match node {
        None => "malformed node or string: None".to_string(),
        Some(n) => format!(
            "malformed node or string on line {}: <ast.{} object at {FAKE_ADDRESS}>",
            n.line(),
            n.class()
        ),
    };
    LiteralError {
        kind: LiteralErrorKind::Value,
        message,
        line: 0,
    }
}

fn convert_num(node: &Node) -> Result<PyValue, LiteralError> {
    match node {
        Node::Constant(v @ (PyValue::Int(_) | PyValue::Float(_) | PyValue::Complex(..)), _) => {
            Ok(v.clone())
        }
        other => Err(malformed(Some(other))),
    }
}

fn negate(v: PyValue) -> PyValue {
    match v {
        PyValue::Int(i) => PyValue::Int(-i),
        PyValue::Float(f) => PyValue::Float(-f),
        PyValue::Complex(r, i) => PyValue::Complex(-r, -i),
        other => other,
    }
}

fn convert_signed_num(node: &Node) -> Result<PyValue, LiteralError> {
    if let Node::UnaryOp(op @ ("+" | "-"), operand, _) = node {
        let v = convert_num(operand)?;
        return Ok(if *op == "-" { negate(v) } else { v });
    }
    convert_num(node)
}

fn insert_unique(items: &mut Vec<PyValue>, v: PyValue) -> Result<(), LiteralError> {
    check_hashable(&v)?;
    if !items.iter().any(|x| x.py_eq(&v)) {
        items.push(v);
    }
    Ok(())
}

fn check_hashable(v: &PyValue) -> Result<(), LiteralError> {
    v.hashable().map_err(|t| LiteralError {
        kind: LiteralErrorKind::Type,
        message: format!("unhashable type: '{t}'"),
        line: 0,
    })
}

fn convert(node: &Node) -> Result<PyValue, LiteralError> {
    match node {
        Node::Constant(v, _) => Ok(v.clone()),
        Node::Tuple(items, _) => Ok(PyValue::Tuple(
            items.iter().map(convert).collect::<Result<_, _>>()?,
        )),
        Node::List(items, _) => Ok(PyValue::List(
            items.iter().map(convert).collect::<Result<_, _>>()?,
        )),
        Node::Set(items, _) => {
            let mut out = Vec::new();
            for n in items {
                insert_unique(&mut out, convert(n)?)?;
            }
            Ok(PyValue::Set(out))
        }
        Node::Call(func, _, no_args)
            if *no_args && matches!(func.as_ref(), Node::Name(n, _) if n == "set") =>
        {
            Ok(PyValue::Set(Vec::new()))
        }
        Node::Dict(keys, values, _) => {
            let mut out: Vec<(PyValue, PyValue)> = Vec::new();
            for (k, v) in keys.iter().zip(values) {
                let key = match k {
                    Some(k) => convert(k)?,
                    None => return Err(malformed(None)),
                };
                let value = convert(v)?;
                check_hashable(&key)?;
                if let Some(slot) = out.iter_mut().find(|(k2, _)| k2.py_eq(&key)) {
                    slot.1 = value;
                } else {
                    out.push((key, value));
                }
            }
            Ok(PyValue::Dict(out))
        }
        Node::BinOp(left, op @ ("+" | "-"), right, _) => {
            let l = convert_signed_num(left)?;
            let r = convert_num(right)?;
            if let (PyValue::Int(_) | PyValue::Float(_), PyValue::Complex(ri, ii)) = (&l, &r) {
                let lf = match l {
                    PyValue::Int(i) => i as f64,
                    PyValue::Float(f) => f,
                    _ => 0.0,
                };
                return Ok(if *op == "+" {
                    PyValue::Complex(lf + ri, 0.0 + ii)
                } else {
                    PyValue::Complex(lf - ri, 0.0 - ii)
                });
            }
            convert_signed_num(node)
        }
        other => convert_signed_num(other),
    }
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Set when the parser looked at the end of input inside brackets.
    touched_unclosed: std::cell::Cell<Option<(char, usize)>>,
    /// Set when the parser looked at a soft tokenizer error.
    touched_soft: std::cell::Cell<Option<(&'static str, usize)>>,
    /// The (stripped) source was empty (CPython reports line 0 then).
    empty: bool,
    /// How deep the recursive descent is (bounded by [`MAX_DEPTH`]).
    depth: usize,
}

type PResult<T> = Result<T, LiteralError>;

impl Parser {
    fn peek(&self) -> &Tok {
        let tok = &self.toks[self.pos.min(self.toks.len() - 1)];
        match &tok.tok {
            Tok::Unclosed(open, line) if self.touched_unclosed.get().is_none() => {
                self.touched_unclosed.set(Some((*open, *line)));
            }
            Tok::Soft(msg, _) if self.touched_soft.get().is_none() => {
                self.touched_soft.set(Some((msg, tok.line)));
            }
            _ => {}
        }
        &tok.tok
    }

    fn line(&self) -> usize {
        self.toks[self.pos.min(self.toks.len() - 1)].line
    }

    /// At the last token, which [`Parser::bump`] does not move past (the end, or a soft
    /// tokenizer error): a loop skipping tokens must stop here.
    fn at_last(&self) -> bool {
        self.pos + 1 >= self.toks.len()
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos.min(self.toks.len() - 1)].clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn is_name(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn invalid(&self) -> LiteralError {
        let line = match self.peek() {
            Tok::End => {
                // CPython reports an empty input at line 0.
                if self.toks.len() <= 1 {
                    0
                } else {
                    self.line()
                }
            }
            _ => self.line(),
        };
        syntax("invalid syntax", line)
    }

    /// Tokens that can start an expression.
    fn starts_expr(&self) -> bool {
        match self.peek() {
            Tok::Name(n) => !matches!(
                n.as_str(),
                "if" | "else"
                    | "for"
                    | "in"
                    | "is"
                    | "and"
                    | "or"
                    | "from"
                    | "import"
                    | "as"
                    | "def"
                    | "class"
                    | "return"
                    | "pass"
                    | "while"
                    | "with"
                    | "del"
                    | "try"
                    | "except"
                    | "finally"
                    | "raise"
                    | "global"
                    | "nonlocal"
                    | "assert"
                    | "break"
                    | "continue"
                    | "elif"
                    | "yield"
            ),
            Tok::Int(_) | Tok::Float(_) | Tok::Imag(_) | Tok::Str(_) => true,
            Tok::Op(o) => matches!(*o, "(" | "[" | "{" | "-" | "+" | "~" | "..."),
            _ => false,
        }
    }

    /// Calls `f` one level deeper in the recursive descent, failing beyond [`MAX_DEPTH`].
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> PResult<Node>) -> PResult<Node> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep(self.line()));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn parse_eval(&mut self) -> PResult<Node> {
        if matches!(self.peek(), Tok::End | Tok::Newline) {
            let line = if self.empty { 0 } else { self.line() };
            return Err(syntax("invalid syntax", line));
        }
        let node = self.parse_tuple_or_expr(false)?;
        if matches!(self.peek(), Tok::Newline) {
            self.bump();
        }
        if !matches!(self.peek(), Tok::End) {
            return Err(self.invalid());
        }
        Ok(node)
    }

    /// `expr (',' expr)* [',']` — a bare tuple at the top level or inside parentheses.
    fn parse_tuple_or_expr(&mut self, in_brackets: bool) -> PResult<Node> {
        let line = self.line();
        if !in_brackets && self.is_op("*") {
            return Err(self.invalid());
        }
        let first = self.parse_starred_expr(in_brackets)?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if !(self.starts_expr() || in_brackets && self.is_op("*")) {
                if self.is_op("*") {
                    return Err(self.invalid());
                }
                break;
            }
            items.push(self.parse_starred_expr(in_brackets)?);
        }
        Ok(Node::Tuple(items, line))
    }

    fn parse_starred_expr(&mut self, in_brackets: bool) -> PResult<Node> {
        if self.is_op("*") {
            let line = self.line();
            self.bump();
            self.parse_expr(in_brackets)?;
            return Ok(Node::Other("Starred", line));
        }
        self.parse_expr(in_brackets)
    }

    /// One expression, followed (inside brackets) by the "forgot a comma" check.
    fn parse_expr(&mut self, in_brackets: bool) -> PResult<Node> {
        let start = self.pos;
        let line = self.line();
        let node = self.parse_ternary()?;
        if self.starts_expr() {
            // `!(NAME STRING)`: a real name (not a keyword such as `None`) before a string.
            let name_then_string = matches!(self.toks.get(start).map(|t| &t.tok), Some(Tok::Name(n)) if !is_keyword(n))
                && matches!(self.toks.get(start + 1).map(|t| &t.tok), Some(Tok::Str(_)));
            if !name_then_string {
                // invalid_expression (CPython's second pass) parses the juxtaposed
                // expression too, which may run into the end of input.
                // The message needs that second expression to parse.
                let save = self.pos;
                let second = self.parse_ternary();
                self.pos = save;
                if in_brackets && second.is_ok() {
                    return Err(syntax("invalid syntax. Perhaps you forgot a comma?", line));
                }
            }
        }
        Ok(node)
    }

    fn parse_ternary(&mut self) -> PResult<Node> {
        if self.is_name("lambda") {
            let line = self.line();
            self.bump();
            while !self.is_op(":") {
                if matches!(self.peek(), Tok::End | Tok::Newline | Tok::Unclosed(..))
                    || self.at_last()
                {
                    return Err(self.invalid());
                }
                self.bump();
            }
            self.bump();
            self.nested(Self::parse_ternary)?;
            return Ok(Node::Other("Lambda", line));
        }
        let line = self.line();
        let body = self.parse_or()?;
        if self.is_name("if") {
            self.bump();
            self.parse_or()?;
            if !self.is_name("else") {
                return Err(syntax("expected 'else' after 'if' expression", line));
            }
            self.bump();
            self.nested(Self::parse_ternary)?;
            return Ok(Node::Other("IfExp", line));
        }
        Ok(body)
    }

    fn parse_or(&mut self) -> PResult<Node> {
        let line = self.line();
        let first = self.parse_and()?;
        if !self.is_name("or") {
            return Ok(first);
        }
        while self.is_name("or") {
            self.bump();
            self.parse_and()?;
        }
        Ok(Node::Other("BoolOp", line))
    }

    fn parse_and(&mut self) -> PResult<Node> {
        let line = self.line();
        let first = self.parse_not()?;
        if !self.is_name("and") {
            return Ok(first);
        }
        while self.is_name("and") {
            self.bump();
            self.parse_not()?;
        }
        Ok(Node::Other("BoolOp", line))
    }

    fn parse_not(&mut self) -> PResult<Node> {
        if self.is_name("not") {
            let line = self.line();
            self.bump();
            let operand = self.nested(Self::parse_not)?;
            return Ok(Node::UnaryOp("not", Box::new(operand), line));
        }
        self.parse_comparison()
    }

    fn is_compare_op(&self) -> bool {
        match self.peek() {
            Tok::Op(o) => matches!(*o, "<" | ">" | "==" | ">=" | "<=" | "!="),
            Tok::Name(n) => n == "in" || n == "is" || n == "not",
            _ => false,
        }
    }

    fn parse_comparison(&mut self) -> PResult<Node> {
        let line = self.line();
        let first = self.parse_binary(0)?;
        if !self.is_compare_op() {
            return Ok(first);
        }
        while self.is_compare_op() {
            let t = self.bump();
            if let Tok::Name(n) = &t.tok {
                if n == "not" {
                    if !self.is_name("in") {
                        return Err(self.invalid());
                    }
                    self.bump();
                } else if n == "is" && self.is_name("not") {
                    self.bump();
                }
            }
            self.parse_binary(0)?;
        }
        Ok(Node::Other("Compare", line))
    }

    fn binary_level(op: &str) -> Option<usize> {
        Some(match op {
            "|" => 0,
            "^" => 1,
            "&" => 2,
            "<<" | ">>" => 3,
            "+" | "-" => 4,
            "*" | "/" | "//" | "%" | "@" => 5,
            _ => return None,
        })
    }

    fn parse_binary(&mut self, level: usize) -> PResult<Node> {
        if level > 5 {
            return self.parse_factor();
        }
        let line = self.line();
        let mut left = self.parse_binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Op(o) if Self::binary_level(o) == Some(level) => *o,
                _ => break,
            };
            // PEG backtracking: an operator without an operand is left for the caller.
            let save = self.pos;
            self.bump();
            if !self.starts_expr() || self.is_name("not") || self.is_name("lambda") {
                self.pos = save;
                break;
            }
            let right = self.parse_binary(level + 1)?;
            left = Node::BinOp(Box::new(left), op, Box::new(right), line);
        }
        Ok(left)
    }

    fn parse_factor(&mut self) -> PResult<Node> {
        if let Tok::Op(o @ ("+" | "-" | "~")) = self.peek() {
            let op = *o;
            let line = self.line();
            self.bump();
            if !self.starts_expr() {
                return Err(self.invalid());
            }
            let operand = self.nested(Self::parse_factor)?;
            return Ok(Node::UnaryOp(op, Box::new(operand), line));
        }
        self.parse_power()
    }

    fn parse_power(&mut self) -> PResult<Node> {
        let line = self.line();
        let base = self.parse_primary()?;
        if self.eat_op("**") {
            let exp = self.nested(Self::parse_factor)?;
            return Ok(Node::BinOp(Box::new(base), "**", Box::new(exp), line));
        }
        Ok(base)
    }

    fn parse_primary(&mut self) -> PResult<Node> {
        let mut node = self.parse_atom()?;
        // Each call, subscript or attribute is one level more in CPython's tree.
        let mut trailers = 0usize;
        loop {
            let line = node.line();
            if trailers >= MAX_DEPTH && (self.is_op("(") || self.is_op("[") || self.is_op(".")) {
                return Err(too_deep(line));
            }
            trailers += 1;
            if self.is_op("(") {
                self.bump();
                let mut no_args = true;
                while !self.is_op(")") {
                    no_args = false;
                    if self.eat_op("*") || self.eat_op("**") {
                        self.parse_expr(true)?;
                    } else {
                        self.parse_expr(true)?;
                        if self.eat_op("=") {
                            self.parse_expr(true)?;
                        }
                    }
                    if !self.eat_op(",") {
                        break;
                    }
                }
                if !self.eat_op(")") {
                    return Err(self.invalid());
                }
                node = Node::Call(Box::new(node), line, no_args);
            } else if self.is_op("[") {
                self.bump();
                if self.is_op("]") {
                    return Err(self.invalid());
                }
                while !self.is_op("]") {
                    if matches!(self.peek(), Tok::End | Tok::Unclosed(..)) || self.at_last() {
                        return Err(self.invalid());
                    }
                    self.bump();
                }
                self.bump();
                node = Node::Other("Subscript", line);
            } else if self.is_op(".") {
                self.bump();
                // `a.if`, `a.None`: a keyword is no attribute name (CPython: invalid syntax).
                match self.bump().tok {
                    Tok::Name(n) if !is_keyword(&n) => {}
                    _ => return Err(self.invalid()),
                }
                node = Node::Other("Attribute", line);
            } else {
                break;
            }
        }
        Ok(node)
    }

    fn parse_atom(&mut self) -> PResult<Node> {
        let line = self.line();
        match self.peek().clone() {
            Tok::Int(i) => {
                self.bump();
                Ok(Node::Constant(PyValue::Int(i), line))
            }
            Tok::Float(f) => {
                self.bump();
                Ok(Node::Constant(PyValue::Float(f), line))
            }
            Tok::Imag(f) => {
                self.bump();
                Ok(Node::Constant(PyValue::Complex(0.0, f), line))
            }
            Tok::Str(_) => self.parse_strings(),
            Tok::Name(n) => {
                self.bump();
                Ok(match n.as_str() {
                    "True" => Node::Constant(PyValue::Bool(true), line),
                    "False" => Node::Constant(PyValue::Bool(false), line),
                    "None" => Node::Constant(PyValue::None, line),
                    "await" => {
                        self.parse_primary()?;
                        Node::Other("Await", line)
                    }
                    "if" | "else" | "for" | "in" | "is" | "and" | "or" | "from" | "import"
                    | "as" | "def" | "class" | "return" | "pass" | "while" | "with" | "del"
                    | "try" | "except" | "finally" | "raise" | "global" | "nonlocal" | "assert"
                    | "break" | "continue" | "elif" | "yield" | "lambda" | "not" => {
                        self.pos -= 1;
                        return Err(self.invalid());
                    }
                    _ => Node::Name(n, line),
                })
            }
            Tok::Op("...") => {
                self.bump();
                Ok(Node::Constant(PyValue::Ellipsis, line))
            }
            Tok::Op("(") => {
                self.bump();
                if self.eat_op(")") {
                    return Ok(Node::Tuple(Vec::new(), line));
                }
                let inner = self.parse_tuple_or_expr(true)?;
                if self.is_name("for") {
                    self.skip_to_close(")")?;
                    return Ok(Node::Other("GeneratorExp", line));
                }
                if !self.eat_op(")") {
                    return Err(self.invalid());
                }
                let mut inner = inner;
                if let Node::Tuple(_, l) = &mut inner {
                    *l = line;
                }
                Ok(inner)
            }
            Tok::Op("[") => {
                self.bump();
                let items = self.parse_list_items("]")?;
                match items {
                    Some(items) => Ok(Node::List(items, line)),
                    None => Ok(Node::Other("ListComp", line)),
                }
            }
            Tok::Op("{") => {
                self.bump();
                self.parse_brace(line)
            }
            _ => Err(self.invalid()),
        }
    }

    fn skip_to_close(&mut self, close: &str) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::End | Tok::Unclosed(..) => return Err(self.invalid()),
                Tok::Op(o @ ("(" | "[" | "{")) => {
                    let _ = o;
                    depth += 1;
                }
                Tok::Op(o @ (")" | "]" | "}")) => {
                    if depth == 0 {
                        if *o == close {
                            self.bump();
                            return Ok(());
                        }
                        return Err(self.invalid());
                    }
                    depth -= 1;
                }
                _ => {}
            }
            if self.at_last() {
                return Err(self.invalid());
            }
            self.bump();
        }
    }

    /// Items of a list or set display; `None` for a comprehension.
    fn parse_list_items(&mut self, close: &str) -> PResult<Option<Vec<Node>>> {
        let mut items = Vec::new();
        loop {
            if self.eat_op(close) {
                return Ok(Some(items));
            }
            if !self.starts_expr()
                && !self.is_op("*")
                && !self.is_name("not")
                && !self.is_name("lambda")
            {
                return Err(self.invalid());
            }
            items.push(self.parse_starred_expr(true)?);
            if self.is_name("for") && items.len() == 1 {
                self.skip_to_close(close)?;
                return Ok(None);
            }
            if self.eat_op(",") {
                continue;
            }
            if self.eat_op(close) {
                return Ok(Some(items));
            }
            return Err(self.invalid());
        }
    }

    fn parse_brace(&mut self, line: usize) -> PResult<Node> {
        if self.eat_op("}") {
            return Ok(Node::Dict(Vec::new(), Vec::new(), line));
        }
        // `{**x, ...}` starts a dict; otherwise the first element decides.
        let is_dict;
        let mut keys: Vec<Option<Node>> = Vec::new();
        let mut values: Vec<Node> = Vec::new();
        let mut elts: Vec<Node> = Vec::new();
        if self.eat_op("**") {
            let v = self.parse_binary(0)?;
            keys.push(None);
            values.push(v);
            is_dict = true;
        } else {
            if !self.starts_expr()
                && !self.is_op("*")
                && !self.is_name("not")
                && !self.is_name("lambda")
            {
                return Err(self.invalid());
            }
            let first = self.parse_starred_expr(true)?;
            if self.eat_op(":") {
                if self.is_op("}") || self.is_op(",") {
                    return Err(syntax(
                        "expression expected after dictionary key and ':'",
                        first.line(),
                    ));
                }
                if self.is_op("*") {
                    return Err(syntax(
                        "cannot use a starred expression in a dictionary value",
                        self.line(),
                    ));
                }
                if !self.starts_expr() && !self.is_name("not") && !self.is_name("lambda") {
                    return Err(self.invalid());
                }
                let v = self.parse_expr(true)?;
                keys.push(Some(first));
                values.push(v);
                is_dict = true;
            } else {
                elts.push(first);
                is_dict = false;
            }
        }
        if self.is_name("for") {
            self.skip_to_close("}")?;
            return Ok(Node::Other(
                if is_dict { "DictComp" } else { "SetComp" },
                line,
            ));
        }
        loop {
            if self.eat_op("}") {
                break;
            }
            if !self.eat_op(",") {
                return Err(self.invalid());
            }
            if self.eat_op("}") {
                break;
            }
            if is_dict {
                if self.eat_op("**") {
                    let v = self.parse_binary(0)?;
                    keys.push(None);
                    values.push(v);
                    continue;
                }
                if !self.starts_expr() && !self.is_name("not") && !self.is_name("lambda") {
                    return Err(self.invalid());
                }
                // invalid_kvpair: any key expression not followed by ':'.
                let k = self.parse_or()?;
                if !self.eat_op(":") {
                    if matches!(self.peek(), Tok::Unclosed(..)) {
                        return Err(self.invalid());
                    }
                    return Err(syntax("':' expected after dictionary key", k.line()));
                }
                if self.is_op("*") {
                    return Err(syntax(
                        "cannot use a starred expression in a dictionary value",
                        self.line(),
                    ));
                }
                if self.is_op("}") || self.is_op(",") {
                    return Err(syntax(
                        "expression expected after dictionary key and ':'",
                        k.line(),
                    ));
                }
                let v = self.parse_expr(true)?;
                keys.push(Some(k));
                values.push(v);
            } else {
                if !self.starts_expr()
                    && !self.is_op("*")
                    && !self.is_name("not")
                    && !self.is_name("lambda")
                {
                    return Err(self.invalid());
                }
                elts.push(self.parse_starred_expr(true)?);
            }
        }
        Ok(if is_dict {
            Node::Dict(keys, values, line)
        } else {
            Node::Set(elts, line)
        })
    }

    /// Adjacent string literals concatenate; mixing bytes and text is a syntax error; any
    /// f-string makes the whole a `JoinedStr`.
    fn parse_strings(&mut self) -> PResult<Node> {
        let line = self.line();
        let mut text: Option<String> = None;
        let mut bytes: Option<Vec<u8>> = None;
        let mut fstring = false;
        let mut error: Option<(LiteralErrorKind, String)> = None;
        // `STRING+` reads the token after the last string before the literals are decoded.
        while let Tok::Str(lit) = self.peek().clone() {
            self.bump();
            match lit {
                StrLit::Text(s) => text.get_or_insert_with(String::new).push_str(&s),
                StrLit::Bytes(b) => bytes.get_or_insert_with(Vec::new).extend(b),
                StrLit::FString => fstring = true,
                StrLit::Error(kind, m) => {
                    error.get_or_insert((kind, m));
                }
            }
        }
        if let Some((kind, m)) = error {
            return Err(at_line(kind, m, line));
        }
        if bytes.is_some() && (text.is_some() || fstring) {
            return Err(syntax("cannot mix bytes and nonbytes literals", line));
        }
        if fstring {
            return Ok(Node::JoinedStr(line));
        }
        Ok(match bytes {
            Some(b) => Node::Constant(PyValue::Bytes(b), line),
            None => Node::Constant(PyValue::Str(text.unwrap_or_default()), line),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> String {
        match literal_eval(src) {
            Ok(v) => v.repr(),
            Err(e) => panic!("{src:?}: {e}"),
        }
    }

    fn err(src: &str) -> String {
        match literal_eval(src) {
            Ok(v) => panic!("{src:?} evaluated to {}", v.repr()),
            Err(e) => e.to_string(),
        }
    }

    /// The deepest inputs on a thread with tokio's 2 MiB worker stack: a PATCH of a label
    /// value with 199 brackets aborted openkeel-api with a stack overflow before long inputs
    /// got a thread of their own.
    #[test]
    fn deep_inputs_do_not_overflow_a_small_stack() {
        let worker = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let kind = |src: &str| literal_eval(src).map(|v| v.repr()).map_err(|e| e.kind);
                assert_eq!(
                    kind(&format!("{}1{}", "(".repeat(199), ")".repeat(199))),
                    Ok("1".to_string())
                );
                assert_eq!(
                    kind(&format!(
                        "{}{}1{}",
                        "(".repeat(199),
                        "-".repeat(2790),
                        ")".repeat(199)
                    )),
                    Err(LiteralErrorKind::Value)
                );
                assert_eq!(
                    kind(&format!("[1]{}", "[0]".repeat(2990))),
                    Err(LiteralErrorKind::Value)
                );
            })
            .unwrap();
        worker.join().unwrap();
    }

    /// Found by fuzzing (fuzz/corpus/pyvalue/deep-*): deep nesting overflowed the stack
    /// instead of failing as CPython 3.11 does. Answers from CPython 3.11.7; where it raises
    /// RecursionError / MemoryError (a 500 in Magnum) OpenKeel reports an unsupported input.
    /// The thread has 8 MiB, the main thread's usual size: an unoptimised build needs more
    /// than 2 MiB for the 200 brackets CPython accepts.
    #[test]
    fn deep_nesting_fails_like_cpython_without_overflowing_the_stack() {
        let worker = std::thread::Builder::new()
            .stack_size(8 * 1024 * 1024)
            .spawn(|| {
                let kind = |src: &str| literal_eval(src).map(|v| v.repr()).map_err(|e| e.kind);
                assert_eq!(ok(&format!("{}{}", "(".repeat(200), ")".repeat(200))), "()");
                assert_eq!(
                    err(&format!("{}{}", "[".repeat(201), "]".repeat(201))),
                    "too many nested parentheses (<unknown>, line 1)"
                );
                assert_eq!(
                    err(&"{".repeat(5000)),
                    "too many nested parentheses (<unknown>, line 1)"
                );
                assert_eq!(
                    kind(&format!("{}1", "-".repeat(2000))),
                    Err(LiteralErrorKind::Value)
                );
                for deep in [
                    format!("{}1", "-".repeat(100_000)),
                    format!("1{}", "+1".repeat(100_000)),
                    format!("{}1", "not ".repeat(50_000)),
                    format!("2{}", "**2".repeat(50_000)),
                    format!("1{}", " if 1 else 1".repeat(20_000)),
                    format!("[1]{}", "[0]".repeat(50_000)),
                    format!("x{}", "()".repeat(50_000)),
                    format!(
                        "{}{}1{}",
                        "(".repeat(199),
                        "-".repeat(5000),
                        ")".repeat(199)
                    ),
                ] {
                    assert_eq!(
                        kind(&deep),
                        Err(LiteralErrorKind::Unsupported),
                        "{}",
                        &deep[..20]
                    );
                }
            })
            .unwrap();
        worker.join().unwrap();
    }

    /// Found by fuzzing (fuzz/corpus/pyvalue/hang-*): a subscript, a lambda or a skipped
    /// comprehension ending in a tokenizer error looped for ever. Answers from CPython 3.11.7.
    #[test]
    fn skipped_tokens_ending_in_a_tokenizer_error_terminate() {
        assert_eq!(err("x[:?]"), "invalid syntax (<unknown>, line 1)");
        assert_eq!(err("x[1 $"), "invalid syntax (<unknown>, line 1)");
        assert_eq!(err("lambda ?"), "invalid syntax (<unknown>, line 1)");
        assert_eq!(err("(x for x in y ?"), "invalid syntax (<unknown>, line 1)");
    }

    /// Cases and answers taken from CPython 3.11 (`ast.literal_eval`, `repr`).
    #[test]
    fn values_like_cpython() {
        for (src, want) in [
            ("{'a': 'b'}", "{'a': 'b'}"),
            ("{'a' 'b'}", "{'ab'}"),
            ("{'a': -1}", "{'a': -1}"),
            ("{'a': 1.5e3}", "{'a': 1500.0}"),
            ("(1,)", "(1,)"),
            ("set()", "set()"),
            ("{1,2}", "{1, 2}"),
            ("{'a': None}", "{'a': None}"),
            ("  {'a': 1}", "{'a': 1}"),
            ("\t{'a':1}", "{'a': 1}"),
            ("\n{'a':1}", "{'a': 1}"),
            ("{'a':1}\n", "{'a': 1}"),
            ("{'a': 'x\\n'}", "{'a': 'x\\n'}"),
            ("{'a': b'x'}", "{'a': b'x'}"),
            ("{'a': u'x'}", "{'a': 'x'}"),
            ("{'a': r'x\\y'}", "{'a': 'x\\\\y'}"),
            ("{'a': 'x' 'y'}", "{'a': 'xy'}"),
            ("{'a': 1j}", "{'a': 1j}"),
            ("{'a': 1+2j}", "{'a': (1+2j)}"),
            ("{'a': [1,(2,3)]}", "{'a': [1, (2, 3)]}"),
            ("{'a': 0x10}", "{'a': 16}"),
            ("{'a': 1_000}", "{'a': 1000}"),
            ("{\"a\": \"b\"}", "{'a': 'b'}"),
            ("{'a': '''x'''}", "{'a': 'x'}"),
            ("{'a': True}", "{'a': True}"),
            ("{'a': ...}", "{'a': Ellipsis}"),
            ("{'a': 1,}", "{'a': 1}"),
            ("'a'#c", "'a'"),
            ("{'a'\n: 1}", "{'a': 1}"),
            ("'é'", "'é'"),
            ("{'a': '\\u00e9'}", "{'a': 'é'}"),
            ("{'a': '\\777'}", "{'a': 'ǿ'}"),
            ("{'a': 1}\n\n", "{'a': 1}"),
            ("  \n{'a':1}", "{'a': 1}"),
            ("{'a': '\\q'}", "{'a': '\\\\q'}"),
            ("{'k': 1, 'k': 2}", "{'k': 2}"),
            ("{1: 'a', True: 'b', 1.0: 'c'}", "{1: 'c'}"),
            ("{'a': -(1)}", "{'a': -1}"),
            ("{'a': (1)}", "{'a': 1}"),
            ("{'a': ((1,))}", "{'a': (1,)}"),
            ("-1+2j", "(-1+2j)"),
            ("1-2j", "(1-2j)"),
            ("-1.5-0j", "(-1.5+0j)"),
            ("{'a': 1e400}", "{'a': inf}"),
            ("{'a': -1e400}", "{'a': -inf}"),
            ("{'a': 1e400j}", "{'a': infj}"),
            ("0o17", "15"),
            ("0O17", "15"),
            ("00", "0"),
            ("0_0", "0"),
            ("{'a': [1, 2,]}", "{'a': [1, 2]}"),
            ("()", "()"),
            ("[]", "[]"),
            ("{}", "{}"),
            ("(1)", "1"),
            ("{1: [1]}", "{1: [1]}"),
            (
                "[{'key': 'k', 'effect': 'NoSchedule'}]",
                "[{'key': 'k', 'effect': 'NoSchedule'}]",
            ),
            ("\"it's\"", "\"it's\""),
        ] {
            assert_eq!(ok(src), want, "{src:?}");
        }
    }

    #[test]
    fn errors_like_cpython() {
        let a = FAKE_ADDRESS;
        for (src, want) in [
            ("{'a': b}", format!("malformed node or string on line 1: <ast.Name object at {a}>")),
            ("{'a': 'b'", "'{' was never closed (<unknown>, line 1)".to_string()),
            ("'abc", "unterminated string literal (detected at line 1) (<unknown>, line 1)".into()),
            ("{a}", format!("malformed node or string on line 1: <ast.Name object at {a}>")),
            ("", "invalid syntax (<unknown>, line 0)".into()),
            (" ", "invalid syntax (<unknown>, line 0)".into()),
            ("{'a':}", "expression expected after dictionary key and ':' (<unknown>, line 1)".into()),
            ("[1,2", "'[' was never closed (<unknown>, line 1)".into()),
            ("{'a': 'b'}}", "unmatched '}' (<unknown>, line 1)".into()),
            ("abc", format!("malformed node or string on line 1: <ast.Name object at {a}>")),
            ("1 2", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 1+2}", format!("malformed node or string on line 1: <ast.BinOp object at {a}>")),
            ("{'a': f'x'}", format!("malformed node or string on line 1: <ast.JoinedStr object at {a}>")),
            ("{'a': 01}", "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<unknown>, line 1)".into()),
            ("{,}", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 'b',, }", "invalid syntax (<unknown>, line 1)".into()),
            (")", "unmatched ')' (<unknown>, line 1)".into()),
            ("{'a': (}", "closing parenthesis '}' does not match opening parenthesis '(' (<unknown>, line 1)".into()),
            ("'\\x'", "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: truncated \\xXX escape (<unknown>, line 1)".into()),
            ("1 +", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': not 1}", format!("malformed node or string on line 1: <ast.UnaryOp object at {a}>")),
            ("{**x}", "malformed node or string: None".into()),
            ("{'a': -True}", format!("malformed node or string on line 1: <ast.Constant object at {a}>")),
            ("lambda: 1", format!("malformed node or string on line 1: <ast.Lambda object at {a}>")),
            ("x = 1", "invalid syntax (<unknown>, line 1)".into()),
            ("1;2", "invalid syntax (<unknown>, line 1)".into()),
            ("1\n2", "invalid syntax (<unknown>, line 2)".into()),
            ("[1 2]", "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)".into()),
            ("{'a': 1 'b': 2}", "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)".into()),
            ("{'a': 1, 'b'}", "':' expected after dictionary key (<unknown>, line 1)".into()),
            ("{'a' 1}", "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)".into()),
            ("{'a': 'b' c}", "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)".into()),
            ("x y", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 1}{", "'{' was never closed (<unknown>, line 1)".into()),
            ("'''abc", "unterminated triple-quoted string literal (detected at line 1) (<unknown>, line 1)".into()),
            ("{'a': 'b\n'}", "unterminated string literal (detected at line 1) (<unknown>, line 1)".into()),
            ("{'a': ]}", "closing parenthesis ']' does not match opening parenthesis '{' (<unknown>, line 1)".into()),
            ("{'a': 1, **b}", "malformed node or string: None".into()),
            ("{1: 2, 3}", "':' expected after dictionary key (<unknown>, line 1)".into()),
            ("{1, 2: 3}", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 1:}", "invalid syntax (<unknown>, line 1)".into()),
            ("{:}", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 1 + }", "invalid syntax (<unknown>, line 1)".into()),
            ("1 if 2", "expected 'else' after 'if' expression (<unknown>, line 1)".into()),
            ("[1,,2]", "invalid syntax (<unknown>, line 1)".into()),
            ("(,)", "invalid syntax (<unknown>, line 1)".into()),
            ("{'a': 'b'} x", "invalid syntax (<unknown>, line 1)".into()),
            ("'a' 'b' c", "invalid syntax (<unknown>, line 1)".into()),
            ("\\", "unexpected character after line continuation character (<unknown>, line 1)".into()),
            ("{'a': '\\u12'}", "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-3: truncated \\uXXXX escape (<unknown>, line 1)".into()),
            ("{'a': '\\U1234'}", "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-5: truncated \\UXXXXXXXX escape (<unknown>, line 1)".into()),
            ("b'é'", "bytes can only contain ASCII literal characters (<unknown>, line 1)".into()),
            ("'a' b'b'", "cannot mix bytes and nonbytes literals (<unknown>, line 1)".into()),
            ("0b102", "invalid digit '2' in binary literal (<unknown>, line 1)".into()),
            ("1e", "invalid decimal literal (<unknown>, line 1)".into()),
            ("1_", "invalid decimal literal (<unknown>, line 1)".into()),
            ("1__0", "invalid decimal literal (<unknown>, line 1)".into()),
            ("0x", "invalid hexadecimal literal (<unknown>, line 1)".into()),
            ("1.2.3", "invalid syntax (<unknown>, line 1)".into()),
            ("{[1]: 2}", "unhashable type: 'list'".into()),
            // Which error wins: tokenizer errors anywhere, the end of input inside brackets
            // once the parser reads it, decoding errors when the parser builds the string.
            ("+['\\x(41'#, x,]", "'[' was never closed (<unknown>, line 1)".into()),
            ("'\\x' 41", "(unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: truncated \\xXX escape (<unknown>, line 1)".into()),
            ("'\\x' )", "unmatched ')' (<unknown>, line 1)".into()),
            ("'\\x'41'", "unterminated string literal (detected at line 1) (<unknown>, line 1)".into()),
            ("(:x#, 1j, []])", "invalid syntax (<unknown>, line 1)".into()),
            ("1 _0(", "'(' was never closed (<unknown>, line 1)".into()),
            ("#c", "invalid syntax (<unknown>, line 1)".into()),
            ("1, *x", "invalid syntax (<unknown>, line 1)".into()),
            ("(1, *x)", format!("malformed node or string on line 1: <ast.Starred object at {a}>")),
            ("{1: *x}", "cannot use a starred expression in a dictionary value (<unknown>, line 1)".into()),
            ("{1: 2, 3 4}", "':' expected after dictionary key (<unknown>, line 1)".into()),
            ("{1: 2, a 'x': 3}", "':' expected after dictionary key (<unknown>, line 1)".into()),
            ("{1: 2, 1 + : 3}", "':' expected after dictionary key (<unknown>, line 1)".into()),
            ("[a 'x']", "invalid syntax (<unknown>, line 1)".into()),
            ("[not a 'x']", "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)".into()),
            ("x[]", "invalid syntax (<unknown>, line 1)".into()),
            ("[1 if 2]", "expected 'else' after 'if' expression (<unknown>, line 1)".into()),
            // A keyword is no attribute name (OpenKeel said `malformed node ... Attribute`).
            ("{'a': x.None}", "invalid syntax (<unknown>, line 1)".into()),
            ("a.if", "invalid syntax (<unknown>, line 1)".into()),
        ] {
            assert_eq!(err(src), want, "{src:?}");
        }
    }

    #[test]
    fn non_string_values() {
        assert_eq!(
            literal_eval_value(&PyValue::Int(5))
                .unwrap_err()
                .to_string(),
            "malformed node or string: 5"
        );
        assert_eq!(
            literal_eval_value(&PyValue::Bool(true))
                .unwrap_err()
                .to_string(),
            "malformed node or string: True"
        );
    }
}
