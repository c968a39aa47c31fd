//! Keystone application credentials for the Cluster API driver, against the real Keystone
//! 30.0.0 that `tests/run.sh` starts (`tests/services/keystone.sh`): created with the user's
//! token, usable (a token is issued for it), deleted with the service credentials, deleting
//! again is fine; the region check; a second create for the same cluster replaces the first;
//! a rotation's credentials (`<uuid>-<suffix>`), deleted by id and with the cluster.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_cloud::{
    ApplicationCredentialSettings, CloudSettings, KeystoneApplicationCredentials,
    KeystoneAuthSettings, KeystoneCloud,
};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use openkeel_drivers::deps::ApplicationCredentials;
use std::sync::Arc;

fn creds(ks: &openkeel_tests::Keystone, region: Option<&str>) -> KeystoneApplicationCredentials {
    creds_as(ks, region, "magnum", "service")
}

/// As [`creds`], with `user` of `project` as the service user.
fn creds_as(
    ks: &openkeel_tests::Keystone,
    region: Option<&str>,
    user: &str,
    project: &str,
) -> KeystoneApplicationCredentials {
    let cloud = KeystoneCloud::new(CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_type: Some("password".into()),
            auth_url: Some(ks.url.clone()),
            username: Some(user.into()),
            password: Some(ks.password(user)),
            project_name: Some(project.into()),
            user_domain_name: Some("Default".into()),
            project_domain_name: Some("Default".into()),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    KeystoneApplicationCredentials::new(
        Arc::new(cloud),
        ApplicationCredentialSettings {
            endpoint_type: "publicURL".into(),
            region_name: region.map(str::to_string),
        },
    )
}

/// The context the conductor gets for a user's request: the token (no token body: the
/// catalogue comes from validating it).
async fn user_ctx(ks: &openkeel_tests::Keystone, user: &str) -> RequestContext {
    RequestContext {
        user_id: Some(ks.user_id(user)),
        project_id: Some(ks.project_id(&ks.project_of(user))),
        auth_token: Some(ks.token(user).await),
        ..Default::default()
    }
}

fn cluster(ks: &openkeel_tests::Keystone, user: &str) -> Cluster {
    Cluster {
        uuid: Some(uuid::Uuid::new_v4().to_string()),
        user_id: Some(ks.user_id(user)),
        project_id: Some(ks.project_id(&ks.project_of(user))),
        ..Default::default()
    }
}

/// Authenticate with an application credential: Keystone's status.
async fn app_cred_auth(ks: &openkeel_tests::Keystone, id: &str, secret: &str) -> u16 {
    let body = serde_json::json!({"auth": {"identity": {"methods": ["application_credential"],
        "application_credential": {"id": id, "secret": secret}}}})
    .to_string();
    let path = format!(
        "{}/auth/tokens?nocatalog",
        ks.url
            .trim_start_matches("http://")
            .split_once('/')
            .map(|(_, p)| format!("/{p}"))
            .unwrap_or_default()
            .trim_end_matches('/')
    );
    openkeel_tests::http(
        ks.addr,
        "POST",
        &path,
        &[("Content-Type", "application/json")],
        Some(body.as_bytes()),
    )
    .await
    .unwrap()
    .status
}

async fn listed(ks: &openkeel_tests::Keystone, user: &str, name: &str) -> usize {
    let r = ks
        .admin_request(
            "GET",
            &format!(
                "/users/{}/application_credentials?name={name}",
                ks.user_id(user)
            ),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    v["application_credentials"].as_array().unwrap().len()
}

#[tokio::test]
async fn create_use_delete_delete_again() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let ac = creds(&ks, Some("RegionOne"));
    let ctx = user_ctx(&ks, "demo").await;
    let c = cluster(&ks, "demo");
    let uuid = c.uuid.clone().unwrap();
    let cred = ac.create(&ctx, &c).await.unwrap();
    assert!(!cred.id.is_empty() && !cred.secret.is_empty());
    assert_eq!(cred.region_name.as_deref(), Some("RegionOne"));
    // The catalogue's public identity endpoint, as magnum-cluster-api's `url_for`.
    assert!(
        cred.auth_url.starts_with(&format!("http://{}", ks.addr)),
        "{}",
        cred.auth_url
    );
    assert!(
        !format!("{cred:?}").contains(&cred.secret),
        "Debug hides the secret"
    );
    assert_eq!(listed(&ks, "demo", &uuid).await, 1);

    // It authenticates (and carries the user's roles: no roles were given).
    assert_eq!(app_cred_auth(&ks, &cred.id, &cred.secret).await, 201);
    let r = ks
        .admin_request(
            "GET",
            &format!(
                "/users/{}/application_credentials/{}",
                ks.user_id("demo"),
                cred.id
            ),
            None,
        )
        .await;
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let ac_doc = &v["application_credential"];
    assert_eq!(ac_doc["name"], uuid.as_str());
    assert_eq!(ac_doc["description"], format!("Magnum cluster ({uuid})"));
    assert_eq!(ac_doc["expires_at"], serde_json::Value::Null);
    assert_ne!(ac_doc["unrestricted"], true, "restricted (the default)");
    let roles: Vec<&str> = ac_doc["roles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(roles.contains(&"member"), "{roles:?}");

    // Delete with the service credentials (no user token), then again.
    ac.delete(&ks.user_id("demo"), &uuid).await.unwrap();
    assert_eq!(listed(&ks, "demo", &uuid).await, 0);
    // Keystone 30 answers 404 (could not find application credential) once it is gone.
    assert!(matches!(
        app_cred_auth(&ks, &cred.id, &cred.secret).await,
        401 | 404
    ));
    ac.delete(&ks.user_id("demo"), &uuid).await.unwrap();
    // An unknown user: Keystone's 404 is success too.
    ac.delete("0123456789abcdef0123456789abcdef", &uuid)
        .await
        .unwrap();
}

/// A failure case of magnum-cluster-api (`magnum_cluster_api/clients.py`): a service user Keystone forbids to list the cluster owner's credentials
/// (here a plain member) does not block the delete: the credential is left in place, with a
/// warning, as magnum-cluster-api does (otherwise the cluster could never be deleted).
#[tokio::test]
async fn a_forbidden_look_up_does_not_block_the_delete() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let ac = creds(&ks, Some("RegionOne"));
    let ctx = user_ctx(&ks, "demo").await;
    let c = cluster(&ks, "demo");
    let uuid = c.uuid.clone().unwrap();
    ac.create(&ctx, &c).await.unwrap();
    let forbidden = creds_as(&ks, Some("RegionOne"), "alt", "alt");
    forbidden
        .delete(&ks.user_id("demo"), &uuid)
        .await
        .expect("a 403 is not an error");
    assert_eq!(listed(&ks, "demo", &uuid).await, 1, "left in place");
    ac.delete(&ks.user_id("demo"), &uuid).await.unwrap();
    assert_eq!(listed(&ks, "demo", &uuid).await, 0);
}

#[tokio::test]
async fn a_second_create_replaces_the_first() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let ac = creds(&ks, Some("RegionOne"));
    let ctx = user_ctx(&ks, "demo").await;
    let c = cluster(&ks, "demo");
    let uuid = c.uuid.clone().unwrap();
    let first = ac.create(&ctx, &c).await.unwrap();
    let second = ac.create(&ctx, &c).await.unwrap();
    assert_ne!(first.id, second.id);
    assert_eq!(listed(&ks, "demo", &uuid).await, 1);
    assert_eq!(app_cred_auth(&ks, &second.id, &second.secret).await, 201);
    ac.delete(&ks.user_id("demo"), &uuid).await.unwrap();
    assert_eq!(listed(&ks, "demo", &uuid).await, 0);
}

#[tokio::test]
async fn the_region_is_checked_first() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let ctx = user_ctx(&ks, "demo").await;
    let c = cluster(&ks, "demo");
    let uuid = c.uuid.clone().unwrap();
    let e = creds(&ks, None).create(&ctx, &c).await.unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(
        (e.error().code(), e.message()),
        (400, "region_name needs to be configured in magnum.conf")
    );
    let e = creds(&ks, Some("Atlantis"))
        .create(&ctx, &c)
        .await
        .unwrap_err();
    assert!(!e.is_transient());
    assert!(
        e.message()
            .starts_with("region_name Atlantis is invalid, expecting a region_name in "),
        "{e}"
    );
    assert!(e.message().contains("RegionOne"), "{e}");
    assert!(e.message().ends_with("/unspecified."), "{e}");
    // Nothing was created.
    assert_eq!(listed(&ks, "demo", &uuid).await, 0);

    // An invalid token: Keystone's 401 is permanent; an unreachable Keystone transient.
    let bad = RequestContext {
        auth_token: Some("not-a-token".into()),
        ..ctx.clone()
    };
    let e = creds(&ks, Some("RegionOne"))
        .create(&bad, &c)
        .await
        .unwrap_err();
    assert!(!e.is_transient(), "{e}");
    let dead = KeystoneCloud::new(CloudSettings {
        keystone_auth: KeystoneAuthSettings {
            auth_url: Some("http://127.0.0.1:9/v3".into()),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let dead = KeystoneApplicationCredentials::new(
        Arc::new(dead),
        ApplicationCredentialSettings {
            endpoint_type: "publicURL".into(),
            region_name: Some("RegionOne".into()),
        },
    );
    let e = dead.create(&ctx, &c).await.unwrap_err();
    assert!(e.is_transient(), "{e}");
    let e = dead.delete(&ks.user_id("demo"), &uuid).await.unwrap_err();
    assert!(e.is_transient(), "{e}");
}

/// A rotation's credentials: named `<uuid>-<suffix>` beside the first (Keystone wants names
/// unique per user), usable, deleted by id (again: fine); the cluster's delete takes the first
/// and every rotation's, and no other cluster's.
#[tokio::test]
async fn rotated_credentials_by_id_and_with_the_cluster() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let ac = creds(&ks, Some("RegionOne"));
    let ctx = user_ctx(&ks, "demo").await;
    let c = cluster(&ks, "demo");
    let uuid = c.uuid.clone().unwrap();
    let other = cluster(&ks, "demo");
    let other_uuid = other.uuid.clone().unwrap();
    let first = ac.create(&ctx, &c).await.unwrap();
    let neighbour = ac.create(&ctx, &other).await.unwrap();
    let name = openkeel_drivers::deps::rotated_credential_name(&uuid, "0a1b2c3d");
    let rotated = ac.create_named(&ctx, &c, &name).await.unwrap();
    assert_ne!(first.id, rotated.id);
    assert_eq!(listed(&ks, "demo", &uuid).await, 1);
    assert_eq!(listed(&ks, "demo", &name).await, 1);
    assert_eq!(app_cred_auth(&ks, &rotated.id, &rotated.secret).await, 201);
    assert_eq!(app_cred_auth(&ks, &first.id, &first.secret).await, 201);

    // the old one by id, with the service credentials; again is fine
    let demo = ks.user_id("demo");
    ac.delete_id(&demo, &first.id).await.unwrap();
    assert_eq!(listed(&ks, "demo", &uuid).await, 0);
    assert!(matches!(
        app_cred_auth(&ks, &first.id, &first.secret).await,
        401 | 404
    ));
    assert_eq!(app_cred_auth(&ks, &rotated.id, &rotated.secret).await, 201);
    ac.delete_id(&demo, &first.id).await.unwrap();

    // an interrupted rotation's leftover and the current one both go with the cluster
    let leftover_name = openkeel_drivers::deps::rotated_credential_name(&uuid, "ffffffff");
    ac.create_named(&ctx, &c, &leftover_name).await.unwrap();
    ac.delete(&demo, &uuid).await.unwrap();
    assert_eq!(listed(&ks, "demo", &name).await, 0);
    assert_eq!(listed(&ks, "demo", &leftover_name).await, 0);
    assert!(matches!(
        app_cred_auth(&ks, &rotated.id, &rotated.secret).await,
        401 | 404
    ));
    // the other cluster's is untouched
    assert_eq!(listed(&ks, "demo", &other_uuid).await, 1);
    assert_eq!(
        app_cred_auth(&ks, &neighbour.id, &neighbour.secret).await,
        201
    );
    ac.delete(&demo, &other_uuid).await.unwrap();
    assert_eq!(listed(&ks, "demo", &other_uuid).await, 0);

    // a service user Keystone refuses: deleting by id is an error, not a silent success
    let c2 = cluster(&ks, "demo");
    let kept = ac.create(&ctx, &c2).await.unwrap();
    let forbidden = creds_as(&ks, Some("RegionOne"), "alt", "alt");
    let e = forbidden.delete_id(&demo, &kept.id).await.unwrap_err();
    assert!(!e.is_transient(), "{e}");
    assert_eq!(app_cred_auth(&ks, &kept.id, &kept.secret).await, 201);
    ac.delete(&demo, c2.uuid.as_deref().unwrap()).await.unwrap();
}
