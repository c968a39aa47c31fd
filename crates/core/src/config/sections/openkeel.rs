//! `[openkeel]`: options of OpenKeel itself, which Magnum does not have.

use super::prelude::*;

config_section! {
    /// OpenKeel-only options (Magnum ignores this section).
    OpenkeelSection = "openkeel";
    from "openkeel" {
        /// How openkeel-api authenticates requests: `keystone` validates tokens as
        /// keystonemiddleware does (configured in [keystone_authtoken]); `noauth` accepts
        /// every request and takes the identity from the request headers, for development and
        /// the all-in-one server only.
        auth_strategy: String = string("keystone")
            .choices(&["keystone", "noauth"])
            .choice_help(&[
                "Validate Keystone tokens.",
                "No authentication; the identity comes from the request headers.",
            ]);

        /// How openkeel-api and openkeel-conductor exchange RPC messages: `rabbit` uses the
        /// AMQP broker of [DEFAULT] transport_url with oslo.messaging's wire format (and
        /// interoperates with Magnum's services); `inprocess` passes them in memory, for the
        /// all-in-one server where both run in one process.
        rpc_transport: String = string("rabbit")
            .choices(&["rabbit", "inprocess"])
            .choice_help(&[
                "oslo.messaging over RabbitMQ (transport_url).",
                "In memory, within one process (all-in-one).",
            ]);

        /// Register the simulator driver, which pretends to create clusters without calling
        /// any cloud. For development and tests; never enable it in production.
        enable_simulator_driver: bool = boolean(false);

        /// Directory for OpenKeel's own state, such as the all-in-one server's SQLite database
        /// and certificates. Empty means the default chosen by each program.
        data_dir: String = string("");

        /// Answer the API's Glance / Nova / Neutron / Keystone look-ups from OpenKeel's built-in
        /// simulated cloud instead of the services in the Keystone catalogue. For the
        /// all-in-one server without a cloud; never in production.
        simulated_cloud: bool = boolean(false);

        /// openkeel-api sends the casts about one cluster (operations on it and on its
        /// nodegroups) to one of OpenKeel's per-cluster ordered queues on the conductor
        /// topic, so they run in the order it sent them whichever openkeel-conductor receives
        /// them; without an OpenKeel conductor listening there they go to the topic as
        /// magnum-api sends them. False: always the topic (Magnum's behaviour).
        ordered_casts: bool = boolean(true);

        /// Seconds between two runs of the conductor's cluster status sync (Magnum runs it
        /// every 10 seconds). Tests and demonstrations may shorten it.
        status_sync_interval: i64 = integer(10).min(1).max(3600);

        /// Seconds the conductor waits for any one driver call (create, update, resize,
        /// upgrade, delete, the nodegroup operations, a rotation, a status sync or a health
        /// poll). A call that does not answer in time is a transient error: the operation
        /// fails with a reason saying so, the status sync retries on its next tick, and the
        /// cluster's operation lock is released.
        driver_call_timeout: i64 = integer(60).min(1).max(3600);

        /// Seconds an operation other than a create (whose limit is the cluster's
        /// create_timeout) may stay *_IN_PROGRESS before the conductor marks it *_FAILED.
        operation_timeout: i64 = integer(3600).min(60);

        /// How many large collection pages (GET /v1/clusters/detail and the like) the API
        /// builds at once; more wait their turn (rendering is CPU-bound, and each page in
        /// flight holds its rows in memory). 0 means the number of cores, at least 2.
        list_concurrency: i64 = integer(0).min(0).max(1024);

        /// Largest request body openkeel-api accepts, in bytes. A larger one is answered 413
        /// before it is read when its Content-Length says so, else as soon as the limit is
        /// passed, so memory stays flat whatever a client sends (Magnum reads any body).
        api_max_body_size: i64 = integer(4_194_304).min(1024).max(1_073_741_824);

        /// Seconds openkeel-api waits for a request's whole body once its headers arrived; a
        /// client that sends it slower is answered 408 and disconnected.
        api_body_read_timeout: i64 = integer(60).min(1).max(3600);

        /// Seconds a client has to send a request's headers, counted from when the
        /// connection is waiting for a request: a connection that trickles its headers, or a
        /// kept-alive connection left idle, is closed after it. 0 means no limit.
        api_header_read_timeout: i64 = integer(30).min(0).max(3600);

        /// Largest request line and headers openkeel-api accepts, in bytes; larger ones are
        /// answered 431 and the connection closed.
        api_max_header_size: i64 = integer(65_536).min(1024).max(1_048_576);

        /// Connections one openkeel-api process serves at once; further connections wait in
        /// the listen backlog until one closes.
        api_max_connections: i64 = integer(1024).min(1).max(65_536);

        /// Largest AMQP frame, in bytes, that openkeel-api and openkeel-conductor propose to
        /// the broker when they connect (the broker's own limit, 128 KiB on RabbitMQ, still
        /// applies). The AMQP client keeps a read and a write buffer of 32 frames per
        /// connection, so this sizes each process's resident memory: 16 KiB is 1 MiB, 128 KiB
        /// (what Magnum's py-amqp proposes) is 8 MiB. Larger messages are split into frames,
        /// as AMQP does for any message; no message size limit comes from it.
        amqp_frame_max: i64 = integer(16_384).min(4096).max(1_048_576);

        /// Where openkeel-api serves its Prometheus metrics (`GET /metrics`, plain HTTP,
        /// no authentication), as `address:port` (`127.0.0.1:9611`, `[::1]:9611`). Unset:
        /// no metrics listener. The all-in-one `openkeel` serves the API's and the
        /// conductor's metrics together here (or on conductor_metrics_listen when this is
        /// unset). See docs/operating.md.
        api_metrics_listen: Option<String> = string_unset();

        /// Where openkeel-conductor serves its Prometheus metrics (`GET /metrics`, plain
        /// HTTP, no authentication), as `address:port`. Distinct from api_metrics_listen
        /// because both services usually read the same magnum.conf. Unset: no metrics
        /// listener.
        conductor_metrics_listen: Option<String> = string_unset();
    }
}
