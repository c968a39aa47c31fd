//! The enforcer: Magnum's registered defaults plus operator overrides, evaluated as
//! `oslo_policy.policy.Enforcer` (6.0) does.
//!
//! Rule set construction follows `Enforcer.load_rules`: the policy file's rules replace the
//! rule set, each `policy_dirs` directory's files (sorted, dot-files skipped) are applied on top,
//! then every registered default not overridden is added — with its deprecated check string
//! OR-ed in when `enforce_new_defaults` is false, and with oslo.policy's handling of an override
//! written under a deprecated rule's name.
//!
//! Differences from oslo.policy, all deliberate:
//! * Files are re-read by [`Enforcer::reload_if_changed`] (call it periodically or per request),
//!   not inside every `enforce`; a change of any modification time (not only an increase)
//!   triggers a reload, and a file that fails to load leaves the previous rules in force and
//!   reports the error on every call until it is fixed (oslo.policy raises once, inside one
//!   request, then silently keeps the old rules).
//! * Relative paths are searched only in [`PolicyOptions::config_dirs`], in order (oslo.config
//!   also searches `~/.magnum`, `~`, `/etc/magnum`, `/etc`: pass those in `config_dirs` when
//!   wanted).
//! * Exceptions Python would raise during evaluation deny in [`Enforcer::enforce`] (logged) and
//!   are returned by [`Enforcer::try_enforce`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use indexmap::IndexMap;
use openkeel_core::pyvalue::PyValue;
use serde_json::Value;

use super::check::{Check, Evaluation, RuleLookup};
use super::defaults::{default_rules, find_default, RuleDefault};
use super::document::parse_document;
use super::parser::{parse_rule_value, parse_rule_with_warnings};
use super::{EvalError, PolicyError};

/// The `[oslo_policy]` options that shape the rule set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyOptions {
    /// `policy_file` (oslo.policy default `policy.yaml`); `None` = no policy file at all.
    /// Relative paths are looked up in `config_dirs`; a file that does not exist is not an
    /// error (the defaults apply), as in oslo.policy.
    pub policy_file: Option<PathBuf>,
    /// `policy_dirs` (default `["policy.d"]`): directories whose files override, applied in
    /// order, each directory's files in sorted name order. Missing directories are skipped.
    pub policy_dirs: Vec<PathBuf>,
    /// Where relative `policy_file` / `policy_dirs` are searched, first match wins (oslo.config
    /// `find_file`: `--config-dir`, the directories of the `--config-file`s, last first, ...).
    pub config_dirs: Vec<PathBuf>,
    /// `enforce_new_defaults` (default true): when false a default with a deprecated check
    /// string evaluates `new or deprecated`.
    pub enforce_new_defaults: bool,
    /// Whether a rule's `scope_types` refuse tokens of another scope (default true). oslo.policy
    /// 6.0 (the version Magnum 23.0.0 runs with) always does; false gives the older
    /// `enforce_scope = False` behaviour (a warning only).
    pub enforce_scope: bool,
}

impl Default for PolicyOptions {
    /// oslo.policy's defaults, with no configuration directory.
    fn default() -> Self {
        PolicyOptions {
            policy_file: Some(PathBuf::from("policy.yaml")),
            policy_dirs: vec![PathBuf::from("policy.d")],
            config_dirs: Vec::new(),
            enforce_new_defaults: true,
            enforce_scope: true,
        }
    }
}

/// Where an effective rule comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOrigin {
    /// A registered default, as registered.
    Default,
    /// A registered default OR-ed with its deprecated check string (`enforce_new_defaults`
    /// false).
    DefaultOrDeprecated,
    /// A registered default replaced by an override written under its deprecated rule's name
    /// (`name` in `file`).
    DeprecatedNameOverride { name: String, file: PathBuf },
    /// An override (or an extra rule) from this policy file.
    File(PathBuf),
}

/// One rule of the effective rule set.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveRule {
    pub name: String,
    pub check: Check,
    /// oslo.policy's canonical `str(check)`.
    pub check_str: String,
    pub origin: RuleOrigin,
}

/// The scope oslo.policy infers from the credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenScope {
    Project,
    Domain,
    System,
}

impl TokenScope {
    /// `system` when `creds["system"]` is truthy, `domain` when `creds["domain_id"]` is, else
    /// `project`. (Magnum's `to_dict()` has `domain`, not `domain_id`, so its tokens are never
    /// domain-scoped; `system_scope` is copied to `system` by the enforcer first.)
    pub fn of(creds: &Value) -> TokenScope {
        if creds.get("system").is_some_and(truthy) {
            TokenScope::System
        } else if creds.get("domain_id").is_some_and(truthy) {
            TokenScope::Domain
        } else {
            TokenScope::Project
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TokenScope::Project => "project",
            TokenScope::Domain => "domain",
            TokenScope::System => "system",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct SourceStamp {
    /// The resolved policy file and its modification time.
    file: Option<(PathBuf, Option<SystemTime>)>,
    /// Each resolved policy directory and the newest modification time of it and its entries.
    dirs: Vec<(PathBuf, Option<SystemTime>)>,
}

#[derive(Debug, Clone)]
struct Entry {
    check: Check,
    origin: RuleOrigin,
}

#[derive(Debug)]
struct RuleSet {
    rules: IndexMap<String, Entry>,
    default_rule: String,
    stamp: SourceStamp,
    files: Vec<PathBuf>,
    /// Some rule mentions `auth_token_info` (see [`Enforcer::reads_token_info`]).
    reads_token_info: bool,
    /// The target keys the rules substitute (`%(key)s`), `None` when some rule may read the
    /// target whole (see [`Enforcer::enforce_on`]).
    target_keys: Option<Vec<String>>,
}

impl RuleLookup for RuleSet {
    /// `Rules.__getitem__` with `__missing__`: an unknown name falls back to the default rule
    /// when that names an existing rule.
    fn lookup(&self, name: &str) -> Option<(&str, &Check)> {
        if let Some((k, e)) = self.rules.get_key_value(name) {
            return Some((k.as_str(), &e.check));
        }
        if self.default_rule.is_empty() {
            return None;
        }
        self.rules
            .get_key_value(self.default_rule.as_str())
            .map(|(k, e)| (k.as_str(), &e.check))
    }
}

/// Magnum's policy enforcer. Cheap to share (`Arc<Enforcer>`); `enforce` takes a read lock
/// only long enough to clone an `Arc` of the current rule set.
#[derive(Debug)]
pub struct Enforcer {
    options: PolicyOptions,
    default_rule: String,
    state: RwLock<Arc<RuleSet>>,
    reload: Mutex<()>,
    /// When [`Enforcer::reload_if_due`] last looked at the files (ms since the enforcer was
    /// built).
    last_check_ms: AtomicU64,
    born: Instant,
}

/// How often [`Enforcer::reload_if_due`] looks at the policy files' modification times.
pub const RELOAD_CHECK_INTERVAL: Duration = Duration::from_millis(100);

impl Enforcer {
    /// Build the rule set from Magnum's defaults and the configured policy files, with
    /// oslo.policy's default `policy_default_rule` (`default`).
    pub fn new(options: PolicyOptions) -> Result<Enforcer, PolicyError> {
        Enforcer::with_default_rule(options, "default")
    }

    /// As [`Enforcer::new`] with another `[oslo_policy] policy_default_rule`: the rule that
    /// unknown rule names (and `rule:` references to them) evaluate, when it exists.
    /// An empty name disables the fallback.
    pub fn with_default_rule(
        options: PolicyOptions,
        default_rule: &str,
    ) -> Result<Enforcer, PolicyError> {
        let stamp = stamp_sources(&options)?;
        let set = build(&options, default_rule, stamp)?;
        Ok(Enforcer {
            options,
            default_rule: default_rule.to_string(),
            state: RwLock::new(Arc::new(set)),
            reload: Mutex::new(()),
            last_check_ms: AtomicU64::new(0),
            born: Instant::now(),
        })
    }

    pub fn options(&self) -> &PolicyOptions {
        &self.options
    }

    fn current(&self) -> Arc<RuleSet> {
        match self.state.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Re-read the policy file and directories if any of them changed (appeared, disappeared
    /// or has another modification time). `Ok(true)` when the rule set was rebuilt. On error
    /// the previous rules stay in force.
    pub fn reload_if_changed(&self) -> Result<bool, PolicyError> {
        let _serialised = match self.reload.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let stamp = stamp_sources(&self.options)?;
        if stamp == self.current().stamp {
            return Ok(false);
        }
        let set = build(&self.options, &self.default_rule, stamp)?;
        tracing::info!(files = ?set.files, "policy rules reloaded");
        let mut guard = match self.state.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = Arc::new(set);
        Ok(true)
    }

    /// [`Enforcer::reload_if_changed`] at most once per `every` (the API calls it for every
    /// request with [`RELOAD_CHECK_INTERVAL`]: oslo.policy looks at the files' modification
    /// times in every `enforce`). A file that fails to load is logged; the previous rules stay.
    pub fn reload_if_due(&self, every: Duration) {
        let now = self.born.elapsed().as_millis() as u64 + 1;
        let last = self.last_check_ms.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < every.as_millis() as u64 {
            return;
        }
        if self
            .last_check_ms
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return; // another request is checking
        }
        if let Err(e) = self.reload_if_changed() {
            tracing::error!(error = %e, "policy files could not be reloaded; the previous rules stay in force");
        }
    }

    /// True when some rule of the current rule set mentions `auth_token_info` (an operator's
    /// rule could compare a field of the validated token body). When none does, the API leaves
    /// the token body (with its catalogue, several kilobytes) out of the credentials it builds
    /// for every check: the decisions are the same and the copy is saved.
    pub fn reads_token_info(&self) -> bool {
        self.current().reads_token_info
    }

    /// Is `rule` allowed for `creds` (Magnum's `context.to_dict()`) on `target`?
    ///
    /// Unknown rules are false (unless a default rule exists). An evaluation that would raise
    /// in Python is false and logged as an error.
    pub fn enforce(&self, rule: &str, target: &Value, creds: &Value) -> bool {
        match self.try_enforce(rule, target, creds) {
            Ok(allowed) => allowed,
            Err(e) => {
                tracing::error!(rule, error = %e, "policy evaluation failed; denying");
                false
            }
        }
    }

    /// [`Enforcer::enforce`] on a target built for the rules: `target(keys)` gives the target
    /// with at least the `keys` the rules in force substitute into their checks (`%(key)s`),
    /// or whole for `None` (a rule reads more than named keys). The decision is the one the
    /// whole target gives (only substitution reads a target), without building the fields no
    /// rule reads: an object's other fields, for every check. The rules are those in force
    /// when the call starts, for both the keys and the evaluation.
    pub fn enforce_on(
        &self,
        rule: &str,
        target: impl FnOnce(Option<&[String]>) -> Value,
        creds: &Value,
    ) -> bool {
        let state = self.current();
        let target = target(state.target_keys.as_deref());
        match self.try_enforce_in(&state, rule, &target, creds) {
            Ok(allowed) => allowed,
            Err(e) => {
                tracing::error!(rule, error = %e, "policy evaluation failed; denying");
                false
            }
        }
    }

    /// As [`Enforcer::enforce`], reporting what Python would raise instead of denying.
    pub fn try_enforce(
        &self,
        rule: &str,
        target: &Value,
        creds: &Value,
    ) -> Result<bool, EvalError> {
        self.try_enforce_in(&self.current(), rule, target, creds)
    }

    fn try_enforce_in(
        &self,
        state: &RuleSet,
        rule: &str,
        target: &Value,
        creds: &Value,
    ) -> Result<bool, EvalError> {
        let creds = prepare_creds(creds)?;
        let creds = creds.as_ref();
        if state.rules.is_empty() {
            return Ok(false);
        }
        let Some((resolved, check)) = state.lookup(rule) else {
            tracing::debug!(rule, "rule does not exist");
            return Ok(false);
        };
        if let Some(scopes) = find_default(rule).and_then(|d| d.scope_types) {
            let scope = TokenScope::of(creds);
            if !scopes.is_empty() && !scopes.contains(&scope.name()) {
                if self.options.enforce_scope {
                    tracing::debug!(rule, scope = scope.name(), "token scope not allowed");
                    return Ok(false);
                }
                tracing::warn!(
                    rule,
                    scope = scope.name(),
                    "policy is enforced with a token of a scope it does not declare"
                );
            }
        }
        Evaluation::new(state).named(resolved, check, target, creds)
    }

    /// Evaluate a check tree directly (oslo.policy's `enforce(BaseCheck, ...)`): `rule:`
    /// references use this enforcer's rules; no scope check.
    pub fn try_enforce_check(
        &self,
        check: &Check,
        target: &Value,
        creds: &Value,
    ) -> Result<bool, EvalError> {
        let creds = prepare_creds(creds)?;
        let state = self.current();
        Evaluation::new(state.as_ref()).check(check, target, creds.as_ref())
    }

    /// `magnum.common.policy.check_is_admin`: rule `context_is_admin` against an empty target.
    pub fn check_is_admin(&self, creds: &Value) -> bool {
        self.enforce(
            "context_is_admin",
            &Value::Object(Default::default()),
            creds,
        )
    }

    /// The effective rules in oslo.policy's order (file rules first, then defaults).
    pub fn rules(&self) -> Vec<EffectiveRule> {
        self.current()
            .rules
            .iter()
            .map(|(name, e)| EffectiveRule {
                name: name.clone(),
                check: e.check.clone(),
                check_str: e.check.to_string(),
                origin: e.origin.clone(),
            })
            .collect()
    }

    /// The effective rule called `name`, if any (no default-rule fallback).
    pub fn rule(&self, name: &str) -> Option<EffectiveRule> {
        self.current().rules.get(name).map(|e| EffectiveRule {
            name: name.to_string(),
            check: e.check.clone(),
            check_str: e.check.to_string(),
            origin: e.origin.clone(),
        })
    }

    /// The policy files currently applied, in application order.
    pub fn loaded_files(&self) -> Vec<PathBuf> {
        self.current().files.clone()
    }

    /// The registered default called `name`.
    pub fn registered(&self, name: &str) -> Option<&'static RuleDefault> {
        find_default(name)
    }
}

/// Python's `bool()` of a credential value.
fn truthy(v: &Value) -> bool {
    PyValue::from_json(v).truthy()
}

/// Credentials must be a mapping; a truthy `system_scope` is copied to `system` first.
fn prepare_creds(creds: &Value) -> Result<std::borrow::Cow<'_, Value>, EvalError> {
    let Value::Object(map) = creds else {
        return Err(EvalError::InvalidCredentials);
    };
    match map.get("system_scope") {
        Some(s) if truthy(s) => {
            let mut m = map.clone();
            m.insert("system".to_string(), s.clone());
            Ok(std::borrow::Cow::Owned(Value::Object(m)))
        }
        _ => Ok(std::borrow::Cow::Borrowed(creds)),
    }
}

/// oslo.config `find_file`: an absolute path as is, a relative one in the first directory
/// holding it.
fn find_file(name: &Path, config_dirs: &[PathBuf]) -> Option<PathBuf> {
    if name.is_absolute() {
        return name.exists().then(|| name.to_path_buf());
    }
    config_dirs
        .iter()
        .map(|d| d.join(name))
        .find(|p| p.exists())
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn stamp_sources(options: &PolicyOptions) -> Result<SourceStamp, PolicyError> {
    let file = options
        .policy_file
        .as_deref()
        .and_then(|f| find_file(f, &options.config_dirs))
        .map(|p| {
            let t = mtime(&p);
            (p, t)
        });
    let mut dirs = Vec::new();
    for d in &options.policy_dirs {
        let Some(path) = find_file(d, &options.config_dirs) else {
            continue;
        };
        if !path.is_dir() {
            return Err(PolicyError::NotADirectory { path });
        }
        // The newest modification time of the directory and everything in it.
        let mut newest = mtime(&path);
        let entries = std::fs::read_dir(&path).map_err(|source| PolicyError::Io {
            path: path.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let t = mtime(&entry.path());
            if t > newest {
                newest = t;
            }
        }
        dirs.push((path, newest));
    }
    Ok(SourceStamp { file, dirs })
}

/// The regular files of a policy directory, sorted, without dot-files (`next(os.walk(d))[2]`).
fn directory_files(dir: &Path) -> Result<Vec<PathBuf>, PolicyError> {
    let entries = std::fs::read_dir(dir).map_err(|source| PolicyError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut names: Vec<String> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || entry.path().is_dir() {
            continue;
        }
        names.push(name);
    }
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// The rules of one policy file, parsed. A file that vanished or cannot be read (other than
/// for permissions) contributes no rules, as oslo.policy's `read_cached_file` does.
fn load_file(path: &Path) -> Result<Vec<(String, Check)>, PolicyError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(PolicyError::Io {
                path: path.to_path_buf(),
                source: e,
            })
        }
        Err(e) => {
            tracing::error!(path = %path.display(), error = %e, "policy file not readable; no rules from it");
            return Ok(Vec::new());
        }
    };
    parse_file_bytes(path, bytes)
}

/// The rules of a policy file's content (`path` names it in errors and logs).
pub(crate) fn parse_file_bytes(
    path: &Path,
    bytes: Vec<u8>,
) -> Result<Vec<(String, Check)>, PolicyError> {
    let text = String::from_utf8(bytes).map_err(|e| PolicyError::Parse {
        path: path.to_path_buf(),
        message: format!("not UTF-8: {e}"),
    })?;
    let doc = parse_document(&text).map_err(|message| PolicyError::Parse {
        path: path.to_path_buf(),
        message,
    })?;
    for key in &doc.skipped {
        tracing::warn!(path = %path.display(), key, "policy file key is not a string; ignored");
    }
    let mut out = Vec::with_capacity(doc.rules.len());
    for (name, value) in doc.rules {
        let mut warnings = Vec::new();
        let check =
            parse_rule_value(&value, &mut warnings).map_err(|e| PolicyError::InvalidRule {
                path: path.to_path_buf(),
                name: name.clone(),
                message: e.0,
            })?;
        for w in warnings {
            tracing::warn!(path = %path.display(), rule = %name, "{w}");
        }
        out.push((name, check));
    }
    Ok(out)
}

fn parse_default(check_str: &str) -> Check {
    let (check, warnings) = parse_rule_with_warnings(check_str);
    for w in warnings {
        tracing::warn!("{w}");
    }
    check
}

/// `Enforcer._handle_deprecated_rule`.
fn handle_deprecated(
    default: &RuleDefault,
    file_rules: &IndexMap<String, (Check, PathBuf)>,
    enforce_new_defaults: bool,
) -> (Check, RuleOrigin) {
    let new_check = parse_default(default.check_str);
    let Some(dep) = default.deprecated_rule else {
        return (new_check, RuleOrigin::Default);
    };
    if dep.name != default.name {
        if let Some((file_check, file)) = file_rules.get(dep.name) {
            tracing::warn!(
                "Policy \"{}\":\"{}\" was deprecated in {} in favor of \"{}\":\"{}\"; \
                 the policy file overrides the deprecated name",
                dep.name,
                dep.check_str,
                dep.deprecated_since,
                default.name,
                default.check_str
            );
            if *file_check != parse_default(dep.check_str)
                && file_check.to_string() != format!("rule:{}", default.name)
                && !file_rules.contains_key(default.name)
            {
                return (
                    file_check.clone(),
                    RuleOrigin::DeprecatedNameOverride {
                        name: dep.name.to_string(),
                        file: file.clone(),
                    },
                );
            }
        }
    }
    if !enforce_new_defaults
        && dep.check_str != default.check_str
        && !file_rules.contains_key(default.name)
    {
        return (
            Check::Or(vec![new_check, parse_default(dep.check_str)]),
            RuleOrigin::DefaultOrDeprecated,
        );
    }
    (new_check, RuleOrigin::Default)
}

fn build(
    options: &PolicyOptions,
    default_rule: &str,
    stamp: SourceStamp,
) -> Result<RuleSet, PolicyError> {
    let mut rules: IndexMap<String, Entry> = IndexMap::new();
    let mut file_rules: IndexMap<String, (Check, PathBuf)> = IndexMap::new();
    let mut files = Vec::new();
    let mut apply = |path: &Path, rules: &mut IndexMap<String, Entry>| -> Result<(), PolicyError> {
        for (name, check) in load_file(path)? {
            rules.insert(
                name.clone(),
                Entry {
                    check: check.clone(),
                    origin: RuleOrigin::File(path.to_path_buf()),
                },
            );
            file_rules.insert(name, (check, path.to_path_buf()));
        }
        files.push(path.to_path_buf());
        Ok(())
    };
    if let Some((path, _)) = &stamp.file {
        apply(path, &mut rules)?;
    }
    for (dir, _) in &stamp.dirs {
        for f in directory_files(dir)? {
            apply(&f, &mut rules)?;
        }
    }
    let mut redundant = Vec::new();
    for d in default_rules() {
        if let Some(e) = rules.get(d.name) {
            if e.check.to_string() == parse_default(d.check_str).to_string() {
                redundant.push(d.name);
            }
            continue;
        }
        let (check, origin) = handle_deprecated(d, &file_rules, options.enforce_new_defaults);
        rules.insert(d.name.to_string(), Entry { check, origin });
    }
    if !redundant.is_empty() {
        tracing::warn!(
            names = ?redundant,
            "Policy rules specified in policy files are the same as the defaults provided by the service"
        );
    }
    let reads_token_info = rules
        .values()
        .any(|e| e.check.to_string().contains("auth_token_info"));
    let target_keys = target_keys(rules.values().map(|e| &e.check));
    let set = RuleSet {
        rules,
        default_rule: default_rule.to_string(),
        stamp,
        files,
        reads_token_info,
        target_keys,
    };
    check_rules(&set);
    Ok(set)
}

/// The target keys `checks` substitute, sorted; `None` when one may read the target whole.
fn target_keys<'c>(checks: impl IntoIterator<Item = &'c Check>) -> Option<Vec<String>> {
    fn walk(c: &Check, keys: &mut Vec<String>) -> Option<()> {
        match c {
            Check::Generic { value: m, .. } | Check::Role(m) => {
                keys.extend(super::percent::mapping_keys(m)?);
            }
            // evaluated as unsupported whatever the target
            Check::External { .. } => {}
            Check::True | Check::False | Check::Rule(_) => {}
            Check::Not(inner) => walk(inner, keys)?,
            Check::And(items) | Check::Or(items) => {
                for i in items {
                    walk(i, keys)?;
                }
            }
        }
        Some(())
    }
    let mut keys = Vec::new();
    for c in checks {
        walk(c, &mut keys)?;
    }
    keys.sort_unstable();
    keys.dedup();
    Some(keys)
}

/// `Enforcer.check_rules`: warn about references to undefined rules and cycles.
fn check_rules(set: &RuleSet) {
    fn undefined(c: &Check, set: &RuleSet) -> bool {
        match c {
            Check::Rule(n) => !set.rules.contains_key(n),
            Check::And(items) | Check::Or(items) => items.iter().any(|i| undefined(i, set)),
            _ => false,
        }
    }
    fn cycle(c: &Check, set: &RuleSet, seen: &mut Vec<String>, budget: &mut usize) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        match c {
            Check::Rule(n) => {
                if seen.contains(n) {
                    return true;
                }
                seen.push(n.clone());
                set.rules
                    .get(n)
                    .is_some_and(|e| cycle(&e.check, set, seen, budget))
            }
            Check::And(items) | Check::Or(items) => items
                .iter()
                .any(|i| cycle(i, set, &mut seen.clone(), budget)),
            _ => false,
        }
    }
    let mut undefined_names = Vec::new();
    let mut cyclic_names = Vec::new();
    for (name, e) in &set.rules {
        if undefined(&e.check, set) {
            undefined_names.push(name.as_str());
        }
        let mut budget = 100_000;
        if cycle(&e.check, set, &mut Vec::new(), &mut budget) {
            cyclic_names.push(name.as_str());
        }
    }
    if !undefined_names.is_empty() {
        tracing::warn!(names = ?undefined_names, "Policies reference a rule that is not defined");
    }
    if !cyclic_names.is_empty() {
        tracing::warn!(names = ?cyclic_names, "Policies are part of a cyclical reference");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(dir: &Path) -> PolicyOptions {
        PolicyOptions {
            config_dirs: vec![dir.to_path_buf()],
            ..PolicyOptions::default()
        }
    }

    fn creds(roles: &[&str], project: Option<&str>, user: Option<&str>) -> Value {
        json!({"roles": roles, "project_id": project, "user_id": user, "is_admin": false})
    }

    #[test]
    fn knows_whether_rules_read_the_token_body() {
        let dir = tempfile::tempdir().unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        assert!(!e.reads_token_info(), "Magnum's defaults never do");
        std::fs::write(
            dir.path().join("policy.yaml"),
            "\"cluster:get\": \"auth_token_info.token.is_domain:False\"\n",
        )
        .unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        assert!(e.reads_token_info());
    }

    /// The target handed to the evaluation carries the keys the rules in force substitute:
    /// Magnum's defaults read `project_id` and `user_id` of an object; an operator's rule can
    /// name any other field, or read the whole target.
    #[test]
    fn targets_carry_the_keys_the_rules_substitute() {
        let dir = tempfile::tempdir().unwrap();
        let whole = json!({"project_id": "p1", "user_id": "u1", "name": "c1", "id": 3});
        let creds = json!({"project_id": "p1", "user_id": "u1", "roles": ["member"]});
        let decide = |e: &Enforcer, rule: &str| {
            let mut asked = None;
            let on = e.enforce_on(
                rule,
                |keys| {
                    asked = Some(keys.map(<[String]>::to_vec));
                    match keys {
                        None => whole.clone(),
                        Some(keys) => Value::Object(
                            whole
                                .as_object()
                                .unwrap()
                                .iter()
                                .filter(|(k, _)| keys.contains(k))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        ),
                    }
                },
                &creds,
            );
            assert_eq!(on, e.enforce(rule, &whole, &creds), "{rule}");
            (on, asked.unwrap())
        };
        let e = Enforcer::new(opts(dir.path())).unwrap();
        let keys = Some(vec!["project_id".to_string(), "user_id".into()]);
        assert_eq!(decide(&e, "cluster:get").1, keys);
        assert_eq!(decide(&e, "cluster:delete").1, keys);

        std::fs::write(
            dir.path().join("policy.yaml"),
            "\"cluster:get\": \"'c1':%(name)s\"\n\"cluster:delete\": \"'c2':%(name)s\"\n",
        )
        .unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        let (allowed, keys) = decide(&e, "cluster:get");
        assert!(allowed);
        assert!(keys.is_some_and(|k| k.contains(&"name".to_string())));
        assert!(!decide(&e, "cluster:delete").0);

        std::fs::write(
            dir.path().join("policy.yaml"),
            "\"cluster:get\": \"project_id:%s\"\n",
        )
        .unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        assert_eq!(
            decide(&e, "cluster:get").1,
            None,
            "`%s` reads the whole target"
        );
    }

    #[test]
    fn enforcer_is_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Enforcer>();
    }

    #[test]
    fn defaults_without_files() {
        let dir = tempfile::tempdir().unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        assert_eq!(e.rules().len(), 66);
        assert!(e.loaded_files().is_empty());
        let own = json!({"project_id": "pa", "user_id": "ua"});
        let other = json!({"project_id": "pb", "user_id": "ub"});
        let reader = creds(&["reader"], Some("pa"), Some("ua"));
        let member = creds(&["member", "reader"], Some("pa"), Some("ua"));
        let admin = creds(&["admin"], Some("pa"), Some("ua"));
        assert!(e.enforce("cluster:get", &own, &reader));
        assert!(!e.enforce("cluster:get", &other, &reader));
        assert!(!e.enforce("cluster:create", &own, &reader));
        assert!(e.enforce("cluster:create", &own, &member));
        assert!(e.enforce("cluster:get", &other, &admin));
        assert!(!e.enforce("credential:rotate", &own, &admin));
        assert!(e.check_is_admin(&json!({"roles": ["ADMIN"]})));
        assert!(!e.enforce("no:such_rule", &own, &admin));
        // No project on either side: None == None.
        let none = json!({"project_id": null, "user_id": null});
        assert!(e.enforce("cluster:get", &none, &creds(&["reader"], None, None)));
        // Non-object credentials are refused.
        assert_eq!(
            e.try_enforce("cluster:get", &own, &json!([])),
            Err(EvalError::InvalidCredentials)
        );
    }

    #[test]
    fn scope_types_refuse_system_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = creds(&["admin", "member", "reader"], Some("pa"), Some("ua"));
        c["system_scope"] = json!("all");
        let own = json!({"project_id": "pa", "user_id": "ua"});
        let e = Enforcer::new(opts(dir.path())).unwrap();
        assert!(!e.enforce("cluster:get", &own, &c));
        // Rules without scope_types are still evaluated.
        assert!(e.enforce("cluster:get_all_all_projects", &own, &c));
        let lax = Enforcer::new(PolicyOptions {
            enforce_scope: false,
            ..opts(dir.path())
        })
        .unwrap();
        assert!(lax.enforce("cluster:get", &own, &c));
        assert_eq!(
            TokenScope::of(&json!({"domain_id": "d"})),
            TokenScope::Domain
        );
    }

    #[test]
    fn enforce_new_defaults_false_ors_the_deprecated_check() {
        let dir = tempfile::tempdir().unwrap();
        let e = Enforcer::new(PolicyOptions {
            enforce_new_defaults: false,
            ..opts(dir.path())
        })
        .unwrap();
        let r = e.rule("admin_or_project_reader").unwrap();
        assert_eq!(r.origin, RuleOrigin::DefaultOrDeprecated);
        assert_eq!(
            r.check_str,
            "((rule:context_is_admin or rule:project_reader) or (is_admin:True or project_id:%(project_id)s))"
        );
        // Any role in the project passes the deprecated admin_or_owner.
        let own = json!({"project_id": "pa", "user_id": "ua"});
        assert!(e.enforce(
            "cluster:get",
            &own,
            &creds(&["whatever"], Some("pa"), Some("ua"))
        ));
        assert_eq!(
            e.rule("context_is_admin").unwrap().origin,
            RuleOrigin::Default
        );
    }

    #[test]
    fn policy_file_dirs_default_rule_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("policy.yaml"),
            "\"cluster:get\": \"role:auditor\"\n\"default\": \"role:fallback\"\n\"x\": \"rule:nope\"\n",
        )
        .unwrap();
        std::fs::create_dir(root.join("policy.d")).unwrap();
        std::fs::write(
            root.join("policy.d/20-b.json"),
            "{\"cluster:get\": \"role:b\"}",
        )
        .unwrap();
        std::fs::write(root.join("policy.d/10-a.yaml"), "cluster:get: role:a\n").unwrap();
        std::fs::write(root.join("policy.d/.hidden"), "cluster:get: '@'\n").unwrap();
        let e = Enforcer::new(opts(root)).unwrap();
        assert_eq!(e.loaded_files().len(), 3);
        let t = json!({});
        assert!(e.enforce("cluster:get", &t, &json!({"roles": ["b"]})));
        assert!(!e.enforce("cluster:get", &t, &json!({"roles": ["a"]})));
        assert!(
            matches!(e.rule("cluster:get").unwrap().origin, RuleOrigin::File(p) if p.ends_with("20-b.json"))
        );
        // Unknown names and undefined references use the default rule.
        assert!(e.enforce("not:registered", &t, &json!({"roles": ["fallback"]})));
        assert!(e.enforce("x", &t, &json!({"roles": ["fallback"]})));
        assert!(!e.reload_if_changed().unwrap());

        // Change the policy file: picked up on reload.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("policy.yaml"), "\"cluster:create\": \"!\"\n").unwrap();
        std::fs::remove_file(root.join("policy.d/20-b.json")).unwrap();
        assert!(e.reload_if_changed().unwrap());
        assert!(e.enforce("cluster:get", &t, &json!({"roles": ["a"]})));
        assert!(!e.enforce("not:registered", &t, &json!({"roles": ["fallback"]})));
        let member = creds(&["member"], Some("pa"), Some("ua"));
        assert!(!e.enforce("cluster:create", &json!({"project_id": "pa"}), &member));

        // A broken file keeps the old rules and reports the error.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("policy.yaml"), "\"a\": [\n").unwrap();
        assert!(matches!(
            e.reload_if_changed(),
            Err(PolicyError::Parse { .. })
        ));
        assert!(e.enforce("cluster:get", &t, &json!({"roles": ["a"]})));
        std::fs::write(root.join("policy.yaml"), "\"a\": 5\n").unwrap();
        assert!(matches!(
            e.reload_if_changed(),
            Err(PolicyError::InvalidRule { .. })
        ));

        // Removing the file falls back to defaults.
        std::fs::remove_file(root.join("policy.yaml")).unwrap();
        std::fs::remove_dir_all(root.join("policy.d")).unwrap();
        assert!(e.reload_if_changed().unwrap());
        assert!(e.rules().iter().all(|r| r.origin == RuleOrigin::Default));
        assert!(Enforcer::new(opts(root)).is_ok());
    }

    #[test]
    fn policy_dir_that_is_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("policy.d"), "").unwrap();
        assert!(matches!(
            Enforcer::new(opts(dir.path())),
            Err(PolicyError::NotADirectory { .. })
        ));
    }

    #[test]
    fn override_under_a_deprecated_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("policy.yaml"),
            "\"rule:admin_or_owner\": \"role:legacy\"\n\"admin_or_project_member\": \"role:x\"\n\"rule:admin_or_user\": \"rule:admin_or_project_member_user\"\n",
        )
        .unwrap();
        let e = Enforcer::new(opts(dir.path())).unwrap();
        let r = e.rule("admin_or_project_reader").unwrap();
        assert_eq!(r.check_str, "role:legacy");
        assert!(matches!(
            r.origin,
            RuleOrigin::DeprecatedNameOverride { .. }
        ));
        // Overridden directly: the file wins.
        assert_eq!(
            e.rule("admin_or_project_member").unwrap().check_str,
            "role:x"
        );
        // An alias to the new name is not taken as an override.
        assert_eq!(
            e.rule("admin_or_project_member_user").unwrap().origin,
            RuleOrigin::Default
        );
    }

    #[test]
    fn absolute_policy_file_and_absent_config_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("custom.json");
        std::fs::write(&p, "{\"cluster:get\": \"@\"}").unwrap();
        let e = Enforcer::new(PolicyOptions {
            policy_file: Some(p.clone()),
            policy_dirs: vec![],
            ..PolicyOptions::default()
        })
        .unwrap();
        assert_eq!(e.loaded_files(), vec![p]);
        assert!(e.enforce("cluster:get", &json!({}), &json!({"roles": []})));
    }
}
