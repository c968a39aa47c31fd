//! The operations on a running cluster (magnum-cluster-api's
//! `magnum_cluster_api/driver.py`, `monitor.py`): resize of workers and of
//! the control plane, `PATCH node_count`, nodegroup create / update / delete, upgrade and the
//! health monitor.
//!
//! Each change to the `Cluster` is a read, a change of its topology ([`crate::topology`]) and
//! a PUT on the read's `resourceVersion`, retried when someone else wrote in between; a change
//! that asks for what is there already writes nothing. Better than magnum-cluster-api (its
//! users' most reported problems; `docs/differences.md`):
//! * `PATCH /v1/clusters/{id}` with `node_count` is the default worker nodegroup's resize
//!   (magnum-cluster-api raises `NotImplementedError`: `UPDATE_FAILED`);
//! * `nodes_to_remove` naming a node that is not in the nodegroup fails before anything is
//!   written (magnum-cluster-api ignores it, and CAPI removes a node of its own choosing);
//! * deleting a nodegroup whose topology entry is already gone still ends with the row
//!   removed (magnum-cluster-api raises `HTTPNotFound`: `DELETE_FAILED` forever);
//! * an upgrade honours `nodegroup` (the other worker nodegroups keep their version with
//!   CAPI's `defer-upgrade` annotation until they are upgraded themselves) and
//!   `max_batch_size` (as with Magnum's Heat driver, at most that many nodes of a nodegroup
//!   are replaced at once: the rolling update's `maxUnavailable`, with no surge, so no extra
//!   quota is needed); a minor-version skip or a downgrade, which CAPI's admission refuses
//!   half-way, is refused first ([`check_upgrade`]).

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterHealthStatus, ClusterStatus, ClusterTemplate, NodeGroup, StringMap,
};
use openkeel_drivers::{DriverContext, DriverError, DriverResult, HealthReport, Writes};
use serde_json::{json, Map, Value};

use super::{credential_of, flavor, image_of, master_image, worker_flavor_of, CapiDriver};
use crate::autoscaler;
use crate::cluster::{self, Lookups, NodeGroupLookups};
use crate::labels::Labels;
use crate::mgmt::{self, Mgmt};
use crate::secrets;
use crate::status::{self, CLUSTER_NAME_LABEL};
use crate::topology;

/// How often a change of the `Cluster` is tried again when someone wrote it in between.
const CONFLICT_ATTEMPTS: usize = 5;

/// The annotation that keeps one MachineDeployment on its Kubernetes version.
pub const DEFER_UPGRADE_ANNOTATION: &str = "topology.cluster.x-k8s.io/defer-upgrade";

fn is_master(ng: &NodeGroup) -> bool {
    ng.role.as_deref() == Some("master")
}

fn stack_id_of(cluster: &Cluster) -> DriverResult<String> {
    cluster
        .stack_id
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            DriverError::permanent_message(format!(
                "Cluster {} has no Cluster API cluster yet.",
                cluster.uuid.as_deref().unwrap_or("")
            ))
        })
}

/// `(major, minor, patch)` of a `kube_tag` such as `v1.30.1`.
fn version_of(tag: &str) -> Option<(u64, u64, u64)> {
    let t = tag.trim().trim_start_matches('v');
    let core = t.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// An upgrade's Kubernetes versions as Cluster API accepts them: the same version, or a newer
/// one at most one minor version ahead. Anything else is refused as not supported (a 400,
/// without any state change), before anything is written.
pub fn check_upgrade(current: Option<&str>, target: Option<&str>) -> Result<(), MagnumError> {
    let (Some(cur), Some(new)) = (current, target) else {
        return Ok(());
    };
    let (Some(c), Some(n)) = (version_of(cur), version_of(new)) else {
        return Ok(());
    };
    // the reason first: clients show the text up to its first "." (Magnum's error title)
    let refuse = |why: &str| {
        Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            format!("{why}: the cluster's kube_tag {cur} cannot move to {new}."),
        ))
    };
    if n < c {
        return refuse("Cluster API does not downgrade Kubernetes");
    }
    if n.0 != c.0 || n.1 > c.1 + 1 {
        return refuse("Cluster API upgrades Kubernetes one minor version at a time");
    }
    Ok(())
}

/// Whether the cluster runs the cluster autoscaler (its `auto_scaling_enabled` label).
pub(super) fn auto_scaling(cluster: &Cluster) -> bool {
    Labels::new(cluster.labels.as_ref())
        .bool_or("auto_scaling_enabled", false)
        .unwrap_or(false)
}

impl CapiDriver {
    /// The cluster autoscaler of an auto-scaled cluster (`magnum_cluster_api/resources.py`): rendered for its
    /// `kube_tag` and applied in the management cluster. Nothing for other clusters.
    pub(super) async fn install_autoscaler(&self, m: &Mgmt, cluster: &Cluster) -> DriverResult<()> {
        if !auto_scaling(cluster) {
            return Ok(());
        }
        let stack_id = stack_id_of(cluster)?;
        let kube_tag = Labels::new(cluster.labels.as_ref()).str_or("kube_tag", "");
        let release = autoscaler::release(
            &stack_id,
            &self.settings.namespace,
            &kube_tag,
            &self.settings.autoscaler_repository,
        )?;
        let rendered = self.renderer.render(&release).await?;
        for object in autoscaler::objects(&rendered)? {
            m.apply(&object).await?;
        }
        tracing::info!(stack_id = %stack_id, "cluster autoscaler written");
        Ok(())
    }

    /// The autoscaler's objects (all named `<stack_id>-autoscaler`); what is gone is fine.
    pub(super) async fn remove_autoscaler(&self, m: &Mgmt, cluster: &Cluster) -> DriverResult<()> {
        let Some(stack_id) = cluster.stack_id.as_deref().filter(|s| !s.is_empty()) else {
            return Ok(());
        };
        if !auto_scaling(cluster) {
            return Ok(());
        }
        let name = format!("{stack_id}-autoscaler");
        for kind in mgmt::AUTOSCALER_KINDS {
            m.delete(*kind, &name).await?;
        }
        Ok(())
    }

    /// Read the live `Cluster`, let `change` alter it, PUT it when it changed (again on a
    /// conflict). Returns whether anything was written.
    async fn change_cluster(
        &self,
        m: &Mgmt,
        stack_id: &str,
        mut change: impl FnMut(&mut Value) -> DriverResult<bool>,
    ) -> DriverResult<bool> {
        for _ in 0..CONFLICT_ATTEMPTS {
            let Some(mut live) = m.get(mgmt::CLUSTER, stack_id).await? else {
                return Err(DriverError::permanent_message(format!(
                    "The Cluster API cluster {stack_id} does not exist."
                )));
            };
            if !change(&mut live)? {
                return Ok(false);
            }
            if m.replace(mgmt::CLUSTER, &live).await?.is_some() {
                return Ok(true);
            }
        }
        Err(DriverError::transient(format!(
            "The Cluster API cluster {stack_id} changed under each of {CONFLICT_ATTEMPTS} writes."
        )))
    }

    /// The look-ups of one worker nodegroup's topology entry (its flavor, image and server
    /// group, the boot-volume defaults).
    async fn nodegroup_lookups(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        ng: &NodeGroup,
    ) -> DriverResult<Lookups> {
        let cloud = self.cloud()?;
        let req = ctx.request;
        let (mut flavors, mut images) = Default::default();
        let image = ng.image_id.clone().unwrap_or_else(|| master_image(ctx));
        let lookups = NodeGroupLookups {
            flavor: flavor(cloud, req, &mut flavors, &worker_flavor_of(cluster, ng)).await?,
            image: image_of(cloud, req, &mut images, &image).await?,
            server_group_id: self.worker_server_group(ctx, cluster, stack_id, ng).await?,
        };
        let default_boot_volume_type = if self.settings.default_boot_volume_type.is_empty() {
            cloud.default_volume_type(req).await?
        } else {
            self.settings.default_boot_volume_type.clone()
        };
        Ok(Lookups {
            default_boot_volume_type,
            default_boot_volume_size: self.settings.default_boot_volume_size,
            nodegroups: [(ng.name.clone(), lookups)].into_iter().collect(),
            ..Lookups::default()
        })
    }

    /// A worker nodegroup's topology entry as it should be now.
    async fn fresh_entry(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        stack_id: &str,
        ng: &NodeGroup,
    ) -> DriverResult<Value> {
        let look = self.nodegroup_lookups(ctx, cluster, stack_id, ng).await?;
        Ok(cluster::machine_deployment(cluster, ng, &look)?)
    }

    /// `resize_cluster` / `update_nodegroup` (`magnum_cluster_api/driver.py`): `nodegroup` carries its new
    /// `node_count` (and min / max, labels).
    pub async fn resize(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        nodes_to_remove: &[String],
        nodegroup: &NodeGroup,
    ) -> DriverResult<Writes> {
        let m = self.mgmt().await?;
        let stack_id = stack_id_of(cluster)?;
        let master = is_master(nodegroup);
        let wanted: Vec<String> = nodes_to_remove
            .iter()
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        if !wanted.is_empty() {
            let selector = topology::machine_selector(&stack_id, &nodegroup.name, master);
            let machines = m.list(mgmt::MACHINE, &selector, "").await?;
            let found = topology::machines_to_remove(&machines, &wanted);
            let unknown: Vec<&str> = wanted
                .iter()
                .filter(|w| {
                    topology::machines_to_remove(&machines, std::slice::from_ref(w)).is_empty()
                })
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                return Err(DriverError::permanent(MagnumError::with_message(
                    ErrorKind::InvalidParameterValue,
                    format!(
                        "Nodes to remove {unknown:?} are not nodes of nodegroup {}.",
                        nodegroup.name
                    ),
                )));
            }
            let mut mark = Map::new();
            mark.insert(topology::DELETE_MACHINE_ANNOTATION.into(), json!("yes"));
            for name in &found {
                m.annotate(mgmt::MACHINE, name, &mark).await?;
            }
        }
        let count = i64::from(nodegroup.node_count.unwrap_or(0));
        if master {
            self.change_cluster(m, &stack_id, |c| {
                Ok(topology::set_control_plane_replicas(c, count))
            })
            .await?;
        } else {
            let fresh = self.fresh_entry(ctx, cluster, &stack_id, nodegroup).await?;
            let name = nodegroup.name.clone();
            self.change_cluster(m, &stack_id, |c| {
                topology::refresh_entry(c, &fresh).ok_or_else(|| {
                    DriverError::permanent_message(format!(
                        "Nodegroup {name} has no machine deployment in Cluster {stack_id}."
                    ))
                })
            })
            .await?;
        }
        Ok(Writes::none())
    }

    /// `update_cluster` (`PATCH /v1/clusters/{id}` with `node_count`): the default worker
    /// nodegroup's resize to the count the conductor saved. The nodegroup is marked
    /// `UPDATE_IN_PROGRESS` so that the status sync follows it.
    pub async fn update(&self, ctx: &DriverContext<'_>, cluster: &Cluster) -> DriverResult<Writes> {
        let Some(worker) = ctx
            .nodegroups
            .iter()
            .find(|ng| !is_master(ng) && ng.is_default == Some(true))
        else {
            return Err(DriverError::permanent_message(format!(
                "Cluster {} has no default worker nodegroup.",
                cluster.uuid.as_deref().unwrap_or("")
            )));
        };
        self.resize(ctx, cluster, &[], worker).await?;
        let mut ng = worker.clone();
        ng.status = Some(ClusterStatus::UpdateInProgress);
        ng.status_reason = None;
        Ok(Writes {
            nodegroups: vec![ng],
            destroy_nodegroups: Vec::new(),
        })
    }

    /// `create_nodegroup`: its server group and a new topology entry.
    pub async fn create_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
        nodegroup: &NodeGroup,
    ) -> DriverResult<Writes> {
        let m = self.mgmt().await?;
        let stack_id = stack_id_of(cluster)?;
        let fresh = self.fresh_entry(ctx, cluster, &stack_id, nodegroup).await?;
        self.change_cluster(m, &stack_id, |c| Ok(topology::put_entry(c, fresh.clone())))
            .await?;
        Ok(Writes::none())
    }

    /// `delete_nodegroup`: the entry goes from the topology; the row is
    /// `DELETE_IN_PROGRESS` until the status sync sees the MachineDeployment gone (also when
    /// the entry was gone already).
    pub async fn delete_nodegroup(
        &self,
        cluster: &Cluster,
        nodegroup: &NodeGroup,
    ) -> DriverResult<Writes> {
        let mut ng = nodegroup.clone();
        ng.status = Some(ClusterStatus::DeleteInProgress);
        let writes = Writes {
            nodegroups: vec![ng],
            destroy_nodegroups: Vec::new(),
        };
        let Some(stack_id) = cluster.stack_id.clone().filter(|s| !s.is_empty()) else {
            return Ok(writes);
        };
        let m = self.mgmt().await?;
        let name = nodegroup.name.clone();
        match self
            .change_cluster(m, &stack_id, |c| Ok(topology::remove_entry(c, &name)))
            .await
        {
            Ok(_) => {}
            // no Cluster at all: nothing to remove
            Err(e) if !e.is_transient() && m.get(mgmt::CLUSTER, &stack_id).await?.is_none() => {}
            Err(e) => return Err(e),
        }
        Ok(writes)
    }

    /// `upgrade_cluster`: the cluster moves onto `template` (its `kube_tag` and
    /// image); with a default nodegroup the control plane and the default nodegroups are
    /// upgraded, with another one only that nodegroup. Worker nodegroups not upgraded keep
    /// their version (`defer-upgrade`).
    pub async fn upgrade(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        template: &ClusterTemplate,
        max_batch_size: i32,
        nodegroup: &NodeGroup,
    ) -> DriverResult<Writes> {
        let m = self.mgmt().await?;
        let stack_id = stack_id_of(cluster)?;
        let new_tag = Labels::new(template.labels.as_ref())
            .get("kube_tag")
            .map(str::to_string);
        let old_tag = Labels::new(cluster.labels.as_ref())
            .get("kube_tag")
            .map(str::to_string);
        check_upgrade(old_tag.as_deref(), new_tag.as_deref())?;
        let credential = m
            .get(mgmt::SECRET, &secrets::cloud_config_secret_name(&stack_id))
            .await?
            .as_ref()
            .and_then(credential_of)
            .ok_or_else(|| {
                DriverError::permanent_message(format!(
                    "The credentials of Cluster {stack_id} ({}) are missing.",
                    secrets::cloud_config_secret_name(&stack_id)
                ))
            })?;

        // the rows as the upgrade leaves them
        let whole = nodegroup.is_default == Some(true);
        let mut upgraded = cluster.clone();
        if whole {
            upgraded.cluster_template_id = template.uuid.clone();
            if let Some(tag) = &new_tag {
                upgraded
                    .labels
                    .get_or_insert_with(StringMap::new)
                    .insert("kube_tag".into(), tag.clone());
            }
        }
        let cluster_tag = Labels::new(upgraded.labels.as_ref())
            .get("kube_tag")
            .map(str::to_string);
        let mut rows = Vec::with_capacity(ctx.nodegroups.len());
        let mut writes = Writes::none();
        for ng in ctx.nodegroups {
            let mut ng = ng.clone();
            let target = if whole {
                ng.is_default == Some(true)
            } else {
                ng.uuid == nodegroup.uuid
            };
            if target {
                ng.image_id = template.image_id.clone();
                if let Some(tag) = &cluster_tag {
                    ng.labels
                        .get_or_insert_with(StringMap::new)
                        .insert("kube_tag".into(), tag.clone());
                }
                ng.status = Some(ClusterStatus::UpdateInProgress);
                ng.status_reason = None;
                writes.nodegroups.push(ng.clone());
            }
            rows.push(ng);
        }
        let uctx = DriverContext {
            request: ctx.request,
            template,
            nodegroups: &rows,
        };
        let default_volume_type = self
            .write_addons(m, &uctx, &upgraded, template, &credential)
            .await?;
        let lookups = self
            .cluster_lookups(m, &uctx, &upgraded, &stack_id, &default_volume_type)
            .await?;
        let mut fresh = cluster::cluster_object(&upgraded, template, &rows, &lookups)?;
        let targets: Vec<&str> = writes.nodegroups.iter().map(|n| n.name.as_str()).collect();
        if let Some(mds) = fresh["spec"]["topology"]["workers"]["machineDeployments"].as_array_mut()
        {
            for md in mds {
                let name = md["name"].as_str().unwrap_or_default().to_string();
                let row = rows.iter().find(|r| r.name == name);
                let behind = row.is_some_and(|r| {
                    Labels::new(r.labels.as_ref())
                        .get("kube_tag")
                        .map(str::to_string)
                        != cluster_tag
                });
                if behind {
                    md["metadata"]["annotations"][DEFER_UPGRADE_ANNOTATION] = json!("");
                }
                if targets.contains(&name.as_str()) && max_batch_size > 0 {
                    md["strategy"] = json!({
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": max_batch_size},
                    });
                }
            }
        }
        self.change_cluster(m, &stack_id, |live| {
            let before = live.clone();
            live["metadata"]["labels"] = fresh["metadata"]["labels"].clone();
            live["spec"]["clusterNetwork"] = fresh["spec"]["clusterNetwork"].clone();
            // what CAPI defaulted in the topology (e.g. the class namespace) stays
            let topo = &mut live["spec"]["topology"];
            if let (Some(t), Some(f)) =
                (topo.as_object_mut(), fresh["spec"]["topology"].as_object())
            {
                for (k, v) in f {
                    t.insert(k.clone(), v.clone());
                }
            }
            Ok(*live != before)
        })
        .await?;
        // the autoscaler follows the new Kubernetes version
        self.install_autoscaler(m, &upgraded).await?;
        *cluster = upgraded;
        Ok(writes)
    }

    /// The health monitor (`magnum_cluster_api/monitor.py`) from the management cluster's view: the control plane
    /// is healthy when its `KubeadmControlPlane` is `Available`, a node when its Machine is
    /// `NodeHealthy`. With the autoscaler, each nodegroup's `node_count` follows its
    /// MachineDeployment's replicas.
    pub async fn health(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<Option<HealthReport>> {
        let Some(stack_id) = cluster.stack_id.clone().filter(|s| !s.is_empty()) else {
            return Ok(Some(HealthReport {
                health_status: Some(ClusterHealthStatus::Unknown),
                health_status_reason: Some(StringMap::new()),
                ..HealthReport::default()
            }));
        };
        let m = self.mgmt().await?;
        // batched with the other clusters' polls (`batch.rs`)
        let _observing = m.observing();
        let asks = (
            m.list_labelled(mgmt::KUBEADM_CONTROL_PLANE, CLUSTER_NAME_LABEL, &stack_id),
            m.list_labelled(mgmt::MACHINE, CLUSTER_NAME_LABEL, &stack_id),
            auto_scaling(cluster)
                .then(|| m.list_labelled(mgmt::MACHINE_DEPLOYMENT, CLUSTER_NAME_LABEL, &stack_id)),
        );
        let _waiting = m.waiting();
        let (control_planes, machines, deployments) =
            tokio::try_join!(asks.0, asks.1, super::answer(asks.2))?;
        let report = status::health(ctx.nodegroups, &control_planes, &machines, &deployments)
            .ok_or_else(|| {
                DriverError::transient(format!(
                    "Cluster {stack_id} has no KubeadmControlPlane to tell its health."
                ))
            })?;
        Ok(Some(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_go_one_minor_version_forward() {
        assert!(check_upgrade(Some("v1.30.1"), Some("v1.30.4")).is_ok());
        assert!(check_upgrade(Some("v1.30.1"), Some("v1.31.0")).is_ok());
        assert!(check_upgrade(Some("v1.30.1"), Some("v1.30.1")).is_ok());
        let skip = check_upgrade(Some("v1.30.1"), Some("v1.32.0")).unwrap_err();
        assert_eq!(skip.kind(), ErrorKind::NotSupported);
        assert_eq!(
            skip.message(),
            "Cluster API upgrades Kubernetes one minor version at a time: the cluster's \
             kube_tag v1.30.1 cannot move to v1.32.0."
        );
        let down = check_upgrade(Some("v1.31.2"), Some("v1.31.1")).unwrap_err();
        assert!(
            down.message().contains("does not downgrade"),
            "{}",
            down.message()
        );
        assert!(check_upgrade(Some("v1.31.2"), Some("v2.0.0")).is_err());
        // what is not a version is left to the admission webhook
        assert!(check_upgrade(Some("latest"), Some("v1.31.0")).is_ok());
        assert!(check_upgrade(None, Some("v1.31.0")).is_ok());
        assert_eq!(version_of("v1.31.0-rc.1"), Some((1, 31, 0)));
        assert_eq!(version_of("1.31"), Some((1, 31, 0)));
    }
}
