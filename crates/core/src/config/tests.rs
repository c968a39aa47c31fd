//! Loading tests: precedence, directories, multi-valued options, types, interpolation,
//! deprecated names, defaults and the checked-in sample.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn load(text: &str) -> Config {
    match Config::from_ini_str(text) {
        Ok(c) => c,
        Err(e) => panic!("config did not load: {e}"),
    }
}

fn load_err(text: &str) -> ConfigError {
    match Config::from_ini_str(text) {
        Ok(_) => panic!("config loaded, expected an error"),
        Err(e) => e,
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&path, text).unwrap();
    path
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------------------------------
// Defaults and tables
// ---------------------------------------------------------------------------------------

#[test]
fn defaults_load_without_errors_and_equal_default() {
    let empty = Config::from_ini_str("").unwrap();
    assert_eq!(empty, Config::default());
    assert_eq!(
        Config::load(&ConfigSources::default()).unwrap(),
        Config::default()
    );
}

#[test]
fn root_fields_match_section_names() {
    for (root, group) in ROOT_GROUPS {
        assert_eq!(root, group);
    }
    assert_eq!(Config::sections().len(), 37);
    assert_eq!(Config::sections()[0].name, "DEFAULT");
}

#[test]
fn tables_are_well_formed() {
    let mut total = 0;
    for section in Config::sections() {
        let mut names = HashSet::new();
        for opt in section.options {
            total += 1;
            let id = format!("[{}] {}", section.name, opt.name);
            assert!(names.insert(opt.name), "{id} is declared twice");
            assert!(!opt.help_text().is_empty(), "{id} has no help");
            assert!(!opt.source.is_empty(), "{id} has no source");
            assert!(
                opt.choice_help.is_empty() || opt.choice_help.len() == opt.choices.len(),
                "{id}: choice_help does not match choices"
            );
            // A default must satisfy its own constraints.
            let defaults: Vec<&str> = match opt.default {
                DefaultValue::Str(s) if opt.kind != OptKind::Multi => vec![s],
                DefaultValue::List(items) if opt.kind == OptKind::List => items.to_vec(),
                _ => Vec::new(),
            };
            if !opt.choices.is_empty() {
                for d in defaults {
                    let ok = opt
                        .choices
                        .iter()
                        .any(|c| *c == d || (opt.ignore_case && c.eq_ignore_ascii_case(d)));
                    assert!(ok, "{id}: default {d:?} is not among the choices");
                }
            }
            let number = match opt.default {
                DefaultValue::Int(i) => Some(i as f64),
                DefaultValue::Float(f) => Some(f),
                _ => None,
            };
            if let Some(n) = number {
                assert!(opt.min.is_none_or(|m| n >= m), "{id}: default below min");
                assert!(opt.max.is_none_or(|m| n <= m), "{id}: default above max");
            }
        }
    }
    // 279 options of Magnum's sample, the 9 keystoneauth session options, the 16 password
    // plugin options keystonemiddleware loads in [keystone_authtoken], [openkeel]'s 8, and
    // the Cluster API driver's groups: magnum-cluster-api's 13 ([capi_client] 5,
    // [auto_scaling] 1, [manila_client] 7) and OpenKeel's 2 kubeconfig options and
    // helm_binary, [openkeel] list_concurrency and ordered_casts, and oslo.middleware's
    // [oslo_middleware] enable_proxy_headers_parsing (registered by magnum-api's pipeline),
    // [openkeel]'s five limits of the API's listener (api_max_body_size, ...), its two
    // metrics listeners and amqp_frame_max.
    assert_eq!(total, 279 + 9 + 16 + 8 + 13 + 3 + 3 + 5 + 2 + 1);
}

#[test]
fn defaults_match_magnum() {
    let c = Config::default();
    // [DEFAULT]
    assert_eq!(c.default.executor_thread_pool_size, 64);
    assert_eq!(c.default.rpc_response_timeout, 60);
    assert_eq!(c.default.transport_url, "rabbit://");
    assert_eq!(c.default.control_exchange, "magnum");
    assert!(!c.default.debug);
    assert_eq!(c.default.log_file, None);
    assert_eq!(c.default.log_date_format, "%Y-%m-%d %H:%M:%S");
    assert_eq!(c.default.log_rotation_type, "none");
    assert_eq!(c.default.default_log_levels.len(), 20);
    assert_eq!(c.default.default_log_levels[0], "amqp=WARN");
    assert_eq!(c.default.instance_format, "[instance: %(uuid)s] ");
    assert!(c.default.run_external_periodic_tasks);
    assert_eq!(c.default.graceful_shutdown_timeout, 60);
    assert_eq!(c.default.pybasedir, "/usr/lib/openkeel");
    assert_eq!(c.default.bindir, "/usr/lib/openkeel/bin");
    assert_eq!(c.default.state_path, "/usr/lib/openkeel");
    assert!(c.default.periodic_enable);
    assert_eq!(c.default.periodic_interval_max, 60);
    assert_eq!(c.default.host, None);
    assert_eq!(c.default.rootwrap_config, "/etc/magnum/rootwrap.conf");
    assert_eq!(
        c.default.password_symbols,
        strings(&[
            "23456789",
            "ABCDEFGHJKLMNPQRSTUVWXYZ",
            "abcdefghijkmnopqrstuvwxyz"
        ])
    );
    assert_eq!(c.default.service_down_time, 180);
    assert_eq!(c.default.max_manifest_size, 524288);
    // [api], [conductor]
    assert_eq!(c.api.port, 9511);
    assert_eq!(c.api.host, "127.0.0.1");
    assert_eq!(c.api.max_limit, 1000);
    assert_eq!(c.api.api_paste_config, "api-paste.ini");
    assert!(!c.api.enabled_ssl);
    assert_eq!(c.api.workers, None);
    assert_eq!(c.conductor.topic, "magnum-conductor");
    assert_eq!(c.conductor.workers, None);
    // [database]
    assert_eq!(
        c.database.connection,
        "sqlite:////usr/lib/openkeel/magnum.sqlite"
    );
    assert_eq!(c.database.slave_connection, None);
    assert_eq!(c.database.mysql_sql_mode, "TRADITIONAL");
    assert_eq!(c.database.connection_recycle_time, 3600);
    assert_eq!(c.database.max_pool_size, 5);
    assert_eq!(c.database.max_retries, 10);
    assert_eq!(c.database.max_overflow, 50);
    assert_eq!(c.database.pool_timeout, None);
    assert_eq!(c.database.db_max_retries, 20);
    assert_eq!(c.database.connection_parameters, "");
    assert_eq!(c.database.mysql_engine, "InnoDB");
    // Magnum's groups
    assert_eq!(c.certificates.cert_manager_type, "barbican");
    assert_eq!(c.certificates.storage_path, "/var/lib/magnum/certificates/");
    assert!(!c.x509.allow_ca);
    assert_eq!(
        c.x509.allowed_extensions,
        strings(&[
            "keyUsage",
            "extendedKeyUsage",
            "subjectAltName",
            "basicConstraints",
            "subjectKeyIdentifier"
        ])
    );
    assert_eq!(
        c.x509.allowed_key_usage,
        strings(&["Digital Signature", "Key Encipherment", "Non Repudiation"])
    );
    assert_eq!(c.x509.term_of_validity, 1825);
    assert_eq!(c.x509.rsa_key_size, 2048);
    assert_eq!(
        c.cluster.temp_cache_dir,
        "/var/lib/magnum/certificate-cache"
    );
    assert_eq!(c.cluster.pre_delete_lb_timeout, 60);
    assert_eq!(c.cluster.nodes_affinity_policy, "soft-anti-affinity");
    assert_eq!(
        c.cluster_template.kubernetes_allowed_network_drivers,
        strings(&["flannel", "calico"])
    );
    assert_eq!(
        c.cluster_template.kubernetes_default_network_driver,
        "flannel"
    );
    assert!(c.drivers.verify_ca);
    assert_eq!(c.drivers.openstack_ca_file, "");
    assert!(c.drivers.disabled_drivers.is_empty());
    assert!(c.drivers.enabled_beta_drivers.is_empty());
    assert_eq!(c.drivers.default_driver, None);
    assert_eq!(c.kubernetes.health_polling_interval, 60);
    assert_eq!(c.quotas.max_clusters_per_project, 20);
    assert_eq!(c.cinder.default_boot_volume_size, 0);
    assert_eq!(c.docker.docker_remote_api_version, "1.21");
    assert_eq!(
        c.docker_registry.swift_registry_container,
        "docker_registry"
    );
    // Clients
    for endpoint in [
        &c.glance_client.endpoint_type,
        &c.nova_client.endpoint_type,
        &c.neutron_client.endpoint_type,
        &c.barbican_client.endpoint_type,
        &c.cinder_client.endpoint_type,
        &c.octavia_client.endpoint_type,
        &c.magnum_client.endpoint_type,
    ] {
        assert_eq!(endpoint, "publicURL");
    }
    assert_eq!(c.barbican_client.region_name, None);
    assert!(!c.octavia_client.insecure);
    // Keystone
    assert_eq!(c.keystone_auth.auth_type, "password");
    assert_eq!(c.keystone_auth.auth_url, None);
    assert!(!c.keystone_auth.insecure);
    assert_eq!(c.keystone_auth.timeout, None);
    assert_eq!(c.keystone_authtoken.www_authenticate_uri, None);
    assert_eq!(c.keystone_authtoken.interface, "internal");
    assert_eq!(c.keystone_authtoken.http_request_max_retries, 3);
    assert_eq!(c.keystone_authtoken.memcached_servers, None);
    assert_eq!(c.keystone_authtoken.token_cache_time, 300);
    assert_eq!(c.keystone_authtoken.memcache_security_strategy, "None");
    assert!(c.keystone_authtoken.include_service_catalog);
    assert_eq!(c.keystone_authtoken.enforce_token_bind, "permissive");
    assert_eq!(
        c.keystone_authtoken.service_token_roles,
        strings(&["service"])
    );
    assert!(c.keystone_authtoken.service_token_roles_required);
    assert_eq!(c.keystone_authtoken.auth_type, None);
    assert_eq!(c.keystone_authtoken.auth_url, None);
    // Profiler
    assert!(!c.profiler.enabled);
    assert_eq!(c.profiler.hmac_keys, "SECRET_KEY");
    assert_eq!(c.profiler.connection_string, "messaging://");
    assert_eq!(c.profiler.socket_timeout, 0.1);
    // oslo.messaging
    assert_eq!(c.oslo_messaging_rabbit.rpc_conn_pool_size, 30);
    assert_eq!(c.oslo_messaging_rabbit.kombu_reconnect_delay, 1.0);
    assert_eq!(
        c.oslo_messaging_rabbit.kombu_failover_strategy,
        "round-robin"
    );
    assert_eq!(c.oslo_messaging_rabbit.rabbit_login_method, "AMQPLAIN");
    assert_eq!(c.oslo_messaging_rabbit.rabbit_retry_interval, 1);
    assert_eq!(c.oslo_messaging_rabbit.rabbit_interval_max, 30);
    assert_eq!(c.oslo_messaging_rabbit.rabbit_transient_queues_ttl, 1800);
    assert_eq!(c.oslo_messaging_rabbit.heartbeat_timeout_threshold, 60);
    assert_eq!(c.oslo_messaging_rabbit.heartbeat_rate, 3);
    assert!(c.oslo_messaging_rabbit.ssl_enforce_hostname_verification);
    assert_eq!(c.oslo_messaging_rabbit.hostname, None);
    assert_eq!(c.oslo_messaging_rabbit.processname, None);
    assert!(c.oslo_messaging_notifications.driver.is_empty());
    assert_eq!(c.oslo_messaging_notifications.transport_url, None);
    assert_eq!(
        c.oslo_messaging_notifications.topics,
        strings(&["notifications"])
    );
    assert_eq!(c.oslo_messaging_notifications.retry, -1);
    assert_eq!(c.oslo_messaging_kafka.compression_codec, "none");
    assert_eq!(c.oslo_messaging_kafka.kafka_max_fetch_bytes, 1048576);
    // oslo.policy and the rest
    assert!(c.oslo_policy.enforce_new_defaults);
    assert_eq!(c.oslo_policy.policy_file, "policy.yaml");
    assert_eq!(c.oslo_policy.policy_default_rule, "default");
    assert_eq!(c.oslo_policy.policy_dirs, strings(&["policy.d"]));
    assert_eq!(
        c.oslo_policy.remote_content_type,
        "application/x-www-form-urlencoded"
    );
    assert_eq!(c.oslo_policy.remote_timeout, 60.0);
    assert!(!c.oslo_concurrency.disable_process_locking);
    assert_eq!(c.oslo_concurrency.lock_path, None);
    assert_eq!(c.oslo_reports.file_event_handler_interval, 1);
    assert!(!c.oslo_versionedobjects.fatal_exception_format_errors);
    // CORS, with Magnum's set_defaults
    assert_eq!(c.cors.allowed_origin, None);
    assert!(c.cors.allow_credentials);
    assert_eq!(c.cors.max_age, 3600);
    assert_eq!(
        c.cors.allow_methods,
        strings(&["GET", "PUT", "POST", "DELETE", "PATCH"])
    );
    assert_eq!(c.cors.allow_headers.len(), 8);
    assert_eq!(c.cors.expose_headers.len(), 5);
    // [openkeel]
    assert_eq!(c.openkeel.auth_strategy, "keystone");
    assert_eq!(c.openkeel.rpc_transport, "rabbit");
    assert!(!c.openkeel.enable_simulator_driver);
    assert_eq!(c.openkeel.data_dir, "");
}

// ---------------------------------------------------------------------------------------
// Files, directories and precedence
// ---------------------------------------------------------------------------------------

#[test]
fn later_config_files_win() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write(
        tmp.path(),
        "a.conf",
        "[api]\nport = 1111\nmax_limit = 5\n[DEFAULT]\ndebug = true\n",
    );
    let b = write(
        tmp.path(),
        "b.conf",
        "[api]\nport = 2222\n[DEFAULT]\ndebug = false\n",
    );
    let c = Config::load(&ConfigSources {
        files: vec![a.clone(), b.clone()],
        dirs: vec![],
    })
    .unwrap();
    assert_eq!(c.api.port, 2222);
    assert_eq!(
        c.api.max_limit, 5,
        "an option set only in the first file is kept"
    );
    assert!(!c.default.debug);

    let c = Config::load(&ConfigSources {
        files: vec![b, a],
        dirs: vec![],
    })
    .unwrap();
    assert_eq!(c.api.port, 1111);
    assert!(c.default.debug);
}

#[test]
fn last_assignment_in_a_file_wins() {
    let c = load("[api]\nport = 1\nport = 2\n[API]\nport = 3\n");
    assert_eq!(c.api.port, 3);
}

#[test]
fn config_dir_files_are_read_sorted_after_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let main = write(
        tmp.path(),
        "magnum.conf",
        "[api]\nport = 1\nmax_limit = 1\n[conductor]\ntopic = main\n",
    );
    let dir = tmp.path().join("magnum.conf.d");
    write(&dir, "20-second.conf", "[api]\nport = 20\n");
    write(&dir, "10-first.conf", "[api]\nport = 10\nmax_limit = 10\n");
    write(&dir, "30-ignored.conf.bak", "[api]\nport = 30\n");
    let c = Config::load(&ConfigSources {
        files: vec![main.clone()],
        dirs: vec![dir.clone()],
    })
    .unwrap();
    assert_eq!(c.api.port, 20);
    assert_eq!(c.api.max_limit, 10);
    assert_eq!(c.conductor.topic, "main");

    // With the directory given before the file, the file wins.
    let c = Config::load_sequence(&[ConfigSource::Dir(dir), ConfigSource::File(main)]).unwrap();
    assert_eq!(c.api.port, 1);
    assert_eq!(c.api.max_limit, 1);
}

#[test]
fn missing_file_and_dir_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.conf");
    let err = Config::load(&ConfigSources {
        files: vec![missing.clone()],
        dirs: vec![],
    })
    .unwrap_err();
    assert!(
        matches!(&err, ConfigError::FileNotFound { path } if *path == missing),
        "{err:?}"
    );
    let err = Config::load(&ConfigSources {
        files: vec![],
        dirs: vec![tmp.path().join("nope.d")],
    })
    .unwrap_err();
    assert!(matches!(err, ConfigError::DirNotFound { .. }), "{err:?}");
}

#[test]
fn parse_errors_name_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = write(
        tmp.path(),
        "bad.conf",
        "[DEFAULT]\ndebug = true\nthis is not an option\n",
    );
    let err = Config::load(&ConfigSources {
        files: vec![bad.clone()],
        dirs: vec![],
    })
    .unwrap_err();
    match &err {
        ConfigError::Parse { path, line, .. } => {
            assert_eq!(path, &bad);
            assert_eq!(*line, 3);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string().contains(&format!("{}:3", bad.display())),
        "{err}"
    );
}

#[test]
fn discovered_defaults_load() {
    let tmp = tempfile::tempdir().unwrap();
    let etc = tmp.path().join("etc/magnum");
    write(&etc, "magnum.conf", "[api]\nport = 9999\n");
    write(
        &etc.join("magnum.conf.d"),
        "50-override.conf",
        "[api]\nmax_limit = 7\n",
    );
    let sources = ConfigSources {
        files: vec![etc.join("magnum.conf")],
        dirs: vec![etc.join("magnum.conf.d")],
    };
    let c = Config::load(&sources).unwrap();
    assert_eq!((c.api.port, c.api.max_limit), (9999, 7));
}

// ---------------------------------------------------------------------------------------
// Multi-valued options and lists
// ---------------------------------------------------------------------------------------

#[test]
fn multi_valued_options_collect_every_occurrence_across_files() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write(
        tmp.path(),
        "a.conf",
        "[oslo_messaging_notifications]\ndriver = messagingv2\n[oslo_policy]\npolicy_dirs = /etc/magnum/policy.d\n",
    );
    let b = write(
        tmp.path(),
        "b.conf",
        "[oslo_messaging_notifications]\ndriver = log\ndriver = routing\n",
    );
    let dir = tmp.path().join("conf.d");
    write(
        &dir,
        "x.conf",
        "[oslo_messaging_notifications]\ndriver = noop\n",
    );
    let c = Config::load(&ConfigSources {
        files: vec![a, b],
        dirs: vec![dir],
    })
    .unwrap();
    assert_eq!(
        c.oslo_messaging_notifications.driver,
        strings(&["messagingv2", "log", "routing", "noop"])
    );
    // A value replaces the default entirely.
    assert_eq!(
        c.oslo_policy.policy_dirs,
        strings(&["/etc/magnum/policy.d"])
    );
}

#[test]
fn openstack_helm_style_repeated_keys() {
    let c = load(
        "[oslo_messaging_notifications]\n\
         driver = messagingv2\n\
         [oslo_policy]\n\
         policy_dirs = policy.d\n\
         policy_dirs = /etc/magnum/extra\n\
         [oslo_messaging_notifications]\n\
         driver = log\n",
    );
    assert_eq!(
        c.oslo_messaging_notifications.driver,
        strings(&["messagingv2", "log"])
    );
    assert_eq!(
        c.oslo_policy.policy_dirs,
        strings(&["policy.d", "/etc/magnum/extra"])
    );
}

#[test]
fn empty_multi_value_is_one_empty_string() {
    let c = load("[oslo_messaging_notifications]\ndriver =\n");
    assert_eq!(c.oslo_messaging_notifications.driver, strings(&[""]));
}

#[test]
fn lists_are_comma_separated() {
    let c = load(
        "[cors]\nallowed_origin = https://a.example, https://b.example\nallow_methods =\n\
         [DEFAULT]\npassword_symbols = \"ab,cd,\"\n\
         [keystone_authtoken]\nmemcached_servers = m1:11211,\n  m2:11211\n",
    );
    assert_eq!(
        c.cors.allowed_origin,
        Some(strings(&["https://a.example", "https://b.example"]))
    );
    assert!(c.cors.allow_methods.is_empty());
    assert_eq!(c.default.password_symbols, strings(&["ab", "cd"]));
    assert_eq!(
        c.keystone_authtoken.memcached_servers,
        Some(strings(&["m1:11211", "m2:11211"]))
    );
}

#[test]
fn list_items_are_checked_against_choices() {
    let c = load("[x509]\nallowed_key_usage = Digital Signature, CRL Sign\n");
    assert_eq!(
        c.x509.allowed_key_usage,
        strings(&["Digital Signature", "CRL Sign"])
    );
    let err = load_err("[x509]\nallowed_extensions = keyUsage,bogusExtension\n");
    match err {
        ConfigError::InvalidValue {
            group,
            option,
            reason,
            ..
        } => {
            assert_eq!((group, option), ("x509", "allowed_extensions"));
            assert!(reason.contains("'bogusExtension'"), "{reason}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Types, choices and bounds
// ---------------------------------------------------------------------------------------

#[test]
fn booleans_take_oslo_spellings() {
    for (text, expected) in [
        ("true", true),
        ("True", true),
        ("1", true),
        ("yes", true),
        ("ON", true),
        ("false", false),
        ("FALSE", false),
        ("0", false),
        ("No", false),
        ("off", false),
    ] {
        let c = load(&format!(
            "[DEFAULT]\ndebug = {text}\n[api]\nenabled_ssl = {text}\n"
        ));
        assert_eq!(c.default.debug, expected, "{text}");
        assert_eq!(c.api.enabled_ssl, expected, "{text}");
    }
}

#[test]
fn bad_boolean_names_option_and_value() {
    let err = load_err("[DEFAULT]\n\ndebug = maybe\n");
    match &err {
        ConfigError::InvalidValue {
            group,
            option,
            value,
            location,
            ..
        } => {
            assert_eq!(*group, "DEFAULT");
            assert_eq!(*option, "debug");
            assert_eq!(value, "maybe");
            assert_eq!(location.as_ref().map(|l| l.line), Some(3));
        }
        other => panic!("unexpected {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("debug") && text.contains("'maybe'") && text.contains("<string>:3"),
        "{text}"
    );
    // An empty boolean is an error too, as in oslo.
    assert!(matches!(
        load_err("[api]\nenabled_ssl =\n"),
        ConfigError::InvalidValue { .. }
    ));
}

#[test]
fn integers_floats_and_bounds() {
    let c = load(
        "[api]\nport = 8080\nworkers = 4\n[database]\nmax_pool_size = 1_0\nconnection_debug = 100\n\
         [oslo_messaging_rabbit]\nkombu_reconnect_delay = 4.5\n[profiler]\nsocket_timeout = 2\n",
    );
    assert_eq!(c.api.port, 8080);
    assert_eq!(c.api.workers, Some(4));
    assert_eq!(c.database.max_pool_size, 10);
    assert_eq!(c.database.connection_debug, 100);
    assert_eq!(c.oslo_messaging_rabbit.kombu_reconnect_delay, 4.5);
    assert_eq!(c.profiler.socket_timeout, 2.0);

    for (text, option, needle) in [
        (
            "[api]\nport = 70000\n",
            "port",
            "less than or equal to 65535",
        ),
        ("[api]\nport = -1\n", "port", "greater than or equal to 0"),
        (
            "[database]\nconnection_debug = 101\n",
            "connection_debug",
            "less than or equal to 100",
        ),
        (
            "[oslo_messaging_rabbit]\nrpc_conn_pool_size = 0\n",
            "rpc_conn_pool_size",
            "greater than or equal to 1",
        ),
        (
            "[oslo_messaging_rabbit]\nkombu_reconnect_delay = 5\n",
            "kombu_reconnect_delay",
            "less than or equal to 4.5",
        ),
        (
            "[oslo_policy]\nremote_timeout = -1\n",
            "remote_timeout",
            "greater than or equal to 0",
        ),
        (
            "[api]\nmax_limit = lots\n",
            "max_limit",
            "invalid literal for int()",
        ),
        (
            "[api]\nmax_limit = 1.5\n",
            "max_limit",
            "invalid literal for int()",
        ),
        (
            "[profiler]\nsocket_timeout = soon\n",
            "socket_timeout",
            "could not convert",
        ),
    ] {
        match load_err(text) {
            ConfigError::InvalidValue {
                option: o, reason, ..
            } => {
                assert_eq!(o, option, "{text}");
                assert!(reason.contains(needle), "{text}: {reason}");
            }
            other => panic!("{text}: unexpected {other:?}"),
        }
    }
}

#[test]
fn empty_numbers_mean_unset() {
    let c = load("[api]\nworkers =\nmax_limit =\n");
    assert_eq!(c.api.workers, None);
    assert_eq!(c.api.max_limit, 1000);
}

#[test]
fn string_choices_are_validated() {
    let c = load("[DEFAULT]\nlog_rotate_interval_type = DAYS\nlog_rotation_type = Size\n[openkeel]\nauth_strategy = noauth\nrpc_transport = inprocess\n");
    assert_eq!(
        c.default.log_rotate_interval_type, "DAYS",
        "ignore_case keeps the value as written"
    );
    assert_eq!(c.default.log_rotation_type, "Size");
    assert_eq!(c.openkeel.auth_strategy, "noauth");
    assert_eq!(c.openkeel.rpc_transport, "inprocess");

    for (text, option) in [
        ("[openkeel]\nauth_strategy = KEYSTONE\n", "auth_strategy"),
        ("[openkeel]\nrpc_transport = kafka\n", "rpc_transport"),
        (
            "[oslo_messaging_rabbit]\nkombu_failover_strategy = random\n",
            "kombu_failover_strategy",
        ),
        (
            "[oslo_messaging_kafka]\nsecurity_protocol = plaintext\n",
            "security_protocol",
        ),
    ] {
        match load_err(text) {
            ConfigError::InvalidValue {
                option: o, reason, ..
            } => {
                assert_eq!(o, option);
                assert!(reason.starts_with("Valid values are ["), "{reason}");
            }
            other => panic!("{text}: unexpected {other:?}"),
        }
    }
}

#[test]
fn addresses_are_validated() {
    let c = load("[DEFAULT]\nhost = conductor-1.example.org.\n[api]\nhost = ::\n");
    assert_eq!(c.default.host.as_deref(), Some("conductor-1.example.org"));
    assert_eq!(c.api.host, "::");
    assert!(matches!(
        load_err("[api]\nhost = localhost\n"),
        ConfigError::InvalidValue { .. }
    ));
    assert!(matches!(
        load_err("[DEFAULT]\nhost = bad_host\n"),
        ConfigError::InvalidValue { .. }
    ));
}

#[test]
fn every_error_is_reported() {
    let err = load_err(
        "[api]\nport = x\n[DEFAULT]\ndebug = perhaps\n[openkeel]\nrpc_transport = carrier-pigeon\n",
    );
    let options: Vec<String> = err
        .errors()
        .into_iter()
        .map(|e| match e {
            ConfigError::InvalidValue { option, .. } => option.to_string(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(options, ["debug", "port", "rpc_transport"]);
    assert!(err.to_string().starts_with("3 configuration errors:"));
}

// ---------------------------------------------------------------------------------------
// Parsing rules at the configuration level
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_sections_and_keys_are_ignored() {
    let c = load(
        "[DEFAULT]\nno_such_option = 1\n[no_such_section]\nport = bogus\n[api]\nPort = bogus\nport = 1234\n\
         [keystone_authtoken]\nauth-url = ignored\n",
    );
    assert_eq!(c.api.port, 1234);
    assert_eq!(
        c.keystone_authtoken.auth_url, None,
        "option names are their dest, with underscores"
    );
}

#[test]
fn default_section_is_case_sensitive_others_are_not() {
    let c = load("[default]\ndebug = true\n[Api]\nport = 4321\n");
    assert!(!c.default.debug, "[default] is not [DEFAULT]");
    assert_eq!(c.api.port, 4321);
}

#[test]
fn comments_quotes_and_continuations() {
    let c = load(
        "# a comment\n; another\n[DEFAULT]\n#debug = true\ntransport_url = \"rabbit://user:pa ss@host:5672/\"\n\
         control_exchange = magnum # not a comment\n\
         [keystone_authtoken]\nwww_authenticate_uri = 'http://keystone:5000/v3'\n\
         [api]\nssl_cert_file = /etc/ssl/\n  cert.pem\n",
    );
    assert!(!c.default.debug);
    assert_eq!(c.default.transport_url, "rabbit://user:pa ss@host:5672/");
    assert_eq!(c.default.control_exchange, "magnum # not a comment");
    assert_eq!(
        c.keystone_authtoken.www_authenticate_uri.as_deref(),
        Some("http://keystone:5000/v3")
    );
    assert_eq!(c.api.ssl_cert_file.as_deref(), Some("/etc/ssl/\ncert.pem"));
}

#[test]
fn several_texts_layer_like_files() {
    let c =
        Config::from_ini_strs(&["[api]\nport = 1\nmax_limit = 3\n", "[api]\nport = 2\n"]).unwrap();
    assert_eq!((c.api.port, c.api.max_limit), (2, 3));
}

// ---------------------------------------------------------------------------------------
// Deprecated names
// ---------------------------------------------------------------------------------------

#[test]
fn deprecated_names_are_read() {
    let c = load(
        "[DEFAULT]\nlogfile = /var/log/old.log\nlogdir = /var/log\nrpc_thread_pool_size = 8\n\
         [keystone_authtoken]\nmemcache_servers = m:11211\n[profiler]\nprofiler_enabled = yes\n\
         [bay]\netcd_discovery_service_endpoint_format = https://d/new?size=%(size)d\n\
         [keystone_auth]\ntenant_name = service\nauth_plugin = v3password\n",
    );
    assert_eq!(c.default.log_file.as_deref(), Some("/var/log/old.log"));
    assert_eq!(c.default.log_dir.as_deref(), Some("/var/log"));
    assert_eq!(c.default.executor_thread_pool_size, 8);
    assert_eq!(
        c.keystone_authtoken.memcached_servers,
        Some(strings(&["m:11211"]))
    );
    assert!(c.profiler.enabled);
    assert_eq!(
        c.cluster.etcd_discovery_service_endpoint_format,
        "https://d/new?size=%(size)d"
    );
    assert_eq!(c.keystone_auth.project_name.as_deref(), Some("service"));
    assert_eq!(c.keystone_auth.auth_type, "v3password");
}

#[test]
fn current_name_wins_in_a_file_but_a_later_file_wins_over_it() {
    let c = load("[DEFAULT]\nlog_file = new\nlogfile = old\n");
    assert_eq!(c.default.log_file.as_deref(), Some("new"));
    let c = Config::from_ini_strs(&[
        "[DEFAULT]\nlog_file = new\n",
        "[DEFAULT]\nlogfile = later\n",
    ])
    .unwrap();
    assert_eq!(c.default.log_file.as_deref(), Some("later"));
}

// ---------------------------------------------------------------------------------------
// Interpolation
// ---------------------------------------------------------------------------------------

#[test]
fn defaults_are_interpolated_from_overridden_options() {
    let c = load("[DEFAULT]\npybasedir = /opt/openkeel\n");
    assert_eq!(c.default.bindir, "/opt/openkeel/bin");
    assert_eq!(c.default.state_path, "/opt/openkeel");
    assert_eq!(
        c.database.connection,
        "sqlite:////opt/openkeel/magnum.sqlite"
    );
    let c = load("[DEFAULT]\nstate_path = /var/lib/magnum\n");
    assert_eq!(
        c.database.connection,
        "sqlite:////var/lib/magnum/magnum.sqlite"
    );
    assert_eq!(c.default.bindir, "/usr/lib/openkeel/bin");
}

#[test]
fn references_use_the_same_group_then_default() {
    let c = load(
        "[DEFAULT]\nstate_path = /srv\nhost = node1\n\
         [oslo_concurrency]\nlock_path = $state_path/lock\n\
         [api]\nhost = 10.0.0.1\nssl_cert_file = ${host}.pem\nssl_key_file = $DEFAULT.host\n\
         [certificates]\nstorage_path = ${state_path}/certs/\n",
    );
    assert_eq!(c.oslo_concurrency.lock_path.as_deref(), Some("/srv/lock"));
    assert_eq!(
        c.api.ssl_cert_file.as_deref(),
        Some("10.0.0.1.pem"),
        "api has its own host"
    );
    assert_eq!(c.api.ssl_key_file.as_deref(), Some("node1"));
    assert_eq!(c.certificates.storage_path, "/srv/certs/");
}

#[test]
fn cross_section_references() {
    let c = load(
        "[keystone_authtoken]\nwww_authenticate_uri = http://keystone:5000/v3\n\
         [keystone_auth]\nauth_url = ${keystone_authtoken.www_authenticate_uri}\n\
         [DEFAULT]\nhost = $api.host\n\
         [api]\nhost = 192.168.1.5\nssl_cert_file = /certs/${api.port}/$conductor.topic\n",
    );
    assert_eq!(
        c.keystone_auth.auth_url.as_deref(),
        Some("http://keystone:5000/v3")
    );
    assert_eq!(c.default.host.as_deref(), Some("192.168.1.5"));
    assert_eq!(
        c.api.ssl_cert_file.as_deref(),
        Some("/certs/9511/magnum-conductor")
    );
}

#[test]
fn references_render_like_python_str() {
    let c = load(
        "[DEFAULT]\ntempdir = $debug-$rpc_response_timeout-${oslo_messaging_rabbit.kombu_reconnect_delay}-$log_dir-$password_symbols\n\
         password_symbols = a,b\n",
    );
    assert_eq!(
        c.default.tempdir.as_deref(),
        Some("False-60-1.0--['a', 'b']")
    );
}

#[test]
fn references_feed_typed_options() {
    let c = load("[api]\nmax_limit = $port\n[DEFAULT]\ndebug = ${api.enabled_ssl}\n");
    assert_eq!(c.api.max_limit, 9511);
    assert!(!c.default.debug);
    let c = load("[cors]\nallowed_origin = $max_age,https://x\n");
    assert_eq!(c.cors.allowed_origin, Some(strings(&["3600", "https://x"])));
}

#[test]
fn dollar_escapes_and_non_references() {
    let c = load("[database]\nconnection = mysql+pymysql://u:p$$w\\$rd@db/magnum?x=$ &y=$1&z=${\n");
    assert_eq!(
        c.database.connection,
        "mysql+pymysql://u:p$w$rd@db/magnum?x=$ &y=$1&z=${"
    );
}

#[test]
fn missing_references_are_errors() {
    for (text, reference) in [
        ("[DEFAULT]\ntempdir = $no_such_option/x\n", "no_such_option"),
        (
            "[DEFAULT]\ntempdir = ${no_such_group.port}\n",
            "no_such_group.port",
        ),
        (
            "[DEFAULT]\ntempdir = ${api.no_such_option}\n",
            "api.no_such_option",
        ),
        ("[DEFAULT]\ntempdir = ${API.port}\n", "API.port"),
        // `$state_path.sqlite` reads as group `state_path`, option `sqlite`, as in oslo.
        (
            "[database]\nconnection = sqlite:///$state_path.sqlite\n",
            "state_path.sqlite",
        ),
    ] {
        match load_err(text) {
            ConfigError::Interpolation {
                reference: r,
                location,
                ..
            } => {
                assert_eq!(r, reference, "{text}");
                assert_eq!(location.map(|l| l.line), Some(2));
            }
            other => panic!("{text}: unexpected {other:?}"),
        }
    }
}

#[test]
fn reference_cycles_are_errors() {
    let err = load_err("[DEFAULT]\ntempdir = $log_dir\nlog_dir = $tempdir\n");
    let all = err.errors();
    assert_eq!(all.len(), 1, "{err}");
    match all[0] {
        ConfigError::Interpolation { reason, .. } => {
            assert!(reason.contains("reference cycle"), "{reason}")
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        load_err("[DEFAULT]\ntempdir = ${tempdir}\n"),
        ConfigError::Interpolation { .. }
    ));
}

#[test]
fn a_bad_referenced_value_is_reported_once() {
    let err = load_err("[api]\nport = nope\nssl_cert_file = /c/$port\n");
    assert_eq!(err.errors().len(), 1, "{err}");
    assert!(matches!(err, ConfigError::InvalidValue { option, .. } if option == "port"));
}

// ---------------------------------------------------------------------------------------
// Secrets, sample
// ---------------------------------------------------------------------------------------

#[test]
fn debug_masks_secrets() {
    let c = load(
        "[database]\nconnection = mysql+pymysql://magnum:hunter2@db/magnum\n\
         [keystone_auth]\npassword = hunter2\n[DEFAULT]\ntransport_url = rabbit://u:hunter2@mq//\n",
    );
    let text = format!("{c:?}");
    assert!(!text.contains("hunter2"), "secret leaked");
    assert!(text.contains("connection: \"****\""));
    assert!(text.contains("slave_connection: None"));
    assert!(text.contains("topic: \"magnum-conductor\""));
}

#[test]
fn sample_lists_every_option_commented_out() {
    let sample = sample();
    for section in Config::sections() {
        assert!(
            sample.contains(&format!("\n[{}]\n", section.name))
                || sample.starts_with(&format!("[{}]\n", section.name))
        );
        for opt in section.options {
            assert!(
                sample.contains(&format!("\n#{} =", opt.name)),
                "{} missing from the sample",
                opt.name
            );
        }
    }
    assert!(sample.starts_with("[DEFAULT]\n"));
    assert!(sample.contains("#port = 9511\n"));
    assert!(sample.contains("# Minimum value: 0\n# Maximum value: 65535\n#port = 9511\n"));
    assert!(
        sample.contains("(boolean value)\n#debug = false\n") || sample.contains("#debug = false\n")
    );
    assert!(sample.contains("valued)\n#policy_dirs = policy.d\n"));
    assert!(sample.contains("#connection = sqlite:///$state_path/magnum.sqlite\n"));
    assert!(sample.contains("# Possible values:\n# keystone - Validate Keystone tokens.\n"));
}

#[test]
fn the_sample_loads_and_gives_the_defaults() {
    // Uncommenting every line of the sample must not change anything, except the options
    // whose sample shows a placeholder.
    let mut uncommented = String::new();
    for line in sample().lines() {
        match line.strip_prefix('#') {
            Some(rest)
                if !rest.starts_with(' ') && rest.contains(" =") && !rest.contains("= <None>") =>
            {
                uncommented.push_str(rest);
            }
            _ if line.starts_with('[') => uncommented.push_str(line),
            _ => {}
        }
        uncommented.push('\n');
    }
    let mut c = load(&uncommented);
    // Multi-valued options without a default show one empty value.
    assert_eq!(c.oslo_messaging_notifications.driver, strings(&[""]));
    c.oslo_messaging_notifications.driver.clear();
    assert_eq!(c, Config::default());
}

#[test]
fn checked_in_sample_is_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../etc/openkeel.conf.sample"
    );
    let checked_in = fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == sample(),
        "etc/openkeel.conf.sample is out of date; regenerate it with \
         `cargo run -q --bin openkeel-config-generator > etc/openkeel.conf.sample`"
    );
}

#[test]
fn capi_driver_groups_have_magnum_cluster_api_defaults() {
    // magnum_cluster_api/conf.py (0.38.2)
    let c = Config::default();
    assert_eq!(c.capi_client.endpoint_type, "publicURL");
    assert_eq!(c.capi_client.ca_file, None);
    assert_eq!(c.capi_client.cert_file, None);
    assert_eq!(c.capi_client.key_file, None);
    assert!(!c.capi_client.insecure);
    assert_eq!(c.capi_client.kubeconfig, "");
    assert_eq!(c.capi_client.kubeconfig_context, "");
    assert_eq!(c.capi_client.helm_binary, "helm");
    assert_eq!(
        c.auto_scaling.image_repository,
        "registry.k8s.io/autoscaling"
    );
    assert_eq!(c.manila_client.region_name, None);
    assert_eq!(c.manila_client.endpoint_type, "publicURL");
    assert_eq!(c.manila_client.api_version, "3");
    assert!(!c.manila_client.insecure);
    let c = Config::from_ini_str(
        "[capi_client]\nkubeconfig = /etc/magnum/mgmt.kubeconfig\ninsecure = true\n\
         [auto_scaling]\nimage_repository = mirror.example/autoscaling\n",
    )
    .unwrap();
    assert_eq!(c.capi_client.kubeconfig, "/etc/magnum/mgmt.kubeconfig");
    assert!(c.capi_client.insecure);
    assert_eq!(
        c.auto_scaling.image_repository,
        "mirror.example/autoscaling"
    );
}
