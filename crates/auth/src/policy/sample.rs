//! The sample policy file, byte for byte as `oslopolicy-sample-generator --namespace magnum`
//! (oslo.policy 6.0, `oslo_policy/generator.py _format_rule_default_yaml`) writes it, including
//! Python's `textwrap.wrap` line breaking of descriptions.

use std::path::Path;

use super::defaults::{default_rules, RuleDefault};

/// Where the generated sample lives, relative to the repository root.
pub const SAMPLE_PATH_IN_REPO: &str = "policy/policy.yaml.sample";

/// The sample policy file for Magnum's defaults: every rule commented out, with its
/// description, operations, intended scope and deprecation notes.
pub fn sample_yaml() -> String {
    default_rules().iter().map(format_rule_default).collect()
}

/// Write [`sample_yaml`] to `path`.
pub fn write_sample(path: &Path) -> std::io::Result<()> {
    std::fs::write(path, sample_yaml())
}

fn format_rule_default(d: &RuleDefault) -> String {
    let mut text = format!("\"{}\": \"{}\"\n", d.name, d.check_str);
    let mut op = String::new();
    for o in d.operations {
        if !o.method.is_empty() && !o.path.is_empty() {
            op.push_str(&format!("# {}  {}\n", o.method, o.path));
        }
    }
    let scope = match d.scope_types {
        Some(s) => format!("# Intended scope(s): {}\n", s.join(", ")),
        None => String::new(),
    };
    text = format!("{op}{scope}#{text}\n");
    if let Some(desc) = d.description.filter(|s| !s.is_empty()) {
        text = format!("{}\n{text}", format_help_text(Some(desc)));
    }
    if d.deprecated_for_removal {
        text = format!(
            "# DEPRECATED\n# \"{}\" has been deprecated since {}.\n{}\n{text}",
            d.name,
            d.deprecated_since.unwrap_or("None"),
            format_help_text(d.deprecated_reason)
        );
    } else if let Some(dep) = d.deprecated_rule {
        let reason = Some(dep.deprecated_reason)
            .filter(|s| !s.is_empty())
            .or(d.deprecated_reason);
        let since = Some(dep.deprecated_since)
            .filter(|s| !s.is_empty())
            .or(d.deprecated_since)
            .unwrap_or("None");
        let deprecated_text = format!(
            "\"{}\":\"{}\" has been deprecated since {since} in favor of \"{}\":\"{}\".",
            dep.name, dep.check_str, d.name, d.check_str
        );
        text.push_str(&format!(
            "# DEPRECATED\n{}\n{}\n",
            format_help_text(Some(&deprecated_text)),
            format_help_text(reason)
        ));
        if d.name != dep.name {
            text.push_str(concat!(
                "# WARNING: A rule name change has been identified.\n",
                "#          This may be an artifact of new rules being\n",
                "#          included which require legacy fallback\n",
                "#          rules to ensure proper policy behavior.\n",
                "#          Alternatively, this may just be an alias.\n",
                "#          Please evaluate on a case by case basis\n",
                "#          keeping in mind the format for aliased\n",
                "#          rules is:\n",
                "#          \"old_rule_name\": \"new_rule_name\".\n",
            ));
            text.push_str(&format!("# \"{}\": \"rule:{}\"\n", dep.name, d.name));
        }
        text.push('\n');
    }
    text
}

/// `_format_help_text`: paragraphs wrapped at 70 columns behind `# `, literal (indented)
/// lines kept as they are, blank lines as `#`.
fn format_help_text(description: Option<&str>) -> String {
    let Some(description) = description.filter(|d| !d.is_empty()) else {
        return "#".to_string();
    };
    let mut lines: Vec<String> = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let wrap_paragraph = |p: &[&str]| wrap(&p.join(" "), 70, "# ", "# ");
    for line in py_splitlines(py_strip(description)) {
        if py_strip(line).is_empty() {
            lines.extend(wrap_paragraph(&paragraph));
            lines.push("#".to_string());
            paragraph.clear();
        } else if line.chars().count() == line.trim_start().chars().count() {
            paragraph.push(line.trim_end());
        } else {
            if !paragraph.is_empty() {
                lines.extend(wrap_paragraph(&paragraph));
                lines.push("#".to_string());
                paragraph.clear();
            }
            lines.push(format!("# {}", line.trim_end()));
        }
    }
    if !paragraph.is_empty() {
        lines.extend(wrap_paragraph(&paragraph));
    }
    lines.join("\n")
}

fn py_strip(s: &str) -> &str {
    s.trim()
}

fn py_splitlines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

// ---------------------------------------------------------------------------------------------
// textwrap.wrap with the defaults oslo.policy uses (break_long_words, break_on_hyphens,
// drop_whitespace, expand_tabs, replace_whitespace).

const TW_WHITESPACE: &[char] = &['\t', '\n', '\x0b', '\x0c', '\r', ' '];

fn is_ws(c: char) -> bool {
    TW_WHITESPACE.contains(&c)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_letter(c: char) -> bool {
    is_word(c) && !c.is_numeric()
}

fn is_word_punct(c: char) -> bool {
    is_word(c) || matches!(c, '!' | '"' | '\'' | '&' | '.' | ',' | '?')
}

/// `-{2,}\w` at `at`?
fn em_dash_at(c: &[char], at: usize) -> bool {
    let mut j = at;
    while c.get(j) == Some(&'-') {
        j += 1;
    }
    j - at >= 2 && c.get(j).is_some_and(|x| is_word(*x))
}

/// `TextWrapper._split` with `wordsep_re` (break_on_hyphens=True).
fn split_chunks(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if is_ws(c[i]) {
            while i < c.len() && is_ws(c[i]) {
                i += 1;
            }
        } else if i > 0 && is_word_punct(c[i - 1]) && em_dash_at(&c, i) {
            while c.get(i) == Some(&'-') {
                i += 1;
            }
        } else {
            // nws+? followed by one of: a breakable hyphen, end of word, an em-dash.
            let mut j = i + 1;
            loop {
                let hyphen = c.get(j) == Some(&'-')
                    && ((j >= 2 && is_letter(c[j - 2]) && is_letter(c[j - 1]))
                        || (j >= 3
                            && is_letter(c[j - 3])
                            && c[j - 2] == '-'
                            && is_letter(c[j - 1])))
                    && c.get(j + 1).is_some_and(|x| is_letter(*x))
                    && (c.get(j + 2).is_some_and(|x| is_letter(*x))
                        || (c.get(j + 2) == Some(&'-')
                            && c.get(j + 3).is_some_and(|x| is_letter(*x))));
                if hyphen {
                    j += 1;
                    break;
                }
                if j >= c.len() || is_ws(c[j]) {
                    break;
                }
                if is_word_punct(c[j - 1]) && em_dash_at(&c, j) {
                    break;
                }
                j += 1;
            }
            i = j;
        }
        chunks.push(c[start..i].iter().collect());
    }
    chunks
}

fn munge_whitespace(text: &str) -> String {
    let mut out = String::new();
    let mut col = 0;
    for ch in text.chars() {
        match ch {
            '\t' => {
                let n = 8 - col % 8;
                out.push_str(&" ".repeat(n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(' ');
                col = 0;
            }
            c if is_ws(c) => {
                out.push(' ');
                col += 1;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

fn clen(s: &str) -> usize {
    s.chars().count()
}

/// `textwrap.wrap(text, width, initial_indent=..., subsequent_indent=...)`.
pub(crate) fn wrap(text: &str, width: usize, initial: &str, subsequent: &str) -> Vec<String> {
    let mut chunks = split_chunks(&munge_whitespace(text));
    chunks.reverse();
    let mut lines: Vec<String> = Vec::new();
    while !chunks.is_empty() {
        let mut cur: Vec<String> = Vec::new();
        let mut cur_len = 0;
        let indent = if lines.is_empty() {
            initial
        } else {
            subsequent
        };
        let w = width.saturating_sub(clen(indent));
        if !lines.is_empty() && chunks.last().is_some_and(|c| c.trim().is_empty()) {
            chunks.pop();
        }
        while let Some(last) = chunks.last() {
            let l = clen(last);
            if cur_len + l <= w {
                cur_len += l;
                if let Some(c) = chunks.pop() {
                    cur.push(c);
                }
            } else {
                break;
            }
        }
        if chunks.last().is_some_and(|c| clen(c) > w) {
            // _handle_long_word
            let space_left = if w < 1 { 1 } else { w - cur_len };
            if let Some(chunk) = chunks.pop() {
                let cs: Vec<char> = chunk.chars().collect();
                let mut end = space_left;
                if cs.len() > space_left {
                    if let Some(h) = cs[..space_left.min(cs.len())]
                        .iter()
                        .rposition(|c| *c == '-')
                    {
                        if h > 0 && cs[..h].iter().any(|c| *c != '-') {
                            end = h + 1;
                        }
                    }
                }
                let end = end.min(cs.len());
                cur.push(cs[..end].iter().collect());
                let rest: String = cs[end..].iter().collect();
                chunks.push(rest);
            }
        }
        if cur.last().is_some_and(|c| c.trim().is_empty()) {
            cur.pop();
        }
        if !cur.is_empty() {
            lines.push(format!("{indent}{}", cur.concat()));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_like_python_textwrap() {
        // Expected values from Python's textwrap.wrap(..., 70, initial_indent='# ',
        // subsequent_indent='# ').
        let t = "\"rule:admin_or_user\":\"((rule:context_is_admin) or (rule:is_user))\" has been deprecated since OpenStack 2023.2(Magnum 17.0.0) in favor of \"admin_or_project_member_user_or_cluster_user\":\"(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))\".";
        assert_eq!(
            wrap(t, 70, "# ", "# "),
            vec![
                "# \"rule:admin_or_user\":\"((rule:context_is_admin) or (rule:is_user))\"",
                "# has been deprecated since OpenStack 2023.2(Magnum 17.0.0) in favor",
                "# of \"admin_or_project_member_user_or_cluster_user\":\"(rule:context_is_",
                "# admin) or ((rule:project_member) and (rule:is_user))\".",
            ]
        );
        assert_eq!(
            split_chunks("a well-known magnum-service x--y"),
            vec!["a", " ", "well-", "known", " ", "magnum-", "service", " ", "x", "--", "y"]
        );
        assert!(wrap("", 70, "# ", "# ").is_empty());
    }

    #[test]
    fn help_text_paragraphs_and_literal_blocks() {
        assert_eq!(format_help_text(None), "#");
        assert_eq!(
            format_help_text(Some("First para.\n\n    literal  line\nSecond")),
            "# First para.\n#\n#     literal  line\n# Second"
        );
    }

    #[test]
    fn sample_starts_with_the_generic_rules() {
        let s = sample_yaml();
        assert!(s.starts_with("#\"context_is_admin\": \"role:admin\"\n\n"));
        assert!(s.ends_with("#\"nodegroup:update\": \"rule:admin_or_project_member\"\n\n"));
    }

    #[test]
    fn checked_in_sample_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(SAMPLE_PATH_IN_REPO);
        if std::env::var_os("OPENKEEL_REGENERATE_POLICY_SAMPLE").is_some() {
            write_sample(&path).expect("write the policy sample");
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == sample_yaml(),
            "{SAMPLE_PATH_IN_REPO} is stale; regenerate it with \
             `OPENKEEL_REGENERATE_POLICY_SAMPLE=1 cargo test -p openkeel-auth checked_in_sample_is_current`"
        );
    }
}
