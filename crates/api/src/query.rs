//! Typed query arguments (pecan + WSME): the arguments a handler declares ([`ArgSpec`]), their
//! conversion, and the refusal of undeclared ones.
//!
//! Argument conversion follows `wsme.rest.args.args_from_args` (query parameters named after
//! the handler's arguments are converted in declaration order; a failure is `Invalid input for
//! field/attribute <name>. Value: '<v>'. unable to convert to <type>. Error: <python error>`),
//! then `args_from_params` (anything undeclared → `Unknown argument: "<names>"`). A repeated
//! parameter reaches the converter as a Python list, as pecan passes it.

use crate::error::ApiError;
use crate::validation::invalid_input;
use crate::RequestInfo;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyvalue::{python_int, repr_str};

/// The WSME type of a query argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// `types.uuid` (`uuidutils.is_uuid_like`).
    Uuid,
    /// `int`.
    Int,
    /// `wtypes.text`.
    Text,
    /// `types.boolean` (`strutils.bool_from_string(strict=True)`).
    Bool,
}

/// A declared query argument.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    pub name: &'static str,
    pub ty: ArgType,
}

/// A converted argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgValue {
    Text(String),
    Int(i128),
    Bool(bool),
}

/// The converted query arguments, by name (absent arguments are not present).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    values: Vec<(&'static str, ArgValue)>,
}

impl Args {
    pub fn get(&self, name: &str) -> Option<&ArgValue> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// A text or uuid argument.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            ArgValue::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> Option<i128> {
        match self.get(name)? {
            ArgValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            ArgValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// The raw value as the converter sees it: one string, or the list pecan builds for a
/// repeated parameter.
enum Raw<'a> {
    One(&'a str),
    Many(Vec<&'a str>),
}

impl Raw<'_> {
    /// `str(value)` (what `text` conversion produces and what error messages echo).
    fn py_str(&self) -> String {
        match self {
            Raw::One(s) => (*s).to_string(),
            Raw::Many(v) => format!(
                "[{}]",
                v.iter().map(|s| repr_str(s)).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// Convert one argument value to its declared type (WSME's `fromjson` / `from_param`).
fn convert(spec: &ArgSpec, raw: &Raw<'_>) -> Result<ArgValue, ApiError> {
    let shown = raw.py_str();
    let fail = |ty: &str, err: String| {
        ApiError::from(invalid_input(
            spec.name,
            &shown,
            &format!("unable to convert to {ty}. Error: {err}"),
        ))
    };
    Ok(match spec.ty {
        ArgType::Text => ArgValue::Text(shown.clone()),
        ArgType::Uuid => {
            if openkeel_db::ident::is_uuid_like(&shown) {
                ArgValue::Text(shown.clone())
            } else {
                return Err(fail(
                    "uuid",
                    format!("Expected a uuid but received {shown}."),
                ));
            }
        }
        ArgType::Int => match raw {
            Raw::One(s) => match python_int(s) {
                Some(i) => ArgValue::Int(i),
                None => {
                    return Err(fail(
                        "int",
                        format!("invalid literal for int() with base 10: {}", repr_str(s)),
                    ))
                }
            },
            Raw::Many(_) => return Err(fail(
                "int",
                "int() argument must be a string, a bytes-like object or a real number, not 'list'"
                    .into(),
            )),
        },
        ArgType::Bool => match bool_from_string(&shown) {
            Some(b) => ArgValue::Bool(b),
            // Magnum: a JSON 500 `__str__ returned non-string (type ValueError)`.
            None => return Err(fail("boolean", unrecognized_bool(&shown))),
        },
    })
}

/// Parse the query string against the declared arguments (see the module documentation).
///
/// pecan's routing arguments ([`RequestInfo::positional`], `GET /v2/clusters`) are the
/// handler's first positional arguments: converted first (`wsme.rest.args.args_from_args`),
/// then overridden by query parameters of the same name; more of them than the handler has
/// arguments is pecan's 404.
pub fn parse_args(req: &RequestInfo, specs: &[ArgSpec]) -> Result<Args, ApiError> {
    if req.positional.len() > specs.len() {
        return Err(ApiError::not_found());
    }
    let mut args = Args::default();
    for (spec, value) in specs.iter().zip(&req.positional) {
        let value = convert(spec, &Raw::One(value))?;
        args.values.push((spec.name, value));
    }
    let pairs = crate::request::query_pairs(req);
    for spec in specs {
        let values: Vec<&str> = pairs
            .iter()
            .filter(|(k, _)| k == spec.name)
            .map(|(_, v)| v.as_str())
            .collect();
        let raw = match values.len() {
            0 => continue,
            1 => Raw::One(values[0]),
            _ => Raw::Many(values),
        };
        let value = convert(spec, &raw)?;
        args.values.retain(|(n, _)| *n != spec.name);
        args.values.push((spec.name, value));
    }
    let mut unknown: Vec<&str> = Vec::new();
    for (k, _) in &pairs {
        if !specs.iter().any(|s| s.name == k) && !unknown.contains(&k.as_str()) {
            unknown.push(k);
        }
    }
    if !unknown.is_empty() {
        return Err(MagnumError::new(
            ErrorKind::UnknownArgument,
            &[("argname", &unknown.join(", "))],
        )
        .into());
    }
    Ok(args)
}

/// `strutils.bool_from_string(v, strict=True)`.
pub fn bool_from_string(v: &str) -> Option<bool> {
    match v.trim().to_lowercase().as_str() {
        "1" | "t" | "true" | "on" | "y" | "yes" => Some(true),
        "0" | "f" | "false" | "off" | "n" | "no" => Some(false),
        _ => None,
    }
}

/// strutils' `ValueError` text for a string that is not a boolean.
pub fn unrecognized_bool(v: &str) -> String {
    format!(
        "Unrecognized value {}, acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        repr_str(v)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::microversion;
    use crate::pagination::{ListParams, LIST_ARGS};
    use http::{HeaderMap, Method};

    fn req(q: &str) -> RequestInfo {
        RequestInfo {
            method: Method::GET,
            segments: vec![],
            query: Some(q.to_string()),
            headers: HeaderMap::new(),
            host_url: "http://h".into(),
            request_id: "req-1".into(),
            version: microversion::MIN,
            token_info: None,
            positional: Vec::new(),
        }
    }

    fn err(q: &str) -> String {
        match parse_args(&req(q), &LIST_ARGS) {
            Err(ApiError::Handler(e)) => e.message().to_string(),
            other => panic!("{q}: {other:?}"),
        }
    }

    #[test]
    fn typing_errors_as_wsme() {
        assert_eq!(err("limit=abc"), "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'");
        assert_eq!(err("limit=1&limit=2"), "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'");
        assert_eq!(err("marker=xyz&limit=abc"), "Invalid input for field/attribute marker. Value: 'xyz'. unable to convert to uuid. Error: Expected a uuid but received xyz.");
        assert_eq!(err("marker="), "Invalid input for field/attribute marker. Value: ''. unable to convert to uuid. Error: Expected a uuid but received .");
        assert_eq!(err("limit="), "Invalid input for field/attribute limit. Value: ''. unable to convert to int. Error: invalid literal for int() with base 10: ''");
        assert_eq!(err("foo=1&limit=abc"), "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'");
        assert_eq!(err("foo=1"), "Unknown argument: \"foo\"");
    }

    #[test]
    fn values() {
        let a = parse_args(&req("limit=%205&sort_key=&sort_dir=desc"), &LIST_ARGS).unwrap();
        let p = ListParams::from_args(&a);
        assert_eq!(p.limit, Some(5));
        assert_eq!(p.sort_key, "");
        assert_eq!(p.sort_dir, "desc");
        assert_eq!(python_int("5_0"), Some(50));
        assert_eq!(python_int("-0"), Some(0));
        assert_eq!(python_int("5__0"), None);
        assert_eq!(python_int("0x5"), None);
    }
}
