//! The Cluster API driver's `DriverCloud` over `KeystoneCloud`, against the stand-in cloud:
//! look-ups with typed (transient / permanent) errors, Cinder's default volume type, Nova
//! server groups with Nova's microversion rules, timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_cloud::{ClientSettings, CloudSettings, KeystoneAuthSettings, KeystoneCloud};
use openkeel_core::context::RequestContext;
use openkeel_drivers::deps::DriverCloud;
use openkeel_tests::standin::{
    self, Delay, Fault, FloatingIp, LoadBalancer, ServerGroup, StandIn, StandInData, VolumeType,
};
use serde_json::json;
use std::time::{Duration, Instant};

fn region_one() -> ClientSettings {
    ClientSettings {
        region_name: Some("RegionOne".into()),
        endpoint_type: "publicURL".into(),
    }
}

fn cloud(s: &StandIn) -> KeystoneCloud {
    KeystoneCloud::new(CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_type: Some("password".into()),
            auth_url: Some(s.keystone_url()),
            username: Some("magnum".into()),
            password: Some("magnum-svc".into()),
            user_domain_id: Some("default".into()),
            project_name: Some("service".into()),
            project_domain_id: Some("default".into()),
            ..Default::default()
        },
        glance_client: region_one(),
        nova_client: region_one(),
        neutron_client: region_one(),
        cinder_client: region_one(),
        default_timeout: Duration::from_secs(2),
        ..Default::default()
    })
    .unwrap()
}

fn user_ctx(s: &StandIn, project: &str) -> RequestContext {
    let token = s.issue_token("demo-user", project);
    RequestContext {
        user_id: Some("demo-user".into()),
        project_id: Some(project.into()),
        auth_token: Some(token.clone()),
        auth_token_info: s.token_body(&token).map(std::sync::Arc::new),
        ..Default::default()
    }
}

#[tokio::test]
async fn look_ups_reuse_the_cloud_requests() {
    let s = standin::start(StandInData::default()).await;
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    let f = c.flavor(&ctx, "m1.small").await.unwrap();
    assert_eq!((f.id.as_str(), f.disk, f.ram), ("2", 20, 2048));
    assert_eq!(c.flavor(&ctx, "3").await.unwrap().name, "m1.medium");
    let e = c.flavor(&ctx, "m1.huge").await.unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(e.message(), "Unable to find flavor m1.huge.");

    let i = c.image(&ctx, "ubuntu-jammy").await.unwrap();
    assert_eq!(i.os_distro.as_deref(), Some("ubuntu"));
    let e = c.image(&ctx, "dup-image").await.unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(e.error().code(), 409);

    let d = s.data();
    let n = c.network(&ctx, "public", true).await.unwrap();
    assert_eq!(n.id, d.network_id("public"));
    let e = c.network(&ctx, "private", true).await.unwrap_err();
    assert_eq!(e.message(), "Unable to find external network private.");
    let n = c
        .network(&ctx, &d.network_id("private"), false)
        .await
        .unwrap();
    assert_eq!(n.name, "private");
    let e = c.network(&ctx, "nope", false).await.unwrap_err();
    assert_eq!(e.message(), "Unable to find fixed network nope.");
    let sn = c.subnet(&ctx, "private-subnet").await.unwrap();
    assert_eq!(sn.id, d.subnet_id("private-subnet"));
    let e = c.subnet(&ctx, "nope").await.unwrap_err();
    assert_eq!(e.message(), "Unable to find fixed subnet nope.");

    // The flavor look-up is Nova's list (the same request as the API's validation).
    let nova: Vec<_> = s.requests_to("compute");
    assert!(nova.iter().all(|r| r.service_path == "/v2.1/flavors/detail"
        && r.header("x-auth-token") == ctx.auth_token.as_deref()));
}

#[tokio::test]
async fn unreachable_timeouts_and_5xx_are_transient() {
    let s = standin::start(StandInData::default()).await;
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    s.update(|d| {
        d.faults.push(Fault::new(
            "GET",
            "/compute/v2.1/flavors",
            503,
            json!({"computeFault": {"code": 503, "message": "down"}}),
        ))
    });
    let e = c.flavor(&ctx, "m1.small").await.unwrap_err();
    assert!(e.is_transient(), "{e}");
    s.update(|d| {
        d.faults.clear();
        d.faults.push(Fault::new(
            "GET",
            "/network/v2.0/subnets",
            403,
            json!({"NeutronError": {"type": "Forbidden", "message": "no", "detail": ""}}),
        ));
        d.delays.push(Delay {
            path_contains: "/v2.1/os-server-groups".into(),
            delay: Duration::from_secs(10),
        });
    });
    let e = c.subnet(&ctx, "private-subnet").await.unwrap_err();
    assert!(!e.is_transient(), "a 403 is permanent: {e}");
    let started = Instant::now();
    let e = c
        .ensure_server_group(&ctx, "kube-x", "soft-anti-affinity")
        .await
        .unwrap_err();
    assert!(e.is_transient(), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5), "bounded");

    // Nothing listening: transient too.
    let addr = s.addr;
    drop(s);
    let dead = KeystoneCloud::new(CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_url: Some(format!("http://{addr}/identity/v3")),
            ..Default::default()
        },
        default_timeout: Duration::from_secs(2),
        ..Default::default()
    })
    .unwrap();
    let ctx = RequestContext {
        auth_token: Some("t".into()),
        ..Default::default()
    };
    let e = dead.flavor(&ctx, "m1.small").await.unwrap_err();
    assert!(e.is_transient(), "{e}");
}

#[tokio::test]
async fn default_volume_type_with_microversion_and_fallback() {
    let s = standin::start(StandInData::default()).await;
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    s.update(|d| d.default_volume_type = Some("ssd".into()));
    assert_eq!(c.default_volume_type(&ctx).await.unwrap(), "ssd");
    let r = s.requests_to("volume");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].service_path, "/v3/types/default");
    assert_eq!(r[0].header("openstack-api-version"), Some("volume 3.62"));

    // No default type: Cinder's 404, then the first listed type (magnum-cluster-api's rule).
    s.update(|d| d.default_volume_type = None);
    s.clear_requests();
    assert_eq!(c.default_volume_type(&ctx).await.unwrap(), "__DEFAULT__");
    let paths: Vec<_> = s
        .requests_to("volume")
        .into_iter()
        .map(|r| (r.service_path, r.status))
        .collect();
    assert_eq!(
        paths,
        [
            ("/v3/types/default".to_string(), 404),
            ("/v3/types".to_string(), 200)
        ]
    );

    s.update(|d| d.volume_types.clear());
    let e = c.default_volume_type(&ctx).await.unwrap_err();
    assert!(!e.is_transient());
    s.update(|d| {
        d.faults.push(Fault::new(
            "GET",
            "/volume/v3/types",
            500,
            json!({"computeFault": {"code": 500, "message": "boom"}}),
        ))
    });
    assert!(c
        .default_volume_type(&ctx)
        .await
        .unwrap_err()
        .is_transient());

    // A catalogue without block-storage: a permanent error naming it.
    let s2 = standin::start(StandInData {
        catalog: Some(json!([{"type": "identity", "name": "keystone", "endpoints": [
            {"interface": "public", "region_id": "RegionOne", "region": "RegionOne", "url": "{base}/identity"}]}])),
        ..StandInData::default()
    })
    .await;
    let e = cloud(&s2)
        .default_volume_type(&user_ctx(&s2, "p1"))
        .await
        .unwrap_err();
    assert!(!e.is_transient());
    assert!(
        e.message()
            .contains("publicURL endpoint for block-storage service in RegionOne region not found"),
        "{e}"
    );
}

#[tokio::test]
async fn volume_types_or_none_without_block_storage() {
    let s = standin::start(StandInData::default()).await;
    s.update(|d| {
        d.volume_types = vec![
            VolumeType::new("t1", "__DEFAULT__"),
            VolumeType::new("t2", "ssd"),
            VolumeType::new("t3", "Slow HDD"),
        ]
    });
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    assert_eq!(
        c.volume_types(&ctx).await.unwrap(),
        Some(vec![
            "__DEFAULT__".to_string(),
            "ssd".into(),
            "Slow HDD".into()
        ])
    );
    let r = s.requests_to("volume");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].service_path, "/v3/types");

    // No block-storage service in the catalogue: Cinder CSI is off, not an error.
    let s2 = standin::start(StandInData {
        catalog: Some(json!([{"type": "identity", "name": "keystone", "endpoints": [
            {"interface": "public", "region_id": "RegionOne", "region": "RegionOne", "url": "{base}/identity"}]}])),
        ..StandInData::default()
    })
    .await;
    assert_eq!(
        cloud(&s2).volume_types(&user_ctx(&s2, "p1")).await.unwrap(),
        None
    );

    // Cinder unreachable: transient.
    s.update(|d| {
        d.faults.push(Fault::new(
            "GET",
            "/volume/v3/types",
            503,
            json!({"error": {"code": 503, "message": "unavailable"}}),
        ))
    });
    assert!(c.volume_types(&ctx).await.unwrap_err().is_transient());
}

#[tokio::test]
async fn a_clusters_load_balancers_and_their_floating_ips_go_before_it() {
    const U: &str = "5f0c6a0e-3a5e-4a77-9b3e-2f5f3f0d9a11";
    let desc =
        |svc: &str, uuid: &str| format!("Kubernetes external service {svc} from cluster {uuid}");
    let s = standin::start(StandInData::default()).await;
    s.update(|d| {
        d.load_balancers = vec![
            LoadBalancer::new("lb1", "p1", &desc("default/web", U), "port1"),
            LoadBalancer::new(
                "lb2",
                "p1",
                &desc("default/web", "another-cluster"),
                "port2",
            ),
            LoadBalancer {
                provisioning_status: "PENDING_DELETE".into(),
                ..LoadBalancer::new("lb3", "p1", &desc("default/db", U), "port3")
            },
            LoadBalancer::new(
                "lb4",
                "p1",
                &format!("Kubernetes from cluster {U}"),
                "port4",
            ),
        ];
        d.floating_ips = vec![
            FloatingIp {
                id: "fip1".into(),
                port_id: "port1".into(),
                description: format!("Floating IP for {}", desc("default/web", U)),
            },
            FloatingIp {
                id: "fip2".into(),
                port_id: "port2".into(),
                description: "someone's".into(),
            },
        ];
    });
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    c.delete_cluster_load_balancers(&ctx, U, Duration::from_secs(5))
        .await
        .unwrap();
    let d = s.data();
    let left: Vec<&str> = d.load_balancers.iter().map(|l| l.id.as_str()).collect();
    // lb3 was already going; lb4's description does not match Magnum's pattern
    assert_eq!(left, ["lb2", "lb4"]);
    let fips: Vec<&str> = d.floating_ips.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(fips, ["fip2"]);
    let deletes: Vec<(String, String)> = s
        .requests_to("load-balancer")
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| (r.service_path, r.query))
        .collect();
    assert_eq!(
        deletes,
        [(
            "/v2/lbaas/loadbalancers/lb1".to_string(),
            "cascade=true".to_string()
        )]
    );

    // a load balancer that never goes: PreDeletionFailed after the timeout
    s.update(|d| {
        d.lb_deletes_hang = true;
        d.load_balancers
            .push(LoadBalancer::new("lb5", "p1", &desc("default/api", U), ""));
    });
    let t0 = Instant::now();
    let e = c
        .delete_cluster_load_balancers(&ctx, U, Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(t0.elapsed() >= Duration::from_secs(2), "{:?}", t0.elapsed());
    assert!(!e.is_transient());
    assert_eq!(
        e.error().kind(),
        openkeel_core::error::ErrorKind::PreDeletionFailed
    );
    assert!(
        e.message().starts_with(&format!("Failed to pre-delete resources for cluster {U}, error: Timeout waiting for the load balancers")),
        "{}",
        e.message()
    );

    // no load-balancer service in the catalogue: nothing to do
    let s2 = standin::start(StandInData {
        catalog: Some(json!([{"type": "identity", "name": "keystone", "endpoints": [
            {"interface": "public", "region_id": "RegionOne", "region": "RegionOne", "url": "{base}/identity"}]}])),
        ..StandInData::default()
    })
    .await;
    cloud(&s2)
        .delete_cluster_load_balancers(&user_ctx(&s2, "p1"), U, Duration::from_secs(2))
        .await
        .unwrap();
}

#[tokio::test]
async fn server_groups_ensure_and_delete() {
    let s = standin::start(StandInData::default()).await;
    let c = cloud(&s);
    let ctx = user_ctx(&s, "p1");
    let id = c
        .ensure_server_group(&ctx, "kube-abc", "soft-anti-affinity")
        .await
        .unwrap();
    let groups = s.data().server_groups;
    assert_eq!(groups.len(), 1);
    assert_eq!(
        (
            groups[0].id.as_str(),
            groups[0].name.as_str(),
            groups[0].policy.as_str(),
            groups[0].project_id.as_str()
        ),
        (id.as_str(), "kube-abc", "soft-anti-affinity", "p1")
    );
    let post = s
        .requests_to("compute")
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("openstack-api-version"), Some("compute 2.64"));
    assert_eq!(
        post.body,
        Some(json!({"server_group": {"name": "kube-abc", "policy": "soft-anti-affinity"}}))
    );

    // Again: found, not created twice.
    let again = c
        .ensure_server_group(&ctx, "kube-abc", "soft-anti-affinity")
        .await
        .unwrap();
    assert_eq!(again, id);
    assert_eq!(s.data().server_groups.len(), 1);

    // Two of the same name: magnum-cluster-api's Conflict.
    s.update(|d| {
        d.server_groups.push(ServerGroup {
            id: "dup-id".into(),
            name: "kube-abc".into(),
            policy: "anti-affinity".into(),
            project_id: "p1".into(),
            user_id: "demo-user".into(),
        })
    });
    let e = c
        .ensure_server_group(&ctx, "kube-abc", "soft-anti-affinity")
        .await
        .unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(
        e.message(),
        "too many server groups with name kube-abc were found"
    );

    // A group of another project with the same name is not ours (an admin context lists
    // all projects and keeps the context's project).
    s.update(|d| {
        d.server_groups.retain(|g| g.id != "dup-id");
        d.server_groups.push(ServerGroup {
            id: "other-project".into(),
            name: "kube-abc".into(),
            policy: "anti-affinity".into(),
            project_id: "p2".into(),
            user_id: "someone".into(),
        })
    });
    let admin = RequestContext {
        is_admin: true,
        project_id: Some("p1".into()),
        ..Default::default()
    };
    s.clear_requests();
    assert_eq!(
        c.ensure_server_group(&admin, "kube-abc", "soft-anti-affinity")
            .await
            .unwrap(),
        id
    );
    let list = &s.requests_to("compute")[0];
    assert!(
        list.query_pairs()
            .contains(&("all_projects".to_string(), "True".to_string())),
        "{list:?}"
    );

    // Delete with the admin context: only p1's group goes; again is fine.
    c.delete_server_group(&admin, "kube-abc").await.unwrap();
    let left: Vec<_> = s.data().server_groups.into_iter().map(|g| g.id).collect();
    assert_eq!(left, ["other-project"]);
    c.delete_server_group(&admin, "kube-abc").await.unwrap();
    c.delete_server_group(&ctx, "never-was").await.unwrap();

    // Gone between the list and the delete: Nova's 404 is success.
    let gone = c
        .ensure_server_group(&ctx, "kube-gone", "anti-affinity")
        .await
        .unwrap();
    s.update(|d| {
        d.faults.push(Fault::new(
            "DELETE",
            &format!("/os-server-groups/{gone}"),
            404,
            json!({"itemNotFound": {"code": 404, "message": "gone"}}),
        ))
    });
    c.delete_server_group(&ctx, "kube-gone").await.unwrap();
}

/// The stand-in's Nova follows Nova's microversion rules (so the client's 2.64 matters).
#[tokio::test]
async fn standin_nova_microversions() {
    let s = standin::start(StandInData::default()).await;
    let token = s.issue_token("u", "p1");
    let call = |method: &'static str, version: Option<&'static str>, body: serde_json::Value| {
        let token = token.clone();
        let addr = s.addr;
        async move {
            let text = body.to_string();
            let mv = version.map(|v| format!("compute {v}"));
            let mut h = vec![
                ("X-Auth-Token", token.as_str()),
                ("Content-Type", "application/json"),
            ];
            if let Some(v) = mv.as_deref() {
                h.push(("OpenStack-API-Version", v));
            }
            let body = (!body.is_null()).then_some(text.as_bytes());
            let r = openkeel_tests::http(addr, method, "/compute/v2.1/os-server-groups", &h, body)
                .await
                .unwrap();
            let json: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            (r.status, json)
        }
    };
    // 2.1 (no header): `policies`; soft policies need 2.15.
    let soft = json!({"server_group": {"name": "a", "policies": ["soft-anti-affinity"]}});
    assert_eq!(call("POST", None, soft.clone()).await.0, 400);
    let (st, b) = call("POST", Some("2.15"), soft).await;
    assert_eq!(st, 200);
    assert_eq!(b["server_group"]["policies"], json!(["soft-anti-affinity"]));
    assert!(b["server_group"].get("policy").is_none());
    // 2.64: `policy`; `policies` is refused.
    let old = json!({"server_group": {"name": "b", "policies": ["anti-affinity"]}});
    assert_eq!(call("POST", Some("2.64"), old).await.0, 400);
    let new = json!({"server_group": {"name": "b", "policy": "anti-affinity"}});
    let (st, b) = call("POST", Some("2.64"), new).await;
    assert_eq!(st, 200);
    assert_eq!(b["server_group"]["policy"], "anti-affinity");
    assert_eq!(b["server_group"]["project_id"], "p1");
    let (st, b) = call("GET", Some("2.64"), json!(null)).await;
    assert_eq!(
        (st, b["server_groups"].as_array().map(Vec::len)),
        (200, Some(2))
    );
    assert_eq!(call("GET", Some("3.0"), json!(null)).await.0, 406);
}
