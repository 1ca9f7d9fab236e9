//! One overall deadline for a command's network work (key managers, registries, RemoteConfig fetches): a server
//! that stalls or drips one byte at a time must not hold a first boot for retries × per-request timeouts.
//!
//! `cmd/` resolves it (`--timeout`, `CRYPTADM_TIMEOUT`, a default for `bootstrap open`) and hands it down in the
//! settings of each client, which bound every request and every pause between attempts by what is left of it.

use std::time::{Duration, Instant};

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
}
