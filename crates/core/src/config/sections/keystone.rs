//! Keystone: Magnum's service credentials (`[keystone_auth]`) and the token-validation
//! middleware (`[keystone_authtoken]`).

use super::prelude::*;

config_section! {
    /// Service credentials Magnum uses to call Keystone and other services (a keystoneauth
    /// password plugin and session).
    KeystoneAuthSection = "keystone_auth";
    from "magnum.conf" {
        /// Authentication type to load. Magnum sets the default to `password`.
        auth_type: String = string("password").deprecated(&[dep("auth_plugin")]);

        /// Config Section from which to load plugin specific options
        auth_section: Option<String> = string_unset();

        /// Authentication URL
        auth_url: Option<String> = string_unset();

        /// Scope for system operations
        system_scope: Option<String> = string_unset();

        /// Domain ID to scope to
        domain_id: Option<String> = string_unset();

        /// Domain name to scope to
        domain_name: Option<String> = string_unset();

        /// Project ID to scope to
        project_id: Option<String> = string_unset()
            .deprecated(&[dep("tenant-id"), dep("tenant_id")]);

        /// Project name to scope to
        project_name: Option<String> = string_unset()
            .deprecated(&[dep("tenant-name"), dep("tenant_name")]);

        /// Domain ID containing project
        project_domain_id: Option<String> = string_unset();

        /// Domain name containing project
        project_domain_name: Option<String> = string_unset();

        /// ID of the trust to use as a trustee use
        trust_id: Option<String> = string_unset();

        /// Optional domain ID to use with v3 and v2 parameters. It will be used for both the
        /// user and project domain in v3 and ignored in v2 authentication.
        default_domain_id: Option<String> = string_unset();

        /// Optional domain name to use with v3 API and v2 parameters. It will be used for both
        /// the user and project domain in v3 and ignored in v2 authentication.
        default_domain_name: Option<String> = string_unset();

        /// User id
        user_id: Option<String> = string_unset();

        /// Username
        username: Option<String> = string_unset().deprecated(&[dep("user-name"), dep("user_name")]);

        /// User's domain id
        user_domain_id: Option<String> = string_unset();

        /// User's domain name
        user_domain_name: Option<String> = string_unset();

        /// User's password
        password: Option<String> = string_unset().secret();
    }
    from "keystoneauth1.session" {
        /// PEM encoded Certificate Authority to use when verifying HTTPs connections.
        cafile: Option<String> = string_unset();

        /// PEM encoded client certificate cert file
        certfile: Option<String> = string_unset();

        /// PEM encoded client certificate key file
        keyfile: Option<String> = string_unset();

        /// Verify HTTPS connections.
        insecure: bool = boolean(false);

        /// Timeout value for http requests
        timeout: Option<f64> = float_unset();

        /// Collect per-API call timing information.
        collect_timing: bool = boolean(false);

        /// Log requests to multiple loggers.
        split_loggers: bool = boolean(false);

        /// An OpenSSL cipher string to set the allowed ciphers for TLS connections. If not
        /// specified, the default ciphers from the underlying OpenSSL library are used.
        tls_ciphers: Option<String> = string_unset();

        /// The minimum TLS version to require for TLS connections. When not specified, the
        /// behavior is undefined and defers to the system cryptographic policy.
        tls_min_version: Option<String> = string_unset()
            .choices(&["None", "1.2", "1.3"])
            .choice_help(&[
                "None - the absence of a setting, defers to the system cryptographic policy",
                "TLS 1.2 - enforce minimum TLS version 1.2",
                "TLS 1.3 - enforce minimum TLS version 1.3",
            ]);
    }
}

config_section! {
    /// Token validation for the API (keystonemiddleware auth_token), including the auth plugin
    /// options it loads at run time.
    KeystoneAuthtokenSection = "keystone_authtoken";
    from "keystonemiddleware.auth_token" {
        /// Complete "public" Identity API endpoint. This endpoint should not be an "admin"
        /// endpoint, as it should be accessible by all end users. Unauthenticated clients are
        /// redirected to this endpoint to authenticate. Although this endpoint should ideally
        /// be unversioned, client support in the wild varies.
        www_authenticate_uri: Option<String> = string_unset();

        /// API version of the Identity API endpoint.
        auth_version: Option<String> = string_unset();

        /// Interface to use for the Identity API endpoint. Valid values are "public",
        /// "internal" (default) or "admin".
        interface: String = string("internal");

        /// Do not handle authorization requests within the middleware, but delegate the
        /// authorization decision to downstream WSGI components.
        delay_auth_decision: bool = boolean(false);

        /// Request timeout value for communicating with Identity API server.
        http_connect_timeout: Option<i64> = integer_unset();

        /// How many times are we trying to reconnect when communicating with Identity API
        /// Server.
        http_request_max_retries: i64 = integer(3);

        /// Request environment key where the Swift cache object is stored. When auth_token
        /// middleware is deployed with a Swift cache, use this option to have the middleware
        /// share a caching backend with swift. Otherwise, use the ``memcached_servers`` option
        /// instead.
        cache: Option<String> = string_unset();

        /// Required if identity server requires client certificate
        certfile: Option<String> = string_unset();

        /// Required if identity server requires client certificate
        keyfile: Option<String> = string_unset();

        /// A PEM encoded Certificate Authority to use when verifying HTTPs connections.
        /// Defaults to system CAs.
        cafile: Option<String> = string_unset();

        /// Verify HTTPS connections.
        insecure: bool = boolean(false);

        /// The region in which the identity server can be found.
        region_name: Option<String> = string_unset();

        /// Optionally specify a list of memcached server(s) to use for caching. If left
        /// undefined, tokens will instead be cached in-process.
        memcached_servers: Option<Vec<String>> = list_unset()
            .deprecated(&[dep("memcache_servers")]);

        /// In order to prevent excessive effort spent validating tokens, the middleware caches
        /// previously-seen tokens for a configurable duration (in seconds). Set to -1 to
        /// disable caching completely.
        token_cache_time: i64 = integer(300);

        /// (Optional) If defined, indicate whether token data should be authenticated or
        /// authenticated and encrypted. If MAC, token data is authenticated (with HMAC) in the
        /// cache. If ENCRYPT, token data is encrypted and authenticated in the cache. If the
        /// value is not one of these options or empty, auth_token will raise an exception on
        /// initialization.
        memcache_security_strategy: String = string("None")
            .choices(&["None", "MAC", "ENCRYPT"])
            .ignore_case();

        /// (Optional, mandatory if memcache_security_strategy is defined) This string is used
        /// for key derivation.
        memcache_secret_key: Option<String> = string_unset().secret();

        /// (Optional) Global toggle for TLS usage when comunicating with the caching servers.
        memcache_tls_enabled: bool = boolean(false);

        /// (Optional) Path to a file of concatenated CA certificates in PEM format necessary to
        /// establish the caching server's authenticity. If tls_enabled is False, this option is
        /// ignored.
        memcache_tls_cafile: Option<String> = string_unset();

        /// (Optional) Path to a single file in PEM format containing the client's certificate
        /// as well as any number of CA certificates needed to establish the certificate's
        /// authenticity. This file is only required when client side authentication is
        /// necessary. If tls_enabled is False, this option is ignored.
        memcache_tls_certfile: Option<String> = string_unset();

        /// (Optional) Path to a single file containing the client's private key in. Otherwhise
        /// the private key will be taken from the file specified in tls_certfile. If
        /// tls_enabled is False, this option is ignored.
        memcache_tls_keyfile: Option<String> = string_unset();

        /// (Optional) Set the available ciphers for sockets created with the TLS context. It
        /// should be a string in the OpenSSL cipher list format. If not specified, all OpenSSL
        /// enabled ciphers will be available.
        memcache_tls_allowed_ciphers: Option<String> = string_unset();

        /// (Optional) Number of seconds memcached server is considered dead before it is tried
        /// again.
        memcache_pool_dead_retry: i64 = integer(300);

        /// (Optional) Maximum total number of open connections to every memcached server.
        memcache_pool_maxsize: i64 = integer(10);

        /// (Optional) Socket timeout in seconds for communicating with a memcached server.
        memcache_pool_socket_timeout: i64 = integer(3);

        /// (Optional) Number of seconds a connection to memcached is held unused in the pool
        /// before it is closed.
        memcache_pool_unused_timeout: i64 = integer(60);

        /// (Optional) Number of seconds that an operation will wait to get a memcached client
        /// connection from the pool.
        memcache_pool_conn_get_timeout: i64 = integer(10);

        /// (Optional) Use the advanced (eventlet safe) memcached client pool.
        memcache_use_advanced_pool: bool = boolean(true);

        /// (Optional) Indicate whether to set the X-Service-Catalog header. If False,
        /// middleware will not ask for service catalog on token validation and will not set the
        /// X-Service-Catalog header.
        include_service_catalog: bool = boolean(true);

        /// Used to control the use and type of token binding. Can be set to: "disabled" to not
        /// check token binding. "permissive" (default) to validate binding information if the
        /// bind type is of a form known to the server and ignore it if not. "strict" like
        /// "permissive" but if the bind type is unknown the token will be rejected. "required"
        /// any form of token binding is needed to be allowed. Finally the name of a binding
        /// method that must be present in tokens.
        enforce_token_bind: String = string("permissive");

        /// A choice of roles that must be present in a service token. Service tokens are
        /// allowed to request that an expired token can be used and so this check should
        /// tightly control that only actual services should be sending this token. Roles here
        /// are applied as an ANY check so any role in this list must be present. For backwards
        /// compatibility reasons this currently only affects the allow_expired check.
        service_token_roles: Vec<String> = list(&["service"]);

        /// When set to True, service tokens must contain a role from the service_token_roles
        /// list to be considered valid. This prevents end-user tokens from being used as
        /// service tokens and ensures proper service-to-service authentication. Setting this to
        /// False is NOT RECOMMENDED as it allows any valid token to be used as a service token,
        /// which can bypass access-rule checks and weaken composite-auth protections.
        service_token_roles_required: bool = boolean(true);

        /// The name or type of the service as it appears in the service catalog. This is used
        /// to validate tokens that have restricted access rules.
        service_type: Option<String> = string_unset();

        /// Enable the SASL(Simple Authentication and Security Layer) if the SASL_enable is
        /// true, else disable.
        memcache_sasl_enabled: bool = boolean(false);

        /// the user name for the SASL
        memcache_username: Option<String> = string_unset();

        /// the username password for SASL
        memcache_password: Option<String> = string_unset().secret();

        /// Authentication type to load
        auth_type: Option<String> = string_unset().deprecated(&[dep("auth_plugin")]);

        /// Config Section from which to load plugin specific options
        auth_section: Option<String> = string_unset();
    }
    from "keystoneauth1.password" {
        /// Authentication URL
        auth_url: Option<String> = string_unset();

        /// Scope for system operations
        system_scope: Option<String> = string_unset();

        /// Domain ID to scope to
        domain_id: Option<String> = string_unset();

        /// Domain name to scope to
        domain_name: Option<String> = string_unset();

        /// Project ID to scope to
        project_id: Option<String> = string_unset()
            .deprecated(&[dep("tenant-id"), dep("tenant_id")]);

        /// Project name to scope to
        project_name: Option<String> = string_unset()
            .deprecated(&[dep("tenant-name"), dep("tenant_name")]);

        /// Domain ID containing project
        project_domain_id: Option<String> = string_unset();

        /// Domain name containing project
        project_domain_name: Option<String> = string_unset();

        /// ID of the trust to use as a trustee use
        trust_id: Option<String> = string_unset();

        /// Optional domain ID to use with v3 and v2 parameters. It will be used for both the
        /// user and project domain in v3 and ignored in v2 authentication.
        default_domain_id: Option<String> = string_unset();

        /// Optional domain name to use with v3 API and v2 parameters. It will be used for both
        /// the user and project domain in v3 and ignored in v2 authentication.
        default_domain_name: Option<String> = string_unset();

        /// User id
        user_id: Option<String> = string_unset();

        /// Username
        username: Option<String> = string_unset().deprecated(&[dep("user-name"), dep("user_name")]);

        /// User's domain id
        user_domain_id: Option<String> = string_unset();

        /// User's domain name
        user_domain_name: Option<String> = string_unset();

        /// User's password
        password: Option<String> = string_unset().secret();
    }
}
