//! A real restart of the test RabbitMQ (`rabbitmqctl stop_app` / `start_app` through
//! `tests/services/rabbitctl.sh`): every connection is closed by the broker and every
//! non-durable queue is gone, as after a broker restart. Both the RPC server and the caller
//! reconnect, redeclare and carry calls and casts again. Its own test binary, so that no
//! other test shares the broker while it is down (cargo runs test binaries one at a time).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::server::RpcServer;
use openkeel_rpc::oslo::RabbitSettings;
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

struct Echo {
    seen: mpsc::UnboundedSender<(String, Args)>,
}

#[async_trait]
impl Dispatcher for Echo {
    async fn dispatch(
        &self,
        _ctx: RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        let _ = self.seen.send((method.to_string(), args.clone()));
        Ok(Value::Object(args))
    }
}

fn ctx() -> RequestContext {
    RequestContext {
        user_id: Some("u1".into()),
        project_id: Some("p1".into()),
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_and_caller_survive_a_real_broker_restart() {
    let Some(amqp) = openkeel_tests::rabbit_url() else {
        return;
    };
    if let Err(e) = openkeel_tests::rabbitctl(&["-q", "status"]) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the test broker cannot be controlled: {e}"
        );
        eprintln!("SKIPPED (not in CI): the broker is not the one tests/services started: {e}");
        return;
    }
    let url = amqp.replacen("amqp://", "rabbit://", 1);
    let mut s = RabbitSettings::for_url(&url, "openkeel-test").unwrap();
    s.rpc_response_timeout = Duration::from_secs(5);
    s.retry_interval = Duration::from_millis(200);
    s.retry_backoff = Duration::from_millis(200);
    s.interval_max = Duration::from_secs(1);
    let s = Arc::new(s);
    let topic = format!("okt-restart-{}", uuid::Uuid::new_v4().simple());
    let (tx, mut seen) = mpsc::unbounded_channel();
    let server = RpcServer::start(
        s.clone(),
        topic.clone(),
        "srv1",
        Arc::new(Echo { seen: tx }),
    );
    assert!(server.wait_listening(Duration::from_secs(30)).await);
    let caller = AmqpCaller::new(s.clone(), topic.clone());
    let mut a = Args::new();
    a.insert("before".into(), json!(true));
    assert_eq!(
        caller.call(&ctx(), "echo", a.clone()).await.unwrap(),
        Value::Object(a)
    );

    // The restart: the broker closes every connection and forgets the non-durable queues.
    let restart = openkeel_tests::BrokerBack;
    openkeel_tests::rabbitctl(&["stop_app"]).unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    openkeel_tests::rabbitctl(&["start_app"]).unwrap();
    drop(restart);

    // Calls work again once both sides have reconnected and redeclared (the server its topic
    // queue, the caller its reply queue); until then they fail with a timeout or a 503, as
    // oslo.messaging's do.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut a = Args::new();
    a.insert("after".into(), json!(true));
    loop {
        match caller.call(&ctx(), "echo", a.clone()).await {
            Ok(v) => {
                assert_eq!(v, Value::Object(a.clone()));
                break;
            }
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "no call got through after the restart: {} {}",
                    e.code(),
                    e.message()
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
    // Casts are delivered too.
    let mut c = Args::new();
    c.insert("cast".into(), json!("after restart"));
    caller.cast(&ctx(), "cast_me", c.clone()).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let (m, args) = seen.recv().await.unwrap();
            if m == "cast_me" && args == c {
                break;
            }
        }
    })
    .await;
    assert!(got.is_ok(), "the cast after the restart never arrived");
    server.stop().await;
}
