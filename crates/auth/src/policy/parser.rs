//! The policy language parser, a transcription of `oslo_policy/_parser.py`.
//!
//! The tokenizer splits on whitespace and peels parentheses off each word; the parser is
//! oslo.policy's greedy shift-reduce `ParseState`, which gives `not` the tightest binding, then
//! `and`, then `or`. A rule that does not reduce to a single check is `!` (fail closed) with a
//! warning, as is any single check without a `:` or with an unknown form.

use super::check::Check;
use openkeel_core::pyvalue::PyValue;

#[derive(Debug, Clone)]
enum Token {
    Check(Check),
    /// An `and_expr`: always a `Check::And`.
    AndExpr(Check),
    /// An `or_expr`: always a `Check::Or`.
    OrExpr(Check),
    And,
    Or,
    Not,
    LParen,
    RParen,
    /// A quoted string: never reduces (a parse failure).
    Str,
}

/// Parse a rule in the policy language. Problems oslo.policy logs are logged as warnings.
pub fn parse_rule(rule: &str) -> Check {
    let (check, warnings) = parse_rule_with_warnings(rule);
    for w in warnings {
        tracing::warn!("{w}");
    }
    check
}

/// Parse a rule and also return what oslo.policy would log about it (unparsable rule, check
/// without a kind, ...). The check is `Check::False` where oslo.policy fails closed.
pub fn parse_rule_with_warnings(rule: &str) -> (Check, Vec<String>) {
    let mut warnings = Vec::new();
    let check = parse_text_rule(rule, &mut warnings);
    (check, warnings)
}

/// Python's `str.isspace()` / `re`'s `\s` for str patterns.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `_parse_check`: one `kind:match` word.
pub(crate) fn parse_check(rule: &str, warnings: &mut Vec<String>) -> Check {
    if rule == "!" {
        return Check::False;
    }
    if rule == "@" {
        return Check::True;
    }
    let Some((kind, m)) = rule.split_once(':') else {
        warnings.push(format!("Failed to understand rule {rule}"));
        return Check::False;
    };
    match kind {
        // Extension checks (entry points oslo.policy.rule_checks) take precedence.
        "http" | "https" => Check::External {
            kind: kind.to_string(),
            url: m.to_string(),
        },
        "rule" => Check::Rule(m.to_string()),
        "role" => Check::Role(m.to_string()),
        _ => Check::Generic {
            kind: kind.to_string(),
            value: m.to_string(),
        },
    }
}

/// `_parse_tokenize`.
fn tokenize(rule: &str, warnings: &mut Vec<String>) -> Vec<Token> {
    let mut out = Vec::new();
    for tok in rule.split(is_py_space) {
        if tok.is_empty() || tok.chars().all(is_py_space) {
            continue;
        }
        let clean = tok.trim_start_matches('(');
        for _ in 0..(tok.len() - clean.len()) {
            out.push(Token::LParen);
        }
        if clean.is_empty() {
            continue;
        }
        let tok = clean;
        let clean = tok.trim_end_matches(')');
        let trail = tok.len() - clean.len();
        let lowered = clean.to_lowercase();
        match lowered.as_str() {
            "and" => out.push(Token::And),
            "or" => out.push(Token::Or),
            "not" => out.push(Token::Not),
            _ if !clean.is_empty() => {
                // The quote test looks at `tok` (trailing parentheses still attached).
                let first = tok.chars().next();
                let last = tok.chars().last();
                if tok.chars().count() >= 2
                    && matches!(
                        (first, last),
                        (Some('"'), Some('"')) | (Some('\''), Some('\''))
                    )
                {
                    out.push(Token::Str);
                } else {
                    out.push(Token::Check(parse_check(clean, warnings)));
                }
            }
            _ => {}
        }
        for _ in 0..trail {
            out.push(Token::RParen);
        }
    }
    out
}

/// `ParseState.reduce`, applied after every shift.
fn reduce(stack: &mut Vec<Token>) {
    loop {
        let n = stack.len();
        if n >= 3 {
            let (a, b, c) = (&stack[n - 3], &stack[n - 2], &stack[n - 1]);
            let replacement = match (a, b, c) {
                (
                    Token::LParen,
                    Token::Check(x) | Token::AndExpr(x) | Token::OrExpr(x),
                    Token::RParen,
                ) => Some(Token::Check(x.clone())),
                (Token::Check(x), Token::And, Token::Check(y)) => {
                    Some(Token::AndExpr(Check::And(vec![x.clone(), y.clone()])))
                }
                (Token::AndExpr(Check::And(xs)), Token::And, Token::Check(y)) => {
                    let mut xs = xs.clone();
                    xs.push(y.clone());
                    Some(Token::AndExpr(Check::And(xs)))
                }
                (Token::OrExpr(Check::Or(xs)), Token::And, Token::Check(y)) => {
                    // 'A or B and C': B and C bind first.
                    let mut xs = xs.clone();
                    let popped = xs.pop();
                    let and = match popped {
                        Some(Check::And(mut inner)) => {
                            inner.push(y.clone());
                            Check::And(inner)
                        }
                        Some(other) => Check::And(vec![other, y.clone()]),
                        None => Check::And(vec![y.clone()]),
                    };
                    xs.push(and);
                    Some(Token::OrExpr(Check::Or(xs)))
                }
                (Token::Check(x) | Token::AndExpr(x), Token::Or, Token::Check(y)) => {
                    Some(Token::OrExpr(Check::Or(vec![x.clone(), y.clone()])))
                }
                (Token::OrExpr(Check::Or(xs)), Token::Or, Token::Check(y)) => {
                    let mut xs = xs.clone();
                    xs.push(y.clone());
                    Some(Token::OrExpr(Check::Or(xs)))
                }
                _ => None,
            };
            if let Some(t) = replacement {
                stack.truncate(n - 3);
                stack.push(t);
                continue;
            }
        }
        if n >= 2 {
            if let (Token::Not, Token::Check(x)) = (&stack[n - 2], &stack[n - 1]) {
                let t = Token::Check(Check::Not(Box::new(x.clone())));
                stack.truncate(n - 2);
                stack.push(t);
                continue;
            }
        }
        return;
    }
}

/// `_parse_text_rule`.
fn parse_text_rule(rule: &str, warnings: &mut Vec<String>) -> Check {
    if rule.is_empty() {
        return Check::True;
    }
    let mut stack = Vec::new();
    for token in tokenize(rule, warnings) {
        stack.push(token);
        reduce(&mut stack);
    }
    match stack.as_slice() {
        [Token::Check(c) | Token::AndExpr(c) | Token::OrExpr(c)] => c.clone(),
        _ => {
            warnings.push(format!("Failed to understand rule {rule}"));
            Check::False
        }
    }
}

/// Why a rule value from a policy file cannot be used at all (Python raises while loading).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleValueError(pub(crate) String);

/// `parse_rule` applied to a value from a policy file: a string is the policy language,
/// anything else the legacy list-of-lists form (`_parse_list_rule`), with Python's truthiness
/// and iteration rules (a falsy value is `@`; iterating a number raises `TypeError`).
pub(crate) fn parse_rule_value(
    value: &PyValue,
    warnings: &mut Vec<String>,
) -> Result<Check, RuleValueError> {
    if let PyValue::Str(s) = value {
        return Ok(parse_text_rule(s, warnings));
    }
    if !value.truthy() {
        return Ok(Check::True);
    }
    let mut or_list = Vec::new();
    for inner in value.iterate().map_err(RuleValueError)? {
        if !inner.truthy() {
            continue;
        }
        let and_list: Vec<Check> = match &inner {
            PyValue::Str(s) => vec![parse_check(s, warnings)],
            other => other
                .iterate()
                .map_err(RuleValueError)?
                .iter()
                .map(|r| match r {
                    PyValue::Str(s) => parse_check(s, warnings),
                    other => {
                        warnings.push(format!("Failed to understand rule {}", other.repr()));
                        Check::False
                    }
                })
                .collect(),
        };
        if and_list.len() == 1 {
            or_list.extend(and_list);
        } else {
            or_list.push(Check::And(and_list));
        }
    }
    Ok(match or_list.len() {
        0 => Check::False,
        1 => or_list.pop().unwrap_or(Check::False),
        _ => Check::Or(or_list),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> String {
        parse_rule_with_warnings(s).0.to_string()
    }

    #[test]
    fn single_checks() {
        assert_eq!(parse_rule(""), Check::True);
        assert_eq!(parse_rule("@"), Check::True);
        assert_eq!(parse_rule("!"), Check::False);
        assert_eq!(parse_rule("rule:a"), Check::Rule("a".into()));
        assert_eq!(parse_rule("role:admin"), Check::Role("admin".into()));
        assert_eq!(
            parse_rule("project_id:%(project_id)s"),
            Check::Generic {
                kind: "project_id".into(),
                value: "%(project_id)s".into()
            }
        );
        // Only the first colon separates kind and match.
        assert_eq!(
            parse_rule("role:compute:admin"),
            Check::Role("compute:admin".into())
        );
        assert_eq!(
            parse_rule("http://x/%(a)s"),
            Check::External {
                kind: "http".into(),
                url: "//x/%(a)s".into()
            }
        );
    }

    #[test]
    fn malformed_checks_fail_closed_with_a_warning() {
        let (c, w) = parse_rule_with_warnings("nocolon");
        assert_eq!(c, Check::False);
        assert_eq!(w.len(), 1);
        let (c, w) = parse_rule_with_warnings("role:admin or");
        assert_eq!(c, Check::False);
        assert!(!w.is_empty());
        // Only-whitespace is not empty: nothing reduces.
        assert_eq!(p("   "), "!");
        assert_eq!(p("and"), "!");
        assert_eq!(p("("), "!");
        assert_eq!(p("()"), "!");
        assert_eq!(p("(role:a"), "!");
        assert_eq!(p("role:a)"), "!");
        assert_eq!(p("role:a role:b"), "!");
        assert_eq!(p("not"), "!");
        assert_eq!(p("'role:admin'"), "!");
        assert_eq!(p("\"x\" or role:a"), "!");
        // A malformed part inside a valid expression is just `!`.
        assert_eq!(p("nocolon or role:a"), "(! or role:a)");
        // The quote test sees the trailing parenthesis: this is a (malformed) check, not a string.
        assert_eq!(p("('a')"), "!");
        assert_eq!(p("(role:a or 'x')"), "(role:a or !)");
    }

    #[test]
    fn precedence_and_grouping() {
        assert_eq!(
            p("role:a or role:b and role:c"),
            "(role:a or (role:b and role:c))"
        );
        assert_eq!(
            p("role:a and role:b or role:c"),
            "((role:a and role:b) or role:c)"
        );
        assert_eq!(
            p("role:a or role:b and role:c and role:d or role:e"),
            "(role:a or (role:b and role:c and role:d) or role:e)"
        );
        assert_eq!(p("not role:a and role:b"), "(not role:a and role:b)");
        assert_eq!(p("role:a and not role:b"), "(role:a and not role:b)");
        assert_eq!(p("not not role:a"), "not not role:a");
        assert_eq!(p("not (role:a or role:b)"), "not (role:a or role:b)");
        assert_eq!(
            p("(role:a or role:b) and role:c"),
            "((role:a or role:b) and role:c)"
        );
        assert_eq!(p("((role:a))"), "role:a");
        assert_eq!(
            p("role:a AND role:b Or NOT role:c"),
            "((role:a and role:b) or not role:c)"
        );
        // A parenthesised `and` popped by `or ... and` is extended in place, as in Python.
        assert_eq!(
            p("role:x or (role:a and role:b) and role:c"),
            "(role:x or (role:a and role:b and role:c))"
        );
        assert_eq!(
            p("(role:a and role:b) and role:c"),
            "((role:a and role:b) and role:c)"
        );
        assert_eq!(
            p("(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))"),
            "(rule:context_is_admin or (rule:project_member and rule:is_user))"
        );
        // Tabs and newlines separate tokens too.
        assert_eq!(p("role:a\tor\nrole:b"), "(role:a or role:b)");
    }

    #[test]
    fn list_of_lists() {
        let mut w = Vec::new();
        let v = PyValue::List(vec![
            PyValue::List(vec![
                PyValue::Str("role:a".into()),
                PyValue::Str("project_id:%(project_id)s".into()),
            ]),
            PyValue::Str("role:b".into()),
            PyValue::List(vec![]),
            PyValue::List(vec![PyValue::Int(1)]),
        ]);
        assert_eq!(
            parse_rule_value(&v, &mut w).map(|c| c.to_string()),
            Ok("((role:a and project_id:%(project_id)s) or role:b or !)".to_string())
        );
        assert_eq!(
            parse_rule_value(&PyValue::List(vec![]), &mut w),
            Ok(Check::True)
        );
        assert_eq!(parse_rule_value(&PyValue::None, &mut w), Ok(Check::True));
        assert_eq!(
            parse_rule_value(&PyValue::Bool(false), &mut w),
            Ok(Check::True)
        );
        assert_eq!(
            parse_rule_value(&PyValue::List(vec![PyValue::List(vec![])]), &mut w),
            Ok(Check::False)
        );
        assert!(parse_rule_value(&PyValue::Int(3), &mut w).is_err());
        assert!(parse_rule_value(&PyValue::List(vec![PyValue::Bool(true)]), &mut w).is_err());
    }
}
