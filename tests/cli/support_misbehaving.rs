//! A misbehaving network for the deadline tests (tests/cli/deadline.rs): a TCP server on 127.0.0.1 that plays a
//! server gone wrong in front of a real one. It is not the consumer: the real servers behind it (tangd, PyKMIP,
//! OpenBao, moto, Keystone, docker-registry) are what cryptadm talks to when it forwards.
//!
//! Each connection is treated as the [`Mode`] of the moment it is accepted:
//! - [`Mode::Forward`]: a plain TCP relay to the upstream server (to set things up through the same address);
//! - [`Mode::Silent`]: accepts, reads what comes and never answers;
//! - [`Mode::Drip`]: relays the request to the upstream at once, and the upstream's answer one byte every
//!   [`DRIP_EVERY`] (without an upstream: an endless HTTP answer, one byte at a time). Over TLS, the handshake
//!   itself drips.
//!
//! Its threads stop when it is dropped (and die with the test process).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::time::Duration;

/// How often a dripping server sends its next byte.
pub const DRIP_EVERY: Duration = Duration::from_secs(2);

/// What the server does with a new connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    Forward = 0,
    Silent = 1,
    Drip = 2,
}

pub struct Misbehaving {
    /// `127.0.0.1:PORT`.
    pub addr: SocketAddr,
    mode: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    /// In [`Mode::Drip`], how many bytes of answers (over all connections) are still relayed whole before the
    /// dripping starts: a registry whose manifests come and whose blob stalls.
    budget: Arc<AtomicI64>,
}

impl Misbehaving {
    /// A server in `mode` in front of `upstream` (`HOST:PORT`), if any.
    pub fn start(mode: Mode, upstream: Option<&str>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, stop) = (Arc::new(AtomicU8::new(mode as u8)), Arc::new(AtomicBool::new(false)));
        let upstream: Option<SocketAddr> = upstream.map(|u| {
            use std::net::ToSocketAddrs as _;
            u.to_socket_addrs().unwrap().next().unwrap()
        });
        let budget = Arc::new(AtomicI64::new(0));
        let (modes, stopping, budgets) = (mode.clone(), stop.clone(), budget.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let mode = modes.load(Ordering::Relaxed);
                        let (stop, budget) = (stopping.clone(), budgets.clone());
                        std::thread::spawn(move || serve(client, mode, upstream, &stop, &budget));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Self { addr, mode, stop, budget }
    }

    /// A server that accepts and never answers.
    pub fn silent() -> Self {
        Self::start(Mode::Silent, None)
    }

    /// A server that drips an endless HTTP answer, one byte every [`DRIP_EVERY`].
    pub fn dripping() -> Self {
        Self::start(Mode::Drip, None)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Changes what later connections get.
    pub fn set(&self, mode: Mode) {
        self.mode.store(mode as u8, Ordering::Relaxed);
    }

    /// Drips from now on, after relaying `bytes` more of answers whole.
    pub fn drip_after(&self, bytes: i64) {
        self.budget.store(bytes, Ordering::Relaxed);
        self.set(Mode::Drip);
    }

    /// `HOST:PORT`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for Misbehaving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(mut client: TcpStream, mode: u8, upstream: Option<SocketAddr>, stop: &AtomicBool, budget: &AtomicI64) {
    let _ = client.set_read_timeout(Some(Duration::from_millis(200)));
    let upstream = upstream.and_then(|u| TcpStream::connect(u).ok());
    if mode == Mode::Silent as u8 || upstream.is_none() && mode == Mode::Forward as u8 {
        // Read and drop what comes, answer nothing.
        let mut buffer = [0u8; 4096];
        while !stop.load(Ordering::Relaxed) {
            match client.read(&mut buffer) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
        }
        return;
    }
    if upstream.is_none() {
        // A server answers a request: the drip starts once the request's head is in. Answering at once raced the
        // client, which may not have sent its request yet, and an HTTP client refuses an answer that comes before
        // its request ("unexpected message"): a connection error instead of the slow answer this server is for.
        read_request_head(&mut client, stop);
    }
    let _ = client.set_read_timeout(None);
    let mut answer: Box<dyn Read + Send> = match upstream {
        Some(upstream) => {
            // The request goes upstream as it comes.
            let (mut from_client, mut to_upstream) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_upstream);
                let _ = to_upstream.shutdown(std::net::Shutdown::Write);
            });
            Box::new(upstream)
        }
        None => Box::new(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"x\":\""
                .chain(std::io::repeat(b'a')),
        ),
    };
    // The answer: relayed while the budget lasts (forever when forwarding), then one byte every DRIP_EVERY.
    let mut buffer = [0u8; 16384];
    while !stop.load(Ordering::Relaxed) {
        let forwarding = mode == Mode::Forward as u8 || budget.load(Ordering::Relaxed) > 0;
        let want = if forwarding { buffer.len() } else { 1 };
        let n = match answer.read(&mut buffer[..want]) {
            Ok(0) | Err(_) => {
                let _ = client.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => n,
        };
        if mode == Mode::Drip as u8 {
            budget.fetch_sub(n as i64, Ordering::Relaxed);
        }
        if client.write_all(&buffer[..n]).is_err() {
            return;
        }
        if !forwarding {
            std::thread::sleep(DRIP_EVERY);
        }
    }
}

/// Reads from `client` until the end of an HTTP request head (an empty line), the connection ends or the server
/// stops; what it read is dropped.
fn read_request_head(client: &mut TcpStream, stop: &AtomicBool) {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) && !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match client.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Runs `command` and returns (its output, how long it took).
pub fn timed(command: &mut assert_cmd::Command) -> (std::process::Output, Duration) {
    let started = std::time::Instant::now();
    let output = command.output().unwrap();
    (output, started.elapsed())
}
