//! The only place that writes to the terminal: data on stdout, talk on stderr, progress on a TTY only.

use crate::crypto::{Passphrase, secret::passphrases_match};
use crate::interact::{BusyGuard, Interaction, Progress};
use anstream::ColorChoice;
use anstyle::{AnsiColor, Style};
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// How much cryptadm says on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Errors only.
    Quiet,
    /// Errors, warnings and one line per step.
    Normal,
    /// Also details.
    Verbose,
}

/// Decides who speaks, where, and in which colours.
#[derive(Clone, Debug)]
pub struct Printer {
    verbosity: Verbosity,
    progress: bool,
    color: ColorChoice,
    /// Every progress bar shown at once (one per layer in flight), drawn together; lines are printed above them.
    bars: indicatif::MultiProgress,
}

impl Printer {
    /// A printer; `progress` is further limited to a terminal stderr.
    pub fn new(verbosity: Verbosity, progress: bool, color: ColorChoice) -> Self {
        Self {
            verbosity,
            progress: progress && io::stderr().is_terminal(),
            color,
            bars: indicatif::MultiProgress::new(),
        }
    }

    fn stderr(&self) -> anstream::AutoStream<io::Stderr> {
        anstream::AutoStream::new(io::stderr(), self.color)
    }

    fn line(&self, style: Option<(Style, &str)>, message: &str) {
        let write = || {
            let mut err = self.stderr();
            // A failing stderr leaves nowhere to report to: ignore, as every CLI does.
            let _ = match style {
                Some((style, label)) => writeln!(err, "{style}{label}:{style:#} {message}"),
                None => writeln!(err, "{message}"),
            };
        };
        // Above the progress bars, which are drawn again below the line.
        if self.progress { self.bars.suspend(write) } else { write() }
    }

    /// Prints an error and its hint.
    pub fn error(&self, message: &str, hint: Option<&str>) {
        self.line(Some((ERROR, "error")), message);
        if let Some(hint) = hint {
            self.line(Some((HINT, "hint")), hint);
        }
    }

    /// Writes data to stdout, in full, and flushes it: a short write is an error, never silent success.
    pub fn data(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()
    }

    /// Whether progress bars are shown (on a terminal, unless quiet or turned off).
    pub fn shows_progress(&self) -> bool {
        self.progress && self.verbosity > Verbosity::Quiet
    }

    /// Whether `-v` was given (what [`Interaction::debug`] prints is shown).
    pub fn is_verbose(&self) -> bool {
        self.verbosity >= Verbosity::Verbose
    }

    /// Whether stdout is a terminal (where plaintext and binary output are refused).
    pub fn stdout_is_terminal(&self) -> bool {
        io::stdout().is_terminal()
    }
}

impl Interaction for Printer {
    fn info(&self, message: &str) {
        if self.verbosity >= Verbosity::Normal {
            self.line(None, message);
        }
    }

    fn warn(&self, message: &str) {
        if self.verbosity >= Verbosity::Normal {
            self.line(Some((WARNING, "warning")), message);
        }
    }

    fn debug(&self, message: &str) {
        if self.verbosity >= Verbosity::Verbose {
            self.line(None, message);
        }
    }

    fn request_passphrase(&self, prompt: &str, confirm: bool) -> io::Result<Option<Passphrase>> {
        prompt_on_terminal(prompt, confirm)
    }

    fn transfer(&self, label: &str, total_bytes: u64) -> Box<dyn Progress> {
        if !self.progress || self.verbosity == Verbosity::Quiet {
            return Box::new(crate::interact::NoProgress);
        }
        let style =
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}")
                .expect("the template is valid")
                .progress_chars("=> ");
        let bar = indicatif::ProgressBar::new(total_bytes).with_style(style).with_message(label.to_owned());
        Box::new(Bar(self.bars.add(bar)))
    }

    fn busy(&self, message: &str) -> BusyGuard {
        if !self.progress || self.verbosity == Verbosity::Quiet {
            return BusyGuard::none();
        }
        let spinner = indicatif::ProgressBar::new_spinner().with_message(message.to_owned());
        spinner.enable_steady_tick(Duration::from_millis(100));
        BusyGuard::new(move || spinner.finish_and_clear())
    }
}

/// An indicatif bar that disappears when the transfer ends (the summary line says what was done).
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// How often a mistyped confirmation is asked again before giving up.
const CONFIRM_ATTEMPTS: u32 = 3;

/// Asks for a passphrase on the terminal without echo (twice when `confirm`); `None` when standard input or
/// standard error is not a terminal (cloud-init, CI and pipes get an error naming the non-interactive sources
/// instead). An empty answer is asked again with the reason; a confirmation that differs is retried.
pub fn prompt_on_terminal(prompt: &str, confirm: bool) -> io::Result<Option<Passphrase>> {
    if !(io::stdin().is_terminal() && io::stderr().is_terminal()) {
        return Ok(None);
    }
    let read = |prompt: &str| -> io::Result<Passphrase> {
        loop {
            let text = zeroize::Zeroizing::new(
                dialoguer::Password::new()
                    .with_prompt(prompt)
                    .allow_empty_password(true)
                    .interact()
                    .map_err(io::Error::other)?,
            );
            if !text.is_empty() {
                return Ok(Passphrase::new(text.as_bytes().to_vec()));
            }
            let _ = writeln!(io::stderr(), "the passphrase is empty: type one, or press Ctrl-C to stop");
        }
    };
    for attempt in 1..=CONFIRM_ATTEMPTS {
        let first = read(prompt)?;
        if !confirm || passphrases_match(&first, &read("Confirm passphrase")?) {
            crate::redact::hold(first.expose());
            return Ok(Some(first));
        }
        if attempt < CONFIRM_ATTEMPTS {
            let _ = writeln!(io::stderr(), "the two entries differ; type the passphrase again");
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, "the two passphrases differ"))
}

/// `count` and `noun`, in the plural unless `count` is one: "1 layer", "2 layers", "0 bytes".
pub fn plural(count: u64, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

#[cfg(test)]
mod tests {
    #[test]
    fn plural_is_singular_for_one_only() {
        assert_eq!(super::plural(1, "layer"), "1 layer");
        assert_eq!(super::plural(0, "layer"), "0 layers");
        assert_eq!(super::plural(4096, "byte"), "4096 bytes");
    }
}
