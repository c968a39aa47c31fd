//! Typed query arguments (pecan + WSME), Magnum's list parameters (`marker`, `limit`,
//! `sort_key`, `sort_dir`) and the collection `next` link.
//!
//! How a list handler uses it:
//!
//! ```text
//! let args = pagination::parse_args(req, &pagination::LIST_ARGS)?;      // 400 typing / unknown
//! let list = pagination::ListParams::from_args(&args);
//! let limit = pagination::validate_limit(list.limit, settings.max_limit)?; // 400
//! pagination::validate_sort_dir(&list.sort_dir)?;                      // 400
//! // resolve list.marker to a row (404 when not visible), list from the DB (sort_key 400)
//! let next = pagination::next_link(&req.host_url, "clustertemplates",
//!     &list.next_args(), limit, items.len(), last_uuid);
//! Reply::ok(pagination::collection("clustertemplates", items, next))
//! ```
//!
//! Argument conversion follows `wsme.rest.args.args_from_args` (query parameters named after
//! the handler's arguments are converted in declaration order; a failure is `Invalid input for
//! field/attribute <name>. Value: '<v>'. unable to convert to <type>. Error: <python error>`),
//! then `args_from_params` (anything undeclared → `Unknown argument: "<names>"`). A repeated
//! parameter reaches the converter as a Python list, as pecan passes it.

use crate::error::ApiError;
use crate::RequestInfo;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyvalue::repr_str;
use serde_json::{Map, Value};

/// `[api] max_limit` default.
pub const DEFAULT_MAX_LIMIT: u64 = 1000;

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

/// `marker` (uuid), `limit` (int), `sort_key`, `sort_dir` — the arguments of every uuid-keyed
/// list route, in Magnum's declaration order.
pub const LIST_ARGS: [ArgSpec; 4] = [
    ArgSpec {
        name: "marker",
        ty: ArgType::Uuid,
    },
    ArgSpec {
        name: "limit",
        ty: ArgType::Int,
    },
    ArgSpec {
        name: "sort_key",
        ty: ArgType::Text,
    },
    ArgSpec {
        name: "sort_dir",
        ty: ArgType::Text,
    },
];

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

fn invalid_input(name: &str, value: &str, msg: &str) -> ApiError {
    MagnumError::new(
        ErrorKind::InvalidInput,
        &[("fieldname", &name), ("value", &value), ("msg", &msg)],
    )
    .into()
}

/// Convert one argument value to its declared type (WSME's `fromjson` / `from_param`).
fn convert(spec: &ArgSpec, raw: &Raw<'_>) -> Result<ArgValue, ApiError> {
    let shown = raw.py_str();
    let fail = |ty: &str, err: String| {
        invalid_input(
            spec.name,
            &shown,
            &format!("unable to convert to {ty}. Error: {err}"),
        )
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

/// Python's `int(str)`: surrounding whitespace, an optional sign, decimal digits with single
/// underscores between them. Values beyond 128 bits saturate (they only ever cap a limit).
pub fn python_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') {
        return None;
    }
    let mut prev_us = false;
    let mut clean = String::with_capacity(digits.len());
    for c in digits.chars() {
        if c == '_' {
            if prev_us {
                return None;
            }
            prev_us = true;
        } else if c.is_ascii_digit() {
            clean.push(c);
            prev_us = false;
        } else {
            return None;
        }
    }
    let v = clean.parse::<i128>().unwrap_or(i128::MAX);
    Some(if neg { -v } else { v })
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

/// The list parameters with Magnum's defaults (`sort_key` `id`, `sort_dir` `asc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListParams {
    pub marker: Option<String>,
    /// As given (validate with [`validate_limit`]).
    pub limit: Option<i128>,
    pub sort_key: String,
    pub sort_dir: String,
}

impl ListParams {
    pub fn from_args(args: &Args) -> ListParams {
        ListParams {
            // Magnum resolves the marker only when it is truthy (`if marker:`).
            marker: args
                .text("marker")
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            limit: args.int("limit"),
            sort_key: args.text("sort_key").unwrap_or("id").to_string(),
            sort_dir: args.text("sort_dir").unwrap_or("asc").to_string(),
        }
    }

    /// The arguments Magnum echoes in `next` (`sort_key`, `sort_dir`, in that order).
    pub fn next_args(&self) -> [(&str, &str); 2] {
        [
            ("sort_key", self.sort_key.as_str()),
            ("sort_dir", self.sort_dir.as_str()),
        ]
    }
}

/// `api_utils.validate_limit`: ≤ 0 → 400 `Limit must be positive`; capped at `max_limit`;
/// absent → `max_limit`.
pub fn validate_limit(limit: Option<i128>, max_limit: u64) -> Result<u64, MagnumError> {
    match limit {
        None => Ok(max_limit),
        Some(l) if l <= 0 => Err(MagnumError::client_side("Limit must be positive")),
        Some(l) => Ok(u64::try_from(l).unwrap_or(u64::MAX).min(max_limit)),
    }
}

/// `api_utils.validate_sort_dir`: only `asc` / `desc`.
pub fn validate_sort_dir(sort_dir: &str) -> Result<(), MagnumError> {
    if sort_dir == "asc" || sort_dir == "desc" {
        Ok(())
    } else {
        Err(MagnumError::client_side(format!(
            "Invalid sort direction: {sort_dir}. Acceptable values are 'asc' or 'desc'"
        )))
    }
}

/// `Collection.get_next`: present only when the page holds exactly `limit` (non-zero) items:
/// `<base>/v1/<resource_url>?<k>=<v>&...&limit=<limit>&marker=<last marker>` (nothing is
/// URL-encoded, as in Magnum).
pub fn next_link(
    base_url: &str,
    resource_url: &str,
    args: &[(&str, &str)],
    limit: u64,
    count: usize,
    last_marker: &str,
) -> Option<String> {
    if count == 0 || count as u64 != limit {
        return None;
    }
    let mut q = String::from("?");
    for (k, v) in args {
        q.push_str(k);
        q.push('=');
        q.push_str(v);
        q.push('&');
    }
    q.push_str(&format!("limit={limit}&marker={last_marker}"));
    Some(crate::links::build_url(base_url, resource_url, &q, false))
}

/// The collection body: `{"<key>": [items], "next": "<url>"}` (`next` only when given).
/// Bounds how many large collection pages are built at once (the rows of a 1,000-cluster
/// page take a few MiB; sixteen at once would make the process ten times its idle size).
/// Requests beyond the bound wait their turn: with the CPU already busy rendering, this
/// costs no throughput. `[openkeel] list_concurrency`, 0 meaning the available cores (at
/// least 2); docs/performance.md has the measurement.
pub fn list_permits(list_concurrency: usize) -> std::sync::Arc<tokio::sync::Semaphore> {
    let n = if list_concurrency > 0 {
        list_concurrency
    } else {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2)
    };
    std::sync::Arc::new(tokio::sync::Semaphore::new(n))
}

/// [`collection`] written straight into `json.dumps` text, one item at a time: each item's
/// `Value` lives only while it is written, so a page of 1,000 clusters never exists as one
/// tree (peak memory per list is the rows plus the text). `items` yields each item's view.
pub struct CollectionWriter {
    out: String,
    count: usize,
}

impl CollectionWriter {
    /// `size_hint`: the expected body size in bytes (avoids regrowing the buffer).
    pub fn new(key: &str, size_hint: usize) -> Self {
        let mut out = String::with_capacity(size_hint.max(64));
        out.push('{');
        openkeel_core::pyjson::write_str(&mut out, key);
        out.push_str(": [");
        CollectionWriter { out, count: 0 }
    }

    pub fn push(&mut self, item: &Value) {
        if self.count > 0 {
            self.out.push_str(", ");
        }
        openkeel_core::pyjson::write_value(&mut self.out, item);
        self.count += 1;
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Close the document, with `next` as [`collection`] adds it.
    pub fn finish(mut self, next: Option<String>) -> String {
        self.out.push(']');
        if let Some(n) = next {
            self.out.push_str(", \"next\": ");
            openkeel_core::pyjson::write_str(&mut self.out, &n);
        }
        self.out.push('}');
        self.out.shrink_to_fit();
        self.out
    }
}

pub fn collection(key: &str, items: Vec<Value>, next: Option<String>) -> Value {
    let mut m = Map::new();
    m.insert(key.to_string(), Value::Array(items));
    if let Some(n) = next {
        m.insert("next".into(), Value::String(n));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::microversion;

    #[test]
    fn collection_writer_writes_what_collection_dumps() {
        let items = [
            serde_json::json!({"uuid": "a", "n": 1, "l": {"k": "v\u{e9}"}}),
            serde_json::json!({"uuid": "b", "n": null}),
        ];
        for next in [
            None,
            Some("http://h/v1/clusters?limit=2&marker=b".to_string()),
        ] {
            for n in 0..=items.len() {
                let mut w = CollectionWriter::new("clusters", 0);
                for it in &items[..n] {
                    w.push(it);
                }
                assert_eq!(w.len(), n);
                assert_eq!(
                    w.finish(next.clone()),
                    openkeel_core::pyjson::dumps(&collection(
                        "clusters",
                        items[..n].to_vec(),
                        next.clone()
                    ))
                );
            }
        }
    }
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

    #[test]
    fn limits_and_dirs() {
        assert_eq!(validate_limit(None, 1000), Ok(1000));
        assert_eq!(validate_limit(Some(99999999999999999999), 1000), Ok(1000));
        assert_eq!(
            validate_limit(Some(0), 1000).unwrap_err().message(),
            "Limit must be positive"
        );
        assert_eq!(
            validate_sort_dir("up").unwrap_err().message(),
            "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'"
        );
        assert!(validate_sort_dir("asc").is_ok());
    }

    #[test]
    fn next_links() {
        let args = [("sort_key", "id"), ("sort_dir", "asc")];
        assert_eq!(
            next_link("http://h:1", "clustertemplates", &args, 1, 1, "u").as_deref(),
            Some("http://h:1/v1/clustertemplates?sort_key=id&sort_dir=asc&limit=1&marker=u")
        );
        assert_eq!(next_link("http://h:1", "x", &args, 2, 1, "u"), None);
        assert_eq!(next_link("http://h:1", "x", &args, 0, 0, "u"), None);
        assert_eq!(
            openkeel_core::pyjson::dumps(&collection("x", vec![], None)),
            r#"{"x": []}"#
        );
    }
}
