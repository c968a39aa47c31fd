//! The check tree and its evaluation (`oslo_policy/_checks.py`).

use std::fmt;

use openkeel_core::pyvalue::{self, json_str, LiteralErrorKind, PyValue};
use serde_json::Value;

use super::percent::{self, FormatFailure};
use super::{EvalError, PyException};

/// A parsed policy rule.
///
/// Equality is structural, as oslo.policy's `__eq__` (used when it compares an operator's
/// override with a deprecated default). `Display` gives oslo.policy's `str(check)`: `@`, `!`,
/// `kind:match`, `not X`, `(A and B)`, `(A or B)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// `@` or an empty rule: always true.
    True,
    /// `!`, or anything oslo.policy could not parse: always false.
    False,
    /// `rule:NAME`: the named rule (false when it does not exist and there is no default rule).
    Rule(String),
    /// `role:NAME`: a case-insensitive match against the credentials' `roles`.
    Role(String),
    /// `kind:match`: `kind` is a Python literal (`True`, `'member'`, `1`) or a dotted path into
    /// the credentials (`project_id`, `user.domain_id`); `match` may use `%(key)s` from the target.
    Generic {
        kind: String,
        value: String,
    },
    /// `http:URL` / `https:URL`: oslo.policy's external REST check. Not supported here: it
    /// evaluates to [`EvalError::Unsupported`] (so [`super::Enforcer::enforce`] denies).
    External {
        kind: String,
        url: String,
    },
    Not(Box<Check>),
    And(Vec<Check>),
    Or(Vec<Check>),
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::True => f.write_str("@"),
            Check::False => f.write_str("!"),
            Check::Rule(m) => write!(f, "rule:{m}"),
            Check::Role(m) => write!(f, "role:{m}"),
            Check::Generic { kind, value } => write!(f, "{kind}:{value}"),
            Check::External { kind, url } => write!(f, "{kind}:{url}"),
            Check::Not(inner) => write!(f, "not {inner}"),
            Check::And(items) => join(f, items, " and "),
            Check::Or(items) => join(f, items, " or "),
        }
    }
}

fn join(f: &mut fmt::Formatter<'_>, items: &[Check], sep: &str) -> fmt::Result {
    f.write_str("(")?;
    for (i, c) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{c}")?;
    }
    f.write_str(")")
}

/// How `rule:NAME` finds its rule: the enforcer's rule set with `Rules.__missing__`'s
/// default-rule fallback. Answers the name actually used (for recursion detection).
pub(crate) trait RuleLookup {
    fn lookup(&self, name: &str) -> Option<(&str, &Check)>;
}

/// Deeper than this many nested `rule:` references Python would hit its recursion limit long
/// before (each level costs several interpreter frames); treated as a cycle.
const MAX_RULE_DEPTH: usize = 200;

pub(crate) struct Evaluation<'a> {
    rules: &'a dyn RuleLookup,
    /// The rules being evaluated, outermost first. Evaluation is a pure function of (rule,
    /// target, credentials), so re-entering a rule already on this path would recurse forever
    /// in Python. The `RecursionError` is raised inside `inspect.getfullargspec` (called by
    /// `_checks._check` for every node), which turns it into `TypeError: unsupported callable`:
    /// that is what escapes oslo.policy.
    path: Vec<&'a str>,
}

impl<'a> Evaluation<'a> {
    pub(crate) fn new(rules: &'a dyn RuleLookup) -> Self {
        Evaluation {
            rules,
            path: Vec::new(),
        }
    }

    /// Evaluate a named rule (already looked up by the caller).
    pub(crate) fn named(
        &mut self,
        name: &'a str,
        check: &Check,
        target: &Value,
        creds: &Value,
    ) -> Result<bool, EvalError> {
        if self.path.contains(&name) || self.path.len() >= MAX_RULE_DEPTH {
            return Err(EvalError::python(
                PyException::TypeError,
                format!(
                    "unsupported callable (maximum recursion depth exceeded: rule {name:?} \
                     references itself)"
                ),
            ));
        }
        self.path.push(name);
        let r = self.check(check, target, creds);
        self.path.pop();
        r
    }

    pub(crate) fn check(
        &mut self,
        check: &Check,
        target: &Value,
        creds: &Value,
    ) -> Result<bool, EvalError> {
        match check {
            Check::True => Ok(true),
            Check::False => Ok(false),
            Check::Not(inner) => Ok(!self.check(inner, target, creds)?),
            Check::And(items) => {
                for c in items {
                    if !self.check(c, target, creds)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Check::Or(items) => {
                for c in items {
                    if self.check(c, target, creds)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Check::Rule(name) => {
                let rules = self.rules;
                match rules.lookup(name) {
                    // "We don't have any matching rule; fail closed"
                    None => Ok(false),
                    Some((resolved, c)) => self.named(resolved, c, target, creds),
                }
            }
            Check::Role(m) => role_check(m, target, creds),
            Check::Generic { kind, value } => generic_check(kind, value, target, creds),
            Check::External { kind, url } => Err(EvalError::Unsupported(format!(
                "external {kind}: check {url:?}"
            ))),
        }
    }
}

/// `self.match % target`, with `KeyError` turned into `None` (the check is false).
fn substitute(m: &str, target: &Value) -> Result<Option<String>, EvalError> {
    match percent::percent_format(m, target) {
        Ok(s) => Ok(Some(s)),
        Err(FormatFailure::KeyError) => Ok(None),
        Err(FormatFailure::Error(e)) => Err(e),
    }
}

fn role_check(m: &str, target: &Value, creds: &Value) -> Result<bool, EvalError> {
    let Some(m) = substitute(m, target)? else {
        return Ok(false);
    };
    let Some(roles) = creds.get("roles") else {
        return Ok(false);
    };
    // ASCII only (every role of a real token): `lower()` is ASCII lower-casing, so the roles
    // are compared as they are, none lower-cased into a copy
    if let Value::Array(items) = roles {
        if m.is_ascii() && items.iter().all(|x| x.as_str().is_some_and(str::is_ascii)) {
            return Ok(items
                .iter()
                .any(|x| x.as_str().is_some_and(|r| r.eq_ignore_ascii_case(&m))));
        }
    }
    // [x.lower() for x in creds['roles']] is built in full before the `in` test.
    let lowered: Vec<String> = match roles {
        Value::Array(items) => items
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.to_lowercase()),
                other => Err(EvalError::python(
                    PyException::AttributeError,
                    format!(
                        "'{}' object has no attribute 'lower'",
                        PyValue::from_json(other).type_name()
                    ),
                )),
            })
            .collect::<Result<_, _>>()?,
        // Iterating a str gives its characters, a dict its keys.
        Value::String(s) => s.chars().map(|c| c.to_lowercase().collect()).collect(),
        Value::Object(map) => map.keys().map(|k| k.to_lowercase()).collect(),
        other => {
            return Err(EvalError::python(
                PyException::TypeError,
                format!(
                    "'{}' object is not iterable",
                    PyValue::from_json(other).type_name()
                ),
            ))
        }
    };
    let m = m.to_lowercase();
    Ok(lowered.contains(&m))
}

fn generic_check(
    kind: &str,
    value: &str,
    target: &Value,
    creds: &Value,
) -> Result<bool, EvalError> {
    let Some(m) = substitute(value, target)? else {
        return Ok(false);
    };
    let literal = if is_dotted_name(kind) {
        None
    } else {
        literal_kind(kind)?
    };
    match literal {
        Some(v) => Ok(m == v.py_str()),
        None => {
            let segments: Vec<&str> = kind.split('.').collect();
            find_in_dict(creds, &segments, &m)
        }
    }
}

/// Whether `kind` is ASCII identifiers that are not Python keywords joined by dots
/// (`project_id`, `user.domain_id`: the kinds of the default rules). `ast.literal_eval` of such
/// a kind always raises the `ValueError` [`literal_kind`] answers `None` for (a name or an
/// attribute is not a literal), so it is not parsed at every check.
fn is_dotted_name(kind: &str) -> bool {
    // Python 3's `keyword.kwlist`
    const KEYWORDS: [&str; 35] = [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "try", "while", "with", "yield",
    ];
    kind.split('.').all(|segment| {
        let mut bytes = segment.bytes();
        bytes
            .next()
            .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
            && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
            && !KEYWORDS.contains(&segment)
    })
}

/// `ast.literal_eval(kind)` as `GenericCheck` calls it: the value, or `None` for the
/// `ValueError` oslo.policy catches (valid Python that is not a literal: a name, an attribute, a
/// call; the kind is then a path into the credentials). The `SyntaxError` and `TypeError` it
/// lets escape are [`EvalError::Python`]; what OpenKeel cannot represent is
/// [`EvalError::Unsupported`], and so is a set of more than one element, whose `str()` order
/// depends on Python's hashing.
fn literal_kind(kind: &str) -> Result<Option<PyValue>, EvalError> {
    match pyvalue::literal_eval(kind) {
        Ok(PyValue::Set(items)) if items.len() > 1 => Err(EvalError::Unsupported(format!(
            "set literal {kind:?} as a check kind (its str() order depends on hashing)"
        ))),
        Ok(v) => Ok(Some(v)),
        Err(e) => match e.kind {
            LiteralErrorKind::Value => Ok(None),
            LiteralErrorKind::Syntax => Err(EvalError::python(PyException::SyntaxError, e.message)),
            LiteralErrorKind::Type => Err(EvalError::python(PyException::TypeError, e.message)),
            LiteralErrorKind::Unsupported => Err(EvalError::Unsupported(format!(
                "{} in the check kind {kind:?}",
                e.message
            ))),
        },
    }
}

/// `GenericCheck._find_in_dict`: walk `segments` into the credentials; lists fan out (any
/// element may match); a missing key is false; indexing a non-dict raises `TypeError`.
fn find_in_dict(test_value: &Value, segments: &[&str], m: &str) -> Result<bool, EvalError> {
    let Some((key, rest)) = segments.split_first() else {
        return Ok(m == json_str(test_value));
    };
    let next = match test_value {
        Value::Object(map) => match map.get(*key) {
            Some(v) => v,
            None => return Ok(false),
        },
        Value::Array(_) => {
            return Err(EvalError::python(
                PyException::TypeError,
                "list indices must be integers or slices, not str",
            ))
        }
        Value::String(_) => {
            return Err(EvalError::python(
                PyException::TypeError,
                "string indices must be integers, not 'str'",
            ))
        }
        other => {
            return Err(EvalError::python(
                PyException::TypeError,
                format!(
                    "'{}' object is not subscriptable",
                    PyValue::from_json(other).type_name()
                ),
            ))
        }
    };
    if let Value::Array(items) = next {
        for item in items {
            if find_in_dict(item, rest, m)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    find_in_dict(next, rest, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    struct Rules(HashMap<String, Check>, Option<String>);
    impl RuleLookup for Rules {
        fn lookup(&self, name: &str) -> Option<(&str, &Check)> {
            if let Some((k, c)) = self.0.get_key_value(name) {
                return Some((k.as_str(), c));
            }
            let d = self.1.as_deref()?;
            self.0.get_key_value(d).map(|(k, c)| (k.as_str(), c))
        }
    }

    fn generic(kind: &str, value: &str) -> Check {
        Check::Generic {
            kind: kind.into(),
            value: value.into(),
        }
    }

    fn eval(c: &Check, target: &Value, creds: &Value) -> Result<bool, EvalError> {
        let rules = Rules(HashMap::new(), None);
        Evaluation::new(&rules).check(c, target, creds)
    }

    fn exc(r: Result<bool, EvalError>) -> Option<PyException> {
        match r {
            Err(EvalError::Python { exception, .. }) => Some(exception),
            _ => None,
        }
    }

    #[test]
    fn display_matches_oslo_str() {
        let c = Check::Or(vec![
            Check::Rule("a".into()),
            Check::And(vec![
                Check::Role("x".into()),
                Check::Not(Box::new(Check::True)),
            ]),
            Check::False,
            generic("project_id", "%(project_id)s"),
        ]);
        assert_eq!(
            c.to_string(),
            "(rule:a or (role:x and not @) or ! or project_id:%(project_id)s)"
        );
    }

    #[test]
    fn true_false_not() {
        let t = json!({});
        let c = json!({});
        assert_eq!(eval(&Check::True, &t, &c), Ok(true));
        assert_eq!(eval(&Check::False, &t, &c), Ok(false));
        assert_eq!(eval(&Check::Not(Box::new(Check::False)), &t, &c), Ok(true));
        assert_eq!(eval(&Check::And(vec![]), &t, &c), Ok(true));
        assert_eq!(eval(&Check::Or(vec![]), &t, &c), Ok(false));
    }

    #[test]
    fn role_check_is_case_insensitive_and_substitutes() {
        let creds = json!({"roles": ["Admin", "member"]});
        assert_eq!(
            eval(&Check::Role("admin".into()), &json!({}), &creds),
            Ok(true)
        );
        assert_eq!(
            eval(&Check::Role("MEMBER".into()), &json!({}), &creds),
            Ok(true)
        );
        assert_eq!(
            eval(&Check::Role("reader".into()), &json!({}), &creds),
            Ok(false)
        );
        assert_eq!(
            eval(&Check::Role("%(r)s".into()), &json!({"r": "ADMIN"}), &creds),
            Ok(true)
        );
        // Missing target key: KeyError is caught, false.
        assert_eq!(
            eval(&Check::Role("%(r)s".into()), &json!({}), &creds),
            Ok(false)
        );
        // No roles key at all.
        assert_eq!(
            eval(&Check::Role("admin".into()), &json!({}), &json!({})),
            Ok(false)
        );
        // Unicode lower-casing, as `str.lower()`
        assert_eq!(
            eval(
                &Check::Role("ädmin".into()),
                &json!({}),
                &json!({"roles": ["ÄDMIN"]})
            ),
            Ok(true)
        );
        assert_eq!(
            eval(
                &Check::Role("ÄDMIN".into()),
                &json!({}),
                &json!({"roles": ["ädmin"]})
            ),
            Ok(true)
        );
        // the whole list is lowered before the test: a role that is not a string raises,
        // even after a match
        assert_eq!(
            exc(eval(
                &Check::Role("admin".into()),
                &json!({}),
                &json!({"roles": ["admin", 1]})
            )),
            Some(PyException::AttributeError)
        );
        // A " reader" role (X-Roles split without trimming) is not "reader".
        assert_eq!(
            eval(
                &Check::Role("reader".into()),
                &json!({}),
                &json!({"roles": [" reader"]})
            ),
            Ok(false)
        );
        // Python iterates a str role value character by character.
        assert_eq!(
            eval(
                &Check::Role("a".into()),
                &json!({}),
                &json!({"roles": "admin"})
            ),
            Ok(true)
        );
        assert_eq!(
            exc(eval(
                &Check::Role("a".into()),
                &json!({}),
                &json!({"roles": ["x", 1]})
            )),
            Some(PyException::AttributeError)
        );
        assert_eq!(
            exc(eval(
                &Check::Role("a".into()),
                &json!({}),
                &json!({"roles": null})
            )),
            Some(PyException::TypeError)
        );
    }

    #[test]
    fn generic_check_against_credentials() {
        let creds = json!({
            "project_id": "p1", "user_id": null, "is_admin": true,
            "user": {"domain": {"id": "d1"}, "groups": [{"id": "g1"}, {"id": "g2"}]},
            "roles": ["admin"], "n": 3
        });
        let t = json!({"project_id": "p1", "uid": null, "num": 3, "g": "g2"});
        assert_eq!(
            eval(&generic("project_id", "%(project_id)s"), &t, &creds),
            Ok(true)
        );
        assert_eq!(eval(&generic("project_id", "p2"), &t, &creds), Ok(false));
        // None compares as the string 'None' on both sides.
        assert_eq!(eval(&generic("user_id", "%(uid)s"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("user_id", "None"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("is_admin", "True"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("is_admin", "true"), &t, &creds), Ok(false));
        assert_eq!(eval(&generic("n", "%(num)s"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("user.domain.id", "d1"), &t, &creds), Ok(true));
        assert_eq!(
            eval(&generic("user.groups.id", "%(g)s"), &t, &creds),
            Ok(true)
        );
        assert_eq!(eval(&generic("user.missing", "x"), &t, &creds), Ok(false));
        // A generic check on a list compares each element exactly (case-sensitive).
        assert_eq!(eval(&generic("roles", "admin"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("roles", "ADMIN"), &t, &creds), Ok(false));
        // Missing target key → false.
        assert_eq!(
            eval(&generic("project_id", "%(nope)s"), &t, &creds),
            Ok(false)
        );
        // Indexing into a string raises TypeError.
        assert_eq!(
            exc(eval(&generic("project_id.x", "y"), &t, &creds)),
            Some(PyException::TypeError)
        );
        assert_eq!(
            exc(eval(&generic("user_id.x", "y"), &t, &creds)),
            Some(PyException::TypeError)
        );
    }

    #[test]
    fn generic_check_with_literal_kind() {
        let t = json!({"role.name": "Member", "enabled": true, "n": 1, "f": 1.0, "none": null});
        let creds = json!({});
        assert_eq!(
            eval(&generic("'Member'", "%(role.name)s"), &t, &creds),
            Ok(true)
        );
        assert_eq!(eval(&generic("True", "%(enabled)s"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("1", "%(n)s"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("1", "%(f)s"), &t, &creds), Ok(false));
        assert_eq!(eval(&generic("1.0", "%(f)s"), &t, &creds), Ok(true));
        assert_eq!(eval(&generic("None", "%(none)s"), &t, &creds), Ok(true));
        assert_eq!(
            exc(eval(&generic("'Member", "x"), &t, &creds)),
            Some(PyException::SyntaxError)
        );
        assert_eq!(
            exc(eval(&generic("a", "100%"), &t, &creds)),
            Some(PyException::ValueError)
        );
    }

    #[test]
    fn rule_references_default_rule_and_recursion() {
        let mut m = HashMap::new();
        m.insert("a".to_string(), Check::Role("admin".into()));
        m.insert("loop".to_string(), Check::Rule("loop".into()));
        m.insert(
            "short".to_string(),
            Check::Or(vec![Check::True, Check::Rule("short".into())]),
        );
        let rules = Rules(m.clone(), None);
        let creds = json!({"roles": ["admin"]});
        let t = json!({});
        let mut ev = Evaluation::new(&rules);
        assert_eq!(ev.check(&Check::Rule("a".into()), &t, &creds), Ok(true));
        assert_eq!(
            ev.check(&Check::Rule("undefined".into()), &t, &creds),
            Ok(false)
        );
        assert_eq!(
            exc(ev.check(&Check::Rule("loop".into()), &t, &creds)),
            Some(PyException::TypeError)
        );
        // Short-circuit: the self-reference is never reached.
        assert_eq!(ev.check(&Check::Rule("short".into()), &t, &creds), Ok(true));
        // With a default rule, unknown names evaluate it.
        m.insert("default".to_string(), Check::True);
        let rules = Rules(m, Some("default".into()));
        let mut ev = Evaluation::new(&rules);
        assert_eq!(
            ev.check(&Check::Rule("undefined".into()), &t, &json!({})),
            Ok(true)
        );
    }

    #[test]
    fn external_checks_are_unsupported() {
        let c = Check::External {
            kind: "http".into(),
            url: "//example/%(x)s".into(),
        };
        assert!(matches!(
            eval(&c, &json!({}), &json!({})),
            Err(EvalError::Unsupported(_))
        ));
    }

    fn lit(s: &str) -> String {
        match literal_kind(s) {
            Ok(Some(v)) => v.py_str(),
            Ok(None) => "<ValueError>".into(),
            Err(EvalError::Python { exception, .. }) => format!("<{}>", exception.name()),
            Err(EvalError::Unsupported(_)) => "<unsupported>".into(),
            Err(e) => format!("<{e}>"),
        }
    }

    /// The kinds taken for dotted names without parsing are ones `ast.literal_eval` answers
    /// `ValueError` for; keywords, literals and anything else still go to it.
    #[test]
    fn dotted_names_are_kinds_literal_eval_refuses() {
        for kind in [
            "project_id",
            "user.domain_id",
            "_",
            "__debug__",
            "a1.b_2.C3",
            "match",
            "case",
            "type",
            "print",
        ] {
            assert!(is_dotted_name(kind), "{kind}");
            assert!(matches!(literal_kind(kind), Ok(None)), "{kind}");
        }
        for kind in [
            "", ".", "a.", ".a", "a..b", "1", "1.5", "a.1", "True", "None", "not", "a.not",
            "lambda", "'x'", "a b", "é", "a-b", "a[0]", "f()",
        ] {
            assert!(!is_dotted_name(kind), "{kind:?}");
        }
        assert!(matches!(literal_kind("True"), Ok(Some(_))));
        assert!(literal_kind("not").is_err());
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
        // CPython 3.11: `ast.literal_eval("{[1]}")` raises `TypeError: unhashable type:
        // 'list'`, which oslo.policy lets escape (the policy engine's own parser made it a set).
        assert_eq!(lit("{[1]}"), "<TypeError>");
        // An int beyond 128 bits is valid Python that OpenKeel cannot hold.
        assert_eq!(lit("1".repeat(41).as_str()), "<unsupported>");
    }
}
