//! The sample configuration file, in oslo-config-generator's format
//! (`oslo_config/generator.py`), produced from the option tables.

use super::spec::{paragraphs, DefaultValue, OptKind, OptSpec, SectionSpec};
use crate::pyvalue::float_repr;

/// oslo-config-generator's default `wrap_width`.
const WRAP_WIDTH: usize = 79;

/// The whole sample: `[DEFAULT]` first, then the other sections sorted by name; in each
/// section the options grouped by the library that defines them (sorted), in table order.
pub fn sample() -> String {
    let mut sections: Vec<&SectionSpec> = super::SECTIONS.to_vec();
    sections.sort_by_key(|s| (s.name != "DEFAULT", s.name));
    let mut out = String::new();
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        write_section(&mut out, section);
    }
    out
}

fn write_section(out: &mut String, section: &SectionSpec) {
    out.push_str(&format!("[{}]\n", section.name));
    let help = paragraphs(section.help).join("\n\n");
    if !help.is_empty() {
        write_help(out, &help);
    }
    let mut sources: Vec<&str> = Vec::new();
    for opt in section.options {
        if !sources.contains(&opt.source) {
            sources.push(opt.source);
        }
    }
    sources.sort_unstable();
    for source in sources {
        out.push_str(&format!("\n#\n# From {source}\n#\n"));
        let mut opts: Vec<&OptSpec> = section
            .options
            .iter()
            .filter(|o| o.source == source)
            .collect();
        opts.sort_by_key(|o| o.advanced);
        for opt in opts {
            out.push('\n');
            write_option(out, section.name, opt);
        }
    }
}

fn write_option(out: &mut String, group: &str, opt: &OptSpec) {
    let mut help = opt.help_text();
    if opt.deprecated_for_removal.is_some() && !help.starts_with("DEPRECATED") {
        help = format!("DEPRECATED: {help}");
    }
    let label = opt.kind.type_label();
    let help = if help.is_empty() {
        format!("({label})")
    } else {
        format!("{help} ({label})")
    };
    write_help(out, &help);

    let bound = |b: f64| {
        if opt.kind.is_integer() {
            format!("{}", b as i64)
        } else {
            float_repr(b)
        }
    };
    if let Some(min) = opt.min {
        out.push_str(&format!("# Minimum value: {}\n", bound(min)));
    }
    if let Some(max) = opt.max {
        out.push_str(&format!("# Maximum value: {}\n", bound(max)));
    }
    if !opt.choices.is_empty() && opt.kind != OptKind::List {
        out.push_str("# Possible values:\n");
        for (i, choice) in opt.choices.iter().enumerate() {
            let text = if choice.is_empty() { "''" } else { choice };
            let desc = opt
                .choice_help
                .get(i)
                .filter(|d| !d.is_empty())
                .copied()
                .unwrap_or("<No description provided>");
            write_help(out, &format!("{text} - {desc}"));
        }
    }
    if opt.mutable {
        out.push_str("# Note: This option can be changed without restarting.\n");
    }
    for dep in opt.deprecated {
        if let Some(name) = dep.name.filter(|n| !n.contains('-')) {
            out.push_str(&format!(
                "# Deprecated group/name - [{}]/{}\n",
                dep.group.unwrap_or(group),
                name
            ));
        }
    }
    if let Some(reason) = opt.deprecated_for_removal {
        out.push_str("# This option is deprecated for removal.\n");
        out.push_str("# Its value may be silently ignored in the future.\n");
        if !reason.is_empty() {
            write_help(out, &format!("Reason: {reason}"));
        }
    }
    if opt.advanced {
        out.push_str(
            "# Advanced Option: intended for advanced users and not used\n\
             # by the majority of users, and might have a significant\n\
             # effect on stability and/or performance.\n",
        );
    }
    if opt.sample_default.is_some() {
        out.push_str(
            "#\n\
             # This option has a sample default set, which means that\n\
             # its actual default value may vary from the one documented\n\
             # below.\n",
        );
    }
    for default in sample_defaults(opt) {
        let default = if default.is_empty() {
            default
        } else {
            format!(" {}", default.replace('\n', "\n#    "))
        };
        out.push_str(&format!("#{} ={default}\n", opt.name));
    }
}

/// oslo's `quote_trailing_and_leading_space`.
fn quote_spaces(s: &str) -> String {
    if s.trim() != s {
        format!("\"{s}\"")
    } else {
        s.to_owned()
    }
}

/// The default as oslo's `format_defaults` prints it: one entry per `#name = ...` line.
fn sample_defaults(opt: &OptSpec) -> Vec<String> {
    if let Some(sample) = opt.sample_default {
        return vec![sample.to_owned()];
    }
    match (&opt.default, opt.kind) {
        (DefaultValue::List(items), OptKind::Multi) if !items.is_empty() => {
            items.iter().map(|s| quote_spaces(s)).collect()
        }
        (_, OptKind::Multi) => vec![String::new()],
        (DefaultValue::Unset, _) => vec!["<None>".to_owned()],
        (DefaultValue::Str(s), _) => vec![quote_spaces(s)],
        (DefaultValue::Bool(b), _) => vec![b.to_string()],
        (DefaultValue::Int(i), _) => vec![i.to_string()],
        (DefaultValue::Float(f), _) => vec![float_repr(*f)],
        (DefaultValue::List(items), _) => {
            vec![items
                .iter()
                .map(|s| quote_spaces(s))
                .collect::<Vec<_>>()
                .join(",")]
        }
    }
}

/// `textwrap.wrap(line, 79, initial_indent='# ', subsequent_indent='# ',
/// break_long_words=False)` for every line of `text`, an empty line becoming `#`.
fn write_help(out: &mut String, text: &str) {
    for line in text.split('\n') {
        let wrapped = wrap(line, WRAP_WIDTH, "# ");
        if wrapped.is_empty() {
            out.push_str("#\n");
        }
        for l in wrapped {
            out.push_str(&l);
            out.push('\n');
        }
    }
}

/// Splits into alternating runs of whitespace and non-whitespace.
fn chunks(text: &str) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    let mut last_space: Option<bool> = None;
    for c in text.chars() {
        let c = if c == '\t' { ' ' } else { c };
        let space = c.is_whitespace();
        match chunks.last_mut() {
            Some(chunk) if last_space == Some(space) => chunk.push(c),
            _ => chunks.push(c.to_string()),
        }
        last_space = Some(space);
    }
    chunks
}

/// Python's `TextWrapper._wrap_chunks`, without hyphen breaking.
fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut chunks = chunks(text);
    chunks.reverse();
    let avail = width.saturating_sub(indent.chars().count());
    let mut lines: Vec<String> = Vec::new();
    while !chunks.is_empty() {
        if !lines.is_empty() && chunks.last().is_some_and(|c| c.trim().is_empty()) {
            chunks.pop();
        }
        let mut line: Vec<String> = Vec::new();
        let mut len = 0;
        while let Some(chunk) = chunks.last() {
            let l = chunk.chars().count();
            if len + l <= avail {
                len += l;
                line.extend(chunks.pop());
            } else {
                break;
            }
        }
        if line.is_empty() {
            if let Some(long) = chunks.last().filter(|c| c.chars().count() > avail) {
                line.push(long.clone());
                chunks.pop();
            }
        }
        if line.last().is_some_and(|c| c.trim().is_empty()) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(format!("{indent}{}", line.concat()));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_matches_textwrap() {
        let text = "Name of this node. This can be an opaque identifier. It is not necessarily a hostname, FQDN, or IP address. However, the node name must be valid within an AMQP key. (host address value)";
        assert_eq!(
            wrap(text, 79, "# "),
            [
                "# Name of this node. This can be an opaque identifier. It is not necessarily a",
                "# hostname, FQDN, or IP address. However, the node name must be valid within an",
                "# AMQP key. (host address value)",
            ]
        );
        let long = "x".repeat(100);
        assert_eq!(
            wrap(&format!("a {long} b"), 79, "# "),
            ["# a", &format!("# {long}"), "# b"]
        );
        assert!(wrap("", 79, "# ").is_empty());
    }

    #[test]
    fn options_render_like_oslo_config_generator() {
        let mut out = String::new();
        let opt = super::super::spec::integer(1).min(1).named(
            "rabbit_retry_interval",
            " How frequently to retry connecting with RabbitMQ.\n",
            "oslo.messaging",
        );
        write_option(&mut out, "oslo_messaging_rabbit", &opt);
        assert_eq!(
            out,
            "# How frequently to retry connecting with RabbitMQ. (integer value)\n\
             # Minimum value: 1\n\
             #rabbit_retry_interval = 1\n"
        );

        const DEPRECATED: &[super::super::spec::DeprecatedName] = &[
            super::super::spec::dep("old_name"),
            super::super::spec::dep("bad-name"),
        ];
        let mut out = String::new();
        let opt = super::super::spec::string("none")
            .choices(&["interval", "none"])
            .choice_help(&["Rotate logs at predefined time intervals.", ""])
            .deprecated(DEPRECATED)
            .named("log_rotation_type", " Log rotation type.\n", "oslo.log");
        write_option(&mut out, "DEFAULT", &opt);
        assert_eq!(
            out,
            "# Log rotation type. (string value)\n\
             # Possible values:\n\
             # interval - Rotate logs at predefined time intervals.\n\
             # none - <No description provided>\n\
             # Deprecated group/name - [DEFAULT]/old_name\n\
             #log_rotation_type = none\n"
        );
    }

    #[test]
    fn defaults_render_like_oslo() {
        use super::super::spec::*;
        assert_eq!(sample_defaults(&string("")), [""]);
        assert_eq!(
            sample_defaults(&string("[instance: %(uuid)s] ")),
            ["\"[instance: %(uuid)s] \""]
        );
        assert_eq!(sample_defaults(&string_unset()), ["<None>"]);
        assert_eq!(sample_defaults(&boolean(true)), ["true"]);
        assert_eq!(sample_defaults(&float(60.0)), ["60.0"]);
        assert_eq!(sample_defaults(&list(&["a", "b"])), ["a,b"]);
        assert_eq!(sample_defaults(&list(&[])), [""]);
        assert_eq!(sample_defaults(&multi(&[])), [""]);
        assert_eq!(
            sample_defaults(&multi(&["policy.d", "x"])),
            ["policy.d", "x"]
        );
        assert_eq!(
            sample_defaults(&string("x").sample_default("node1")),
            ["node1"]
        );
    }
}
