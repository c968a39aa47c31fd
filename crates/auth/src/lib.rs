//! openkeel-auth: authentication and authorisation for the OpenKeel API.
//!
//! * [`authtoken`]: Keystone token validation as keystonemiddleware's `auth_token` does it
//!   (`[openkeel] auth_strategy = keystone`), with its cache; it reaches Keystone through
//!   `openkeel-cloud`'s session layer;
//! * [`noauth`]: the identity of a request when no token is validated (`auth_strategy =
//!   noauth`), with the embedded default's dev-mode identity;
//! * [`policy`]: the oslo.policy rule language, Magnum's default rules and the [`Enforcer`]
//!   that applies operator overrides.

pub mod authtoken;
pub mod fuzzing;
pub mod noauth;
pub mod policy;

pub use policy::{
    default_rules, parse_rule, sample_yaml, Check, EffectiveRule, Enforcer, EvalError, PolicyError,
    PolicyOptions, RuleDefault,
};
