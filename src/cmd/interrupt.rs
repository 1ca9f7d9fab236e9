//! SIGTERM, SIGINT and SIGHUP (the terminal closed) while a command writes large partial outputs (disk images,
//! image layouts): the partial files are removed before the process dies of the signal, as it would have without
//! the handler. Destructors do not run when a signal ends a process, so without this every interrupted run would
//! leave a full-size hidden file behind (kill -9 still does; the next run into the same directory removes those,
//! see `atomic`). A commit of several files in progress (a new key file and its image) is finished first, so a
//! signal leaves both or neither.

use std::sync::Once;

/// Installs the handler once per process. Commands that serve (`volume serve`) keep their own graceful
/// shutdown and never call this.
pub fn remove_partials_on_signal() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else { return };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the process is gone: no commit starts, and one under way has finished.
                let _commits = crate::disk::pipeline::hold_commits();
                crate::atomic::remove_live_partials();
                let hooks = std::mem::take(&mut *HOOKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
                for hook in hooks {
                    hook();
                }
                die_of(signal);
            }
        });
    });
}

type Hook = Box<dyn FnOnce() + Send>;

/// What runs on SIGTERM/SIGINT/SIGHUP after the partial files are removed, before the process dies.
static HOOKS: std::sync::Mutex<Vec<Hook>> = std::sync::Mutex::new(Vec::new());

/// Runs `hook` if a SIGTERM or SIGINT ends the process (after [`remove_partials_on_signal`] installed the
/// handler): deleting what a run created elsewhere (a Glance image, a Barbican secret). A run that finishes
/// calls [`clear_hooks`].
pub fn before_dying(hook: impl FnOnce() + Send + 'static) {
    HOOKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Box::new(hook));
}

/// Forgets the hooks of [`before_dying`].
pub fn clear_hooks() {
    HOOKS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
}

/// Ends the process as the signal's default action would (so the parent sees "killed by SIGTERM").
#[allow(clippy::disallowed_methods, clippy::exit)] // the fallback exit when the default action cannot be re-raised
fn die_of(signal: i32) -> ! {
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    std::process::exit(128 + signal)
}
