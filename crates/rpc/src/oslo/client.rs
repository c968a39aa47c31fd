//! The API side of the conductor topic over RabbitMQ: oslo.messaging's `RPCClient` with the
//! rabbit driver as magnum-api uses it (`oslo_messaging/rpc/client.py`, `oslo_messaging/_drivers/amqpdriver.py`).
//!
//! * casts and calls are published to the control exchange with the topic as routing key,
//!   with publisher confirms; a message the broker has not confirmed within
//!   `rpc_response_timeout` (broker down, failing over, blocked) is an error the API answers
//!   with 503 and Magnum's body, never a silent drop;
//! * calls carry `_msg_id` / `_reply_q` and `expiration = timeout`; one `reply_<uuid>` queue
//!   per process, consumed by a background task that survives broker restarts; replies are
//!   matched by `_msg_id`, de-duplicated by `_unique_id`, heartbeats (`ending: false`) ignored;
//! * no reply within `rpc_response_timeout` is `MessagingTimeout`, as in Magnum, unless the
//!   reply queue's connection broke meanwhile (a broker restart or a cluster node lost: the
//!   request or its reply may have gone with a queue): then 503, as while the broker is away.

use super::broker::{properties, Broker, BrokerError, Publisher};
use super::message::{self, CallInfo};
use super::RabbitSettings;
use crate::transport::{Args, RemoteFailure, RpcCaller};
use async_trait::async_trait;
use futures_util::StreamExt;
use lapin::options::BasicConsumeOptions;
use lapin::types::FieldTable;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

type Pending = HashMap<String, oneshot::Sender<Result<Value, RemoteFailure>>>;

struct Inner {
    settings: Arc<RabbitSettings>,
    topic: String,
    publisher: Publisher,
    reply_q: String,
    pending: Mutex<Pending>,
    /// True while the reply queue is being consumed.
    ready: watch::Sender<bool>,
    /// How many times the reply queue's consumer has lost its connection.
    reply_breaks: AtomicU64,
}

/// [`RpcCaller`] over RabbitMQ. Cheap to clone; all clones share the connections and the
/// reply queue. The reply consumer stops when the last clone is dropped.
#[derive(Clone)]
pub struct AmqpCaller {
    inner: Arc<Inner>,
    /// Casts about one cluster go to its ordered queue ([`super::ordered_queue_of`]).
    ordered: bool,
    _stop: Arc<StopOnDrop>,
}

struct StopOnDrop(watch::Sender<bool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(true);
    }
}

fn unavailable(e: &BrokerError) -> MagnumError {
    MagnumError::new(
        ErrorKind::ServiceUnavailable,
        &[(
            "msg",
            &format!("The conductor cannot be reached: the message broker is unavailable ({e})."),
        )],
    )
}

impl AmqpCaller {
    /// A caller for `topic` (`[conductor] topic`). Connects lazily; the reply queue consumer
    /// starts at once and keeps reconnecting in the background while the broker is away.
    pub fn new(settings: Arc<RabbitSettings>, topic: impl Into<String>) -> Self {
        let publish_broker = Broker::new(settings.clone());
        let reply_broker = Broker::new(settings.clone());
        let reply_q = reply_broker.transient_name("reply");
        let (ready, _) = watch::channel(false);
        let (stop_tx, stop_rx) = watch::channel(false);
        let inner = Arc::new(Inner {
            settings,
            topic: topic.into(),
            publisher: Publisher::new(publish_broker),
            reply_q,
            pending: Mutex::new(HashMap::new()),
            ready,
            reply_breaks: AtomicU64::new(0),
        });
        tokio::spawn(reply_loop(Arc::downgrade(&inner), reply_broker, stop_rx));
        AmqpCaller {
            inner,
            ordered: false,
            _stop: Arc::new(StopOnDrop(stop_tx)),
        }
    }

    /// Send the casts about one cluster to its ordered queue (`[openkeel] ordered_casts`):
    /// OpenKeel's conductors consume each ordered queue with a single active consumer, so the
    /// casts of one cluster run in the order they were sent whichever conductor is active.
    pub fn with_ordered_casts(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// The name of this process's reply queue.
    pub fn reply_queue(&self) -> &str {
        &self.inner.reply_q
    }

    async fn publish(
        &self,
        body: &[u8],
        expiration: Option<std::time::Duration>,
        mandatory: bool,
        deadline: Instant,
    ) -> Result<(), BrokerError> {
        self.publish_to(&self.inner.topic, body, expiration, mandatory, deadline)
            .await
    }

    async fn publish_to(
        &self,
        routing_key: &str,
        body: &[u8],
        expiration: Option<std::time::Duration>,
        mandatory: bool,
        deadline: Instant,
    ) -> Result<(), BrokerError> {
        let s = &self.inner.settings;
        self.inner
            .publisher
            .publish(
                &s.exchange,
                routing_key,
                mandatory,
                body,
                properties(expiration),
                deadline,
            )
            .await
    }

    /// Publish a request to the topic so that it reaches a queue: `mandatory`, and while the
    /// broker returns it (no queue bound to the topic: right after a broker restart, before
    /// the conductors have declared their queues again) retried with the back-off until
    /// `deadline`. A confirmed message without a queue would be dropped by the broker: a
    /// cast answered 202 for an operation that never happens, a call answered 500
    /// (`MessagingTimeout`) after the whole timeout although no conductor ever saw it
    /// (oslo.messaging publishes neither as mandatory: Magnum loses both).
    async fn publish_routed(
        &self,
        body: &[u8],
        expiration: Option<std::time::Duration>,
        deadline: Instant,
    ) -> Result<(), BrokerError> {
        let mut attempt = 0u32;
        loop {
            match self.publish(body, expiration, true, deadline).await {
                Err(BrokerError::Returned(topic)) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(BrokerError::Timeout(format!(
                            "no queue is bound to the topic {topic}: no conductor is listening"
                        )));
                    }
                    if attempt == 0 {
                        tracing::warn!(topic, "request returned by the broker (no queue bound to its topic yet); retrying");
                    }
                    let pause = self.inner.settings.backoff(attempt).min(left);
                    tokio::time::sleep(pause.max(std::time::Duration::from_millis(10))).await;
                    attempt = attempt.saturating_add(1);
                }
                // the deadline ran out during a retry: say why it was retried
                Err(BrokerError::Timeout(_)) if attempt > 0 => {
                    return Err(BrokerError::Timeout(format!(
                        "no queue is bound to the topic {}: no conductor is listening",
                        self.inner.topic
                    )))
                }
                other => return other,
            }
        }
    }
}

#[async_trait]
impl RpcCaller for AmqpCaller {
    async fn cast(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
    ) -> Result<(), MagnumError> {
        let deadline = Instant::now() + self.inner.settings.rpc_response_timeout;
        let body = message::serialize_envelope(&message::request(ctx, method, args, None));
        self.publish_routed(&body, None, deadline).await.map_err(|e| {
            tracing::error!(method, error = %e, request_id = %ctx.request_id, "RPC cast not delivered");
            unavailable(&e)
        })
    }

    /// With ordered casts, to the cluster's ordered queue, published `mandatory`: when the
    /// broker returns it (no OpenKeel conductor has declared that queue: Python conductors
    /// only, or a restarted broker that forgot a non-durable one), to the topic as
    /// [`RpcCaller::cast`] does.
    async fn cast_ordered(
        &self,
        ctx: &RequestContext,
        key: &str,
        method: &str,
        args: Args,
    ) -> Result<(), MagnumError> {
        if !self.ordered || key.is_empty() {
            return self.cast(ctx, method, args).await;
        }
        let deadline = Instant::now() + self.inner.settings.rpc_response_timeout;
        let body = message::serialize_envelope(&message::request(ctx, method, args, None));
        let queue = super::ordered_queue_of(&self.inner.topic, key);
        match self.publish_to(&queue, &body, None, true, deadline).await {
            Ok(()) => Ok(()),
            Err(BrokerError::Returned(_)) => {
                tracing::debug!(method, queue, "no conductor consumes the ordered queue; cast to the topic");
                self.publish_routed(&body, None, deadline).await
            }
            Err(e) => Err(e),
        }
        .map_err(|e| {
            tracing::error!(method, error = %e, request_id = %ctx.request_id, "RPC cast not delivered");
            unavailable(&e)
        })
    }

    async fn call(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, MagnumError> {
        let timeout = self.inner.settings.rpc_response_timeout;
        let deadline = Instant::now() + timeout;
        // The reply queue must be consumed before the request goes out.
        let mut ready = self.inner.ready.subscribe();
        let waited = matches!(
            tokio::time::timeout_at(deadline, ready.wait_for(|r| *r)).await,
            Ok(Ok(_))
        );
        if !waited {
            let e = BrokerError::Timeout("the reply queue could not be consumed".into());
            tracing::error!(method, request_id = %ctx.request_id, "RPC call not sent: no reply queue");
            return Err(unavailable(&e));
        }
        let msg_id = message::new_id();
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .map_err(|_| MagnumError::internal("RPC client state poisoned"))?
            .insert(msg_id.clone(), tx);
        let call = CallInfo {
            msg_id: msg_id.clone(),
            reply_q: self.inner.reply_q.clone(),
        };
        let body = message::serialize_envelope(&message::request(ctx, method, args, Some(&call)));
        let breaks = self.inner.reply_breaks.load(Ordering::Acquire);
        let forget = || {
            if let Ok(mut p) = self.inner.pending.lock() {
                p.remove(&msg_id);
            }
        };
        // mandatory, retried while no queue is bound (as a cast): a call published right
        // after a broker restart, before the conductor declared its queue again, would
        // otherwise be dropped and time out as a 500
        if let Err(e) = self.publish_routed(&body, Some(timeout), deadline).await {
            forget();
            tracing::error!(method, error = %e, request_id = %ctx.request_id, "RPC call not delivered");
            return Err(unavailable(&e));
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(f))) => Err(message::failure_to_error(&f)),
            Ok(Err(_)) | Err(_) => {
                forget();
                if self.inner.reply_breaks.load(Ordering::Acquire) != breaks {
                    // The broker connection broke while the call waited (a restart, a cluster
                    // node lost): the request or the reply may have gone with a non-durable
                    // queue. The broker's fault, not a slow conductor: 503, as while it is away.
                    tracing::error!(method, msg_id = %msg_id, request_id = %ctx.request_id, "RPC call unanswered: the broker connection broke while it waited");
                    return Err(MagnumError::new(
                        ErrorKind::ServiceUnavailable,
                        &[(
                            "msg",
                            &format!(
                                "The conductor's reply to {msg_id} did not arrive: the connection \
                                 to the message broker broke while waiting for it."
                            ),
                        )],
                    ));
                }
                tracing::error!(method, msg_id = %msg_id, request_id = %ctx.request_id, "RPC call timed out");
                Err(MagnumError::new(
                    ErrorKind::MessagingTimeout,
                    &[("msg_id", &msg_id)],
                ))
            }
        }
    }
}

/// Consume the reply queue for as long as the caller lives, reconnecting with back-off.
async fn reply_loop(
    inner: std::sync::Weak<Inner>,
    broker: Arc<Broker>,
    mut stop: watch::Receiver<bool>,
) {
    let mut attempt = 0u32;
    let mut seen: VecDeque<String> = VecDeque::with_capacity(16);
    loop {
        if *stop.borrow() {
            break;
        }
        let Some(strong) = inner.upgrade() else {
            break;
        };
        let reply_q = strong.reply_q.clone();
        drop(strong);
        let consumer = async {
            let conn = broker.connection().await?;
            let ch = conn.create_channel().await?;
            broker.declare_transient_queue(&ch, &reply_q).await?;
            let c = ch
                .basic_consume(
                    reply_q.as_str().into(),
                    "1".into(),
                    // The reply queue is this process's own: a reply it has been handed and
                    // then loses (the process dies) has no one else to go to, so the broker
                    // is not asked to wait for an ack (one frame and one wait fewer per call).
                    BasicConsumeOptions {
                        no_ack: true,
                        ..Default::default()
                    },
                    FieldTable::default(),
                )
                .await?;
            Ok::<_, BrokerError>((ch, c))
        }
        .await;
        let (_ch, mut consumer) = match consumer {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "reply queue consumer cannot start; retrying");
                let pause = broker.pause_before_retry(attempt);
                attempt = attempt.saturating_add(1);
                tokio::select! {
                    _ = pause => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
        };
        attempt = 0;
        if let Some(i) = inner.upgrade() {
            i.ready.send_replace(true);
        }
        loop {
            let next = tokio::select! {
                d = consumer.next() => d,
                _ = stop.changed() => None,
            };
            let Some(delivery) = next else { break };
            let delivery = match delivery {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "reply queue consumer failed");
                    break;
                }
            };
            let reply =
                message::deserialize_envelope(&delivery.data).and_then(message::parse_reply);
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "unreadable RPC reply dropped");
                    continue;
                }
            };
            if let Some(u) = &reply.unique_id {
                if seen.contains(u) {
                    tracing::debug!(msg_id = %reply.msg_id, "duplicate RPC reply dropped");
                    continue;
                }
                if seen.len() == 16 {
                    seen.pop_front();
                }
                seen.push_back(u.clone());
            }
            if !reply.ending {
                continue; // a call-monitor heartbeat
            }
            let Some(i) = inner.upgrade() else { break };
            let waiter = i
                .pending
                .lock()
                .ok()
                .and_then(|mut p| p.remove(&reply.msg_id));
            match waiter {
                Some(tx) => {
                    let _ = tx.send(reply.result);
                }
                None => {
                    tracing::debug!(msg_id = %reply.msg_id, "reply for an unknown or expired call dropped")
                }
            }
        }
        if let Some(i) = inner.upgrade() {
            i.ready.send_replace(false);
            i.reply_breaks.fetch_add(1, Ordering::AcqRel);
        }
        if *stop.borrow() {
            break;
        }
        tracing::warn!("reply queue consumer stopped; reconnecting");
        broker.pause_before_retry(0).await;
    }
    broker.close().await;
}
