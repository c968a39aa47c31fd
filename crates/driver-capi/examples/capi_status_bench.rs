//! The Cluster API driver's status sync at scale (issue 12's benchmark; `bench/capi-status.sh`
//! runs it): N clusters `CREATE_IN_PROGRESS` on the test rig's real kube-apiserver with the
//! real Cluster API manager (which renders their topology: KubeadmControlPlane,
//! MachineDeployments, MachineSets, Machines; no infrastructure provider runs, so they stay
//! in progress), then T status ticks over all of them, at most C at a time as the conductor's
//! status loop does (`sync_concurrency`, 8). Prints, as one JSON line: Kubernetes API requests
//! per cluster per tick, the process's CPU time per cluster per tick, and a tick's wall time;
//! and the same for the creates. A benchmark, not a test: nothing is asserted.
//!
//!   cargo run --release -p openkeel-driver-capi --example capi_status_bench -- [N] [T] [C]
//!
//! Needs OPENKEEL_TEST_KUBECONFIG and OPENKEEL_TEST_HELM (`eval "$(tests/services/env.sh)"`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use futures_util::stream::{self, StreamExt};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_driver_capi::driver::{entry_points_for, CapiDriver};
use openkeel_drivers::{Driver, DriverContext};
use openkeel_tests::kapi;
use serde_json::json;

/// User plus system CPU time of this process and of its finished children (the `helm`
/// runs) (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // the fields after the command name, which is in parentheses
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11..15].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    Duration::from_millis(ticks * 10)
}

struct One {
    cluster: Cluster,
    nodegroups: Vec<NodeGroup>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N T C are numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(100);
    let ticks = args.get(1).copied().unwrap_or(5);
    let conc = args.get(2).copied().unwrap_or(8);

    let client = kapi::client()
        .await
        .expect("the rig (OPENKEEL_TEST_KUBECONFIG)");
    let ns = kapi::fresh_namespace(&client, "bench-status").await;
    let fakes = Fakes::new();
    let mut s = settings(&ns);
    s.client.kubeconfig = kapi::kubeconfig().unwrap().display().to_string();
    s.request_timeout = Duration::from_secs(30);
    let inner = Arc::new(CapiDriver::new(
        s,
        fakes.deps(),
        real_helm().expect("helm (OPENKEEL_TEST_HELM)"),
    ));
    let driver: Arc<dyn Driver> = entry_points_for(inner.clone()).remove(0).1;
    let t = template();
    let req = RequestContext::default();

    // N creates, C at a time
    let (c0, w0) = (cpu(), Instant::now());
    let clusters: Vec<One> = stream::iter(0..n)
        .map(|_| {
            let driver = driver.clone();
            let (t, req) = (t.clone(), req.clone());
            async move {
                let uuid = uuid::Uuid::new_v4().to_string();
                let mut one = One {
                    cluster: cluster(&uuid),
                    nodegroups: nodegroups(&uuid),
                };
                let ngs = one.nodegroups.clone();
                let ctx = DriverContext {
                    request: &req,
                    template: &t,
                    nodegroups: &ngs,
                };
                // a transient failure (the rig's API server is busy) is retried, as the
                // conductor's next attempt would
                let mut attempts = 0;
                while let Err(e) = driver.create_cluster(&ctx, &mut one.cluster, 60).await {
                    attempts += 1;
                    assert!(e.is_transient() && attempts < 5, "create: {e:?}");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
                for ng in &mut one.nodegroups {
                    ng.stack_id = one.cluster.stack_id.clone();
                }
                one.cluster.status = Some(ClusterStatus::CreateInProgress);
                one
            }
        })
        .buffer_unordered(conc)
        .collect()
        .await;
    let m = inner.mgmt().await.expect("client");
    let create_requests = m.request_count();
    let (create_cpu, create_wall) = (cpu() - c0, w0.elapsed());

    // let the topology controller render every cluster's objects
    tokio::time::sleep(Duration::from_secs(20)).await;

    let nodegroups_per_cluster = clusters.first().map_or(0, |c| c.nodegroups.len());
    let mut per_tick = Vec::new();
    for _ in 0..ticks {
        let (r0, c0, w0) = (m.request_count(), cpu(), Instant::now());
        let changed = stream::iter(clusters.iter())
            .map(|one| {
                let driver = driver.clone();
                let (t, req) = (t.clone(), req.clone());
                async move {
                    let ctx = DriverContext {
                        request: &req,
                        template: &t,
                        nodegroups: &one.nodegroups,
                    };
                    // a transient error is counted; the conductor retries on the next tick
                    match driver.update_cluster_status(&ctx, &one.cluster).await {
                        Ok(r) => (usize::from(r.status.is_some()), 0),
                        Err(e) if e.is_transient() => (0, 1),
                        Err(e) => panic!("tick: {e:?}"),
                    }
                }
            })
            .buffer_unordered(conc)
            .collect::<Vec<(usize, usize)>>()
            .await
            .into_iter()
            .fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
        let (changed, transient) = changed;
        per_tick.push(json!({
            "requests_per_cluster": (m.request_count() - r0) as f64 / n as f64,
            "cpu_ms_per_cluster": (cpu() - c0).as_secs_f64() * 1000.0 / n as f64,
            "wall_ms": w0.elapsed().as_secs_f64() * 1000.0,
            "status_changes": changed,
            "transient_errors": transient,
        }));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // the clean-up: the rig's CAPI manager would otherwise reconcile them until it restarts
    let (d0, dw) = (m.request_count(), Instant::now());
    stream::iter(clusters.into_iter())
        .map(|mut one| {
            let driver = driver.clone();
            let (t, req) = (t.clone(), req.clone());
            async move {
                let ngs = one.nodegroups.clone();
                let ctx = DriverContext {
                    request: &req,
                    template: &t,
                    nodegroups: &ngs,
                };
                one.cluster.status = Some(ClusterStatus::DeleteInProgress);
                driver
                    .delete_cluster(&ctx, &mut one.cluster)
                    .await
                    .expect("delete");
            }
        })
        .buffer_unordered(conc)
        .collect::<Vec<()>>()
        .await;
    println!(
        "{}",
        json!({
            "delete": {
                "requests_per_cluster": (m.request_count() - d0) as f64 / n as f64,
                "wall_s": dw.elapsed().as_secs_f64(),
            },
            "clusters": n,
            "nodegroups_per_cluster": nodegroups_per_cluster,
            "concurrency": conc,
            "create": {
                "requests_per_cluster": create_requests as f64 / n as f64,
                "cpu_ms_per_cluster": create_cpu.as_secs_f64() * 1000.0 / n as f64,
                "wall_s": create_wall.as_secs_f64(),
            },
            "ticks": per_tick,
            "namespace": ns,
        })
    );
}
