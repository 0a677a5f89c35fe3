//! One HTTP/1.1 connection on a raw socket, for tests about what a client library hides:
//! when each byte is sent, and whether the server keeps the connection or closes it.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest a test waits for an answer or for the server to close.
const DEADLINE: Duration = Duration::from_secs(15);

pub struct RawConnection {
    stream: TcpStream,
    /// Bytes read past the last answer.
    buffered: Vec<u8>,
}

/// An answer as it came off the wire.
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    /// Names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the server said it closes the connection after this answer.
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&self.body));
        })
    }
}

impl RawConnection {
    /// Connects to `base` (`http://host:port`).
    pub async fn open(base: &str) -> Self {
        let addr = base.strip_prefix("http://").expect("an http:// base");
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            stream,
            buffered: Vec::new(),
        }
    }

    /// Writes `bytes` as one write.
    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
        self.stream.flush().await.unwrap();
    }

    /// Reads one answer (its body by `Content-Length`); `None` if the server closed the
    /// connection before a whole answer.
    pub async fn answer(&mut self) -> Option<RawAnswer> {
        tokio::time::timeout(DEADLINE, self.read_answer())
            .await
            .expect("an answer or a close within the deadline")
    }

    /// Whether the server closes the connection (end of stream, or reset) with nothing
    /// more to read.
    pub async fn closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(DEADLINE, self.stream.read(&mut byte)).await;
        matches!(read, Ok(Ok(0)) | Ok(Err(_))) && self.buffered.is_empty()
    }

    async fn read_answer(&mut self) -> Option<RawAnswer> {
        let head_end = loop {
            if let Some(i) = self.buffered.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            if !self.fill().await {
                return None;
            }
        };
        let head = String::from_utf8(self.buffered[..head_end].to_vec()).unwrap();
        self.buffered.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status line: {status_line}"));
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.trim().to_ascii_lowercase(), v.trim().to_owned())
            })
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        while self.buffered.len() < length {
            if !self.fill().await {
                return None;
            }
        }
        let body = self.buffered.drain(..length).collect();
        Some(RawAnswer {
            status,
            headers,
            body,
        })
    }

    /// Reads more; false at the end of the stream or on a reset.
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buffered.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }
}
