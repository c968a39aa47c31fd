//! `[DEFAULT]`: Magnum's own options plus those of oslo.log, oslo.messaging and oslo.service.

use super::prelude::*;

config_section! {
    /// Options of the [DEFAULT] section: Magnum's paths, periodic tasks and utilities, plus
    /// oslo.log, oslo.messaging (RPC) and oslo.service options.
    DefaultSection = "DEFAULT";
    from "oslo.messaging" {
        /// Size of executor thread pool when executor is threading or eventlet.
        executor_thread_pool_size: i64 = integer(64).deprecated(&[dep("rpc_thread_pool_size")]);

        /// Seconds to wait for a response from a call.
        rpc_response_timeout: i64 = integer(60);

        /// The network address and optional user credentials for connecting to the messaging
        /// backend, in URL format:
        /// driver://[user:pass@]host:port[,[userN:passN@]hostN:portN]/virtual_host?query, for
        /// example rabbit://rabbitmq:password@127.0.0.1:5672//
        transport_url: String = string("rabbit://").secret();

        /// The default exchange under which topics are scoped. May be overridden by an exchange
        /// name specified in the transport_url option. Magnum sets the default to `magnum`.
        control_exchange: String = string("magnum");

        /// Add an endpoint to answer to ping calls. Endpoint is named oslo_rpc_server_ping
        rpc_ping_enabled: bool = boolean(false);
    }
    from "oslo.log" {
        /// If set to true, the logging level will be set to DEBUG instead of the default INFO
        /// level.
        debug: bool = boolean(false).mutable();

        /// The name of a logging configuration file. This file is appended to any existing
        /// logging configuration files. For details about logging configuration files, see the
        /// Python logging module documentation. Note that when logging configuration files are
        /// used then all logging configuration is set in the configuration file and other
        /// logging configuration options are ignored (for example, log-date-format).
        log_config_append: Option<String> = string_unset()
            .mutable()
            .deprecated(&[dep("log-config"), dep("log_config")]);

        /// Defines the format string for %%(asctime)s in log records. Default: %(default)s .
        /// This option is ignored if log_config_append is set.
        log_date_format: String = string("%Y-%m-%d %H:%M:%S");

        /// (Optional) Name of log file to send logging output to. If no default is set, logging
        /// will go to stderr as defined by use_stderr. This option is ignored if
        /// log_config_append is set.
        log_file: Option<String> = string_unset().deprecated(&[dep("logfile")]);

        /// (Optional) The base directory used for relative log_file paths. This option is
        /// ignored if log_config_append is set.
        log_dir: Option<String> = string_unset().deprecated(&[dep("logdir")]);

        /// Use syslog for logging. Existing syslog format is DEPRECATED and will be changed
        /// later to honor RFC5424. This option is ignored if log_config_append is set.
        use_syslog: bool = boolean(false);

        /// Enable journald for logging. If running in a systemd environment you may wish to
        /// enable journal support. Doing so will use the journal native protocol which includes
        /// structured metadata in addition to log messages.This option is ignored if
        /// log_config_append is set.
        use_journal: bool = boolean(false);

        /// Syslog facility to receive log lines. This option is ignored if log_config_append is
        /// set.
        syslog_log_facility: String = string("LOG_USER");

        /// Use JSON formatting for logging. This option is ignored if log_config_append is set.
        use_json: bool = boolean(false);

        /// Log output to standard error. This option is ignored if log_config_append is set.
        use_stderr: bool = boolean(false);

        /// (Optional) Set the 'color' key according to log levels. This option takes effect
        /// only when logging to stderr or stdout is used. This option is ignored if
        /// log_config_append is set.
        log_color: bool = boolean(false);

        /// The amount of time before the log files are rotated. This option is ignored unless
        /// log_rotation_type is set to "interval".
        log_rotate_interval: i64 = integer(1);

        /// Rotation interval type. The time of the last file change (or the time when the
        /// service was started) is used when scheduling the next rotation.
        log_rotate_interval_type: String = string("days")
            .choices(&["Seconds", "Minutes", "Hours", "Days", "Weekday", "Midnight"])
            .ignore_case();

        /// Maximum number of rotated log files.
        max_logfile_count: i64 = integer(30);

        /// Log file maximum size in MB. This option is ignored if "log_rotation_type" is not
        /// set to "size".
        max_logfile_size_mb: i64 = integer(200);

        /// Log rotation type.
        log_rotation_type: String = string("none")
            .choices(&["interval", "size", "none"])
            .choice_help(&[
                "Rotate logs at predefined time intervals.",
                "Rotate logs once they reach a predefined size.",
                "Do not rotate log files.",
            ])
            .ignore_case();

        /// Format string to use for log messages with context. Used by
        /// oslo_log.formatters.ContextFormatter
        logging_context_format_string: String = string("%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [%(global_request_id)s %(request_id)s %(user_identity)s] %(instance)s%(message)s");

        /// Format string to use for log messages when context is undefined. Used by
        /// oslo_log.formatters.ContextFormatter
        logging_default_format_string: String = string("%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [-] %(instance)s%(message)s");

        /// Additional data to append to log message when logging level for the message is
        /// DEBUG. Used by oslo_log.formatters.ContextFormatter
        logging_debug_format_suffix: String = string("%(funcName)s %(pathname)s:%(lineno)d");

        /// Prefix each line of exception output with this format. Used by
        /// oslo_log.formatters.ContextFormatter
        logging_exception_prefix: String = string("%(asctime)s.%(msecs)03d %(process)d ERROR %(name)s %(instance)s");

        /// Defines the format string for %(user_identity)s that is used in
        /// logging_context_format_string. Used by oslo_log.formatters.ContextFormatter
        logging_user_identity_format: String = string("%(user)s %(project)s %(domain)s %(system_scope)s %(user_domain)s %(project_domain)s");

        /// List of package logging levels in logger=LEVEL pairs. This option is ignored if
        /// log_config_append is set.
        default_log_levels: Vec<String> = list(&[
            "amqp=WARN",
            "boto=WARN",
            "sqlalchemy=WARN",
            "suds=INFO",
            "oslo.messaging=INFO",
            "oslo_messaging=INFO",
            "iso8601=WARN",
            "requests.packages.urllib3.connectionpool=WARN",
            "urllib3.connectionpool=WARN",
            "websocket=WARN",
            "requests.packages.urllib3.util.retry=WARN",
            "urllib3.util.retry=WARN",
            "keystonemiddleware=WARN",
            "routes.middleware=WARN",
            "stevedore=WARN",
            "taskflow=WARN",
            "keystoneauth=WARN",
            "oslo.cache=INFO",
            "oslo_policy=INFO",
            "dogpile.core.dogpile=INFO",
        ]);

        /// Enables or disables publication of error events.
        publish_errors: bool = boolean(false);

        /// The format for an instance that is passed with the log message.
        instance_format: String = string("[instance: %(uuid)s] ");

        /// The format for an instance UUID that is passed with the log message.
        instance_uuid_format: String = string("[instance: %(uuid)s] ");

        /// Interval, number of seconds, of log rate limiting.
        rate_limit_interval: i64 = integer(0);

        /// Maximum number of logged messages per rate_limit_interval.
        rate_limit_burst: i64 = integer(0);

        /// Log level name used by rate limiting. Logs with level greater or equal to
        /// rate_limit_except_level are not filtered. An empty string means that all levels are
        /// filtered.
        rate_limit_except_level: String = string("CRITICAL")
            .choices(&["CRITICAL", "ERROR", "INFO", "WARNING", "DEBUG", ""]);

        /// Enables or disables fatal status of deprecations.
        fatal_deprecations: bool = boolean(false);
    }
    from "oslo.service.periodic_task" {
        /// Some periodic tasks can be run in a separate process. Should we run them here?
        run_external_periodic_tasks: bool = boolean(true);
    }
    from "oslo.service.service" {
        /// Enable eventlet backdoor. Acceptable values are 0, <port>, and <start>:<end>, where
        /// 0 results in listening on a random tcp port number; <port> results in listening on
        /// the specified port number (and not enabling backdoor if that port is in use); and
        /// <start>:<end> results in listening on the smallest unused port number within the
        /// specified range of port numbers. The chosen port is displayed in the service's log
        /// file.
        backdoor_port: Option<String> = string_unset()
            .deprecated_for_removal("The 'backdoor_port' option is deprecated and will be removed in a future release.");

        /// Enable eventlet backdoor, using the provided path as a unix socket that can receive
        /// connections. This option is mutually exclusive with 'backdoor_port' in that only one
        /// should be provided. If both are provided then the existence of this option overrides
        /// the usage of that option. Inside the path {pid} will be replaced with the PID of the
        /// current process.
        backdoor_socket: Option<String> = string_unset()
            .deprecated_for_removal("The 'backdoor_socket' option is deprecated and will be removed in a future release.");

        /// Enables or disables logging values of all registered options when starting a service
        /// (at DEBUG level).
        log_options: bool = boolean(true);

        /// Specify a timeout after which a gracefully shutdown server will exit. Zero value
        /// means endless wait.
        graceful_shutdown_timeout: i64 = integer(60);
    }
    from "magnum.conf" {
        /// Directory where the magnum python module is installed. For OpenKeel: the
        /// installation prefix, used only as the base of `bindir` and `state_path`.
        pybasedir: String = string("/usr/lib/openkeel");

        /// Directory where magnum binaries are installed.
        bindir: String = string("$pybasedir/bin");

        /// Top-level directory for maintaining magnum's state.
        state_path: String = string("$pybasedir");

        /// Enable periodic tasks.
        periodic_enable: bool = boolean(true);

        /// Max interval size between periodic tasks execution in seconds.
        periodic_interval_max: i64 = integer(60);

        /// Name of this node. This can be an opaque identifier. It is not necessarily a
        /// hostname, FQDN, or IP address. However, the node name must be valid within an AMQP
        /// key.
        host: Option<String> = host_address_unset();

        /// Path to the rootwrap configuration file to use for running commands as root.
        rootwrap_config: String = string("/etc/magnum/rootwrap.conf");

        /// Explicitly specify the temporary working directory.
        tempdir: Option<String> = string_unset();

        /// Symbols to use for passwords
        password_symbols: Vec<String> = list(&["23456789", "ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz"]);

        /// Max interval size between periodic tasks execution in seconds.
        service_down_time: i64 = integer(180);

        /// Maximum raw byte size of any manifest.
        max_manifest_size: i64 = integer(524288);
    }
}
