//! `openkeel_core::pyvalue` against CPython itself (the test venv's Python 3.11, Magnum's
//! interpreter): `ast.literal_eval` of a corpus of sources (values, and the exception class and
//! text of failures), `repr()` of strings and floats, and `str.isprintable()` over every code
//! point. `malformed node` messages carry a memory address, replaced by OpenKeel's fixed one.

#![allow(clippy::expect_used)]

use openkeel_core::pyvalue::{float_repr, is_printable, literal_eval, repr_str, LiteralErrorKind};
use serde_json::{json, Value};
use std::io::Write;
use std::process::Stdio;

const ORACLE: &str = r#"
import ast, json, re, sys
req = json.load(sys.stdin)
out = {"literal": [], "repr": [], "float": [], "unprintable": []}
for src in req["literal"]:
    try:
        out["literal"].append(["ok", repr(ast.literal_eval(src))])
    except (SyntaxError, ValueError, TypeError) as e:
        text = re.sub(r"at 0x[0-9a-f]+>", "at 0x7f0000000000>", str(e))
        out["literal"].append([type(e).__name__, text])
out["repr"] = [repr(s) for s in req["repr"]]
out["float"] = [repr(float(f)) for f in req["float"]]
start = None
for c in range(0x110000):
    p = chr(c).isprintable()
    if not p and start is None:
        start = c
    if p and start is not None:
        out["unprintable"].append([start, c - 1])
        start = None
if start is not None:
    out["unprintable"].append([start, 0x10FFFF])
out["version"] = list(sys.version_info[:2])
json.dump(out, sys.stdout)
"#;

/// Sources for `ast.literal_eval`: what Magnum's PATCH of labels and taints and oslo.policy's
/// check kinds meet, and the mistakes a client makes.
const LITERALS: &[&str] = &[
    "{'a': 'b'}",
    "{'a' 'b'}",
    "{'a': -1}",
    "{'a': 1.5e3}",
    "(1,)",
    "set()",
    "{1,2}",
    "{'a': None}",
    "  {'a': 1}",
    "\t{'a':1}",
    "\n{'a':1}",
    "{'a':1}\n",
    "{'a': 'x\\n'}",
    "{'a': b'x'}",
    "{'a': u'x'}",
    "{'a': r'x\\y'}",
    "{'a': '''x'''}",
    "{'a': True}",
    "{'a': ...}",
    "{'a': 1,}",
    "'a'#c",
    "{'a'\n: 1}",
    "'é'",
    "{'a': '\\u00e9'}",
    "{'a': '\\777'}",
    "{'a': '\\q'}",
    "{'k': 1, 'k': 2}",
    "{1: 'a', True: 'b', 1.0: 'c'}",
    "{'a': -(1)}",
    "-1+2j",
    "1-2j",
    "-1.5-0j",
    "{'a': 1e400}",
    "{'a': 1e400j}",
    "0o17",
    "00",
    "0_0",
    "()",
    "[]",
    "{}",
    "(1)",
    "[{'key': 'k', 'effect': 'NoSchedule'}]",
    "\"it's\"",
    "{'a': '\\x7f\\u2028\\xad'}",
    "'\\x00\\t'",
    "[1.5, -0.0, 1e16, 1e-05]",
    "{'a': b}",
    "{'a': 'b'",
    "'abc",
    "{a}",
    "",
    " ",
    "{'a':}",
    "[1,2",
    "{'a': 'b'}}",
    "abc",
    "1 2",
    "{'a': 1+2}",
    "{'a': f'x'}",
    "{'a': 01}",
    "{,}",
    ")",
    "{'a': (}",
    "'\\x'",
    "1 +",
    "{'a': not 1}",
    "{**x}",
    "{'a': -True}",
    "lambda: 1",
    "x = 1",
    "1;2",
    "1\n2",
    "[1 2]",
    "{'a': 1 'b': 2}",
    "{'a': 1, 'b'}",
    "{'a' 1}",
    "x y",
    "'''abc",
    "{'a': 'b\n'}",
    "{'a': ]}",
    "{1: 2, 3}",
    "{1, 2: 3}",
    "{:}",
    "1 if 2",
    "[1,,2]",
    "(,)",
    "\\",
    "{'a': '\\u12'}",
    "b'é'",
    "'a' b'b'",
    "0b102",
    "1e",
    "1_",
    "1__0",
    "0x",
    "1.2.3",
    "{[1]: 2}",
    "(1, *x)",
    "{1: *x}",
    "[not a 'x']",
    "x[]",
    "[1 if 2]",
    // oslo.policy check kinds
    "True",
    "None",
    "'Member'",
    "\"a\"'b'",
    "'a\\tb'",
    "r'a\\tb'",
    "-1",
    "+1",
    "1_000",
    "0x1F",
    "0b101",
    "1.",
    ".5",
    "1e3",
    "2j",
    "1-2.5j",
    "-1j",
    "[1,'a']",
    "1,2",
    "{1}",
    "...",
    "1#comment",
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
    "1abc",
    "01",
    "a..b",
    ".a",
    "a.",
    "a.1",
    "class",
    "a.if",
    "a.None",
    "{'a': x.None}",
    "foo-",
    "a!b",
    "$x",
    "a?",
    "a=1",
    "(",
    "a)",
    "a;b",
    "@a",
    "not",
    "b'a''c'",
    "await",
    "a[]",
];

const STRINGS: &[&str] = &[
    "",
    "plain",
    "it's",
    "say \"hi\"",
    "both ' and \"",
    "\\",
    "\t\n\r\x0b\x0c",
    "\x00\x1f",
    "\x7f",
    "\u{80}\u{9f}\u{a0}\u{ad}",
    "é€😀",
    "\u{2028}\u{2029}",
    "\u{200b}\u{200e}",
    "\u{61c}\u{70f}\u{180e}",
    "\u{378}\u{2065}\u{d7ff}",
    "\u{e000}\u{f0000}\u{10ffff}",
    "\u{e0001}",
    "\u{feff}\u{fffd}\u{300}",
    "\u{3000}\u{1680} ",
];

const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    1.5,
    0.1,
    100.0,
    1e15,
    1e16,
    1.5e16,
    1e22,
    1e-4,
    1e-5,
    1.5e-7,
    123456789012345.6,
    2.5e300,
    5e-324,
    f64::MAX,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn oracle() -> Option<Value> {
    let python = openkeel_tests::venv_bin("python")?;
    let floats: Vec<Value> = FLOATS.iter().map(|f| json!(float_repr(*f))).collect();
    let request = json!({"literal": LITERALS, "repr": STRINGS, "float": floats});
    let mut child = openkeel_tests::helper_blocking(&python)
        .args(["-c", ORACLE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the venv's python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.to_string().as_bytes())
        .expect("write the request");
    let out = child.wait_with_output().expect("python's answer");
    assert!(out.status.success(), "the oracle failed");
    Some(serde_json::from_slice(&out.stdout).expect("JSON from the oracle"))
}

#[test]
fn pyvalue_agrees_with_cpython() {
    let Some(want) = oracle() else {
        return;
    };
    assert_eq!(
        want["version"],
        json!([3, 11]),
        "the oracle must be Python 3.11"
    );
    let mut wrong = Vec::new();
    for (src, w) in LITERALS
        .iter()
        .zip(want["literal"].as_array().into_iter().flatten())
    {
        let got = match literal_eval(src) {
            Ok(v) => json!(["ok", v.repr()]),
            Err(e) => {
                let class = match e.kind {
                    LiteralErrorKind::Syntax | LiteralErrorKind::Unsupported => "SyntaxError",
                    LiteralErrorKind::Value => "ValueError",
                    LiteralErrorKind::Type => "TypeError",
                };
                json!([class, e.message])
            }
        };
        if &got != w {
            wrong.push(format!(
                "literal_eval({src:?}): CPython {w}, OpenKeel {got}"
            ));
        }
    }
    for (s, w) in STRINGS
        .iter()
        .zip(want["repr"].as_array().into_iter().flatten())
    {
        if json!(repr_str(s)) != *w {
            wrong.push(format!(
                "repr({s:?}): CPython {w}, OpenKeel {}",
                repr_str(s)
            ));
        }
    }
    for (f, w) in FLOATS
        .iter()
        .zip(want["float"].as_array().into_iter().flatten())
    {
        if json!(float_repr(*f)) != *w {
            wrong.push(format!(
                "repr({f}): CPython {w}, OpenKeel {}",
                float_repr(*f)
            ));
        }
    }
    for range in want["unprintable"].as_array().into_iter().flatten() {
        let (a, b) = (
            range[0].as_u64().unwrap_or(0),
            range[1].as_u64().unwrap_or(0),
        );
        for u in a..=b {
            if let Some(c) = char::from_u32(u as u32) {
                if is_printable(c) {
                    wrong.push(format!("U+{u:04X} is not printable in CPython"));
                }
            }
        }
    }
    let unprintable: usize = want["unprintable"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (r[1].as_u64().unwrap_or(0) - r[0].as_u64().unwrap_or(0) + 1) as usize)
        .sum();
    let ours = (0..0x11_0000u32)
        .filter_map(char::from_u32)
        .filter(|c| !is_printable(*c))
        .count();
    // CPython's count includes the 2048 surrogates, which are no Rust `char`.
    if unprintable != ours + 2048 {
        wrong.push(format!(
            "{unprintable} unprintable code points in CPython, {ours} + 2048 surrogates here"
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
