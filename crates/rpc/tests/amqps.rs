//! AMQPS: `[oslo_messaging_rabbit] ssl = true` with `ssl_ca_file`, `ssl_cert_file` and
//! `ssl_key_file`.
//! - Against the test RabbitMQ's own TLS listener (`tests/services/lib.sh`), which requires a
//!   client certificate from its test CA: the client identity is really presented.
//! - Through a TLS-terminating proxy (rustls, a CA made here) in front of the plain
//!   listener: trust of the configured CA only, and refusal of a broker it did not sign.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::ErrorKind;
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::server::RpcServer;
use openkeel_rpc::oslo::RabbitSettings;
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

struct Echo;

#[async_trait]
impl Dispatcher for Echo {
    async fn dispatch(
        &self,
        _ctx: RequestContext,
        _method: &str,
        args: Args,
    ) -> Result<Value, RemoteFailure> {
        Ok(Value::Object(args))
    }
}

/// A CA and a `localhost` server certificate it signed: (CA PEM, server cert DER, key DER).
fn pki() -> (String, Vec<u8>, Vec<u8>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.der().to_vec(), key.serialize_der())
}

/// TLS on `127.0.0.1:<port>` → plain TCP to `target`.
async fn tls_proxy(target: String, cert: Vec<u8>, key: Vec<u8>) -> u16 {
    use tokio_rustls::rustls;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(cert)],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let target = target.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(target).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn amqps_with_the_configured_ca_works_and_an_untrusted_broker_is_refused() {
    let Some(amqp) = openkeel_tests::rabbit_url() else {
        return;
    };
    let rest = amqp.strip_prefix("amqp://").unwrap();
    let (creds, hostpath) = rest.rsplit_once('@').unwrap();
    let (target, _) = hostpath.split_once('/').unwrap_or((hostpath, ""));
    let (ca_pem, cert, key) = pki();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let port = tls_proxy(target.to_string(), cert, key).await;

    let url = format!("rabbit://{creds}@localhost:{port}/");
    let settings = |ca: Option<String>, timeout: u64| {
        let mut s = RabbitSettings::for_url(&url, "openkeel-test").unwrap();
        s.ssl = true;
        s.ssl_ca_file = ca;
        s.rpc_response_timeout = Duration::from_secs(timeout);
        s.retry_interval = Duration::from_millis(200);
        s.interval_max = Duration::from_secs(1);
        Arc::new(s)
    };
    let topic = format!("okt-tls-{}", uuid::Uuid::new_v4().simple());
    let trusted = settings(Some(ca_file.display().to_string()), 20);
    let server = RpcServer::start(trusted.clone(), topic.clone(), "tls", Arc::new(Echo));
    let caller = AmqpCaller::new(trusted, topic.clone());
    let ctx = RequestContext {
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    };
    let mut a = Args::new();
    a.insert("over".into(), json!("tls"));
    // The server may still be declaring its queue: retry the first call briefly.
    let mut result = None;
    for _ in 0..20 {
        match caller.call(&ctx, "echo", a.clone()).await {
            Ok(v) => {
                result = Some(v);
                break;
            }
            Err(e) if e.kind() == ErrorKind::MessagingTimeout => continue,
            Err(e) => panic!("call over AMQPS failed: {e:?}"),
        }
    }
    assert_eq!(result, Some(Value::Object(a)));

    // Without the CA the broker's certificate is not trusted: no connection, a 503.
    let untrusted = AmqpCaller::new(settings(None, 2), topic);
    let e = untrusted.cast(&ctx, "echo", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable);
    server.stop().await;
}

/// The real broker's own TLS listener (`tests/services/lib.sh`: `verify_peer`,
/// `fail_if_no_peer_cert`): OpenKeel presents `ssl_cert_file` / `ssl_key_file` as its client
/// identity, also with the key inside the certificate file (Python's `load_cert_chain`
/// without a key file); without an identity the broker refuses the connection, and a key
/// without a certificate is a configuration error, not a connection without identity.
#[tokio::test]
async fn the_real_broker_requiring_a_client_certificate_accepts_the_configured_one() {
    let Some((url, dir)) = openkeel_tests::rabbit_tls() else {
        return;
    };
    let url = url.replacen("amqp://", "rabbit://", 1);
    let path = |f: &str| dir.join(f).display().to_string();
    let scratch = tempfile::tempdir().unwrap();
    let combined = scratch.path().join("client-with-key.pem");
    let mut both = std::fs::read(dir.join("client.pem")).unwrap();
    both.extend(std::fs::read(dir.join("client.key")).unwrap());
    std::fs::write(&combined, both).unwrap();

    let settings = |cert: Option<String>, key: Option<String>, timeout: u64| {
        let mut s = RabbitSettings::for_url(&url, "openkeel-test").unwrap();
        s.ssl = true;
        s.ssl_ca_file = Some(path("ca.pem"));
        s.ssl_cert_file = cert;
        s.ssl_key_file = key;
        s.rpc_response_timeout = Duration::from_secs(timeout);
        s.retry_interval = Duration::from_millis(200);
        s.interval_max = Duration::from_secs(1);
        Arc::new(s)
    };
    let ctx = RequestContext {
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    };
    let topic = format!("okt-mtls-{}", uuid::Uuid::new_v4().simple());
    let identity = settings(Some(path("client.pem")), Some(path("client.key")), 20);
    let server = RpcServer::start(identity.clone(), topic.clone(), "mtls", Arc::new(Echo));
    assert!(
        server.wait_listening(Duration::from_secs(20)).await,
        "the RPC server listens over AMQPS with its client certificate"
    );

    let mut a = Args::new();
    a.insert("over".into(), json!("mutual tls"));
    for (what, s) in [
        ("certificate and key files", identity.clone()),
        (
            "the key inside the certificate file",
            settings(Some(combined.display().to_string()), None, 20),
        ),
    ] {
        let caller = AmqpCaller::new(s, topic.clone());
        let got = caller.call(&ctx, "echo", a.clone()).await;
        assert_eq!(got.ok(), Some(Value::Object(a.clone())), "{what}");
    }

    // No client certificate: the broker ends the handshake ("certificate required").
    let anonymous = AmqpCaller::new(settings(None, None, 2), topic.clone());
    let e = anonymous.cast(&ctx, "echo", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable, "{e:?}");

    // A key file without a certificate file: refused before any connection is tried.
    let keyless = AmqpCaller::new(settings(None, Some(path("client.key")), 2), topic);
    let e = keyless.cast(&ctx, "echo", Args::new()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServiceUnavailable, "{e:?}");
    server.stop().await;
}
