//! Label parsing as magnum-cluster-api does it (`magnum_cluster_api/utils.py`): strings as
//! given, booleans through oslo's `bool_from_string(strict=True)`, integers through
//! `validate_integer`. A malformed value is an `InvalidParameterValue` (400) at create instead
//! of the `ValueError` magnum-cluster-api raises later in the conductor.

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::StringMap;

/// oslo.utils `strutils.TRUE_STRINGS` / `FALSE_STRINGS`.
const TRUE_STRINGS: &[&str] = &["1", "t", "true", "on", "y", "yes"];
const FALSE_STRINGS: &[&str] = &["0", "f", "false", "off", "n", "no"];

/// A read-only view of a cluster's (or nodegroup's) label dict.
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a>(pub Option<&'a StringMap>);

impl<'a> Labels<'a> {
    pub fn new(map: Option<&'a StringMap>) -> Self {
        Labels(map)
    }

    /// The label's value, if set.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0.and_then(|m| m.get(key)).map(String::as_str)
    }

    /// `labels.get(key, default)`.
    pub fn str_or(&self, key: &str, default: &str) -> String {
        self.get(key).unwrap_or(default).to_string()
    }

    /// `get_cluster_label_as_bool(cluster, key, default)`.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, MagnumError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => parse_bool(key, v),
        }
    }

    /// `get_cluster_label_as_int(cluster, key, default)`.
    pub fn int_or(&self, key: &str, default: i64) -> Result<i64, MagnumError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => parse_int(key, v),
        }
    }
}

/// `strutils.bool_from_string(value, strict=True)`.
pub fn parse_bool(key: &str, value: &str) -> Result<bool, MagnumError> {
    let v = value.trim().to_lowercase();
    if TRUE_STRINGS.contains(&v.as_str()) {
        Ok(true)
    } else if FALSE_STRINGS.contains(&v.as_str()) {
        Ok(false)
    } else {
        Err(MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            format!(
                "Invalid value for label {key}: Unrecognized value '{value}', acceptable values \
                 are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"
            ),
        ))
    }
}

/// `strutils.validate_integer(value, key)`: Python's `int()` of the string (surrounding
/// whitespace, a sign, and single underscores between digits are accepted).
pub fn parse_int(key: &str, value: &str) -> Result<i64, MagnumError> {
    let err = || {
        MagnumError::with_message(
            ErrorKind::InvalidParameterValue,
            format!("Invalid value for label {key}: {key} must be an integer"),
        )
    };
    let n = openkeel_core::pyvalue::python_int(value).ok_or_else(err)?;
    // A magnitude beyond `i64` is refused (so is `i64::MIN`, whose magnitude is).
    let magnitude = i64::try_from(n.unsigned_abs()).map_err(|_| err())?;
    Ok(if n < 0 { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_booleans_and_python_integers() {
        assert!(parse_bool("k", " Yes ").unwrap());
        assert!(!parse_bool("k", "off").unwrap());
        let e = parse_bool("auto_healing_enabled", "maybe").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParameterValue);
        assert!(e.message().contains("Unrecognized value 'maybe'"));
        assert_eq!(parse_int("k", " 12 ").unwrap(), 12);
        assert_eq!(parse_int("k", "1_0").unwrap(), 10);
        assert_eq!(parse_int("k", "-3").unwrap(), -3);
        for bad in ["", "x", "1.5", "_1", "1__0", "true"] {
            assert!(parse_int("etcd_volume_size", bad).is_err(), "{bad}");
        }
        let mut m = StringMap::new();
        m.insert("a".into(), "7".into());
        let l = Labels::new(Some(&m));
        assert_eq!(l.int_or("a", 0).unwrap(), 7);
        assert_eq!(l.int_or("b", 3).unwrap(), 3);
        assert_eq!(l.str_or("b", "d"), "d");
        assert!(l.bool_or("b", true).unwrap());
    }

    #[test]
    fn integers_beyond_i64_are_refused() {
        assert_eq!(parse_int("k", "9223372036854775807").unwrap(), i64::MAX);
        assert_eq!(parse_int("k", "-9223372036854775807").unwrap(), -i64::MAX);
        for bad in [
            "9223372036854775808",
            "-9223372036854775808",
            "99999999999999999999",
        ] {
            assert!(parse_int("k", bad).is_err(), "{bad}");
        }
    }
}
