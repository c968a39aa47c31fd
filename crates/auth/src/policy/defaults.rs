//! Magnum 23.0.0's registered policy defaults: `magnum.common.policies.list_rules()`
//! (`magnum/common/policies/{base,certificate,cluster,cluster_template,credential,federation,
//! magnum_service,quota,stats,nodegroup}.py`), in that registration order.
//!
//! Transcribed from the magnum 23.0.0 release on PyPI; `tests/policy_table.rs` checks every
//! field against `crates/auth/tests/data/policy_decisions.json`, which
//! `tests/python/gen_policy_table.py` writes from the real Python package.

/// One API operation a rule protects (`DocumentedRuleDefault.operations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
}

/// `oslo_policy.policy.DeprecatedRule`: the check string a rule had before, OR-ed in when
/// `enforce_new_defaults` is false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeprecatedRule {
    /// Magnum names these `rule:admin_or_owner` / `rule:admin_or_user` (with the `rule:`
    /// prefix), which matters for oslo.policy's handling of overrides of deprecated names.
    pub name: &'static str,
    pub check_str: &'static str,
    pub deprecated_reason: &'static str,
    pub deprecated_since: &'static str,
}

/// `oslo_policy.policy.RuleDefault` / `DocumentedRuleDefault`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDefault {
    pub name: &'static str,
    pub check_str: &'static str,
    /// `None` for the plain `RuleDefault`s (the 15 generic rules).
    pub description: Option<&'static str>,
    /// Empty for the plain `RuleDefault`s.
    pub operations: &'static [Operation],
    /// `None` when not declared; `Some(["project"])` for the project-scoped operations.
    pub scope_types: Option<&'static [&'static str]>,
    pub deprecated_rule: Option<DeprecatedRule>,
    /// None of Magnum's rules is deprecated for removal; kept for the sample generator.
    pub deprecated_for_removal: bool,
    pub deprecated_reason: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    /// `DocumentedRuleDefault` (has `operations`) rather than a plain `RuleDefault`.
    pub documented: bool,
}

/// `magnum/common/policies/base.py DEPRECATED_REASON`.
pub const DEPRECATED_REASON: &str =
    "\nThe Magnum API now enforces scoped tokens and default reader and member roles.\n";
/// `magnum/common/policies/base.py DEPRECATED_SINCE`.
pub const DEPRECATED_SINCE: &str = "OpenStack 2023.2(Magnum 17.0.0)";

const DEPRECATED_ADMIN_OR_OWNER: DeprecatedRule = DeprecatedRule {
    name: "rule:admin_or_owner",
    check_str: "is_admin:True or project_id:%(project_id)s",
    deprecated_reason: DEPRECATED_REASON,
    deprecated_since: DEPRECATED_SINCE,
};

const DEPRECATED_ADMIN_OR_USER: DeprecatedRule = DeprecatedRule {
    name: "rule:admin_or_user",
    check_str: "((rule:context_is_admin) or (rule:is_user))",
    deprecated_reason: DEPRECATED_REASON,
    deprecated_since: DEPRECATED_SINCE,
};

const PROJECT: Option<&[&str]> = Some(&["project"]);
const ANY_SCOPE: Option<&[&str]> = None;

const fn op(method: &'static str, path: &'static str) -> Operation {
    Operation { method, path }
}

const fn generic(
    name: &'static str,
    check_str: &'static str,
    deprecated_rule: Option<DeprecatedRule>,
) -> RuleDefault {
    RuleDefault {
        name,
        check_str,
        description: None,
        operations: &[],
        scope_types: None,
        deprecated_rule,
        deprecated_for_removal: false,
        deprecated_reason: None,
        deprecated_since: None,
        documented: false,
    }
}

const fn documented(
    name: &'static str,
    check_str: &'static str,
    scope_types: Option<&'static [&'static str]>,
    description: &'static str,
    operations: &'static [Operation],
) -> RuleDefault {
    RuleDefault {
        name,
        check_str,
        description: Some(description),
        operations,
        scope_types,
        deprecated_rule: None,
        deprecated_for_removal: false,
        deprecated_reason: None,
        deprecated_since: None,
        documented: true,
    }
}

static DEFAULT_RULES: [RuleDefault; 66] = [
    generic("context_is_admin", "role:admin", None),
    generic(
        "admin_or_owner",
        "is_admin:True or project_id:%(project_id)s",
        None,
    ),
    generic(
        "admin_or_user",
        "is_admin:True or user_id:%(user_id)s",
        None,
    ),
    generic("is_user", "user_id:%(user_id)s", None),
    generic(
        "project_member",
        "role:member and project_id:%(project_id)s",
        None,
    ),
    generic(
        "project_reader",
        "role:reader and project_id:%(project_id)s",
        None,
    ),
    generic(
        "admin_or_project_reader",
        "(rule:context_is_admin) or (rule:project_reader)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "admin_or_project_member",
        "(rule:context_is_admin) or (rule:project_member)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "admin_or_project_member_user",
        "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
        Some(DEPRECATED_ADMIN_OR_USER),
    ),
    generic(
        "admin_or_project_member_user_or_cluster_user",
        "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
        Some(DEPRECATED_ADMIN_OR_USER),
    ),
    generic(
        "project_member_deny_cluster_user",
        "(rule:project_member)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "admin_or_project_member_deny_cluster_user",
        "(rule:context_is_admin) or (rule:project_member)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "project_reader_deny_cluster_user",
        "(rule:project_reader)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "admin_or_project_reader_deny_cluster_user",
        "(rule:context_is_admin) or (rule:project_reader)",
        Some(DEPRECATED_ADMIN_OR_OWNER),
    ),
    generic(
        "admin_or_project_reader_user",
        "(rule:context_is_admin) or ((rule:project_reader) and (rule:is_user))",
        Some(DEPRECATED_ADMIN_OR_USER),
    ),
    documented(
        "certificate:create",
        "rule:admin_or_project_member_user",
        PROJECT,
        "Sign a new certificate by the CA.",
        &[op("POST", "/v1/certificates")],
    ),
    documented(
        "certificate:get",
        "rule:admin_or_project_reader_user",
        PROJECT,
        "Retrieve CA information about the given cluster.",
        &[op("GET", "/v1/certificates/{cluster_uuid}")],
    ),
    documented(
        "certificate:rotate_ca",
        "rule:admin_or_project_member",
        PROJECT,
        "Rotate the CA certificate on the given cluster.",
        &[op("PATCH", "/v1/certificates/{cluster_uuid}")],
    ),
    documented(
        "cluster:create",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Create a new cluster.",
        &[op("POST", "/v1/clusters")],
    ),
    documented(
        "cluster:delete",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Delete a cluster.",
        &[op("DELETE", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:delete_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Delete a cluster from any project.",
        &[op("DELETE", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:detail",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of clusters with detail.",
        &[op("GET", "/v1/clusters")],
    ),
    documented(
        "cluster:detail_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of clusters with detail across projects.",
        &[op("GET", "/v1/clusters")],
    ),
    documented(
        "cluster:get",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve information about the given cluster.",
        &[op("GET", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:get_one_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve information about the given cluster across projects.",
        &[op("GET", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:get_all",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of clusters.",
        &[op("GET", "/v1/clusters/")],
    ),
    documented(
        "cluster:get_all_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of all clusters across projects.",
        &[op("GET", "/v1/clusters/")],
    ),
    documented(
        "cluster:update",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Update an existing cluster.",
        &[op("PATCH", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:update_health_status",
        "rule:admin_or_project_member_user_or_cluster_user",
        PROJECT,
        "Update the health status of an existing cluster.",
        &[op("PATCH", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:update_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Update an existing cluster.",
        &[op("PATCH", "/v1/clusters/{cluster_ident}")],
    ),
    documented(
        "cluster:resize",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Resize an existing cluster.",
        &[op("POST", "/v1/clusters/{cluster_ident}/actions/resize")],
    ),
    documented(
        "cluster:upgrade",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Upgrade an existing cluster.",
        &[op("POST", "/v1/clusters/{cluster_ident}/actions/upgrade")],
    ),
    documented(
        "cluster:upgrade_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Upgrade an existing cluster across all projects.",
        &[op("POST", "/v1/clusters/{cluster_ident}/actions/upgrade")],
    ),
    documented(
        "clustertemplate:create",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Create a new cluster template.",
        &[op("POST", "/v1/clustertemplates")],
    ),
    documented(
        "clustertemplate:delete",
        "rule:admin_or_project_member",
        PROJECT,
        "Delete a cluster template.",
        &[op("DELETE", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:delete_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Delete a cluster template from any project.",
        &[op("DELETE", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:detail_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of cluster templates with detail across projects.",
        &[op("GET", "/v1/clustertemplates")],
    ),
    documented(
        "clustertemplate:detail",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of cluster templates with detail.",
        &[op("GET", "/v1/clustertemplates")],
    ),
    documented(
        "clustertemplate:get",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve information about the given cluster template.",
        &[op("GET", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:get_one_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve information about the given cluster template across project.",
        &[op("GET", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:get_all",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of cluster templates.",
        &[op("GET", "/v1/clustertemplates")],
    ),
    documented(
        "clustertemplate:get_all_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of cluster templates across projects.",
        &[op("GET", "/v1/clustertemplates")],
    ),
    documented(
        "clustertemplate:update",
        "rule:admin_or_project_member",
        PROJECT,
        "Update an existing cluster template.",
        &[op("PATCH", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:update_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Update an existing cluster template.",
        &[op("PATCH", "/v1/clustertemplate/{clustertemplate_ident}")],
    ),
    documented(
        "clustertemplate:publish",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Publish or hide an existing cluster template (set public or hidden flags).",
        &[
            op("POST", "/v1/clustertemplates"),
            op("PATCH", "/v1/clustertemplates"),
        ],
    ),
    documented(
        "credential:rotate",
        "rule:project_member_deny_cluster_user",
        PROJECT,
        "Rotate the credential of a cluster.",
        &[op("PATCH", "/v1/credentials/{cluster_uuid}")],
    ),
    documented(
        "federation:create",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Create a new federation.",
        &[op("POST", "/v1/federations")],
    ),
    documented(
        "federation:delete",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Delete a federation.",
        &[op("DELETE", "/v1/federations/{federation_ident}")],
    ),
    documented(
        "federation:detail",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of federations with detail.",
        &[op("GET", "/v1/federations")],
    ),
    documented(
        "federation:get",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve information about the given federation.",
        &[op("GET", "/v1/federations/{federation_ident}")],
    ),
    documented(
        "federation:get_all",
        "rule:admin_or_project_reader_deny_cluster_user",
        PROJECT,
        "Retrieve a list of federations.",
        &[op("GET", "/v1/federations/")],
    ),
    documented(
        "federation:update",
        "rule:admin_or_project_member_deny_cluster_user",
        PROJECT,
        "Update an existing federation.",
        &[op("PATCH", "/v1/federations/{federation_ident}")],
    ),
    documented(
        "magnum-service:get_all",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of magnum-services.",
        &[op("GET", "/v1/mservices")],
    ),
    documented(
        "quota:create",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Create quota.",
        &[op("POST", "/v1/quotas")],
    ),
    documented(
        "quota:delete",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Delete quota for a given project_id and resource.",
        &[op("DELETE", "/v1/quotas/{project_id}/{resource}")],
    ),
    documented(
        "quota:get",
        "rule:admin_or_project_reader",
        PROJECT,
        "Retrieve Quota information for the given project_id.",
        &[op("GET", "/v1/quotas/{project_id}/{resource}")],
    ),
    documented(
        "quota:get_all",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of quotas.",
        &[op("GET", "/v1/quotas")],
    ),
    documented(
        "quota:update",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Update quota for a given project_id.",
        &[op("PATCH", "/v1/quotas/{project_id}/{resource}")],
    ),
    documented(
        "stats:get_all",
        "rule:admin_or_project_reader",
        PROJECT,
        "Retrieve magnum stats.",
        &[op("GET", "/v1/stats")],
    ),
    documented(
        "nodegroup:get",
        "rule:admin_or_project_reader",
        PROJECT,
        "Retrieve information about the given nodegroup.",
        &[op("GET", "/v1/clusters/{cluster_id}/nodegroup/{nodegroup}")],
    ),
    documented(
        "nodegroup:get_all",
        "rule:admin_or_project_reader",
        PROJECT,
        "Retrieve a list of nodegroups that belong to a cluster.",
        &[op("GET", "/v1/clusters/{cluster_id}/nodegroups/")],
    ),
    documented(
        "nodegroup:get_all_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve a list of nodegroups across projects.",
        &[op("GET", "/v1/clusters/{cluster_id}/nodegroups/")],
    ),
    documented(
        "nodegroup:get_one_all_projects",
        "rule:context_is_admin",
        ANY_SCOPE,
        "Retrieve infornation for a given nodegroup.",
        &[op(
            "GET",
            "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}",
        )],
    ),
    documented(
        "nodegroup:create",
        "rule:admin_or_project_member",
        PROJECT,
        "Create a new nodegroup.",
        &[op("POST", "/v1/clusters/{cluster_id}/nodegroups/")],
    ),
    documented(
        "nodegroup:delete",
        "rule:admin_or_project_member",
        PROJECT,
        "Delete a nodegroup.",
        &[op(
            "DELETE",
            "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}",
        )],
    ),
    documented(
        "nodegroup:update",
        "rule:admin_or_project_member",
        PROJECT,
        "Update an existing nodegroup.",
        &[op(
            "PATCH",
            "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}",
        )],
    ),
];

/// Magnum 23.0.0's 66 registered rules, in registration order.
pub fn default_rules() -> &'static [RuleDefault] {
    &DEFAULT_RULES
}

/// The registered default called `name`.
pub(crate) fn find_default(name: &str) -> Option<&'static RuleDefault> {
    DEFAULT_RULES.iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::parser::parse_rule_with_warnings;

    #[test]
    fn sixty_six_unique_rules_that_all_parse() {
        let rules = default_rules();
        assert_eq!(rules.len(), 66);
        let mut names: Vec<_> = rules.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 66);
        for r in rules {
            let (_, w) = parse_rule_with_warnings(r.check_str);
            assert!(w.is_empty(), "{}: {w:?}", r.name);
            if let Some(d) = r.deprecated_rule {
                let (_, w) = parse_rule_with_warnings(d.check_str);
                assert!(w.is_empty(), "{}: {w:?}", d.name);
            }
        }
        assert_eq!(rules.iter().filter(|r| !r.documented).count(), 15);
        assert_eq!(
            rules.iter().filter(|r| r.deprecated_rule.is_some()).count(),
            9
        );
    }
}
