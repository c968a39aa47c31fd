//! Connections to the brokers of `transport_url`, declarations as oslo.messaging's rabbit
//! driver makes them (`oslo_messaging/_drivers/impl_rabbit.py`), and a publisher with publisher confirms that retries
//! until its deadline instead of dropping a message.

use super::RabbitSettings;
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions,
};
use lapin::protocol::constants::REPLY_SUCCESS;
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::uri::{AMQPAuthority, AMQPQueryString, AMQPScheme, AMQPUri, AMQPUserInfo};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// How often [`Broker::pause_before_retry`] looks whether a broker that went away is back (one
/// TCP connection attempt per host, closed at once).
pub const PROBE_INTERVAL: Duration = Duration::from_millis(250);

/// Why a broker operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("AMQP: {0}")]
    Amqp(#[from] lapin::Error),
    #[error("the broker did not confirm the message within the timeout ({0})")]
    Timeout(String),
    #[error("the broker refused the message (nack)")]
    Nacked,
    #[error(
        "the channel was not in confirm mode any more: the message may not have reached the broker"
    )]
    NotConfirmed,
    #[error("no queue is bound to routing key {0} (message returned)")]
    Returned(String),
    #[error("TLS configuration: {0}")]
    Tls(String),
}

/// One logical connection to the broker cluster of `transport_url`: connects lazily, fails
/// over round-robin between the hosts, and is replaced when it breaks.
pub struct Broker {
    settings: Arc<RabbitSettings>,
    next_host: AtomicUsize,
    conn: Mutex<Option<Arc<Connection>>>,
    /// What this process is called on the broker (`connection_name`).
    connection_name: String,
    /// The last reachability probe ([`Broker::pause_before_retry`]): when, and whether a host
    /// accepted.
    probe: Mutex<Option<(Instant, bool)>>,
}

impl Broker {
    pub fn new(settings: Arc<RabbitSettings>) -> Arc<Self> {
        let connection_name = format!(
            "{}:{}:{}",
            settings.program,
            std::process::id(),
            uuid::Uuid::new_v4()
        );
        Arc::new(Broker {
            settings,
            next_host: AtomicUsize::new(0),
            conn: Mutex::new(None),
            connection_name,
            probe: Mutex::new(None),
        })
    }

    pub fn settings(&self) -> &RabbitSettings {
        &self.settings
    }

    fn uri(&self, i: usize) -> AMQPUri {
        let h = &self.settings.hosts[i % self.settings.hosts.len()];
        let auth_mechanism = match self.settings.login_method.to_ascii_uppercase().as_str() {
            "PLAIN" => lapin::uri::SASLMechanism::Plain,
            "EXTERNAL" => lapin::uri::SASLMechanism::External,
            "RABBIT-CR-DEMO" => lapin::uri::SASLMechanism::RabbitCrDemo,
            _ => lapin::uri::SASLMechanism::AMQPlain,
        };
        AMQPUri {
            scheme: if self.settings.ssl {
                AMQPScheme::AMQPS
            } else {
                AMQPScheme::AMQP
            },
            authority: AMQPAuthority {
                userinfo: AMQPUserInfo {
                    username: h.username.clone(),
                    password: h.password.clone(),
                },
                host: h.host.clone(),
                port: h.port,
            },
            vhost: self.settings.virtual_host.clone(),
            query: AMQPQueryString {
                heartbeat: Some(self.settings.heartbeat),
                frame_max: Some(self.settings.frame_max),
                connection_timeout: Some(self.settings.interval_max.as_millis().max(1000) as u64),
                auth_mechanism: Some(auth_mechanism),
                ..Default::default()
            },
        }
    }

    fn tls(&self) -> Result<lapin::tcp::OwnedTLSConfig, BrokerError> {
        let read = |p: &Option<String>| -> Result<Option<String>, BrokerError> {
            match p {
                None => Ok(None),
                Some(path) => std::fs::read_to_string(path)
                    .map(Some)
                    .map_err(|e| BrokerError::Tls(format!("{path}: {e}"))),
            }
        };
        let cert_chain = read(&self.settings.ssl_ca_file)?;
        let file = |p: &str| std::fs::read(p).map_err(|e| BrokerError::Tls(format!("{p}: {e}")));
        // As Python's `SSLContext.load_cert_chain(certfile, keyfile)`, which oslo.messaging
        // ends in: without `ssl_key_file` the key is read from `ssl_cert_file`; a key without
        // a certificate is an error, never a connection without the identity.
        let identity = match (&self.settings.ssl_cert_file, &self.settings.ssl_key_file) {
            (Some(c), key) => Some(lapin::tcp::OwnedIdentity::PKCS8 {
                pem: file(c)?,
                key: file(key.as_deref().unwrap_or(c))?,
            }),
            (None, Some(_)) => {
                return Err(BrokerError::Tls(
                    "[oslo_messaging_rabbit] ssl_key_file is set without ssl_cert_file".into(),
                ))
            }
            (None, None) => None,
        };
        Ok(lapin::tcp::OwnedTLSConfig {
            identity,
            cert_chain,
        })
    }

    /// The current connection, or a new one to the next host (one attempt per host).
    pub async fn connection(&self) -> Result<Arc<Connection>, BrokerError> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.as_ref() {
            if c.status().connected() {
                return Ok(c.clone());
            }
        }
        *guard = None;
        let n = self.settings.hosts.len();
        let mut last = None;
        for _ in 0..n {
            let i = self.next_host.fetch_add(1, Ordering::Relaxed);
            let uri = self.uri(i);
            let props = ConnectionProperties::default()
                .with_connection_name(LongString::from(self.connection_name.clone()));
            let tls = self.tls()?;
            let runtime = lapin::runtime::default_runtime()?;
            match Connection::connect_uri_with_config(uri, props, tls, runtime).await {
                Ok(c) => {
                    let h = &self.settings.hosts[i % n];
                    tracing::info!(broker = %format!("{}:{}", h.host, h.port), "connected to the AMQP broker");
                    // Use this host first next time too.
                    self.next_host.store(i, Ordering::Relaxed);
                    let c = Arc::new(c);
                    *guard = Some(c.clone());
                    return Ok(c);
                }
                Err(e) => {
                    let h = &self.settings.hosts[i % n];
                    tracing::warn!(broker = %format!("{}:{}", h.host, h.port), error = %e, "cannot connect to the AMQP broker");
                    last = Some(e);
                }
            }
        }
        Err(match last {
            Some(e) => BrokerError::Amqp(e),
            None => BrokerError::Timeout("no broker host configured".into()),
        })
    }

    /// Wait out back-off step `attempt` (kombu's schedule: `rabbit_retry_interval`, plus
    /// `rabbit_retry_backoff` per attempt, at most `rabbit_interval_max`) before the next
    /// connection attempt, but return as soon as a broker host that refused TCP connections
    /// during the wait accepts one again: a restarted broker is used within
    /// [`PROBE_INTERVAL`] of its return instead of up to a whole step later (kombu waits the
    /// step out: 6 s after a 10 s outage). A host that accepts TCP all along (the broker is up
    /// but refused the AMQP login, say) does not cut the wait short, so the back-off still
    /// spares a broker that is up.
    pub async fn pause_before_retry(&self, attempt: u32) {
        let end = Instant::now() + self.settings.backoff(attempt);
        let mut refused = false;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let up = self.any_host_accepts(left.min(PROBE_INTERVAL)).await;
            if up && refused {
                tracing::debug!("an AMQP broker accepts connections again; reconnecting");
                return;
            }
            refused |= !up;
            let left = end.saturating_duration_since(Instant::now());
            tokio::time::sleep(left.min(PROBE_INTERVAL)).await;
        }
    }

    /// Whether a TCP connection to one of the hosts succeeds within `timeout`. Shared by
    /// every task of this broker: a result younger than [`PROBE_INTERVAL`] is reused, and one
    /// task probes at a time, so that the requests waiting out an outage together (hundreds
    /// under load) do not storm a broker that is starting with connections (the broker drill
    /// saw connects stall for 20 s right after a restart when each request probed on its own).
    async fn any_host_accepts(&self, timeout: Duration) -> bool {
        let mut last = self.probe.lock().await;
        if let Some((at, up)) = *last {
            if at.elapsed() < PROBE_INTERVAL {
                return up;
            }
        }
        let up = self.probe_hosts(timeout).await;
        *last = Some((Instant::now(), up));
        up
    }

    async fn probe_hosts(&self, timeout: Duration) -> bool {
        for h in &self.settings.hosts {
            let addr = (h.host.as_str(), h.port);
            if let Ok(Ok(_)) =
                tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await
            {
                return true;
            }
        }
        false
    }

    /// Forget a broken connection so that the next use reconnects.
    pub async fn reset(&self) {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.take() {
            let _ = c.close(REPLY_SUCCESS, "reconnecting".into()).await;
        }
    }

    /// Close the connection (shutdown).
    pub async fn close(&self) {
        self.reset().await;
    }

    /// The control exchange (`magnum`, topic): durable with `amqp_durable_queues` (or quorum
    /// queues), auto-delete with `amqp_auto_delete`.
    pub async fn declare_control_exchange(&self, ch: &Channel) -> Result<(), BrokerError> {
        let s = &self.settings;
        ch.exchange_declare(
            s.exchange.as_str().into(),
            ExchangeKind::Topic,
            ExchangeDeclareOptions {
                durable: s.durable_queues || s.quorum_queue,
                auto_delete: s.auto_delete,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await?;
        Ok(())
    }

    /// Arguments of a topic or notification queue (`x-queue-type=quorum` and its limits, or
    /// `x-ha-policy=all`).
    pub fn topic_queue_args(&self) -> FieldTable {
        let s = &self.settings;
        let mut t = FieldTable::default();
        if s.quorum_queue {
            t.insert(
                "x-queue-type".into(),
                AMQPValue::LongString("quorum".into()),
            );
            if s.quorum_delivery_limit > 0 {
                t.insert(
                    "x-delivery-limit".into(),
                    AMQPValue::LongLongInt(s.quorum_delivery_limit),
                );
            }
            if s.quorum_max_memory_length > 0 {
                t.insert(
                    "x-max-in-memory-length".into(),
                    AMQPValue::LongLongInt(s.quorum_max_memory_length),
                );
            }
            if s.quorum_max_memory_bytes > 0 {
                t.insert(
                    "x-max-in-memory-bytes".into(),
                    AMQPValue::LongLongInt(s.quorum_max_memory_bytes),
                );
            }
        } else if s.ha_queues {
            t.insert("x-ha-policy".into(), AMQPValue::LongString("all".into()));
        }
        t
    }

    /// Arguments of a reply or fanout queue: `x-expires` from `rabbit_transient_queues_ttl`,
    /// quorum with `rabbit_transient_quorum_queue`, `x-ha-policy` with HA queues.
    pub fn transient_queue_args(&self) -> FieldTable {
        let s = &self.settings;
        let mut t = FieldTable::default();
        if s.transient_quorum_queue {
            t.insert(
                "x-queue-type".into(),
                AMQPValue::LongString("quorum".into()),
            );
        } else if s.ha_queues {
            t.insert("x-ha-policy".into(), AMQPValue::LongString("all".into()));
        }
        if s.transient_queues_ttl > 0 {
            t.insert(
                "x-expires".into(),
                AMQPValue::LongInt((s.transient_queues_ttl * 1000).min(i32::MAX as u64) as i32),
            );
        }
        t
    }

    /// Declare a topic-style queue bound to the control exchange with its own name as key.
    pub async fn declare_topic_queue(&self, ch: &Channel, name: &str) -> Result<(), BrokerError> {
        self.declare_bound_queue(ch, name, self.topic_queue_args())
            .await
    }

    /// Declare one of OpenKeel's ordered queues ([`super::ordered_queue`]): a topic-style
    /// queue (durable, quorum, auto-delete as the topic queue is, so that a cast waiting in it
    /// survives what one waiting in the topic queue survives) consumed by a single active
    /// consumer at a time (`x-single-active-consumer`).
    pub async fn declare_ordered_queue(&self, ch: &Channel, name: &str) -> Result<(), BrokerError> {
        let mut args = self.topic_queue_args();
        args.insert("x-single-active-consumer".into(), AMQPValue::Boolean(true));
        self.declare_bound_queue(ch, name, args).await
    }

    async fn declare_bound_queue(
        &self,
        ch: &Channel,
        name: &str,
        args: FieldTable,
    ) -> Result<(), BrokerError> {
        let s = &self.settings;
        self.declare_control_exchange(ch).await?;
        ch.queue_declare(
            name.into(),
            QueueDeclareOptions {
                durable: s.durable_queues || s.quorum_queue,
                auto_delete: s.auto_delete,
                ..Default::default()
            },
            args,
        )
        .await?;
        ch.queue_bind(
            name.into(),
            s.exchange.as_str().into(),
            name.into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        Ok(())
    }

    /// Declare a reply or fanout queue.
    pub async fn declare_transient_queue(
        &self,
        ch: &Channel,
        name: &str,
    ) -> Result<(), BrokerError> {
        ch.queue_declare(
            name.into(),
            QueueDeclareOptions {
                durable: self.settings.transient_quorum_queue,
                ..Default::default()
            },
            self.transient_queue_args(),
        )
        .await?;
        Ok(())
    }

    /// A transient queue name: `<prefix>_<uuid4 hex>`, or with `use_queue_manager`
    /// `<prefix>_<hostname>:<processname>:<n>`, `n` counting from 1 per (hostname,
    /// processname) in this process, as oslo.messaging's `QManager` counts per process group
    /// (it restarts at 1 when the service restarts, so the same names come back).
    pub fn transient_name(&self, prefix: &str) -> String {
        match &self.settings.queue_manager {
            Some((host, process)) => {
                format!(
                    "{prefix}_{host}:{process}:{}",
                    queue_manager_next(host, process)
                )
            }
            None => format!("{prefix}_{}", super::message::new_id()),
        }
    }
}

/// The next `use_queue_manager` counter value for (hostname, processname).
fn queue_manager_next(host: &str, process: &str) -> usize {
    static COUNTERS: std::sync::Mutex<Vec<(String, String, usize)>> =
        std::sync::Mutex::new(Vec::new());
    let mut counters = COUNTERS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = counters
        .iter_mut()
        .find(|(h, p, _)| h == host && p == process)
    {
        c.2 += 1;
        return c.2;
    }
    counters.push((host.to_string(), process.to_string(), 1));
    1
}

/// What a publisher confirm says of a message published on a channel in confirm mode. Every
/// channel of a [`Publisher`] is put in confirm mode when it is opened, so `NotRequested`
/// means the channel lost that mode (lapin hands it out while it is being reset after a
/// connection loss): nothing says the broker has the message, and it is published again
/// (the broker drill saw a cast answered 202 that never reached a queue when this counted as
/// delivered).
fn confirmed(confirm: Confirmation, routing_key: &str) -> Result<(), BrokerError> {
    match confirm {
        Confirmation::Ack(None) => Ok(()),
        Confirmation::Ack(Some(_)) => Err(BrokerError::Returned(routing_key.to_string())),
        Confirmation::Nack(_) => Err(BrokerError::Nacked),
        Confirmation::NotRequested => Err(BrokerError::NotConfirmed),
    }
}

/// The properties of every message oslo.messaging publishes (`oslo_messaging/_drivers/impl_rabbit.py`).
pub fn properties(expiration: Option<Duration>) -> BasicProperties {
    let p = BasicProperties::default()
        .with_content_type(ShortString::from("application/json"))
        .with_content_encoding(ShortString::from("utf-8"))
        .with_headers(FieldTable::default())
        .with_delivery_mode(2)
        .with_priority(0);
    match expiration {
        Some(t) => p.with_expiration(ShortString::from(t.as_millis().to_string())),
        None => p,
    }
}

/// Publishes with publisher confirms on channels of the [`Broker`], reconnecting and
/// retrying until the deadline: a message is either confirmed by the broker or the caller
/// gets an error; it is never silently dropped.
///
/// A channel carries one message awaiting its confirm at a time (as oslo.messaging, whose
/// publishes each take a connection of its pool): lapin hands a `basic.return` to whichever
/// confirm it resolves next, and one `basic.ack` with `multiple` resolves several confirms in
/// no set order, so with several messages in flight on one channel a routed message could be
/// told "returned" and a returned one "delivered" (the broker drill lost a cast answered 202
/// that way). Concurrent publishes take channels of a small pool instead.
pub struct Publisher {
    broker: Arc<Broker>,
    /// Channels in confirm mode not in use, each with whether the control exchange was
    /// declared on it.
    idle: std::sync::Mutex<Vec<(Channel, bool)>>,
    /// One permit per channel that may be open at once.
    slots: Arc<tokio::sync::Semaphore>,
}

/// Channels a [`Publisher`] opens at most: publishes beyond it wait for one to be free
/// (each holds it for one confirm round trip).
const PUBLISH_CHANNELS: usize = 32;

impl Publisher {
    pub fn new(broker: Arc<Broker>) -> Self {
        Publisher {
            broker,
            idle: std::sync::Mutex::new(Vec::new()),
            slots: Arc::new(tokio::sync::Semaphore::new(PUBLISH_CHANNELS)),
        }
    }

    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    /// An idle open channel, or a new one in confirm mode (reconnecting if need be), and
    /// whether the control exchange has been declared on it.
    async fn channel(&self, declare_exchange: bool) -> Result<(Channel, bool), BrokerError> {
        let reused = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            // channels of a connection that is gone are dropped
            idle.retain(|(ch, _)| ch.status().connected());
            idle.pop()
        };
        let (ch, declared) = match reused {
            Some(x) => x,
            None => {
                let conn = self.broker.connection().await?;
                let ch = conn.create_channel().await?;
                ch.confirm_select(ConfirmSelectOptions::default()).await?;
                (ch, false)
            }
        };
        if declare_exchange && !declared {
            self.broker.declare_control_exchange(&ch).await?;
        }
        Ok((ch, declared || declare_exchange))
    }

    /// Give back a channel a publish has finished with (not one that failed: its state is
    /// unknown).
    fn give_back(&self, ch: Channel, declared: bool) {
        if ch.status().connected() {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            idle.push((ch, declared));
        }
    }

    async fn publish_once(
        &self,
        exchange: &str,
        routing_key: &str,
        mandatory: bool,
        body: &[u8],
        props: BasicProperties,
    ) -> Result<(), BrokerError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| BrokerError::Timeout("the publisher is closed".into()))?;
        let (ch, declared) = self.channel(!exchange.is_empty()).await?;
        let confirm = ch
            .basic_publish(
                exchange.into(),
                routing_key.into(),
                BasicPublishOptions {
                    mandatory,
                    ..Default::default()
                },
                body,
                props,
            )
            .await?
            .await?;
        let r = confirmed(confirm, routing_key);
        if matches!(r, Ok(()) | Err(BrokerError::Returned(_))) {
            self.give_back(ch, declared);
        }
        r
    }

    /// Publish, retrying on connection failures and nacks with the configured back-off until
    /// `deadline`. `Returned` (mandatory and unroutable) is not retried here.
    pub async fn publish(
        &self,
        exchange: &str,
        routing_key: &str,
        mandatory: bool,
        body: &[u8],
        props: BasicProperties,
        deadline: Instant,
    ) -> Result<(), BrokerError> {
        let mut attempt = 0u32;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(BrokerError::Timeout(format!(
                    "publishing to {exchange:?} / {routing_key}"
                )));
            }
            let r = tokio::time::timeout(
                left,
                self.publish_once(exchange, routing_key, mandatory, body, props.clone()),
            )
            .await;
            let err = match r {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(BrokerError::Returned(k))) => return Err(BrokerError::Returned(k)),
                Ok(Err(BrokerError::Tls(t))) => return Err(BrokerError::Tls(t)),
                Ok(Err(e)) => e,
                Err(_) => {
                    BrokerError::Timeout(format!("publishing to {exchange:?} / {routing_key}"))
                }
            };
            tracing::warn!(error = %err, attempt, "publish failed; reconnecting and retrying");
            // The failed channel was not given back; the broker reconnects if the
            // connection is gone.
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(left, self.broker.pause_before_retry(attempt)).await;
            attempt = attempt.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker_at(port: u16, backoff: Duration) -> Arc<Broker> {
        let url = format!("rabbit://u:p@127.0.0.1:{port}/");
        let mut s = RabbitSettings::for_url(&url, "test").expect("settings");
        s.retry_interval = backoff;
        s.retry_backoff = Duration::ZERO;
        s.interval_max = backoff;
        Broker::new(Arc::new(s))
    }

    async fn free_port() -> u16 {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        l.local_addr().expect("addr").port()
    }

    /// Only a broker's ack counts as delivered: a confirm that was never requested (the
    /// channel lost its confirm mode) is retried like a nack.
    #[test]
    fn only_an_ack_is_a_delivery() {
        assert!(confirmed(Confirmation::Ack(None), "q").is_ok());
        assert!(matches!(
            confirmed(Confirmation::NotRequested, "q"),
            Err(BrokerError::NotConfirmed)
        ));
        assert!(matches!(
            confirmed(Confirmation::Nack(None), "q"),
            Err(BrokerError::Nacked)
        ));
    }

    /// A broker that refused connections and accepts them again ends the back-off early.
    #[tokio::test]
    async fn the_pause_ends_when_a_refusing_broker_is_back() {
        let port = free_port().await;
        let b = broker_at(port, Duration::from_secs(60));
        let start = Instant::now();
        let pause = tokio::spawn(async move { b.pause_before_retry(3).await });
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(!pause.is_finished(), "nothing listens yet: still waiting");
        let _listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind the port again");
        tokio::time::timeout(Duration::from_secs(20), pause)
            .await
            .expect("the pause ended once the port accepted")
            .expect("join");
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    /// Many requests waiting at once share the probe: a few TCP connections per interval,
    /// not one per request.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_waiting_together_share_one_probe() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        let acceptor = tokio::spawn(async move {
            while listener.accept().await.is_ok() {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        let b = broker_at(port, Duration::from_millis(1500));
        let waits: Vec<_> = (0..200)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move { b.pause_before_retry(0).await })
            })
            .collect();
        for w in waits {
            w.await.expect("join");
        }
        acceptor.abort();
        let n = accepted.load(Ordering::Relaxed);
        assert!(n <= 20, "{n} probe connections for 200 waiting requests");
    }

    /// A broker that accepts TCP all along (it refused the login, say) gets the whole step.
    #[tokio::test]
    async fn the_pause_lasts_its_step_when_the_broker_was_reachable() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let b = broker_at(port, Duration::from_millis(1500));
        let start = Instant::now();
        b.pause_before_retry(0).await;
        assert!(start.elapsed() >= Duration::from_millis(1500));
    }
}
