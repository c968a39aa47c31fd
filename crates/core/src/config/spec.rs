//! The option table: one [`OptSpec`] per option, built with `const` constructors, and the
//! `config_section!` macro that turns a section's table into its typed struct.
//!
//! A section is written once:
//!
//! ```text
//! config_section! {
//!     /// Options for the Magnum API service.
//!     ApiSection = "api";
//!     from "magnum.conf" {
//!         /// The port for the Magnum API server.
//!         port: u16 = port(9511);
//!     }
//! }
//! ```
//!
//! The doc comment of each option is its help text; the field name is the option name (its
//! oslo `dest`); the expression gives the oslo type, default and constraints. The same table
//! drives parsing, defaults, validation, the `Debug` masking of secrets and the sample file.

/// The oslo.config type of an option: decides how a value is parsed and validated, and the
/// type note in the sample file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// `StrOpt`: any string, optionally restricted to `choices`.
    String,
    /// `BoolOpt`: `true/false`, `1/0`, `yes/no`, `on/off`, case-insensitive.
    Bool,
    /// `IntOpt`: an integer, optionally within `min`/`max`.
    Int,
    /// `FloatOpt`: a floating point number, optionally within `min`/`max`.
    Float,
    /// `PortOpt`: an integer from 0 to 65535.
    Port,
    /// `IPOpt`: an IPv4 or IPv6 address.
    IpAddress,
    /// `HostAddressOpt`: an IP address or a host name.
    HostAddress,
    /// `ListOpt`: comma-separated strings, each optionally restricted to `choices`.
    List,
    /// `MultiStrOpt`: every occurrence of the key, across all files, is one value.
    Multi,
}

impl OptKind {
    /// The type note oslo-config-generator prints after the help text.
    pub fn type_label(self) -> &'static str {
        match self {
            OptKind::String => "string value",
            OptKind::Bool => "boolean value",
            OptKind::Int => "integer value",
            OptKind::Float => "floating point value",
            OptKind::Port => "port value",
            OptKind::IpAddress => "IP address value",
            OptKind::HostAddress => "host address value",
            OptKind::List => "list value",
            OptKind::Multi => "multi valued",
        }
    }

    /// Whether `min`/`max` are printed and compared as integers.
    pub(crate) fn is_integer(self) -> bool {
        matches!(self, OptKind::Int | OptKind::Port)
    }
}

/// An option's built-in default, before interpolation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// No default (`None` in oslo): the field is an `Option` and stays `None`.
    Unset,
    /// A string default (string, IP address and host address options).
    Str(&'static str),
    /// A boolean default.
    Bool(bool),
    /// An integer default (integer and port options).
    Int(i64),
    /// A floating point default.
    Float(f64),
    /// A list default (list and multi-valued options).
    List(&'static [&'static str]),
}

/// A deprecated name an option is still read under, as oslo's `deprecated_opts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeprecatedName {
    /// The old group, or `None` for the option's own group.
    pub group: Option<&'static str>,
    /// The old name, or `None` for the option's own name.
    pub name: Option<&'static str>,
}

/// The old name `name` in the option's own group.
pub const fn dep(name: &'static str) -> DeprecatedName {
    DeprecatedName {
        group: None,
        name: Some(name),
    }
}

/// The option's own name in the old group `group`.
pub const fn dep_group(group: &'static str) -> DeprecatedName {
    DeprecatedName {
        group: Some(group),
        name: None,
    }
}

/// The old name `name` in the old group `group`.
pub const fn dep_in(group: &'static str, name: &'static str) -> DeprecatedName {
    DeprecatedName {
        group: Some(group),
        name: Some(name),
    }
}

/// One option: name, oslo type, default, constraints and help.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptSpec {
    /// The option name as written in the file (oslo's `dest`).
    pub name: &'static str,
    /// The oslo type.
    pub kind: OptKind,
    /// The built-in default.
    pub default: DefaultValue,
    /// The help text, as written in the table (see [`OptSpec::help_paragraphs`]).
    pub help: &'static str,
    /// The library or project that defines the option (`oslo.log`, `magnum.conf`, ...).
    pub source: &'static str,
    /// Smallest accepted value (integer, port and float options).
    pub min: Option<f64>,
    /// Largest accepted value (integer, port and float options).
    pub max: Option<f64>,
    /// Accepted values (string options), or accepted items (list options).
    pub choices: &'static [&'static str],
    /// Descriptions of `choices`, in the same order (may be empty).
    pub choice_help: &'static [&'static str],
    /// Whether `choices` are compared case-insensitively.
    pub ignore_case: bool,
    /// Whether the value is masked in `Debug` output.
    pub secret: bool,
    /// Whether oslo can change the value without a restart (noted in the sample).
    pub mutable: bool,
    /// Whether oslo marks the option as advanced (noted in the sample).
    pub advanced: bool,
    /// Deprecated names the option is also read under.
    pub deprecated: &'static [DeprecatedName],
    /// Set when the option is deprecated for removal; holds the reason (may be empty).
    pub deprecated_for_removal: Option<&'static str>,
    /// The default shown in the sample instead of the real one.
    pub sample_default: Option<&'static str>,
}

const fn base(kind: OptKind, default: DefaultValue) -> OptSpec {
    OptSpec {
        name: "",
        kind,
        default,
        help: "",
        source: "",
        min: None,
        max: None,
        choices: &[],
        choice_help: &[],
        ignore_case: false,
        secret: false,
        mutable: false,
        advanced: false,
        deprecated: &[],
        deprecated_for_removal: None,
        sample_default: None,
    }
}

/// A string option with a default.
pub const fn string(default: &'static str) -> OptSpec {
    base(OptKind::String, DefaultValue::Str(default))
}

/// A string option without a default.
pub const fn string_unset() -> OptSpec {
    base(OptKind::String, DefaultValue::Unset)
}

/// A boolean option.
pub const fn boolean(default: bool) -> OptSpec {
    base(OptKind::Bool, DefaultValue::Bool(default))
}

/// An integer option with a default.
pub const fn integer(default: i64) -> OptSpec {
    base(OptKind::Int, DefaultValue::Int(default))
}

/// An integer option without a default.
pub const fn integer_unset() -> OptSpec {
    base(OptKind::Int, DefaultValue::Unset)
}

/// A floating point option with a default.
pub const fn float(default: f64) -> OptSpec {
    base(OptKind::Float, DefaultValue::Float(default))
}

/// A floating point option without a default.
pub const fn float_unset() -> OptSpec {
    base(OptKind::Float, DefaultValue::Unset)
}

/// A port option (0 to 65535) with a default.
pub const fn port(default: u16) -> OptSpec {
    base(OptKind::Port, DefaultValue::Int(default as i64))
        .min(0)
        .max(65535)
}

/// A port option (0 to 65535) without a default.
pub const fn port_unset() -> OptSpec {
    base(OptKind::Port, DefaultValue::Unset).min(0).max(65535)
}

/// An IP address option with a default.
pub const fn ip_address(default: &'static str) -> OptSpec {
    base(OptKind::IpAddress, DefaultValue::Str(default))
}

/// An IP address option without a default.
pub const fn ip_address_unset() -> OptSpec {
    base(OptKind::IpAddress, DefaultValue::Unset)
}

/// A host address (IP address or host name) option with a default.
pub const fn host_address(default: &'static str) -> OptSpec {
    base(OptKind::HostAddress, DefaultValue::Str(default))
}

/// A host address (IP address or host name) option without a default.
pub const fn host_address_unset() -> OptSpec {
    base(OptKind::HostAddress, DefaultValue::Unset)
}

/// A comma-separated list option with a default.
pub const fn list(default: &'static [&'static str]) -> OptSpec {
    base(OptKind::List, DefaultValue::List(default))
}

/// A comma-separated list option without a default.
pub const fn list_unset() -> OptSpec {
    base(OptKind::List, DefaultValue::Unset)
}

/// A multi-valued option (the key repeated, one value per occurrence).
pub const fn multi(default: &'static [&'static str]) -> OptSpec {
    base(OptKind::Multi, DefaultValue::List(default))
}

impl OptSpec {
    /// Smallest accepted integer.
    pub const fn min(mut self, min: i64) -> Self {
        self.min = Some(min as f64);
        self
    }

    /// Largest accepted integer.
    pub const fn max(mut self, max: i64) -> Self {
        self.max = Some(max as f64);
        self
    }

    /// Smallest accepted floating point value.
    pub const fn min_float(mut self, min: f64) -> Self {
        self.min = Some(min);
        self
    }

    /// Largest accepted floating point value.
    pub const fn max_float(mut self, max: f64) -> Self {
        self.max = Some(max);
        self
    }

    /// Accepted values (for a list option: accepted items).
    pub const fn choices(mut self, choices: &'static [&'static str]) -> Self {
        self.choices = choices;
        self
    }

    /// Descriptions of the choices, in the same order.
    pub const fn choice_help(mut self, help: &'static [&'static str]) -> Self {
        self.choice_help = help;
        self
    }

    /// Compare choices case-insensitively.
    pub const fn ignore_case(mut self) -> Self {
        self.ignore_case = true;
        self
    }

    /// Mask the value in `Debug` output.
    pub const fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// oslo can change the value without a restart.
    pub const fn mutable(mut self) -> Self {
        self.mutable = true;
        self
    }

    /// oslo marks the option as advanced.
    pub const fn advanced(mut self) -> Self {
        self.advanced = true;
        self
    }

    /// Deprecated names the option is also read under.
    pub const fn deprecated(mut self, names: &'static [DeprecatedName]) -> Self {
        self.deprecated = names;
        self
    }

    /// The option is deprecated for removal, for `reason`.
    pub const fn deprecated_for_removal(mut self, reason: &'static str) -> Self {
        self.deprecated_for_removal = Some(reason);
        self
    }

    /// Show `default` in the sample instead of the real default.
    pub const fn sample_default(mut self, default: &'static str) -> Self {
        self.sample_default = Some(default);
        self
    }

    /// Set the name, help and source; used by `config_section!`.
    pub const fn named(
        mut self,
        name: &'static str,
        help: &'static str,
        source: &'static str,
    ) -> Self {
        self.name = name;
        self.help = help;
        self.source = source;
        self
    }

    /// The help text as paragraphs: the lines of the table's doc comment, trimmed and joined
    /// with spaces, with an empty line starting a new paragraph.
    pub fn help_paragraphs(&self) -> Vec<String> {
        paragraphs(self.help)
    }

    /// The help text as one string, paragraphs separated by a blank line.
    pub fn help_text(&self) -> String {
        self.help_paragraphs().join("\n\n")
    }
}

/// Doc-comment text as paragraphs: lines trimmed and joined with spaces, an empty line
/// starting a new paragraph.
pub(crate) fn paragraphs(text: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs
}

/// One section: its name as written in the file, its help and its options in table order.
#[derive(Debug, Clone, Copy)]
pub struct SectionSpec {
    /// The group name (`DEFAULT`, `api`, ...).
    pub name: &'static str,
    /// The section's help text.
    pub help: &'static str,
    /// The options, in table order.
    pub options: &'static [OptSpec],
}

impl SectionSpec {
    /// The option called `name` (its `dest`), if the section has one.
    pub fn option(&self, name: &str) -> Option<&'static OptSpec> {
        self.options.iter().find(|opt| opt.name == name)
    }
}

/// Defines one section struct from its option table (see the module documentation).
macro_rules! config_section {
    (
        $(#[doc = $sdoc:literal])+
        $name:ident = $group:literal;
        $(
            from $source:literal {
                $(
                    $(#[doc = $doc:literal])+
                    $field:ident : $ty:ty = $spec:expr;
                )*
            }
        )+
    ) => {
        $(#[doc = $sdoc])+
        #[doc = ""]
        #[doc = concat!("Section `[", $group, "]`; each field is the option of the same name.")]
        #[derive(Clone, PartialEq)]
        pub struct $name {
            $($(
                $(#[doc = $doc])+
                pub $field: $ty,
            )*)+
        }

        impl $name {
            /// The section name as written in the file.
            pub const GROUP: &'static str = $group;

            /// The option table, in sample order.
            pub const OPTIONS: &'static [$crate::config::spec::OptSpec] = &[
                $($(
                    $spec.named(stringify!($field), concat!($($doc, "\n"),+), $source),
                )*)+
            ];

            /// The section's table, for the loader and the sample generator.
            pub const SPEC: $crate::config::spec::SectionSpec = $crate::config::spec::SectionSpec {
                name: $group,
                help: concat!($($sdoc, "\n"),+),
                options: Self::OPTIONS,
            };

            pub(crate) fn resolve(resolver: &mut $crate::config::resolve::Resolver<'_>) -> Self {
                Self {
                    $($(
                        $field: resolver.field(&Self::SPEC, stringify!($field)),
                    )*)+
                }
            }
        }

        impl Default for $name {
            /// Every option at its default.
            fn default() -> Self {
                Self::resolve(&mut $crate::config::resolve::Resolver::new(&[]))
            }
        }

        impl std::fmt::Debug for $name {
            /// Like a derived `Debug`, with secret options masked.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let mut out = f.debug_struct(stringify!($name));
                $($(
                    let secret = Self::SPEC
                        .option(stringify!($field))
                        .is_some_and(|opt| opt.secret);
                    if secret {
                        out.field(stringify!($field), &$crate::config::value::Masked(&self.$field));
                    } else {
                        out.field(stringify!($field), &self.$field);
                    }
                )*)+
                out.finish()
            }
        }
    };
}

pub(crate) use config_section;
