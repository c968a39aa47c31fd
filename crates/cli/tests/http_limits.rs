//! Hostile clients against the API's listener (the all-in-one in-process, small limits set
//! in `[openkeel]`): a body declared or sent larger than `api_max_body_size` is answered 413
//! with Magnum's error envelope before it is read; a body that trickles is answered 408 after
//! `api_body_read_timeout`; headers that trickle, and a kept-alive connection left idle, are
//! closed after `api_header_read_timeout`; oversized headers are answered 431; beyond
//! `api_max_connections` a connection waits until one closes. Each case fails on a server
//! without the limit (the request would hang, be read whole, or be answered at once).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/api.rs"]
mod api;

use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMITS: &str = "[openkeel]\n\
    api_max_body_size = 65536\n\
    api_body_read_timeout = 2\n\
    api_header_read_timeout = 2\n\
    api_max_header_size = 8192\n\
    api_max_connections = 4\n";

/// Read until the server closes the connection (or `within` passes): what it sent, and
/// whether it closed.
async fn read_to_close(s: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&all).into_owned(), false),
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&all).into_owned(), true),
            Ok(Ok(n)) => all.extend_from_slice(&buf[..n]),
        }
    }
}

fn status_of(response: &str) -> Option<u16> {
    response.split(' ').nth(1)?.parse().ok()
}

fn body_of(response: &str) -> serde_json::Value {
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or(serde_json::Value::Null)
}

const POST_HEAD: &str = "POST /v1/clustertemplates HTTP/1.1\r\nHost: t\r\n\
    Content-Type: application/json\r\nAccept: application/json\r\nOpenStack-API-Version: container-infra latest\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients_meet_the_limits() {
    let (running, addr) = api::server_with(LIMITS).await;

    // A body declared at 1 GiB: 413 at once, from the headers alone.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("{POST_HEAD}Content-Length: 1073741824\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let (r, _) = read_to_close(&mut s, Duration::from_secs(1)).await;
    assert_eq!(status_of(&r), Some(413), "{r}");
    let e = &body_of(&r)["errors"][0];
    assert_eq!(e["status"], 413, "{r}");
    assert!(
        e["detail"].as_str().unwrap_or_default().contains("65536"),
        "{r}"
    );

    // A chunked body with no declared length, streamed without end: 413 once the limit is
    // passed, while the client is still sending (about 1 MiB of 1 GiB).
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("{POST_HEAD}Transfer-Encoding: chunked\r\n\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 16384, "x".repeat(16384));
    let mut sent = 0usize;
    let mut answer = String::new();
    let (mut rd, mut wr) = s.into_split();
    let reader = tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        let mut got = Vec::new();
        while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), rd.read(&mut buf)).await
        {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            if got.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    });
    while sent < (1 << 30) && !reader.is_finished() {
        if wr.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
        sent += 16384;
        if sent > 64 << 20 {
            break;
        }
    }
    if let Ok(a) = reader.await {
        answer = a;
    }
    assert_eq!(status_of(&answer), Some(413), "{answer}");
    assert!(
        sent < 64 << 20,
        "the server read {sent} bytes before refusing"
    );

    // A body that trickles: 408 after api_body_read_timeout (2 s), not a hung request.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!("{POST_HEAD}Content-Length: 100\r\n\r\n{{\"name\": ");
    s.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (r, _) = read_to_close(&mut s, Duration::from_secs(10)).await;
    assert_eq!(status_of(&r), Some(408), "{r}");
    assert_eq!(body_of(&r)["errors"][0]["status"], 408, "{r}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );

    // Headers that trickle, a byte every 300 ms: closed after api_header_read_timeout.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let started = Instant::now();
    let mut closed = false;
    for b in "GET / HTTP/1.1\r\nHost: t\r\nX-Slow: "
        .bytes()
        .chain(std::iter::repeat(b'a'))
    {
        if s.write_all(&[b]).await.is_err() {
            closed = true;
            break;
        }
        let mut probe = [0u8; 64];
        // Anything but "no answer yet" (end of stream, a reset, a 408) ends the connection.
        if tokio::time::timeout(Duration::from_millis(300), s.read(&mut probe))
            .await
            .is_ok()
        {
            closed = true;
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still open");
    }
    assert!(closed, "the trickling connection was not closed");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );

    // A kept-alive connection left idle after a request: closed after the same timeout.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert_eq!(status_of(&String::from_utf8_lossy(&buf[..n])), Some(200));
    let idle_from = Instant::now();
    let (_, closed) = read_to_close(&mut s, Duration::from_secs(10)).await;
    assert!(closed, "the idle connection was kept");
    assert!(
        idle_from.elapsed() < Duration::from_secs(6),
        "{:?}",
        idle_from.elapsed()
    );

    // Headers over api_max_header_size (8 KiB): 431.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let big = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "b".repeat(16 * 1024)
    );
    let _ = s.write_all(big.as_bytes()).await;
    let (r, _) = read_to_close(&mut s, Duration::from_secs(5)).await;
    assert_eq!(status_of(&r), Some(431), "{r}");

    // api_max_connections = 4: with four connections open and idle, a fifth is answered only
    // once one of them goes (here: when the four are closed by the client).
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fifth = TcpStream::connect(addr).await.unwrap();
    fifth
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 4096];
    let early = tokio::time::timeout(Duration::from_millis(800), fifth.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "the fifth connection was served beside four"
    );
    drop(idle);
    let (r, _) = read_to_close(&mut fifth, Duration::from_secs(5)).await;
    assert_eq!(status_of(&r), Some(200), "{r}");

    running.stop().await.unwrap();
}

/// The same limits set by a uWSGI ini, as kolla-ansible and OpenStack-Helm write it
/// (`buffer-size`, `limit-post`, `socket-timeout`), through the `uwsgi` program: each applies
/// in place of its `[openkeel] api_*` option (which would allow 64 KiB of headers, 4 MiB of
/// body and 30 s for the headers).
#[tokio::test]
async fn a_uwsgi_ini_sets_the_same_limits() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("magnum.conf");
    let db = dir.path().join("magnum.db");
    std::fs::write(
        &conf,
        format!(
            "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:1//\n\
             [database]\nconnection = sqlite:///{}\n[openkeel]\nauth_strategy = noauth\n",
            db.display()
        ),
    )
    .unwrap();
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_openkeel-db-manage"))
        .arg("--config-file")
        .arg(&conf)
        .arg("upgrade")
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    let port = openkeel_tests::magnum::free_port();
    let ini = dir.path().join("magnum-api-uwsgi.ini");
    std::fs::write(
        &ini,
        format!(
            "[uwsgi]\nhttp = 127.0.0.1:{port}\nbuffer-size = 2048\nlimit-post = 2048\n\
             socket-timeout = 2\nmodule = magnum.wsgi.api:application\n\
             pyargv = --config-file {}\n",
            conf.display()
        ),
    )
    .unwrap();
    let mut uwsgi = tokio::process::Command::new(env!("CARGO_BIN_EXE_uwsgi"))
        .arg("--ini")
        .arg(&ini)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let started = Instant::now();
    while TcpStream::connect(addr).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "uwsgi did not listen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Headers over buffer-size: 431.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "a".repeat(3000)
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let (r, _) = read_to_close(&mut s, Duration::from_secs(5)).await;
    assert_eq!(status_of(&r), Some(431), "{r}");

    // A body over limit-post: 413 with Magnum's envelope.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let body = format!("{{\"name\": \"{}\"}}", "a".repeat(3000));
    let req = format!(
        "POST /v1/clustertemplates HTTP/1.1\r\nHost: t\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let (r, _) = read_to_close(&mut s, Duration::from_secs(5)).await;
    assert_eq!(status_of(&r), Some(413), "{r}");
    assert!(
        body_of(&r)["errors"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("2048"),
        "{r}"
    );

    // A kept-alive connection left idle: closed after socket-timeout (2 s), not 30 s.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let idle = Instant::now();
    let (_, closed) = read_to_close(&mut s, Duration::from_secs(10)).await;
    assert!(closed, "an idle connection was kept");
    assert!(
        idle.elapsed() < Duration::from_secs(8),
        "{:?}",
        idle.elapsed()
    );

    // Within the limits the API answers.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (r, _) = read_to_close(&mut s, Duration::from_secs(5)).await;
    assert_eq!(status_of(&r), Some(200), "{r}");
    uwsgi.kill().await.ok();
}
