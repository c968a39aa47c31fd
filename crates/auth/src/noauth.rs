//! noauth: Magnum's paste pipeline without `authtoken`, where the identity headers are trusted
//! as they come. A request that carries none of `X-User-Id`, `X-Project-Id`, `X-Roles` gets
//! the documented dev-mode identity of the embedded default (an admin of a default project),
//! so the CLI works at once (`docs/embedded.md`).

use openkeel_core::context::HeaderLookup;

/// The dev-mode identity of the embedded default (noauth, no identity headers).
pub const NOAUTH_USER_ID: &str = "noauth-admin";
pub const NOAUTH_USER_NAME: &str = "admin";
pub const NOAUTH_PROJECT_ID: &str = "noauth-project";
pub const NOAUTH_PROJECT_NAME: &str = "admin";
pub const NOAUTH_ROLES: &str = "admin,member,reader";

/// The headers whose presence means the caller said who it is.
const IDENTITY_HEADERS: [&str; 3] = ["x-user-id", "x-project-id", "x-roles"];

/// Whether a request with these headers names its caller (`has` answers for a lower-case
/// header name); if not, noauth applies the dev-mode identity.
pub fn has_identity(has: impl Fn(&str) -> bool) -> bool {
    IDENTITY_HEADERS.iter().any(|n| has(n))
}

/// The dev-mode identity's value of `name` (a header name, any case), if it has one.
pub fn default_header(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "x-user-id" => Some(NOAUTH_USER_ID),
        "x-user-name" => Some(NOAUTH_USER_NAME),
        "x-project-id" => Some(NOAUTH_PROJECT_ID),
        "x-project-name" => Some(NOAUTH_PROJECT_NAME),
        "x-roles" => Some(NOAUTH_ROLES),
        _ => None,
    }
}

/// A request's headers with the dev-mode identity filling in what they lack.
pub struct WithDefaults<H>(pub H);

impl<H: HeaderLookup> HeaderLookup for WithDefaults<H> {
    fn header(&self, name: &str) -> Option<&str> {
        self.0.header(name).or_else(|| default_header(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Map(Vec<(&'static str, &'static str)>);

    impl HeaderLookup for Map {
        fn header(&self, name: &str) -> Option<&str> {
            self.0
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        }
    }

    #[test]
    fn given_headers_win_and_the_dev_identity_fills_the_rest() {
        let h = WithDefaults(Map(vec![("X-Project-Name", "mine")]));
        assert_eq!(h.header("X-Project-Name"), Some("mine"));
        assert_eq!(h.header("x-user-id"), Some(NOAUTH_USER_ID));
        assert_eq!(h.header("X-Project-Id"), Some(NOAUTH_PROJECT_ID));
        assert_eq!(h.header("x-roles"), Some(NOAUTH_ROLES));
        assert_eq!(h.header("x-auth-token"), None);
    }

    #[test]
    fn any_one_identity_header_names_the_caller() {
        assert!(!has_identity(|_| false));
        for name in IDENTITY_HEADERS {
            assert!(has_identity(|n| n == name), "{name}");
        }
        assert!(!has_identity(|n| n == "x-user-name"));
    }
}
