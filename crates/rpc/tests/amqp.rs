//! The oslo.messaging transport against a real RabbitMQ (tests/run.sh starts it): calls,
//! casts, failures, timeouts, the declared topology, the message properties, and broker
//! outages (simulated with a TCP proxy in front of the broker, so that the other tests of
//! this binary keep their broker; the real restart is `broker_restart.rs`, alone in its
//! binary).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::server::RpcServer;
use openkeel_rpc::oslo::{message, RabbitSettings};
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

fn transport_url() -> Option<String> {
    let amqp = openkeel_tests::rabbit_url()?;
    Some(amqp.replacen("amqp://", "rabbit://", 1))
}

fn settings(url: &str, timeout: u64) -> Arc<RabbitSettings> {
    let mut s = RabbitSettings::for_url(url, "openkeel-test").unwrap();
    s.rpc_response_timeout = Duration::from_secs(timeout);
    s.retry_interval = Duration::from_millis(200);
    s.retry_backoff = Duration::from_millis(200);
    s.interval_max = Duration::from_secs(1);
    Arc::new(s)
}

fn topic() -> String {
    format!("okt-{}", uuid::Uuid::new_v4().simple())
}

fn ctx() -> RequestContext {
    RequestContext {
        user_id: Some("u1".into()),
        project_id: Some("p1".into()),
        roles: vec!["member".into()],
        auth_token: Some("secret-token".into()),
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    }
}

/// A dispatcher that answers a few test methods and reports every request it sees.
struct TestDispatcher {
    seen: mpsc::UnboundedSender<(String, Args, RequestContext)>,
}

#[async_trait]
impl Dispatcher for TestDispatcher {
    async fn dispatch(
        &self,
        ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        let _ = self.seen.send((method.to_string(), args.clone(), ctx));
        match method {
            "echo" => Ok(Value::Object(args)),
            "not_found" => Err(RemoteFailure::magnum(&MagnumError::new(
                ErrorKind::ClusterNotFound,
                &[("cluster", &"nope")],
            ))),
            "slow" => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(Value::Null)
            }
            "cast_me" => Ok(Value::Null),
            other => Err(openkeel_rpc::remote::no_such_method(other)),
        }
    }
}

fn serve(
    s: Arc<RabbitSettings>,
    topic: &str,
) -> (
    RpcServer,
    mpsc::UnboundedReceiver<(String, Args, RequestContext)>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let server = RpcServer::start(s, topic, "srv1", Arc::new(TestDispatcher { seen: tx }));
    (server, rx)
}

/// Wait until the server has declared and consumes its topic queue.
async fn wait_listening(url: &str, topic: &str) {
    let admin = admin_channel(url).await;
    for _ in 0..100 {
        let q = inspect(&admin, topic).await;
        match q {
            Ok(q) if q.consumer_count() > 0 => return,
            Ok(_) => {}
            Err(_) => {
                // a failed passive declare closes the channel
                return Box::pin(wait_listening_retry(url, topic)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the RPC server never consumed {topic}");
}

async fn wait_listening_retry(url: &str, topic: &str) {
    tokio::time::sleep(Duration::from_millis(100)).await;
    wait_listening(url, topic).await
}

async fn admin_channel(url: &str) -> lapin::Channel {
    let amqp = url.replacen("rabbit://", "amqp://", 1);
    let conn = lapin::Connection::connect(&amqp, lapin::ConnectionProperties::default())
        .await
        .unwrap();
    let ch = conn.create_channel().await.unwrap();
    // keep the connection alive as long as the channel is used
    std::mem::forget(conn);
    ch
}

/// A queue's state (passive declare); an error when it does not exist (which closes `ch`).
async fn inspect(ch: &lapin::Channel, queue: &str) -> Result<lapin::Queue, lapin::Error> {
    ch.queue_declare(
        queue.into(),
        QueueDeclareOptions {
            passive: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await
}

/// `wait_listening` returns once the topic queue is consumed (oslo's `server.start()`
/// contract): a cast sent right after it is delivered, never dropped for want of a queue.
#[tokio::test]
async fn a_cast_right_after_wait_listening_is_delivered() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let s = settings(&url, 10);
    let (server, mut seen) = serve(s.clone(), &t);
    assert!(server.wait_listening(Duration::from_secs(30)).await);
    let admin = admin_channel(&url).await;
    let q = inspect(&admin, &t).await.unwrap();
    assert_eq!(q.consumer_count(), 1);
    let caller = AmqpCaller::new(s.clone(), t.clone());
    caller.cast(&ctx(), "first", Args::new()).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), seen.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.0, "first");
    server.stop().await;
}

/// A cast to a topic no queue is bound to (a broker that has just restarted, before the
/// conductors have declared their queues again) is not lost: it is retried until a conductor
/// listens, and refused with a 503 when none does within the timeout. oslo.messaging's casts
/// are not mandatory: the broker confirms them and drops them.
#[tokio::test]
async fn a_cast_no_queue_takes_waits_for_one_or_fails() {
    let Some(url) = transport_url() else { return };
    // nobody ever listens: a 503 after the timeout, not a silent success
    let caller = AmqpCaller::new(settings(&url, 2), topic());
    let t0 = std::time::Instant::now();
    let e = caller.cast(&ctx(), "lost", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable, "{e}");
    assert!(e.message().contains("no conductor is listening"), "{e}");
    assert!(
        t0.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        t0.elapsed()
    );

    // a conductor that starts listening during the retries gets the cast
    let t = topic();
    let s = settings(&url, 20);
    let caller = AmqpCaller::new(s.clone(), t.clone());
    let cast = tokio::spawn(async move { caller.cast(&ctx(), "late", Args::new()).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (server, mut seen) = serve(s.clone(), &t);
    cast.await
        .unwrap()
        .expect("delivered once the queue is there");
    let got = tokio::time::timeout(Duration::from_secs(10), seen.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.0, "late");
    server.stop().await;
}

#[tokio::test]
async fn calls_casts_and_failures_round_trip() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let s = settings(&url, 10);
    let (server, mut seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;
    let caller = AmqpCaller::new(s.clone(), t.clone());

    let mut args = Args::new();
    args.insert("x".into(), json!({"nested": [1, "two", null]}));
    let c = ctx();
    let r = caller.call(&c, "echo", args.clone()).await.unwrap();
    assert_eq!(r, Value::Object(args.clone()));
    let (m, a, sctx) = seen.recv().await.unwrap();
    assert_eq!((m.as_str(), a), ("echo", args));
    // The context crosses the wire as Magnum's to_dict() keys.
    assert_eq!(sctx.to_dict(), c.to_dict());

    // A Magnum exception comes back as the same class, status and message.
    let e = caller
        .call(&ctx(), "not_found", Args::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClusterNotFound);
    assert_eq!(
        (e.code(), e.message()),
        (404, "Cluster nope could not be found.")
    );

    // An unknown method is oslo's NoSuchMethod: a RemoteError, 500.
    let e = caller.call(&ctx(), "nope", Args::new()).await.unwrap_err();
    assert_eq!(e.code(), 500);
    assert!(e.message().contains("NoSuchMethod"), "{}", e.message());

    // A cast arrives and gets no reply.
    caller.cast(&ctx(), "cast_me", Args::new()).await.unwrap();
    let mut got = None;
    while let Ok(Some(x)) = tokio::time::timeout(Duration::from_secs(10), seen.recv()).await {
        if x.0 == "cast_me" {
            got = Some(x);
            break;
        }
    }
    assert!(got.is_some(), "the cast never reached the server");

    // Several calls at once are all answered with their own result.
    let mut joins = Vec::new();
    for i in 0..20 {
        let caller = caller.clone();
        joins.push(tokio::spawn(async move {
            let mut a = Args::new();
            a.insert("i".into(), json!(i));
            caller.call(&ctx(), "echo", a).await.unwrap()
        }));
    }
    for (i, j) in joins.into_iter().enumerate() {
        assert_eq!(j.await.unwrap(), json!({ "i": i }));
    }
    server.stop().await;
}

#[tokio::test]
async fn the_topology_and_message_properties_are_oslos() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let s = settings(&url, 10);
    let (server, _seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;

    // What a Python conductor declares: <topic>, <topic>.<server>, <topic>_fanout.
    let admin = admin_channel(&url).await;
    let passive = QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    for q in [t.clone(), format!("{t}.srv1")] {
        let q = admin
            .queue_declare(q.as_str().into(), passive, FieldTable::default())
            .await
            .unwrap_or_else(|e| panic!("queue {q} missing: {e}"));
        assert_eq!(q.consumer_count(), 1);
    }
    admin
        .exchange_declare(
            format!("{t}_fanout").as_str().into(),
            lapin::ExchangeKind::Fanout,
            ExchangeDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();

    // Tap the control exchange: a copy of each request shows its properties and body.
    let tap = format!("{t}-tap");
    admin
        .queue_declare(
            tap.as_str().into(),
            QueueDeclareOptions {
                auto_delete: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();
    admin
        .queue_bind(
            tap.as_str().into(),
            "magnum".into(),
            t.as_str().into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();
    let mut tapped = admin
        .basic_consume(
            tap.as_str().into(),
            "tap".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap();

    let caller = AmqpCaller::new(s.clone(), t.clone());
    caller.call(&ctx(), "echo", Args::new()).await.unwrap();
    caller.cast(&ctx(), "cast_me", Args::new()).await.unwrap();
    for kind in ["call", "cast"] {
        let d = tokio::time::timeout(Duration::from_secs(10), tapped.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        d.ack(BasicAckOptions::default()).await.unwrap();
        let p = &d.properties;
        assert_eq!(
            p.content_type().as_ref().unwrap().as_str(),
            "application/json"
        );
        assert_eq!(p.content_encoding().as_ref().unwrap().as_str(), "utf-8");
        assert_eq!(*p.delivery_mode(), Some(2));
        assert_eq!(*p.priority(), Some(0));
        assert!(p.headers().is_some());
        let body: Value = serde_json::from_slice(&d.data).unwrap();
        let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["oslo.version", "oslo.message"]);
        let inner = message::deserialize_envelope(&d.data).unwrap();
        match kind {
            "call" => {
                assert_eq!(p.expiration().as_ref().unwrap().as_str(), "10000");
                assert_eq!(inner["_reply_q"], json!(caller.reply_queue()));
                assert!(caller.reply_queue().starts_with("reply_"));
                assert_eq!(inner["_timeout"], Value::Null);
                assert_eq!(inner["_msg_id"].as_str().unwrap().len(), 32);
            }
            _ => {
                assert!(p.expiration().is_none());
                assert!(!inner.contains_key("_msg_id"));
            }
        }
        assert_eq!(inner["_unique_id"].as_str().unwrap().len(), 32);
        assert_eq!(inner["_context_user_id"], json!("u1"));
    }
    let _ = admin
        .queue_delete(tap.as_str().into(), QueueDeleteOptions::default())
        .await;
    server.stop().await;
}

/// A call a conductor received but did not answer in time is oslo's `MessagingTimeout`.
#[tokio::test]
async fn a_call_nobody_answers_times_out_as_messaging_timeout() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let s = settings(&url, 2);
    let (server, _seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;
    let caller = AmqpCaller::new(s, t);
    let started = std::time::Instant::now();
    // "slow" answers after 5 s
    let e = caller.call(&ctx(), "slow", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MessagingTimeout);
    assert!(e
        .message()
        .starts_with("Timed out waiting for a reply to message ID "));
    assert!(started.elapsed() < Duration::from_secs(6));
    server.stop().await;
}

/// A call to a topic no queue is bound to (a broker that has just restarted, before the
/// conductor declared its queue again: found by the broker drill, tests/drills/drill.py) is
/// retried as a cast is: delivered once a conductor listens, a 503 when none does within the
/// timeout. Published without `mandatory` (as oslo.messaging does) the broker dropped it and
/// the API answered 500 `MessagingTimeout` after the whole timeout.
#[tokio::test]
async fn a_call_no_queue_takes_waits_for_one_or_fails() {
    let Some(url) = transport_url() else { return };
    let caller = AmqpCaller::new(settings(&url, 2), topic());
    let t0 = std::time::Instant::now();
    let e = caller.call(&ctx(), "echo", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable, "{e}");
    assert!(e.message().contains("no conductor is listening"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());

    let t = topic();
    let s = settings(&url, 20);
    let caller = AmqpCaller::new(s.clone(), t.clone());
    let mut args = Args::new();
    args.insert("x".into(), json!(1));
    let call = tokio::spawn(async move { caller.call(&ctx(), "echo", args).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (server, _seen) = serve(s.clone(), &t);
    let t1 = std::time::Instant::now();
    let v = call
        .await
        .unwrap()
        .expect("answered once the queue is there");
    assert_eq!(v, json!({"x": 1}));
    assert!(t1.elapsed() < Duration::from_secs(10), "{:?}", t1.elapsed());
    server.stop().await;
}

#[tokio::test]
async fn an_unreachable_broker_is_a_503_within_the_timeout() {
    // A port nothing listens on.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let caller = AmqpCaller::new(
        settings(&format!("rabbit://guest:guest@127.0.0.1:{port}/"), 2),
        topic(),
    );
    let started = std::time::Instant::now();
    let e = caller
        .cast(&ctx(), "cast_me", Args::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable);
    assert_eq!(e.code(), 503);
    let e = caller.call(&ctx(), "echo", Args::new()).await.unwrap_err();
    assert_eq!(e.code(), 503);
    assert!(started.elapsed() < Duration::from_secs(8));
}

/// A TCP proxy to the broker that can be taken down (every connection cut, new ones
/// refused) and brought back, as a broker restart looks to its clients.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Proxy {
    async fn start(target: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let (gen_tx, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(gen_tx);
        let (u, g) = (up.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    break;
                };
                if !u.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let target = target.clone();
                let mut cut = g.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Proxy {
            port,
            up,
            generation,
        }
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

fn broker_addr(url: &str) -> (String, String) {
    // rabbit://user:pass@host:port/vhost -> ("host:port", "rabbit://user:pass@")
    let rest = url.strip_prefix("rabbit://").unwrap();
    let (creds, hostpath) = rest.rsplit_once('@').unwrap();
    let (hostport, _) = hostpath.split_once('/').unwrap_or((hostpath, ""));
    (hostport.to_string(), format!("rabbit://{creds}@"))
}

#[tokio::test]
async fn both_sides_survive_a_broker_outage_and_a_cast_sent_during_it_is_delivered() {
    let Some(url) = transport_url() else { return };
    let (target, prefix) = broker_addr(&url);
    let proxy = Proxy::start(target).await;
    let via = format!("{prefix}127.0.0.1:{}/", proxy.port);
    let t = topic();
    let s = settings(&via, 20);
    let (server, mut seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;
    let caller = AmqpCaller::new(s.clone(), t.clone());
    caller.call(&ctx(), "echo", Args::new()).await.unwrap();
    let _ = seen.recv().await;

    // The broker goes away: both processes lose their connections.
    proxy.down();
    // Non-durable queues do not survive a real broker restart: remove the reply and server
    // queues too (the topic queue stays, so the cast below has somewhere to go the moment
    // the broker is back, before the server has redeclared).
    let admin = admin_channel(&url).await;
    for q in [format!("{t}.srv1"), caller.reply_queue().to_string()] {
        let _ = admin
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    // A cast published now waits for the broker (publisher confirms), not dropped.
    let c2 = caller.clone();
    let pending = tokio::spawn(async move {
        let mut a = Args::new();
        a.insert("during".into(), json!("outage"));
        c2.cast(&ctx(), "cast_me", a).await
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!pending.is_finished(), "the cast must wait for the broker");
    proxy.up();
    pending.await.unwrap().unwrap();

    // The server redeclared its queues and got the cast.
    let got = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let (m, a, _) = seen.recv().await.unwrap();
            if m == "cast_me" && a.get("during") == Some(&json!("outage")) {
                break;
            }
        }
    })
    .await;
    assert!(got.is_ok(), "the cast sent during the outage never arrived");
    // And calls work again (the reply queue was redeclared).
    let mut a = Args::new();
    a.insert("after".into(), json!(true));
    let r = caller.call(&ctx(), "echo", a.clone()).await.unwrap();
    assert_eq!(r, Value::Object(a));
    server.stop().await;
}

/// `rabbit_quorum_queue` makes the topic queues durable quorum queues (and the control
/// exchange durable); the reply queue keeps `x-expires` from `rabbit_transient_queues_ttl`.
#[tokio::test]
async fn quorum_queues_are_declared_as_oslo_declares_them() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let exchange = format!("{t}-x");
    let mut s = (*settings(&url, 10)).clone();
    s.quorum_queue = true;
    s.exchange = exchange.clone();
    s.transient_queues_ttl = 60;
    let s = Arc::new(s);
    let (server, _seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;
    let caller = AmqpCaller::new(s.clone(), t.clone());
    caller.call(&ctx(), "echo", Args::new()).await.unwrap();

    // Re-declaring with the same arguments succeeds only if they are equivalent.
    let admin = admin_channel(&url).await;
    let mut quorum = FieldTable::default();
    quorum.insert(
        "x-queue-type".into(),
        lapin::types::AMQPValue::LongString("quorum".into()),
    );
    admin
        .queue_declare(
            t.as_str().into(),
            QueueDeclareOptions {
                durable: true,
                ..Default::default()
            },
            quorum,
        )
        .await
        .expect("the topic queue is a durable quorum queue");
    admin
        .exchange_declare(
            exchange.as_str().into(),
            lapin::ExchangeKind::Topic,
            ExchangeDeclareOptions {
                durable: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .expect("the control exchange is durable");
    let mut expires = FieldTable::default();
    expires.insert("x-expires".into(), lapin::types::AMQPValue::LongInt(60_000));
    admin
        .queue_declare(
            caller.reply_queue().into(),
            QueueDeclareOptions::default(),
            expires,
        )
        .await
        .expect("the reply queue is transient with x-expires");
    // A non-equivalent declaration is refused by the broker (so the checks above can fail).
    let other = admin_channel(&url).await;
    let refused = other
        .queue_declare(
            t.as_str().into(),
            QueueDeclareOptions::default(),
            FieldTable::default(),
        )
        .await;
    assert!(refused.is_err());
    server.stop().await;
    for q in [t.clone(), format!("{t}.srv1")] {
        let _ = admin
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    let _ = admin
        .exchange_delete(exchange.as_str().into(), Default::default())
        .await;
}

/// OpenKeel's ordered queues are declared as the topic queue is (here durable quorum queues)
/// with a single active consumer: a cast waiting in one survives what a cast waiting in the
/// topic queue survives (the broker drill with quorum queues lost one that waited in an
/// ordered queue declared non-durable and auto-delete).
#[tokio::test]
async fn ordered_queues_are_declared_as_the_topic_queue() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let mut s = (*settings(&url, 10)).clone();
    s.quorum_queue = true;
    // A durable control exchange of its own: the other tests declare theirs non-durable.
    s.exchange = format!("{t}-x");
    let s = Arc::new(s);
    let (tx, _seen) = mpsc::unbounded_channel();
    let server = RpcServer::start_with(
        s.clone(),
        t.clone(),
        "srv1",
        Arc::new(TestDispatcher { seen: tx }),
        true,
    );
    assert!(server.wait_listening(Duration::from_secs(30)).await);
    let admin = admin_channel(&url).await;
    let ordered: Vec<String> = (0..openkeel_rpc::oslo::ORDERED_SHARDS)
        .map(|n| openkeel_rpc::oslo::ordered_queue(&t, n))
        .collect();
    let mut args = FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        lapin::types::AMQPValue::LongString("quorum".into()),
    );
    args.insert(
        "x-single-active-consumer".into(),
        lapin::types::AMQPValue::Boolean(true),
    );
    for q in &ordered {
        // Re-declaring succeeds only with equivalent arguments and flags.
        let d = admin
            .queue_declare(
                q.as_str().into(),
                QueueDeclareOptions {
                    durable: true,
                    ..Default::default()
                },
                args.clone(),
            )
            .await
            .unwrap_or_else(|e| panic!("{q} is not a durable quorum queue with SAC: {e}"));
        assert_eq!(d.consumer_count(), 1, "{q} is consumed");
    }
    server.stop().await;
    // Unlike an auto-delete queue, it outlives its consumers, as the topic queue does. A
    // quorum queue counts a cancelled consumer out through its Raft log, a moment after the
    // cancel was answered (CI once saw 1 right after the stop on a loaded machine): asked
    // until it says 0, for at most 10 s.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = inspect(&admin, &ordered[0])
            .await
            .expect("the ordered queue outlives its consumer");
        if left.consumer_count() == 0 || tokio::time::Instant::now() > deadline {
            assert_eq!(
                left.consumer_count(),
                0,
                "consumers after the server stopped"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for q in ordered.iter().chain([&t, &format!("{t}.srv1")]) {
        let _ = admin
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    let _ = admin
        .exchange_delete(s.exchange.as_str().into(), Default::default())
        .await;
}

/// Several brokers in `transport_url`: a host that refuses connections is skipped for the
/// next one (oslo's round-robin failover).
#[tokio::test]
async fn a_dead_broker_in_the_url_fails_over_to_the_next() {
    let Some(url) = transport_url() else { return };
    let (target, prefix) = broker_addr(&url);
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    let creds = prefix.trim_start_matches("rabbit://").trim_end_matches('@');
    let both = format!("rabbit://{creds}@127.0.0.1:{dead_port},{creds}@{target}/");
    let t = topic();
    let s = settings(&both, 10);
    assert_eq!(s.hosts.len(), 2);
    let (server, _seen) = serve(s.clone(), &t);
    wait_listening(&url, &t).await;
    let caller = AmqpCaller::new(s, t);
    let r = caller.call(&ctx(), "echo", Args::new()).await.unwrap();
    assert_eq!(r, json!({}));
    server.stop().await;
}

/// Casts with one ordering key start one after the other in arrival order, even when the
/// first ones take longest; other keys are not held up (`Dispatcher::order_key`).
struct Ordered {
    done: mpsc::UnboundedSender<(String, u64)>,
}

#[async_trait]
impl Dispatcher for Ordered {
    async fn dispatch(
        &self,
        _ctx: RequestContext,
        _method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        let key = args["key"].as_str().unwrap_or_default().to_string();
        let i = args["i"].as_u64().unwrap_or_default();
        // The earliest casts sleep longest: unordered, they would finish last.
        tokio::time::sleep(Duration::from_millis((20 - i.min(20)) * 3)).await;
        let _ = self.done.send((key, i));
        Ok(Value::Null)
    }

    fn order_key(&self, _method: &str, args: &Args) -> Option<String> {
        args.get("key").and_then(Value::as_str).map(str::to_string)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn casts_with_one_order_key_run_in_arrival_order() {
    let Some(url) = transport_url() else { return };
    let t = topic();
    let s = settings(&url, 10);
    let (tx, mut done) = mpsc::unbounded_channel();
    let server = RpcServer::start(
        s.clone(),
        t.clone(),
        "ordered",
        Arc::new(Ordered { done: tx }),
    );
    assert!(server.wait_listening(Duration::from_secs(30)).await);
    let caller = AmqpCaller::new(s.clone(), t.clone());
    for i in 0..20u64 {
        let mut a = Args::new();
        a.insert("key".into(), json!("cluster-a"));
        a.insert("i".into(), json!(i));
        caller.cast(&ctx(), "op", a).await.unwrap();
    }
    let mut b = Args::new();
    b.insert("key".into(), json!("cluster-b"));
    b.insert("i".into(), json!(20));
    caller.cast(&ctx(), "op", b).await.unwrap();
    let mut order = Vec::new();
    let mut b_done_at = None;
    while order.len() < 20 {
        let (key, i) = tokio::time::timeout(Duration::from_secs(20), done.recv())
            .await
            .unwrap()
            .unwrap();
        if key == "cluster-a" {
            order.push(i);
        } else {
            b_done_at = Some(order.len());
        }
    }
    assert_eq!(order, (0..20).collect::<Vec<_>>());
    assert!(
        b_done_at.is_some_and(|n| n < 20),
        "another key does not wait for cluster-a's queue: {b_done_at:?}"
    );
    server.stop().await;
}

/// The broker cut away while the server is busy taking a stream of casts (the broker drill,
/// tests/drills/drill.py, saw a conductor's server stop consuming for good after an ack failed
/// on the reset connection: its topic queue was never declared again): after each cut the
/// server listens again and answers a call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_listens_again_after_the_broker_is_cut_during_a_stream_of_casts() {
    let Some(url) = transport_url() else { return };
    let (target, prefix) = broker_addr(&url);
    let proxy = Proxy::start(target).await;
    let via = format!("{prefix}127.0.0.1:{}/", proxy.port);
    let t = topic();
    let (server, mut seen) = serve(settings(&via, 20), &t);
    tokio::spawn(async move { while seen.recv().await.is_some() {} });
    wait_listening(&url, &t).await;
    // the casts go straight to the broker, not through the proxy
    let caller = AmqpCaller::new(settings(&url, 20), t.clone());
    let flood = {
        let caller = caller.clone();
        tokio::spawn(async move {
            for i in 0..3000 {
                let mut a = Args::new();
                a.insert("i".into(), json!(i));
                // a cast may wait for the server's queue or fail while it is away
                let _ = caller.cast(&ctx(), "cast_me", a).await;
            }
        })
    };
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        proxy.down();
        tokio::time::sleep(Duration::from_millis(300)).await;
        proxy.up();
    }
    flood.abort();
    let answered = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if caller.call(&ctx(), "echo", Args::new()).await.is_ok() {
                return;
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "the server never listened again");
    server.stop().await;
}

/// The frame size proposed to the broker is `[openkeel] amqp_frame_max` (16 KiB by default):
/// the AMQP client's read and write buffers are 32 frames each, so RabbitMQ's 128 KiB would
/// cost every process 8 MiB of memory (docs/performance.md, "Memory at rest").
#[tokio::test]
async fn the_negotiated_frame_size_is_amqp_frame_max() {
    let Some(url) = transport_url() else {
        return;
    };
    let s = settings(&url, 5);
    assert_eq!(s.frame_max, 16_384);
    let broker = openkeel_rpc::oslo::broker::Broker::new(s.clone());
    let conn = broker.connection().await.unwrap();
    assert_eq!(conn.configuration().frame_max(), 16_384);
    broker.close().await;

    let mut larger = (*s).clone();
    larger.frame_max = 65_536;
    let broker = openkeel_rpc::oslo::broker::Broker::new(Arc::new(larger));
    let conn = broker.connection().await.unwrap();
    assert_eq!(conn.configuration().frame_max(), 65_536);
    broker.close().await;
}

/// Every mandatory publish learns whether its own message was routed. lapin hands a
/// `basic.return` to whichever confirm it resolves next, and one `basic.ack` with `multiple`
/// resolves several confirms in no set order: with several messages awaiting their confirms
/// on one channel, a routed message could be told "returned" (and be published again) and a
/// returned one "delivered" (the broker drill lost a resize answered 202 that way, published
/// while the conductor was declaring its queues again after a restart).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_mandatory_publishes_each_learn_their_own_fate() {
    use openkeel_rpc::oslo::broker::{properties, Broker, BrokerError, Publisher};
    let Some(url) = transport_url() else { return };
    let s = settings(&url, 30);
    let admin = admin_channel(&url).await;
    let routed = topic();
    admin
        .queue_declare(
            routed.as_str().into(),
            QueueDeclareOptions {
                auto_delete: false,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();
    let publisher = Arc::new(Publisher::new(Broker::new(s)));
    let mut wrong = 0;
    let mut sent = 0u32;
    for _round in 0..5 {
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let p = publisher.clone();
                let key = if i % 2 == 0 {
                    routed.clone()
                } else {
                    format!("nobody-{}", uuid::Uuid::new_v4().simple())
                };
                tokio::spawn(async move {
                    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
                    let r = p
                        .publish("", &key, true, b"{}", properties(None), deadline)
                        .await;
                    (i % 2 == 0, r)
                })
            })
            .collect();
        for t in tasks {
            let (should_route, r) = t.await.unwrap();
            match (should_route, r) {
                (true, Ok(())) | (false, Err(BrokerError::Returned(_))) => {}
                (_, Err(e)) if !matches!(e, BrokerError::Returned(_)) => panic!("publish: {e}"),
                _ => wrong += 1,
            }
            sent += u32::from(should_route);
        }
    }
    let q = inspect(&admin, &routed).await.unwrap();
    let _ = admin
        .queue_delete(routed.as_str().into(), QueueDeleteOptions::default())
        .await;
    assert_eq!(wrong, 0, "publishes told the other's fate");
    assert_eq!(q.message_count(), sent);
}
