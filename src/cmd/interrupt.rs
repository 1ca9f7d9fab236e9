//! SIGTERM and SIGINT while a command writes large partial outputs (disk images, image layouts): the partial
//! files are removed before the process dies of the signal, as it would have without the handler. Destructors
//! do not run when a signal ends a process, so without this every interrupted run would leave a full-size hidden
//! file behind (kill -9 still does; the next run into the same directory removes those, see `atomic`).

use std::sync::Once;

/// Installs the handler once per process. Commands that serve (`volume serve`) keep their own graceful
/// shutdown and never call this.
pub fn remove_partials_on_signal() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT]) else { return };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                crate::atomic::remove_live_partials();
                die_of(signal);
            }
        });
    });
}

/// Ends the process as the signal's default action would (so the parent sees "killed by SIGTERM").
#[allow(clippy::disallowed_methods, clippy::exit)] // the fallback exit when the default action cannot be re-raised
fn die_of(signal: i32) -> ! {
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    std::process::exit(128 + signal)
}
