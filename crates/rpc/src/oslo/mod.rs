//! oslo.messaging's RPC over RabbitMQ (AMQP 0-9-1 with lapin), wire-compatible with
//! oslo.messaging 18.x as Magnum 23.0.0 uses it (`magnum/common/rpc.py`, `oslo_messaging/`):
//!
//! * [`message`]: the envelope, requests, replies and remote failures;
//! * [`broker`]: connections from `transport_url` (several hosts, failover, back-off), the
//!   `[oslo_messaging_rabbit]` options, and a publisher with publisher confirms;
//! * [`client::AmqpCaller`]: the API side ([`crate::transport::RpcCaller`]): casts and calls on
//!   the conductor topic, one `reply_<uuid>` queue per process, `rpc_response_timeout`;
//! * [`server::RpcServer`]: the conductor side: the topic, server and fanout queues, ack on
//!   receipt, the duplicate filter, dispatch to a [`crate::transport::Dispatcher`], replies;
//! * [`notifier::AmqpNotifier`]: oslo notifications (`messagingv2`) on `notifications.<priority>`.

pub mod broker;
pub mod client;
pub mod message;
pub mod notifier;
pub mod server;

use std::time::Duration;

/// How many ordered queues a conductor topic has (OpenKeel's, beside oslo's): the casts about
/// one cluster all go to one of them ([`ordered_queue_of`]).
pub const ORDERED_SHARDS: usize = 16;

/// The name of ordered queue `shard` of `topic` (bound to the control exchange under its own
/// name). Python services neither declare nor consume these queues.
pub fn ordered_queue(topic: &str, shard: usize) -> String {
    format!("{topic}{ORDERED_INFIX}{shard}")
}

/// What stands between the topic and the shard number in an ordered queue's name.
const ORDERED_INFIX: &str = ".openkeel-ordered.";

/// The shard of `name` (a delivery's routing key) when it is one of `topic`'s ordered queues.
pub fn ordered_shard(topic: &str, name: &str) -> Option<usize> {
    name.strip_prefix(topic)
        .and_then(|rest| rest.strip_prefix(ORDERED_INFIX))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n < ORDERED_SHARDS)
}

/// Whether `name` (a delivery's routing key) is one of `topic`'s ordered queues.
pub fn is_ordered_queue(topic: &str, name: &str) -> bool {
    ordered_shard(topic, name).is_some()
}

/// The shard of the casts about `key` (a cluster uuid): FNV-1a of the key, so that every
/// openkeel-api process picks the same one.
pub fn ordered_shard_of(key: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % ORDERED_SHARDS as u64) as usize
}

/// The ordered queue of the casts about `key` ([`ordered_shard_of`]).
pub fn ordered_queue_of(topic: &str, key: &str) -> String {
    ordered_queue(topic, ordered_shard_of(key))
}

/// Every ordered shard: the mask [`server::RpcServer::keep_ordered_shards`] starts with.
pub const ALL_ORDERED_SHARDS: u32 = (1 << ORDERED_SHARDS) - 1;

/// Everything the transport reads from the configuration.
#[derive(Debug, Clone)]
pub struct RabbitSettings {
    /// The parsed `[DEFAULT] transport_url` hosts (at least one).
    pub hosts: Vec<BrokerHost>,
    pub virtual_host: String,
    /// `[DEFAULT] control_exchange` (Magnum: `magnum`).
    pub exchange: String,
    /// `[DEFAULT] rpc_response_timeout`.
    pub rpc_response_timeout: Duration,
    pub durable_queues: bool,
    pub auto_delete: bool,
    pub ha_queues: bool,
    pub quorum_queue: bool,
    pub quorum_delivery_limit: i64,
    pub quorum_max_memory_length: i64,
    pub quorum_max_memory_bytes: i64,
    pub transient_quorum_queue: bool,
    /// `rabbit_transient_queues_ttl` in seconds (0: no `x-expires`).
    pub transient_queues_ttl: u64,
    pub qos_prefetch_count: u16,
    /// `heartbeat_timeout_threshold` in seconds (0 disables heartbeats).
    pub heartbeat: u16,
    /// `[openkeel] amqp_frame_max`: the frame size proposed to the broker.
    pub frame_max: u32,
    pub retry_interval: Duration,
    pub retry_backoff: Duration,
    pub interval_max: Duration,
    pub missing_consumer_retry_timeout: Duration,
    pub direct_mandatory_flag: bool,
    pub login_method: String,
    pub ssl: bool,
    pub ssl_ca_file: Option<String>,
    pub ssl_cert_file: Option<String>,
    pub ssl_key_file: Option<String>,
    /// `use_queue_manager` with its host and process names.
    pub queue_manager: Option<(String, String)>,
    /// `<prog>` of the `connection_name` client property (`<prog>:<pid>:<uuid>`).
    pub program: String,
    /// `[DEFAULT] executor_thread_pool_size`: requests handled at once by one server.
    pub executor_pool: usize,
}

/// One broker of `transport_url`.
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerHost {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for BrokerHost {
    /// The password is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}:{}", self.username, self.host, self.port)
    }
}

/// Why the transport cannot be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("transport_url: {0}")]
    Url(String),
    #[error("[oslo_messaging_rabbit] {0}")]
    Option(String),
}

fn pct_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse an oslo.messaging `transport_url`:
/// `rabbit://[user:pass@]host[:port][,[user:pass@]host[:port]...]/[virtual_host][?query]`.
/// Missing parts take oslo's defaults: `guest` / `guest`, `localhost`, 5672, vhost `/`.
pub fn parse_transport_url(url: &str) -> Result<(Vec<BrokerHost>, String), SettingsError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| SettingsError::Url("no scheme (expected rabbit://...)".into()))?;
    let driver = scheme.split('+').next().unwrap_or(scheme);
    if driver != "rabbit" {
        return Err(SettingsError::Url(format!(
            "the {driver} driver is not supported; OpenKeel speaks rabbit:// only"
        )));
    }
    let rest = rest.split_once('?').map_or(rest, |(r, _)| r);
    let (netloc, path) = match rest.split_once('/') {
        Some((n, p)) => (n, p),
        None => (rest, ""),
    };
    let vhost = if path.is_empty() {
        "/".to_string()
    } else {
        pct_decode(path)
    };
    let mut hosts = Vec::new();
    for part in netloc.split(',') {
        let (creds, hostport) = match part.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, part),
        };
        let (username, password) = match creds {
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (pct_decode(u), pct_decode(p)),
                None => (pct_decode(c), String::new()),
            },
            None => ("guest".to_string(), "guest".to_string()),
        };
        let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
            let (h, after) = h
                .split_once(']')
                .ok_or_else(|| SettingsError::Url(format!("bad IPv6 host in {part:?}")))?;
            let port = after.strip_prefix(':').unwrap_or("");
            (h.to_string(), port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), p),
                None => (hostport.to_string(), ""),
            }
        };
        let port = if port.is_empty() {
            5672
        } else {
            port.parse::<u16>()
                .map_err(|_| SettingsError::Url(format!("bad port {port:?}")))?
        };
        let host = if host.is_empty() {
            "localhost".to_string()
        } else {
            host
        };
        hosts.push(BrokerHost {
            host,
            port,
            username,
            password,
        });
    }
    Ok((hosts, vhost))
}

impl RabbitSettings {
    /// The settings of `config` for a process named `program` (`openkeel-api`, ...).
    pub fn from_config(
        config: &openkeel_core::config::Config,
        program: &str,
    ) -> Result<Self, SettingsError> {
        let r = &config.oslo_messaging_rabbit;
        let (hosts, virtual_host) = parse_transport_url(&config.default.transport_url)?;
        if r.rabbit_quorum_queue && r.rabbit_ha_queues {
            return Err(SettingsError::Option(
                "rabbit_quorum_queue and rabbit_ha_queues are mutually exclusive".into(),
            ));
        }
        if r.rabbit_stream_fanout {
            return Err(SettingsError::Option(
                "rabbit_stream_fanout is not supported by OpenKeel".into(),
            ));
        }
        let secs = |v: i64| Duration::from_secs(v.max(0) as u64);
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let hostname = r
            .hostname
            .clone()
            .or_else(|| config.default.host.clone())
            .unwrap_or_else(|| "localhost".to_string());
        Ok(RabbitSettings {
            hosts,
            virtual_host,
            exchange: config.default.control_exchange.clone(),
            rpc_response_timeout: secs(config.default.rpc_response_timeout.max(1)),
            durable_queues: r.amqp_durable_queues,
            auto_delete: r.amqp_auto_delete,
            ha_queues: r.rabbit_ha_queues,
            quorum_queue: r.rabbit_quorum_queue,
            quorum_delivery_limit: r.rabbit_quorum_delivery_limit,
            quorum_max_memory_length: r.rabbit_quorum_max_memory_length,
            quorum_max_memory_bytes: r.rabbit_quorum_max_memory_bytes,
            transient_quorum_queue: r.rabbit_transient_quorum_queue,
            transient_queues_ttl: r.rabbit_transient_queues_ttl.max(0) as u64,
            qos_prefetch_count: r.rabbit_qos_prefetch_count.clamp(0, u16::MAX as i64) as u16,
            heartbeat: r.heartbeat_timeout_threshold.clamp(0, u16::MAX as i64) as u16,
            frame_max: config.openkeel.amqp_frame_max.clamp(4096, u32::MAX as i64) as u32,
            retry_interval: secs(r.rabbit_retry_interval),
            retry_backoff: secs(r.rabbit_retry_backoff),
            interval_max: secs(r.rabbit_interval_max),
            missing_consumer_retry_timeout: secs(r.kombu_missing_consumer_retry_timeout),
            direct_mandatory_flag: r.direct_mandatory_flag,
            login_method: r.rabbit_login_method.clone(),
            ssl: r.ssl,
            ssl_ca_file: opt(&r.ssl_ca_file),
            ssl_cert_file: opt(&r.ssl_cert_file),
            ssl_key_file: opt(&r.ssl_key_file),
            queue_manager: r.use_queue_manager.then(|| {
                (
                    hostname,
                    r.processname.clone().unwrap_or_else(|| program.to_string()),
                )
            }),
            program: program.to_string(),
            executor_pool: config.default.executor_thread_pool_size.max(1) as usize,
        })
    }

    /// Settings for tests and tools: one broker URL, defaults elsewhere.
    pub fn for_url(transport_url: &str, program: &str) -> Result<Self, SettingsError> {
        let config = openkeel_core::config::Config::load_sequence(&[])
            .map_err(|e| SettingsError::Url(e.to_string()))?;
        let mut s = Self::from_config(&config, program)?;
        let (hosts, vhost) = parse_transport_url(transport_url)?;
        s.hosts = hosts;
        s.virtual_host = vhost;
        Ok(s)
    }

    /// The back-off before reconnect attempt `n` (0-based): `rabbit_retry_interval`, growing
    /// by `rabbit_retry_backoff` per attempt, at most `rabbit_interval_max` (kombu's schedule).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let d = self.retry_interval + self.retry_backoff * attempt;
        d.min(self.interval_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_queue_names_are_recognised() {
        assert!(is_ordered_queue("t", &ordered_queue("t", 0)));
        assert!(is_ordered_queue(
            "t",
            &ordered_queue("t", ORDERED_SHARDS - 1)
        ));
        assert!(!is_ordered_queue("t", &ordered_queue("t", ORDERED_SHARDS)));
        assert!(!is_ordered_queue("t", &ordered_queue("u", 0)));
        assert!(!is_ordered_queue("t", "t"));
        assert!(!is_ordered_queue("t", "t.server"));
    }

    #[test]
    fn transport_urls_parse_as_oslo_does() {
        let (h, v) = parse_transport_url("rabbit://").unwrap();
        assert_eq!(
            h,
            vec![BrokerHost {
                host: "localhost".into(),
                port: 5672,
                username: "guest".into(),
                password: "guest".into()
            }]
        );
        assert_eq!(v, "/");
        let (h, v) =
            parse_transport_url("rabbit://u:p%40ss@10.0.0.1:5673,u2:p2@[::1]/openstack?ssl=1")
                .unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].password, "p@ss");
        assert_eq!(h[0].port, 5673);
        assert_eq!(h[1].host, "::1");
        assert_eq!(h[1].port, 5672);
        assert_eq!(v, "openstack");
        let (_, v) = parse_transport_url("rabbit://u:p@h:1/%2f").unwrap();
        assert_eq!(v, "/");
        assert!(parse_transport_url("kafka://h").is_err());
        assert!(parse_transport_url("rabbit://h:notaport/").is_err());
        assert!(!format!("{:?}", h[0]).contains("p@ss"));
    }

    #[test]
    fn the_backoff_grows_to_the_maximum() {
        let s = RabbitSettings::for_url("rabbit://", "t").unwrap();
        assert_eq!(s.backoff(0), Duration::from_secs(1));
        assert_eq!(s.backoff(1), Duration::from_secs(3));
        assert_eq!(s.backoff(100), Duration::from_secs(30));
    }
}
