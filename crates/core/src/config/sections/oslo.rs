//! The groups of the oslo libraries Magnum loads: oslo.db, oslo.messaging, oslo.policy,
//! oslo.concurrency, oslo.reports, oslo.versionedobjects and oslo.middleware (CORS).

use super::prelude::*;

config_section! {
    /// Database options (oslo.db) and Magnum's MySQL engine.
    DatabaseSection = "database";
    from "oslo.db" {
        /// If True, SQLite uses synchronous mode.
        sqlite_synchronous: bool = boolean(true);

        /// The back end to use for the database.
        backend: String = string("sqlalchemy");

        /// The SQLAlchemy connection string to use to connect to the database. Magnum sets the
        /// default to a SQLite file under `state_path`.
        connection: String = string("sqlite:///$state_path/magnum.sqlite").secret();

        /// The SQLAlchemy connection string to use to connect to the slave database.
        slave_connection: Option<String> = string_unset().secret();

        /// The SQLAlchemy asyncio connection string to use to connect to the database.
        asyncio_connection: Option<String> = string_unset().secret();

        /// The SQLAlchemy asyncio connection string to use to connect to the slave database.
        asyncio_slave_connection: Option<String> = string_unset().secret();

        /// Whether or not to assume a reader context needs to guarantee it can read data
        /// committed by a writer assuming replication lag is present; defaults to True. When
        /// False, a reader context works the same as async_reader and will select the slave
        /// database if present. When using a galera cluster, this can be set to False only if
        /// you set mysql_wsrep_sync_wait to 1 (this will guarantee that the reader will wait
        /// until writesets are committed).Note that this may incur a performance degradation
        /// within the galera cluster. Note also that this parameter has no effect if you do not
        /// set any slave_connection.
        synchronous_reader: bool = boolean(true);

        /// The SQL mode to be used for MySQL sessions. This option, including the default,
        /// overrides any server-set SQL mode. To use whatever SQL mode is set by the server
        /// configuration, set this to no value. Example: mysql_sql_mode=
        mysql_sql_mode: String = string("TRADITIONAL");

        /// For Galera only, configure wsrep_sync_wait causality checks on new connections.
        /// Default is None, meaning don't configure any setting.
        mysql_wsrep_sync_wait: Option<i64> = integer_unset();

        /// Connections which have been present in the connection pool longer than this number
        /// of seconds will be replaced with a new one the next time they are checked out from
        /// the pool.
        connection_recycle_time: i64 = integer(3600);

        /// Maximum number of SQL connections to keep open in a pool. Setting a value of 0
        /// indicates no limit.
        max_pool_size: i64 = integer(5);

        /// Maximum number of database connection retries during startup. Set to -1 to specify
        /// an infinite retry count.
        max_retries: i64 = integer(10);

        /// Interval between retries of opening a SQL connection.
        retry_interval: i64 = integer(10);

        /// If set, use this value for max_overflow with SQLAlchemy.
        max_overflow: i64 = integer(50);

        /// Verbosity of SQL debugging information: 0=None, 100=Everything.
        connection_debug: i64 = integer(0).min(0).max(100);

        /// Add Python stack traces to SQL as comment strings.
        connection_trace: bool = boolean(false);

        /// If set, use this value for pool_timeout with SQLAlchemy.
        pool_timeout: Option<i64> = integer_unset();

        /// Enable the experimental use of database reconnect on connection lost.
        use_db_reconnect: bool = boolean(false);

        /// Seconds between retries of a database transaction.
        db_retry_interval: i64 = integer(1);

        /// If True, increases the interval between retries of a database operation up to
        /// db_max_retry_interval.
        db_inc_retry_interval: bool = boolean(true);

        /// If db_inc_retry_interval is set, the maximum seconds between retries of a database
        /// operation.
        db_max_retry_interval: i64 = integer(10);

        /// Maximum retries in case of connection error or deadlock error before error is
        /// raised. Set to -1 to specify an infinite retry count.
        db_max_retries: i64 = integer(20);

        /// Optional URL parameters to append onto the connection URL at connect time; specify
        /// as param1=value1&param2=value2&...
        connection_parameters: String = string("");
    }
    from "magnum.conf" {
        /// MySQL engine to use.
        mysql_engine: String = string("InnoDB");
    }
}

config_section! {
    /// RabbitMQ transport options (oslo.messaging).
    OsloMessagingRabbitSection = "oslo_messaging_rabbit";
    from "oslo.messaging" {
        /// Use durable queues in AMQP. If rabbit_quorum_queue is enabled, queues will be
        /// durable and this value will be ignored.
        amqp_durable_queues: bool = boolean(false);

        /// Auto-delete queues in AMQP.
        amqp_auto_delete: bool = boolean(false);

        /// Size of RPC connection pool.
        rpc_conn_pool_size: i64 = integer(30).min(1);

        /// The pool size limit for connections expiration policy
        conn_pool_min_size: i64 = integer(2);

        /// The time-to-live in sec of idle connections in the pool
        conn_pool_ttl: i64 = integer(1200);

        /// Connect over SSL.
        ssl: bool = boolean(false);

        /// SSL version to use (valid only if SSL enabled). Valid values are TLSv1 and SSLv23.
        /// SSLv2, SSLv3, TLSv1_1, and TLSv1_2 may be available on some distributions.
        ssl_version: String = string("");

        /// SSL key file (valid only if SSL enabled).
        ssl_key_file: String = string("");

        /// SSL cert file (valid only if SSL enabled).
        ssl_cert_file: String = string("");

        /// SSL certification authority file (valid only if SSL enabled).
        ssl_ca_file: String = string("");

        /// When true, verify the broker hostname against the certificate when ``ssl_ca_file``
        /// is set. When false, ``ssl`` with ``ssl_ca_file`` still validates the certificate
        /// chain but does not verify the broker hostname. ``ssl=true`` without ``ssl_ca_file``
        /// never enables hostname verification.
        ssl_enforce_hostname_verification: bool = boolean(true)
            .deprecated_for_removal("Verification is always enabled now");

        /// Global toggle for enforcing the OpenSSL FIPS mode. This feature requires Python
        /// support. This is available in Python 3.9 in all environments and may have been
        /// backported to older Python versions on select environments. If the Python executable
        /// used does not support OpenSSL FIPS mode, an exception will be raised.
        ssl_enforce_fips_mode: bool = boolean(false)
            .deprecated_for_removal("FIPS_mode_set API was removed in OpenSSL 3.0.0. This option has no effect now.");

        /// How long to wait (in seconds) before reconnecting in response to an AMQP consumer
        /// cancel notification.
        kombu_reconnect_delay: f64 = float(1.0).min_float(0.0).max_float(4.5);

        /// Random time to wait for when reconnecting in response to an AMQP consumer cancel
        /// notification.
        kombu_reconnect_splay: f64 = float(0.0).min_float(0.0);

        /// EXPERIMENTAL: Possible values are: gzip, bz2. If not set compression will not be
        /// used. This option may not be available in future versions.
        kombu_compression: Option<String> = string_unset();

        /// How long to wait a missing client before abandoning to send it its replies. This
        /// value should not be longer than rpc_response_timeout.
        kombu_missing_consumer_retry_timeout: i64 = integer(60)
            .deprecated(&[dep("kombu_reconnect_timeout")]);

        /// Determines how the next RabbitMQ node is chosen in case the one we are currently
        /// connected to becomes unavailable. Takes effect only if more than one RabbitMQ node
        /// is provided in config.
        kombu_failover_strategy: String = string("round-robin")
            .choices(&["round-robin", "shuffle"]);

        /// The RabbitMQ login method.
        rabbit_login_method: String = string("AMQPLAIN")
            .choices(&["PLAIN", "AMQPLAIN", "EXTERNAL", "RABBIT-CR-DEMO"]);

        /// How frequently to retry connecting with RabbitMQ.
        rabbit_retry_interval: i64 = integer(1).min(1);

        /// How long to backoff for between retries when connecting to RabbitMQ.
        rabbit_retry_backoff: i64 = integer(2).min(0);

        /// Maximum interval of RabbitMQ connection retries.
        rabbit_interval_max: i64 = integer(30).min(1);

        /// Try to use HA queues in RabbitMQ (x-ha-policy: all). If you change this option, you
        /// must wipe the RabbitMQ database. In RabbitMQ 3.0, queue mirroring is no longer
        /// controlled by the x-ha-policy argument when declaring a queue. If you just want to
        /// make sure that all queues (except those with auto-generated names) are mirrored
        /// across all nodes, run: "rabbitmqctl set_policy HA '^(?!amq\.).*' '{"ha-mode":
        /// "all"}' "
        rabbit_ha_queues: bool = boolean(false);

        /// Use quorum queues in RabbitMQ (x-queue-type: quorum). The quorum queue is a modern
        /// queue type for RabbitMQ implementing a durable, replicated FIFO queue based on the
        /// Raft consensus algorithm. It is available as of RabbitMQ 3.8.0. If set this option
        /// will conflict with the HA queues (``rabbit_ha_queues``) aka mirrored queues, in
        /// other words the HA queues should be disabled. Quorum queues are also durable by
        /// default so the amqp_durable_queues option is ignored when this option is enabled.
        rabbit_quorum_queue: bool = boolean(false);

        /// Use quorum queues for transients queues in RabbitMQ. Enabling this option will then
        /// make sure those queues are also using quorum kind of rabbit queues, which are HA by
        /// default.
        rabbit_transient_quorum_queue: bool = boolean(false);

        /// Each time a message is redelivered to a consumer, a counter is incremented. Once the
        /// redelivery count exceeds the delivery limit the message gets dropped or
        /// dead-lettered (if a DLX exchange has been configured) Used only when
        /// rabbit_quorum_queue is enabled, Default 0 which means dont set a limit.
        rabbit_quorum_delivery_limit: i64 = integer(0);

        /// By default all messages are maintained in memory if a quorum queue grows in length
        /// it can put memory pressure on a cluster. This option can limit the number of
        /// messages in the quorum queue. Used only when rabbit_quorum_queue is enabled, Default
        /// 0 which means dont set a limit.
        rabbit_quorum_max_memory_length: i64 = integer(0);

        /// By default all messages are maintained in memory if a quorum queue grows in length
        /// it can put memory pressure on a cluster. This option can limit the number of memory
        /// bytes used by the quorum queue. Used only when rabbit_quorum_queue is enabled,
        /// Default 0 which means dont set a limit.
        rabbit_quorum_max_memory_bytes: i64 = integer(0);

        /// Positive integer representing duration in seconds for queue TTL (x-expires). Queues
        /// which are unused for the duration of the TTL are automatically deleted. The
        /// parameter affects only reply and fanout queues. Setting 0 as value will disable the
        /// x-expires. If doing so, make sure you have a rabbitmq policy to delete the queues or
        /// you deployment will create an infinite number of queue over time.In case
        /// rabbit_stream_fanout is set to True, this option will control data retention policy
        /// (x-max-age) for messages in the fanout queue rather then the queue duration itself.
        /// So the oldest data in the stream queue will be discarded from it once reaching TTL
        /// Setting to 0 will disable x-max-age for stream which make stream grow indefinitely
        /// filling up the diskspace
        rabbit_transient_queues_ttl: i64 = integer(1800).min(0);

        /// Specifies the number of messages to prefetch. Setting to zero allows unlimited
        /// messages.
        rabbit_qos_prefetch_count: i64 = integer(0);

        /// Number of seconds after which the Rabbit broker is considered down if heartbeat's
        /// keep-alive fails (0 disables heartbeat).
        heartbeat_timeout_threshold: i64 = integer(60);

        /// How often times during the heartbeat_timeout_threshold we check the heartbeat.
        heartbeat_rate: i64 = integer(3);

        /// (DEPRECATED) Enable/Disable the RabbitMQ mandatory flag for direct send. The direct
        /// send is used as reply, so the MessageUndeliverable exception is raised in case the
        /// client queue does not exist.MessageUndeliverable exception will be used to loop for
        /// a timeout to lets a chance to sender to recover.This flag is deprecated and it will
        /// not be possible to deactivate this functionality anymore
        direct_mandatory_flag: bool = boolean(true)
            .deprecated_for_removal("Mandatory flag no longer deactivable.");

        /// Enable x-cancel-on-ha-failover flag so that rabbitmq server will cancel and notify
        /// consumerswhen queue is down
        enable_cancel_on_failover: bool = boolean(false);

        /// Should we use consistant queue names or random ones
        use_queue_manager: bool = boolean(false);

        /// Hostname used by queue manager. Unset means the host name of the machine
        /// (socket.gethostname()), taken at start-up.
        hostname: Option<String> = string_unset();

        /// Process name used by queue manager. Unset means the name of the running program,
        /// taken at start-up.
        processname: Option<String> = string_unset();

        /// Use stream queues in RabbitMQ (x-queue-type: stream). Streams are a new persistent
        /// and replicated data structure ("queue type") in RabbitMQ which models an append-only
        /// log with non-destructive consumer semantics. It is available as of RabbitMQ 3.9.0.
        /// If set this option will replace all fanout queues with only one stream queue.
        rabbit_stream_fanout: bool = boolean(false);
    }
}

config_section! {
    /// Notification options (oslo.messaging).
    OsloMessagingNotificationsSection = "oslo_messaging_notifications";
    from "oslo.messaging" {
        /// The Drivers(s) to handle sending notifications. Possible values are messaging,
        /// messagingv2, routing, log, test, noop
        driver: Vec<String> = multi(&[]);

        /// A URL representing the messaging driver to use for notifications. If not set, we
        /// fall back to the same configuration used for RPC.
        transport_url: Option<String> = string_unset().secret();

        /// AMQP topic used for OpenStack notifications.
        topics: Vec<String> = list(&["notifications"]);

        /// The maximum number of attempts to re-send a notification message which failed to be
        /// delivered due to a recoverable error. 0 - No retry, -1 - indefinite
        retry: i64 = integer(-1);
    }
}

config_section! {
    /// Kafka transport options (oslo.messaging).
    OsloMessagingKafkaSection = "oslo_messaging_kafka";
    from "oslo.messaging" {
        /// Max fetch bytes of Kafka consumer
        kafka_max_fetch_bytes: i64 = integer(1048576);

        /// Default timeout(s) for Kafka consumers
        kafka_consumer_timeout: f64 = float(1.0);

        /// Group id for Kafka consumer. Consumers in one group will coordinate message
        /// consumption
        consumer_group: String = string("oslo_messaging_consumer");

        /// Upper bound on the delay for KafkaProducer batching in seconds
        producer_batch_timeout: f64 = float(0.0);

        /// Size of batch for the producer async send
        producer_batch_size: i64 = integer(16384);

        /// The compression codec for all data generated by the producer. If not set,
        /// compression will not be used. Note that the allowed values of this depend on the
        /// kafka version
        compression_codec: String = string("none")
            .choices(&["none", "gzip", "snappy", "lz4", "zstd"]);

        /// Enable asynchronous consumer commits
        enable_auto_commit: bool = boolean(false);

        /// The maximum number of records returned in a poll call
        max_poll_records: i64 = integer(500);

        /// Protocol used to communicate with brokers
        security_protocol: String = string("PLAINTEXT")
            .choices(&["PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL"]);

        /// Mechanism when security protocol is SASL
        sasl_mechanism: String = string("PLAIN");

        /// CA certificate PEM file used to verify the server certificate
        ssl_cafile: String = string("");

        /// Client certificate PEM file used for authentication.
        ssl_client_cert_file: String = string("");

        /// Client key PEM file used for authentication.
        ssl_client_key_file: String = string("");

        /// Client key password file used for authentication.
        ssl_client_key_password: String = string("");
    }
}

config_section! {
    /// Policy enforcement options (oslo.policy).
    OsloPolicySection = "oslo_policy";
    from "oslo.policy" {
        /// This option controls whether or not to use old deprecated defaults when evaluating
        /// policies. If ``True``, the old deprecated defaults are not going to be evaluated.
        /// This means if any existing token is allowed for old defaults but is disallowed for
        /// new defaults, it will be disallowed. If ``False``, the deprecated policy check
        /// string is logically OR'd with the new policy check string, allowing for a graceful
        /// upgrade experience between releases with new policies, which is the default
        /// behavior.
        enforce_new_defaults: bool = boolean(true);

        /// The relative or absolute path of a file that maps roles to permissions for a given
        /// service. Relative paths must be specified in relation to the configuration file
        /// setting this option.
        policy_file: String = string("policy.yaml");

        /// Default rule. Enforced when a requested rule is not found.
        policy_default_rule: String = string("default");

        /// Directories where policy configuration files are stored. They can be relative to any
        /// directory in the search path defined by the config_dir option, or absolute paths.
        /// The file defined by policy_file must exist for these directories to be searched.
        /// Missing or empty directories are ignored.
        policy_dirs: Vec<String> = multi(&["policy.d"]);

        /// Content Type to send and receive data for REST based policy check
        remote_content_type: String = string("application/x-www-form-urlencoded")
            .choices(&["application/x-www-form-urlencoded", "application/json"]);

        /// server identity verification for REST based policy check
        remote_ssl_verify_server_crt: bool = boolean(false);

        /// Absolute path to ca cert file for REST based policy check
        remote_ssl_ca_crt_file: Option<String> = string_unset();

        /// Absolute path to client cert for REST based policy check
        remote_ssl_client_crt_file: Option<String> = string_unset();

        /// Absolute path client key file REST based policy check
        remote_ssl_client_key_file: Option<String> = string_unset();

        /// Timeout in seconds for REST based policy check
        remote_timeout: f64 = float(60.0).min_float(0.0);
    }
}

config_section! {
    /// Locking options (oslo.concurrency).
    OsloConcurrencySection = "oslo_concurrency";
    from "oslo.concurrency" {
        /// Enables or disables inter-process locks.
        disable_process_locking: bool = boolean(false);

        /// Directory to use for lock files. For security, the specified directory should only
        /// be writable by the user running the processes that need locking. Defaults to
        /// environment variable OSLO_LOCK_PATH. If external locks are used, a lock path must be
        /// set.
        lock_path: Option<String> = string_unset();
    }
}

config_section! {
    /// Guru meditation report options (oslo.reports).
    OsloReportsSection = "oslo_reports";
    from "oslo.reports" {
        /// Path to a log directory where to create a file
        log_dir: Option<String> = string_unset();

        /// The path to a file to watch for changes to trigger the reports, instead of signals.
        /// Setting this option disables the signal trigger for the reports. If application is
        /// running as a WSGI application it is recommended to use this instead of signals.
        file_event_handler: Option<String> = string_unset();

        /// How many seconds to wait between polls when file_event_handler is set
        file_event_handler_interval: i64 = integer(1);
    }
}

config_section! {
    /// Versioned object options (oslo.versionedobjects).
    OsloVersionedobjectsSection = "oslo_versionedobjects";
    from "oslo.versionedobjects" {
        /// Make exception message format errors fatal
        fatal_exception_format_errors: bool = boolean(false);
    }
}

config_section! {
    /// oslo.middleware's options for the API pipeline (registered by its
    /// `http_proxy_to_wsgi` filter in magnum-api's paste pipeline).
    OsloMiddlewareSection = "oslo_middleware";
    from "oslo.middleware.http_proxy_to_wsgi" {
        /// Whether the application is behind a proxy or not. This determines if the middleware
        /// should parse the headers or not.
        enable_proxy_headers_parsing: bool = boolean(false);
    }
}

config_section! {
    /// Cross-origin resource sharing options (oslo.middleware).
    CorsSection = "cors";
    from "oslo.middleware.cors" {
        /// Indicate whether this resource may be shared with the domain received in the
        /// requests "origin" header. Format: "<protocol>://<host>[:<port>]", no trailing slash.
        /// Example: https://horizon.example.com
        allowed_origin: Option<Vec<String>> = list_unset();

        /// Indicate that the actual request can include user credentials
        allow_credentials: bool = boolean(true);

        /// Indicate which headers are safe to expose to the API. Defaults to HTTP Simple
        /// Headers. The default is Magnum's.
        expose_headers: Vec<String> = list(&[
            "X-Auth-Token",
            "X-Subject-Token",
            "X-Service-Token",
            "X-OpenStack-Request-ID",
            "X-Server-Management-Url",
        ]);

        /// Maximum cache age of CORS preflight requests.
        max_age: i64 = integer(3600);

        /// Indicate which methods can be used during the actual request. The default is
        /// Magnum's.
        allow_methods: Vec<String> = list(&["GET", "PUT", "POST", "DELETE", "PATCH"]);

        /// Indicate which header field names may be used during the actual request. The default
        /// is Magnum's.
        allow_headers: Vec<String> = list(&[
            "X-Auth-Token",
            "X-Identity-Status",
            "X-Roles",
            "X-Service-Catalog",
            "X-User-Id",
            "X-Tenant-Id",
            "X-OpenStack-Request-ID",
            "X-Server-Management-Url",
        ]);
    }
}
