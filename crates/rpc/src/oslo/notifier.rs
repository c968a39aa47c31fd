//! oslo.messaging notifications with the `messagingv2` driver over the RPC transport, as
//! Magnum sends them (rpc.md §1 notifier row; rpc-wire-examples.md §3.14-§3.16): published to
//! the control exchange with routing key `<topic>.<priority>` (`notifications.info`,
//! `notifications.error`), the queue of that name declared and bound first, the message in the
//! 2.0 envelope with `message_id`, `publisher_id`, `event_type`, `priority`, `payload`,
//! `timestamp`, `_unique_id` and the flattened context (without the token).

use super::broker::{properties, Broker, BrokerError, Publisher};
use super::message;
use super::RabbitSettings;
use openkeel_core::context::RequestContext;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Publishes notifications on `topics` (`[oslo_messaging_notifications] topics`).
pub struct AmqpNotifier {
    publisher: Publisher,
    topics: Vec<String>,
    publisher_id: String,
    declared: Mutex<HashSet<String>>,
}

impl AmqpNotifier {
    /// `publisher_id` is Magnum's `container-infra.<host>`.
    pub fn new(settings: Arc<RabbitSettings>, topics: Vec<String>, publisher_id: String) -> Self {
        AmqpNotifier {
            publisher: Publisher::new(Broker::new(settings)),
            topics,
            publisher_id,
            declared: Mutex::new(HashSet::new()),
        }
    }

    /// The message of one notification (the inner JSON of the envelope).
    pub fn message(
        &self,
        ctx: &RequestContext,
        event_type: &str,
        priority: &str,
        payload: Value,
    ) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "message_id".into(),
            Value::String(uuid::Uuid::new_v4().to_string()),
        );
        m.insert(
            "publisher_id".into(),
            Value::String(self.publisher_id.clone()),
        );
        m.insert("event_type".into(), Value::String(event_type.into()));
        m.insert(
            "priority".into(),
            Value::String(priority.to_ascii_uppercase()),
        );
        m.insert("payload".into(), payload);
        m.insert(
            "timestamp".into(),
            Value::String(
                chrono::Utc::now()
                    .format("%Y-%m-%d %H:%M:%S%.6f")
                    .to_string(),
            ),
        );
        m.insert("_unique_id".into(), Value::String(message::new_id()));
        // The notifier's context never carries the user's token (or the auth URL).
        let mut c = ctx.clone();
        c.auth_token = None;
        c.auth_url = None;
        c.auth_token_info = None;
        for (k, v) in c.to_dict() {
            m.insert(format!("_context_{k}"), v);
        }
        m
    }

    /// Send one notification on every topic. Errors are returned for the caller to log;
    /// the operation that notifies must not fail because of them.
    pub async fn notify(
        &self,
        ctx: &RequestContext,
        event_type: &str,
        priority: &str,
        payload: Value,
    ) -> Result<(), BrokerError> {
        let body = message::serialize_envelope(&self.message(ctx, event_type, priority, payload));
        let settings = self.publisher.broker().settings();
        let deadline = Instant::now() + settings.rpc_response_timeout;
        for topic in &self.topics {
            let key = format!("{topic}.{}", priority.to_ascii_lowercase());
            let fresh = self
                .declared
                .lock()
                .map(|d| !d.contains(&key))
                .unwrap_or(true);
            if fresh {
                let b = self.publisher.broker();
                let conn = b.connection().await?;
                let ch = conn.create_channel().await?;
                b.declare_topic_queue(&ch, &key).await?;
                let _ = ch.close(200, "declared".into()).await;
                if let Ok(mut d) = self.declared.lock() {
                    d.insert(key.clone());
                }
            }
            self.publisher
                .publish(
                    &settings.exchange,
                    &key,
                    false,
                    &body,
                    properties(None),
                    deadline,
                )
                .await?;
        }
        Ok(())
    }
}
