//! Bounds on reading HTTP answers from GitHub and its storage redirects: bytes per answer and
//! per list, a total time per download, and a minimum rate, so a server that trickles is cut
//! off instead of holding a collection open (issue 24 item 5).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How much one answer may hold and how slowly a download may arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferLimits {
    /// Longest time a download's body may take, from its first byte to its last.
    pub download_timeout: Duration,
    /// The minimum-rate rule: every `rate_window` of a download must bring at least
    /// `min_window_bytes` (the last, partial window is not judged).
    pub rate_window: Duration,
    pub min_window_bytes: u64,
    /// Largest body of one API answer (a JSON document).
    pub max_answer_bytes: u64,
    /// Largest sum of the pages of one list endpoint.
    pub max_list_bytes: u64,
}

impl Default for TransferLimits {
    fn default() -> Self {
        TransferLimits {
            download_timeout: Duration::from_secs(600),
            rate_window: Duration::from_secs(30),
            min_window_bytes: 256 << 10,
            max_answer_bytes: 32 << 20,
            max_list_bytes: 128 << 20,
        }
    }
}

/// Why reading a body stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransferCut {
    #[error("the download did not finish within {0:?}")]
    TooLong(Duration),
    #[error("fewer than {bytes} bytes arrived in {window:?} (the server trickles); the download was cut off")]
    TooSlow { bytes: u64, window: Duration },
    #[error("the answer exceeds {0} bytes")]
    TooLarge(u64),
    #[error("{0}")]
    Broken(String),
}

/// Reads one body chunk by chunk within [`TransferLimits`] and a byte bound.
pub struct Meter {
    limits: TransferLimits,
    max_bytes: u64,
    deadline: Instant,
    window_start: Instant,
    window_bytes: u64,
    bytes: Vec<u8>,
}

impl Meter {
    pub fn new(limits: TransferLimits, max_bytes: u64) -> Meter {
        let now = Instant::now();
        // A bound too far to represent is no bound: a year.
        let deadline = now.checked_add(limits.download_timeout).unwrap_or(now + Duration::from_secs(365 * 86_400));
        Meter { limits, max_bytes, deadline, window_start: now, window_bytes: 0, bytes: Vec::new() }
    }

    /// Awaits `next` (the body's next chunk, `None` at its end) within the limits; `Ok(false)`
    /// at the end of the body.
    pub async fn take<B, E>(&mut self, next: impl Future<Output = Result<Option<B>, E>>) -> Result<bool, TransferCut>
    where
        B: AsRef<[u8]>,
        E: std::fmt::Display,
    {
        let mut next = std::pin::pin!(next);
        loop {
            let window_end = self.window_start + self.limits.rate_window;
            match tokio::time::timeout_at(self.deadline.min(window_end), &mut next).await {
                Ok(Ok(Some(chunk))) => {
                    let chunk = chunk.as_ref();
                    if self.bytes.len() as u64 + chunk.len() as u64 > self.max_bytes {
                        return Err(TransferCut::TooLarge(self.max_bytes));
                    }
                    self.bytes.extend_from_slice(chunk);
                    self.window_bytes += chunk.len() as u64;
                    self.judge_window()?;
                    return Ok(true);
                }
                Ok(Ok(None)) => return Ok(false),
                Ok(Err(err)) => return Err(TransferCut::Broken(err.to_string())),
                Err(_) if Instant::now() >= self.deadline => {
                    return Err(TransferCut::TooLong(self.limits.download_timeout))
                }
                Err(_) => self.judge_window()?,
            }
        }
    }

    /// At the end of a window, whether it brought enough; starts the next one.
    fn judge_window(&mut self) -> Result<(), TransferCut> {
        let now = Instant::now();
        if now < self.window_start + self.limits.rate_window {
            return Ok(());
        }
        if self.window_bytes < self.limits.min_window_bytes {
            return Err(TransferCut::TooSlow { bytes: self.limits.min_window_bytes, window: self.limits.rate_window });
        }
        self.window_start = now;
        self.window_bytes = 0;
        Ok(())
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Reads a whole `http_body` body within the limits.
pub async fn read_body<B>(mut body: B, limits: TransferLimits, max_bytes: u64) -> Result<Vec<u8>, TransferCut>
where
    B: http_body::Body + Unpin,
    B::Data: AsRef<[u8]>,
    B::Error: std::fmt::Display,
{
    use http_body_util::BodyExt;
    let mut meter = Meter::new(limits, max_bytes);
    loop {
        let next = async {
            match body.frame().await {
                None => Ok(None),
                Some(Ok(frame)) => Ok(Some(frame.into_data().map(|d| d.as_ref().to_vec()).unwrap_or_default())),
                Some(Err(err)) => Err(err),
            }
        };
        if !meter.take(next).await? {
            return Ok(meter.into_bytes());
        }
    }
}

/// Reads one HTTP request's head from a test server's socket (`None` when the client went
/// away), for the hostile servers of this module's users' tests.
#[cfg(test)]
pub(crate) async fn read_request_head(socket: &mut tokio::net::TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let (mut request, mut buf) = (Vec::new(), [0u8; 1024]);
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&request).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(window_ms: u64, min_window_bytes: u64, total_ms: u64) -> TransferLimits {
        TransferLimits {
            download_timeout: Duration::from_millis(total_ms),
            rate_window: Duration::from_millis(window_ms),
            min_window_bytes,
            ..TransferLimits::default()
        }
    }

    /// Feeds `chunks` chunks of `size` bytes, each after `gap`.
    async fn feed(meter: &mut Meter, chunks: usize, size: usize, gap: Duration) -> Result<usize, TransferCut> {
        let mut sent = 0;
        loop {
            let next = async {
                if sent == chunks {
                    return Ok::<_, String>(None);
                }
                tokio::time::sleep(gap).await;
                Ok(Some(vec![b'x'; size]))
            };
            if !meter.take(next).await? {
                return Ok(meter.bytes.len());
            }
            sent += 1;
        }
    }

    #[tokio::test]
    async fn a_trickle_is_cut_off_a_steady_stream_is_not() {
        // One byte every 50 ms can never bring 1,000 bytes in a 200 ms window.
        let mut trickle = Meter::new(limits(200, 1_000, 60_000), 1 << 20);
        let cut = feed(&mut trickle, usize::MAX, 1, Duration::from_millis(50)).await;
        assert_eq!(cut, Err(TransferCut::TooSlow { bytes: 1_000, window: Duration::from_millis(200) }));

        let mut steady = Meter::new(limits(60_000, 1, 600_000), 1 << 20);
        assert_eq!(feed(&mut steady, 50, 50, Duration::from_millis(1)).await, Ok(2_500));
    }

    #[tokio::test]
    async fn a_stall_without_any_chunk_is_cut_off_at_the_window() {
        let mut meter = Meter::new(limits(100, 1, 60_000), 1 << 20);
        let never = std::future::pending::<Result<Option<Vec<u8>>, String>>();
        assert!(matches!(meter.take(never).await, Err(TransferCut::TooSlow { .. })));
    }

    #[tokio::test]
    async fn a_fast_endless_body_ends_at_the_total_timeout_and_a_big_one_at_its_bound() {
        let mut endless = Meter::new(limits(60_000, 1, 300), u64::MAX);
        let cut = feed(&mut endless, usize::MAX, 1_000, Duration::from_millis(5)).await;
        assert_eq!(cut, Err(TransferCut::TooLong(Duration::from_millis(300))));

        let mut big = Meter::new(limits(60_000, 1, 600_000), 1_000);
        assert_eq!(feed(&mut big, 11, 100, Duration::ZERO).await, Err(TransferCut::TooLarge(1_000)));
    }
}
