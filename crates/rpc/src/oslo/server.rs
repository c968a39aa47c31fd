//! The conductor side: an oslo.messaging RPC server on the rabbit driver
//! (`oslo_messaging/rpc/server.py`, `oslo_messaging/_drivers/impl_rabbit.py`, `amqpdriver.py`).
//!
//! Declares what a Python magnum-conductor declares (the control exchange, queue `<topic>`,
//! queue `<topic>.<server>`, the fanout exchange `<topic>_fanout` and a
//! `<topic>_fanout_<uuid>` queue), consumes the three with tags `1`, `2`, `3`, acks each
//! delivery on receipt (oslo's at-most-once), drops duplicates by `_unique_id`, dispatches to
//! a [`Dispatcher`] with at most `executor_thread_pool_size` requests at once, and replies to
//! calls on the default exchange (mandatory; a missing reply queue is retried every 0.25 s for
//! `kombu_missing_consumer_retry_timeout`). It reconnects with back-off when the broker goes
//! away and redeclares everything.

// RemoteFailure is the transport's failure type; boxing it would only move the cost.
#![allow(clippy::result_large_err)]

use super::broker::{properties, Broker, BrokerError, Publisher};
use super::message::{self, Request};
use super::RabbitSettings;
use crate::sequencer::{Sequencer, Turn};
use crate::transport::{Dispatcher, RemoteFailure};
use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicQosOptions, ExchangeDeclareOptions,
    QueueBindOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use lapin::ExchangeKind;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A conductor's server name: 12 random lower-case base32 characters, as Magnum's
/// `short_id.generate_id()` (`magnum/common/short_id.py`, as `magnum/cmd/conductor.py` uses it).
pub fn generate_server_name() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let mut out = String::with_capacity(12);
    let mut acc: u64 = 0;
    for b in &bytes[..8] {
        acc = (acc << 8) | u64::from(*b);
    }
    for _ in 0..12 {
        out.push(ALPHABET[(acc & 31) as usize] as char);
        acc >>= 5;
    }
    out
}

/// A running RPC server.
pub struct RpcServer {
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
    server_name: String,
    listening: watch::Receiver<bool>,
    keep: Arc<watch::Sender<u32>>,
}

/// The handle that tells a running server which ordered shards to keep
/// ([`RpcServer::ordered_shards`]).
#[derive(Clone)]
pub struct OrderedShards(Arc<watch::Sender<u32>>);

impl OrderedShards {
    /// Keep the shards of `mask` (bit *i*: shard *i*) when this process is their active
    /// consumer, and hand the others over to the next conductor.
    pub fn keep(&self, mask: u32) {
        self.0.send_if_modified(|m| {
            let changed = *m != mask;
            *m = mask;
            changed
        });
    }
}

impl RpcServer {
    /// Start serving `topic` (and `topic.<server_name>`) with `dispatcher`.
    pub fn start(
        settings: Arc<RabbitSettings>,
        topic: impl Into<String>,
        server_name: impl Into<String>,
        dispatcher: Arc<dyn Dispatcher>,
    ) -> Self {
        Self::start_with(settings, topic, server_name, dispatcher, false)
    }

    /// [`RpcServer::start`], and with `ordered` also OpenKeel's ordered queues of the topic
    /// ([`super::ORDERED_SHARDS`] of them, [`super::ordered_queue`]): declared as the topic
    /// queue is, with `x-single-active-consumer`
    /// ([`super::broker::Broker::declare_ordered_queue`]), so that RabbitMQ delivers each one
    /// to a single conductor at a time (another takes over when its connection goes) and the
    /// casts of one cluster reach one conductor, in the order they were published.
    pub fn start_with(
        settings: Arc<RabbitSettings>,
        topic: impl Into<String>,
        server_name: impl Into<String>,
        dispatcher: Arc<dyn Dispatcher>,
        ordered: bool,
    ) -> Self {
        let (stop, stop_rx) = watch::channel(false);
        let (listening_tx, listening) = watch::channel(false);
        let (keep, keep_rx) = watch::channel(super::ALL_ORDERED_SHARDS);
        let server_name = server_name.into();
        let state = Arc::new(ServerState {
            listen: Broker::new(settings.clone()),
            replies: Publisher::new(Broker::new(settings.clone())),
            topic: topic.into(),
            server_name: server_name.clone(),
            dispatcher,
            seen: Mutex::new(VecDeque::with_capacity(16)),
            order: Sequencer::new(),
            permits: Arc::new(Semaphore::new(settings.executor_pool)),
            settings,
            listening: listening_tx,
            ordered,
            keep: keep_rx,
            shards: (0..super::ORDERED_SHARDS)
                .map(|_| ShardState::default())
                .collect(),
        });
        let handle = tokio::spawn(listen_loop(state, stop_rx));
        RpcServer {
            stop,
            handle,
            server_name,
            listening,
            keep: Arc::new(keep),
        }
    }

    /// Which ordered shards this server keeps when RabbitMQ makes it their single active
    /// consumer (all of them until told otherwise). Every conductor consumes every ordered
    /// queue, and RabbitMQ makes the first consumer of each queue the active one; a conductor
    /// told that a shard belongs to another hands it over when a cast of it arrives: it
    /// starts no more casts of that queue, lets those it started end (they are acked when
    /// handled), closes the queue's channel, so that RabbitMQ puts the casts it held back at
    /// the head of the queue and makes the next consumer active, and consumes the queue
    /// again, last in line. The casts keep their order, as when a conductor dies. A shard it
    /// handed over is not handed over again for [`HAND_OVER_DAMPING`], so that conductors
    /// that disagree for a moment about the live set do not pass casts back and forth.
    pub fn ordered_shards(&self) -> OrderedShards {
        OrderedShards(self.keep.clone())
    }

    /// Wait (at most `timeout`) until the queues are declared and consumed, as
    /// oslo.messaging's `server.start()` returns only once its consumers exist: a cast sent
    /// to the topic before then would find no queue bound and be dropped by the broker.
    /// Returns whether the server listens; when not, it keeps retrying in the background.
    pub async fn wait_listening(&self, timeout: Duration) -> bool {
        let mut rx = self.listening.clone();
        tokio::time::timeout(timeout, rx.wait_for(|l| *l))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    pub fn server_name(&self) -> &str {
        &self.server_name
    }

    /// Stop consuming, let the requests in progress finish (bounded), delete the fanout
    /// queue and close the connections.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.handle.await;
    }
}

struct ServerState {
    settings: Arc<RabbitSettings>,
    listen: Arc<Broker>,
    replies: Publisher,
    topic: String,
    server_name: String,
    dispatcher: Arc<dyn Dispatcher>,
    seen: Mutex<VecDeque<String>>,
    order: Arc<Sequencer>,
    permits: Arc<Semaphore>,
    /// True while the consumers are set up.
    listening: watch::Sender<bool>,
    /// Whether the ordered queues are consumed too.
    ordered: bool,
    /// The ordered shards to keep ([`RpcServer::ordered_shards`]).
    keep: watch::Receiver<u32>,
    shards: Vec<ShardState>,
}

/// One ordered queue as this server consumes it.
#[derive(Default)]
struct ShardState {
    /// Casts of the queue started and not yet acked.
    busy: std::sync::atomic::AtomicUsize,
    /// Being handed over: casts that arrive are left unacked (put back when the channel
    /// closes).
    handing_over: std::sync::atomic::AtomicBool,
    /// When it was last handed over.
    handed_over_at: Mutex<Option<Instant>>,
    /// Counts the server's (re)connections: a hand-over begun on an earlier connection
    /// leaves the shard's state alone.
    generation: std::sync::atomic::AtomicU64,
}

/// A shard this server handed over is kept, even if told otherwise, when it comes back
/// within this long ([`RpcServer::ordered_shards`]).
pub const HAND_OVER_DAMPING: Duration = Duration::from_secs(30);

/// How often the listening loop checks that its channel is still open.
const CHANNEL_CHECK: Duration = Duration::from_secs(1);
/// How long an ack may take before the channel is taken for dead.
const ACK_TIMEOUT: Duration = Duration::from_secs(10);

async fn listen_loop(state: Arc<ServerState>, mut stop: watch::Receiver<bool>) {
    let fanout_queue = state
        .listen
        .transient_name(&format!("{}_fanout", state.topic));
    let mut attempt = 0u32;
    let mut last_channel = None;
    while !*stop.borrow() {
        let set_up = set_up(&state, &fanout_queue).await;
        let (ch, mut deliveries, mut shard_channels) = match set_up {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!(error = %e, topic = %state.topic, "RPC server cannot listen; retrying");
                let pause = state.listen.pause_before_retry(attempt);
                attempt = attempt.saturating_add(1);
                tokio::select! {
                    _ = pause => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
        };
        attempt = 0;
        // ordered queues consumed again after a hand-over ([`hand_over`])
        let (back_tx, mut back_rx) = tokio::sync::mpsc::unbounded_channel();
        state.listening.send_replace(true);
        tracing::info!(topic = %state.topic, server = %state.server_name, "RPC server listening");
        // The consumers' stream does not always end when the connection dies (seen in the
        // broker drill: after an ack failed on the reset connection it stayed pending for
        // ever and the conductor never consumed again): the channel's state is looked at
        // too.
        let mut alive = tokio::time::interval(CHANNEL_CHECK);
        alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let next = tokio::select! {
                d = deliveries.next() => d,
                Some((shard, sch, consumer)) = back_rx.recv() => {
                    if let Some(slot) = shard_channels.get_mut(shard) {
                        *slot = Some(sch);
                    }
                    deliveries.push(consumer);
                    continue;
                }
                _ = stop.changed() => None,
                _ = alive.tick() => {
                    if ch.status().connected() {
                        continue;
                    }
                    tracing::warn!(topic = %state.topic, "RPC server channel closed");
                    None
                }
            };
            let Some(delivery) = next else { break };
            let delivery = match delivery {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "RPC server consumer failed");
                    break;
                }
            };
            // Ack on receipt, as oslo.messaging's RPC listener does (at-most-once), except
            // the casts of OpenKeel's ordered queues (only OpenKeel's API sends them, only
            // OpenKeel's conductors take them): those are acked once handled, so that a
            // conductor killed in the middle of one leaves it to the next active consumer
            // (at-least-once; the handlers tolerate a second run).
            let shard = if state.ordered {
                super::ordered_shard(&state.topic, delivery.routing_key.as_str())
            } else {
                None
            };
            let late_ack = shard.is_some();
            if let Some(q) = shard {
                let sh = &state.shards[q];
                // Left unacked: RabbitMQ puts it back when the queue's channel closes.
                if sh.handing_over.load(Ordering::SeqCst) {
                    continue;
                }
                let keep = *state.keep.borrow() & (1 << q) != 0;
                if !keep && sh.may_hand_over() {
                    if let Some(sch) = shard_channels.get_mut(q).and_then(Option::take) {
                        sh.handing_over.store(true, Ordering::SeqCst);
                        tokio::spawn(hand_over(state.clone(), q, sch, back_tx.clone()));
                        continue;
                    }
                }
            }
            let request = parse(&delivery.data);
            if (!late_ack || request.is_none()) && !ack(&delivery.acker).await {
                break;
            }
            let permit = match state.permits.clone().acquire_owned().await {
                Ok(p) => p,
                Err(_) => break,
            };
            let Some(request) = request else {
                continue;
            };
            if late_ack && delivery.redelivered {
                tracing::info!(method = %request.method, "a cast handed out again (the conductor that had it went away before it ended, or handed its queue over)");
            }
            let acker = late_ack.then(|| delivery.acker.clone());
            if let Some(q) = shard {
                state.shards[q].busy.fetch_add(1, Ordering::SeqCst);
            }
            // Casts about one cluster start in the order they arrived (crate::sequencer).
            let turn = request
                .call
                .is_none()
                .then(|| state.dispatcher.order_key(&request.method, &request.args))
                .flatten()
                .map(|key| state.order.enter(&key));
            let st = state.clone();
            tokio::spawn(async move {
                use futures_util::FutureExt;
                let handled = std::panic::AssertUnwindSafe(handle(&st, request, turn))
                    .catch_unwind()
                    .await;
                if handled.is_err() {
                    tracing::error!("an RPC request handler panicked");
                }
                if let Some(acker) = acker {
                    // Not acked (the channel went meanwhile): the broker hands it out again.
                    ack(&acker).await;
                }
                if let Some(q) = shard {
                    st.shards[q].busy.fetch_sub(1, Ordering::SeqCst);
                }
                drop(permit);
            });
        }
        state.listening.send_replace(false);
        last_channel = Some(ch);
        if *stop.borrow() {
            break;
        }
        tracing::warn!(topic = %state.topic, "RPC server lost the broker; reconnecting");
        state.listen.pause_before_retry(0).await;
    }
    // Let the requests in progress finish (bounded), then clean up.
    let all = state.settings.executor_pool.min(u32::MAX as usize) as u32;
    let _ = tokio::time::timeout(
        state.settings.rpc_response_timeout,
        state.permits.acquire_many(all),
    )
    .await;
    // As oslo.messaging: a fanout queue with a random name is deleted; with
    // `use_queue_manager` its name comes back after a restart, so it is kept (its
    // `x-expires` policy removes it if the service does not come back).
    if let Some(ch) = last_channel.filter(|_| state.settings.queue_manager.is_none()) {
        let _ = ch
            .queue_delete(fanout_queue.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    state.listen.close().await;
    state.replies.broker().close().await;
}

type Deliveries = futures_util::stream::SelectAll<lapin::Consumer>;

impl ShardState {
    /// Whether the shard may be handed over now ([`HAND_OVER_DAMPING`]).
    fn may_hand_over(&self) -> bool {
        self.handed_over_at
            .lock()
            .map_or(true, |t| t.is_none_or(|t| t.elapsed() >= HAND_OVER_DAMPING))
    }
}

/// A channel to consume on, with `rabbit_qos_prefetch_count`.
async fn consumer_channel(
    state: &ServerState,
    conn: &lapin::Connection,
) -> Result<lapin::Channel, BrokerError> {
    let ch = conn.create_channel().await?;
    if state.settings.qos_prefetch_count > 0 {
        ch.basic_qos(
            state.settings.qos_prefetch_count,
            BasicQosOptions::default(),
        )
        .await?;
    }
    Ok(ch)
}

/// Consume ordered queue `shard` on a channel of its own (so that it can be handed over
/// alone: [`RpcServer::ordered_shards`]).
async fn consume_shard(
    state: &ServerState,
    conn: &lapin::Connection,
    shard: usize,
) -> Result<(lapin::Channel, lapin::Consumer), BrokerError> {
    let ch = consumer_channel(state, conn).await?;
    let q = super::ordered_queue(&state.topic, shard);
    state.listen.declare_ordered_queue(&ch, &q).await?;
    let c = ch
        .basic_consume(
            q.as_str().into(),
            format!("o{shard}").as_str().into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    Ok((ch, c))
}

/// Hand ordered queue `shard` over to the next conductor in RabbitMQ's line: once the casts of
/// it this server started have ended, close its channel (the casts it held go back to the
/// head of the queue and the next consumer becomes the active one), then consume it again,
/// last in line, and give the new consumer to the listening loop.
async fn hand_over(
    state: Arc<ServerState>,
    shard: usize,
    ch: lapin::Channel,
    back: tokio::sync::mpsc::UnboundedSender<(usize, lapin::Channel, lapin::Consumer)>,
) {
    let sh = &state.shards[shard];
    let generation = sh.generation.load(Ordering::SeqCst);
    while sh.busy.load(Ordering::SeqCst) > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = ch.close(200, "handing the ordered queue over".into()).await;
    if let Ok(mut t) = sh.handed_over_at.lock() {
        *t = Some(Instant::now());
    }
    tracing::info!(topic = %state.topic, shard, "ordered queue handed over to the next conductor");
    if sh.generation.load(Ordering::SeqCst) != generation {
        return; // the server has reconnected meanwhile and consumes the queue again
    }
    let again = async {
        let conn = state.listen.connection().await?;
        consume_shard(&state, &conn, shard).await
    }
    .await;
    match again {
        Ok((ch, consumer)) => {
            if let Err(e) = back.send((shard, ch, consumer)) {
                // the listening loop has reconnected meanwhile and consumes it already
                let (_, ch, _) = e.0;
                let _ = ch.close(200, "not needed".into()).await;
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, shard, "could not consume the ordered queue again; it is consumed again when the server reconnects");
        }
    }
    if sh.generation.load(Ordering::SeqCst) == generation {
        sh.handing_over.store(false, Ordering::SeqCst);
    }
}

/// Ack a delivery, bounded: an ack queued as the connection died may never be resolved. A
/// failed ack means the channel is gone (the server listens again on a new one); the broker
/// has put the message back in its queue, and for a request acked on receipt it is dropped
/// here, as oslo drops it.
async fn ack(acker: &lapin::Acker) -> bool {
    match tokio::time::timeout(ACK_TIMEOUT, acker.ack(BasicAckOptions::default())).await {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not ack a request");
            false
        }
        Err(_) => {
            tracing::warn!(timeout_s = ACK_TIMEOUT.as_secs(), "an ack did not complete");
            false
        }
    }
}

/// The server's channel and every consumer; with `ordered`, the ordered queues' channels too
/// (by shard).
async fn set_up(
    state: &ServerState,
    fanout_queue: &str,
) -> Result<(lapin::Channel, Deliveries, Vec<Option<lapin::Channel>>), BrokerError> {
    let b = &state.listen;
    let conn = b.connection().await?;
    let ch = consumer_channel(state, &conn).await?;
    let server_queue = format!("{}.{}", state.topic, state.server_name);
    b.declare_topic_queue(&ch, &state.topic).await?;
    b.declare_topic_queue(&ch, &server_queue).await?;
    let fanout_exchange = format!("{}_fanout", state.topic);
    ch.exchange_declare(
        fanout_exchange.as_str().into(),
        ExchangeKind::Fanout,
        ExchangeDeclareOptions {
            durable: state.settings.transient_quorum_queue,
            auto_delete: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await?;
    b.declare_transient_queue(&ch, fanout_queue).await?;
    ch.queue_bind(
        fanout_queue.into(),
        fanout_exchange.as_str().into(),
        state.topic.as_str().into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await?;
    let queues: Vec<(String, String)> = [
        ("1", state.topic.as_str()),
        ("2", server_queue.as_str()),
        ("3", fanout_queue),
    ]
    .iter()
    .map(|(t, q)| (t.to_string(), q.to_string()))
    .collect();
    let mut all = futures_util::stream::SelectAll::new();
    for (tag, q) in &queues {
        let c = ch
            .basic_consume(
                q.as_str().into(),
                tag.as_str().into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        all.push(c);
    }
    let mut shard_channels = Vec::new();
    if state.ordered {
        for (shard, sh) in state.shards.iter().enumerate() {
            let (sch, consumer) = consume_shard(state, &conn, shard).await?;
            all.push(consumer);
            shard_channels.push(Some(sch));
            sh.generation.fetch_add(1, Ordering::SeqCst);
            sh.handing_over.store(false, Ordering::SeqCst);
        }
    }
    Ok((ch, all, shard_channels))
}

/// True (and remembered) the first time a `_unique_id` is seen among the last 16.
fn first_time(state: &ServerState, id: &str) -> bool {
    let Ok(mut seen) = state.seen.lock() else {
        return true;
    };
    if seen.iter().any(|s| s == id) {
        return false;
    }
    if seen.len() == 16 {
        seen.pop_front();
    }
    seen.push_back(id.to_string());
    true
}

fn unsupported_version(method: &str, version: &str) -> RemoteFailure {
    RemoteFailure {
        class: "UnsupportedVersion".into(),
        module: "oslo_messaging.rpc.dispatcher".into(),
        message: format!(
            "Endpoint does not support RPC version {version}. Attempted method: {method}"
        ),
        kwargs: Default::default(),
    }
}

/// Magnum's endpoints have no `target`: namespace null and version `1.0` (or absent) only.
fn check_target(r: &Request) -> Result<(), RemoteFailure> {
    let version = r.version.as_deref().unwrap_or("1.0");
    let mut parts = version.split('.');
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().map_or(Some(0), |p| p.parse::<u32>().ok());
    if r.namespace.is_some() || major != Some(1) || minor != Some(0) {
        return Err(unsupported_version(&r.method, version));
    }
    Ok(())
}

fn parse(body: &[u8]) -> Option<Request> {
    match message::deserialize_envelope(body).and_then(message::parse_request) {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::error!(error = %e, "unreadable RPC request dropped");
            None
        }
    }
}

async fn handle(state: &ServerState, request: Request, mut turn: Option<Turn>) {
    if let Some(t) = turn.as_mut() {
        t.wait().await;
    }
    if let Some(u) = &request.unique_id {
        if !first_time(state, u) {
            tracing::warn!(method = %request.method, "duplicate RPC request dropped");
            return;
        }
    }
    let ctx = message::context_from_dict(&request.context);
    let request_id = ctx.request_id.clone();
    let span = tracing::info_span!("rpc", method = %request.method, request_id = %request_id);
    let result: Result<Value, RemoteFailure> = match check_target(&request) {
        Ok(()) => {
            use tracing::Instrument;
            state
                .dispatcher
                .dispatch(ctx, &request.method, request.args)
                .instrument(span.clone())
                .await
        }
        Err(f) => Err(f),
    };
    drop(turn);
    let _g = span.enter();
    match (&request.call, &result) {
        (None, Err(f)) => {
            tracing::error!(class = %f.class, message = %f.message, "RPC cast failed");
        }
        (Some(_), Err(f)) => {
            tracing::debug!(class = %f.class, message = %f.message, "RPC call answered with a failure");
        }
        _ => {}
    }
    drop(_g);
    let Some(call) = request.call else { return };
    let reply = message::reply(&call.msg_id, result.as_ref().cloned(), &request.method);
    let body = message::serialize_envelope(&reply);
    send_reply(state, &call.reply_q, &call.msg_id, &body).await;
}

async fn send_reply(state: &ServerState, reply_q: &str, msg_id: &str, body: &[u8]) {
    let s = &state.settings;
    let give_up = Instant::now() + s.missing_consumer_retry_timeout.max(Duration::from_secs(1));
    loop {
        let deadline = (Instant::now() + s.rpc_response_timeout).min(give_up);
        let r = state
            .replies
            .publish(
                "",
                reply_q,
                s.direct_mandatory_flag,
                body,
                properties(None),
                deadline,
            )
            .await;
        match r {
            Ok(()) => return,
            Err(BrokerError::Returned(_)) if Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => {
                tracing::error!(msg_id, reply_q, error = %e, "RPC reply could not be delivered; dropped");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_12_base32_characters() {
        let n = generate_server_name();
        assert_eq!(n.len(), 12);
        assert!(n
            .chars()
            .all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c)));
        assert_ne!(n, generate_server_name());
    }
}
