//! openkeel-auth: authentication and authorisation for the OpenKeel API.
//!
//! [`policy`]: the oslo.policy rule language, Magnum's default rules and the [`Enforcer`]
//! that applies operator overrides.

pub mod policy;

pub use policy::{
    default_rules, parse_rule, sample_yaml, Check, EffectiveRule, Enforcer, EvalError, PolicyError,
    PolicyOptions, RuleDefault,
};
