//! The guest harness itself (`tests/guest/guest.sh`): a guest script's exit status comes back, and a guest that
//! does not finish is killed at the timeout with exit 124 and a message, never left running.

use crate::support_guest::{boot, workdir};
use std::time::{Duration, Instant};

#[test]
fn guest_harness_returns_the_scripts_exit_status_and_output() {
    let share = workdir("harness-status");
    std::fs::write(share.join("run.sh"), "echo hello from $(uname -r)\nexit 7\n").unwrap();
    let guest = boot(share, false, &[], &[], Duration::from_secs(120));
    assert_eq!(guest.status, Some(7), "{}", guest.stderr);
    assert!(guest.console.contains("hello from 6.1.0-"), "{}", guest.console);
}

#[test]
fn guest_harness_kills_a_guest_that_does_not_finish_within_the_timeout() {
    let share = workdir("harness-timeout");
    std::fs::write(share.join("run.sh"), "echo sleeping\nsleep 100000\n").unwrap();
    let started = Instant::now();
    let guest = boot(share, false, &[], &[], Duration::from_secs(10));
    assert!(started.elapsed() < Duration::from_secs(40), "ended after {:?}", started.elapsed());
    assert_eq!(guest.status, Some(124), "{}", guest.stderr);
    assert!(guest.stderr.contains("did not finish within 10s; QEMU killed"), "{}", guest.stderr);
    assert!(!guest.share.join("rc").exists());
}
