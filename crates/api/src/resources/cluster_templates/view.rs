//! A cluster template's row as Magnum's object and API document: `doc_of` (the document a
//! PATCH applies to), `assign` (an object field into the row), `view` (the response body).

use super::types::API_ATTRS;
use super::RESOURCE;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::ClusterTemplate;
use openkeel_core::pyvalue::PyValue;
use serde_json::{Map, Value};

/// Python's `datetime.isoformat()` of a naive UTC value made aware.
pub fn isoformat(dt: &chrono::NaiveDateTime) -> String {
    use chrono::{Datelike, Timelike};
    let micros = dt.nanosecond() / 1000;
    if !(0..=9999).contains(&dt.year()) || micros > 999_999 {
        // chrono's `%Y` signs and widens other years; a leap second's fraction
        return if micros == 0 {
            format!("{}+00:00", dt.format("%Y-%m-%dT%H:%M:%S"))
        } else {
            format!("{}+00:00", dt.format("%Y-%m-%dT%H:%M:%S%.6f"))
        };
    }
    // written digit by digit: the formatting machinery was a twentieth of a cluster list's
    // instructions
    fn push(s: &mut String, n: u32, width: u32, then: &str) {
        for i in (0..width).rev() {
            s.push(char::from(b'0' + (n / 10u32.pow(i) % 10) as u8));
        }
        s.push_str(then);
    }
    let mut s = String::with_capacity(32);
    push(&mut s, dt.year().unsigned_abs(), 4, "-");
    push(&mut s, dt.month(), 2, "-");
    push(&mut s, dt.day(), 2, "T");
    push(&mut s, dt.hour(), 2, ":");
    push(&mut s, dt.minute(), 2, ":");
    push(&mut s, dt.second(), 2, "");
    if micros != 0 {
        s.push('.');
        push(&mut s, micros, 6, "");
    }
    s.push_str("+00:00");
    s
}

fn s(v: &Option<String>) -> PyValue {
    v.as_ref()
        .map_or(PyValue::None, |x| PyValue::str(x.clone()))
}

fn i(v: Option<i32>) -> PyValue {
    v.map_or(PyValue::None, |x| PyValue::Int(i128::from(x)))
}

/// The object's `as_dict()` (what PATCH operates on): booleans read as their defaults when
/// NULL, as the object layer does.
pub fn doc_of(t: &ClusterTemplate) -> PyValue {
    let b = |v: Option<bool>, d: bool| PyValue::Bool(v.unwrap_or(d));
    let dt =
        |v: &Option<chrono::NaiveDateTime>| v.as_ref().map_or(PyValue::None, PyValue::datetime_utc);
    let labels = t.labels.as_ref().map_or(PyValue::None, |l| {
        PyValue::Dict(
            l.iter()
                .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
                .collect(),
        )
    });
    let items: Vec<(&str, PyValue)> = vec![
        ("id", PyValue::Int(i128::from(t.id))),
        ("uuid", s(&t.uuid)),
        ("project_id", s(&t.project_id)),
        ("user_id", s(&t.user_id)),
        ("name", s(&t.name)),
        ("image_id", s(&t.image_id)),
        ("flavor_id", s(&t.flavor_id)),
        ("master_flavor_id", s(&t.master_flavor_id)),
        ("keypair_id", s(&t.keypair_id)),
        ("dns_nameserver", s(&t.dns_nameserver)),
        ("external_network_id", s(&t.external_network_id)),
        ("fixed_network", s(&t.fixed_network)),
        ("fixed_subnet", s(&t.fixed_subnet)),
        ("network_driver", s(&t.network_driver)),
        ("volume_driver", s(&t.volume_driver)),
        ("apiserver_port", i(t.apiserver_port)),
        ("docker_volume_size", i(t.docker_volume_size)),
        ("docker_storage_driver", s(&t.docker_storage_driver)),
        ("cluster_distro", s(&t.cluster_distro)),
        ("coe", s(&t.coe)),
        ("http_proxy", s(&t.http_proxy)),
        ("https_proxy", s(&t.https_proxy)),
        ("no_proxy", s(&t.no_proxy)),
        ("registry_enabled", b(t.registry_enabled, false)),
        ("labels", labels),
        ("tls_disabled", b(t.tls_disabled, false)),
        ("public", b(t.public, false)),
        ("server_type", s(&t.server_type)),
        ("insecure_registry", s(&t.insecure_registry)),
        ("master_lb_enabled", b(t.master_lb_enabled, false)),
        ("floating_ip_enabled", b(t.floating_ip_enabled, true)),
        ("hidden", b(t.hidden, false)),
        ("tags", s(&t.tags)),
        ("driver", s(&t.driver)),
        ("created_at", dt(&t.created_at)),
        ("updated_at", dt(&t.updated_at)),
    ];
    PyValue::Dict(
        items
            .into_iter()
            .map(|(k, v)| (PyValue::str(k), v))
            .collect(),
    )
}

/// Write a coerced object value into the row.
pub(super) fn assign(t: &mut ClusterTemplate, name: &str, v: &PyValue) -> Result<(), MagnumError> {
    let st = || v.as_str().map(str::to_string);
    let int = || -> Result<Option<i32>, MagnumError> {
        match v {
            PyValue::None => Ok(None),
            PyValue::Int(x) => i32::try_from(*x).map(Some).map_err(|_| {
                // MySQL's DataError (a 500 in Magnum).
                MagnumError::client_side(format!("Out of range value for column '{name}' at row 1"))
            }),
            _ => Ok(None),
        }
    };
    let bo = || match v {
        PyValue::Bool(b) => Some(*b),
        _ => None,
    };
    match name {
        "uuid" => t.uuid = st(),
        "project_id" => t.project_id = st(),
        "user_id" => t.user_id = st(),
        "name" => t.name = st(),
        "image_id" => t.image_id = st(),
        "flavor_id" => t.flavor_id = st(),
        "master_flavor_id" => t.master_flavor_id = st(),
        "keypair_id" => t.keypair_id = st(),
        "dns_nameserver" => t.dns_nameserver = st(),
        "external_network_id" => t.external_network_id = st(),
        "fixed_network" => t.fixed_network = st(),
        "fixed_subnet" => t.fixed_subnet = st(),
        "network_driver" => t.network_driver = st(),
        "volume_driver" => t.volume_driver = st(),
        "apiserver_port" => t.apiserver_port = int()?,
        "docker_volume_size" => t.docker_volume_size = int()?,
        "docker_storage_driver" => t.docker_storage_driver = st(),
        "cluster_distro" => t.cluster_distro = st(),
        "coe" => t.coe = st(),
        "http_proxy" => t.http_proxy = st(),
        "https_proxy" => t.https_proxy = st(),
        "no_proxy" => t.no_proxy = st(),
        "registry_enabled" => t.registry_enabled = bo(),
        "labels" => t.labels = crate::validation::string_map(v),
        "tls_disabled" => t.tls_disabled = bo(),
        "public" => t.public = bo(),
        "server_type" => t.server_type = st(),
        "insecure_registry" => t.insecure_registry = st(),
        "master_lb_enabled" => t.master_lb_enabled = bo(),
        "floating_ip_enabled" => t.floating_ip_enabled = bo(),
        "hidden" => t.hidden = bo(),
        "tags" => t.tags = st(),
        "driver" => t.driver = st(),
        _ => {}
    }
    Ok(())
}

/// The template as the API returns it (`ClusterTemplate.convert_with_links`): every
/// attribute in declaration order, `links` after `cluster_distro`.
pub fn view(t: &ClusterTemplate, host_url: &str) -> Value {
    let mut m = Map::new();
    let doc = doc_of(t);
    for a in API_ATTRS.iter() {
        let v = match a.name {
            "links" => crate::links::self_and_bookmark(
                host_url,
                RESOURCE,
                t.uuid.as_deref().unwrap_or("None"),
            ),
            "created_at" => t
                .created_at
                .as_ref()
                .map_or(Value::Null, |d| Value::String(isoformat(d))),
            "updated_at" => t
                .updated_at
                .as_ref()
                .map_or(Value::Null, |d| Value::String(isoformat(d))),
            name => doc
                .get(name)
                .and_then(PyValue::to_json)
                .unwrap_or(Value::Null),
        };
        m.insert(a.name.to_string(), v);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    /// The direct formatting prints what chrono's formats printed.
    #[test]
    fn isoformat_is_chronos_format() {
        use chrono::{NaiveDateTime, Timelike};
        for t in [
            "2026-12-01 00:00:00",
            "0001-01-01 00:00:00.000001",
            "0999-02-03 04:05:06.7",
            "9999-12-31 23:59:59.999999",
            "2016-12-31 23:59:60.5",
        ] {
            let d = NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f").unwrap();
            let want = if d.nanosecond() / 1000 == 0 {
                format!("{}+00:00", d.format("%Y-%m-%dT%H:%M:%S"))
            } else {
                format!("{}+00:00", d.format("%Y-%m-%dT%H:%M:%S%.6f"))
            };
            assert_eq!(isoformat(&d), want, "{t}");
        }
        let far = chrono::NaiveDate::from_ymd_opt(12345, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 5)
            .unwrap();
        assert_eq!(isoformat(&far), "+12345-01-02T03:04:05+00:00");
    }

    use super::*;
    use openkeel_core::pyjson::dumps;
    #[test]
    fn view_shape() {
        let t = ClusterTemplate {
            id: 1,
            uuid: Some("u".into()),
            name: Some("t".into()),
            coe: Some("kubernetes".into()),
            created_at: chrono::NaiveDate::from_ymd_opt(2026, 7, 17)
                .and_then(|d| d.and_hms_opt(6, 52, 54)),
            public: Some(false),
            ..Default::default()
        };
        let v = dumps(&view(&t, "http://h"));
        assert!(
            v.starts_with(r#"{"uuid": "u", "name": "t", "coe": "kubernetes", "image_id": null"#),
            "{v}"
        );
        assert!(v.contains(r#""cluster_distro": null, "links": [{"href": "http://h/v1/clustertemplates/u", "rel": "self"}, {"href": "http://h/clustertemplates/u", "rel": "bookmark"}], "http_proxy": null"#), "{v}");
        assert!(
            v.ends_with(
                r#""driver": null, "created_at": "2026-07-17T06:52:54+00:00", "updated_at": null}"#
            ),
            "{v}"
        );
        assert!(
            v.contains(r#""registry_enabled": false, "labels": null"#),
            "{v}"
        );
        assert!(v.contains(r#""floating_ip_enabled": true"#), "{v}");
    }
}
