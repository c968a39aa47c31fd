//! Who is asking: the part of the request context Magnum's DB layer looks at.

use openkeel_core::context::RequestContext;

use crate::backend::Val;
use crate::record::Where;

/// The caller as `magnum/db/sqlalchemy/api.py` sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub is_admin: bool,
    pub all_tenants: bool,
}

impl Scope {
    /// A caller in `project_id` (not admin).
    pub fn project(project_id: impl Into<String>) -> Scope {
        Scope {
            project_id: Some(project_id.into()),
            ..Scope::default()
        }
    }

    /// An admin with `all_tenants` set: no tenant filtering at all (the conductor's periodic
    /// tasks use an admin context like this).
    pub fn admin_all_tenants() -> Scope {
        Scope {
            is_admin: true,
            all_tenants: true,
            ..Scope::default()
        }
    }

    /// `_add_tenant_filters`: nothing when `is_admin and all_tenants`; else
    /// `project_id = <project>` or, when the context has no (or an empty) project,
    /// `user_id = <user>` (`IS NULL` when there is no user either).
    pub(crate) fn tenant_filter(&self, w: &mut Where) {
        if self.is_admin && self.all_tenants {
            return;
        }
        match self.project_id.as_deref().filter(|p| !p.is_empty()) {
            Some(p) => {
                w.eq("project_id", p);
            }
            None => {
                w.eq("user_id", Val::from(self.user_id.clone()));
            }
        }
    }

    /// Nodegroup scoping: `project_id = <project>` unless the caller is admin
    /// (`all_tenants` is not required).
    pub(crate) fn nodegroup_filter(&self, w: &mut Where) {
        if !self.is_admin {
            w.eq("project_id", Val::from(self.project_id.clone()));
        }
    }
}

impl From<&RequestContext> for Scope {
    fn from(ctx: &RequestContext) -> Scope {
        Scope {
            project_id: ctx.project_id.clone(),
            user_id: ctx.user_id.clone(),
            is_admin: ctx.is_admin,
            all_tenants: ctx.all_tenants,
        }
    }
}
