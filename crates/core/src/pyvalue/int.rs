//! Python's `int(str)` for decimal text: the one integer parser of OpenKeel (WSME's integer
//! conversions and query arguments in the API, `strutils.validate_integer` in the cloud
//! checks and the CAPI driver's labels, oslo.config's `types.Integer`, the RPC codec's
//! `IntegerField`).

/// Python's `int(s)` (base 10): surrounding whitespace, an optional sign, decimal digits with
/// single underscores between them. Only ASCII digits are read (Python also takes other
/// Unicode decimal digits, `int('١٢')`). Values beyond 128 bits saturate at `±i128::MAX`
/// (callers narrow with `try_from` and decide what a value out of their range means).
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

#[cfg(test)]
mod tests {
    use super::python_int;

    #[test]
    fn python_int_rules() {
        assert_eq!(python_int("10"), Some(10));
        assert_eq!(python_int(" -3 "), Some(-3));
        assert_eq!(python_int("\t12\n"), Some(12));
        assert_eq!(python_int("+0"), Some(0));
        assert_eq!(python_int("-0"), Some(0));
        assert_eq!(python_int("010"), Some(10));
        assert_eq!(python_int("1_000"), Some(1000));
        assert_eq!(python_int("5_0"), Some(50));
        for bad in [
            "", "   ", "+", "-", "1__0", "_1", "1_", "-_1", "+-1", "- 1", "5.0", "1e3", "0x5",
            "ten", "true",
        ] {
            assert_eq!(python_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn out_of_range_values_saturate() {
        assert_eq!(
            python_int("99999999999999999999"),
            Some(99_999_999_999_999_999_999)
        );
        assert_eq!(
            python_int("-9223372036854775808"),
            Some(i128::from(i64::MIN))
        );
        let huge = "9".repeat(60);
        assert_eq!(python_int(&huge), Some(i128::MAX));
        assert_eq!(python_int(&format!("-{huge}")), Some(-i128::MAX));
    }
}
