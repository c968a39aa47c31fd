//! Credential rotation (`rotate_credential`) against the in-memory Kubernetes API and the
//! in-memory application credentials: the new credential everywhere the old one was, the old
//! one deleted once the Secrets hold the new one, and every failure after the new credential
//! exists leaving the cluster with a working one. The real Keystone and the real API server
//! are `crates/cli/tests/capi_e2e.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use openkeel_driver_capi::driver::{entry_points_for, CapiDriver};
use openkeel_driver_capi::mgmt::{self, Mgmt};
use openkeel_drivers::deps::ApplicationCredentials;
use openkeel_drivers::{Driver, DriverContext, DriverResult};
use serde_json::Value;

const NS: &str = "magnum-system";
const SECRETS: &str = "/api/v1/namespaces/magnum-system/secrets";

struct Rig {
    api: FakeApi,
    fakes: Fakes,
    driver: Arc<dyn Driver>,
}

fn rig() -> Rig {
    let api = FakeApi::default();
    let fakes = Fakes::new();
    let timeout = Duration::from_secs(10);
    let mgmt = Mgmt::new(api.client(), NS, timeout);
    let inner = Arc::new(CapiDriver::with_mgmt(
        settings(NS),
        fakes.deps(),
        stand_in_charts(),
        mgmt,
    ));
    let driver = entry_points_for(inner).remove(0).1;
    Rig { api, fakes, driver }
}

fn owner() -> RequestContext {
    RequestContext {
        user_id: Some("user1".into()),
        ..RequestContext::default()
    }
}

/// A cluster created by the driver (its first credential named after the uuid).
async fn created(r: &Rig) -> Cluster {
    let mut c = cluster(UUID);
    let ngs = nodegroups(UUID);
    let req = owner();
    let t = template();
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: &ngs,
    };
    r.driver.create_cluster(&ctx, &mut c, 60).await.unwrap();
    c
}

async fn rotate(r: &Rig, c: &mut Cluster, req: &RequestContext) -> DriverResult<()> {
    let ngs = nodegroups(UUID);
    let t = template();
    let ctx = DriverContext {
        request: req,
        template: &t,
        nodegroups: &ngs,
    };
    r.driver.rotate_credential(&ctx, c).await.map(|_| ())
}

/// The three Secrets that carry the credential, by name.
fn carriers(c: &Cluster) -> [String; 3] {
    let stack_id = c.stack_id.clone().unwrap();
    [
        UUID.to_string(),
        format!("{stack_id}-cloud-provider"),
        format!("{stack_id}-cloud-config"),
    ]
}

fn text_of(r: &Rig, name: &str) -> String {
    let s = r.api.get(SECRETS, name).unwrap_or(Value::Null);
    s["data"]
        .as_object()
        .map(|d| {
            d.keys()
                .filter_map(|k| mgmt::secret_text(&s, k))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Which of the three Secrets mention `text`.
fn mentioning(r: &Rig, c: &Cluster, text: &str) -> Vec<String> {
    carriers(c)
        .into_iter()
        .filter(|n| text_of(r, n).contains(text))
        .collect()
}

fn live(r: &Rig) -> Vec<(String, String)> {
    r.fakes
        .creds
        .live
        .lock()
        .unwrap()
        .iter()
        .map(|(n, i)| (n.clone(), i.clone()))
        .collect()
}

fn id_named(r: &Rig, name: &str) -> String {
    r.fakes.creds.live.lock().unwrap()[name].clone()
}

#[tokio::test]
async fn the_new_credential_replaces_the_old_one_everywhere() {
    let r = rig();
    let mut c = created(&r).await;
    let old = id_named(&r, UUID);
    assert_eq!(mentioning(&r, &c, &old).len(), 3, "created with it");

    rotate(&r, &mut c, &owner()).await.unwrap();
    let now = live(&r);
    assert_eq!(now.len(), 1, "the old credential is gone: {now:?}");
    let (name, new) = now[0].clone();
    let suffix = name.strip_prefix(&format!("{UUID}-")).unwrap();
    assert!(
        suffix.len() == 8 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    assert_eq!(mentioning(&r, &c, &new).len(), 3, "the Secrets hold {new}");
    assert!(mentioning(&r, &c, &old).is_empty());
    assert!(text_of(&r, &carriers(&c)[2]).contains(&format!("s3cret-{name}")));
    // created before the Secrets were written, the old one deleted after
    let calls = r.fakes.calls.all();
    let created = calls
        .iter()
        .position(|l| *l == format!("appcred create {name}"))
        .unwrap();
    let deleted = calls
        .iter()
        .position(|l| *l == format!("appcred delete_id user1 {old}"))
        .unwrap();
    assert!(created < deleted, "{calls:?}");

    // a second rotation replaces the rotated one; the cluster's delete finds whichever is
    // current by its name
    rotate(&r, &mut c, &owner()).await.unwrap();
    let again = live(&r);
    assert_eq!(again.len(), 1, "{again:?}");
    assert_ne!(again[0].0, name);
    assert_eq!(mentioning(&r, &c, &again[0].1).len(), 3);
    r.fakes.creds.delete("user1", UUID).await.unwrap();
    assert!(live(&r).is_empty());
}

#[tokio::test]
async fn a_failed_secret_write_keeps_the_old_credential() {
    let r = rig();
    let mut c = created(&r).await;
    let old = id_named(&r, UUID);
    let stack_id = c.stack_id.clone().unwrap();
    // the addon Secrets take the new credential, CAPO's does not
    r.api.fault(
        "PATCH",
        &format!("/secrets/{stack_id}-cloud-config"),
        503,
        "the server is shutting down",
        1,
    );
    let e = rotate(&r, &mut c, &owner()).await.unwrap_err();
    assert!(e.is_transient(), "{e}");
    assert!(
        e.message()
            .contains("Rotating the application credential failed")
            && e.message()
                .contains("the cluster keeps its application credential"),
        "{e}"
    );
    assert_eq!(
        live(&r),
        vec![(UUID.to_string(), old.clone())],
        "the new credential is deleted"
    );
    assert_eq!(mentioning(&r, &c, &old).len(), 3, "the Secrets are back");
    let new_created = r
        .fakes
        .calls
        .all()
        .iter()
        .any(|l| l.starts_with(&format!("appcred create {UUID}-")));
    assert!(new_created);

    // nothing written: the first Secret fails
    r.api
        .fault("PATCH", &format!("/secrets/{UUID}"), 422, "invalid", 1);
    let e = rotate(&r, &mut c, &owner()).await.unwrap_err();
    assert!(!e.is_transient(), "{e}");
    assert_eq!(live(&r), vec![(UUID.to_string(), old.clone())]);
    assert_eq!(mentioning(&r, &c, &old).len(), 3);

    // the Secrets cannot be written back either (the API server goes away): both
    // credentials are kept, both work
    r.api.fault(
        "PATCH",
        &format!("/secrets/{stack_id}-cloud-config"),
        503,
        "the server is shutting down",
        1,
    );
    r.api.fault(
        "GET",
        &format!("/secrets/{UUID}"),
        503,
        "the server is shutting down",
        1,
    );
    let e = rotate(&r, &mut c, &owner()).await.unwrap_err();
    assert!(
        e.message()
            .contains("both application credentials are kept"),
        "{e}"
    );
    let both = live(&r);
    assert_eq!(both.len(), 2, "{both:?}");
    let new = both.iter().find(|(n, _)| n != UUID).unwrap().1.clone();
    assert_eq!(
        mentioning(&r, &c, &old),
        vec![format!("{stack_id}-cloud-config")],
        "CAPO's Secret kept the old one"
    );
    assert_eq!(
        mentioning(&r, &c, &new).len(),
        2,
        "the addons took the new one"
    );
    // and the next rotation, successful, replaces it
    rotate(&r, &mut c, &owner()).await.unwrap();
    let now = live(&r);
    assert_eq!(
        now.len(),
        2,
        "the leftover stays until the cluster goes: {now:?}"
    );
    assert!(!now.iter().any(|(_, i)| *i == old));
    r.fakes.creds.delete("user1", UUID).await.unwrap();
    assert!(live(&r).is_empty(), "the cluster's delete takes every one");
}

#[tokio::test]
async fn a_failed_delete_of_the_old_credential_is_reported() {
    let r = rig();
    let mut c = created(&r).await;
    let old = id_named(&r, UUID);
    *r.fakes.creds.fail_delete_id.lock().unwrap() = true;
    let e = rotate(&r, &mut c, &owner()).await.unwrap_err();
    assert!(
        e.message().contains("now uses application credential")
            && e.message()
                .contains(&format!("deleting the old one ({old}) failed")),
        "{e}"
    );
    let now = live(&r);
    assert_eq!(now.len(), 2, "{now:?}");
    let new = now.iter().find(|(n, _)| n != UUID).unwrap().1.clone();
    assert_eq!(mentioning(&r, &c, &new).len(), 3, "the new one is in use");
}

#[tokio::test]
async fn only_the_owner_rotates_and_only_a_written_cluster() {
    let r = rig();
    let mut c = created(&r).await;
    let before = r.fakes.calls.all().len();
    let other = RequestContext {
        user_id: Some("user2".into()),
        ..RequestContext::default()
    };
    let e = rotate(&r, &mut c, &other).await.unwrap_err();
    assert_eq!(e.error().code(), 400, "{e}");
    assert!(e.message().contains("other than its owner (user1"), "{e}");
    assert_eq!(
        r.fakes.calls.all().len(),
        before,
        "nothing asked of Keystone"
    );

    let mut fresh = cluster("0f0e0d0c-0b0a-4908-8706-050403020100");
    let e = rotate(&r, &mut fresh, &owner()).await.unwrap_err();
    assert!(e.message().contains("no Cluster API cluster"), "{e}");

    // the Secret is gone: nothing to rotate from
    let stack_id = c.stack_id.clone().unwrap();
    r.api.remove(SECRETS, &format!("{stack_id}-cloud-config"));
    let e = rotate(&r, &mut c, &owner()).await.unwrap_err();
    assert!(e.message().contains("are missing"), "{e}");
    assert_eq!(live(&r).len(), 1);
}
