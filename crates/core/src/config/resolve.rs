//! Option lookup across the parsed files, `$` interpolation and type conversion, following
//! `oslo_config/cfg.py` (`_Namespace._get_file_value`, `ConfigOpts._do_get`, `_substitute`,
//! `StrSubWrapper`).
//!
//! * Single-valued options: the last file parsed that sets the option wins, and within that
//!   file its last assignment. In each file the option's own name is looked up before its
//!   deprecated names.
//! * Multi-valued options: every assignment, of every name, in every file, in parse order.
//! * Interpolation runs on the raw text before conversion (and on string and list defaults):
//!   `$name` / `${name}` is the option `name` of the same group, else of `[DEFAULT]`;
//!   `$group.name` / `${group.name}` is the option `name` of `[group]`; `$$` and `\$` are a
//!   literal `$`; a `$` not followed by a name is kept as is. The reference expands to Python's
//!   `str()` of the referenced option's converted value (`True`, `1.0`, `['a', 'b']`, and the
//!   empty string for `None`). An unknown option or group, or a reference cycle, is an error.
//!   Unlike oslo, `${DEFAULT.name}` is also accepted.

use std::collections::HashMap;

use super::error::{ConfigError, Location};
use super::ini::{normalize_group, ParsedFile};
use super::spec::{DefaultValue, OptKind, OptSpec, SectionSpec};
use super::value::{self, FieldValue, Value};

type Key = (&'static str, &'static str);

/// Resolves every option against a sequence of parsed files (earliest first).
pub(crate) struct Resolver<'a> {
    layers: &'a [ParsedFile],
    /// `None` marks an option whose value failed (its error is already recorded).
    memo: HashMap<Key, Option<Value>>,
    stack: Vec<Key>,
    errors: Vec<ConfigError>,
}

/// A value found in a file.
struct Found {
    text: String,
    location: Location,
}

impl<'a> Resolver<'a> {
    pub(crate) fn new(layers: &'a [ParsedFile]) -> Self {
        Resolver {
            layers,
            memo: HashMap::new(),
            stack: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The errors met so far, in the order they were found.
    pub(crate) fn into_errors(self) -> Vec<ConfigError> {
        self.errors
    }

    /// The value of option `name` of `section`, as the field's Rust type.
    pub(crate) fn field<T: FieldValue>(
        &mut self,
        section: &'static SectionSpec,
        name: &'static str,
    ) -> T {
        let Some(spec) = section.option(name) else {
            self.table_error(section.name, name);
            return T::default();
        };
        match self.value(section.name, spec) {
            Some(value) => match T::from_value(value) {
                Some(field) => field,
                None => {
                    self.table_error(section.name, name);
                    T::default()
                }
            },
            None => T::default(),
        }
    }

    fn table_error(&mut self, group: &'static str, option: &'static str) {
        self.errors.push(ConfigError::Table { group, option });
    }

    /// The converted value of an option (memoised), or `None` if it failed.
    fn value(&mut self, group: &'static str, spec: &'static OptSpec) -> Option<Value> {
        let key = (group, spec.name);
        if let Some(known) = self.memo.get(&key) {
            return known.clone();
        }
        self.stack.push(key);
        let result = self.compute(group, spec);
        self.stack.pop();
        self.memo.insert(key, result.clone());
        result
    }

    fn compute(&mut self, group: &'static str, spec: &'static OptSpec) -> Option<Value> {
        if spec.kind == OptKind::Multi {
            let found = self.lookup_all(group, spec);
            if found.is_empty() {
                return self.default_value(group, spec);
            }
            let mut items = Vec::with_capacity(found.len());
            for f in found {
                let text = self.substitute(&f.text, group, spec, Some(&f.location))?;
                match value::convert_item(spec, &text) {
                    Ok(item) => items.push(item),
                    Err(reason) => {
                        self.invalid(group, spec, text, reason, f.location);
                        return None;
                    }
                }
            }
            return Some(Value::List(Some(items)));
        }
        let Some(found) = self.lookup_last(group, spec) else {
            return self.default_value(group, spec);
        };
        let text = self.substitute(&found.text, group, spec, Some(&found.location))?;
        match value::convert(spec, &text) {
            // An empty integer or float is oslo's None; a field with a default keeps it.
            Ok(v) if v.is_none() && spec.default != DefaultValue::Unset => {
                self.default_value(group, spec)
            }
            Ok(v) => Some(v),
            Err(reason) => {
                self.invalid(group, spec, text, reason, found.location);
                None
            }
        }
    }

    fn invalid(
        &mut self,
        group: &'static str,
        spec: &'static OptSpec,
        value: String,
        reason: String,
        location: Location,
    ) {
        self.errors.push(ConfigError::InvalidValue {
            group,
            option: spec.name,
            value,
            reason,
            location: Some(location),
        });
    }

    /// The default, with its strings interpolated.
    fn default_value(&mut self, group: &'static str, spec: &'static OptSpec) -> Option<Value> {
        match (spec.kind, &spec.default) {
            (OptKind::String | OptKind::IpAddress | OptKind::HostAddress, DefaultValue::Str(s)) => {
                let text = self.substitute(s, group, spec, None)?;
                Some(Value::Str(Some(text)))
            }
            (OptKind::List | OptKind::Multi, DefaultValue::List(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    out.push(self.substitute(item, group, spec, None)?);
                }
                Some(Value::List(Some(out)))
            }
            (kind, default) => Some(Value::from_default(kind, default)),
        }
    }

    /// The `(section, key)` pairs an option is read under: its own, then its deprecated ones.
    fn names(group: &str, spec: &OptSpec) -> Vec<(String, &'static str)> {
        let mut names = vec![(normalize_group(group), spec.name)];
        for dep in spec.deprecated {
            let g = dep
                .group
                .map_or_else(|| normalize_group(group), normalize_group);
            names.push((g, dep.name.unwrap_or(spec.name)));
        }
        names
    }

    fn lookup_last(&self, group: &str, spec: &OptSpec) -> Option<Found> {
        let names = Self::names(group, spec);
        for layer in self.layers.iter().rev() {
            for (section, key) in &names {
                if let Some(last) = layer.values(section, key).and_then(<[_]>::last) {
                    return Some(Found {
                        text: last.text.clone(),
                        location: Location {
                            path: layer.path.clone(),
                            line: last.line,
                        },
                    });
                }
            }
        }
        None
    }

    fn lookup_all(&self, group: &str, spec: &OptSpec) -> Vec<Found> {
        let names = Self::names(group, spec);
        let mut found = Vec::new();
        for layer in self.layers {
            for (section, key) in names.iter().rev() {
                for v in layer.values(section, key).unwrap_or_default() {
                    found.push(Found {
                        text: v.text.clone(),
                        location: Location {
                            path: layer.path.clone(),
                            line: v.line,
                        },
                    });
                }
            }
        }
        found
    }

    /// `string.Template.safe_substitute` with oslo's id pattern `[_a-z][._a-z0-9]*`
    /// (case-insensitive), after turning `\$` into `$$`.
    fn substitute(
        &mut self,
        text: &str,
        group: &'static str,
        holder: &'static OptSpec,
        location: Option<&Location>,
    ) -> Option<String> {
        if !text.contains('$') {
            return Some(text.to_owned());
        }
        let text = text.replace("\\$", "$$");
        let chars: Vec<char> = text.chars().collect();
        let is_start = |c: char| c == '_' || c.is_ascii_alphabetic();
        let is_part = |c: char| c == '_' || c == '.' || c.is_ascii_alphanumeric();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c != '$' {
                out.push(c);
                i += 1;
                continue;
            }
            match chars.get(i + 1) {
                Some('$') => {
                    out.push('$');
                    i += 2;
                }
                Some(&n) if is_start(n) => {
                    let end = (i + 1..chars.len())
                        .find(|&j| !is_part(chars[j]))
                        .unwrap_or(chars.len());
                    let name: String = chars[i + 1..end].iter().collect();
                    out.push_str(&self.reference(&name, group, holder, location)?);
                    i = end;
                }
                Some('{') => {
                    let start = i + 2;
                    let end = (start..chars.len())
                        .find(|&j| !is_part(chars[j]))
                        .unwrap_or(chars.len());
                    let braced =
                        end > start && is_start(chars[start]) && chars.get(end) == Some(&'}');
                    if braced {
                        let name: String = chars[start..end].iter().collect();
                        out.push_str(&self.reference(&name, group, holder, location)?);
                        i = end + 1;
                    } else {
                        out.push('$');
                        i += 1;
                    }
                }
                _ => {
                    out.push('$');
                    i += 1;
                }
            }
        }
        Some(out)
    }

    /// Expands one reference, seen in option `holder` of `group`.
    fn reference(
        &mut self,
        name: &str,
        group: &'static str,
        holder: &'static OptSpec,
        location: Option<&Location>,
    ) -> Option<String> {
        let target = match name.split_once('.') {
            Some((g, o)) => match section_named(g) {
                Some(section) => section
                    .option(o)
                    .map(|spec| (section.name, spec))
                    .ok_or_else(|| format!("no option {o} in group [{g}]")),
                None => Err(format!("no such group [{g}]")),
            },
            None => section_named(group)
                .and_then(|s| s.option(name).map(|spec| (s.name, spec)))
                .or_else(|| {
                    section_named("DEFAULT").and_then(|s| s.option(name).map(|spec| (s.name, spec)))
                })
                .ok_or_else(|| format!("no option {name} in group [{group}] or [DEFAULT]")),
        };
        let error = |reason: String| ConfigError::Interpolation {
            group,
            option: holder.name,
            reference: name.to_owned(),
            reason,
            location: location.cloned(),
        };
        let (target_group, spec) = match target {
            Ok(t) => t,
            Err(reason) => {
                self.errors.push(error(reason));
                return None;
            }
        };
        if self.stack.contains(&(target_group, spec.name)) {
            let cycle: Vec<String> = self
                .stack
                .iter()
                .map(|(g, o)| format!("[{g}] {o}"))
                .chain(std::iter::once(format!("[{target_group}] {}", spec.name)))
                .collect();
            self.errors
                .push(error(format!("reference cycle {}", cycle.join(" -> "))));
            return None;
        }
        self.value(target_group, spec).map(|v| v.render())
    }
}

/// The registered section with exactly this name.
fn section_named(name: &str) -> Option<&'static SectionSpec> {
    super::SECTIONS.iter().copied().find(|s| s.name == name)
}
