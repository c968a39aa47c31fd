//! oslo.messaging notifications with the `messagingv2` driver over the RPC transport, as
//! Magnum sends them (`magnum/common/rpc.py`'s notifier, `oslo_messaging/notify/messaging.py`): published to
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
    /// `messagingv2` (the 2.0 envelope) or `messaging` (the bare 1.0 message).
    envelope: bool,
    declared: Mutex<HashSet<String>>,
}

impl AmqpNotifier {
    /// `publisher_id` is Magnum's `container-infra.<host>`.
    pub fn new(
        settings: Arc<RabbitSettings>,
        topics: Vec<String>,
        publisher_id: String,
        envelope: bool,
    ) -> Self {
        AmqpNotifier {
            publisher: Publisher::new(Broker::new(settings)),
            topics,
            publisher_id,
            envelope,
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
            Value::String(py_str_datetime(chrono::Utc::now().naive_utc())),
        );
        m.insert("_unique_id".into(), Value::String(message::new_id()));
        // The notifier's context never carries the user's token (or the auth URL).
        let mut c = ctx.clone();
        c.auth_token = None;
        c.auth_url = None;
        c.auth_token_info = None;
        c.all_tenants = false;
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
        let m = self.message(ctx, event_type, priority, payload);
        let body = if self.envelope {
            message::serialize_envelope(&m)
        } else {
            openkeel_core::pyjson::dumps(&Value::Object(m)).into_bytes()
        };
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

/// Python's `str(datetime)`: `YYYY-MM-DD HH:MM:SS[.ffffff]` (no fraction when it is zero).
pub fn py_str_datetime(t: chrono::NaiveDateTime) -> String {
    use chrono::Timelike;
    if t.nanosecond() / 1000 == 0 {
        t.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_python_str_of_a_datetime() {
        let d = chrono::NaiveDate::from_ymd_opt(2026, 12, 2).unwrap();
        assert_eq!(
            py_str_datetime(d.and_hms_micro_opt(14, 18, 8, 120_624).unwrap()),
            "2026-12-02 14:18:08.120624"
        );
        assert_eq!(
            py_str_datetime(d.and_hms_opt(14, 18, 8).unwrap()),
            "2026-12-02 14:18:08"
        );
    }

    #[test]
    fn the_notification_context_is_redacted() {
        let s = Arc::new(RabbitSettings::for_url("rabbit://", "t").unwrap());
        let n = AmqpNotifier::new(
            s,
            vec!["notifications".into()],
            "container-infra.h".into(),
            true,
        );
        let ctx = RequestContext {
            user_id: Some("u".into()),
            auth_token: Some("secret".into()),
            auth_url: Some("http://k".into()),
            all_tenants: true,
            request_id: "req-1".into(),
            ..Default::default()
        };
        let m = n.message(&ctx, "magnum.cluster.create", "info", Value::Null);
        let keys: Vec<_> = m.keys().take(7).cloned().collect();
        assert_eq!(
            keys,
            [
                "message_id",
                "publisher_id",
                "event_type",
                "priority",
                "payload",
                "timestamp",
                "_unique_id"
            ]
        );
        assert_eq!(m["priority"], "INFO");
        assert_eq!(m["_context_auth_token"], Value::Null);
        assert_eq!(m["_context_auth_url"], Value::Null);
        assert_eq!(m["_context_all_tenants"], Value::Bool(false));
        assert_eq!(m["_context_user_id"], "u");
    }
}
