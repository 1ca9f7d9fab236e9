//! How the core reaches the operator without printing or prompting itself.
//!
//! The command line implements [`Interaction`] with stderr, indicatif and a terminal prompt; tests and
//! non-interactive callers use [`NonInteractive`], which stays silent and never prompts.

use crate::crypto::Passphrase;
use std::io;

/// Messages and questions from the core to whoever runs it (from several threads when layers move in parallel).
pub trait Interaction: Sync {
    /// Progress worth a line in a log (cloud-init keeps these in `/var/log/cloud-init-output.log`).
    fn info(&self, message: &str);
    /// Something the operator should fix although the operation went on.
    fn warn(&self, message: &str);
    /// Detail shown only when asked for (`--verbose`).
    fn debug(&self, _message: &str) {}
    /// Asks for a passphrase, twice when `confirm` is set. `Ok(None)`: there is no one to ask.
    fn request_passphrase(&self, prompt: &str, confirm: bool) -> io::Result<Option<Passphrase>>;
    /// Marks the start of a wait the operator may notice (a plugin call); dropping the guard ends it.
    fn busy(&self, _message: &str) -> BusyGuard {
        BusyGuard::none()
    }
    /// Starts showing the progress of a long transfer (a layer) of `total_bytes`; dropping the handle ends it.
    fn transfer(&self, _label: &str, _total_bytes: u64) -> Box<dyn Progress> {
        Box::new(NoProgress)
    }
}

/// Progress of one transfer.
pub trait Progress: Send {
    /// `bytes` more are done.
    fn advance(&self, bytes: u64);
}

/// Shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn advance(&self, _bytes: u64) {}
}

/// A reader that reports what passes through it.
pub struct ProgressReader<R> {
    inner: R,
    progress: Box<dyn Progress>,
}

impl<R> ProgressReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, progress: Box<dyn Progress>) -> Self {
        Self { inner, progress }
    }
}

impl<R: std::io::Read> std::io::Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// Ends a [`Interaction::busy`] indication when dropped.
pub struct BusyGuard(Option<Box<dyn FnOnce()>>);

impl BusyGuard {
    /// A guard that does nothing.
    pub fn none() -> Self {
        Self(None)
    }

    /// A guard that runs `finish` when dropped.
    pub fn new(finish: impl FnOnce() + 'static) -> Self {
        Self(Some(Box::new(finish)))
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        if let Some(finish) = self.0.take() {
            finish();
        }
    }
}

/// Silent, and never prompts.
pub struct NonInteractive;

impl Interaction for NonInteractive {
    fn info(&self, _message: &str) {}
    fn warn(&self, _message: &str) {}
    fn request_passphrase(&self, _prompt: &str, _confirm: bool) -> io::Result<Option<Passphrase>> {
        Ok(None)
    }
}
