//! Magnum's JSON-Patch dialect (`magnum/api/controllers/v1/types.py JsonPatchType`,
//! `magnum/api/utils.py apply_jsonpatch`, the `jsonpatch` / `jsonpointer` libraries).
//!
//! Two steps, as in Magnum:
//!
//! 1. [`PatchType::parse`] types the request body as WSME does for `[<Resource>PatchType]`:
//!    a list of `{path, op, value}` objects, each validated in order (unknown keys, mandatory
//!    `path`/`op`, the path pattern, the op enum, the value type, then the internal /
//!    non-removable / needs-a-value rules). Errors are Magnum's 400s.
//! 2. [`apply_jsonpatch`] applies the operations to the resource's `as_dict()` (a
//!    [`PyValue`] dict): the root-`add` rules, the Python-literal parsing of `/labels`,
//!    `/health_status_reason`, `/node_labels`, `/node_taints` string values (which **rewrites
//!    the operations**, as Magnum's code does — later error messages show the parsed values),
//!    then `jsonpatch.apply_patch` with its exact semantics and messages, wrapped in
//!    `PatchError` (`Couldn't apply patch '<repr of the operations>'. Reason: <text>`).
//!
//! The caller then re-types the patched dict (WSME attribute validation) and computes what
//! changed.

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyvalue::{literal_eval_value, PyValue};
use serde_json::Value;

/// Paths no operation may touch, for every resource (`JsonPatchType.internal_attrs`).
pub const COMMON_INTERNAL_ATTRS: [&str; 7] = [
    "/created_at",
    "/id",
    "/links",
    "/updated_at",
    "/uuid",
    "/project_id",
    "/user_id",
];

/// Paths whose string `replace` value is parsed with `ast.literal_eval`.
pub const LITERAL_PATHS: [&str; 4] = [
    "/labels",
    "/health_status_reason",
    "/node_labels",
    "/node_taints",
];

/// The WSME `Enum` message for `op` (Python set order, as the reference prints it).
const OP_ENUM_MESSAGE: &str = "Value should be one of: remove, replace, add";

/// The path pattern of `JsonPatchType.path`.
pub const PATH_PATTERN: &str = r"^(/[\w-]+)+$";

/// An operation kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Add,
    Replace,
    Remove,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Add => "add",
            OpKind::Replace => "replace",
            OpKind::Remove => "remove",
        }
    }
}

/// One validated operation, as `JsonPatchType.validate` returns it: `path` and `op` are
/// `None` only when the client sent an explicit `null` (WSME lets that through).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchOp {
    pub path: Option<String>,
    pub op: Option<OpKind>,
    pub value: Option<PyValue>,
}

impl PatchOp {
    /// A well-formed operation (for callers building patches themselves).
    pub fn new(op: OpKind, path: &str, value: Option<PyValue>) -> PatchOp {
        PatchOp {
            path: Some(path.to_string()),
            op: Some(op),
            value,
        }
    }

    /// The Python dict repr: `{'path': '/x', 'op': 'add', 'value': 'v'}`.
    pub fn repr(&self) -> String {
        let path = self
            .path
            .as_deref()
            .map_or_else(|| "None".to_string(), openkeel_core::pyvalue::repr_str);
        let op = self
            .op
            .map_or_else(|| "None".to_string(), |o| format!("'{}'", o.as_str()));
        match &self.value {
            Some(v) => format!("{{'path': {path}, 'op': {op}, 'value': {}}}", v.repr()),
            None => format!("{{'path': {path}, 'op': {op}}}"),
        }
    }

    /// The top-level attribute the operation targets (`/labels/k` → `labels`).
    pub fn root_attr(&self) -> Option<&str> {
        self.path
            .as_deref()
            .and_then(|p| p.strip_prefix('/'))
            .map(|p| p.split('/').next().unwrap_or(p))
    }
}

/// The Python repr of an operation list (what `PatchError` prints).
pub fn repr_patch(ops: &[PatchOp]) -> String {
    format!(
        "[{}]",
        ops.iter().map(PatchOp::repr).collect::<Vec<_>>().join(", ")
    )
}

/// A resource's patch type: `internal` paths beyond [`COMMON_INTERNAL_ATTRS`] and the
/// non-removable paths (`_extra_non_removable_attrs` plus the resource's mandatory
/// attributes).
#[derive(Debug, Clone, Copy)]
pub struct PatchType {
    pub extra_internal: &'static [&'static str],
    pub non_removable: &'static [&'static str],
}

fn invalid_input(field: &str, value: &str, msg: &str) -> MagnumError {
    MagnumError::new(
        ErrorKind::InvalidInput,
        &[("fieldname", &field), ("value", &value), ("msg", &msg)],
    )
}

/// Python's `re.search(r'^(/[\w-]+)+$', s)`, including `$` matching before one trailing
/// newline.
pub fn path_matches(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() || !s.starts_with('/') {
        return false;
    }
    s[1..].split('/').all(|seg| {
        !seg.is_empty()
            && seg
                .chars()
                .all(|c| c == '_' || c == '-' || c.is_alphanumeric())
    })
}

impl PatchType {
    /// Whether `path` is internal for this resource.
    pub fn is_internal(&self, path: &str) -> bool {
        COMMON_INTERNAL_ATTRS.contains(&path) || self.extra_internal.contains(&path)
    }

    /// Type the body (already parsed JSON) as WSME's `[PatchType]` body argument `patch`.
    ///
    /// Where Magnum fails with a 500 (`null` body, a list element that is not an object), the
    /// same Python error text comes back as a 400.
    pub fn parse(&self, body: &Value) -> Result<Vec<PatchOp>, MagnumError> {
        let items = match body {
            Value::Array(items) => items,
            Value::Null => {
                return Err(MagnumError::client_side(
                    "'NoneType' object is not iterable",
                ))
            }
            other => {
                let shown = PyValue::from_json(other).py_str();
                return Err(invalid_input(
                    "patch",
                    &shown,
                    &format!("Value not a valid list: {shown}"),
                ));
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let obj = match item {
                Value::Object(o) => o,
                Value::Null => {
                    return Err(MagnumError::client_side(
                        "'NoneType' object is not subscriptable",
                    ))
                }
                other => {
                    return Err(MagnumError::client_side(format!(
                        "'{}' object has no attribute 'keys'",
                        PyValue::from_json(other).type_name()
                    )))
                }
            };
            let unknown: Vec<&str> = obj
                .keys()
                .map(String::as_str)
                .filter(|k| !matches!(*k, "path" | "op" | "value"))
                .collect();
            if !unknown.is_empty() {
                return Err(MagnumError::new(
                    ErrorKind::UnknownAttribute,
                    &[("fieldname", &"patch"), ("attributes", &unknown.join(", "))],
                )
                .with_message_plural(unknown.len()));
            }
            let path = match obj.get("path") {
                None => return Err(invalid_input("path", "None", "Mandatory field missing.")),
                Some(Value::Null) => None,
                Some(Value::String(s)) => {
                    if !path_matches(s) {
                        return Err(invalid_input(
                            "path",
                            s,
                            &format!("Value should match the pattern {PATH_PATTERN}"),
                        ));
                    }
                    Some(s.clone())
                }
                Some(other) => {
                    return Err(invalid_input(
                        "path",
                        &PyValue::from_json(other).py_str(),
                        "Value should be string",
                    ))
                }
            };
            let op = match obj.get("op") {
                None => return Err(invalid_input("op", "None", "Mandatory field missing.")),
                Some(Value::Null) => None,
                Some(v) => match v.as_str() {
                    Some("add") => Some(OpKind::Add),
                    Some("replace") => Some(OpKind::Replace),
                    Some("remove") => Some(OpKind::Remove),
                    _ => {
                        return Err(invalid_input(
                            "op",
                            &PyValue::from_json(v).py_str(),
                            OP_ENUM_MESSAGE,
                        ))
                    }
                },
            };
            let value = match obj.get("value") {
                None | Some(Value::Null) => None,
                Some(v @ (Value::String(_) | Value::Bool(_))) => Some(PyValue::from_json(v)),
                Some(v @ Value::Number(n)) if n.is_i64() || n.is_u64() => {
                    Some(PyValue::from_json(v))
                }
                Some(other) => {
                    let py = PyValue::from_json(other);
                    return Err(invalid_input(
                        "value",
                        &py.py_str(),
                        &format!(
                            "Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '{}'",
                            py.class_repr()
                        ),
                    ));
                }
            };
            // JsonPatchType.validate
            if let Some(p) = &path {
                if self.is_internal(p) {
                    return Err(MagnumError::client_side(format!(
                        "'{p}' is an internal attribute and can not be updated"
                    )));
                }
                if self.non_removable.contains(&p.as_str()) && op == Some(OpKind::Remove) {
                    return Err(MagnumError::client_side(format!(
                        "'{p}' is a mandatory attribute and can not be removed"
                    )));
                }
            }
            if op != Some(OpKind::Remove) && value.is_none() {
                return Err(MagnumError::client_side(
                    "'add' and 'replace' operations needs value",
                ));
            }
            out.push(PatchOp { path, op, value });
        }
        Ok(out)
    }
}

/// Plural form of WSME's `UnknownAttribute` message.
trait PluralUnknown {
    fn with_message_plural(self, n: usize) -> Self;
}

impl PluralUnknown for MagnumError {
    fn with_message_plural(self, n: usize) -> Self {
        if n > 1 {
            let msg =
                self.message()
                    .replacen("Unknown attribute(s) for", "Unknown attributes for", 1);
            MagnumError::with_message(ErrorKind::UnknownAttribute, msg)
        } else {
            let msg =
                self.message()
                    .replacen("Unknown attribute(s) for", "Unknown attribute for", 1);
            MagnumError::with_message(ErrorKind::UnknownAttribute, msg)
        }
    }
}

/// `PatchError(patch=<ops>, reason=<text>)`.
pub fn patch_error(ops: &[PatchOp], reason: impl std::fmt::Display) -> MagnumError {
    MagnumError::new(
        ErrorKind::PatchError,
        &[("patch", &repr_patch(ops)), ("reason", &reason)],
    )
}

/// `api_utils.apply_jsonpatch(doc, patch)`: see the module documentation. `doc` is the
/// resource's `as_dict()`; the result is a new dict.
pub fn apply_jsonpatch(doc: &PyValue, patch: &mut [PatchOp]) -> Result<PyValue, MagnumError> {
    for i in 0..patch.len() {
        let (op, path) = (patch[i].op, patch[i].path.clone());
        if op == Some(OpKind::Add) {
            let Some(path) = &path else {
                return Err(MagnumError::client_side(
                    "'NoneType' object has no attribute 'count'",
                ));
            };
            if path.matches('/').count() == 1 {
                let attr = path.trim_start_matches('/');
                match doc.get(attr) {
                    None => {
                        return Err(MagnumError::client_side(format!(
                        "Adding a new attribute {path} to the root of the resource is not allowed."
                    )))
                    }
                    Some(v) if !v.is_none() => {
                        return Err(MagnumError::client_side(format!(
                        "The attribute {path} has existed, please use 'replace' operation instead."
                    )))
                    }
                    Some(_) => {}
                }
            }
        }
        if op == Some(OpKind::Replace)
            && path.as_deref().is_some_and(|p| LITERAL_PATHS.contains(&p))
        {
            let value = patch[i].value.clone().unwrap_or(PyValue::None);
            match literal_eval_value(&value) {
                Ok(parsed) => patch[i].value = Some(parsed),
                Err(e) => return Err(patch_error(patch, e)),
            }
        }
    }
    json_patch(doc, patch).map_err(|e| match e {
        JsonPatchError::Library(reason) => patch_error(patch, reason),
        // Magnum does not catch these (a 500); the same text as a 400.
        JsonPatchError::Python(text) => MagnumError::client_side(text),
    })
}

/// Why `jsonpatch.apply_patch` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonPatchError {
    /// A `JsonPatchException` / `JsonPointerException` (Magnum wraps it in `PatchError`).
    Library(String),
    /// Another Python error (`TypeError: 'str' object doesn't support item deletion`).
    Python(String),
}

impl std::fmt::Display for JsonPatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonPatchError::Library(m) | JsonPatchError::Python(m) => f.write_str(m),
        }
    }
}

impl From<String> for JsonPatchError {
    fn from(m: String) -> Self {
        if m.ends_with("doesn't support item deletion")
            || m.ends_with("does not support item assignment")
        {
            JsonPatchError::Python(m)
        } else {
            JsonPatchError::Library(m)
        }
    }
}

/// `jsonpatch.apply_patch(doc, patch)` (on a copy of `doc`): the library's message, or the
/// text of a Python error the library does not catch.
pub fn json_patch(doc: &PyValue, patch: &[PatchOp]) -> Result<PyValue, JsonPatchError> {
    // JsonPatch.__init__ builds every operation first.
    for p in patch {
        if p.op.is_none() {
            return Err(JsonPatchError::Library("Operation must be a string".into()));
        }
        if p.path.is_none() {
            return Err(JsonPatchError::Library("Invalid 'path'".into()));
        }
    }
    let mut doc = doc.clone();
    for p in patch {
        let (Some(op), Some(path)) = (p.op, p.path.as_deref()) else {
            continue;
        };
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        let value = p.value.clone().unwrap_or(PyValue::None);
        apply_one(&mut doc, op, path, &parts, value).map_err(JsonPatchError::from)?;
    }
    Ok(doc)
}

/// A pointer step into a container, as `JsonPointer.get_part` types it.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Key(String),
    Index(usize),
    End,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Key(k) => f.write_str(k),
            Part::Index(i) => write!(f, "{i}"),
            Part::End => f.write_str("-"),
        }
    }
}

fn is_sequence(v: &PyValue) -> bool {
    matches!(
        v,
        PyValue::List(_) | PyValue::Tuple(_) | PyValue::Str(_) | PyValue::Bytes(_)
    )
}

fn get_part(doc: &PyValue, part: &str) -> Result<Part, String> {
    match doc {
        PyValue::Dict(_) => Ok(Part::Key(part.to_string())),
        d if is_sequence(d) => {
            if part == "-" {
                return Ok(Part::End);
            }
            let valid = part == "0"
                || (!part.is_empty()
                    && !part.starts_with('0')
                    && part.bytes().all(|b| b.is_ascii_digit()));
            if !valid {
                return Err(format!("'{part}' is not a valid sequence index"));
            }
            Ok(Part::Index(part.parse().unwrap_or(usize::MAX)))
        }
        other => Err(format!(
            "Document '{}' does not support indexing, must be mapping/sequence or support __getitem__",
            other.class_repr()
        )),
    }
}

/// `JsonPointer.walk`: one step down (a copy of the child; the caller navigates mutably).
fn walk<'a>(doc: &'a mut PyValue, part: &str) -> Result<&'a mut PyValue, String> {
    let p = get_part(doc, part)?;
    match (doc, p) {
        (PyValue::Dict(items), Part::Key(k)) => {
            let pos = items.iter().position(|(key, _)| key.as_str() == Some(&k));
            match pos {
                Some(i) => Ok(&mut items[i].1),
                None => {
                    let shown = PyValue::Dict(items.clone()).repr();
                    Err(format!("member '{k}' not found in {shown}"))
                }
            }
        }
        (PyValue::List(items) | PyValue::Tuple(items), Part::Index(i)) => {
            items
                .get_mut(i)
                .ok_or_else(|| format!("index '{i}' is out of bounds"))
        }
        (_, Part::End) => Err(
            "Document '<class 'jsonpointer.EndOfList'>' does not support indexing, must be mapping/sequence or support __getitem__"
                .into(),
        ),
        (PyValue::Str(s), Part::Index(i)) => {
            if i < s.chars().count() {
                // Walking further into a one-character string: the next step sees a `str`.
                Err(STR_CHILD.into())
            } else {
                Err(format!("index '{i}' is out of bounds"))
            }
        }
        (PyValue::Bytes(b), Part::Index(i)) => {
            if i < b.len() {
                Err(BYTES_CHILD.into())
            } else {
                Err(format!("index '{i}' is out of bounds"))
            }
        }
        _ => Err("invalid document type".into()),
    }
}

// Markers for walking into an element of a str / bytes (rare: only reachable with paths of
// three or more segments into a string field). They are resolved by `walk_path`.
const STR_CHILD: &str = "\u{0}str-child";
const BYTES_CHILD: &str = "\u{0}bytes-child";

fn apply_one(
    doc: &mut PyValue,
    op: OpKind,
    location: &str,
    parts: &[&str],
    value: PyValue,
) -> Result<(), String> {
    let Some((last, parents)) = parts.split_last() else {
        return Ok(());
    };
    // to_last: walk all but the last part.
    let mut cur: &mut PyValue = doc;
    let mut scratch: PyValue;
    for (i, part) in parents.iter().enumerate() {
        match walk(cur, part) {
            Ok(next) => cur = next,
            Err(e) if e == STR_CHILD || e == BYTES_CHILD => {
                // The child is a 1-char str (int for bytes); continue on a scratch copy:
                // nothing below can be modified successfully.
                scratch = if e == STR_CHILD {
                    PyValue::str("x")
                } else {
                    PyValue::Int(0)
                };
                let rest: Vec<&str> = parents[i + 1..].to_vec();
                let mut all = rest;
                all.push(last);
                return apply_one(&mut scratch, op, location, &all, value)
                    .and_then(|()| Err(str_mutation_error(op)));
            }
            Err(e) => return Err(e),
        }
    }
    let part = get_part(cur, last)?;
    match op {
        OpKind::Remove => {
            if is_sequence(cur) && !matches!(part, Part::Index(_)) {
                return Err(format!("invalid array index '{part}'"));
            }
            match (cur, &part) {
                (PyValue::Dict(items), Part::Key(k)) => {
                    match items.iter().position(|(key, _)| key.as_str() == Some(k)) {
                        Some(i) => {
                            items.remove(i);
                            Ok(())
                        }
                        None => Err(format!("can't remove a non-existent object '{part}'")),
                    }
                }
                (PyValue::List(items), Part::Index(i)) => {
                    if *i < items.len() {
                        items.remove(*i);
                        Ok(())
                    } else {
                        Err(format!("can't remove a non-existent object '{part}'"))
                    }
                }
                (other, _) => Err(format!(
                    "'{}' object doesn't support item deletion",
                    other.type_name()
                )),
            }
        }
        OpKind::Add => match (cur, &part) {
            (PyValue::List(items), Part::End) => {
                items.push(value);
                Ok(())
            }
            (PyValue::List(items), Part::Index(i)) => {
                if *i > items.len() {
                    Err("can't insert outside of list".into())
                } else {
                    items.insert(*i, value);
                    Ok(())
                }
            }
            (d @ PyValue::Dict(_), Part::Key(k)) => {
                d.set(k, value);
                Ok(())
            }
            _ => Err(format!(
                "unable to fully resolve json pointer {location}, part {part}"
            )),
        },
        OpKind::Replace => {
            if part == Part::End || part == Part::Key("-".into()) {
                return Err("'path' with '-' can't be applied to 'replace' operation".into());
            }
            match (cur, &part) {
                (PyValue::List(items), Part::Index(i)) => {
                    if *i >= items.len() {
                        Err("can't replace outside of list".into())
                    } else {
                        items[*i] = value;
                        Ok(())
                    }
                }
                (d @ PyValue::Dict(_), Part::Key(k)) => {
                    if d.get(k).is_none() {
                        Err(format!("can't replace a non-existent object '{part}'"))
                    } else {
                        d.set(k, value);
                        Ok(())
                    }
                }
                _ => Err(format!(
                    "unable to fully resolve json pointer {location}, part {part}"
                )),
            }
        }
    }
}

fn str_mutation_error(op: OpKind) -> String {
    match op {
        OpKind::Remove => "'str' object doesn't support item deletion".into(),
        _ => "'str' object does not support item assignment".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: PatchType = PatchType {
        extra_internal: &[],
        non_removable: &["/image_id", "/coe"],
    };

    fn perr(body: Value) -> String {
        T.parse(&body).unwrap_err().message().to_string()
    }

    fn doc() -> PyValue {
        PyValue::from_json(&json!({
            "id": 2, "name": "t1", "flavor_id": null, "labels": {"a": "1"}, "list": ["x", "y"]
        }))
    }

    fn apply(body: Value) -> Result<PyValue, String> {
        let mut ops = T.parse(&body).map_err(|e| e.message().to_string())?;
        apply_jsonpatch(&doc(), &mut ops).map_err(|e| e.message().to_string())
    }

    #[test]
    fn typing_like_wsme() {
        assert_eq!(perr(json!({"a": 1})), "Invalid input for field/attribute patch. Value: '{'a': 1}'. Value not a valid list: {'a': 1}");
        assert_eq!(
            perr(json!("x")),
            "Invalid input for field/attribute patch. Value: 'x'. Value not a valid list: x"
        );
        assert_eq!(perr(json!(["x"])), "'str' object has no attribute 'keys'");
        assert_eq!(
            perr(json!([{}])),
            "Invalid input for field/attribute path. Value: 'None'. Mandatory field missing."
        );
        assert_eq!(
            perr(json!([{"path": "/x"}])),
            "Invalid input for field/attribute op. Value: 'None'. Mandatory field missing."
        );
        assert_eq!(perr(json!([{"path": "x", "op": "add"}])), "Invalid input for field/attribute path. Value: 'x'. Value should match the pattern ^(/[\\w-]+)+$");
        assert_eq!(
            perr(json!([{"path": 5, "op": "add"}])),
            "Invalid input for field/attribute path. Value: '5'. Value should be string"
        );
        assert_eq!(perr(json!([{"path": "/uuid", "op": "test"}])), "Invalid input for field/attribute op. Value: 'test'. Value should be one of: remove, replace, add");
        assert_eq!(perr(json!([{"path": "/x", "op": "add", "value": {"a": 1}}])), "Invalid input for field/attribute value. Value: '{'a': 1}'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'dict'>'");
        assert_eq!(perr(json!([{"path": "/x", "op": "add", "value": 1.5}])), "Invalid input for field/attribute value. Value: '1.5'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'float'>'");
        assert_eq!(
            perr(json!([{"path": "/x", "op": "add", "value": null}])),
            "'add' and 'replace' operations needs value"
        );
        assert_eq!(
            perr(json!([{"path": "/x", "op": "add", "foo": 1, "bar": 2}])),
            "Unknown attributes for argument patch: foo, bar"
        );
        assert_eq!(
            perr(json!([{"path": "/x", "op": "add", "foo": 1}])),
            "Unknown attribute for argument patch: foo"
        );
        assert_eq!(
            perr(json!([{"path": "/uuid", "op": "remove"}, {"path": "x"}])),
            "'/uuid' is an internal attribute and can not be updated"
        );
        assert_eq!(
            perr(json!([{"path": "/image_id", "op": "remove"}])),
            "'/image_id' is a mandatory attribute and can not be removed"
        );
        assert!(path_matches("/labels\n"));
        assert!(!path_matches("/labels/"));
    }

    #[test]
    fn apply_like_magnum() {
        assert_eq!(
            apply(json!([{"path": "/x", "op": "add", "value": "v"}])).unwrap_err(),
            "Adding a new attribute /x to the root of the resource is not allowed."
        );
        assert_eq!(
            apply(json!([{"path": "/name", "op": "add", "value": "v"}])).unwrap_err(),
            "The attribute /name has existed, please use 'replace' operation instead."
        );
        assert_eq!(apply(json!([{"path": "/labels", "op": "replace", "value": "{bad"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': '{bad'}]'. Reason: '{' was never closed (<unknown>, line 1)");
        assert_eq!(apply(json!([{"path": "/labels/zz", "op": "remove"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels/zz', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'zz'");
        assert_eq!(apply(json!([{"path": "/labels/zz/q", "op": "remove"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels/zz/q', 'op': 'remove'}]'. Reason: member 'zz' not found in {'a': '1'}");
        assert_eq!(apply(json!([{"path": "/flavor_id/0", "op": "remove"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/flavor_id/0', 'op': 'remove'}]'. Reason: Document '<class 'NoneType'>' does not support indexing, must be mapping/sequence or support __getitem__");
        assert_eq!(
            apply(json!([{"path": "/name/0", "op": "remove"}])).unwrap_err(),
            "'str' object doesn't support item deletion"
        );
        assert_eq!(apply(json!([{"path": "/labels", "op": "replace", "value": 5}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': 5}]'. Reason: malformed node or string: 5");
        assert_eq!(apply(json!([{"path": "/labels/-", "op": "replace", "value": "x"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels/-', 'op': 'replace', 'value': 'x'}]'. Reason: 'path' with '-' can't be applied to 'replace' operation");
        assert_eq!(apply(json!([{"path": "/labels", "op": "replace", "value": "{\"k\": 1}"}, {"path": "/labels/q/z", "op": "add", "value": "x"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': {'k': 1}}, {'path': '/labels/q/z', 'op': 'add', 'value': 'x'}]'. Reason: member 'q' not found in {'k': 1}");
        assert_eq!(apply(json!([{"path": "/list/5", "op": "add", "value": "x"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/list/5', 'op': 'add', 'value': 'x'}]'. Reason: can't insert outside of list");
        assert_eq!(apply(json!([{"path": "/list/01", "op": "remove"}])).unwrap_err(), "Couldn't apply patch '[{'path': '/list/01', 'op': 'remove'}]'. Reason: '01' is not a valid sequence index");
    }

    #[test]
    fn successful_patches() {
        let out = apply(json!([
            {"path": "/labels/b", "op": "add", "value": "2"},
            {"path": "/labels/a", "op": "remove"},
            {"path": "/flavor_id", "op": "add", "value": "m1.small"},
            {"path": "/list/-", "op": "add", "value": "z"},
            {"path": "/list/0", "op": "replace", "value": 7},
            {"path": "/name", "op": "remove"},
        ]))
        .unwrap();
        assert_eq!(
            out.repr(),
            "{'id': 2, 'flavor_id': 'm1.small', 'labels': {'b': '2'}, 'list': [7, 'y', 'z']}"
        );
        let out =
            apply(json!([{"path": "/labels", "op": "replace", "value": "{'x': 'y'}"}])).unwrap();
        assert_eq!(out.get("labels").unwrap().repr(), "{'x': 'y'}");
    }
}
