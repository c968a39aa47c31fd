//! Microversion negotiation, as `magnum/api/controllers/base.py` (`Version`) and
//! `magnum/api/controllers/v1/__init__.py` (`Controller._route`) do it.

use std::fmt;

/// The service name Magnum always answers with.
pub const SERVICE_NAME: &str = "container-infrastructure-management";
/// Service names accepted in the request header (case-sensitive).
pub const ACCEPTED_SERVICE_NAMES: [&str; 3] = [
    "container-infrastructure-management",
    "container-infrastructure",
    "container-infra",
];
pub const MIN: Version = Version { major: 1, minor: 1 };
pub const MAX: Version = Version {
    major: 1,
    minor: 14,
};
pub const HEADER: &str = "OpenStack-API-Version";

/// A `major.minor` API version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }

    /// True when `min <= self` (both inclusive bounds, as Magnum's `api_version`).
    pub fn at_least(self, minor: u32) -> bool {
        self >= Version::new(1, minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a header could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// Raised before any response header is set: 406 without version headers.
    InvalidServiceType,
    /// Raised before any response header is set: 406 without version headers.
    InvalidValue,
    /// The four headers are set (echoing the requested version), then 406 with the
    /// microversion-unsupported entry.
    MajorUnsupported(Version),
    MinorUnsupported(Version),
}

impl VersionError {
    /// The detail text Magnum gives.
    pub fn message(&self) -> String {
        let range = format!("[{SERVICE_NAME} {MIN}, {SERVICE_NAME} {MAX}]");
        match self {
            VersionError::InvalidServiceType => "Invalid service type for OpenStack-API-Version header".into(),
            VersionError::InvalidValue => "Invalid value for OpenStack-API-Version header".into(),
            VersionError::MajorUnsupported(v) => format!(
                "Mutually exclusive versions requested. Version {v} requested but not supported by this service.The supported version range is: {range}."
            ),
            VersionError::MinorUnsupported(v) => format!(
                "Version {v} was requested but the minor version is not supported by this service. The supported version range is: {range}."
            ),
        }
    }
}

/// Parse the header value (already looked up case-insensitively). `None` → 1.1.
/// Returns the requested version, which may still be out of range: see [`check_range`].
pub fn parse(header: Option<&str>) -> Result<Version, VersionError> {
    let Some(value) = header else {
        return Ok(MIN);
    };
    let tokens: Vec<&str> = value.split_whitespace().collect();
    if tokens.len() != 2 {
        return Err(VersionError::InvalidServiceType);
    }
    let (service, version) = (tokens[0], tokens[1]);
    if version.eq_ignore_ascii_case("latest") {
        return Ok(MAX);
    }
    if !ACCEPTED_SERVICE_NAMES.contains(&service) {
        return Err(VersionError::InvalidServiceType);
    }
    let mut parts = version.split('.');
    let (Some(major), Some(minor), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(VersionError::InvalidValue);
    };
    let num = |s: &str| -> Result<u32, VersionError> {
        // Python int(): optional sign and surrounding blanks; digits only otherwise.
        let t = s.trim();
        let t = t.strip_prefix('+').unwrap_or(t);
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(VersionError::InvalidValue);
        }
        t.parse::<u32>().map_err(|_| VersionError::InvalidValue)
    };
    Ok(Version::new(num(major)?, num(minor)?))
}

/// The range check done after the headers are set.
pub fn check_range(v: Version) -> Result<Version, VersionError> {
    if v.major != MAX.major {
        return Err(VersionError::MajorUnsupported(v));
    }
    if v < MIN || v > MAX {
        return Err(VersionError::MinorUnsupported(v));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_header_is_the_minimum() {
        assert_eq!(parse(None), Ok(MIN));
    }

    #[test]
    fn latest_ignores_the_service() {
        assert_eq!(parse(Some("compute latest")), Ok(MAX));
        assert_eq!(parse(Some("container-infra LATEST")), Ok(MAX));
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(
            parse(Some("container-infra    1.5")),
            Ok(Version::new(1, 5))
        );
        assert_eq!(parse(Some("container-infra 1.05")), Ok(Version::new(1, 5)));
        assert_eq!(
            parse(Some("container-infrastructure 1.9")),
            Ok(Version::new(1, 9))
        );
        assert_eq!(
            parse(Some("container-infrastructure-management 1.14")),
            Ok(MAX)
        );
    }

    #[test]
    fn parse_failures() {
        for v in [
            "1.1",
            "container-infra",
            "foo 1.1",
            "Container-Infra 1.5",
            "container-infra-management 1.5",
        ] {
            assert_eq!(parse(Some(v)), Err(VersionError::InvalidServiceType), "{v}");
        }
        for v in [
            "container-infra 1",
            "container-infra 1.2.3",
            "container-infra x.y",
            "container-infra 1.-2",
        ] {
            assert_eq!(parse(Some(v)), Err(VersionError::InvalidValue), "{v}");
        }
    }

    #[test]
    fn range() {
        assert!(check_range(Version::new(1, 14)).is_ok());
        assert_eq!(
            check_range(Version::new(1, 15)),
            Err(VersionError::MinorUnsupported(Version::new(1, 15)))
        );
        assert_eq!(
            check_range(Version::new(1, 0)),
            Err(VersionError::MinorUnsupported(Version::new(1, 0)))
        );
        assert_eq!(
            check_range(Version::new(2, 1)),
            Err(VersionError::MajorUnsupported(Version::new(2, 1)))
        );
        assert!(VersionError::MajorUnsupported(Version::new(2, 1))
            .message()
            .contains("service.The supported"));
    }
}
