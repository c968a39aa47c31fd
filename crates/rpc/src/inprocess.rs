//! The in-process transport of the embedded default.
//!
//! It wraps the conductor's handlers (anything implementing [`ConductorApi`] by running the
//! operation to completion) and gives them RPC semantics: a cast is handed to a spawned task
//! and returns at once, its failure logged as oslo.messaging's server logs it; a call awaits
//! the handler, bounded by `rpc_response_timeout`, and returns its error unchanged.

use crate::sequencer::Sequencer;
use crate::{ConductorApi, Obj};
use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Certificate, Cluster, ClusterTemplate, NodeGroup, StringMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// RPC semantics over direct calls into the handlers.
#[derive(Clone)]
pub struct InProcess {
    handlers: Arc<dyn ConductorApi>,
    timeout: Duration,
    /// The casts of one cluster start in the order they were made.
    order: Arc<Sequencer>,
}

impl InProcess {
    /// `timeout` is `[DEFAULT] rpc_response_timeout` (60 s by default).
    pub fn new(handlers: Arc<dyn ConductorApi>, timeout: Duration) -> Self {
        InProcess {
            handlers,
            timeout,
            order: Sequencer::new(),
        }
    }

    /// `cluster`: the uuid of the cluster the cast is about; casts about one cluster start
    /// in the order they were made ([`Sequencer`]).
    fn cast<F>(&self, method: &'static str, ctx: &RequestContext, cluster: Option<&str>, fut: F)
    where
        F: Future<Output = Result<(), MagnumError>> + Send + 'static,
    {
        let request_id = ctx.request_id.clone();
        let mut turn = cluster.map(|c| self.order.enter(c));
        tokio::spawn(async move {
            if let Some(t) = turn.as_mut() {
                t.wait().await;
            }
            let result = fut.await;
            drop(turn);
            if let Err(e) = result {
                // What oslo.messaging's RPC server does with a failed cast: log it.
                tracing::error!(method, request_id, error_class = e.class_name(), error = %e, "cast failed");
            }
        });
    }

    async fn call<T, F>(&self, method: &'static str, fut: F) -> Result<T, MagnumError>
    where
        F: Future<Output = Result<T, MagnumError>> + Send,
    {
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(r) => r,
            Err(_) => {
                let id = uuid::Uuid::new_v4().simple().to_string();
                tracing::error!(method, "call timed out");
                Err(MagnumError::new(
                    ErrorKind::MessagingTimeout,
                    &[("msg_id", &id)],
                ))
            }
        }
    }
}

#[async_trait]
impl ConductorApi for InProcess {
    async fn cluster_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("cluster_create", ctx, key.as_deref(), async move {
            h.cluster_create(&c, cluster, master_count, node_count, create_timeout)
                .await
        });
        Ok(())
    }

    async fn cluster_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("cluster_update", ctx, key.as_deref(), async move {
            h.cluster_update(
                &c,
                cluster,
                node_count,
                health_status,
                health_status_reason,
                rollback,
            )
            .await
        });
        Ok(())
    }

    async fn cluster_delete(&self, ctx: &RequestContext, uuid: String) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = uuid.clone();
        self.cast("cluster_delete", ctx, Some(&key), async move {
            h.cluster_delete(&c, uuid).await
        });
        Ok(())
    }

    async fn cluster_resize(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("cluster_resize", ctx, key.as_deref(), async move {
            h.cluster_resize(&c, cluster, node_count, nodes_to_remove, nodegroup)
                .await
        });
        Ok(())
    }

    async fn cluster_upgrade(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        cluster_template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        rollback: bool,
    ) -> Result<(), MagnumError> {
        self.call(
            "cluster_upgrade",
            self.handlers.cluster_upgrade(
                ctx,
                cluster,
                cluster_template,
                max_batch_size,
                nodegroup,
                rollback,
            ),
        )
        .await
    }

    async fn nodegroup_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("nodegroup_create", ctx, key.as_deref(), async move {
            h.nodegroup_create(&c, cluster, nodegroup).await
        });
        Ok(())
    }

    async fn nodegroup_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("nodegroup_update", ctx, key.as_deref(), async move {
            h.nodegroup_update(&c, cluster, nodegroup).await
        });
        Ok(())
    }

    async fn nodegroup_delete(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let h = self.handlers.clone();
        let c = ctx.clone();
        let key = cluster.data.uuid.as_deref().map(str::to_string);
        self.cast("nodegroup_delete", ctx, key.as_deref(), async move {
            h.nodegroup_delete(&c, cluster, nodegroup).await
        });
        Ok(())
    }

    async fn sign_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        certificate: Obj<Certificate>,
    ) -> Result<Certificate, MagnumError> {
        self.call(
            "sign_certificate",
            self.handlers.sign_certificate(ctx, cluster, certificate),
        )
        .await
    }

    async fn get_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        ca_cert_type: Option<String>,
    ) -> Result<Certificate, MagnumError> {
        self.call(
            "get_ca_certificate",
            self.handlers.get_ca_certificate(ctx, cluster, ca_cert_type),
        )
        .await
    }

    async fn rotate_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        self.call(
            "rotate_ca_certificate",
            self.handlers.rotate_ca_certificate(ctx, cluster),
        )
        .await
    }

    async fn credential_rotate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        self.call(
            "credential_rotate",
            self.handlers.credential_rotate(ctx, cluster),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Recorder {
        creates: AtomicUsize,
        slow_upgrade: bool,
        /// What the nodegroup casts did, in the order they finished.
        done: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl ConductorApi for Recorder {
        async fn cluster_create(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: i32,
            _: i32,
            _: i32,
        ) -> Result<(), MagnumError> {
            self.creates.fetch_add(1, Ordering::SeqCst);
            Err(MagnumError::internal("driver exploded"))
        }
        async fn cluster_update(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: i32,
            _: Option<String>,
            _: Option<StringMap>,
            _: bool,
        ) -> Result<(), MagnumError> {
            Ok(())
        }
        async fn cluster_delete(&self, _: &RequestContext, _: String) -> Result<(), MagnumError> {
            Ok(())
        }
        async fn cluster_resize(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: i32,
            _: Vec<String>,
            _: Obj<NodeGroup>,
        ) -> Result<(), MagnumError> {
            Ok(())
        }
        async fn cluster_upgrade(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: Obj<ClusterTemplate>,
            _: i32,
            _: Obj<NodeGroup>,
            _: bool,
        ) -> Result<(), MagnumError> {
            if self.slow_upgrade {
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            Err(MagnumError::with_message(
                ErrorKind::NotSupported,
                "Upgrading a cluster when status is \"CREATE_IN_PROGRESS\" is not supported.",
            ))
        }
        async fn nodegroup_create(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: Obj<NodeGroup>,
        ) -> Result<(), MagnumError> {
            Ok(())
        }
        async fn nodegroup_update(
            &self,
            _: &RequestContext,
            c: Obj<Cluster>,
            ng: Obj<NodeGroup>,
        ) -> Result<(), MagnumError> {
            // A slow update: unordered, the delete sent after it would finish first.
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.done
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!(
                    "update {} {}",
                    c.data.uuid.unwrap_or_default(),
                    ng.data.name
                ));
            Ok(())
        }
        async fn nodegroup_delete(
            &self,
            _: &RequestContext,
            c: Obj<Cluster>,
            ng: Obj<NodeGroup>,
        ) -> Result<(), MagnumError> {
            self.done
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!(
                    "delete {} {}",
                    c.data.uuid.unwrap_or_default(),
                    ng.data.name
                ));
            Ok(())
        }

        async fn sign_certificate(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            c: Obj<Certificate>,
        ) -> Result<Certificate, MagnumError> {
            Ok(c.data)
        }
        async fn get_ca_certificate(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
            _: Option<String>,
        ) -> Result<Certificate, MagnumError> {
            Ok(Certificate::default())
        }
        async fn rotate_ca_certificate(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
        ) -> Result<(), MagnumError> {
            Ok(())
        }
        async fn credential_rotate(
            &self,
            _: &RequestContext,
            _: Obj<Cluster>,
        ) -> Result<(), MagnumError> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn casts_about_one_cluster_run_in_the_order_they_were_made() {
        let rec = Arc::new(Recorder::default());
        let t = InProcess::new(rec.clone(), Duration::from_secs(60));
        let ctx = RequestContext::default();
        let cluster = |u: &str| {
            Obj::unchanged(Cluster {
                uuid: Some(u.to_string()),
                ..Cluster::default()
            })
        };
        let ng = |n: &str| {
            Obj::unchanged(NodeGroup {
                name: n.to_string(),
                ..NodeGroup::default()
            })
        };
        t.nodegroup_update(&ctx, cluster("a"), ng("ng1"))
            .await
            .unwrap();
        t.nodegroup_delete(&ctx, cluster("a"), ng("ng1"))
            .await
            .unwrap();
        // Another cluster's delete does not wait behind cluster a's slow update.
        t.nodegroup_delete(&ctx, cluster("b"), ng("ng2"))
            .await
            .unwrap();
        for _ in 0..100 {
            if rec.done.lock().unwrap().len() == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            *rec.done.lock().unwrap(),
            ["delete b ng2", "update a ng1", "delete a ng1"]
        );
    }

    #[tokio::test]
    async fn casts_return_at_once_and_failures_do_not_reach_the_caller() {
        let rec = Arc::new(Recorder {
            creates: AtomicUsize::new(0),
            slow_upgrade: false,
            done: Default::default(),
        });
        let t = InProcess::new(rec.clone(), Duration::from_secs(60));
        let ctx = RequestContext::default();
        t.cluster_create(&ctx, Obj::unchanged(Cluster::default()), 1, 1, 60)
            .await
            .expect("cast");
        for _ in 0..100 {
            if rec.creates.load(Ordering::SeqCst) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(rec.creates.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn calls_return_the_remote_error() {
        let t = InProcess::new(
            Arc::new(Recorder {
                creates: AtomicUsize::new(0),
                slow_upgrade: false,
                done: Default::default(),
            }),
            Duration::from_secs(60),
        );
        let ctx = RequestContext::default();
        let e = t
            .cluster_upgrade(
                &ctx,
                Obj::unchanged(Cluster::default()),
                Obj::unchanged(ClusterTemplate::default()),
                1,
                Obj::unchanged(NodeGroup::default()),
                false,
            )
            .await
            .expect_err("error");
        assert_eq!(e.kind(), ErrorKind::NotSupported);
        assert_eq!(e.code(), 400);
    }

    #[tokio::test]
    async fn calls_are_bounded_by_the_timeout() {
        let t = InProcess::new(
            Arc::new(Recorder {
                creates: AtomicUsize::new(0),
                slow_upgrade: true,
                done: Default::default(),
            }),
            Duration::from_millis(50),
        );
        let ctx = RequestContext::default();
        let e = t
            .cluster_upgrade(
                &ctx,
                Obj::unchanged(Cluster::default()),
                Obj::unchanged(ClusterTemplate::default()),
                1,
                Obj::unchanged(NodeGroup::default()),
                false,
            )
            .await
            .expect_err("timeout");
        assert_eq!(e.kind(), ErrorKind::MessagingTimeout);
        assert!(e
            .message()
            .starts_with("Timed out waiting for a reply to message ID "));
    }
}
