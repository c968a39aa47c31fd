//! Request validation shared by the template and cluster handlers, in three layers, each
//! with Magnum's exact messages:
//!
//! 1. **WSME typing** of body attributes ([`AttrType`], the one type model of every API type;
//!    [`typecheck`], [`fromjson`]): what a `wsme.wsattr` setter accepts (`Invalid input for field/attribute <f>. Value: '<v>'.
//!    <reason>`), plus the `fromjson` conversions that run first for POST bodies (an integer
//!    attribute given `"abc"` names the whole body argument).
//! 2. **oslo.versionedobjects coercion** ([`coerce`], [`ObjField`]): what Magnum's objects do
//!    when a value is assigned (`A string is required in field x, not a list`,
//!    `Field `labels[k]' cannot be None`, ...). Magnum answers these with a 500; OpenKeel
//!    answers 400 with the same text (`docs/differences.md`).
//! 3. **Magnum's semantic checks** (`magnum/api/validation.py`): COE, server type, network
//!    and volume drivers against [`TemplateSettings`], the docker volume size, and the driver
//!    selection through a [`DriverCatalog`].

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyvalue::{float_repr, python_int, repr_str, PyValue};

/// The configuration values the template and cluster handlers read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSettings {
    /// `[cluster_template] kubernetes_allowed_network_drivers` (`all` allows any supported).
    pub kubernetes_allowed_network_drivers: Vec<String>,
    /// `[cluster_template] kubernetes_default_network_driver`.
    pub kubernetes_default_network_driver: String,
    /// `[cinder] default_boot_volume_size`.
    pub default_boot_volume_size: i64,
    /// `[api] max_limit` (every collection).
    pub max_limit: u64,
}

impl Default for TemplateSettings {
    /// Magnum 23.0.0's defaults.
    fn default() -> Self {
        TemplateSettings {
            kubernetes_allowed_network_drivers: vec!["flannel".into(), "calico".into()],
            kubernetes_default_network_driver: "flannel".into(),
            default_boot_volume_size: 0,
            max_limit: crate::pagination::DEFAULT_MAX_LIMIT,
        }
    }
}

/// The loaded cluster drivers as the API needs them (Magnum's `Driver.get_driver` /
/// `Driver.get_default_driver`). Implemented for `openkeel_drivers::DriverRegistry`.
pub trait DriverCatalog: Send + Sync + 'static {
    /// `Driver.get_driver(server_type, os, coe, driver_name)`: `Ok` when a loaded driver
    /// provides the type (or `driver` names a loaded driver); else `ClusterDriverNotSupported`,
    /// `ClusterTypeNotSupported` or `ClusterTypeBetaNotEnabled`.
    fn supports(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver: Option<&str>,
    ) -> Result<(), MagnumError>;

    /// `Driver.get_default_driver()`: `[drivers] default_driver` when set (else
    /// `ClusterDriverNotSupported`), the alphabetically first loaded driver, or `None`.
    fn default_driver(&self) -> Result<Option<String>, MagnumError>;

    /// `enforce_cluster_master_size_supported`: `get_driver(server_type, os, coe)` (the
    /// template's `driver` is not consulted, as in Magnum) and its
    /// `validate_master_size(master_count)`. The default is the base driver's rule.
    fn validate_master_size(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        master_count: i64,
    ) -> Result<(), MagnumError> {
        let _ = (server_type, os, coe);
        base_validate_master_size(master_count)
    }

    /// OpenKeel's create-time check by the driver that will build the cluster
    /// (`get_driver_for_cluster`: the template's type and `driver`): what it would only find
    /// out later is a 400 with nothing written. Default: nothing to check.
    fn validate_cluster_create(
        &self,
        template: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        master_count: i64,
    ) -> Result<(), MagnumError> {
        let _ = (template, cluster, master_count);
        Ok(())
    }

    /// OpenKeel's nodegroup-create check by the cluster's driver. Default: nothing to check.
    fn validate_nodegroup_create(
        &self,
        template: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        nodegroup: &openkeel_core::objects::NodeGroup,
    ) -> Result<(), MagnumError> {
        let _ = (template, cluster, nodegroup);
        Ok(())
    }

    /// An upgrade of `cluster` (whose template is `current`) onto `target`: the driver of
    /// the cluster's current template and its `validate_cluster_upgrade`. Default: nothing to
    /// check.
    fn validate_cluster_upgrade(
        &self,
        current: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        target: &openkeel_core::objects::ClusterTemplate,
    ) -> Result<(), MagnumError> {
        let _ = (current, cluster, target);
        Ok(())
    }

    /// The resize of a master nodegroup: `get_driver_for_cluster` (the template's type and
    /// `driver`) and its `validate_master_resize(node_count)`. The default is the base
    /// driver's refusal.
    fn validate_master_resize(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver: Option<&str>,
        node_count: i64,
    ) -> Result<(), MagnumError> {
        let _ = (server_type, os, coe, driver, node_count);
        Err(MagnumError::new(ErrorKind::MasterNGResizeNotSupported, &[]))
    }
}

/// The base driver's `validate_master_size`: an even count or one below 1 →
/// `MasterNGSizeInvalid`.
pub fn base_validate_master_size(master_count: i64) -> Result<(), MagnumError> {
    if master_count % 2 == 0 || master_count < 1 {
        return Err(MagnumError::new(
            ErrorKind::MasterNGSizeInvalid,
            &[("requested_size", &master_count)],
        ));
    }
    Ok(())
}

/// A driver's check of an API count: counts the database's `int(11)` cannot hold get the
/// base rule (they fail later exactly as in Magnum).
pub fn driver_count_check(
    driver: &dyn openkeel_drivers::Driver,
    count: i64,
    check: fn(&dyn openkeel_drivers::Driver, i32) -> Result<(), MagnumError>,
    fallback: fn(i64) -> Result<(), MagnumError>,
) -> Result<(), MagnumError> {
    match i32::try_from(count) {
        Ok(n) => check(driver, n),
        Err(_) => fallback(count),
    }
}

impl DriverCatalog for openkeel_drivers::DriverRegistry {
    fn supports(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver: Option<&str>,
    ) -> Result<(), MagnumError> {
        self.get_driver(server_type, os, coe, driver).map(|_| ())
    }

    fn default_driver(&self) -> Result<Option<String>, MagnumError> {
        self.get_default_driver()
    }

    fn validate_master_size(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        master_count: i64,
    ) -> Result<(), MagnumError> {
        let d = self.get_driver(server_type, os, coe, None)?;
        driver_count_check(
            d.as_ref(),
            master_count,
            |d, n| d.validate_master_size(n),
            base_validate_master_size,
        )
    }

    fn validate_cluster_create(
        &self,
        template: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        master_count: i64,
    ) -> Result<(), MagnumError> {
        // A count the database cannot hold was refused by validate_master_size already.
        let n = i32::try_from(master_count).unwrap_or(i32::MAX);
        self.get_driver_for_template(template)?
            .validate_cluster_create(cluster, template, n)
    }

    fn validate_nodegroup_create(
        &self,
        template: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        nodegroup: &openkeel_core::objects::NodeGroup,
    ) -> Result<(), MagnumError> {
        self.get_driver_for_template(template)?
            .validate_nodegroup_create(cluster, nodegroup)
    }

    fn validate_cluster_upgrade(
        &self,
        current: &openkeel_core::objects::ClusterTemplate,
        cluster: &openkeel_core::objects::Cluster,
        target: &openkeel_core::objects::ClusterTemplate,
    ) -> Result<(), MagnumError> {
        self.get_driver_for_template(current)?
            .validate_cluster_upgrade(cluster, target)
    }

    fn validate_master_resize(
        &self,
        server_type: Option<&str>,
        os: Option<&str>,
        coe: Option<&str>,
        driver: Option<&str>,
        node_count: i64,
    ) -> Result<(), MagnumError> {
        let d = self.get_driver(server_type, os, coe, driver)?;
        driver_count_check(
            d.as_ref(),
            node_count,
            |d, n| d.validate_master_resize(n),
            |_| Err(MagnumError::new(ErrorKind::MasterNGResizeNotSupported, &[])),
        )
    }
}

// ---------------------------------------------------------------------------------------
// 0. The body argument
// ---------------------------------------------------------------------------------------

/// Read the JSON body argument `argname` (`cluster_template`, `cluster`, `patch`, ...) as
/// WSME does: an empty body → 400 `Missing argument: "<argname>"`; a body without
/// `Content-Type` or form-encoded → webob's form parsing, 400 `Unknown argument: "<the
/// parameter names>"` (`Missing argument` when there are none); a media type
/// other than `application/json` / `application/javascript` / `text/javascript` → 415
/// `Unknown mimetype: <type>`; invalid JSON → 400 `Request is not in valid JSON format`.
/// The value may be any JSON (callers type it).
pub async fn body_arg(
    req: &crate::RequestInfo,
    body: axum::body::Body,
    argname: &str,
) -> Result<serde_json::Value, crate::error::ApiError> {
    let bytes = crate::read_body(body).await?;
    if bytes.is_empty() {
        return Err(MagnumError::new(ErrorKind::MissingArgument, &[("argname", &argname)]).into());
    }
    let mime = req
        .header("content-type")
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime.is_empty() || mime == "application/x-www-form-urlencoded" {
        // webob parses the body as form parameters; none of them is a declared argument.
        let names = form_names(&bytes);
        if names.is_empty() {
            return Err(
                MagnumError::new(ErrorKind::MissingArgument, &[("argname", &argname)]).into(),
            );
        }
        return Err(MagnumError::new(
            ErrorKind::UnknownArgument,
            &[("argname", &names.join(", "))],
        )
        .into());
    }
    if !matches!(
        mime.as_str(),
        "application/json" | "application/javascript" | "text/javascript"
    ) {
        return Err(
            MagnumError::new(ErrorKind::UnsupportedMediaType, &[("mimetype", &mime)]).into(),
        );
    }
    serde_json::from_slice(&bytes)
        .map_err(|_| MagnumError::client_side("Request is not in valid JSON format").into())
}

/// The parameter names of an `application/x-www-form-urlencoded` body, in order, without
/// duplicates (`+` is a space, `%XX` decoded).
fn form_names(body: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for part in body.split(|b| *b == b'&') {
        let name = part.split(|b| *b == b'=').next().unwrap_or(part);
        if part.is_empty() {
            continue;
        }
        let mut out = Vec::with_capacity(name.len());
        let mut i = 0;
        while i < name.len() {
            match name[i] {
                b'+' => out.push(b' '),
                b'%' if name.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && name.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
                {
                    let hex = [name[i + 1], name[i + 2]];
                    let v = std::str::from_utf8(&hex)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .unwrap_or(b'%');
                    out.push(v);
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        let n = String::from_utf8_lossy(&out).into_owned();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

// ---------------------------------------------------------------------------------------
// 1. WSME typing
// ---------------------------------------------------------------------------------------

/// WSME's `InvalidInput(field, value, msg)`; `value` is Python's `str()` of the value.
pub fn invalid_input(field: &str, value: &str, msg: &str) -> MagnumError {
    MagnumError::new(
        ErrorKind::InvalidInput,
        &[("fieldname", &field), ("value", &value), ("msg", &msg)],
    )
}

/// WSME `UnknownAttribute`, singular or plural as WSME words it.
pub fn unknown_attributes(arg: &str, names: &[&str]) -> MagnumError {
    let msg = if names.len() == 1 {
        format!("Unknown attribute for argument {arg}: {}", names[0])
    } else {
        format!(
            "Unknown attributes for argument {arg}: {}",
            names.join(", ")
        )
    };
    MagnumError::with_message(ErrorKind::UnknownAttribute, msg)
}

/// The cluster name pattern (the only `StringType` pattern of Magnum's API types).
pub const CLUSTER_NAME_PATTERN: &str = "^[a-zA-Z][a-zA-Z0-9_.-]*$";

/// `re.search(CLUSTER_NAME_PATTERN, s)` (`$` also matches before a final newline).
pub fn cluster_name_matches(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The declared WSME type of a body attribute: the one type model of every API type
/// (cluster template, cluster, nodegroup, cluster actions, quota, certificate, federation,
/// service).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    /// `types.uuid`.
    Uuid,
    /// `wtypes.StringType(min_length, max_length[, pattern=CLUSTER_NAME_PATTERN])`.
    Str {
        min: usize,
        max: usize,
        name_pattern: bool,
    },
    /// `wtypes.text` (no constraint but the type).
    Text,
    /// `wtypes.Enum(text, ...)`: the allowed values and the message's list (Python set order).
    Enum {
        values: &'static [&'static str],
        shown: &'static str,
    },
    /// `types.dns_list`.
    Dns,
    /// `wtypes.IntegerType(minimum, maximum)` (an `int` with neither bound when both are `None`).
    Int { min: Option<i64>, max: Option<i64> },
    /// `types.boolean`.
    Bool,
    /// `DictType(text, MultiType(text, int, bool, float))` (labels).
    Labels,
    /// `DictType(text, text)`.
    StrDict,
    /// `[wtypes.text]`.
    TextList,
    /// `[{wtypes.text: wtypes.text}]`.
    DictList,
    /// `[link.Link]`.
    Links,
    /// `datetime.datetime`.
    DateTime,
}

/// `wtypes.StringType(min_length=min, max_length=max)` (no pattern).
pub const fn str_ty(min: usize, max: usize) -> AttrType {
    AttrType::Str {
        min,
        max,
        name_pattern: false,
    }
}

/// `wtypes.IntegerType(minimum=min)` (no maximum).
pub const fn int_min(min: i64) -> AttrType {
    AttrType::Int {
        min: Some(min),
        max: None,
    }
}

/// One attribute of an API type: its WSME type, whether it is mandatory or read-only, and
/// its `wsattr` default.
#[derive(Debug, Clone, Copy)]
pub struct Attr {
    pub name: &'static str,
    pub ty: AttrType,
    pub mandatory: bool,
    pub readonly: bool,
    /// The `wsattr` default (printed / used when unset).
    pub default: Option<AttrDefault>,
}

/// A `wsattr` default value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrDefault {
    None,
    Bool(bool),
    Str(&'static str),
    Int(i64),
    /// `default=[]`.
    EmptyList,
}

impl AttrDefault {
    pub fn value(self) -> PyValue {
        match self {
            AttrDefault::None => PyValue::None,
            AttrDefault::Bool(b) => PyValue::Bool(b),
            AttrDefault::Str(s) => PyValue::str(s),
            AttrDefault::Int(i) => PyValue::Int(i128::from(i)),
            AttrDefault::EmptyList => PyValue::List(Vec::new()),
        }
    }
}

impl Attr {
    pub const fn new(name: &'static str, ty: AttrType) -> Attr {
        Attr {
            name,
            ty,
            mandatory: false,
            readonly: false,
            default: None,
        }
    }

    pub const fn mandatory(mut self) -> Attr {
        self.mandatory = true;
        self
    }

    pub const fn readonly(mut self) -> Attr {
        self.readonly = true;
        self
    }

    pub const fn default(mut self, d: AttrDefault) -> Attr {
        self.default = Some(d);
        self
    }
}

/// Python's `x < y` TypeError text between a value and an `int`.
fn unorderable(op: &str, v: &PyValue) -> String {
    format!(
        "'{op}' not supported between instances of '{}' and 'int'",
        v.type_name()
    )
}

fn num(v: &PyValue) -> Option<f64> {
    match v {
        PyValue::Int(i) => Some(*i as f64),
        PyValue::Bool(b) => Some(f64::from(u8::from(*b))),
        PyValue::Float(f) => Some(*f),
        _ => None,
    }
}

/// `str(type(v))` inside the `Wrong type` messages.
fn class_of(v: &PyValue) -> String {
    v.class_repr()
}

/// WSME's `Wrong type. Expected '<expected>', got '<type(v)>'`.
fn wrong_type(expected: &str, v: &PyValue) -> String {
    format!("Wrong type. Expected '{expected}', got '{}'", class_of(v))
}

/// The keys and values of a `{text: text}` item (`None` passes).
fn check_str_values(items: &[(PyValue, PyValue)]) -> Result<(), String> {
    for (k, v) in items {
        for x in [k, v] {
            if !matches!(x, PyValue::Str(_) | PyValue::None) {
                return Err(wrong_type("<class 'str'>", x));
            }
        }
    }
    Ok(())
}

/// `validate_value(datatype, value)` as a `wsattr` setter runs it: returns the stored value.
/// `None` passes every type unchecked, as in WSME.
pub fn typecheck(attr: &Attr, v: &PyValue) -> Result<PyValue, MagnumError> {
    if v.is_none() {
        return Ok(PyValue::None);
    }
    let fail = |msg: &str| invalid_input(attr.name, &v.py_str(), msg);
    match attr.ty {
        AttrType::Uuid => match v {
            PyValue::Str(s) if openkeel_db::ident::is_uuid_like(s) => Ok(v.clone()),
            _ => Err(MagnumError::new(
                ErrorKind::InvalidUUID,
                &[("uuid", &v.py_str())],
            )),
        },
        AttrType::Str {
            min,
            max,
            name_pattern,
        } => {
            let PyValue::Str(s) = v else {
                return Err(fail("Value should be string"));
            };
            let n = s.chars().count();
            if n < min {
                return Err(fail(&format!(
                    "Value should have a minimum character requirement of {min}"
                )));
            }
            if n > max {
                return Err(fail(&format!(
                    "Value should have a maximum character requirement of {max}"
                )));
            }
            if name_pattern && !cluster_name_matches(s) {
                return Err(fail(&format!(
                    "Value should match the pattern {CLUSTER_NAME_PATTERN}"
                )));
            }
            Ok(v.clone())
        }
        AttrType::Text => match v {
            PyValue::Str(_) => Ok(v.clone()),
            other => Err(fail(&format!(
                "Wrong type. Expected '<class 'str'>', got '{}'",
                class_of(other)
            ))),
        },
        AttrType::Enum { values, shown } => match v {
            PyValue::Str(s) if values.contains(&s.as_str()) => Ok(v.clone()),
            _ => Err(fail(&format!("Value should be one of: {shown}"))),
        },
        AttrType::Dns => match v {
            PyValue::Str(s) => {
                if valid_dns_list(s) {
                    Ok(v.clone())
                } else {
                    Err(MagnumError::new(ErrorKind::InvalidDNS, &[("dns", s)]))
                }
            }
            // Magnum: a 500 (`'int' object has no attribute 'split'`).
            other => Err(MagnumError::client_side(format!(
                "'{}' object has no attribute 'split'",
                other.type_name()
            ))),
        },
        AttrType::Int { min, max } => {
            if let Some(m) = min {
                match num(v) {
                    Some(x) if x < m as f64 => {
                        return Err(fail(&format!("Value should be greater or equal to {m}")))
                    }
                    Some(_) => {}
                    None => return Err(fail(&unorderable("<", v))),
                }
            }
            if let Some(m) = max {
                match num(v) {
                    Some(x) if x > m as f64 => {
                        return Err(fail(&format!("Value should be lower or equal to {m}")))
                    }
                    Some(_) => {}
                    None => return Err(fail(&unorderable(">", v))),
                }
            }
            if min.is_none() && max.is_none() {
                // A plain `int` attribute: type promotion of int/str/bytes, else wrong type.
                return match v {
                    PyValue::Int(_) | PyValue::Bool(_) => Ok(v.clone()),
                    PyValue::Str(s) => match python_int(s) {
                        Some(i) => Ok(PyValue::Int(i)),
                        None => Err(fail(&format!(
                            "Wrong type. Expected '<class 'int'>', got '{}'",
                            class_of(v)
                        ))),
                    },
                    other => Err(fail(&format!(
                        "Wrong type. Expected '<class 'int'>', got '{}'",
                        class_of(other)
                    ))),
                };
            }
            Ok(v.clone())
        }
        AttrType::Bool => bool_from_value(v)
            .map(PyValue::Bool)
            .ok_or_else(|| fail(&unrecognized_bool_value(v))),
        AttrType::Labels | AttrType::StrDict => {
            let PyValue::Dict(items) = v else {
                // magnum's `MultiType.__str__` joins its types with ` | `.
                let value_type = if attr.ty == AttrType::Labels {
                    "<class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>"
                } else {
                    "<class 'str'>"
                };
                return Err(fail(&format!(
                    "Wrong type. Expected '{{<class 'str'>: {value_type}}}', got '{}'",
                    class_of(v)
                )));
            };
            for (k, val) in items {
                if !matches!(k, PyValue::Str(_)) {
                    return Err(fail(&format!(
                        "Wrong type. Expected '<class 'str'>', got '{}'",
                        class_of(k)
                    )));
                }
                let ok = matches!(
                    (attr.ty, val),
                    (_, PyValue::None)
                        | (
                            AttrType::Labels,
                            PyValue::Str(_)
                                | PyValue::Int(_)
                                | PyValue::Bool(_)
                                | PyValue::Float(_)
                        )
                        | (AttrType::StrDict, PyValue::Str(_))
                );
                if !ok {
                    let expected = if attr.ty == AttrType::Labels {
                        "(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)"
                    } else {
                        "<class 'str'>"
                    };
                    return Err(fail(&format!(
                        "Wrong type. Expected '{expected}', got '{}'",
                        class_of(val)
                    )));
                }
            }
            Ok(v.clone())
        }
        AttrType::TextList | AttrType::DictList => {
            let (PyValue::List(items) | PyValue::Tuple(items)) = v else {
                let expected = if attr.ty == AttrType::DictList {
                    "[{<class 'str'>: <class 'str'>}]"
                } else {
                    "[<class 'str'>]"
                };
                return Err(fail(&wrong_type(expected, v)));
            };
            for item in items {
                match (attr.ty, item) {
                    (_, PyValue::None) | (AttrType::TextList, PyValue::Str(_)) => {}
                    (AttrType::DictList, PyValue::Dict(entries)) => {
                        check_str_values(entries).map_err(|m| fail(&m))?
                    }
                    (AttrType::DictList, other) => {
                        return Err(fail(&wrong_type("{<class 'str'>: <class 'str'>}", other)))
                    }
                    (_, other) => return Err(fail(&wrong_type("<class 'str'>", other))),
                }
            }
            Ok(v.clone())
        }
        AttrType::Links => match v {
            PyValue::List(_) => Ok(v.clone()),
            other => Err(fail(&format!(
                "Wrong type. Expected '[<class 'magnum.api.controllers.link.Link'>]', got '{}'",
                class_of(other)
            ))),
        },
        AttrType::DateTime => match v {
            PyValue::Opaque { .. } => Ok(v.clone()),
            other => Err(fail(&format!(
                "Wrong type. Expected '<class 'datetime.datetime'>', got '{}'",
                class_of(other)
            ))),
        },
    }
}

/// `utils.validate_dns`: comma-separated dotted-quad IPv4 addresses (blanks around items
/// ignored; `inet_pton` rules: four decimal octets 0–255 without leading zeros).
pub fn valid_dns_list(s: &str) -> bool {
    s.split(',').all(|item| {
        let t = item.trim();
        let parts: Vec<&str> = t.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.len() <= 3
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && !(p.len() > 1 && p.starts_with('0'))
                    && p.parse::<u16>().is_ok_and(|n| n <= 255)
            })
    })
}

/// `types.BooleanType.validate` (`strutils.bool_from_string(v, strict=True)`): a bool is
/// itself; anything else is compared as `str(v)`, lower-cased and stripped.
pub fn bool_from_value(v: &PyValue) -> Option<bool> {
    match v {
        PyValue::Bool(b) => Some(*b),
        other => crate::query::bool_from_string(&other.py_str()),
    }
}

/// strutils' `ValueError` text for a value that is not a boolean (Magnum's error handling
/// breaks on it and the server answers an HTML 500; OpenKeel answers 400 with this reason).
pub fn unrecognized_bool_value(v: &PyValue) -> String {
    crate::query::unrecognized_bool(&v.py_str())
}

/// Why a `fromjson` conversion failed: a `ValueError` (WSME names the whole body argument)
/// or another Python error (a 500 in Magnum; OpenKeel answers 400 with the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromJsonError {
    Value(String),
    Other(String),
}

/// WSME's `fromjson(attr type, value)` for the types where it converts before the setter
/// validates: integers (`int(value)`), dicts and lists (must be of that JSON type; the items
/// of a list of dicts must be dicts).
pub fn fromjson(ty: AttrType, v: &PyValue) -> Result<PyValue, FromJsonError> {
    if v.is_none() {
        return Ok(PyValue::None);
    }
    match ty {
        AttrType::Int { .. } => python_int_of(v),
        AttrType::Labels | AttrType::StrDict => match v {
            PyValue::Dict(_) => Ok(v.clone()),
            other => Err(FromJsonError::Value(format!(
                "Value not a valid dict: {}",
                other.py_str()
            ))),
        },
        AttrType::TextList | AttrType::DictList | AttrType::Links => match v {
            PyValue::List(items) => {
                if ty == AttrType::DictList {
                    if let Some(bad) = items
                        .iter()
                        .find(|i| !matches!(i, PyValue::Dict(_) | PyValue::None))
                    {
                        return Err(FromJsonError::Value(format!(
                            "Value not a valid dict: {}",
                            bad.py_str()
                        )));
                    }
                }
                Ok(v.clone())
            }
            other => Err(FromJsonError::Value(format!(
                "Value not a valid list: {}",
                other.py_str()
            ))),
        },
        AttrType::DateTime => match v {
            PyValue::Str(s) => parse_datetime(s)
                .map(|dt| PyValue::Opaque {
                    class: "datetime.datetime".into(),
                    repr: dt,
                })
                .ok_or_else(|| FromJsonError::Value("Unknown string format: %s".into())),
            PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) => Err(FromJsonError::Other(
                "Parser must be a string or character stream, not int".into(),
            )),
            _ => Err(FromJsonError::Other(format!(
                "Parser must be a string or character stream, not {}",
                v.type_name()
            ))),
        },
        _ => Ok(v.clone()),
    }
}

/// A lenient ISO-8601 parse (what `dateutil.parser.parse` accepts for the common forms),
/// returning Python's `str(datetime)`.
fn parse_datetime(s: &str) -> Option<String> {
    let t = s.trim();
    let (date, rest) = t.split_at(t.find(['T', ' ']).unwrap_or(t.len()));
    let d: Vec<&str> = date.split('-').collect();
    if d.len() != 3
        || !d
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let (y, m, day): (i32, u32, u32) = (d[0].parse().ok()?, d[1].parse().ok()?, d[2].parse().ok()?);
    chrono::NaiveDate::from_ymd_opt(y, m, day)?;
    let time = rest.trim_start_matches(['T', ' ']);
    let (hms, tz) = match time.find(['Z', '+']).or_else(|| time.rfind('-')) {
        Some(i) => (&time[..i], Some(&time[i..])),
        None => (time, None),
    };
    let mut out = format!("{y:04}-{m:02}-{day:02} ");
    if hms.is_empty() {
        out.push_str("00:00:00");
    } else {
        let p: Vec<&str> = hms.split(':').collect();
        if p.len() < 2 || p.len() > 3 {
            return None;
        }
        let h: u32 = p[0].parse().ok()?;
        let mi: u32 = p[1].parse().ok()?;
        let (sec, frac) = match p.get(2) {
            Some(sv) => match sv.split_once('.') {
                Some((a, b)) => (a.parse::<u32>().ok()?, Some(b)),
                None => (sv.parse::<u32>().ok()?, None),
            },
            None => (0, None),
        };
        if h > 23 || mi > 59 || sec > 59 {
            return None;
        }
        out.push_str(&format!("{h:02}:{mi:02}:{sec:02}"));
        if let Some(f) = frac.filter(|f| f.bytes().any(|b| b != b'0')) {
            let mut us: String = f.chars().take(6).collect();
            while us.len() < 6 {
                us.push('0');
            }
            out.push('.');
            out.push_str(&us);
        }
    }
    match tz {
        None => {}
        Some("Z") | Some("+00:00") | Some("+0000") => out.push_str("+00:00"),
        Some(z) => out.push_str(z),
    }
    Some(out)
}

/// Python's `int(v)` for a decoded JSON value.
pub fn python_int_of(v: &PyValue) -> Result<PyValue, FromJsonError> {
    match v {
        PyValue::None => Ok(PyValue::None),
        PyValue::Int(_) => Ok(v.clone()),
        PyValue::Bool(b) => Ok(PyValue::Int(i128::from(*b))),
        PyValue::Float(f) => {
            if f.is_nan() {
                Err(FromJsonError::Value(
                    "cannot convert float NaN to integer".into(),
                ))
            } else if f.is_infinite() {
                Err(FromJsonError::Other(
                    "cannot convert float infinity to integer".into(),
                ))
            } else {
                Ok(PyValue::Int(f.trunc() as i128))
            }
        }
        PyValue::Str(s) => python_int(s).map(PyValue::Int).ok_or_else(|| {
            FromJsonError::Value(format!(
                "invalid literal for int() with base 10: {}",
                repr_str(s)
            ))
        }),
        other => Err(FromJsonError::Other(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// 2. oslo.versionedobjects coercion
// ---------------------------------------------------------------------------------------

/// The type of a versioned-object field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjField {
    /// `StringField(nullable=...)`.
    String { nullable: bool },
    /// `IntegerField(nullable=...)`.
    Integer { nullable: bool },
    /// `BooleanField(default=...)` (not nullable: `None` becomes the default).
    Boolean { default: bool },
    /// `DictOfStringsField(nullable=True)`.
    DictOfStrings,
    /// An enum field over strings (`ClusterTypeField`, ...).
    Enum { values: &'static [&'static str] },
    /// `DateTimeField(nullable=True)` (values already typed).
    DateTime,
}

fn obj_error(msg: impl Into<String>) -> MagnumError {
    // Magnum answers these with a 500; OpenKeel with a 400 (docs/differences.md).
    MagnumError::client_side(msg)
}

fn coerce_string(attr: &str, v: &PyValue) -> Result<PyValue, MagnumError> {
    match v {
        PyValue::Str(_) => Ok(v.clone()),
        PyValue::Int(_) | PyValue::Bool(_) => Ok(PyValue::Str(v.repr())),
        PyValue::Float(f) => Ok(PyValue::Str(float_repr(*f))),
        other => Err(obj_error(format!(
            "A string is required in field {attr}, not a {}",
            other.type_name()
        ))),
    }
}

/// `Field.coerce(obj, attr, value)` for one field.
pub fn coerce(field: ObjField, attr: &str, v: &PyValue) -> Result<PyValue, MagnumError> {
    if v.is_none() {
        return match field {
            ObjField::String { nullable: true }
            | ObjField::Integer { nullable: true }
            | ObjField::DictOfStrings
            | ObjField::Enum { .. }
            | ObjField::DateTime => Ok(PyValue::None),
            ObjField::Boolean { default } => Ok(PyValue::Bool(default)),
            _ => Err(obj_error(format!("Field `{attr}' cannot be None"))),
        };
    }
    match field {
        ObjField::String { .. } => coerce_string(attr, v),
        ObjField::Integer { .. } => python_int_of(v).map_err(|e| match e {
            FromJsonError::Value(m) | FromJsonError::Other(m) => obj_error(m),
        }),
        ObjField::Boolean { .. } => Ok(PyValue::Bool(v.truthy())),
        ObjField::Enum { values } => match v {
            PyValue::Str(s) if values.contains(&s.as_str()) => Ok(v.clone()),
            other => Err(obj_error(format!(
                "Field value {} is invalid",
                other.py_str()
            ))),
        },
        ObjField::DateTime => Ok(v.clone()),
        ObjField::DictOfStrings => {
            let PyValue::Dict(items) = v else {
                return Err(obj_error(format!(
                    "A dict is required in field {attr}, not a {}",
                    v.type_name()
                )));
            };
            let mut out = Vec::with_capacity(items.len());
            for (k, val) in items {
                let PyValue::Str(key) = k else {
                    return Err(obj_error(format!(
                        "Key {} must be of type str not {}",
                        k.py_str(),
                        k.type_name()
                    )));
                };
                let sub = format!("{attr}[{key}]");
                if val.is_none() {
                    return Err(obj_error(format!("Field `{sub}' cannot be None")));
                }
                out.push((k.clone(), coerce_string(&sub, val)?));
            }
            Ok(PyValue::Dict(out))
        }
    }
}

/// A coerced `DictOfStrings` value as a string map (`None` for `None`).
pub fn string_map(v: &PyValue) -> Option<openkeel_core::objects::StringMap> {
    let items = v.as_dict()?;
    Some(
        items
            .iter()
            .map(|(k, v)| (k.py_str(), v.py_str()))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------
// 3. Magnum's checks (magnum/api/validation.py)
// ---------------------------------------------------------------------------------------

/// The COE value as Magnum prints it (`Unset` for an attribute never given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown<'a> {
    Unset,
    None,
    Value(&'a str),
}

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shown::Unset => f.write_str("Unset"),
            Shown::None => f.write_str("None"),
            Shown::Value(v) => f.write_str(v),
        }
    }
}

/// `Validator.get_coe_validator(coe)`: only `kubernetes` has a validator.
pub fn validate_coe(coe: Shown<'_>) -> Result<(), MagnumError> {
    if coe == Shown::Value("kubernetes") {
        Ok(())
    } else {
        Err(MagnumError::invalid_parameter(format!(
            "Requested COE type {coe} is not supported."
        )))
    }
}

/// `K8sValidator.supported_server_types`.
pub const SUPPORTED_SERVER_TYPES: [&str; 2] = ["vm", "bm"];
/// `K8sValidator.supported_network_drivers`.
pub const SUPPORTED_NETWORK_DRIVERS: [&str; 3] = ["flannel", "calico", "cilium"];
/// `K8sValidator.supported_volume_driver`.
pub const SUPPORTED_VOLUME_DRIVERS: [&str; 1] = ["cinder"];

/// `_enforce_server_type`.
pub fn validate_server_type(coe: Shown<'_>, server_type: Shown<'_>) -> Result<(), MagnumError> {
    validate_coe(coe)?;
    match server_type {
        Shown::Value(s) if SUPPORTED_SERVER_TYPES.contains(&s) => Ok(()),
        other => Err(MagnumError::invalid_parameter(format!(
            "Server type {other} is not supported, expecting a vm/bm/unspecified server type."
        ))),
    }
}

/// `_enforce_network_driver_types`: returns the driver to use (the configured default when
/// none is given), after the supported and allowed checks.
pub fn validate_network_driver(
    settings: &TemplateSettings,
    coe: Shown<'_>,
    driver: Option<&str>,
) -> Result<String, MagnumError> {
    validate_coe(coe)?;
    let driver = match driver.filter(|d| !d.is_empty()) {
        Some(d) => d.to_string(),
        None => settings.kubernetes_default_network_driver.clone(),
    };
    if !SUPPORTED_NETWORK_DRIVERS.contains(&driver.as_str()) {
        return Err(MagnumError::invalid_parameter(format!(
            "Network driver type {driver} is not supported, expecting a {}/unspecified network driver.",
            SUPPORTED_NETWORK_DRIVERS.join("/")
        )));
    }
    let allowed = &settings.kubernetes_allowed_network_drivers;
    if !allowed.iter().any(|a| a == "all") && !allowed.contains(&driver) {
        return Err(MagnumError::invalid_parameter(format!(
            "Network driver type {driver} is not allowed, expecting a {}/unspecified network driver. ",
            allowed.join("/")
        )));
    }
    Ok(driver)
}

/// `_enforce_volume_driver_types`: an empty driver is not checked.
pub fn validate_volume_driver(coe: Shown<'_>, driver: Option<&str>) -> Result<(), MagnumError> {
    validate_coe(coe)?;
    match driver.filter(|d| !d.is_empty()) {
        None => Ok(()),
        Some(d) if SUPPORTED_VOLUME_DRIVERS.contains(&d) => Ok(()),
        Some(d) => Err(MagnumError::invalid_parameter(format!(
            "Volume driver type {d} is not supported, expecting a {}/unspecified volume driver.",
            SUPPORTED_VOLUME_DRIVERS.join("/")
        ))),
    }
}

/// `_enforce_volume_storage_size(cluster_template, cluster)`: with the `devicemapper` storage
/// driver the docker volume (the cluster's when truthy, else the template's) must be ≥ 3 GB.
/// `volume_size` is the value as given (printed with Python's `str()`).
pub fn validate_volume_storage_size(
    volume_size: &PyValue,
    storage_driver: Option<&str>,
) -> Result<(), MagnumError> {
    if storage_driver != Some("devicemapper") {
        return Ok(());
    }
    let small = match volume_size {
        v if !v.truthy() => true,
        PyValue::Int(i) => *i < 3,
        PyValue::Bool(b) => u8::from(*b) < 3,
        PyValue::Float(f) => *f < 3.0,
        // Python 3 cannot compare these with 3 (a 500 in Magnum).
        other => {
            return Err(MagnumError::client_side(format!(
                "'<' not supported between instances of '{}' and 'int'",
                other.type_name()
            )))
        }
    };
    if small {
        return Err(MagnumError::invalid_parameter(format!(
            "docker volume size {} GB is not valid, expecting minimum value 3GB for devicemapper storage driver.",
            volume_size.py_str()
        )));
    }
    Ok(())
}

/// The `boot_volume_size` label as `validate_flavor_root_volume_size` reads it: Python's
/// `str()` of the label value (so `True` or `1.5` are rejected as Magnum rejects them).
pub fn boot_volume_labels(labels: &PyValue) -> openkeel_core::objects::StringMap {
    let mut m = openkeel_core::objects::StringMap::new();
    if let Some(v) = labels.get("boot_volume_size") {
        m.insert("boot_volume_size".into(), v.py_str());
    }
    m
}

/// Magnum answers a non-integer `boot_volume_size` label with a 500; OpenKeel with a 400 of
/// the same text. Any other error passes through.
pub fn client_error_for_bad_boot_volume(e: MagnumError) -> MagnumError {
    if e.kind() == ErrorKind::MagnumException
        && e.message() == "boot_volume_size must be an integer"
    {
        MagnumError::client_side(e.message().to_string())
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: Attr = Attr::new("name", str_ty(1, 255));
    const PORT: Attr = Attr::new(
        "apiserver_port",
        AttrType::Int {
            min: Some(1024),
            max: Some(65535),
        },
    );
    const LABELS: Attr = Attr::new("labels", AttrType::Labels);

    fn msg(r: Result<PyValue, MagnumError>) -> String {
        r.unwrap_err().message().to_string()
    }

    #[test]
    fn wsme_setters() {
        assert_eq!(
            msg(typecheck(&NAME, &PyValue::Int(5))),
            "Invalid input for field/attribute name. Value: '5'. Value should be string"
        );
        assert_eq!(msg(typecheck(&NAME, &PyValue::str(""))), "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1");
        assert_eq!(msg(typecheck(&PORT, &PyValue::Int(80))), "Invalid input for field/attribute apiserver_port. Value: '80'. Value should be greater or equal to 1024");
        assert_eq!(msg(typecheck(&PORT, &PyValue::str("2000"))), "Invalid input for field/attribute apiserver_port. Value: '2000'. '<' not supported between instances of 'str' and 'int'");
        let bad = PyValue::from_json(&serde_json::json!({"a": [1]}));
        assert_eq!(msg(typecheck(&LABELS, &bad)), "Invalid input for field/attribute labels. Value: '{'a': [1]}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'list'>'");
        // `DictType.validate` prints the value type with magnum's `MultiType.__str__`.
        assert_eq!(msg(typecheck(&LABELS, &PyValue::Int(5))), "Invalid input for field/attribute labels. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class 'int'>'");
        let props = Attr::new("properties", AttrType::StrDict);
        assert_eq!(msg(typecheck(&props, &PyValue::Int(5))), "Invalid input for field/attribute properties. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class 'int'>'");
        let dns = Attr::new("dns_nameserver", AttrType::Dns);
        assert!(typecheck(&dns, &PyValue::str("8.8.8.8, 1.1.1.1")).is_ok());
        assert_eq!(
            msg(typecheck(&dns, &PyValue::str("08.8.8.8"))),
            "Expected a single dns address or comma separated dns list, but received 08.8.8.8."
        );
        let b = Attr::new("public", AttrType::Bool);
        assert_eq!(
            typecheck(&b, &PyValue::str("YES")).unwrap(),
            PyValue::Bool(true)
        );
        assert!(typecheck(&b, &PyValue::Int(2)).is_err());
    }

    #[test]
    fn fromjson_conversions() {
        let port = AttrType::Int {
            min: Some(1),
            max: None,
        };
        assert_eq!(fromjson(port, &PyValue::Float(5.5)), Ok(PyValue::Int(5)));
        assert_eq!(
            fromjson(port, &PyValue::str("2000")),
            Ok(PyValue::Int(2000))
        );
        assert_eq!(
            fromjson(port, &PyValue::str("abc")),
            Err(FromJsonError::Value(
                "invalid literal for int() with base 10: 'abc'".into()
            ))
        );
        assert_eq!(
            fromjson(port, &PyValue::List(vec![])),
            Err(FromJsonError::Other(
                "int() argument must be a string, a bytes-like object or a real number, not 'list'"
                    .into()
            ))
        );
        assert_eq!(
            fromjson(AttrType::DateTime, &PyValue::str("2020-01-01T00:00:00")).map(|v| v.py_str()),
            Ok("2020-01-01 00:00:00".into())
        );
    }

    #[test]
    fn object_coercion() {
        let labels = PyValue::from_json(&serde_json::json!({"a": 1, "b": true, "c": 1.5}));
        assert_eq!(
            coerce(ObjField::DictOfStrings, "labels", &labels)
                .unwrap()
                .repr(),
            "{'a': '1', 'b': 'True', 'c': '1.5'}"
        );
        let e = coerce(
            ObjField::DictOfStrings,
            "labels",
            &PyValue::from_json(&serde_json::json!({"d": null})),
        );
        assert_eq!(e.unwrap_err().message(), "Field `labels[d]' cannot be None");
        assert_eq!(
            coerce(ObjField::DictOfStrings, "labels", &PyValue::Int(5))
                .unwrap_err()
                .message(),
            "A dict is required in field labels, not a int"
        );
        assert_eq!(
            coerce(
                ObjField::Integer { nullable: true },
                "apiserver_port",
                &PyValue::str("abc")
            )
            .unwrap_err()
            .message(),
            "invalid literal for int() with base 10: 'abc'"
        );
        assert_eq!(
            coerce(
                ObjField::Enum {
                    values: &["kubernetes"]
                },
                "coe",
                &PyValue::str("swarm")
            )
            .unwrap_err()
            .message(),
            "Field value swarm is invalid"
        );
        assert_eq!(
            coerce(ObjField::Boolean { default: true }, "x", &PyValue::None),
            Ok(PyValue::Bool(true))
        );
    }

    #[test]
    fn magnum_checks() {
        let s = TemplateSettings::default();
        assert_eq!(
            validate_coe(Shown::Unset).unwrap_err().message(),
            "Requested COE type Unset is not supported."
        );
        assert_eq!(
            validate_server_type(Shown::Value("kubernetes"), Shown::None)
                .unwrap_err()
                .message(),
            "Server type None is not supported, expecting a vm/bm/unspecified server type."
        );
        assert_eq!(
            validate_network_driver(&s, Shown::Value("kubernetes"), None).unwrap(),
            "flannel"
        );
        assert_eq!(validate_network_driver(&s, Shown::Value("kubernetes"), Some("weave")).unwrap_err().message(), "Network driver type weave is not supported, expecting a flannel/calico/cilium/unspecified network driver.");
        assert_eq!(validate_network_driver(&s, Shown::Value("kubernetes"), Some("cilium")).unwrap_err().message(), "Network driver type cilium is not allowed, expecting a flannel/calico/unspecified network driver. ");
        assert_eq!(validate_volume_driver(Shown::Value("kubernetes"), Some("rexray")).unwrap_err().message(), "Volume driver type rexray is not supported, expecting a cinder/unspecified volume driver.");
        assert_eq!(validate_volume_storage_size(&PyValue::None, Some("devicemapper")).unwrap_err().message(), "docker volume size None GB is not valid, expecting minimum value 3GB for devicemapper storage driver.");
        assert!(validate_volume_storage_size(&PyValue::Int(3), Some("devicemapper")).is_ok());
        assert!(validate_volume_storage_size(&PyValue::None, Some("overlay2")).is_ok());
    }
}
