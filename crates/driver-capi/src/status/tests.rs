use super::*;
use serde_json::json;

fn cluster(status: ClusterStatus) -> Cluster {
    Cluster {
        uuid: Some("c-uuid".into()),
        stack_id: Some("kube-ab12c".into()),
        status: Some(status),
        ..Default::default()
    }
}

fn ng(uuid: &str, name: &str, role: &str, count: i32, status: ClusterStatus) -> NodeGroup {
    NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        role: Some(role.into()),
        node_count: Some(count),
        is_default: Some(name.starts_with("default")),
        status: Some(status),
        ..Default::default()
    }
}

fn nodegroups(status: ClusterStatus) -> Vec<NodeGroup> {
    vec![
        ng("m", "default-master", "master", 3, status),
        ng("w", "default-worker", "worker", 2, status),
    ]
}

fn cond(t: &str, s: &str) -> Value {
    json!({"type": t, "status": s, "reason": format!("{t}Reason"), "message": format!("{t} message"), "severity": if s == "True" { "" } else { "Info" }})
}

fn capi_cluster(ready: bool) -> Value {
    let s = if ready { "True" } else { "False" };
    json!({
        "metadata": {"name": "kube-ab12c"},
        "spec": {
            "controlPlaneEndpoint": {"host": "203.0.113.10", "port": 6443},
            "topology": {"version": "v1.30.4", "workers": {"machineDeployments": [
                {"name": "default-worker", "replicas": 2, "variables": {"overrides": [
                    {"name": "imageUUID", "value": "img-2"}, {"name": "flavor", "value": "m1.large"}]}}
            ]}},
        },
        "status": {"conditions": [cond("ControlPlaneReady", s), cond("InfrastructureReady", "True"), cond("Ready", s)]},
    })
}

fn kcp(replicas: i64, updated: i64, ready: bool, generation: i64) -> Value {
    json!({"metadata": {"name": "kube-ab12c-x"}, "status": {
        "replicas": replicas, "updatedReplicas": updated, "ready": ready, "observedGeneration": generation}})
}

fn md(name: &str, phase: &str, replicas: i64) -> Value {
    json!({"metadata": {"name": format!("kube-ab12c-{name}-x"), "labels": {DEPLOYMENT_NAME_LABEL: name}},
        "spec": {"replicas": replicas}, "status": {"phase": phase}})
}

fn ready_objects() -> Observed {
    Observed {
        cluster: Some(capi_cluster(true)),
        control_planes: vec![kcp(3, 3, true, 1)],
        machine_deployments: vec![md("default-worker", "Running", 2)],
        ..Default::default()
    }
}

fn status_of_ng<'a>(d: &'a Derived, uuid: &str) -> Option<&'a StatusChange> {
    d.report
        .nodegroups
        .iter()
        .find(|n| n.uuid == uuid)
        .and_then(|n| n.status.as_ref())
}

#[test]
fn early_polls_change_nothing() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    // no Cluster yet
    let d = derive(&c, &ngs, &Observed::default(), &Failures::default()).unwrap();
    assert_eq!(d, Derived::default());
    // a Cluster without status, no OpenStackCluster, no KCP
    let obs = Observed {
        cluster: Some(json!({"metadata": {"name": "kube-ab12c"}, "spec": {}})),
        ..Default::default()
    };
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert!(d.report.nodegroups.is_empty());
    assert!(d.report.api_address.is_none());
    assert_eq!(
        d.report.status,
        Some(StatusChange {
            status: ClusterStatus::CreateInProgress,
            reason: Some(
                "CAPI Cluster status: no events yet. CAPI OpenstackCluster status reason: \
                 not created yet"
                    .into()
            ),
        })
    );
}

#[test]
fn ready_cluster_completes_with_address_and_version() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let d = derive(&c, &ngs, &ready_objects(), &Failures::default()).unwrap();
    assert_eq!(
        d.report.status,
        Some(StatusChange {
            status: ClusterStatus::CreateComplete,
            reason: None
        })
    );
    assert_eq!(
        d.report.api_address.as_deref(),
        Some("https://203.0.113.10:6443")
    );
    assert_eq!(d.report.coe_version.as_deref(), Some("v1.30.4"));
    assert_eq!(
        status_of_ng(&d, "m").map(|s| s.status),
        Some(ClusterStatus::CreateComplete)
    );
    assert_eq!(
        status_of_ng(&d, "w").map(|s| s.status),
        Some(ClusterStatus::CreateComplete)
    );
    assert!(d.actions.is_empty());
}

#[test]
fn ready_cluster_waits_for_its_nodegroups() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let mut obs = ready_objects();
    obs.machine_deployments = vec![md("default-worker", "ScalingUp", 2)];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(d.report.status, None);
    assert_eq!(
        d.report.api_address.as_deref(),
        Some("https://203.0.113.10:6443")
    );
    assert_eq!(status_of_ng(&d, "w"), None);

    // control plane rolling: 3 replicas, 2 updated
    let mut obs = ready_objects();
    obs.control_planes = vec![kcp(3, 2, true, 1)];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(d.report.status, None);
    assert_eq!(status_of_ng(&d, "m"), None); // CREATE_IN_PROGRESS already

    // KCP generation > 1 turns the verb into UPDATE (magnum-cluster-api)
    let mut obs = ready_objects();
    obs.control_planes = vec![kcp(3, 3, true, 2)];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(
        status_of_ng(&d, "m").map(|s| s.status),
        Some(ClusterStatus::UpdateComplete)
    );
    assert_eq!(
        d.report.status.map(|s| s.status),
        Some(ClusterStatus::CreateComplete)
    );

    // no KCP, or two: the master nodegroup is left alone, so the cluster waits
    let mut obs = ready_objects();
    obs.control_planes = vec![];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(status_of_ng(&d, "m"), None);
    assert_eq!(d.report.status, None);
}

#[test]
fn not_ready_reason_is_formatted_from_the_latest_events() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let ev = |reason: &str, msg: &str, t: &str| json!({"reason": reason, "message": msg, "lastTimestamp": t});
    let obs = Observed {
        cluster: Some(capi_cluster(false)),
        control_planes: vec![kcp(3, 0, false, 1)],
        openstack_clusters: vec![
            json!({"metadata": {"name": "kube-ab12c-osc"}, "status": {"ready": false}}),
        ],
        cluster_events: vec![
            ev(
                "TopologyCreate",
                "Created KubeadmControlPlane",
                "2026-07-01T10:00:05Z",
            ),
            ev("Old", "older", "2026-07-01T09:00:00Z"),
        ],
        openstack_cluster_events: vec![ev(
            "SuccessfulCreateNetwork",
            "Created network k8s-clusterapi-cluster",
            "2026-07-01T10:00:07Z",
        )],
        ..Default::default()
    };
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(
        d.report.status,
        Some(StatusChange {
            status: ClusterStatus::CreateInProgress,
            reason: Some(
                "CAPI Cluster status: TopologyCreate: Created KubeadmControlPlane. CAPI \
                 OpenstackCluster status reason: SuccessfulCreateNetwork: Created network \
                 k8s-clusterapi-cluster"
                    .into()
            ),
        })
    );
    assert!(d.report.api_address.is_none());
    // the same reason again: nothing to write
    let mut c2 = c.clone();
    c2.status_reason = d.report.status.and_then(|s| s.reason);
    assert_eq!(
        derive(&c2, &ngs, &obs, &Failures::default())
            .unwrap()
            .report
            .status,
        None
    );

    // no events: the condition that is not True
    let obs = Observed {
        cluster: Some(capi_cluster(false)),
        ..Default::default()
    };
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(
        d.report.status.and_then(|s| s.reason).as_deref(),
        Some(
            "CAPI Cluster status: ReadyReason: Ready message. CAPI OpenstackCluster status \
             reason: not created yet"
        )
    );
}

#[test]
fn capi_failures_are_permanent_with_capis_text() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let base = Observed {
        cluster: Some(capi_cluster(false)),
        ..Default::default()
    };

    let mut obs = base.clone();
    obs.control_planes = vec![json!({"metadata": {"name": "kube-ab12c-cp"}, "status": {
        "failureReason": "InvalidConfiguration", "failureMessage": "etcd certificate is invalid"}})];
    let e = derive(&c, &ngs, &obs, &Failures::default()).unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(
        e.message(),
        "KubeadmControlPlane kube-ab12c-cp failed: InvalidConfiguration: etcd certificate is invalid"
    );

    let mut obs = base.clone();
    obs.machines = vec![
        json!({"metadata": {"name": "kube-ab12c-md-1"}, "status": {"conditions": [
        {"type": "BootstrapReady", "status": "False", "severity": "Info", "reason": "WaitingForControlPlane"},
        {"type": "InfrastructureReady", "status": "False", "severity": "Error",
         "reason": "InstanceCreateFailed", "message": "No valid host was found."}]}}),
    ];
    let e = derive(&c, &ngs, &obs, &Failures::default()).unwrap_err();
    assert_eq!(
        e.message(),
        "Machine kube-ab12c-md-1 failed: InfrastructureReady is False: InstanceCreateFailed: No valid host was found."
    );

    let mut obs = base.clone();
    obs.openstack_clusters = vec![json!({"metadata": {"name": "kube-ab12c-osc"}, "status": {
        "failureReason": "CreateError", "failureMessage": "failed to create network: quota exceeded"}})];
    let e = derive(&c, &ngs, &obs, &Failures::default()).unwrap_err();
    assert!(e
        .message()
        .starts_with("OpenStackCluster kube-ab12c-osc failed: CreateError"));

    let mut obs = base.clone();
    obs.machine_deployments = vec![md("default-worker", "Failed", 2)];
    let e = derive(&c, &ngs, &obs, &Failures::default()).unwrap_err();
    assert!(e
        .message()
        .contains("MachineDeployment kube-ab12c-default-worker-x failed"));

    // warnings and infos are progress, not failures
    let mut obs = base.clone();
    obs.machines = vec![json!({"metadata": {"name": "m"}, "status": {"conditions": [
        {"type": "InfrastructureReady", "status": "False", "severity": "Warning", "reason": "Slow"}]}})];
    assert!(derive(&c, &ngs, &obs, &Failures::default()).is_ok());
    // a failure during an update fails the update too
    let c = cluster(ClusterStatus::UpdateInProgress);
    obs.machines[0]["status"]["failureReason"] = json!("UpdateError");
    assert!(derive(&c, &ngs, &obs, &Failures::default()).is_err());
}

#[test]
fn update_completes_when_deployments_match_the_topology() {
    let c = cluster(ClusterStatus::UpdateInProgress);
    let mut ngs = nodegroups(ClusterStatus::UpdateComplete);
    ngs[1].status = Some(ClusterStatus::UpdateInProgress);
    let osm = |img: &str| {
        json!({"metadata": {"name": "o", "labels": {DEPLOYMENT_NAME_LABEL: "default-worker"}},
            "spec": {"image": {"id": img}, "flavor": "m1.large"}})
    };
    let mut obs = ready_objects();
    obs.openstack_machines = vec![osm("img-2"), osm("img-1")];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(status_of_ng(&d, "w"), None);
    assert_eq!(d.report.status, None);

    obs.openstack_machines = vec![osm("img-2")];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(
        status_of_ng(&d, "w").map(|s| s.status),
        Some(ClusterStatus::UpdateComplete)
    );
    assert_eq!(
        d.report.status.map(|s| s.status),
        Some(ClusterStatus::UpdateComplete)
    );

    // replicas not yet what the topology asks
    obs.machine_deployments = vec![md("default-worker", "Running", 1)];
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(status_of_ng(&d, "w"), None);
}

#[test]
fn deleted_nodegroups_wait_for_their_deployment_then_go() {
    let c = cluster(ClusterStatus::UpdateInProgress);
    let mut ngs = nodegroups(ClusterStatus::UpdateComplete);
    ngs.push(ng("g", "gpu", "worker", 1, ClusterStatus::DeleteInProgress));
    ngs.push(ng("old", "old", "worker", 1, ClusterStatus::DeleteComplete));
    let mut obs = ready_objects();
    obs.machine_deployments.push(md("gpu", "ScalingDown", 0));
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(status_of_ng(&d, "g"), None);
    assert!(d.actions.is_empty());
    assert_eq!(d.report.destroy_nodegroups, vec!["old".to_string()]);
    assert_eq!(d.report.status, None); // gpu still deleting

    obs.machine_deployments.pop();
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert_eq!(
        d.actions,
        vec![Action::DeleteServerGroup("kube-ab12c-gpu".into())]
    );
    assert!(d.report.destroy_nodegroups.contains(&"g".to_string()));
    assert_eq!(
        d.report.status.map(|s| s.status),
        Some(ClusterStatus::UpdateComplete)
    );
}

#[test]
fn delete_in_progress_until_the_cluster_is_gone() {
    let c = cluster(ClusterStatus::DeleteInProgress);
    let ngs = nodegroups(ClusterStatus::CreateComplete);
    let obs = Observed {
        cluster: Some(capi_cluster(false)),
        cluster_events: vec![json!({"reason": "Deleting", "message": "waiting for machines"})],
        ..Default::default()
    };
    let d = derive(&c, &ngs, &obs, &Failures::default()).unwrap();
    assert!(d.actions.is_empty());
    assert_eq!(
        d.report.status.and_then(|s| s.reason).as_deref(),
        Some(
            "CAPI Cluster status: Deleting: waiting for machines. CAPI OpenstackCluster status \
             reason: not created yet"
        )
    );
    let d = derive(&c, &ngs, &Observed::default(), &Failures::default()).unwrap();
    assert_eq!(d.actions, vec![Action::CleanUp]);
}

#[test]
fn fetch_policy() {
    let mut ngs = nodegroups(ClusterStatus::CreateComplete);
    assert!(!needs_detail(&capi_cluster(true), &ngs));
    assert!(needs_detail(&capi_cluster(false), &ngs));
    ngs[1].status = Some(ClusterStatus::UpdateInProgress);
    assert!(needs_detail(&capi_cluster(true), &ngs));
    assert!(needs_openstack_machines(&ngs));
    ngs[1].status = Some(ClusterStatus::CreateInProgress);
    assert!(!needs_openstack_machines(&ngs));
}

#[test]
fn error_conditions_fail_only_once_they_have_lasted() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let mut capi = capi_cluster(false);
    capi["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "TopologyReconciled", "status": "False", "severity": "Error",
            "reason": "TopologyReconcileFailed", "message": "spec.externalNetwork.id must be of type uuid",
            "lastTransitionTime": "2026-07-01T10:00:00Z"}));
    let obs = Observed {
        cluster: Some(capi),
        ..Default::default()
    };
    let at = |t: &str| Failures {
        now: DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc),
        grace: Duration::from_secs(60),
    };
    // CAPI retries a failed topology reconcile (a stale cache read, a conflict): progress,
    // however long it lasts; the conductor's create_timeout bounds it
    assert!(derive(&c, &ngs, &obs, &at("2026-07-01T11:00:00Z")).is_ok());
    // a server that could not be created is a failure once it has lasted the grace period
    let mut failed = obs.clone();
    let conds = failed.cluster.as_mut().unwrap()["status"]["conditions"]
        .as_array_mut()
        .unwrap();
    let last = conds.len() - 1;
    conds[last]["reason"] = json!("InstanceCreateFailed");
    conds[last]["message"] = json!("No valid host was found.");
    // 30 s: maybe Nova's scheduler retries
    assert!(derive(&c, &ngs, &failed, &at("2026-07-01T10:00:30Z")).is_ok());
    // 90 s: a failure
    let e = derive(&c, &ngs, &failed, &at("2026-07-01T10:01:30Z")).unwrap_err();
    assert_eq!(
        e.message(),
        "Cluster kube-ab12c failed: TopologyReconciled is False: InstanceCreateFailed: \
         No valid host was found."
    );
    // waiting for the control plane is not a failure, however long it takes
    let mut waiting = failed.clone();
    let conds = waiting.cluster.as_mut().unwrap()["status"]["conditions"]
        .as_array_mut()
        .unwrap();
    conds[last]["reason"] = json!("PreflightCheckFailed");
    assert!(derive(&c, &ngs, &waiting, &at("2026-07-01T11:00:00Z")).is_ok());
    // failureReason is terminal at once, whatever the time
    let mut obs2 = obs.clone();
    obs2.control_planes =
        vec![json!({"metadata": {"name": "cp"}, "status": {"failureReason": "X"}})];
    obs2.cluster.as_mut().unwrap()["status"]["conditions"] = json!([]);
    assert!(derive(&c, &ngs, &obs2, &at("2026-07-01T10:00:01Z")).is_err());
}

/// A MachineDeployment held back by its MachineSet's preflight checks while the control plane
/// is provisioning (real CAPI v1.13: `MachineSetReady` False, severity Error,
/// `PreflightCheckFailed`) is waiting, however long it lasts: with real servers the control
/// plane takes minutes, longer than the grace period.
#[test]
fn preflight_checks_are_waiting_not_failures() {
    let c = cluster(ClusterStatus::CreateInProgress);
    let ngs = nodegroups(ClusterStatus::CreateInProgress);
    let mut deployment = md("default-worker", "ScalingUp", 2);
    deployment["status"]["conditions"] = json!([
        {"type": "MachineSetReady", "status": "False", "severity": "Error",
         "reason": "PreflightCheckFailed",
         "message": "KubeadmControlPlane magnum-system/kube-ab12c-k6g25 is provisioning (\"ControlPlaneIsStable\" preflight check failed)",
         "lastTransitionTime": "2026-07-01T10:00:00Z"}]);
    let obs = Observed {
        cluster: Some(capi_cluster(false)),
        control_planes: vec![kcp(3, 0, false, 1)],
        machine_deployments: vec![deployment.clone()],
        ..Default::default()
    };
    let hour_later = Failures {
        now: DateTime::parse_from_rfc3339("2026-07-01T11:00:00Z")
            .unwrap()
            .with_timezone(&Utc),
        grace: Duration::from_secs(60),
    };
    let d = derive(&c, &ngs, &obs, &hour_later).expect("still waiting");
    assert!(
        d.report
            .status
            .as_ref()
            .is_none_or(|s| s.status == ClusterStatus::CreateInProgress),
        "{d:?}"
    );
    // a terminal reason on the same condition is still a failure
    let mut obs2 = obs.clone();
    obs2.machine_deployments[0]["status"]["conditions"][0]["reason"] =
        json!("InstanceCreateFailed");
    assert!(derive(&c, &ngs, &obs2, &hour_later).is_err());
}

fn machine(name: &str, osm: &str, healthy: bool) -> Value {
    json!({"metadata": {"name": name},
           "spec": {"infrastructureRef": {"name": osm}},
           "status": {"conditions": [cond("NodeHealthy", if healthy { "True" } else { "False" })]}})
}

#[test]
fn health_names_each_machine_and_the_api() {
    let ngs = nodegroups(ClusterStatus::CreateComplete);
    let kcp = |ok: &str| json!({"status": {"conditions": [cond("Available", ok)]}});
    let ms = [machine("m1", "osm-1", true), machine("m2", "osm-2", true)];
    let h = health(&ngs, &[kcp("True")], &ms, &[]).unwrap();
    assert_eq!(h.health_status, Some(ClusterHealthStatus::Healthy));
    let reason = h.health_status_reason.unwrap();
    assert_eq!(
        reason.iter().collect::<Vec<_>>(),
        [
            (&"osm-1.Ready".to_string(), &"True".to_string()),
            (&"osm-2.Ready".to_string(), &"True".to_string()),
            (&"api".to_string(), &"ok".to_string()),
        ]
    );
    assert!(h.nodegroups.is_empty());
    // one node down, or the API: unhealthy
    let ms = [machine("m1", "osm-1", true), machine("m2", "osm-2", false)];
    let h = health(&ngs, &[kcp("True")], &ms, &[]).unwrap();
    assert_eq!(h.health_status, Some(ClusterHealthStatus::Unhealthy));
    assert_eq!(h.health_status_reason.unwrap()["osm-2.Ready"], "False");
    let h = health(&ngs, &[kcp("False")], &[], &[]).unwrap();
    assert_eq!(h.health_status, Some(ClusterHealthStatus::Unhealthy));
    assert_eq!(h.health_status_reason.unwrap()["api"], "nok");
    // no control plane, or two: no answer (the old value stays)
    assert!(health(&ngs, &[], &[], &[]).is_none());
    assert!(health(&ngs, &[kcp("True"), kcp("True")], &[], &[]).is_none());
}

#[test]
fn with_the_autoscaler_node_counts_follow_the_deployments() {
    let ngs = nodegroups(ClusterStatus::UpdateComplete);
    let kcp = json!({"status": {"conditions": [cond("Available", "True")]}});
    let md = |name: &str, replicas: i64| json!({"metadata": {"labels": {DEPLOYMENT_NAME_LABEL: name}}, "spec": {"replicas": replicas}});
    let h = health(
        &ngs,
        std::slice::from_ref(&kcp),
        &[],
        &[md("default-worker", 5)],
    )
    .unwrap();
    assert_eq!(h.nodegroups.len(), 1);
    assert_eq!(h.nodegroups[0].uuid, "w");
    assert_eq!(h.nodegroups[0].node_count, Some(5));
    // the same count: nothing to write
    let h = health(&ngs, &[kcp], &[], &[md("default-worker", 2)]).unwrap();
    assert!(h.nodegroups.is_empty());
}

fn with_topology(mut capi: Value, generation: i64, seen: i64, status: &str, reason: &str) -> Value {
    capi["metadata"]["generation"] = json!(generation);
    capi["status"]["v1beta2"] = json!({"conditions": [{
        "type": "TopologyReconciled", "status": status, "reason": reason,
        "observedGeneration": seen,
    }]});
    capi
}

#[test]
fn the_topology_must_have_carried_the_spec_through() {
    let capi = capi_cluster(true);
    // fixtures and older Cluster API without v1beta2 conditions
    assert!(topology_settled(&capi));
    assert!(topology_settled(&with_topology(
        capi.clone(),
        3,
        3,
        "True",
        "ReconcileSucceeded"
    )));
    // the controller has not seen the new generation yet
    assert!(!topology_settled(&with_topology(
        capi.clone(),
        4,
        3,
        "True",
        "ReconcileSucceeded"
    )));
    // the control plane or the workers are being upgraded
    assert!(!topology_settled(&with_topology(
        capi.clone(),
        4,
        4,
        "False",
        "ControlPlaneUpgradePending"
    )));
    assert!(!topology_settled(&with_topology(
        capi.clone(),
        4,
        4,
        "False",
        "MachineDeploymentsUpgradePending"
    )));
    // only nodegroups held on their version on purpose
    assert!(topology_settled(&with_topology(
        capi,
        4,
        4,
        "False",
        "MachineDeploymentsUpgradeDeferred"
    )));
}

#[test]
fn an_update_does_not_complete_before_the_topology_took_it() {
    let cluster = cluster(ClusterStatus::UpdateInProgress);
    let ngs = nodegroups(ClusterStatus::UpdateInProgress);
    let mut obs = Observed {
        cluster: Some(with_topology(
            capi_cluster(true),
            5,
            4,
            "True",
            "ReconcileSucceeded",
        )),
        control_planes: vec![json!({"status": {
            "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "ready": true,
        }})],
        ..Observed::default()
    };
    let failures = Failures::now(Duration::from_secs(60));
    let d = derive(&cluster, &ngs, &obs, &failures).unwrap();
    assert!(d.report.nodegroups.is_empty(), "{:?}", d.report.nodegroups);
    assert_eq!(d.report.status, None);
    // CAPI's own account of what it is doing is the reason
    obs.cluster = Some(with_topology(
        capi_cluster(true),
        5,
        5,
        "False",
        "ClusterUpgrading",
    ));
    obs.cluster.as_mut().unwrap()["status"]["v1beta2"]["conditions"][0]["message"] =
        json!("Cluster is upgrading to v1.31.1\n  * MachineDeployment md-1 upgrading");
    let d = derive(&cluster, &ngs, &obs, &failures).unwrap();
    assert!(d.report.nodegroups.is_empty());
    assert_eq!(
        d.report.status,
        Some(StatusChange {
            status: ClusterStatus::UpdateInProgress,
            reason: Some(
                "CAPI Cluster status: ClusterUpgrading: Cluster is upgrading to v1.31.1 * \
                 MachineDeployment md-1 upgrading"
                    .into()
            ),
        })
    );
    // once it did, the control plane completes
    obs.cluster = Some(with_topology(
        capi_cluster(true),
        5,
        5,
        "True",
        "ReconcileSucceeded",
    ));
    let d = derive(&cluster, &ngs, &obs, &failures).unwrap();
    assert_eq!(
        d.report.nodegroups[0].status.as_ref().map(|c| c.status),
        Some(ClusterStatus::UpdateComplete)
    );
}
