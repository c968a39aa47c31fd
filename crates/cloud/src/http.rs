//! The outbound HTTP client: one `reqwest` client with rustls (ring provider, as sqlx), the
//! `[keystone_auth]` session options (`cafile`, `certfile`/`keyfile`, `insecure`, `timeout`),
//! a bound on every request, and the error texts of keystoneauth and openstacksdk so that the
//! messages Magnum would put in its 403/500 answers read the same.
//!
//! Tokens travel only in headers set by the callers and are never logged here.

use crate::settings::CloudSettings;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE, USER_AGENT};
use reqwest::{Method, Url};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Largest response body read from a service (a catalogue or a long list fits easily).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// What went wrong before a response arrived: keystoneauth's connection error texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// keystoneauth `ConnectTimeout`: `Request to <url> timed out`.
    Timeout { url: String },
    /// keystoneauth `ConnectFailure`: `Unable to establish connection to <url>: <e>`.
    Connect { url: String, detail: String },
    /// `SSLError`: `SSL exception connecting to <url>: <e>`.
    Tls { url: String, detail: String },
    /// keystoneauth `UnknownConnectionError`: `Unexpected exception for <url>: <e>`.
    Other { url: String, detail: String },
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Timeout { url } => write!(f, "Request to {url} timed out"),
            TransportError::Connect { url, detail } => {
                write!(f, "Unable to establish connection to {url}: {detail}")
            }
            TransportError::Tls { url, detail } => {
                write!(f, "SSL exception connecting to {url}: {detail}")
            }
            TransportError::Other { url, detail } => {
                write!(f, "Unexpected exception for {url}: {detail}")
            }
        }
    }
}

/// A response, read whole.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or_default()
    }

    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn reason(&self) -> &'static str {
        reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("")
    }

    /// keystoneauth's `HttpError` text for a failed Keystone call:
    /// `<error.message or class message> (HTTP <status>) (Request-ID: <id>)`.
    pub fn keystoneauth_error(&self) -> String {
        let mut message = None;
        if self.content_type().starts_with("application/json") {
            let body = self.json();
            if let Some(err) = body.get("error").filter(|e| e.is_object()) {
                message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            } else if let Some(errors) = body.get("errors").and_then(Value::as_array) {
                message = errors.first().map(|e| {
                    let hdr = if errors.len() > 1 {
                        "Multiple error responses, showing first only: "
                    } else {
                        ""
                    };
                    format!(
                        "{hdr}{}",
                        e.get("title").and_then(Value::as_str).unwrap_or("None")
                    )
                });
            } else if body.is_object() {
                message = Some("Unrecognized schema in response body.".to_string());
            }
        }
        let message = message
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| keystoneauth_class_message(self.status).to_string());
        let mut out = format!("{message} (HTTP {})", self.status);
        if let Some(id) = self.header("x-openstack-request-id") {
            out.push_str(&format!(" (Request-ID: {id})"));
        }
        out
    }

    /// openstacksdk's `HttpException` text for a failed service call:
    /// `<Class>: <status>: <Client|Server> Error for url: <url>, <details>`.
    pub fn sdk_error(&self) -> String {
        let class = match self.status {
            400 => "BadRequestException",
            403 => "ForbiddenException",
            404 => "NotFoundException",
            409 => "ConflictException",
            412 => "PreconditionFailedException",
            _ => "HttpException",
        };
        let mut details = String::new();
        let ct = self.content_type();
        if !self.body.is_empty() && ct.contains("application/json") {
            match serde_json::from_slice::<Value>(&self.body) {
                Ok(content) => {
                    let mut messages: Vec<String> = match &content {
                        Value::Object(m) => m.values().filter_map(extract_message).collect(),
                        _ => Vec::new(),
                    };
                    if messages.is_empty() {
                        messages.extend(extract_message(&content));
                    }
                    details = messages.join("\n");
                }
                Err(_) => details = String::from_utf8_lossy(&self.body).into_owned(),
            }
        } else if !self.body.is_empty() && ct.contains("text/html") {
            let text = String::from_utf8_lossy(&self.body);
            let mut seen: Vec<String> = Vec::new();
            for line in text.lines() {
                let m = strip_tags(line.trim());
                if !m.is_empty() && !seen.contains(&m) {
                    seen.push(m);
                }
            }
            details = seen.join(": ");
        }
        if details.is_empty() {
            details = if self.reason().is_empty() {
                String::from_utf8_lossy(&self.body).into_owned()
            } else {
                self.reason().to_string()
            };
        }
        let source = if (400..500).contains(&self.status) {
            "Client"
        } else {
            "Server"
        };
        let mut remote = format!("{source} Error for url: {}", self.url);
        if !details.is_empty() {
            remote.push_str(", ");
            remote.push_str(&details);
        }
        format!("{class}: {}: {remote}", self.status)
    }
}

fn extract_message(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => {
            let pick = |k: &str| {
                m.get(k).filter(|x| match x {
                    Value::Null => false,
                    Value::String(s) => !s.is_empty(),
                    Value::Bool(b) => *b,
                    _ => true,
                })
            };
            pick("message")
                .or_else(|| pick("faultstring"))
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
        }
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|inner| extract_message(&inner)),
        _ => None,
    }
}

fn strip_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut depth = 0usize;
    for c in line.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// keystoneauth's per-status class messages (`keystoneauth1/exceptions/http.py`).
fn keystoneauth_class_message(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        414 => "Request-URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Requested Range Not Satisfiable",
        417 => "Expectation Failed",
        422 => "Unprocessable Entity",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        s if (500..600).contains(&s) => "HTTP Server Error",
        s if (400..500).contains(&s) => "HTTP Client Error",
        _ => "HTTP Error",
    }
}

/// The shared client.
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    timeout: Duration,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// Build the client from the session options. Fails (with a message naming the option)
    /// when a `cafile`, `certfile` or `keyfile` cannot be read.
    pub fn new(settings: &CloudSettings) -> Result<HttpClient, String> {
        let ka = &settings.keystone_auth;
        let tls = tls_config(
            ka.cafile.as_deref(),
            ka.certfile.as_deref(),
            ka.keyfile.as_deref(),
            ka.insecure,
        )?;
        let timeout = settings.request_timeout();
        let connect_timeout = settings.connect_timeout.min(timeout);
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let ua = format!("openkeel/{} openkeel-cloud", env!("CARGO_PKG_VERSION"));
        if let Ok(v) = HeaderValue::from_str(&ua) {
            headers.insert(USER_AGENT, v);
        }
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(timeout)
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::limited(5))
            .default_headers(headers)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpClient { client, timeout })
    }

    /// Send one request and read the whole response (bounded by the client's timeout).
    pub async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Response, TransportError> {
        let shown = url.as_str().to_string();
        let mut req = self.client.request(method.clone(), url.clone());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req
                .header(CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        let started = std::time::Instant::now();
        // The client's own timeout bounds the request; this outer one also bounds reading.
        let result = tokio::time::timeout(self.timeout + Duration::from_secs(1), async {
            let resp = req.send().await.map_err(|e| classify(&shown, e))?;
            let status = resp.status().as_u16();
            let final_url = resp.url().as_str().to_string();
            let headers = resp.headers().clone();
            let mut body = Vec::new();
            let mut resp = resp;
            while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&shown, e))? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(TransportError::Other {
                        url: shown.clone(),
                        detail: format!("response body larger than {MAX_BODY} bytes"),
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Response {
                status,
                url: final_url,
                headers,
                body,
            })
        })
        .await
        .unwrap_or_else(|_| Err(TransportError::Timeout { url: shown.clone() }));
        match &result {
            Ok(r) => tracing::debug!(
                method = %method,
                url = %redact_query(url),
                status = r.status,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "outbound request"
            ),
            Err(e) => {
                tracing::debug!(method = %method, url = %redact_query(url), error = %e, "outbound request failed")
            }
        }
        result
    }
}

/// The URL without its query (queries carry only names here, but keep logs short).
fn redact_query(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.to_string()
}

fn classify(url: &str, e: reqwest::Error) -> TransportError {
    let url = url.to_string();
    if e.is_timeout() {
        return TransportError::Timeout { url };
    }
    let detail = error_chain(&e);
    let lower = detail.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        TransportError::Tls { url, detail }
    } else if e.is_connect() {
        TransportError::Connect { url, detail }
    } else {
        TransportError::Other { url, detail }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !parts.contains(&t) {
            parts.push(t);
        }
        cur = s.source();
    }
    parts.join(": ")
}

/// The rustls client configuration: the ring provider; roots from `cafile` (only those, as
/// `requests` does with `verify=<cafile>`) or the built-in web roots; an optional client
/// certificate; or no verification at all when `insecure`.
fn tls_config(
    cafile: Option<&str>,
    certfile: Option<&str>,
    keyfile: Option<&str>,
    insecure: bool,
) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerifier(provider)))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match cafile.filter(|c| !c.is_empty()) {
            Some(path) => {
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                    .map_err(|e| format!("[keystone_auth] cafile {path}: {e}"))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("[keystone_auth] cafile {path}: {e}"))?;
                if certs.is_empty() {
                    return Err(format!(
                        "[keystone_auth] cafile {path}: no PEM certificate found"
                    ));
                }
                for c in certs {
                    roots
                        .add(c)
                        .map_err(|e| format!("[keystone_auth] cafile {path}: {e}"))?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        builder.with_root_certificates(roots)
    };
    let certfile = certfile.filter(|c| !c.is_empty());
    let keyfile = keyfile.filter(|c| !c.is_empty());
    let mut config = match (certfile, keyfile) {
        (Some(cert), key) => {
            let key_path = key.unwrap_or(cert);
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .map_err(|e| format!("[keystone_auth] certfile {cert}: {e}"))?
                .collect::<Result<_, _>>()
                .map_err(|e| format!("[keystone_auth] certfile {cert}: {e}"))?;
            let key = PrivateKeyDer::from_pem_file(key_path)
                .map_err(|e| format!("[keystone_auth] keyfile {key_path}: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("[keystone_auth] certfile {cert}: {e}"))?
        }
        (None, Some(key)) => {
            return Err(format!(
                "[keystone_auth] keyfile {key} is set without certfile"
            ))
        }
        (None, None) => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// `insecure = True`: accept any server certificate (signatures still checked, as rustls
/// requires a verifier to say which schemes it supports).
#[derive(Debug)]
struct NoVerifier(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, ct: &str, body: &str) -> Response {
        let mut headers = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_str(ct) {
            headers.insert("content-type", v);
        }
        Response {
            status,
            url: "http://h/v2/images".into(),
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn sdk_error_texts() {
        let r = resp(
            500,
            "application/json",
            r#"{"error": {"message": "boom", "code": 500}}"#,
        );
        assert_eq!(
            r.sdk_error(),
            "HttpException: 500: Server Error for url: http://h/v2/images, boom"
        );
        let r = resp(403, "text/plain", "");
        assert_eq!(
            r.sdk_error(),
            "ForbiddenException: 403: Client Error for url: http://h/v2/images, Forbidden"
        );
        let r = resp(
            503,
            "text/html",
            "<html><body><h1>503 Service Unavailable</h1>\nNo server</body></html>",
        );
        assert_eq!(
            r.sdk_error(),
            "HttpException: 503: Server Error for url: http://h/v2/images, 503 Service Unavailable: No server"
        );
    }

    #[test]
    fn keystoneauth_error_texts() {
        let mut r = resp(
            401,
            "application/json",
            r#"{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}"#,
        );
        r.headers
            .insert("x-openstack-request-id", HeaderValue::from_static("req-1"));
        assert_eq!(
            r.keystoneauth_error(),
            "The request you have made requires authentication. (HTTP 401) (Request-ID: req-1)"
        );
        assert_eq!(
            resp(404, "text/plain", "x").keystoneauth_error(),
            "Not Found (HTTP 404)"
        );
    }

    #[test]
    fn transport_texts() {
        assert_eq!(
            TransportError::Timeout {
                url: "http://x/".into()
            }
            .to_string(),
            "Request to http://x/ timed out"
        );
    }

    #[test]
    fn builds_with_default_roots_and_insecure() {
        let mut s = CloudSettings::default();
        assert!(HttpClient::new(&s).is_ok());
        s.keystone_auth.insecure = true;
        assert!(HttpClient::new(&s).is_ok());
        s.keystone_auth.insecure = false;
        s.keystone_auth.cafile = Some("/nonexistent/ca.pem".into());
        let err = HttpClient::new(&s).err().unwrap_or_default();
        assert!(
            err.starts_with("[keystone_auth] cafile /nonexistent/ca.pem"),
            "{err}"
        );
    }
}
