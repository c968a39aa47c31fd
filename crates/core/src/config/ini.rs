//! The INI dialect of oslo.config (`oslo_config/iniparser.py` and `cfg.ConfigParser`):
//!
//! * `[section]` headers; the line must end with `]` and the name is everything between the
//!   brackets, unstripped. Section names are case-insensitive except `DEFAULT` (oslo
//!   lower-cases every name but `DEFAULT`), and repeated sections merge.
//! * `key = value` or `key: value`, split at whichever of `=` / `:` comes first; key and value
//!   are stripped; a value wrapped in matching `"` or `'` loses them (other quotes are kept).
//! * A line starting with a space or tab continues the previous value (joined with `\n`); a
//!   blank line, a comment or a new key ends it. A continuation with no value to continue is
//!   an error.
//! * Lines starting with `#` or `;` are comments; there are no inline comments.
//! * A key repeated in a file keeps every value, in order (the last one wins for single-valued
//!   options; multi-valued options take all).
//!
//! Keys are case-sensitive. Unknown sections and keys are kept here and ignored by the loader.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// One assignment's value and the line of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawValue {
    pub(crate) text: String,
    pub(crate) line: usize,
}

/// A parsed file: normalised section name → key → every value, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParsedFile {
    pub(crate) path: PathBuf,
    pub(crate) sections: HashMap<String, HashMap<String, Vec<RawValue>>>,
}

impl ParsedFile {
    /// The values of `key` in the (normalised) section `section`, in file order.
    pub(crate) fn values(&self, section: &str, key: &str) -> Option<&[RawValue]> {
        self.sections
            .get(section)
            .and_then(|keys| keys.get(key))
            .map(Vec::as_slice)
    }
}

/// oslo's `_normalize_group_name`: lower case, except `DEFAULT`.
pub(crate) fn normalize_group(name: &str) -> String {
    if name == "DEFAULT" {
        name.to_owned()
    } else {
        name.to_lowercase()
    }
}

/// Splits like Python's universal newlines: `\n`, `\r\n` and `\r` all end a line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.find(['\n', '\r']) {
            Some(i) => {
                let line = &rest[..i];
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
                Some(line)
            }
            None => {
                let line = rest;
                rest = "";
                Some(line)
            }
        }
    })
}

struct Pending {
    key: String,
    value: Vec<String>,
    line: usize,
    text: String,
}

/// Parses `text` (read from `path`) with oslo's rules.
pub(crate) fn parse(path: &Path, text: &str) -> Result<ParsedFile, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut file = ParsedFile {
        path: path.to_owned(),
        sections: HashMap::new(),
    };
    let error = |line: usize, message: &str, text: &str| ConfigError::Parse {
        path: path.to_owned(),
        line,
        message: message.to_owned(),
        text: text.to_owned(),
    };
    let mut section: Option<String> = None;
    let mut pending: Option<Pending> = None;

    let flush = |section: &Option<String>, pending: &mut Option<Pending>, file: &mut ParsedFile| {
        let Some(p) = pending.take() else {
            return Ok(());
        };
        let Some(name) = section else {
            return Err(error(
                p.line,
                "Section must be started before assignment",
                &p.text,
            ));
        };
        file.sections
            .entry(name.clone())
            .or_default()
            .entry(p.key)
            .or_default()
            .push(RawValue {
                text: p.value.join("\n"),
                line: p.line,
            });
        Ok(())
    };

    for (index, raw_line) in lines(text).enumerate() {
        let lineno = index + 1;
        let line = raw_line.trim_end();
        if line.is_empty() {
            flush(&section, &mut pending, &mut file)?;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            match pending.as_mut() {
                Some(p) => p.value.push(line.trim_start().to_owned()),
                None => return Err(error(lineno, "Unexpected continuation line", line)),
            }
            continue;
        }
        flush(&section, &mut pending, &mut file)?;

        if line.starts_with('[') {
            if !line.ends_with(']') {
                return Err(error(lineno, "Invalid section (must end with ])", line));
            }
            if line.chars().count() <= 2 {
                return Err(error(lineno, "Empty section name", line));
            }
            let name = normalize_group(&line[1..line.len() - 1]);
            file.sections.entry(name.clone()).or_default();
            section = Some(name);
        } else if line.starts_with(['#', ';']) {
            // A comment.
        } else {
            let (key, value) = split_key_value(line)
                .ok_or_else(|| error(lineno, "No ':' or '=' found in assignment", line))?;
            if key.is_empty() {
                return Err(error(lineno, "Key cannot be empty", line));
            }
            pending = Some(Pending {
                key: key.to_owned(),
                value: vec![value],
                line: lineno,
                text: line.to_owned(),
            });
        }
    }
    flush(&section, &mut pending, &mut file)?;
    Ok(file)
}

/// Splits at the first `=` or `:`, strips both sides and removes one pair of matching
/// surrounding quotes from the value.
fn split_key_value(line: &str) -> Option<(&str, String)> {
    let at = line.find(['=', ':'])?;
    let key = line[..at].trim();
    let mut value = line[at + 1..].trim();
    let first = value.chars().next();
    let last = value.chars().next_back();
    if let (Some(first @ ('"' | '\'')), Some(last)) = (first, last) {
        if first == last {
            // A lone quote character becomes the empty string, as in Python's value[1:-1].
            value = value.get(1..value.len().saturating_sub(1)).unwrap_or("");
        }
    }
    Some((key, value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<ParsedFile, ConfigError> {
        parse(Path::new("test.conf"), text)
    }

    fn get(file: &ParsedFile, section: &str, key: &str) -> Vec<String> {
        file.values(section, key)
            .unwrap_or_default()
            .iter()
            .map(|v| v.text.clone())
            .collect()
    }

    fn parse_error(text: &str) -> (usize, String) {
        match parse_str(text) {
            Err(ConfigError::Parse { line, message, .. }) => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn key_values_are_stripped_and_split_at_the_first_separator() {
        let f = parse_str("[DEFAULT]\n a_key_is_not_a_continuation_here = 1\n").err();
        assert!(f.is_some(), "a leading space makes a continuation line");
        let f = parse_str("[DEFAULT]\nk1 =   v1   \nk2: v2\nk3: x = y\nk4 = x: y\nk5 =\n").unwrap();
        assert_eq!(get(&f, "DEFAULT", "k1"), ["v1"]);
        assert_eq!(get(&f, "DEFAULT", "k2"), ["v2"]);
        assert_eq!(get(&f, "DEFAULT", "k3"), ["x = y"]);
        assert_eq!(get(&f, "DEFAULT", "k4"), ["x: y"]);
        assert_eq!(get(&f, "DEFAULT", "k5"), [""]);
    }

    #[test]
    fn matching_surrounding_quotes_are_removed_others_kept() {
        let f = parse_str("[DEFAULT]\na = \"quoted\"\nb = 'single'\nc = \"half\nd = 'mixed\"\ne = \"\nf = \"a\" and \"b\"\ng = x\"y\"\n").unwrap();
        assert_eq!(get(&f, "DEFAULT", "a"), ["quoted"]);
        assert_eq!(get(&f, "DEFAULT", "b"), ["single"]);
        assert_eq!(get(&f, "DEFAULT", "c"), ["\"half"]);
        assert_eq!(get(&f, "DEFAULT", "d"), ["'mixed\""]);
        assert_eq!(get(&f, "DEFAULT", "e"), [""]);
        assert_eq!(get(&f, "DEFAULT", "f"), ["a\" and \"b"]);
        assert_eq!(get(&f, "DEFAULT", "g"), ["x\"y\""]);
    }

    #[test]
    fn comments_are_whole_lines_only() {
        let f = parse_str(
            "# c1\n; c2\n[DEFAULT]\n#k = no\n;k = no\nk = v # not a comment\nj = v ; nor this\n",
        )
        .unwrap();
        assert_eq!(get(&f, "DEFAULT", "k"), ["v # not a comment"]);
        assert_eq!(get(&f, "DEFAULT", "j"), ["v ; nor this"]);
        assert_eq!(get(&f, "DEFAULT", "#k"), Vec::<String>::new());
    }

    #[test]
    fn continuation_lines_join_with_newlines() {
        let f = parse_str(
            "[DEFAULT]\nk = l1\n  l2\n\tl3   \nempty =\n  next\nj = a\n  # kept as text\n",
        )
        .unwrap();
        assert_eq!(get(&f, "DEFAULT", "k"), ["l1\nl2\nl3"]);
        assert_eq!(get(&f, "DEFAULT", "empty"), ["\nnext"]);
        assert_eq!(get(&f, "DEFAULT", "j"), ["a\n# kept as text"]);
        // Quotes are removed from the first line only.
        let f = parse_str("[DEFAULT]\nq = \"a\n  b\"\n").unwrap();
        assert_eq!(get(&f, "DEFAULT", "q"), ["\"a\nb\""]);
    }

    #[test]
    fn blank_lines_and_comments_end_a_value() {
        assert_eq!(
            parse_error("[DEFAULT]\nk = a\n\n  b\n"),
            (4, "Unexpected continuation line".into())
        );
        assert_eq!(
            parse_error("[DEFAULT]\nk = a\n# c\n  b\n"),
            (4, "Unexpected continuation line".into())
        );
        assert_eq!(
            parse_error("[DEFAULT]\n  b\n"),
            (2, "Unexpected continuation line".into())
        );
        // A whitespace-only line is blank.
        let f = parse_str("[DEFAULT]\nk = a\n   \nj = b\n").unwrap();
        assert_eq!(get(&f, "DEFAULT", "k"), ["a"]);
    }

    #[test]
    fn syntax_errors_carry_line_numbers() {
        assert_eq!(
            parse_error("[DEFAULT]\nk = 1\nnovalue\n"),
            (3, "No ':' or '=' found in assignment".into())
        );
        assert_eq!(
            parse_error("[DEFAULT]\n= a\n"),
            (2, "Key cannot be empty".into())
        );
        assert_eq!(
            parse_error("[DEFAULT] # c\n"),
            (1, "Invalid section (must end with ])".into())
        );
        assert_eq!(parse_error("\n[]\n"), (2, "Empty section name".into()));
        assert_eq!(
            parse_error("k = v\n"),
            (1, "Section must be started before assignment".into())
        );
        match parse_str("[a]\nbad line\n") {
            Err(e) => assert_eq!(
                e.to_string(),
                "failed to parse test.conf:2: No ':' or '=' found in assignment: \"bad line\""
            ),
            Ok(_) => panic!("expected an error"),
        }
    }

    #[test]
    fn section_names_normalise_like_oslo() {
        let f = parse_str(
            "[API]\nport = 1\n[api]\nport = 2\n[default]\nk = low\n[ DEFAULT ]\nk = spaced\n",
        )
        .unwrap();
        assert_eq!(get(&f, "api", "port"), ["1", "2"]);
        // `[default]` is not `[DEFAULT]`, and names are not stripped.
        assert_eq!(get(&f, "default", "k"), ["low"]);
        assert_eq!(get(&f, " default ", "k"), ["spaced"]);
        assert!(f.values("DEFAULT", "k").is_none());
    }

    #[test]
    fn keys_are_case_sensitive_and_repeats_are_kept() {
        let f = parse_str("[DEFAULT]\nk = 1\nK = 2\nk = 3\n").unwrap();
        assert_eq!(get(&f, "DEFAULT", "k"), ["1", "3"]);
        assert_eq!(get(&f, "DEFAULT", "K"), ["2"]);
        assert_eq!(f.values("DEFAULT", "k").unwrap()[1].line, 4);
    }

    #[test]
    fn line_endings_and_bom() {
        let f = parse_str("\u{feff}[DEFAULT]\r\nk = a\r\nj = b\rl = c").unwrap();
        assert_eq!(get(&f, "DEFAULT", "k"), ["a"]);
        assert_eq!(get(&f, "DEFAULT", "j"), ["b"]);
        assert_eq!(get(&f, "DEFAULT", "l"), ["c"]);
    }
}
