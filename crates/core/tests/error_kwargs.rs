//! Every `MagnumError::new(ErrorKind::X, &[("name", ..), ..])` in the workspace supplies each
//! `%(name)s` of X's message template. `MagnumError::new` falls back to the raw template when
//! a placeholder has no argument (as Magnum's `MagnumException` does), so a misspelt keyword
//! would otherwise only show up as `%(cluster)s` in a user's error message.
//!
//! The call sites are read from the source (`crates/`, `tests/`): each one whose kind and
//! keyword list are written out is checked; the few that pass a kind or a list held in a
//! variable are counted and named, and must stay few. A kind that Magnum itself raises with
//! no argument (`raise exception.HTTPNotFound`, whose answer shows the raw template) may be
//! constructed with `&[]`: those are listed in [`RAISED_BARE`].
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_core::error::{ErrorKind, MagnumError};
use std::path::{Path, PathBuf};

/// Kinds Magnum 23.0.0 raises with no keyword arguments, so that its answer carries the raw
/// template: `HTTPNotFound` for `/detail` below a resource (`cluster.py`, `cluster_template.py`,
/// `federation.py`: `raise exception.HTTPNotFound`).
const RAISED_BARE: &[ErrorKind] = &[ErrorKind::HTTPNotFound];

/// One `MagnumError::new(` call: where it is and its two arguments' text.
struct Site {
    file: PathBuf,
    line: usize,
    kind: String,
    kwargs: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The index just past the `)` that closes the `(` before `start`, skipping strings, raw
/// strings, character literals and comments; with the top-level comma positions.
fn close_paren(src: &[u8], start: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 1usize;
    let mut commas = Vec::new();
    let mut i = start;
    while i < src.len() {
        match src[i] {
            b'"' => {
                i += 1;
                while i < src.len() && src[i] != b'"' {
                    if src[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'r' if src.get(i + 1) == Some(&b'#') || src.get(i + 1) == Some(&b'"') => {
                let mut j = i + 1;
                let mut hashes = 0;
                while src.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if src.get(j) == Some(&b'"') {
                    let mut end = vec![b'"'];
                    end.extend(std::iter::repeat_n(b'#', hashes));
                    let rest = &src[j + 1..];
                    let k = rest.windows(end.len()).position(|w| w == end.as_slice())?;
                    i = j + 1 + k + end.len() - 1;
                }
            }
            b'\'' => {
                // a character literal ('x', '\n', '\''), not a lifetime
                if src.get(i + 1) == Some(&b'\\') {
                    i += 3;
                    while i < src.len() && src[i] != b'\'' {
                        i += 1;
                    }
                } else if src.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn sites(file: &Path) -> Vec<Site> {
    let text = std::fs::read_to_string(file).unwrap();
    let src = text.as_bytes();
    let mut out = Vec::new();
    let mut patterns = vec!["MagnumError::new("];
    if file.ends_with("crates/core/src/error.rs") {
        patterns.push("Self::new(");
    }
    for pat in patterns {
        for (at, _) in text.match_indices(pat) {
            let open = at + pat.len();
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            if text[..at].ends_with("fn ") || text[line_start..at].trim_start().starts_with("//") {
                continue;
            }
            let Some((close, commas)) = close_paren(src, open) else {
                continue;
            };
            let Some(&comma) = commas.first() else {
                continue;
            };
            out.push(Site {
                file: file.to_path_buf(),
                line: text[..at].matches('\n').count() + 1,
                kind: text[open..comma].trim().to_string(),
                kwargs: text[comma + 1..close]
                    .trim()
                    .trim_end_matches(',')
                    .to_string(),
            });
        }
    }
    out
}

/// `ErrorKind::X` (with any path before it) → X.
fn kind_of(expr: &str) -> Option<ErrorKind> {
    let name = expr.rsplit_once("ErrorKind::")?.1;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    ErrorKind::ALL
        .iter()
        .copied()
        .find(|k| format!("{k:?}") == name)
}

/// The keyword names of a literal `&[("name", value), ...]` list.
fn kwarg_names(expr: &str) -> Option<Vec<String>> {
    let inner = expr.strip_prefix("&[")?.strip_suffix(']')?;
    let mut names = Vec::new();
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth == 1 && c == '(' {
                    let rest = inner[i + 1..].trim_start();
                    let lit = rest.strip_prefix('"')?;
                    let end = lit.find('"')?;
                    names.push(lit[..end].to_string());
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Some(names)
}

#[test]
fn every_constructor_supplies_its_templates_placeholders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    files.sort();

    let mut checked = 0;
    let mut unchecked = Vec::new();
    let mut missing = Vec::new();
    for site in files.iter().flat_map(|f| sites(f)) {
        let place = format!(
            "{}:{}",
            site.file
                .strip_prefix(&root)
                .unwrap_or(&site.file)
                .display(),
            site.line
        );
        let (Some(kind), Some(names)) = (kind_of(&site.kind), kwarg_names(&site.kwargs)) else {
            unchecked.push(format!("{place}: {} / {}", site.kind, site.kwargs));
            continue;
        };
        checked += 1;
        if names.is_empty() && RAISED_BARE.contains(&kind) {
            continue;
        }
        for want in MagnumError::template_names(kind) {
            if !names.iter().any(|n| n == want) {
                missing.push(format!(
                    "{place}: {kind:?} needs %({want})s, given {names:?}"
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "constructors that leave a placeholder of the template unfilled:\n{}",
        missing.join("\n")
    );
    // The scan must find the call sites (a broken scan would pass vacuously), and only a few
    // may escape it.
    assert!(checked >= 80, "only {checked} call sites found");
    assert!(
        unchecked.len() <= 4,
        "{} call sites pass their kind or keywords in a variable:\n{}",
        unchecked.len(),
        unchecked.join("\n")
    );
}

#[test]
fn the_scan_sees_a_misspelt_keyword() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.rs");
    std::fs::write(
        &f,
        "fn f() -> MagnumError {\n    MagnumError::new(\n        ErrorKind::ClusterNotFound,\n        \
         &[(\"clsuter\", &\"c1\")],\n    )\n}\n",
    )
    .unwrap();
    let s = sites(&f);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].line, 2);
    let kind = kind_of(&s[0].kind).unwrap();
    assert_eq!(kind, ErrorKind::ClusterNotFound);
    let names = kwarg_names(&s[0].kwargs).unwrap();
    assert_eq!(names, ["clsuter"]);
    assert_eq!(MagnumError::template_names(kind), ["cluster"]);
}
