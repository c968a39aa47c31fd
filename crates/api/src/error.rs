//! The one place where failures become Magnum's error envelope
//! (`ParsableErrorMiddleware._update_errors`, `magnum/api/middleware/parsable_error.py`).

use crate::microversion::{self, VersionError};
use openkeel_core::error::MagnumError;
use serde_json::{json, Value};

/// A failure of a request, before rendering.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// An error raised inside a handler (WSME faultstring): the version headers are kept.
    Handler(MagnumError),
    /// A routing-level webob error (404 / 405 / 406, version parse errors): no version
    /// headers; title and detail only when the client prefers JSON.
    Routing {
        status: u16,
        detail: String,
        allow: Option<String>,
    },
    /// Out-of-range microversion: the special entry, with the version headers echoing it.
    Microversion(VersionError),
}

impl ApiError {
    pub fn not_found() -> Self {
        ApiError::Routing {
            status: 404,
            detail: String::new(),
            allow: None,
        }
    }

    pub fn method_not_allowed(allow: &str) -> Self {
        ApiError::Routing {
            status: 405,
            detail: String::new(),
            allow: Some(allow.to_string()),
        }
    }

    /// pecan's answer to a path with more segments than the controller's handlers take: the
    /// handler's argument check (404) when the controller has a handler for the method, else
    /// the controller's 405 with its `allow` (every `PUT`; `DELETE` on certificates).
    pub fn beyond_arguments(method: &http::Method, allow: &str) -> Self {
        if allow.split(", ").any(|m| m == method.as_str()) {
            Self::not_found()
        } else {
            Self::method_not_allowed(allow)
        }
    }

    /// A 405 without an `Allow` header (pecan's refusal of `GET ...?_method=delete`).
    pub fn method_not_allowed_without_allow() -> Self {
        ApiError::Routing {
            status: 405,
            detail: String::new(),
            allow: None,
        }
    }

    pub fn not_acceptable(detail: impl Into<String>) -> Self {
        ApiError::Routing {
            status: 406,
            detail: detail.into(),
            allow: None,
        }
    }

    /// A body refused by its limits (`crate::body`): 413 or 408, as a WSGI server's own
    /// refusal, without version headers.
    pub fn body_refused(refused: crate::body::BodyRefused) -> Self {
        let status = match refused {
            crate::body::BodyRefused::TooLarge(_) => 413,
            crate::body::BodyRefused::TooSlow(_) => 408,
        };
        ApiError::Routing {
            status,
            detail: refused.to_string(),
            allow: None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::Handler(e) => e.code(),
            ApiError::Routing { status, .. } => *status,
            ApiError::Microversion(_) => 406,
        }
    }

    /// Whether the version response headers survive (they do for handler errors and for the
    /// range check, not for routing errors).
    pub fn keeps_version_headers(&self) -> bool {
        !matches!(self, ApiError::Routing { .. })
    }

    /// The envelope body.
    pub fn body(&self, prefers_json: bool) -> Value {
        match self {
            ApiError::Handler(e) => {
                let detail = e.message();
                let title = detail.split('.').next().unwrap_or(detail);
                let code = if e.code() >= 500 { "server" } else { "client" };
                entry(e.code(), code, title, detail)
            }
            ApiError::Routing { status, detail, .. } => {
                if prefers_json {
                    entry(*status, "", reason_phrase(*status), detail)
                } else {
                    entry(*status, "", "", "")
                }
            }
            ApiError::Microversion(err) => {
                let links = json!([{"rel": "help", "href": "http://docs.openstack.org/api-guide/compute/microversions.html"}]);
                let item = if prefers_json {
                    json!({
                        "code": "magnum.microversion-unsupported",
                        "title": "Requested microversion is unsupported",
                        "description": err.message(),
                        "max_version": microversion::MAX.to_string(),
                        "min_version": microversion::MIN.to_string(),
                        "links": links,
                    })
                } else {
                    json!({
                        "max_version": microversion::MAX.to_string(),
                        "min_version": microversion::MIN.to_string(),
                        "code": "magnum.microversion-unsupported",
                        "links": links,
                        "title": "Requested microversion is unsupported",
                    })
                };
                json!({ "errors": [item] })
            }
        }
    }
}

impl From<MagnumError> for ApiError {
    fn from(e: MagnumError) -> Self {
        ApiError::Handler(e)
    }
}

fn entry(status: u16, code: &str, title: &str, detail: &str) -> Value {
    json!({"errors": [{
        "request_id": "",
        "code": code,
        "status": status,
        "title": title,
        "detail": detail,
        "links": [],
    }]})
}

/// The reason phrases webob uses as titles.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Request Entity Too Large",
        415 => "Unsupported Media Type",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::error::ErrorKind;
    use openkeel_core::pyjson::dumps;

    #[test]
    fn handler_error_title_is_the_first_sentence() {
        let e = ApiError::Handler(MagnumError::new(
            ErrorKind::FlavorNotFound,
            &[("flavor", &"m1.nope")],
        ));
        assert_eq!(
            dumps(&e.body(false)),
            r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Unable to find flavor m1", "detail": "Unable to find flavor m1.nope.", "links": []}]}"#
        );
    }

    #[test]
    fn routing_error_is_empty_unless_json_is_preferred() {
        let e = ApiError::method_not_allowed("GET");
        assert_eq!(
            dumps(&e.body(false)),
            r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "", "detail": "", "links": []}]}"#
        );
        assert_eq!(
            dumps(&e.body(true)),
            r#"{"errors": [{"request_id": "", "code": "", "status": 405, "title": "Method Not Allowed", "detail": "", "links": []}]}"#
        );
    }

    #[test]
    fn microversion_entry_matches_magnum() {
        let e = ApiError::Microversion(VersionError::MinorUnsupported(microversion::Version::new(
            1, 99,
        )));
        assert_eq!(
            dumps(&e.body(false)),
            r#"{"errors": [{"max_version": "1.14", "min_version": "1.1", "code": "magnum.microversion-unsupported", "links": [{"rel": "help", "href": "http://docs.openstack.org/api-guide/compute/microversions.html"}], "title": "Requested microversion is unsupported"}]}"#
        );
        assert_eq!(
            dumps(&e.body(true)),
            r#"{"errors": [{"code": "magnum.microversion-unsupported", "title": "Requested microversion is unsupported", "description": "Version 1.99 was requested but the minor version is not supported by this service. The supported version range is: [container-infrastructure-management 1.1, container-infrastructure-management 1.14].", "max_version": "1.14", "min_version": "1.1", "links": [{"rel": "help", "href": "http://docs.openstack.org/api-guide/compute/microversions.html"}]}]}"#
        );
    }
}
