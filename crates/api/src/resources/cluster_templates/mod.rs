//! `/v1/clustertemplates` (`magnum/api/controllers/v1/cluster_template.py`): the six routes,
//! their pecan routing quirks, and the template's wire shape.
//!
//! One file per operation ([`list`], [`show`], [`create`], [`update`], [`delete`]), the WSME
//! type in [`types`], the row's documents and view in [`view`], the PATCH's changed fields in
//! [`service`]. Every handler reads top to bottom as Magnum's does (decorators first, then the
//! body): context → policy / validation in Magnum's order → database → view.

mod create;
mod delete;
mod list;
mod service;
mod show;
pub mod types;
mod update;
pub mod view;

pub use types::{API_ATTRS, COE_VALUES, OBJ_FIELDS, PATCH_TYPE};
pub use view::{doc_of, isoformat, view};

use std::sync::Arc;

use crate::error::ApiError;
use crate::request::enforce;
use crate::response::Reply;
use crate::validation;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::Method;
use openkeel_core::cloud::Cloud;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::ClusterTemplate;
use openkeel_db::{cluster_template as db_ct, Database, Scope};

/// The methods pecan lists in `Allow` for every template path.
const ALLOW: &str = "DELETE, GET, PATCH, POST";
/// The collection name in URLs.
const RESOURCE: &str = "clustertemplates";

/// Route a request under `/v1/clustertemplates`; `rest` are the segments after the collection
/// name. Reproduces pecan's dispatch of `ClusterTemplatesController` (including the odd 400s
/// it gives for `POST /{id}` and `PATCH /{id}/{x}`).
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    rest: &[&str],
) -> Result<Reply, ApiError> {
    let m = &req.method;
    match rest {
        [] => match *m {
            Method::GET => list::get_all(state, req, None, false).await,
            Method::POST => create::post(state, req, body).await,
            Method::DELETE | Method::PATCH => Err(crate::resources::clusters::missing_path_argument(req, "cluster_template_ident")),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        ["detail"] if *m == Method::GET => list::get_all(state, req, None, true).await,
        [ident] => match *m {
            Method::GET => show::get_one(state, req, ident).await,
            Method::PATCH => update::patch(state, req, body, ident).await,
            Method::DELETE => delete::delete(state, req, ident).await,
            Method::POST => Err(validation::invalid_input(
                "cluster_template",
                ident,
                "unable to convert to ClusterTemplate. Error: ClusterTemplate.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [marker, "detail"] if *m == Method::GET => list::get_all(state, req, Some(marker), true).await,
        [_, second] => match *m {
            Method::PATCH => Err(validation::invalid_input(
                "patch",
                second,
                "unable to convert to ArrayType. Error: Base.__init__() takes 1 positional argument but 2 were given",
            )
            .into()),
            Method::GET | Method::DELETE | Method::POST => Err(ApiError::not_found()),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::beyond_arguments(m, ALLOW)),
    }
}

fn db(state: &ApiState) -> Result<&Database, ApiError> {
    state
        .db
        .as_ref()
        .ok_or_else(|| MagnumError::internal("no database configured").into())
}

fn cloud(state: &ApiState) -> Result<&Arc<dyn Cloud>, ApiError> {
    state.cloud.as_ref().ok_or_else(|| {
        MagnumError::new(
            ErrorKind::AuthorizationFailure,
            &[
                ("client", &"glance"),
                ("message", &"reason: no OpenStack cloud is configured"),
            ],
        )
        .into()
    })
}

/// `api_utils.get_resource('ClusterTemplate', ident)`: by uuid when UUID-like, else by name.
async fn get_resource(
    db: &Database,
    scope: &Scope,
    ident: &str,
) -> Result<ClusterTemplate, ApiError> {
    if openkeel_db::ident::is_uuid_like(ident) {
        Ok(db_ct::get_by_uuid(db, scope, ident).await?)
    } else {
        Ok(db_ct::get_by_name(db, scope, ident).await?)
    }
}

fn publish_check(state: &ApiState, ctx: &RequestContext) -> Result<(), ApiError> {
    enforce(state, ctx, "clustertemplate:publish", None).map_err(|_| {
        ApiError::Handler(MagnumError::new(
            ErrorKind::ClusterTemplatePublishDenied,
            &[],
        ))
    })
}

async fn default_driver(state: &ApiState) -> Result<Option<String>, MagnumError> {
    match &state.drivers {
        Some(d) => d.default_driver(),
        None => Ok(None),
    }
}
