//! The request body's limits (`[openkeel] api_max_body_size`, `api_body_read_timeout`):
//! a body is read only up to its size limit and only until its deadline, so neither a huge
//! body nor a client that sends it a byte at a time holds memory or a task for long. Magnum
//! reads whatever arrives, for as long as it takes.

use axum::body::{Body, Bytes, HttpBody};
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// How much of a request body is read, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub read_timeout: Duration,
}

impl Default for BodyLimits {
    /// The defaults of the options: 4 MiB, 60 s.
    fn default() -> Self {
        BodyLimits {
            max_bytes: 4 * 1024 * 1024,
            read_timeout: Duration::from_secs(60),
        }
    }
}

/// Why a body was not read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyRefused {
    #[error("The request body is larger than the {0} bytes this server accepts.")]
    TooLarge(usize),
    #[error("The request body did not arrive within {0} seconds.")]
    TooSlow(u64),
}

/// `body` with `limits` applied.
pub fn bounded(body: Body, limits: BodyLimits) -> Body {
    Body::new(Bounded {
        inner: body,
        left: limits.max_bytes,
        max: limits.max_bytes,
        timeout: limits.read_timeout,
        deadline: None,
    })
}

struct Bounded {
    inner: Body,
    left: usize,
    max: usize,
    timeout: Duration,
    /// Started at the first poll: the time counts from when the handler reads the body.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl HttpBody for Bounded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let timeout = this.timeout;
        let deadline = this
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(axum::Error::new(BodyRefused::TooSlow(
                timeout.as_secs(),
            )))));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if data.len() > this.left {
                        this.left = 0;
                        return Poll::Ready(Some(Err(axum::Error::new(BodyRefused::TooLarge(
                            this.max,
                        )))));
                    }
                    this.left -= data.len();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The limit a request's `Content-Length` already exceeds, if it does: refused before any
/// of the body is read.
pub fn declared_too_large(headers: &http::HeaderMap, limits: BodyLimits) -> Option<BodyRefused> {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    (declared > limits.max_bytes as u64).then_some(BodyRefused::TooLarge(limits.max_bytes))
}

/// The refusal behind a body-reading error, if the limits caused it.
pub fn refusal_of(e: &axum::Error) -> Option<BodyRefused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(r) = err.downcast_ref::<BodyRefused>() {
            return Some(*r);
        }
        source = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, secs: u64) -> BodyLimits {
        BodyLimits {
            max_bytes: max,
            read_timeout: Duration::from_secs(secs),
        }
    }

    #[tokio::test]
    async fn a_body_within_the_limit_is_read_whole() {
        let b = bounded(Body::from("0123456789"), limits(10, 5));
        let bytes = axum::body::to_bytes(b, usize::MAX).await.ok();
        assert_eq!(bytes.as_deref(), Some(&b"0123456789"[..]));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused() {
        let b = bounded(Body::from("0123456789x"), limits(10, 5));
        let e = axum::body::to_bytes(b, usize::MAX).await.err();
        assert_eq!(
            e.as_ref().and_then(refusal_of),
            Some(BodyRefused::TooLarge(10))
        );
    }

    #[tokio::test]
    async fn a_body_that_does_not_arrive_in_time_is_refused() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, axum::Error>>(1);
        let stream = http_body_util_stream(rx);
        let b = bounded(stream, limits(100, 1));
        let sender = tokio::spawn(async move {
            let _ = tx.send(Ok(Frame::data(Bytes::from_static(b"{")))).await;
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(tx);
        });
        let e = axum::body::to_bytes(b, usize::MAX).await.err();
        assert_eq!(
            e.as_ref().and_then(refusal_of),
            Some(BodyRefused::TooSlow(1))
        );
        sender.abort();
    }

    /// A body fed from a channel.
    fn http_body_util_stream(
        rx: tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, axum::Error>>,
    ) -> Body {
        struct Chan(tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, axum::Error>>);
        impl HttpBody for Chan {
            type Data = Bytes;
            type Error = axum::Error;
            fn poll_frame(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
                self.get_mut().0.poll_recv(cx)
            }
        }
        Body::new(Chan(rx))
    }

    #[test]
    fn a_declared_length_over_the_limit_is_refused_at_once() {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::CONTENT_LENGTH, "1073741824".parse().unwrap());
        assert_eq!(
            declared_too_large(&h, limits(4096, 5)),
            Some(BodyRefused::TooLarge(4096))
        );
        h.insert(http::header::CONTENT_LENGTH, "4096".parse().unwrap());
        assert_eq!(declared_too_large(&h, limits(4096, 5)), None);
    }
}
