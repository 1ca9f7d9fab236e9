//! One overall deadline for a command's network work (key managers, registries, RemoteConfig fetches): a server
//! that stalls or drips one byte at a time must not hold a first boot for retries × per-request timeouts.
//!
//! `cmd/` resolves it (`--timeout`, `CRYPTADM_TIMEOUT`, a default for `bootstrap open`) once, and installs it
//! here as the command's deadline ([`set_command`]). The shared network layers take it from here whatever their
//! settings say ([`effective`]): the HTTP client of every key manager (`kms::http`), the raw sockets of KMIP
//! ([`BoundedTcp`]), the registry client and RemoteConfig fetches. So no backend can forget it: connect, TLS,
//! every read (a total bound, not an idle one: a server dripping one byte a second does not extend it), every
//! retry and pause between attempts end by it. Long-running servers (`volume serve`) install none.
//!
//! An operation the deadline cuts fails with an error whose text says so ([`Passed`]), naming the server it
//! waited for; the command line ends such a command with exit status 4 (deadline exceeded).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static COMMAND: OnceLock<Deadline> = OnceLock::new();

/// Installs the deadline of the running command (once; later calls change nothing). Called by the command line
/// only, before any network work.
pub fn set_command(deadline: Deadline) {
    let _ = COMMAND.set(deadline);
}

/// The running command's deadline, when it has one.
pub fn command() -> Option<Deadline> {
    COMMAND.get().copied()
}

/// The earlier of `given` (a client's own setting) and the command's deadline: what a network layer obeys.
pub fn effective(given: Option<Deadline>) -> Option<Deadline> {
    match (given, command()) {
        (Some(a), Some(b)) => Some(if a.at <= b.at { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// When a command's network work must be done, and how long it was given (for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    total: Duration,
}

/// What every error caused by a passed deadline suggests.
pub const HINT: &str = "give the command more time with --timeout SECONDS (or CRYPTADM_TIMEOUT), or check that \
                        the server answers promptly";

impl Deadline {
    /// A deadline `total` from now.
    pub fn after(total: Duration) -> Self {
        Self { at: Instant::now() + total, total }
    }

    /// The moment it passes.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// How long the command was given.
    pub fn total(&self) -> Duration {
        self.total
    }

    /// What is left of it (zero once passed).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    /// `timeout`, cut to what is left of the deadline.
    pub fn bound(&self, timeout: Duration) -> Duration {
        timeout.min(self.remaining())
    }
}

/// The error of an operation the deadline cut: "the overall deadline of 5 s passed".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passed(pub Deadline);

impl std::fmt::Display for Passed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed", self.0)
    }
}

impl std::error::Error for Passed {}

impl crate::exit::Classify for Passed {
    fn status(&self) -> crate::exit::ExitStatus {
        crate::exit::ExitStatus::DeadlineExceeded
    }

    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(HINT.into())
    }
}

impl Passed {
    /// As an I/O error (kind `TimedOut`) that [`Passed::in_io`] recognises.
    pub fn io(self) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, self)
    }

    /// The deadline an I/O error says passed, when it is one made by [`Passed::io`].
    pub fn in_io(error: &std::io::Error) -> Option<Self> {
        error.get_ref().and_then(|inner| inner.downcast_ref::<Self>()).copied()
    }
}

/// A TCP connection whose connect, every read and every write end by a deadline (and, between two bytes, by a
/// per-operation `timeout`): each operation arms the socket's timeout with what is left, so a peer that drips
/// bytes cannot stretch the whole past the deadline. Reads and writes that run out fail with kind `TimedOut`:
/// [`Passed`] when the deadline cut them, "no answer within N s" otherwise (never the platform's "Resource
/// temporarily unavailable"). For protocols on raw sockets (KMIP); HTTP goes through `kms::http`.
#[derive(Debug)]
pub struct BoundedTcp {
    stream: TcpStream,
    deadline: Option<Deadline>,
    timeout: Duration,
}

impl BoundedTcp {
    /// Connects to `address` within `timeout` and what is left of `deadline` (see [`effective`]).
    pub fn connect(address: &SocketAddr, timeout: Duration, deadline: Option<Deadline>) -> std::io::Result<Self> {
        let deadline = effective(deadline);
        let wait = bound(deadline.as_ref(), timeout);
        if wait.is_zero() {
            return Err(Passed(deadline.expect("only a deadline leaves no time")).io());
        }
        let stream =
            TcpStream::connect_timeout(address, wait).map_err(|e| match deadline.filter(Deadline::passed) {
                Some(deadline) if is_timeout(&e) => Passed(deadline).io(),
                _ => e,
            })?;
        Ok(Self { stream, deadline, timeout })
    }

    /// The socket (to set options such as `TCP_NODELAY`).
    pub fn socket(&self) -> &TcpStream {
        &self.stream
    }

    /// The time the next operation may take; an error once the deadline passed.
    fn arm(&self) -> std::io::Result<Duration> {
        let wait = bound(self.deadline.as_ref(), self.timeout);
        match self.deadline {
            Some(deadline) if wait.is_zero() => Err(Passed(deadline).io()),
            _ => Ok(wait.max(Duration::from_millis(1))),
        }
    }

    /// `error` as said when it is the socket's timeout.
    fn timed_out(&self, error: std::io::Error) -> std::io::Error {
        if !is_timeout(&error) {
            return error;
        }
        match self.deadline.filter(Deadline::passed) {
            Some(deadline) => Passed(deadline).io(),
            None => std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", self.timeout.as_secs_f64()),
            ),
        }
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

impl Read for BoundedTcp {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let wait = self.arm()?;
        self.stream.set_read_timeout(Some(wait))?;
        self.stream.read(buffer).map_err(|e| self.timed_out(e))
    }
}

impl Write for BoundedTcp {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let wait = self.arm()?;
        self.stream.set_write_timeout(Some(wait))?;
        self.stream.write(buffer).map_err(|e| self.timed_out(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

/// `timeout` cut to what is left of `deadline`, when there is one.
pub fn bound(deadline: Option<&Deadline>, timeout: Duration) -> Duration {
    deadline.map_or(timeout, |d| d.bound(timeout))
}

impl std::fmt::Display for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = self.total.as_secs_f64();
        if seconds.fract() == 0.0 {
            write!(f, "the overall deadline of {} s", self.total.as_secs())
        } else {
            write!(f, "the overall deadline of {seconds:.1} s")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_bounds_timeouts_and_says_its_length() {
        let deadline = Deadline::after(Duration::from_secs(5));
        assert!(!deadline.passed());
        assert!(deadline.bound(Duration::from_secs(60)) <= Duration::from_secs(5));
        assert_eq!(deadline.bound(Duration::from_secs(1)), Duration::from_secs(1));
        assert_eq!(deadline.to_string(), "the overall deadline of 5 s");
        let passed = Deadline::after(Duration::ZERO);
        assert!(passed.passed() && passed.remaining() == Duration::ZERO);
        assert_eq!(bound(None, Duration::from_secs(3)), Duration::from_secs(3));
    }

    /// A peer that drips one byte every 300 ms: reading a long message ends at the deadline (the total, not the
    /// idle time between bytes), with an error that says the deadline passed and is recognised as such.
    #[test]
    fn a_dripping_peer_is_cut_at_the_deadline_not_per_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            for _ in 0..20 {
                if stream.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        let deadline = Deadline::after(Duration::from_millis(1500));
        let mut socket = BoundedTcp::connect(&address, Duration::from_secs(60), Some(deadline)).unwrap();
        let started = Instant::now();
        let mut message = [0u8; 100];
        let error = socket.read_exact(&mut message).unwrap_err();
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1900), "{took:?}");
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(Passed::in_io(&error), Some(Passed(deadline)));
        assert!(error.to_string().contains("overall deadline of 1.5 s passed"), "{error}");
        drop(socket);
        peer.join().unwrap();
    }

    /// A silent peer without a deadline: the per-operation timeout, said in words (not "os error 11"); once the
    /// deadline passed, nothing more is tried.
    #[test]
    fn a_silent_peer_times_out_in_words() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let mut socket = BoundedTcp::connect(&address, Duration::from_millis(200), None).unwrap();
        let error = socket.read(&mut [0u8; 4]).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert!(Passed::in_io(&error).is_none());
        assert_eq!(error.to_string(), "no answer within 0.2 s");
        let passed = Deadline::after(Duration::ZERO);
        let error = BoundedTcp::connect(&address, Duration::from_secs(1), Some(passed)).unwrap_err();
        assert_eq!(Passed::in_io(&error), Some(Passed(passed)));
        drop(listener);
    }
}
