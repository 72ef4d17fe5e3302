//! The HTTP/1 accept loop with bounded resources (hyper's server builder, since `axum::serve`
//! sets no timeouts): at most `max_connections` at once (further clients wait in the listen
//! backlog, so a slot freed by a timeout goes to them), request headers must arrive within
//! `header_timeout`, and a connection on which nothing is read or written for `idle_timeout`
//! is closed, whether it stalled before its first byte, inside a request, or between
//! keep-alive requests. (The body's own deadline is the webhook handler's.)

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::time::{Instant, Sleep};

#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// Serves `router` on `listener` until `stop` turns true; then stops accepting and lets every
/// open connection finish its request (the caller bounds how long it waits for this future).
pub async fn serve(listener: TcpListener, router: Router, limits: ConnLimits, mut stop: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut open = tokio::task::JoinSet::new();
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            _ = stopped(&mut stop) => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped(&mut stop) => break,
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!("accepting a connection failed: {err}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(router.clone());
        let mut stop = stop.clone();
        while open.try_join_next().is_some() {}
        open.spawn(async move {
            let io = TokioIo::new(IdleTimeout::new(stream, limits.idle_timeout));
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(io, service);
            tokio::pin!(conn);
            let result = tokio::select! {
                result = conn.as_mut() => result,
                _ = stopped(&mut stop) => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(err) = result {
                tracing::debug!("connection closed: {err}");
            }
            drop(slot);
        });
    }
    while open.join_next().await.is_some() {}
}

/// Resolves once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// A stream that fails with `TimedOut` once neither a read nor a write made progress for
/// `idle`; hyper then closes the connection.
struct IdleTimeout<S> {
    inner: S,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<S> IdleTimeout<S> {
    fn new(inner: S, idle: Duration) -> IdleTimeout<S> {
        IdleTimeout { inner, idle, deadline: Box::pin(tokio::time::sleep(idle)) }
    }

    fn progressed(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// Pending work either waits on, or (past the deadline) fails the connection.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.deadline.as_mut().poll(cx).is_ready()
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "connection idle for too long")
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleTimeout<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = &mut *self;
        match Pin::new(&mut me.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                me.progressed();
                Poll::Ready(result)
            }
            Poll::Pending if me.expired(cx) => Poll::Ready(Err(timed_out())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleTimeout<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let me = &mut *self;
        match Pin::new(&mut me.inner).poll_write(cx, buf) {
            Poll::Ready(result) => {
                me.progressed();
                Poll::Ready(result)
            }
            Poll::Pending if me.expired(cx) => Poll::Ready(Err(timed_out())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_silent_peer_is_timed_out_and_a_talking_one_is_not() {
        let (client, server) = tokio::io::duplex(64);
        let mut io = IdleTimeout::new(server, Duration::from_millis(100));
        let mut client = client;
        tokio::spawn(async move {
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_millis(60)).await;
                tokio::io::AsyncWriteExt::write_all(&mut client, b"x").await.unwrap();
            }
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(client);
        });
        let started = std::time::Instant::now();
        let mut got = Vec::new();
        let mut byte = [0u8; 1];
        let err = loop {
            match io.read(&mut byte).await {
                Ok(n) => got.extend_from_slice(&byte[..n]),
                Err(err) => break err,
            }
        };
        assert_eq!(got, b"xxx", "bytes 60 ms apart keep the connection");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }
}
