//! A tap on an oslo.messaging control exchange: a private queue bound with the routing keys a
//! test names receives a copy of every message published with them, with its AMQP
//! properties, so a test can compare what two implementations put on the wire.

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A channel on its own connection to the broker at `transport_url` (`rabbit://` or
/// `amqp://`). [`Admin::close`] closes both; dropping it closes the connection too.
pub struct Admin {
    pub channel: lapin::Channel,
    connection: lapin::Connection,
}

impl std::ops::Deref for Admin {
    type Target = lapin::Channel;
    fn deref(&self) -> &lapin::Channel {
        &self.channel
    }
}

impl Admin {
    pub async fn close(self) {
        let _ = self.channel.close(200, "".into()).await;
        let _ = self.connection.close(200, "".into()).await;
    }
}

pub async fn admin_channel(transport_url: &str) -> Result<Admin, lapin::Error> {
    let amqp = transport_url.replacen("rabbit://", "amqp://", 1);
    let connection =
        lapin::Connection::connect(&amqp, lapin::ConnectionProperties::default()).await?;
    let channel = connection.create_channel().await?;
    Ok(Admin {
        channel,
        connection,
    })
}

/// One message as the tap received it.
#[derive(Debug, Clone)]
pub struct Tapped {
    pub exchange: String,
    pub routing_key: String,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub delivery_mode: Option<u8>,
    pub priority: Option<u8>,
    pub expiration: Option<String>,
    /// Header names in order, with their values rendered as text.
    pub headers: Option<Vec<(String, String)>>,
    /// The body as published (the `oslo.version` / `oslo.message` envelope).
    pub raw: Vec<u8>,
}

impl Tapped {
    /// The outer envelope, key order kept.
    pub fn envelope(&self) -> Value {
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
    }

    /// The inner message (`oslo.message` parsed), key order kept.
    pub fn message(&self) -> Value {
        self.envelope()
            .get("oslo.message")
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or(Value::Null)
    }

    /// The RPC method, when the message is a request.
    pub fn method(&self) -> Option<String> {
        self.message()
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

fn render(v: &AMQPValue) -> String {
    match v {
        AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        AMQPValue::ShortString(s) => s.as_str().to_string(),
        other => format!("{other:?}"),
    }
}

/// A running tap. Dropping it stops collecting (the queue is auto-delete).
pub struct Tap {
    seen: Arc<Mutex<Vec<Tapped>>>,
    channel: Admin,
    queue: String,
    task: tokio::task::JoinHandle<()>,
}

impl Tap {
    /// Bind a fresh queue to `exchange` with each routing key and start collecting.
    pub async fn start(transport_url: &str, exchange: &str, routing_keys: &[&str]) -> Tap {
        let ch = admin_channel(transport_url)
            .await
            .unwrap_or_else(|e| panic!("tap: cannot connect to RabbitMQ: {e}"));
        // oslo.messaging declares the control exchange as a durable=False topic exchange;
        // declaring it the same way first lets the tap bind before either side has started.
        ch.exchange_declare(
            exchange.into(),
            lapin::ExchangeKind::Topic,
            lapin::options::ExchangeDeclareOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("tap: declare exchange {exchange}: {e}"));
        let queue = format!("okt-tap-{}", uuid::Uuid::new_v4().simple());
        ch.queue_declare(
            queue.as_str().into(),
            QueueDeclareOptions {
                auto_delete: true,
                exclusive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("tap: declare {queue}: {e}"));
        for key in routing_keys {
            ch.queue_bind(
                queue.as_str().into(),
                exchange.into(),
                (*key).into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("tap: bind {queue} to {exchange}/{key}: {e}"));
        }
        let mut consumer = ch
            .basic_consume(
                queue.as_str().into(),
                "okt-tap".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("tap: consume {queue}: {e}"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let task = tokio::spawn(async move {
            while let Some(Ok(d)) = consumer.next().await {
                let p = &d.properties;
                let t = Tapped {
                    exchange: d.exchange.as_str().to_string(),
                    routing_key: d.routing_key.as_str().to_string(),
                    content_type: p.content_type().as_ref().map(|s| s.as_str().to_string()),
                    content_encoding: p
                        .content_encoding()
                        .as_ref()
                        .map(|s| s.as_str().to_string()),
                    delivery_mode: *p.delivery_mode(),
                    priority: *p.priority(),
                    expiration: p.expiration().as_ref().map(|s| s.as_str().to_string()),
                    headers: p.headers().as_ref().map(|h| {
                        h.inner()
                            .iter()
                            .map(|(k, v)| (k.as_str().to_string(), render(v)))
                            .collect()
                    }),
                    raw: d.data.clone(),
                };
                let _ = d.ack(BasicAckOptions::default()).await;
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(t);
            }
        });
        Tap {
            seen,
            channel: ch,
            queue,
            task,
        }
    }

    /// Everything received so far.
    pub fn messages(&self) -> Vec<Tapped> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Wait (bounded) until a request for `method` has been tapped; returns all of them.
    pub async fn wait_for(&self, method: &str, timeout: Duration) -> Vec<Tapped> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let found: Vec<Tapped> = self
                .messages()
                .into_iter()
                .filter(|m| m.method().as_deref() == Some(method))
                .collect();
            if !found.is_empty() {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {method} request was published within {timeout:?}; tapped: {:?}",
                self.messages()
                    .iter()
                    .map(|m| m.method())
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stop collecting and delete the queue.
    pub async fn close(self) {
        self.task.abort();
        let _ = self
            .channel
            .queue_delete(self.queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        self.channel.close().await;
    }
}

/// One reply as a raw caller received it.
#[derive(Debug, Clone)]
pub struct RawReply {
    pub exchange: String,
    pub routing_key: String,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub delivery_mode: Option<u8>,
    pub priority: Option<u8>,
    pub expiration: Option<String>,
    pub raw: Vec<u8>,
}

impl RawReply {
    pub fn envelope(&self) -> Value {
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
    }

    pub fn message(&self) -> Value {
        self.envelope()
            .get("oslo.message")
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or(Value::Null)
    }
}

/// Replay a tapped call (its exact message, with a fresh `_msg_id`, `_unique_id` and this
/// caller's own `reply_<hex>` queue) to `routing_key` on `exchange`, and return every reply
/// frame until the one with `"ending": true` (bounded by `timeout`).
pub async fn replay_call(
    transport_url: &str,
    exchange: &str,
    routing_key: &str,
    call: &Tapped,
    timeout: Duration,
) -> Vec<RawReply> {
    send_call(
        transport_url,
        exchange,
        routing_key,
        call.message(),
        call.expiration.as_deref(),
        timeout,
    )
    .await
}

/// Send `message` (an oslo.messaging request dictionary, e.g. a tapped one with changed
/// `args`) as a call with a fresh `_msg_id`, `_unique_id` and this caller's own reply queue,
/// and return every reply frame until the one with `"ending": true`.
pub async fn send_call(
    transport_url: &str,
    exchange: &str,
    routing_key: &str,
    message: Value,
    expiration: Option<&str>,
    timeout: Duration,
) -> Vec<RawReply> {
    let ch = admin_channel(transport_url)
        .await
        .unwrap_or_else(|e| panic!("replay: cannot connect to RabbitMQ: {e}"));
    let hex = || uuid::Uuid::new_v4().simple().to_string();
    let reply_q = format!("reply_{}", hex());
    ch.queue_declare(
        reply_q.as_str().into(),
        QueueDeclareOptions {
            auto_delete: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("replay: declare {reply_q}: {e}"));
    let mut consumer = ch
        .basic_consume(
            reply_q.as_str().into(),
            "okt-replay".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("replay: consume {reply_q}: {e}"));
    let mut msg = message;
    let msg_id = hex();
    if let Some(o) = msg.as_object_mut() {
        o.insert("_msg_id".into(), Value::String(msg_id.clone()));
        o.insert("_reply_q".into(), Value::String(reply_q.clone()));
        o.insert("_unique_id".into(), Value::String(hex()));
    }
    let mut envelope = serde_json::Map::new();
    envelope.insert("oslo.version".into(), Value::String("2.0".into()));
    envelope.insert("oslo.message".into(), Value::String(msg.to_string()));
    let mut props = lapin::BasicProperties::default()
        .with_content_type("application/json".into())
        .with_content_encoding("utf-8".into())
        .with_delivery_mode(2)
        .with_priority(0);
    if let Some(e) = expiration {
        props = props.with_expiration(e.into());
    }
    ch.basic_publish(
        exchange.into(),
        routing_key.into(),
        lapin::options::BasicPublishOptions::default(),
        Value::Object(envelope).to_string().as_bytes(),
        props,
    )
    .await
    .unwrap_or_else(|e| panic!("replay: publish to {exchange}/{routing_key}: {e}"));
    let mut replies = Vec::new();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let next = tokio::time::timeout_at(deadline, consumer.next()).await;
        let Ok(Some(Ok(d))) = next else {
            panic!(
                "replay: no final reply on {reply_q} within {timeout:?} (got {} frames)",
                replies.len()
            );
        };
        let p = &d.properties;
        let r = RawReply {
            exchange: d.exchange.as_str().to_string(),
            routing_key: d.routing_key.as_str().to_string(),
            content_type: p.content_type().as_ref().map(|s| s.as_str().to_string()),
            content_encoding: p
                .content_encoding()
                .as_ref()
                .map(|s| s.as_str().to_string()),
            delivery_mode: *p.delivery_mode(),
            priority: *p.priority(),
            expiration: p.expiration().as_ref().map(|s| s.as_str().to_string()),
            raw: d.data.clone(),
        };
        let _ = d.ack(BasicAckOptions::default()).await;
        let ending = r.message().get("ending") == Some(&Value::Bool(true));
        assert_eq!(
            r.message().get("_msg_id").and_then(Value::as_str),
            Some(msg_id.as_str()),
            "replay: a reply for another call"
        );
        replies.push(r);
        if ending {
            break;
        }
    }
    let _ = ch
        .queue_delete(reply_q.as_str().into(), QueueDeleteOptions::default())
        .await;
    ch.close().await;
    replies
}
