//! The route catalogue: Magnum's 38 routes (`magnum/api/controllers/v1/`) as data, with what the
//! OpenAPI document says about each. The query arguments are the very lists the handlers
//! parse their query with (`query::parse_args`), the bodies are named schemas built
//! from the handlers' attribute lists ([`super::schemas`]).
//!
//! The catalogue is checked against the code by `tests/openapi_routes.rs` (every route is
//! routed by `dispatch` to a handler, not answered 404 / 405 by the routing, and refused with
//! 406 below its microversion) and against real answers by `crates/cli/tests/openapi.rs`.

use crate::pagination::LIST_ARGS;
use crate::query::ArgSpec;
use crate::resources::{certificates, clusters, federations, quotas, stats};

/// The microversions a route exists at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    /// `GET /`: no negotiation, no version headers.
    NotNegotiated,
    /// From `1.<minor>` to the latest.
    Since(u32),
}

/// Which error answers a route can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errors {
    /// The public version documents: unknown argument, routing, `Accept`.
    Public,
    /// An authenticated route without a request body.
    Read,
    /// An authenticated route with a request body (media type, conflicts).
    Write,
}

impl Errors {
    pub fn statuses(self) -> &'static [u16] {
        match self {
            Errors::Public => &[400, 405, 406],
            Errors::Read => &[400, 401, 403, 404, 405, 406, 409, 500, 503],
            Errors::Write => &[400, 401, 403, 404, 405, 406, 409, 415, 500, 503],
        }
    }
}

/// One route.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    /// The `/v1/...` template (every route but `/` is also served without the prefix).
    pub path: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    pub versions: Versions,
    /// The success status.
    pub status: u16,
    /// The query arguments the handler declares.
    pub query: &'static [ArgSpec],
    /// The request body's schema (`components.schemas`), when the route takes one.
    pub request: Option<&'static str>,
    /// The success body's schema; `None`: no body (204).
    pub response: Option<&'static str>,
    pub errors: Errors,
    /// More than the summary says (microversion variants, quirks a client meets).
    pub description: &'static str,
}

impl Route {
    /// The names of the path template's parameters, in order.
    pub fn path_params(&self) -> Vec<&'static str> {
        self.path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect()
    }
}

const NONE: &[ArgSpec] = &[];

const fn route(
    method: &'static str,
    path: &'static str,
    operation_id: &'static str,
    summary: &'static str,
    tag: &'static str,
    status: u16,
) -> Route {
    Route {
        method,
        path,
        operation_id,
        summary,
        tag,
        versions: Versions::Since(1),
        status,
        query: NONE,
        request: None,
        response: None,
        errors: Errors::Read,
        description: "",
    }
}

impl Route {
    const fn since(mut self, minor: u32) -> Route {
        self.versions = Versions::Since(minor);
        self
    }
    const fn query(mut self, q: &'static [ArgSpec]) -> Route {
        self.query = q;
        self
    }
    const fn body(mut self, schema: &'static str) -> Route {
        self.request = Some(schema);
        self.errors = Errors::Write;
        self
    }
    const fn reply(mut self, schema: &'static str) -> Route {
        self.response = Some(schema);
        self
    }
    /// A route that reads a body argument without a schema of its own (415 possible).
    const fn reads_body(mut self) -> Route {
        self.errors = Errors::Write;
        self
    }
    const fn describe(mut self, d: &'static str) -> Route {
        self.description = d;
        self
    }
}

const CT: &str = "clustertemplates";
const CL: &str = "clusters";
const NG: &str = "nodegroups";
const CE: &str = "certificates";
const QU: &str = "quotas";
const FE: &str = "federations";

/// The tags of the document, in order, with their descriptions.
pub const TAGS: [(&str, &str); 10] = [
    ("versions", "The version documents."),
    (CT, "Cluster templates."),
    (CL, "Clusters."),
    ("cluster actions", "Resize and upgrade of a cluster."),
    (
        NG,
        "The nodegroups of a cluster (microversion 1.9 and later).",
    ),
    (CE, "The cluster CA: show, sign a CSR, rotate."),
    (
        "credentials",
        "Rotation of a cluster's credentials (1.12 and later).",
    ),
    (QU, "Quotas."),
    (
        "stats",
        "Cluster and node counts; the conductors' heartbeats.",
    ),
    (
        FE,
        "Federations (the conductor does not implement them, as in Magnum).",
    ),
];

/// Magnum 23.0.0's 38 routes, by controller (`magnum/api/controllers/v1/*.py`).
pub const ROUTES: [Route; 38] = [
    Route {
        versions: Versions::NotNegotiated,
        errors: Errors::Public,
        ..route("GET", "/", "getRoot", "The root document: the API's versions", "versions", 200)
            .reply("RootDocument")
    },
    Route {
        errors: Errors::Public,
        ..route("GET", "/v1", "getV1", "The v1 document: links to the collections", "versions", 200)
            .reply("V1Document")
    },
    // -- cluster templates
    route("GET", "/v1/clustertemplates", "listClusterTemplates", "List cluster templates", CT, 200)
        .query(&LIST_ARGS)
        .reply("ClusterTemplateCollection"),
    route("GET", "/v1/clustertemplates/detail", "listClusterTemplatesDetail", "List cluster templates (the same full representation)", CT, 200)
        .query(&LIST_ARGS)
        .reply("ClusterTemplateCollection"),
    route("GET", "/v1/clustertemplates/{clustertemplate_ident}", "showClusterTemplate", "Show a cluster template", CT, 200)
        .reply("ClusterTemplate"),
    route("POST", "/v1/clustertemplates", "createClusterTemplate", "Create a cluster template", CT, 201)
        .body("ClusterTemplateCreate")
        .reply("ClusterTemplate")
        .describe("The only route that sets `Location` (the new template's URL)."),
    route("PATCH", "/v1/clustertemplates/{clustertemplate_ident}", "updateClusterTemplate", "Update a cluster template", CT, 200)
        .body("JsonPatch")
        .reply("ClusterTemplate"),
    route("DELETE", "/v1/clustertemplates/{clustertemplate_ident}", "deleteClusterTemplate", "Delete a cluster template", CT, 204),
    // -- clusters
    route("GET", "/v1/clusters", "listClusters", "List clusters", CL, 200)
        .query(&LIST_ARGS)
        .reply("ClusterCollection"),
    route("GET", "/v1/clusters/detail", "listClustersDetail", "List clusters with every attribute", CL, 200)
        .query(&LIST_ARGS)
        .reply("ClusterDetailCollection"),
    route("GET", "/v1/clusters/{cluster_ident}", "showCluster", "Show a cluster", CL, 200)
        .reply("Cluster"),
    route("POST", "/v1/clusters", "createCluster", "Create a cluster (cast to the conductor)", CL, 202)
        .body("ClusterCreate")
        .reply("UuidReply")
        .describe("Two variants: up to 1.9 an unknown cluster template is a 400, from 1.10 a 404."),
    route("PATCH", "/v1/clusters/{cluster_ident}", "updateCluster", "Update a cluster (cast to the conductor)", CL, 202)
        .query(&clusters::PATCH_ARGS)
        .body("JsonPatch")
        .reply("UuidReply")
        .describe("Three variants (1.1–1.2, 1.3–1.9, 1.10+); the `rollback` argument exists from 1.3."),
    route("DELETE", "/v1/clusters/{cluster_ident}", "deleteCluster", "Delete a cluster (cast to the conductor)", CL, 204),
    // -- cluster actions
    route("POST", "/v1/clusters/{cluster_ident}/actions/resize", "resizeCluster", "Resize a nodegroup of a cluster", "cluster actions", 202)
        .since(7)
        .body("ClusterResize")
        .reply("UuidReply"),
    route("POST", "/v1/clusters/{cluster_ident}/actions/upgrade", "upgradeCluster", "Upgrade a cluster to another template", "cluster actions", 202)
        .since(7)
        .body("ClusterUpgrade")
        .reply("UuidReply")
        .describe("At 1.7 a stub; from 1.8 a call to the conductor."),
    // -- nodegroups
    route("GET", "/v1/clusters/{cluster_ident}/nodegroups", "listNodeGroups", "List a cluster's nodegroups", NG, 200)
        .since(9)
        .query(&clusters::nodegroups::LIST_ARGS)
        .reply("NodeGroupCollection"),
    route("GET", "/v1/clusters/{cluster_ident}/nodegroups/{nodegroup_ident}", "showNodeGroup", "Show a nodegroup", NG, 200)
        .since(9)
        .reply("NodeGroup"),
    route("POST", "/v1/clusters/{cluster_ident}/nodegroups", "createNodeGroup", "Create a nodegroup (cast to the conductor)", NG, 202)
        .since(9)
        .body("NodeGroupCreate")
        .reply("NodeGroup"),
    route("PATCH", "/v1/clusters/{cluster_ident}/nodegroups/{nodegroup_ident}", "updateNodeGroup", "Update a nodegroup (cast to the conductor)", NG, 202)
        .since(9)
        .body("JsonPatch")
        .reply("NodeGroup"),
    route("DELETE", "/v1/clusters/{cluster_ident}/nodegroups/{nodegroup_ident}", "deleteNodeGroup", "Delete a nodegroup (cast to the conductor)", NG, 204)
        .since(9),
    // -- certificates, credentials
    route("GET", "/v1/certificates/{cluster_ident}", "showCertificate", "Show a cluster's CA certificate", CE, 200)
        .query(&certificates::GET_ARGS)
        .reply("Certificate"),
    route("POST", "/v1/certificates", "signCertificate", "Sign a CSR with the cluster's CA", CE, 201)
        .body("CertificateCreate")
        .reply("Certificate"),
    route("PATCH", "/v1/certificates/{cluster_ident}", "rotateCertificate", "Rotate the cluster's CA", CE, 202)
        .reply("UuidReply")
        .reads_body()
        .describe("No body. Available from 1.1 although Magnum's version history lists it under 1.5."),
    route("PATCH", "/v1/credentials/{cluster_ident}", "rotateCredentials", "Rotate the cluster's credentials", "credentials", 202)
        .since(12)
        .reply("UuidReply")
        .reads_body()
        .describe("No body."),
    // -- quotas
    route("GET", "/v1/quotas", "listQuotas", "List quotas", QU, 200)
        .query(&quotas::GET_ALL_ARGS)
        .reply("QuotaCollection"),
    route("GET", "/v1/quotas/{project_id}/{resource}", "showQuota", "Show a project's quota of a resource", QU, 200)
        .reply("Quota")
        .describe("A project without a quota of its own shows the default (`[quotas] max_clusters_per_project`), without `id` and timestamps."),
    route("POST", "/v1/quotas", "createQuota", "Create a quota", QU, 201)
        .body("QuotaBody")
        .reply("Quota"),
    route("PATCH", "/v1/quotas/{project_id}/{resource}", "updateQuota", "Update a quota", QU, 202)
        .body("QuotaBody")
        .reply("Quota"),
    route("DELETE", "/v1/quotas/{project_id}/{resource}", "deleteQuota", "Delete a quota", QU, 204),
    // -- stats, mservices
    route("GET", "/v1/stats", "getStats", "Cluster and node counts", "stats", 200)
        .query(&stats::ARGS)
        .reply("Stats"),
    route("GET", "/v1/mservices", "listMagnumServices", "List the conductors' heartbeats", "stats", 200)
        .reply("MagnumServiceCollection"),
    // -- federations
    route("GET", "/v1/federations", "listFederations", "List federations", FE, 200)
        .query(&LIST_ARGS)
        .reply("FederationCollection"),
    route("GET", "/v1/federations/detail", "listFederationsDetail", "List federations with every attribute", FE, 200)
        .query(&LIST_ARGS)
        .reply("FederationDetailCollection"),
    route("GET", "/v1/federations/{federation_ident}", "showFederation", "Show a federation", FE, 200)
        .reply("Federation"),
    route("POST", "/v1/federations", "createFederation", "Create a federation (cast to the conductor)", FE, 202)
        .body("FederationCreate")
        .reply("UuidReply"),
    route("PATCH", "/v1/federations/{federation_ident}", "updateFederation", "Update a federation's members or properties (cast)", FE, 202)
        .query(&federations::ROLLBACK_ARG)
        .body("JsonPatch")
        .reply("UuidReply"),
    route("DELETE", "/v1/federations/{federation_ident}", "deleteFederation", "Delete a federation (cast to the conductor)", FE, 204),
];
