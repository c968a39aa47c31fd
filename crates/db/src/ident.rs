//! Identity parsing as Magnum does it (`oslo_utils.strutils.is_int_like`,
//! `oslo_utils.uuidutils.is_uuid_like`, `magnum/db/sqlalchemy/api.py add_identity_filter`).

/// `strutils.is_int_like`: `str(int(v)) == str(v)`, i.e. a canonical decimal integer
/// (optional `-`, no leading zeros, no sign on zero, no spaces or underscores).
pub fn is_int_like(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return false;
    }
    !(digits == "0" && v.starts_with('-'))
}

/// `uuidutils.is_uuid_like`: what Python's `uuid.UUID(v)` accepts (`urn:` / `uuid:` prefixes,
/// braces, hyphens anywhere, upper case), provided that removing those decorations leaves the
/// same 32 hex digits.
pub fn is_uuid_like(v: &str) -> bool {
    // uuid.UUID(hex): hex.replace('urn:', '').replace('uuid:', '').strip('{}').replace('-', '')
    let parsed = v
        .replace("urn:", "")
        .replace("uuid:", "")
        .trim_matches(|c| c == '{' || c == '}')
        .replace('-', "");
    if parsed.len() != 32 || !parsed.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    // _format_uuid_string applies the same transformation (plus lower()), so the comparison
    // `str(uuid).replace('-', '') == _format_uuid_string(v)` holds whenever parsing succeeded.
    true
}

/// How `add_identity_filter` interprets an identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ident<'a> {
    /// Integer-like: matches `id`. `None` when it does not fit in an `i64` (no row can match).
    Id(Option<i64>),
    /// UUID-like: matches `uuid` (compared as given, not normalised).
    Uuid(&'a str),
}

impl<'a> Ident<'a> {
    /// Integer-like → [`Ident::Id`], UUID-like → [`Ident::Uuid`], else `None`
    /// (Magnum raises `InvalidIdentity` or, for some objects, looks the value up by name).
    pub fn parse(v: &'a str) -> Option<Ident<'a>> {
        if is_int_like(v) {
            Some(Ident::Id(v.parse().ok()))
        } else if is_uuid_like(v) {
            Some(Ident::Uuid(v))
        } else {
            None
        }
    }
}

/// `add_identity_filter`: `id = n` for an integer-like value, `uuid = v` for a UUID-like one,
/// else `InvalidIdentity`.
pub(crate) fn identity_filter(
    w: &mut crate::record::Where,
    ident: &str,
) -> Result<(), crate::DbError> {
    match Ident::parse(ident) {
        Some(Ident::Id(Some(id))) => {
            w.eq("id", id);
        }
        Some(Ident::Id(None)) => {
            w.raw("1 != 1", Vec::new());
        }
        Some(Ident::Uuid(u)) => {
            w.eq("uuid", u);
        }
        None => return Err(crate::DbError::InvalidIdentity(ident.to_string())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_like() {
        for ok in ["0", "1", "42", "-7", "123456789012345678901234567890"] {
            assert!(is_int_like(ok), "{ok}");
        }
        for bad in ["", "-", "007", "-0", "+1", " 1", "1_0", "1.0", "abc"] {
            assert!(!is_int_like(bad), "{bad}");
        }
    }

    #[test]
    fn uuid_like() {
        for ok in [
            "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
            "5D12F6FD-A196-4BF0-AE4C-1F639A523A52",
            "5d12f6fda1964bf0ae4c1f639a523a52",
            "{5d12f6fd-a196-4bf0-ae4c-1f639a523a52}",
            "urn:uuid:5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
        ] {
            assert!(is_uuid_like(ok), "{ok}");
        }
        for bad in [
            "",
            "my-cluster",
            "5d12f6fd-a196-4bf0-ae4c-1f639a523a5",
            "zz12f6fda1964bf0ae4c1f639a523a52",
        ] {
            assert!(!is_uuid_like(bad), "{bad}");
        }
        assert_eq!(Ident::parse("12"), Some(Ident::Id(Some(12))));
        assert_eq!(Ident::parse("99999999999999999999"), Some(Ident::Id(None)));
        assert_eq!(Ident::parse("name"), None);
    }
}
