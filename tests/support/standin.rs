//! A **stand-in** for the OpenStack services Magnum's API calls (Keystone v3, Glance v2, Nova
//! v2.1, Neutron v2.0): the real services cannot run here, so this in-process axum server
//! follows their APIs' shapes for the calls OpenKeel makes, with data each test chooses.
//! It is not an implementation of those services and validates nothing beyond tokens.
//!
//! | service | paths (below `<base>/<service>`) |
//! |---|---|
//! | `identity` | `GET /`, `GET /v3`, `POST /v3/auth/tokens` (password or token method; answers 201 with `X-Subject-Token` and a token body whose catalogue lists identity, image, compute, network, container-infra and, when [`StandInData::key_manager_url`] is set, key-manager), `GET`/`HEAD`/`DELETE /v3/auth/tokens` (`X-Subject-Token`), `GET /v3/projects/{id}` (404 for ids starting with `nonexistent` or listed as missing) |
//! | `image` | `GET /`, `GET /v2/images/{id}` (404 as Glance, HTML body), `GET /v2/images?name=&limit=&marker=` (`next` link when a page is full) |
//! | `compute` | `GET /v2.1`, `GET /v2.1/flavors[/detail]` (`flavors_links`), `GET /v2.1/flavors/{id}`, `GET /v2.1/os-keypairs[/{name}]` (404 `itemNotFound`) |
//! | `compute` (server groups) | `GET /v2.1/os-server-groups?all_projects=&limit=&offset=`, `POST /v2.1/os-server-groups`, `GET`/`DELETE /v2.1/os-server-groups/{id}`, with Nova's microversion rules (`OpenStack-API-Version: compute X.Y` or `X-OpenStack-Nova-API-Version`; none is 2.1): before 2.64 `policies` (a list; `soft-*` from 2.15) and `metadata`, from 2.64 `policy` and `rules`; `project_id`/`user_id` from 2.13; `all_projects` only for admin tokens |
//! | `network` | `GET /`, `GET /v2.0/networks?router:external=&name=` (`networks_links`), `GET /v2.0/subnets` |
//! | `volume` (`block-storage`) | `GET /v3/types`, `GET /v3/types/default` (from microversion 3.62, `OpenStack-API-Version: volume 3.62`; before it, and with no default type, 404 `itemNotFound`), also below `/v3/{project_id}` |
//!
//! The catalogue also lists `block-storage` (Cinder v3, `<base>/volume/v3`) and
//! `load-balancer` (Octavia: `GET /v2/lbaas/loadbalancers`, `DELETE
//! /v2/lbaas/loadbalancers/{id}?cascade=true`; Neutron serves `GET /v2.0/floatingips?port_id=`
//! and `DELETE /v2.0/floatingips/{id}`).
//! Each catalogue entry has three endpoints in [`StandInData::region`]: `public` at
//! `<base>/<service>`, `internal` at `<base>/internal/<service>`, `admin` at
//! `<base>/admin/<service>` (the compute entries end in `/v2.1`), so a test can tell from
//! [`RecordedRequest::prefix`] which interface a client used. Any path prefix before the
//! service segment is accepted, so a replacement catalogue ([`StandInData::catalog`]) can
//! point other regions at `<base>/<anything>/<service>`.
//!
//! The services accept only tokens the stand-in issued (unless
//! [`StandInData::accept_any_token`]) and answer others with keystonemiddleware's 401.
//! Every request is recorded ([`StandIn::requests`]). Faults and delays can be injected per
//! path ([`Fault`], [`Delay`]). The default data is the magnum-ref rig's: images
//! `ubuntu-jammy` (os_distro ubuntu), `fedora-coreos-40`, `no-distro`, `windows-2022`,
//! `dup-image` (twice); flavors `m1.tiny/small/medium/large`, `ds4G` (disk 0); keypairs
//! `mykey`, `default`; networks `public` (external), `private`, `shared-net`; subnets
//! `private-subnet`, `public-subnet`.

#[path = "../standin/data.rs"]
mod data;
#[path = "../standin/server.rs"]
mod server;

pub use data::{
    Delay, Fault, Flavor, FloatingIp, Image, Keypair, LoadBalancer, Network, ServerGroup,
    StandInData, Subnet, VolumeType,
};
pub use server::RecordedRequest;

use serde_json::Value;
use server::{lock, Shared, TokenInfo};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// A running stand-in. Stops when dropped.
pub struct StandIn {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

/// Start a stand-in on `127.0.0.1` (a free port) with this data.
pub async fn start(data: StandInData) -> StandIn {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("stand-in: cannot bind 127.0.0.1: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("stand-in: no local address: {e}"));
    let shared = Arc::new(Shared {
        base: format!("http://{addr}"),
        data: Mutex::new(data),
        tokens: Mutex::new(HashMap::new()),
        requests: Mutex::new(Vec::new()),
    });
    let app = axum::Router::new()
        .fallback(server::handle)
        .with_state(shared.clone());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    StandIn { addr, shared, task }
}

impl StandIn {
    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        self.shared.base.clone()
    }

    /// The Keystone v3 URL to configure as `auth_url` (`<base>/identity/v3`).
    pub fn keystone_url(&self) -> String {
        format!("{}/identity/v3", self.shared.base)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The requests to one service (`identity`, `image`, `compute`, `network`).
    pub fn requests_to(&self, service: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.service == service)
            .collect()
    }

    /// Forget the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// A copy of the current data.
    pub fn data(&self) -> StandInData {
        lock(&self.shared.data).clone()
    }

    /// Change the data of the running stand-in.
    pub fn update(&self, f: impl FnOnce(&mut StandInData)) {
        f(&mut lock(&self.shared.data));
    }

    /// Issue a project-scoped token for this user, as if the user had logged in.
    pub fn issue_token(&self, user_id: &str, project_id: &str) -> String {
        server::issue(
            &self.shared,
            TokenInfo {
                user: server::user_value(user_id, user_id),
                project: Some(server::project_value(project_id, project_id)),
                domain: None,
                system: false,
                methods: vec!["password".to_string()],
                issued_at: chrono::Utc::now()
                    .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                    .to_string(),
                expires_at: (chrono::Utc::now() + chrono::Duration::hours(1))
                    .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                    .to_string(),
            },
        )
    }

    /// The validated token body keystonemiddleware would hand to the API for this token
    /// (`keystone.token_info`: `{"token": {..., "catalog": [...]}}`), or `None` for a token
    /// the stand-in did not issue.
    pub fn token_body(&self, token: &str) -> Option<Value> {
        let info = lock(&self.shared.tokens).get(token).cloned()?;
        Some(server::token_body(&self.shared, &info, true))
    }

    /// Revoke a token: the services answer 401 to it from now on.
    pub fn revoke(&self, token: &str) {
        lock(&self.shared.tokens).remove(token);
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}
