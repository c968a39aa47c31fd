//! An oslo.policy-compatible policy engine with Magnum 23.0.0's default rules.
//!
//! * [`parse_rule`] / [`Check`]: the rule language exactly as oslo.policy 6.0 parses it
//!   (`oslo_policy/_parser.py`): `role:`, `rule:`, generic `key:value` checks with
//!   `%(name)s` substitution from the target, `@`, `!`, `and` / `or` / `not`, parentheses, the
//!   greedy shift-reduce precedence (`not` > `and` > `or`), the legacy list-of-lists form, and
//!   fail-closed handling of malformed rules (a rule that does not reduce is `!`, with a warning).
//! * Evaluation as `oslo_policy/_checks.py` does it, including Python's `str()` comparisons
//!   (`None` matches `None`, `True` matches `"True"`), `ast.literal_eval` of a generic check's
//!   kind, and the exceptions that escape oslo.policy (reported as [`EvalError`]).
//! * [`default_rules`]: the 66 rules registered by `magnum.common.policies.list_rules()`.
//! * [`Enforcer`]: defaults plus overrides from `[oslo_policy] policy_file` and `policy_dirs`,
//!   `enforce_new_defaults`, scope checks, `policy_default_rule`, reload on change.
//! * [`sample_yaml`]: the sample policy file as `oslopolicy-sample-generator --namespace magnum`
//!   writes it.

mod check;
mod defaults;
mod document;
mod enforcer;
mod parser;
mod percent;
mod sample;

pub use check::Check;
pub use defaults::{default_rules, DeprecatedRule, Operation, RuleDefault};
pub(crate) use enforcer::parse_file_bytes;
pub use enforcer::{
    EffectiveRule, Enforcer, PolicyOptions, RuleOrigin, TokenScope, RELOAD_CHECK_INTERVAL,
};
pub use parser::{parse_rule, parse_rule_with_warnings};
pub use sample::{sample_yaml, write_sample, SAMPLE_PATH_IN_REPO};

use std::path::PathBuf;

/// The Python exception oslo.policy would let escape from `Enforcer.enforce`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PyException {
    TypeError,
    ValueError,
    SyntaxError,
    AttributeError,
}

impl PyException {
    /// The Python class name (`"TypeError"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PyException::TypeError => "TypeError",
            PyException::ValueError => "ValueError",
            PyException::SyntaxError => "SyntaxError",
            PyException::AttributeError => "AttributeError",
        }
    }
}

/// Why a rule could not be evaluated to true or false.
///
/// oslo.policy only catches `KeyError` (a `%(key)s` missing from the target, or a credential
/// path that does not exist): those make a check false. Everything else raises out of
/// `Enforcer.enforce` (Magnum then answers 500). [`Enforcer::enforce`] fails closed on these
/// (false, logged as an error); [`Enforcer::try_enforce`] reports them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Python would raise this exception.
    #[error("{}: {message}", exception.name())]
    Python {
        exception: PyException,
        message: String,
    },
    /// The credentials are not a JSON object (oslo.policy raises `InvalidContextObject`).
    #[error("credentials must be a JSON object (oslo.policy raises InvalidContextObject)")]
    InvalidCredentials,
    /// Something Python would do that this engine does not: the `http:`/`https:` external
    /// checks (a REST call per check), rare `%` conversions, set literals as check kinds.
    #[error("not supported by OpenKeel's policy engine: {0}")]
    Unsupported(String),
}

impl EvalError {
    pub(crate) fn python(exception: PyException, message: impl Into<String>) -> Self {
        EvalError::Python {
            exception,
            message: message.into(),
        }
    }

    /// The Python exception class name this error stands for (`"InvalidContextObject"` and
    /// `"Unsupported"` for the two non-Python variants).
    pub fn python_name(&self) -> &'static str {
        match self {
            EvalError::Python { exception, .. } => exception.name(),
            EvalError::InvalidCredentials => "InvalidContextObject",
            EvalError::Unsupported(_) => "Unsupported",
        }
    }
}

/// Errors loading policy files.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse policy file {}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("policy file {}: rule {name:?}: {message}", path.display())]
    InvalidRule {
        path: PathBuf,
        name: String,
        message: String,
    },
    #[error("policy_dirs entry {} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
}
