//! keystonemiddleware-equivalent token validation against the real Keystone 30.0.0 that
//! `tests/run.sh` starts (`tests/services/keystone.sh`): valid, invalid, revoked and missing
//! tokens, service tokens, the cache, the catalogue, an unreachable Keystone and bad service
//! credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_auth::authtoken::{AuthFailure, AuthToken, AuthTokenSettings};
use openkeel_cloud::{CloudSettings, KeystoneAuthSettings};

fn settings(ks: &openkeel_tests::Keystone, password: &str) -> AuthTokenSettings {
    AuthTokenSettings {
        www_authenticate_uri: Some(ks.url.clone()),
        credentials: CloudSettings {
            keystone_auth: KeystoneAuthSettings {
                auth_type: Some("password".into()),
                auth_url: Some(ks.url.clone()),
                username: Some("magnum".into()),
                password: Some(password.into()),
                project_name: Some("service".into()),
                user_domain_name: Some("Default".into()),
                project_domain_name: Some("Default".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

fn header<'a>(h: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn validates_real_tokens() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let v = AuthToken::new(settings(&ks, &ks.password("magnum"))).unwrap();
    assert_eq!(v.www_authenticate(), format!("Keystone uri=\"{}\"", ks.url));

    let demo = ks.token("demo").await;
    let id = v
        .authenticate(Some(&demo), None, "GET", "/v1/clusters")
        .await
        .unwrap();
    let h = &id.headers;
    assert_eq!(header(h, "x-identity-status"), Some("Confirmed"));
    assert_eq!(header(h, "x-user-id"), Some(ks.user_id("demo").as_str()));
    assert_eq!(header(h, "x-user-name"), Some("demo"));
    assert_eq!(
        header(h, "x-project-id"),
        Some(ks.project_id("demo").as_str())
    );
    assert_eq!(header(h, "x-project-name"), Some("demo"));
    assert_eq!(header(h, "x-user-domain-id"), Some("default"));
    assert_eq!(header(h, "x-user-domain-name"), Some("Default"));
    assert_eq!(header(h, "x-project-domain-id"), Some("default"));
    assert_eq!(header(h, "x-is-admin-project"), Some("True"));
    assert_eq!(header(h, "x-tenant-id"), header(h, "x-project-id"));
    let mut roles: Vec<&str> = header(h, "x-roles").unwrap().split(',').collect();
    roles.sort();
    assert_eq!(roles, ["member", "reader"], "implied roles included");
    assert_eq!(header(h, "x-domain-id"), None);
    assert_eq!(header(h, "openstack-system-scope"), None);
    let catalog: serde_json::Value =
        serde_json::from_str(header(h, "x-service-catalog").unwrap()).unwrap();
    assert!(
        catalog
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["type"] == "identity" && s["endpoints"][0]["publicURL"].is_string()),
        "{catalog}"
    );
    assert!(id.token_info["token"]["catalog"].is_array());
    assert_eq!(id.user_id.as_deref(), Some(ks.user_id("demo").as_str()));
    assert_eq!(
        id.project_id.as_deref(),
        Some(ks.project_id("demo").as_str())
    );

    // The admin of the admin project.
    let admin = ks.token("admin").await;
    let id = v
        .authenticate(Some(&admin), None, "GET", "/v1/clusters")
        .await
        .unwrap();
    assert!(header(&id.headers, "x-roles")
        .unwrap()
        .split(',')
        .any(|r| r == "admin"));

    // Missing, empty and invalid tokens.
    for t in [None, Some(""), Some("  "), Some("not-a-token")] {
        assert_eq!(
            v.authenticate(t, None, "GET", "/v1/clusters").await.err(),
            Some(AuthFailure::Unauthorized),
            "{t:?}"
        );
    }
    // A token with surrounding blanks is validated trimmed, as keystonemiddleware does.
    assert!(v
        .authenticate(Some(&format!(" {demo} ")), None, "GET", "/v1/clusters")
        .await
        .is_ok());
}

#[tokio::test]
async fn no_catalogue_when_not_included() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let mut s = settings(&ks, &ks.password("magnum"));
    s.include_service_catalog = false;
    let v = AuthToken::new(s).unwrap();
    let id = v
        .authenticate(Some(&ks.token("alt").await), None, "GET", "/v1/clusters")
        .await
        .unwrap();
    assert_eq!(header(&id.headers, "x-service-catalog"), None);
    assert!(id.token_info["token"].get("catalog").is_none());
    assert_eq!(
        header(&id.headers, "x-project-id"),
        Some(ks.project_id("alt").as_str())
    );
}

#[tokio::test]
async fn cache_keeps_results_for_token_cache_time() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    // Cached: a token revoked after its first validation is still accepted until the cache
    // entry expires (keystonemiddleware's documented trade-off).
    let v = AuthToken::new(settings(&ks, &ks.password("magnum"))).unwrap();
    let t = ks.token("demo").await;
    assert!(v.authenticate(Some(&t), None, "GET", "/v1").await.is_ok());
    assert_eq!(v.cached_tokens(), 1);
    ks.revoke(&t).await;
    assert!(v.authenticate(Some(&t), None, "GET", "/v1").await.is_ok());
    // An invalid token is cached as invalid too.
    assert!(v
        .authenticate(Some("bogus"), None, "GET", "/v1")
        .await
        .is_err());
    assert_eq!(v.cached_tokens(), 2);

    // token_cache_time = -1: every request is validated, the revocation is seen at once.
    let mut s = settings(&ks, &ks.password("magnum"));
    s.token_cache_time = -1;
    let v = AuthToken::new(s).unwrap();
    let t = ks.token("demo").await;
    assert!(v.authenticate(Some(&t), None, "GET", "/v1").await.is_ok());
    assert_eq!(v.cached_tokens(), 0);
    ks.revoke(&t).await;
    assert_eq!(
        v.authenticate(Some(&t), None, "GET", "/v1").await.err(),
        Some(AuthFailure::Unauthorized)
    );
}

#[tokio::test]
async fn service_tokens() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let v = AuthToken::new(settings(&ks, &ks.password("magnum"))).unwrap();
    let user = ks.token("demo").await;
    // A valid service token (the magnum user has the service role).
    let svc = ks.token("magnum").await;
    let id = v
        .authenticate(Some(&user), Some(&svc), "GET", "/v1/clusters")
        .await
        .unwrap();
    assert_eq!(
        header(&id.headers, "x-service-identity-status"),
        Some("Confirmed")
    );
    assert_eq!(header(&id.headers, "x-service-user-name"), Some("magnum"));
    assert!(header(&id.headers, "x-service-roles")
        .unwrap()
        .split(',')
        .any(|r| r == "service"));
    assert_eq!(header(&id.headers, "x-user-name"), Some("demo"));
    // A valid token without a service role is not a service token: refused.
    let alt = ks.token("alt").await;
    assert_eq!(
        v.authenticate(Some(&user), Some(&alt), "GET", "/v1/clusters")
            .await
            .err(),
        Some(AuthFailure::Unauthorized)
    );
    // An invalid service token with a valid user token: refused.
    assert_eq!(
        v.authenticate(Some(&user), Some("bogus"), "GET", "/v1/clusters")
            .await
            .err(),
        Some(AuthFailure::Unauthorized)
    );
    // A service token alone is not enough.
    assert_eq!(
        v.authenticate(None, Some(&svc), "GET", "/v1/clusters")
            .await
            .err(),
        Some(AuthFailure::Unauthorized)
    );
    // service_token_roles_required = false: any valid token is accepted as service token.
    let mut s = settings(&ks, &ks.password("magnum"));
    s.service_token_roles_required = false;
    let v = AuthToken::new(s).unwrap();
    assert!(v
        .authenticate(Some(&user), Some(&alt), "GET", "/v1/clusters")
        .await
        .is_ok());
}

#[tokio::test]
async fn keystone_unavailable_or_refusing_the_service_user() {
    let Some(ks) = openkeel_tests::keystone() else {
        return;
    };
    let user = ks.token("demo").await;
    // Wrong service password: Keystone refuses the middleware itself (503, not 401).
    let v = AuthToken::new(settings(&ks, "wrong-password")).unwrap();
    assert!(matches!(
        v.authenticate(Some(&user), None, "GET", "/v1/clusters")
            .await,
        Err(AuthFailure::Unavailable(_))
    ));
    // Nothing listening.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v3", listener.local_addr().unwrap());
    drop(listener);
    let mut s = settings(&ks, &ks.password("magnum"));
    s.credentials.keystone_auth.auth_url = Some(dead);
    let v = AuthToken::new(s).unwrap();
    assert!(matches!(
        v.authenticate(Some(&user), None, "GET", "/v1/clusters")
            .await,
        Err(AuthFailure::Unavailable(_))
    ));
    // No token is still a 401, whatever Keystone's state.
    assert_eq!(
        v.authenticate(None, None, "GET", "/v1/clusters")
            .await
            .err(),
        Some(AuthFailure::Unauthorized)
    );
}
